"""Holdout set 21: blind-labelled RL post-training runs, written without looking at the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout21/make_holdout21.py           # writes runs/ (gitignored) and holdout21.yaml
    .venv/bin/python evals/holdout21/make_holdout21.py --check   # also prints levels and rollback windows

Every case is a noise-free story (a level per optimizer step for the train reward, the held-out evals and the side
signals) drawn through this set's own noise model and written the way one framework/version writes it.

Noise model (this set's own):
  * binary rewards: each step draws P prompts whose solve rates are logistic(c + tau * z), z ~ N(0, 1), with c chosen
    (Gauss-Hermite quadrature) so the expected solve rate equals the level; each prompt gets G Bernoulli rollouts.
    The sampling sd of one batch mean is sqrt(Var(q) / P + E[q(1-q)] / (P G)), from the same quadrature;
  * reward-model scores: level + a * u_prompt + b * e_sample (prompt and sample effects), batch mean logged;
  * preference accuracy (DPO): Binomial(B, level) / B per step;
  * loggers that average since the last log (TRL, HF) log the mean of the batches; the others log the current one;
  * held-out evals: Binomial(N, p) / N;
  * grad norm: level * exp(0.3 N(0,1)), times 1 + Pareto(1.5) on about one step in 40;
  * other side signals: AR(1) log-noise (rho 0.6, 3 % sd), or additive AR(1) noise for signed ones.

Labels are read from each story's noise-free levels. The rollback window runs from the first logged headline step
whose level is within one sampling sd of the best level (over the steps visible on disk) to the newest such step
not after the onset of the breakage; `--check` prints the numbers.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import (
    HEALTHY,
    Case,
    converged,
    dump_json,
    rollback,
    stop,
    stop_or_rollback,
    tb_file,
    trainer_state,
)

HERE = Path(__file__).resolve().parent
NOW = time.time()
TRAIN = "@train"
Level = Callable[[float], float]


# ------------------------------------------------------------------------------------------------- level vocabulary

def path(v0: float, *legs: tuple) -> Level:
    """A level that starts at v0 and moves leg by leg: (to_step, to_value[, how]); how = lin | sat | ease | jump.

    sat: fast then slow (exponential approach); ease: slow-fast-slow; jump: the new value right after the start.
    Before the first leg and after the last the level holds."""
    pts = [(0.0, v0, "lin")] + [(float(g[0]), float(g[1]), g[2] if len(g) > 2 else "lin") for g in legs]

    def f(s: float) -> float:
        for (s0, a, _), (s1, b, how) in pairwise(pts):
            if s <= s1:
                if s <= s0:
                    return a
                u = (s - s0) / (s1 - s0)
                if how == "sat":
                    u = (1 - math.exp(-4 * u)) / (1 - math.exp(-4))
                elif how == "ease":
                    u = u * u * (3 - 2 * u)
                elif how == "jump":
                    u = 1.0
                return a + (b - a) * u
        return pts[-1][1]
    return f


def flat(v: float) -> Level:
    return lambda s: v


def cosine(peak: float, warm: int, total: int, floor: float = 0.0) -> Level:
    def f(s: float) -> float:
        if s < warm:
            return peak * s / warm
        u = min(1.0, (s - warm) / max(1, total - warm))
        return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * u))
    return f


# -------------------------------------------------------------------------------------------------- the noise model

_GX, _GW = np.polynomial.hermite_e.hermegauss(32)
_GW = _GW / _GW.sum()


def _sig(x):
    return 1 / (1 + np.exp(-x))


@cache
def _shift(p: float, tau: float) -> float:
    lo, hi = -30.0, 30.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if float(_GW @ _sig(mid + tau * _GX)) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def binary_sd(p: float, tau: float, P: int, G: int) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    q = _sig(_shift(round(p, 4), tau) + tau * _GX)
    eq2 = float(_GW @ q**2)
    return math.sqrt(max(eq2 - p * p, 0) / P + max(p - eq2, 0) / (P * G))


@dataclass
class Story:
    reward: Level
    evals: dict[str, tuple[Level, int]] = field(default_factory=dict)  # eval key -> (level, N items)
    head: str = TRAIN
    kind: str = "bin"  # bin | score | pref
    P: int = 32
    G: int = 8
    tau: float = 1.3
    spread: tuple[float, float] = (0.8, 1.2)  # score rewards: prompt sd, sample sd
    log_every: int = 1
    averaged: bool = True  # the logger averages the batches since the last log (TRL/HF); else logs the current
    eval_every: int = 0
    eval_from: int = 0
    side: dict = field(default_factory=dict)  # key -> Level | (Level, sd, "mul" | "add")

    def sides(self) -> dict:
        base = {"entropy": flat(0.42), "len": flat(450.0), "trunc": flat(0.01), "gn": flat(0.25), "lr": flat(1e-6)}
        base.update(self.side)
        return base

    def eval_steps(self, upto: int) -> list[int]:
        if not self.evals:
            return []
        return list(range(self.eval_from, upto + 1, self.eval_every))

    def log_steps(self, upto: int) -> list[int]:
        return list(range(self.log_every, upto + 1, self.log_every))

    def draw(self, seed: int, upto: int) -> dict:
        """Every step is drawn from its own stream so a prefix is the same whatever `upto` is."""
        sides = self.sides()
        ar = {k: 0.0 for k in sides if sides[k] is not None}
        train, batches = [], []
        for s in range(1, upto + 1):
            rng = np.random.default_rng([seed, s])
            batches.append(self._batch(rng, self.reward(s)))
            for k in ar:
                ar[k] = 0.6 * ar[k] + 0.8 * rng.normal()
            if s % self.log_every:
                continue
            bs = batches if self.averaged else batches[-1:]
            row = {k: float(np.mean([b[k] for b in bs])) for k in bs[0]}
            batches = []
            for k, spec in sides.items():
                if spec is None:  # a key this trainer version does not log
                    row.pop(k, None)
                    continue
                lvl, sd, mode = spec if isinstance(spec, tuple) else (spec, 0.03, "mul")
                x = lvl(s)
                if k == "lr":
                    row[k] = x
                elif k == "gn":
                    g = x * math.exp(0.3 * rng.normal())
                    if rng.random() < 1 / 40:
                        g *= 1 + rng.pareto(1.5)
                    row[k] = g
                elif mode == "add":
                    row[k] = x + sd * ar[k]
                else:
                    row[k] = x * math.exp(sd * ar[k])
            train.append((s, row))
        ev = []
        for s in self.eval_steps(upto):
            rng = np.random.default_rng([seed, 10**7 + s])
            ev.append((s, {k: float(rng.binomial(n, min(max(lv(s), 0.0), 1.0)) / n)
                           for k, (lv, n) in self.evals.items()}))
        return dict(train=train, eval=ev)

    def _batch(self, rng: np.random.Generator, p: float) -> dict:
        if self.kind == "score":
            a, b = self.spread
            x = p + a * np.repeat(rng.normal(size=self.P), self.G) + b * rng.normal(size=self.P * self.G)
            x = x.reshape(self.P, self.G)
            return dict(reward=float(x.mean()), reward_std=float(x.std()), group_std=float(x.std(axis=1).mean()),
                        zero_std=0.0)
        if self.kind == "pref":
            acc = rng.binomial(self.P, min(max(p, 0), 1)) / self.P
            return dict(reward=float(acc))
        p = min(max(p, 1e-4), 1 - 1e-4)
        q = _sig(_shift(round(p, 4), self.tau) + self.tau * rng.normal(size=self.P))
        k = rng.binomial(self.G, q)
        x = (np.arange(self.G)[None, :] < k[:, None]).astype(float)
        same = (k == 0) | (k == self.G)
        return dict(reward=float(x.mean()), reward_std=float(x.std()), group_std=float(x.std(axis=1).mean()),
                    zero_std=float(same.mean()), pct0=float(100 * (k == 0).mean()),
                    pct1=float(100 * (k == self.G).mean()))

    # --- headline
    def head_level(self) -> Level:
        return self.reward if self.head == TRAIN else self.evals[self.head][0]

    def head_steps(self, upto: int) -> list[int]:
        return self.log_steps(upto) if self.head == TRAIN else self.eval_steps(upto)

    def head_sd(self, p: float) -> float:
        if self.head != TRAIN:
            n = self.evals[self.head][1]
            return math.sqrt(max(p * (1 - p), 1e-6) / n)
        n = self.log_every if self.averaged else 1
        if self.kind == "score":
            a, b = self.spread
            return math.sqrt((a * a / self.P + b * b / (self.P * self.G)) / n)
        if self.kind == "pref":
            return math.sqrt(p * (1 - p) / (self.P * n))
        return binary_sd(p, self.tau, self.P, self.G) / math.sqrt(n)


def window(story: Story, visible: int, onset: int) -> tuple[int, int]:
    lv, steps = story.head_level(), story.head_steps(visible)
    best = max(lv(s) for s in steps)
    sd = story.head_sd(best)
    good = [s for s in steps if lv(s) >= best - sd]
    return good[0], max(s for s in good if s <= onset)


# ----------------------------------------------------------------------------------------------------- the writers

def wtext(p: Path, text: str) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def r6(x: float) -> float:
    return float(f"{x:.6g}")


def rename(row: dict, vocab: dict) -> dict:
    """Canonical keys through the framework vocabulary; raw keys (with '/' or '_raw:' prefix) pass through."""
    out = {}
    for k, x in row.items():
        if k in vocab:
            if vocab[k]:
                out[vocab[k]] = x
        elif "/" in k or k.startswith("_raw:"):
            out[k.removeprefix("_raw:")] = x
    return out


TRL_GRPO = dict(reward="reward", reward_std="reward_std", zero_std="frac_reward_zero_std", kl="kl", entropy="entropy",
                len="completions/mean_length", trunc="completions/clipped_ratio", gn="grad_norm", lr="learning_rate",
                clip="clip_ratio/region_mean")
TRL_GRPO17 = {**TRL_GRPO, "entropy": None, "zero_std": None}  # v0.17: no entropy, no frac_reward_zero_std
TRL_DPO = dict(reward="rewards/accuracies", gn="grad_norm", lr="learning_rate")
TRL_PPO = dict(reward="objective/scores", kl="objective/kl", entropy="objective/entropy", lr="lr")
VERL = dict(reward="critic/score/mean", kl="actor/kl_loss", entropy="actor/entropy", len="response_length/mean",
            trunc="response_length/clip_ratio", gn="actor/grad_norm", lr="actor/lr", clip="actor/pg_clipfrac")
ORLHF = dict(reward="reward", group_std="group_reward_std", kl="kl", entropy="entropy_loss", len="response_length",
             trunc="truncated", gn="actor_grad_norm", lr="actor_lr", clip="ppo_clip_ratio")
NEMO = dict(reward="train/reward", kl="train/kl_penalty", entropy="train/approx_entropy",
            len="train/mean_gen_tokens_per_sample", trunc="train/truncation_rate", gn="train/grad_norm", lr="train/lr",
            pct0="train/baseline_reward/pct_0", pct1="train/baseline_reward/pct_1")


def at(run: dict, s: float) -> float:
    """Wall time at which step s was written."""
    return run["t_end"] - (run["reached"] - s) * run["sps"]


def stamp(run: dict, p: Path, s: float) -> None:
    run["stamps"].append((p, at(run, s)))


def w_trl_state(run: dict, folder: Path, vocab: dict = TRL_GRPO, save_every: int = 100, keep: int | None = None,
                logging_steps: int = 10, spe: int = 0, epochs: int = 1, out: str = "outputs") -> None:
    """HF/TRL output_dir: checkpoint-N/trainer_state.json (history up to N); rotation by save_total_limit;
    a top-level trainer_state.json with the summary row only when train() returned (save_state)."""
    planned, reached = run["planned"], run["reached"]
    spe = spe or planned
    rows = []
    for s, v in run["train"]:
        row = {k: r6(x) for k, x in rename(v, vocab).items()}
        row.update(loss=round(float(0.004 * math.sin(s / 7.0)), 4), epoch=round(s / spe, 4), step=s)
        rows.append(row)
    for s, v in run["eval"]:
        if s == 0:
            continue
        row = {k: r6(x) for k, x in v.items()}
        row.update(eval_loss=round(0.003 + 0.001 * math.cos(s), 4), eval_runtime=round(95.0 + (s % 7), 2),
                   eval_samples_per_second=5.3, eval_steps_per_second=0.17, epoch=round(s / spe, 4), step=s)
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r))
    kept = []
    for n in range(save_every, reached + 1, save_every):
        st = trainer_state([r for r in rows if r["step"] <= n], n, planned, logging_steps, save_every,
                           run["eval_every"] or None, round(n / spe, 4), epochs)
        ck = folder / out / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        (ck / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n')
        (ck / "adapter_model.safetensors").write_bytes(b"\0" * 64)
        (ck / "scheduler.pt").write_bytes(b"\0" * 16)
        for p in ck.iterdir():
            stamp(run, p, n)
        stamp(run, ck, n)
        kept.append(n)
        while keep and len(kept) > keep:
            old = folder / out / f"checkpoint-{kept.pop(0)}"
            for p in old.iterdir():
                p.unlink()
            old.rmdir()
    if run["finished"]:
        summary = dict(train_runtime=round(reached * run["sps"], 1), train_samples_per_second=0.9,
                       train_steps_per_second=round(1 / run["sps"], 4), total_flos=0.0, train_loss=0.0021,
                       epoch=round(reached / spe, 4), step=reached)
        st = trainer_state([*rows, summary], reached, planned, logging_steps, save_every, run["eval_every"] or None,
                           round(reached / spe, 4), epochs, training_stop=True)
        dump_json(folder / out / "trainer_state.json", st)


def _bar(s: int, total: int, sps: float) -> str:
    pct = int(100 * s / total)
    fill = int(10 * s / total)
    el, rem = int(s * sps), int((total - s) * sps)
    hms = lambda t: f"{t // 3600}:{t // 60 % 60:02d}:{t % 60:02d}"  # noqa: E731
    return f"{pct:3d}%|{'█' * fill}{' ' * (10 - fill)}| {s}/{total} [{hms(el)}<{hms(rem)}, {sps:.2f}s/it]"


def w_trl_console(run: dict, folder: Path, vocab: dict = TRL_GRPO, spe: int = 0, crash: str = "",
                  save_every: int = 0, name: str = "train.log", extra_row: Callable | None = None) -> None:
    """stdout of a TRL script under nohup: the HF progress bar and the Trainer's printed log dicts (no step key)."""
    planned, reached = run["planned"], run["reached"]
    spe = spe or planned
    ev = dict(run["eval"])
    lines = ["INFO:__main__:Loading dataset ...", "***** Running training *****",
             f"  Num examples = {spe * 16:,}", f"  Num Epochs = {max(1, round(planned / spe))}",
             f"  Total optimization steps = {planned:,}", "  Number of trainable parameters = 40,370,176"]
    for s, v in run["train"]:
        d = {"loss": round(float(0.004 * math.sin(s / 7.0)), 4)}
        d.update(rename(v, vocab))
        if extra_row:
            d.update(extra_row(s, v))
        d["epoch"] = round(s / spe, 4)
        lines.append(_bar(s, planned, run["sps"]))
        lines.append(repr(d))
        if s in ev and s:
            e = {"eval_loss": 0.0031}
            e.update(ev[s])
            e.update(eval_runtime=96.4, eval_samples_per_second=5.31, eval_steps_per_second=0.166,
                     epoch=round(s / spe, 4))
            lines.append(repr(e))
        if save_every and s % save_every == 0:
            lines.append(f"[INFO|trainer.py:3984] Saving model checkpoint to outputs/checkpoint-{s}")
    if crash:
        lines += crash.strip("\n").splitlines()
    elif run["finished"]:
        lines.append(repr({"train_runtime": round(reached * run["sps"], 2), "train_samples_per_second": 0.93,
                           "train_steps_per_second": round(1 / run["sps"], 3), "train_loss": 0.0017,
                           "epoch": round(reached / spe, 4)}))
        lines.append(_bar(reached, planned, run["sps"]))
        lines.append("Saving model checkpoint to outputs")
    wtext(folder / name, "\n".join(lines) + "\n")


