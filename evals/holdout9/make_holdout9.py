"""Holdout set 9: 30 hand-labelled runs, written independently of the assessor and its judges.

Run:  .venv/bin/python evals/holdout9/make_holdout9.py [--check]      (numpy, pyyaml, tensorboard, mlflow)
It rewrites evals/holdout9/runs/ (gitignored) and evals/holdout9/holdout9.yaml. `--check` also prints, per case,
the levels the label rests on: the written (noisy) train and held-out series at a few steps, their best and last
points, and for rollbacks the window the noise-free curve gives (see "as good" below), to compare with the label.

How a run is made. Every signal is a path through knots (step, value[, shape]): the segment into a knot eases
('e', an S between the two levels), goes straight ('l'), saturates ('s', fast first, slow later) or accelerates
('x', a blow-up). Noise is drawn the way the number is produced:
  * a pass rate (`Pass`) is simulated batch by batch: B prompts whose own pass rates spread around the curve
    (Beta with concentration 2), G rollouts each; the logged mean, the completion-level std, the share of flat
    groups and NeMo-RL's all-0 / all-1 percentages all come from the same simulated groups, averaged over the
    logging interval when the framework averages (TRL) and not when it logs the current step (OpenRLHF, verl);
  * a held-out pass rate (`Ev`) is Binomial(N, p) / N on N problems, so its noise is sqrt(p(1-p)/N);
  * other scalars (`Gs`) carry AR(1) gaussian noise (consecutive batches share slow drifts), `Rel` multiplicative
    lognormal noise with rare heavy spikes (gradient norms), `Fix` none.

"As good" (the upper end of a rollback window). A held-out eval on N problems has sampling noise
sd = sqrt(p(1-p)/N) at the best level p; a step counts as good as the best when the noise-free eval there is within
one such sd of the best. A window runs from the first step that good to the newest step that good before the
damage (for train-only runs the sd of the logged train point is used). Where a checkpoint stops being usable
before the eval says so (a PPO critic that has blown up is saved with the actor), the window ends there instead;
the case says so.

Shapes chosen to be absent from holdouts 1-8: RLOO with two generations (half the groups flat by construction),
REINFORCE++ whose KL-shaped `return` falls while the reward rises, Dr. GRPO's token-sum loss growing with length,
a temperature schedule raising entropy vs. an entropy rise with a fixed temperature, 3%-of-plan runs (one noisy
and fine, one broken by NaN after a good start), logs without a planned length (still climbing vs. long flat),
partial cadences (reward every step, KL every 10, eval every 250), a crashed attempt and a new seed appended to
one CSV, an RM score and a rule verifier disagreeing both ways, long-context truncation creeping (harmless vs.
eating the accuracy), async rollouts (steady ratios vs. staleness drift), a PPO critic whose value loss explodes,
a multi-task mix losing its code domain, gains only on easy prompts by difficulty bucket, RLOO drifting in KL
on a flat reward, 95%-of-plan runs still climbing vs. flat, a lenient \\boxed{} verifier gamed by answer spam,
a trainer that keeps only its best-so-far checkpoint, and checkpoints named step_000400 / iter-400 /
epoch_2-step_400.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from holdout_kit import (  # noqa: E402  (labels, YAML and TensorBoard helpers only; no assessor code)
    HEALTHY,
    Case,
    Skip,
    build,
    converged,
    dump_json,
    rollback,
    stop,
    tb_file,
    trainer_state,
    writer,
)

T0 = 1_764_000_000.0  # wall clock of step 0: fixed, so the files are the same on every run

# ------------------------------------------------------------------------------------------------- knot paths


def path_at(knots, t) -> np.ndarray:
    """The noise-free value of a knot path at steps t. A knot is (step, value) or (step, value, shape)."""
    t = np.asarray(t, dtype=float)
    ks = [(float(k[0]), float(k[1]), k[2] if len(k) > 2 else "e") for k in knots]
    out = np.full(len(t), ks[0][1])
    for (t0, v0, _), (t1, v1, shape) in itertools.pairwise(ks):
        x = np.clip((t - t0) / max(t1 - t0, 1e-9), 0.0, 1.0)
        if shape == "e":
            f = x * x * (3 - 2 * x)
        elif shape == "s":
            f = (1 - np.exp(-3 * x)) / (1 - np.exp(-3))
        elif shape == "x":
            f = (np.exp(4 * x) - 1) / (np.exp(4) - 1)
        else:
            f = x
        seg = (t >= t0) if t0 > ks[0][0] else np.ones(len(t), bool)
        out = np.where(seg, v0 + (v1 - v0) * f, out)
    return out


@dataclass
class Sig:
    knots: tuple
    every: int = 1
    first: int | None = None
    lo: float = -np.inf
    hi: float = np.inf

    def grid(self, reached: int) -> np.ndarray:
        return np.arange(self.first if self.first is not None else self.every, reached + 1, self.every)


@dataclass
class Gs(Sig):
    """Gaussian noise with AR(1) memory phi; sd may itself be a knot path (a noise level that grows)."""

    sd: float | tuple = 0.0
    phi: float = 0.5

    def draw(self, rng, t):
        sd = path_at(self.sd, t) if isinstance(self.sd, tuple) else np.full(len(t), self.sd)
        e = np.empty(len(t))
        prev = 0.0
        for i, z in enumerate(rng.normal(size=len(t))):
            prev = self.phi * prev + np.sqrt(1 - self.phi ** 2) * z
            e[i] = prev
        return np.clip(path_at(self.knots, t) + sd * e, self.lo, self.hi), {}


@dataclass
class Rel(Sig):
    """Multiplicative lognormal noise, with a heavy spike (x3-x9) at rate `spikes`."""

    sd: float = 0.2
    spikes: float = 0.0

    def draw(self, rng, t):
        v = path_at(self.knots, t) * np.exp(self.sd * rng.normal(size=len(t)) - self.sd ** 2 / 2)
        hit = rng.random(len(t)) < self.spikes
        v = np.where(hit, v * rng.uniform(3, 9, len(t)), v)
        return np.clip(v, self.lo, self.hi), {}


@dataclass
class Fix(Sig):
    def draw(self, rng, t):
        return path_at(self.knots, t), {}


@dataclass
class Pass(Sig):
    """A pass rate from simulated groups: B prompts x G rollouts per step, averaged over `avg` steps."""

    B: int = 64
    G: int = 8
    avg: int = 1
    kappa: float = 2.0

    def draw(self, rng, t):
        p = np.clip(path_at(self.knots, t), 0.002, 0.998)
        n = self.B * self.avg
        q = rng.beta((p * self.kappa)[:, None], ((1 - p) * self.kappa)[:, None], size=(len(t), n))
        wins = rng.binomial(self.G, q)
        mean = wins.sum(1) / (n * self.G)
        comp = {"std": np.sqrt(mean * (1 - mean)), "flat": ((wins == 0) | (wins == self.G)).mean(1),
                "pct0": 100 * (wins == 0).mean(1), "pct1": 100 * (wins == self.G).mean(1)}
        return mean, comp

    def sd_at(self, p):
        return np.sqrt(p * (1 - p) / (self.B * self.avg * self.G) + p * (1 - p) / (self.kappa + 1) / (self.B * self.avg))


@dataclass
class Ev(Sig):
    """A held-out pass rate on N problems: Binomial(N, p) / N."""

    N: int = 500

    def draw(self, rng, t):
        p = np.clip(path_at(self.knots, t), 0.0, 1.0)
        return rng.binomial(self.N, p) / self.N, {}


def sd_of(sig, p):
    if isinstance(sig, Ev):
        return float(np.sqrt(p * (1 - p) / sig.N))
    if isinstance(sig, Pass):
        return float(sig.sd_at(p))
    return float(sig.sd if not isinstance(sig.sd, tuple) else path_at(sig.sd, [0])[0]) if hasattr(sig, "sd") else 0.0


# ------------------------------------------------------------------------------------------------------ runs


@dataclass
class Run:
    reached: int
    planned: int | None
    tr: dict  # name -> (steps, values): train series, each on its own cadence
    ev: dict  # name -> (steps, values): held-out series
    sigs: dict  # name -> Sig, for --check
    probe: tuple = ("reward", None)
    facts: dict = field(default_factory=dict)


@dataclass
class Story:
    """What a case states: its train and held-out signals, what to derive, which series its label rests on."""

    tr: dict
    ev: dict = field(default_factory=dict)
    derive: object = None  # (run, rng) -> None: keys computed from others (totals, KL-shaped returns, NaN tails)
    probe: tuple = ("reward", None)
    nudge: dict = field(default_factory=dict)  # (eval name, step) -> value: one eval draw as it came out


def realise(story: Story, rng, reached: int, planned: int | None) -> Run:
    run = Run(reached, planned, {}, {}, {}, story.probe)
    for name, sig in story.tr.items():
        t = sig.grid(reached)
        v, comp = sig.draw(rng, t)
        run.tr[name] = (t, v)
        run.sigs[name] = sig
        for k, cv in comp.items():
            run.tr[f"{name}~{k}"] = (t, cv)
    for name, sig in story.ev.items():
        t = sig.grid(reached)
        v, _ = sig.draw(rng, t)
        for (en, es), val in story.nudge.items():
            if en == name and es in set(t.tolist()):
                v[list(t).index(es)] = val
        run.ev[name] = (t, v)
        run.sigs[name] = sig
    if story.derive:
        story.derive(run, rng)
    return run


def story(fn):
    """A case's scenario: fn(reached, planned) -> Story, realised with the case's seed."""
    return lambda rng, reached, planned: realise(fn(reached, planned), rng, reached, planned)


def bg(P: int, *, ent=(0.55, 0.44), length=(480, 540), gn=0.22, lr=1e-6, warm=20, every=1, kl=None, trunc=0.01,
       loss_sd=0.01) -> dict:
    """Healthy background signals of a GRPO-family run over its planned length P."""
    d = {"ent": Gs(((0, ent[0]), (P, ent[1], "l")), every=every, sd=0.01, lo=0.003),
         "len": Gs(((0, length[0]), (P, length[1], "l")), every=every, sd=0.02 * length[0], phi=0.6, lo=4),
         "gn": Rel(((0, gn), (P, gn * 0.85, "l")), every=every, sd=0.22, spikes=0.01),
         "lr": Fix(((0, 0.0), (warm, lr, "l"), (P, lr, "l")), every=every),
         "loss": Gs(((0, 0.0), (P, 0.0)), every=every, sd=loss_sd, phi=0.0),
         "trunc": Gs(((0, trunc), (P, trunc)), every=every, sd=trunc * 0.4, phi=0.3, lo=0, hi=1)}
    if kl:
        d["kl"] = Gs(((0, 0.0), (P, kl, "s")), every=every, sd=kl * 0.04, phi=0.6, lo=0)
    return d


def series(run: Run, name: str) -> np.ndarray:
    return run.tr[name][1]


def put(run: Run, name: str, values, like: str) -> None:
    run.tr[name] = (run.tr[like][0], np.asarray(values, dtype=float))


# -------------------------------------------------------------------------------------------------- row views


def rows(run: Run, keys: dict, *, evals: bool = False) -> dict[int, dict]:
    """{step: {framework key: value}}: internal names through `keys` (absent -> dropped), names holding a '/' as
    they are (already a framework's key). Each series keeps its own cadence, so rows differ in their keys."""
    out: dict[int, dict] = {}
    src = run.ev if evals else run.tr
    for name, (t, v) in src.items():
        key = keys.get(name, name if (evals or "/" in name) and "~" not in name else None)
        if key is None:
            continue
        for s, x in zip(t.tolist(), v.tolist(), strict=True):
            out.setdefault(int(s), {})[key] = float(x)
    return dict(sorted(out.items()))


def g6(x: float) -> float:
    """Six significant digits, as loggers print; NaN and inf stay as they are."""
    return x if not np.isfinite(x) else float(f"{x:.6g}")


def pyd(d: dict) -> str:
    return "{" + ", ".join(f"'{k}': {v!r}" for k, v in d.items()) + "}"


def touch_dirs(base: Path, names) -> None:
    for n in names:
        (base / n).mkdir(parents=True, exist_ok=True)


# ------------------------------------------------------------------------------------------- framework writers

TRL = {"reward": "reward", "reward~std": "reward_std", "reward~flat": "frac_reward_zero_std", "kl": "kl",
       "ent": "entropy", "len": "completions/mean_length", "trunc": "completions/clipped_ratio",
       "clip": "clip_ratio/region_mean", "gn": "grad_norm", "lr": "learning_rate", "loss": "loss"}


def trl_hist(run: Run, keys: dict, per_epoch: int) -> list[dict]:
    hist = []
    evs = rows(run, {}, evals=True)
    for s, d in rows(run, keys).items():
        row = {k: g6(v) for k, v in d.items()}
        if "loss" in row and np.isfinite(row["loss"]):
            row["loss"] = round(row["loss"], 4)
        row.update(step=s, epoch=round(s / per_epoch, 4))
        hist.append(row)
        if s in evs:
            er = {k: g6(v) for k, v in evs[s].items()}
            er.update(step=s, epoch=round(s / per_epoch, 4), eval_runtime=96.4, eval_samples_per_second=5.19,
                      eval_steps_per_second=0.166)
            hist.append(er)
    return hist


def w_trl_state(run: Run, folder: Path, save: int, *, keys=TRL, keep: int | None = None, per_epoch: int = 10_000,
                args: dict | None = None, best_only: str | None = None):
    """HF Trainer output folder: checkpoint-N/trainer_state.json (its history stops at N). best_only: the name of
    the eval metric of save_strategy="best" with save_total_limit=1, which leaves only the best-so-far checkpoint."""
    hist = trl_hist(run, keys, per_epoch)
    log_every = int(np.diff(next(iter(run.tr.values()))[0][:2])[0])
    eval_steps = int(np.diff(next(iter(run.ev.values()))[0][:2])[0]) if run.ev else None
    if best_only:
        es, vs = run.ev[best_only]
        best_i = int(np.argmax(vs))  # the first best wins ties, as the Trainer's `>` comparison does
        saves = [int(es[best_i])]
    else:
        saves = list(range(save, run.reached + 1, save))
        saves = saves[-keep:] if keep else saves
    for n in saves:
        state = trainer_state([r for r in hist if r["step"] <= n], n, run.planned, log_every, save, eval_steps,
                              round(n / per_epoch, 4))
        if best_only:
            state.update(best_metric=float(run.ev[best_only][1][best_i]), best_global_step=n,
                         best_model_checkpoint=f"outputs/checkpoint-{n}")
        dump_json(folder / f"checkpoint-{n}" / "trainer_state.json", state)
        (folder / f"checkpoint-{n}" / "adapter_config.json").write_text(
            json.dumps({"peft_type": "LORA", "r": 32, "lora_alpha": 64, "target_modules": "all-linear"}) + "\n")
    cfg = {"max_steps": run.planned, "logging_steps": log_every, "save_steps": save, "save_total_limit": keep,
           "eval_steps": eval_steps, **(args or {})}
    (folder / "training_args.json").write_text(json.dumps(cfg, indent=2) + "\n")


def w_trl_console(run: Run, folder: Path, *, keys=TRL, per_epoch: int = 10_000, sec: float = 41.0,
                  head: tuple = (), save: int | None = None):
    """transformers' console: tqdm bars and one dict literal per log / eval call."""
    out = [*head, "***** Running training *****", "  Num examples = 12,000", "  Num Epochs = 1",
           f"  Total optimization steps = {run.planned:,}"]
    evs = rows(run, {}, evals=True)
    for s, d in rows(run, keys).items():
        d = {k: g6(v) for k, v in d.items()}
        if "loss" in d and np.isfinite(d["loss"]):
            d["loss"] = round(d["loss"], 4)
        d["epoch"] = round(s / per_epoch, 4)
        pct = int(100 * s / run.planned)
        el, rem = int(s * sec), int((run.planned - s) * sec)
        out.append(f"{pct:3d}%|{'█' * (pct // 10):<10}| {s}/{run.planned} [{el // 3600:02d}:{el // 60 % 60:02d}:"
                   f"{el % 60:02d}<{rem // 3600:02d}:{rem // 60 % 60:02d}:{rem % 60:02d}, {sec:.2f}s/it]")
        out.append(pyd(d))
        if s in evs:
            e = {k: g6(v) for k, v in evs[s].items()}
            e.update(eval_runtime=131.9, eval_samples_per_second=3.79, eval_steps_per_second=0.121,
                     epoch=round(s / per_epoch, 4))
            out.append(pyd(e))
        if save and s % save == 0:
            out.append(f"Saving model checkpoint to outputs/checkpoint-{s}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.log").write_text("\n".join(out) + "\n")


def w_hf_tb(run: Run, folder: Path, *, keys=TRL, saves=(), args: dict | None = None, sec: float = 38.0,
            per_epoch: int = 10_000):
    """HF TensorBoardCallback: rewrite_logs makes train/<key> and eval/<key>; checkpoint folders as listed."""
    evs = rows(run, {}, evals=True)
    events = []
    for s, d in rows(run, keys).items():
        d = {"train/" + k: v for k, v in d.items()}
        d["train/epoch"] = s / per_epoch
        events.append((T0 + sec * s, s, d))
        if s in evs:
            events.append((T0 + sec * s + 70, s, {"eval/" + k.removeprefix("eval_"): v for k, v in evs[s].items()}))
    tb_file(folder / "runs" / "Nov24_21-02-47_h100-07" / f"events.out.tfevents.{int(T0)}.h100-07.3318.0", events)
    for n in saves:
        (folder / f"checkpoint-{n}").mkdir(parents=True, exist_ok=True)
        (folder / f"checkpoint-{n}" / "adapter_model.safetensors").write_bytes(b"")
    (folder / "training_args.json").write_text(json.dumps({"max_steps": run.planned, **(args or {})}, indent=2) + "\n")


VERL = {"reward": "critic/score/mean", "ent": "actor/entropy", "len": "response_length/mean",
        "trunc": "response_length/clip_ratio", "clip": "actor/pg_clipfrac", "kl": "actor/kl_loss",
        "gn": "actor/grad_norm", "lr": "actor/lr", "loss": "actor/pg_loss"}


def verl_rows(run: Run, keys=VERL) -> list[tuple[int, dict]]:
    """verl: one row per step, validation keys in the row of their step; step 0 holds validation only."""
    evs = rows(run, {}, evals=True)
    out = [(0, evs[0])] if 0 in evs else []
    for s, d in rows(run, keys).items():
        if "critic/score/mean" in d:
            sc = d["critic/score/mean"]
            d["critic/score/max"], d["critic/score/min"] = 1.0, 0.0
            d["critic/rewards/mean"] = sc
            d.setdefault("critic/advantages/mean", 0.0)
        if "response_length/mean" in d:
            d["response_length/max"] = min(run.facts.get("max_len", 4096), round(d["response_length/mean"] * 2.6))
            d["response_length/min"] = float(max(12, round(d["response_length/mean"] * 0.18)))
        d["training/global_step"] = s
        d["training/epoch"] = s // run.facts.get("steps_per_epoch", 10**6)
        d["timing_s/step"] = 58.0 + 0.02 * d.get("response_length/mean", 500)
        d["timing_s/gen"] = 0.64 * d["timing_s/step"]
        d.update(evs.get(s, {}))
        out.append((s, d))
    return out


def verl_side(run: Run, folder: Path, project: str, exp: str, save_freq: int, test_freq: int, cfg: dict | None = None):
    base = folder / "checkpoints" / project / exp
    saved = list(range(save_freq, run.reached + 1, save_freq))
    touch_dirs(base, [f"global_step_{n}/actor/huggingface" for n in saved])
    if saved:
        (base / "latest_checkpointed_iteration.txt").write_text(str(saved[-1]))
    full = {"trainer": {"project_name": project, "experiment_name": exp, "total_training_steps": run.planned,
                        "save_freq": save_freq, "test_freq": test_freq, "val_before_train": True,
                        "logger": ["console", "file"], "default_local_dir": f"checkpoints/{project}/{exp}"}}
    for section, items in (cfg or {}).items():
        for dotted, value in items.items():  # hydra's dotted overrides, nested as its config dump writes them
            node = full.setdefault(section, {})
            *parents, leaf = dotted.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = value
    (folder / "config.yaml").write_text("# hydra config dumped by verl.trainer.main_ppo\n"
                                        + yaml.safe_dump(full, sort_keys=False))


def w_verl_console(run: Run, folder: Path, project: str, exp: str, save_freq: int, test_freq: int, cfg=None):
    """verl LocalLogger under Ray with NumPy 2 reprs: '(TaskRunner pid=N) step:S - key:np.float64(v) - ...'."""
    run.facts["max_len"] = (cfg or {}).get("data", {}).get("max_response_length", 4096)
    pre = "(TaskRunner pid=81734) "
    out = [f"{pre}Size of train dataloader: {run.planned}, Size of val dataloader: 1",
           f"{pre}Total training steps: {run.planned}"]
    for i, (s, d) in enumerate(verl_rows(run)):
        body = " - ".join(f"{k}:np.int64({int(v)})" if k.startswith("training/") else f"{k}:np.float64({g6(v)!r})"
                          for k, v in d.items())
        out.append(f"{pre}step:{s} - {body}")
        if i % 17 == 5:
            out.append(f"(WorkerDict pid=82210) [rank0]: INFO {i % 60:02d}:12 vllm prefix cache hit rate 0.41")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "verl_train.log").write_text("\n".join(out) + "\n")
    verl_side(run, folder, project, exp, save_freq, test_freq, cfg)


