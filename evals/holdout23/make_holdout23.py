"""Holdout set 23: blind-labelled large-scale reasoning-RL runs, written without looking at the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout23/make_holdout23.py           # writes runs/ (gitignored) and holdout23.yaml
    .venv/bin/python evals/holdout23/make_holdout23.py --check   # also prints levels and rollback windows

Every case is a story told as noise-free "arcs" (a level that starts somewhere and is moved by segments: straight
lines, easing approaches, accelerating lifts, holds and jumps) for the train solve rate, the held-out benchmarks
and the side signals, drawn through this set's own noise model and written the way one framework and version
writes its files. The noise model:
  * prompt difficulty is logit-normal: a prompt's solve rate is q = sigmoid(c + s*z), z ~ N(0, 1), with the
    location c solved so that the mean of q is exactly the story's level p (s = the difficulty spread, itself an
    arc: an entropy collapse makes prompts all-or-nothing by raising s);
  * a train batch is P prompts x G rollouts, each rollout Bernoulli(q); the batch mean, the share of groups whose
    G rollouts all agree, pct all-wrong / all-right all come from the same draws. Mixtures draw each prompt's
    source pool by its share. DAPO-style scores map a solve to +1 and a miss to -1;
  * rollout lengths are log-normal (sigma 0.5) around the length level and cut at the cap; the mean and the
    truncated share come from the same 256 draws per step, and length penalties are computed from them;
  * a learned reward model scores a rollout as level + prompt effect + sample noise (normal);
  * a benchmark of N problems with k samples each redraws the problems' solve rates around its level, then
    Binomial(k, q): mean@k is the mean solve share, pass@k (best@k) the share of problems solved at least once;
  * gradient norms are log-normal (0.22) with a Lomax(1.3) burst on about one step in 50 (a heavy right tail);
  * entropy, KL, clip fractions, mismatch and ratio statistics carry AR(1) noise (phi 0.6), multiplicative for
    positive signals and additive for signed ones; learning rates are exact.
Trainers that log every n steps get the mean of the n batches where the framework averages (TRL), the current
step where it does not (OpenRLHF). Wall clocks follow the step times (which grow with the lengths) back from the
newest write; file mtimes are set to match (a live run minutes ago, a stalled one hours ago).

Labels follow DESIGN.md ("What the three decisions mean") and come from the stories, never from a tool. The
rollback window runs from the first logged headline step whose noise-free level is within one sampling sd of the
best level (sd of one eval for an eval headline, of one logged batch value for a train headline) to the newest
such step not after onset_step; `--check` prints them.
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
    writer,
)

HERE = Path(__file__).resolve().parent
NOW = time.time()
TRAIN = "@train"


# ------------------------------------------------------------------------------------------------ the arc vocabulary


class Arc:
    """A noise-free level per optimizer step: starts at v0, then each segment moves it to a value by a step."""

    def __init__(self, v0: float) -> None:
        self.v0 = v0
        self.segs: list[tuple[float, float, float, float, str]] = []
        self.t, self.v = 0.0, v0

    def _seg(self, end: float, v: float, shape: str) -> Arc:
        assert end >= self.t, (end, self.t)
        self.segs.append((self.t, end, self.v, v, shape))
        self.t, self.v = end, v
        return self

    def line(self, end: float, v: float) -> Arc:
        return self._seg(end, v, "line")

    def ease(self, end: float, v: float) -> Arc:
        """Fast at first, flattening towards v (a learning curve)."""
        return self._seg(end, v, "ease")

    def lift(self, end: float, v: float) -> Arc:
        """Slow at first, accelerating towards v (a blow-up)."""
        return self._seg(end, v, "lift")

    def hold(self, end: float) -> Arc:
        return self._seg(end, self.v, "line")

    def jump(self, at: float, v: float) -> Arc:
        """From the step after `at` the level is v (a new prompt pool, a config change)."""
        if at > self.t:
            self.hold(at)
        self.segs.append((at, at, v, v, "jump"))
        self.t, self.v = at, v
        return self

    def __call__(self, s: np.ndarray | float) -> np.ndarray:
        s = np.asarray(s, dtype=float)
        out = np.full(s.shape, self.v0, dtype=float)
        for a, b, va, vb, shape in self.segs:
            if shape == "jump":
                out = np.where(s > a, va, out)
                continue
            x = np.clip((s - a) / max(b - a, 1e-9), 0.0, 1.0)
            if shape == "ease":
                f = (1 - np.exp(-3 * x)) / (1 - math.exp(-3))
            elif shape == "lift":
                f = (np.exp(3 * x) - 1) / (math.exp(3) - 1)
            else:
                f = x
            out = np.where(s >= a, va + (vb - va) * f, out)
        return out


def arc(x: Arc | float) -> Arc:
    return x if callable(x) else Arc(float(x))


def warm_cos(peak: float, warm: int, total: int, floor: float = 0.0) -> Callable[[np.ndarray], np.ndarray]:
    """Linear warm-up then cosine decay to `floor` at `total` (an exact learning-rate schedule)."""

    def f(s: np.ndarray) -> np.ndarray:
        s = np.asarray(s, dtype=float)
        up = peak * np.minimum(s / warm, 1.0)
        x = np.clip((s - warm) / max(total - warm, 1), 0, 1)
        down = floor + (peak - floor) * 0.5 * (1 + np.cos(np.pi * x))
        return np.where(s < warm, up, down)

    return f


# ---------------------------------------------------------------------------------------------------- noise model

_Z, _W = np.polynomial.hermite_e.hermegauss(48)
_W = _W / _W.sum()


def _sig(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def centre(p: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """The logit location c for which prompts q = sigmoid(c + spread*z) have mean solve rate p."""
    p = np.clip(np.atleast_1d(np.asarray(p, dtype=float)), 1e-4, 1 - 1e-4)
    s = np.broadcast_to(np.asarray(spread, dtype=float), p.shape)
    lo, hi = np.full(p.shape, -30.0), np.full(p.shape, 30.0)
    for _ in range(56):
        mid = (lo + hi) / 2
        m = (_sig(mid[:, None] + s[:, None] * _Z) * _W).sum(1)
        lo, hi = np.where(m < p, mid, lo), np.where(m < p, hi, mid)
    return (lo + hi) / 2


def prompt_moments(p: float, spread: float, k: int = 1) -> tuple[float, float, float]:
    """(E[q(1-q)], Var(q), pass@k = E[1-(1-q)^k]) for a level and a spread."""
    q = _sig(centre(np.array([p]), np.array([spread]))[0] + spread * _Z)
    mean = float((q * _W).sum())
    return float((q * (1 - q) * _W).sum()), float(((q - mean) ** 2 * _W).sum()), float(((1 - (1 - q) ** k) * _W).sum())


@dataclass
class Sig:
    """A side signal: its arc (or exact schedule), noise size and kind (log | add | exact | grad)."""

    level: Callable
    sd: float = 0.05
    kind: str = "log"


def log(level: Arc | float, sd: float = 0.05) -> Sig:
    return Sig(arc(level), sd, "log")


def add(level: Arc | float, sd: float) -> Sig:
    return Sig(arc(level), sd, "add")


def exact(level: Callable | float) -> Sig:
    return Sig(level if callable(level) else arc(level), 0.0, "exact")


def grad(level: Arc | float) -> Sig:
    return Sig(arc(level), 0.22, "grad")


@dataclass
class Bench:
    """A held-out benchmark: its solve-rate arc, N problems, k samples each, and the keys it is logged under."""

    level: Arc
    n: int
    k: int
    mean_key: str
    pass_key: str | None = None
    spread: Arc | float = 1.6
    also: tuple[str, ...] = ()  # keys logged with the same value (TRL's eval_reward with one reward function)

    def pass_level(self, s: float) -> float:
        return prompt_moments(float(self.level(s)), float(arc(self.spread)(s)), self.k)[2]

    def sd(self, key: str, s: float) -> float:
        within, between, pk = prompt_moments(float(self.level(s)), float(arc(self.spread)(s)), self.k)
        if key == self.pass_key:
            return math.sqrt(pk * (1 - pk) / self.n)
        return math.sqrt((within / self.k + between) / self.n)


@dataclass
class Story:
    acc: Callable  # verifier solve rate of the train batches (the level of the default train reward)
    benches: list[Bench] = field(default_factory=list)
    eval_steps: list[int] = field(default_factory=list)
    headline: str = TRAIN
    P: int = 256
    G: int = 8
    spread: Arc | float = 1.4
    pools: dict[str, tuple[Callable, Callable]] | None = None  # source -> (solve rate, share of prompts)
    score: str = "01"  # 01: solve = 1, miss = 0; pm1: solve = +1, miss = -1 (DAPO)
    length: Arc | float = 1500.0
    cap: int = 4096
    rm: tuple[Arc, float, float] | None = None  # learned reward model: level, prompt sd, sample sd
    penalty: Callable | None = None  # (lengths (S, M), steps (S,)) -> per-sample penalty
    total: Callable | None = None  # components dict -> total reward
    side: dict[str, Sig] = field(default_factory=dict)
    events: dict[str, dict[int, float]] = field(default_factory=dict)
    log_every: int = 1  # how the headline train value is logged: every n steps,
    agg: str = "mean"  # as the mean of the n batches (mean) or the current batch (point)
    sps: float = 120.0  # seconds per step at the run's mean length
    age_min: float = 5.0  # minutes since the newest write
    ghost: Story | None = None  # another trajectory a writer needs (the lost job before a resume)
    eval_post: Callable | None = None  # (step, eval row, train arrays, rng) -> adds derived eval keys

    def headline_level(self, s: float) -> float:
        if self.headline == TRAIN:
            p = float(self.acc(s))
            return 2 * p - 1 if self.score == "pm1" else p
        for b in self.benches:
            if self.headline == b.mean_key:
                return float(b.level(s))
            if self.headline == b.pass_key:
                return b.pass_level(s)
        raise KeyError(self.headline)

    def headline_sd(self, s: float) -> float:
        if self.headline == TRAIN:
            within, between, _ = prompt_moments(float(self.acc(s)), float(arc(self.spread)(s)))
            sd = math.sqrt((within / self.G + between) / self.P)
            sd *= 2 if self.score == "pm1" else 1
            return sd / math.sqrt(self.log_every) if self.agg == "mean" else sd
        for b in self.benches:
            if self.headline in (b.mean_key, b.pass_key):
                return b.sd(self.headline, s)
        raise KeyError(self.headline)

    def headline_steps(self, reached: int) -> list[int]:
        if self.headline == TRAIN:
            return list(range(self.log_every, reached + 1, self.log_every))
        return [s for s in self.eval_steps if s <= reached]


def _ar1(rng: np.random.Generator, n: int, sd: float, phi: float = 0.6) -> np.ndarray:
    e = np.empty(n)
    x = rng.normal(0, sd)
    for i in range(n):
        x = phi * x + math.sqrt(1 - phi * phi) * rng.normal(0, sd)
        e[i] = x
    return e


def simulate(st: Story, seed: int, reached: int, planned: int) -> dict:
    """Every step's draws (index i = step i + 1) and the benchmark rows, with wall-clock times."""
    rng = np.random.default_rng(seed)
    S = reached
    s = np.arange(1, S + 1, dtype=float)
    tr: dict[str, np.ndarray] = {}
    # lengths: log-normal around the level, cut at the cap
    lvl = arc(st.length)(s)
    x = lvl[:, None] * np.exp(0.5 * rng.standard_normal((S, 256)) - 0.125)
    cut = np.minimum(np.floor(x), st.cap)
    tr["~len_mean"], tr["~len_max"], tr["~len_min"] = cut.mean(1), cut.max(1), cut.min(1)
    tr["~trunc"] = (x >= st.cap).mean(1)
    # verifier rewards: logit-normal prompts, binomial groups; a mixture picks each prompt's pool by its share
    spread = arc(st.spread)(s)
    pools = st.pools or {"all": (st.acc, Arc(1.0))}
    names = list(pools)
    shares = np.stack([arc(pools[n][1])(s) for n in names], 1)
    shares = shares / shares.sum(1, keepdims=True)
    pick = (rng.random((S, st.P))[:, :, None] > np.cumsum(shares, 1)[:, None, :]).sum(2)
    pick = np.minimum(pick, len(names) - 1)
    q = np.zeros((S, st.P))
    for i, n in enumerate(names):
        c = centre(arc(pools[n][0])(s), spread)
        qi = _sig(c[:, None] + spread[:, None] * rng.standard_normal((S, st.P)))
        q = np.where(pick == i, qi, q)
    k = rng.binomial(st.G, q)
    acc = k.sum(1) / (st.P * st.G)
    for i, n in enumerate(names):
        if st.pools:
            m = pick == i
            tr[f"~pool/{n}"] = (k * m).sum(1) / np.maximum(st.G * m.sum(1), 1)
            tr[f"~share/{n}"] = m.mean(1)
    same = (k == 0) | (k == st.G)
    tr["~zero_std"] = same.mean(1)
    tr["~pct0"], tr["~pct1"] = 100 * (k == 0).mean(1), 100 * (k == st.G).mean(1)
    tr["~group_std"] = np.sqrt(k / st.G * (1 - k / st.G)).mean(1)
    tr["~mixed"] = 1 - tr["~zero_std"]  # the groups a dynamic-sampling filter keeps
    tr["~kept_reward"] = np.where(~same, k, 0).sum(1) / np.maximum(st.G * (~same).sum(1), 1)
    comps = {"acc": acc}
    if st.rm:
        level, psd, ssd = st.rm
        comps["rm"] = (
            arc(level)(s) + rng.normal(0, psd / math.sqrt(st.P), S) + rng.normal(0, ssd / math.sqrt(st.P * st.G), S)
        )
    if st.penalty:
        comps["pen"] = st.penalty(cut, s).mean(1)
    if st.total:
        reward = st.total(comps, s)
        tr["~reward_std"] = np.full(S, np.nan)
    elif st.score == "pm1":
        reward = 2 * acc - 1
        tr["~reward_std"] = 2 * np.sqrt(acc * (1 - acc))
    else:
        reward = acc
        tr["~reward_std"] = np.sqrt(acc * (1 - acc))
    tr["~reward"] = reward
    for n, v in comps.items():
        tr[f"~{n}"] = v
    # side signals
    for key, sig in st.side.items():
        base = np.asarray(sig.level(s), dtype=float)
        if sig.kind == "exact":
            tr[key] = base
        elif sig.kind == "grad":
            g = base * np.exp(sig.sd * rng.standard_normal(S))
            burst = rng.random(S) < 0.02
            tr[key] = np.where(burst, g * (1 + rng.pareto(1.3, S)), g)
        elif sig.kind == "add":
            tr[key] = base + _ar1(rng, S, sig.sd)
        else:
            tr[key] = base * np.exp(_ar1(rng, S, sig.sd))
    for key, at in st.events.items():
        for step, v in at.items():
            if step <= S:
                tr[key][step - 1] = v
    # step times grow with the lengths; walls run back from the newest write
    rel = tr["~len_mean"] / tr["~len_mean"].mean()
    tr["~steptime"] = st.sps * (0.35 + 0.65 * rel) * np.exp(0.05 * rng.standard_normal(S))
    t_end = NOW - st.age_min * 60
    wall = t_end - np.concatenate([np.cumsum(tr["~steptime"][::-1])[::-1][1:], [0.0]])
    evals = []
    for e in st.eval_steps:
        if e > reached:
            continue
        row = {}
        for b in st.benches:
            p = float(b.level(e))
            sp = float(arc(b.spread)(e))
            c = centre(np.array([p]), np.array([sp]))[0]
            succ = rng.binomial(b.k, _sig(c + sp * rng.standard_normal(b.n)))
            row[b.mean_key] = float(succ.mean() / b.k)
            if b.pass_key:
                row[b.pass_key] = float((succ > 0).mean())
            for extra in b.also:
                row[extra] = row[b.mean_key]
        if st.eval_post:
            st.eval_post(e, row, tr, rng)
        evals.append((e, row))
    run = dict(train=tr, evals=evals, reached=reached, planned=planned, wall=wall, t_end=t_end, story=st)
    if st.ghost is not None:
        run["ghost"] = simulate(st.ghost, seed + 7919, reached, planned)
    return run