def tb_path(folder: Path, t: float, host: str = "gpu-node-07", pid: int = 38211) -> Path:
    return folder / f"events.out.tfevents.{int(t)}.{host}.{pid}.0"


def w_tb(run: dict, folder: Path, vocab: dict, sub: str, train_prefix: str = "", eval_prefix: str = "",
         eval_map: Callable[[str], str] = lambda k: k) -> None:
    """One TensorBoard event file of simple_value scalars under `sub`."""
    evs = []
    for s, v in run["train"]:
        evs.append((at(run, s), s, {train_prefix + k: x for k, x in rename(v, vocab).items()}))
    for s, v in run["eval"]:
        evs.append((at(run, s) + 20, s, {eval_prefix + eval_map(k): x for k, x in v.items()}))
    evs.sort(key=lambda e: (e[1], e[0]))
    tb_file(tb_path(folder / sub, evs[0][0] - 60), evs)


def np2(x: float) -> str:
    return f"np.float64({x!r})"


def w_verl_console(run: dict, folder: Path, name: str = "verl_grpo.log", wrap: bool = True,
                   ckpt_every: int = 0) -> None:
    """verl LocalLogger lines behind the Ray TaskRunner prefix; 'Total training steps' up front, final val at the end."""
    pre = "(TaskRunner pid=51877) " if wrap else ""
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        rows.setdefault(s, {}).update(rename(v, VERL))
        rows[s]["training/global_step"] = s
        rows[s]["timing_s/gen"] = 40 + v.get("len", 400) / 25
        rows[s]["timing_s/step"] = rows[s]["timing_s/gen"] + 31
    lines = ["2026-11-26 07:58:11,004\tINFO worker.py:1852 -- Started a local Ray instance.",
             f"{pre}Size of train dataloader: 467, Size of val dataloader: 1",
             f"{pre}Total training steps: {run['planned']}"]
    for s in sorted(rows):
        body = " - ".join(f"{k}:{np2(x) if isinstance(x, float) else x}" for k, x in rows[s].items())
        lines.append(f"{pre}step:{s} - {body}")
        if ckpt_every and s and s % ckpt_every == 0:
            lines.append(f"{pre}local_global_step_folder: checkpoints/verl_grpo/exp/global_step_{s}")
    if run["finished"]:
        last = dict(run["eval"][-1][1]) if run["eval"] else {}
        lines.append(f"{pre}'Final validation metrics: {last!r}'")
    wtext(folder / name, "\n".join(lines) + "\n")


def w_verl_jsonl(run: dict, folder: Path, project: str, exp: str, max_len: int = 4096) -> None:
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        rows.setdefault(s, {}).update(rename(v, VERL))
        rows[s]["training/global_step"] = s
    p = folder / project / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps({"step": s, "data": rows[s]}) + "\n" for s in sorted(rows)))
    hy = folder / ".hydra" / "config.yaml"
    hy.parent.mkdir(parents=True, exist_ok=True)
    hy.write_text(f"data:\n  max_response_length: {max_len}\n  train_batch_size: 512\ntrainer:\n"
                  f"  project_name: {project}\n  experiment_name: {exp}\n  logger:\n  - console\n  - file\n"
                  f"  total_epochs: 100\n  total_training_steps: {run['planned']}\n  test_freq: {run['eval_every']}\n"
                  f"  save_freq: 100\n")
    stamp(run, hy, 0)


def w_openrlhf_console(run: dict, folder: Path, ckpt_every: int = 0, name: str = "train_ppo.log") -> None:
    lines = ["[2026-11-26 06:12:40,117] [INFO] [real_accelerator.py:219:get_accelerator] Setting ds_accelerator to cuda",
             f"num_update_steps_per_episodes: {run['planned']}; max_steps: {run['planned']}"]
    ev = dict(run["eval"])
    for s, v in run["train"]:
        d = rename(v, ORLHF)
        lines.append(f"Episode [1/1]: {_bar(s, run['planned'], run['sps'])}")
        lines.append(f"✨ Global step {s}: {d!r}")
        if s in ev:
            lines.append(f"Evaluation completed in 41.07s, global_step {s}, eval_metrics: {ev[s]!r}")
        if ckpt_every and s % ckpt_every == 0:
            ck = folder / "ckpt" / "checkpoints_ppo" / f"global_step{s}"
            ck.mkdir(parents=True)
            (ck / "client_states.json").write_text(json.dumps({"global_step": s, "episode": 0}) + "\n")
            stamp(run, ck / "client_states.json", s)
            stamp(run, ck, s)
    wtext(folder / name, "\n".join(lines) + "\n")