def w_verl_jsonl(run: Run, folder: Path, project: str, exp: str, save_freq: int, test_freq: int, cfg=None):
    """verl FileLogger: {"step": N, "data": {...}} per line at <project>/<experiment>.jsonl (orjson: NaN -> null)."""
    run.facts["max_len"] = (cfg or {}).get("data", {}).get("max_response_length", 4096)
    p = folder / project / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps({"step": s, "data": {k: (g6(v) if np.isfinite(v) else None) for k, v in d.items()}},
                                    separators=(",", ":")) + "\n" for s, d in verl_rows(run)))
    verl_side(run, folder, project, exp, save_freq, test_freq, cfg)


def w_verl_tb(run: Run, folder: Path, project: str, exp: str, save_freq: int, test_freq: int, cfg=None):
    run.facts["max_len"] = (cfg or {}).get("data", {}).get("max_response_length", 4096)
    events = [(T0 + 71.0 * s, s, d) for s, d in verl_rows(run)]
    tb_file(folder / "tensorboard_log" / project / exp / f"events.out.tfevents.{int(T0)}.gpu-node-12.5512.0", events)
    verl_side(run, folder, project, exp, save_freq, test_freq, cfg)


ORL = {"reward": "reward", "kl": "kl", "len": "response_length", "trunc": "truncated", "clip": "ppo_clip_ratio",
       "gn": "actor_grad_norm", "lr": "actor_lr", "loss": "policy_loss"}


def orl_script(folder: Path, flags: list[str], comment: str = ""):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train_ray.sh").write_text(
        "#!/bin/bash\nset -x\n" + comment + "ray job submit --address=\"http://127.0.0.1:8265\" \\\n"
        "  --runtime-env-json='{\"working_dir\": \"/openrlhf\"}' \\\n  -- python3 -m openrlhf.cli.train_ppo_ray \\\n"
        + " \\\n".join("  " + f for f in flags) + "\n")


def w_orl_console(run: Run, folder: Path, *, flags: list[str], ckpt_every: int, comment: str = "", keys=ORL):
    """OpenRLHF: '✨ Global step N: {dict}', tqdm episode bars, 'Evaluation completed' lines with eval_metrics."""
    out = ["[2025-11-24 21:14:03,518] [INFO] [real_accelerator.py:254:get_accelerator] Setting ds_accelerator to cuda"]
    evs = rows(run, {}, evals=True)
    for s, d in rows(run, keys).items():
        d = {k: g6(v) for k, v in d.items() if np.isfinite(v)}
        out.append(f"✨ Global step {s}: {pyd(d)}")
        if s % 10 == 0:
            pct = int(100 * s / run.planned)
            out.append(f"Episode [1/1]: {pct:3d}%|{'█' * (pct // 10):<10}| {s}/{run.planned} [{s * 52 // 3600:02d}:"
                       f"{s * 52 // 60 % 60:02d}:{s * 52 % 60:02d}<?, 52.1s/it]")
        if s in evs:
            em = {k: g6(v) for k, v in evs[s].items()}
            out.append(f"[INFO] Evaluation completed in 188.62 seconds, global_step {s}, eval_metrics: {pyd(em)}")
    orl_script(folder, flags, comment)
    (folder / "train.log").write_text("\n".join(out) + "\n")
    touch_dirs(folder / "ckpt", [f"global_step{n}" for n in range(ckpt_every, run.reached + 1, ckpt_every)])


def w_orl_tb(run: Run, folder: Path, *, name: str, flags: list[str], ckpt_every: int, keys=ORL, comment: str = ""):
    events = [(T0 + 49.0 * s, s, {"train/" + k: v for k, v in d.items() if np.isfinite(v)})
              for s, d in rows(run, keys).items()]
    tb_file(folder / "logs" / "tensorboard" / name / f"events.out.tfevents.{int(T0)}.ray-head.2231.0", events)
    orl_script(folder, flags, comment)
    touch_dirs(folder / "ckpt", [f"global_step{n}" for n in range(ckpt_every, run.reached + 1, ckpt_every)])


NEMO = {"reward": "train/reward", "kl": "train/kl_penalty", "ent": "train/approx_entropy",
        "len": "train/mean_gen_tokens_per_sample", "trunc": "train/truncation_rate", "gn": "train/grad_norm",
        "lr": "train/lr", "loss": "train/loss", "reward~pct0": "train/baseline_reward/pct_0",
        "reward~pct1": "train/baseline_reward/pct_1"}


