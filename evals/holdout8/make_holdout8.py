"""Holdout set 8: 30 hand-labelled runs, written independently of the assessor and its judges.

Run:  .venv/bin/python evals/holdout8/make_holdout8.py [--check]      (numpy, pyyaml, tensorboard, mlflow)
It rewrites evals/holdout8/runs/ (gitignored) and evals/holdout8/holdout8.yaml. `--check` also prints, for every
case, the levels its label rests on (smoothed train reward and the held-out series at the window, the best point
and the end), so each label can be checked against the noisy curves actually written.

How the set is built. A run is a few "stories" of curves: a base level plus shape terms (a smooth rise `up`, a
saturating rise `sat`, a straight `lin`e, a sudden `jump`, a decaying `pulse`, an `expl`osion), with noise that is
either binomial (a batch of n pass/fail rollouts, so it shrinks near 0 and 1), gaussian with a slow wander, or
relative. A row of CASES names the curves that make its run what it is; a family (grpo, ppo, dpo) fills in the
other signals with plain healthy defaults. Writers put the curves on disk the way one framework writes them
(key spellings, prefixes, eval rows, checkpoint folders, configs with the planned length).

Shapes chosen to be absent from holdouts 1-7: an OpenRLHF PPO whose actor is frozen while the critic warms up, a
difficulty-adaptive sampler that pins the train pass rate, a 9k-step NeMo-RL run creeping at a tiny real pace, a
custom loop resumed with its step counter reset, a multi-seed W&B panel export, a DPO whose chosen reward falls
mildly (OpenRLHF) vs. a DPO whose chosen log-prob collapses (TRL), proxy/gold gap widening while gold still rises
vs. gold peaking, a context-length stage switch, grad norm tripling with length, a staircase second rise, an
off-policy run with steady clipping, a KL spike that recovers vs. a KL-only explosion late, reward at the ceiling
from step 0, every completion truncated, a learning rate misconfigured to nothing, PPO at its KL equilibrium,
a length-bonus hack, a curriculum switch that hurts held-out, GRPO memorising its prompts in epoch 2, a 22k-step
collapse with a partial recovery, language mixing, too high a learning rate once warm-up ends, repetition under
a learned reward model, and code RL special-casing its visible tests.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from holdout_kit import (  # noqa: E402  (labels, YAML and TensorBoard helpers only; no assessor code)
    HEALTHY,
    Case,
    Skip,
    build,
    dump_json,
    rollback,
    stop,
    tb_file,
    trainer_state,
)

T0 = 1_760_000_000.0  # wall clock of step 0 (fixed, so every file except MLflow's ids is reproducible)

# ------------------------------------------------------------------------------------------------ curve vocabulary


def _smooth(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3 - 2 * x)


def up(t0, t1, dv):
    """A smooth S-shaped change of dv between t0 and t1 (negative dv: a smooth fall)."""
    return lambda t: dv * _smooth((t - t0) / max(t1 - t0, 1e-9))


def sat(t0, tau, dv):
    """A saturating rise from t0: dv * (1 - exp(-(t - t0) / tau))."""
    return lambda t: np.where(t > t0, dv * (1 - np.exp(-(t - t0) / tau)), 0.0)


def lin(t0, t1, dv):
    """A straight change of dv between t0 and t1."""
    return lambda t: dv * np.clip((t - t0) / max(t1 - t0, 1e-9), 0.0, 1.0)


def jump(t0, dv):
    """A step change at t0."""
    return lambda t: np.where(t >= t0, dv, 0.0)


def pulse(t0, dv, decay):
    """A sudden excursion at t0 that decays back with time constant `decay`."""
    return lambda t: np.where(t >= t0, dv * np.exp(-(t - t0) / decay), 0.0)


def expl(t0, scale, tau):
    """An exponential blow-up from t0: scale * (exp((t - t0) / tau) - 1)."""
    return lambda t: np.where(t >= t0, scale * (np.exp(np.minimum((t - t0) / tau, 30)) - 1), 0.0)


@dataclass
class C:
    """A curve: base + shape terms, then noise (binomial over n rollouts, gaussian + slow wander, or relative)."""

    base: float
    terms: tuple = ()
    sd: float = 0.0
    n: int = 0  # binomial batch: sd = sqrt(p (1 - p) / n) around the clean value p
    wander: float = 0.0  # slow drift amplitude (gaussian noise smoothed over ~40 points)
    rel: bool = False
    lo: float | None = None
    hi: float | None = None

    def clean(self, t):
        t = np.asarray(t, dtype=float)
        v = np.full(len(t), float(self.base))
        for term in self.terms:
            v = v + term(t)
        return v

    def draw(self, rng, t):
        v = self.clean(t)
        k = len(v)
        e = rng.normal(0, 1, k)
        if self.n:
            p = np.clip(v, 0.0, 1.0)
            v = v + e * np.sqrt(p * (1 - p) / self.n)
        elif self.rel:
            v = v * (1 + self.sd * e)
        else:
            v = v + self.sd * e
        if self.wander:
            w = np.convolve(rng.normal(0, 1, k + 80), np.ones(40) / np.sqrt(40), mode="same")[40:40 + k]
            v = v + self.wander * w
        return np.clip(v, -np.inf if self.lo is None else self.lo, np.inf if self.hi is None else self.hi)


def c(base, *terms, **kw):
    return C(base, terms, **kw)


# ------------------------------------------------------------------------------------------------------- runs


@dataclass
class Run:
    steps: np.ndarray
    m: dict  # train series: name -> values at `steps`
    ev: dict  # eval series: name -> (steps, values)
    reached: int
    planned: int
    facts: dict = field(default_factory=dict)
    probe: tuple = ("reward", None)  # (train series, eval series) the label rests on
    clean: dict = field(default_factory=dict)  # name -> (steps, noise-free values, noise sd): for --check only


@dataclass
class Spec:
    """What a case states about its run; `family` fills in the rest."""

    family: str
    every: int
    curves: dict
    evals: dict = field(default_factory=dict)  # name -> (every, first, curve)
    facts: dict = field(default_factory=dict)
    first: int | None = None
    probe: tuple = ("reward", None)
    derive: object = None  # (run, rng) -> None, for coupled keys


def defaults(family: str, P: int) -> dict:
    """Healthy background signals of a family, over the planned length P."""
    if family == "grpo":
        return {"ent": c(0.52, lin(0, P, -0.09), sd=0.012, lo=0.01), "len": c(420, lin(0, P, 60), sd=14, lo=8),
                "trunc": c(0.015, sd=0.006, lo=0, hi=1), "gn": c(0.21, lin(0, P, -0.03), sd=0.28, rel=True, lo=0.01),
                "loss": c(0.0, sd=0.01), "lr": c(1e-6), "kl": c(0.0, sat(0, P / 3, 0.03), sd=0.002, lo=0)}
    if family == "ppo":
        return {"ent": c(2.1, lin(0, P, -0.3), sd=0.05, lo=0.05), "len": c(210, lin(0, P, 15), sd=6, lo=8),
                "gn": c(0.9, sd=0.25, rel=True, lo=0.01), "lr": c(5e-7), "kl": c(0.0, sat(0, P / 3, 2.0), sd=0.1, lo=0),
                "vloss": c(0.35, sat(0, 60, -0.2), sd=0.15, rel=True, lo=0.001), "clip": c(0.04, sd=0.01, lo=0),
                "loss": c(-0.01, sd=0.03)}
    if family == "dpo":
        return {"gn": c(16.0, lin(0, P, -6), sd=0.3, rel=True, lo=0.5), "lr": c(5e-7)}
    raise ValueError(family)


def draw(spec: Spec, rng, reached: int, planned: int) -> Run:
    steps = np.arange(spec.first if spec.first is not None else spec.every, reached + 1, spec.every)
    curves = {**defaults(spec.family, planned), **spec.curves}
    m = {k: cv.draw(rng, steps) for k, cv in curves.items() if cv is not None}
    ev = {}
    for k, (every, first, cv) in spec.evals.items():
        es = np.arange(first, reached + 1, every)
        ev[k] = (es, cv.draw(rng, es))
    run = Run(steps, m, ev, reached, planned, dict(spec.facts), spec.probe)
    for k, cv in curves.items():
        if cv is not None:
            run.clean[k] = (steps, cv.clean(steps), cv.sd or (0.5 / np.sqrt(cv.n) if cv.n else 0.0))
    for k, (_every, _first, cv) in spec.evals.items():
        run.clean[k] = (ev[k][0], cv.clean(ev[k][0]), cv.sd)
    if spec.family == "grpo" and "reward" in m and "rstd" not in m:
        p = np.clip(m["reward"], 0.005, 0.995)  # binary pass/fail: spread and flat groups follow the pass rate
        g = run.facts.get("group", 8)
        m["rstd"] = np.sqrt(p * (1 - p)) * (0.97 + 0.03 * rng.normal(size=len(p)))
        flat = p ** g + (1 - p) ** g
        m.setdefault("zstd", np.clip(flat + 0.18 * np.abs(p - 0.5) + 0.03 * rng.normal(size=len(p)), 0, 1))
    if "len" in m and "lenmax" not in m:
        cap = run.facts.get("max_len", 2048)
        m["lenmax"] = np.minimum(cap, np.round(m["len"] * (2.2 + 0.15 * rng.normal(size=len(steps)))))
    if spec.derive:
        spec.derive(run, rng)
    return run


def scenario(fn):
    """A case's scenario: fn(reached, planned) -> Spec, drawn with the case's seed."""
    return lambda rng, reached, planned: draw(fn(reached, planned), rng, reached, planned)


# ------------------------------------------------------------------------------------------------------- key maps

TRL = {"reward": "reward", "rstd": "reward_std", "zstd": "frac_reward_zero_std", "kl": "kl", "ent": "entropy",
       "len": "completions/mean_length", "lenmax": "completions/max_length", "trunc": "completions/clipped_ratio",
       "clip": "clip_ratio/region_mean", "gn": "grad_norm", "lr": "learning_rate", "loss": "loss"}
TRL015 = {**TRL, "len": "completion_length", "ent": None, "zstd": None, "trunc": None, "lenmax": None, "clip": None}
VERL = {"reward": "critic/score/mean", "rstd": None, "zstd": None, "kl": "actor/kl_loss", "ent": "actor/entropy",
        "len": "response_length/mean", "lenmax": "response_length/max", "trunc": "response_length/clip_ratio",
        "clip": "actor/pg_clipfrac", "gn": "actor/grad_norm", "lr": "actor/lr", "loss": "actor/pg_loss"}
ORLHF = {"reward": "reward", "rstd": "group_reward_std", "zstd": None, "kl": "kl", "ent": None,
         "len": "response_length", "lenmax": None, "trunc": "truncated", "clip": "ppo_clip_ratio",
         "gn": "actor_grad_norm", "lr": "actor_lr", "loss": "policy_loss", "vloss": "critic_loss"}
NEMO = {"reward": "train/reward", "rstd": None, "zstd": None, "kl": "train/kl_penalty",
        "ent": "train/approx_entropy", "len": "train/mean_gen_tokens_per_sample",
        "lenmax": "train/max_gen_tokens_per_sample", "trunc": "train/truncation_rate", "clip": None,
        "gn": "train/grad_norm", "lr": "train/lr", "loss": "train/loss"}
PPO = {"reward": "objective/scores", "kl": "objective/kl", "ent": "objective/entropy", "gn": None, "lr": "lr",
       "len": None, "lenmax": None, "vloss": "loss/value_avg", "clip": "policy/clipfrac_avg",
       "loss": None}


def keyed(run: Run, keymap: dict) -> list[tuple[int, dict]]:
    """[(step, {framework key: value})]; names the map does not know pass through, None drops them."""
    out = []
    for i, s in enumerate(run.steps):
        d = {}
        for k, v in run.m.items():
            key = keymap.get(k, k)
            if key is not None:
                d[key] = float(v[i])
        out.append((int(s), d))
    return out


def eval_at(run: Run) -> dict[int, dict]:
    out: dict[int, dict] = {}
    for k, (es, vs) in run.ev.items():
        for s, v in zip(es, vs, strict=True):
            out.setdefault(int(s), {})[k] = float(v)
    return dict(sorted(out.items()))


def g6(x):
    """Round a float the way loggers print it (six significant digits), keeping NaN / inf as they are."""
    return x if not np.isfinite(x) else float(f"{x:.6g}")


def pyd(d: dict) -> str:
    return "{" + ", ".join(f"'{k}': {v!r}" for k, v in d.items()) + "}"


# ---------------------------------------------------------------------------------------------------------- writers


def w_trl_state(run: Run, folder: Path, *, save: int, keep: int | None = None, keymap=TRL, per_epoch: int = 1000,
                finished: bool = False, version: str = "0.21.0", args: dict | None = None):
    """HF Trainer output dir: checkpoint-N/trainer_state.json (history up to N), save_total_limit honoured."""
    hist, evs = [], eval_at(run)
    for s, d in keyed(run, keymap):
        row = {k: g6(v) for k, v in d.items()}
        if "loss" in row:
            row["loss"] = round(row["loss"], 4)
        row.update(step=s, epoch=round(s / per_epoch, 4))
        hist.append(row)
        if s in evs:
            er = {k: g6(v) for k, v in evs[s].items()}
            er.update(step=s, epoch=round(s / per_epoch, 4), eval_runtime=143.2, eval_samples_per_second=3.49,
                      eval_steps_per_second=0.22)
            hist.append(er)
    log_every = int(run.steps[1] - run.steps[0])
    eval_steps = int(min(np.diff(es)[0] for es, _ in run.ev.values())) if run.ev else None

    def state(n: int) -> dict:
        h = [r for r in hist if r["step"] <= n]
        final = finished and n == run.reached
        if final:
            h.append({"epoch": round(n / per_epoch, 4), "step": n, "total_flos": 0.0, "train_loss": 0.0214,
                      "train_runtime": 88311.7, "train_samples_per_second": 0.72, "train_steps_per_second": 0.011})
        return trainer_state(h, n, run.planned, log_every, save, eval_steps, round(n / per_epoch, 4),
                             max(1, int(np.ceil(run.planned / per_epoch))), training_stop=final)

    saves = list(range(save, run.reached + 1, save))
    if finished and run.reached not in saves:
        saves.append(run.reached)
    for n in (saves[-keep:] if keep else saves):
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", state(n))
        (ck / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 16, "lora_alpha": 32}))
    if finished:
        dump_json(folder / "trainer_state.json", state(run.reached))
    cfg = {"trl_version": version, "max_steps": run.planned, "logging_steps": log_every, "save_steps": save,
           "save_total_limit": keep, "eval_steps": eval_steps, **(args or {})}
    (folder / "training_args.json").write_text(json.dumps(cfg, indent=2) + "\n")


def w_trl_console(run: Run, folder: Path, *, keymap=TRL, per_epoch: int = 1000, header: tuple = (),
                  sec_per_step: float = 52.0):
    """What transformers.Trainer prints: a dict literal per log/eval call between tqdm bars and warnings."""
    lines = [*header, "***** Running training *****", "  Num examples = 7,473", "  Num Epochs = 1",
             f"  Total optimization steps = {run.planned:,}"]
    evs = eval_at(run)
    for s, d in keyed(run, keymap):
        d = {k: g6(v) for k, v in d.items()}
        if "loss" in d:
            d["loss"] = round(d["loss"], 4)
        d["epoch"] = round(s / per_epoch, 2)
        pct = int(100 * s / run.planned)
        el, rem = int(s * sec_per_step), int((run.planned - s) * sec_per_step)
        lines.append(f"{pct:3d}%|{'#' * (pct // 10):<10}| {s}/{run.planned} [{el // 3600}:{el // 60 % 60:02d}:"
                     f"{el % 60:02d}<{rem // 3600}:{rem // 60 % 60:02d}:{rem % 60:02d}, {sec_per_step:.2f}s/it]")
        lines.append(pyd(d))
        if s in evs:
            e = {k: g6(v) for k, v in evs[s].items()}
            e.update(eval_runtime=212.4, eval_samples_per_second=2.35, eval_steps_per_second=0.147,
                     epoch=round(s / per_epoch, 2))
            lines.append(pyd(e))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.log").write_text("\n".join(lines) + "\n")


def w_hf_tb(run: Run, folder: Path, *, save: int, keep: int | None, keymap=TRL, per_epoch: int = 1000,
            args: dict | None = None):
    """HF TensorBoardCallback (rewrite_logs: train/<key>, eval/<key>) plus the checkpoint folders kept on disk."""
    evs = eval_at(run)
    events = []
    for s, d in keyed(run, keymap):
        d = {"train/" + k: v for k, v in d.items()}
        d["train/epoch"] = s / per_epoch
        events.append((T0 + 44.0 * s, s, d))
        if s in evs:
            events.append((T0 + 44.0 * s + 90, s, {"eval/" + k.removeprefix("eval_"): v for k, v in evs[s].items()}))
    tb_file(folder / "runs" / "Oct09_07-13-20_a100-node3" / f"events.out.tfevents.{int(T0)}.a100-node3.40211.0",
            events)
    saves = list(range(save, run.reached + 1, save))
    for n in (saves[-keep:] if keep else saves):
        (folder / f"checkpoint-{n}").mkdir(parents=True, exist_ok=True)
        (folder / f"checkpoint-{n}" / "adapter_model.safetensors").write_bytes(b"")
    cfg = {"max_steps": run.planned, "save_steps": save, "save_total_limit": keep, **(args or {})}
    (folder / "training_args.json").write_text(json.dumps(cfg, indent=2) + "\n")


def verl_rows(run: Run, val_first: bool = True) -> list[tuple[int, dict]]:
    """verl: one row per step; validation keys join the row of their step, step 0 is validation only."""
    evs = eval_at(run)
    first = int(run.steps[0]) if len(run.steps) else 0
    out = [(s, d) for s, d in evs.items() if s < first] if val_first else []
    for s, d in keyed(run, VERL):
        if "critic/score/mean" in d:
            d["critic/rewards/mean"] = d["critic/score/mean"]
            d["critic/advantages/mean"] = 0.0
        d["training/global_step"] = s
        d.update(evs.get(s, {}))
        out.append((s, d))
    return out


def verl_ckpts(folder: Path, project: str, exp: str, steps):
    base = folder / "checkpoints" / project / exp
    for n in steps:
        (base / f"global_step_{n}" / "actor" / "huggingface").mkdir(parents=True, exist_ok=True)
    if steps:
        (base / "latest_checkpointed_iteration.txt").write_text(str(steps[-1]))


def verl_config(folder: Path, project: str, exp: str, total: int, save_freq: int, test_freq: int, extra: str = ""):
    (folder / "config.yaml").write_text(
        f"# hydra config dumped by verl.trainer.main_ppo\ntrainer:\n  project_name: {project}\n"
        f"  experiment_name: {exp}\n  total_training_steps: {total}\n  save_freq: {save_freq}\n"
        f"  test_freq: {test_freq}\n  logger: [console, file]\n{extra}")


def w_verl_jsonl(run: Run, folder: Path, *, project: str, exp: str, save_freq: int, test_freq: int, extra=""):
    """verl FileLogger (v0.6+): {"step": N, "data": {...}} per line; orjson writes NaN as null."""
    path = folder / project / f"{exp}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"step": s, "data": {k: (g6(v) if np.isfinite(v) else None)
                                                           for k, v in d.items()}}, separators=(",", ":")) + "\n"
                            for s, d in verl_rows(run)))
    verl_ckpts(folder, project, exp, list(range(save_freq, run.reached + 1, save_freq)))
    verl_config(folder, project, exp, run.planned, save_freq, test_freq, extra)


def w_verl_console(run: Run, folder: Path, *, project: str, exp: str, save_freq: int, test_freq: int):
    """verl LocalLogger with NumPy 2: 'step:N - key:np.float64(v) - ...', under Ray's TaskRunner prefix."""
    pre = "(TaskRunner pid=48213) "
    out = [f"{pre}Size of train dataloader: 469, Size of val dataloader: 1",
           f"{pre}Total training steps: {run.planned}"]
    for i, (s, d) in enumerate(verl_rows(run)):
        body = " - ".join(f"{k}:np.int64({int(v)})" if k == "training/global_step" else f"{k}:np.float64({g6(v)!r})"
                          for k, v in d.items())
        out.append(f"{pre}step:{s} - {body}")
        if i % 23 == 7:
            out.append(f"{pre}INFO 10-09 0{i % 10}:14:52 [block_pool.py:321] Successfully reset prefix cache")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "main_ppo.log").write_text("\n".join(out) + "\n")
    verl_ckpts(folder, project, exp, list(range(save_freq, run.reached + 1, save_freq)))
    verl_config(folder, project, exp, run.planned, save_freq, test_freq)


