"""Holdout set 22: blind-labelled RL post-training runs, aimed at the algorithms the earlier sets cover least.

Run from the worktree root:
    .venv/bin/python evals/holdout22/make_holdout22.py           # writes runs/ (gitignored) and holdout22.yaml
    .venv/bin/python evals/holdout22/make_holdout22.py --check   # also prints levels and rollback windows

The set leans on PPO with a value critic (value loss, explained variance, returns), RLOO and REINFORCE++, DAPO
(dynamic sampling, clip-higher, overlong shaping), the DPO family (DPO, IPO, KTO, ORPO, CPO), iterative / online
preference rounds, multi-turn agent RL and reward-model-scored RLHF checked by a gold judge.

Every case is a story told as noise-free levels (piecewise linear in the run's own step), drawn through this set's
noise model and written the way one framework and version writes it. Noise model (this set's own):
  * binary rewards: each of P prompts gets a solve rate sigmoid(c + 1.1 z), z ~ N(0, 1), with c chosen so that
    the population mean is the level; G rollouts per prompt are Bernoulli. The batch mean, the group-agreement
    share and the all-wrong / all-right shares come from the same draws. TRL-style loggers average the batches
    since the last log; verl, OpenRLHF, NeMo-RL and the hand loops log the current batch;
  * reward-model scores: batch mean of P prompts (prompt effect sd tau) x G samples (sample sd sigma);
  * preference pairs (DPO family): B pairs with implicit rewards drawn around the chosen / rejected levels, the
    accuracy, margin and loss computed from those very pairs;
  * held-out evals: Binomial(N, p) / N, judge scores as the mean of N normal scores, eval losses normal;
  * side signals: AR(1) noise (phi about 0.6) multiplicative in log space, or additive for signed ones, so slow
    signals wander rather than jitter;
  * grad norms: log-normal (sd 0.3) with a Pareto(1.3) kick on about one step in 40.

Labels come from the stories (DESIGN.md, "What the three decisions mean"), never from a tool. A rollback window
runs from the first logged headline step whose noise-free level is within one sampling sd of the best level to
the newest such step not after the onset of the breakage; it is computed from the story's own levels when the
run is written and printed by `--check`.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import os
import re
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import HEALTHY, Case, converged, dump_json, rollback, stop, stop_or_rollback, tb_file, trainer_state

HERE = Path(__file__).resolve().parent
NOW = time.time()
Level = Callable[[float], float]


def L(*pts: tuple[float, float]) -> Level:
    """A noise-free level: piecewise linear through the knots, flat outside them."""
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def K(v: float) -> Level:
    return lambda s: v


def wave(base: Level, amp: float, period: float, start: float) -> Level:
    """A level with a slow oscillation laid on it from `start` (an unstable optimiser swinging)."""
    return lambda s: base(s) + (amp * math.sin(2 * math.pi * (s - start) / period) if s > start else 0.0)


# ------------------------------------------------------------------------------------------------- the noise model

_Z = np.sort(np.random.default_rng(2222).standard_normal(600))
SPREAD = 1.1


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


@functools.lru_cache(maxsize=20000)
def _shift(p: float) -> float:
    lo, hi = -12.0, 12.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if _sig(mid + SPREAD * _Z).mean() < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def bin_sd(p: float, P: int, G: int) -> float:
    """Sampling sd of one batch mean of P prompts x G rollouts at level p."""
    p = min(max(p, 1e-4), 1 - 1e-4)
    q = _sig(_shift(round(p, 4)) + SPREAD * _Z)
    return math.sqrt(q.var() / P + (q * (1 - q)).mean() / (P * G))


class Sim:
    """Draws one run's noise; the AR(1) states of the side signals live here."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.ar: dict[str, float] = {}

    def ar1(self, key: str, phi: float) -> float:
        e = phi * self.ar.get(key, self.rng.standard_normal()) + math.sqrt(1 - phi * phi) * self.rng.standard_normal()
        self.ar[key] = e
        return e

    def binary(self, p: float, P: int, G: int) -> dict:
        p = min(max(p, 1e-4), 1 - 1e-4)
        q = _sig(_shift(round(p, 4)) + SPREAD * self.rng.standard_normal(P))
        x = (self.rng.random((P, G)) < q[:, None]).astype(float)
        per = x.mean(axis=1)
        return dict(mean=x.mean(), std=x.std(), zero_std=float(((per == 0) | (per == 1)).mean()),
                    all0=float((per == 0).mean()), all1=float((per == 1).mean()), group_std=float(x.std(axis=1).mean()),
                    max=float(x.max()), min=float(x.min()))

    def score(self, m: float, sigma: float, tau: float, P: int, G: int) -> dict:
        x = m + tau * self.rng.standard_normal(P)[:, None] + sigma * self.rng.standard_normal((P, G))
        return dict(mean=float(x.mean()), std=float(x.std()), max=float(x.max()), min=float(x.min()), zero_std=0.0,
                    all0=0.0, all1=0.0, group_std=float(x.std(axis=1).mean()))


# -------------------------------------------------------------------------------------------------- metric specs

@dataclass
class Bin:
    """Binary-reward batch; `out` names which statistics are logged under which keys."""

    level: Level
    P: int = 64
    G: int = 8
    out: dict = field(default_factory=lambda: {"mean": None})
    avg: int = 1  # batches averaged into one logged value

    def draw(self, sim: Sim, s: int, key: str) -> dict:
        bs = [sim.binary(self.level(s - j), self.P, self.G) for j in range(self.avg)]
        return {(key if name is None else name): float(np.mean([b[st] for b in bs])) for st, name in self.out.items()}

    def sd(self, p: float) -> float:
        return bin_sd(p, self.P, self.G) / math.sqrt(self.avg)


@dataclass
class Score:
    """Reward-model score batch mean."""

    level: Level
    sigma: float = 1.0
    tau: float = 0.5
    P: int = 64
    G: int = 1
    out: dict = field(default_factory=lambda: {"mean": None})
    avg: int = 1

    def draw(self, sim: Sim, s: int, key: str) -> dict:
        bs = [sim.score(self.level(s - j), self.sigma, self.tau, self.P, self.G) for j in range(self.avg)]
        return {(key if name is None else name): float(np.mean([b[st] for b in bs])) for st, name in self.out.items()}

    def sd(self, p: float) -> float:
        return math.sqrt(self.tau ** 2 / self.P + self.sigma ** 2 / (self.P * self.G)) / math.sqrt(self.avg)


@dataclass
class Mul:
    level: Level
    rel: float = 0.05
    phi: float = 0.6

    def draw(self, sim: Sim, s: int, key: str) -> dict:
        return {key: self.level(s) * math.exp(self.rel * sim.ar1(key, self.phi))}


@dataclass
class Add:
    level: Level
    sd_: float = 0.01
    phi: float = 0.5

    def draw(self, sim: Sim, s: int, key: str) -> dict:
        return {key: self.level(s) + self.sd_ * sim.ar1(key, self.phi)}


@dataclass
class Grad:
    level: Level
    tail: float = 0.025

    def draw(self, sim: Sim, s: int, key: str) -> dict:
        g = self.level(s) * math.exp(0.3 * sim.rng.standard_normal())
        if sim.rng.random() < self.tail:
            g *= 1 + sim.rng.pareto(1.3)
        return {key: g}


@dataclass
class Exact:
    level: Level

    def draw(self, sim: Sim, s: int, key: str) -> dict:
        return {key: self.level(s)}


@dataclass
class Pairs:
    """B preference pairs: implicit rewards around the chosen / rejected levels; stats from the same pairs.

    loss: "sigmoid" (DPO), "ipo" (squared distance to 1/(2 beta)), "kto" (unpaired, per-side sigmoid around kl).
    """

    chosen: Level
    rejected: Level
    spread: Level
    B: int = 64
    names: dict = field(default_factory=dict)  # stat -> key
    loss: str = "sigmoid"
    beta: float = 0.1
    kl: Level = field(default=K(0.0))

    def draw(self, sim: Sim, s: int, key: str) -> dict:
        sp = self.spread(s)
        c = self.chosen(s) + sp * sim.rng.standard_normal(self.B)
        r = self.rejected(s) + sp * sim.rng.standard_normal(self.B)
        m = c - r
        if self.loss == "ipo":
            loss = float(np.mean((m / self.beta - 1 / (2 * self.beta)) ** 2))
        elif self.loss == "kto":
            z = self.kl(s)
            loss = float(np.mean(1 - _sig(c - z)) * 0.5 + np.mean(1 - _sig(z - r)) * 0.5)
        else:
            loss = float(np.mean(np.log1p(np.exp(-m))))
        stats = dict(chosen=float(c.mean()), rejected=float(r.mean()), margins=float(m.mean()),
                     accuracies=float((m > 0).mean()), loss=loss)
        return {k: stats[st] for st, k in self.names.items()}


@dataclass
class Derived:
    fn: Callable[[dict, int], float]

    def draw(self, sim: Sim, s: int, key: str) -> dict:
        raise AssertionError


@dataclass
class Acc:
    """Held-out accuracy / win rate: Binomial(N, p) / N."""

    level: Level
    N: int = 500

    def draw(self, sim: Sim, s: int, key: str) -> dict:
        p = min(max(self.level(s), 0.0), 1.0)
        return {key: sim.rng.binomial(self.N, p) / self.N}

    def sd(self, p: float) -> float:
        return math.sqrt(max(p * (1 - p), 1e-6) / self.N)


@dataclass
class Mean:
    """Held-out mean of N judge scores (sd per item), or an eval loss over N examples."""

    level: Level
    per: float = 1.0
    N: int = 500

    def draw(self, sim: Sim, s: int, key: str) -> dict:
        return {key: self.level(s) + self.per / math.sqrt(self.N) * sim.rng.standard_normal()}

    def sd(self, p: float) -> float:
        return self.per / math.sqrt(self.N)


@dataclass
class Story:
    planned: int
    train: dict
    evals: dict
    eval_steps: list[int]
    head: str  # a train or eval key
    higher: bool = True
    log_every: int = 1
    first: int | None = None  # first logged train step (log_every by default)
    age_min: float = 4.0  # minutes since the newest write
    sps: float = 40.0  # seconds per step
    finished: bool = False
    meta: dict = field(default_factory=dict)


def simulate(story: Story, rng: np.random.Generator, reached: int) -> dict:
    sim = Sim(rng)
    train = []
    first = story.first if story.first is not None else story.log_every
    for s in range(first, reached + 1, story.log_every):
        row: dict = {}
        for k, spec in story.train.items():
            if not isinstance(spec, Derived):
                row.update(spec.draw(sim, s, k))
        for k, spec in story.train.items():
            if isinstance(spec, Derived):
                row[k] = spec.fn(row, s)
        train.append((s, row))
    evals = []
    for s in story.eval_steps:
        if s <= reached:
            row = {}
            for k, spec in story.evals.items():
                row.update(spec.draw(sim, s, k))
            evals.append((s, row))
    return dict(train=train, evals=evals, planned=story.planned, reached=reached, story=story,
                finished=story.finished, age_min=story.age_min, sps=story.sps, meta=story.meta)


def head_spec(story: Story):
    if story.head in story.evals:
        return story.evals[story.head], list(story.eval_steps)
    spec = story.train[story.head]
    return spec, None


def window(run: dict, onset: int) -> tuple[int, int]:
    story: Story = run["story"]
    spec, steps = head_spec(story)
    reached = run["reached"]
    if steps is None:
        steps = [s for s, _ in run["train"]]
    steps = [s for s in steps if s <= reached]
    sign = 1.0 if story.higher else -1.0
    best_s = max(steps, key=lambda s: sign * spec.level(s))
    best = spec.level(best_s)
    sd = spec.sd(best)
    good = [s for s in steps if sign * spec.level(s) >= sign * best - sd]
    return good[0], max(s for s in good if s <= onset)