def w_wandb_csv(run: dict, folder: Path, panels: list[str], vocab: dict, display: str, prefix: str = "train/",
                points: int = 400, summary: dict | None = None, config: dict | None = None) -> None:
    """W&B 'Export panel data' CSVs (x = train/global_step, bucketed MIN/MAX), plus the run's config.yaml and,
    for a run that ended, its wandb-summary.json, downloaded beside them."""
    series: dict[str, list] = {}
    for s, v in run["train"]:
        for k, x in rename(v, vocab).items():
            series.setdefault(prefix + k, []).append((s, x))
    for s, v in run["eval"]:
        for k, x in v.items():
            series.setdefault(k, []).append((s, x))
    for i, key in enumerate(panels):
        pts = series[key]
        b = max(1, math.ceil(len(pts) / points))
        col = f"{display} - {key}"
        fn = folder / f"wandb_export_2026-11-26T0{i}_{14 + i}_0{i}.{311 + i}+01_00.csv"
        with fn.open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow(["train/global_step", col, col + "__MIN", col + "__MAX"])
            for j in range(0, len(pts), b):
                c = pts[j:j + b]
                xs = [x for _, x in c]
                w.writerow([c[len(c) // 2][0], f"{float(np.mean(xs)):.6g}", f"{min(xs):.6g}", f"{max(xs):.6g}"])
    if config:
        (folder / "config.yaml").write_text("".join(f"{k}:\n  desc: null\n  value: {v}\n" for k, v in config.items()))
    if summary is not None:
        last = {k: pts[-1][1] for k, pts in series.items()}
        last.update(summary)
        (folder / "wandb-summary.json").write_text(json.dumps(last) + "\n")


def w_mlflow_files(run: dict, folder: Path, vocab: dict, every: int = 10, status: int = 1) -> None:
    """MLflow file store filled by the HF MLflowCallback: raw keys, '/' as nested folders."""
    eid, rid = "602211937485120518", "a3f9c0d2e1b84c7f9e6d5a4b3c2d1e0f"
    ex = folder / "mlruns" / eid
    rd = ex / rid
    for d in ("params", "tags", "artifacts", "metrics"):
        (rd / d).mkdir(parents=True, exist_ok=True)
    t0 = int(at(run, 0) * 1000)
    end = int(run["t_end"] * 1000) if status == 3 else None
    (ex / "meta.yaml").write_text(f"artifact_location: file:./mlruns/{eid}\ncreation_time: {t0}\nexperiment_id: "
                                  f"'{eid}'\nlast_update_time: {t0}\nlifecycle_stage: active\nname: grpo-math\n")
    (rd / "meta.yaml").write_text(f"artifact_uri: file:./mlruns/{eid}/{rid}/artifacts\nend_time: "
                                  f"{end if end else 'null'}\nentry_point_name: ''\nexperiment_id: '{eid}'\n"
                                  f"lifecycle_stage: active\nrun_id: {rid}\nrun_name: qwen2.5-3b-grpo-mathverify\n"
                                  f"run_uuid: {rid}\nsource_name: ''\nsource_type: 4\nsource_version: ''\n"
                                  f"start_time: {t0}\nstatus: {status}\ntags: []\nuser_id: ml\n")
    (rd / "tags" / "mlflow.runName").write_text("qwen2.5-3b-grpo-mathverify")
    for k, v in dict(max_steps=run["planned"], logging_steps=every, eval_steps=run["eval_every"],
                     learning_rate="1e-06", num_generations=8).items():
        (rd / "params" / k).write_text(str(v))
    lines: dict[str, list[str]] = {}
    for s, v in run["train"]:
        if s % every:
            continue
        for k, x in rename(v, vocab).items():
            lines.setdefault(k, []).append(f"{int(at(run, s) * 1000)} {x!r} {s}")
    for s, v in run["eval"]:
        for k, x in v.items():
            lines.setdefault(k, []).append(f"{int(at(run, s) * 1000) + 31000} {x!r} {s}")
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


def w_mlflow_db(run: dict, folder: Path, vocab: dict, status: str = "RUNNING") -> None:
    db = sqlite3.connect(folder / "mlflow.db")
    db.executescript("""
    CREATE TABLE experiments (experiment_id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(256) NOT NULL UNIQUE,
        artifact_location VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
    CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20),
        source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
        start_time BIGINT, end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50),
        lifecycle_stage VARCHAR(20), artifact_uri VARCHAR(200), experiment_id INTEGER);
    CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL,
        run_uuid VARCHAR(32) NOT NULL, step BIGINT DEFAULT '0' NOT NULL, is_nan BOOLEAN DEFAULT '0' NOT NULL,
        PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
    CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT,
        step BIGINT NOT NULL, is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL, PRIMARY KEY (key, run_uuid));
    CREATE TABLE params (key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) NOT NULL,
        PRIMARY KEY (key, run_uuid));
    CREATE TABLE tags (key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL,
        PRIMARY KEY (key, run_uuid));
    """)
    rid = "7d41be0c93aa4f0e8b2f6c1d5e9a3b70"
    t0 = int(at(run, 0) * 1000)
    end = int(run["t_end"] * 1000) if status == "FINISHED" else None
    db.execute("INSERT INTO experiments VALUES (1, 'dpo-ultrafeedback', 'mlflow-artifacts:/1', 'active', ?, ?)",
               (t0, t0))
    db.execute("INSERT INTO runs VALUES (?, 'dpo-llama3-8b-b0.1', 'UNKNOWN', '', '', 'ml', ?, ?, ?, NULL, '', 'active',"
               " ?, 1)", (rid, status, t0, end, f"mlflow-artifacts:/1/{rid}/artifacts"))
    for k, v in dict(max_steps=run["planned"], num_train_epochs=2, beta=0.1, logging_steps=10).items():
        db.execute("INSERT INTO params VALUES (?, ?, ?)", (k, str(v), rid))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', 'dpo-llama3-8b-b0.1', ?)", (rid,))
    latest = {}
    recs = [(k, x, int(at(run, s) * 1000), s) for s, v in run["train"] for k, x in rename(v, vocab).items()]
    recs += [(k, x, int(at(run, s) * 1000) + 45000, s) for s, v in run["eval"] for k, x in v.items()]
    for k, x, ts, s in recs:
        db.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, 0)", (k, x, ts, rid, s))
        latest[k] = (k, x, ts, s, 0, rid)
    db.executemany("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", list(latest.values()))
    db.commit()
    db.close()


def w_trackio(run: dict, folder: Path, vocab: dict, project: str, name: str, config: dict) -> None:
    d = folder / "trackio"
    d.mkdir(parents=True)
    db = sqlite3.connect(d / f"{project}.db")
    db.executescript("""
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, run_name TEXT NOT NULL,
        step INTEGER NOT NULL, metrics TEXT NOT NULL);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_name TEXT NOT NULL, config TEXT NOT NULL,
        created_at TEXT NOT NULL, UNIQUE(run_name));
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, run_name TEXT NOT NULL,
        metrics TEXT NOT NULL);
    """)
    iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))  # noqa: E731
    db.execute("INSERT INTO configs (run_name, config, created_at) VALUES (?, ?, ?)",
               (name, json.dumps(config), iso(at(run, 0))))
    rows = [(s, 0, {**{"train/" + k: x for k, x in rename(v, vocab).items()}, "train/global_step": s})
            for s, v in run["train"]]
    rows += [(s, 1, {**{"eval/" + k.removeprefix("eval_"): x for k, x in v.items()}, "train/global_step": s})
             for s, v in run["eval"] if s]
    for s, _, m in sorted(rows, key=lambda r: (r[0], r[1])):
        db.execute("INSERT INTO metrics (timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?)",
                   (iso(at(run, s)), name, s, json.dumps(m)))
    db.commit()
    db.close()


def w_csv(run: dict, folder: Path, cols: list[tuple[str, Callable]], name: str = "metrics.csv",
          eol: str = "\n") -> None:
    """A hand-written loop's CSV: one row per logged step; eval columns empty except on eval steps."""
    ev = dict(run["eval"])
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator=eol)
        w.writerow([c for c, _ in cols])
        for s, v in run["train"]:
            w.writerow([fn(s, v, ev.get(s)) for _, fn in cols])


def w_jsonl(run: dict, folder: Path, train: Callable, evl: Callable, name: str, config: dict | None = None) -> None:
    out = []
    ev = dict(run["eval"])
    for s, v in run["train"]:
        out.append(json.dumps(train(s, v)))
        if s in ev:
            out.append(json.dumps(evl(s, ev[s])))
    if 0 in ev:
        out.insert(0, json.dumps(evl(0, ev[0])))
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(out) + "\n")
    if config:
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        stamp(run, folder / "config.json", 0)


def fx(fmt: str, key: str) -> Callable:
    return lambda s, v, e: format(v[key], fmt)


def fe(fmt: str, key: str) -> Callable:
    return lambda s, v, e: format(e[key], fmt) if e else ""


# ------------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable  # (run, folder) -> None
    seed: int
    reached: int
    planned: int
    label: str  # ok | conv | stop | rb | sor
    tags: str
    why: str
    onset: int | None = None
    visible: int | None = None  # last headline step on disk (defaults to reached)
    finished: bool = False
    age_min: float = 5.0
    sps: float = 30.0  # seconds per step

    def labels(self) -> dict:
        if self.label == "ok":
            return HEALTHY
        if self.label == "conv":
            return converged()
        if self.label == "stop":
            return stop(self.onset)
        lo, hi = window(self.story, self.visible or self.reached, self.onset)
        return (rollback if self.label == "rb" else stop_or_rollback)(lo, hi, self.onset)

    def case(self) -> Case:
        lab = self.labels()
        why = self.why
        if "rollback_window" in lab:
            lo, hi = lab["rollback_window"]
            why = why.replace("{lo}", str(lo)).replace("{hi}", str(hi))
        return Case(self.name, lambda *a: None, self.write, self.seed, (self.reached, self.planned), lab,
                    self.tags, why)


def W(fn: Callable, **kw) -> Callable:
    return lambda run, folder: fn(run, folder, **kw)


EV_TRL = "eval_rewards/accuracy_reward/mean"
GSM = "val-core/openai/gsm8k/acc/mean@1"

# ---- series A: one TRL GRPO run (console log) seen at three points; it saturates at ~750 of 1000
A_STORY = Story(path(0.30, (750, 0.665, "sat")), {"eval_reward": (path(0.28, (750, 0.585, "sat")), 600)},
                head="eval_reward", log_every=10, eval_every=50, eval_from=50, P=16, G=8,
                side=dict(kl=path(0.0, (750, 0.021, "sat")), entropy=path(0.52, (750, 0.31, "sat")),
                          len=path(310, (750, 455, "sat")), trunc=flat(0.006), gn=flat(0.18),
                          lr=cosine(1e-6, 30, 1000)))