def w_verl_tb(run: Run, folder: Path, *, project: str, exp: str, save_freq: int, test_freq: int,
              sec_per_step: float = 61.0):
    events = [(T0 + sec_per_step * s, s, d) for s, d in verl_rows(run)]
    tb_file(folder / "tensorboard_log" / project / exp / f"events.out.tfevents.{int(T0)}.verl-worker-0.7731.0",
            events)
    verl_ckpts(folder, project, exp, list(range(save_freq, run.reached + 1, save_freq)))
    verl_config(folder, project, exp, run.planned, save_freq, test_freq)


def openrlhf_script(folder: Path, flags: str):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train_ray.sh").write_text(
        "#!/bin/bash\nset -x\nray job submit --address=\"http://127.0.0.1:8265\" \\\n"
        "  --runtime-env-json='{\"working_dir\": \"/openrlhf\"}' \\\n  -- python3 -m openrlhf.cli.train_ppo_ray \\\n"
        + " \\\n".join("  " + f for f in flags.split("|")) + "\n")


def w_openrlhf_console(run: Run, folder: Path, *, flags: str, ckpt_every: int):
    """OpenRLHF's logger: '✨ Global step N: {dict}' (status keys present only for the models that trained)."""
    out = ["[2025-10-09 07:20:11,402] [INFO] [real_accelerator.py:254:get_accelerator] Setting ds_accelerator to cuda"]
    for s, d in keyed(run, ORLHF):
        d = {k: g6(v) for k, v in d.items() if np.isfinite(v)}
        out.append(f"✨ Global step {s}: {pyd(d)}")
    openrlhf_script(folder, flags)
    (folder / "train.log").write_text("\n".join(out) + "\n")
    for n in range(ckpt_every, run.reached + 1, ckpt_every):
        (folder / "ckpt" / "checkpoints_ppo" / f"global_step{n}").mkdir(parents=True, exist_ok=True)


def w_openrlhf_tb(run: Run, folder: Path, *, name: str, flags: str, ckpt_every: int, keymap=ORLHF, cli="ppo"):
    evs = eval_at(run)
    events = []
    for s, d in keyed(run, keymap):
        events.append((T0 + 47.0 * s, s, {"train/" + k: v for k, v in d.items() if np.isfinite(v)}))
        if s in evs:
            events.append((T0 + 47.0 * s + 20, s, {"eval/" + k: v for k, v in evs[s].items()}))
    tb_file(folder / "logs" / "tensorboard" / name / f"events.out.tfevents.{int(T0)}.ray-head.1207.0", events)
    openrlhf_script(folder, flags.replace("train_ppo_ray", f"train_{cli}"))
    for n in range(ckpt_every, run.reached + 1, ckpt_every):
        (folder / "ckpt" / f"checkpoints_{cli}" / f"global_step{n}").mkdir(parents=True, exist_ok=True)


def w_nemo_tb(run: Run, folder: Path, *, exp: str, save_period: int, val_period: int, extra: dict | None = None):
    """NeMo-RL GRPO: <log_dir>/exp_NNN/tensorboard, train/* and validation/* tags; checkpoints as results/step_N."""
    evs = eval_at(run)
    events = [(T0 - 30, 0, evs[0])] if 0 in evs else []
    for s, d in keyed(run, NEMO):
        events.append((T0 + 39.0 * s, s, d))
        if s in evs:
            events.append((T0 + 39.0 * s + 12, s, evs[s]))
    tb_file(folder / "logs" / exp / "tensorboard" / f"events.out.tfevents.{int(T0)}.nemo-rl-0.3301.0", events)
    for n in range(save_period, run.reached + 1, save_period):
        (folder / "results" / "grpo" / f"step_{n}" / "policy").mkdir(parents=True, exist_ok=True)
    cfg = {"grpo": {"max_num_steps": run.planned, "val_period": val_period, "num_generations_per_prompt": 16,
                    "num_prompts_per_step": 32},
           "checkpointing": {"checkpoint_dir": "results/grpo", "save_period": save_period},
           "logger": {"log_dir": "logs", "tensorboard_enabled": True, "wandb_enabled": False}, **(extra or {})}
    import yaml

    (folder / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))