# ------------------------------------------------------------------------------------------------------ writers

def f6(x: float) -> float:
    return float(f"{x:.6g}")


def wall(run: dict, step: float) -> float:
    """Wall time of a step: the newest step was written age_min minutes ago."""
    return NOW - run["age_min"] * 60 - (run["reached"] - step) * run["sps"]


def merged(run: dict) -> dict[int, dict]:
    rows: dict[int, dict] = {}
    for s, v in run["train"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["evals"]:
        rows.setdefault(s, {}).update(v)
    return rows


def w_trl_state(run: dict, folder: Path, save_every: int, keep: int | None = None, logging_steps: int = 10,
                top_level: bool = False, eval_every: int | None = None, spe: int | None = None,
                epochs: int = 1) -> None:
    """TRL output_dir: checkpoint-N/trainer_state.json (save_total_limit keeps `keep`), top level at the end."""
    planned, reached = run["planned"], run["reached"]
    spe = spe or planned
    rows = []
    for s, v in run["train"]:
        rows.append({**{k: f6(x) for k, x in v.items()}, "epoch": round(s / spe, 4), "step": s})
    for s, v in run["evals"]:
        rows.append({**{k: f6(x) for k, x in v.items()}, "eval_runtime": round(95 + 3 * math.sin(s), 3),
                     "eval_samples_per_second": 5.3, "eval_steps_per_second": 0.17, "epoch": round(s / spe, 4),
                     "step": s})
    rows.sort(key=lambda r: (r["step"], any(k.startswith("eval_") for k in r)))
    saves = list(range(save_every, reached + 1, save_every))
    if run["finished"] and reached not in saves:
        saves.append(reached)
    kept: list[int] = []
    for n in saves:
        st = trainer_state([r for r in rows if r["step"] <= n], n, planned, logging_steps, save_every, eval_every,
                           round(n / spe, 4), epochs, training_stop=run["finished"] and n == reached)
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        (ck / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}\n')
        (ck / "training_args.bin").write_bytes(b"\x80\x04")
        kept.append(n)
        while keep and len(kept) > keep:
            old = kept.pop(0)
            for p in sorted((folder / f"checkpoint-{old}").rglob("*"), reverse=True):
                p.unlink()
            (folder / f"checkpoint-{old}").rmdir()
    if top_level:
        final = dict(train_runtime=round(reached * run["sps"], 1), train_samples_per_second=1.9,
                     train_steps_per_second=round(1 / run["sps"], 4), total_flos=0.0, train_loss=0.21,
                     epoch=round(reached / spe, 4), step=reached)
        st = trainer_state([*rows, final], reached, planned, logging_steps, save_every, eval_every,
                           round(reached / spe, 4), epochs, training_stop=True)
        dump_json(folder / "trainer_state.json", st)


def _bar(n: int, total: int, sps: float) -> str:
    frac = n / total
    filled = int(frac * 10)
    el, left = n * sps, (total - n) * sps

    def hms(t: float) -> str:
        t = int(t)
        return f"{t // 3600}:{t % 3600 // 60:02d}:{t % 60:02d}" if t >= 3600 else f"{t // 60:02d}:{t % 60:02d}"
    return f"{int(100 * frac):3d}%|{'█' * filled}{' ' * (10 - filled)}| {n}/{total} [{hms(el)}<{hms(left)}, {sps:.2f}s/it]"


def _pyfmt(v: dict) -> str:
    return "{" + ", ".join(f"'{k}': {f6(x)!r}" for k, x in v.items()) + "}"


def w_trl_console(run: dict, folder: Path, spe: int | None = None, name: str = "train.log") -> None:
    """TRL / HF Trainer stdout captured with tee: tqdm updates on carriage returns, log dicts on their own lines."""
    planned = run["planned"]
    spe = spe or planned
    out = ["[INFO|trainer.py:2414] 2026-11-27 01:02:11 >> ***** Running training *****",
           f"[INFO|trainer.py:2415] 2026-11-27 01:02:11 >>   Num examples = {planned * 16:,}",
           "[INFO|trainer.py:2416] 2026-11-27 01:02:11 >>   Num Epochs = 1",
           f"[INFO|trainer.py:2421] 2026-11-27 01:02:11 >>   Total optimization steps = {planned:,}"]
    ev = dict(run["evals"])
    for s, v in run["train"]:
        bar = "\r".join(_bar(k, planned, run["sps"]) for k in range(max(s - 2, 0), s + 1))
        out.append(bar)
        out.append(_pyfmt({**v, "epoch": round(s / spe, 4)}))
        if s in ev:
            out.append(_pyfmt({**ev[s], "eval_runtime": 61.37, "eval_samples_per_second": 8.15,
                               "eval_steps_per_second": 0.26, "epoch": round(s / spe, 4)}))
    if run["finished"]:
        out.append(_pyfmt(dict(train_runtime=run["reached"] * run["sps"], train_samples_per_second=2.1,
                               train_steps_per_second=round(1 / run["sps"], 3), train_loss=0.27,
                               epoch=round(run["reached"] / spe, 4))))
    (folder / name).write_text("\n".join(out) + "\n")


def hf_tb_key(k: str) -> str:
    return "eval/" + k[5:] if k.startswith("eval_") else "train/" + k


def w_hf_tb(run: dict, folder: Path, spe: int | None = None) -> None:
    """HF Trainer TensorBoard callback: train/<key>, eval/<key> under output_dir/runs/<date>_<host>/."""
    spe = spe or run["planned"]
    t0 = wall(run, 0)
    ev = [(wall(run, s), s, {**{hf_tb_key(k): x for k, x in v.items()}, "train/epoch": s / spe})
          for s, v in run["train"]]
    ev += [(wall(run, s) + 20, s, {hf_tb_key(k): x for k, x in v.items()}) for s, v in run["evals"]]
    ev.sort(key=lambda e: (e[1], e[0]))
    tb_file(folder / "runs" / "Nov27_01-02-11_gpu-node-07" / f"events.out.tfevents.{int(t0)}.gpu-node-07.3321.0", ev)


def w_verl_console(run: dict, folder: Path, np2: bool = True, name: str = "verl_train.log") -> None:
    """verl LocalLogger lines behind the Ray TaskRunner prefix, mixed with Ray / vLLM noise."""
    lines = ["2026-11-26 22:14:03,551\tINFO worker.py:1888 -- Started a local Ray instance.",
             "(TaskRunner pid=88123) Using dataset class: RLHFDataset",
             f"(TaskRunner pid=88123) Size of train dataloader: {run['planned']}, Size of val dataloader: 1",
             f"(TaskRunner pid=88123) Total training steps: {run['planned']}",
             "(WorkerDict pid=88734) INFO 11-26 22:16:40 [gpu_model_runner.py:1672] Model loading took 7.1 GiB"]
    rows = merged(run)

    def fmt(x: float) -> str:
        return f"np.float64({x!r})" if np2 else repr(round(x, 6))
    for s in sorted(rows):
        body = " - ".join(f"{k}:{fmt(float(x))}" for k, x in rows[s].items())
        gs = f" - training/global_step:{s}" if s > 0 else ""
        lines.append(f"(TaskRunner pid=88123) step:{s} - {body}{gs}")
        if s and s % 100 == 0:
            lines.append(f"(WorkerDict pid=88734) [rank0]: Saved model to checkpoints/rlhf/run/global_step_{s}/actor")
    if run["finished"]:
        lines.append("(TaskRunner pid=88123) Final validation metrics: " + json.dumps(dict(run["evals"][-1][1])))
    (folder / name).write_text("\n".join(lines) + "\n")


def hydra_cfg(run: dict, folder: Path, extra: str = "") -> None:
    (folder / ".hydra").mkdir(parents=True, exist_ok=True)
    (folder / ".hydra" / "config.yaml").write_text(
        f"trainer:\n  project_name: rlhf\n  experiment_name: run\n  total_epochs: 1\n"
        f"  total_training_steps: {run['planned']}\n  test_freq: {run['meta'].get('test_freq', 50)}\n"
        f"  save_freq: 100\n  logger: ['console', 'file']\n{extra}")


def w_verl_jsonl(run: dict, folder: Path, project: str = "rlhf", exp: str = "run", torn: bool = False) -> None:
    """verl FileLogger: one {"step": N, "data": {...}} per log call; NaN as null; a live run may end mid-line."""
    rows = merged(run)
    text = ""
    for s in sorted(rows):
        data = {k: (None if isinstance(x, float) and not math.isfinite(x) else x) for k, x in rows[s].items()}
        if s > 0:
            data["training/global_step"] = s
        text += json.dumps({"step": s, "data": data}, separators=(",", ":")) + "\n"
    if torn:
        text = text[: len(text) - len(text.splitlines()[-1]) // 3 - 1]
    p = folder / project / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    hydra_cfg(run, folder)


def w_verl_tb(run: dict, folder: Path) -> None:
    rows = merged(run)
    ev = [(wall(run, s), s, rows[s]) for s in sorted(rows)]
    tb_file(folder / "tensorboard_log" / "rlhf" / "run" / f"events.out.tfevents.{int(wall(run, 0))}.node-3.51277.0",
            ev)
    hydra_cfg(run, folder)


def w_openrlhf_console(run: dict, folder: Path, name: str = "train_ppo.log") -> None:
    """OpenRLHF Ray PPO trainer stdout: '✨ Global step N: {...}' per step, evaluation lines, an episode bar."""
    lines = ["[2026-11-26 20:01:13,002] [INFO] [real_accelerator.py:239:get_accelerator] Setting ds_accelerator to cuda",
             f"(PPOTrainer pid=4021) max_steps: {run['planned']}, num_episodes: 1, rollout_batch_size: 128"]
    ev = dict(run["evals"])
    for s, v in run["train"]:
        if s % 10 == 0:
            lines.append(f"Episode [1/1]: {_bar(s, run['planned'], run['sps'])}")
        lines.append(f"✨ Global step {s}: " + _pyfmt(v))
        if s in ev:
            lines.append(f"Evaluation completed in 74.12s, global_step {s}, eval_metrics: {_pyfmt(ev[s])}")
        if s % 100 == 0:
            lines.append(f"[INFO] Saving checkpoint: ./ckpt/checkpoints_ppo/global_step{s}")
    if run["finished"]:
        lines.append("Saving final model to ./ckpt/final ... done")
    (folder / name).write_text("\n".join(lines) + "\n")


def w_openrlhf_tb(run: dict, folder: Path, run_name: str = "ppo_1126T2001", resume: tuple | None = None,
                  jitter_keys: tuple = ()) -> None:
    """OpenRLHF TensorBoard: train/<key> and eval/<key> under <tensorboard_dir>/<run_name>.

    resume=(crash, restart): the job died after step `crash` and restarted from global_step<restart>; the steps
    in between are in both files. `jitter_keys` in the first file's replayed copy take the values of the restart
    step (the change came with the resume).
    """
    rows_t = [(s, {"train/" + k: x for k, x in v.items()}) for s, v in run["train"]]
    rows_e = [(s, {"eval/" + k: x for k, x in v.items()}) for s, v in run["evals"]]
    d = folder / run_name
    if resume is None:
        ev = sorted([(wall(run, s), s, v) for s, v in rows_t] + [(wall(run, s) + 30, s, v) for s, v in rows_e],
                    key=lambda e: (e[1], e[0]))
        tb_file(d / f"events.out.tfevents.{int(wall(run, 0))}.ray-head.7711.0", ev)
        return
    crash, restart = resume
    gap = (crash - restart) * run["sps"] + 900
    jit = np.random.default_rng(crash)
    at_restart = dict(rows_t)[restart]
    first = []
    for s, v in rows_t:
        if s <= restart:
            first.append((wall(run, s) - gap, s, v))
        elif s <= crash:
            vv = {k: (at_restart[k] if k in jitter_keys else x) * math.exp(0.04 * jit.standard_normal())
                  for k, x in v.items()}
            first.append((wall(run, s) - gap, s, vv))
    first += [(wall(run, s) - gap + 30, s, v) for s, v in rows_e if s <= crash]
    second = [(wall(run, s), s, v) for s, v in rows_t if s > restart]
    second += [(wall(run, s) + 30, s, v) for s, v in rows_e if s > restart]
    first.sort(key=lambda e: (e[1], e[0]))
    second.sort(key=lambda e: (e[1], e[0]))
    tb_file(d / f"events.out.tfevents.{int(first[0][0])}.ray-head.7711.0", first)
    tb_file(d / f"events.out.tfevents.{int(second[0][0])}.ray-head.9102.0", second)


def w_nemo_tb(run: dict, folder: Path, algo: str = "grpo") -> None:
    exp = folder / "logs" / "exp_001"
    ev = [(wall(run, s), s, v) for s, v in run["train"]] + [(wall(run, s) + 40, s, v) for s, v in run["evals"]]
    ev.sort(key=lambda e: (e[1], e[0]))
    tb_file(exp / "tensorboard" / f"events.out.tfevents.{int(wall(run, 0))}.dgx-b200-12.60311.0", ev)
    (exp / "config.yaml").write_text(f"{algo}:\n  max_num_steps: {run['planned']}\n  val_period: "
                                     f"{run['meta'].get('val_period', 20)}\n  val_at_start: true\n"
                                     f"logger:\n  log_dir: logs\n  tensorboard_enabled: true\n")


def w_wandb_csv(run: dict, folder: Path, run_name: str, panels: list[str], step_col: str = "train/global_step") -> None:
    """W&B panel exports: one CSV per panel, `<run> - <metric>` plus the __MIN / __MAX band columns."""
    for i, key in enumerate(panels):
        src = run["evals"] if key.startswith("eval/") else run["train"]
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        col = f"{run_name} - {key}"
        w.writerow([step_col, col, col + "__MIN", col + "__MAX"])
        for s, v in src:
            if key in v:
                w.writerow([s, f6(v[key]), f6(v[key]), f6(v[key])])
        (folder / f"wandb_export_2026-11-27T0{i}_12_4{i}.{i:03d}+01_00.csv").write_text(buf.getvalue())


def w_mlflow_files(run: dict, folder: Path, run_name: str, params: dict) -> None:
    rid = "a41c9e07b2d84f5e9c3a1f6e0d7b2c58"
    exp = folder / "mlruns" / "771204399"
    exp.mkdir(parents=True)
    t0 = int(wall(run, 0) * 1000)
    (exp / "meta.yaml").write_text("artifact_location: mlflow-artifacts:/771204399\ncreation_time: "
                                   f"{t0}\nexperiment_id: '771204399'\nlifecycle_stage: active\nname: pref-opt\n")
    rd = exp / rid
    for sub in ("params", "tags", "artifacts", "metrics"):
        (rd / sub).mkdir(parents=True)
    for k, v in params.items():
        (rd / "params" / k).write_text(str(v))
    (rd / "tags" / "mlflow.runName").write_text(run_name)
    status, end = (3, int(wall(run, run["reached"]) * 1000)) if run["finished"] else (1, "null")
    (rd / "meta.yaml").write_text(f"artifact_uri: mlflow-artifacts:/771204399/{rid}/artifacts\nend_time: {end}\n"
                                  f"entry_point_name: ''\nexperiment_id: '771204399'\nlifecycle_stage: active\n"
                                  f"run_id: {rid}\nrun_name: {run_name}\nrun_uuid: {rid}\nsource_name: ''\n"
                                  f"source_type: 4\nsource_version: ''\nstart_time: {t0}\nstatus: {status}\n"
                                  f"tags: []\nuser_id: rl\n")
    lines: dict[str, list[str]] = {}
    for s, v in run["train"]:
        for k, x in v.items():
            lines.setdefault(k, []).append(f"{int(wall(run, s) * 1000)} {x!r} {s}")
    for s, v in run["evals"]:
        for k, x in v.items():
            lines.setdefault(k, []).append(f"{int(wall(run, s) * 1000) + 25000} {x!r} {s}")
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


def w_mlflow_db(run: dict, folder: Path, run_name: str, params: dict) -> None:
    db = sqlite3.connect(folder / "mlflow.db")
    db.executescript("""
    CREATE TABLE experiments (experiment_id INTEGER PRIMARY KEY, name VARCHAR(256), artifact_location VARCHAR(256),
        lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
    CREATE TABLE runs (run_uuid VARCHAR(32) PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20),
        source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
        start_time BIGINT, end_time BIGINT, source_version VARCHAR(50), lifecycle_stage VARCHAR(20),
        artifact_uri VARCHAR(200), experiment_id INTEGER, deleted_time BIGINT);
    CREATE TABLE metrics (key VARCHAR(250), value FLOAT, timestamp BIGINT, run_uuid VARCHAR(32), step BIGINT,
        is_nan BOOLEAN, PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
    CREATE TABLE latest_metrics (key VARCHAR(250), value FLOAT, timestamp BIGINT, step BIGINT, is_nan BOOLEAN,
        run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    CREATE TABLE params (key VARCHAR(250), value VARCHAR(8000), run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    CREATE TABLE tags (key VARCHAR(250), value VARCHAR(8000), run_uuid VARCHAR(32), PRIMARY KEY (key, run_uuid));
    """)
    rid = "0d5be3a17c9f4e21b8a6d4c2e1f09a37"
    t0 = int(wall(run, 0) * 1000)
    db.execute("INSERT INTO experiments VALUES (3, 'ppo-rlhf', 'mlflow-artifacts:/3', 'active', ?, ?)", (t0, t0))
    db.execute("INSERT INTO runs VALUES (?, ?, 'UNKNOWN', '', '', 'rl', 'RUNNING', ?, NULL, '', 'active', ?, 3, NULL)",
               (rid, run_name, t0, f"mlflow-artifacts:/3/{rid}/artifacts"))
    for k, v in params.items():
        db.execute("INSERT INTO params VALUES (?, ?, ?)", (k, str(v), rid))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (run_name, rid))
    latest: dict[str, tuple] = {}
    for off, src in ((0, run["train"]), (25000, run["evals"])):
        for s, v in src:
            ts = int(wall(run, s) * 1000) + off
            for k, x in v.items():
                nan = not math.isfinite(x)
                db.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", (k, 0.0 if nan else x, ts, rid, s, nan))
                latest[k] = (k, 0.0 if nan else x, ts, s, nan, rid)
    db.executemany("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", list(latest.values()))
    db.commit()
    db.close()


def w_jsonl(run: dict, folder: Path, step_key: str = "step", eval_file: str | None = None, config: dict | None = None,
            extra: Callable[[int], dict] | None = None, done_line: dict | None = None) -> None:
    """A hand-written loop's JSONL: one object per logged step; evals inline (split=eval) or in their own file."""
    def dump(rows: list[tuple[int, dict]], tag: str | None) -> str:
        out = ""
        for s, v in rows:
            obj = {step_key: s, **({"split": tag} if tag else {}), **(extra(s) if extra and tag != "eval" else {}),
                   **{k: f6(x) for k, x in v.items()}, "time": round(wall(run, s), 1)}
            out += json.dumps(obj) + "\n"
        return out
    if eval_file:
        (folder / "metrics.jsonl").write_text(dump(run["train"], None) + (json.dumps(done_line) + "\n" if done_line
                                                                           else ""))
        (folder / eval_file).write_text(dump(run["evals"], None))
    else:
        rows = sorted([(s, v, "train") for s, v in run["train"]] + [(s, v, "eval") for s, v in run["evals"]],
                      key=lambda r: (r[0], r[2] == "train"))
        text = "".join(dump([(s, v)], tag) for s, v, tag in rows)
        (folder / "metrics.jsonl").write_text(text + (json.dumps(done_line) + "\n" if done_line else ""))
    if config:
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def w_csv(run: dict, folder: Path, name: str, cols: list[str], eval_cols: list[str]) -> None:
    """A plain PyTorch loop's CSV: one row per step, eval columns empty except on eval steps."""
    ev = dict(run["evals"])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["step", "total_steps", *cols, *eval_cols])
    for s, v in run["train"]:
        w.writerow([s, run["planned"], *[("nan" if not math.isfinite(v[c]) else f"{v[c]:.6g}") for c in cols],
                    *[(f"{ev[s][c]:.4f}" if s in ev else "") for c in eval_cols]])
    (folder / name).write_text(buf.getvalue())
    if run["finished"]:
        (folder / "train.log").write_text(f"step {run['reached']}/{run['planned']} done. saved final.pt\n"
                                          "training finished\n")