def w_nemo_tb(run: Run, folder: Path, *, save_period: int, val_period: int, cfg: dict, keys=NEMO):
    """NeMo-RL GRPO: logs/exp_001/tensorboard (train/*, validation/*, timing/train/*), results/grpo/step_N."""
    evs = rows(run, {}, evals=True)
    events = [(T0 - 40, 0, evs[0])] if 0 in evs else []
    for s, d in rows(run, keys).items():
        if "train/baseline_reward/pct_0" in d:
            d["train/baseline_reward/pct_mixed"] = 100 - d["train/baseline_reward/pct_0"] - d[
                "train/baseline_reward/pct_1"]
        if "train/mean_gen_tokens_per_sample" in d:
            d["timing/train/total_step_time"] = 60 + 0.021 * d["train/mean_gen_tokens_per_sample"]
            d["timing/train/generation"] = 0.71 * d["timing/train/total_step_time"]
        events.append((T0 + 140.0 * s, s, d))
        if s in evs:
            events.append((T0 + 140.0 * s + 30, s, evs[s]))
    tb_file(folder / "logs" / "exp_001" / "tensorboard" / f"events.out.tfevents.{int(T0)}.nemo-0.9931.0", events)
    touch_dirs(folder / "results" / "grpo", [f"step_{n}/policy" for n in range(save_period, run.reached + 1,
                                                                                save_period)])
    full = {"grpo": {"max_num_steps": run.planned, "val_period": val_period, "val_at_start": True, **cfg.pop("grpo", {})},
            "checkpointing": {"enabled": True, "checkpoint_dir": "results/grpo", "save_period": save_period},
            "logger": {"log_dir": "logs", "tensorboard_enabled": True, "wandb_enabled": False}, **cfg}
    (folder / "config.yaml").write_text(yaml.safe_dump(full, sort_keys=False))


def w_wandb_history(run: Run, folder: Path, *, keys=TRL, config: dict, sec: float = 30.0):
    """`run.history(samples=100000).to_csv(...)` of a TRL run reported to W&B: the pandas index, `_step` counting
    log calls (train and eval calls alike), `train/global_step`, empty cells where a call did not log a key."""
    evs = rows(run, {}, evals=True)
    recs = []
    for s, d in rows(run, keys).items():
        recs.append({"train/global_step": s, "_runtime": sec * s, **{"train/" + k: v for k, v in d.items()}})
        if s in evs:
            recs.append({"train/global_step": s, "_runtime": sec * s + 60,
                         **{"eval/" + k.removeprefix("eval_"): v for k, v in evs[s].items()}})
    cols = sorted({k for r in recs for k in r} | {"_step", "_timestamp"})

    def cell(col, v):
        if v is None:
            return ""
        if col in ("_step", "train/global_step"):
            return int(v)
        return repr(round(float(v), 3)) if col in ("_runtime", "_timestamp") else repr(g6(float(v)))
    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\n")
    wr.writerow(["", *cols])
    for i, r in enumerate(recs):
        r["_step"], r["_timestamp"] = i, T0 + r["_runtime"]
        wr.writerow([i, *(cell(c, r.get(c)) for c in cols)])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "wandb_export").mkdir(exist_ok=True)
    (folder / "wandb_export" / "history.csv").write_text(buf.getvalue())
    (folder / "wandb_export" / "config.yaml").write_text(yaml.safe_dump(
        {"_wandb": {"value": {"cli_version": "0.22.3", "python_version": "3.11.10"}},
         **{k: {"value": v} for k, v in config.items()}}, sort_keys=False))


def w_mlflow_files(run: Run, folder: Path, *, exp_name: str, run_name: str, params: dict, run_id: str,
                   keys: dict, sec: float = 25.0):
    """MLflow file store: mlruns/<exp>/<run>/metrics/<key with / as folders>, lines '<ms> <value> <step>'."""
    eid = "289114471502733941"
    rdir = folder / "mlruns" / eid / run_id
    ms = int(T0 * 1000)
    (rdir / "artifacts").mkdir(parents=True, exist_ok=True)
    (folder / "mlruns" / eid / "meta.yaml").write_text(
        f"artifact_location: file:///data/rl/mlruns/{eid}\ncreation_time: {ms}\nexperiment_id: '{eid}'\n"
        f"last_update_time: {ms}\nlifecycle_stage: active\nname: {exp_name}\n")
    (rdir / "meta.yaml").write_text(
        f"artifact_uri: file:///data/rl/mlruns/{eid}/{run_id}/artifacts\nend_time: null\nentry_point_name: ''\n"
        f"experiment_id: '{eid}'\nlifecycle_stage: active\nrun_id: {run_id}\nrun_name: {run_name}\n"
        f"run_uuid: {run_id}\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: {ms}\nstatus: 1\n"
        f"tags: []\nuser_id: rl\n")
    for k, v in params.items():
        (rdir / "params").mkdir(exist_ok=True)
        (rdir / "params" / k).write_text(str(v))
    (rdir / "tags").mkdir(exist_ok=True)
    (rdir / "tags" / "mlflow.runName").write_text(run_name)
    for src, off in ((run.tr, 0), (run.ev, 9000)):
        for name, (t, v) in src.items():
            key = keys.get(name, name if src is run.ev else None)
            if key is None:
                continue
            p = rdir / "metrics" / key
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(f"{ms + int(s * sec * 1000) + off} {float(x)!r} {int(s)}\n"
                                 for s, x in zip(t.tolist(), v.tolist(), strict=True)))


def w_mlflow_db(run: Run, folder: Path, *, exp_name: str, run_name: str, params: dict, keys=TRL,
                finished: bool = False):
    """MLflow SQL store (mlflow.db) as transformers' MLflowCallback fills it: raw Trainer keys, eval_* rows."""
    try:
        from mlflow.entities import Metric, Param
        from mlflow.tracking import MlflowClient
    except Exception as exc:  # pragma: no cover
        raise Skip(f"mlflow unavailable: {exc}") from exc
    folder.mkdir(parents=True, exist_ok=True)
    client = MlflowClient(tracking_uri=f"sqlite:///{folder / 'mlflow.db'}")
    rid = client.create_run(client.create_experiment(exp_name), start_time=int(T0 * 1000),
                            run_name=run_name).info.run_id
    client.log_batch(rid, params=[Param(k, str(v)) for k, v in params.items()])
    batch = []
    for evals in (False, True):
        for s, d in rows(run, {} if evals else keys, evals=evals).items():
            ts = int((T0 + 33.0 * s + (50 if evals else 0)) * 1000)
            batch += [Metric(k, float(v), ts, s) for k, v in d.items()]
            if not evals:
                batch.append(Metric("epoch", round(s / 4000, 4), ts, s))
            if len(batch) > 800:
                client.log_batch(rid, metrics=batch)
                batch = []
    if batch:
        client.log_batch(rid, metrics=batch)
    if finished:
        client.set_terminated(rid, "FINISHED", end_time=int((T0 + 33.0 * run.reached + 400) * 1000))


def w_table(run: Run, folder: Path, *, file: str, cols: dict, step_col: str, side: dict, fmt: str = "csv"):
    """A hand-written loop's log: CSV (eval columns empty off their steps) or JSONL (a line per log call, each
    with only the keys that call logged). `side`: extra files (path -> text) and checkpoint folders (path -> None)."""
    tr, ev = rows(run, cols), rows(run, cols, evals=True)
    folder.mkdir(parents=True, exist_ok=True)
    steps = sorted(set(tr) | set(ev))
    names = list(dict.fromkeys(v for v in cols.values()))
    if fmt == "csv":
        buf = io.StringIO()
        wr = csv.writer(buf, lineterminator="\n")
        wr.writerow([step_col, *names])
        for s in steps:
            d = {**tr.get(s, {}), **ev.get(s, {})}
            wr.writerow([s, *("" if d.get(n) is None else f"{d[n]:.6g}" for n in names)])
        text = buf.getvalue()
    else:
        lines = []
        for s in steps:
            if s in tr:
                lines.append(json.dumps({step_col: s, **{k: g6(v) for k, v in tr[s].items()}}))
            if s in ev:
                lines.append(json.dumps({step_col: s, "split": "eval", **{k: g6(v) for k, v in ev[s].items()}}))
        text = "\n".join(lines) + "\n"
    (folder / file).parent.mkdir(parents=True, exist_ok=True)
    (folder / file).write_text(text)
    for name, content in side.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            (folder / name).mkdir(parents=True, exist_ok=True)
        else:
            (folder / name).write_text(content)


# ------------------------------------------------------------------------------------------------------- stories
# Each returns the signals that make its case; R = steps reached, P = planned steps (None: no planned length).


def ok_rloo_k2(R, P):
    tr = {"reward": Pass(((0, 0.31), (P, 0.62, "s")), every=10, B=128, G=2, avg=10),
          **bg(P, ent=(0.48, 0.40), length=(380, 430), every=10, kl=0.12, lr=1e-6, warm=50),
          "clip": Fix(((0, 0.0), (P, 0.0)), every=10)}
    ev = {"eval_reward": Ev(((0, 0.30), (P, 0.55, "s")), every=100, N=500)}

    def d(run, rng):
        run.tr["rewards/accuracy_reward/mean"] = run.tr["reward"]
        run.ev["eval_rewards/accuracy_reward/mean"] = run.ev["eval_reward"]
    return Story(tr, ev, d, probe=("reward", "eval_reward"))


def ok_reinforcepp(R, P):
    tr = {"reward": Pass(((0, 0.22), (P, 0.55, "s")), B=128, G=4),
          **bg(P, length=(620, 720), kl=0.08, lr=5e-7, warm=20, gn=0.12, loss_sd=0.02),
          "clip": Gs(((0, 0.003), (P, 0.003)), sd=0.001, lo=0), "ppo_kl": Gs(((0, 1e-4), (P, 1e-4)), sd=4e-5)}
    tr.pop("ent")

    def d(run, rng):
        r, k, n = series(run, "reward"), series(run, "kl"), series(run, "len")
        put(run, "return", r - 0.02 * k * n, "reward")
        put(run, "total_length", n + 182 + rng.normal(0, 3, len(n)), "reward")
    return Story(tr, {}, d)


def ok_drgrpo(R, P):
    tr = {"reward": Pass(((0, 0.35), (P, 0.64, "s")), B=256, G=8),
          **bg(P, ent=(0.62, 0.50), length=(650, 1000), trunc=0.006),
          "len": Gs(((0, 650), (P, 1000, "s")), sd=14, phi=0.6),
          "gn": Rel(((0, 0.15), (R, 0.42, "s"), (P, 0.5)), sd=0.2, spikes=0.015),
          "loss": Gs(((0, 0.0), (P, 0.0)), sd=((0, 0.04), (R, 0.36, "s"), (P, 0.5)), phi=0.0),
          "clip": Gs(((0, 0.0015), (P, 0.002)), sd=0.0005, lo=0)}
    ev = {"val-core/HuggingFaceH4/MATH-500/acc/mean@1": Ev(((0, 0.40), (P, 0.62, "s")), every=20, first=0, N=500)}
    return Story(tr, ev, probe=("reward", "val-core/HuggingFaceH4/MATH-500/acc/mean@1"))


def temp_path(P):
    return ((0, 0.6), (200, 0.6, "l"), (800, 1.0, "l"), (P, 1.0, "l"))


def ok_temperature(R, P):
    skill = ((0, 0.45), (P, 0.66, "s"))
    tr = {"reward": Pass(skill, every=5, B=32, G=16, avg=5), **bg(P, every=5, length=(540, 560), kl=0.03),
          "temp": Fix(temp_path(P), every=5)}

    def d(run, rng):
        t = run.tr["reward"][0]
        temp = path_at(temp_path(P), t)
        # sampling hotter costs train pass rate (greedy eval does not pay it) and raises the entropy
        put(run, "reward", np.clip(series(run, "reward") - 0.25 * (temp - 0.6), 0, 1), "reward")
        put(run, "ent", series(run, "ent") * 0.6 * np.exp(2.5 * (temp - 0.6)), "reward")
        put(run, "len", series(run, "len") * (1 + 0.18 * (temp - 0.6)), "reward")
    ev = {"eval_accuracy": Ev(((0, 0.40), (P, 0.62, "s")), every=100, N=500)}
    return Story(tr, ev, d, probe=("reward", "eval_accuracy"))


def ok_early(R, P):
    tr = {"reward": Pass(((0, 0.11), (R, 0.135, "l")), B=128, G=8), **bg(P, kl=0.04, lr=1e-6, warm=10),
          "ent": Gs(((0, 0.95), (R, 0.82, "l")), sd=0.015), "len": Gs(((0, 880), (R, 760, "l")), sd=20, phi=0.6)}
    ev = {"val-core/openai/gsm8k/acc/mean@1": Ev(((0, 0.12), (P, 0.5)), every=50, first=0, N=1319)}
    return Story(tr, ev, probe=("reward", None))


def ok_no_plan(R, P):
    tr = {"reward": Pass(((0, 0.25), (800, 0.38, "s"), (R, 0.52, "l")), every=10, B=32, G=8),
          **bg(R, every=10, kl=0.06, length=(410, 470))}
    ev = {"holdout_acc": Ev(((0, 0.27), (800, 0.36, "s"), (R, 0.47, "l")), every=250, N=400)}
    return Story(tr, ev, probe=("reward", "holdout_acc"))


def ok_cadence(R, P):
    tr = {"reward": Pass(((0, 0.40), (P, 0.72, "s")), B=64, G=8),
          **bg(P, length=(520, 600)), "kl": Gs(((0, 0.0), (P, 0.05, "s")), every=10, sd=0.002, lo=0),
          "ent": Gs(((0, 0.5), (P, 0.41, "l")), every=10, sd=0.01)}
    ev = {"eval/pass_at_1": Ev(((0, 0.38), (P, 0.64, "s")), every=250, N=300)}
    return Story(tr, ev, probe=("reward", "eval/pass_at_1"))