def d_nemo_buckets(run: Run, rng):
    """NeMo-RL's baseline_reward/pct_{0,1,mixed}: percent of prompts whose group of 16 is all-0, all-1 or mixed."""
    p = np.clip(run.m["reward"], 0.001, 0.999)
    spread = run.facts.get("spread", 0.35) + 0.05 * rng.normal(size=len(p))  # prompts differ in difficulty: per-prompt pass rates spread out
    lo, hi = np.clip(p - spread, 0.001, 0.999), np.clip(p + spread, 0.001, 0.999)
    pct0 = 50 * ((1 - lo) ** 16 + (1 - hi) ** 16)
    pct1 = 50 * (lo ** 16 + hi ** 16)
    run.m["train/baseline_reward/pct_0"] = np.clip(pct0 + rng.normal(0, 2, len(p)), 0, 100)
    run.m["train/baseline_reward/pct_1"] = np.clip(pct1 + rng.normal(0, 2, len(p)), 0, 100)
    run.m["train/baseline_reward/pct_mixed"] = 100 - run.m["train/baseline_reward/pct_0"] - run.m[
        "train/baseline_reward/pct_1"]
    run.m["timing/train/total_step_time"] = 41 + 0.05 * run.m["len"] + rng.normal(0, 2, len(p))
    run.m["timing/train/generation"] = 0.66 * run.m["timing/train/total_step_time"]


def w_wandb_panels(run: Run, folder: Path, *, panels: dict, runs_of: dict, config: str):
    """W&B panel 'Export CSV' files: `train/global_step`, then '<run> - <metric>' with __MIN / __MAX per run."""
    folder.mkdir(parents=True, exist_ok=True)
    for fname, metric in panels.items():
        cols = ["train/global_step"]
        series = []
        for run_name, key in runs_of[metric].items():
            cols += [f"{run_name} - {metric}", f"{run_name} - {metric}__MIN", f"{run_name} - {metric}__MAX"]
            if key in run.m:
                series.append((run.steps, run.m[key]))
            else:
                series.append(run.ev[key])
        steps = sorted(set().union(*[{int(x) for x in s} for s, _ in series]))
        buf = io.StringIO()
        wr = csv.writer(buf, lineterminator="\n")
        wr.writerow(cols)
        lookup = [dict(zip((int(x) for x in s), v, strict=True)) for s, v in series]
        for st in steps:
            row = [st]
            for lk in lookup:
                v = lk.get(st)
                row += ["", "", ""] if v is None else [f"{v:.6g}"] * 3
            wr.writerow(row)
        (folder / fname).write_text(buf.getvalue())
    (folder / "config.yaml").write_text(config)


def w_mlflow_files(run: Run, folder: Path, *, exp_name: str, run_name: str, params: dict, run_id: str):
    """MLflow file store written as mlflow does: mlruns/<exp>/<run>/metrics/<key as dirs>, '<ms> <value> <step>'."""
    exp_dir = folder / "mlruns" / "417093552081227710"
    rdir = exp_dir / run_id
    (rdir / "artifacts").mkdir(parents=True, exist_ok=True)
    ms = int(T0 * 1000)
    (exp_dir / "meta.yaml").write_text(
        f"artifact_location: file:///home/rl/mlruns/417093552081227710\ncreation_time: {ms}\n"
        f"experiment_id: '417093552081227710'\nlast_update_time: {ms}\nlifecycle_stage: active\nname: {exp_name}\n")
    (rdir / "meta.yaml").write_text(
        f"artifact_uri: file:///home/rl/mlruns/417093552081227710/{run_id}/artifacts\nend_time: null\n"
        f"entry_point_name: ''\nexperiment_id: '417093552081227710'\nlifecycle_stage: active\nrun_id: {run_id}\n"
        f"run_name: {run_name}\nrun_uuid: {run_id}\nsource_name: ''\nsource_type: 4\nsource_version: ''\n"
        f"start_time: {ms}\nstatus: 1\ntags: []\nuser_id: rl\n")
    for k, v in params.items():
        (rdir / "params").mkdir(exist_ok=True)
        (rdir / "params" / k).write_text(str(v))
    (rdir / "tags").mkdir(exist_ok=True)
    (rdir / "tags" / "mlflow.runName").write_text(run_name)
    lines: dict[str, list[str]] = {}
    for i, s in enumerate(run.steps):
        for k, v in run.m.items():
            lines.setdefault(k, []).append(f"{ms + int(s) * 23_000} {float(v[i])!r} {int(s)}")
    for k, (es, vs) in run.ev.items():
        for s, v in zip(es, vs, strict=True):
            lines.setdefault(k, []).append(f"{ms + int(s) * 23_000 + 4000} {float(v)!r} {int(s)}")
    for k, ls in lines.items():
        p = rdir / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


def w_mlflow_db(run: Run, folder: Path, *, exp_name: str, run_name: str, params: dict):
    """MLflow SQL store (default since 3.7) as transformers' MLflowCallback fills it: raw Trainer keys."""
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
    for s, d in keyed(run, TRL):
        batch += [Metric(k, float(v), int((T0 + 31.0 * s) * 1000), s) for k, v in d.items()]
        batch.append(Metric("epoch", s / 2500, int((T0 + 31.0 * s) * 1000), s))
        if len(batch) > 900:
            client.log_batch(rid, metrics=batch)
            batch = []
    if batch:
        client.log_batch(rid, metrics=batch)


def w_table(run: Run, folder: Path, *, file: str, cols: dict, step_col: str, config: dict, config_file: str,
            ckpts: tuple = ()):
    """A hand-written loop's CSV: one row per logged step, eval columns empty except on eval steps."""
    evs = eval_at(run)
    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\n")
    wr.writerow([step_col, *cols.keys()])
    for i, s in enumerate(run.steps):
        row = [int(s)]
        for src in cols.values():
            if src in run.m:
                row.append(f"{run.m[src][i]:.6g}")
            else:
                v = evs.get(int(s), {}).get(src)
                row.append("" if v is None else f"{v:.6f}")
        wr.writerow(row)
    (folder / file).parent.mkdir(parents=True, exist_ok=True)
    (folder / file).write_text(buf.getvalue())
    (folder / config_file).write_text(json.dumps(config, indent=2) + "\n")
    for name in ckpts:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"")


def w_rasbt75(run: Run, folder: Path):
    """reasoning-from-scratch 7_5_plus_kl.py: logs/<script>_metrics.csv, eval_acc only on checkpoint steps."""
    cols = ["step", "total_steps", "loss", "kl_loss", "policy_ratio", "reward_avg", "tokens_per_sec",
            "avg_response_len", "adv_avg", "adv_std", "entropy_avg", "eval_acc"]
    evs = eval_at(run)
    out = [",".join(cols)]
    for i, s in enumerate(run.steps):
        v = {k: run.m[k][i] for k in run.m}
        skip = v["adv_std"] == 0.0
        e = evs.get(int(s), {}).get("eval_acc")
        out.append(",".join([str(int(s)), str(run.planned), f"{0.0 if skip else v['loss']:.6f}",
                             f"{v['kl_loss']:.6f}", "" if skip else f"{v['policy_ratio']:.6f}",
                             f"{v['reward'] + 0.0:.6f}", f"{v['tps']:.2f}", f"{v['len']:.2f}", "0.000000",
                             f"{v['adv_std']:.6f}", f"{v['ent']:.6f}", "" if e is None else f"{e:.6f}"]))
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    (folder / "logs" / "7_5_plus_kl_metrics.csv").write_text("\n".join(out) + "\n")


# ----------------------------------------------------------------------------------- case-specific writers/derivers


def w_resumed_jsonl(run: Run, folder: Path, *, crash_at: int, resumed_from: int, every: int, save: int):
    """A hand-written loop that logs its local iteration `it`: after a crash it resumed from a checkpoint and the
    counter started again at 0 (the checkpoints keep the true step in their names)."""
    names = {"reward": "ret_mean", "rstd": "ret_std", "len": "tok_len", "ent": "ent", "kl": "kl_ref", "gn": "gnorm",
             "lr": "lr", "loss": "pg_loss"}
    t = run.steps
    lines = [json.dumps({"event": "start", "it": 0, "model": "Qwen2.5-1.5B-Instruct", "total_steps": run.planned})]
    for i, s in enumerate(t):
        if s > crash_at:
            break
        lines.append(json.dumps({"it": int(s), **{names[k]: g6(run.m[k][i]) for k in names if k in run.m}}))
    lines.append(json.dumps({"event": "resume", "it": 0, "checkpoint": f"ckpt/step_{resumed_from:06d}",
                             "restored_step": resumed_from}))
    for i, s in enumerate(t):
        if s <= resumed_from:
            continue
        lines.append(json.dumps({"it": int(s - resumed_from), **{names[k]: g6(run.m2[k][i])
                                                                 for k in names if k in run.m2}}))
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    (folder / "logs" / "train_metrics.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "config.json").write_text(json.dumps({"total_steps": run.planned, "log_every": every,
                                                    "save_every": save, "group_size": 8, "lr": 1e-6}, indent=2))
    for n in range(save, run.reached + 1, save):
        (folder / "ckpt" / f"step_{n:06d}").mkdir(parents=True, exist_ok=True)


def d_resume_redraw(run: Run, rng):
    """The resumed segment re-runs steps after the restored checkpoint: same clean curves, fresh noise."""
    run.m2 = {k: v + rng.normal(0, 1, len(v)) * (np.std(np.diff(v)) / np.sqrt(2)) for k, v in run.m.items()}


def w_lang_jsonl(run: Run, folder: Path, *, save: int):
    lines = []
    evs = eval_at(run)
    for s, d in keyed(run, {"reward": "rew/correct", "ent": "stats/entropy", "len": "stats/resp_tokens",
                            "kl": "stats/kl", "gn": "opt/grad_norm", "lr": "opt/lr", "loss": None, "trunc": None,
                            "rstd": None, "zstd": None, "lenmax": None}):
        d["rew/total"] = d["rew/correct"]
        lines.append(json.dumps({"gstep": s, **{k: g6(v) for k, v in d.items()}}))
        if s in evs:
            lines.append(json.dumps({"gstep": s, **{k: g6(v) for k, v in evs[s].items()}}))
    (folder / "out").mkdir(parents=True, exist_ok=True)
    (folder / "out" / "log.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "run_config.json").write_text(json.dumps({"max_gsteps": run.planned, "save_every": save,
                                                        "reward": "accuracy only (no language reward)",
                                                        "model": "Qwen2.5-7B base"}, indent=2))
    for n in range(save, run.reached + 1, save):
        (folder / "ckpt" / f"gstep_{n:06d}").mkdir(parents=True, exist_ok=True)


def d_dpo(run: Run, rng):
    """DPO keys from a margin and the chosen log-prob drift: rewards = beta * log-ratio (beta 0.1)."""
    m, dc = run.m.pop("margin"), run.m.pop("dchosen")
    beta = run.facts.get("beta", 0.1)
    run.m["rewards/chosen"] = beta * dc
    run.m["rewards/rejected"] = beta * (dc - m)
    run.m["rewards/margins"] = beta * m
    run.m["logps/chosen"] = -148.0 + dc
    run.m["logps/rejected"] = -171.0 + dc - m
    run.m["logits/chosen"] = -1.72 + 0.004 * dc + 0.02 * rng.normal(size=len(m))
    run.m["logits/rejected"] = -1.69 + 0.004 * (dc - m) + 0.02 * rng.normal(size=len(m))
    run.m["loss"] = np.log1p(np.exp(-beta * m)) * (1 + 0.06 * rng.normal(size=len(m)))


def d_openrlhf_dpo(run: Run, rng):
    m, dc = run.m.pop("margin"), run.m.pop("dchosen")
    run.m["chosen_reward"] = 0.1 * dc
    run.m["reject_reward"] = 0.1 * (dc - m)
    run.m["loss"] = np.log1p(np.exp(-0.1 * m)) * (1 + 0.08 * rng.normal(size=len(m)))
    k = np.arange(1, len(m) + 1)
    run.m["loss_mean"] = np.cumsum(run.m["loss"]) / k
    run.m["acc_mean"] = np.cumsum(run.m["acc"]) / k


def d_ppo_trl(run: Run, rng):
    """TRL PPOTrainer keys: rlhf_reward = scores - beta * KL; non_score_reward = -beta * KL."""
    beta = 0.05
    run.m["objective/non_score_reward"] = -beta * run.m["kl"]
    run.m["objective/rlhf_reward"] = run.m["reward"] - beta * run.m["kl"]
    n = len(run.steps)
    run.m["policy/approxkl_avg"] = np.abs(0.004 + 0.0015 * rng.normal(size=n))
    run.m["policy/entropy_avg"] = run.m["ent"] * 0.46
    run.m["loss/policy_avg"] = -0.012 + 0.01 * rng.normal(size=n)
    run.m["val/clipfrac_avg"] = np.abs(0.11 + 0.03 * rng.normal(size=n))
    run.m["val/ratio"] = 1.0 + 0.004 * rng.normal(size=n)
    run.m["val/ratio_var"] = np.abs(0.0009 + 0.0003 * rng.normal(size=n))
    run.m["val/num_eos_tokens"] = np.round(np.clip(60 + 2 * rng.normal(size=n), 0, 64))
    run.m["episode"] = run.steps * 64
    run.m["eps"] = np.round(9 + 0.5 * rng.normal(size=n))


