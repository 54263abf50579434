"""Holdout set 26: blind-labelled RL post-training runs with the messy logs real users bring.

Run from the worktree root:
    .venv/bin/python evals/holdout26/make_holdout26.py           # writes runs/ (gitignored) and holdout26.yaml
    .venv/bin/python evals/holdout26/make_holdout26.py --check   # also prints levels and rollback windows

The set aims at logs that are awkward to read and at decisions that hinge on reading them right: resumed runs
(replayed step ranges in one file, a second TensorBoard file or log file beside the first, a verl file logger
that was overwritten at the resume), live files with a torn last record, metrics that appear only after some step,
evals on their own cadence, headline rewards under unusual names (a custom reward function, a nested
`reward.task` field, several reward columns of which one is the task), recoverable and fatal NaN stretches,
warm-up / cosine-to-zero / re-warm schedules, very short (30-80 logs) and very long (22k steps) runs, finished
runs with and without an end marker, and failures that so far show only in a side signal, next to their
healthy look-alikes.

Each case is a story of noise-free levels (functions of the optimizer step) drawn through this set's own noise
model and written as one framework and version writes them. Noise model:
  * binary rewards: each step draws P prompts whose solve rates are logit-normal, sigmoid(theta + d) with
    d ~ N(0, spread) and theta chosen so the mean solve rate is the level; each prompt gets G Bernoulli
    rollouts (drawn as Binomial(G, q)); batch mean, batch std, mean group std and the share of prompts whose
    G rollouts all agree come from the same draws. TRL averages the batches since its last log;
  * reward-model scores: level + a prompt effect N(0, tau) + rollout noise N(0, rsd), batch mean logged;
  * continuous reward terms (length penalties): level + N(0, sd) per rollout, batch mean logged;
  * held-out evals: Binomial(N, p) / N (times the reward scale when the eval is logged in reward units);
  * grad norm: level * exp(0.3 z), times 1 + Pareto(1.3) on a few steps (heavy right tail);
  * other side signals: multiplicative log-normal noise made of an AR(1) part (slow wander, phi 0.9) and a
    white part; truncation rates are Binomial(P*G, level) / (P*G); clip fractions of exactly 0 stay 0.

Labels follow DESIGN.md ("What the three decisions mean") and come from the stories, never from a tool. The
rollback window runs from the first logged headline step whose noise-free level is within one sampling sd of
the best level (one eval for an eval headline, one logged batch mean for a train headline) to the newest such
step not after onset_step; `--check` prints them.
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
)

HERE = Path(__file__).resolve().parent
NOW = time.time()
NAN = float("nan")
INF = float("inf")


# ------------------------------------------------------------------------------------------------- level shapes

def pw(*pts: tuple[float, float]) -> Callable:
    """Piecewise-linear level through (step, value) knots, flat outside."""
    xs = np.array([p[0] for p in pts], dtype=float)
    ys = np.array([p[1] for p in pts], dtype=float)
    return lambda s: np.interp(s, xs, ys)


def sat(y0: float, y1: float, tau: float, s0: float = 0.0) -> Callable:
    """Rises (or falls) from y0 toward y1 with time constant tau, starting at s0."""
    return lambda s: y1 - (y1 - y0) * np.exp(-np.maximum(np.asarray(s, dtype=float) - s0, 0.0) / tau)


def const(v: float) -> Callable:
    return lambda s: np.full(np.shape(s), float(v)) if np.ndim(s) else float(v)


def cosine_lr(peak: float, warm: int, total: int, floor: float = 0.0) -> Callable:
    def f(s):
        s = np.asarray(s, dtype=float)
        w = peak * np.minimum(s / max(warm, 1), 1.0)
        prog = np.clip((s - warm) / max(total - warm, 1), 0.0, 1.0)
        c = floor + (peak - floor) * 0.5 * (1 + np.cos(np.pi * prog))
        return np.where(s < warm, w, c)
    return f


def plus(*fs: Callable) -> Callable:
    return lambda s: sum(np.asarray(f(s), dtype=float) for f in fs)


def after(s0: float, f_before: Callable, f_after: Callable) -> Callable:
    return lambda s: np.where(np.asarray(s) <= s0, f_before(s), f_after(s))


def quad_from(s0: float, base: float, top: float, s1: float) -> Callable:
    """Flat at base until s0, then grows quadratically to top at s1 (and on)."""
    return lambda s: base + (top - base) * np.clip((np.asarray(s, dtype=float) - s0) / (s1 - s0), 0, None) ** 2


# ------------------------------------------------------------------------------------------------- noise model

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(48)
_GH_W = _GH_W / _GH_W.sum()
_THETA = np.linspace(-14, 14, 2801)


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def _moments(spread: float) -> tuple[np.ndarray, np.ndarray]:
    q = _expit(_THETA[:, None] + spread * _GH_X[None, :])
    m = q @ _GH_W
    return m, (q * q) @ _GH_W - m * m


_MOM: dict[float, tuple[np.ndarray, np.ndarray]] = {}


def theta_for(p, spread: float):
    if spread not in _MOM:
        _MOM[spread] = _moments(spread)
    m, _ = _MOM[spread]
    return np.interp(np.clip(p, 1e-6, 1 - 1e-6), m, _THETA)


def binary_sd(p: float, spread: float, P: int, G: int, n: int) -> float:
    """sd of one logged batch mean (mean of n step batches of P prompts x G rollouts)."""
    if spread not in _MOM:
        _MOM[spread] = _moments(spread)
    m, v = _MOM[spread]
    var_q = float(np.interp(p, m, v))
    within = p * (1 - p) - var_q
    return math.sqrt(max(var_q + within / G, 1e-12) / P / n)


# signal -> (kind, sd). kinds: mult (log-normal, AR+white), add (additive AR+white), binom, exact, grad
NOISE: dict[str, tuple[str, float]] = {
    "kl": ("mult", 0.08), "entropy": ("mult", 0.03), "len": ("mult", 0.04), "trunc": ("binom", 0),
    "clip": ("mult", 0.15), "clip_lo": ("mult", 0.2), "clip_hi": ("mult", 0.15), "ppo_kl": ("add", 3e-4),
    "vllm_kl": ("mult", 0.12), "grad": ("grad", 0.3), "lr": ("exact", 0), "loss": ("add", 0.012),
    "critic_loss": ("mult", 0.12), "values": ("add", 0.05), "margins": ("add", 0.12), "chosen": ("add", 0.08),
    "rejected": ("add", 0.12), "logp_c": ("add", 3.0), "logp_r": ("add", 4.0), "eval_loss": ("add", 0.004),
    "kl_coef": ("exact", 0), "ratio": ("add", 0.01),
}


@dataclass
class Story:
    levels: dict[str, Callable]  # 'r:<fn>' reward terms, 'e:<name>' evals, side signals (see NOISE)
    rewards: dict[str, tuple[str, float]] = field(default_factory=lambda: {"task": ("binary", 1.0)})
    # eval name -> (N problems, every n steps or explicit steps, scale of the logged value)
    evals: dict[str, tuple[int, list[int] | int, float]] = field(default_factory=dict)
    eval_at0: bool = False
    headline: str = "r:task"  # 'r:<fn>', 'reward' (the weighted total) or 'e:<name>'
    P: int = 32
    G: int = 8
    spread: float = 1.5
    tau: float = 0.6  # prompt effect sd of a score reward
    rsd: float = 1.0  # rollout sd of a score reward, or of a continuous term
    log_every: int = 1
    nan: list[tuple[int, int, dict]] = field(default_factory=list)  # (lo, hi, {signal: value}) on logged rows
    resume: tuple[int, int] | None = None  # (crash_step, resumed_from_step)
    ghost: dict[str, Callable] = field(default_factory=dict)  # levels of the replaced first-attempt stretch
    spike_p: float = 1 / 40
    sps: float = 60.0  # seconds per optimizer step
    age_min: float = 3.0  # minutes since the newest write
    gap_min: float = 40.0  # minutes between the crash and the resumed process's first step
    cap: int = 2048  # max completion length

    def eval_steps(self, name: str, reached: int) -> list[int]:
        _, every, _ = self.evals[name]
        if isinstance(every, list):
            return [s for s in every if s <= reached]
        return list(range(0 if self.eval_at0 else every, reached + 1, every))

    # ---- the noise-free headline
    def headline_level(self, s):
        if self.headline == "reward":
            return sum(w * self.levels["r:" + k](s) for k, (_, w) in self.rewards.items())
        lv = self.levels[self.headline](s)
        if self.headline.startswith("e:"):
            lv = lv * self.evals[self.headline[2:]][2]
        return lv

    def headline_steps(self, reached: int) -> list[int]:
        if self.headline.startswith("e:"):
            return self.eval_steps(self.headline[2:], reached)
        return list(range(self.log_every, reached + 1, self.log_every))

    def headline_sd(self, s: int) -> float:
        if self.headline.startswith("e:"):
            n, _, scale = self.evals[self.headline[2:]]
            p = float(self.levels[self.headline](s))
            return scale * math.sqrt(max(p * (1 - p), 1e-9) / n)
        names = list(self.rewards) if self.headline == "reward" else [self.headline[2:]]
        var = 0.0
        for k in names:
            kind, w = self.rewards[k]
            lvl = float(self.levels["r:" + k](s))
            if kind == "binary":
                var += (w * binary_sd(lvl, self.spread, self.P, self.G, self.log_every)) ** 2
            elif kind == "score":
                var += w * w * (self.tau ** 2 + self.rsd ** 2 / self.G) / self.P / self.log_every
            else:
                var += w * w * self.rsd ** 2 / (self.P * self.G) / self.log_every
        return math.sqrt(var)


def _ar_noise(rng: np.random.Generator, n: int) -> np.ndarray:
    e = rng.normal(size=n)
    z = np.empty(n)
    acc = rng.normal()
    for i in range(n):
        acc = 0.9 * acc + 0.4359 * e[i]
        z[i] = acc
    return 0.6 * z + 0.8 * rng.normal(size=n)


def draw_rows(st: Story, lv: dict[str, Callable], rng: np.random.Generator, lo: int, hi: int) -> list[tuple[int, dict]]:
    """Logged train rows for optimizer steps lo..hi (logged where step % log_every == 0)."""
    steps = np.arange(lo, hi + 1)
    n = len(steps)
    per: dict[str, np.ndarray] = {}
    total = np.zeros(n)
    for k, (kind, w) in st.rewards.items():
        p = np.asarray(lv["r:" + k](steps), dtype=float)
        if kind == "binary":
            th = theta_for(p, st.spread)
            q = _expit(th[:, None] + rng.normal(0, st.spread, (n, st.P)))
            c = rng.binomial(st.G, q)
            m = c.mean(1) / st.G
            per["r:" + k] = m
            per["rstd:" + k] = np.sqrt(np.maximum(m * (1 - m), 0) * st.P * st.G / (st.P * st.G - 1))
            per["gstd:" + k] = (np.sqrt(c / st.G * (1 - c / st.G))).mean(1)
            per["zero:" + k] = ((c == 0) | (c == st.G)).mean(1)
            per["all0:" + k] = (c == 0).mean(1)
            per["all1:" + k] = (c == st.G).mean(1)
        elif kind == "score":
            m = p + rng.normal(0, st.tau / math.sqrt(st.P), n) + rng.normal(0, st.rsd / math.sqrt(st.P * st.G), n)
            per["r:" + k] = m
            per["rstd:" + k] = math.sqrt(st.tau ** 2 + st.rsd ** 2) * np.exp(0.05 * rng.normal(size=n))
            per["gstd:" + k] = st.rsd * np.exp(0.05 * rng.normal(size=n))
            per["zero:" + k] = np.zeros(n)
        else:  # continuous term ('penalty': a per-rollout penalty, so its batch mean is never above 0)
            m = p + rng.normal(0, st.rsd / math.sqrt(st.P * st.G), n)
            if kind == "penalty":
                m = np.minimum(m, 0.0)
            per["r:" + k] = m
            per["rstd:" + k] = st.rsd * np.exp(0.05 * rng.normal(size=n))
        total = total + w * per["r:" + k]
    per["reward"] = total
    first = next(iter(st.rewards))
    per["reward_std"] = per["rstd:" + first] * st.rewards[first][1] if len(st.rewards) == 1 else \
        np.sqrt(sum((st.rewards[k][1] * per["rstd:" + k]) ** 2 for k in st.rewards))
    if "zero:" + first in per:
        per["zero_std"] = per["zero:" + first]
        per["group_std"] = per.get("gstd:" + first, np.zeros(n))
    for k in ("all0:" + first, "all1:" + first):
        if k in per:
            per[k.split(":")[0]] = per[k]
    for sig, f in lv.items():
        if sig.startswith(("r:", "e:")):
            continue
        level = np.asarray(f(steps), dtype=float)
        kind, sd = NOISE.get(sig, ("mult", 0.05))
        if kind == "exact":
            val = level
        elif kind == "binom":
            val = rng.binomial(st.P * st.G, np.clip(level, 0, 1)) / (st.P * st.G)
        elif kind == "grad":
            val = level * np.exp(sd * rng.normal(size=n))
            spikes = rng.random(n) < st.spike_p
            val = np.where(spikes, val * (1 + 2 * rng.pareto(1.3, n)), val)
        elif kind == "add":
            val = level + sd * _ar_noise(rng, n)
        else:
            val = np.where(level == 0, 0.0, level * np.exp(sd * _ar_noise(rng, n)))
        if sig == "len":
            val = np.minimum(val, st.cap)
        per[sig] = val
    rows = []
    L = st.log_every
    for i, s in enumerate(steps):
        if s % L:
            continue
        j0 = max(0, i - L + 1)
        v = {}
        for k, arr in per.items():
            v[k] = float(arr[i]) if k in ("grad", "lr") else float(arr[j0:i + 1].mean())
        rows.append((int(s), v))
    for lo_, hi_, over in st.nan:
        for s, v in rows:
            if lo_ <= s <= hi_:
                v.update(over)
    return rows


def draw_evals(st: Story, lv: dict[str, Callable], rng: np.random.Generator, steps_for: Callable) -> list:
    by_step: dict[int, dict] = {}
    for name, (n, _, scale) in st.evals.items():
        for s in steps_for(name):
            p = float(np.clip(lv["e:" + name](s), 0, 1))
            by_step.setdefault(s, {})[name] = scale * rng.binomial(n, p) / n
    return sorted(by_step.items())


class Clock:
    """Wall times: the final attempt ends `age_min` ago; a first attempt (if any) crashed `gap_min` earlier."""

    def __init__(self, st: Story, reached: int):
        self.end = NOW - st.age_min * 60
        self.sps = st.sps
        self.reached = reached
        self.resume = st.resume
        if st.resume:
            _, res = st.resume
            self.restart = self.end - (reached - res) * st.sps
            self.crash_t = self.restart - st.gap_min * 60
        else:
            self.restart = self.crash_t = None

    def t(self, s: float, first: bool = False) -> float:
        if not self.resume or (not first and s > self.resume[1]):
            return self.end - (self.reached - s) * self.sps
        crash, _ = self.resume
        return self.crash_t - (crash - s) * self.sps


def make_run(st: Story, seed: int, reached: int, planned: int) -> dict:
    rng = np.random.default_rng(seed)
    lv = dict(st.levels)
    train = draw_rows(st, lv, rng, 1, reached)
    ev = draw_evals(st, lv, rng, lambda name: st.eval_steps(name, reached))
    ghost_train, ghost_eval = [], []
    if st.resume:
        crash, res = st.resume
        glv = {**lv, **st.ghost}
        ghost_train = draw_rows(st, glv, rng, res + 1, crash)
        ghost_eval = draw_evals(st, glv, rng, lambda name: [s for s in st.eval_steps(name, crash) if s > res])
    return dict(train=train, eval=ev, ghost_train=ghost_train, ghost_eval=ghost_eval, planned=planned,
                reached=reached, clock=Clock(st, reached), story=st, rng=np.random.default_rng(seed + 7))


def g6(x):
    if x is None:
        return None
    x = float(x)
    return x if not math.isfinite(x) else float(f"{x:.6g}")


def first_attempt_rows(run: dict) -> tuple[list, list]:
    """Rows the first attempt wrote: the kept ones up to the resume point, then its replaced stretch."""
    _, res = run["story"].resume
    tr = [r for r in run["train"] if r[0] <= res] + run["ghost_train"]
    ev = [r for r in run["eval"] if r[0] <= res] + run["ghost_eval"]
    return tr, ev


def second_attempt_rows(run: dict) -> tuple[list, list]:
    _, res = run["story"].resume
    return [r for r in run["train"] if r[0] > res], [r for r in run["eval"] if r[0] > res]


# ------------------------------------------------------------------------------------------- TRL / HF rows

def trl_row(v: dict, st: Story, fns: dict[str, str], num_tokens: float, s: int, spe: int) -> dict:
    """One TRL GRPO train log dict (v0.17+ keys); `fns` maps story reward terms to reward-function names."""
    row: dict = {"loss": g6(v.get("loss", 0.0)), "grad_norm": g6(v["grad"]), "learning_rate": g6(v["lr"]),
                 "num_tokens": float(round(num_tokens))}
    ln, tr = v.get("len", 400.0), v.get("trunc", 0.0)
    row.update({"completions/mean_length": g6(ln), "completions/min_length": g6(max(3.0, 0.22 * ln)),
                "completions/max_length": g6(min(st.cap, 2.7 * ln)), "completions/clipped_ratio": g6(tr),
                "completions/mean_terminated_length": g6(ln * (1 - 0.9 * tr)),
                "completions/min_terminated_length": g6(max(3.0, 0.22 * ln)),
                "completions/max_terminated_length": g6(min(st.cap - 1, 2.5 * ln))})
    for k, fn in fns.items():  # a function paying w for a pass logs w x the pass rate
        w = st.rewards[k][1]
        row[f"rewards/{fn}/mean"] = g6(w * v["r:" + k])
        row[f"rewards/{fn}/std"] = g6(w * v["rstd:" + k]) if v.get("rstd:" + k) is not None else None
    row.update(reward=g6(v["reward"]), reward_std=g6(v["reward_std"]))
    if "zero_std" in v:
        row["frac_reward_zero_std"] = g6(v["zero_std"])
    if "kl" in v and not math.isnan(v["kl"]):  # TRL logs kl only when beta != 0
        row["kl"] = g6(v["kl"])
    if "entropy" in v:
        row["entropy"] = g6(v["entropy"])
    c = v.get("clip", 0.0)
    lo_, hi_ = v.get("clip_lo", 0.45 * c), v.get("clip_hi", 0.55 * c)
    row.update({"clip_ratio/low_mean": g6(lo_), "clip_ratio/low_min": g6(0.0 if c == 0 else 0.3 * lo_),
                "clip_ratio/high_mean": g6(hi_), "clip_ratio/high_max": g6(0.0 if c == 0 else 2.2 * hi_),
                "clip_ratio/region_mean": g6(c)})
    for k, val in list(row.items()):  # TRL logs None for metrics whose values were all NaN
        if isinstance(val, float) and math.isnan(val) and k.startswith("rewards/"):
            row[k] = None
    row.update(epoch=round(s / spe, 4), step=s)
    return row


def trl_eval_row(ev: dict, fns: dict[str, str], s: int, spe: int, rng: np.random.Generator) -> dict:
    row: dict = {"eval_loss": g6(0.0004 * rng.normal())}
    total = 0.0
    for name, val in ev.items():
        fn = fns.get(name, name)
        row[f"eval_rewards/{fn}/mean"] = g6(val)
        total += val
    row["eval_reward"] = g6(total)
    row.update(eval_runtime=g6(210 + 20 * rng.random()), eval_samples_per_second=g6(2.3 + 0.2 * rng.random()),
               eval_steps_per_second=0.072, epoch=round(s / spe, 4), step=s)
    return row


def trl_history(run: dict, fns: dict[str, str], efns: dict[str, str], spe: int, train=None, ev=None) -> list[dict]:
    st = run["story"]
    train = run["train"] if train is None else train
    ev = run["eval"] if ev is None else ev
    rows, tok = [], 0.0
    for s, v in train:
        tok += st.log_every * st.P * st.G * (v.get("len", 400.0) + 180)
        rows.append(trl_row(v, st, fns, tok, s, spe))
    for s, e in ev:
        rows.append(trl_eval_row(e, efns, s, spe, run["rng"]))
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r))
    return rows


# ---------------------------------------------------------------------------------------------------- writers

def w_trl_ckpts(run: dict, folder: Path, save_every: int, keep: int, fns: dict, efns: dict, eval_every: int | None,
                spe: int | None = None, epochs: int = 1, top_level: bool = False, stop_at_end: bool = False,
                rows_fn: Callable | None = None) -> dict:
    """TRL output_dir: checkpoint-N/trainer_state.json (save_total_limit keeps `keep`), optional top-level state."""
    reached, planned, clock = run["reached"], run["planned"], run["clock"]
    spe = spe or planned
    rows = rows_fn(run) if rows_fn else trl_history(run, fns, efns, spe)
    mt: dict[Path, float] = {}
    kept: list[int] = []
    for n in range(save_every, reached + 1, save_every):
        hist = [r for r in rows if r["step"] <= n]
        stt = trainer_state(hist, n, planned, run["story"].log_every, save_every, eval_every, round(n / spe, 4),
                            epochs, training_stop=stop_at_end and n >= planned)
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", stt)
        (ck / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n')
        (ck / "training_args.bin").write_bytes(b"\x80\x04placeholder")
        for p in ck.iterdir():
            mt[p] = clock.t(n)
        mt[ck] = clock.t(n)
        kept.append(n)
        while len(kept) > keep:
            old = kept.pop(0)
            for p in (folder / f"checkpoint-{old}").iterdir():
                mt.pop(p, None)
                p.unlink()
            (folder / f"checkpoint-{old}").rmdir()
            mt.pop(folder / f"checkpoint-{old}", None)
    if top_level:
        final = dict(train_runtime=g6(reached * run["story"].sps), train_samples_per_second=0.41,
                     train_steps_per_second=g6(1 / run["story"].sps), total_flos=0.0, train_loss=0.0123,
                     epoch=round(reached / spe, 4), step=reached)
        stt = trainer_state([*rows, final], reached, planned, run["story"].log_every, save_every, eval_every,
                            round(reached / spe, 4), epochs, training_stop=True)
        dump_json(folder / "trainer_state.json", stt)
        mt[folder / "trainer_state.json"] = clock.end
    return mt


def tqdm_bar(n: int, total: int, secs: float, rate: float, desc: str = "") -> str:
    frac = n / total
    filled = int(frac * 10)
    part = " ▏▎▍▌▋▊▉"[int((frac * 10 - filled) * 8)] if filled < 10 else ""
    bar = ("█" * filled + part).ljust(10)
    left = (total - n) * rate

    def hms(x):
        x = int(x)
        return f"{x // 3600}:{x % 3600 // 60:02d}:{x % 60:02d}"
    return f"{desc}{int(frac * 100):3d}%|{bar}| {n}/{total} [{hms(secs)}<{hms(left)}, {rate:.2f}s/it]"


def w_trl_console(run: dict, folder: Path, fns: dict, efns: dict, name: str = "train.log",
                  header: list[str] | None = None, inline: dict[int, list[str]] | None = None) -> dict:
    """A captured stdout of a TRL script: tqdm bar fragments and str(logs) dicts (ProgressCallback; no step key)."""
    st, planned = run["story"], run["planned"]
    rows = trl_history(run, fns, efns, planned)
    lines = list(header or [])
    lines += ["***** Running training *****", f"  Num examples = {planned * st.P}", "  Num Epochs = 1",
              f"  Total optimization steps = {planned}", "  Number of trainable parameters = 40,370,176"]
    for r in rows:
        s = r["step"]
        r = {k: v for k, v in r.items() if k != "step"}
        if "eval_runtime" not in r:
            lines += (inline or {}).get(s, [])
        if "eval_runtime" in r:
            lines.append("\r" + tqdm_bar(s, planned, s * st.sps, st.sps) + "\r"
                         + f"100%|██████████| 38/38 [03:{int(r['eval_runtime']) % 60:02d}<00:00,"
                         + "  5.61s/it]")
        else:
            lines.append("\r" + tqdm_bar(s, planned, s * st.sps, st.sps))
        lines.append(str(r))
    lines.append("\r" + tqdm_bar(run["reached"], planned, run["reached"] * st.sps, st.sps))
    (folder / name).write_text("\n".join(lines) + "\n")
    return {}


def tb_dirname(t: float, host: str) -> str:
    return time.strftime("%b%d_%H-%M-%S", time.localtime(t)) + "_" + host


def hf_tb_events(rows: list[dict], clock: Clock, first: bool) -> list[tuple[float, int, dict]]:
    ev = []
    for r in rows:
        s = r["step"]
        vals = {}
        for k, v in r.items():
            if k == "step" or v is None:
                continue
            vals[("eval/" + k[5:]) if k.startswith("eval_") else ("train/" + k)] = v
        ev.append((clock.t(s, first) + (40 if "eval_runtime" in r else 0), s, vals))
    return sorted(ev, key=lambda e: (e[0], e[1]))


def w_hf_tb(run: dict, folder: Path, fns: dict, efns: dict, layout: str = "single", host: str = "gpu-a100-03",
            truncate: int = 0, logdir: str = "runs") -> dict:
    """transformers TensorBoardCallback (rewrite_logs: train/..., eval/...). layout: single | two_dirs | same_dir."""
    clock, planned = run["clock"], run["planned"]
    mt: dict[Path, float] = {}
    if layout == "single":
        rows = trl_history(run, fns, efns, planned)
        t0 = clock.t(0)
        d = folder / logdir / tb_dirname(t0, host) if logdir == "runs" else folder / logdir
        p = tb_file(d / f"events.out.tfevents.{int(t0)}.{host}.20817.0", hf_tb_events(rows, clock, False), truncate)
        mt[p] = clock.end
        return mt
    tr1, ev1 = first_attempt_rows(run)
    tr2, ev2 = second_attempt_rows(run)
    rows1 = trl_history(run, fns, efns, planned, tr1, ev1)
    rows2 = trl_history(run, fns, efns, planned, tr2, ev2)
    t1, t2 = clock.t(0, True), clock.restart
    if layout == "two_dirs":
        d1, d2 = folder / logdir / tb_dirname(t1, host), folder / logdir / tb_dirname(t2, host)
    else:
        d1 = d2 = folder / logdir
    p1 = tb_file(d1 / f"events.out.tfevents.{int(t1)}.{host}.20817.0", hf_tb_events(rows1, clock, True))
    p2 = tb_file(d2 / f"events.out.tfevents.{int(t2)}.{host}.31552.0", hf_tb_events(rows2, clock, False), truncate)
    mt[p1] = clock.crash_t
    mt[p2] = clock.end
    return mt


# ---- verl

VERL = {"reward": "critic/score/mean", "kl": "actor/kl_loss", "entropy": "actor/entropy", "len": "response_length/mean",
        "trunc": "response_length/clip_ratio", "clip": "actor/pg_clipfrac", "ppo_kl": "actor/ppo_kl",
        "grad": "actor/grad_norm", "lr": "actor/lr", "loss": "actor/pg_loss"}


def verl_row(v: dict, st: Story, s: int, kl_coef: float | None) -> dict:
    r = v["reward"]
    d: dict = {"training/global_step": s, "training/epoch": 0}
    for c, k in VERL.items():
        if c in v:
            d[k] = v[c]
    if kl_coef is not None and "kl" in v:
        d["actor/kl_coef"] = kl_coef
    if "clip" in v:
        d["actor/pg_clipfrac_lower"] = 0.0 if v["clip"] == 0 else 0.01 * v["clip"]
    hi = 1.0 if r > 0 else 0.0
    d.update({"critic/score/max": hi, "critic/score/min": 0.0, "critic/rewards/mean": r, "critic/rewards/max": hi,
              "critic/rewards/min": 0.0, "critic/advantages/mean": 0.0, "critic/advantages/max": 2.47,
              "critic/advantages/min": -2.47, "critic/returns/mean": 0.0, "critic/returns/max": 2.47,
              "critic/returns/min": -2.47})
    if math.isnan(v.get("grad", 0.0)):
        d.update({"critic/advantages/max": 0.0, "critic/advantages/min": 0.0, "critic/returns/max": 0.0,
                  "critic/returns/min": 0.0})
    ln = v.get("len", 500.0)
    d.update({"response_length/max": float(min(st.cap, int(2.8 * ln))),
              "response_length/min": float(max(1, int(0.1 * ln)))})
    d.update({"prompt_length/mean": 112.4, "prompt_length/max": 301.0, "prompt_length/min": 41.0,
              "prompt_length/clip_ratio": 0.0})
    gen = 30 + ln * 0.055
    d.update({"timing_s/gen": gen, "timing_s/reward": 0.9, "timing_s/old_log_prob": 6.1, "timing_s/ref": 5.8,
              "timing_s/adv": 0.08, "timing_s/update_actor": 22.4, "timing_s/step": gen + 36.2,
              "perf/total_num_tokens": int(st.P * st.G * (ln + 112)), "perf/time_per_step": gen + 36.2,
              "perf/throughput": st.P * st.G * (ln + 112) / (gen + 36.2) / 8})
    return d


def fmt_verl(x, np2: bool) -> str:
    if isinstance(x, int):
        return f"np.int64({x})" if np2 and x > 10 ** 6 else str(x)
    if np2:
        return f"np.float64({x!r})" if math.isfinite(x) else f"np.float64({'nan' if math.isnan(x) else 'inf'})"
    return repr(x) if math.isfinite(x) else ("nan" if math.isnan(x) else "inf")


def verl_lines(rows: dict[int, dict], np2: bool, pid: int, prefix: bool, ckpt_every: int, ckpt_dir: str) -> list[str]:
    out = []
    for s in sorted(rows):
        body = " - ".join(f"{k}:{fmt_verl(x, np2)}" for k, x in rows[s].items())
        out.append((f"(TaskRunner pid={pid}) " if prefix else "") + f"step:{s} - {body}")
        if ckpt_every and s and s % ckpt_every == 0 and "training/global_step" in rows[s]:
            out.append((f"(TaskRunner pid={pid}) " if prefix else "") +
                       f"local_global_step_folder: {ckpt_dir}/global_step_{s}")
    return out


def verl_rowmap(run: dict, train: list, ev: list, kl_coef: float | None, val_only: list[int] = ()) -> dict[int, dict]:
    st = run["story"]
    rows: dict[int, dict] = {}
    evd = dict(ev)
    for s in val_only:
        if s in evd:
            rows[s] = dict(evd[s])
    for s, v in train:
        rows[s] = verl_row(v, st, s, kl_coef)
        if s in evd:
            rows[s].update(evd[s])
            rows[s]["timing_s/testing"] = 95.0
    return rows


VERL_BANNER = [
    "{ts},803\tINFO worker.py:1832 -- Started a local Ray instance. View the dashboard at "
    "\x1b[1m\x1b[32m127.0.0.1:8265 \x1b[39m\x1b[22m",
    "(TaskRunner pid={pid}) TaskRunner hostname: node-07, PID: {pid}",
    "(TaskRunner pid={pid}) Using dataset class: RLHFDataset",
    "(TaskRunner pid={pid}) dataset len: 7473",
    "(TaskRunner pid={pid}) Size of train dataloader: {dl}, Size of val dataloader: 1",
    "(TaskRunner pid={pid}) Total training steps: {total}",
    "(WorkerDict pid={wpid}) Model config after override: Qwen2Config {{ ... }}",
    "(WorkerDict pid={wpid}) INFO {ts2} [gpu_model_runner.py:1843] Model loading took 5.79 GiB",
]


def w_verl_console(run: dict, folder: Path, np2: bool, total: int, val_keys: dict[str, str], kl_coef: float | None,
                   files: tuple[str, ...] = ("train.log",), prefix: bool = True, ckpt_every: int = 100,
                   ckpt_dir: str = "checkpoints/verl_grpo/run", tail: list[str] | None = None) -> dict:
    """verl LocalLogger lines; with a resume, the second process logs into a second file."""
    st, clock = run["story"], run["clock"]
    ren = lambda ev: [(s, {val_keys[k]: x for k, x in e.items()}) for s, e in ev]  # noqa: E731
    mt: dict[Path, float] = {}

    def banner(pid, t):
        return [ln.format(pid=pid, wpid=pid + 211, dl=total, total=total,
                          ts=time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t - 420)),
                          ts2=time.strftime("%m-%d %H:%M:%S", time.localtime(t - 240))) for ln in VERL_BANNER]
    if not st.resume:
        rows = verl_rowmap(run, run["train"], ren(run["eval"]), kl_coef, val_only=[0])
        lines = banner(20817, clock.t(0)) + verl_lines(rows, np2, 20817, prefix, ckpt_every, ckpt_dir)
        lines += list(tail or [])
        p = folder / files[0]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines) + "\n")
        mt[p] = clock.end
        return mt
    _, res = st.resume
    tr1, ev1 = first_attempt_rows(run)
    tr2, ev2 = second_attempt_rows(run)
    rows1 = verl_rowmap(run, tr1, ren(ev1), kl_coef, val_only=[0])
    lines1 = banner(20817, clock.t(0, True)) + verl_lines(rows1, np2, 20817, prefix, ckpt_every, ckpt_dir) + [
        f"(raylet) [{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(clock.crash_t))},271 E 20211 20211] (raylet) "
        "node_manager.cc:3069: 1 Workers (tasks / actors) "
        "killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node node-07",
        "Traceback (most recent call last):", '  File "verl/trainer/main_ppo.py", line 42, in main',
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory."]
    # validation of the resumed weights is logged again at the resume step (val_before_train)
    val_at_res = {k: x for s, e in ren(run["eval"]) if s == res for k, x in e.items()}
    rows2 = verl_rowmap(run, tr2, ren(ev2), kl_coef)
    if val_at_res:
        rows2 = {res: dict(val_at_res), **rows2}
    lines2 = [*banner(31552, clock.restart),
              f"(TaskRunner pid=31552) Load from checkpoint folder: {ckpt_dir}/global_step_{res}",
              f"(TaskRunner pid=31552) Setting global step to {res}",
              f"(TaskRunner pid=31552) Resuming from {ckpt_dir}/global_step_{res}"]
    lines2 += verl_lines(rows2, np2, 31552, prefix, ckpt_every, ckpt_dir) + list(tail or [])
    p1, p2 = folder / files[0], folder / files[1]
    p1.parent.mkdir(parents=True, exist_ok=True)
    p1.write_text("\n".join(lines1) + "\n")
    p2.write_text("\n".join(lines2) + "\n")
    mt[p1], mt[p2] = clock.crash_t, clock.end
    return mt


def w_verl_jsonl_overwritten(run: dict, folder: Path, val_keys: dict[str, str], path: str, torn: bool = True) -> dict:
    """verl FileLogger after a restart with the same experiment name: the file ('wb') holds only the resumed steps;
    the first row is the validation of the resumed weights at the resume step. NaN would be null (orjson)."""
    st = run["story"]
    _, res = st.resume
    ren = lambda ev: [(s, {val_keys[k]: x for k, x in e.items()}) for s, e in ev]  # noqa: E731
    rows = verl_rowmap(run, [r for r in run["train"] if r[0] > res], ren([e for e in run["eval"] if e[0] >= res]),
                       None, val_only=[res])
    out = []
    for s in sorted(rows):
        data = {k: (None if isinstance(x, float) and not math.isfinite(x) else x) for k, x in rows[s].items()}
        out.append(json.dumps({"step": s, "data": data}, separators=(",", ":")))
    text = "\n".join(out) + "\n"
    if torn:
        text = text[: len(text) - len(out[-1]) // 2 - 1]
    p = folder / path
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return {p: run["clock"].end}


# ---- OpenRLHF

OPENRLHF = {"loss": "policy_loss", "kl": "kl", "entropy": "entropy_loss", "len": "response_length",
            "trunc": "truncated", "clip": "ppo_clip_ratio", "ppo_kl": "ppo_kl", "vllm_kl": "vllm_kl",
            "grad": "actor_grad_norm", "lr": "actor_lr", "critic_loss": "critic_loss", "values": "values"}


def openrlhf_status(v: dict, st: Story, critic: bool = False) -> dict:
    d = {"policy_loss": v.get("loss", 0.0)}
    if critic:
        d.update(critic_loss=v["critic_loss"], values=v["values"], critic_lr=9e-6,
                 critic_grad_norm=v["critic_loss"] * 2.1)
    d.update(reward=v["reward"], group_reward_std=v.get("group_std", 0.0), **{"return": v["reward"] - 0.01})
    d["rollout/reward_mean"], d["rollout/reward_std"] = v["reward"], v["reward_std"]
    for c, k in OPENRLHF.items():
        if c in v and k not in d:
            d[k] = v[c]
    ln = v.get("len", 600.0)
    d.update(total_length=ln + 138.0, **{"rollout/response_length_mean": ln,
                                          "rollout/truncated_rate": v.get("trunc", 0.0),
                                          "rollout/num_samples": float(st.P * st.G)})
    gen = 40 + ln * 0.05
    d.update({"timing/generation": gen, "timing/make_experience": 14.2, "timing/ppo_train": 31.7,
              "timing/broadcast": 2.1, "timing/step_total": gen + 48.0})
    return {k: (g6(x) if isinstance(x, float) else x) for k, x in d.items()}


def openrlhf_time(t: float) -> str:
    return time.strftime("%m-%d %H:%M:%S", time.localtime(t))


def openrlhf_lines(run: dict, train: list, ev: list, first: bool, eval_prefix: str, pid: int, total: int,
                   critic: bool = False) -> list[str]:
    st, clock = run["story"], run["clock"]
    evd = dict(ev)
    out = []
    for s, v in train:
        t = clock.t(s, first)
        st_ = openrlhf_status(v, st, critic)
        if s % 25 == 0 or s == 1:
            out.append(f"(PPOTrainer pid={pid}) " + tqdm_bar(s, total, s * st.sps, st.sps, "Episode [1/1]: "))
        out.append(f"(PPOTrainer pid={pid}) INFO {openrlhf_time(t)} ppo_trainer.py:412] ✨ Global step {s}: {st_}")
        if s in evd:
            logs = {}
            for name, x in evd[s].items():
                logs[f"eval_{eval_prefix}_{name}"] = g6(x)
            logs[f"eval_{eval_prefix}_response_length_mean"] = g6(v.get("len", 600.0) * 1.05)
            logs["eval_response_length_mean"] = g6(v.get("len", 600.0) * 1.05)
            logs["eval_num_samples"] = 500.0
            out.append(f"(PPOTrainer pid={pid}) INFO {openrlhf_time(t + 200)} ppo_trainer.py:533] ✨ Evaluation "
                       f"completed in 0:03:{17 + s % 40:02d}, global_step {s}, eval_metrics: {logs}")
    return out


OPENRLHF_BANNER = [
    "[{ts},114] [INFO] [real_accelerator.py:254:get_accelerator] Setting ds_accelerator to cuda",
    "{ts},905\tINFO worker.py:1852 -- Started a local Ray instance.",
    "(PPOTrainer pid={pid}) INFO {ts2} ppo_trainer.py:118] num_update_steps_per_episodes: {total}, "
    "max_steps: {total}",
]


def openrlhf_banner(pid: int, total: int, t: float) -> list[str]:
    return [b.format(pid=pid, total=total, ts=time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t - 600)),
                     ts2=openrlhf_time(t - 240)) for b in OPENRLHF_BANNER]


def w_openrlhf_console(run: dict, folder: Path, eval_prefix: str, total: int, files: tuple[str, ...] = ("train.log",),
                       torn: bool = False, critic: bool = False) -> dict:
    st, clock = run["story"], run["clock"]
    mt: dict[Path, float] = {}
    if not st.resume:
        lines = openrlhf_banner(41203, total, clock.t(0))
        lines += openrlhf_lines(run, run["train"], run["eval"], False, eval_prefix, 41203, total, critic)
        text = "\n".join(lines) + "\n"
        if torn:
            text = text[: len(text) - len(lines[-1]) // 2 - 1]
        p = folder / files[0]
        p.write_text(text)
        mt[p] = clock.end
        return mt
    _, res = st.resume
    tr1, ev1 = first_attempt_rows(run)
    tr2, ev2 = second_attempt_rows(run)
    l1 = openrlhf_banner(41203, total, clock.t(0, True))
    l1 += openrlhf_lines(run, tr1, ev1, True, eval_prefix, 41203, total, critic)
    l1 += [f"(PPOTrainer pid=41203) [rank0]:[E{time.strftime('%m%d %H:%M:%S', time.localtime(clock.crash_t))}"
           ".640918 ProcessGroupNCCL.cpp:632] Watchdog caught "
           "collective operation timeout: WorkNCCL(SeqNum=918311, OpType=_ALLGATHER_BASE) ran for 1800004 ms",
           "Traceback (most recent call last):",
           "ray.exceptions.RayTaskError(DistBackendError): ray::PPOTrainer.fit() (pid=41203, ip=10.0.3.7)"]
    l2 = openrlhf_banner(52881, total, clock.restart)
    l2 += [f"(PPOTrainer pid=52881) INFO {openrlhf_time(clock.restart)} ppo_trainer.py:101] Loaded the checkpoint: "
           f"/mnt/ckpt/grpo-qwen3-8b/_actor/global_step{res}, client_states: {{'global_step': {res}, "
           f"'episode': 0, 'total_consumed_prompts': {res * st.P}}}"]
    l2 += openrlhf_lines(run, tr2, ev2, False, eval_prefix, 52881, total, critic)
    p1, p2 = folder / files[0], folder / files[1]
    p1.write_text("\n".join(l1) + "\n")
    text = "\n".join(l2) + "\n"
    if torn:
        text = text[: len(text) - len(l2[-1]) // 2 - 1]
    p2.write_text(text)
    mt[p1], mt[p2] = clock.crash_t, clock.end
    return mt


def w_openrlhf_tb(run: dict, folder: Path, eval_prefix: str, run_name: str, critic: bool = False) -> dict:
    st, clock = run["story"], run["clock"]
    evd = dict(run["eval"])
    events = []
    for s, v in run["train"]:
        d = openrlhf_status(v, st, critic)
        events.append((clock.t(s), s, {"train/" + k: x for k, x in d.items()}))
        if s in evd:
            events.append((clock.t(s) + 200, s, {f"eval/eval_{eval_prefix}_{k}": x for k, x in evd[s].items()}))
    p = tb_file(folder / "tensorboard" / run_name / f"events.out.tfevents.{int(clock.t(0))}.node-3.41203.0", events)
    return {p: clock.end}


# ---- NeMo-RL

def w_nemo_tb(run: dict, folder: Path, exp: str = "exp_003", config: str = "") -> dict:
    st, clock = run["story"], run["clock"]
    events = []
    for s, v in run["train"]:
        ln = v.get("len", 600.0)
        d = {"train/reward": v["reward"], "train/loss": v.get("loss", 0.0), "train/grad_norm": v["grad"],
             "train/lr": v["lr"], "train/wd": 0.01, "train/kl_penalty": v.get("kl", 0.0),
             "train/approx_entropy": v.get("entropy"), "train/probs_ratio": 1.0, "train/probs_ratio_clamped": 1.0,
             "train/token_mult_prob_error": 1.0 + 0.004 * abs(clock.t(s) % 7 - 3) / 3,
             "train/baseline_reward/pct_0": 100 * v.get("all0", 0.0),
             "train/baseline_reward/pct_1": 100 * v.get("all1", 0.0),
             "train/baseline_reward/pct_mixed": 100 * (1 - v.get("all0", 0.0) - v.get("all1", 0.0)),
             "train/mean_gen_tokens_per_sample": ln, "train/truncation_rate": v.get("trunc", 0.0),
             "train/natural_termination_rate": 1 - v.get("trunc", 0.0), "train/num_valid_samples": float(st.P * st.G),
             "timing/train/total_step_time": 40 + ln * 0.06, "timing/train/generation": 22 + ln * 0.05,
             "timing/train/policy_training": 11.8}
        events.append((clock.t(s), s, d))
    for s, e in run["eval"]:
        d = {"validation/accuracy": e["accuracy"], "validation/avg_length": 640.0}
        events.append((clock.t(s) + 90, s, d))
    events.sort(key=lambda e: (e[1], e[0]))
    d = folder / "logs" / exp / "tensorboard"
    p = tb_file(d / f"events.out.tfevents.{int(clock.t(0))}.dgx-11.2231.0", events)
    if config:
        (folder / "logs" / exp / "config.yaml").write_text(config)
    return {p: clock.end}


# ---- W&B export, Trackio, MLflow

def w_wandb_csv(run: dict, folder: Path, display: str, panels: dict[str, str], xkey: str = "Step") -> dict:
    """W&B 'Export panel data' CSVs: one file per panel, '<run> - <key>' plus __MIN/__MAX columns."""
    series: dict[str, list[tuple[int, float]]] = {}
    for s, v in run["train"]:
        for c, key in panels.items():
            if not c.startswith("e:") and c in v:
                series.setdefault(key, []).append((s, v[c]))
    for s, e in run["eval"]:
        for c, key in panels.items():
            if c.startswith("e:") and c[2:] in e:
                series.setdefault(key, []).append((s, e[c[2:]]))
    mt = {}
    for key, pts in series.items():
        col = f"{display} - {key}"
        p = folder / f"wandb_export_{key.replace('/', '_')}.csv"
        with p.open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow([xkey, col, col + "__MIN", col + "__MAX"])
            for s, x in pts:
                w.writerow([s, repr(g6(x)), repr(g6(x)), repr(g6(x))])
        mt[p] = run["clock"].end
    return mt


def w_trackio(run: dict, folder: Path, fns: dict, efns: dict, project: str, name: str) -> dict:
    st, clock = run["story"], run["clock"]
    db = sqlite3.connect(folder / f"{project}.db")
    db.executescript("""
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT NOT NULL);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, run_name TEXT NOT NULL,
        config TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, metrics TEXT NOT NULL);
    """)
    rid = "r-7f3c19a2"
    ts = lambda t: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))  # noqa: E731
    db.execute("INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?, ?, ?, ?)",
               (rid, name, json.dumps({"max_steps": run["planned"], "logging_steps": st.log_every,
                                       "max_grad_norm": 1.0, "beta": 0.0, "_Username": "mlteam"}), ts(clock.t(0))))
    rows = trl_history(run, fns, efns, run["planned"])
    for r in rows:
        s = r["step"]
        m = {}
        for k, x in r.items():
            if k == "step" or x is None:
                continue
            key = ("eval/" + k[5:]) if k.startswith("eval_") else ("train/" + k)
            m[key] = "NaN" if isinstance(x, float) and math.isnan(x) else x
        m["train/global_step"] = s
        db.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
                   (rid, ts(clock.t(s) + (40 if "eval_runtime" in r else 0)), name, s, json.dumps(m)))
    db.commit()
    db.close()
    return {folder / f"{project}.db": clock.end}


def w_mlflow_db(run: dict, folder: Path, fns: dict, efns: dict, run_name: str) -> dict:
    """MLflow SQL store filled by the HF callback (raw keys); a resumed process logged into the same run."""
    st, clock = run["story"], run["clock"]
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
    rid = "3f0d9c2b7a6e4c1d8b5a9e0f1c2d3b4a"
    t0 = int(clock.t(0, bool(st.resume)) * 1000)
    db.execute("INSERT INTO experiments VALUES (2, 'grpo-easy-mix', 'mlflow-artifacts:/2', 'active', ?, ?)", (t0, t0))
    db.execute("INSERT INTO runs VALUES (?, ?, 'LOCAL', 'train_grpo.py', '', 'mlteam', 'RUNNING', ?, NULL, '', "
               "'active', ?, 2, NULL)", (rid, run_name, t0, f"mlflow-artifacts:/2/{rid}/artifacts"))
    for k, v in {"max_steps": run["planned"], "logging_steps": st.log_every, "eval_steps": 100, "save_steps": 100,
                 "beta": 0.01, "num_generations": st.G, "learning_rate": 1e-06}.items():
        db.execute("INSERT INTO params VALUES (?, ?, ?)", (k, str(v), rid))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (run_name, rid))
    latest: dict[str, tuple] = {}

    def put(rows, first):
        for r in rows:
            s = r["step"]
            t = int((clock.t(s, first) + (40 if "eval_runtime" in r else 0)) * 1000)
            for k, x in r.items():
                if k == "step" or x is None:
                    continue
                nan = isinstance(x, float) and math.isnan(x)
                rec = (k, 0.0 if nan else float(x), t, rid, s, int(nan))
                db.execute("INSERT OR IGNORE INTO metrics VALUES (?, ?, ?, ?, ?, ?)", rec)
                latest[k] = rec
    if st.resume:
        tr1, ev1 = first_attempt_rows(run)
        tr2, ev2 = second_attempt_rows(run)
        put(trl_history(run, fns, efns, run["planned"], tr1, ev1), True)
        put(trl_history(run, fns, efns, run["planned"], tr2, ev2), False)
    else:
        put(trl_history(run, fns, efns, run["planned"]), False)
    for k, x, t, r, s, nan in latest.values():
        db.execute("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", (k, x, t, s, nan, r))
    db.commit()
    db.close()
    return {folder / "mlflow.db": clock.end}


# ---- hand-written loops

def w_nested_jsonl(run: dict, folder: Path, total: int) -> dict:
    """A custom loop's metrics.jsonl with nested groups: reward{total,task,format,length_penalty}, policy{...}."""
    st, clock = run["story"], run["clock"]
    evd = dict(run["eval"])
    lines = []
    for s, v in run["train"]:
        rec = {"step": s, "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(clock.t(s))),
               "reward": {"total": round(v["reward"], 5), "task": round(v["r:task"], 5),
                          "format": round(v["r:format"], 5), "length_penalty": round(v["r:length_penalty"], 5)},
               "policy": {"kl": round(v["kl"], 6), "entropy": round(v["entropy"], 5), "grad_norm": round(v["grad"], 5),
                          "lr": v["lr"]},
               "gen": {"mean_len": round(v["len"], 1), "trunc_frac": round(v["trunc"], 4)}}
        lines.append(json.dumps(rec))
        if s in evd:
            lines.append(json.dumps({"step": s, "eval": {k: round(x, 4) for k, x in evd[s].items()}, "n": 400}))
    (folder / "logs").mkdir(exist_ok=True)
    (folder / "logs" / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "config.json").write_text(json.dumps({"model": "Qwen2.5-7B-Instruct", "total_steps": total,
                                                    "prompts_per_step": st.P, "samples_per_prompt": st.G,
                                                    "reward": {"task": 1.0, "format": 0.1, "length_penalty": {
                                                        "coef": 0.25, "free_tokens": 512, "scale": 1024}},
                                                    "eval_every": 100}, indent=2) + "\n")
    return {folder / "logs" / "metrics.jsonl": clock.end, folder / "config.json": clock.t(0)}