def ok_seed_restart(R, P):
    tr = {"reward": Pass(((0, 0.20), (P, 0.58, "s")), B=32, G=8),
          **bg(P, kl=0.05, warm=30, length=(450, 500))}
    return Story(tr, {}, probe=("reward", None))


def ok_rm_verifier(R, P):
    tr = {"ver": Pass(((0, 0.41), (P, 0.70, "s")), every=10, B=64, G=8, avg=10),
          "rm": Gs(((0, 2.10), (600, 1.82, "s"), (P, 1.75)), every=10, sd=0.035, phi=0.5),
          **bg(P, every=10, length=(720, 560))}

    def d(run, rng):
        ver, rm = series(run, "ver"), series(run, "rm")
        put(run, "reward", ver + 0.1 * rm, "ver")
        put(run, "reward~std", np.sqrt(ver * (1 - ver) + 0.01 * 1.1 ** 2), "ver")
        run.tr["rewards/math_verify_reward/mean"] = run.tr["ver"]
        run.tr["rewards/Skywork-Reward-V2-Llama-3.1-8B/mean"] = run.tr["rm"]
        put(run, "reward~flat", series(run, "ver~flat") * 0.35, "ver")  # the RM's continuous score splits most ties
        es, ev_ver = run.ev["eval_rewards/math_verify_reward/mean"]
        rm_e = path_at(((0, 2.05), (600, 1.80, "s"), (P, 1.74)), es) + rng.normal(0, 0.02, len(es))
        run.ev["eval_rewards/Skywork-Reward-V2-Llama-3.1-8B/mean"] = (es, rm_e)
        run.ev["eval_reward"] = (es, ev_ver + 0.1 * rm_e)
    ev = {"eval_rewards/math_verify_reward/mean": Ev(((0, 0.39), (P, 0.66, "s")), every=100, N=500)}
    return Story(tr, ev, d, probe=("ver", "eval_rewards/math_verify_reward/mean"))


def ok_long_ctx(R, P):
    tr = {"reward": Pass(((0, 0.36), (P, 0.60, "s")), B=64, G=16),
          **bg(P, ent=(0.35, 0.33), kl=0.015, lr=1e-6, warm=10),
          "len": Gs(((0, 4200), (P, 8400, "l")), sd=110, phi=0.6),
          "trunc": Gs(((0, 0.01), (P, 0.09, "l")), sd=0.007, lo=0),
          "train/token_mult_prob_error": Gs(((0, 1.011), (P, 1.012)), sd=0.0015)}
    ev = {"validation/accuracy": Ev(((0, 0.42), (P, 0.60, "s")), every=20, first=0, N=500)}

    def d(run, rng):
        es, _ = run.ev["validation/accuracy"]
        run.ev["validation/avg_length"] = (es, path_at(((0, 4000), (P, 8100, "l")), es) + rng.normal(0, 60, len(es)))
    return Story(tr, ev, d, probe=("reward", "validation/accuracy"))


def ok_near_end(R, P):
    tr = {"reward": Pass(((0, 0.38), (300, 0.47, "s"), (P, 0.66, "l")), every=10, B=64, G=8, avg=10),
          **bg(P, every=10, length=(500, 620))}
    ev = {"eval_reward": Ev(((0, 0.40), (300, 0.46, "s"), (P, 0.64, "l")), every=100, N=1000)}
    return Story(tr, ev, probe=("reward", "eval_reward"))


def ok_async_steady(R, P):
    tr = {"reward": Pass(((0, 0.33), (P, 0.61, "s")), B=64, G=8), **bg(P, kl=0.03, length=(560, 640)),
          "is_ratio/mean": Gs(((0, 1.01), (P, 1.012)), sd=0.004, phi=0.3),
          "is_ratio/max": Rel(((0, 2.6), (P, 2.8)), sd=0.25, spikes=0.02),
          "clip": Gs(((0, 0.055), (P, 0.06)), sd=0.008, lo=0),
          "staleness/mean": Gs(((0, 1.55), (P, 1.6)), sd=0.08, phi=0.2, lo=0, hi=2)}
    return Story(tr, {}, probe=("reward", None))


def stop_reinforcepp_collapse(R, P):
    tr = {"reward": Pass(((0, 0.30), (450, 0.66, "s"), (R, 0.665, "l")), B=128, G=4),
          **bg(P, kl=0.11, lr=1e-6),
          "ent": Gs(((0, 0.55), (450, 0.05, "s"), (R, 0.035, "l")), sd=0.004, lo=0.004),
          "len": Gs(((0, 310), (500, 190, "s"), (R, 185)), sd=5, phi=0.6)}
    ev = {"val-core/openai/gsm8k/acc/mean@1": Ev(((0, 0.33), (450, 0.71, "s"), (R, 0.71)), every=50, first=0, N=1319)}
    return Story(tr, ev, probe=("reward", "val-core/openai/gsm8k/acc/mean@1"))


def bad_dapo_runaway(R, P):
    tr = {"reward": Pass(((0, 0.30), (450, 0.52, "e"), (570, 0.525, "l"), (R, 0.33, "l")), B=128, G=16),
          **bg(P, lr=1e-6, warm=10),
          "len": Gs(((0, 1800), (450, 2600, "l"), (570, 2900, "l"), (R, 7400, "x")), sd=60, phi=0.6),
          "trunc": Gs(((0, 0.01), (570, 0.03, "l"), (R, 0.48, "x")), sd=0.01, lo=0, hi=1),
          "clip": Gs(((0, 0.02), (570, 0.03, "l"), (R, 0.25, "x")), sd=0.004, lo=0),
          "ent": Gs(((0, 0.45), (570, 0.42, "l"), (R, 1.05, "x")), sd=0.01),
          "gn": Rel(((0, 0.2), (570, 0.2), (R, 0.9, "x")), sd=0.25, spikes=0.03)}
    ev = {"val-core/math500/acc/mean@1": Ev(((0, 0.34), (450, 0.47, "e"), (580, 0.47, "l"), (R, 0.36, "l")),
                                            every=50, first=0, N=500)}
    return Story(tr, ev, probe=("reward", "val-core/math500/acc/mean@1"))


def bad_multitask(R, P):
    math = ((0, 0.45), (450, 0.64, "s"), (R, 0.67, "l"))
    code = ((0, 0.30), (350, 0.42, "e"), (470, 0.42), (650, 0.16, "e"), (R, 0.15))
    ifv = ((0, 0.60), (300, 0.72, "e"), (R, 0.73))
    t = np.arange(0, P + 1)
    mixed = tuple((int(s), float(v)) for s, v in zip(t[::10], (0.6 * path_at(math, t) + 0.2 * path_at(code, t)
                                                            + 0.2 * path_at(ifv, t))[::10], strict=True))
    tr = {"reward": Pass(tuple((s, v, "l") for s, v in mixed), B=256, G=8), **bg(P, kl=0.05, length=(700, 820))}
    ev = {"val-core/math/acc/mean@1": Ev(((0, 0.42), (450, 0.55, "s"), (R, 0.57, "l")), every=50, first=0, N=500),
          "val-core/livecodebench/acc/mean@1": Ev(((0, 0.28), (350, 0.38, "e"), (470, 0.38), (650, 0.20, "e"),
                                                   (R, 0.19)), every=50, first=0, N=300),
          "val-core/ifeval/acc/mean@1": Ev(((0, 0.62), (300, 0.71, "e"), (R, 0.72)), every=50, first=0, N=541)}
    return Story(tr, ev, probe=("reward", "val-core/livecodebench/acc/mean@1"))


def bad_rm_vs_verifier(R, P):
    tr = {"rm": Gs(((0, -0.4), (P, 2.6, "s")), every=10, sd=0.05, phi=0.5),
          "ver": Pass(((0, 0.40), (600, 0.58, "e"), (720, 0.58), (R, 0.43, "e")), every=10, B=64, G=8, avg=10),
          **bg(P, every=10, length=(480, 560)),
          "len": Gs(((0, 480), (700, 620, "l"), (R, 1150, "e")), every=10, sd=10, phi=0.6),
          "trunc": Gs(((0, 0.01), (700, 0.015), (R, 0.09, "e")), every=10, sd=0.004, lo=0)}
    ev = {"eval_rewards/math_verify/mean": Ev(((0, 0.41), (600, 0.57, "e"), (720, 0.57), (R, 0.44, "e")),
                                              every=100, N=500)}

    def d(run, rng):
        rm = series(run, "rm")
        put(run, "reward", rm, "rm")  # reward_weights [1.0, 0.0]: the verifier is a monitor only
        put(run, "reward~std", 1.15 - 0.1 * np.arange(len(rm)) / len(rm) + rng.normal(0, 0.03, len(rm)), "rm")
        put(run, "reward~flat", np.zeros(len(rm)), "rm")
        run.tr["rewards/Skywork-Reward-V2-Llama-3.1-8B/mean"] = run.tr["rm"]
        run.tr["rewards/math_verify/mean"] = run.tr["ver"]
        es, _ = run.ev["eval_rewards/math_verify/mean"]
        rm_e = path_at(((0, -0.35), (P, 2.5, "s")), es) + rng.normal(0, 0.04, len(es))
        run.ev["eval_rewards/Skywork-Reward-V2-Llama-3.1-8B/mean"] = (es, rm_e)
        run.ev["eval_reward"] = (es, rm_e)
    return Story(tr, ev, d, probe=("ver", "eval_rewards/math_verify/mean"))


def bad_trunc_creep(R, P):
    tr = {"reward": Pass(((0, 0.38), (350, 0.55, "e"), (420, 0.55), (R, 0.44, "e")), B=64, G=16),
          **bg(P, ent=(0.36, 0.33), kl=0.02, lr=1e-6, warm=10),
          "len": Gs(((0, 3100), (R, 6900, "l")), sd=70, phi=0.6),
          "trunc": Gs(((0, 0.02), (150, 0.03, "l"), (R, 0.38, "l")), sd=0.01, lo=0, hi=1),
          "train/token_mult_prob_error": Gs(((0, 1.010), (P, 1.011)), sd=0.0015)}
    ev = {"validation/accuracy": Ev(((0, 0.42), (325, 0.58, "e"), (420, 0.58), (R, 0.48, "l")), every=25, first=0,
                                    N=500)}

    def d(run, rng):
        es, _ = run.ev["validation/accuracy"]
        run.ev["validation/avg_length"] = (es, path_at(((0, 3000), (R, 6700, "l")), es) + rng.normal(0, 50, len(es)))
    return Story(tr, ev, d, probe=("reward", "validation/accuracy"))


def bad_critic_explodes(R, P):
    tr = {"reward": Gs(((0, -0.3), (450, 1.35, "e"), (660, 1.36), (R, 0.55, "e")), sd=0.06, phi=0.3),
          "vloss": Rel(((0, 0.9), (120, 0.10, "s"), (615, 0.08), (700, 45.0, "x"), (R, 60.0)), sd=0.2),
          "values": Gs(((0, 0.0), (450, 1.2), (615, 1.3), (700, 25.0, "x"), (R, 40.0)), sd=0.05),
          "critic_gn": Rel(((0, 0.5), (615, 0.45), (680, 30.0, "x"), (R, 45.0)), sd=0.3, spikes=0.02),
          "kl": Gs(((0, 0.0), (450, 0.04, "s"), (660, 0.05), (R, 0.40, "x")), sd=0.002, lo=0),
          "clip": Gs(((0, 0.03), (660, 0.03), (R, 0.22, "x")), sd=0.005, lo=0),
          "len": Gs(((0, 300), (600, 340, "l"), (680, 335), (R, 120, "e")), sd=6, phi=0.6),
          "gn": Rel(((0, 0.3), (660, 0.28), (R, 2.5, "x")), sd=0.2, spikes=0.01),
          "lr": Fix(((0, 0.0), (20, 5e-7, "l"), (P, 5e-7))),
          "loss": Gs(((0, 0.0), (P, 0.0)), sd=((0, 0.03), (650, 0.03), (R, 0.3, "x")), phi=0.0)}

    def d(run, rng):
        put(run, "return", series(run, "reward") - 0.01 * series(run, "kl") * series(run, "len"), "reward")
    return Story(tr, {}, d, probe=("reward", None))


def bad_async_drift(R, P):
    tr = {"reward": Pass(((0, 0.30), (450, 0.62, "e"), (520, 0.62), (R, 0.40, "e")), B=128, G=8),
          **bg(P, length=(700, 720), lr=1e-6),
          "len": Gs(((0, 700), (520, 720, "l"), (R, 1100, "x")), sd=12, phi=0.6),
          "ppo_kl": Gs(((0, 0.001), (500, 0.0015, "l"), (R, 0.04, "x")), sd=0.0003),
          "vllm_kl": Gs(((0, 0.002), (500, 0.003, "l"), (R, 0.05, "x")), sd=0.0004),
          "clip": Gs(((0, 0.04), (500, 0.05, "l"), (R, 0.33, "x")), sd=0.006, lo=0),
          "gn": Rel(((0, 0.2), (500, 0.21), (R, 1.6, "x")), sd=0.22, spikes=0.02)}
    tr.pop("ent")
    ev = {"eval_math500_pass1": Ev(((0, 0.33), (450, 0.55, "e"), (530, 0.55), (R, 0.38, "e")), every=50, N=500)}
    return Story(tr, ev, probe=("reward", "eval_math500_pass1"))