A_WRITE = W(w_trl_console, vocab=TRL_GRPO, save_every=100)

# ---- series B: one TRL GRPO run (checkpoint folders) seen at two points; good stretch 900-1300, collapse at 1320
B_STORY = Story(path(0.35, (900, 0.68, "sat"), (1300, 0.69), (1330, 0.66), (1400, 0.22, "sat")),
                {EV_TRL: (path(0.33, (900, 0.55, "sat"), (1300, 0.565), (1330, 0.54), (1400, 0.30, "sat")), 800)},
                head=EV_TRL, log_every=10, eval_every=50, eval_from=50, P=32, G=8,
                side=dict(kl=path(0.0, (900, 0.028, "sat"), (1320, 0.032), (1400, 0.61, "sat")),
                          entropy=path(0.48, (900, 0.30, "sat"), (1320, 0.29), (1380, 0.02, "sat")),
                          len=path(520, (900, 640), (1320, 650), (1400, 1010)),
                          trunc=path(0.01, (1320, 0.012), (1400, 0.21)),
                          gn=path(0.22, (1320, 0.2), (1340, 1.4), (1400, 0.9)), lr=flat(1e-6),
                          clip=flat(0.0)))
B_WRITE = W(w_trl_state, vocab=TRL_GRPO, save_every=100)