def writer(fn: Callable, *a, **kw) -> Callable:
    return lambda run, folder: fn(run, folder, *a, **kw)


# ---------------------------------------------------------------------------------------------- framework rows

def every(n: int, upto: int, start: int = 0) -> list[int]:
    return list(range(start, upto + 1, n))


def _lv(x) -> Level:
    return K(float(x)) if isinstance(x, int | float) else x


def verl_ppo(score, *, ev, vloss, ent, length, kl, gn=0.3, cgn=2.0, clip=0.03, vclip=0.05,
             val_mean=None, adv_span=2.5, lr=1e-6, trunc=0.01) -> dict:
    """verl PPO with a GAE critic (use_kl_in_reward): data, actor and critic keys."""
    gn, cgn, clip, vclip, adv_span, lr, trunc = map(_lv, (gn, cgn, clip, vclip, adv_span, lr, trunc))
    return {
        "critic/score/mean": score,
        "critic/rewards/mean": Derived(lambda r, s: r["critic/score/mean"] - 0.5 * r["actor/reward_kl_penalty"]),
        "critic/advantages/mean": Add(K(0.0), 0.004),
        "critic/advantages/max": Mul(adv_span, 0.08),
        "critic/advantages/min": Mul(lambda s: -adv_span(s), 0.08),
        "critic/returns/mean": Derived(lambda r, s: r["critic/rewards/mean"] * 0.97),
        "critic/values/mean": Add(val_mean or (lambda s: 0.0), 0.03),
        "critic/vf_explained_var": Add(ev, 0.03),
        "critic/vf_loss": Mul(vloss, 0.12),
        "critic/vf_clipfrac": Mul(vclip, 0.1),
        "critic/grad_norm": Grad(cgn),
        "critic/lr": Exact(K(1e-5)),
        "actor/pg_loss": Add(K(0.0), 0.02),
        "actor/pg_clipfrac": Mul(clip, 0.1),
        "actor/ppo_kl": Add(K(0.0003), 0.0002),
        "actor/entropy": Mul(ent, 0.03),
        "actor/reward_kl_penalty": Mul(kl, 0.06),
        "actor/reward_kl_penalty_coeff": Exact(K(0.001)),
        "actor/grad_norm": Grad(gn),
        "actor/lr": Exact(lr),
        "response_length/mean": Mul(length, 0.03),
        "response_length/clip_ratio": Mul(trunc, 0.2),
        "timing_s/step": Derived(lambda r, s: 50 + r["response_length/mean"] / 12),
    }


def trl_pairs_keys(prefix: str = "") -> dict:
    return {k: prefix + v for k, v in dict(chosen="rewards/chosen", rejected="rewards/rejected",
                                            margins="rewards/margins", accuracies="rewards/accuracies",
                                            loss="loss").items()}


# ------------------------------------------------------------------------------------------------------ stories

def ok_verl_ppo_critic_learns(reached: int, planned: int) -> Story:
    return Story(planned, verl_ppo(
        Bin(L((0, .28), (100, .33), (reached, .55)), P=256, G=1),
        ev=L((0, -.3), (150, .5), (reached, .74)), vloss=L((0, .35), (200, .1), (reached, .06)),
        ent=L((0, .55), (reached, .42)), length=L((0, 380), (reached, 520)), kl=L((0, 0), (reached, .02)),
        val_mean=L((0, 0), (150, .3), (reached, .5)), vclip=L((0, .18), (200, .04), (reached, .03))),
        {"val-core/math/acc/mean@1": Acc(L((0, .30), (100, .34), (reached, .52)), 500)},
        every(30, reached), "val-core/math/acc/mean@1", age_min=3, sps=95, meta=dict(test_freq=30))