def w_rewound_jsonl(run: dict, folder: Path, total: int) -> dict:
    """A hand loop appending to metrics.jsonl; the resume from ckpt_<res>.pt rewinds the step counter."""
    st, clock = run["story"], run["clock"]
    tr1, ev1 = first_attempt_rows(run)
    tr2, ev2 = second_attempt_rows(run)

    def rec(s, v, e, first):
        r = {"step": s, "reward_mean": round(v["reward"], 4), "reward_std": round(v["reward_std"], 4),
             "kl": round(v["kl"], 5), "entropy": round(v["entropy"], 4), "grad_norm": round(v["grad"], 4),
             "lr": v["lr"], "resp_len": round(v["len"], 1), "ts": round(clock.t(s, first), 1)}
        if e:
            r["val_acc"] = round(e["val"], 4)
        return json.dumps(r)
    e1, e2 = dict(ev1), dict(ev2)
    lines = [rec(s, v, e1.get(s), True) for s, v in tr1] + [rec(s, v, e2.get(s), False) for s, v in tr2]
    (folder / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "config.yaml").write_text(f"model: Llama-3.1-8B-Instruct\ntotal_steps: {total}\nlr: 1.0e-6\n"
                                        f"prompts_per_step: {st.P}\ngroup_size: {st.G}\nval_every: 50\n"
                                        f"save_every: 100\nresume_from: ckpt/ckpt_{st.resume[1]}.pt\n"
                                        f"lr_override_on_resume: 5.0e-7\n")
    return {folder / "metrics.jsonl": clock.end, folder / "config.yaml": clock.restart - 300}