def wall_at(run: dict, s: int, extra: float = 0.0) -> float:
    """Wall-clock time of step s (plus `extra` seconds for what follows it), never after the newest write."""
    t = float(run["wall"][s - 1]) if s >= 1 else float(run["wall"][0] - run["train"]["~steptime"][0] - 240)
    return min(t + extra, run["t_end"])


# ------------------------------------------------------------------------------------------------------ row helpers

LAST = ("grad_norm", "lr", "learning_rate", "actor_lr", "~steptime")


def mapped(values: dict, vocab: dict) -> dict:
    """Canonical ~keys through the framework's vocabulary (a value may be a list of names); native keys as is."""
    out = {}
    for k, v in values.items():
        if k.startswith("~"):
            names = vocab.get(k, [])
            for n in [names] if isinstance(names, str) else names:
                out[n] = v
        else:
            out[k] = v
    return out


def train_rows(run: dict, vocab: dict, every: int = 1, agg: str = "point", upto: int | None = None) -> list:
    """(step, values) at every `every` steps: the mean since the last log (agg=mean) or the current step."""
    tr, end = run["train"], upto or run["reached"]
    rows = []
    for s in range(every, end + 1, every):
        d = {}
        for k, arr in tr.items():
            if agg == "mean" and not k.endswith(LAST):
                chunk = arr[s - every : s]
                d[k] = float(np.mean(chunk)) if np.all(np.isfinite(chunk)) else float(chunk[-1])
            else:
                d[k] = float(arr[s - 1])
        rows.append((s, mapped(d, vocab)))
    return rows


def clock(t: float, fmt: str) -> str:
    """A local-time stamp of the run's own clock (the machines log in UTC)."""
    return time.strftime(fmt, time.gmtime(t))


def f6(x: float) -> float:
    return float(f"{x:.6g}")


def set_mtimes(folder: Path, t: float) -> None:
    for p in sorted(folder.rglob("*"), reverse=True):
        os.utime(p, (t, t), follow_symlinks=False)
    os.utime(folder, (t, t))


def touch(path: Path, t: float) -> None:
    for p in sorted(path.rglob("*"), reverse=True) if path.is_dir() else []:
        os.utime(p, (t, t))
    os.utime(path, (t, t))


# ------------------------------------------------------------------------------------------ framework vocabularies

TRL = {
    "~reward": "reward",
    "~reward_std": "reward_std",
    "~zero_std": "frac_reward_zero_std",
    "~len_mean": "completions/mean_length",
    "~len_max": "completions/max_length",
    "~len_min": "completions/min_length",
    "~trunc": "completions/clipped_ratio",
    "~acc": "rewards/accuracy_reward/mean",
    "~steptime": "step_time",
}
VERL = {
    "~reward": ["critic/score/mean", "critic/rewards/mean"],
    "~len_mean": "response_length/mean",
    "~len_max": "response_length/max",
    "~len_min": "response_length/min",
    "~trunc": "response_length/clip_ratio",
}
ORLHF = {
    "~reward": ["reward", "rollout/reward_mean"],
    "~reward_std": "rollout/reward_std",
    "~group_std": "group_reward_std",
    "~len_mean": ["response_length", "rollout/response_length_mean"],
    "~trunc": ["truncated", "rollout/truncated_rate"],
}
ORLHF_DAPO = {
    **ORLHF,
    "~reward": "rollout/reward_mean",
    "~kept_reward": "reward",
    "~mixed": "dynamic_filtering_pass_rate",
}
NEMO = {
    "~reward": "train/reward",
    "~pct0": "train/baseline_reward/pct_0",
    "~pct1": "train/baseline_reward/pct_1",
    "~len_mean": "train/mean_gen_tokens_per_sample",
    "~len_max": "train/max_gen_tokens_per_sample",
    "~trunc": "train/truncation_rate",
}


# ------------------------------------------------------------------------------------------------------ the writers


def _nan_to_none(x: float) -> float | None:
    return None if not math.isfinite(x) else x


def verl_timing(v: dict, n_gpus: int, batch_tokens: float) -> dict:
    t = v.get("~steptime", 300.0)
    return {
        "timing_s/gen": 0.61 * t,
        "timing_s/reward": 0.03 * t,
        "timing_s/old_log_prob": 0.07 * t,
        "timing_s/ref": 0.06 * t,
        "timing_s/adv": 0.002 * t,
        "timing_s/update_actor": 0.22 * t,
        "timing_s/step": t,
        "perf/total_num_tokens": batch_tokens,
        "perf/time_per_step": t,
        "perf/throughput": batch_tokens / (t * n_gpus),
    }


def verl_rows(run: dict, vocab: dict = VERL, n_gpus: int = 32, ghost_from: int = 0) -> dict[int, dict]:
    """verl's one row per step (validation merged into test steps; the step-0 row holds validation only)."""
    st = run["story"]
    rows: dict[int, dict] = {}
    for s, v in train_rows(run, {**vocab, "~steptime": "~steptime"}):
        tok = st.P * st.G * (v.get("response_length/mean", 1000.0) + 400)
        d = {"training/global_step": s, "training/epoch": 0}
        d.update({k: x for k, x in v.items() if not k.startswith("~")})
        d.update(verl_timing(v, n_gpus, tok))
        d["critic/score/max"] = 1.0
        d["critic/score/min"] = -1.0 if st.score == "pm1" else 0.0
        d["critic/advantages/mean"] = 0.0
        rows[s] = d
    for s, ev in run["evals"]:
        rows.setdefault(s, {}).update(ev)
    return rows


def fmt_np(x: float | int, np2: bool) -> str:
    if isinstance(x, int):
        return str(x)
    if not math.isfinite(x):
        return "np.float64(nan)" if np2 else "nan"
    return f"np.float64({x!r})" if np2 else repr(round(x, 6))


def w_verl_console(
    run: dict,
    folder: Path,
    project: str,
    exp: str,
    np2: bool = True,
    save_freq: int = 100,
    name: str = "train.log",
    vocab: dict = VERL,
    config_lines: tuple[str, ...] = (),
    finished: bool = False,
) -> None:
    """verl LocalLogger on stdout behind Ray's (TaskRunner pid=...) prefix, with the config print and saves."""
    pre = "(TaskRunner pid=48211)"
    total = run["planned"]
    lines = [
        f"{clock(wall_at(run, 0) - 300, '%Y-%m-%d %H:%M:%S')},604\tINFO worker.py:1879 -- Started a local Ray "
        "instance. View the dashboard at 127.0.0.1:8265",
        f"{pre} {{'actor_rollout_ref': {{'actor': {{'optim': {{'lr': 1e-06}}, 'ppo_mini_batch_size': 64}},",
        *[f"{pre}  {c}" for c in config_lines],
        f"{pre}  'trainer': {{'project_name': '{project}', 'experiment_name': '{exp}', 'save_freq': {save_freq},"
        f" 'total_training_steps': {total}, 'logger': ['console', 'wandb']}}}}",
        f"{pre} Size of train dataloader: {total // 2}, Size of val dataloader: 1",
        f"{pre} Total training steps: {total}",
    ]
    rows = verl_rows(run, vocab)
    for s in sorted(rows):
        body = " - ".join(
            f"{k}:{fmt_np(x, np2 and not k.startswith(('timing_s/', 'perf/')))}"
            for k, x in rows[s].items()
            if not k.startswith("~")
        )
        lines.append(f"{pre} step:{s} - {body}")
        if s and s % save_freq == 0:
            lines.append(f"{pre} local_global_step_folder: checkpoints/{project}/{exp}/global_step_{s}")
    if finished:
        last = {k: x for s, ev in run["evals"][-1:] for k, x in ev.items()}
        body = ", ".join(f"'{k}': {fmt_np(x, np2)}" for k, x in last.items())
        lines.append(f"{pre} ('Final validation metrics: {{{body}}}')")
    (folder / name).write_text("\n".join(lines) + "\n")


def verl_ckpts(run: dict, folder: Path, project: str, exp: str, save_freq: int, keep: int = 0) -> None:
    base = folder / "checkpoints" / project / exp
    saves = list(range(save_freq, run["reached"] + 1, save_freq))
    if keep:
        saves = saves[-keep:]
    for n in saves:
        d = base / f"global_step_{n}" / "actor" / "huggingface"
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text('{"architectures": ["Qwen3ForCausalLM"]}\n')
        run.setdefault("mtimes", {})[base / f"global_step_{n}"] = wall_at(run, n, 90)
    if saves:
        (base / "latest_checkpointed_iteration.txt").write_text(str(saves[-1]))


def hydra_config(folder: Path, t0: float, total: int, extra: str = "") -> None:
    d = folder / "outputs" / clock(t0, "%Y-%m-%d") / clock(t0, "%H-%M-%S") / ".hydra"
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.yaml").write_text(
        f"data:\n  train_batch_size: 256\n  max_response_length: 8192\ntrainer:\n  total_epochs: 30\n"
        f"  total_training_steps: {total}\n  test_freq: 40\n  save_freq: 100\n{extra}"
    )


def w_verl_jsonl(
    run: dict, folder: Path, project: str, exp: str, save_freq: int = 100, torn: bool = False, cfg: str = ""
) -> None:
    """verl FileLogger: {"step": N, "data": {...}} per line (orjson: compact, NaN as null)."""
    rows = verl_rows(run)
    path = folder / project / f"{exp}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(
        json.dumps(
            {"step": s, "data": {k: _nan_to_none(x) if isinstance(x, float) else x for k, x in rows[s].items()}},
            separators=(",", ":"),
        )
        + "\n"
        for s in sorted(rows)
    )
    if torn:
        text = text[: -len(text.splitlines()[-1]) // 3]
    path.write_text(text)
    hydra_config(folder, wall_at(run, 0) - 400, run["planned"], cfg)
    verl_ckpts(run, folder, project, exp, save_freq, keep=3)


def w_verl_tb(run: dict, folder: Path, project: str, exp: str, save_freq: int = 0) -> None:
    """verl's TensorBoard backend: raw keys under tensorboard_log/<project>/<experiment>."""
    rows = verl_rows(run)
    ev = [(wall_at(run, s, 5), s, {k: x for k, x in d.items() if not k.startswith("~")}) for s, d in rows.items()]
    ev.sort(key=lambda e: e[1])
    t0 = ev[0][0]
    tb_file(folder / "tensorboard_log" / project / exp / f"events.out.tfevents.{int(t0)}.gpu-node-07.48211.0", ev)
    if save_freq:
        verl_ckpts(run, folder, project, exp, save_freq, keep=2)


def w_verl_mlflow_files(run: dict, folder: Path, project: str, exp: str) -> None:
    """verl's MLflow backend on a file store: '@' becomes '_at_', '/' nests directories; status RUNNING."""
    rows = verl_rows(run)
    eid, rid = "723040118", "c41e8e07b2a64f53a1f0d9e2b7c6a5d4"
    root = folder / "mlruns" / eid
    root.mkdir(parents=True)
    (root / "meta.yaml").write_text(
        f"artifact_location: file:./mlruns/{eid}\ncreation_time: 1763967731000\nexperiment_id: '{eid}'\n"
        f"last_update_time: 1763967731000\nlifecycle_stage: active\nname: {project}\n"
    )
    rd = root / rid
    for sub in ("params", "tags", "artifacts", "metrics"):
        (rd / sub).mkdir(parents=True)
    t0 = int(wall_at(run, 0) * 1000)
    (rd / "meta.yaml").write_text(
        f"artifact_uri: file:./mlruns/{eid}/{rid}/artifacts\nend_time: null\nentry_point_name: ''\n"
        f"experiment_id: '{eid}'\nlifecycle_stage: active\nrun_id: {rid}\nrun_name: {exp}\nrun_uuid: {rid}\n"
        f"source_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: {t0}\nstatus: 1\ntags: []\n"
        f"user_id: verl\n"
    )
    (rd / "tags" / "mlflow.runName").write_text(exp)
    for k, v in {
        "trainer.total_training_steps": run["planned"],
        "trainer.test_freq": 120,
        "data.train_batch_size": run["story"].P,
        "actor_rollout_ref.rollout.n": run["story"].G,
        "algorithm.adv_estimator": "grpo",
    }.items():
        (rd / "params" / k).write_text(str(v))
    lines: dict[str, list[str]] = {}
    for s in sorted(rows):
        ts = int(wall_at(run, s, 3000 / 1000) * 1000)
        for k, x in rows[s].items():
            if k.startswith("~") or isinstance(x, str):
                continue
            key = k.replace("@", "_at_")
            lines.setdefault(key, []).append(f"{ts} {float(x)!r} {s}")
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


def trl_history(run: dict, vocab: dict, logging_steps: int, spe: int, upto: int, eval_extra: bool = True) -> list:
    st = run["story"]
    rows = []
    tok = 0.0
    for s, v in train_rows(run, vocab, logging_steps, "mean", upto):
        tok += logging_steps * st.P * st.G * (v.get("completions/mean_length", 1000.0) + 350)
        row = {k: f6(x) if math.isfinite(x) else x for k, x in v.items() if not k.startswith("~")}
        row.update(loss=round(0.0004 * math.sin(s / 7.0) + 0.0001, 4), num_tokens=float(round(tok)), epoch=s / spe)
        row["step"] = s
        rows.append(row)
    for s, ev in run["evals"]:
        if s > upto:
            continue
        row = {k: f6(x) for k, x in ev.items()}
        if eval_extra:
            row.update(eval_runtime=round(600 + 40 * math.cos(s), 2), eval_samples_per_second=0.83)
            row.update(eval_steps_per_second=0.026)
        row.update(epoch=s / spe, step=s)
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r or any(k.startswith("eval_") for k in r)))
    return rows


def w_trl_state(
    run: dict,
    folder: Path,
    save_steps: int,
    keep: int | None = None,
    logging_steps: int = 10,
    eval_steps: int | None = None,
    vocab: dict = TRL,
    spe: int = 0,
    finished: bool = False,
    top_level: bool = False,
    start_save: int = 0,
) -> None:
    """TRL output_dir: checkpoint-N/trainer_state.json (history up to N), save_total_limit, optional final state."""
    reached, planned = run["reached"], run["planned"]
    spe = spe or planned
    saves = list(range(save_steps, reached + 1, save_steps))
    if finished and reached not in saves:
        saves.append(reached)
    saves = [n for n in saves if n > start_save]
    kept = saves[-keep:] if keep else saves
    for n in kept:
        hist = trl_history(run, vocab, logging_steps, spe, n)
        st = trainer_state(hist, n, planned, logging_steps, save_steps, eval_steps, n / spe)
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        (ck / "config.json").write_text('{"architectures": ["Qwen3ForCausalLM"], "torch_dtype": "bfloat16"}\n')
        (ck / "training_args.bin").write_bytes(b"\x80\x04")
        run.setdefault("mtimes", {})[ck] = wall_at(run, n, 60)
    if finished or top_level:
        hist = trl_history(run, vocab, logging_steps, spe, reached)
        if finished:
            hist.append(
                dict(
                    train_runtime=float(run["t_end"] - wall_at(run, 0)),
                    train_samples_per_second=0.9,
                    train_steps_per_second=0.004,
                    total_flos=0.0,
                    train_loss=0.0002,
                    epoch=reached / spe,
                    step=reached,
                )
            )
        st = trainer_state(hist, reached, planned, logging_steps, save_steps, eval_steps, reached / spe)
        st["stateful_callbacks"]["TrainerControl"]["args"]["should_training_stop"] = finished
        dump_json(folder / "trainer_state.json", st)