def ok_openrlhf_ppo_renorm_spike(reached: int, planned: int) -> Story:
    spike = L((0, 0), (550, 0), (552, 1), (575, 1), (620, 0))
    return Story(planned, {
        "reward": Score(L((0, -.8), (300, .4), (reached, 1.5)), sigma=1.4, tau=.6, P=128),
        "return": Derived(lambda r, s: r["reward"] - 0.05 * r["kl"]),
        "policy_loss": Add(K(-0.01), 0.02),
        "critic_loss": Mul(lambda s: L((0, .3), (120, .08), (reached, .06))(s) * (1 + 12 * spike(s)), .15),
        "values": Add(lambda s: L((0, -.8), (300, .35), (reached, 1.4))(s) - 1.6 * spike(s), .05),
        "kl": Mul(L((0, 0.01), (reached, 4.0)), .05),
        "ppo_clip_ratio": Mul(lambda s: .04 + .06 * spike(s), .1),
        "response_length": Mul(L((0, 210), (reached, 290)), .03),
        "actor_lr": Exact(K(5e-7)), "critic_lr": Exact(K(9e-6)),
        "actor_grad_norm": Grad(K(0.4)), "critic_grad_norm": Grad(lambda s: 3 + 40 * spike(s)),
    }, {"eval_gold_judge_pass1": Acc(L((0, .5), (reached, .68)), 400)}, every(50, reached, 50),
        "eval_gold_judge_pass1", age_min=6, sps=70)


def kto_train(kl: Level, chosen: Level, rejected: Level, lpc: Level, lpr: Level, spread: Level, loss_kind="kto",
              nc=8, nr=24) -> dict:
    return {
        "_pairs": Pairs(chosen, rejected, spread, B=32, names=dict(chosen="rewards/chosen", rejected="rewards/rejected",
                                                                   margins="rewards/margins", loss="loss"),
                        loss=loss_kind, kl=kl),
        "kl": Mul(kl, .08), "logps/chosen": Add(lpc, 2.0), "logps/rejected": Add(lpr, 2.5),
        "logits/chosen": Add(K(-2.1), .05), "logits/rejected": Add(K(-2.0), .05),
        "count/chosen": Exact(K(nc)), "count/rejected": Exact(K(nr)),
        "grad_norm": Grad(K(6.0)), "learning_rate": Exact(K(5e-7)),
    }


def ok_trl_kto_undesirable_heavy(reached: int, planned: int) -> Story:
    return Story(planned, kto_train(kl=L((0, .02), (reached, .9)), chosen=L((0, 0), (reached, .45)),
                                    rejected=L((0, 0), (300, -1.4), (reached, -2.6)),
                                    lpc=L((0, -182), (reached, -171)), lpr=L((0, -201), (reached, -262)),
                                    spread=K(.8)),
                 {"eval_loss": Mean(L((0, .50), (300, .42), (reached, .37)), .25, 1000),
                  "eval_rewards/chosen": Add(L((0, 0), (reached, .4)), .03),
                  "eval_rewards/rejected": Add(L((0, 0), (reached, -2.3)), .05),
                  "eval_kl": Add(L((0, .02), (reached, .8)), .02)},
                 every(100, reached, 100), "eval_loss", higher=False, log_every=10, age_min=22, sps=9)


def ok_cpo_mlflow(reached: int, planned: int) -> Story:
    return Story(planned, {
        "_pairs": Pairs(L((0, -21.0), (reached, -19.5)), L((0, -21.5), (reached, -26.0)), K(1.6), B=64,
                        names=trl_pairs_keys()),
        "nll_loss": Mul(L((0, 1.05), (reached, .93)), .02),
        "logps/chosen": Derived(lambda r, s: r["rewards/chosen"] * 10),
        "logps/rejected": Derived(lambda r, s: r["rewards/rejected"] * 10),
        "grad_norm": Grad(K(9.0)), "learning_rate": Exact(L((0, 0), (100, 8e-7), (planned, 0))),
    }, {"eval_rewards/accuracies": Acc(L((0, .60), (200, .64), (reached, .70)), 800),
        "eval_loss": Mean(L((0, 1.8), (reached, 1.55)), .4, 800)},
        every(100, reached, 100), "eval_rewards/accuracies", log_every=10, age_min=5, sps=14)