# ------------------------------------------------------------------------------------------------- run state

def apply_mtimes(folder: Path, default: float, mt: dict) -> None:
    for p in sorted(folder.rglob("*"), key=lambda q: -len(q.parts)):
        t = mt.get(p)
        if t is None:
            t = max([mt.get(c, default) for c in p.iterdir()], default=default) if p.is_dir() else default
        os.utime(p, (t, t))


# ---------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable  # (run, folder) -> {path: mtime}
    seed: int
    steps: tuple[int, int]  # (reached, planned)
    kind: str  # ok | conv | stop | rb | sor
    tags: str
    why: str
    onset: int | None = None

    def labels(self) -> dict:
        if self.kind == "ok":
            return dict(HEALTHY)
        if self.kind == "conv":
            return {**converged(), "onset_step": self.onset}
        if self.kind == "stop":
            return stop(self.onset)
        lo, hi = window(self.story, self.steps[0], self.onset)
        return (rollback if self.kind == "rb" else stop_or_rollback)(lo, hi, self.onset)

    def case(self) -> Case:
        return Case(self.name, lambda *_: None, self.write, self.seed, self.steps, self.labels(), self.tags, self.why)


def window(st: Story, reached: int, onset: int) -> tuple[int, int]:
    steps = st.headline_steps(reached)
    lv = {s: float(st.headline_level(s)) for s in steps}
    best_s = max(steps, key=lambda s: lv[s])
    sd = st.headline_sd(best_s)
    good = [s for s in steps if lv[s] >= lv[best_s] - sd]
    return good[0], max(s for s in good if s <= onset)