def bad_early_nan(R, P):
    tr = {"reward": Pass(((0, 0.21), (40, 0.34, "s"), (R, 0.34)), B=8, G=8),
          **bg(P, lr=3e-6, warm=10, length=(610, 650))}

    def d(run, rng):
        t = run.tr["reward"][0]
        broken = t >= 42
        for k in ("loss", "gn", "ent"):
            v = series(run, k).copy()
            v[broken] = np.nan
            if k == "gn":
                v[t == 41] = 87.3
                v[t == 40] = 11.6
            put(run, k, v, k)
        for k, after in (("reward", 0.0), ("reward~std", 0.0), ("reward~flat", 1.0), ("len", 1024.0), ("trunc", 1.0)):
            v = series(run, k).copy()
            v[t >= 43] = after
            put(run, k, v, k)
    return Story(tr, {}, d, probe=("reward", None))


def bad_sparse_cadence(R, P):
    tr = {"reward": Pass(((0, 0.30), (1000, 0.58, "e"), (1300, 0.585), (1800, 0.47, "e"), (R, 0.46)), B=32, G=8),
          "len": Gs(((0, 500), (1300, 560, "l"), (R, 820, "e")), sd=14, phi=0.6),
          "kl": Gs(((0, 0.0), (1300, 0.05, "s"), (R, 0.35, "x")), every=10, sd=0.003, lo=0),
          "ent": Gs(((0, 0.5), (1300, 0.38, "l"), (R, 0.62, "e")), every=10, sd=0.01)}
    ev = {"eval/acc": Ev(((0, 0.38), (1000, 0.53, "e"), (1300, 0.535), (1800, 0.45, "e"), (R, 0.44)), every=250,
                         N=1000)}
    return Story(tr, ev, probe=("reward", "eval/acc"))


def bad_best_only(R, P):
    tr = {"reward": Pass(((0, 0.35), (550, 0.60, "e"), (650, 0.605), (R, 0.50, "e")), every=10, B=64, G=8, avg=10),
          **bg(P, every=10),
          "ent": Gs(((0, 0.50), (650, 0.30, "l"), (R, 0.06, "e")), every=10, sd=0.008, lo=0.005),
          "len": Gs(((0, 600), (650, 540, "l"), (R, 330, "e")), every=10, sd=9, phi=0.6)}
    ev = {"eval_rewards/accuracy_reward/mean": Ev(((0, 0.36), (550, 0.56, "e"), (650, 0.565), (R, 0.47, "e")),
                                                  every=100, N=500)}

    def d(run, rng):
        run.tr["rewards/accuracy_reward/mean"] = run.tr["reward"]
        run.ev["eval_reward"] = run.ev["eval_rewards/accuracy_reward/mean"]
    return Story(tr, ev, d, probe=("reward", "eval_rewards/accuracy_reward/mean"))


def stop_easy_only(R, P):
    buckets = {"easy": (((0, 0.62), (500, 0.95, "s"), (R, 0.97, "l")), 32),
               "medium": (((0, 0.28), (400, 0.40, "s"), (R, 0.41)), 40),
               "hard": (((0, 0.02), (R, 0.025, "l")), 24)}
    tr = {f"acc_{b}": Pass(k, every=10, B=n, G=8, avg=10) for b, (k, n) in buckets.items()}
    tr.update(bg(P, every=10, length=(690, 640)))

    def d(run, rng):
        w = {b: n / 96 for b, (_, n) in buckets.items()}
        tot = sum(w[b] * series(run, f"acc_{b}") for b in w)
        put(run, "reward", tot, "acc_easy")
        put(run, "reward~std", np.sqrt(tot * (1 - tot)), "acc_easy")
        put(run, "reward~flat", sum(w[b] * series(run, f"acc_{b}~flat") for b in w), "acc_easy")
        for b in w:
            run.tr[f"rewards/acc_{b}/mean"] = run.tr[f"acc_{b}"]
        es = run.ev["eval_rewards/acc_easy/mean"][0]
        tot_e = sum(w[b] * run.ev[f"eval_rewards/acc_{b}/mean"][1] for b in w)
        run.ev["eval_reward"] = (es, tot_e)
    ev = {"eval_rewards/acc_easy/mean": Ev(((0, 0.60), (500, 0.93, "s"), (R, 0.94)), every=100, N=200),
          "eval_rewards/acc_medium/mean": Ev(((0, 0.27), (400, 0.38, "s"), (R, 0.385)), every=100, N=250),
          "eval_rewards/acc_hard/mean": Ev(((0, 0.02), (R, 0.024)), every=100, N=150)}
    return Story(tr, ev, d, probe=("reward", "eval_rewards/acc_medium/mean"))


def stop_rloo_kl_drift(R, P):
    tr = {"reward": Pass(((0, 0.28), (400, 0.47, "e"), (R, 0.47)), every=10, B=64, G=4, avg=10),
          **bg(P, every=10, length=(450, 470)),
          "kl": Gs(((0, 0.0), (400, 0.04, "s"), (R, 0.26, "l")), every=10, sd=0.004, lo=0),
          "ent": Gs(((0, 0.52), (400, 0.44, "l"), (R, 0.30, "l")), every=10, sd=0.008),
          "len": Gs(((0, 450), (400, 470, "l"), (R, 560, "l")), every=10, sd=8, phi=0.6),
          "clip": Fix(((0, 0.0), (P, 0.0)), every=10)}
    ev = {"eval_reward": Ev(((0, 0.30), (400, 0.45, "e"), (R, 0.445, "l")), every=100, N=500)}
    return Story(tr, ev, probe=("reward", "eval_reward"))


def stop_plateau_no_plan(R, P):
    tr = {"reward": Pass(((0, 0.30), (1500, 0.62, "e"), (R, 0.62)), every=10, B=64, G=8),
          **bg(R, every=10, length=(430, 470)),
          "kl": Gs(((0, 0.0), (1500, 0.03, "s"), (R, 0.045, "l")), every=10, sd=0.002, lo=0),
          "ent": Gs(((0, 0.45), (1500, 0.36, "l"), (R, 0.33, "l")), every=10, sd=0.008)}
    ev = {"val_score": Ev(((0, 0.33), (1500, 0.60, "e"), (R, 0.60)), every=300, first=0, N=500)}
    return Story(tr, ev, probe=("reward", "val_score"))


def conv_near_end(R, P):
    tr = {"reward": Pass(((0, 0.36), (1300, 0.63, "e"), (R, 0.632)), every=10, B=64, G=8, avg=10),
          **bg(P, every=10, length=(520, 560))}
    ev = {"eval_reward": Ev(((0, 0.38), (1300, 0.61, "e"), (R, 0.61)), every=100, N=1000)}
    return Story(tr, ev, probe=("reward", "eval_reward"))


def stop_finished_noise(R, P):
    tr = {"reward": Pass(((0, 0.40), (1200, 0.64, "e"), (P, 0.645)), every=10, B=64, G=8, avg=10),
          **bg(P, every=10, length=(470, 520))}
    ev = {"eval_reward": Ev(((0, 0.41), (1200, 0.612, "e"), (P, 0.612)), every=200, N=500)}
    return Story(tr, ev, probe=("reward", "eval_reward"))


def bad_boxed_spam(R, P):
    tr = {"lenient": Pass(((0, 0.45), (550, 0.58, "e"), (650, 0.60), (R, 0.88, "e")), every=10, B=64, G=8, avg=10),
          "strict": Pass(((0, 0.43), (550, 0.56, "e"), (650, 0.565), (R, 0.40, "e")), every=10, B=64, G=8, avg=10),
          "nbox": Gs(((0, 1.0), (650, 1.05), (R, 3.4, "e")), every=10, sd=0.03, phi=0.5, lo=0),
          **bg(P, every=10, length=(560, 600)),
          "len": Gs(((0, 560), (650, 590, "l"), (R, 760, "e")), every=10, sd=10, phi=0.6)}
    ev = {"eval_rewards/strict_match/mean": Ev(((0, 0.44), (550, 0.55, "e"), (650, 0.555), (R, 0.41, "e")),
                                               every=100, N=500)}

    def d(run, rng):
        put(run, "reward", series(run, "lenient"), "lenient")  # reward_weights [1.0, 0.0, 0.0]
        put(run, "reward~std", series(run, "lenient~std"), "lenient")
        put(run, "reward~flat", series(run, "lenient~flat"), "lenient")
        run.tr["rewards/boxed_match/mean"] = run.tr["lenient"]
        run.tr["rewards/strict_match/mean"] = run.tr["strict"]
        run.tr["rewards/num_boxed/mean"] = run.tr["nbox"]
        es = run.ev["eval_rewards/strict_match/mean"][0]
        lenient = np.clip(path_at(((0, 0.46), (550, 0.57, "e"), (650, 0.59), (R, 0.86, "e")), es)
                          + rng.normal(0, 0.02, len(es)), 0, 1)
        run.ev["eval_rewards/boxed_match/mean"] = (es, lenient)
        run.ev["eval_reward"] = (es, lenient)
    return Story(tr, ev, d, probe=("strict", "eval_rewards/strict_match/mean"))


def bad_entropy_fixed_temp(R, P):
    tr = {"reward": Pass(((0, 0.40), (500, 0.58, "e"), (680, 0.585), (R, 0.32, "e")), every=5, B=32, G=16, avg=5),
          **bg(P, every=5, kl=0.03),
          "ent": Gs(((0, 0.32), (680, 0.28, "l"), (R, 1.6, "x")), every=5, sd=0.01, lo=0.01),
          "len": Gs(((0, 520), (680, 560, "l"), (R, 900, "x")), every=5, sd=10, phi=0.6),
          "trunc": Gs(((0, 0.01), (680, 0.012), (R, 0.15, "x")), every=5, sd=0.004, lo=0),
          "gn": Rel(((0, 0.22), (680, 0.2), (R, 1.1, "x")), every=5, sd=0.22, spikes=0.02),
          "temp": Fix(((0, 1.0), (P, 1.0)), every=5)}
    ev = {"eval_accuracy": Ev(((0, 0.40), (500, 0.55, "e"), (690, 0.555), (R, 0.36, "e")), every=100, N=500)}
    return Story(tr, ev, probe=("reward", "eval_accuracy"))


def bad_epoch_ckpts(R, P):
    tr = {"reward": Pass(((0, 0.30), (200, 0.45, "e"), (201, 0.52, "l"), (400, 0.60, "e"), (401, 0.70, "l"),
                          (P, 0.82, "e")), every=5, B=32, G=8),
          **bg(P, every=5, kl=0.05),
          "len": Gs(((0, 520), (400, 480, "l"), (P, 250, "e")), every=5, sd=8, phi=0.6)}
    ev = {"val_acc": Ev(((0, 0.32), (350, 0.49, "e"), (420, 0.49), (P, 0.41, "e")), every=50, first=0, N=400)}
    return Story(tr, ev, probe=("reward", "val_acc"))


# ------------------------------------------------------------------------------------------- case-specific writers

W = writer  # W(fn)(*options) binds a writer's options in the table


def two_attempts(fn, crash_at: int):
    """A first attempt that died at `crash_at`, then a fresh start with another seed, both from the same recipe."""
    def make(rng, reached, planned):
        first = realise(fn(reached, planned), rng, crash_at, planned)
        run = realise(fn(reached, planned), rng, reached, planned)
        run.facts["first"] = first
        return run
    return make


def w_seed_restart(run: Run, folder: Path):
    """One CSV appended by both attempts: the `seed` column changes and `step` starts again at 1."""
    keys = {"reward": "reward", "reward~std": "reward_std", "kl": "kl", "ent": "entropy", "len": "resp_len",
            "lr": "lr"}
    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\n")
    wr.writerow(["seed", "step", *keys.values()])
    for seed, part in ((1, run.facts["first"]), (2, run)):
        for s, d in rows(part, keys).items():
            wr.writerow([seed, s, *(f"{d[k]:.6g}" for k in keys.values())])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train_log.csv").write_text(buf.getvalue())
    (folder / "run.yaml").write_text(
        "# GRPO loop config (this launch)\nmodel: Qwen2.5-3B-Instruct\nseed: 2\ntotal_steps: 1500\n"
        "group_size: 8\nprompts_per_step: 32\nlr: 1.0e-6\nwarmup_steps: 30\nsave_every: 100\nlog_file: train_log.csv\n"
        "# seed 1 died at step 220 (NCCL watchdog timeout on node 3); relaunched from the base model with seed 2\n")
    touch_dirs(folder / "ckpt", [f"seed1/step_{n:06d}" for n in (100, 200)] +
               [f"seed2/step_{n:06d}" for n in range(100, run.reached + 1, 100)])


def w_early_nan(run: Run, folder: Path):
    w_trl_state(run, folder, 20, args={"trl_version": "0.21.0", "learning_rate": 3e-6, "beta": 0.0,
                                       "num_generations": 8, "per_device_train_batch_size": 8, "logging_steps": 1})
    w_trl_console(run, folder, save=20, sec=22.0, head=("trl 0.21.0 | GRPOTrainer | Qwen2.5-1.5B-Instruct",))