SPECS: list[Spec] = [
    # ============================================================ healthy look-alikes (continue)
    Spec("ok-rloo-slow-linear-climb-kl-tracks-reward-trl-state-keep3",
         Story(path(0.18, (1400, 0.42), (3000, 0.55, "sat")),
               {"eval_reward": (path(0.21, (1400, 0.385), (3000, 0.47, "sat")), 500)},
               head="eval_reward", log_every=10, eval_every=100, eval_from=100, P=32, G=4,
               side=dict(kl=path(0.0, (1400, 0.058)), entropy=path(0.61, (1400, 0.47)), len=path(380, (1400, 520)),
                         gn=flat(0.31), lr=flat(7e-7), clip=flat(0.012))),
         W(w_trl_state, vocab=TRL_GRPO, save_every=200, keep=3), 2101, 1400, 3000, "ok",
         "healthy trl trainer-state rloo slow-learner checkpoint-rotation kl-rising",
         "TRL RLOO (v0.22+ GRPO-style keys, beta 0.05 so kl is logged), 1400 of 3000 steps, checkpoints every 200 "
         "with save_total_limit 3 (1000, 1200, 1400 left). A slow learner: the train reward climbs linearly "
         "0.18 -> 0.42 (about +0.017 per 100 steps) and the held-out eval_reward (N=500, sd 0.022) 0.21 -> 0.385, "
         "so no two neighbouring evals differ by much, but every 400-step stretch gains ~0.05 (over 2 sd). KL grows 0 -> 0.06 "
         "in step with the reward, entropy eases 0.61 -> 0.47, lengths grow. Still improving with more than half the "
         "budget left: continue.", sps=26, age_min=4),
    Spec("ok-third-plateau-after-two-stairs-verl-console",
         Story(path(0.30, (120, 0.44, "sat"), (260, 0.445), (360, 0.55, "ease"), (520, 0.555), (620, 0.63, "ease"),
                    (760, 0.635), (1500, 0.70)),
               {"val-core/math500/acc/mean@1": (path(0.28, (120, 0.40, "sat"), (260, 0.405), (360, 0.49, "ease"),
                                                     (520, 0.495), (620, 0.56, "ease"), (760, 0.565), (1500, .62)),
                                                500)},
               head="val-core/math500/acc/mean@1", eval_every=20, P=64, G=8,
               side=dict(kl=path(0.0, (120, 0.004), (360, 0.009), (620, 0.016), (760, 0.017)),
                         entropy=path(0.45, (120, 0.38), (260, 0.40), (360, 0.33), (520, 0.35), (620, 0.29),
                                      (760, 0.31)),
                         len=path(600, (120, 680), (360, 900), (620, 1150), (760, 1180)),
                         trunc=path(0.004, (760, 0.02)), gn=flat(0.12), lr=flat(1e-6), clip=flat(0.0021))),
         W(w_verl_console, ckpt_every=100), 2102, 760, 1500, "ok",
         "healthy verl console staircase plateau numpy2",
         "verl GRPO on MATH, console log (numpy-2 value reprs), 760 of 1500 steps. The curve is a staircase: "
         "val acc (N=500, sd 0.022) climbs to 0.40 by 120, holds to 260, climbs to 0.49 by 360, holds to 520, "
         "climbs to 0.56 by 620 and has held at ~0.565 for 140 steps. The two earlier flats lasted 140 and 160 steps "
         "and each ended in a new rise (entropy relaxes on each flat and drops on each rise, lengths step up); KL is "
         "small and flat on the plateaus; nothing degrades. A flat stretch no longer than the earlier ones, half the "
         "budget left: continue.", sps=95, age_min=3),
    Spec("ok-eval-n120-jumpy-level-rising-openrlhf-tb",
         Story(path(0.35, (600, 0.52, "sat"), (2000, 0.60, "sat")),
               {"eval_olympiad_sub_pass1": (path(0.22, (600, 0.31, "sat"), (2000, 0.36, "sat")), 120)},
               head="eval_olympiad_sub_pass1", averaged=False, eval_every=25, P=128, G=8,
               side=dict(kl=path(0.0, (600, 0.012, "sat")), entropy=path(0.58, (600, 0.46)),
                         len=path(1400, (600, 1900)), trunc=path(0.02, (600, 0.035)), gn=flat(0.09), lr=flat(5e-7),
                         clip=flat(0.0008), group_std=None)),
         W(w_tb, vocab=ORLHF, sub="logs/tensorboard/qwen25-7b-reinforcepp", train_prefix="train/",
           eval_prefix="eval/"), 2103, 600, 2000, "ok",
         "healthy tensorboard openrlhf small-eval noisy-eval",
         "OpenRLHF REINFORCE++ (TensorBoard only), 600 steps, live. The held-out eval is a 120-problem olympiad "
         "subset, so one eval has sd ~0.042: consecutive evals jump by 0.05-0.08 and several late evals read below "
         "earlier ones. The level underneath rises 0.22 -> 0.31 and the train reward (128 prompts x 8, sd ~0.02) "
         "climbs steadily 0.35 -> 0.52 with the slope still positive; KL small, entropy easing, lengths growing "
         "slowly, truncation ~3 %. Nothing has broken; the dips are sampling noise: continue.", sps=70, age_min=6),
    Spec("ok-warmup-end-instability-dip-recovers-hf-tb",
         Story(path(0.40, (180, 0.55, "sat"), (240, 0.47), (320, 0.56), (520, 0.61), (1500, 0.68, "sat")),
               {EV_TRL: (path(0.38, (200, 0.50, "sat"), (250, 0.455), (320, 0.51), (520, 0.55), (1500, 0.60)), 500)},
               head=EV_TRL, log_every=10, eval_every=50, P=16, G=8,
               side=dict(kl=path(0.0, (200, 0.004), (230, 0.021), (320, 0.009), (520, 0.012)),
                         entropy=path(0.44, (200, 0.40), (230, 0.55), (320, 0.41), (520, 0.38)),
                         len=path(400, (520, 470)), gn=path(0.2, (200, 0.22), (225, 0.9), (300, 0.25), (520, 0.24)),
                         lr=path(0.0, (200, 3e-6), (1500, 3e-7)), clip=flat(0.0))),
         W(w_tb, vocab=TRL_GRPO, sub="outputs/runs/Nov26_06-40-12_gpu-node-03", train_prefix="train/",
           eval_prefix="eval/", eval_map=lambda k: k.removeprefix("eval_")), 3104, 520, 1500, "ok",
         "healthy tensorboard trl dip-recovers warmup",
         "TRL GRPO (v0.21) logging to TensorBoard through the HF callback, 520 of 1500 steps. Linear warmup to "
         "3e-6 ends at step 200; right after it the grad norm jumps 0.2 -> 0.9, KL 0.004 -> 0.021, entropy 0.40 -> "
         "0.55 and the train reward dips 0.55 -> 0.47; held-out accuracy (N=500) dips 0.50 -> 0.455 at 250. As the "
         "decaying LR comes down everything settles: by 320 the reward is back at 0.56, and it is at a new high "
         "0.61 (eval 0.55) at 520, still rising. The current weights are the best so far: continue.",
         sps=40, age_min=2),
    Spec("ok-120-of-2000-hard-task-barely-moving-mlflow-files",
         Story(path(0.06, (120, 0.095), (2000, 0.40, "sat")),
               {EV_TRL: (path(0.05, (120, 0.068), (2000, 0.35, "sat")), 500)},
               head=TRAIN, log_every=5, eval_every=50, P=32, G=16, tau=1.6,
               side=dict(kl=path(0.0, (120, 0.0009)), entropy=path(0.71, (120, 0.69)), len=path(1210, (120, 1260)),
                         trunc=flat(0.04), gn=flat(0.06), lr=path(0, (50, 1e-6)), clip=flat(0.0))),
         W(w_mlflow_files, vocab=TRL_GRPO, every=5), 2105, 120, 2000, "ok",
         "healthy mlflow-files early hard-task zero-std",
         "TRL GRPO with the MLflow callback (file store), hard competition maths, 120 of 2000 planned steps (6 %). "
         "Most groups are all-wrong (frac_reward_zero_std ~0.8), so the reward sits at 0.06-0.10 and each logged "
         "point is noisy (sd ~0.02); the level has moved 0.06 -> 0.095 and the evals at 50 and 100 read ~0.06. KL is "
         "tiny but growing, entropy and lengths stable, LR warmup just finished. Far too early to call a hard task "
         "unlearnable: continue.", sps=55, age_min=3),
    Spec("ok-finished-800-of-800-still-rising-extend-hand-csv",
         Story(path(0.25, (800, 0.52)), {"heldout_acc": (path(0.28, (300, 0.37), (800, 0.47)), 500)},
               head="heldout_acc", eval_every=50, P=8, G=8,
               side=dict(kl=path(0.0, (800, 0.035)), entropy=path(0.9, (800, 0.7)), len=path(210, (800, 290)),
                         gn=flat(0.8), lr=flat(2e-6), loss=(flat(0.0), 0.05, "add"))),
         W(w_csv, cols=[("step", lambda s, v, e: s), ("total_steps", lambda s, v, e: 800),
                        ("loss", fx(".5f", "loss")), ("reward_mean", fx(".4f", "reward")),
                        ("reward_std", fx(".4f", "reward_std")), ("resp_tokens", fx(".1f", "len")),
                        ("kl_ref", fx(".5f", "kl")), ("entropy", fx(".4f", "entropy")), ("grad_norm", fx(".4f", "gn")),
                        ("lr", fx(".1e", "lr")), ("heldout_acc", fe(".4f", "heldout_acc"))], name="logs/grpo_metrics.csv"),
         6106, 800, 800, "ok",
         "healthy custom-csv finished still-rising extend",
         "Hand-written GRPO loop (Qwen3-1.7B, 8 prompts x 8 rollouts per step) logging one CSV row per step with "
         "total_steps=800; the file ends at step 800, so the run is finished. Held-out accuracy (N=500, sd 0.022) "
         "rose 0.28 -> 0.37 by 300 and 0.37 -> 0.47 over the last 500 steps at a steady +0.01 per 50, with no sign "
         "of flattening; the train reward rises linearly 0.25 -> 0.52; KL and entropy move slowly. The final weights "
         "are the best, and the curve says more steps would still pay: continue (extend the run).",
         finished=True, sps=22, age_min=40),
    Spec("ok-dapo-length-grows-to-60pct-of-cap-clip-higher-verl-jsonl",
         Story(path(0.22, (900, 0.46), (2000, 0.55, "sat")),
               {"val-core/math500/acc/mean@4": (path(0.40, (900, 0.58), (2000, 0.64, "sat")), 500)},
               head="val-core/math500/acc/mean@4", eval_every=50, P=64, G=16,
               side=dict(len=path(900, (900, 4800)), trunc=path(0.005, (900, 0.04)),
                         entropy=path(0.55, (300, 0.50), (900, 0.62)), gn=flat(0.14), lr=flat(1e-6),
                         clip=flat(0.0035), **{"train/num_gen_batches": (path(1.0, (900, 2.0)), 0.1, "mul")})),
         W(w_verl_jsonl, project="dapo", exp="qwen25-32b-dapo-clip-higher", max_len=8192), 2107, 900, 2000, "ok",
         "healthy verl-jsonl dapo length-growth entropy-rise",
         "verl DAPO (clip-higher, dynamic sampling, max_response_length 8192) with the file logger, 900 of 2000 "
         "steps. Responses grow 900 -> 4800 tokens and the truncated share 0.5 % -> 4 %; entropy first dips and then "
         "rises 0.50 -> 0.62 (clip-higher keeps exploration up); num_gen_batches creeps 1 -> 2 as easy prompts are "
         "filtered out. These are the expected DAPO dynamics, not a breakage: the score climbs 0.22 -> 0.46 and "
         "MATH-500 mean@4 (N=500) 0.40 -> 0.58, still rising. Continue.", sps=240, age_min=9),
    Spec("ok-dpo-logps-chosen-sink-eval-pref-acc-rises-trl-console",
         Story(path(0.55, (900, 0.78, "sat")), {"eval_rewards/accuracies": (path(0.58, (900, 0.70, "sat"),
                                                                                (1600, 0.72, "sat")), 1000)},
               head="eval_rewards/accuracies", kind="pref", P=32, log_every=10, eval_every=100, eval_from=100,
               side=dict(gn=flat(9.0), lr=cosine(5e-7, 80, 1600),
                         **{"rewards/chosen": (path(0.0, (900, -0.9)), 0.08, "add"),
                            "rewards/rejected": (path(0.0, (900, -2.7)), 0.1, "add"),
                            "rewards/margins": (path(0.0, (900, 1.8, "sat")), 0.08, "add"),
                            "logps/chosen": (path(-290, (900, -331)), 0.01, "mul"),
                            "logps/rejected": (path(-305, (900, -395)), 0.01, "mul"),
                            "_raw:loss": (path(0.693, (900, 0.47, "sat")), 0.04, "mul")})),
         W(w_trl_console, vocab=TRL_DPO, spe=800), 2108, 900, 1600, "ok",
         "healthy trl-console dpo likelihood-displacement",
         "TRL DPO (beta 0.1), console log of the Trainer's dicts, 900 of 1600 steps (2 epochs of 800). Train "
         "preference accuracy 0.55 -> 0.78, margins 0 -> 1.8; eval_rewards/accuracies (N=1000 pairs, sd 0.015) "
         "0.58 -> 0.70 and still rising. Both implicit rewards go negative and logps/chosen sinks -290 -> -331: a "
         "moderate likelihood displacement that is usual for DPO while the held-out preference accuracy still "
         "improves. Nothing to stop: continue.", sps=18, age_min=7),
    Spec("ok-ppo-rm-score-and-kl-nats-climb-together-wandb-csv",
         Story(path(-1.8, (1800, 0.9, "sat"), (4000, 1.4, "sat")), kind="score", spread=(1.1, 0.9), P=64, G=1,
               side=dict(kl=path(0.0, (1800, 9.0, "sat")), entropy=path(41.0, (1800, 28.0)), lr=flat(3e-6),
                         **{"objective/rlhf_reward": (path(-1.8, (1800, 0.45, "sat")), 0.05, "add"),
                            "policy/clipfrac_avg": (flat(0.06), 0.05, "mul"),
                            "val/ratio": (flat(1.0), 0.004, "add")})),
         W(w_wandb_csv, vocab=TRL_PPO, display="ppo-tldr-1b-rm6.9b",
           panels=["train/objective/scores", "train/objective/kl", "train/objective/rlhf_reward",
                   "train/objective/entropy", "train/policy/clipfrac_avg"],
           config=dict(total_episodes=409600, per_device_train_batch_size=16, gradient_accumulation_steps=8,
                       num_ppo_epochs=4, kl_coef=0.05, learning_rate=3e-6)), 2109, 1800, 3200, "ok",
         "healthy wandb-csv ppo reward-model kl-rising",
         "TRL PPO (v0.12+ PPOTrainer) on TL;DR with a 6.9B reward model; W&B panel exports (bucketed means with "
         "MIN/MAX) plus the run config (409,600 episodes / 128 per update = 3200 updates), 1800 updates in. The RM "
         "score climbs -1.8 -> 0.9 and is still rising, KL to the SFT policy grows 0 -> 9 nats, and the KL-shaped "
         "rlhf_reward rises with it (-1.8 -> 0.45), which is the signal the TRL docs say should keep going up; "
         "clipfrac ~0.06 and the ratio ~1.0. Expected PPO-RLHF progress: continue.", sps=35, age_min=12),
    Spec("ok-curriculum-stage-switch-train-drops-eval-rises-hand-jsonl",
         Story(path(0.50, (400, 0.78, "sat"), (401, 0.41, "jump"), (700, 0.52, "sat"), (1500, 0.62)),
               {"eval/math500_acc": (path(0.30, (400, 0.44, "sat"), (700, 0.49), (1500, 0.56)), 500)},
               head="eval/math500_acc", eval_every=50, P=16, G=8,
               side=dict(kl=path(0.0, (400, 0.02), (700, 0.031)), entropy=path(0.5, (400, 0.36), (420, 0.45),
                                                                               (700, 0.40)),
                         len=path(300, (400, 420), (420, 760), (700, 840)), gn=flat(0.35), lr=flat(1e-6),
                         stage=(path(1, (400, 1), (401, 2, "jump")), 0.0, "add"))),
         W(w_jsonl, name="run/log.jsonl",
           train=lambda s, v: {"it": s, "stage": int(v["stage"]), "train_reward": round(v["reward"], 4),
                               "kl": round(v["kl"], 5), "ent": round(v["entropy"], 4), "gen_len": round(v["len"], 1),
                               "gnorm": round(v["gn"], 4), "lr": v["lr"]},
           evl=lambda s, e: {"it": s, "eval/math500_acc": e["eval/math500_acc"]},
           config={"max_iters": 1500, "curriculum": {"1": "levels 1-2 until it 400", "2": "levels 3-5"},
                   "group_size": 8, "prompts_per_iter": 16}), 2110, 700, 1500, "ok",
         "healthy custom-jsonl curriculum train-drop",
         "Hand-written GRPO loop logging JSONL with its own keys (it, stage, train_reward, kl, ent, gen_len). At it "
         "400 the curriculum switches from MATH levels 1-2 to levels 3-5 (the stage field goes 1 -> 2; config.json "
         "says so): the train reward drops at once 0.78 -> 0.41 and lengths jump 420 -> 760, then the reward climbs "
         "again to 0.52 by 700. The held-out MATH-500 accuracy (N=500) never notices the switch except as a faster "
         "rise: 0.30 -> 0.44 at 400 -> 0.49 at 700. The drop is the harder data, not a collapse: continue.",
         sps=60, age_min=5),
    Spec("ok-series-a-at-300-rising-trl-console", A_STORY, A_WRITE, 2111, 300, 1000, "ok",
         "healthy trl-console series-a early",
         "Series A (one TRL GRPO run seen three times), check at 300 of 1000. The train reward has climbed 0.30 -> "
         "~0.56 and eval_reward (N=600, sd 0.02) 0.28 -> ~0.49 at 300, still rising fast; KL small, entropy easing. "
         "Early and improving: continue.", sps=33, age_min=4),
    Spec("ok-series-b-at-1000-slow-rise-trl-state", B_STORY, B_WRITE, 2112, 1000, 2000, "ok",
         "healthy trl-trainer-state series-b early",
         "Series B (one TRL GRPO run seen twice), check at 1000 of 2000: checkpoint-100 ... checkpoint-1000 on disk. "
         "Train reward 0.35 -> 0.68 with the fast part over by ~900; held-out accuracy (N=800, sd 0.018) 0.33 -> "
         "0.55 and still creeping up; KL 0.03, entropy 0.30, nothing broken. Holding or slowly improving with half "
         "the budget left: continue.", sps=45, age_min=3),

    # ============================================================ stops
    Spec("conv-series-a-at-980-of-1000-flat-since-750-trl-console", A_STORY, A_WRITE, 2111, 980, 1000, "conv",
         "converged trl-console series-a late",
         "Series A at 980 of 1000: the reward has been flat at ~0.665 and eval_reward at ~0.585 (N=600, sd 0.02) "
         "since ~750, KL flat at 0.021, the cosine LR almost at zero. Nothing more to gain and 20 steps left: "
         "stopping now or letting it finish are both fine (stop preferred).", onset=750, sps=33, age_min=4),
    Spec("stop-series-a-finished-1000-best-is-final-trl-console", A_STORY, A_WRITE, 2111, 1000, 1000, "stop",
         "stop trl-console series-a finished",
         "Series A finished (train_runtime summary dict printed, progress bar 1000/1000). The last 250 steps are a "
         "plateau (reward ~0.665, eval ~0.585 within noise), so the final weights are as good as any earlier ones and "
         "the curve gives no reason to extend: stop, keep the final model.", onset=750, finished=True, sps=33,
         age_min=50),
    Spec("stop-score-saturated-0.965-since-250-verl-tb",
         Story(path(0.70, (250, 0.965, "sat")), {GSM: (path(0.80, (250, 0.915, "sat")), 1319)},
               head=GSM, eval_every=25, P=128, G=5,
               side=dict(kl=path(0.0, (250, 0.003), (600, 0.004)), entropy=path(0.30, (250, 0.12)),
                         len=path(260, (250, 210)), gn=path(0.3, (250, 0.05)), lr=flat(1e-6), clip=flat(0.001))),
         W(w_tb, vocab=VERL, sub="tensorboard_log/verl_gsm8k/qwen25-7b-grpo"), 3113, 600, 1500, "stop",
         "stop tensorboard verl saturated",
         "verl GRPO on GSM8K, TensorBoard (raw verl keys), 600 of 1500 steps. The score saturated at ~0.965 by "
         "step 250 (almost every group of 5 is all-correct, so advantages vanish and the grad norm fell 0.3 -> "
         "0.05); val acc (N=1319, sd 0.008) reached 0.915 at 250 and has not moved in 350 steps; KL tiny and flat. "
         "Nothing more to learn from this data; the current weights are as good as any: stop.", onset=250, sps=50,
         age_min=4),
    Spec("stop-lr-1e-9-config-typo-nothing-moves-hand-jsonl",
         Story(flat(0.22), {"val_exact_match": (flat(0.205), 500)}, head="val_exact_match", eval_every=100, P=16, G=8,
               side=dict(kl=(flat(2e-7), 0.3, "mul"), entropy=flat(0.61), len=flat(388.0), gn=flat(0.42),
                         lr=flat(1e-9))),
         W(w_jsonl, name="logs/train_log.jsonl",
           train=lambda s, v: {"iter": s, "mean_return": round(v["reward"], 4), "kl_to_init": v["kl"],
                               "tok_entropy": round(v["entropy"], 4), "resp_len": round(v["len"], 1),
                               "gnorm": round(v["gn"], 4), "lr": v["lr"]},
           evl=lambda s, e: {"iter": s, "val_exact_match": e["val_exact_match"]},
           config={"total_iters": 3000, "lr": "1e-9", "optimizer": "adamw", "group_size": 8, "batch_prompts": 16}),
         4114, 700, 3000, "stop",
         "stop custom-jsonl no-learning misconfigured-lr",
         "Hand-written GRPO loop, JSONL with its own keys, 700 of 3000 iterations. The learning rate is 1e-9 (a "
         "typo in config.json for 1e-6): KL to the initial policy stays ~2e-7, entropy and lengths never move, the "
         "mean return sits at 0.22 and the val exact match (N=500) at ~0.205 from iteration 0 to 700. Nothing is "
         "learning as configured and more iterations will not change that: stop (fix the LR and restart).",
         sps=40, age_min=6),
    Spec("stop-kl-drifts-0.02-to-0.16-eval-flat-since-500-trl-tb",
         Story(path(0.38, (500, 0.63, "sat"), (1300, 0.635)),
               {EV_TRL: (path(0.42, (500, 0.58, "sat"), (1300, 0.581)), 1000)},
               head=EV_TRL, log_every=10, eval_every=100, P=16, G=8,
               side=dict(kl=path(0.0, (500, 0.02, "sat"), (1300, 0.16)), entropy=path(0.45, (500, 0.35), (1300, 0.25)),
                         len=flat(520.0), gn=flat(0.21), lr=flat(1e-6), clip=flat(0.0))),
         W(w_tb, vocab=TRL_GRPO, sub="runs/Nov25_21-03-44_h100-2", train_prefix="train/", eval_prefix="eval/",
           eval_map=lambda k: k.removeprefix("eval_")), 3115, 1300, 3000, "stop",
         "stop tensorboard trl kl-drift plateau",
         "TRL GRPO (v0.20, beta 0.04) to TensorBoard, 1300 of 3000 steps. Reward and held-out accuracy (N=1000, "
         "sd 0.016) rose until ~500 (0.63 / 0.58) and have been flat for 800 steps, while KL keeps drifting "
         "0.02 -> 0.16 and entropy slides 0.35 -> 0.25. The policy moves away from the reference with nothing to show "
         "for it, and the eval has not declined, so the current weights are as good as any: stop.", onset=500,
         sps=40, age_min=8),
    Spec("stop-nccl-timeout-after-650-step-plateau-trl-console",
         Story(path(0.50, (800, 0.74, "sat"), (1460, 0.745)),
               {"eval_reward": (path(0.48, (800, 0.66, "sat"), (1460, 0.661)), 500)},
               head="eval_reward", log_every=10, eval_every=100, eval_from=100, P=16, G=8,
               side=dict(kl=path(0.0, (800, 0.03), (1460, 0.05)), entropy=path(0.40, (800, 0.28), (1460, 0.26)),
                         len=flat(610.0), gn=flat(0.19), lr=flat(8e-7), zero_std=path(0.3, (1460, 0.55)))),
         W(w_trl_console, vocab=TRL_GRPO, save_every=100, crash="""
[rank3]:[E1126 03:12:55.148862 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1884211, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800043 milliseconds before timing out.
[rank3]:[E1126 03:12:55.149301 ProcessGroupNCCL.cpp:1664] [PG ID 0 PG GUID 0(default_pg) Rank 3] Exception (either an error or timeout) detected by watchdog at work: 1884211, last enqueued NCCL work: 1884211, last completed NCCL work: 1884210.
terminate called after throwing an instance of 'c10::DistBackendError'
W1126 03:13:01.207000 1021 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 1024 closing signal SIGTERM
E1126 03:13:02.551000 1021 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 3 (pid: 1027) of binary: /opt/conda/bin/python
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
"""), 2116, 1460, 2000, "stop",
         "stop trl-console crashed plateau",
         "TRL GRPO console log, planned 2000. The reward rose to ~0.74 and eval_reward (N=500, sd 0.021) to 0.66 by "
         "step 800; from 800 to the last logged step 1460 both are flat within noise (KL creeping 0.03 -> 0.05, more "
         "groups all-correct). Then an NCCL watchdog timeout killed the job (traceback at the end, nothing written "
         "for hours); checkpoint-1400 was saved. The last state is as good as any and the plateau says resuming "
         "would gain nothing: stop, keep checkpoint-1400.", onset=800, sps=30, age_min=300),
    Spec("stop-dpo-finished-eval-acc-flat-last-third-mlflow-db",
         Story(path(0.52, (800, 0.83, "sat"), (1200, 0.845)),
               {"eval_rewards/accuracies": (path(0.60, (800, 0.705, "sat"), (1200, 0.706)), 2000)},
               head="eval_rewards/accuracies", kind="pref", P=32, log_every=10, eval_every=100,
               side=dict(gn=flat(6.0), lr=cosine(5e-7, 60, 1200),
                         **{"rewards/margins": (path(0.0, (800, 2.1, "sat"), (1200, 2.3)), 0.08, "add"),
                            "rewards/chosen": (path(0.0, (800, -0.4), (1200, -0.5)), 0.06, "add"),
                            "rewards/rejected": (path(0.0, (800, -2.5), (1200, -2.8)), 0.08, "add"),
                            "logps/chosen": (path(-270, (1200, -281)), 0.01, "mul"),
                            "_raw:loss": (path(0.693, (800, 0.36, "sat"), (1200, 0.34)), 0.04, "mul")})),
         W(w_mlflow_db, vocab=TRL_DPO, status="FINISHED"), 2117, 1200, 1200, "stop",
         "stop mlflow-db dpo finished converged",
         "TRL DPO logged to an MLflow SQLite store, run FINISHED at 1200 of 1200 steps (2 epochs). Held-out "
         "preference accuracy (N=2000 pairs, sd 0.010) rose 0.60 -> 0.705 by step 800 and the last four evals sit "
         "at ~0.705; train accuracy and margins keep inching up (second epoch), logps/chosen barely moves. The final "
         "weights are as good as any earlier ones and there is no trend to extend: stop, keep the final model.",
         onset=800, finished=True, sps=20, age_min=90),

    # ============================================================ rollbacks
    Spec("rb-series-b-at-1400-collapse-after-400-good-steps-trl-state", B_STORY, B_WRITE, 2112, 1400, 2000, "rb",
         "rollback trl-trainer-state series-b collapse entropy-collapse kl-spike",
         "Series B at 1400 (checkpoint-1400 is the newest trainer_state). After the good stretch 900-1300 (held-out "
         "accuracy ~0.55-0.565, N=800, sd 0.018) the policy breaks at ~1320: grad-norm spikes to 1.4, entropy "
         "0.29 -> 0.02, KL 0.03 -> 0.6, lengths run to the cap; the reward falls 0.69 -> 0.22 and the eval to 0.30. "
         "Roll back to the END of the good stretch: window {lo}-{hi}, checkpoint-1300 is on disk.", onset=1320,
         sps=45, age_min=3),
    Spec("rb-lr-restart-kl-blowup-nemo-tb",
         Story(path(0.40, (1000, 0.66, "sat"), (1100, 0.665), (1200, 0.41, "sat"), (1250, 0.40)),
               {"validation/accuracy": (path(0.38, (1050, 0.60, "sat"), (1100, 0.605), (1200, 0.44, "sat"),
                                             (1250, 0.40)), 500)},
               head="validation/accuracy", eval_every=50, P=64, G=16,
               side=dict(kl=path(0.0, (1100, 0.015, "sat"), (1160, 0.35, "sat"), (1250, 0.38)),
                         entropy=path(0.50, (1100, 0.33), (1180, 0.85), (1250, 0.9)),
                         len=path(700, (1100, 820), (1250, 560)), trunc=path(0.01, (1100, 0.01), (1250, 0.06)),
                         gn=path(0.15, (1100, 0.14), (1120, 1.5), (1250, 1.1)),
                         lr=lambda s: 2e-7 if s <= 1100 else 2e-6 * (1 - (s - 1100) / 2000),
                         **{"train/token_mult_prob_error": (path(1.01, (1100, 1.011), (1200, 1.07)), 0.004, "mul")})),
         W(w_tb, vocab=NEMO, sub="logs/exp_004/tensorboard"), 2118, 1250, 2000, "rb",
         "rollback tensorboard nemo-rl lr-restart kl-spike",
         "NeMo-RL GRPO, TensorBoard under logs/exp_004 plus checkpoints results/grpo/step_250 ... step_1250. A "
         "cosine-with-restarts schedule jumps the LR 2e-7 -> 2e-6 at step 1100: KL to the reference shoots 0.015 -> "
         "0.35, grad norm x10, entropy 0.33 -> 0.85 (noisier text), train/token_mult_prob_error climbs; the reward "
         "falls 0.665 -> 0.40 and validation accuracy (N=500, sd 0.022) from 0.605 at 1100 to 0.40 at 1250. The "
         "model was still inching up until the restart, so the target is 1100 (window {lo}-{hi}); restore step_1000, "
         "the newest save before the break.", onset=1100, sps=80, age_min=5),
    Spec("rb-repetition-lengths-to-cap-reward-lags-openrlhf-console",
         Story(path(0.30, (700, 0.60, "sat"), (780, 0.60), (900, 0.46)),
               {"eval_math500_pass1": (path(0.28, (700, 0.55, "sat"), (800, 0.50), (900, 0.41)), 500)},
               head="eval_math500_pass1", averaged=False, eval_every=50, P=64, G=8,
               side=dict(len=path(700, (700, 1100), (900, 2900)), trunc=path(0.005, (700, 0.02), (900, 0.55)),
                         entropy=path(0.50, (700, 0.42), (900, 0.18)), kl=path(0.0, (700, 0.02), (900, 0.05)),
                         gn=flat(0.2), lr=flat(5e-7), clip=flat(0.002))),
         W(w_openrlhf_console, ckpt_every=100), 2119, 900, 1500, "rb",
         "rollback openrlhf-console repetition length-cap reward-lags",
         "OpenRLHF GRPO console log (✨ Global step lines, logging every step), max length 3072, checkpoints every "
         "100 (global_step100 ... global_step900). From ~700 responses fall into repetition loops: mean length "
         "1100 -> 2900 (near the cap), truncated 2 % -> 55 %, entropy 0.42 -> 0.18. The train reward lags: it holds "
         "~0.60 until ~780 and only then falls to 0.46 by 900, but held-out MATH-500 pass@1 (N=500, sd 0.022) turns "
         "at once, 0.55 at 700 -> 0.50 at 800 -> 0.41 at 900. Roll back to the last clean step, window {lo}-{hi}; "
         "global_step700 is on disk.", onset=700, sps=60, age_min=4),
    Spec("rb-three-epochs-heldout-peaks-in-first-train-climbs-trl-state-limit2",
         Story(path(0.42, (420, 0.62), (440, 0.70), (840, 0.79), (860, 0.85), (1250, 0.89)),
               {EV_TRL: (path(0.36, (500, 0.485, "sat"), (1250, 0.43)), 1000)},
               head=EV_TRL, log_every=10, eval_every=50, eval_from=50, P=16, G=8,
               side=dict(entropy=path(0.40, (500, 0.28), (1250, 0.12)), kl=path(0.0, (500, 0.03), (1250, 0.11)),
                         len=path(480, (500, 420), (1250, 300)), gn=flat(0.2), lr=flat(1e-6), clip=flat(0.0))),
         W(w_trl_state, vocab=TRL_GRPO, save_every=250, keep=2, spe=420, epochs=3), 3120, 1250, 1260, "rb",
         "rollback trl-trainer-state multi-epoch memorisation eval-decline checkpoint-rotated",
         "TRL GRPO (v0.23) on a 6.7k-prompt set for 3 epochs (420 steps each, 1260 planned), 1250 reached, "
         "save_total_limit 2 so only checkpoint-1000 and checkpoint-1250 remain. The train reward jumps at each "
         "epoch start (0.62 -> 0.70 at 420, 0.79 -> 0.85 at 840) and keeps climbing to 0.89: the policy memorises "
         "its prompts. Held-out accuracy (N=1000, sd 0.016) peaked at 0.485 around step 500 and slid to 0.43 by "
         "1250 (3.5 sd), with entropy 0.28 -> 0.12. A better model lies behind (window {lo}-{hi}); its checkpoint "
         "was rotated away, so it must come from elsewhere or be re-trained to ~500.", onset=500, sps=40,
         age_min=2),
    Spec("rb-slow-slide-from-peak-at-600-no-ckpt-mlflow-files",
         Story(path(0.55, (600, 0.71, "sat"), (1600, 0.73)),
               {"eval_rewards/math_verify/mean": (path(0.45, (600, 0.62, "sat"), (1600, 0.55)), 1319)},
               head="eval_rewards/math_verify/mean", log_every=10, eval_every=100, P=16, G=8,
               side=dict(kl=path(0.0, (600, 0.011), (1600, 0.09)), entropy=path(0.42, (600, 0.33), (1600, 0.24)),
                         len=path(350, (600, 330), (1600, 270)), gn=flat(0.17), lr=flat(1e-6), clip=flat(0.0))),
         W(w_mlflow_files, vocab={**TRL_GRPO, "zero_std": None}, every=10), 2121, 1600, 2000, "rb",
         "rollback mlflow-files slow-decline no-checkpoint",
         "TRL GRPO with the MLflow callback (file store), 1600 of 2000 steps, checkpoints pushed to S3 (none in the "
         "run folder). Held-out GSM8K math_verify accuracy (N=1319, sd 0.013) peaked at 0.62 at step 600 and has "
         "slid linearly since, 0.007 per 100 steps, to 0.55 (5 sd), while the train reward creeps up 0.71 -> 0.73, "
         "KL grows 0.011 -> 0.09, entropy and lengths shrink. The slide starts at the peak, so the target is ~600 "
         "(window {lo}-{hi}): rollback, restoring the newest saved checkpoint at or before it.", onset=600, sps=45,
         age_min=6),
    Spec("rb-finished-4000-rm-score-up-judge-winrate-peaked-2400-wandb-csv",
         Story(path(-0.5, (4000, 2.2)), {"eval/judge_winrate_vs_sft": (path(0.50, (2400, 0.64, "sat"),
                                                                            (4000, 0.55)), 800)},
               head="eval/judge_winrate_vs_sft", kind="score", spread=(1.0, 0.8), P=128, G=2, eval_every=200,
               side=dict(kl=path(0.0, (2400, 5.5), (4000, 12.0)), entropy=path(38.0, (4000, 24.0)),
                         lr=flat(1e-6), **{"objective/rlhf_reward": (path(-0.5, (2400, 1.1), (4000, 1.6)), 0.05, "add"),
                                           "val/num_eos_tokens": (path(118.0, (2400, 110.0), (4000, 72.0)), 0.03,
                                                                  "mul")})),
         W(w_wandb_csv, vocab=TRL_PPO, display="rloo-llama3-8b-hh",
           panels=["train/objective/scores", "train/objective/kl", "train/objective/rlhf_reward",
                   "train/val/num_eos_tokens", "eval/judge_winrate_vs_sft"],
           summary={"train/global_step": 4000, "train/train_runtime": 151203.4, "_step": 4021,
                    "_runtime": 151340.8, "_wandb": {"runtime": 151340}},
           config=dict(total_episodes=512000, per_device_train_batch_size=16, gradient_accumulation_steps=8,
                       rloo_k=2, kl_coef=0.03, learning_rate=1e-6)), 2122, 4000, 4000, "rb",
         "rollback wandb-csv rloo reward-model-hacking finished eval-decline",
         "TRL RLOO (v0.11, PPOv2-style keys) against a reward model, finished at 4000 of 4000 (W&B summary has "
         "train_runtime); panel exports plus config and summary. The RM score rises the whole way, -0.5 -> 2.2, but a "
         "held-out LLM-judge win rate vs the SFT model (800 prompts every 200 steps, sd 0.017) peaked at 0.64 at "
         "2400 and fell to 0.55 by the end (5 sd), while KL doubled 5.5 -> 12 and fewer responses end in EOS "
         "(110 -> 72 of 128): the policy learned to please the RM, not the judge. The final weights are worse; keep "
         "the step-2400 model instead (window {lo}-{hi}).", onset=2400, finished=True, sps=38, age_min=180),
    Spec("rb-entropy-collapse-reward-flat-pass1-sags-trackio",
         Story(path(0.40, (600, 0.71, "sat"), (880, 0.72)),
               {"eval_rewards/acc/mean": (path(0.38, (600, 0.60, "sat"), (640, 0.60), (880, 0.545)), 500),
                "eval_pass_at_8": (path(0.62, (600, 0.82, "sat"), (640, 0.82), (880, 0.70)), 500)},
               head="eval_rewards/acc/mean", log_every=5, eval_every=40, eval_from=40, P=16, G=8,
               side=dict(entropy=path(0.45, (600, 0.30), (640, 0.28), (760, 0.03, "sat"), (880, 0.025)),
                         zero_std=None, len=path(520, (640, 470), (880, 455)), gn=path(0.25, (640, 0.2), (880, 0.05)),
                         lr=flat(1e-6), clip=flat(0.0),
                         **{"_raw:frac_reward_zero_std": (path(0.35, (640, 0.45), (880, 0.82)), 0.03, "mul")})),
         W(w_trackio, vocab=TRL_GRPO, project="grpo-math-qwen3", name="qwen3-4b-g8-lr1e-6",
           config={"max_steps": 1500, "logging_steps": 5, "num_generations": 8, "beta": 0.0, "eval_steps": 40,
                   "_Username": "ml"}), 2123, 880, 1500, "rb",
         "rollback trackio entropy-collapse reward-flat eval-decline subtle",
         "TRL GRPO (v0.24, beta 0 so no KL) reporting to Trackio, 880 of 1500 steps. The reward plateaued at "
         "~0.71-0.72 from 600 and still reads so. But from ~640 the entropy collapses 0.28 -> 0.03, the share of "
         "groups whose 8 answers are identical climbs 0.45 -> 0.82 and the grad norm fades: the policy has become "
         "nearly deterministic. Held-out pass@1 (N=500, sd 0.022) slides 0.60 -> 0.545 (2.5 sd) and pass@8 falls "
         "0.82 -> 0.70. The reward lags the breakage; the better model is the one before the collapse: rollback, "
         "window {lo}-{hi}.", onset=640, sps=50, age_min=7),
    Spec("rb-peak-between-sparse-saves-every-500-trl-state",
         Story(path(0.35, (2000, 0.78)),
               {EV_TRL: (path(0.30, (1150, 0.52, "sat"), (1200, 0.521), (2000, 0.44)), 1000)},
               head=EV_TRL, log_every=10, eval_every=50, eval_from=50, P=16, G=8,
               side=dict(kl=path(0.0, (1200, 0.05), (2000, 0.30)), len=path(600, (1200, 560), (2000, 250)),
                         trunc=flat(0.005), gn=flat(0.2), lr=flat(1e-6), clip=flat(0.0),
                         **{"rewards/format_reward/mean": (path(0.6, (600, 0.95), (1200, 0.97), (2000, 0.99)), 0.01,
                                                           "mul"),
                            "rewards/accuracy_reward/mean": (path(0.22, (1200, 0.47), (2000, 0.38)), 0.05, "mul")})),
         W(w_trl_state, vocab=TRL_GRPO17, save_every=500), 2124, 2000, 3000, "rb",
         "rollback trl-trainer-state sparse-checkpoints reward-hacking eval-decline",
         "TRL GRPO (v0.17 keys: completions/*, no entropy), 2000 of 3000 steps, checkpoints only every 500. The "
         "total reward (format + accuracy) climbs 0.35 -> 0.78 throughout, but after ~1200 the gain is all format "
         "while the accuracy component turns down; lengths shrink 560 -> 250 and KL goes 0.05 -> 0.30. Held-out "
         "accuracy (N=1000, sd 0.016) peaked at ~0.52 around 1150-1200 and is 0.44 at 2000 (5 sd). The best point "
         "lies between saves (window {lo}-{hi}); checkpoint-1000 is the newest on disk before it.", onset=1200,
         sps=30, age_min=5),
    Spec("sor-gsm8k-eval-1sd-below-peak-kl-drifting-verl-console",
         Story(path(0.70, (500, 0.90, "sat"), (1000, 0.905)),
               {GSM: (path(0.74, (500, 0.842, "sat"), (1000, 0.830)), 1319)},
               head=GSM, eval_every=50, P=64, G=8,
               side=dict(kl=path(0.0, (500, 0.01), (1000, 0.08)), entropy=path(0.35, (500, 0.20), (1000, 0.15)),
                         len=path(280, (500, 240), (1000, 230)), gn=flat(0.1), lr=flat(1e-6), clip=flat(0.002))),
         W(w_verl_console, ckpt_every=100, name="logs/run_qwen25_3b_gsm8k.log"), 4125, 1000, 1200, "sor",
         "stop-or-rollback verl console kl-drift small-decline",
         "verl GRPO on GSM8K, console log, 1000 of 1200 steps. Score saturated at ~0.90 by 500; val acc "
         "(N=1319, sd 0.010) peaked at ~0.842 around 500 and has drifted down to ~0.830 (about 1.2 sd) while KL "
         "keeps drifting 0.01 -> 0.08. The decline is too small to be sure of: stopping is right, and going back to "
         "the peak (window {lo}-{hi}, global_step_500 saved) is as good.", onset=500, sps=50, age_min=5),
    Spec("rb-kl-blowup-uniform-noise-after-262-rasbt-csv",
         Story(path(0.25, (200, 0.45, "sat"), (260, 0.47), (262, 0.47), (268, 0.0, "sat"), (340, 0.0)),
               {"eval_acc": (path(0.18, (200, 0.30, "sat"), (250, 0.32), (262, 0.322), (275, 0.0, "sat")), 500)},
               head="eval_acc", eval_every=50, eval_from=50, P=1, G=8, tau=1.0,
               side=dict(kl=(path(0.02, (262, 0.05), (270, 27.0, "sat")), 0.2, "mul"),
                         entropy=(path(0.9, (262, 0.75), (266, 11.90, "sat")), 0.002, "mul"),
                         len=path(240, (262, 300), (268, 512, "sat")), gn=flat(1.0), lr=flat(1e-5),
                         ratio=(path(1.0, (262, 1.0), (266, 3.5)), 0.3, "mul"),
                         tps=(path(41.0, (262, 40.0), (268, 33.0)), 0.05, "mul"),
                         adv=(flat(0.0), 0.01, "add"))),
         W(w_csv, name="logs/7_5_plus_kl_metrics.csv", cols=[
             ("step", lambda s, v, e: s), ("total_steps", lambda s, v, e: 500),
             ("loss", lambda s, v, e: f"{(v['kl'] * 0.02 + v['adv'] * 40):.4f}"),
             ("kl_loss", fx(".4f", "kl")), ("policy_ratio", fx(".4f", "ratio")), ("reward_avg", fx(".3f", "reward")),
             ("tokens_per_sec", fx(".2f", "tps")), ("avg_response_len", fx(".1f", "len")),
             ("adv_avg", fx(".4f", "adv")),
             ("adv_std", lambda s, v, e: "0.0000" if v["reward_std"] == 0 else f"{0.93 + 0.05 * math.sin(s):.4f}"),
             ("entropy_avg", fx(".4f", "entropy")), ("eval_acc", fe(".6f", "eval_acc"))]),
         2126, 340, 500, "rb",
         "rollback custom-csv rasbt kl-blowup entropy-uniform nan-like crash-in-place",
         "A reasoning-from-scratch style GRPO script (7_5_plus_kl header: one prompt x 8 rollouts per step, "
         "MATH-500 eval_acc as a fraction every 50 steps, checkpoints every 50 under checkpoints/). Healthy to 262: "
         "reward ~0.45, eval_acc 0.18 -> 0.30 at 200 -> 0.32 at 250. At 263 kl_loss explodes to ~27, entropy_avg "
         "jumps to 11.93 (= ln of the Qwen3 vocab: uniform noise), responses hit the 512 cap and the reward is 0 "
         "from then on; eval_acc at 300 is 0.0. The script is still running and writing garbage. Roll back to the "
         "last good state before the break, window {lo}-{hi} (step 250 checkpoint on disk).", onset=262, sps=12,
         age_min=1),
]