def W(fn: Callable, **kw) -> Callable:
    return lambda run, folder: fn(run, folder, **kw)


ACC = {"task": "accuracy_reward"}
EACC = {"acc": "accuracy_reward"}

# ---- A: HF TensorBoard, two run folders after a resume
A = Story(
    levels={"r:task": sat(0.22, 0.56, 1100), "e:acc": sat(0.25, 0.52, 1200),
            "entropy": pw((0, 0.55), (3000, 0.45)), "len": sat(380, 520, 1200), "trunc": pw((0, 0.01), (1500, 0.02)),
            "clip": const(0.0), "grad": const(0.11), "lr": cosine_lr(1e-6, 30, 3000), "loss": const(0.0)},
    evals={"acc": (500, 150, 1.0)}, headline="e:acc", P=32, G=8, spread=1.6, log_every=10,
    resume=(960, 900), sps=45, age_min=3, gap_min=55)

# ---- B: verl console, KL climbs then holds
B = Story(
    levels={"r:task": sat(0.30, 0.60, 650), "e:math": sat(0.36, 0.58, 700),
            "kl": sat(0.0005, 0.115, 130), "entropy": sat(0.62, 0.46, 800), "len": sat(610, 800, 700),
            "trunc": const(0.01), "clip": const(0.003), "ppo_kl": const(0.0), "grad": const(0.22),
            "lr": pw((0, 1e-7), (10, 1e-6), (5000, 1e-6)), "loss": const(0.0)},
    evals={"math": (5000, 40, 1.0)}, eval_at0=True, headline="e:math", P=128, G=8, spread=1.4, sps=95, age_min=4)

# ---- C: OpenRLHF console, entropy falls slowly
C = Story(
    levels={"r:task": sat(0.35, 0.68, 1000), "e:pass1": sat(0.38, 0.58, 1100),
            "e:pass4": plus(sat(0.38, 0.58, 1100), const(0.17)),
            "entropy": plus(const(0.38), sat(0.54, 0.0, 650)), "kl": sat(0.0, 0.06, 700), "len": sat(520, 860, 900),
            "trunc": pw((0, 0.01), (1400, 0.03)), "clip": const(0.012), "ppo_kl": const(0.0001),
            "vllm_kl": const(0.0009), "grad": const(0.3), "lr": pw((0, 2.5e-8), (20, 5e-7), (9000, 5e-7)),
            "loss": const(0.0)},
    evals={"pass1": (500, 100, 1.0), "pass4": (500, 100, 1.0)}, headline="e:pass1", P=64, G=8, spread=1.5,
    sps=110, age_min=2)

# ---- D: nested custom JSONL, total flat, task rising
D_LEN = sat(500, 1400, 900)
D = Story(
    levels={"r:task": sat(0.40, 0.62, 1500), "r:format": pw((0, 0.92), (600, 0.97), (1300, 0.98)),
            "r:length_penalty": lambda s: -0.25 * np.maximum(D_LEN(s) - 512, 0) / 1024,
            "e:heldout_acc": sat(0.36, 0.52, 1400), "kl": sat(0.0, 0.045, 600), "entropy": sat(0.58, 0.47, 700),
            "len": D_LEN, "trunc": pw((0, 0.004), (1300, 0.02)), "grad": const(0.2), "lr": const(1e-6)},
    rewards={"task": ("binary", 1.0), "format": ("binary", 0.1), "length_penalty": ("penalty", 1.0)},
    evals={"heldout_acc": (400, 100, 1.0)}, headline="r:task", P=32, G=8, spread=1.5, rsd=0.08, sps=60, age_min=6)

# ---- E: TRL checkpoints, fp16 overflow rows, Will-Brown-style reward functions on a 0-2 scale
E = Story(
    levels={"r:corr": sat(0.30, 0.66, 900), "r:fmt": pw((0, 0.05), (300, 0.90), (1000, 0.95)),
            "e:corr": sat(0.28, 0.60, 1000), "kl": sat(0.0005, 0.035, 500), "len": sat(260, 340, 600),
            "trunc": const(0.02), "clip": const(0.0), "grad": const(0.6),
            "lr": cosine_lr(5e-6, 40, 2000, 0.0), "loss": const(0.002)},
    rewards={"corr": ("binary", 2.0), "fmt": ("binary", 0.5)},
    evals={"corr": (300, 100, 2.0)}, headline="e:corr", P=16, G=8, spread=1.6, log_every=10,
    nan=[(680, 680, {"grad": INF}), (700, 700, {"grad": NAN, "loss": NAN}), (710, 710, {"grad": INF}),
         (720, 720, {"grad": NAN})], sps=42, age_min=25, cap=512)
E_FNS = {"corr": "correctness_reward_func", "fmt": "strict_format_reward_func"}

# ---- F: verl JSONL overwritten at resume 400
F = Story(
    levels={"r:task": sat(0.28, 0.58, 850), "e:math500": sat(0.40, 0.66, 900), "e:aime24": sat(0.10, 0.17, 900),
            "entropy": sat(0.45, 0.38, 700), "len": sat(900, 1550, 800), "trunc": pw((0, 0.03), (1040, 0.05)),
            "clip": const(0.006), "ppo_kl": const(0.0), "grad": const(0.18), "lr": const(1e-6), "loss": const(0.0)},
    evals={"math500": (800, 40, 1.0), "aime24": (480, 40, 1.0)}, eval_at0=True, headline="e:math500",
    P=64, G=8, spread=1.7, resume=(437, 400), sps=150, age_min=1, cap=4096)

# ---- H: W&B CSV export, cosine with hard restarts at 2025
def _h_lr(s):
    s = np.asarray(s, dtype=float)
    cyc = ((s - 50) / 1975) % 1.0
    return np.where(s < 50, 1e-6 * s / 50, 1e-6 * 0.5 * (1 + np.cos(np.pi * cyc)))


H_R = pw((0, 0.25), (400, 0.40), (1000, 0.50), (1600, 0.535), (2025, 0.545), (2080, 0.505), (2200, 0.545),
         (2500, 0.575), (2900, 0.60))
H = Story(
    levels={"r:task": H_R, "e:acc": plus(H_R, const(-0.03)),
            "kl": pw((0, 0.0), (2025, 0.05), (2100, 0.08), (2900, 0.09)),
            "entropy": pw((0, 0.5), (2025, 0.42), (2100, 0.47), (2900, 0.40)), "len": sat(450, 600, 1200),
            "trunc": const(0.01), "clip": const(0.0), "grad": const(0.15), "lr": _h_lr, "loss": const(0.0)},
    evals={"acc": (500, 100, 1.0)}, headline="e:acc", P=32, G=8, spread=1.5, log_every=10, sps=50, age_min=20)

# ---- I: TRL console dicts, custom reward-function names, a verifier hang
_I_BASE = sat(0.12, 0.45, 900)


def _i_corr(s):
    s = np.asarray(s, dtype=float)
    return np.where(s <= 230, _I_BASE(s), np.where(s <= 250, _I_BASE(230), _I_BASE(s - 20)))


I_ = Story(
    levels={"r:sympy": _i_corr, "r:xml": pw((0, 0.30), (100, 0.95), (400, 0.97)),
            "entropy": pw((0, 0.70), (400, 0.60)), "len": sat(310, 420, 400), "trunc": const(0.015),
            "clip": const(0.0), "grad": const(0.35), "lr": cosine_lr(3e-6, 20, 1500), "loss": const(0.0)},
    rewards={"sympy": ("binary", 1.0), "xml": ("binary", 1.0)}, headline="r:sympy", P=8, G=8, spread=1.6,
    log_every=5, nan=[(235, 250, {"r:sympy": NAN, "rstd:sympy": NAN})], sps=35, age_min=3, cap=1024)