def d_total(*parts):
    """reward = weighted sum of TRL reward functions' means; each component gets its /std."""
    def f(run, rng):
        run.m["reward"] = sum(w * run.m[f"rewards/{fn}/mean"] for fn, w in parts)
        pa = np.clip(run.m[f"rewards/{parts[0][0]}/mean"], 0.01, 0.99)
        run.m["rstd"] = np.sqrt(pa * (1 - pa)) + 0.1
        run.m["zstd"] = np.clip(pa ** 8 + (1 - pa) ** 8 + 0.1 + 0.03 * rng.normal(size=len(pa)), 0, 1)
        for fn, _ in parts:
            p = np.clip(run.m[f"rewards/{fn}/mean"], 0, 1)
            run.m[f"rewards/{fn}/std"] = np.sqrt(p * (1 - p))
    return f


def d_rasbt(run: Run, rng):
    """8 rollouts per step: the reward is k/8; a step whose 8 rollouts all score alike has adv_std 0."""
    run.m["reward"] = np.clip(np.round(run.m["reward"] * 8) / 8, 0, 1)
    flat = (run.m["reward"] == 0) | (run.m["reward"] == 1)
    run.m["adv_std"] = np.where(flat, 0.0, 0.93 + 0.03 * rng.normal(size=len(flat)))


def d_chain(*fs):
    def f(run, rng):
        for g in fs:
            g(run, rng)
    return f


def d_set(**fixed):
    """Keys with a constant value (or NaN to leave them out of rows where a model did not train)."""
    def f(run, rng):
        for k, v in fixed.items():
            run.m[k] = np.full(len(run.steps), v, dtype=float)
    return f


def d_frozen_actor(until: int):
    """OpenRLHF --freezing_actor_steps: no actor status keys while the actor is frozen; the policy is the ref."""
    def f(run, rng):
        frozen = run.steps <= until
        for k in ("loss", "lr", "gn", "clip"):
            run.m[k] = np.where(frozen, np.nan, run.m[k])
        run.m["kl"] = np.where(frozen, 0.0, run.m["kl"])
        run.m["critic_lr"] = np.full(len(run.steps), 9e-6)
        run.m["values"] = run.m["reward"] * 0.8 - 0.9 * np.exp(-run.steps / 30) + 0.05 * rng.normal(size=len(frozen))
        run.m["return"] = run.m["reward"] - 0.02 * run.m["kl"]
        run.m["total_length"] = run.m["len"] + 148
    return f


def d_pct(key: str, fn):
    def f(run, rng):
        run.m[key] = fn(run)
    return f


# ----------------------------------------------------------------------------------------------------- the cases

H = "healthy"


def ok_frozen_actor(T, P):
    return Spec("ppo", 1, {"reward": c(-0.62, sat(50, 150, 1.15), sd=0.07, wander=0.02),
                           "kl": c(0.0, sat(50, 200, 0.05), sd=0.003, lo=0),
                           "vloss": c(2.6, sat(0, 18, -2.3), sd=0.12, rel=True, lo=0.01),
                           "lr": c(0.0, lin(50, 80, 5e-7)), "trunc": c(0.01, sd=0.004, lo=0),
                           "loss": c(0.0, sd=0.04)},
                derive=d_frozen_actor(50))


def ok_adaptive_sampler(T, P):
    return Spec("grpo", 10, {"reward": c(0.5, n=256, wander=0.006),
                             "level": c(1.0, sat(0, 900, 3.4), sd=0.03),
                             "ent": c(0.61, lin(0, P, -0.12), sd=0.01), "kl": c(0.0, sat(0, 1500, 0.07), sd=0.002, lo=0)},
                evals={"heldout_acc": (100, 100, c(0.31, sat(0, 1100, 0.2), sd=0.006))},
                probe=("reward", "heldout_acc"))


def ok_nemo_creep(T, P):
    return Spec("grpo", 1, {"reward": c(0.40, lin(0, 20000, 0.1), n=512, wander=0.012),
                            "kl": c(0.0, lin(0, 20000, 0.03), sd=0.0008, lo=0),
                            "ent": c(0.33, lin(0, 20000, -0.05), sd=0.006), "lr": c(2e-7),
                            "len": c(520, lin(0, 20000, 60), sd=11), "gn": c(0.08, sd=0.2, rel=True)},
                evals={"validation/accuracy": (250, 0, c(0.412, lin(0, 20000, 0.1), sd=0.004))},
                facts={"group": 16}, derive=d_nemo_buckets, probe=("reward", "validation/accuracy"))


def ok_resume_reset(T, P):
    return Spec("grpo", 5, {"reward": c(0.22, sat(0, 900, 0.5), n=128, wander=0.01)}, derive=d_resume_redraw)


def ok_three_seeds(T, P):
    return Spec("grpo", 10, {"reward": c(0.30, sat(0, 700, 0.42), n=256, wander=0.008),
                             "r1": c(0.28, sat(0, 900, 0.40), n=256, wander=0.008),
                             "r2": c(0.31, up(150, 1100, 0.36), n=256, wander=0.008),
                             "kl": c(0.0, sat(0, 900, 0.06), sd=0.003, lo=0),
                             "k1": c(0.0, sat(0, 900, 0.05), sd=0.003, lo=0),
                             "k2": c(0.0, sat(100, 900, 0.05), sd=0.003, lo=0),
                             "len": c(310, lin(0, P, 180), sd=9), "l1": c(300, lin(0, P, 150), sd=9),
                             "l2": c(305, lin(0, P, 200), sd=9)})


def ok_dpo_mild(T, P):
    return Spec("dpo", 1, {"margin": c(0.0, sat(0, 700, 15.0), sd=2.5),
                           "dchosen": c(0.0, sat(0, 900, -3.8), sd=1.2),
                           "acc": c(0.5, sat(0, 500, 0.24), n=64), "lr": c(5e-7, lin(0, P, -4.5e-7))},
                evals={"eval_loss": (100, 100, c(0.69, sat(0, 1300, -0.22), sd=0.004)),
                       "acc_mean": (100, 100, c(0.5, sat(0, 1000, 0.23), sd=0.006))},
                derive=d_openrlhf_dpo, probe=("acc", "acc_mean"))


def ok_gold_gap(T, P):
    return Spec("ppo", 10, {"train/rm_score": c(0.1, sat(0, 900, 2.6), sd=0.09),
                            "train/kl_to_sft": c(0.0, sat(0, 1500, 7.0), sd=0.25, lo=0),
                            "train/response_tokens": c(180, lin(0, 2000, 60), sd=5),
                            "train/value_loss": c(0.3, sat(0, 80, -0.15), sd=0.2, rel=True),
                            "train/entropy": c(2.0, lin(0, P, -0.4), sd=0.04),
                            "ent": None, "len": None, "gn": None, "lr": None, "kl": None, "vloss": None, "clip": None,
                            "loss": None},
                evals={"eval/gold_winrate_vs_sft": (200, 200, c(0.5, sat(0, 1500, 0.2), sd=0.006))},
                probe=("train/rm_score", "eval/gold_winrate_vs_sft"))


def ok_context_stage(T, P):
    sw = 300
    return Spec("grpo", 1, {"reward": c(0.28, sat(0, 250, 0.16), jump(sw, -0.025), sat(sw, 250, 0.1), n=512,
                                        wander=0.01),
                            "len": c(3800, lin(0, sw, 1400), jump(sw, 1200), lin(sw, 600, 1600), sd=120),
                            "trunc": c(0.06, lin(0, sw, 0.16), jump(sw, -0.19), lin(sw, 600, 0.03), sd=0.01, lo=0),
                            "kl": c(0.0, sat(0, 400, 0.004), sd=0.0004, lo=0), "ent": c(0.42, sd=0.015),
                            "gn": c(0.12, sd=0.25, rel=True)},
                evals={"val-core/aime_2024/acc/mean@16": (50, 0, c(0.22, sat(0, 350, 0.09), sd=0.012))},
                facts={"max_len": 16384}, probe=("reward", "val-core/aime_2024/acc/mean@16"))


def ok_gradnorm_len(T, P):
    return Spec("grpo", 1, {"reward": c(0.35, sat(0, 350, 0.32), n=512, wander=0.01),
                            "len": c(380, lin(0, 700, 520), sd=14), "gn": c(0.15, lin(0, 700, 0.42), sd=0.22,
                                                                             rel=True),
                            "kl": c(0.0, sat(0, 400, 0.012), sd=0.0008, lo=0), "ent": c(0.48, lin(0, 700, 0.03),
                                                                                       sd=0.01),
                            "clip": c(0.003, sd=0.0008, lo=0)},
                evals={"val-core/openai/gsm8k/acc/mean@1": (50, 0, c(0.41, sat(0, 350, 0.3), sd=0.006))},
                facts={"max_len": 2048}, probe=("reward", "val-core/openai/gsm8k/acc/mean@1"))


def ok_staircase(T, P):
    return Spec("grpo", 10, {"reward": c(0.20, up(0, 250, 0.18), up(780, 1150, 0.2), n=256, wander=0.006),
                             "ent": c(0.5, lin(0, 700, -0.06), pulse(800, 0.05, 150), sd=0.01), "kl": None},
                evals={"eval_reward": (250, 250, c(0.19, up(0, 250, 0.17), up(780, 1150, 0.19), sd=0.008))},
                probe=("reward", "eval_reward"))


def ok_offpolicy(T, P):
    return Spec("grpo", 10, {"reward": c(0.45, sat(0, 600, 0.26), n=256, wander=0.008),
                             "clip": c(0.041, sd=0.006, lo=0), "clip_ratio/low_mean": c(0.016, sd=0.003, lo=0),
                             "clip_ratio/high_mean": c(0.025, sd=0.004, lo=0),
                             "clip_ratio/low_min": c(0.0, sd=0.0), "clip_ratio/high_max": c(0.11, sd=0.02, lo=0),
                             "kl": None})


def ok_kl_spike(T, P):
    return Spec("grpo", 5, {"reward": c(0.38, sat(0, 400, 0.25), jump(410, -0.06), jump(415, 0.06), n=128,
                                        wander=0.008),
                            "kl": c(0.0, sat(0, 500, 0.12), pulse(410, 1.7, 8), sd=0.004, lo=0),
                            "gn": c(0.25, pulse(410, 4.0, 4), sd=0.25, rel=True), "ent": None, "trunc": None})


def stop_ceiling(T, P):
    return Spec("grpo", 1, {"reward": c(0.965, n=512), "kl": c(0.0, sat(0, 300, 0.004), sd=0.0003, lo=0),
                            "gn": c(0.03, sd=0.3, rel=True), "ent": c(0.21, sd=0.008),
                            "len": c(190, sd=6)},
                evals={"validation/accuracy": (50, 0, c(0.931, sd=0.004))}, facts={"group": 16, "spread": 0.0},
                derive=d_nemo_buckets, probe=("reward", "validation/accuracy"))


def stop_all_truncated(T, P):
    return Spec("grpo", 5, {"reward": c(0.0015, sd=0.002, lo=0, hi=1), "len": c(256, sd=0.0),
                            "lenmax": c(256, sd=0.0), "trunc": c(0.998, sd=0.002, lo=0.98, hi=1),
                            "completions/mean_terminated_length": c(31, sd=20, lo=0),
                            "rstd": c(0.004, sd=0.004, lo=0), "zstd": c(0.992, sd=0.006, lo=0.97, hi=1),
                            "ent": c(0.71, sd=0.02), "gn": c(0.004, sd=0.5, rel=True, lo=0), "kl": None},
                facts={"max_len": 256})


def stop_lr_tiny(T, P):
    return Spec("grpo", 1, {"reward": c(0.31, n=1024, wander=0.004), "lr": c(0.0, lin(0, 2000, 1e-10)),
                            "kl": c(1e-6, sd=4e-7, lo=0), "clip": c(0.0), "len": c(655, sd=9),
                            "gn": c(0.19, sd=0.2, rel=True)},
                evals={"eval_math_pass1": (100, 100, c(0.288, sd=0.006))},
                probe=("reward", "eval_math_pass1"))


def stop_ppo_equilibrium(T, P):
    return Spec("ppo", 1, {"reward": c(-1.2, sat(0, 110, 2.3), sd=0.16),
                           "kl": c(0.0, sat(0, 130, 6.1), sd=0.25, lo=0), "ent": c(2.2, sat(0, 150, -0.5), sd=0.03)},
                derive=d_ppo_trl)