def iter_dpo(round_len: int, acc0: float, acc1: float, m1: float, winrate: Level, length: Level,
             planned: int, reached: int, evals: list[int]) -> Story:
    def within(s):
        return ((s - 1) % round_len) / round_len
    return Story(planned, {
        "_pairs": Pairs(lambda s: .05 + m1 * .6 * within(s), lambda s: .05 - m1 * .4 * within(s),
                        lambda s: .35 + .6 * within(s), B=64,
                        names=dict(chosen="chosen_reward", rejected="rejected_reward", margins="margin",
                                   accuracies="pref_acc", loss="loss")),
        "round": Derived(lambda r, s: float((s - 1) // round_len + 1)),
        "chosen_logp": Add(lambda s: -150 - 20 * within(s), 3.0),
        "rejected_logp": Add(lambda s: -152 - 45 * within(s), 3.0),
        "gen_len": Mul(length, .03),
        "grad_norm": Grad(K(4.0)), "lr": Exact(K(5e-7)),
    }, {"judge_winrate": Acc(winrate, 600), "judge_len": Mul(length, .02)}, evals, "judge_winrate",
        age_min=7, sps=12)


def ok_iterative_dpo_sawtooth(reached: int, planned: int) -> Story:
    return iter_dpo(250, .55, .85, 1.2, L((0, .5), (250, .57), (500, .62), (750, .66), (1000, .69), (reached, .70)),
                    L((0, 310), (reached, 360)), planned, reached, every(125, reached))


def ok_nemo_dapo(reached: int, planned: int) -> Story:
    p = L((0, .22), (reached, .48))
    return Story(planned, {
        "_bin": Bin(p, P=128, G=16, out={"mean": "train/reward", "all0": "_all0", "all1": "_all1"}),
        "train/filtered_reward": Add(L((0, .44), (reached, .52)), .015),
        "train/baseline_reward/pct_0": Derived(lambda r, s: 100 * r["_all0"]),
        "train/baseline_reward/pct_1": Derived(lambda r, s: 100 * r["_all1"]),
        "train/baseline_reward/pct_mixed": Derived(lambda r, s: 100 * (1 - r["_all0"] - r["_all1"])),
        "train/approx_entropy": Mul(L((0, .36), (reached, .34)), .04),
        "train/kl_penalty": Exact(K(0.0)),
        "train/mean_gen_tokens_per_sample": Mul(L((0, 900), (reached, 1600)), .03),
        "train/truncation_rate": Mul(K(.03), .15),
        "train/grad_norm": Grad(K(.25)), "train/lr": Exact(K(1e-6)),
        "train/probs_ratio": Add(K(1.0), .002),
        "timing/train/dynamic_sampling": Mul(L((0, 140), (reached, 90)), .1),
        "timing/train/total_step_time": Mul(L((0, 420), (reached, 600)), .05),
    }, {"validation/accuracy": Acc(L((0, .24), (reached, .41)), 500)}, every(20, reached), "validation/accuracy",
        first=1, age_min=9, sps=520)


def ok_agent_tool_errors_hump(reached: int, planned: int) -> Story:
    return Story(planned, {
        "success_rate": Bin(L((0, .18), (reached, .42)), P=32, G=4),
        "turns_mean": Mul(L((0, 4.2), (250, 6.5), (reached, 5.0)), .04),
        "tool_calls_mean": Mul(L((0, 3.1), (250, 5.6), (reached, 4.0)), .04),
        "tool_error_rate": Mul(L((0, .05), (150, .12), (260, .22), (450, .07), (reached, .06)), .12),
        "episode_return_mean": Derived(lambda r, s: r["success_rate"] - .02 * r["turns_mean"] - .1 * r["tool_error_rate"]),
        "kl": Mul(L((0, 0.0), (reached, .05)), .06), "entropy": Mul(L((0, .7), (reached, .55)), .03),
        "grad_norm": Grad(K(.6)), "lr": Exact(K(1e-6)),
    }, {"heldout_success": Acc(L((0, .20), (reached, .40)), 200), "heldout_turns": Mul(L((0, 4.3), (reached, 5.1)), .02)},
        every(50, reached), "heldout_success", age_min=4, sps=65)


def trl_ppo_train(scores: Score, kl: Level, vloss: Level, ent: Level, ratio=1.0, clip=.05, vclip=.1,
                  eos=60.0) -> dict:
    ratio, clip, vclip, eos = map(_lv, (ratio, clip, vclip, eos))
    return {
        "objective/scores": scores,
        "objective/kl": Mul(kl, .05),
        "objective/non_score_reward": Derived(lambda r, s: -0.05 * r["objective/kl"]),
        "objective/rlhf_reward": Derived(lambda r, s: r["objective/scores"] + r["objective/non_score_reward"]),
        "objective/entropy": Mul(ent, .03),
        "policy/approxkl_avg": Mul(K(.002), .2), "policy/clipfrac_avg": Mul(clip, .1),
        "loss/policy_avg": Add(K(-.01), .01), "loss/value_avg": Mul(vloss, .12), "val/clipfrac_avg": Mul(vclip, .1),
        "policy/entropy_avg": Mul(ent, .03), "val/ratio": Add(ratio, .004), "val/ratio_var": Mul(K(3e-4), .2),
        "val/num_eos_tokens": Mul(eos, .05), "lr": Exact(K(3e-6)), "episode": Derived(lambda r, s: 64.0 * s),
        "eps": Exact(K(7.0)),
    }


def ok_trl_ppo_rm_flat_gold_rising(reached: int, planned: int) -> Story:
    return Story(planned, trl_ppo_train(Score(L((0, .5), (400, 2.6), (reached, 2.8)), 1.3, .5, 64),
                                        L((0, 0), (400, 4), (reached, 6)), L((0, 1.2), (100, .3), (reached, .25)),
                                        L((0, 95), (reached, 80))),
                 {"eval_gold_winrate": Acc(L((0, .5), (400, .62), (reached, .70)), 300)}, every(50, reached, 50),
                 "eval_gold_winrate", age_min=14, sps=30)


def orpo_train(reached: int, planned: int, acc: Level, lor: Level) -> dict:
    return {
        "_pairs": Pairs(L((0, -1.2), (reached, -1.0)), L((0, -1.25), (reached, -1.6)), K(.15), B=32,
                        names=dict(chosen="rewards/chosen", rejected="rewards/rejected", margins="rewards/margins",
                                   accuracies="rewards/accuracies")),
        "log_odds_ratio": Add(lor, .05), "log_odds_chosen": Add(lambda s: -lor(s) * 3, .1),
        "nll_loss": Mul(L((0, 1.25), (200, 1.12), (reached, 1.10)), .02),
        "loss": Derived(lambda r, s: r["nll_loss"] - .1 * r["log_odds_ratio"]),
        "logps/chosen": Derived(lambda r, s: r["rewards/chosen"] * 10), "logps/rejected":
            Derived(lambda r, s: r["rewards/rejected"] * 10),
        "grad_norm": Grad(K(3.0)), "learning_rate": Exact(L((0, 0), (60, 8e-6), (planned, 0))),
    }


def ok_orpo_hf_tb(reached: int, planned: int) -> Story:
    return Story(planned, orpo_train(reached, planned, K(0), L((0, -.75), (reached, -.45))),
                 {"eval_rewards/accuracies": Acc(L((0, .55), (reached, .68)), 1000),
                  "eval_loss": Mean(L((0, 1.33), (reached, 1.17)), .3, 1000)},
                 every(100, reached, 100), "eval_rewards/accuracies", log_every=10, age_min=3, sps=6)


def ok_rloo_wandb(reached: int, planned: int) -> Story:
    return Story(planned, {
        "train/reward": Bin(L((0, .35), (reached, .52)), P=16, G=4, avg=10),
        "train/reward_std": Add(K(.45), .02), "train/kl": Mul(L((0, 0), (reached, .12)), .08),
        "train/entropy": Mul(L((0, .5), (reached, .44)), .03),
        "train/completions/mean_length": Mul(L((0, 400), (reached, 470)), .03),
        "train/grad_norm": Grad(K(.2)), "train/learning_rate": Exact(K(1e-6)),
    }, {"eval/reward": Acc(L((0, .36), (reached, .50)), 500)}, every(100, reached, 100), "eval/reward", log_every=10,
        age_min=30, sps=22)


# stop / converged

def stop_verl_ppo_critic_fits(reached: int, planned: int) -> Story:
    return Story(planned, verl_ppo(
        Bin(L((0, .30), (350, .71), (reached, .71)), P=256, G=1),
        ev=L((0, -.2), (150, .6), (400, .93), (reached, .95)), vloss=L((0, .3), (400, .03), (reached, .012)),
        ent=L((0, .5), (350, .12), (500, .08), (reached, .07)), length=L((0, 400), (300, 330), (reached, 320)),
        kl=L((0, 0), (350, .06), (reached, .07)), adv_span=L((0, 3.0), (400, .8), (reached, .6)),
        clip=L((0, .04), (400, .004), (reached, .002)), val_mean=L((0, 0), (350, .68), (reached, .7))),
        {"val-core/gsm8k/acc/mean@1": Acc(L((0, .33), (350, .70), (reached, .70)), 1319)}, every(50, reached),
        "val-core/gsm8k/acc/mean@1", age_min=5, sps=80)


def stop_trl_kto_finished(reached: int, planned: int) -> Story:
    return Story(planned, kto_train(kl=L((0, .02), (1100, .6), (reached, .7)), chosen=L((0, 0), (reached, .6)),
                                    rejected=L((0, 0), (1100, -1.6), (reached, -1.9)),
                                    lpc=L((0, -175), (reached, -168)), lpr=L((0, -190), (reached, -230)),
                                    spread=K(.7), nc=16, nr=16),
                 {"eval_loss": Mean(L((0, .50), (600, .38), (1100, .34), (reached, .34)), .25, 1000),
                  "eval_kl": Add(L((0, .02), (reached, .6)), .02)},
                 every(100, reached, 100), "eval_loss", higher=False, log_every=10, age_min=95, sps=8, finished=True)


def conv_online_dpo(reached: int, planned: int) -> Story:
    return Story(planned, {
        "objective/scores": Score(L((0, -.5), (800, 1.6), (1500, 1.75), (reached, 1.75)), 1.2, .4, 64, 2, avg=10),
        "objective/scores_margin": Mul(L((0, 1.1), (800, .7), (reached, .6)), .05),
        "objective/kl": Mul(L((0, 0), (1500, 9), (reached, 10)), .04),
        "objective/non_score_reward": Derived(lambda r, s: -.1 * r["objective/kl"]),
        "objective/rlhf_reward": Derived(lambda r, s: r["objective/scores"] + r["objective/non_score_reward"]),
        "objective/entropy": Mul(L((0, 110), (reached, 85)), .03),
        "_pairs": Pairs(L((0, .02), (reached, .4)), L((0, .0), (reached, -.5)), K(.5), B=64,
                        names=dict(chosen="rewards/chosen", rejected="rewards/rejected", margins="rewards/margins",
                                   accuracies="rewards/accuracies", loss="loss")),
        "logps/chosen": Add(L((0, -140), (reached, -128)), 2), "logps/rejected": Add(L((0, -141), (reached, -150)), 2),
        "val/contain_eos_token": Add(K(.97), .01), "beta": Exact(K(.1)),
        "grad_norm": Grad(K(5.0)), "learning_rate": Exact(L((0, 5e-7), (planned, 0))),
    }, {}, [], "objective/scores", log_every=10, age_min=8, sps=25)


def stop_verl_dapo_gen_batches_max(reached: int, planned: int) -> Story:
    nb = L((0, 1.2), (400, 2.5), (700, 10), (reached, 10))
    return Story(planned, {
        "critic/score/mean": Add(L((0, .45), (reached, .55)), .02),
        "critic/score/max": Exact(K(1.0)), "critic/score/min": Exact(K(0.0)),
        "train/num_gen_batches": Derived(lambda r, s: float(min(10, max(1, round(nb(s) + .6 * np.sin(s)))))),
        "actor/entropy": Mul(L((0, .42), (500, .16), (reached, .1)), .04),
        "actor/pg_clipfrac": Mul(L((0, .006), (reached, .002)), .1),
        "actor/grad_norm": Grad(L((0, .22), (reached, .09))),
        "actor/lr": Exact(K(1e-6)),
        "response_length/mean": Mul(L((0, 1900), (500, 2600), (reached, 2500)), .03),
        "response_length/clip_ratio": Mul(K(.02), .2),
        "timing_s/gen": Derived(lambda r, s: 150 * r["train/num_gen_batches"]),
        "timing_s/step": Derived(lambda r, s: 150 * r["train/num_gen_batches"] + 140),
    }, {"val-core/math_dapo/acc/mean@4": Acc(L((0, .30), (500, .58), (reached, .58)), 500)}, every(50, reached),
        "val-core/math_dapo/acc/mean@4", age_min=12, sps=900, meta=dict(test_freq=50))


def stop_ipo_never_learns(reached: int, planned: int) -> Story:
    return Story(planned, {
        "_pairs": Pairs(K(.0004), K(-.0002), K(.002), B=32, names=trl_pairs_keys(), loss="ipo", beta=1.0),
        "logps/chosen": Add(K(-160), 2), "logps/rejected": Add(K(-171), 2),
        "logits/chosen": Add(K(-1.9), .02), "logits/rejected": Add(K(-1.9), .02),
        "grad_norm": Grad(K(.9)), "learning_rate": Exact(K(5e-10)),
    }, {"eval_rewards/accuracies": Acc(K(.5), 600), "eval_loss": Mean(K(.2497), .002, 600)},
        every(100, reached, 100), "eval_rewards/accuracies", log_every=10, age_min=6, sps=4)


def stop_openrlhf_agent_finished(reached: int, planned: int) -> Story:
    return Story(planned, {
        "reward": Bin(L((0, .21), (600, .47), (reached, .47)), P=32, G=8),
        "group_reward_std": Mul(L((0, .35), (reached, .33)), .05),
        "kl": Mul(L((0, 0), (600, .05), (reached, .09)), .05),
        "entropy_loss": Mul(L((0, .6), (reached, .45)), .03),
        "response_length": Mul(L((0, 1500), (reached, 1900)), .03),
        "policy_loss": Add(K(0), .02), "actor_lr": Exact(K(1e-6)), "actor_grad_norm": Grad(K(.3)),
        "ppo_clip_ratio": Mul(K(.01), .1),
    }, {"eval_webshop_pass1": Acc(L((0, .22), (600, .46), (reached, .46)), 300)}, every(50, reached, 50),
        "eval_webshop_pass1", age_min=240, sps=110, finished=True)


# rollback: clear

def rb_openrlhf_ppo_critic_diverges(reached: int, planned: int) -> Story:
    bad = L((0, 0), (700, 0), (760, 1), (reached, 1))
    return Story(planned, {
        "reward": Bin(L((0, .25), (650, .55), (720, .55), (800, .2), (reached, .18)), P=128, G=1),
        "return": Derived(lambda r, s: r["reward"] - .02),
        "critic_loss": Mul(lambda s: .05 + 30 * bad(s), .2),
        "values": Add(lambda s: L((0, .2), (650, .5))(s) + 7.5 * bad(s), .05),
        "critic_grad_norm": Grad(lambda s: 2 + 200 * bad(s)),
        "policy_loss": Add(lambda s: -.01 + .3 * bad(s), .03),
        "kl": Mul(L((0, 0), (700, .03), (800, .4), (reached, .5)), .06),
        "ppo_clip_ratio": Mul(lambda s: .03 + .25 * bad(s), .1),
        "response_length": Mul(L((0, 350), (700, 420), (800, 260), (reached, 240)), .03),
        "actor_lr": Exact(K(1e-6)), "critic_lr": Exact(K(9e-6)), "actor_grad_norm": Grad(lambda s: .4 + 2 * bad(s)),
    }, {"eval_math_pass1": Acc(L((0, .27), (650, .54), (720, .54), (800, .22), (reached, .2)), 500)},
        every(50, reached, 50), "eval_math_pass1", age_min=3, sps=60)


def rb_nemo_dpo_displacement(reached: int, planned: int) -> Story:
    return Story(planned, {
        "_pairs": Pairs(L((0, 0), (600, -1.0), (900, -2.5), (reached, -9.0)), L((0, 0), (600, -3.5), (900, -6.5),
                                                                              (reached, -17)),
                        L((0, .6), (reached, 2.2)), B=64,
                        names=dict(chosen="train/rewards_chosen_mean", rejected="train/rewards_rejected_mean",
                                   accuracies="train/accuracy", loss="train/preference_loss")),
        "train/sft_loss": Mul(L((0, 1.1), (600, 1.3), (900, 1.7), (reached, 3.5)), .03),
        "train/loss": Derived(lambda r, s: r["train/preference_loss"]),
        "train/grad_norm": Grad(K(12.0)), "train/lr": Exact(K(1e-6)),
    }, {"validation/accuracy": Acc(L((0, .58), (800, .70), (900, .70), (reached, .62)), 1000),
        "validation/loss": Mean(L((0, .69), (800, .58), (900, .58), (reached, .66)), .35, 1000)},
        every(100, reached), "validation/accuracy", first=1, age_min=5, sps=7, meta=dict(val_period=100))


def rb_trl_kto_everything_down(reached: int, planned: int) -> Story:
    return Story(planned, {
        **kto_train(kl=L((0, .02), (500, .5), (reached, 3.5)), chosen=L((0, 0), (500, .3), (reached, -1.5)),
                    rejected=L((0, 0), (500, -2), (reached, -7)), lpc=L((0, -180), (500, -177), (reached, -240)),
                    lpr=L((0, -195), (500, -250), (reached, -420)), spread=K(.9), nc=4, nr=28),
    }, {"eval_loss": Mean(L((0, .50), (500, .36), (reached, .25)), .25, 1000),
        "eval_judge_score": Mean(L((0, 5.2), (450, 6.1), (520, 6.1), (reached, 4.6)), 2.0, 300)},
        every(100, reached, 100), "eval_judge_score", log_every=10, age_min=18, sps=10)


def rb_verl_ppo_rm_overopt(reached: int, planned: int) -> Story:
    t = verl_ppo(Score(L((0, 0), (600, 2.2), (reached, 3.5)), 1.3, .5, 128),
                 ev=L((0, -.1), (200, .6), (reached, .7)), vloss=L((0, .6), (200, .15), (reached, .12)),
                 ent=L((0, .9), (reached, .7)), length=L((0, 300), (600, 420), (reached, 900)),
                 kl=L((0, 0), (600, 6), (reached, 18)), val_mean=L((0, 0), (600, 2), (reached, 3.3)))
    return Story(planned, t, {"val-core/gold_judge/reward/mean@1": Acc(L((0, .5), (600, .66), (650, .66),
                                                                          (reached, .52)), 400)},
                 every(50, reached), "val-core/gold_judge/reward/mean@1", age_min=4, sps=85)


def rb_openrlhf_dapo_filter_collapse(reached: int, planned: int) -> Story:
    p = L((0, .32), (1000, .62), (1100, .62), (1250, .10), (reached, .08))
    return Story(planned, {
        "_bin": Bin(p, P=128, G=16, out={"mean": "rollout/reward_mean", "std": "rollout/reward_std",
                                         "zero_std": "_zero", "group_std": "group_reward_std"}),
        "reward": Add(L((0, .5), (1100, .52), (1250, .47), (reached, .45)), .02),
        "dynamic_filtering_pass_rate": Derived(lambda r, s: 1 - r["_zero"]),
        "entropy_loss": Mul(L((0, .38), (1100, .45), (1180, 1.9), (reached, 2.6)), .05),
        "response_length": Mul(L((0, 1800), (1100, 2500), (1250, 3900), (reached, 4000)), .03),
        "truncated": Mul(L((0, .03), (1100, .06), (1250, .55), (reached, .6)), .08),
        "ppo_clip_ratio": Mul(L((0, .01), (1100, .015), (1200, .09)), .1),
        "policy_loss": Add(K(0), .02), "actor_lr": Exact(K(1e-6)), "actor_grad_norm": Grad(L((0, .2), (1100, .25),
                                                                                              (1200, 1.4))),
    }, {"eval_math500_pass1": Acc(L((0, .40), (1000, .63), (1100, .63), (1250, .12), (reached, .1)), 500)},
        every(50, reached, 50), "eval_math500_pass1", age_min=2, sps=240)


def rb_verl_agent_malformed_calls(reached: int, planned: int) -> Story:
    p = L((0, .20), (760, .46), (800, .46), (reached, .30))
    return Story(planned, {
        "critic/score/mean": Bin(p, P=64, G=8),
        "num_turns/mean": Mul(L((0, 5.2), (800, 6.0), (reached, 8.5)), .03),
        "num_turns/max": Exact(K(12.0)),
        "tool_call_counts/mean": Mul(L((0, 3.8), (800, 4.4), (reached, 6.9)), .03),
        "env/malformed_call_rate": Mul(L((0, .05), (400, .02), (800, .02), (reached, .40)), .1),
        "actor/entropy": Mul(L((0, .55), (800, .48), (reached, .62)), .03),
        "actor/kl_loss": Mul(L((0, 0), (800, .03), (reached, .08)), .05),
        "actor/grad_norm": Grad(K(.3)), "actor/lr": Exact(K(1e-6)),
        "response_length/mean": Mul(L((0, 700), (reached, 820)), .03),
        "response_length/clip_ratio": Mul(K(.01), .2),
    }, {"val-core/toolbench/reward/mean@1": Acc(L((0, .21), (760, .45), (800, .45), (reached, .31)), 400)},
        every(40, reached), "val-core/toolbench/reward/mean@1", age_min=5, sps=150)


def rb_openrlhf_reinforcepp_hot_lr(reached: int, planned: int) -> Story:
    lv = wave(L((0, .30), (300, .52), (320, .52), (reached, .36)), -.015, 120, 320)
    return Story(planned, {
        "reward": Bin(lv, P=128, G=4),
        "return": Derived(lambda r, s: r["reward"] - .5 - .01 * r["kl"]),
        "kl": Mul(L((0, 0), (300, .05), (reached, .9)), .08),
        "entropy_loss": Mul(L((0, .5), (300, .44), (reached, .2)), .05),
        "response_length": Mul(L((0, 300), (300, 340), (reached, 230)), .04),
        "policy_loss": Add(K(0), .05), "actor_lr": Exact(L((0, 0), (300, 5e-6), (reached, 5e-6))),
        "actor_grad_norm": Grad(L((0, .3), (300, .6), (reached, 1.5))),
        "ppo_clip_ratio": Mul(L((0, .02), (300, .06), (reached, .15)), .1),
    }, {"eval_gsm8k_pass1": Acc(lambda s: lv(s) + .0, 1000)}, every(50, reached, 50), "eval_gsm8k_pass1",
        age_min=3, sps=45)


def rb_custom_csv_nan(reached: int, planned: int) -> Story:
    dead = L((0, 0), (1320, 0), (1321, 1))
    return Story(planned, {
        "reward_mean": Bin(L((0, .2), (1100, .6), (1320, .6), (1321, 0.0)), P=32, G=8),
        "baseline_ema": Derived(lambda r, s: r["reward_mean"] * .9),
        "loss": Derived(lambda r, s: float("nan") if dead(s) else .3 * (r["reward_mean"] - .5)),
        "grad_norm": Derived(lambda r, s: float("nan") if dead(s) else abs(.4 + .1 * math.sin(s))),
        "entropy": Derived(lambda r, s: float("nan") if dead(s) else .5 - .1 * s / 1320),
        "avg_response_len": Mul(lambda s: 24.0 if dead(s) else 420 - 60 * s / 1320, .03),
        "lr": Exact(K(2e-6)),
    }, {"eval_acc": Acc(L((0, .2), (1100, .6), (1320, .6), (1321, 0.0)), 500)}, every(100, reached, 100),
        "eval_acc", first=1, age_min=150, sps=30, finished=True)


# rollback / stop-or-rollback: subtle

def rb_mlflow_db_trl_ppo_gold_erodes(reached: int, planned: int) -> Story:
    return Story(planned, trl_ppo_train(Score(L((0, .2), (1000, 2.9), (reached, 3.3)), 1.3, .5, 64),
                                        L((0, 0), (1000, 5), (reached, 9)), L((0, 1.0), (200, .3), (1000, .25),
                                                                              (reached, .7)),
                                        L((0, 90), (reached, 70)), vclip=L((0, .1), (1000, .1), (reached, .3))),
                 {"eval_gold_winrate": Acc(L((0, .50), (1000, .64), (1100, .64), (reached, .58)), 800)},
                 every(100, reached, 100), "eval_gold_winrate", age_min=10, sps=28)


def sor_trl_dpo_margins_grow(reached: int, planned: int) -> Story:
    return Story(planned, {
        "_pairs": Pairs(L((0, 0), (1000, .4), (reached, .2)), L((0, 0), (1000, -2.0), (reached, -4.8)),
                        L((0, .4), (reached, 1.6)), B=64, names=trl_pairs_keys()),
        "logps/chosen": Add(L((0, -160), (reached, -168)), 2), "logps/rejected": Add(L((0, -170), (reached, -215)), 2),
        "logits/chosen": Add(K(-1.7), .03), "logits/rejected": Add(K(-1.6), .03),
        "grad_norm": Grad(K(14)), "learning_rate": Exact(K(5e-7)),
    }, {"eval_rewards/accuracies": Acc(L((0, .60), (1000, .72), (1400, .72), (reached, .703)), 1000),
        "eval_rewards/margins": Add(L((0, 0), (1000, 1.8), (reached, 2.6)), .05),
        "eval_loss": Mean(L((0, .69), (1000, .55), (1400, .55), (reached, .57)), .4, 1000)},
        every(100, reached, 100), "eval_rewards/accuracies", log_every=10, age_min=12, sps=11)


def rb_iterative_dpo_late_rounds(reached: int, planned: int) -> Story:
    return iter_dpo(200, .55, .88, 1.4, L((0, .5), (200, .58), (400, .64), (600, .68), (800, .70), (1000, .705),
                                        (1200, .64), (reached, .60)),
                    L((0, 300), (800, 340), (1000, 380), (1200, 560), (reached, 720)), planned, reached,
                    every(200, reached))


def rb_trl_rloo_console_stalled(reached: int, planned: int) -> Story:
    return Story(planned, {
        "reward": Bin(L((0, .30), (700, .55), (reached, .70)), P=32, G=4, avg=10),
        "reward_std": Add(K(.44), .02), "frac_reward_zero_std": Add(L((0, .3), (reached, .45)), .03),
        "kl": Mul(L((0, 0), (reached, .3)), .06), "entropy": Mul(L((0, .5), (reached, .36)), .03),
        "completions/mean_length": Mul(L((0, 380), (reached, 330)), .03),
        "completions/clipped_ratio": Mul(K(.01), .2),
        "grad_norm": Grad(K(.25)), "learning_rate": Exact(K(1e-6)), "loss": Add(K(.0), .003),
    }, {"eval_reward": Acc(L((0, .31), (700, .52), (750, .52), (reached, .44)), 500)}, every(100, reached, 100),
        "eval_reward", log_every=10, age_min=300, sps=18)


# ----------------------------------------------------------------------------------------------------- the table

def RB(onset: int) -> dict:
    return dict(_kind="rb", onset=onset)


def SOR(onset: int) -> dict:
    return dict(_kind="sor", onset=onset)


JSONL_AGENT_CFG = dict(algo="reinforce_rloo_multiturn", total_iters=2000, tasks="shop-tools-v2", episodes_per_task=4)

CASES = [
    # ---- healthy, including look-alikes of the failures below
    Case("ok-verl-ppo-gae-critic-learns-ev-neg-to-0.74-vf-loss-falls-val-rising-jsonl-at-45pct",
         ok_verl_ppo_critic_learns, writer(w_verl_jsonl, torn=True), 2201, (540, 1200), HEALTHY,
         "healthy ppo critic verl-jsonl live",
         "verl PPO with a GAE critic (use_kl_in_reward), file logger, 540 of 1200 steps, still writing (the last "
         "line is torn). The critic starts useless (vf_explained_var -0.3) and learns: EV 0.5 by 150 and 0.74 now, "
         "vf_loss 0.35 to 0.06, value-clip fraction falling. Train score 0.28 to 0.55 on 256 prompts per step, "
         "val-core math acc 0.30 to 0.52 (N=500, every 30) and still rising at the end. Nothing to act on: continue."),
    Case("ok-openrlhf-ppo-resume-at-550-reward-normaliser-reset-critic-loss-x13-settles-by-620-gold-rising-tb",
         ok_openrlhf_ppo_renorm_spike, writer(w_openrlhf_tb, resume=(560, 550),
                                              jitter_keys=("critic_loss", "values", "ppo_clip_ratio",
                                                           "critic_grad_norm")),
         2202, (1100, 2000), HEALTHY, "healthy ppo critic openrlhf-tb resume look-alike",
         "OpenRLHF PPO with a reward model, 1100 of 2000 steps, two TensorBoard files: the job died at 560 and "
         "resumed from global_step550 (steps 551-560 are in both). The reward normaliser's running stats were not "
         "in the checkpoint, so after the resume critic_loss jumps about 13x, values shift down by 1.6, critic grad "
         "norm and the clip ratio spike for ~25 steps, then all settle by ~620. The raw RM reward keeps climbing "
         "(-0.8 to 1.5) and the gold-judge win rate (N=400, every 50) rises steadily 0.50 to 0.68 straight through "
         "the spike. A critic transient, not a collapse: continue."),
    Case("ok-trl-kto-3-to-1-undesirable-rejected-rewards-plunge-eval-loss-still-falling-ckpts-limit3",
         ok_trl_kto_undesirable_heavy, writer(w_trl_state, save_every=200, keep=3, eval_every=100), 2203,
         (1000, 2400), HEALTHY, "healthy kto trl-state save-limit",
         "TRL KTO on unpaired data with three undesirable examples per desirable one, checkpoints every 200 "
         "(save_total_limit 3), 1000 of 2400 steps, newest checkpoint 22 minutes old (saves take ~30 min). "
         "rewards/rejected plunges to -2.6 and logps/rejected falls 60 nats while rewards/chosen creeps up to "
         "+0.45 and logps/chosen rises: the pushdown is on the undesirable side only, which is what KTO should do. "
         "The KL estimate grows to 0.9. eval_loss (N=1000, sd ~0.008) keeps falling, 0.50 to 0.37, still going "
         "down at 1000. Continue."),
    Case("ok-cpo-nll-term-keeps-chosen-logps-up-margins-widen-eval-acc-0.60-to-0.70-mlflow-files",
         ok_cpo_mlflow, writer(w_mlflow_files, "cpo-llama3-8b", dict(max_steps=1800, beta=0.1, loss_type="sigmoid",
                                                                    cpo_alpha=1.0)),
         2204, (700, 1800), HEALTHY, "healthy cpo mlflow-files",
         "TRL CPO through the HF MLflow callback (file store, raw keys), 700 of 1800 steps, logging every 10. "
         "The NLL term holds the chosen log-probs up (rewards/chosen -21 to -19.5) while rejected fall to -26; "
         "nll_loss eases 1.05 to 0.93. Held-out preference accuracy (N=800, every 100) rises 0.60 to 0.70 and is "
         "still rising. Continue."),
    Case("ok-iterative-dpo-250-step-rounds-train-acc-resets-each-round-judge-winrate-climbs-custom-jsonl",
         ok_iterative_dpo_sawtooth, writer(w_jsonl, config=dict(algo="iterative_dpo", rounds=8, steps_per_round=250,
                                                                total_steps=2000, beta=0.1)),
         2205, (1060, 2000), HEALTHY, "healthy iterative-dpo custom-jsonl sawtooth",
         "Hand-written iterative DPO: every 250 steps a new round regenerates pairs from the current policy and "
         "labels them with a reward model, so train pref_acc falls back to ~0.55 and the margin to ~0 at each round "
         "start and climbs within the round (a sawtooth, not a collapse). 1060 of 2000 steps, round 5 under way. "
         "Gold judge win rate vs the SFT model (N=600, every 125) rises 0.50, 0.57, 0.62, 0.66, 0.69 and is still "
         "creeping up. Continue."),
    Case("ok-nemo-dapo-dynamic-sampling-filtered-reward-pinned-all-rollout-reward-and-val-rise-tb-at-35pct",
         ok_nemo_dapo, writer(w_nemo_tb, algo="grpo"), 2206, (420, 1200), HEALTHY,
         "healthy dapo nemo-tb dynamic-sampling",
         "NeMo-RL DAPO recipe (dynamic sampling, clip-higher, no KL) at 420 of 1200 steps. train/filtered_reward "
         "(the kept mixed groups) sits near 0.5 by construction and says nothing; train/reward over all rollouts "
         "rises 0.22 to 0.48, pct_0 falls, pct_1 rises, generation length grows 900 to 1600 tokens with "
         "truncation flat at 3 %, entropy holds ~0.35 (clip-higher). validation/accuracy (N=500, every 20) rises "
         "0.24 to 0.41. Continue."),
    Case("ok-agent-tool-errors-hump-0.05-to-0.22-while-exploring-new-tool-then-fall-success-rises-custom-jsonl",
         ok_agent_tool_errors_hump, writer(w_jsonl, step_key="iter", eval_file="eval.jsonl", config=JSONL_AGENT_CFG),
         2207, (800, 2000), HEALTHY, "healthy agent multiturn custom-jsonl tool-errors",
         "Hand-written multi-turn agent RL (32 tasks x 4 episodes per iteration), 800 of 2000 iterations. Between "
         "150 and 450 the agent starts using the code tool: tool_error_rate climbs from 0.05 to 0.22 and turns to "
         "6.5, then errors fall back to 0.06 and turns to 5 as it learns the tool. Train success 0.18 to 0.42 and "
         "held-out success (N=200 tasks, every 50, own file) 0.20 to 0.40, rising throughout. Continue."),
    Case("ok-trl-ppo-rm-score-flattens-at-2.8-gold-judge-winrate-still-climbing-kl-6-ckpts-limit2",
         ok_trl_ppo_rm_flat_gold_rising, writer(w_trl_state, save_every=100, keep=2, logging_steps=1), 2208,
         (900, 2000), HEALTHY, "healthy ppo rm-gold trl-state",
         "TRL PPOTrainer (value head) with a learned reward model, logging every update, a callback logs a gold "
         "judge win rate vs the SFT policy every 50 (N=300). 900 of 2000 updates, checkpoints every 100 (keep 2). "
         "objective/scores climbs 0.5 to 2.6 by 400 then only to 2.8 (the RM saturates), KL reaches 6 nats, "
         "value loss low and steady, val/ratio ~1. The gold win rate keeps rising, 0.50 to 0.62 at 400 and 0.70 "
         "at 900: the policy is still getting better by the measure that counts. Continue."),
    Case("ok-orpo-log-odds-ratio-rises-nll-flat-eval-pref-acc-0.55-to-0.68-hf-tb-at-30pct",
         ok_orpo_hf_tb, writer(w_hf_tb), 2209, (600, 2000), HEALTHY, "healthy orpo hf-tb",
         "TRL ORPO reported to TensorBoard (train/*, eval/*), 600 of 2000 steps, written 3 minutes ago. "
         "log_odds_ratio rises -0.75 to -0.45, nll_loss falls 1.25 to 1.10 and then holds (the SFT part is done), "
         "rewards/chosen flat while rejected fall. eval/rewards/accuracies (N=1000, every 100) rises 0.55 to 0.68, "
         "eval/loss still falling. Continue."),
    Case("ok-trl-rloo-k4-16-prompts-noisy-reward-real-rise-eval-every-100-wandb-panel-csvs",
         ok_rloo_wandb, writer(w_wandb_csv, "rloo-qwen3-4b-k4", ["train/reward", "train/kl", "train/entropy",
                                                                 "train/completions/mean_length", "eval/reward"]),
         2210, (1500, 3000), HEALTHY, "healthy rloo wandb-csv noisy",
         "TRL RLOO (k=4, 16 prompts per step) exported from W&B panels as CSV (train/global_step axis). The train "
         "reward is noisy (16x4 binary rollouts, sd ~0.02 per logged mean even after averaging 10 steps) but "
         "rises 0.35 to 0.52; eval/reward (N=500, every 100) rises 0.36 to 0.50; KL climbs slowly to 0.12. "
         "No planned length in the export; the run is improving: continue."),
    # ---- stop / converged
    Case("stop-verl-ppo-critic-ev-0.95-advantages-vanish-entropy-0.07-score-flat-since-350-console",
         stop_verl_ppo_critic_fits, writer(w_verl_console), 2211, (900, 2000), stop(500),
         "stop ppo critic verl-console no-signal",
         "verl PPO with a GAE critic, console log, 900 of 2000 steps. Score 0.30 to 0.71 by 350, then flat for 550 "
         "steps; gsm8k val (N=1319, every 50) flat at 0.70 since 350. The critic now predicts returns almost "
         "perfectly (EV 0.95, vf_loss 0.012), advantages shrink to +-0.6, the clip fraction is 0.002, ppo_kl ~0 and "
         "entropy has collapsed to 0.07: the policy is nearly deterministic and there is no advantage signal left. "
         "The current weights are as good as any: stop."),
    Case("stop-trl-kto-finished-2000-eval-loss-flat-0.34-since-1100-best-at-end-top-level-state",
         stop_trl_kto_finished, writer(w_trl_state, save_every=500, keep=2, top_level=True, eval_every=100), 2212,
         (2000, 2000), stop(1100), "stop kto trl-state finished",
         "TRL KTO (balanced data) finished 2000 of 2000 with the top-level trainer_state.json and the train_runtime "
         "row. eval_loss (N=1000, sd ~0.008) falls 0.50 to 0.34 by 1100 and is flat to the end; the final "
         "weights are as good as any: keep them (stop)."),
    Case("conv-trl-online-dpo-rm-score-flat-1.75-since-1500-at-1875-of-2000-lr-near-zero-ckpts",
         conv_online_dpo, writer(w_trl_state, save_every=125, keep=3), 2213, (1875, 2000), converged(),
         "converged online-dpo trl-state",
         "TRL online DPO with a reward-model judge, 1875 of 2000 steps, checkpoints every 125 (newest 1875 on "
         "disk, 8 minutes old). objective/scores rises -0.5 to 1.6 by 800 and 1.75 by 1500, then flat; KL rises to "
         "10, linear LR decay is almost at 0. Nothing left to gain in 125 steps; stopping or finishing both fine."),
    Case("stop-verl-dapo-num-gen-batches-hit-max-10-kept-score-flat-val-flat-since-500-jsonl",
         stop_verl_dapo_gen_batches_max, writer(w_verl_jsonl), 2214, (900, 1500), stop(600),
         "stop dapo verl-jsonl dynamic-sampling",
         "verl DAPO recipe, file logger, 900 of 1500 steps. The kept-batch score sits near 0.5-0.55 by construction; "
         "train/num_gen_batches climbs from 1-2 to the max of 10 by 700 (almost every group is all-right or "
         "all-wrong, so filling a batch of mixed groups takes 10 generation rounds and step time is 5x), entropy "
         "0.1, grad norm falling. val-core math acc@4 (N=500, every 50) 0.30 to 0.58 by 500 and flat since. No "
         "learning signal left and nothing gained for 400 steps: stop."),
    Case("stop-ipo-lr-5e-10-margins-never-move-eval-acc-at-chance-1400-steps-trl-console-dicts",
         stop_ipo_never_learns, writer(w_trl_console), 2215, (1400, 3000), stop(300), "stop ipo trl-console never-learns",
         "TRL DPOTrainer with loss_type=ipo, beta=1.0, learning rate 5e-10 (a typo). 1400 of 3000 steps: loss sits "
         "at 0.25 (= (1/2beta)^2, the IPO value at zero margin), margins ~0.0006, train accuracy around 0.5 with "
         "batch noise, eval_rewards/accuracies (N=600, every 100) flat at 0.50. It has learnt nothing and will not: "
         "stop."),
    Case("stop-finished-openrlhf-agent-webshop-success-plateau-0.47-since-600-final-at-best-level-console",
         stop_openrlhf_agent_finished, writer(w_openrlhf_console), 2216, (1500, 1500), stop(600),
         "stop agent openrlhf-console finished",
         "OpenRLHF multi-turn agent (WebShop-style) with REINFORCE++ baseline, finished 1500 of 1500 four hours ago "
         "(final save line). Train success 0.21 to 0.47 by 600, flat since; held-out eval_webshop_pass1 (N=300, "
         "every 50) 0.22 to 0.46 by 600 and flat to the end. The final weights are as good as any: stop."),
    # ---- rollback: clear
    Case("rb-openrlhf-ppo-critic-diverges-at-700-value-loss-x600-reward-and-math-eval-collapse-console",
         rb_openrlhf_ppo_critic_diverges, writer(w_openrlhf_console), 2217, (820, 2000), RB(700),
         "rollback ppo critic openrlhf-console",
         "OpenRLHF PPO (GAE critic, verifiable math reward), live at 820 of 2000. Reward 0.25 to 0.55 by 650, "
         "eval_math_pass1 (N=500, every 50) 0.27 to 0.54 by 650, flat to 720. At 700 the critic diverges: "
         "critic_loss 0.05 to 30, values drift to 8, critic grad norm x100; the garbage advantages then wreck the "
         "policy: clip ratio 0.28, KL 0.4, reward and eval fall to ~0.2 by 800. Go back to before 700."),
    Case("rb-nemo-dpo-likelihood-displacement-chosen-reward-to-minus-9-sft-loss-3x-val-acc-falls-from-900-tb",
         rb_nemo_dpo_displacement, writer(w_nemo_tb, algo="dpo"), 2218, (1400, 3000), RB(900),
         "rollback dpo nemo-tb likelihood-displacement",
         "NeMo-RL DPO, 1400 of 3000 steps. Train accuracy keeps rising toward 0.95 and the margin keeps growing, "
         "but both implicit rewards sink (chosen to -9, rejected to -17) and sft_loss on the chosen answers goes "
         "1.1 to 3.5: likelihood displacement. validation/accuracy (N=1000, every 100) rises 0.58 to 0.70 by 800, "
         "holds to 900, then falls to 0.62 by 1400 (~8 sd) while validation/loss climbs back. Roll back to <= 900."),
    Case("rb-trl-kto-1-to-7-undesirable-weight-unscaled-chosen-pushed-down-judge-falls-eval-loss-falls-ckpts",
         rb_trl_kto_everything_down, writer(w_trl_state, save_every=100, keep=3, eval_every=100), 2219,
         (1200, 2400), RB(520), "rollback kto trl-state imbalance save-limit",
         "TRL KTO with 4 desirable vs 28 undesirable examples per batch and undesirable_weight left at 1 (it should "
         "be lowered). Until ~500 it looks fine; then everything is pushed down: logps/chosen falls 180 to 240, "
         "rewards/chosen goes negative, the KL estimate runs to 3.5. eval_loss keeps falling (it is the objective "
         "being gamed) but the callback's judge score (0-10, N=300, sd ~0.12) rises 5.2 to 6.1 by 450, holds to 520 "
         "and falls to 4.6 by 1200. Only checkpoints 1000-1200 are on disk; the better model is behind: rollback."),
    Case("rb-verl-ppo-rm-overopt-score-climbs-to-3.5-kl-18-lengths-triple-gold-judge-peaks-600-650-tb",
         rb_verl_ppo_rm_overopt, writer(w_verl_tb), 2220, (1100, 1500), RB(650),
         "rollback ppo rm-overopt gold verl-tb",
         "verl PPO (GAE critic, KL in reward) against a learned reward model, TensorBoard, 1100 of 1500 steps. "
         "critic/score/mean climbs 0 to 2.2 by 600 and on to 3.5; the KL penalty grows 6 to 18 and responses "
         "triple in length after 600 (verbosity the RM likes). The gold judge (val-core gold_judge, N=400, every 50) "
         "rises 0.50 to 0.66 by 600, holds to 650, then falls back to 0.52. Classic over-optimisation: roll back."),
    Case("rb-openrlhf-dapo-entropy-blowup-at-1100-filter-pass-rate-to-0.05-kept-reward-flat-math500-falls-console",
         rb_openrlhf_dapo_filter_collapse, writer(w_openrlhf_console, name="train_dapo.log"), 2221, (1280, 3000),
         RB(1100), "rollback dapo openrlhf-console dynamic-filter",
         "OpenRLHF GRPO with DAPO dynamic filtering and clip-higher, 1280 of 3000, live. rollout/reward_mean rises "
         "0.32 to 0.62 by 1000, flat to 1100. Then entropy blows up (0.45 to 2.6), lengths run into the cap "
         "(truncated 60 %), rollout reward falls to 0.1 and dynamic_filtering_pass_rate to ~0.1 because most groups "
         "are all-wrong; the logged `reward` (kept groups only) stays ~0.47 and hides it. eval_math500_pass1 "
         "(N=500, every 50) 0.40 to 0.63, then 0.12 by 1250. Roll back to <= 1100."),
    Case("rb-verl-multiturn-agent-malformed-tool-calls-2-to-40pct-from-800-success-falls-console-np2",
         rb_verl_agent_malformed_calls, writer(w_verl_console), 2222, (1040, 2000), RB(800),
         "rollback agent multiturn verl-console",
         "verl multi-turn tool agent (sglang rollout), console with NumPy-2 reprs, 1040 of 2000. Score 0.20 to "
         "0.46 by 760, flat to 800. From 800 malformed tool calls (env/malformed_call_rate) climb 0.02 to 0.40, "
         "turns and tool calls per episode rise toward the cap (retries), entropy rises; score falls to 0.30 and "
         "val-core toolbench (N=400, every 40) from 0.45 to 0.31 (~6 sd). Roll back to <= 800."),
    Case("rb-openrlhf-reinforcepp-lr-5e-6-too-hot-gsm8k-peaks-at-end-of-warmup-300-swings-down-tb",
         rb_openrlhf_reinforcepp_hot_lr, writer(w_openrlhf_tb, run_name="reinforce_pp_1127T0310"), 2223, (700, 2000),
         RB(320), "rollback reinforcepp openrlhf-tb lr",
         "OpenRLHF REINFORCE++ with a 300-step warmup to 5e-6 (too hot for this 7B model). Reward and gsm8k eval "
         "(N=1000, every 50) climb 0.30 to 0.52 during warmup, then at full LR the run swings (+-0.015 on a 120-step "
         "period) and slides to 0.36 by 700; grad norm x5, KL 0.05 to 0.9, entropy 0.44 to 0.2, clip ratio up. The "
         "best weights were at the end of warmup: roll back to ~300."),
    Case("rb-finished-hand-loop-reinforce-csv-loss-nan-at-1321-reward-zero-to-end-eval-every-100",
         rb_custom_csv_nan, writer(w_csv, "metrics.csv", ["loss", "reward_mean", "baseline_ema", "grad_norm",
                                                          "entropy", "avg_response_len", "lr"], ["eval_acc"]),
         2224, (1500, 1500), RB(1320), "rollback finished reinforce custom-csv nan",
         "Plain PyTorch REINFORCE loop (EMA baseline), CSV with total_steps, finished 1500 of 1500 ('training "
         "finished'). Reward 0.2 to 0.6 by 1100, flat to 1320; at 1321 the loss and grad norm become NaN for good, "
         "entropy NaN, responses 24 tokens, reward 0. eval_acc (N=500, every 100) 0.60 at 1100-1300 and ~0 at "
         "1400 and 1500. The final weights are garbage: keep the weights from <= 1300."),
    # ---- subtle
    Case("rb-mlflow-db-trl-ppo-rm-score-rises-value-loss-triples-gold-winrate-erodes-0.64-to-0.58-from-1100",
         rb_mlflow_db_trl_ppo_gold_erodes, writer(w_mlflow_db, "ppo-rm-7b", dict(max_steps=2000, kl_coef=0.05)),
         2225, (2000, 3000), RB(1100), "rollback subtle ppo rm-gold mlflow-db",
         "TRL PPO against a reward model through MLflow (sqlite store), 2000 of 3000 updates. objective/scores keeps "
         "climbing (2.9 at 1000, 3.3 now), KL 5 to 9, loss/value_avg creeps 0.25 to 0.7 and the value clip "
         "fraction 0.1 to 0.3. The gold win rate (N=800, sd 0.017, every 100) rises 0.50 to 0.64 by 1000, holds to "
         "1100, then erodes slowly to 0.58 by 2000 (~3.5 sd, over 9 evals). A slow over-optimisation: roll back "
         "to 1000-1100."),
    Case("sor-trl-dpo-margins-keep-growing-eval-pref-acc-plateau-then-eases-1.2sd-ckpts-limit2",
         sor_trl_dpo_margins_grow, writer(w_trl_state, save_every=250, keep=2, eval_every=100), 2226, (2000, 3000),
         SOR(1400), "stop-or-rollback subtle dpo trl-state",
         "TRL DPO, 2000 of 3000 steps, checkpoints every 250 (keep 2). Train margins keep growing (rejected to "
         "-4.8, pair spread widening) and eval margins too, but eval_rewards/accuracies (N=1000, sd 0.014) rose "
         "0.60 to 0.72 by 1000, held to 1400 and has eased to about 0.703 by 2000 (~1.2 sd), eval_loss up 0.02. "
         "Nothing more to gain; whether the last 600 steps cost anything cannot be told from noise: stop, or go "
         "back to the plateau."),
    Case("rb-iterative-dpo-rounds-6-7-judge-winrate-drops-0.705-to-0.60-lengths-double-train-rounds-look-normal-jsonl",
         rb_iterative_dpo_late_rounds, writer(w_jsonl, config=dict(algo="iterative_dpo", rounds=12,
                                                                   steps_per_round=200, total_steps=2400, beta=0.1,
                                                                   labeller="rm-1.3b")),
         2227, (1400, 2400), RB(1000), "rollback subtle iterative-dpo custom-jsonl",
         "Hand-written iterative DPO, 200-step rounds, pairs labelled by a small reward model; a gold judge scores "
         "the policy at each round end (N=600, sd ~0.019). 1400 of 2400. Every round's train curves look the same "
         "(pref_acc 0.55 to ~0.85, margins up), but generation length climbs 340 to 720 tokens from round 5 on "
         "(the labeller prefers longer answers) and the gold win rate goes 0.50, 0.58, 0.64, 0.68, 0.70, 0.705 at "
         "1000, then 0.64 and 0.60. Roll back to the round ending at 1000 (800 is as good within noise)."),
    Case("rb-stalled-5h-trl-rloo-console-eval-reward-peaked-700-750-slid-4sd-train-reward-still-rising",
         rb_trl_rloo_console_stalled, writer(w_trl_console, spe=325), 2228, (1300, 2000), RB(750),
         "rollback subtle rloo trl-console stalled",
         "TRL RLOO (k=4) console log, 1300 of 2000 steps, silent for 5 hours (hung, no end marker). The train set "
         "is small (4 epochs): train reward climbs 0.30 to 0.70 the whole way while held-out eval_reward (N=500, "
         "every 100) rises to 0.52 by 700, holds to 750 and slides to 0.44 by 1300 (~3.6 sd); side signals are "
         "quiet (KL 0.3, entropy slow decline). Memorisation: the better model is at 700-750."),
]


def write_run(case: Case, folder: Path) -> None:
    rng = np.random.default_rng(case.seed)
    planned = case.planned or case.reached
    story = case.scenario(case.reached, planned)
    run = simulate(story, rng, case.reached)
    # keys starting with "_" are internal (draw intermediates), never logged
    run["train"] = [(s, {k: v for k, v in row.items() if not k.startswith("_")}) for s, row in run["train"]]
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    lab = case.labels
    if "_kind" in lab:
        lo, hi = window(run, lab["onset"])
        case.labels = (rollback if lab["_kind"] == "rb" else stop_or_rollback)(lo, hi, lab["onset"])
    elif isinstance(lab, dict) and "rollback_window" in lab:
        pass
    stamp(run, folder)


def stamp(run: dict, folder: Path) -> None:
    """File times: the newest write age_min ago; checkpoint folders at their own step's time."""
    newest = wall(run, run["reached"])
    for p in sorted(folder.rglob("*"), key=lambda q: -len(q.parts)):
        m = re.search(r"(?:checkpoint-|global_step_?)(\d+)", str(p.relative_to(folder)))
        t = wall(run, int(m.group(1))) if m else newest
        os.utime(p, (t, t))
    os.utime(folder, (newest, newest))


def check(cases: list[Case]) -> None:
    for case in cases:
        planned = case.planned or case.reached
        story = case.scenario(case.reached, planned)
        spec, steps = head_spec(story)
        if steps is None:
            steps = list(range(story.first or story.log_every, case.reached + 1, story.log_every))
        steps = [s for s in steps if s <= case.reached]
        pick = steps[:: max(1, len(steps) // 10)] + ([steps[-1]] if steps[-1] not in steps[:: max(1, len(steps) // 10)]
                                                     else [])
        lv = " ".join(f"{s}:{spec.level(s):.3g}" for s in pick)
        lab = case.labels
        acc = lab.get("accept", lab.get("_kind"))
        win = lab.get("rollback_window", "")
        print(f"{case.name}\n  {case.reached}/{planned} head={story.head} ({'up' if story.higher else 'down'}) "
              f"accept={acc} window={win} onset={lab.get('onset_step', lab.get('onset', ''))}\n  {lv}")


HEADER = """\
# Holdout set 22: blind-labelled runs written by make_holdout22.py (runs/ is generated, not committed).
# Aimed at PPO critics, RLOO / REINFORCE++, DAPO, the DPO family (DPO, IPO, KTO, ORPO, CPO), iterative preference
# rounds, multi-turn agents and RM-scored RLHF with a gold judge. Labels come from the stories, never from a tool.
"""


if __name__ == "__main__":
    holdout_kit.main(HERE, "make_holdout22.py", "holdout22.yaml", "h22-", "holdout22", HEADER, CASES, write_run, check)