I_FNS = {"sympy": "check_answer_sympy", "xml": "xml_tags_reward"}


def _i_fix(run: dict) -> None:
    """During the hang TRL's weighted nansum leaves only the xml reward, and no group carries correctness."""
    for s, v in run["train"]:
        if 235 <= s <= 250:
            v["reward"] = v["r:xml"]
            v["reward_std"] = v["rstd:xml"]
            v["zero_std"] = v["zero:xml"]


# ---- J: OpenRLHF TB PPO, clip ratio steady
J = Story(
    levels={"r:task": sat(-0.6, 1.6, 700), "clip": const(0.14), "kl": sat(0.0, 0.06, 400),
            "critic_loss": plus(const(0.12), sat(0.5, 0.0, 150)), "values": sat(-0.5, 0.7, 700),
            "len": sat(300, 360, 500), "trunc": const(0.004), "ppo_kl": const(0.004), "vllm_kl": const(0.0008),
            "grad": const(0.4), "lr": pw((0, 2.5e-8), (20, 5e-7), (5000, 5e-7)), "loss": const(-0.01)},
    rewards={"task": ("score", 1.0)}, P=128, G=1, tau=0.9, rsd=1.2, sps=80, age_min=5, spike_p=1 / 30)

# ---- K: HF TB, torn tail, at 6% with the LR still warming
K = Story(
    levels={"r:task": pw((0, 0.06), (300, 0.085)), "entropy": const(0.8), "len": pw((0, 700), (300, 690)),
            "trunc": const(0.04), "clip": const(0.0), "grad": lambda s: 0.03 + 0.05 * np.asarray(s) / 500,
            "lr": lambda s: 2e-6 * np.asarray(s, dtype=float) / 500, "loss": const(0.0)},
    P=16, G=8, spread=1.8, log_every=10, sps=70, age_min=1)

# ---- L: rewound counter in a hand loop, first copy blew up
L_R = sat(0.18, 0.62, 900)
L = Story(
    levels={"r:task": L_R, "e:val": sat(0.20, 0.55, 1000), "kl": sat(0.0, 0.05, 500), "entropy": sat(0.62, 0.50, 600),
            "len": sat(350, 520, 700), "grad": const(0.25),
            "lr": lambda s: np.where(np.asarray(s) <= 800, 1e-6, 5e-7)},
    evals={"val": (300, 50, 1.0)}, headline="e:val", P=32, G=8, spread=1.5, resume=(880, 800),
    ghost={"r:task": after(835, L_R, pw((835, float(L_R(835))), (880, 0.10))),
           "e:val": pw((800, 0.39), (850, 0.30)), "entropy": pw((835, 0.52), (880, 2.8)),
           "kl": pw((835, 0.04), (880, 0.9)), "grad": pw((835, 0.25), (860, 3.0), (880, 12.0)),
           "len": pw((835, 480), (880, 1400)), "lr": const(1e-6)},
    sps=55, age_min=5, gap_min=180)

# ---- AC: Trackio, heavy-tailed grad norm
AC = Story(
    levels={"r:task": sat(0.30, 0.66, 1000), "e:acc": sat(0.32, 0.62, 1100), "entropy": pw((0, 0.5), (1100, 0.42)),
            "len": sat(400, 470, 800), "trunc": const(0.01), "clip": const(0.0), "grad": const(0.15),
            "lr": cosine_lr(1e-6, 50, 2500), "loss": const(0.0)},
    evals={"acc": (500, 100, 1.0)}, headline="e:acc", P=32, G=8, spread=1.5, log_every=10, spike_p=1 / 12,
    sps=48, age_min=4)

# ---- M: 22k steps every step, cosine to zero, finished
M = Story(
    levels={"r:task": pw((0, 0.0), (2000, 0.9), (6000, 1.5), (10000, 1.78), (15000, 1.9), (22000, 1.9)),
            "e:winrate": pw((0, 0.50), (2000, 0.58), (6000, 0.66), (10000, 0.70), (15000, 0.72), (22000, 0.72)),
            "kl": sat(0.0, 0.08, 5000), "entropy": sat(1.1, 0.8, 6000), "len": sat(210, 262, 8000),
            "grad": const(0.9), "lr": cosine_lr(1e-6, 200, 22000)},
    rewards={"task": ("score", 1.0)}, evals={"winrate": (800, 500, 1.0)}, eval_at0=True, headline="e:winrate",
    P=32, G=4, tau=0.5, rsd=0.8, sps=9, age_min=7 * 60)

# ---- N: TRL checkpoints reached max_steps, no final row
N_E = pw((0, 0.31), (150, 0.37), (300, 0.42), (500, 0.475), (700, 0.50), (1200, 0.50))
N = Story(
    levels={"r:task": plus(N_E, const(0.05)), "e:acc": N_E, "entropy": pw((0, 0.50), (700, 0.38), (1200, 0.37)),
            "len": sat(520, 610, 500), "trunc": const(0.02), "clip": const(0.0), "grad": const(0.2),
            "lr": pw((0, 0), (12, 1e-6), (1200, 0)), "loss": const(0.0)},
    evals={"acc": (400, 100, 1.0)}, headline="e:acc", P=16, G=8, spread=1.6, log_every=10, sps=80, age_min=9 * 60)

# ---- O: NeMo TB, scheduler sized for 500 steps
O_ = Story(
    levels={"r:task": pw((0, 0.20), (150, 0.30), (300, 0.37), (420, 0.40), (500, 0.41), (900, 0.41)),
            "e:accuracy": pw((0, 0.24), (150, 0.32), (300, 0.38), (500, 0.41), (900, 0.41)),
            "kl": pw((0, 0.0), (500, 0.004), (900, 0.004)), "entropy": pw((0, 0.55), (500, 0.47), (900, 0.47)),
            "len": pw((0, 600), (500, 700), (900, 700)), "trunc": const(0.03), "grad": const(0.3),
            "lr": cosine_lr(1e-6, 20, 500), "loss": const(0.0)},
    evals={"accuracy": (500, 50, 1.0)}, eval_at0=True, headline="e:accuracy", P=64, G=8, spread=1.5, sps=90,
    age_min=3)

# ---- P: verl console in two files, converged in the cosine tail
P_E = pw((0, 0.55), (200, 0.66), (400, 0.74), (650, 0.79), (900, 0.82), (1100, 0.835), (1300, 0.845), (2000, 0.845))
P_ = Story(
    levels={"r:task": plus(P_E, const(0.04)), "e:gsm8k": P_E, "kl": pw((0, 0.0), (400, 0.04), (2000, 0.06)),
            "entropy": pw((0, 0.45), (1300, 0.30), (2000, 0.29)), "len": pw((0, 230), (800, 290), (2000, 300)),
            "trunc": const(0.002), "clip": const(0.002), "ppo_kl": const(0.0), "grad": const(0.12),
            "lr": cosine_lr(1e-6, 30, 2000), "loss": const(0.0)},
    evals={"gsm8k": (1319, 50, 1.0)}, eval_at0=True, headline="e:gsm8k", P=128, G=8, spread=1.5,
    resume=(1150, 1100), sps=70, age_min=6, gap_min=20 * 60, cap=1024)

# ---- Q: MLflow DB, resumed with duplicate steps, saturated and flat
Q = Story(
    levels={"r:task": pw((0, 0.55), (300, 0.85), (500, 0.92), (1300, 0.935)),
            "e:acc": pw((0, 0.44), (300, 0.55), (500, 0.58), (1300, 0.58)),
            "kl": pw((0, 0.0), (500, 0.02), (1300, 0.03)),
            "entropy": pw((0, 0.35), (500, 0.20), (1300, 0.19)), "len": pw((0, 350), (500, 300), (1300, 295)),
            "trunc": const(0.005), "clip": const(0.0), "grad": const(0.08), "lr": const(1e-6), "loss": const(0.0)},
    evals={"acc": (500, 100, 1.0)}, eval_at0=True, headline="e:acc", P=32, G=8, spread=2.6, log_every=10,
    resume=(860, 800), sps=40, age_min=4, gap_min=90)

# ---- R: TRL DPO finished, eval accuracy plateau then eases ~1 sd
R = Story(
    levels={"r:task": pw((0, 0.50), (300, 0.68), (1000, 0.80), (2000, 0.90)),
            "e:acc": pw((0, 0.55), (400, 0.65), (1000, 0.71), (1600, 0.71), (2000, 0.69)),
            "margins": pw((0, 0.0), (300, 1.2), (1000, 3.4), (2000, 6.1)),
            "chosen": pw((0, 0.0), (1000, -1.1), (2000, -2.3)),
            "loss": pw((0, 0.693), (300, 0.52), (1000, 0.40), (2000, 0.27)),
            "eval_loss": pw((0, 0.693), (1000, 0.565), (1600, 0.575), (2000, 0.60)),
            "logp_c": pw((0, -310), (2000, -345)), "grad": const(8.0), "lr": pw((0, 0), (100, 5e-7), (2000, 0))},
    evals={"acc": (600, 100, 1.0)}, headline="e:acc", P=64, G=1, spread=0.4, log_every=10, sps=20, age_min=14 * 60)

# ---- S: rasbt CSV, aborted attempt then 80 of 80, never learns
S = Story(
    levels={"r:task": const(0.07), "e:acc": const(0.11), "entropy": const(0.92), "len": const(380.0),
            "kl": const(0.002), "grad": const(1.0), "lr": const(1e-5), "ratio": const(1.0)},
    evals={"acc": (500, [1, 20, 40, 60, 80], 1.0)}, headline="e:acc", P=1, G=8, spread=2.0, sps=40, age_min=30 * 60)

# ---- T: verl console np2, plateau then fatal NaN from 1131
T_E = pw((0, 0.62), (300, 0.76), (500, 0.81), (700, 0.84), (1130, 0.84), (1131, 0.0), (1200, 0.0))
T = Story(
    levels={"r:task": pw((0, 0.58), (300, 0.74), (500, 0.80), (700, 0.83), (1130, 0.83), (1131, 0.0), (1200, 0.0)),
            "e:gsm8k": T_E, "kl": pw((0, 0.0), (700, 0.03), (1130, 0.035)),
            "entropy": pw((0, 0.50), (700, 0.33), (1130, 0.31)),
            "len": pw((0, 240), (700, 300), (1130, 305), (1131, 1024), (1200, 1024)),
            "trunc": pw((0, 0.002), (1130, 0.003), (1131, 1.0), (1200, 1.0)), "clip": const(0.003),
            "ppo_kl": const(0.0), "grad": const(0.14), "lr": pw((0, 1e-7), (10, 1e-6), (2000, 1e-6)),
            "loss": const(0.0)},
    evals={"gsm8k": (1319, 50, 1.0)}, eval_at0=True, headline="e:gsm8k", P=64, G=8, spread=1.5,
    nan=[(1131, 1200, {"grad": NAN, "loss": NAN, "entropy": NAN, "kl": NAN, "ppo_kl": NAN, "clip": NAN,
                       "len": 1024.0, "trunc": 1.0})],
    sps=60, age_min=2 * 60 + 10, cap=1024)

# ---- U: HF TB same dir, two event files; collapse in the resumed stretch
U_R = pw((0, 0.28), (500, 0.58), (900, 0.71), (1350, 0.71), (1450, 0.60), (1600, 0.25))
U_E = pw((0, 0.30), (500, 0.55), (900, 0.66), (1350, 0.66), (1450, 0.58), (1600, 0.24))
U = Story(
    levels={"r:task": U_R, "e:acc": U_E, "entropy": after(1350, pw((0, 0.40), (900, 0.35), (1350, 0.35)),
                                                          lambda s: 0.35 * np.exp((np.asarray(s) - 1350) / 120)),
            "len": after(1350, pw((0, 600), (900, 650), (1350, 650)), pw((1350, 650), (1510, 1500), (1600, 2048))),
            "trunc": after(1350, const(0.01), pw((1350, 0.01), (1510, 0.25), (1600, 0.62))), "clip": const(0.0),
            "grad": after(1350, const(0.1), quad_from(1350, 0.1, 2.4, 1600)), "lr": cosine_lr(1e-6, 50, 3000),
            "loss": const(0.0)},
    evals={"acc": (500, 100, 1.0)}, headline="e:acc", P=32, G=8, spread=1.5, log_every=10, resume=(1450, 1200),
    ghost={"r:task": const(0.71), "e:acc": const(0.66), "entropy": const(0.35), "len": const(650.0),
           "trunc": const(0.01), "grad": const(0.1)},
    sps=50, age_min=2, gap_min=35)

# ---- V: OpenRLHF TB, entropy blow-up while the reward still holds
V = Story(
    levels={"r:task": pw((0, 0.30), (500, 0.52), (900, 0.58), (1570, 0.58), (1600, 0.565)),
            "e:pass1": pw((0, 0.33), (500, 0.53), (900, 0.58), (1520, 0.58), (1600, 0.565)),
            "entropy": after(1520, pw((0, 0.45), (1520, 0.42)), quad_from(1520, 0.42, 1.72, 1600)),
            "kl": after(1520, pw((0, 0.0), (900, 0.02), (1520, 0.025)), quad_from(1520, 0.025, 0.35, 1600)),
            "grad": after(1520, const(0.25), quad_from(1520, 0.25, 2.0, 1600)),
            "len": after(1520, pw((0, 700), (900, 800), (1520, 800)), pw((1520, 800), (1600, 1100))),
            "trunc": after(1520, const(0.01), pw((1520, 0.01), (1600, 0.06))),
            "clip": after(1520, const(0.01), pw((1520, 0.01), (1600, 0.08))),
            "vllm_kl": after(1520, const(0.001), pw((1520, 0.001), (1600, 0.02))), "ppo_kl": const(0.0002),
            "lr": pw((0, 5e-8), (30, 1e-6), (5000, 1e-6)), "loss": const(0.0)},
    evals={"pass1": (500, 100, 1.0)}, headline="e:pass1", P=64, G=8, spread=1.5, sps=100, age_min=2,
    spike_p=1 / 25)

# ---- W: TRL checkpoints, beta switched on at the resume, KL explodes from 860
W_ = Story(
    levels={"r:task": pw((0, 0.30), (300, 0.55), (500, 0.64), (920, 0.64), (950, 0.61)),
            "kl": lambda s: np.where(np.asarray(s) <= 600, NAN,
                                     np.where(np.asarray(s) <= 860, 0.002 + 0.018 * (np.asarray(s) - 600) / 250,
                                              0.02 * np.exp((np.asarray(s) - 860) / 20.0))),
            "clip": after(860, const(0.03), pw((860, 0.03), (950, 0.38))),
            "clip_lo": after(860, const(0.012), pw((860, 0.012), (950, 0.21))),
            "clip_hi": after(860, const(0.018), pw((860, 0.018), (950, 0.17))),
            "grad": after(860, const(0.2), quad_from(860, 0.2, 1.5, 950)),
            "entropy": after(880, const(0.40), pw((880, 0.40), (950, 0.60))), "len": const(480.0), "trunc": const(0.01),
            "lr": cosine_lr(1e-6, 30, 2000), "loss": const(0.0)},
    P=32, G=8, spread=1.5, log_every=10, sps=60, age_min=12)