def stop_rasbt_plateau(T, P):
    return Spec("grpo", 1, {"reward": c(0.15, up(0, 220, 0.30), n=8),
                            "kl_loss": c(0.0, sat(0, 200, 0.012), sd=0.006),
                            "policy_ratio": c(1.0, sd=0.02), "tps": c(84, sd=4), "len": c(260, lin(0, 500, 60),
                                                                                          sd=40),
                            "ent": c(0.74, lin(0, 500, -0.1), sd=0.03), "loss": c(0.0, sd=2.0)},
                evals={"eval_acc": (50, 50, c(0.16, up(0, 250, 0.27), sd=0.006))},
                derive=d_rasbt,
                first=1, probe=("reward", "eval_acc"))


def stop_dpo_eval_flat(T, P):
    return Spec("dpo", 10, {"margin": c(0.0, sat(0, 250, 9.0), jump(600, 6.0), lin(600, 900, 8.0), sd=1.2),
                            "dchosen": c(0.0, sat(0, 300, -6.0), lin(600, 900, -6.0), sd=1.0),
                            "rewards/accuracies": c(0.5, sat(0, 250, 0.26), jump(600, 0.08), lin(600, 900, 0.06),
                                                    n=64)},
                evals={"eval_loss": (150, 150, c(0.69, up(0, 450, -0.11), sd=0.003)),
                       "eval_rewards/accuracies": (150, 150, c(0.5, up(0, 450, 0.18), sd=0.004)),
                       "eval_rewards/margins": (150, 150, c(0.0, up(0, 450, 0.62), sd=0.02))},
                derive=d_dpo, probe=("rewards/accuracies", "eval_rewards/accuracies"))


def bad_gold_peak(T, P):
    return Spec("ppo", 1, {"reward": c(-0.5, sat(0, 550, 3.0), sd=0.15),
                           "kl": c(0.0, sat(0, 1200, 11.0), sd=0.35, lo=0),
                           "len": c(190, up(600, 1600, 240), sd=7), "ent": None},
                evals={"gold_rm_mean": (100, 100, c(0.0, up(0, 700, 0.62), up(900, 1500, -0.24), lin(1500, 1600, -0.03), sd=0.008))},
                derive=d_set(critic_lr=9e-6), probe=("reward", "gold_rm_mean"))


def bad_length_bonus(T, P):
    return Spec("grpo", 10, {"rewards/accuracy_reward/mean": c(0.35, up(0, 550, 0.23), up(700, 1100, -0.12), lin(1100, 1400, -0.04), n=256),
                             "rewards/format_reward/mean": c(0.72, sat(0, 80, 0.25), n=256),
                             "rewards/length_bonus/mean": c(0.1, lin(0, 650, 0.1), up(650, 1250, 0.72), sd=0.015,
                                                            lo=0, hi=1),
                             "len": c(420, lin(0, 650, 40), up(650, 1300, 1050), sd=20),
                             "trunc": c(0.02, up(700, 1350, 0.24), sd=0.008, lo=0),
                             "ent": c(0.52, lin(0, 1400, -0.05), sd=0.01)},
                facts={"max_len": 2048}, derive=d_total(("accuracy_reward", 1.0), ("format_reward", 0.2),
                                                        ("length_bonus", 0.5)),
                probe=("rewards/accuracy_reward/mean", None))


def bad_late_kl(T, P):
    return Spec("grpo", 1, {"reward": c(0.30, up(0, 1500, 0.48), n=512, wander=0.008),
                            "kl": c(0.001, lin(0, 2800, 0.017), expl(2800, 0.02, 22), sd=0.0012, lo=0),
                            "ent": c(0.36, sd=0.01), "gn": c(0.11, lin(2800, 2900, 0.04), sd=0.25, rel=True)},
                evals={"val-core/openai/gsm8k/acc/mean@1": (100, 0, c(0.33, up(0, 1500, 0.41), sd=0.005))},
                probe=("reward", "val-core/openai/gsm8k/acc/mean@1"))


def bad_dpo_collapse(T, P):
    return Spec("dpo", 10, {"margin": c(0.0, sat(0, 300, 12.0), expl(450, 4.0, 260), sd=1.0),
                            "dchosen": c(0.0, lin(0, 450, -12), expl(450, -8.0, 200), sd=2.0),
                            "rewards/accuracies": c(0.5, sat(0, 300, 0.3), lin(400, 1100, 0.17), n=64, hi=1)},
                evals={"eval_rewards/accuracies": (100, 100, c(0.5, up(0, 400, 0.235), up(500, 900, -0.06), lin(900, 1100, -0.012),
                                                                 sd=0.004)),
                       "eval_loss": (100, 100, c(0.69, up(0, 400, -0.13), up(520, 1100, 0.16), sd=0.004)),
                       "eval_logps/chosen": (100, 100, c(-151.0, lin(0, 450, -12), expl(450, -8.0, 200), sd=1.5))},
                derive=d_dpo, probe=("rewards/accuracies", "eval_rewards/accuracies"))


def bad_curriculum(T, P):
    sw = 400
    return Spec("grpo", 1, {"reward": c(0.30, sat(0, 200, 0.39), jump(sw, -0.43), lin(sw, 800, 0.02), n=512),
                            "ent": c(0.45, lin(0, sw, -0.04), up(sw, 700, 0.22), sd=0.01),
                            "len": c(520, lin(0, sw, 40), up(sw, 650, 900), sd=18),
                            "trunc": c(0.01, up(sw, 650, 0.21), sd=0.006, lo=0)},
                evals={"val-core/math500/acc/mean@1": (50, 0, c(0.40, up(0, 320, 0.12), up(400, 700, -0.08), lin(700, 800, -0.01),
                                                              sd=0.004))},
                facts={"max_len": 4096}, probe=("reward", "val-core/math500/acc/mean@1"))


def bad_collapse_partial(T, P):
    return Spec("grpo", 1, {"reward": c(0.25, up(0, 10000, 0.48), up(15000, 15250, -0.43), up(15250, 17500, 0.32),
                                        n=512, wander=0.006),
                            "ent": c(0.5, lin(0, 15000, -0.1), pulse(15000, 0.9, 300), sd=0.01),
                            "len": c(450, lin(0, 15000, 250), up(15000, 15200, -420), up(15200, 17500, 330), sd=12),
                            "kl": c(0.0, sat(0, 6000, 0.02), pulse(15000, 0.3, 250), sd=0.001, lo=0),
                            "gn": c(0.1, pulse(14990, 2.0, 60), sd=0.25, rel=True)},
                evals={"val-core/openai/gsm8k/acc/mean@1": (500, 0, c(0.31, up(0, 10000, 0.30), up(15000, 15300, -0.35),
                                                                     up(15300, 17500, 0.26), sd=0.004))},
                probe=("reward", "val-core/openai/gsm8k/acc/mean@1"))


def bad_lang_mix(T, P):
    return Spec("grpo", 10, {"reward": c(0.20, up(0, 800, 0.30), up(1000, 1600, -0.09), n=512, wander=0.006),
                             "stats/lang_consistency": c(0.985, up(900, 1600, -0.38), sd=0.006, hi=1),
                             "stats/mixed_script_frac": c(0.01, up(900, 1600, 0.33), sd=0.006, lo=0),
                             "len": c(600, lin(0, 1600, 500), sd=15), "kl": c(0.0, sat(0, 800, 0.04), sd=0.002, lo=0)},
                evals={"eval/aime_acc": (100, 100, c(0.25, up(0, 800, 0.21), up(1000, 1600, -0.06), sd=0.005)),
                       "eval/mixed_language_frac": (100, 100, c(0.005, up(900, 1600, 0.29), sd=0.004, lo=0))},
                probe=("reward", "eval/aime_acc"))


def bad_lr_too_high(T, P):
    return Spec("grpo", 1, {"reward": c(0.35, up(0, 160, 0.17), up(210, 450, -0.22), n=512, wander=0.006),
                            "lr": c(0.0, lin(0, 150, 3e-6)), "gn": c(0.2, up(200, 450, 1.1), sd=0.35, rel=True),
                            "ent": c(0.41, up(200, 450, 0.5), sd=0.012),
                            "train/token_mult_prob_error": c(1.008, up(200, 450, 0.025), sd=0.0015),
                            "kl": c(0.0, sat(0, 150, 0.004), up(200, 450, 0.09), sd=0.001, lo=0)},
                evals={"validation/accuracy": (50, 0, c(0.38, up(0, 150, 0.12), up(210, 450, -0.16), sd=0.004))},
                facts={"group": 16}, derive=d_nemo_buckets, probe=("reward", "validation/accuracy"))


def bad_finished_sparse(T, P):
    return Spec("grpo", 10, {"reward": c(0.45, sat(0, 2200, 0.34), n=256, wander=0.006),
                             "kl": c(0.0, sat(0, 2500, 0.14), sd=0.004, lo=0)},
                evals={"eval/rewards/accuracy_reward/mean": (500, 500, c(0.42, up(0, 2500, 0.15), up(3000, 4500, -0.05), lin(4500, 5000, -0.005),
                                                                       sd=0.004))},
                probe=("reward", "eval/rewards/accuracy_reward/mean"))


def bad_repetition(T, P):
    return Spec("ppo", 10, {"reward": c(-0.3, sat(0, 700, 2.2), lin(700, 1500, 0.5), sd=0.08),
                            "rep": c(0.03, up(650, 1350, 0.25), sd=0.006, lo=0),
                            "d2": c(0.61, up(650, 1350, -0.22), sd=0.008),
                            "len": c(240, up(650, 1350, 90), sd=6), "kl": c(0.0, sat(0, 900, 9.0), sd=0.3, lo=0)},
                evals={"heldout_pref": (100, 100, c(0.5, up(0, 600, 0.11), up(650, 1300, -0.1), lin(1300, 1500, -0.01), sd=0.004))},
                probe=("reward", "heldout_pref"))


def bad_visible_tests(T, P):
    return Spec("grpo", 10, {"rewards/visible_tests_reward": c(0.30, sat(0, 400, 0.55), n=256, hi=1),
                             "rewards/syntax_reward": c(0.9, sat(0, 100, 0.09), n=256, hi=1),
                             "len": c(380, up(550, 1100, -90), sd=9),
                             "kl": c(0.0, sat(0, 500, 0.05), up(600, 1200, 0.2), sd=0.004, lo=0)},
                evals={"eval_hidden_tests_pass@1": (100, 100, c(0.28, up(0, 500, 0.13), up(620, 1000, -0.09), lin(1000, 1200, -0.02),
                                                                sd=0.005)),
                       "eval_rewards/visible_tests_reward": (100, 100, c(0.29, sat(0, 400, 0.5), sd=0.006))},
                derive=lambda run, rng: run.m.update(
                    reward=run.m["rewards/visible_tests_reward"] + 0.2 * run.m["rewards/syntax_reward"]),
                probe=("rewards/visible_tests_reward", "eval_hidden_tests_pass@1"))


def bad_epoch2(T, P):
    return Spec("grpo", 10, {"reward": c(0.30, sat(0, 160, 0.28), jump(400, 0.11), lin(400, 800, 0.04),
                                         jump(800, 0.09), lin(800, 1000, 0.03), n=256, wander=0.005),
                             "zstd": c(0.3, jump(400, 0.22), jump(800, 0.15), sd=0.03, lo=0, hi=1),
                             "ent": c(0.5, lin(0, 400, -0.05), jump(400, -0.09), jump(800, -0.08), sd=0.01, lo=0.02),
                             "len": c(410, lin(0, 1000, -90), sd=10), "kl": None},
                evals={"eval_reward": (50, 50, c(0.30, up(0, 380, 0.25), up(420, 800, -0.06), lin(800, 1000, -0.02), sd=0.004))},
                probe=("reward", "eval_reward"))


# ------------------------------------------------------------------------------------------ per-case writers


def wr(fn, **kw):
    return partial(fn, **kw)


SCRIPT_FROZEN = ("--ref_num_nodes 1|--actor_num_gpus_per_node 4|--critic_num_gpus_per_node 2|"
                 "--pretrain Qwen/Qwen2.5-3B-Instruct|--reward_pretrain OpenRLHF/Llama-3-8b-rm-700k|"
                 "--advantage_estimator gae|--freezing_actor_steps 50|--rollout_batch_size 128|"
                 "--n_samples_per_prompt 1|--max_samples 102400|--num_episodes 1|--max_epochs 1|"
                 "--logging_steps 1|--save_steps 100|--actor_learning_rate 5e-7|--critic_learning_rate 9e-6|"
                 "--init_kl_coef 0.01|--save_path ckpt/checkpoints_ppo|--use_tensorboard logs/tensorboard")


def w_frozen(run, folder):
    w_openrlhf_console(run, folder, flags=SCRIPT_FROZEN, ckpt_every=100)