def py_repr(d: dict) -> str:
    parts = []
    for k, v in d.items():
        if isinstance(v, float):
            v = float(f"{v:.6g}") if math.isfinite(v) else v
        parts.append(f"{k!r}: {v!r}")
    return "{" + ", ".join(parts) + "}"


def tqdm_bar(s: int, total: int, elapsed: float, per: float) -> str:
    pct = int(100 * s / total)
    fill = int(10 * s / total)
    bar = "█" * fill + " " * (10 - fill)
    h, m = divmod(int(elapsed) // 60, 60)
    rem = (total - s) * per
    rh, rm = divmod(int(rem) // 60, 60)
    return f"{pct:3d}%|{bar}| {s}/{total} [{h}:{m:02d}:00<{rh}:{rm:02d}:00, {per:.2f}s/it]"


def w_trl_console(
    run: dict, folder: Path, logging_steps: int, notes: dict[int, str] | None = None, vocab: dict = TRL
) -> None:
    """TRL GRPO under `python train.py | tee train.log`: tqdm bars and the Trainer's printed log dicts."""
    st, total = run["story"], run["planned"]
    t0 = wall_at(run, 0)
    at = clock(t0 - 60, "%Y-%m-%d %H:%M:%S")
    lines = [
        f"INFO {clock(t0 - 200, '%m-%d %H:%M:%S')} [__init__.py:244] Automatically detected platform cuda.",
        f"[INFO|trainer.py:2409] {at},118 >> ***** Running training *****",
        f"[INFO|trainer.py:2411] {at},118 >>   Num examples = {total * 64:,}",
        f"[INFO|trainer.py:2417] {at},118 >>   Total optimization steps = {total:,}",
        f"[INFO|trainer.py:2418] {at},120 >>   Number of trainable parameters = 8,190,735,360",
    ]
    evs = dict(run["evals"])
    for s, v in train_rows(run, vocab, logging_steps, "mean"):
        per = float(run["train"]["~steptime"][s - 1])
        lines.append(tqdm_bar(s, total, wall_at(run, s) - t0, per))
        d = {"loss": round(0.0003 * math.sin(s / 5.0), 4)}
        d.update({k: x for k, x in v.items() if not k.startswith("~")})
        d["epoch"] = round(s / total * 3, 2)
        lines.append(py_repr(d))
        for n in range(s - logging_steps + 1, s + 1):
            if notes and n in notes:
                lines.append(notes[n])
            if n in evs:
                lines.append(f"\n  0%|          | 0/{16} [00:00<?, ?it/s]")
                e = dict(evs[n])
                e.update(eval_runtime=round(640 + 30 * math.sin(n), 2), eval_samples_per_second=0.78)
                e.update(eval_steps_per_second=0.025, epoch=round(n / total * 3, 2))
                lines.append(py_repr(e))
    (folder / "train.log").write_text("\n".join(lines) + "\n")
    del st


def hf_tb_events(run: dict, vocab: dict, logging_steps: int, lo: int = 0, hi: int | None = None) -> list:
    ev = []
    for s, v in train_rows(run, vocab, logging_steps, "mean"):
        if lo < s <= (hi or run["reached"]):
            ev.append((wall_at(run, s, 2), s, {f"train/{k}": x for k, x in v.items() if not k.startswith("~")}))
    for s, e in run["evals"]:
        if lo < s <= (hi or run["reached"]):
            ev.append((wall_at(run, s, 700), s, {f"eval/{k.removeprefix('eval_')}": x for k, x in e.items()}))
    ev.sort(key=lambda e: (e[1], e[0]))
    return ev


def w_trl_tb(
    run: dict,
    folder: Path,
    save_steps: int,
    keep: int,
    logging_steps: int = 10,
    eval_steps: int | None = None,
    vocab: dict = TRL,
    resume: tuple[int, int] | None = None,
) -> None:
    """TRL with report_to=tensorboard: runs/<date>_<host>/events.*, train/ and eval/ tags, plus checkpoints.

    With `resume=(from_step, crash_step)` the first job logged to `crash_step` (its steps after `from_step` come
    from the ghost trajectory that was lost) and the second job, resumed from checkpoint-`from_step`, opens a
    second event file in a new run folder and logs every step after `from_step` again.
    """
    runs = folder / "runs"
    if not resume:
        ev = hf_tb_events(run, vocab, logging_steps)
        sub = clock(wall_at(run, 0) - 90, "%b%d_%H-%M-%S") + "_gpu-node-03"
        tb_file(runs / sub / f"events.out.tfevents.{int(ev[0][0])}.gpu-node-03.5120.0", ev)
    else:
        frm, crash = resume
        # job 1 ran on to `crash`, then the restart took half an hour: everything up to `frm` happened earlier
        ghost = run["ghost"]
        lost = float(ghost["train"]["~steptime"][frm:crash].sum()) + 1800.0
        run["wall"][:frm] -= lost
        first = hf_tb_events(run, vocab, logging_steps, 0, frm)
        base = wall_at(run, frm) - wall_at(ghost, frm)
        first += [(w + base, s, d) for w, s, d in hf_tb_events(ghost, vocab, logging_steps, frm, crash)]
        sub1 = clock(wall_at(run, 0) - 90, "%b%d_%H-%M-%S") + "_gpu-node-03"
        tb_file(runs / sub1 / f"events.out.tfevents.{int(first[0][0])}.gpu-node-03.5120.0", first)
        second = hf_tb_events(run, vocab, logging_steps, frm)
        sub2 = clock(second[0][0] - 200, "%b%d_%H-%M-%S") + "_gpu-node-05"
        tb_file(runs / sub2 / f"events.out.tfevents.{int(second[0][0])}.gpu-node-05.77311.0", second)
    w_trl_state(run, folder, save_steps, keep, logging_steps, eval_steps, vocab)


def orlhf_status(run: dict, logging_steps: int, vocab: dict = ORLHF) -> list:
    out = []
    for s, v in train_rows(run, {**vocab, "~steptime": "~steptime"}, logging_steps, "point"):
        t = v.pop("~steptime")
        d = {k: x for k, x in v.items() if not k.startswith("~")}
        d.update(
            {
                "timing/generation": 0.58 * t,
                "timing/make_experience": 0.12 * t,
                "timing/ppo_train": 0.26 * t,
                "timing/broadcast": d.pop("timing/broadcast", 0.04 * t),
            }
        )
        d["timing/step_total"] = sum(d[k] for k in ("timing/generation", "timing/make_experience", "timing/ppo_train"))
        d["timing/step_total"] += d["timing/broadcast"]
        out.append((s, d))
    return out


def w_orlhf_console(
    run: dict,
    folder: Path,
    logging_steps: int = 1,
    notes: dict[int, str] | None = None,
    episodes: int = 1,
    vocab: dict = ORLHF,
) -> None:
    """OpenRLHF's Ray PPO trainer on stdout: progress bar, `✨ Global step N: {...}`, `Evaluation completed`."""
    total = run["planned"]
    lines = [
        f"[{clock(wall_at(run, 0) - 500, '%Y-%m-%d %H:%M:%S')},310] [INFO] [real_accelerator.py:260:get_accelerator] "
        "Setting ds_accelerator to cuda",
        "Namespace(pretrain='Qwen/Qwen3-8B-Base', advantage_estimator='group_norm', n_samples_per_prompt="
        f"{run['story'].G}, rollout_batch_size={run['story'].P}, max_samples=100000000, num_episodes={episodes}, "
        f"logging_steps={logging_steps}, eval_steps=50, save_steps=100, ...)",
    ]
    evs = dict(run["evals"])
    t0 = wall_at(run, 0)
    for s, d in orlhf_status(run, logging_steps, vocab):
        for n in range(s - logging_steps + 1, s + 1):
            if notes and n in notes:
                lines.append(notes[n])
        per = d["timing/step_total"]
        lines.append(f"Episode [1/{episodes}]: " + tqdm_bar(s, total, wall_at(run, s) - t0, per))
        lines.append(f"✨ Global step {s}: {py_repr(d)}")
        if s in evs:
            lines.append(
                f"Evaluation completed in {300 + 20 * math.sin(s):.2f} seconds, global_step {s}, "
                f"eval_metrics: {py_repr(evs[s])}"
            )
    (folder / "train_ppo_ray.log").write_text("\n".join(lines) + "\n")


def w_orlhf_tb(
    run: dict, folder: Path, run_name: str, logging_steps: int = 1, vocab: dict = ORLHF, launch: str = ""
) -> None:
    """OpenRLHF TensorBoard: <tensorboard_dir>/<run_name>, train/ and eval/ tags, global_step as the step."""
    if launch:
        (folder / "train_grpo_ray.sh").write_text(launch)
        run.setdefault("mtimes", {})[folder / "train_grpo_ray.sh"] = wall_at(run, 0) - 900
    status = orlhf_status(run, logging_steps, vocab)
    ev = [(wall_at(run, s, 1), s, {f"train/{k}": x for k, x in d.items()}) for s, d in status]
    ev += [(wall_at(run, s, 320), s, {f"eval/{k}": x for k, x in e.items()}) for s, e in run["evals"]]
    ev.sort(key=lambda e: (e[1], e[0]))
    tb_file(folder / "tensorboard" / run_name / f"events.out.tfevents.{int(ev[0][0])}.h100-pod-2.9116.0", ev)


def w_nemo_tb(run: dict, folder: Path, exp: str = "exp_003") -> None:
    """NeMo-RL: <log_dir>/exp_NNN/tensorboard, train/ timing/train/ validation/ tags; validation at step 0."""
    st = run["story"]
    ev = []
    for s, v in train_rows(run, {**NEMO, "~steptime": "~steptime"}):
        t = v.pop("~steptime")
        d = {k: x for k, x in v.items() if not k.startswith("~")}
        pct0, pct1 = d.get("train/baseline_reward/pct_0", 0.0), d.get("train/baseline_reward/pct_1", 0.0)
        d["train/baseline_reward/pct_mixed"] = 100.0 - pct0 - pct1
        d["train/num_valid_samples"] = float(st.P * st.G)
        d["timing/train/total_step_time"] = t
        d["timing/train/exposed_generation"] = 0.31 * t
        d["timing/train/policy_training"] = 0.41 * t
        d["timing/train/weight_sync"] = 0.03 * t
        ev.append((wall_at(run, s, 1), s, d))
    for s, e in run["evals"]:
        ev.append((wall_at(run, s, 400), s, e))
    ev.sort(key=lambda e: (e[1], e[0]))
    tb_file(folder / "logs" / exp / "tensorboard" / f"events.out.tfevents.{int(ev[0][0])}.nemo-node-0.3312.0", ev)


def w_wandb_csv(run: dict, folder: Path, display: str, panels: dict[str, str], bucket: int = 1) -> None:
    """W&B UI 'Export panel data as CSV': one file per panel, Step + '<run> - <key>' with __MIN / __MAX."""
    rows = dict(train_rows(run, panels))
    for s, e in run["evals"]:
        rows.setdefault(s, {}).update(e)
    keys = sorted({k for d in rows.values() for k in d if not k.startswith("~")})
    stamp = NOW - 240  # exported from the UI a few minutes ago
    run["t_files"] = NOW - 120
    for i, key in enumerate(keys):
        pts = [(s, rows[s][key]) for s in sorted(rows) if key in rows[s]]
        b = bucket if len(pts) > 400 else 1
        col = f"{display} - {key}"
        name = clock(stamp + 11 * i, "wandb_export_%Y-%m-%dT%H_%M_%S") + f".{100 + i:03d}+00_00.csv"
        with (folder / name).open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow(["Step", col, col + "__MIN", col + "__MAX"])
            for j in range(0, len(pts), b):
                chunk = pts[j : j + b]
                vals = [x for _, x in chunk]
                w.writerow([chunk[-1][0], repr(float(np.mean(vals))), repr(min(vals)), repr(max(vals))])


def w_trackio(run: dict, folder: Path, project: str, name: str, vocab: dict, hf: bool, every: int, cfg: dict) -> None:
    """Trackio's per-project SQLite DB (schema with run_id): one JSON blob of metrics per log call."""
    db = sqlite3.connect(folder / f"{project}.db")
    db.executescript(
        """
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT NOT NULL);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, run_name TEXT NOT NULL,
        config TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, metrics TEXT NOT NULL);
    """
    )
    rid = "r-5b1d8c0e"

    def ts(t: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}"

    db.execute(
        "INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?, ?, ?, ?)",
        (rid, name, json.dumps({**cfg, "_Username": "rl-team"}), ts(wall_at(run, 0))),
    )
    recs = []
    for s, v in train_rows(run, vocab, every, "mean" if hf else "point"):
        m = {("train/" + k if hf else k): x for k, x in v.items() if not k.startswith("~")}
        if hf:
            m["train/global_step"] = s
        recs.append((wall_at(run, s), s, m))
    for s, e in run["evals"]:
        m = {("eval/" + k.removeprefix("eval_") if hf else k): x for k, x in e.items()}
        if hf:
            m["train/global_step"] = s
        recs.append((wall_at(run, s, 500), s, m))
    for t, s, m in sorted(recs, key=lambda r: (r[1], r[0])):
        db.execute(
            "INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
            (rid, ts(t), name, s, json.dumps(m)),
        )
    db.commit()
    db.close()


MLFLOW_SQL = """
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
"""


def w_mlflow_db(run: dict, folder: Path, vocab: dict, name: str, params: dict) -> None:
    """A hand-written loop logging to MLflow's SQL store (sqlite:///mlflow.db), status RUNNING."""
    db = sqlite3.connect(folder / "mlflow.db")
    db.executescript(MLFLOW_SQL)
    rid = "0f3a9d2c8b7e4a61b5c4d3e2f1a0b9c8"
    t0 = int(wall_at(run, 0) * 1000)
    db.execute("INSERT INTO experiments VALUES (1, 'code-rl', 'mlflow-artifacts:/1', 'active', ?, ?)", (t0, t0))
    db.execute(
        "INSERT INTO runs VALUES (?, ?, 'LOCAL', 'train_code_rl.py', '', 'rl', 'RUNNING', ?, NULL, '', 'active',"
        " ?, 1, NULL)",
        (rid, name, t0, f"mlflow-artifacts:/1/{rid}/artifacts"),
    )
    for k, v in params.items():
        db.execute("INSERT INTO params VALUES (?, ?, ?)", (k, str(v), rid))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (name, rid))
    latest: dict[str, tuple] = {}
    recs = [(int(wall_at(run, s) * 1000), s, v) for s, v in train_rows(run, vocab)]
    recs += [(int(wall_at(run, s, 200000 / 1000) * 1000), s, e) for s, e in run["evals"]]
    for ts, s, v in recs:
        for k, x in v.items():
            if k.startswith("~"):
                continue
            nan = not math.isfinite(x)
            rec = (k, 0.0 if nan else x, ts, rid, s, int(nan))
            db.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", rec)
            latest[k] = rec
    for k, x, ts, r, s, nan in latest.values():
        db.execute("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", (k, x, ts, s, nan, r))
    db.commit()
    db.close()


def w_mlflow_stages(run: dict, folder: Path, vocab: dict, stage_end: int, name: str, params: dict) -> None:
    """A hand loop's MLflow file store; stage 2 re-opened the same run and counts its steps from 1 again."""
    eid, rid = "88", "a7d0c3e95f2b4e18b6a9c0d1e2f3a4b5"
    root = folder / "mlruns" / eid
    root.mkdir(parents=True)
    (root / "meta.yaml").write_text(
        f"artifact_location: file:./mlruns/{eid}\ncreation_time: 1763400000000\nexperiment_id: '{eid}'\n"
        "last_update_time: 1763400000000\nlifecycle_stage: active\nname: math-rl-stages\n"
    )
    rd = root / rid
    for sub in ("params", "tags", "artifacts", "metrics"):
        (rd / sub).mkdir(parents=True)
    t0 = int(wall_at(run, 0) * 1000) - 5400_000
    (rd / "meta.yaml").write_text(
        f"artifact_uri: file:./mlruns/{eid}/{rid}/artifacts\nend_time: null\nentry_point_name: ''\n"
        f"experiment_id: '{eid}'\nlifecycle_stage: active\nrun_id: {rid}\nrun_name: {name}\nrun_uuid: {rid}\n"
        f"source_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: {t0}\nstatus: 1\ntags: []\n"
        "user_id: rl\n"
    )
    (rd / "tags" / "mlflow.runName").write_text(name)
    (rd / "tags" / "stage").write_text("2")
    (rd / "tags" / "stage2.init_from").write_text(f"ckpts/stage1/step_{stage_end}")
    for k, v in params.items():
        (rd / "params" / k).write_text(str(v))
    lines: dict[str, list[str]] = {}
    gap = 5400_000  # stage 2 was launched 90 minutes after stage 1 ended

    def put(s: int, k: str, x: float, extra_ms: int) -> None:
        ts = int(wall_at(run, s, extra_ms / 1000) * 1000) - (gap if s <= stage_end else 0)
        step = s - stage_end if s > stage_end else s
        lines.setdefault(k, []).append(f"{ts} {float(x)!r} {step}")

    for s, v in train_rows(run, vocab):
        v["train/stage"] = 2.0 if s > stage_end else 1.0
        for k, x in v.items():
            if not k.startswith("~"):
                put(s, k, x, 0)
    for s, e in run["evals"]:
        for k, x in e.items():
            put(s, k, x, 240_000)
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


def w_jsonl(run: dict, folder: Path, vocab: dict, train_name: str, eval_name: str, cfg: dict, notes: dict) -> None:
    """A hand-written async loop: one JSON object per step, evals in their own file, a config.json beside them."""
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    with (folder / "logs" / train_name).open("w") as fh:
        for s, v in train_rows(run, vocab):
            if s in notes:
                fh.write(json.dumps({"event": notes[s], "step": s, "time": round(wall_at(run, s) - 30, 1)}) + "\n")
            d = {"step": s, "time": round(wall_at(run, s), 1)}
            d.update({k: round(x, 6) for k, x in v.items() if not k.startswith("~")})
            fh.write(json.dumps(d) + "\n")
    with (folder / "logs" / eval_name).open("w") as fh:
        for s, e in run["evals"]:
            fh.write(json.dumps({"step": s, "time": round(wall_at(run, s, 400), 1), **e}) + "\n")
    (folder / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")


def w_stage_csv(run: dict, folder: Path, sft_steps: int, rl_steps: int) -> None:
    """A hand loop that runs SFT then GRPO and appends both stages to one CSV; held-out accuracy every 100."""
    evs = dict(run["evals"])
    tr = run["train"]
    with (folder / "train_log.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "stage", "sft_loss", "reward_mean", "reward_std", "kl", "entropy", "resp_len",
                    "grad_norm", "lr", "heldout_acc"])  # fmt: skip
        for s in range(0, run["reached"] + 1):
            ev = f"{evs[s]['heldout_acc']:.4f}" if s in evs else ""
            if s == 0:
                w.writerow([0, "init", "", "", "", "", "", "", "", "", ev])
                continue
            i = s - 1
            if s <= sft_steps:
                w.writerow([s, "sft", f"{tr['sft_loss'][i]:.4f}", "", "", "", "", "", f"{tr['grad_norm'][i]:.4f}",
                            f"{tr['lr'][i]:.3e}", ev])  # fmt: skip
            else:
                w.writerow([s, "grpo", "", f"{tr['~reward'][i]:.4f}", f"{tr['~reward_std'][i]:.4f}",
                            f"{tr['kl'][i]:.5f}", f"{tr['entropy'][i]:.4f}", f"{tr['~len_mean'][i]:.1f}",
                            f"{tr['grad_norm'][i]:.4f}", f"{tr['lr'][i]:.3e}", ev])  # fmt: skip
    (folder / "config.yaml").write_text(
        f"model: Qwen2.5-7B\nstages:\n  - name: sft\n    steps: {sft_steps}\n    lr: 1.0e-5\n"
        f"  - name: grpo\n    steps: {rl_steps}\n    lr: 1.0e-6\n    group_size: {run['story'].G}\n"
        f"total_steps: {sft_steps + rl_steps}\neval_every: 100\n"
    )


def w_rasbt_csv(run: dict, folder: Path, first_total: int, crash: int) -> None:
    """reasoning-from-scratch 7_5 CSV (CRLF): the resumed script counts steps from 1 with a new total_steps."""
    evs = dict(run["evals"])
    tr = run["train"]
    rng = np.random.default_rng(4242)
    path = folder / "logs" / "7_5_plus_kl_metrics.csv"
    path.parent.mkdir(parents=True)
    out = ["step,total_steps,loss,kl_loss,policy_ratio,reward_avg,tokens_per_sec,avg_response_len,adv_avg,"
           "adv_std,entropy_avg,eval_acc"]  # fmt: skip
    for s in range(1, run["reached"] + 1):
        i = s - 1
        seg_step, total = (s, first_total) if s <= crash else (s - crash, first_total - crash)
        r = tr["~reward"][i]
        flat = r in (0.0, 1.0)
        ev = f"{evs[s]['eval_acc']:.6f}" if s in evs else ""
        loss = 0.0 if flat else float(rng.normal(0, 40))
        ratio = "" if flat else f"{tr['policy_ratio'][i]:.4f}"
        adv_std = 0.0 if flat else 0.9354  # sample std of z-scored advantages over 8 rollouts
        out.append(
            f"{seg_step},{total},{loss:.4f},{tr['kl_loss'][i]:.4f},{ratio},{r:.3f},{tr['tps'][i]:.2f},"
            f"{tr['~len_mean'][i]:.1f},{0.0:.4f},{adv_std:.4f},{tr['entropy_avg'][i]:.4f},{ev}"
        )
    path.write_bytes(("\r\n".join(out) + "\r\n").encode())


# ------------------------------------------------------------------------------------------------------- the cases


def warm_const(peak: float, warm: int) -> Callable[[np.ndarray], np.ndarray]:
    return lambda s: peak * np.minimum(np.asarray(s, dtype=float) / warm, 1.0)


def times(a: Callable, b: Callable) -> Callable[[np.ndarray], np.ndarray]:
    """The observed solve rate when a share b of the rollouts is lost (scored 0) whatever the answer."""
    return lambda s: a(s) * (1 - b(s))


def every(n: int, upto: int, start: int = 0) -> list[int]:
    return list(range(start, upto + 1, n))


@dataclass
class Tale:
    name: str
    story: Story
    write: Callable
    seed: int
    steps: tuple[int, int]  # (reached, planned)
    kind: str  # ok | stop | conv | rb | sor
    tags: str
    why: str
    onset: int | None = None

    def case(self) -> Case:
        reached = self.steps[0]
        if self.kind == "ok":
            labels = HEALTHY
        elif self.kind == "stop":
            labels = stop(self.onset)
        elif self.kind == "conv":
            labels = {**converged(), "onset_step": self.onset}
        else:
            assert self.onset is not None
            lo, hi = window(self.story, reached, self.onset)
            labels = rollback(lo, hi, self.onset) if self.kind == "rb" else stop_or_rollback(lo, hi, self.onset)
        return Case(self.name, lambda *a: None, self.write, self.seed, self.steps, labels, self.tags, self.why)


def window(st: Story, reached: int, onset: int) -> tuple[int, int]:
    steps = st.headline_steps(reached)
    level = {s: st.headline_level(s) for s in steps}
    best = max(steps, key=lambda s: level[s])
    sd = st.headline_sd(best)
    good = [s for s in steps if level[s] >= level[best] - sd]
    return good[0], max(s for s in good if s <= onset)


# --- stories whose pieces several cases share


def overlong(cap: int, cache: int) -> Callable:
    """TRL's soft overlong punishment: 0 up to cap - cache, then down linearly to -1 at the cap."""
    return lambda lengths, s: np.clip((cap - cache - lengths) / cache, -1.0, 0.0)


def ramped_length_penalty(start: int, end: int, coef: float, norm: float) -> Callable:
    return lambda lengths, s: -coef * np.clip((s[:, None] - start) / (end - start), 0, 1) * lengths / norm


def f3_eval_reward(step: int, row: dict, tr: dict, rng: np.random.Generator) -> None:
    i = min(step, len(tr["~rm"])) - 1
    lo = max(i - 20, 0)
    rm, pen = float(np.mean(tr["~rm"][lo : i + 1])), float(np.mean(tr["~pen"][lo : i + 1]))
    row["eval_reward"] = row["eval_rewards/accuracy_reward/mean"] + pen + 0.5 * rm + float(rng.normal(0, 0.02))


def s6_story(resumed: bool) -> Story:
    """TRL GRPO, 4000 planned; job 1 crashed at 2100 and job 2 resumed from checkpoint-2000 without scheduler.pt."""
    lr0 = warm_cos(2e-6, 100, 4000)
    if resumed:

        def lr(s: np.ndarray) -> np.ndarray:
            s = np.asarray(s, dtype=float)
            rewarm = warm_cos(2e-6, 100, 2000)(s - 2000)
            return np.where(s <= 2000, lr0(s), rewarm)

        acc = Arc(0.30).ease(1600, 0.61).hold(2000).line(2600, 0.585)
        ev = Arc(0.42).ease(1600, 0.66).hold(2000).line(2600, 0.60)
        kl = Arc(0.002).line(2000, 0.03).line(2150, 0.085).line(2600, 0.11)
        ent = Arc(0.50).line(2000, 0.40).line(2200, 0.47).line(2600, 0.50)
    else:
        lr = lr0
        acc = Arc(0.30).ease(1600, 0.61).line(2600, 0.62)
        ev = Arc(0.42).ease(1600, 0.66).line(2600, 0.665)
        kl = Arc(0.002).line(2000, 0.03).line(2600, 0.036)
        ent = Arc(0.50).line(2000, 0.40).line(2600, 0.39)
    return Story(
        acc,
        [Bench(ev, 500, 1, "eval_rewards/accuracy_reward/mean", also=("eval_reward",))],
        every(100, 2600, 100),
        "eval_rewards/accuracy_reward/mean",
        P=64,
        G=16,
        length=Arc(1300).line(2600, 1900),
        cap=4096,
        side={
            "kl": log(kl, 0.06),
            "entropy": log(ent, 0.04),
            "grad_norm": grad(Arc(0.12).hold(2000).line(2100, 0.2 if resumed else 0.12).hold(2600)),
            "learning_rate": exact(lr),
            "clip_ratio/region_mean": exact(0.0),
        },
        log_every=10,
        sps=190,
        age_min=6,
        ghost=s6_story(False) if resumed else None,
    )


LAUNCH = """#!/bin/bash
# launched from the login node; tensorboard under ./tensorboard/<run_name>
ray job submit --address="http://127.0.0.1:8265" -- python3 -m openrlhf.cli.train_ppo_ray \\
   --pretrain Qwen/Qwen3-8B-Base --advantage_estimator group_norm \\
   --n_samples_per_prompt 16 --rollout_batch_size 128 --train_batch_size 2048 \\
   --max_samples 512000 --num_episodes 1 --generate_max_len 8192 \\
   --init_kl_coef {kl} --actor_learning_rate 1e-6 --lr_warmup_ratio 0.0075 \\
   --eval_steps {ev} --save_steps 250 --logging_steps 1 \\
   --use_tensorboard ./tensorboard --wandb_run_name {name} \\
   --vllm_num_engines 8 --vllm_tensor_parallel_size 1 --colocate_all_models
"""


def s3_spread() -> Arc:
    return Arc(1.6).hold(1200).line(2400, 3.9)


TALES = [
    # ------------------------------------------------------------------ healthy look-alikes (must not be stopped)
    Tale(
        "ok-verl-jsonl-one-step-off-policy-probs-diff-0.003-steady-clipfrac-3pct-val-core-rising-live-at-40pct",
        Story(
            Arc(0.28).ease(1600, 0.62),
            [
                Bench(Arc(0.46).ease(1600, 0.68), 500, 4, "val-core/math500/acc/mean@4"),
                Bench(
                    Arc(0.10).ease(1600, 0.24),
                    30,
                    16,
                    "val-core/aime24/acc/mean@16",
                    "val-core/aime24/acc/best@16/mean",
                ),
            ],
            every(40, 640),
            "val-core/math500/acc/mean@4",
            P=256,
            G=8,
            spread=1.5,
            length=Arc(2400).line(640, 3100),
            cap=8192,
            side={
                "actor/entropy": log(Arc(0.52).line(640, 0.41), 0.04),
                "actor/kl_loss": log(Arc(0.0003).line(640, 0.006), 0.06),
                "actor/pg_clipfrac": log(0.034, 0.08),
                "actor/pg_clipfrac_lower": log(0.0003, 0.2),
                "actor/ppo_kl": add(0.0002, 0.0001),
                "actor/pg_loss": add(0.0, 0.004),
                "actor/grad_norm": grad(0.22),
                "actor/lr": exact(warm_const(1e-6, 20)),
                "training/rollout_probs_diff_mean": log(0.0031, 0.05),
                "training/rollout_probs_diff_max": log(0.55, 0.1),
                "training/rollout_actor_probs_pearson_corr": add(0.9962, 0.0004),
            },
            sps=420,
            age_min=4,
        ),
        writer(w_verl_jsonl)("async-grpo", "qwen3-8b-one-step-off", 40, False, "  async: one_step_off_policy\n"),
        3901,
        (640, 1600),
        "ok",
        "healthy verl jsonl async off-policy rollout-mismatch live early-middle",
        "verl one-step-off-policy GRPO (rollouts generated with the previous step's weights), file logger, "
        "640 of 1600 planned steps and written 4 minutes ago. Because rollouts lag one step the PPO clip binds on "
        "~3.4% of tokens and the train/rollout probability diff sits at 0.003 with Pearson 0.996: steady, not "
        "growing, which is what this mode looks like when healthy. Score 0.28 -> 0.53 and still rising; "
        "MATH-500 mean@4 0.46 -> 0.62 over 17 validations (sd ~0.015), AIME24 (30 problems) wobbles upward. "
        "Improving with 60% of the budget left: continue.",
    ),
    Tale(
        "ok-nemo-tb-async-grpo-token-mult-prob-error-1.01-two-one-step-refit-spikes-validation-rising-at-60pct",
        Story(
            Arc(0.40).ease(1200, 0.62),
            [Bench(Arc(0.50).ease(1200, 0.66), 960, 4, "validation/accuracy", "validation/pass_k")],
            every(60, 720),
            "validation/accuracy",
            P=512,
            G=16,
            length=Arc(1800).line(720, 2600),
            cap=8192,
            side={
                "train/token_mult_prob_error": add(1.010, 0.0015),
                "train/gen_kl_error": log(0.0004, 0.1),
                "train/sampling_importance_ratio": add(1.0, 0.002),
                "train/probs_ratio": add(1.0, 0.001),
                "train/probs_ratio_clamped": add(0.999, 0.001),
                "train/approx_entropy": log(Arc(0.48).line(720, 0.37), 0.03),
                "train/kl_penalty": exact(0.0),
                "train/loss": add(0.0, 0.002),
                "train/grad_norm": grad(0.18),
                "train/lr": exact(warm_const(1e-6, 10)),
            },
            events={
                "train/token_mult_prob_error": {233: 1.087, 511: 1.094},
                "train/gen_kl_error": {233: 0.012, 511: 0.015},
                "train/grad_norm": {233: 0.61},
            },
            sps=260,
            age_min=6,
        ),
        writer(w_nemo_tb)("exp_003"),
        4402,
        (720, 1200),
        "ok",
        "healthy nemo tensorboard async weight-refit mismatch-spikes live middle",
        "NeMo-RL async GRPO, 720 of 1200 steps, TensorBoard written 6 minutes ago. token_mult_prob_error sits at "
        "1.010 (inference and training agree) except two single-step spikes to ~1.09 at steps 233 and 511 "
        "(a weight refit that was retried), each back to 1.01 on the next step with no mark on reward or "
        "validation. Train reward 0.40 -> 0.59, validation accuracy (960 problems x 4) 0.50 -> 0.64 and still "
        "climbing, entropy easing 0.48 -> 0.37, kl_penalty logged as 0 because the KL term is off. Healthy: "
        "continue.",
    ),
    Tale(
        "ok-trl-console-pool-refiltered-at-800-reward-jumps-0.33-to-0.50-zero-std-0.17-to-0.02-eval-keeps-climbing",
        Story(
            Arc(0.25).ease(800, 0.335).jump(800, 0.505).ease(3000, 0.60),
            [Bench(Arc(0.38).ease(3000, 0.55), 256, 16, "eval_reward", also=("eval_rewards/accuracy_reward/mean",))],
            every(200, 1400, 200),
            "eval_reward",
            P=64,
            G=16,
            spread=Arc(1.8).jump(800, 0.9),
            length=Arc(1500).line(1400, 2300),
            cap=6144,
            side={
                "entropy": log(Arc(0.62).line(1400, 0.48), 0.04),
                "grad_norm": grad(0.09),
                "learning_rate": exact(warm_cos(1e-6, 50, 3000)),
                "clip_ratio/low_mean": exact(0.0),
                "clip_ratio/high_mean": exact(0.0),
                "clip_ratio/region_mean": exact(0.0),
            },
            log_every=10,
            sps=150,
            age_min=3,
        ),
        writer(w_trl_console)(
            10,
            {
                801: "[PoolRefreshCallback] step 800: re-scored the pool with the current policy (16 samples each); "
                "kept prompts with pass rate in (0, 1): 41,210 of 93,568 -> switching train_dataset",
            },
        ),
        4003,
        (1400, 3000),
        "ok",
        "healthy trl console-dicts curriculum pool-switch reward-jump live middle",
        "TRL GRPO console log (printed dicts, tqdm 1400/3000, written 3 minutes ago). At step 800 a callback "
        "re-scored the prompt pool and kept only prompts the policy solves sometimes but not always. The train "
        "reward jumps ~0.33 -> ~0.50 in one log and frac_reward_zero_std falls ~0.17 -> ~0.02: the batches "
        "changed, not the model. The held-out eval_reward (256 prompts x 16, sd ~0.019) keeps its slow climb "
        "through the switch with no jump, ~0.41 at 200 -> ~0.52 at 1400, and the train reward keeps rising "
        "after the switch (0.50 -> 0.57). Healthy: continue.",
    ),
    Tale(
        "ok-custom-jsonl-adaptive-sampler-holds-train-reward-near-0.5-pool-shrinks-math500-aime-rising-at-45pct",
        Story(
            Arc(0.46).line(900, 0.51),
            [
                Bench(Arc(0.55).ease(2000, 0.70), 500, 1, "math500_acc"),
                Bench(Arc(0.12).ease(2000, 0.25), 30, 16, "aime25_avg@16", "aime25_pass@16"),
            ],
            every(100, 900),
            "math500_acc",
            P=256,
            G=8,
            spread=0.8,
            length=Arc(2100).line(900, 3300),
            cap=12288,
            side={
                "sampler/active_pool": exact(Arc(60000).line(900, 21000)),
                "sampler/target_pass_rate": exact(0.5),
                "entropy": log(Arc(0.55).line(900, 0.47), 0.03),
                "kl_ref": log(Arc(0.0005).line(900, 0.011), 0.06),
                "grad_norm": grad(0.2),
                "lr": exact(warm_const(1e-6, 25)),
            },
            sps=340,
            age_min=9,
        ),
        writer(w_jsonl)(
            {
                "~reward": "reward/mean",
                "~zero_std": "reward/frac_zero_adv",
                "~len_mean": "rollout/len_mean",
                "~trunc": "rollout/truncated",
            },
            "train_metrics.jsonl",
            "eval_metrics.jsonl",
            {
                "total_steps": 2000,
                "batch_prompts": 256,
                "group_size": 8,
                "sampler": {"kind": "adaptive_pass_rate", "target": 0.5, "drop_if_solved_k_of_k": True},
                "eval_every": 100,
            },
            {},
        ),
        2304,
        (900, 2000),
        "ok",
        "healthy custom-jsonl adaptive-curriculum flat-train-reward live middle",
        "Hand-written GRPO loop with an adaptive sampler that serves prompts whose recent pass rate is near 0.5 "
        "and retires prompts solved every time, so the train reward is held at ~0.5 by design (0.46 -> 0.51) "
        "and the active pool shrinks 60k -> 21k. The flat train curve is not a plateau: MATH-500 (500 problems, "
        "sd ~0.021) rises 0.55 -> ~0.67 over ten evals and AIME25 avg@16 creeps up. 900 of 2000 steps, written "
        "9 minutes ago. Continue.",
    ),
    Tale(
        "ok-trackio-custom-mixture-drifts-math-to-code-aggregate-reward-stuck-near-0.52-both-sources-and-evals-rising",
        Story(
            Arc(0.5),
            [
                Bench(Arc(0.58).ease(3000, 0.72), 500, 1, "eval/math500"),
                Bench(Arc(0.22).ease(3000, 0.34), 279, 1, "eval/lcb_v5"),
            ],
            every(100, 1500),
            "eval/math500",
            P=512,
            G=8,
            pools={
                "math": (Arc(0.55).ease(3000, 0.74), Arc(0.8).line(1500, 0.4)),
                "code": (Arc(0.25).ease(3000, 0.42), Arc(0.2).line(1500, 0.6)),
            },
            length=Arc(1900).line(1500, 2700),
            cap=8192,
            side={
                "train/entropy": log(Arc(0.52).line(1500, 0.44), 0.03),
                "train/kl": log(Arc(0.0005).line(1500, 0.014), 0.06),
                "train/grad_norm": grad(0.17),
                "train/lr": exact(warm_const(1e-6, 30)),
            },
            sps=300,
            age_min=10,
        ),
        writer(w_trackio)(
            "mix-rl",
            "qwen3-8b-math-code-mix",
            {
                "~reward": "train/reward",
                "~pool/math": "train/reward_math",
                "~pool/code": "train/reward_code",
                "~share/code": "data/code_share",
                "~len_mean": "train/response_len",
            },
            False,
            1,
            {"total_steps": 3000, "mixture": "code share 0.2 -> 0.6 linearly over steps 0-1500, then fixed"},
        ),
        3505,
        (1500, 3000),
        "ok",
        "healthy trackio custom-loop data-mixture aggregate-reward-flat live middle",
        "Custom math+code GRPO loop logged to Trackio, 1500 of 3000 steps, written 10 minutes ago. The schedule "
        "moves the code share of each batch 0.2 -> 0.6; code prompts are harder, so the aggregate train reward "
        "rises 0.48 -> 0.53 in the first 500 steps and then sits near 0.52 for 1000 steps, which looks like a "
        "plateau. It is a mixture effect: math reward 0.55 -> 0.70 and code reward 0.25 -> 0.39 both keep "
        "rising, and so do MATH-500 (0.58 -> ~0.69, sd ~0.021) and LiveCodeBench v5 (279 problems, 0.22 -> "
        "~0.32). Continue.",
    ),
    Tale(
        "ok-custom-csv-sft-400-then-grpo-in-one-log-stage-column-rl-at-25pct-heldout-still-climbing",
        Story(
            Arc(0.40).hold(400).ease(3600, 0.62),
            [Bench(Arc(0.31).ease(400, 0.44).ease(3600, 0.60), 500, 1, "heldout_acc")],
            every(100, 1200),
            "heldout_acc",
            P=128,
            G=8,
            length=Arc(700).hold(400).line(1200, 1150),
            cap=4096,
            side={
                "sft_loss": log(Arc(1.15).ease(400, 0.62), 0.03),
                "kl": log(Arc(0.0001).hold(400).line(1200, 0.012), 0.06),
                "entropy": log(Arc(0.70).hold(400).line(1200, 0.52), 0.03),
                "grad_norm": grad(Arc(1.1).hold(400).jump(400, 0.25)),
                "lr": exact(
                    lambda s: np.where(s <= 400, warm_cos(1e-5, 20, 400, 1e-6)(s), warm_const(1e-6, 20)(s - 400))
                ),
            },
            sps=75,
            age_min=5,
        ),
        writer(w_stage_csv)(400, 3200),
        2306,
        (1200, 3600),
        "ok",
        "healthy custom-csv multi-stage sft-warm-start live early",
        "One hand-written script runs 400 SFT steps then 3200 GRPO steps and appends both to train_log.csv "
        "(stage column; SFT rows have sft_loss and no reward). Held-out accuracy (500 problems, sd ~0.022) goes "
        "0.31 -> 0.44 during SFT and keeps climbing in RL, ~0.53 at step 1200; the GRPO reward rises 0.40 -> "
        "~0.52, KL grows slowly from 0 at the stage switch. The RL stage is 25% done and improving: continue.",
    ),
    Tale(
        "ok-rasbt-csv-crlf-resumed-at-300-steps-renumbered-from-1-total-steps-500-to-200-still-rising",
        Story(
            Arc(0.15).ease(500, 0.45),
            [Bench(Arc(0.16).ease(500, 0.40), 500, 1, "eval_acc")],
            [1, 50, 100, 150, 200, 250, 300, 301, 350, 400],
            "eval_acc",
            P=1,
            G=8,
            length=Arc(180).line(440, 420),
            cap=1024,
            side={
                "kl_loss": add(Arc(0.0).line(440, 0.6), 0.08),
                "policy_ratio": add(1.0, 0.02),
                "entropy_avg": log(Arc(0.9).line(440, 0.55), 0.05),
                "tps": log(Arc(310).line(440, 270), 0.04),
            },
            sps=24,
            age_min=2,
        ),
        writer(w_rasbt_csv)(500, 300),
        2307,
        (440, 500),
        "ok",
        "healthy rasbt-csv crlf resume renumbered-steps live late",
        "reasoning-from-scratch 7_5 script (one prompt x 8 rollouts per step, so reward_avg jumps between "
        "eighths). The first launch (total_steps 500) died after step 300; it was restarted from the step-300 "
        "checkpoint with total_steps 200 and counts from 1 again in the same CSV. Read as one run (440 of 500 "
        "steps): MATH-500 eval_acc (fraction, 500 problems, sd ~0.021) 0.16 -> ~0.39 and still rising across "
        "the resume, reward level 0.15 -> ~0.44. Improving with steps left: continue.",
    ),
    Tale(
        "ok-openrlhf-tb-stalled-5h-at-2000-of-4000-three-benchmarks-every-250-aime-30-wobbles-math-amc-rising",
        Story(
            Arc(0.30).ease(4000, 0.58),
            [
                Bench(Arc(0.55).ease(4000, 0.74), 500, 4, "eval_math500_pass1", "eval_math500_pass4"),
                Bench(Arc(0.42).ease(4000, 0.64), 40, 16, "eval_amc23_pass1", "eval_amc23_pass16"),
                Bench(Arc(0.12).ease(4000, 0.28), 30, 16, "eval_aime24_pass1", "eval_aime24_pass16"),
            ],
            every(250, 2000, 250),
            "eval_math500_pass1",
            P=128,
            G=16,
            length=Arc(2200).line(2000, 3600),
            cap=8192,
            side={
                "kl": log(Arc(0.0001).line(2000, 0.02), 0.05),
                "ppo_clip_ratio": log(0.015, 0.08),
                "ppo_kl": add(0.0001, 0.00005),
                "vllm_kl": log(0.0008, 0.08),
                "policy_loss": add(0.0, 0.01),
                "actor_lr": exact(warm_const(1e-6, 30)),
                "actor_grad_norm": grad(0.2),
            },
            sps=280,
            age_min=300,
        ),
        writer(w_orlhf_tb)(
            "qwen3-8b-grpo-math-0311", 1, ORLHF, LAUNCH.format(kl=0.001, ev=250, name="qwen3-8b-grpo-math-0311")
        ),
        2308,
        (2000, 4000),
        "ok",
        "healthy openrlhf tensorboard stalled several-benchmarks noisy-small-eval",
        "OpenRLHF GRPO, TensorBoard last written 5 hours ago at step 2000 of 4000 (the job hung; nothing says it "
        "finished). Evals every 250 steps on three benchmarks of very different size: MATH-500 pass@1 "
        "(500 x 4, sd ~0.014) 0.59 -> ~0.70, AMC23 (40 problems) 0.46 -> ~0.60, AIME24 (30 problems, sd ~0.05) "
        "moving up and down around a rising level. Train reward still rising, KL 0.02, clip ratio 1.5%, "
        "vllm_kl 8e-4. The run was still improving when it stopped writing: restart it and continue.",
    ),
    Tale(
        "ok-verl-console-np2-length-penalty-coef-ramps-300-to-900-score-slides-0.65-to-0.54-val-acc-rises",
        Story(
            Arc(0.58).ease(2000, 0.76),
            [
                Bench(Arc(0.70).ease(2000, 0.80), 500, 4, "val-core/math500/acc/mean@4"),
                Bench(Arc(0.18).ease(2000, 0.30), 30, 32, "val-core/aime24/acc/mean@32"),
            ],
            every(50, 1100),
            "val-core/math500/acc/mean@4",
            P=256,
            G=8,
            length=Arc(7000).hold(300).line(900, 5000).line(1100, 4700),
            cap=16384,
            penalty=ramped_length_penalty(300, 900, 0.3, 8192),
            total=lambda c, s: c["acc"] + c["pen"],
            side={
                "actor/entropy": log(0.36, 0.04),
                "actor/pg_clipfrac": log(0.0042, 0.08),
                "actor/pg_clipfrac_lower": log(0.0002, 0.2),
                "actor/ppo_kl": add(0.0, 0.00004),
                "actor/pg_loss": add(0.0, 0.003),
                "actor/grad_norm": grad(0.14),
                "actor/lr": exact(warm_const(1e-6, 10)),
            },
            sps=520,
            age_min=7,
        ),
        writer(w_verl_console)(
            "len-pen",
            "qwen3-8b-lenpen-ramp",
            True,
            100,
            "train.log",
            VERL,
            (
                "'custom_reward_function': {'path': 'rewards/math_len_penalty.py', 'name': 'compute_score'},",
                "'reward_kwargs': {'len_coef_max': 0.3, 'ramp_start': 300, 'ramp_end': 900, 'len_norm': 8192},",
            ),
        ),
        2309,
        (1100, 2000),
        "ok",
        "healthy verl console numpy2 mixed-reward length-penalty-ramp falling-score live middle",
        "verl GRPO with a custom score = correctness - coef x length/8192, coef ramped 0 -> 0.3 over steps "
        "300-900 (in the printed config). Responses shorten 7000 -> ~4700 tokens and critic/score/mean slides "
        "0.65 -> 0.54 over the ramp, a slow decline that is the penalty being switched on, then turns up again "
        "after 900. What the penalty is meant to protect holds up: MATH-500 mean@4 validation (sd ~0.013) "
        "rises 0.70 -> ~0.78 over 22 validations, AIME24 mean@32 creeps up, entropy flat. 1100 of 2000 steps. "
        "Continue.",
    ),
    Tale(
        "ok-verl-mlflow-files-at-keys-live-at-88pct-mean-at-8-still-rising-1sd-per-360-steps-constant-lr",
        Story(
            Arc(0.30).ease(1200, 0.52).line(3000, 0.64),
            [
                Bench(
                    Arc(0.40).ease(1200, 0.53).line(3000, 0.60),
                    500,
                    8,
                    "val-core/math/acc/mean@8",
                    "val-core/math/acc/best@8/mean",
                )
            ],
            every(120, 2640),
            "val-core/math/acc/mean@8",
            P=512,
            G=8,
            length=Arc(900).line(2640, 1700),
            cap=4096,
            side={
                "actor/entropy": log(Arc(0.50).line(2640, 0.33), 0.03),
                "actor/kl_loss": log(Arc(0.0003).line(2640, 0.03), 0.05),
                "actor/pg_clipfrac": log(0.003, 0.08),
                "actor/ppo_kl": add(0.0, 0.00005),
                "actor/grad_norm": grad(0.16),
                "actor/lr": exact(warm_const(1e-6, 10)),
            },
            sps=150,
            age_min=8,
        ),
        writer(w_verl_mlflow_files)("math-grpo", "qwen2.5-7b-math-long"),
        7810,
        (2640, 3000),
        "ok",
        "healthy verl mlflow-files at-keys slow-rise live late",
        "verl GRPO on MLflow's file store ('@' written as '_at_'), 2640 of 3000 planned steps, written 8 minutes "
        "ago. The learning rate is constant (no decay tail). Validation mean@8 on 500 problems (sd ~0.013) has "
        "been rising in a straight line since 1200, 0.53 -> ~0.59, about one sd every 360 steps, best@8 with it; "
        "train score 0.52 -> ~0.62 likewise. Slow but real improvement with 360 steps of budget left: continue.",
    ),
    Tale(
        "ok-openrlhf-console-dapo-live-at-6pct-rollout-reward-0.04-to-0.10-filter-pass-rate-doubles-lengths-grow",
        Story(
            Arc(0.04).line(180, 0.10),
            [Bench(Arc(0.22).ease(3000, 0.55), 500, 1, "eval_math500_pass1")],
            every(50, 180, 50),
            "eval_math500_pass1",
            P=128,
            G=16,
            spread=2.4,
            length=Arc(3000).line(180, 6800),
            cap=16384,
            side={
                "ppo_clip_ratio": log(0.02, 0.08),
                "ppo_kl": add(0.0001, 0.00005),
                "vllm_kl": log(0.0009, 0.08),
                "policy_loss": add(0.0, 0.01),
                "actor_lr": exact(warm_const(1e-6, 20)),
                "actor_grad_norm": grad(0.3),
            },
            sps=610,
            age_min=5,
        ),
        writer(w_orlhf_console)(1, None, 1, ORLHF_DAPO),
        2311,
        (180, 3000),
        "ok",
        "healthy openrlhf console dapo dynamic-sampling long-context live early",
        "OpenRLHF DAPO-style run (dynamic filtering, 16k responses), only 180 of 3000 steps in, written 5 minutes "
        "ago. The problems are hard: the rollout reward is tiny but rising 0.04 -> 0.10, and the share of groups "
        "the filter keeps (dynamic_filtering_pass_rate) roughly doubles, so more of each batch carries signal. "
        "Responses lengthen 3000 -> 6800 tokens with truncation still low; MATH-500 pass@1 0.23 -> ~0.27 over "
        "three evals. Far too early to call and every sign points up: continue.",
    ),
    # ------------------------------------------------------------------------------------ clear failures
    Tale(
        "rb-openrlhf-console-vllm-engine-restart-at-900-weight-sync-corrupt-vllm-kl-x40-clip-ratio-to-36pct-eval-falls",
        Story(
            Arc(0.30).ease(800, 0.555).hold(900).line(1150, 0.38),
            [Bench(Arc(0.35).ease(800, 0.62).hold(900).line(1150, 0.47), 500, 1, "eval_math500_pass1")],
            every(50, 1150, 50),
            "eval_math500_pass1",
            P=128,
            G=8,
            length=Arc(1400).hold(900).line(1150, 2300),
            cap=4096,
            side={
                "vllm_kl": log(Arc(0.0008).jump(900, 0.031).line(1150, 0.11), 0.08),
                "ppo_clip_ratio": log(Arc(0.018).jump(900, 0.09).line(1150, 0.36), 0.06),
                "ppo_kl": add(0.0001, 0.00005),
                "kl": log(Arc(0.0002).line(900, 0.009).line(1150, 0.05), 0.05),
                "policy_loss": add(0.0, 0.01),
                "actor_lr": exact(warm_const(1e-6, 20)),
                "actor_grad_norm": grad(Arc(0.25).hold(900).line(1150, 0.9)),
                "timing/broadcast": log(Arc(9.0).jump(900, 0.7), 0.05),
            },
            sps=200,
            age_min=4,
        ),
        writer(w_orlhf_console)(
            1,
            {
                901: "(LLMRayActor pid=88412) WARNING: vLLM engine 3 restarted after CUDA error 700; "
                "re-created weight update group, falling back to per-tensor broadcast (dtype cast bf16->fp16)",
            },
        ),
        7412,
        (1150, 2000),
        "rb",
        "rollback openrlhf console async weight-sync train-inference-mismatch",
        "OpenRLHF GRPO console log, 1150 of 2000 steps, live. At step 900 a vLLM engine restarted and weight "
        "sync fell back to a broken path (the log line says so; timing/broadcast drops 9 s -> 0.7 s). From then "
        "on the rollout policy is not the trained one: vllm_kl jumps 8e-4 -> 0.03 and climbs to ~0.11, "
        "ppo_clip_ratio 2% -> 36%, grad norm triples, responses get longer. Reward falls 0.555 -> ~0.38 and "
        "MATH-500 pass@1 (sd ~0.022) from 0.62 (plateau ~650-900) to ~0.47. The weights before the restart are "
        "better: roll back to ~900 and fix the sync.",
        onset=900,
    ),
    Tale(
        "rb-verl-console-np2-collapse-from-1710-after-last-val-at-1500-grad-spikes-entropy-x5-lengths-to-cap-live",
        Story(
            Arc(0.22).ease(1300, 0.64).line(1710, 0.65).lift(1800, 0.12),
            [
                Bench(Arc(0.50).ease(1300, 0.74), 500, 4, "val-core/math500/acc/mean@4"),
                Bench(Arc(0.11).ease(1300, 0.27), 30, 16, "val-core/aime24/acc/mean@16"),
            ],
            every(500, 1800),
            TRAIN,
            P=512,
            G=16,
            length=Arc(4200).hold(1710).lift(1800, 12500),
            cap=16384,
            side={
                "actor/entropy": log(Arc(0.30).hold(1710).lift(1800, 1.6), 0.04),
                "actor/kl_loss": log(Arc(0.0005).line(1710, 0.011).lift(1800, 0.4), 0.05),
                "actor/pg_clipfrac": log(Arc(0.0025).hold(1710).lift(1800, 0.09), 0.08),
                "actor/ppo_kl": add(Arc(0.0).hold(1710).lift(1800, 0.01), 0.00005),
                "actor/pg_loss": add(0.0, 0.004),
                "actor/grad_norm": grad(Arc(0.3).hold(1705).lift(1800, 12.0)),
                "actor/lr": exact(warm_const(1e-6, 10)),
            },
            events={"actor/grad_norm": {1716: 41.0, 1731: 88.0}},
            sps=560,
            age_min=5,
        ),
        writer(w_verl_console)("dapo-long", "qwen3-14b-dapo-16k", True, 100),
        2313,
        (1800, 3000),
        "rb",
        "rollback verl console numpy2 collapse sparse-eval train-headline live",
        "verl GRPO console (numpy-2 reprs), 1800 of 3000 steps, live; validation only every 500 steps and the "
        "last one (1500) was the best yet (MATH-500 0.74). Train score rose 0.22 -> 0.64 by 1300 and held "
        "0.64-0.65 to 1710. Then grad norm spikes (41, 88), entropy 0.30 -> 1.6, responses 4.2k -> 12.5k "
        "tokens, pg_clipfrac x30, and the score falls to ~0.12 by 1800. No validation has seen the collapse yet "
        "but the train signal is unambiguous (batch sd ~0.01). Roll back to the newest checkpoint before 1710 "
        "(saves every 100: global_step_1700).",
        onset=1710,
    ),
    Tale(
        "rb-trl1x-state-three-reward-fns-rm-term-runs-away-accuracy-falls-from-1100-total-rises-eval-slides-limit3",
        Story(
            Arc(0.35).ease(1100, 0.58).line(1600, 0.49),
            [Bench(Arc(0.37).ease(1100, 0.60).line(1600, 0.50), 800, 1, "eval_rewards/accuracy_reward/mean")],
            every(100, 1600, 100),
            "eval_rewards/accuracy_reward/mean",
            P=64,
            G=16,
            length=Arc(1800).line(1100, 2600).lift(1600, 5200),
            cap=6144,
            rm=(Arc(0.2).line(1100, 1.1).lift(1600, 2.6), 1.2, 1.5),
            penalty=overlong(6144, 1024),
            total=lambda c, s: c["acc"] + c["pen"] + 0.5 * c["rm"],
            side={
                "kl": log(Arc(0.002).line(1100, 0.018).lift(1600, 0.09), 0.05),
                "entropy": log(Arc(0.55).line(1600, 0.44), 0.03),
                "grad_norm": grad(0.12),
                "learning_rate": exact(warm_cos(1e-6, 30, 3000)),
                "clip_ratio/low_mean": exact(0.0),
                "clip_ratio/high_mean": exact(0.0),
                "clip_ratio/region_mean": exact(0.0),
            },
            eval_post=f3_eval_reward,
            log_every=10,
            sps=240,
            age_min=8,
        ),
        writer(w_trl_state)(
            100,
            3,
            10,
            100,
            {
                **TRL,
                "~rm": "rewards/Skywork-Reward-V2-Qwen3-4B/mean",
                "~pen": "rewards/soft_overlong_punishment_reward/mean",
            },
        ),
        2314,
        (1600, 3000),
        "rb",
        "rollback trl trainer-state mixed-reward reward-model-hacking save-limit",
        "TRL GRPO with three reward functions (accuracy_reward, soft_overlong_punishment, a Skywork reward model "
        "at weight 0.5); only checkpoint-1400/1500/1600 are left (save_total_limit 3), live. Until ~1100 all "
        "three move together. Then the reward-model term runs away (1.1 -> 2.6) as answers get longer and "
        "chattier, the overlong penalty starts to bite, KL accelerates 0.018 -> 0.09, and accuracy turns down "
        "(train 0.58 -> 0.49). The total reward keeps rising. Held-out accuracy (800 prompts, sd ~0.017) peaked "
        "at 0.60 around 1100 and is ~0.50 at 1600 (~6 sd). Roll back to ~1100 (no checkpoint that old is left).",
        onset=1100,
    ),
    Tale(
        "rb-trl-hf-tb-live-at-8pct-lr-warmup-to-3e-6-ends-at-150-entropy-x5-lengths-to-cap-reward-collapses",
        Story(
            Arc(0.18).line(150, 0.44).hold(160).lift(240, 0.07).hold(250),
            [],
            [],
            TRAIN,
            P=64,
            G=8,
            length=Arc(900).hold(160).lift(240, 3900),
            cap=4096,
            side={
                "entropy": log(Arc(0.45).hold(160).lift(240, 2.2), 0.04),
                "grad_norm": grad(Arc(0.3).hold(155).lift(240, 9.0)),
                "learning_rate": exact(warm_cos(3e-6, 150, 3000)),
                "clip_ratio/region_mean": exact(0.0),
            },
            log_every=5,
            sps=70,
            age_min=3,
        ),
        writer(w_trl_tb)(100, 0, 5, None),
        2315,
        (250, 3000),
        "rb",
        "rollback trl tensorboard lr-too-high early collapse live",
        "TRL GRPO to TensorBoard (train/* tags) plus checkpoint-100/200, max_steps 3000, live at step 250. The "
        "LR warms up linearly to 3e-6 over 150 steps; reward climbs 0.18 -> 0.44 during warm-up, then right "
        "at the peak LR entropy goes 0.45 -> 2.2, completions run 900 -> ~3200 tokens with ~35% cut at the 4096 "
        "cap, grad norm x30, and reward collapses to ~0.07 by 240. Logged every 5 steps (mean of 5 batches, sd "
        "~0.017). "
        "The model around 150-160 is far better than the current one: roll back (checkpoint-100 is the newest "
        "save before the break) and lower the LR.",
        onset=160,
    ),
    Tale(
        "stop-nemo-tb-token-mult-prob-error-1.34-from-step-1-gen-kl-0.08-reward-and-validation-flat-450-steps",
        Story(
            Arc(0.36),
            [Bench(Arc(0.39), 1000, 1, "validation/accuracy")],
            every(50, 450),
            "validation/accuracy",
            P=256,
            G=16,
            length=Arc(1600),
            cap=8192,
            side={
                "train/token_mult_prob_error": add(1.34, 0.02),
                "train/gen_kl_error": log(0.081, 0.06),
                "train/sampling_importance_ratio": add(0.93, 0.01),
                "train/probs_ratio": add(1.0, 0.002),
                "train/probs_ratio_clamped": add(0.97, 0.005),
                "train/approx_entropy": log(0.52, 0.03),
                "train/kl_penalty": log(Arc(0.0002).line(450, 0.0006), 0.05),
                "train/loss": add(0.0, 0.004),
                "train/grad_norm": grad(0.35),
                "train/lr": exact(warm_const(1e-6, 10)),
            },
            sps=200,
            age_min=7,
        ),
        writer(w_nemo_tb)("exp_001"),
        3516,
        (450, 1500),
        "stop",
        "stop nemo tensorboard train-inference-mismatch never-learns live early",
        "NeMo-RL GRPO, 450 of 1500 steps, live. From the very first step token_mult_prob_error is 1.34 (the "
        "healthy value is ~1.00-1.01; NeMo's own docs call >1.05 broken weight transfer) and gen_kl_error "
        "~0.08: the generation engine is not running the trained weights. Nothing has been learned: train "
        "reward flat at ~0.36 and validation accuracy (1000 problems, sd ~0.015) flat at ~0.39 for nine "
        "evaluations. The current weights are as good as any earlier ones and more steps will not help until "
        "the refit is fixed: stop.",
        onset=1,
    ),
    Tale(
        "rb-wandb-csv-verl-pool-switched-at-1200-to-synthetic-set-with-wrong-refs-score-climbs-again-val-falls",
        Story(
            Arc(0.30).ease(1200, 0.58).jump(1200, 0.40).ease(2000, 0.62),
            [
                Bench(Arc(0.48).ease(1100, 0.66).hold(1200).line(2000, 0.55), 500, 4, "val-core/math500/acc/mean@4"),
                Bench(Arc(0.10).ease(1100, 0.22).hold(1200).line(2000, 0.15), 30, 16, "val-core/aime24/acc/mean@16"),
            ],
            every(100, 2000),
            "val-core/math500/acc/mean@4",
            P=256,
            G=8,
            length=Arc(1500).line(1200, 2100).jump(1200, 1700).line(2000, 1300),
            cap=8192,
            side={
                "actor/entropy": log(Arc(0.50).line(1200, 0.38).jump(1200, 0.45).line(2000, 0.30), 0.03),
                "actor/kl_loss": log(Arc(0.0003).line(1200, 0.010).line(2000, 0.05), 0.05),
            },
            sps=300,
            age_min=30,
        ),
        writer(w_wandb_csv)(
            "qwen3-8b-grpo-mix2", {"~reward": "critic/score/mean", "~len_mean": "response_length/mean"}, 2
        ),
        2917,
        (2000, 2000),
        "rb",
        "rollback wandb-csv verl data-switch noisy-labels train-rises-eval-falls",
        "W&B panel CSV exports of a verl GRPO run (Step axis, min/max columns, downsampled in pairs). At step "
        "1200 the data loader moved to a synthetic prompt set whose reference answers are partly wrong: the "
        "score drops 0.58 -> 0.40 with the new pool and then climbs again to ~0.62 as the policy learns to "
        "match those references. Held-out validation says the model is getting worse: MATH-500 mean@4 "
        "(sd ~0.019) peaked at ~0.66 around 1100-1200 and slides to ~0.55 by 2000, AIME24 falls with it. The "
        "rising train score is not progress. Roll back to ~1200.",
        onset=1200,
    ),
    Tale(
        "stop-verl-console-v03-kl-loss-coef-1.0-pins-policy-kl-1e-4-score-and-gsm8k-test-score-flat-900-steps",
        Story(
            Arc(0.61),
            [Bench(Arc(0.63), 1319, 1, "val/test_score/openai/gsm8k")],
            every(50, 900),
            "val/test_score/openai/gsm8k",
            P=256,
            G=5,
            length=Arc(260),
            cap=1024,
            side={
                "actor/entropy_loss": log(0.42, 0.03),
                "actor/kl_loss": log(Arc(0.00008).line(900, 0.00015), 0.06),
                "actor/kl_coef": exact(1.0),
                "actor/pg_loss": add(0.0, 0.002),
                "actor/pg_clipfrac": log(0.0008, 0.1),
                "actor/ppo_kl": add(0.0, 0.00002),
                "actor/grad_norm": grad(0.05),
                "actor/lr": exact(1e-6),
            },
            sps=45,
            age_min=2,
        ),
        writer(w_verl_console)(
            "verl_grpo_gsm8k",
            "qwen2_7b_kl1",
            False,
            100,
            "nohup.out",
            VERL,
            ("'actor': {'use_kl_loss': True, 'kl_loss_coef': 1.0, 'kl_loss_type': 'low_var_kl'},",),
        ),
        2318,
        (900, 2000),
        "stop",
        "stop verl console v03-keys kl-coefficient-too-high never-learns live",
        "verl 0.3-era GRPO on GSM8K (plain float console, val/test_score keys), 900 of 2000 steps, live. "
        "kl_loss_coef is 1.0 (printed config; usual values are ~0.001): the KL term pins the policy to the "
        "reference, kl_loss stays ~1e-4, entropy and lengths never move. Score flat at ~0.61 from the first "
        "step and GSM8K test score (1319 problems, sd ~0.013) flat at ~0.63 over 19 validations. Nothing has "
        "been gained and nothing will be with this config; the current weights are as good as any: stop.",
        onset=1,
    ),
    Tale(
        "rb-custom-jsonl-fully-async-staleness-unbounded-after-pool-resize-at-1300-is-clipfrac-to-45pct-eval-falls",
        Story(
            Arc(0.32).ease(1100, 0.55).hold(1300).line(1800, 0.40),
            [
                Bench(Arc(0.40).ease(1100, 0.68).hold(1300).line(1800, 0.57), 500, 1, "math500_pass@1"),
                Bench(Arc(0.12).ease(1100, 0.25).hold(1300).line(1800, 0.17), 30, 16, "aime24_avg@16"),
            ],
            every(100, 1800),
            "math500_pass@1",
            P=256,
            G=8,
            length=Arc(2600).line(1300, 3400).line(1800, 4100),
            cap=12288,
            side={
                "async/staleness_mean": add(Arc(1.2).hold(1300).line(1800, 9.0), 0.15),
                "async/staleness_max": add(Arc(2.0).hold(1300).line(1800, 17.0), 0.5),
                "async/trainer_idle_frac": log(Arc(0.18).jump(1300, 0.01), 0.1),
                "rollout/workers": exact(Arc(8).jump(1300, 12)),
                "is/clipfrac": log(Arc(0.04).hold(1300).line(1800, 0.45), 0.05),
                "is/ratio_mean": add(Arc(1.0).hold(1300).line(1800, 0.82), 0.01),
                "entropy": log(Arc(0.45).line(1300, 0.38).line(1800, 0.9), 0.04),
                "kl_ref": log(Arc(0.0002).line(1300, 0.012).line(1800, 0.06), 0.05),
                "grad_norm": grad(Arc(0.2).hold(1300).line(1800, 0.7)),
                "lr": exact(warm_const(1e-6, 30)),
            },
            sps=150,
            age_min=6,
        ),
        writer(w_jsonl)(
            {"~reward": "reward_mean", "~reward_std": "reward_std", "~len_mean": "resp_len_mean"},
            "train.jsonl",
            "eval.jsonl",
            {
                "total_steps": 4000,
                "async": {"mode": "fully_async", "max_staleness": None, "is_correction": "truncated", "is_cap": 2.0},
                "eval_every": 100,
            },
            {1301: "rollout_pool_resized 8->12 workers"},
        ),
        2319,
        (1800, 4000),
        "rb",
        "rollback custom-jsonl fully-async staleness importance-ratio-clipping live middle",
        "Hand-written fully asynchronous GRPO loop (no cap on staleness), 1800 of 4000 steps, live. At 1300 the "
        "rollout pool grew from 8 to 12 workers (event line in train.jsonl); the trainer can no longer keep up "
        "(idle fraction 0.18 -> 0.01) and mean staleness climbs 1.2 -> 9 policy versions. The truncated "
        "importance ratio clips on 4% -> 45% of tokens, entropy doubles, reward falls 0.55 -> ~0.40. MATH-500 "
        "pass@1 (500 problems, sd ~0.021) held 0.68 over 1100-1300 and is ~0.57 now; AIME24 falls too. Roll "
        "back to ~1300 and bound the staleness.",
        onset=1300,
    ),
    Tale(
        "stop-trl1x-finished-3000-of-3000-top-level-state-vllm-is-correction-eval-plateau-since-2000-final-at-best",
        Story(
            Arc(0.30).ease(2000, 0.66).line(3000, 0.67),
            [
                Bench(
                    Arc(0.41).ease(2000, 0.63).hold(3000),
                    1000,
                    1,
                    "eval_rewards/accuracy_reward/mean",
                    also=("eval_reward",),
                )
            ],
            every(250, 3000, 250),
            "eval_rewards/accuracy_reward/mean",
            P=64,
            G=16,
            length=Arc(1500).line(3000, 2100),
            cap=6144,
            side={
                "entropy": log(Arc(0.50).line(3000, 0.36), 0.03),
                "sampling/sampling_logp_difference/mean": log(0.0042, 0.05),
                "sampling/sampling_logp_difference/max": log(0.9, 0.15),
                "sampling/importance_sampling_ratio/min": log(0.62, 0.08),
                "sampling/importance_sampling_ratio/mean": add(1.0, 0.002),
                "sampling/importance_sampling_ratio/max": log(1.6, 0.08),
                "grad_norm": grad(0.11),
                "learning_rate": exact(warm_cos(1e-6, 50, 3000)),
                "clip_ratio/region_mean": exact(0.0),
            },
            log_every=10,
            sps=160,
            age_min=1200,
        ),
        writer(w_trl_state)(500, 2, 10, 250, TRL, 0, True, True),
        2320,
        (3000, 3000),
        "stop",
        "stop trl trainer-state finished best-at-end vllm-importance-sampling",
        "TRL GRPO with vLLM importance-sampling correction, finished: top-level trainer_state.json with the "
        "train_runtime row, global_step 3000 = max_steps, should_training_stop true, checkpoint-2500/3000 kept; "
        "written 20 hours ago. Held-out accuracy (1000 prompts, sd ~0.015) rose 0.41 -> 0.63 by 2000 and held "
        "there through 3000; the sampling logp difference stayed at 0.004 and the IS ratio near 1 the whole "
        "way. The final weights are as good as any earlier ones: keep them, stop.",
        onset=2000,
    ),
    # ---------------------------------------------------------------------------------------- subtle ones
    Tale(
        "sor-openrlhf-tb-vllm-kl-creeps-7x-from-1400-clip-ratio-doubles-eval-eases-1.1sd-after-600-step-plateau",
        Story(
            Arc(0.34).ease(800, 0.57).hold(2000),
            [Bench(Arc(0.40).ease(800, 0.58).hold(1400).line(2000, 0.563), 1000, 1, "eval_deepscaler_val_pass1")],
            every(100, 2000, 100),
            "eval_deepscaler_val_pass1",
            P=128,
            G=8,
            length=Arc(1800).line(2000, 2300),
            cap=8192,
            side={
                "vllm_kl": log(Arc(0.0009).hold(1400).line(2000, 0.0062), 0.06),
                "ppo_clip_ratio": log(Arc(0.02).hold(1400).line(2000, 0.041), 0.06),
                "kl": log(Arc(0.001).line(800, 0.012).line(2000, 0.035), 0.05),
                "ppo_kl": add(0.0001, 0.00004),
                "policy_loss": add(0.0, 0.01),
                "actor_lr": exact(warm_const(1e-6, 20)),
                "actor_grad_norm": grad(0.2),
            },
            sps=230,
            age_min=5,
        ),
        writer(w_orlhf_tb)(
            "r1-distill-7b-grpo-deepscaler",
            1,
            ORLHF,
            LAUNCH.format(kl=0.01, ev=100, name="r1-distill-7b-grpo-deepscaler"),
        ),
        2321,
        (2000, 4000),
        "sor",
        "stop-or-rollback openrlhf tensorboard train-inference-mismatch plateau slow-drift",
        "OpenRLHF GRPO, 2000 of 4000 steps, live. Reward plateaued at ~0.57 by 800. From 1400 the vLLM/trainer "
        "mismatch creeps up (vllm_kl 9e-4 -> 6e-3) and ppo_clip_ratio doubles (2% -> 4%); KL to the reference "
        "keeps drifting. The 1000-problem eval (sd ~0.016) held 0.58 from 800 to 1400 and has eased to ~0.563, "
        "about one sd: a cost that cannot be told from noise yet. Nothing more to gain from this run; stopping "
        "is right, going back to the plateau (~800-1400) is as good.",
        onset=1400,
    ),
    Tale(
        "rb-trl1x-state-fp8-rollouts-from-resume-at-1000-logp-diff-x5-train-reward-holds-math500-slides-3sd",
        Story(
            Arc(0.33).ease(1000, 0.62).line(1600, 0.605),
            [
                Bench(
                    Arc(0.45).ease(1000, 0.70).line(1600, 0.64),
                    500,
                    1,
                    "eval_rewards/accuracy_reward/mean",
                    also=("eval_reward",),
                )
            ],
            every(100, 1600, 100),
            "eval_rewards/accuracy_reward/mean",
            P=64,
            G=16,
            length=Arc(2000).line(1600, 2600),
            cap=8192,
            side={
                "sampling/sampling_logp_difference/mean": log(Arc(0.0031).jump(1000, 0.0162).line(1600, 0.019), 0.05),
                "sampling/sampling_logp_difference/max": log(Arc(0.8).jump(1000, 2.9), 0.12),
                "sampling/importance_sampling_ratio/min": log(Arc(0.61).jump(1000, 0.13), 0.1),
                "sampling/importance_sampling_ratio/mean": add(Arc(1.0).jump(1000, 0.985), 0.002),
                "sampling/importance_sampling_ratio/max": log(Arc(1.6).jump(1000, 2.0), 0.08),
                "entropy": log(Arc(0.48).line(1000, 0.41).line(1600, 0.39), 0.03),
                "grad_norm": grad(Arc(0.11).jump(1000, 0.16)),
                "learning_rate": exact(warm_cos(1e-6, 50, 4000)),
                "clip_ratio/region_mean": exact(0.0),
            },
            log_every=10,
            sps=210,
            age_min=12,
        ),
        writer(w_trl_state)(200, 4, 10, 100),
        2322,
        (1600, 4000),
        "rb",
        "rollback trl trainer-state resume config-change train-inference-mismatch eval-decline",
        "TRL GRPO with vLLM generation and IS correction; checkpoint-1000..1600 on disk, live. The run was "
        "resumed from checkpoint-1000 with FP8 rollouts: from 1001 the sampling logp difference jumps 0.003 -> "
        "0.016 and the minimum IS ratio 0.61 -> 0.13. Nothing collapses: train reward holds ~0.61 and entropy "
        "is steady. But held-out accuracy (MATH-500, sd ~0.021), which rose to 0.70 at 1000, slides eval after "
        "eval to ~0.64 at 1600 (~3 sd). The checkpoint-1000 weights are better: roll back to 1000.",
        onset=1000,
    ),
    Tale(
        "rb-verl-tb-finished-2400-entropy-drains-from-1200-best-at-16-falls-0.95-to-0.80-mean-at-16-flat",
        Story(
            Arc(0.20).ease(1200, 0.52).line(2400, 0.535),
            [
                Bench(
                    Arc(0.26).ease(1200, 0.50).line(2400, 0.51),
                    500,
                    16,
                    "val-core/math_val/acc/mean@16",
                    "val-core/math_val/acc/best@16/mean",
                    spread=s3_spread(),
                ),
                Bench(
                    Arc(0.10).ease(1200, 0.21).line(2400, 0.215),
                    30,
                    32,
                    "val-core/aime24/acc/mean@32",
                    "val-core/aime24/acc/best@32/mean",
                    spread=s3_spread(),
                ),
            ],
            every(200, 2400),
            "val-core/math_val/acc/best@16/mean",
            P=256,
            G=16,
            spread=Arc(1.4).hold(1200).line(2400, 3.6),
            length=Arc(3000).line(2400, 2600),
            cap=8192,
            side={
                "actor/entropy": log(Arc(0.42).line(1200, 0.36).ease(2400, 0.05), 0.04),
                "actor/kl_loss": log(Arc(0.0003).line(1200, 0.01).line(2400, 0.045), 0.05),
                "actor/pg_clipfrac": log(Arc(0.004).line(2400, 0.0015), 0.08),
                "actor/grad_norm": grad(Arc(0.2).line(2400, 0.09)),
                "actor/lr": exact(warm_const(1e-6, 10)),
            },
            sps=330,
            age_min=600,
        ),
        writer(w_verl_tb)("pass-at-k", "qwen3-4b-grpo-2400", 200),
        8123,
        (2400, 2400),
        "rb",
        "rollback verl tensorboard finished entropy-collapse pass-at-k diversity",
        "verl GRPO finished 2400 of 2400 steps (last write 10 hours ago; last save global_step_2400). Validation "
        "every 200 steps on a 500-problem set with 16 samples each, plus AIME24 with 32. Until ~1200 everything "
        "rises: mean@16 0.26 -> 0.50, best@16 (pass@16) 0.81 -> ~0.95. After 1200 entropy drains 0.36 -> 0.05 "
        "and the policy turns all-or-nothing per problem: the train score and mean@16 stay flat at ~0.50-0.53, "
        "but pass@16 falls to ~0.80 (sd ~0.01-0.02, far beyond noise) and AIME24 best@32 ~0.85 -> ~0.56. The "
        "policy has lost the diversity that solved the harder problems and gained nothing in pass@1. The ~1200 "
        "weights are as good on pass@1 and much better on pass@k: roll back to ~1200.",
        onset=1200,
    ),
    Tale(
        "stop-wandb-csv-adaptive-sampler-pool-exhausted-52k-to-1.9k-prompts-reward-held-0.5-evals-flat-since-1300",
        Story(
            Arc(0.47).line(2100, 0.52),
            [
                Bench(Arc(0.52).ease(1300, 0.66).hold(2100), 500, 1, "eval/math500_acc"),
                Bench(Arc(0.10).ease(1300, 0.18).hold(2100), 30, 16, "eval/aime24_avg16"),
            ],
            every(100, 2100),
            "eval/math500_acc",
            P=256,
            G=8,
            spread=0.8,
            length=Arc(2200).line(2100, 2900),
            cap=8192,
            side={
                "sampler/active_prompts": exact(Arc(52000).ease(2100, 1900)),
                "train/entropy": log(Arc(0.50).line(2100, 0.31), 0.03),
                "train/kl": log(Arc(0.001).line(2100, 0.05), 0.05),
            },
            sps=260,
            age_min=20,
        ),
        writer(w_wandb_csv)(
            "qwen3-4b-adaptive-v2", {"~reward": "train/reward_mean", "~zero_std": "train/frac_zero_adv"}, 3
        ),
        3024,
        (2100, 2100),
        "stop",
        "stop wandb-csv adaptive-curriculum pool-exhausted plateau",
        "W&B panel CSV exports of a custom GRPO loop with a pass-rate-targeting sampler: the train reward is "
        "held near 0.5 by design, so it says nothing about progress. The sampler's active pool has shrunk "
        "52k -> 1.9k prompts (it keeps retiring what the model solves), entropy and KL keep drifting. "
        "MATH-500 (sd ~0.021) rose 0.52 -> 0.66 by ~1300 and has been flat for 800 steps; AIME24 avg@16 flat "
        "too. No decline, nothing more to gain from this pool: stop and keep the current weights.",
        onset=1300,
    ),
    Tale(
        "conv-verl-jsonl-one-step-async-at-1880-of-2000-val-flat-since-1400-cosine-lr-at-floor",
        Story(
            Arc(0.30).ease(1400, 0.61).line(1880, 0.615),
            [
                Bench(Arc(0.46).ease(1400, 0.67).hold(2000), 500, 4, "val-core/math500/acc/mean@4"),
                Bench(Arc(0.10).ease(1400, 0.23).hold(2000), 30, 16, "val-core/aime24/acc/mean@16"),
            ],
            every(40, 1880),
            "val-core/math500/acc/mean@4",
            P=256,
            G=8,
            length=Arc(2300).line(1880, 3000),
            cap=8192,
            side={
                "actor/entropy": log(Arc(0.50).line(1400, 0.40).line(1880, 0.38), 0.03),
                "actor/kl_loss": log(Arc(0.0003).line(1880, 0.012), 0.05),
                "actor/pg_clipfrac": log(0.03, 0.08),
                "actor/ppo_kl": add(0.0002, 0.0001),
                "actor/grad_norm": grad(0.2),
                "actor/lr": exact(warm_cos(1e-6, 20, 2000, 1e-7)),
                "training/rollout_probs_diff_mean": log(0.0029, 0.05),
                "training/rollout_actor_probs_pearson_corr": add(0.9965, 0.0004),
            },
            sps=400,
            age_min=5,
        ),
        writer(w_verl_jsonl)("async-grpo", "qwen3-8b-one-step-off-v2", 100, True, "  async: one_step_off_policy\n"),
        2325,
        (1880, 2000),
        "conv",
        "converged verl jsonl async cosine-tail torn-line live late",
        "verl one-step-off-policy GRPO, file logger (last line half-written: live, 5 minutes ago), 1880 of 2000 "
        "planned steps with a cosine LR now near its 1e-7 floor. MATH-500 mean@4 (sd ~0.015) has been flat at "
        "~0.67 since ~1400, AIME24 flat, train score +0.005 in 480 steps; the async mismatch signals are steady. "
        "Converged a little before the planned end: stopping now or letting the last 120 steps run are both fine.",
        onset=1400,
    ),
    Tale(
        "rb-trl-hf-tb-two-event-files-resume-at-2000-scheduler-lost-lr-rewarms-to-2e-6-kl-jumps-eval-slides-3sd",
        s6_story(True),
        writer(w_trl_tb)(200, 4, 10, 100, TRL, (2000, 2100)),
        3026,
        (2600, 4000),
        "rb",
        "rollback trl tensorboard resume duplicated-steps lr-rewarm",
        "TRL GRPO to TensorBoard. Job 1 crashed at 2100; job 2 resumed from checkpoint-2000 without "
        "scheduler.pt, so the LR re-warmed to the 2e-6 peak instead of continuing its cosine at ~1e-6. The "
        "runs/ folder holds two event files that both cover steps 2001-2100: the first job's copy (healthy, "
        "eval ~0.65 at 2100, those weights were never saved) and the second job's. After the resume KL jumps "
        "0.03 -> 0.085 -> 0.11, entropy climbs back to 0.50, and held-out accuracy (500 prompts, sd ~0.021) "
        "slides from 0.66 (plateau ~1400-2000) to ~0.60 at 2600 (~3 sd). checkpoint-2000 is still on disk: "
        "roll back to 2000.",
        onset=2000,
    ),
    Tale(
        "stop-mlflow-db-code-rl-sandbox-timeouts-from-700-train-reward-0.55-to-0.32-heldout-flat-since-450",
        Story(
            times(Arc(0.30).ease(450, 0.55).hold(3000), Arc(0.01).hold(700).line(1000, 0.42).hold(3000)),
            [Bench(Arc(0.24).ease(450, 0.47).hold(3000), 400, 1, "eval/heldout_pass1")],
            every(50, 1300),
            "eval/heldout_pass1",
            P=128,
            G=8,
            length=Arc(900).line(1300, 1200),
            cap=4096,
            side={
                "train/sandbox_timeout_rate": log(Arc(0.01).hold(700).line(1000, 0.42), 0.05),
                "train/exec_p95_s": log(Arc(4.1).hold(700).line(1000, 29.5), 0.06),
                "train/entropy": log(Arc(0.50).line(1300, 0.43), 0.03),
                "train/kl": log(Arc(0.001).line(1300, 0.02), 0.05),
                "train/grad_norm": grad(0.15),
                "train/lr": exact(warm_const(1e-6, 20)),
            },
            sps=180,
            age_min=8,
        ),
        writer(w_mlflow_db)(
            {"~reward": "train/reward_mean", "~zero_std": "train/zero_adv_frac", "~len_mean": "train/resp_len_mean"},
            "code-grpo-qwen2.5-coder-7b",
            {"total_steps": 3000, "group_size": 8, "eval_every": 50, "eval_executor": "local"},
        ),
        2327,
        (1300, 3000),
        "stop",
        "stop mlflow-db code-rl reward-infrastructure plateau live middle",
        "Custom code-RL GRPO loop logging to MLflow (sqlite), 1300 of 3000 steps, live. Held-out pass@1 (400 "
        "problems, local executor, sd ~0.025) rose 0.24 -> 0.47 by ~450 and has been flat since. From 700 the "
        "remote sandbox farm degrades: p95 execution time 4 s -> 30 s, timeout rate 1% -> 42%, and every "
        "timeout scores 0, so the train reward falls 0.55 -> ~0.32. That fall is the graders, not the model: "
        "held-out stays at 0.47 through 1300. No decline to undo and nothing gained for 850 steps: stop (fix "
        "the sandbox before spending more).",
        onset=450,
    ),
    Tale(
        "rb-trackio-trl-eval-every-400-best-1200-1600-then-lower-lengths-creep-truncation-to-12pct-train-rising",
        Story(
            Arc(0.30).ease(1400, 0.56).line(2450, 0.615),
            [
                Bench(
                    Arc(0.40).ease(1400, 0.68).hold(1800).line(2450, 0.61),
                    500,
                    1,
                    "eval_rewards/accuracy_reward/mean",
                    also=("eval_reward",),
                )
            ],
            every(400, 2450, 400),
            "eval_rewards/accuracy_reward/mean",
            P=64,
            G=16,
            length=Arc(3000).line(1400, 3900).line(2450, 5300),
            cap=8192,
            side={
                "entropy": log(Arc(0.45).line(2450, 0.52), 0.03),
                "grad_norm": grad(0.12),
                "learning_rate": exact(warm_cos(1e-6, 50, 4000)),
                "clip_ratio/region_mean": exact(0.0),
            },
            log_every=10,
            sps=330,
            age_min=4,
        ),
        writer(w_trackio)(
            "grpo-long",
            "qwen3-8b-grpo-8k",
            TRL,
            True,
            10,
            {"max_steps": 4000, "logging_steps": 10, "eval_steps": 400, "max_completion_length": 8192},
        ),
        2928,
        (2450, 4000),
        "rb",
        "rollback trackio trl sparse-eval length-creep eval-decline train-rising live middle",
        "TRL GRPO logged to Trackio, 2450 of 4000 steps, live; the held-out eval runs only every 400 steps. "
        "Accuracy (500 prompts, sd ~0.021) rose to 0.67-0.68 at 1200 and 1600, then 2000 and 2400 come in lower "
        "(~0.66, ~0.62: the level has been falling since ~1800). Meanwhile completions keep lengthening "
        "3900 -> ~5000 tokens and the share cut at the 8192 cap rises from ~5% to ~13%, while the train reward "
        "still inches up. The 1200-1600 weights are better than the current ones: roll back to ~1600.",
        onset=1800,
    ),
    Tale(
        "rb-mlflow-files-stage2-relaunched-into-same-run-steps-restart-at-1-hot-lr-math500-falls-below-stage1-end",
        Story(
            Arc(0.30).ease(1500, 0.60).jump(1500, 0.44).line(2200, 0.47),
            [
                Bench(Arc(0.45).ease(1500, 0.70).line(2200, 0.62), 500, 1, "eval/math500_acc"),
                Bench(Arc(0.10).ease(1500, 0.24).line(2200, 0.19), 30, 16, "eval/aime24_avg16"),
            ],
            every(100, 2200),
            "eval/math500_acc",
            P=128,
            G=8,
            length=Arc(1600).line(1500, 2400).jump(1500, 2500).line(2200, 3100),
            cap=8192,
            side={
                "train/kl": log(Arc(0.001).line(1500, 0.02).jump(1500, 0.0005).line(2200, 0.06), 0.05),
                "train/entropy": log(Arc(0.50).line(1500, 0.38).jump(1500, 0.40).line(2200, 0.55), 0.03),
                "train/grad_norm": grad(Arc(0.15).jump(1500, 0.3)),
                "train/lr": exact(
                    lambda s: np.where(s <= 1500, warm_cos(1e-6, 30, 1500, 1e-7)(s), warm_const(3e-6, 30)(s - 1500))
                ),
            },
            sps=260,
            age_min=6,
        ),
        writer(w_mlflow_stages)(
            {"~reward": "train/reward", "~len_mean": "train/resp_len"},
            1500,
            "math-rl-qwen3-8b",
            {"stage1.max_steps": 1500, "stage2.max_steps": 1000, "stage2.lr": "3e-6", "stage2.data": "mix_v2_hard"},
        ),
        2329,
        (2200, 2500),
        "rb",
        "rollback mlflow-files multi-stage renumbered-steps duplicate-steps lr-too-high live",
        "Hand-written two-stage math RL logged to one MLflow run. Stage 1 (1500 steps, cosine LR) ended with "
        "MATH-500 at ~0.70. Stage 2 was launched 90 minutes later from the stage-1 final weights into the same "
        "run, counting steps from 1 again (so every metric file holds two values for steps 1-700, told apart by "
        "timestamp), with a new harder mix, a fresh reference and LR 3e-6. Stage-2 reward drops with the new "
        "pool (expected), but KL climbs fast, entropy rises, and MATH-500 (sd ~0.021) falls below the stage-1 "
        "end eval after eval to ~0.62 at stage-2 step 700, AIME24 with it. The stage-1 final model is better: "
        "roll back to stage-1 step ~1500 (window in stage-1 step units).",
        onset=1500,
    ),
]

SPECS = {t.name: t for t in TALES}
CASES = [t.case() for t in TALES]


def write_run(case: Case, folder: Path) -> None:
    tale = SPECS[case.name]
    run = simulate(tale.story, case.seed, case.reached, case.planned or case.reached)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    set_mtimes(folder, run.get("t_files", run["t_end"]))
    for path, t in run.get("mtimes", {}).items():
        touch(path, min(t, run["t_end"]))


def check(cases: list[Case]) -> None:
    for c in cases:
        st = SPECS[c.name].story
        steps = st.headline_steps(c.reached)
        best = max(steps, key=st.headline_level)
        last = steps[-1]
        sd = st.headline_sd(best)
        lb, ll = st.headline_level(best), st.headline_level(last)
        print(f"{c.name}\n    {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')}")  # fmt: skip
        print(f"    headline {st.headline}: best {lb:.3f}@{best} last {ll:.3f}@{last} sd {sd:.4f} "
              f"({(lb - ll) / sd:.1f} sd below best)")  # fmt: skip
        run = simulate(st, c.seed, c.reached, c.planned or c.reached)
        if st.headline == TRAIN:
            pts = [(s, float(run["train"]["~reward"][s - 1])) for s in steps]
        else:
            pts = [(s, e[st.headline]) for s, e in run["evals"]]
        stride = max(1, len(pts) // 12)
        print(
            "    drawn " + " ".join(f"{s}:{v:.3f}" for s, v in pts[::stride]) + f" | last {pts[-1][0]}:{pts[-1][1]:.3f}"
        )
        lv = " ".join(f"{s}:{st.headline_level(s):.3f}" for s in steps[:: max(1, len(steps) // 12)])
        print(f"    level {lv}")


HEADER = """# Holdout set 23: blind-labelled large-scale reasoning-RL runs written by make_holdout23.py, independent of the
# assessor, its judges and the generators of the other holdout sets. Labels: what a careful practitioner should do
# now under DESIGN.md's decision contract, read from the noise-free arcs of each story. rollback_window is
# inclusive: from the first logged headline step whose level is within one sampling sd of the best level to the
# newest such step not after onset_step, in the run's own logged step units (the two-stage MLflow run counts in
# stage-1 steps). Run `.venv/bin/python evals/holdout23/make_holdout23.py` to write runs/ (gitignored); `--check`
# prints levels and windows.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout23.py", "holdout23.yaml", "h23-", "holdout23", HEADER, CASES, write_run, check)


if __name__ == "__main__":
    main()