# ---- X: TRL console dicts, answers shrink, train reward flat, eval falls
X = Story(
    levels={"r:em": pw((0, 0.35), (600, 0.60), (1200, 0.66), (1700, 0.66)),
            "r:boxed": pw((0, 0.60), (300, 0.95), (1700, 0.99)),
            "e:em": pw((0, 0.36), (600, 0.50), (1000, 0.54), (1200, 0.54), (1700, 0.40)),
            "len": pw((0, 820), (1200, 900), (1450, 300), (1700, 70)),
            "trunc": pw((0, 0.05), (1200, 0.04), (1450, 0.0)),
            "entropy": pw((0, 0.50), (1200, 0.40), (1700, 0.20)), "clip": const(0.0), "grad": const(0.3),
            "lr": cosine_lr(1e-6, 30, 3000), "loss": const(0.0)},
    rewards={"em": ("binary", 1.0), "boxed": ("binary", 1.0)}, evals={"em": (400, 200, 1.0)}, headline="e:em",
    P=16, G=8, spread=1.5, log_every=10, sps=55, age_min=4)
X_FNS = {"em": "exact_match", "boxed": "boxed_format"}

# ---- Y: OpenRLHF console in two files, lengths run into the cap
Y = Story(
    levels={"r:task": pw((0, 0.35), (400, 0.57), (700, 0.62), (900, 0.62), (1150, 0.36)),
            "e:pass1": pw((0, 0.40), (400, 0.60), (700, 0.66), (900, 0.66), (1150, 0.48)),
            "len": after(900, pw((0, 1500), (900, 1800)), pw((900, 1800), (1100, 3900), (1150, 4050))),
            "trunc": after(900, const(0.02), pw((900, 0.02), (1150, 0.55))),
            "kl": pw((0, 0.0), (900, 0.03), (1150, 0.06)),
            "entropy": pw((0, 0.5), (900, 0.42), (1150, 0.47)), "clip": const(0.01), "ppo_kl": const(0.0),
            "vllm_kl": const(0.001), "grad": const(0.3), "lr": pw((0, 5e-8), (20, 1e-6), (5000, 1e-6)),
            "loss": const(0.0)},
    evals={"pass1": (500, 50, 1.0)}, headline="e:pass1", P=64, G=8, spread=1.5, resume=(745, 700),
    sps=120, age_min=3, gap_min=75, cap=4096)

# ---- Z: hand loop CSV, 60 iterations, LR too hot
Z = Story(
    levels={"r:task": pw((0, 0.18), (22, 0.45), (30, 0.45), (45, 0.20), (60, 0.08)),
            "e:val": pw((0, 0.20), (22, 0.44), (30, 0.44), (45, 0.20), (60, 0.10)),
            "kl": pw((0, 0.005), (30, 0.06), (60, 0.6)), "len": pw((0, 300), (30, 340), (50, 900), (60, 1024)),
            "grad": after(30, const(0.6), quad_from(30, 0.6, 9.0, 60)), "lr": const(1e-5)},
    evals={"val": (200, 5, 1.0)}, headline="e:val", P=16, G=8, spread=1.5, sps=45, age_min=4, spike_p=1 / 15)

# ---- AA: HF TB, NaN stretch at 1410-1430, metrics come back at a lower level
AA = Story(
    levels={"r:task": pw((0, 0.30), (600, 0.62), (1000, 0.68), (1400, 0.68), (1440, 0.52), (1650, 0.52)),
            "e:acc": pw((0, 0.33), (600, 0.58), (1000, 0.63), (1400, 0.63), (1440, 0.50), (1650, 0.50)),
            "entropy": pw((0, 0.40), (1000, 0.30), (1400, 0.30), (1440, 0.55), (1650, 0.53)),
            "len": pw((0, 500), (1400, 560), (1440, 760), (1650, 740)),
            "trunc": pw((0, 0.01), (1400, 0.01), (1440, 0.05)),
            "clip": const(0.0), "grad": pw((0, 0.1), (1400, 0.1), (1440, 0.35), (1650, 0.3)),
            "lr": cosine_lr(1e-6, 30, 3000), "loss": const(0.0)},
    evals={"acc": (500, 100, 1.0)}, headline="e:acc", P=32, G=8, spread=1.5, log_every=10,
    nan=[(1410, 1430, {"loss": NAN, "grad": NAN})], sps=50, age_min=3)

# ---- AB: W&B CSV, RLOO with an RM; held-out judge win rate peaked and slid
AB = Story(
    levels={"r:task": pw((0, -0.2), (800, 0.9), (1600, 1.5), (2600, 2.1)),
            "e:winrate": pw((0, 0.50), (800, 0.60), (1400, 0.655), (1800, 0.66), (2600, 0.60)),
            "kl": pw((0, 0.0), (800, 0.08), (1800, 0.25), (2600, 0.45)), "len": pw((0, 280), (1800, 420), (2600, 520)),
            "entropy": pw((0, 0.9), (2600, 0.74)), "grad": const(0.5), "lr": const(1e-6), "loss": const(0.0)},
    rewards={"task": ("score", 1.0)}, evals={"winrate": (800, 200, 1.0)}, eval_at0=True, headline="e:winrate",
    P=64, G=2, tau=0.7, rsd=1.0, log_every=10, sps=45, age_min=15)


# ------------------------------------------------------------------------------ case-specific writers

def write_S(run: dict, folder: Path) -> dict:
    """rasbt ch07 7_5 CSV (CRLF, append-only): a 9-step aborted attempt (total_steps 300), then 80 of 80."""
    st = run["story"]
    rng = np.random.default_rng(4242)
    hdr = ("step,total_steps,loss,kl_loss,policy_ratio,reward_avg,tokens_per_sec,avg_response_len,adv_avg,adv_std,"
           "entropy_avg,eval_acc")
    lines = [hdr]
    evd = dict(run["eval"])

    def row(s, total, v, ev):
        skipped = v["zero_std"] == 1.0
        loss = 0.0 if skipped else float(rng.normal(0, 40))
        ratio = "" if skipped else f"{1 + 0.01 * rng.normal():.4f}"
        adv_std = 0.0 if skipped else 1.0
        e = "" if ev is None else f"{ev:.6f}"
        return (f"{s},{total},{loss:.4f},{v['kl'] * (1 if rng.random() < 0.7 else -1):.5f},{ratio},{v['reward']:.3f},"
                f"{31.5 + rng.normal():.2f},{v['len']:.1f},0.0000,{adv_std:.4f},{v['entropy']:.4f},{e}")
    aborted = draw_rows(st, st.levels, np.random.default_rng(99), 1, 9)
    for s, v in aborted:
        lines.append(row(s, 300, v, 0.108 if s == 1 else None))
    for s, v in run["train"]:
        lines.append(row(s, run["planned"], v, evd.get(s, {}).get("acc")))
    d = folder / "logs"
    d.mkdir(parents=True, exist_ok=True)
    (d / "7_5_plus_kl_metrics.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    txt = [f"[Step {s}/{run['planned']}] loss=0.0000 reward_avg={v['reward']:.3f} avg_resp_len={v['len']:.1f}"
           for s, v in run["train"]]
    (d / "7_5_plus_kl_metrics.txt").write_text("\n".join(txt) + "\n")
    return {}


def write_M(run: dict, folder: Path) -> dict:
    st, clock = run["story"], run["clock"]
    with (folder / "metrics.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "lr", "rm_score", "rm_score_std", "kl", "entropy", "resp_tokens", "grad_norm", "sec"])
        for s, v in run["train"]:
            w.writerow([s, f"{v['lr']:.3e}", f"{v['reward']:.4f}", f"{v['reward_std']:.4f}", f"{v['kl']:.5f}",
                        f"{v['entropy']:.4f}", f"{v['len']:.1f}", f"{v['grad']:.4f}", f"{8.5 + (s % 7) * 0.1:.1f}"])
    with (folder / "eval.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "winrate_vs_sft", "n_pairs"])
        for s, e in run["eval"]:
            w.writerow([s, f"{e['winrate']:.4f}", 800])
    t0 = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(clock.t(0)))
    t1 = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(clock.end))
    (folder / "train.log").write_text(
        f"[{t0}] config: total_steps=22000 lr=1e-6 warmup=200 schedule=cosine(min=0) rm=skywork-rm-8b batch=32x4\n"
        f"[{t0}] step 0: eval winrate_vs_sft={run['eval'][0][1]['winrate']:.3f}\n"
        f"[{t1}] step 22000/22000 done. saving final weights to outputs/final\n"
        f"[{t1}] training finished in {22000 * st.sps / 3600:.1f} h\n")
    (folder / "outputs" / "final").mkdir(parents=True)
    (folder / "outputs" / "final" / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}\n')
    (folder / "outputs" / "final" / "model.safetensors.index.json").write_text('{"metadata": {"total_size": 0}}\n')
    return {}


def write_Z(run: dict, folder: Path) -> dict:
    evd = dict(run["eval"])
    with (folder / "log.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["iter", "avg_reward", "frac_solved_groups", "mean_gen_len", "kl_to_ref", "grad_norm", "lr",
                    "val_pass_rate"])
        for s, v in run["train"]:
            e = evd.get(s)
            w.writerow([s, f"{v['reward']:.4f}", f"{v['all1']:.4f}", f"{v['len']:.1f}", f"{v['kl']:.4f}",
                        f"{v['grad']:.3f}", f"{v['lr']:.1e}", "" if e is None else f"{e['val']:.3f}"])
    (folder / "run_config.json").write_text(json.dumps({"max_iters": run["planned"], "lr": 1e-5, "group_size": 8,
                                                        "prompts_per_iter": 16, "val_every": 5, "val_n": 200}) + "\n")
    return {folder / "run_config.json": run["clock"].t(0)}


def write_I(run: dict, folder: Path) -> dict:
    _i_fix(run)
    return w_trl_console(run, folder, I_FNS, {}, header=[
        "INFO 11-26 10:02:11 [__init__.py:244] Automatically detected platform cuda.",
        "trl==0.21.0 transformers==4.55.2 vllm==0.10.1",
        "GRPOConfig(beta=0.0, num_generations=8, per_device_train_batch_size=8, logging_steps=5, max_steps=1500, "
        "reward_funcs=[check_answer_sympy, xml_tags_reward], max_completion_length=1024)"],
        inline={s: ["WARNING:root:check_answer_sympy: sympy worker pool timed out after 30s; returning None for "
                    "64 completions"] * 5 for s in (235, 240, 245, 250)})


def write_R(run: dict, folder: Path) -> dict:
    """TRL DPO: train rows with rewards/* and logps/*, eval rows every 100, finished with a top-level state."""
    st = run["story"]
    rng = np.random.default_rng(5)

    def rows(run_):
        out = []
        for s, v in run_["train"]:
            m, c = v["margins"], v["chosen"]
            out.append({"loss": g6(v["loss"]), "grad_norm": g6(v["grad"]), "learning_rate": g6(v["lr"]),
                        "rewards/chosen": g6(c), "rewards/rejected": g6(c - m), "rewards/accuracies": g6(v["r:task"]),
                        "rewards/margins": g6(m), "logps/chosen": g6(v["logp_c"]),
                        "logps/rejected": g6(v["logp_c"] - 45 - 10 * m),
                        "logits/chosen": g6(-1.21 + 0.02 * rng.normal()),
                        "logits/rejected": g6(-1.18 + 0.02 * rng.normal()), "epoch": round(s / 1000, 4), "step": s})
        lv = st.levels
        for s, e in run_["eval"]:
            m = float(lv["margins"](s)) * 0.55
            c = float(lv["chosen"](s)) * 1.1
            out.append({"eval_loss": g6(float(lv["eval_loss"](s)) + 0.004 * rng.normal()), "eval_rewards/chosen": g6(c),
                        "eval_rewards/rejected": g6(c - m), "eval_rewards/accuracies": g6(e["acc"]),
                        "eval_rewards/margins": g6(m), "eval_logps/chosen": g6(float(lv["logp_c"](s)) - 8),
                        "eval_logps/rejected": g6(float(lv["logp_c"](s)) - 60), "eval_runtime": g6(61 + rng.random()),
                        "eval_samples_per_second": 9.8, "eval_steps_per_second": 0.61, "epoch": round(s / 1000, 4),
                        "step": s})
        out.sort(key=lambda r: (r["step"], "eval_runtime" in r))
        return out
    return w_trl_ckpts(run, folder, 500, 2, {}, {}, 100, spe=1000, epochs=2, top_level=True, stop_at_end=True,
                       rows_fn=rows)


def write_O(run: dict, folder: Path) -> dict:
    cfg = ("grpo:\n  num_prompts_per_step: 64\n  num_generations_per_prompt: 8\n  max_num_steps: 2000\n"
           "  val_period: 50\n  val_at_start: true\npolicy:\n  model_name: Qwen/Qwen2.5-Math-1.5B\n"
           "  optimizer:\n    name: torch.optim.AdamW\n    kwargs:\n      lr: 1.0e-6\n      weight_decay: 0.01\n"
           "  scheduler:\n    - name: torch.optim.lr_scheduler.LinearLR\n"
           "      kwargs: {start_factor: 0.1, end_factor: 1.0, "
           "total_iters: 20}\n    - name: torch.optim.lr_scheduler.CosineAnnealingLR\n      kwargs: {T_max: 480, "
           "eta_min: 0.0}\n    - milestones: [20]\nlogger:\n  log_dir: logs\n  tensorboard_enabled: true\n")
    run["eval"] = [(s, {"accuracy": e["accuracy"]}) for s, e in run["eval"]]
    return w_nemo_tb(run, folder, "exp_003", cfg)


# ----------------------------------------------------------------------------------------------------- the table