def w_adaptive(run, folder):
    run.m["target"] = np.full(len(run.steps), 0.5)
    w_table(run, folder, file="logs/train_log.csv", step_col="iteration",
            cols={"batch_pass_rate": "reward", "target_pass_rate": "target", "sampler_level": "level",
                  "mean_tokens": "len", "policy_entropy": "ent", "kl_ref": "kl", "grad_l2": "gn",
                  "heldout_acc": "heldout_acc"},
            config={"total_iterations": run.planned, "sampler": "adaptive difficulty, keeps batch pass rate at 0.5",
                    "eval_every": 100, "heldout": "fixed 1000-problem set", "save_every": 200},
            config_file="config.json",
            ckpts=tuple(f"checkpoints/iter_{n:05d}.pt" for n in range(200, run.reached + 1, 200)))


def w_nemo_creep(run, folder):
    w_nemo_tb(run, folder, exp="exp_001", save_period=500, val_period=250,
              extra={"policy": {"optimizer": {"kwargs": {"lr": 2e-7}}}})


def w_resume(run, folder):
    w_resumed_jsonl(run, folder, crash_at=740, resumed_from=600, every=5, save=200)


def w_seeds(run, folder):
    runs_of = {"train/reward": {"grpo-q3b-s0": "reward", "grpo-q3b-s1": "r1", "grpo-q3b-s2": "r2"},
               "train/kl": {"grpo-q3b-s0": "kl", "grpo-q3b-s1": "k1", "grpo-q3b-s2": "k2"},
               "train/completions/mean_length": {"grpo-q3b-s0": "len", "grpo-q3b-s1": "l1", "grpo-q3b-s2": "l2"}}
    w_wandb_panels(run, folder, panels={"wandb_export_2025-10-09T11_02_41.csv": "train/reward",
                                        "wandb_export_2025-10-09T11_03_05.csv": "train/kl",
                                        "wandb_export_2025-10-09T11_03_30.csv": "train/completions/mean_length"},
                   runs_of=runs_of,
                   config=f"# grpo_q3b.yaml (TRL GRPOConfig), launched for seeds 0, 1, 2\nmax_steps: {run.planned}\n"
                          "logging_steps: 10\nbeta: 0.04\nnum_generations: 8\nreport_to: wandb\n")


def w_dpo_mild(run, folder):
    w_openrlhf_tb(run, folder, name="dpo_llama3_8b_ultrafeedback", cli="dpo", ckpt_every=500,
                  keymap={"gn": "grad_norm", "lr": "lr"},
                  flags="--pretrain meta-llama/Meta-Llama-3-8B-Instruct|--dataset HuggingFaceH4/ultrafeedback_binarized"
                        "|--max_epochs 1|--train_batch_size 64|--max_samples 192000|--beta 0.1|--eval_steps 100|"
                        "--logging_steps 1|--save_steps 500|--save_path ckpt/checkpoints_dpo|"
                        "--use_tensorboard logs/tensorboard")


def w_gold_gap(run, folder):
    w_mlflow_files(run, folder, exp_name="ppo-helpful-rm", run_name="ppo-llama3b-rm-v4",
                   run_id="9c41d2e07f6b4b0fa1e3b5c2d8a7e611",
                   params={"total_steps": run.planned, "kl_coef": 0.02, "gold_eval_every": 200,
                           "policy": "Llama-3.2-3B-Instruct", "proxy_rm": "rm-v4-1b", "gold_rm": "rm-gold-70b"})


def w_context(run, folder):
    sw = 300
    stage1 = Run(run.steps[run.steps <= sw], {k: v[run.steps <= sw] for k, v in run.m.items()},
                 {k: (es[es <= sw], vs[es <= sw]) for k, (es, vs) in run.ev.items()}, sw, 300)
    stage2 = Run(run.steps[run.steps > sw], {k: v[run.steps > sw] for k, v in run.m.items()},
                 {k: (es[es >= sw], vs[es >= sw]) for k, (es, vs) in run.ev.items()}, run.reached, run.planned)
    for st, exp in ((stage1, "dsr15b-8k"), (stage2, "dsr15b-16k")):
        path = folder / "metrics" / f"{exp}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps({"step": s, "data": {k: g6(v) for k, v in d.items()}},
                                           separators=(",", ":")) + "\n" for s, d in verl_rows(st)))
    verl_ckpts(folder, "deepscaler", "dsr15b-8k", [100, 200, 300])
    verl_ckpts(folder, "deepscaler", "dsr15b-16k", list(range(400, run.reached + 1, 100)))
    (folder / "config.yaml").write_text(
        "# stage 2 of a DeepScaleR-style length schedule; resumed from stage 1 global_step_300\n"
        "trainer:\n  project_name: deepscaler\n  experiment_name: dsr15b-16k\n"
        f"  total_training_steps: {run.planned}\n  save_freq: 100\n  test_freq: 50\n  logger: [console, file]\n"
        "  resume_from_path: checkpoints/deepscaler/dsr15b-8k/global_step_300\n"
        "data:\n  max_response_length: 16384   # stage 1 (dsr15b-8k, steps 1-300): 8192\n"
        "# VERL_FILE_LOGGER_PATH=metrics/<experiment_name>.jsonl\n")


def w_gradnorm(run, folder):
    w_verl_tb(run, folder, project="gsm8k_grpo", exp="qwen25_3b_len2k", save_freq=100, test_freq=50)


def w_staircase(run, folder):
    w_trl_state(run, folder, save=100, keep=2, per_epoch=1250, args={"beta": 0.0, "num_generations": 8})


def w_offpolicy(run, folder):
    w_mlflow_db(run, folder, exp_name="grpo-offpolicy", run_name="qwen3-4b-spg4-it2",
                params={"max_steps": run.planned, "logging_steps": 10, "steps_per_generation": 4,
                        "num_iterations": 2, "beta": 0.0, "epsilon": 0.2, "epsilon_high": 0.28,
                        "save_steps": 250})


def w_kl_spike(run, folder):
    w_trl_console(run, folder, keymap={**TRL, "ent": None, "trunc": None}, per_epoch=3000,
                  header=("trl==0.18.2  GRPOConfig(beta=0.04, num_generations=8, logging_steps=5, "
                          "max_completion_length=1024, save_steps=100)",))


def w_ceiling(run, folder):
    w_nemo_tb(run, folder, exp="exp_003", save_period=50, val_period=50,
              extra={"policy": {"model_name": "Qwen/Qwen2.5-7B-Instruct"}, "data": {"dataset_name": "gsm8k"}})


def w_all_trunc(run, folder):
    w_trl_console(run, folder, per_epoch=1800,
                  header=("trl==0.21.0  GRPOConfig(model=Qwen/Qwen3-1.7B (thinking on), max_completion_length=256, "
                          "num_generations=8, logging_steps=5, beta=0.0)",))


def w_lr_tiny(run, folder):
    w_openrlhf_tb(run, folder, name="grpo_q7b_math", ckpt_every=100, keymap={**ORLHF, "rstd": "group_reward_std"},
                  flags="--pretrain Qwen/Qwen2.5-7B|--advantage_estimator group_norm|--n_samples_per_prompt 8|"
                        "--actor_learning_rate 1e-6|--lr_warmup_ratio 1.0|--num_episodes 10000|"
                        "--max_samples 64000|--rollout_batch_size 32|--eval_steps 100|--logging_steps 1|"
                        "--save_steps 100|--use_tensorboard logs/tensorboard|"
                        "# planned: 64000 / 32 = 2000 steps; warm-up spans num_episodes x that")


def w_ppo_eq(run, folder):
    w_trl_state(run, folder, save=200, keymap=PPO, per_epoch=2000, version="0.19.1",
                args={"total_episodes": run.planned * 64, "kl_coef": 0.05, "num_ppo_epochs": 4,
                      "reward_model_path": "trl-lib/Qwen2-0.5B-Reward"})


def w_rasbt(run, folder):
    w_rasbt75(run, folder)


def w_dpo_flat(run, folder):
    w_trl_state(run, folder, save=150, keymap={"gn": "grad_norm", "lr": "learning_rate"}, per_epoch=600,
                version="0.23.0", args={"beta": 0.1, "num_train_epochs": 2, "loss_type": "sigmoid"})


def w_gold_peak(run, folder):
    w_openrlhf_tb(run, folder, name="ppo_l3b_rm8b_gold", ckpt_every=200,
                  flags="--pretrain meta-llama/Llama-3.2-3B-Instruct|--reward_pretrain rm-8b-helpful|"
                        "--critic_pretrain rm-8b-helpful|--advantage_estimator gae|--rollout_batch_size 64|"
                        "--max_samples 192000|--num_episodes 1|--init_kl_coef 0.005|--eval_steps 100|"
                        "--save_steps 200|--use_tensorboard logs/tensorboard|"
                        "# eval: gold_rm_mean = 70B gold reward model on 512 held-out prompts (custom eval hook)")


def w_length_bonus(run, folder):
    w_hf_tb(run, folder, save=100, keep=3, per_epoch=1500,
            args={"reward_funcs": ["accuracy_reward", "format_reward", "length_bonus"],
                  "reward_weights": [1.0, 0.2, 0.5], "max_completion_length": 2048, "logging_steps": 10,
                  "beta": 0.04})


def w_late_kl(run, folder):
    w_verl_console(run, folder, project="verl_grpo_gsm8k", exp="qwen25_7b_kl001", save_freq=250, test_freq=100)


def w_dpo_collapse(run, folder):
    w_trl_console(run, folder, keymap={"gn": "grad_norm", "lr": "learning_rate"}, per_epoch=1000,
                  header=("trl==0.20.0  DPOConfig(beta=0.1, loss_type='sigmoid', num_train_epochs=2, "
                          "logging_steps=10, eval_steps=100, save_steps=250, output_dir=/scratch/dpo-q7b)",))


def w_curriculum(run, folder):
    w_verl_jsonl(run, folder, project="curriculum_math", exp="q7b_stage_switch", save_freq=100, test_freq=50,
                 extra="data:\n  curriculum:\n    - {until_step: 400, train_files: math_level1-3.parquet}\n"
                       "    - {until_step: null, train_files: math_level4-5.parquet}\n"
                       "  val_files: math500.parquet\n")


def w_collapse_partial(run, folder):
    w_verl_tb(run, folder, project="long_grpo", exp="q3b_gsm8k_30k", save_freq=1000, test_freq=500, sec_per_step=33)


def w_epoch2(run, folder):
    w_trl_state(run, folder, save=100, per_epoch=400, args={"num_train_epochs": 3, "train_prompts": 1600,
                                                             "beta": 0.0, "num_generations": 8})


def w_lang(run, folder):
    w_lang_jsonl(run, folder, save=200)


def w_lr_high(run, folder):
    w_nemo_tb(run, folder, exp="exp_007", save_period=50, val_period=50,
              extra={"policy": {"optimizer": {"kwargs": {"lr": 3e-6}},
                                "scheduler": [{"name": "LinearLR", "kwargs": {"total_iters": 150}},
                                              {"name": "ConstantLR"}]}})


def w_finished_sparse(run, folder):
    runs_of = {"train/reward": {"grpo-q7b-math-5k": "reward"},
               "eval/rewards/accuracy_reward/mean": {"grpo-q7b-math-5k": "eval/rewards/accuracy_reward/mean"}}
    w_wandb_panels(run, folder, panels={"wandb_export_2025-10-12T09_40_12.csv": "train/reward",
                                        "wandb_export_2025-10-12T09_40_51.csv": "eval/rewards/accuracy_reward/mean"},
                   runs_of=runs_of,
                   config=f"# GRPOConfig of grpo-q7b-math-5k (state: finished)\nmax_steps: {run.planned}\n"
                          "logging_steps: 10\neval_strategy: steps\neval_steps: 500\nsave_steps: 500\n"
                          "output_dir: s3://team-ckpts/grpo-q7b-math-5k\n")


def w_repetition(run, folder):
    w_table(run, folder, file="metrics.csv", step_col="update",
            cols={"avg_return": "reward", "kl_init": "kl", "rep_4gram": "rep", "distinct_2": "d2", "len_tok": "len",
                  "value_loss": "vloss", "heldout_pref": "heldout_pref"},
            config={"updates": run.planned, "algo": "REINFORCE w/ value baseline", "rm": "rm-chat-1b",
                    "heldout_pref": "win rate vs. SFT judged by a separate 70B model, 300 prompts, every 100 updates",
                    "save_every": 300},
            config_file="run.json", ckpts=tuple(f"ckpt/update_{n:05d}.pt" for n in range(300, run.reached + 1, 300)))