def extra_files(spec: Spec, run: dict, folder: Path) -> None:
    """Side files a few runs have besides their logs (checkpoint folders of non-HF loops)."""
    if spec.name.startswith("rb-lr-restart"):
        for n in range(250, run["reached"] + 1, 250):
            d = folder / "results" / "grpo" / f"step_{n}"
            d.mkdir(parents=True)
            (d / "training_info.json").write_text(json.dumps({"step": n, "total_steps": n}) + "\n")
            (d / "config.yaml").write_text(f"grpo:\n  max_num_steps: {run['planned']}\n  val_period: 50\n"
                                           f"checkpointing:\n  save_period: 250\n")
            for p in (d / "training_info.json", d / "config.yaml", d):
                stamp(run, p, n)
    if spec.name.startswith("rb-kl-blowup-uniform"):
        for n in range(50, run["reached"] + 1, 50):
            p = folder / "checkpoints" / f"qwen3-0.6B-rlvr-grpo-step{n:05d}.pth"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(b"\0" * 32)
            stamp(run, p, n)
    if spec.name.startswith("ok-finished-800"):
        d = folder / "ckpt" / "final"
        d.mkdir(parents=True)
        (d / "model.safetensors").write_bytes(b"\0" * 32)
        (folder / "logs" / "train.txt").write_text("[Step 800/800] done. Saved final model to ckpt/final\n")
    if spec.name.startswith("ok-warmup-end"):
        # the HF output dir around the TensorBoard folder: checkpoints every 250 with their trainer_state
        w_trl_state(run, folder, vocab=TRL_GRPO, save_every=250)