SPECS: list[Spec] = [
    # ---------------------------------------------------------------------------------------------- healthy
    Spec("ok-hf-tb-two-run-folders-resume-at-900-replays-901-960-eval-every-150-still-rising-live", A,
         W(w_hf_tb, fns=ACC, efns=EACC, layout="two_dirs"), 2601, (1480, 3000), "ok",
         "healthy trl grpo tensorboard resume duplicate-steps two-event-files eval-cadence live",
         """TRL GRPO with report_to=tensorboard and the default logging_dir, so the process that resumed from
         checkpoint-900 after a node failure at step 960 opened a second runs/<date>_<host> folder: steps 901-960
         exist in both event files (new draws of the same levels), and the stale copy is older by wall time. Logged
         every 10 steps, eval (500 prompts) every 150 from step 150. Held-out accuracy climbs 0.25 -> ~0.43 at 1350
         and the train reward 0.22 -> ~0.47 at 1480 on a saturating curve that is still gaining ~0.04 per 500
         steps; on-policy clip ratios are exactly 0, entropy drifts 0.55 -> 0.50, lengths grow modestly. At 1480 of
         3000 with the newest write 3 minutes old, the run is live, improving and has half its budget left:
         continue."""),
    Spec("ok-verl-console-np2-kl-loss-climbs-to-0.11-by-400-then-flat-val-rising-at-720-of-1600", B,
         W(w_verl_console, np2=True, total=1600, kl_coef=0.001,
           val_keys={"math": "val-core/DigitalLearningGmbH/MATH-lighteval/reward/mean@1"}), 2602, (720, 1600), "ok",
         "healthy verl grpo console numpy2 kl-settles side-signal-lookalike live",
         """verl GRPO (use_kl_loss, kl_coef 0.001) printed by the console logger under NumPy 2 (np.float64(...)
         wrappers). actor/kl_loss rises from ~0 to ~0.11 over the first 400 steps and then holds flat around
         0.11-0.12: the policy moved away from the reference early and settled, well inside a usual budget for this
         coefficient. Train score climbs 0.30 -> ~0.50, and validation on the 5000-problem MATH test set (every 40
         steps, from step 0) rises 0.36 -> ~0.50 at 720 and is still rising; entropy declines slowly 0.62 -> 0.53,
         lengths grow 610 -> ~740 with truncation at 1 %. Live at 720 of 1600 ('Total training steps: 1600'): a KL
         that rose and settled while the held-out score keeps improving is healthy, continue."""),
    Spec("ok-openrlhf-console-entropy-0.92-to-0.44-over-1400-steps-pass1-rising-torn-last-line", C,
         W(w_openrlhf_console, eval_prefix="math500", total=2400, torn=True), 2603, (1400, 2400), "ok",
         "healthy openrlhf grpo console entropy-lookalike torn-tail live",
         """OpenRLHF 0.10 GRPO (group_norm, 8 samples per prompt, a small entropy coefficient so entropy_loss is
         logged) captured from stdout: one '✨ Global step N: {...}' line per step behind a Ray actor prefix, and
         '✨ Evaluation completed ... eval_metrics: {...}' every 100 steps. entropy_loss falls smoothly from 0.92 to
         ~0.44 over 1400 steps (exponential, time constant ~650 steps), i.e. the policy sharpens slowly; it is not a
         collapse. Reward 0.35 -> ~0.60, eval_math500_pass1 0.38 -> ~0.52 and pass4 above it, both still rising; KL
         ~0.05, clip ratio ~1 %. The last line is half-written (the process is printing). At 1400 of 2400, live:
         continue."""),
    Spec("ok-custom-jsonl-nested-reward-total-flat-task-0.40-to-0.53-length-penalty-grows", D,
         W(w_nested_jsonl, total=3000), 2604, (1300, 3000), "ok",
         "healthy custom jsonl nested-keys several-reward-columns length-growth headline-name live",
         """A hand-written GRPO loop logging nested JSON per step: reward.total, reward.task (the verifier),
         reward.format (weight 0.1) and reward.length_penalty (0.25 per 1024 tokens beyond 512), plus policy.* and
         gen.*; held-out accuracy (400 problems) every 100 steps on its own lines. The task reward rises 0.40 ->
         ~0.53 and the held-out accuracy 0.36 -> ~0.46, both still rising, while mean length grows 500 -> ~1190 as
         the model reasons longer, so the length penalty deepens 0 -> ~-0.16 and reward.total stays flat near
         0.46-0.49 (even eases a little). A reader that takes the total as the headline sees a plateau; the task
         and the held-out score show real learning with budget left (1300 of 3000 in config.json). Continue."""),
    Spec("ok-trl-ckpts-fp16-overflow-inf-nan-grad-rows-680-720-eval-rising-at-1000-of-2000", E,
         W(w_trl_ckpts, save_every=250, keep=3, fns=E_FNS, efns={"corr": "correctness_reward_func"}, eval_every=100),
         2605, (1000, 2000), "ok",
         "healthy trl grpo trainer-state checkpoints nan-recoverable reward-scale-0-2 eval-cadence live",
         """TRL 0.18 GRPO in fp16 on V100s (beta 0.04, so kl is logged), checkpoints every 250 with
         save_total_limit 3 (500, 750, 1000 on disk), logging every 10 and eval every 100. Reward functions in the
         popular gist style: correctness_reward_func pays 2.0, strict_format_reward_func 0.5, so rewards live on a
         0-2.5 scale. Around step 700 the loss scaler overflowed: grad_norm is Infinity at 680 and 710 and NaN at
         700 and 720, loss is NaN at 700; those optimizer steps were skipped and nothing else moved. Eval correctness
         (0-2 scale, 300 prompts) rises 0.62 -> ~0.96 by 1000, train correctness 0.30 -> ~0.54
         solve rate (0.60 -> ~1.08 as logged), KL ~0.03. The newest checkpoint is 25 minutes old (saves every ~3 h).
         A recovered overflow stretch in a run that keeps improving: continue."""),
    Spec("ok-verl-jsonl-file-logger-overwritten-at-resume-400-file-starts-at-400-torn-tail-val-rising", F,
         W(w_verl_jsonl_overwritten, val_keys={"math500": "val-core/HuggingFaceH4/MATH-500/acc/mean@4",
                                               "aime24": "val-core/aime24/acc/mean@16"},
           path="logs/grpo_math/qwen3-4b-grpo.jsonl"), 2606, (1040, 1500), "ok",
         "healthy verl grpo jsonl file-logger-overwritten resume torn-tail live",
         """verl GRPO with the file logger, restarted from global_step_400 after a crash at 437 under the same
         experiment name: the FileLogger opens its JSONL with 'wb', so the file holds only the resumed run. Its first
         row is the validation-only row at step 400 (val_before_train on the resumed weights), then steps 401-1040;
         the last line is torn mid-write. MATH-500 mean@4 (every 40) rises 0.49 at 400 -> ~0.58 at 1040, AIME24
         mean@16 0.13 -> 0.15, train score ~0.39 -> ~0.49, lengths grow 1160 -> 1370 of a 4096 cap with 5 %
         truncation, entropy 0.42 -> 0.40. Nothing before step 400 is visible; what is visible is a live, still
         improving run: continue."""),
    Spec("ok-wandb-csv-export-cosine-restart-at-2025-rewarm-dip-recovers-above-old-best-at-2900", H,
         W(w_wandb_csv, display="grpo-qwen2.5-7b-cosrestart", xkey="train/global_step",
           panels={"r:task": "train/reward", "e:acc": "eval/reward", "lr": "train/learning_rate", "kl": "train/kl",
                   "entropy": "train/entropy", "len": "train/completions/mean_length"}), 2607, (2900, 4000), "ok",
         "healthy trl grpo wandb-csv lr-rewarm cosine-restarts dip-recovers",
         """W&B panel exports (one CSV per panel, x axis train/global_step) of a TRL GRPO run with
         cosine_with_restarts (2 cycles over 4000 steps): the LR decays to ~0 at 2025 and is re-warmed to 1e-6.
         Right after the re-warm the train reward dips 0.545 -> 0.505 and eval reward (500 prompts, every 100) by
         about as much, KL bumps 0.05 -> 0.08 and entropy 0.42 -> 0.47; by 2200 both are back and then climb past
         the first cycle's best (eval ~0.57 at 2900 vs ~0.51 at 2000). At 2900 with the second cycle's LR still
         high, the run is improving again after an expected re-warm dip: continue."""),
    Spec("ok-trl-console-dicts-reward-fn-check-answer-sympy-verifier-hang-none-rows-80-logs-at-400-of-1500", I_,
         write_I, 2608, (400, 1500), "ok",
         "healthy trl grpo console short-run custom-reward-name null-reward-stretch live",
         """Captured stdout of a TRL 0.21 GRPO script (tqdm fragments and str(logs) dicts with no step key),
         logging every 5 steps: 80 logged rows, at 400 of 1500. Two reward functions: check_answer_sympy (the task,
         rewards/check_answer_sympy/mean) and xml_tags_reward (format, saturates at ~0.96 by step 100). Steps 231-250
         the sympy worker pool hung and returned None: TRL logs rewards/check_answer_sympy/mean as None for four
         rows, the total reward drops to the xml term alone and frac_reward_zero_std jumps, with no correctness
         signal the policy did not move; from 255 the verifier is back at the level it left. Correctness climbs
         0.12 -> ~0.24 over 400 steps with a small batch (8 prompts x 8). Short, noisy, still learning: continue."""),
    Spec("ok-openrlhf-tb-ppo-clip-ratio-steady-0.14-two-epochs-per-batch-rm-score-rising-at-35pct", J,
         W(w_openrlhf_tb, eval_prefix="rm", run_name="ppo-llama3-8b-ultrafeedback", critic=True), 2609, (700, 2000),
         "ok",
         "healthy openrlhf ppo tensorboard clip-ratio-lookalike reward-model live",
         """OpenRLHF PPO with a critic and two PPO epochs per rollout batch, TensorBoard train/* tags only (no
         eval). train/ppo_clip_ratio sits at ~0.14 from the first step to the last: with max_epochs 2 the second pass
         is off-policy and clipping binds on a steady share of tokens, which is the configuration, not drift. The
         reward-model score climbs -0.6 -> ~0.8 (score noise sd ~0.13 per batch), KL rises gently to ~0.05, critic
         loss falls from 0.6 to ~0.12, lengths 300 -> 350. Live at 700 of 2000: continue."""),
    Spec("ok-hf-tb-torn-record-30-logs-at-300-of-5000-lr-still-warming-reward-barely-moving", K,
         W(w_hf_tb, fns=ACC, efns={}, truncate=41), 2610, (300, 5000), "ok",
         "healthy trl grpo tensorboard very-early lr-warmup torn-tail live",
         """TRL GRPO via TensorBoard, 30 logged points (every 10 steps) at step 300 of 5000, the event file's last
         record cut mid-write. warmup_ratio 0.1 means the LR is still ramping (1.2e-6 of a 2e-6 peak at 300) and the
         hard-task reward has only moved 0.06 -> ~0.085 (16 prompts x 8 per step). Six percent into the run with the
         LR not even at its peak there is nothing to judge yet; flat-ish reward here is expected: continue."""),
    Spec("ok-custom-jsonl-rewound-counter-first-copy-blew-up-at-835-resumed-at-800-half-lr-second-copy-rising", L,
         W(w_rewound_jsonl, total=3000), 2611, (1250, 3000), "ok",
         "healthy custom jsonl resume rewound-step-counter duplicate-steps superseded-collapse live",
         """A hand loop appending flat JSON rows to metrics.jsonl (val_acc on every 50th row, 300 problems). The
         first attempt blew up from step 835: grad_norm to ~12, entropy 0.52 -> 2.8, KL to 0.9, reward to 0.10
         and val_acc 0.30 at 850, then it was killed at 880. The operator resumed from ckpt_800.pt with the LR
         halved (config.yaml), and the counter rewound: steps 801-880 appear twice in the same file, the second copy
         healthy. In the resumed timeline val_acc rises 0.39 at 800 -> ~0.45 at 1250 and reward ~0.51, still
         climbing, entropy ~0.50, grad ~0.25. The collapse belongs to a superseded branch; the current run is at its
         best and improving at 1250 of 3000: continue."""),
    Spec("ok-trackio-trl-grad-norm-heavy-tail-median-0.15-spikes-to-7-clipped-eval-rising-at-1100-of-2500", AC,
         W(w_trackio, fns=ACC, efns=EACC, project="grpo-math", name="qwen2.5-3b-grpo-lr1e-6"), 2612, (1100, 2500),
         "ok", "healthy trl grpo trackio grad-norm-spikes side-signal-lookalike live",
         """TRL GRPO logged to a Trackio SQLite project (train/*, eval/* keys), every 10 steps, eval every 100 on
         500 prompts. train/grad_norm has a heavy right tail: median ~0.15, about one log in twelve at 2-5x the median
         and a few at 0.6-7 (max_grad_norm 1.0 clips those updates), with no level shift before or after any
         spike. Reward 0.30 ->
         ~0.54, eval reward 0.32 -> ~0.52 and rising, entropy 0.50 -> 0.42, lengths flat. Isolated clipped spikes
         without any effect on the curves: continue."""),
    # --------------------------------------------------------------------------------- stop / converged
    Spec("stop-custom-csv-22k-steps-every-step-cosine-lr-to-0-finished-eval-flat-since-15k-best-at-end", M,
         write_M, 2613, (22000, 22000), "stop", onset=15000, tags=
         "stop custom csv very-long finished cosine-to-zero end-marker reward-model",
         why="""A custom PPO-style loop with a reward model, 22,000 steps logged every step to metrics.csv
         (rm_score, kl, entropy, lr ...) and a judge win rate against the SFT model every 500 steps in eval.csv
         (800 pairs). The LR is a cosine from 1e-6 to exactly 0 at 22000; train.log ends with 'step 22000/22000
         done. saving final weights' and outputs/final/ exists (finished 7 h ago). Win rate climbs 0.50 -> 0.72 by
         15000 and then holds at 0.72 (RM score ~1.9) for the last 7000 steps with nothing lost; the final weights
         are as good as any. Finished at its best: stop (keep the final weights)."""),
    Spec("stop-trl-ckpts-reached-max-steps-1200-no-final-row-stalled-9h-eval-flat-since-700", N,
         W(w_trl_ckpts, save_every=200, keep=2, fns=ACC, efns=EACC, eval_every=100, stop_at_end=True),
         2614, (1200, 1200), "stop", onset=700,
         tags="stop trl grpo trainer-state checkpoints finished-no-marker plateau",
         why="""TRL 0.23 GRPO, checkpoints every 200 with save_total_limit 2 (1000 and 1200 on disk), no top-level
         trainer_state.json and no train_runtime summary row (the script never called save_state), newest write 9
         hours ago. checkpoint-1200 has global_step 1200 = max_steps 1200 (should_training_stop set), so the run
         reached its planned end. Eval accuracy (400 prompts, every 100) rises 0.31 -> 0.50 by 700 and is flat at
         0.50 to 1200, entropy flat since 700, the LR decayed linearly to 0. Finished on a plateau with the final
         weights as good as any: stop."""),
    Spec("stop-nemo-tb-scheduler-sized-for-500-lr-exactly-0-since-500-reward-frozen-at-900-of-2000", O_,
         write_O, 2617, (900, 2000), "stop", onset=500,
         tags="stop nemo grpo tensorboard lr-zero cosine-to-zero-early config-bug live",
         why="""NeMo-RL GRPO (TensorBoard under logs/exp_003) where the cosine scheduler was given T_max 480
         (+20 warm-up) while max_num_steps is 2000: train/lr decays to 0 at step 500 and stays exactly 0. Up to 500
         the reward climbs 0.20 -> 0.41 and validation accuracy (500 problems, every 50) 0.24 -> 0.41; since 500 the
         weights cannot move: reward, KL (0.004), entropy and lengths hold their levels for 400 steps while
         gradients are still computed. At 900 of 2000, live. Nothing more can be gained at LR 0 and the current
         weights equal the step-500 ones: stop (and fix the schedule) rather than burn 1100 more steps."""),
    Spec("conv-verl-two-console-logs-resume-at-1100-at-1880-of-2000-val-flat-since-1300-cosine-tail", P_,
         W(w_verl_console, np2=False, total=2000, val_keys={"gsm8k": "val-core/openai/gsm8k/reward/mean@1"},
           kl_coef=0.001, files=("logs/train_0.log", "logs/train_1.log"), prefix=True, ckpt_every=100),
         2616, (1880, 2000), "conv", onset=1300,
         tags="converged verl grpo console two-log-files resume duplicate-steps cosine-tail live",
         why="""verl GRPO on GSM8K whose first process died (OOM kill) at step 1150 and was relaunched a day later
         from global_step_1100 into a second log file: steps 1101-1150 appear in both files, and the resumed process
         logs validation at 1100 again. The cosine LR is nearly 0 at 1880 of 2000. Validation (1319 problems, every
         50) rises 0.55 -> 0.845 by 1300 and is flat since, train score ~0.885, entropy flat at ~0.30, KL 0.06.
         Converged with 120 steps left in the schedule: stopping now or letting it finish are both fine, stop is
         the better use of compute."""),
    Spec("stop-mlflow-db-resumed-at-800-duplicate-steps-810-860-zero-std-0.75-eval-flat-since-500-at-1300-of-3000", Q,
         W(w_mlflow_db, fns=ACC, efns=EACC, run_name="grpo-easy-mix-1e-6"), 2617, (1300, 3000), "stop", onset=500,
         tags="stop trl grpo mlflow-db resume duplicate-steps saturated zero-std live",
         why="""TRL GRPO (beta 0.01) logged by the HF MLflow callback into an SQL store (raw keys: reward,
         frac_reward_zero_std, eval_reward ...). A crash at 860 and a resume from checkpoint-800 into the same MLflow
         run left steps 810-860 logged twice with different timestamps. The training mix is too easy: train reward
         0.55 -> 0.92 by 500 and ~0.935 since, with about three quarters of the groups all-correct or all-wrong
         (no advantage signal); eval accuracy (500 prompts, every 100) 0.44 -> 0.58 by 500 and flat for 800 steps;
         KL creeps 0.02 -> 0.03 without any decline. Nothing more to gain from this data at 1300 of 3000: stop."""),
    Spec("sor-trl-dpo-finished-top-level-state-eval-acc-plateau-1000-1600-eases-1sd-by-2000-margins-grow", R,
         write_R, 2627, (2000, 2000), "sor", onset=1600,
         tags="stop-or-rollback trl dpo trainer-state finished end-marker eval-eases-within-noise",
         why="""TRL DPO, two epochs (2000 steps), finished 14 h ago with a top-level trainer_state.json holding the
         train_runtime row; checkpoints every 500 with limit 2 (1500 and 2000). Eval preference accuracy (600 pairs,
         every 100) rises 0.55 -> 0.71 by 1000, holds to 1600, then eases to 0.69 by 2000 (about one eval sd,
         0.019), while train accuracy keeps rising to 0.90, margins widen to ~6 and eval_loss creeps 0.565 -> 0.60:
         the second epoch starts to overfit. The cost of keeping the final weights is within noise: stopping is
         right, restoring the plateau (best target 1600, with checkpoint-1500 on disk) is as good."""),
    Spec("stop-rasbt-csv-crlf-aborted-9-step-attempt-then-finished-80-of-80-reward-never-lifts", S,
         write_S, 2619, (80, 80), "stop",
         "stop rasbt csv crlf short-run appended-runs finished never-learns",
         """reasoning-from-scratch ch07 7_5 script CSV (CRLF, append-only): a first attempt logged steps 1-9 with
         total_steps 300 and was aborted; a fresh run then logged steps 1-80 with total_steps 80 and reached it
         (finished 30 h ago; the .txt log ends at [Step 80/80]). One prompt x 8 rollouts per step: reward_avg sits
         at ~0.07 (0, 0.125 or 0.25 on most steps), adv_std is 0 and loss 0.0 on the many steps where all 8
         rollouts agree, entropy flat at 0.92, eval_acc (MATH-500 fraction) 0.11 at steps 1, 20, 40, 60 and 80.
         The run never learned and is over; the final weights are as good as any: stop."""),
    # ------------------------------------------------------------------------------------------- rollback
    Spec("rb-verl-console-np2-gsm8k-plateau-700-1130-then-nan-from-1131-score-0-stalled-2h", T,
         W(w_verl_console, np2=True, total=2000, val_keys={"gsm8k": "val-core/openai/gsm8k/reward/mean@1"},
           kl_coef=0.001, ckpt_every=100, ckpt_dir="checkpoints/gsm8k_grpo/qwen2.5-3b",
           tail=["(TaskRunner pid=20817) Traceback (most recent call last):",
                 "(TaskRunner pid=20817) ValueError: Input contains NaN, infinity or a value too large for "
                 "dtype('float64').", "ray.exceptions.RayTaskError(ValueError): ray::TaskRunner.run()"]),
         2620, (1172, 2000), "rb", onset=1131,
         tags="rollback verl grpo console numpy2 nan-fatal crashed stalled",
         why="""verl GRPO on GSM8K, console log with np.float64 wrappers, checkpoints every 100. Validation (1319
         problems, every 50 from step 0) climbs 0.62 -> 0.84 by 700 and holds to 1100; train score ~0.83. At step
         1131 actor/grad_norm, pg_loss, entropy and kl_loss turn nan and stay nan; from then every response runs to
         the 1024 cap (clip_ratio 1.0) and scores 0, validation at 1150 is 0.0, and at 1172 the job died with a
         NaN traceback two hours ago. The weights are destroyed; the best model is the plateau before the NaN,
         newest at 1100 (global_step_1100 was saved): rollback."""),
    Spec("rb-hf-tb-same-dir-two-event-files-resumed-from-1200-entropy-collapse-from-1350-stale-copy-healthy", U,
         W(w_hf_tb, fns=ACC, efns=EACC, layout="same_dir", logdir="tb"), 2621, (1600, 3000), "rb", onset=1350,
         tags="rollback trl grpo tensorboard two-event-files resume duplicate-steps stale-copy entropy-blowup live",
         why="""TRL GRPO with an explicit logging_dir, so after a crash at 1450 and a resume from checkpoint-1200
         both processes wrote event files into the same folder: steps 1210-1450 exist twice. The first attempt's copy
         is healthy (reward 0.71, eval 0.66 at 1300 and 1400); the resumed run, with a fresh data order, breaks at
         1350: entropy 0.35 -> ~2.9, lengths to the 2048 cap with ~60 % truncated, grad norm up 20x, train reward
         0.71 -> 0.25 and eval accuracy (500 prompts, every 100) 0.66 -> 0.24 at 1600. Only the newer wall-time copy
         is the run. The plateau since ~900 is the best model, newest eval before the break at 1300: rollback."""),
    Spec("rb-openrlhf-tb-entropy-blowup-from-1520-kl-grad-climb-reward-not-yet-down-live", V,
         W(w_openrlhf_tb, eval_prefix="math", run_name="grpo-qwen3-8b-math"), 2622, (1600, 3000), "rb", onset=1520,
         tags="rollback openrlhf grpo tensorboard side-signal-only entropy-blowup kl-blowup live",
         why="""OpenRLHF GRPO in TensorBoard (train/*, eval/eval_math_pass1 every 100 on 500 problems). Reward
         has been flat at ~0.58 since 900 and eval pass@1 at 0.58 through 1500. From 1520 the policy starts to come
         apart: entropy_loss 0.42 -> ~1.7, KL 0.025 -> ~0.35, actor grad norm 0.25 -> ~2 with spikes, clip ratio
         1 % -> 8 %, vllm_kl x20, lengths 800 -> 1100. The reward and the last eval (0.565 at 1600) are down by less
         than their noise: the side signals are the only clear evidence. A blow-up of this shape does not recover,
         and the model before it is the best there is: rollback to the plateau (newest eval before onset: 1500)."""),
    Spec("rb-trl-ckpts-beta-switched-on-at-resume-600-kl-appears-then-explodes-from-860-clip-0.38-reward-flat", W_,
         W(w_trl_ckpts, save_every=50, keep=3, fns=ACC, efns={}, eval_every=None), 2623, (950, 2000), "rb", onset=860,
         tags="rollback trl grpo trainer-state checkpoints metric-appears-late kl-blowup clip-ratio side-signal-only "
              "live",
         why="""TRL GRPO (num_iterations 2, so clip ratios are non-zero) resumed at 600 with beta raised from 0 to
         0.02: the kl key appears only from the step-610 row. Checkpoints every 50, limit 3 (850, 900, 950), no eval.
         KL creeps 0.002 -> 0.02 to step 860, then explodes ~70x to ~1.5 by 950; clip_ratio/region_mean 0.03 ->
         0.38, grad norm 0.2 -> 1.5, entropy 0.40 -> 0.60 from 880. The train reward has been flat at 0.64 since
         500 and is only ~0.03 lower at 950 (about two logged-batch sd). The update has gone unstable and the
         policy is running away from both the old and the reference policy; the model before 860 is the best
         there is: rollback (checkpoint-850 is on disk)."""),
    Spec("rb-trl-console-dicts-answers-shrink-900-to-70-tokens-train-em-flat-eval-every-200-falls-from-1200", X,
         W(w_trl_console, fns=X_FNS, efns={"em": "exact_match"}), 2624, (1700, 3000), "rb", onset=1200,
         tags="rollback trl grpo console eval-cadence several-reward-columns length-collapse live",
         why="""Captured TRL 0.20 GRPO stdout (dicts without a step key, tqdm fragments), logging every 10,
         eval every 200 on 400 held-out problems. Two reward functions: exact_match (the task) and boxed_format
         (saturated at ~0.99). From 1200 the completions shrink 900 -> ~70 tokens (the model stops showing work),
         entropy 0.40 -> 0.20; the training exact_match stays ~0.66 (easy training problems survive a bare answer)
         while eval exact_match falls from 0.54 (plateau 1000-1200) to ~0.43 at 1600. Live at 1700 of 3000. The
         held-out score says a better model is behind, newest at 1200: rollback."""),
    Spec("rb-openrlhf-console-two-log-files-resume-at-700-lengths-to-4k-cap-truncated-55pct-eval-slides-from-900", Y,
         W(w_openrlhf_console, eval_prefix="math500", total=2000, files=("train.log", "train.resume.log")),
         2625, (1150, 2000), "rb", onset=900,
         tags="rollback openrlhf grpo console two-log-files resume duplicate-steps length-explosion live",
         why="""OpenRLHF GRPO, stdout captured to train.log until an NCCL watchdog timeout at 745, then relaunched
         from global_step700 into train.resume.log (steps 701-745 appear in both). Eval pass@1 on MATH-500 (every
         50) rises 0.40 -> 0.66 by 700 and holds to 900. From 900 response lengths climb 1800 -> ~4050 against the
         4096 cap, truncation 2 % -> 55 %, train reward 0.62 -> ~0.36 and eval pass@1 0.66 -> ~0.48 at 1150. Live.
         The best model is the plateau, newest at 900: rollback."""),
    Spec("rb-hand-loop-csv-60-iters-lr-1e-5-val-peaks-20-30-then-collapses-grad-spikes", Z,
         write_Z, 2636, (60, 300), "rb", onset=30,
         tags="rollback custom csv short-run lr-too-high collapse live",
         why="""A plain PyTorch GRPO loop writing log.csv (iter, avg_reward, frac_solved_groups, mean_gen_len,
         kl_to_ref, grad_norm, lr, val_pass_rate every 5 iterations on 200 problems), 60 of 300 iterations
         (run_config.json). With lr 1e-5 the model learns fast (val 0.20 -> 0.44 by iteration 22, held to 30) and
         then breaks: grad norm 0.6 -> ~9 with spikes, KL 0.06 -> 0.6, generations loop to the 1024 cap, avg reward
         0.45 -> ~0.08 and val 0.44 -> ~0.10 at 60. A better model lies behind, at iterations 20-30: rollback."""),
    Spec("rb-hf-tb-nan-loss-grad-rows-1410-1430-metrics-return-at-lower-level-eval-down-6sd", AA,
         W(w_hf_tb, fns=ACC, efns=EACC), 2627, (1650, 3000), "rb", onset=1401,
         tags="rollback trl grpo tensorboard nan-stretch partial-recovery live",
         why="""TRL GRPO in TensorBoard, logging every 10, eval every 100 (500 prompts). train/loss and
         train/grad_norm are NaN on the 1410, 1420 and 1430 rows; from 1440 they are finite again, which looks like
         a recovered stretch, but the model came out of it damaged: train reward 0.68 -> ~0.52, eval accuracy 0.63
         (plateau 1000-1400) -> ~0.50 at 1500 and 1600 (6 sd), entropy 0.30 -> 0.55, lengths 560 -> 760, and no
         sign of climbing back in 200 steps. The best model is the plateau before the NaN stretch, newest eval at
         1400: rollback."""),
    Spec("rb-wandb-csv-rloo-rm-score-rising-heldout-judge-winrate-peak-1400-1800-slides-3.6sd-at-2600", AB,
         W(w_wandb_csv, display="rloo-llama3.1-8b-hh", panels={
             "r:task": "train/reward", "e:winrate": "eval/heldout_judge_winrate", "kl": "train/kl",
             "len": "train/completions/mean_length", "entropy": "train/entropy", "lr": "train/learning_rate"}),
         2628, (2600, 4000), "rb", onset=1800,
         tags="rollback trl rloo wandb-csv reward-model-overoptimisation eval-cadence",
         why="""W&B panel exports of a TRL RLOO run (GRPO-style keys, beta 0.05) against a learned reward model,
         with a judge win rate against the reference on 800 held-out prompts logged by a callback every 200 steps
         as eval/heldout_judge_winrate. The RM score keeps climbing -0.2 -> 2.1 and KL 0 -> 0.45 with lengths 280 ->
         520, but the judge win rate peaks at 0.655-0.66 over 1400-1800 and slides to 0.60 by 2600 (3.6 sd of one
         eval). Classic reward-model over-optimisation: the better model is behind, newest at 1800: rollback."""),
]