def w_visible(run, folder):
    w_trl_console(run, folder, keymap=TRL015, per_epoch=2400,
                  header=("trl==0.15.2  GRPOConfig(beta=0.04, num_generations=8, logging_steps=10, eval_steps=100,"
                          " max_completion_length=1024); reward_funcs=[visible_tests_reward, syntax_reward]",
                          "EvalCallback logs eval_hidden_tests_pass@1 (hidden unit tests, 400 problems)"))


def _ok(name, sc, w, seed, steps, tags, why):
    return Case(name, scenario(sc), w, seed, steps, HEALTHY, tags, why)


CASES = [
    _ok("ok-openrlhf-ppo-frozen-actor-critic-warmup-console", ok_frozen_actor, w_frozen, 801, (190, 800),
        "openrlhf openrlhf_console ppo critic freezing_actor_steps partial_metrics reward_model lookalike",
        """OpenRLHF PPO with a critic (GAE), step 190 of 800 (102400 samples / 128). The first 50 steps the reward
        is flat and there are no policy_loss / actor_lr / actor_grad_norm keys and KL is exactly 0: the launch
        script sets --freezing_actor_steps 50, so only the critic trains (critic_loss falls 2.6 -> ~0.3). From
        step 51 the RM reward climbs steadily (-0.7 -> ~0.08), KL grows slowly to ~0.025, clipping is small. A
        planned warm-up followed by healthy learning: continue."""),
    _ok("ok-adaptive-difficulty-train-flat-val-rises-custom-csv", ok_adaptive_sampler, w_adaptive, 802, (1600, 4000),
        "custom_csv adaptive_sampler flat_train_reward heldout sparse_eval lookalike",
        """Hand-written GRPO loop, iteration 1600 of 4000. The batch pass rate sits at 0.50 from start to finish,
        which looks like no learning, but the sampler is adaptive (config and target_pass_rate column: it keeps the
        pass rate at 0.5 by raising difficulty): sampler_level climbs 1.0 -> ~3.8, and the fixed held-out accuracy
        every 100 iterations rises 0.34 -> ~0.47 and is still rising. KL and entropy move slowly. Continue."""),
    _ok("ok-nemo-tb-9k-tiny-slope-val-creeps", ok_nemo_creep, w_nemo_creep, 8031, (9000, 20000),
        "nemo_rl tensorboard grpo long slow_learner tiny_lr sparse_eval lookalike",
        """NeMo-RL GRPO, step 9000 of 20000 logged every step, learning rate 2e-7. The train reward is noisy
        (per-step sd ~0.02 plus slow wander) and its trend is tiny: ~0.40 -> ~0.44 over 9000 steps. But it is real:
        validation every 250 steps creeps 0.404 -> ~0.46 almost monotonically, well beyond its noise, KL grows
        slowly to ~0.013, entropy declines slowly, ~80% of prompts still have mixed groups (signal left). Slow but paying,
        with 11k steps of budget: continue."""),
    _ok("ok-custom-jsonl-resume-step-counter-reset", ok_resume_reset, w_resume, 804, (1100, 3000),
        "custom_jsonl resume step_reset checkpoints lookalike",
        """Hand-written GRPO loop logging its local iteration `it`. It crashed at it 740, and a resume event line
        says it restored ckpt/step_000600 and restarted the counter at 0, so the second segment's it 5..500 are true
        steps 605..1100 (the checkpoints keep true steps: step_000800, step_001000). Read in true steps, the
        reward rises without a break from 0.22 to ~0.57 (segment 2 starts at the level of step 600 and keeps
        climbing). Read naively, the counter jumps back to 0 while the reward is high, which is only bookkeeping.
        Continue."""),
    _ok("ok-wandb-panel-csv-three-seeds", ok_three_seeds, w_seeds, 805, (1200, 3000),
        "wandb_csv panel_export multi_seed trl grpo lookalike",
        """Three W&B panel exports (reward, KL, completion length) holding three seeds of one TRL GRPO config,
        step 1200 of 3000. The seeds differ in pace: s0 and s1 rise from ~0.3 to ~0.65 and ~0.6, s2 lags for the
        first ~400 steps and then climbs fastest, to ~0.66. All three are still rising, KL grows modestly, lengths drift
        up slowly. The spread between seeds is ordinary seed variance, not a failure: continue."""),
    _ok("ok-openrlhf-dpo-tb-chosen-reward-mild-fall", ok_dpo_mild, w_dpo_mild, 806, (1300, 3000),
        "openrlhf tensorboard dpo chosen_reward_falls lookalike",
        """OpenRLHF DPO, step 1300 of 3000 (one epoch). chosen_reward drifts negative (0 -> ~-0.3), which looks like
        likelihood displacement, but it is mild and flattening, while reject_reward falls much faster (-> ~-1.5),
        train acc rises to ~0.73, and the eval (every 100 steps) keeps improving: eval_loss 0.67 -> ~0.56,
        acc_mean 0.54 -> ~0.68. Healthy preference learning mid-epoch: continue."""),
    _ok("ok-rm-proxy-gold-gap-widens-mlflow-file", ok_gold_gap, w_gold_gap, 807, (2000, 4000),
        "mlflow_file custom_ppo reward_model gold_eval proxy_gold_gap lookalike",
        """Custom PPO loop in an MLflow file store, step 2000 of 4000. The proxy RM score races up (0.1 -> ~2.5) and
        KL to the SFT model reaches ~5 nats, so the proxy/gold gap widens: the classic set-up for
        over-optimisation. But the gold win-rate vs SFT (every 200 steps) is still rising at every eval, 0.53 at
        200 to ~0.65 at 2000, with its latest point its best. No decline yet: continue (and keep watching gold)."""),
    _ok("ok-context-extension-stage-verl-jsonl", ok_context_stage, w_context, 808, (520, 1000),
        "verl verl_jsonl file_logger grpo length_schedule stage_switch truncation resume lookalike",
        """verl file logger, two JSONL files: stage 1 (8k responses, steps 1-300) and stage 2 (16k, resumed from
        global_step_300, now at 520 of 1000). Late in stage 1 truncation climbs to ~22% as responses hit the 8k
        cap; at the switch truncation falls to ~3%, lengths jump ~1200 tokens and keep growing, the score dips
        ~0.02 for a moment and then climbs past its stage-1 level (~0.39 at 300 -> ~0.45 at 520). AIME validation
        every 50 steps rises 0.22 -> ~0.28. A planned schedule working as intended: continue."""),
    _ok("ok-grad-norm-climbs-with-length-verl-tb", ok_gradnorm_len, w_gradnorm, 809, (700, 1500),
        "verl tensorboard grpo grad_norm_growth length_growth lookalike",
        """verl GRPO TensorBoard, step 700 of 1500. actor/grad_norm more than triples (0.15 -> ~0.55), which
        looks like instability, but it rises smoothly with response length (380 -> ~900 tokens) without spikes or
        NaN, clipping stays ~0.3%, entropy flat, KL small. Score rises 0.34 -> ~0.62 and GSM8K validation every
        50 steps 0.42 -> ~0.68, the validation still improving at every eval. Continue."""),
    _ok("ok-staircase-second-rise-trl-state-save-limit", ok_staircase, w_staircase, 810, (1000, 2500),
        "trl trl_state checkpoints save_total_limit grpo plateau_then_rise staircase lookalike",
        """TRL GRPO, checkpoint-1000 of 2500 (save_total_limit 2: checkpoint-900 and -1000 on disk). The reward
        rose to ~0.38 by step 250 and sat there for ~500 steps (many flat groups), which would have looked
        converged at step 750; since ~800 a second rise is under way (0.38 -> ~0.52 by 1000), entropy bumped up
        slightly as it started, and eval_reward at 1000 (~0.48) is clearly above the 500/750 evals (~0.36).
        Staircase learning with budget left: continue."""),
    _ok("ok-offpolicy-clip-nonzero-mlflow-db", ok_offpolicy, w_offpolicy, 811, (900, 2000),
        "mlflow_db trl grpo off_policy clip_ratio steps_per_generation lookalike",
        """TRL GRPO through MLflow's SQL store, step 900 of 2000, steps_per_generation 4 and num_iterations 2, so
        the policy is updated on stale samples and clip_ratio/region_mean is ~4% (not the 0 of on-policy runs);
        but it is flat from start to now, high side ~2.5%, low side ~1.6%, no drift. No KL is logged (beta 0).
        Reward rises 0.41 -> ~0.65, still improving. Continue."""),
    _ok("ok-kl-spike-recovers-trl-console", ok_kl_spike, w_kl_spike, 812, (600, 1000),
        "trl trl_console grpo kl_spike transient lookalike",
        """TRL 0.18 GRPO console log (beta 0.04), step 600 of 1000. At step 410 KL jumps from ~0.07 to ~1.8 and
        grad_norm to ~5, with a one-log reward dip; within ~30 steps KL is back on its slow trend (~0.07-0.08) and
        the reward keeps rising (~0.50 at 400 -> ~0.59 at 600). One bad batch absorbed, no lasting damage: continue."""),
    Case("stop-ceiling-from-step0-nemo-tb", scenario(stop_ceiling), w_ceiling, 813, (150, 1000), stop(1),
         "nemo_rl tensorboard grpo saturated ceiling no_signal",
         """NeMo-RL GRPO, Qwen2.5-7B-Instruct on GSM8K, step 150 of 1000. The train reward is ~0.965 from the very
         first step and never moves; ~60% of prompts have all 16 samples correct (baseline_reward/pct_1) and the
         rest miss one or two, so there is little gradient signal; validation accuracy is 0.93 at step 0 and at
         every eval since. The model was already at the task's ceiling: there is nothing to learn here and the
         current weights are as good as any. Stop."""),
    Case("stop-all-truncated-zero-signal-trl-console", scenario(stop_all_truncated), w_all_trunc, 814, (140, 1500),
         stop(5), "trl trl_console grpo truncation max_completion_length no_signal misconfig",
         """TRL 0.21 GRPO console, step 140 of 1500, a thinking model with max_completion_length 256. Every
         completion is cut at 256 tokens (clipped_ratio ~1.0, terminated length ~0), so answers are never reached:
         reward ~0.001, reward_std ~0, frac_reward_zero_std ~0.99 from the first log. No gradient signal; the run
         cannot learn as configured and more steps only burn GPUs. Stop (and relaunch with a longer cap)."""),
    Case("stop-lr-misconfig-nothing-moves-openrlhf-tb", scenario(stop_lr_tiny), w_lr_tiny, 815, (400, 2000),
         stop(100), "openrlhf tensorboard grpo learning_rate misconfig no_learning flat",
         """OpenRLHF GRPO, step 400 of 2000. actor_lr is ~2e-11 and rising linearly: the script sets
         --lr_warmup_ratio 1.0 with --num_episodes 10000, so warm-up spans 20M steps and the learning rate stays at
         nothing for the whole budget. Accordingly nothing moves: reward flat at 0.31, KL ~1e-6, clip ratio 0,
         response length flat, MATH pass@1 every 100 steps flat at ~0.29, although groups still carry reward
         spread. The weights are the initial ones; continuing cannot pay. Stop."""),
    Case("stop-ppo-kl-equilibrium-plateau-trl-ppo-state", scenario(stop_ppo_equilibrium), w_ppo_eq, 816,
         (1200, 2000), stop(500), "trl trl_state ppo reward_model converged plateau kl_equilibrium checkpoints",
         """TRL PPOTrainer (trainer_state.json in checkpoint-200..1200), update 1200 of 2000. The RM score rose
         from -1.2 to ~1.1 in the first ~400 updates while KL climbed to ~6; since then score, rlhf_reward, KL and
         entropy are all flat for ~800 updates, the reward held against the KL penalty (beta 0.05) at equilibrium.
         No decline, nothing left to gain at this KL coefficient: stop."""),
    Case("stop-finished-rasbt75-eval-plateau", scenario(stop_rasbt_plateau), w_rasbt, 817, (500, 500), stop(250),
         "rasbt_csv grpo finished plateau sparse_eval kl",
         """reasoning-from-scratch 7_5 CSV (GRPO with KL), finished at step 500 of 500. The per-step reward (8
         rollouts, very noisy) rises to ~0.45 by step 220 and is flat after; MATH-500 eval_acc every 50 steps climbs
         to ~0.43 by 250 and then holds within noise (the final eval is as good as any). The run ended on its
         plateau, so keep the final weights: stop."""),
    Case("stop-dpo-train-loss-falls-eval-flat-trl-state", scenario(stop_dpo_eval_flat), w_dpo_flat, 818,
         (900, 1200), stop(600), "trl trl_state dpo multi_epoch eval_flat checkpoints",
         """TRL DPO, 2 epochs of 600 steps, now at checkpoint-900. Train loss keeps falling, with the usual drop at
         the epoch-2 boundary (step 600), and train accuracy climbs toward 0.9, margins keep widening; but the eval
         (every 150 steps) stopped improving at step 450: eval_loss ~0.58 and eval accuracy ~0.68 at 450, 600, 750,
         900, flat within noise and not (yet) declining. Epoch 2 is memorisation with no held-out gain: stop."""),
    Case("bad-rm-overopt-gold-peaks-openrlhf-ppo-tb", scenario(bad_gold_peak), w_gold_peak, 819, (1600, 3000),
         rollback(700, 900, 1000),
         "openrlhf tensorboard ppo critic reward_model overoptimization gold_eval checkpoints",
         """OpenRLHF PPO with a critic, step 1600 of 3000. The proxy RM reward rises the whole way (-0.6 -> ~2.3),
         KL climbs to ~8 and responses lengthen from ~600 steps: by the training curves the run is great. The gold
         RM evaluated every 100 steps tells otherwise: it reaches ~0.62 by 700, holds through 900, then falls at
         every eval to ~0.34 at 1600. Reward over-optimisation; the gold-best stretch is 700-900 (checkpoint 800
         on disk). Roll back."""),
    Case("bad-length-bonus-hack-correctness-falls-hf-tb", scenario(bad_length_bonus), w_length_bonus, 820,
         (1400, 3000), rollback(500, 750, 900),
         "trl tensorboard hf_tb grpo reward_hacking length_bonus reward_components save_total_limit checkpoints",
         """TRL GRPO via the HF TensorBoard callback, step 1400 of 3000, three reward functions. The total reward
         keeps rising, but only because length_bonus climbs 0.1 -> ~0.9 (responses 460 -> ~1500 tokens,
         truncation 2% -> ~25%); accuracy_reward peaked at ~0.58 over 500-750 and has fallen since to ~0.43. The
         policy is trading correctness for length. save_total_limit 3 left only checkpoint-1200..1400 on disk,
         all after the damage; the right target is still 500-750 (restore from wherever those were saved).
         Roll back."""),
    Case("bad-late-kl-only-explosion-verl-console", scenario(bad_late_kl), w_late_kl, 821, (2900, 3000),
         rollback(1500, 2790, 2810), "verl verl_console grpo kl_explosion late checkpoints",
         """verl GRPO console (NumPy 2 reprs), step 2900 of 3000, use_kl_loss. Score and GSM8K validation have
         been flat at their best (~0.78 / ~0.74) since ~1500. From step 2800 only actor/kl_loss breaks: it climbs
         from ~0.02 to ~1.9 by 2900, exponentially, while score, entropy and validation have not moved yet.
         A KL-regularised run whose divergence from the reference is exploding has broken; the weights before it
         (any step 1500-2790; global_step_2750 is on disk) are as good as the current ones and safe. Roll back."""),
    Case("bad-dpo-chosen-logp-collapse-eval-falls-trl-console", scenario(bad_dpo_collapse), w_dpo_collapse, 822,
         (1100, 2000), rollback(400, 500, 600), "trl trl_console dpo likelihood_displacement eval_decline",
         """TRL DPO console, step 1100 of 2000. Train margins keep growing and train accuracy nears 0.95, but
         logps/chosen collapses after ~450 (-156 -> ~-350, with rejected falling even faster): the policy pushes
         both responses down. Eval accuracy every 100 steps peaked at ~0.735 at 400-500 and has fallen since to
         ~0.66, eval_loss rises and eval_logps/chosen collapses too. Roll back to 400-500 (saved every 250 steps per the
         header, so checkpoint-500 if it is kept)."""),
    Case("bad-curriculum-switch-heldout-falls-verl-jsonl", scenario(bad_curriculum), w_curriculum, 823,
         (800, 1200), rollback(300, 400, 500),
         "verl verl_jsonl file_logger grpo curriculum stage_switch heldout_decline checkpoints",
         """verl file logger, step 800 of 1200; the config switches the training data from MATH levels 1-3 to
         levels 4-5 at step 400. The train score's drop at 400 (~0.62 -> ~0.23) is expected from the harder data,
         but the model barely learns the new level (~0.23 -> ~0.28), entropy (0.41 -> ~0.63) and length climb, truncation rises to
         ~20%, and the fixed MATH-500 validation every 50 steps falls from ~0.52 (300-400) at nearly every eval to ~0.43.
         The switch hurt; the best model is the one before it: roll back to 300-400 (global_step_400 on disk)."""),
    Case("bad-grpo-epoch2-memorisation-trl-state", scenario(bad_epoch2), w_epoch2, 824, (1000, 1200),
         rollback(350, 500, 600), "trl trl_state grpo multi_epoch memorisation eval_decline checkpoints",
         """TRL GRPO on a 1600-prompt train set, 3 epochs of 400 steps, checkpoint-1000 of 1200 (every 100 kept).
         The train reward jumps at each epoch boundary (400, 800) to ~0.85 and flat groups rise to ~0.65: the model
         is seeing the same prompts again and memorising them. The held-out eval_reward every 50 steps peaked at
         ~0.55 over 350-500 (the end of epoch 1 and just after) and has declined since to ~0.48. Roll back to
         350-500 (checkpoint-400 or -500)."""),
    Case("bad-22k-collapse-partial-recovery-verl-tb", scenario(bad_collapse_partial), w_collapse_partial, 825,
         (22000, 30000), rollback(10000, 14990, 15000),
         "verl tensorboard grpo long collapse partial_recovery checkpoints",
         """verl GRPO TensorBoard, 22000 of 30000 steps logged every step. The score reached ~0.73 by 10000 and held
         to 15000 (GSM8K validation ~0.61). At 15000 a collapse: grad-norm spike, entropy and KL spike, responses
         shrink, score falls to ~0.3. It recovers, but only to ~0.62 by 17500 and has been flat there for 4500
         steps, validation ~0.52, well below the pre-collapse level. The better model is behind: roll back to
         10000-14990 (global_step_14000 on disk)."""),
    Case("bad-language-mixing-custom-jsonl", scenario(bad_lang_mix), w_lang, 826, (1600, 3000),
         rollback(800, 1000, 1100), "custom_jsonl grpo language_mixing eval_decline checkpoints",
         """Hand-written GRPO loop (accuracy reward only, no language reward), gstep 1600 of 3000. From ~900 the
         responses start mixing scripts: stats/lang_consistency falls 0.985 -> ~0.61 and the mixed-language
         fraction at eval rises to ~0.3; correctness, flat at its best (~0.50) over 800-1000, has declined to
         ~0.41, and AIME accuracy every 100 gsteps from ~0.46 to ~0.40. Roll back to 800-1000 (gstep_000800 /
         gstep_001000 on disk)."""),
    Case("bad-lr-too-high-after-warmup-nemo-tb", scenario(bad_lr_too_high), w_lr_high, 827, (450, 1000),
         rollback(150, 200, 250), "nemo_rl tensorboard grpo learning_rate warmup instability eval_decline",
         """NeMo-RL GRPO, step 450 of 1000, linear warm-up to lr 3e-6 over 150 steps then constant. Reward and
         validation rise during warm-up (validation 0.38 -> ~0.50 at 150-200), and soon after the LR reaches its
         peak the run degrades: grad norm climbs 0.2 -> ~1.3, approx entropy 0.41 -> ~0.9, token_mult_prob_error
         creeps up, reward falls to ~0.30 and validation to ~0.34. Too high a learning rate; the best point is
         150-200 (results/grpo/step_150 and step_200 on disk). Roll back."""),
    Case("bad-finished-sparse-eval-best-midrun-wandb-csv", scenario(bad_finished_sparse), w_finished_sparse, 828,
         (5000, 5000), rollback(2500, 3000, 3500),
         "wandb_csv panel_export trl grpo finished sparse_eval eval_decline",
         """Two W&B panel exports of a finished TRL GRPO run (5000 of 5000 steps). Train reward keeps rising to the
         end (0.42 -> ~0.74), but the held-out accuracy evaluated every 500 steps peaked at ~0.57 at 2500-3000 and
         declined over the four later evals to ~0.52 at 5000. The final weights are not the best; checkpoints
         every 500 went to S3, so restore the one at 2500-3000. Roll back."""),
    Case("bad-repetition-heldout-falls-custom-csv", scenario(bad_repetition), w_repetition, 829, (1500, 2500),
         rollback(600, 700, 800), "custom_csv reward_model repetition overoptimization heldout_eval checkpoints",
         """Hand-written chat RLHF loop (REINFORCE with a value baseline, learned RM), update 1500 of 2500. The
         average return climbs the whole run, but from ~700 the policy learns a repetitive style: rep_4gram 0.03 ->
         ~0.27, distinct_2 0.61 -> ~0.40, responses lengthen; the held-out preference win-rate vs SFT (judged by a
         separate model, every 100 updates) peaked at ~0.61 at 600-700 and fell at every eval since to ~0.50. The
         RM is being exploited; roll back to 600-700 (update_00600.pt on disk)."""),
    Case("bad-code-visible-tests-hack-trl015-console", scenario(bad_visible_tests), w_visible, 830, (1200, 2000),
         rollback(500, 600, 700), "trl trl_console trl_0.15 grpo code reward_hacking hidden_tests eval_decline",
         """TRL 0.15 GRPO console (old key names: rewards/<fn>, completion_length), code generation, step 1200 of
         2000. The visible-tests reward rises to ~0.8 on train and eval alike, but the hidden-tests pass@1 that a
         callback logs at every eval peaked at ~0.41 at 500-600 and has fallen since to ~0.30 while KL picks up and
         completions get shorter: the policy special-cases the visible tests. Roll back to 500-600."""),
]