def w_best_only(run: Run, folder: Path):
    w_hf_tb(run, folder, saves=())
    w_trl_state(run, folder, 100, best_only="eval_rewards/accuracy_reward/mean",
                args={"trl_version": "0.22.2", "save_strategy": "best", "save_total_limit": 1,
                      "metric_for_best_model": "rewards/accuracy_reward/mean", "greater_is_better": True,
                      "eval_strategy": "steps", "report_to": ["tensorboard"], "eval_problems": 500})


def with_epoch(inner, steps_per_epoch: int):
    def write(run: Run, folder: Path):
        t = run.tr["reward"][0]
        run.tr["epoch"] = (t, np.minimum(t // steps_per_epoch + 1, 3).astype(float))
        inner(run, folder)
    return write


# -------------------------------------------------------------------------------------------------------- table

CKPT_ALL = None
TRLX = {**TRL, "temp": "rollout_temperature"}


def verl_cfg(**sections) -> dict:
    return sections


CASES = [
    # ------------------------------------------------------------------ healthy, alarming at first sight: continue
    Case("ok-rloo-k2-half-groups-flat-trl-state", story(ok_rloo_k2),
         W(w_trl_state)(100, args={"trl_version": "0.24.0", "trainer": "RLOOTrainer", "num_generations": 2,
                                   "beta": 0.05, "per_device_train_batch_size": 32, "gradient_accumulation_steps": 4,
                                   "eval_problems": 500}),
         901, (700, 2000), HEALTHY, "trl trl_state rloo kl zero_std lookalike checkpoints",
         """TRL RLOOTrainer (v0.24, num_generations=2, beta 0.05), checkpoint-700 of 2000. frac_reward_zero_std sits
         at ~0.67-0.71 the whole run, which would mean a starved GRPO run, but with two completions per prompt a pair is
         flat whenever both pass or both fail, so most pairs are flat by construction. The accuracy reward keeps
         rising (0.31 -> ~0.52, still climbing), KL grows with it to ~0.08 (beta 0.05), the held-out eval_reward
         (500 problems, sd ~0.022) climbs from ~0.33 at step 100 to ~0.45 at 600-700. Healthy learning: continue."""),
    Case("ok-reinforcepp-return-falls-openrlhf-console", story(ok_reinforcepp),
         W(w_orl_console)(flags=["--pretrain Qwen/Qwen2.5-7B", "--advantage_estimator reinforce",
                                 "--remote_rm_url http://verifier:5000/get_reward", "--n_samples_per_prompt 4",
                                 "--rollout_batch_size 128", "--train_batch_size 512", "--max_samples 128000",
                                 "--num_episodes 1", "--init_kl_coef 0.02", "--actor_learning_rate 5e-7",
                                 "--logging_steps 1", "--save_steps 50", "--ckpt_path ./ckpt"],
                          ckpt_every=50, comment="# 128000 prompts / rollout_batch_size 128 = 1000 global steps\n",
                          keys={**ORL, "return": "return", "total_length": "total_length", "ppo_kl": "ppo_kl"}),
         902, (450, 1000), HEALTHY, "openrlhf openrlhf_console reinforce_pp kl_in_reward lookalike checkpoints",
         """OpenRLHF REINFORCE++ (KL folded into the reward, init_kl_coef 0.02), global step 450 of 1000. The
         `return` column, which the progress bar also shows, falls steadily from ~0.2 to ~-0.4: it is the reward
         after the per-token KL penalty, summed over ~700-token responses, so it falls as KL grows even while the
         task improves. The raw verifier reward rises 0.22 -> ~0.48 and is still climbing; KL ~0.06 grows smoothly,
         clipping and ppo_kl tiny, truncation ~1%. Healthy: continue."""),
    Case("ok-drgrpo-loss-scale-grows-verl-jsonl", story(ok_drgrpo),
         W(w_verl_jsonl)("drgrpo_math", "q25math7b-drgrpo", 100, 20,
                         verl_cfg(algorithm={"adv_estimator": "grpo", "norm_adv_by_std_in_grpo": False},
                                  actor_rollout_ref={"actor.loss_agg_mode": "seq-mean-token-sum-norm",
                                                     "actor.use_kl_loss": False, "rollout.n": 8},
                                  data={"train_batch_size": 256, "max_response_length": 3072})),
         903, (380, 1000), HEALTHY, "verl verl_jsonl file_logger dr_grpo token_loss lookalike checkpoints",
         """verl file logger, Dr. GRPO (no std normalisation, seq-mean-token-sum-norm loss), step 380 of 1000. With a
         token-sum loss the scale of actor/pg_loss and actor/grad_norm grows with response length: pg_loss swings grow
         from +-0.04 to +-0.35 and grad norm triples (0.15 -> ~0.42), which looks like instability. Yet the score rises
         0.35 -> ~0.56, MATH-500 validation (every 20 steps, 500 problems) 0.40 -> ~0.55 and still climbing, entropy
         declines slowly, lengths grow moderately (650 -> ~900) with truncation under 1.5%. Continue."""),
    Case("ok-temperature-schedule-entropy-triples-wandb-history", story(ok_temperature),
         W(w_wandb_history)(keys=TRLX, config={
             "trainer": "GRPOTrainer", "trl_version": "0.23.0", "max_steps": 1500, "logging_steps": 5,
             "eval_steps": 100, "num_generations": 16, "beta": 0.02, "temperature": 0.6,
             "temperature_schedule": {"type": "linear", "start_step": 200, "end_step": 800, "start": 0.6, "end": 1.0},
             "eval_temperature": 0.0, "eval_problems": 500}),
         1200, (900, 1500), HEALTHY, "trl wandb_history_csv grpo entropy_rise temperature_schedule lookalike",
         """W&B history export (pandas CSV, `_step` counts log calls; train/global_step is the step) of TRL GRPO,
         step 900 of 1500. Entropy climbs from ~0.32 to ~0.8 between steps 200 and 800 and the train reward stalls
         at ~0.53 from ~270 on: alarming, until one reads the config and the logged
         train/rollout_temperature: a planned linear schedule from 0.6 to 1.0 over steps 200-800. Hotter sampling
         raises entropy and costs train pass rate, while the greedy held-out accuracy (500 problems, sd ~0.022)
         keeps climbing, ~0.47 at 100 -> 0.618 at 900, its best. The entropy rise is the schedule doing its job.
         Continue."""),
    Case("ok-three-pct-too-early-verl-console", story(ok_early),
         W(w_verl_console)("gsm8k_grpo", "q25-05b-base-grpo", 100, 50,
                           verl_cfg(actor_rollout_ref={"rollout.n": 8, "actor.use_kl_loss": True},
                                    data={"train_batch_size": 128, "max_response_length": 2048})),
         905, (36, 1200), HEALTHY, "verl verl_console grpo early noisy lookalike",
         """verl console, GRPO on GSM8K from a 0.5B base model, step 36 of 1200 (3%). The score hovers at ~0.12 with
         per-step noise (+-0.03) and barely moves, entropy falls from 0.95 to ~0.82 and responses shorten from ~880
         to ~760 tokens as the model picks up the format; only the step-0 validation exists (test_freq 50) and no
         checkpoint yet. Nothing is broken and 97% of the budget is left: far too early to call a plateau.
         Continue."""),
    Case("ok-no-planned-length-slow-climb-custom-csv", story(ok_no_plan),
         W(w_table)(file="logs/metrics.csv", step_col="iteration",
                    cols={"reward": "avg_return", "reward~std": "ret_std", "kl": "kl_to_ref", "len": "tok_per_resp",
                          "ent": "pg_entropy", "gn": "gnorm", "holdout_acc": "holdout_acc"},
                    side={"config.json": json.dumps({"model": "Llama-3.1-8B-Instruct", "algo": "grpo",
                                                     "group_size": 8, "prompts_per_iter": 32, "log_every": 10,
                                                     "eval_every": 250, "eval_problems": 400, "save_every": 500,
                                                     "stop": "by hand"}, indent=2) + "\n",
                          **{f"ckpt/it_{n:05d}": None for n in range(500, 3251, 500)}}),
         1300, (3250, None), HEALTHY, "custom_csv grpo no_planned_length slow sparse_eval lookalike checkpoints",
         """Hand-written GRPO loop, CSV with its own column names, iteration 3250 and no planned length anywhere
         (config says it is stopped by hand). Gains are slow now, which invites a stop: the per-iteration return is
         noisy (32 prompts x 8, sd ~0.05) but its trend still climbs ~0.05 per 1000 iterations (0.25 -> ~0.52), and
         the 400-problem holdout (sd ~0.025, every 250) is noisy but trends up, ~0.30 at 250 -> 0.455 at 3000 and
         3250, its best. Still
         improving: continue."""),
    Case("ok-partial-cadence-last-eval-dip-mlflow-files", story(ok_cadence),
         W(w_mlflow_files)(exp_name="grpo-math", run_name="q7b-grpo-lr1e-6", run_id="5f0c1a9e44b24c1e9d2b7d1f30aa6c11",
                           params={"max_steps": 3000, "eval_every": 250, "eval_problems": 300, "kl_log_every": 10,
                                   "save_every": 250, "checkpoint_dir": "s3://rl-ckpt/q7b-grpo-lr1e-6",
                                   "algorithm": "grpo", "num_generations": 8},
                           keys={"reward": "train/reward", "reward~std": "train/reward_std", "kl": "train/kl",
                                 "ent": "train/entropy", "len": "train/response_length", "gn": "train/grad_norm",
                                 "lr": "train/lr", "loss": "train/loss"}),
         3504, (1600, 3000), HEALTHY, "mlflow mlflow_file grpo partial_logs sparse_eval eval_noise lookalike",
         """MLflow file store, GRPO step 1600 of 3000 with mixed cadences: reward every step, KL and entropy every 10,
         pass@1 on 300 problems every 250 steps. The last eval dips (0.560 at 1500 after 0.590 at 1250), which looks
         like the start of a decline; but on 300 problems an eval has sd ~0.028 and two differ by ~0.04 by chance,
         while the per-step reward keeps rising (0.40 -> ~0.66, no bend) and KL grows slowly. One low eval inside
         its noise, no other signal: continue."""),
    Case("ok-seed-restart-appended-custom-csv", two_attempts(ok_seed_restart, 220), w_seed_restart, 908,
         (540, 1500), HEALTHY, "custom_csv grpo restart new_seed appended_log lookalike checkpoints",
         """A GRPO loop's CSV with two launches appended: seed 1 ran to step 220 (reward 0.20 -> ~0.34) and died (the
         run.yaml note: NCCL timeout), then seed 2 started again from the base model and the step column restarts at
         1. Read as one series it is a collapse at 'step 221' back to 0.20; read by seed it is a fresh attempt, now at
         step 540 of 1500, reward ~0.46 and still rising, ahead of where seed 1 was at step 220. Nothing better lies
         behind (seed 1's step 200 is worse than now): continue."""),
    Case("ok-rm-score-dips-verifier-rises-trl-console", story(ok_rm_verifier),
         W(w_trl_console)(head=("trl 0.23.1 | GRPOTrainer | reward_funcs=[math_verify_reward, "
                                "Skywork/Skywork-Reward-V2-Llama-3.1-8B] reward_weights=[1.0, 0.1] beta=0.0",)),
         909, (600, 1500), HEALTHY, "trl trl_console grpo reward_model verifier reward_components lookalike",
         """TRL GRPO console, step 600 of 1500, two rewards: a rule-based math verifier (weight 1.0) and a learned RM
         score as a style term (weight 0.1). They disagree: the RM score falls 2.1 -> ~1.82 while the verifier
         accuracy rises 0.41 -> ~0.62, as answers get terser (735 -> ~620 tokens). The verifier is the task and the
         held-out verifier accuracy (500 problems, every 100) rises 0.39 -> ~0.59; a small dip in a down-weighted
         style score is the price of shorter correct answers, not hacking. Continue."""),
    Case("ok-long-context-truncation-creeps-nemo-tb", story(ok_long_ctx),
         W(w_nemo_tb)(save_period=50, val_period=20, cfg={
             "grpo": {"num_prompts_per_step": 64, "num_generations_per_prompt": 16},
             "policy": {"model_name": "Qwen/Qwen3-8B-Base", "max_total_sequence_length": 18432,
                        "generation": {"max_new_tokens": 16384, "temperature": 1.0}}}),
         910, (300, 500), HEALTHY, "nemo_rl tensorboard grpo long_context truncation length_growth lookalike checkpoints",
         """NeMo-RL GRPO, long-context reasoning (max_new_tokens 16384), step 300 of 500. Mean generated tokens grow
         4200 -> ~6700 and the truncation rate creeps from 1% to ~5%, the early shape of a length runaway. But the
         reward keeps rising (0.36 -> ~0.57), validation accuracy (500 problems every 20 steps, sd ~0.022) rises
         0.42 -> ~0.57, the all-0/all-1 group shares stay moderate and the train/inference mismatch is flat. Longer
         reasoning paying off with a few percent truncated: continue and watch the cap."""),
    Case("ok-95pct-still-climbing-hf-tb", story(ok_near_end),
         W(w_hf_tb)(saves=(1400, 1600, 1800), args={"logging_steps": 10, "eval_steps": 100, "save_steps": 200,
                                                    "save_total_limit": 3, "eval_problems": 1000}),
         911, (1900, 2000), HEALTHY, "trl tensorboard hf_tb grpo near_end still_improving checkpoints",
         """TRL GRPO via the HF TensorBoard callback, step 1900 of 2000 (95%). Both the train reward (0.38 -> ~0.65)
         and the 1000-problem held-out eval (sd ~0.015) keep climbing at a steady pace: the eval set a new high at
         nearly every one of its last evals (~0.59 at 1600 -> ~0.63 at 1900). The run is still improving as its
         budget runs out: let it finish, and extending it is worth it. Continue."""),
    Case("ok-async-rollouts-ratio-steady-custom-jsonl", story(ok_async_steady),
         W(w_table)(file="logs/async_grpo.jsonl", step_col="iter", fmt="jsonl",
                    cols={"reward": "train/reward", "reward~std": "train/reward_std", "kl": "train/kl_ref",
                          "ent": "train/entropy", "len": "train/resp_len", "gn": "train/grad_norm", "lr": "train/lr",
                          "clip": "train/clip_frac"},
                    side={"config.yaml": "trainer: async_grpo\ntotal_iters: 2000\nmax_staleness: 2\n"
                                         "rollout_workers: 6\nis_correction: truncated (cap 5.0)\nsave_every: 200\n",
                          **{f"checkpoints/iter-{n}": None for n in range(200, 801, 200)}}),
         912, (800, 2000), HEALTHY, "custom_jsonl grpo async off_policy importance_ratio lookalike checkpoints",
         """A custom async GRPO loop (rollout workers up to 2 policy versions stale), iter 800 of 2000, checkpoints
         named iter-200 ... iter-800. Clipping is never 0 (~6% of tokens) and is_ratio/max sits at 2-4 with
         occasional spikes far above, which would alarm in an on-policy run; here they are the steady price of staleness ~1.6: the mean
         ratio stays at ~1.01 and none of them trends. Reward rises 0.33 -> ~0.55, KL and entropy move slowly.
         Continue."""),
    # ------------------------------------------------------------------------------------------------- stops
    Case("stop-reinforcepp-entropy-gone-plateau-verl-console", story(stop_reinforcepp_collapse),
         W(w_verl_console)("gsm8k_rpp", "q25-3b-reinforce_pp", 100, 50,
                           verl_cfg(algorithm={"adv_estimator": "reinforce_plus_plus"},
                                    actor_rollout_ref={"rollout.n": 4, "actor.use_kl_loss": True,
                                                       "actor.kl_loss_coef": 0.001},
                                    data={"train_batch_size": 256, "max_response_length": 1024})),
         913, (900, 1500), stop(500), "verl verl_console reinforce_pp entropy_collapse plateau",
         """verl REINFORCE++ console, step 900 of 1500. Entropy collapsed from 0.55 to ~0.05 by step 450 and stays at
         ~0.04; the score rose 0.30 -> ~0.66 by 450 and has been flat since, for as long as it climbed; GSM8K
         validation (1319 problems, sd ~0.013, every 50) reached ~0.71 at 450 and has held there within noise; the
         responses froze into one ~190-token template. Sampling is near-deterministic, so there is nothing left to
         explore and no decline to undo: stop."""),
    Case("stop-gains-only-on-easy-prompts-trl-state", story(stop_easy_only),
         W(w_trl_state)(100, args={"trl_version": "0.22.1", "reward_funcs": ["acc_easy", "acc_medium", "acc_hard"],
                                   "note": "each reward function scores only its difficulty bucket (None elsewhere)",
                                   "num_generations": 8, "beta": 0.0}),
         914, (1200, 2400), stop(500), "trl trl_state grpo difficulty_buckets zero_std plateau reward_components",
         """TRL GRPO with one accuracy function per difficulty bucket (each returns None outside its bucket, so
         rewards/acc_<bucket>/mean is the bucket's pass rate), step 1200 of 2400. The total reward still creeps up,
         but only because easy prompts crawl toward the ceiling (0.62 -> ~0.97); medium stopped at ~0.40 by step 400
         and hard never left ~0.02. About 60% of groups are flat (easy all-right, hard all-wrong), and the
         held-out buckets have been flat since ~500 (medium ~0.38, hard ~0.02). Nothing more to gain from this data
         mix; the weights are as good as any: stop (and fix the mix)."""),
    Case("stop-rloo-kl-drifts-reward-flat-trl-state", story(stop_rloo_kl_drift),
         W(w_trl_state)(100, args={"trl_version": "0.24.0", "trainer": "RLOOTrainer", "num_generations": 4,
                                   "beta": 0.05, "eval_problems": 500}),
         1753, (1100, 2000), stop(600), "trl trl_state rloo kl_drift plateau",
         """TRL RLOO (beta 0.05), checkpoint-1100 of 2000. The reward rose 0.28 -> ~0.47 by step 400 and has been
         flat since; KL keeps climbing linearly (0.04 -> ~0.26), entropy falls and responses lengthen, but neither
         the reward nor the held-out eval_reward (500 problems, ~0.45 at every eval since 400) moves. The policy
         drifts from the reference without buying anything and without a decline yet: stop."""),
    Case("stop-no-planned-length-long-plateau-custom-csv", story(stop_plateau_no_plan),
         W(w_table)(file="train_log.csv", step_col="it",
                    cols={"reward": "mean_score", "reward~std": "score_sd", "kl": "kl", "ent": "H", "len": "len",
                          "val_score": "val_score"},
                    side={"hparams.yaml": "model: Mistral-7B-Instruct-v0.3\nalgo: grpo\ngroup: 8\nbatch_prompts: 64\n"
                                          "lr: 1e-6\nlog_every: 10\nval_every: 300\nval_size: 500\nsave_every: 600\n",
                          **{f"ckpt/it{n}": None for n in range(600, 3601, 600)}}),
         916, (3600, None), stop(1500), "custom_csv grpo no_planned_length plateau sparse_eval checkpoints",
         """Hand-written GRPO loop CSV, iteration 3600, no planned length anywhere. The score rose 0.30 -> ~0.62 by
         1500 and has been flat for 2100 iterations, longer than it climbed; the validation score (500 problems,
         every 300, sd ~0.022) reached ~0.60 at 1500 and the seven evals since sit at 0.58-0.62, KL creeps slowly.
         Converged: nothing more to gain and the current weights are as good as any. Stop."""),
    Case("conv-95pct-flat-since-1300-hf-tb", story(conv_near_end),
         W(w_hf_tb)(saves=(1400, 1600, 1800), args={"logging_steps": 10, "eval_steps": 100, "save_steps": 200,
                                                    "save_total_limit": 3, "eval_problems": 1000}),
         1858, (1900, 2000), converged(), "trl tensorboard hf_tb grpo near_end plateau checkpoints",
         """TRL GRPO via the HF TensorBoard callback, step 1900 of 2000 (95%). Reward (~0.63) and the 1000-problem
         eval (~0.61, sd ~0.015) have both been flat since ~1300 with no decline. With 5% of the budget left,
         stopping now or letting it finish make no difference; stop is slightly better (saves compute)."""),
    Case("stop-finished-last-eval-within-noise-mlflow-db", story(stop_finished_noise),
         W(w_mlflow_db)(exp_name="grpo-gsm8k", run_name="q3b-grpo-final",
                        params={"max_steps": 2000, "logging_steps": 10, "eval_steps": 200, "eval_problems": 500,
                                "num_generations": 8, "trl_version": "0.21.0"}, finished=True),
         1903, (2000, 2000), stop(1200), "trl mlflow mlflow_db grpo finished plateau eval_noise",
         """TRL GRPO logged to MLflow's SQL store, finished (2000 of 2000, run status FINISHED). Reward and the held-out
         eval plateaued at ~1200. The best eval is 0.624 at 1800 and the final one 0.612: a gap of 0.012 where two
         evals on 500 problems differ by up to sqrt(2) x 0.022 = 0.031 by chance, with the train reward flat through the
         end. The final weights are as good as any within the eval's noise: keep them (stop)."""),
    # --------------------------------------------------------------------------------------------- rollbacks
    Case("bad-dapo-token-mean-length-runaway-verl-tb", story(bad_dapo_runaway),
         W(w_verl_tb)("dapo", "q25-7b-dapo-nooverlong", 50, 50,
                      verl_cfg(actor_rollout_ref={"actor.loss_agg_mode": "token-mean", "actor.clip_ratio_low": 0.2,
                                                  "actor.clip_ratio_high": 0.28, "rollout.n": 16},
                               reward_model={"overlong_buffer.enable": False},
                               data={"max_response_length": 8192, "train_batch_size": 128})),
         919, (900, 1600), rollback(340, 640, 650),
         "verl tensorboard dapo token_loss length_explosion truncation eval_decline checkpoints",
         """verl TensorBoard, DAPO recipe (token-mean loss, clip-higher 0.28) with the overlong buffer switched off,
         step 900 of 1600. Up to ~570 a healthy run: score ~0.52, MATH-500 validation (every 50, 500 problems, sd
         ~0.022) ~0.47 from 350. Then responses run away (2900 -> ~7400 of 8192 tokens), truncation reaches ~45%,
         clip fraction and entropy shoot up, and score and validation fall (~0.33 / ~0.36). Validation is within one
         sd of its best from ~340 to ~640 (the clean curve); global_step_600 is on disk. Roll back."""),
    Case("bad-multitask-code-domain-collapses-verl-jsonl", story(bad_multitask),
         W(w_verl_jsonl)("mix_rl", "q7b-math-code-if", 100, 50,
                         verl_cfg(data={"train_files": ["math.parquet", "code.parquet", "ifeval.parquet"],
                                        "mix_weights": [0.6, 0.2, 0.2], "train_batch_size": 256,
                                        "max_response_length": 4096},
                                  actor_rollout_ref={"rollout.n": 8, "actor.use_kl_loss": True})),
         920, (700, 1200), rollback(250, 510, 520),
         "verl verl_jsonl file_logger grpo multi_task domain_collapse eval_decline checkpoints",
         """verl file logger, one GRPO run on a 60/20/20 mix of math, code and instruction following, step 700 of
         1200, validation per data source every 50 steps. The mixed train score moves little (a slight fall), which
         hides the story: livecodebench validation (300 problems, sd ~0.028) held ~0.38 from 350 to ~470 and then
         collapsed to ~0.19, while math gained only ~+0.03 and IFEval is flat. Losing half the code ability for a
         marginal math gain: restore the point before code fell (the clean code curve is within one sd of its best
         from ~230 to ~510, math within one sd of its step-450 level from ~250). global_step_400 and _500 are on disk. Roll back."""),
    Case("bad-rm-climbs-verifier-falls-trl-console", story(bad_rm_vs_verifier),
         W(w_trl_console)(head=("trl 0.22.2 | GRPOTrainer | reward_funcs=[Skywork/Skywork-Reward-V2-Llama-3.1-8B, "
                                "math_verify] reward_weights=[1.0, 0.0] | checkpoints -> s3://rl/rm-grpo every 200",)),
         921, (1300, 2500), rollback(460, 870, 880),
         "trl trl_console grpo reward_model verifier overoptimization reward_components eval_decline",
         """TRL GRPO console, step 1300 of 2500, trained on a learned RM score (weight 1.0) with a rule-based math
         verifier logged as a monitor (weight 0.0). The RM score climbs the whole way (-0.4 -> ~2.1) while responses
         lengthen (480 -> ~1150 tokens) and truncation rises to ~9%; the verifier peaked at ~0.58 over 600-720 and has
         fallen since to ~0.43, on train and on the 500-problem held-out eval (every 100; sd ~0.022). The RM is being
         exploited. The clean held-out curve is within one sd of its best from ~460 to ~870; checkpoints went to S3
         every 200 (step 600 or 800). Roll back."""),
    Case("bad-long-context-truncation-eats-accuracy-nemo-tb", story(bad_trunc_creep),
         W(w_nemo_tb)(save_period=50, val_period=25, cfg={
             "grpo": {"num_prompts_per_step": 64, "num_generations_per_prompt": 16},
             "policy": {"model_name": "Qwen/Qwen3-4B-Base", "max_total_sequence_length": 9216,
                        "generation": {"max_new_tokens": 8192, "temperature": 1.0}}}),
         2100, (700, 1000), rollback(250, 480, 490),
         "nemo_rl tensorboard grpo long_context truncation eval_decline checkpoints",
         """NeMo-RL GRPO, max_new_tokens 8192, step 700 of 1000. Generated length grows linearly 3100 -> ~6900
         tokens and the truncation rate creeps from 3% at 150 to ~38%: slowly enough that no single step looks
         broken. Truncated answers score 0, so past ~420 the reward falls (0.55 -> ~0.44) and validation accuracy
         (500 problems every 25, sd ~0.022) drops from ~0.58 (325-420) to ~0.48. The clean validation curve is within
         one sd of its best from ~250 to ~480; results/grpo/step_450 is on disk. Roll back (and raise the cap or
         penalise overlong answers)."""),
    Case("bad-ppo-critic-value-loss-explodes-openrlhf-tb", story(bad_critic_explodes),
         W(w_orl_tb)(name="q7b-ppo-rm", ckpt_every=100,
                     flags=["--pretrain meta-llama/Llama-3.1-8B-Instruct", "--reward_pretrain Skywork/Skywork-RM-8B",
                            "--critic_pretrain Skywork/Skywork-RM-8B", "--advantage_estimator gae",
                            "--init_kl_coef 0.01", "--actor_learning_rate 5e-7", "--critic_learning_rate 9e-6",
                            "--rollout_batch_size 512", "--max_samples 614400", "--num_episodes 1",
                            "--save_steps 100", "--use_tensorboard logs/tensorboard"],
                     comment="# 614400 prompts / 512 per rollout = 1200 global steps\n",
                     keys={**ORL, "vloss": "critic_loss", "values": "values", "critic_gn": "critic_grad_norm",
                           "return": "return", "critic_lr": "critic_lr"}),
         923, (760, 1200), rollback(400, 610, 620),
         "openrlhf tensorboard ppo critic value_loss_explosion reward_model checkpoints",
         """OpenRLHF PPO with a GAE critic on an RM reward, TensorBoard, step 760 of 1200. The RM reward rose to ~1.35
         by 450 and held to ~660. From ~620 the critic breaks first: critic_loss goes 0.08 -> ~45, predicted values
         run to ~40 and the critic grad norm explodes; about 40 steps later the actor follows (KL and clip fraction
         jump, responses shrink, reward falls to ~0.55). A restore must take the critic too, so the target ends
         before the critic broke: ~400 (the reward within one train-point sd of its best) to 610; global_step500 and
         global_step600 are on disk. Roll back."""),
    Case("bad-async-staleness-ratio-drift-openrlhf-console", story(bad_async_drift),
         W(w_orl_console)(flags=["--pretrain Qwen/Qwen2.5-7B-Instruct", "--advantage_estimator group_norm",
                                 "--async_train", "--remote_rm_url http://verifier:5000/get_reward",
                                 "--n_samples_per_prompt 8", "--rollout_batch_size 128", "--max_samples 192000",
                                 "--eval_dataset math500 --eval_steps 50", "--save_steps 100",
                                 "--logging_steps 1"],
                          ckpt_every=100, comment="# 192000 prompts / 128 per rollout = 1500 global steps\n",
                          keys={**ORL, "ppo_kl": "ppo_kl", "vllm_kl": "vllm_kl"}),
         924, (900, 1500), rollback(360, 610, 620),
         "openrlhf openrlhf_console grpo async off_policy staleness importance_ratio eval_decline checkpoints",
         """OpenRLHF GRPO with --async_train, step 900 of 1500. Up to ~500 a clean run (reward ~0.62, MATH-500 pass1
         ~0.55 from ~350). Then the rollouts fall further behind the learner: ppo_kl and vllm_kl grow ~20x, the clip
         fraction climbs 0.05 -> ~0.33, grad-norm spikes multiply, responses lengthen, and reward and pass1 fall
         (~0.40 / ~0.38 at 900). The clean pass1 curve (500 problems, sd ~0.022) is within one sd of its best from ~360
         to ~610; global_step500 and global_step600 are on disk. Roll back (and cap the staleness)."""),
    Case("bad-three-pct-nan-after-good-start-trl-console", story(bad_early_nan), w_early_nan, 925, (64, 2000),
         rollback(20, 40, 41), "trl trl_console trl_state grpo early nan grad_explosion checkpoints",
         """TRL GRPO, console and checkpoint-20/40/60, step 64 of 2000 (3%). The first 40 steps went well: reward
         0.21 -> ~0.33 (8 prompts x 8 completions per step, so +-0.1 per step). At step 40-41 grad norm spikes
         (11.6, 87.3), from 42 loss, grad norm and entropy are NaN, and from 43 every completion hits the 1024-token
         cap with reward 0: the weights are NaN. Keeping them is worthless and restarting from the base throws away
         a good start: restore checkpoint-40 (the reward's 10-step mean is at its best level from ~20 to 40) and
         lower the LR. Roll back."""),
    Case("bad-sparse-cadence-eval-peak-custom-jsonl", story(bad_sparse_cadence),
         W(w_table)(file="logs/metrics.jsonl", step_col="step", fmt="jsonl",
                    cols={"reward": "reward/mean", "reward~std": "reward/std", "len": "len/mean", "kl": "kl/ref",
                          "ent": "entropy"},
                    side={"config.json": json.dumps({"total_steps": 4000, "eval_every": 250, "eval_n": 1000,
                                                     "kl_every": 10, "save_every": 250, "group": 8, "prompts": 32},
                                                    indent=2) + "\n",
                          **{f"ckpt/step_{n:06d}": None for n in range(250, 2051, 250)}}),
         926, (2050, 4000), rollback(840, 1430, 1440),
         "custom_jsonl grpo partial_logs sparse_eval kl eval_decline checkpoints",
         """Custom GRPO loop JSONL with three cadences: reward and length every step, KL and entropy every 10 steps,
         eval accuracy on 1000 problems (sd ~0.016) every 250 on its own lines. Step 2050 of 4000. Eval reached ~0.53
         at 1000 and 1250, then fell at each eval to ~0.44 at 2000; the train reward bent down after ~1300 as KL
         accelerated (0.05 -> ~0.35) and entropy turned up. The clean eval curve is within one sd of its best from
         ~840 to ~1430; ckpt/step_001000 and step_001250 are on disk. Roll back."""),
    Case("bad-best-so-far-checkpoint-only-hf-tb", story(bad_best_only), w_best_only, 927, (1100, 2000),
         rollback(450, 790, 800), "trl tensorboard hf_tb trl_state grpo save_strategy_best entropy_collapse eval_decline",
         """TRL GRPO with save_strategy="best" and save_total_limit=1: the folder holds TensorBoard events for the
         whole run but a single checkpoint, the best-so-far by held-out accuracy, whose trainer_state stops there.
         Step 1100 of 2000. Held-out accuracy (500 problems every 100, sd ~0.022) peaked at ~0.56-0.57 over 550-650
         and fell to ~0.47 while entropy collapsed (0.30 -> ~0.06) and responses shrank; the train reward fell too.
         The clean eval is within one sd of its best from ~450 to ~790; the kept best checkpoint lies in that
         stretch. Roll back to it."""),
    Case("bad-lenient-verifier-boxed-spam-trl-state", story(bad_boxed_spam),
         W(w_trl_state)(100, args={"trl_version": "0.21.0", "reward_funcs": ["boxed_match", "strict_match",
                                                                             "num_boxed"],
                                   "reward_weights": [1.0, 0.0, 0.0], "eval_problems": 500}),
         928, (1200, 3000), rollback(420, 780, 790),
         "trl trl_state grpo reward_hacking verifier reward_components eval_decline checkpoints",
         """TRL GRPO, checkpoint-1200 of 3000. The trained reward is a lenient checker that passes a completion when
         any \\boxed{} matches; strict_match (one final answer) and num_boxed are logged with weight 0. From ~650 the
         policy learns to list several boxed answers: num_boxed 1.0 -> ~3.4, the lenient reward jumps 0.60 -> ~0.88,
         and strict accuracy falls on train and on the 500-problem eval (~0.555 at 600-650 -> ~0.41). The clean strict
         eval is within one sd of its best from ~420 to ~780; checkpoint-500 to -700 are on disk. Roll back."""),
    Case("bad-entropy-rises-fixed-temperature-wandb-history", story(bad_entropy_fixed_temp),
         W(w_wandb_history)(keys=TRLX, config={
             "trainer": "GRPOTrainer", "trl_version": "0.23.0", "max_steps": 1500, "logging_steps": 5,
             "eval_steps": 100, "num_generations": 16, "beta": 0.02, "temperature": 1.0,
             "temperature_schedule": None, "eval_temperature": 0.0, "eval_problems": 500}),
         929, (1000, 1500), rollback(400, 750, 780),
         "trl wandb_history_csv grpo entropy_blowup eval_decline",
         """W&B history export of TRL GRPO, step 1000 of 1500, the same logging as a temperature-schedule run but the
         sampling temperature is fixed at 1.0 (config and train/rollout_temperature). From ~750 entropy runs away
         (0.28 -> ~1.6), responses lengthen and truncate, grad-norm spikes multiply, and the train reward (0.585 ->
         ~0.32) and greedy held-out accuracy (500 problems, sd ~0.022: ~0.555 at 500-690 -> ~0.36) fall. Nothing
         planned explains it. The clean eval is within one sd of its best from ~400 to ~750. Roll back."""),
    Case("bad-finished-epoch-named-ckpts-custom-csv", story(bad_epoch_ckpts), with_epoch(W(w_table)(
        file="logs/train.csv", step_col="step",
        cols={"epoch": "epoch", "reward": "train_reward", "reward~std": "train_reward_std", "kl": "kl",
              "ent": "entropy", "len": "mean_len", "val_acc": "val_acc"},
        side={"config.json": json.dumps({"epochs": 3, "steps_per_epoch": 200, "total_steps": 600, "val_every": 50,
                                         "val_size": 400, "save": "end of each epoch"}, indent=2) + "\n",
              "logs/train.txt": "epoch 3/3 done: step 600/600, training finished\n",
              **{f"ckpts/epoch_{e}-step_{200 * e}": None for e in (1, 2, 3)}}), 200),
         930, (600, 600), rollback(270, 480, 490),
         "custom_csv grpo finished multi_epoch length_collapse eval_decline checkpoints",
         """Hand-written GRPO loop CSV, 3 epochs of 200 steps, finished (600 of 600); checkpoints only at epoch ends,
         named epoch_1-step_200, epoch_2-step_400, epoch_3-step_600. The train reward jumps at each epoch boundary
         and ends at ~0.82 as the model meets the same prompts again, and in epoch 3 responses shrink 480 -> ~250
         tokens: it recalls answers instead of reasoning. Validation (400 problems every 50, sd ~0.025) peaked at
         ~0.49 over 350-420 and fell to ~0.41 at 600. The final weights are not the best: the clean validation is within
         one sd of its best from ~270 to ~480, and epoch_2-step_400 is the checkpoint in it. Roll back."""),
]

HEADER = """# Holdout set 9: hand-built runs written by make_holdout9.py, independent of the assessor, its judges and the
# generators of holdouts 1-8. Labels: what a careful practitioner should do with each run under DESIGN.md's decision
# contract. rollback_window is inclusive: from the first step whose noise-free held-out score is within one sampling
# sd (sqrt(p(1-p)/N) on N problems) of the best, to the newest such step before the damage (one case ends it where
# the saved critic broke; train-only runs use the sd of a logged train point). onset_step: where the problem shows.
# Run `.venv/bin/python evals/holdout9/make_holdout9.py` once to write runs/ (gitignored); `--check` prints levels.
"""


# ------------------------------------------------------------------------------------------------------ check


def clean_window(run: Run, name: str, end: int) -> str:
    """The window the noise-free curve gives: within one sd of its best (best taken up to `end`)."""
    sig = run.sigs[name]
    t = np.arange(0, run.reached + 1)
    cl = path_at(sig.knots, t)
    best_i = int(np.argmax(cl[: end + 1]))
    sd = sd_of(sig, cl[best_i])
    good = cl >= cl[best_i] - sd
    lo = int(np.argmax(good))
    hi = best_i
    while hi + 1 <= end and good[hi + 1]:
        hi += 1
    return f"clean {name}: best {cl[best_i]:.3f} at {best_i}, sd {sd:.3f}, within 1 sd from {lo} to {hi}"


def check(case: Case, run: Run) -> None:
    lab = case.labels
    win, onset = lab.get("rollback_window"), lab.get("onset_step")
    print(f"\n== {case.name}: {lab['preferred']} window={win} onset={onset} reached={run.reached}/{run.planned}")
    tr, ev = run.probe
    if tr in run.tr:
        t, y = run.tr[tr]
        w = max(1, min(20, len(y) // 15))
        sm = np.convolve(np.nan_to_num(y), np.ones(w) / w, mode="valid")
        st = t[w - 1:]
        marks = sorted({int(i) for i in np.linspace(0, len(sm) - 1, 9)})
        print(f"  {tr} ({w}-pt mean):", " ".join(f"{int(st[i])}:{sm[i]:.3f}" for i in marks),
              f"| max {sm.max():.3f} at {int(st[int(np.argmax(sm))])}, last {sm[-1]:.3f}")
    if ev and ev in run.ev:
        es, vs = run.ev[ev]
        print(f"  {ev}:", " ".join(f"{int(s)}:{v:.3f}" for s, v in zip(es, vs, strict=True))[-520:],
              f"| max {vs.max():.3f} at {int(es[int(np.argmax(vs))])}, last {vs[-1]:.3f}")
    if win:
        name = ev if ev in run.sigs else tr
        print("  " + clean_window(run, name, (onset or run.reached) - 1))


def write_run(case: Case, folder: Path) -> None:
    run = case.scenario(np.random.default_rng(case.seed), case.reached, case.planned)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    if "--check" in sys.argv:
        check(case, run)


def main() -> None:
    build(HERE, "make_holdout9.py", "holdout9.yaml", "h9-", "holdout9", HEADER, CASES, write_run)


if __name__ == "__main__":
    main()