CASES = [s.case() for s in SPECS]
SPEC = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = SPEC[case.name]
    run = make_run(spec.story, case.seed, case.reached, case.planned or case.reached)
    folder.mkdir(parents=True, exist_ok=True)
    mt = case.write(run, folder) or {}
    apply_mtimes(folder, run["clock"].end, mt)


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = SPEC[c.name]
        st = spec.story
        steps = st.headline_steps(c.reached)
        lv = {s: float(st.headline_level(s)) for s in steps}
        best_s = max(steps, key=lambda s: lv[s])
        sd = st.headline_sd(best_s)
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')}")
        print(f"    headline {st.headline}: best {lv[best_s]:.3f}@{best_s} last {lv[steps[-1]]:.3f}@{steps[-1]} "
              f"sd {sd:.4f} ({(lv[best_s] - lv[steps[-1]]) / sd:.1f} sd below best); {len(steps)} headline points")
        run = make_run(st, c.seed, c.reached, c.planned or c.reached)
        if st.headline.startswith("e:"):
            pts = [(s, e[st.headline[2:]]) for s, e in run["eval"] if st.headline[2:] in e]
        else:
            key = "reward" if st.headline == "reward" else st.headline
            pts = [(s, v[key]) for s, v in run["train"]]
        pick = pts[:: max(1, len(pts) // 12)]
        print("    drawn " + " ".join(f"{s}:{x:.3f}" for s, x in pick) + f" | last {pts[-1][0]}:{pts[-1][1]:.3f}")


HEADER = """# Holdout set 26: hand-built runs written by make_holdout26.py, independent of the assessor, its judges and
# the generators of the other holdout sets. Aimed at messy logs: resumes (replayed steps, second log / event files,
# overwritten file logger, rewound counters), live files with torn tails, late-appearing metrics, evals on their
# own cadence, unusual headline names, recoverable vs fatal NaN, LR warm-up / cosine-to-zero / re-warm, very short
# and very long runs, finished runs with and without end markers, and side-signal-only failures next to their
# healthy look-alikes. Labels: what a careful practitioner should do under DESIGN.md's decision contract, read
# from each story's noise-free levels. rollback_window is inclusive: from the first logged headline step whose
# level is within one sampling sd of the best level to the newest such step not after onset_step, in the run's own
# logged step units. Run `.venv/bin/python evals/holdout26/make_holdout26.py` to write runs/ (gitignored);
# `--check` prints levels and windows.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout26.py", "holdout26.yaml", "h26-", "holdout26", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