HEADER = """# Holdout set 8: hand-built runs written by make_holdout8.py, independent of the assessor, its judges and the
# generators of holdouts 1-7. Labels: what a careful practitioner should do with each run under DESIGN.md's
# decision contract; rollback_window is inclusive (from where the run first reached the level of its best to the
# newest step still that good before the damage); onset_step is where the problem becomes visible. Run
# `.venv/bin/python evals/holdout8/make_holdout8.py` once to write runs/ (gitignored).
"""


def write_run(case: Case, folder: Path) -> None:
    run = case.scenario(np.random.default_rng(case.seed), case.reached, case.planned)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    if "--check" in sys.argv:
        check(case, run)


def check(case: Case, run: Run) -> None:
    """Print what the label rests on: the smoothed train probe and the eval probe at the window, the best, the end."""
    lab = case.labels
    win, onset = lab.get("rollback_window"), lab.get("onset_step")
    print(f"\n== {case.name}: {lab['preferred']} window={win} onset={onset} reached={run.reached}/{run.planned}")
    tr, ev = run.probe
    if tr in run.m:
        y = run.m[tr]
        w = max(1, min(25, len(y) // 20))
        sm = np.convolve(y, np.ones(w) / w, mode="valid")
        st = run.steps[w - 1:]
        marks = sorted({int(x) for x in np.linspace(0, len(sm) - 1, 9).astype(int)})
        print(f"  {tr}~", " ".join(f"{int(st[i])}:{sm[i]:.3g}" for i in marks),
              f"| max {sm.max():.3g} at {int(st[int(np.argmax(sm))])}")
        if win:
            inside = (st >= win[0]) & (st <= win[1])
            print(f"  {tr}~ in window: {sm[inside].mean():.3g}; last {sm[-1]:.3g}")
    if ev and ev in run.ev:
        es, vs = run.ev[ev]
        print(f"  {ev}:", " ".join(f"{int(s)}:{v:.3g}" for s, v in zip(es, vs, strict=True))[:600],
              f"| max {vs.max():.3g} at {int(es[int(np.argmax(vs))])}")
    name = ev if ev in run.clean else tr
    if win and name in run.clean:  # the window the noise-free curve gives: within one noise sd of its best
        st, cl, sd = run.clean[name]
        tol = sd if name == ev else sd / 3
        best = int(np.argmax(cl))
        good = cl >= cl[best] - tol
        lo = int(np.argmax(good))
        hi = best
        while hi + 1 < len(cl) and good[hi + 1]:
            hi += 1
        print(f"  clean {name}: best {cl[best]:.3g}, within {tol:.3g} from {int(st[lo])} to {int(st[hi])}")
    if "kl" in run.m and case.name.startswith(("bad-late", "ok-kl")):
        k = run.m["kl"]
        print("  kl:", " ".join(f"{int(s)}:{v:.3g}" for s, v in zip(run.steps[::max(1, len(k) // 30)],
                                                                   k[::max(1, len(k) // 30)], strict=True)))


def main() -> None:
    build(HERE, "make_holdout8.py", "holdout8.yaml", "h8-", "holdout8", HEADER, CASES, write_run)


if __name__ == "__main__":
    main()