CASES = [s.case() for s in SPECS]
BY_NAME = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = BY_NAME[case.name]
    drawn = spec.story.draw(spec.seed, spec.reached)
    t_end = NOW - spec.age_min * 60
    run = dict(drawn, planned=spec.planned, reached=spec.reached, finished=spec.finished, t_end=t_end,
               sps=spec.sps, eval_every=spec.story.eval_every, stamps=[])
    folder.mkdir(parents=True, exist_ok=True)
    spec.write(run, folder)
    extra_files(spec, run, folder)
    for p in sorted(folder.rglob("*"), reverse=True):
        os.utime(p, (t_end, t_end))
    for p, t in run["stamps"]:
        if p.exists():
            os.utime(p, (t, t))


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = BY_NAME[c.name]
        st = spec.story
        vis = spec.visible or spec.reached
        lv, steps = st.head_level(), st.head_steps(vis)
        best_s = max(steps, key=lv)
        sd = st.head_sd(lv(best_s))
        lab = c.labels
        print(f"{c.name}: {lab.get('preferred')} accept={lab.get('accept')} window={lab.get('rollback_window')} "
              f"onset={lab.get('onset_step')} reached={spec.reached}/{spec.planned}"
              f"{' finished' if spec.finished else ''} age={spec.age_min:g}min")
        print(f"    headline {st.head}: best {lv(best_s):.3f}@{best_s} last {lv(steps[-1]):.3f}@{steps[-1]} "
              f"sd {sd:.4f} ({(lv(best_s) - lv(steps[-1])) / sd:.1f} sd below best)")
        run = st.draw(spec.seed, spec.reached)
        pts = run["eval"] if st.head != TRAIN else [(s, {TRAIN: v["reward"]}) for s, v in run["train"]]
        pts = [p for p in pts if p[0] <= vis]
        print("    drawn " + " ".join(f"{s}:{v[st.head]:.3f}" for s, v in pts[:: max(1, len(pts) // 14)])
              + f" | last {pts[-1][0]}:{pts[-1][1][st.head]:.3f}")


HEADER = """# Holdout set 21: blind-labelled runs written by make_holdout21.py, independent of the assessor, its judges and
# the other holdout generators. Labels follow DESIGN.md's decision contract and come from each story's noise-free
# levels. rollback_window is inclusive: from the first logged headline step whose level is within one sampling sd
# of the best level to the newest such step not after onset_step, in the run's own step units.
# Run `.venv/bin/python evals/holdout21/make_holdout21.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout21.py", "holdout21.yaml", "h21-", "holdout21", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
