"""Holdout set 17: blind-labelled RL post-training runs in real on-disk formats, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout17/make_holdout17.py           # writes runs/ (gitignored) and holdout17.yaml
    .venv/bin/python evals/holdout17/make_holdout17.py --check   # also prints levels and rollback windows

Every case is a story told as noise-free levels per optimiser step (`path`: piecewise curves with optional bends)
for the train reward, the held-out evals and the side signals. The levels are drawn through this set's noise model
and written the way one framework (and version) writes them.

Noise model (this set's own):
  * prompt difficulty: every prompt of a batch gets a solve rate sigmoid(mu + s*z), z ~ N(0, 1), with mu chosen
    so that the mean solve rate equals the level (logit-normal spread s per story);
  * binary rewards: G Bernoulli rollouts per prompt, P prompts per batch; the batch mean, the rollout std, the
    share of groups whose rollouts all agree (and whether they all failed / all passed) come from the same draws.
    Trainers that average between logs (TRL / HF, some custom loops) log the mean of the `log_every` batches,
    OpenRLHF logs the current batch only;
  * reward components: each component drawn per rollout (binary, partial credit Binomial(4, q)/4, continuous
    model scores with a prompt effect plus sample noise, or exactly zero), the total is their weighted sum;
  * preference (DPO) batches: per pair an implicit reward margin N(m, spread) with m = spread * Phi^-1(acc);
    accuracies, margins, chosen/rejected rewards and the sigmoid loss all come from the same pairs;
  * held-out evals: accuracy evals are means over N problems (solve rate logit-normal around the level) with k
    samples each; for k = 1 this is exactly Binomial(N, level) / N. Score evals are means of N normal scores;
  * grad norm: level * exp(0.3 * N(0, 1)), times 1 + Pareto(1.2) on about one step in 35 (heavy right tail),
    plus explicit spikes where the story has them;
  * KL, entropy, lengths, clip and truncation rates, timings: AR(1) log-normal wobble (rho 0.5, 3-8 %);
    signed signals get additive AR(1) noise.

Labels follow DESIGN.md ("What the three decisions mean") and are decided from each story's noise-free levels,
never from a tool. The rollback window runs from the first logged headline step whose level is within one
sampling sd of the best level (the sd of one eval for an eval headline, of one logged value for a train headline)
to the newest such step not after the onset of the breakage; `--check` prints them.
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
from dataclasses import dataclass, field, replace
from functools import cache
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
Level = Callable[[float], float]
TRAIN = "@train"


# ------------------------------------------------------------------------------------------------------ the levels

def path(y0: float, *segs: tuple) -> Level:
    """Piecewise curve from (0, y0) through (x, y[, bend]) points; bend > 0 rises fast then eases (concave),
    bend < 0 starts slow (convex), 0 is a straight line. Flat after the last point."""
    xs, ys, bends = [0.0], [float(y0)], []
    for seg in segs:
        xs.append(float(seg[0]))
        ys.append(float(seg[1]))
        bends.append(float(seg[2]) if len(seg) > 2 else 0.0)

    def f(s: float) -> float:
        if s <= xs[0]:
            return ys[0]
        for i in range(1, len(xs)):
            if s <= xs[i]:
                t = (s - xs[i - 1]) / (xs[i] - xs[i - 1])
                b = bends[i - 1]
                if b:
                    t = (1 - math.exp(-b * t)) / (1 - math.exp(-b))
                return ys[i - 1] + (ys[i] - ys[i - 1]) * t
        return ys[-1]

    return f


def const(v: float) -> Level:
    return lambda s: v


def warm_const(peak: float, warm: int) -> Level:
    return lambda s: peak * min(1.0, s / warm) if warm else peak


def warm_cosine(peak: float, warm: int, total: int, floor: float = 0.0) -> Level:
    def f(s: float) -> float:
        if s < warm:
            return peak * s / warm
        t = min(1.0, (s - warm) / max(1, total - warm))
        return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * t))
    return f


def warm_linear(peak: float, warm: int, total: int) -> Level:
    def f(s: float) -> float:
        if s < warm:
            return peak * s / warm
        return peak * max(0.0, (total - s) / (total - warm))
    return f


# ------------------------------------------------------------------------------------------------ the noise model

_GX, _GW = np.polynomial.hermite_e.hermegauss(48)
_GW = _GW / _GW.sum()


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


@cache
def _offset(level: float, spread: float) -> float:
    """mu such that E[sigmoid(mu + spread * z)] == level."""
    level = min(max(level, 1e-5), 1 - 1e-5)
    lo, hi = -40.0, 40.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if float(np.sum(_GW * _sig(mid + spread * _GX))) < level:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@cache
def _moments(level: float, spread: float) -> tuple[float, float]:
    """(Var of the per-prompt solve rate, E[p (1 - p)]) at this level."""
    p = _sig(_offset(round(level, 6), spread) + spread * _GX)
    m = float(np.sum(_GW * p))
    return float(np.sum(_GW * (p - m) ** 2)), float(np.sum(_GW * p * (1 - p)))


def solve_rates(rng: np.random.Generator, level: float, spread: float, n: int) -> np.ndarray:
    return _sig(_offset(round(min(max(level, 1e-5), 1 - 1e-5), 6), spread) + spread * rng.normal(size=n))


def phi_inv(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    lo, hi = -8.0, 8.0
    for _ in range(70):
        mid = (lo + hi) / 2
        if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@dataclass
class Binary:
    """0/1 verifier reward over P prompts x G rollouts."""
    level: Level
    P: int = 32
    G: int = 8
    spread: float = 1.4

    def batch(self, rng, s) -> dict:
        p = solve_rates(rng, self.level(s), self.spread, self.P)
        x = (rng.random((self.P, self.G)) < p[:, None]).astype(float)
        return group_stats(x)

    def sd(self, lv: float, n_batches: int) -> float:
        var_p, epq = _moments(round(lv, 6), self.spread)
        return math.sqrt((var_p / self.P + epq / (self.P * self.G)) / n_batches)


def group_stats(x: np.ndarray, total: np.ndarray | None = None) -> dict:
    t = x if total is None else total
    same = t.std(axis=1) == 0
    return dict(reward=float(t.mean()), reward_std=float(t.std()), group_std=float(t.std(axis=1).mean()),
                zero_std=float(same.mean()), all_fail=float((same & (t[:, 0] <= 0)).mean()),
                all_pass=float((same & (t[:, 0] >= t.max())).mean() if t.max() > 0 else 0.0))


@dataclass
class Part:
    name: str
    level: Level
    kind: str = "binary"  # binary | partial | score | zero
    weight: Level = field(default_factory=lambda: const(1.0))
    spread: float = 1.4
    prompt_sd: float = 0.06
    sample_sd: float = 0.08


@dataclass
class Parts:
    """A reward that is a weighted sum of components, every component drawn per rollout."""
    parts: list[Part]
    P: int = 32
    G: int = 8

    def level(self, s) -> float:
        return sum(p.weight(s) * p.level(s) for p in self.parts)

    def draw_part(self, rng, part: Part, s: float, n: int, g: int) -> np.ndarray:
        lv = part.level(s)
        if part.kind == "zero":
            return np.zeros((n, g))
        if part.kind == "score":
            return lv + part.prompt_sd * rng.normal(size=(n, 1)) + part.sample_sd * rng.normal(size=(n, g))
        q = solve_rates(rng, lv, part.spread, n)
        if part.kind == "partial":
            return rng.binomial(4, np.repeat(q[:, None], g, axis=1)) / 4.0
        return (rng.random((n, g)) < q[:, None]).astype(float)

    def batch(self, rng, s) -> dict:
        total = np.zeros((self.P, self.G))
        out = {}
        for part in self.parts:
            x = self.draw_part(rng, part, s, self.P, self.G)
            total += part.weight(s) * x
            out[f"comp/{part.name}/mean"] = float(x.mean())
            out[f"comp/{part.name}/std"] = float(x.std())
        out.update(group_stats(total, total))
        return out


@dataclass
class KeptGroups:
    """DAPO dynamic sampling: generate rounds of P prompts x G until `target` mixed groups are kept. The logged
    score is the +-1 score of the kept groups only; the rounds needed are logged as num_gen_batches."""
    level: Level
    P: int = 64
    G: int = 16
    spread: float = 3.0
    max_rounds: int = 10

    def batch(self, rng, s) -> dict:
        kept, rounds = [], 0
        while sum(len(k) for k in kept) < self.P and rounds < self.max_rounds:
            rounds += 1
            p = solve_rates(rng, self.level(s), self.spread, self.P)
            x = (rng.random((self.P, self.G)) < p[:, None]).astype(float)
            kept.append(x[x.std(axis=1) > 0])
        k = np.concatenate(kept)[: self.P]
        sc = 2 * k - 1
        return dict(reward=float(sc.mean()), reward_std=float(sc.std()), gen_batches=float(rounds),
                    group_std=float(sc.std(axis=1).mean()), zero_std=0.0)


@dataclass
class Pref:
    """DPO pairs: margin ~ N(spread * Phi^-1(acc), spread); chosen ~ N(chosen level, spread / 2)."""
    acc: Level
    spread: Level
    chosen: Level
    B: int = 32

    def pairs(self, rng, s, n) -> dict:
        sp = self.spread(s)
        m = sp * phi_inv(self.acc(s))
        margin = m + sp * rng.normal(size=n)
        chosen = self.chosen(s) + 0.5 * sp * rng.normal(size=n)
        return dict(acc=float((margin > 0).mean()), margin=float(margin.mean()), chosen=float(chosen.mean()),
                    rejected=float((chosen - margin).mean()),
                    loss=float(np.mean(np.logaddexp(0.0, -margin))))

    def batch(self, rng, s) -> dict:
        d = self.pairs(rng, s, self.B)
        return {"reward": d["acc"], **{"dpo/" + k: v for k, v in d.items()}}


# ------------------------------------------------------------------------------------------------------ the evals

@dataclass
class Acc:
    """Accuracy over n problems, k samples each; keys: mean (headline) and optional best / maj / std / alias."""
    level: Level
    n: int
    keys: dict
    k: int = 1
    spread: float = 1.5

    @property
    def name(self) -> str:
        return self.keys["mean"]

    def draw(self, rng, s) -> dict:
        lv = self.level(s)
        if self.k == 1:
            mean = rng.binomial(self.n, min(max(lv, 0.0), 1.0)) / self.n
            out = {"mean": mean}
        else:
            p = solve_rates(rng, lv, self.spread, self.n)
            c = rng.binomial(self.k, p)
            out = {"mean": float((c / self.k).mean()), "best": float((c > 0).mean()),
                   "maj": float((c > self.k / 2).mean()), "std": float(np.sqrt((c / self.k) * (1 - c / self.k)).mean())}
        res = {self.keys[k]: v for k, v in out.items() if k in self.keys}
        for alias in self.keys.get("alias", []):
            res[alias] = out["mean"]
        return res

    def sd(self, lv: float) -> float:
        if self.k == 1:
            return math.sqrt(max(lv * (1 - lv), 1e-9) / self.n)
        var_p, epq = _moments(round(lv, 6), self.spread)
        return math.sqrt(var_p / self.n + epq / (self.n * self.k))


@dataclass
class Mean:
    """Mean of n per-item scores with per-item sd `item_sd` (chrF, judge scores)."""
    level: Level
    n: int
    item_sd: float
    key: str

    @property
    def name(self) -> str:
        return self.key

    def draw(self, rng, s) -> dict:
        return {self.key: float(rng.normal(self.level(s), self.item_sd / math.sqrt(self.n)))}

    def sd(self, lv: float) -> float:
        return self.item_sd / math.sqrt(self.n)


@dataclass
class PartsEval:
    """Held-out eval of a component reward: every component's mean and the weighted total."""
    parts: Parts
    n: int
    k: int
    keys: dict  # "total" and component names -> key
    headline_part: str

    @property
    def name(self) -> str:
        return self.keys[self.headline_part]

    def draw(self, rng, s) -> dict:
        out, total = {}, 0.0
        for part in self.parts.parts:
            x = self.parts.draw_part(rng, part, s, self.n, self.k)
            total += part.weight(s) * float(x.mean())
            if part.name in self.keys:
                out[self.keys[part.name]] = float(x.mean())
        if "total" in self.keys:
            out[self.keys["total"]] = total
        return out

    def level_of(self, s) -> float:
        return next(p for p in self.parts.parts if p.name == self.headline_part).level(s)

    def sd(self, lv: float) -> float:
        part = next(p for p in self.parts.parts if p.name == self.headline_part)
        if part.kind == "zero":
            return 0.0
        var_p, epq = _moments(round(min(max(lv, 1e-4), 1 - 1e-4), 6), part.spread)
        return math.sqrt(var_p / self.n + epq / (self.n * self.k))


@dataclass
class PrefEval:
    pref: Pref
    n: int
    keys: dict  # acc, margin, chosen, rejected, loss -> key

    @property
    def name(self) -> str:
        return self.keys["acc"]

    def draw(self, rng, s) -> dict:
        d = self.pref.pairs(rng, s, self.n)
        return {self.keys[k]: v for k, v in d.items() if k in self.keys}

    def sd(self, lv: float) -> float:
        return math.sqrt(lv * (1 - lv) / self.n)


def eval_level(ev, s) -> float:
    if isinstance(ev, PartsEval):
        return ev.level_of(s)
    if isinstance(ev, PrefEval):
        return ev.pref.acc(s)
    return ev.level(s)


# ------------------------------------------------------------------------------------------------ side signals

@dataclass
class Sig:
    level: Level
    sd: float = 0.05
    mode: str = "mult"  # mult | add | exact | grad | int
    rho: float = 0.5
    spikes: dict = field(default_factory=dict)


def draw_sig(rng, sig: Sig, s: int, state: dict, name: str) -> float:
    lv = sig.level(s)
    if s in sig.spikes:
        return float(sig.spikes[s])
    if sig.mode == "exact":
        return lv
    if sig.mode == "int":
        return float(1 + rng.poisson(max(lv - 1, 0.0)))
    if sig.mode == "grad":
        g = lv * math.exp(0.3 * rng.normal())
        if rng.random() < 1 / 35:
            g *= 1 + rng.pareto(1.2)
        return g
    e = sig.rho * state.get(name, 0.0) + math.sqrt(1 - sig.rho ** 2) * rng.normal()
    state[name] = e
    return lv * math.exp(sig.sd * e) if sig.mode == "mult" else lv + sig.sd * e


def g(v: float, digits: int = 7) -> float:
    return float(f"{v:.{digits}g}")


# ------------------------------------------------------------------------------------------------------ the story

@dataclass
class Story:
    reward: object  # Binary | Parts | KeptGroups | Pref
    evals: list
    headline: str  # an eval's key, or TRAIN
    keymap: dict  # canonical name -> framework key
    sides: dict[str, Sig] = field(default_factory=dict)  # canonical side signals
    extra: dict[str, Sig] = field(default_factory=dict)  # framework keys, drawn as they are
    log_every: int = 1
    averaged: bool = True  # mean of the batches since the last log (TRL/HF); False = the current batch only
    eval_every: int = 50
    eval_at_0: bool = False
    cap: int = 1024  # max generation length
    prompt_len: int = 180
    beta: float = 0.0
    age_h: float = 0.05
    sps: float = 60.0  # wall seconds per optimiser step
    start: int = 0  # first step of this (segment of the) run

    # ------------------------------------------------------------------ draws
    def log_steps(self, reached: int) -> list[int]:
        first = (self.start // self.log_every + 1) * self.log_every
        return list(range(first, reached + 1, self.log_every))

    def eval_steps(self, reached: int) -> list[int]:
        if not self.evals:
            return []
        first = 0 if self.eval_at_0 else self.eval_every
        return [s for s in range(first, reached + 1, self.eval_every) if s > self.start or (s == 0 and not self.start)]

    def draws(self, rng: np.random.Generator, reached: int) -> dict:
        state: dict = {}
        tokens = 0.0
        train = []
        for s in self.log_steps(reached):
            window = range(s - self.log_every + 1, s + 1) if self.averaged else [s]
            bs = [self.reward.batch(rng, j) for j in window]
            v = {k: float(np.mean([b[k] for b in bs])) for k in bs[0]}
            for name, sig in self.sides.items():
                v[name] = draw_sig(rng, sig, s, state, name)
            if "len" in v:
                ln, cap = v["len"], self.cap
                tr = min(max(v.get("trunc", 0.0), 0.0), 1.0)
                v["trunc"] = tr
                v["len"] = ln = min(ln, cap)
                v["len_min"] = float(max(3, round(ln * 0.18 * math.exp(0.2 * rng.normal()))))
                v["len_max"] = float(cap if tr > 0.004 else min(cap, round(ln * 2.4 * math.exp(0.1 * rng.normal()))))
                v["len_term"] = float(max(v["len_min"], (ln - tr * cap) / (1 - tr))) if tr < 0.999 else 0.0
                n_seq = getattr(self.reward, "P", 32) * getattr(self.reward, "G", 1) * len(window)
                tokens += n_seq * (ln + self.prompt_len)
                v["num_tokens"] = float(round(tokens))
            if "clip_region" in v:
                v["clip_low"] = v["clip_region"] * 0.42
                v["clip_high"] = v["clip_region"] * 0.58
                v["clip_low_min"] = 0.0
                v["clip_high_max"] = min(1.0, v["clip_region"] * 4.1)
            if "all_fail" in v:
                v["pct0"], v["pct1"] = 100 * v["all_fail"], 100 * v["all_pass"]
                v["pct_mixed"] = 100 - v["pct0"] - v["pct1"]
            if "kl" in v:
                v["loss"] = round(self.beta * v["kl"] + 0.004 * rng.normal(), 4)
            elif "dpo/loss" in v:
                v["loss"] = round(v["dpo/loss"], 4)
            else:
                v["loss"] = round(0.004 * rng.normal(), 4)
            out = {}
            for canon, val in v.items():
                if canon.startswith("comp/") and "comp" in self.keymap:
                    _, fn, stat = canon.split("/")
                    out[self.keymap["comp"].format(fn=fn, stat=stat)] = g(val)
                elif canon in self.keymap:
                    keys = self.keymap[canon]
                    for key in keys if isinstance(keys, list) else [keys]:
                        out[key] = g(val)
            for key, sig in self.extra.items():
                out[key] = g(draw_sig(rng, sig, s, state, key))
            train.append((s, out))
        evals = []
        for s in self.eval_steps(reached):
            row = {}
            for ev in self.evals:
                row.update({k: g(x) for k, x in ev.draw(rng, s).items()})
            evals.append((s, row))
        return dict(train=train, evals=evals)

    # ------------------------------------------------------------------ labels
    def headline_eval(self):
        return next(e for e in self.evals if e.name == self.headline)

    def headline_level(self, s: float) -> float:
        if self.headline == TRAIN:
            return self.reward.level(s)
        return eval_level(self.headline_eval(), s)

    def headline_steps(self, reached: int) -> list[int]:
        return self.log_steps(reached) if self.headline == TRAIN else self.eval_steps(reached)

    def headline_sd(self, lv: float) -> float:
        if self.headline == TRAIN:
            return self.reward.sd(lv, self.log_every if self.averaged else 1)
        return self.headline_eval().sd(lv)


def window(story: Story, reached: int, onset: int) -> tuple[int, int]:
    steps = story.headline_steps(reached)
    best = max(story.headline_level(s) for s in steps)
    sd = story.headline_sd(best)
    good = [s for s in steps if story.headline_level(s) >= best - sd]
    return good[0], max(s for s in good if s <= onset)


# ------------------------------------------------------------------------------------------------------ vocabularies

TRL_BASE = {"reward": "reward", "reward_std": "reward_std", "len": "completions/mean_length",
            "len_min": "completions/min_length", "len_max": "completions/max_length",
            "len_term": "completions/mean_terminated_length", "trunc": "completions/clipped_ratio",
            "grad": "grad_norm", "lr": "learning_rate", "loss": "loss", "num_tokens": "num_tokens",
            "comp": "rewards/{fn}/{stat}", "clip_low": "clip_ratio/low_mean", "clip_low_min": "clip_ratio/low_min",
            "clip_high": "clip_ratio/high_mean", "clip_high_max": "clip_ratio/high_max",
            "clip_region": "clip_ratio/region_mean"}
TRL017 = {**TRL_BASE, "kl": "kl"}
TRL018 = {**TRL017, "zero_std": "frac_reward_zero_std"}
TRL020 = {**TRL018, "entropy": "entropy"}
TRL1X = {**TRL020, "step_time": "step_time"}
DPO_OLD = {"dpo/chosen": "rewards/chosen", "dpo/rejected": "rewards/rejected", "dpo/acc": "rewards/accuracies",
           "dpo/margin": "rewards/margins", "grad": "grad_norm", "lr": "learning_rate", "loss": "loss"}
DPO_029 = {**DPO_OLD, "entropy": "entropy", "num_tokens": "num_tokens"}
VERL = {"reward": ["critic/score/mean", "critic/rewards/mean"], "kl": "actor/kl_loss", "entropy": "actor/entropy",
        "len": "response_length/mean", "len_max": "response_length/max", "len_min": "response_length/min",
        "trunc": "response_length/clip_ratio", "grad": "actor/grad_norm", "lr": "actor/lr",
        "clip_region": "actor/pg_clipfrac", "step_time": "timing_s/step", "gen_batches": "train/num_gen_batches"}
OPENRLHF = {"reward": "reward", "group_std": "group_reward_std", "kl": "kl", "len": "response_length",
            "trunc": "truncated", "grad": "actor_grad_norm", "lr": "actor_lr", "clip_region": "ppo_clip_ratio",
            "step_time": "timing/step_total"}
NEMO = {"reward": "train/reward", "kl": "train/kl_penalty", "entropy": "train/approx_entropy",
        "len": "train/mean_gen_tokens_per_sample", "len_max": "train/max_gen_tokens_per_sample",
        "trunc": "train/truncation_rate", "grad": "train/grad_norm", "lr": "train/lr", "loss": "train/loss",
        "step_time": "timing/train/total_step_time", "pct0": "train/baseline_reward/pct_0",
        "pct1": "train/baseline_reward/pct_1", "pct_mixed": "train/baseline_reward/pct_mixed"}


# ------------------------------------------------------------------------------------------------------ file helpers

def hms(sec: float) -> str:
    sec = int(sec)
    h, r = divmod(sec, 3600)
    m, s = divmod(r, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def bar(n: int, total: int, sps: float, width: int = 10) -> str:
    frac = n / total if total else 0.0
    full = int(frac * width)
    b = "█" * full + ("▌" if frac * width - full >= 0.5 and full < width else "")
    return (f"{int(frac * 100):3d}%|{b:<{width}}| {n}/{total} [{hms(n * sps)}<{hms((total - n) * sps)}, "
            f"{sps:.2f}s/it]")


def tstr(t: float, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    return time.strftime(fmt, time.localtime(t))


def end_time(run: dict) -> float:
    return NOW - run["age_h"] * 3600


def t_of(run: dict, s: float) -> float:
    return end_time(run) - (run["reached"] - s) * run["sps"]


def placeholder(p: Path, text: str = "") -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def stamp(folder: Path, run: dict) -> None:
    """mtimes: checkpoint folders at their save step, everything else at the newest write."""
    for p in sorted(folder.rglob("*"), key=lambda q: -len(q.parts)):
        t = end_time(run)
        for part in p.relative_to(folder).parts:
            for pre in ("checkpoint-", "global_step_", "global_step", "step_"):
                if part.startswith(pre) and part[len(pre):].split(".")[0].isdigit():
                    t = t_of(run, int(part[len(pre):].split(".")[0]))
        os.utime(p, (t, t))


def merged(run: dict) -> list[tuple[int, str, dict]]:
    rows = [(s, "train", v) for s, v in run["train"]] + [(s, "eval", v) for s, v in run["evals"]]
    return sorted(rows, key=lambda r: (r[0], r[1] == "eval"))


# ------------------------------------------------------------------------------------------------------ TRL / HF

def trl_history(run: dict, spe: int, eval_timing: bool = True, upto: int | None = None) -> list[dict]:
    rows = []
    for s, kind, v in merged(run):
        if upto is not None and s > upto:
            continue
        row = dict(v)
        if kind == "eval" and eval_timing:
            row.update(eval_runtime=round(140 + 9 * math.sin(s), 3), eval_samples_per_second=round(3.4 + 0.1 * math.cos(s), 3),
                       eval_steps_per_second=round(0.107 + 0.003 * math.cos(s), 3))
        row.update(epoch=round(s / spe, 4), step=s)
        rows.append(row)
    return rows


def w_trl_state(run: dict, folder: Path, save_every: int | None, keep: int | None = None, logging: int = 10,
                spe: int = 0, epochs: int = 1, out: str = "outputs/run", best: tuple[str, bool] | None = None,
                eval_timing: bool = True, lora: bool = False) -> None:
    """HF output_dir: checkpoint-N/trainer_state.json (rotated by save_total_limit, the best one protected), and
    a top-level trainer_state.json only when the script called save_state() at the end of a finished run."""
    planned, reached = run["planned"], run["reached"]
    spe = spe or planned
    ev_steps = run["eval_every"] or None
    finished = run.get("finished", False)
    saves = list(range(save_every, reached + 1, save_every)) if save_every else []
    kept: list[int] = []
    best_step, best_val = None, None
    for n in saves:
        if best:
            key, greater = best
            vals = [v[key] for s, v in run["evals"] if s == n and key in v]
            if vals and (best_val is None or (vals[0] > best_val if greater else vals[0] < best_val)):
                best_step, best_val = n, vals[0]
        st = trainer_state(trl_history(run, spe, eval_timing, upto=n), n, planned, logging, save_every, ev_steps,
                           round(n / spe, 4), epochs)
        if best and best_step is not None:
            st.update(best_metric=best_val, best_global_step=best_step,
                      best_model_checkpoint=f"{out}/checkpoint-{best_step}")
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        if lora:
            placeholder(ck / "adapter_config.json", '{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n')
            placeholder(ck / "adapter_model.safetensors", "")
        else:
            placeholder(ck / "config.json", '{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}\n')
            placeholder(ck / "model.safetensors.index.json", '{"metadata": {"total_size": 0}, "weight_map": {}}\n')
        for name in ("optimizer.pt", "scheduler.pt", "rng_state.pth", "training_args.bin"):
            placeholder(ck / name, "")
        kept.append(n)
        if keep:
            order = sorted(kept)
            if best_step is not None and best_step in order and order[-1] != best_step:
                order.remove(best_step)
                order.insert(len(order) - 1, best_step)
            for old in order[: max(0, len(order) - keep)]:
                kept.remove(old)
                for p in sorted((folder / f"checkpoint-{old}").rglob("*"), reverse=True):
                    p.unlink()
                (folder / f"checkpoint-{old}").rmdir()
    if finished:
        hist = trl_history(run, spe, eval_timing)
        hist.append(dict(epoch=round(reached / spe, 4), step=reached, total_flos=0.0, train_loss=0.0021,
                         train_runtime=round(reached * run["sps"], 2),
                         train_samples_per_second=round(64 / run["sps"], 3),
                         train_steps_per_second=round(1 / run["sps"], 4)))
        st = trainer_state(hist, reached, planned, logging, save_every or 500, ev_steps, round(reached / spe, 4), epochs,
                           training_stop=True)
        dump_json(folder / "trainer_state.json", st)
        placeholder(folder / "config.json", '{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}\n')
        placeholder(folder / "generation_config.json", '{"do_sample": true, "temperature": 0.7}\n')
        placeholder(folder / "model-00001-of-00002.safetensors", "")
        placeholder(folder / "model-00002-of-00002.safetensors", "")
        placeholder(folder / "training_args.bin", "")


def trl_launch(planned: int, examples: int, t: float, resume: int | None = None) -> list[str]:
    out = [f"[{tstr(t - 150)},902] [INFO] [real_accelerator.py:260:get_accelerator] "
           "Setting ds_accelerator to cuda (auto detect)",
           f"INFO {tstr(t - 121, '%m-%d %H:%M:%S')} [__init__.py:244] Automatically detected platform cuda.",
           f"INFO {tstr(t - 43, '%m-%d %H:%M:%S')} [llm.py:283] Supported_tasks: ['generate']",
           "***** Running training *****",
           f"  Num examples = {examples:,}",
           "  Num Epochs = 1",
           "  Instantaneous batch size per device = 8",
           "  Total train batch size (w. parallel, distributed & accumulation) = 128",
           "  Gradient Accumulation steps = 4",
           f"  Total optimization steps = {planned:,}",
           "  Number of trainable parameters = 1,543,714,304"]
    if resume is not None:
        out += ["  Continuing training from checkpoint, will skip to saved global_step",
                "  Continuing training from epoch 0",
                f"  Continuing training from global step {resume}",
                f"  Will skip the first 0 epochs then the first {resume * 4} batches in the first epoch."]
    return out


TRL_ORDER = ["loss", "grad_norm", "learning_rate", "num_tokens", "completions/mean_length", "completions/min_length",
             "completions/max_length", "completions/clipped_ratio", "completions/mean_terminated_length", "rewards/",
             "reward", "reward_std", "frac_reward_zero_std", "kl", "entropy", "clip_ratio/low_mean", "clip_ratio/low_min",
             "clip_ratio/high_mean", "clip_ratio/high_max", "clip_ratio/region_mean", "step_time"]


def trl_order(d: dict) -> dict:
    def rank(k: str) -> int:
        for i, o in enumerate(TRL_ORDER):
            if k == o or (o.endswith("/") and k.startswith(o)):
                return i
        return len(TRL_ORDER)
    return {k: d[k] for k in sorted(d, key=rank)}


def console_dicts(run: dict, rows: list, planned: int, spe: int, sps: float) -> list[str]:
    lines = []
    for s, kind, v in rows:
        d = trl_order(dict(v))
        if kind == "eval":
            lines.append(f"100%|██████████| 16/16 [02:{10 + s % 40:02d}<00:00,  8.{s % 9}1s/it]")
            d.update(eval_runtime=round(131.2 + s % 17, 4), eval_samples_per_second=0.976, eval_steps_per_second=0.122)
        else:
            lines.append(bar(s, planned, sps))
        d["epoch"] = round(s / spe, 2)
        lines.append(repr(d))
    return lines


def w_trl_console(run: dict, folder: Path, examples: int = 8000, name: str = "train.log", resume_from: int = 0,
                  ckpt_dir: str = "/mnt/ckpt/run") -> None:
    """TRL stdout: the Trainer banner, tqdm bars and one printed dict per log (no step: the bar carries it).
    With `resume_from`, the first launch logged the ghost steps, died with a traceback, and a second launch
    resumed from checkpoint-`resume_from` (its steps after that point appear twice)."""
    planned, sps = run["planned"], run["sps"]
    spe = planned
    lines = trl_launch(planned, examples, t_of(run, 0))
    if resume_from:
        ghost = run["ghost"]
        first = [(s, k, v) for s, k, v in merged(run) if s <= resume_from]
        first += merged(dict(train=ghost["train"], evals=ghost["evals"]))
        lines += console_dicts(run, first, planned, spe, sps)
        crash = ghost["train"][-1][0] + 7
        lines += [bar(crash, planned, sps),
                  "Traceback (most recent call last):",
                  '  File "/workspace/rl/train_grpo.py", line 142, in <module>',
                  "    trainer.train(resume_from_checkpoint=args.resume)",
                  '  File "/opt/conda/lib/python3.11/site-packages/transformers/trainer.py", line 2240, in train',
                  "    return inner_training_loop(",
                  '  File "/opt/conda/lib/python3.11/site-packages/trl/trainer/grpo_trainer.py", line 1187, in '
                  "_generate_and_score_completions",
                  "    logits = self._get_per_token_logps_and_entropies(",
                  "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.71 GiB. GPU 3 has a total capacity "
                  "of 79.19 GiB of which 2.12 GiB is free. Including non-PyTorch memory, this process has 77.05 GiB "
                  "memory in use.",
                  f"[rank3]:[W{tstr(t_of(run, crash), '%m%d %H:%M:%S')}.412553] ProcessGroupNCCL.cpp:1479] Warning: WARNING: process group has NOT "
                  "been destroyed before we destruct ProcessGroupNCCL.",
                  f"E{tstr(t_of(run, crash) + 4, '%m%d %H:%M:%S')}.118000 4126 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: "
                  "1) local_rank: 3 (pid: 4130) of binary: /opt/conda/bin/python",
                  f"# relaunched by run.sh: --resume {ckpt_dir}/checkpoint-{resume_from} --per_device_train_batch_size 8 "
                  "--gradient_checkpointing true"]
        lines += trl_launch(planned, examples, t_of(run, crash) + 300, resume=resume_from)
        lines += console_dicts(run, [r for r in merged(run) if r[0] > resume_from], planned, spe, sps)
    else:
        lines += console_dicts(run, merged(run), planned, spe, sps)
    if run.get("finished"):
        lines.append(repr(dict(train_runtime=round(run["reached"] * sps, 1), train_samples_per_second=2.1,
                               train_steps_per_second=round(1 / sps, 3), train_loss=0.0031, epoch=1.0)))
    (folder / name).write_text("\n".join(lines) + "\n")


def hf_tags(v: dict, kind: str) -> dict:
    """transformers' rewrite_logs: eval_X -> eval/X, everything else -> train/X."""
    if kind == "eval":
        return {"eval/" + k.removeprefix("eval_"): x for k, x in v.items()}
    return {"train/" + k: x for k, x in v.items()}


def w_hf_tb(run: dict, folder: Path, host: str = "gpu-node-7", resume_at: int | None = None, spe: int = 0,
            launcher: Callable | None = None) -> None:
    """HF TensorBoard callback: runs/<MonDD_HH-MM-SS>_<host>/events...; a relaunch opens a new runs/ folder."""
    spe = spe or run["planned"]
    segs = [(0, resume_at or run["reached"])] + ([(resume_at, run["reached"])] if resume_at else [])
    for i, (a, b) in enumerate(segs):
        ev = []
        for s, kind, v in merged(run):
            if a < s <= b or (s == 0 and i == 0):
                tags = hf_tags(v, kind)
                if kind == "train":
                    tags["train/epoch"] = round(s / spe, 4)
                else:
                    tags.update({"eval/runtime": 138.2 + s % 11, "eval/samples_per_second": 3.62,
                                 "eval/steps_per_second": 0.116, "train/epoch": round(s / spe, 4)})
                ev.append((t_of(run, s) + (20 if kind == "eval" else 0), s, tags))
        t0 = t_of(run, a) - 95 if i == 0 else t_of(run, a) + 180
        d = folder / "runs" / f"{tstr(t0, '%b%d_%H-%M-%S')}_{host}"
        tb_file(d / f"events.out.tfevents.{int(t0)}.{host}.{31877 + 1500 * i}.0", ev)
    if launcher:
        (folder / "launcher.log").write_text("\n".join(launcher(run)) + "\n")
    if resume_at:
        first = next((folder / "runs").glob(f"{tstr(t_of(run, 0) - 95, '%b%d_%H-%M-%S')}_*"))
        run.setdefault("mtimes", {})[str(next(first.iterdir()).relative_to(folder))] = t_of(run, resume_at) + 20


# ------------------------------------------------------------------------------------------------------ verl

def verl_rows(run: dict) -> dict[int, dict]:
    rows: dict[int, dict] = {}
    for s, v in run["evals"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        r = rows.setdefault(s, {})
        r.update(v)
        r["training/global_step"] = s
        r["training/epoch"] = 0
    return rows


def verl_fmt(x, np2: bool) -> str:
    if isinstance(x, int):
        return f"np.int64({x})" if np2 else str(x)
    return f"np.float64({x!r})" if np2 else repr(x)


def w_verl_console(run: dict, folder: Path, name: str = "train.log", np2: bool = False, ray: bool = True,
                   project: str = "verl_grpo", exp: str = "run", save_freq: int = 50, keep: int | None = None,
                   crash: list[str] | None = None) -> None:
    """verl LocalLogger lines mixed with Ray/vLLM output; a finished run ends with the final validation print."""
    pre = "(TaskRunner pid=48112) " if ray else ""
    total = run["planned"]
    lines = [f"{tstr(t_of(run, 0) - 420)},530\tINFO worker.py:1852 -- Started a local Ray instance. View the "
             "dashboard at 127.0.0.1:8265",
             f"{pre}Using dataset class: RLHFDataset",
             f"{pre}Size of train dataloader: {total // 2}, Size of val dataloader: 1",
             f"{pre}Total training steps: {total}",
             f"{pre}colocated worker base class <class 'verl.single_controller.base.worker.Worker'>",
             "(WorkerDict pid=49020) INFO 11-26 01:04:31 [gpu_model_runner.py:1892] Model loading took 15.27 GiB"]
    rows = verl_rows(run)
    for s in sorted(rows):
        body = " - ".join(f"{k}:{verl_fmt(x, np2)}" for k, x in rows[s].items())
        lines.append(f"{pre}step:{s} - {body}")
        if s and s % 20 == 0 and s < total:
            lines.append(f"Training Progress:  {int(100 * s / total):2d}%|{'█' * int(10 * s / total):<10}| {s}/{total} "
                         f"[{hms(s * run['sps'])}<{hms((total - s) * run['sps'])}, {run['sps']:.2f}s/it]")
        if s and s % save_freq == 0:
            lines.append(f"{pre}local_global_step_folder: checkpoints/{project}/{exp}/global_step_{s}")
    if run.get("finished"):
        last = {k: x for k, x in rows[max(s for s, _ in run["evals"])].items() if k.startswith("val-")}
        body = ", ".join(f"'{k}': {verl_fmt(x, np2)}" for k, x in last.items())
        lines.append(f'{pre}"Final validation metrics: {{{body}}}"')
        lines.append(f"Training Progress: 100%|██████████| {total}/{total} [{hms(total * run['sps'])}<00:00, "
                     f"{run['sps']:.2f}s/it]")
    if crash:
        lines += [c.replace("{T}", tstr(end_time(run))) for c in crash]
    (folder / name).write_text("\n".join(lines) + "\n")
    verl_ckpts(run, folder, project, exp, save_freq, keep)


def verl_ckpts(run: dict, folder: Path, project: str, exp: str, save_freq: int, keep: int | None,
               root: str = "checkpoints") -> None:
    saves = list(range(save_freq, run["reached"] + 1, save_freq))
    if keep:
        saves = saves[-keep:]
    base = folder / root / project / exp
    for s in saves:
        placeholder(base / f"global_step_{s}" / "actor" / "huggingface" / "config.json", '{"model_type": "qwen2"}\n')
        placeholder(base / f"global_step_{s}" / "data.pt", "")
    if saves:
        placeholder(base / "latest_checkpointed_iteration.txt", str(saves[-1]))


def hydra_config(folder: Path, run: dict, project: str, exp: str, extra: str = "") -> None:
    placeholder(folder / ".hydra" / "config.yaml",
                f"data:\n  train_batch_size: 256\n  max_response_length: {run['cap']}\n"
                f"actor_rollout_ref:\n  actor:\n    optim:\n      lr: 1.0e-06\n  rollout:\n    n: 8\n"
                f"trainer:\n  project_name: {project}\n  experiment_name: {exp}\n  total_epochs: 30\n"
                f"  total_training_steps: {run['planned']}\n  test_freq: {run['eval_every']}\n  save_freq: 100\n"
                f"  logger: ['console', 'file', 'tensorboard']\n  val_before_train: true\n{extra}")


def w_verl_jsonl(run: dict, folder: Path, project: str, exp: str, save_freq: int = 100) -> None:
    """verl FileLogger: <project>/<experiment>.jsonl, {"step": N, "data": {...}} per line."""
    rows = verl_rows(run)
    p = folder / project / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps({"step": s, "data": rows[s]}, separators=(",", ":")) + "\n" for s in sorted(rows)))
    hydra_config(folder, run, project, exp)
    verl_ckpts(run, folder, project, exp, save_freq, None)


def w_verl_tb(run: dict, folder: Path, project: str, exp: str, save_freq: int = 200, extra_cfg: str = "") -> None:
    """verl TensorBoard backend: raw keys under tensorboard_log/<project>/<experiment>."""
    rows = verl_rows(run)
    ev = [(t_of(run, s), s, rows[s]) for s in sorted(rows)]
    t0 = ev[0][0] - 300
    tb_file(folder / "tensorboard_log" / project / exp / f"events.out.tfevents.{int(t0)}.dgx-a3.81233.0", ev)
    hydra_config(folder, run, project, exp, extra_cfg)
    verl_ckpts(run, folder, project, exp, save_freq, None)


# ------------------------------------------------------------------------------------------------------ OpenRLHF / NeMo

def w_openrlhf_console(run: dict, folder: Path, name: str = "train.log", args: str = "") -> None:
    """OpenRLHF driver log: one status dict per global step, eval dicts after the step they belong to."""
    total = run["planned"]
    lines = [f"{tstr(t_of(run, 0) - 400)} | INFO | Namespace({args}, num_episodes=1, "
             f"eval_steps={run['eval_every']}, save_steps=100, logging_steps=1)",
             "(ActorModelRayActor pid=30711) [INFO] Loading checkpoint shards: 100%|██████████| 4/4",
             f"Episode [1/1]:   0%|          | 0/{total} [00:00<?, ?it/s]"]
    for s, kind, v in merged(run):
        if kind == "train":
            d = dict(v)
            lines.append(f"✨ Global step {s}: {d!r}")
            lines.append(f"Episode [1/1]: {int(100 * s / total):3d}%|{'█' * int(10 * s / total):<10}| {s}/{total} "
                         f"[{hms(s * run['sps'])}<{hms((total - s) * run['sps'])}, {run['sps']:.2f}s/it]")
        else:
            lines.append(f"Evaluation completed in {88 + s % 13:.2f} seconds, eval_metrics: {v!r}")
    (folder / name).write_text("\n".join(lines) + "\n")


def w_openrlhf_tb(run: dict, folder: Path, run_name: str, launch: Callable) -> None:
    ev = []
    for s, kind, v in merged(run):
        pre = "train/" if kind == "train" else "eval/"
        tags = {pre + k: x for k, x in v.items()}
        if kind == "train":
            tags["train/global_step"] = s
        ev.append((t_of(run, s) + (40 if kind == "eval" else 0), s, tags))
    t0 = ev[0][0] - 200
    tb_file(folder / "tensorboard" / run_name / f"events.out.tfevents.{int(t0)}.h100-node-3.22871.0", ev)
    (folder / "launch.log").write_text("\n".join(launch(run)) + "\n")


def w_nemo_tb(run: dict, folder: Path, exp: str = "exp_003", config: str = "") -> None:
    ev = [(t_of(run, s) + (30 if kind == "eval" else 0), s, dict(v)) for s, kind, v in merged(run)]
    d = folder / "logs" / exp
    tb_file(d / "tensorboard" / f"events.out.tfevents.{int(ev[0][0]) - 500}.nemo-rl-0.1287.0", ev)
    placeholder(d / "config.yaml", config)


# ------------------------------------------------------------------------------------------------------ custom loops / trackers

def w_custom_csv(run: dict, folder: Path, cols: list[str], name: str = "logs/train_log.csv") -> None:
    """A hand-written loop: one CSV row per logged step, `total_steps` repeated on every row."""
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "total_steps", *cols, "sec_per_step"])
        for s, v in run["train"]:
            w.writerow([s, run["planned"], *(f"{v[k]:.6g}" if k in v else "" for k in cols),
                        f"{run['sps'] * (1 + 0.05 * math.sin(s)):.2f}"])


def w_custom_jsonl(run: dict, folder: Path, name: str = "metrics.jsonl", eval_name: str | None = None,
                   extra: Callable | None = None, config: dict | None = None, ckpt_every: int = 0) -> None:
    """A hand-written loop's JSONL: train records every log, eval records in the same file or their own."""
    lines, elines = [], []
    t = t_of(run, 0)
    for s, kind, v in merged(run):
        rec = {"step": s}
        if kind == "train":
            rec.update(total_steps=run["planned"], **v, elapsed_s=round(s * run["sps"], 1))
            if extra:
                rec.update(extra(s))
            lines.append(json.dumps(rec))
        else:
            rec.update(v, time=round(t + s * run["sps"], 1))
            (elines if eval_name else lines).append(json.dumps(rec))
    placeholder(folder / name, "\n".join(lines) + "\n")
    if eval_name:
        placeholder(folder / eval_name, "\n".join(elines) + "\n")
    if config:
        placeholder(folder / "config.json", json.dumps(config, indent=2) + "\n")
    for s in range(ckpt_every, run["reached"] + 1, ckpt_every) if ckpt_every else []:
        placeholder(folder / "ckpt" / f"step_{s}.pt", "")


def w_wandb_csv(run: dict, folder: Path, display: str, panels: list[str], config: dict) -> None:
    """W&B 'Export panel data' CSVs, x-axis train/global_step, history order: after a resume the replayed steps
    come again with new values. Bucketed to 400 rows per panel, with __MIN/__MAX columns."""
    ghost = run.get("ghost")
    hist: list[tuple[int, dict]] = []
    resume = run.get("resume_from", 0)
    seg1 = [(s, k, v) for s, k, v in merged(run) if s <= resume] if ghost else merged(run)
    if ghost:
        seg1 += merged(dict(train=ghost["train"], evals=ghost["evals"]))
    seg2 = [(s, k, v) for s, k, v in merged(run) if s > resume] if ghost else []
    for s, kind, v in seg1 + seg2:
        hist.append((s, hf_tags(v, kind)))
    for i, key in enumerate(panels):
        pts = [(s, d[key]) for s, d in hist if key in d]
        bucket = max(1, math.ceil(len(pts) / 400))
        col = f"{display} - {key}"
        ts = tstr(NOW - 600 - 37 * i, "%Y-%m-%dT%H_%M_%S") + f".{(131 * i) % 1000:03d}+01_00"
        with (folder / f"wandb_export_{ts}.csv").open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow(["train/global_step", col, col + "__MIN", col + "__MAX"])
            for j in range(0, len(pts), bucket):
                chunk = pts[j:j + bucket]
                vals = [x for _, x in chunk]
                w.writerow([chunk[0][0], f"{np.mean(vals):.10g}", f"{min(vals):.10g}", f"{max(vals):.10g}"])
    placeholder(folder / "config.yaml", "\n".join(f"{k}:\n  desc: null\n  value: {v}" for k, v in config.items()) + "\n")


def w_mlflow_files(run: dict, folder: Path, params: dict, run_name: str) -> None:
    """MLflow file store: mlruns/<exp>/<run>/metrics/<key> lines '<ms> <value> <step>', '/' -> nested folders."""
    exp, rid = "582014473920118", "a4c09f2e7b1d4c35b88e61f0d2a97c41"
    base = folder / "mlruns" / exp
    placeholder(base / "meta.yaml", f"artifact_location: file://{folder}/mlruns/{exp}\ncreation_time: "
                f"{int(t_of(run, 0) * 1000)}\nexperiment_id: '{exp}'\nlifecycle_stage: active\nname: grpo-sweep\n")
    rd = base / rid
    placeholder(rd / "meta.yaml", f"artifact_uri: file://{folder}/mlruns/{exp}/{rid}/artifacts\nend_time: null\n"
                f"entry_point_name: ''\nexperiment_id: '{exp}'\nlifecycle_stage: active\nrun_id: {rid}\n"
                f"run_name: {run_name}\nrun_uuid: {rid}\nsource_name: ''\nsource_type: 4\nsource_version: ''\n"
                f"start_time: {int(t_of(run, 0) * 1000)}\nstatus: 1\ntags: []\nuser_id: rl\n")
    placeholder(rd / "tags" / "mlflow.runName", run_name)
    (rd / "artifacts").mkdir(parents=True, exist_ok=True)
    for k, v in params.items():
        placeholder(rd / "params" / k, str(v))
    lines: dict[str, list[str]] = {}
    for s, kind, v in merged(run):
        ts = int((t_of(run, s) + (25 if kind == "eval" else 0)) * 1000)
        for k, x in v.items():
            lines.setdefault(k, []).append(f"{ts} {x!r} {s}")
    for k, ls in lines.items():
        placeholder(rd / "metrics" / k, "\n".join(ls) + "\n")


def w_trackio(run: dict, folder: Path, project: str, name: str, config: dict) -> None:
    """Trackio 0.36 SQLite store (one DB per project; run_id column), TRL keys after rewrite_logs."""
    db = sqlite3.connect(folder / f"{project}.db")
    db.executescript("""
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT NOT NULL);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, run_name TEXT NOT NULL,
        config TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, metrics TEXT NOT NULL);
    """)
    rid = "r-5f2e1c90"
    iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".000000"  # noqa: E731
    db.execute("INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?, ?, ?, ?)",
               (rid, name, json.dumps(config), iso(t_of(run, 0))))
    for s, kind, v in merged(run):
        m = hf_tags(v, kind)
        m["train/global_step"] = s
        if kind == "train":
            m["train/epoch"] = round(s / run["planned"], 4)
        db.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
                   (rid, iso(t_of(run, s)), name, s, json.dumps(m)))
    db.commit()
    db.close()


# ------------------------------------------------------------------------------------------------------ the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable
    seed: int
    steps: tuple[int, int]  # (reached, planned)
    kind: str  # ok | conv | stop | sor | rb
    tags: str
    why: str
    onset: int | None = None
    finished: bool = False
    ghost: tuple[int, int, Story] | None = None  # (resumed from, last step of the lost segment, its story)

    def case(self) -> Case:
        reached = self.steps[0]
        if self.kind == "ok":
            labels = HEALTHY
        elif self.kind == "conv":
            labels = dict(converged(), onset_step=self.onset)
        elif self.kind == "stop":
            labels = stop(self.onset)
        else:
            lo, hi = window(self.story, reached, self.onset)
            labels = (rollback if self.kind == "rb" else stop_or_rollback)(lo, hi, self.onset)
        return Case(self.name, lambda *_: None, self.write, self.seed, self.steps, labels, self.tags, self.why)


def acc1(level: Level, n: int, key: str, *aliases: str) -> Acc:
    return Acc(level, n, {"mean": key, "alias": list(aliases)})


def verl_acc(level: Level, n: int, ds: str, k: int, var: str = "acc", spread: float = 1.5) -> Acc:
    keys = {"mean": f"val-core/{ds}/{var}/mean@{k}"}
    if k > 1:
        keys.update(best=f"val-core/{ds}/{var}/best@{k}/mean", maj=f"val-core/{ds}/{var}/maj@{k}/mean",
                    std=f"val-aux/{ds}/{var}/std@{k}")
    return Acc(level, n, keys, k=k, spread=spread)


def timing(base: float, per_tok: float, len_level: Level) -> Sig:
    return Sig(lambda s: base + per_tok * len_level(s), 0.06)


# --- shared pieces of stories
LEN_OK = path(380, (1000, 450))

SPECS: list[Spec] = []

# ================================================================================================ healthy look-alikes

_dpo_train = Pref(acc=path(.5, (200, .64, 2), (700, .74, 1.5), (1400, .79), (3000, .82)),
                  spread=path(.25, (700, 2.0, 1), (1400, 3.0), (3000, 3.6)),
                  chosen=path(0, (300, -.4), (1400, -1.9), (3000, -2.6)), B=32)
_dpo_eval = Pref(acc=path(.5, (200, .60, 1.5), (600, .655), (1400, .715), (3000, .74)),
                 spread=path(.3, (600, 1.2), (1400, 1.6), (3000, 1.9)), chosen=path(0, (1400, -1.7), (3000, -2.3)))
SPECS.append(Spec(
    "ok-dpo-chosen-rewards-go-negative-margins-widen-eval-acc-rises-trl029-state",
    Story(_dpo_train,
          [PrefEval(_dpo_eval, 1000, {"acc": "eval_rewards/accuracies", "margin": "eval_rewards/margins",
                                      "chosen": "eval_rewards/chosen", "rejected": "eval_rewards/rejected",
                                      "loss": "eval_loss"})],
          "eval_rewards/accuracies", DPO_029,
          sides={"grad": Sig(path(9, (1400, 13)), mode="grad"), "lr": Sig(warm_linear(5e-7, 150, 3000), mode="exact"),
                 "entropy": Sig(path(.86, (1400, .79)), .02), "len": Sig(const(610), .03)},
          extra={"logps/chosen": Sig(path(-182, (1400, -236)), 4, "add"),
                 "logps/rejected": Sig(path(-188, (1400, -291)), 4, "add"),
                 "logits/chosen": Sig(path(-1.12, (1400, -.95)), .02, "add"),
                 "logits/rejected": Sig(path(-1.10, (1400, -.90)), .02, "add"),
                 "mean_token_accuracy": Sig(path(.605, (1400, .632)), .003, "add")},
          log_every=10, eval_every=100, sps=45, age_h=0.1),
    writer(w_trl_state)(200, 3, 10, 1500, 2, "outputs/dpo-qwen3-8b-uf"), 1701, (1400, 3000), "ok",
    "healthy lookalike trl trainer_state dpo trl029-keys implicit-rewards-negative",
    "TRL 0.29 DPO on UltraFeedback-style pairs (2 epochs, 3000 steps; at 1400). rewards/chosen has gone from 0 to "
    "about -1.9 and rewards/rejected to about -4.3, logps/chosen falls -182 -> -236: both implicit rewards negative looks "
    "like the model is unlearning the chosen answers, but that is ordinary for DPO. What matters holds: margins "
    "widen to ~2.4, train accuracy 0.5 -> 0.79, and the held-out preference accuracy (1000 pairs, sd 0.014) climbs "
    "0.60 (step 200) -> 0.655 (600) -> 0.715 (1400), +0.03 over the last 400 steps, eval_loss still falling (0.68 -> 0.57). Still "
    "improving with more than half the budget left: continue."))

_hard_reward = path(.025, (380, .027), (450, .05, -1), (520, .105), (1500, .36))
SPECS.append(Spec(
    "ok-hard-math-reward-near-zero-380-steps-then-lifts-off-verl-jsonl-valcore-valaux",
    Story(Binary(_hard_reward, P=128, G=16, spread=1.8),
          [verl_acc(path(.50, (380, .505), (520, .58), (1500, .70)), 500, "math500", 1),
           verl_acc(path(.055, (380, .06), (520, .085), (1500, .2)), 30, "aime24", 16, spread=2.0)],
          "val-core/math500/acc/mean@1", VERL,
          sides={"kl": Sig(path(.0004, (380, .0009), (520, .004)), .08), "entropy": Sig(path(.42, (380, .46), (520, .41)), .03),
                 "len": Sig(path(1800, (380, 1840), (520, 2500)), .03), "trunc": Sig(path(.012, (520, .03)), .15),
                 "grad": Sig(path(.05, (380, .06), (520, .14)), mode="grad"), "lr": Sig(const(1e-6), mode="exact"),
                 "clip_region": Sig(path(.0015, (520, .003)), .1),
                 "step_time": timing(140, .07, path(1800, (380, 1840), (520, 2500)))},
          extra={"actor/pg_loss": Sig(const(0.0), .004, "add"), "critic/advantages/mean": Sig(const(0.0), .002, "add"),
                 "actor/ppo_kl": Sig(const(0.0), 2e-5, "add")},
          eval_every=20, eval_at_0=True, cap=8192, sps=290, age_h=0.1),
    writer(w_verl_jsonl)("hard_math", "qwen3-8b-grpo-olympiad", 100), 1702, (520, 1500), "ok",
    "healthy lookalike verl jsonl file-logger val-core val-aux hard-task long-flat-start liftoff",
    "verl GRPO on olympiad-level problems (128 prompts x 16 samples per step, 1500 steps planned, at 520). For 380 "
    "steps the batch score sits at ~0.025 (almost every group all-wrong) and MATH-500 val stays at 0.50-0.505: it "
    "looks like a run that learns nothing. From ~380 it lifts off: score 0.027 -> 0.105 by 520, responses lengthen "
    "1840 -> 2500 tokens, kl_loss starts to move, and val-core MATH-500 acc (N=500, sd 0.022) rises 0.505 -> 0.58 "
    "(3.4 sd) over the last 140 steps; AIME24 mean@16 (30 problems) is too noisy to read. Learning has just begun "
    "with two thirds of the budget left: continue."))

_s3_reward = path(.30, (300, .47, 1), (620, .60), (1000, .66))
_s3_eval = path(.28, (300, .45, 1), (620, .565), (1000, .62))
_s3 = Story(Binary(_s3_reward, P=16, G=8), [Acc(_s3_eval, 200, {"mean": "eval_reward"}, k=8)], "eval_reward",
            TRL020 | {"zero_std": "frac_reward_zero_std"},
            sides={"kl": Sig(path(0.0005, (620, .012)), .06), "entropy": Sig(path(.5, (620, .38)), .03),
                   "len": Sig(path(380, (620, 450)), .04), "trunc": Sig(const(.02), .2),
                   "grad": Sig(const(.25), mode="grad"), "lr": Sig(lambda s: 1e-6 * (1 - s / 1000), mode="exact"),
                   "clip_region": Sig(const(0.0), mode="exact")},
            log_every=10, eval_every=50, beta=0.04, sps=19, age_h=0.05)
SPECS.append(Spec(
    "ok-oom-traceback-mid-log-resumed-from-ckpt300-replayed-steps-trl-console",
    _s3, writer(w_trl_console)(16000, "train.log", 300, "/mnt/ckpt/grpo-q15b"), 1703, (620, 1000), "ok",
    "healthy lookalike trl console traceback-not-at-end resume duplicated-steps",
    "TRL GRPO stdout (printed dicts, tqdm bars; beta 0.04). The first launch logged up to step 340, then died with "
    "a CUDA OOM traceback; run.sh relaunched from checkpoint-300, so steps 310-340 are printed twice (fresh "
    "sampling noise, same levels) and the log goes on to step 620 of 1000, written minutes ago. The traceback is in "
    "the middle of the file, not at the end: the run is live. Underneath, reward 0.30 -> 0.60 and eval_reward (200 "
    "prompts x 8, sd ~0.03) 0.28 -> 0.565, still rising ~0.035 per 100 steps. Continue.",
    ghost=(300, 340, _s3)))

_fmt_w = lambda s: 1.0 if s <= 400 else 0.25  # noqa: E731
_s4_parts = Parts([Part("accuracy_reward", path(.30, (400, .45, 1), (900, .555), (1500, .62))),
                   Part("format_reward", path(.55, (150, .95, 2), (1500, .98)), weight=_fmt_w, spread=.8)], P=32, G=8)
SPECS.append(Spec(
    "ok-format-weight-cut-at-resume-400-total-reward-halves-announced-hf-tb",
    Story(_s4_parts,
          [PartsEval(_s4_parts, 250, 8, {"total": "eval_reward", "accuracy_reward": "eval_rewards/accuracy_reward/mean",
                                         "format_reward": "eval_rewards/format_reward/mean"}, "accuracy_reward")],
          "eval_rewards/accuracy_reward/mean", TRL020,
          sides={"entropy": Sig(path(.55, (900, .41)), .03), "len": Sig(path(350, (900, 430)), .04),
                 "trunc": Sig(const(.015), .2), "grad": Sig(path(.3, (900, .26)), mode="grad"),
                 "lr": Sig(warm_cosine(1e-6, 30, 1500, 1e-7), mode="exact"), "clip_region": Sig(const(0.0), mode="exact")},
          log_every=10, eval_every=50, sps=36, age_h=0.08),
    writer(w_hf_tb)("gpu-node-7", 400, 1500, lambda run: [
        f"{tstr(t_of(run, 0) - 120)} launch: accelerate launch --num_processes 8 train_grpo.py --config "
        "configs/q7b_fmt.yaml",
        f"{tstr(t_of(run, 0) - 120)} config: max_steps=1500 logging_steps=10 eval_steps=50 save_steps=100 "
        "reward_funcs=[accuracy_reward, format_reward] reward_weights=[1.0, 1.0] report_to=tensorboard",
        f"{tstr(t_of(run, 400) + 60)} stopped by operator after checkpoint-400 (planned config change)",
        f"{tstr(t_of(run, 400) + 180)} resume: resume_from_checkpoint=outputs/grpo-q7b-fmt/checkpoint-400",
        f"{tstr(t_of(run, 400) + 180)} CONFIG CHANGE at resume: reward_weights [1.0, 1.0] -> [1.0, 0.25] (format "
        "reward down-weighted; reward / eval_reward drop by ~0.7 by construction, accuracy_reward is unaffected)",
    ]), 1704, (900, 1500), "ok",
    "healthy lookalike hf tensorboard trl020 reward-scale-change announced resume two-runs-folders",
    "TRL GRPO logging to TensorBoard (one runs/ folder per launch) with two reward functions. At step 400 the "
    "operator stopped the run and resumed from checkpoint-400 with the format reward's weight cut 1.0 -> 0.25, as "
    "launcher.log says. So train/reward falls 1.40 -> 0.69 and eval/reward likewise at the resume: a scale change, "
    "not a collapse. The accuracy component never notices: train accuracy_reward 0.45 -> 0.555 and eval "
    "accuracy_reward (250 prompts x 8, sd ~0.02) 0.44 -> 0.545 from 400 to 900 of 1500, format stays ~0.97. Still "
    "improving: continue."))

SPECS.append(Spec(
    "ok-kl-climbs-to-0.4-under-beta-0.001-two-eval-sets-rise-trl1x-state",
    Story(Binary(path(.35, (900, .63, 1.2), (2000, .72)), P=32, G=8),
          [acc1(path(.46, (900, .61, .5), (2000, .66)), 500, "eval_math500_accuracy"),
           acc1(path(.78, (900, .87, 1.5), (2000, .89)), 1319, "eval_gsm8k_accuracy")],
          "eval_math500_accuracy", TRL1X,
          sides={"kl": Sig(path(0, (200, .03, -1), (600, .18, -.5), (900, .40), (2000, .7)), .05),
                 "entropy": Sig(path(.62, (900, .34)), .03), "len": Sig(path(520, (900, 760)), .04),
                 "trunc": Sig(path(.01, (900, .035)), .15), "clip_region": Sig(path(.012, (900, .028)), .1),
                 "grad": Sig(path(.22, (900, .30)), mode="grad"), "lr": Sig(warm_cosine(1e-6, 50, 2000), mode="exact"),
                 "step_time": Sig(path(95, (900, 130)), .05)},
          log_every=10, eval_every=100, eval_at_0=True, beta=0.001, sps=110, age_h=0.06),
    writer(w_trl_state)(100, 2, 10, 0, 1, "outputs/grpo-q8b-b001", None, False), 1705, (900, 2000), "ok",
    "healthy lookalike trl trainer_state trl1x kl-large small-beta multi-eval clip-ratio-nonzero",
    "TRL 1.x GRPO with beta=0.001 and num_iterations=2 (so clip ratios ~2-3 %, not 0). kl climbs 0 -> 0.40 by step "
    "900 of 2000 and is still accelerating, which reads as drift. But with so small a beta the KL is free to grow, and "
    "everything it buys is real: reward 0.35 -> 0.63, a callback's MATH-500 accuracy (N=500, sd 0.022) 0.46 -> 0.61 "
    "(+0.05 over the last 300 steps) and GSM8K (N=1319) 0.78 -> 0.87, entropy a slow 0.62 -> 0.34, lengths 520 -> "
    "760 with truncation at 3 %. Still improving: continue."))

SPECS.append(Spec(
    "ok-entropy-falls-fivefold-in-120-steps-format-locks-in-val-rises-verl-console-np2",
    Story(Binary(path(.12, (120, .34, 1.5), (420, .55, .8), (1200, .66)), P=256, G=8),
          [verl_acc(path(.10, (120, .30, 1.5), (420, .52, .8), (1200, .63)), 1024, "countdown", 1)],
          "val-core/countdown/acc/mean@1", VERL,
          sides={"entropy": Sig(path(1.15, (120, .24, 2.5), (420, .19)), .03),
                 "len": Sig(path(420, (120, 180, 2), (420, 260)), .03), "kl": Sig(path(0.0002, (120, .004), (420, .012)), .06),
                 "grad": Sig(path(.9, (120, .35), (420, .25)), mode="grad"), "lr": Sig(const(1e-6), mode="exact"),
                 "clip_region": Sig(const(.003), .1), "trunc": Sig(path(.02, (120, .001)), .2),
                 "step_time": timing(40, .12, path(420, (120, 180, 2), (420, 260)))},
          eval_every=20, eval_at_0=True, cap=1024, sps=75, age_h=0.04),
    writer(w_verl_console)("train.log", True, True, "countdown", "qwen25-3b-grpo-cd", 50, None), 1706, (420, 1200), "ok",
    "healthy lookalike verl console numpy2 entropy-drop-early",
    "verl GRPO on Countdown, console log with NumPy-2 reprs. actor/entropy falls 1.15 -> 0.24 in the first 120 "
    "steps and responses shrink 420 -> 180 tokens: the policy locks into the answer format and stops rambling. "
    "That is sharpening, not collapse: after 120 entropy eases only to 0.19, lengths grow back to 260, and val "
    "acc (1024 puzzles, sd 0.016) rises 0.10 -> 0.30 (step 120) -> 0.52 (step 420 of 1200), still about +0.05 per 100 "
    "steps. Continue."))

SPECS.append(Spec(
    "ok-dapo-gen-batches-climb-kept-score-flat-val-rises-verl-tb",
    Story(KeptGroups(path(.45, (700, .80, .5), (1500, .86)), P=64, G=16, spread=4.0),
          [verl_acc(path(.58, (700, .71, .8), (1500, .78)), 500, "math500", 4, spread=1.6),
           verl_acc(path(.16, (700, .27), (1500, .33)), 30, "aime24", 32, spread=2.2)],
          "val-core/math500/acc/mean@4", VERL,
          sides={"entropy": Sig(path(.38, (700, .33)), .03),
                 "len": Sig(path(1400, (700, 2600)), .03), "trunc": Sig(path(.01, (700, .04)), .15),
                 "grad": Sig(const(.12), mode="grad"), "lr": Sig(const(1e-6), mode="exact"),
                 "clip_region": Sig(const(.006), .1), "step_time": timing(300, .2, path(1400, (700, 2600)))},
          extra={"actor/pg_clipfrac_lower": Sig(const(2e-4), .3), "critic/score/max": Sig(const(1.0), mode="exact"),
                 "critic/score/min": Sig(const(-1.0), mode="exact")},
          eval_every=25, eval_at_0=True, cap=20480, sps=700, age_h=0.1),
    writer(w_verl_tb)("DAPO", "dapo-qwen25-32b", 100, "algorithm:\n  filter_groups:\n    enable: true\n    metric: acc\n"
                      "    max_num_gen_batches: 10\n"), 1707, (700, 1500), "ok",
    "healthy lookalike verl tensorboard dapo dynamic-sampling kept-score-flat",
    "verl DAPO with dynamic sampling: groups whose 16 samples all agree are filtered and generation repeats until "
    "the batch is full. critic/score/mean (+-1 scoring, kept groups only) is a poor progress signal: it only moves "
    "from ~0 to ~+0.25 over 700 steps, noisy, while train/num_gen_batches creeps from 2 to 3 rounds and step time "
    "grows, which reads like a task being used up. It is the opposite: more prompts are solved by all 16 samples "
    "(overall solve rate ~0.45 -> ~0.80). The held-out numbers rise: MATH-500 mean@4 (sd ~0.013) 0.58 -> 0.71 at "
    "step 700 of 1500, AIME24 mean@32 0.16 -> 0.27 (noisy). Still improving: continue."))

SPECS.append(Spec(
    "ok-lr-warmup-grad-spikes-reward-dips-then-climbs-openrlhf-console",
    Story(Binary(path(.42, (25, .35, -1), (60, .355), (120, .45), (300, .58, .8), (800, .68)), P=128, G=8),
          [Acc(path(.44, (25, .40), (50, .41), (150, .49), (300, .56, .5), (800, .62)), 1319,
               {"mean": "eval_gsm8k_pass1", "best": "eval_gsm8k_pass4"}, k=4)],
          "eval_gsm8k_pass1", OPENRLHF,
          sides={"grad": Sig(path(.4, (5, 3.0), (25, 6.0), (45, .9), (60, .35), (800, .3)), mode="grad",
                             spikes={9: 23.5, 17: 31.0, 31: 14.2}),
                 "lr": Sig(warm_const(1e-6, 50), mode="exact"),
                 "clip_region": Sig(path(.05, (10, .22), (40, .12), (60, .02), (800, .015)), .1),
                 "kl": Sig(path(0.0001, (30, .02), (60, .012), (300, .02)), .08),
                 "len": Sig(path(310, (30, 360), (60, 300), (300, 340)), .04), "trunc": Sig(const(.01), .2),
                 "step_time": Sig(const(74), .05)},
          extra={"policy_loss": Sig(const(0.0), .01, "add"), "ppo_kl": Sig(const(0.0), 3e-4, "add"),
                 "vllm_kl": Sig(const(.0008), .1), "total_length": Sig(const(455), .03)},
          averaged=False, eval_every=25, sps=74, age_h=0.03),
    writer(w_openrlhf_console)("train.log", "advantage_estimator='group_norm', rollout_batch_size=128, "
                               "n_samples_per_prompt=8, actor_learning_rate=1e-06, lr_warmup_ratio=0.0625, "
                               "init_kl_coef=0.001, use_kl_loss=True"), 1708, (300, 800), "ok",
    "healthy lookalike openrlhf console warmup grad-spikes early-dip",
    "OpenRLHF GRPO (group_norm), driver log with one status dict per step. During the 50-step lr warm-up the actor "
    "grad norm jumps to 6 with single spikes of 14-31, ppo_clip_ratio reaches 0.22 and the reward dips 0.42 -> "
    "0.35, GSM8K pass@1 (1319 x 4 samples, sd ~0.01) 0.44 -> 0.40 at step 25. All of it settles by step 60, and "
    "since then the reward climbs to 0.58 and pass@1 to 0.56 at step 300 of 800, well above the start. A transient "
    "at warm-up, not damage: continue."))

SPECS.append(Spec(
    "ok-stalled-8h-at-640-of-2000-still-rising-custom-jsonl",
    Story(Binary(path(.20, (640, .47, .6), (2000, .62)), P=32, G=4),
          [acc1(path(.22, (640, .46, .5), (2000, .60)), 400, "heldout_acc")],
          "heldout_acc", {"reward": "reward", "reward_std": "reward_std", "kl": "kl", "entropy": "entropy",
                          "len": "resp_len", "grad": "grad_norm", "lr": "lr"},
          sides={"kl": Sig(path(0.0, (640, .03)), .06), "entropy": Sig(path(.7, (640, .52)), .03),
                 "len": Sig(path(300, (640, 420)), .04), "grad": Sig(const(.4), mode="grad"),
                 "lr": Sig(const(5e-7), mode="exact")},
          log_every=5, eval_every=40, eval_at_0=True, sps=50, age_h=8.0),
    writer(w_custom_jsonl)("metrics.jsonl", None, None, {"total_steps": 2000, "eval_every": 40, "save_every": 100,
                                                        "ckpt_dir": "ckpt/"}, 100),
    1709, (640, 2000), "ok",
    "healthy custom jsonl stalled no-traceback still-rising",
    "A hand-written GRPO loop logging to metrics.jsonl (train every 5 steps, held-out eval every 40 on 400 "
    "problems, total_steps 2000). Nothing has been written for 8 hours: the job hung at step 640 without a "
    "traceback (a dead node). Up to then it was learning well: reward 0.20 -> 0.47, held-out acc (sd 0.025) 0.22 -> "
    "0.46 and still rising over its last evaluations. Restarting from the step-600 checkpoint and carrying on pays; "
    "stopping would throw that away. Continue."))

_s10_eval_final = path(.31, (600, .53, .8), (650, .47), (700, .50), (750, .54), (1000, .615), (1600, .66))
_s10_eval_lost = path(.31, (600, .53, .8), (1000, .60))
_s10 = Story(Binary(path(.30, (600, .55, .8), (640, .47), (720, .55), (1000, .64), (1600, .70)), P=16, G=8),
             [acc1(_s10_eval_final, 500, "eval_reward")], "eval_reward", TRL020,
             sides={"entropy": Sig(path(.5, (600, .40), (620, .47), (700, .41), (1000, .37)), .03),
                    "len": Sig(path(360, (1000, 420)), .04), "trunc": Sig(const(.01), .2),
                    "grad": Sig(path(.3, (600, .3), (605, 1.8), (640, .5), (700, .3)), mode="grad"),
                    "lr": Sig(lambda s: 1e-6 * min(1, s / 50) if s <= 600 else 1e-6 * min(1, (s - 600) / 50),
                              mode="exact"),
                    "clip_region": Sig(const(0.0), mode="exact")},
             log_every=10, eval_every=50, sps=40, age_h=0.2)
SPECS.append(Spec(
    "ok-resume-resets-optimizer-dip-recovers-above-old-best-wandb-csv-export",
    _s10,
    writer(w_wandb_csv)("grpo-q4b-math-resume", ["train/reward", "train/entropy", "train/learning_rate",
                                                  "train/grad_norm", "train/completions/mean_length", "eval/reward"],
                        {"max_steps": 1600, "logging_steps": 10, "eval_steps": 50, "save_steps": 100,
                         "learning_rate": 1e-6, "num_generations": 8}),
    1710, (1000, 1600), "ok",
    "healthy lookalike wandb csv-export resume duplicated-steps optimizer-reset dip-recovered",
    "W&B panel exports (x-axis train/global_step) of a TRL GRPO run that crashed after step 700 and was resumed "
    "from checkpoint-600 by a script that rebuilt the optimizer and lr schedule (Adam moments lost, a second 50-step "
    "warm-up). Steps 610-700 appear twice. After the resume the grad norm jumps, reward dips 0.55 -> 0.47 and "
    "eval/reward (N=500, sd 0.022) falls to 0.47 at step 650: it looks like a break. But it recovers by ~750 and "
    "keeps going: eval 0.615 at step 1000 of 1600, above the 0.53-0.55 of the lost first pass, reward 0.64. "
    "Continue.",
    ghost=(600, 700, replace(_s10, reward=Binary(path(.30, (600, .55, .8), (1000, .62)), P=16, G=8),
                             evals=[acc1(_s10_eval_lost, 500, "eval_reward")],
                             sides={**_s10.sides, "lr": Sig(const(1e-6), mode="exact"),
                                    "grad": Sig(const(.3), mode="grad"),
                                    "entropy": Sig(path(.5, (600, .40), (1000, .37)), .03)}))))

SPECS.append(Spec(
    "ok-finished-1000-of-1000-still-rising-at-end-extend-verl-console",
    Story(Binary(path(.15, (1000, .60, .3), (2000, .75)), P=64, G=8),
          [verl_acc(path(.18, (1000, .62, .3), (2000, .76)), 700, "kk_logic", 1)],
          "val-core/kk_logic/acc/mean@1", VERL,
          sides={"kl": Sig(path(0.0002, (1000, .02)), .06), "entropy": Sig(path(.55, (1000, .41)), .03),
                 "len": Sig(path(520, (1000, 910)), .03), "trunc": Sig(path(.005, (1000, .02)), .2),
                 "grad": Sig(const(.18), mode="grad"), "lr": Sig(const(1e-6), mode="exact"),
                 "clip_region": Sig(const(.002), .1), "step_time": timing(30, .05, path(520, (1000, 910)))},
          eval_every=25, eval_at_0=True, cap=4096, sps=70, age_h=1.5),
    writer(w_verl_console)("main_ppo.log", False, True, "logic_rl", "qwen25-7b-kk", 100, None), 1727, (1000, 1000), "ok",
    "healthy verl console finished end-marker still-rising extend",
    "verl GRPO on Knights-and-Knaves puzzles, planned for 1000 steps and finished 1.5 h ago (final validation "
    "printed, progress bar at 100 %). The curve never bent: val acc (700 puzzles, sd 0.018) 0.18 -> 0.50 at step 700 "
    "-> 0.62 at 1000, +0.12 (6 sd) over the last 300 steps, score 0.15 -> 0.60, entropy and KL moving slowly. A "
    "finished run that was still improving at its end: extending it is worth it. Continue.",
    finished=True))

# ================================================================================================ clear failures

SPECS.append(Spec(
    "bad-grad-spike-at-rising-peak-collapse-in-50-steps-trl021-state-save-limit-2",
    Story(Binary(path(.28, (300, .50, .5), (610, .63), (625, .40), (650, .08), (680, .04)), P=32, G=8),
          [acc1(path(.27, (300, .47, .5), (610, .595), (625, .45), (650, .10), (680, .05)), 400,
                "eval_rewards/accuracy_reward/mean", "eval_reward")],
          "eval_rewards/accuracy_reward/mean", TRL020 | {"comp": "rewards/{fn}/{stat}"},
          sides={"grad": Sig(path(.3, (610, .3), (615, 4), (680, 2.5)), mode="grad", spikes={612: 45.3}),
                 "entropy": Sig(path(.5, (610, .36), (630, 1.6), (680, 2.9)), .03),
                 "len": Sig(path(400, (610, 430), (650, 1024)), .04), "trunc": Sig(path(.02, (610, .03), (650, .9), (680, .95)), .05),
                 "kl": Sig(path(0.0005, (610, .02), (640, .9), (680, 1.5)), .06),
                 "lr": Sig(warm_const(1e-6, 20), mode="exact"), "clip_region": Sig(const(0.0), mode="exact")},
          log_every=10, eval_every=50, beta=0.04, cap=1024, sps=30, age_h=0.07),
    writer(w_trl_state)(100, 2, 10, 0, 1, "outputs/grpo-q15b-gsm"), 1711, (680, 1500), "rb",
    "rollback trl trainer_state trl021 save-total-limit sudden-collapse decline-at-peak",
    "TRL GRPO, checkpoints every 100 with save_total_limit=2 (checkpoint-500 and -600 on disk). The run climbs "
    "without any plateau, eval accuracy (N=400, sd 0.025) 0.27 -> 0.59 at step 600, until one batch at step 612 "
    "sends the grad norm to 45. Within 40 steps entropy goes 0.36 -> 1.6 -> 2.9, completions run to the 1024 cap "
    "(clipped_ratio 0.9), kl 0.02 -> 1.5, and reward falls 0.63 -> 0.04; eval 0.10 at step 650. The peak is the "
    "last point before the break: roll back to checkpoint-600.", onset=610))

SPECS.append(Spec(
    "bad-train-only-peak-at-900-then-slow-slide-no-plateau-plain-csv",
    Story(Binary(path(.22, (500, .52, .6), (900, .66, .3), (1500, .52)), P=16, G=8, spread=1.4), [], TRAIN,
          {"reward": "reward_mean", "reward_std": "reward_std", "all_pass": "groups_all_correct",
           "all_fail": "groups_all_wrong", "kl": "kl_ref", "entropy": "entropy", "len": "resp_tokens",
           "grad": "grad_norm", "lr": "lr"},
          sides={"entropy": Sig(path(.55, (900, .30), (1500, .12)), .04), "kl": Sig(path(0.0, (900, .05), (1500, .12)), .06),
                 "len": Sig(path(280, (900, 310), (1500, 230)), .05), "grad": Sig(path(.5, (900, .45), (1500, .6)), mode="grad"),
                 "lr": Sig(const(2e-6), mode="exact")},
          sps=25, age_h=0.03),
    writer(w_custom_csv)(["reward_mean", "reward_std", "groups_all_correct", "groups_all_wrong", "kl_ref", "entropy",
                          "resp_tokens", "grad_norm", "lr"]), 1712, (1500, 2000), "rb",
    "rollback custom csv every-step train-only-headline slow-slide decline-at-peak",
    "A plain PyTorch GRPO loop (16 prompts x 8 samples, constant lr 2e-6) that logs one CSV row per step and has no "
    "held-out eval. The batch reward rises 0.22 -> 0.66 by step 900 and turns down right at the top, with no "
    "plateau: 0.52 by step 1500 of 2000, a slow, steady slide (one row's sd ~0.07, but 600 rows of it). Entropy "
    "keeps draining 0.30 -> 0.12, responses shorten 310 -> 230 and kl_ref climbs: the policy is narrowing onto "
    "patterns that stop paying. Roll back to around step 900 (whatever checkpoint the loop kept there).", onset=900))

SPECS.append(Spec(
    "bad-plateau-600-to-1400-then-late-slide-val-5000-verl-tb",
    Story(Binary(path(.35, (600, .56, 1.2), (1400, .585), (1800, .58)), P=128, G=8),
          [verl_acc(path(.36, (600, .555, 1.5), (1400, .555), (1800, .505)), 5000, "DigitalLearningGmbH/MATH-lighteval",
                    1, var="reward")],
          "val-core/DigitalLearningGmbH/MATH-lighteval/reward/mean@1", VERL,
          sides={"entropy": Sig(path(.45, (600, .33), (1400, .30), (1800, .12)), .03),
                 "len": Sig(path(600, (600, 560), (1400, 540), (1800, 380)), .03),
                 "kl": Sig(path(0.0002, (600, .004), (1400, .006), (1800, .03)), .06),
                 "grad": Sig(const(.2), mode="grad"), "lr": Sig(const(1e-6), mode="exact"),
                 "clip_region": Sig(const(.002), .1), "trunc": Sig(const(.004), .2),
                 "step_time": timing(40, .1, path(600, (600, 560), (1400, 540), (1800, 380)))},
          extra={"actor/pg_loss": Sig(const(0.0), .003, "add")},
          eval_every=50, eval_at_0=True, cap=3072, sps=100, age_h=0.05),
    writer(w_verl_tb)("verl_math", "qwen25-7b-grpo-math", 200), 1713, (1800, 2500), "rb",
    "rollback verl tensorboard long-plateau late-slide train-holds entropy-collapse",
    "verl GRPO on MATH, validated every 50 steps on the full 5000-problem test set (sd 0.007). Val climbs 0.36 -> "
    "0.555 by step 600 and then holds there for 800 steps. From 1400 it erodes, 0.555 -> 0.505 by 1800 of 2500 (7 "
    "sd), while the train score stays ~0.58 and entropy drains 0.30 -> 0.12 with answers shortening 540 -> 380 "
    "tokens. Every step from ~600 to 1400 was as good as the best; the newest of them is the target: roll back to "
    "step 1400 (global_step_1400 is saved).", onset=1400))

_s14_parts = Parts([Part("comet_qe", path(.71, (500, .80, .8), (900, .86)), kind="score"),
                    Part("lang_id", path(.99, (500, .99), (900, .93)), spread=2.5)], P=64, G=8)
SPECS.append(Spec(
    "bad-qe-reward-climbs-chrf-falls-untranslated-spans-trl1x-state",
    Story(_s14_parts,
          [Mean(path(52.0, (450, 57.8, .8), (520, 58.1), (900, 53.0)), 1000, 16.0, "eval_chrf"),
           Mean(path(.70, (500, .79), (900, .845)), 1000, .1, "eval_comet_qe"),
           acc1(path(.99, (520, .99), (900, .935)), 1000, "eval_lang_id")],
          "eval_chrf", TRL1X,
          sides={"kl": Sig(path(0.0005, (520, .09), (900, .25)), .06), "entropy": Sig(path(.9, (520, .68), (900, .58)), .03),
                 "len": Sig(path(62, (520, 64), (900, 71)), .03), "trunc": Sig(const(.002), .2),
                 "grad": Sig(const(.35), mode="grad"), "lr": Sig(const(1e-6), mode="exact"),
                 "clip_region": Sig(const(0.0), mode="exact"), "step_time": Sig(const(40), .05)},
          log_every=10, eval_every=50, eval_at_0=True, beta=0.02, cap=256, prompt_len=70, sps=42, age_h=0.05),
    writer(w_trl_state)(250, None, 10, 0, 1, "outputs/grpo-mt-en-de", None, False), 1714, (900, 2000), "rb",
    "rollback trl trainer_state trl1x reward-model-hacking translation train-rises-eval-falls",
    "TRL 1.x GRPO for English->German translation, rewarded by a reference-free QE model (comet_qe) plus a "
    "language-ID check. The reward keeps climbing (comet_qe 0.71 -> 0.86) and so does the QE score on the held-out "
    "set, but the reference-based eval_chrf that a callback logs every 50 steps (1000 sentences, sd ~0.5) peaked at "
    "~58 around step 450-520 and is 53 at step 900 of 2000 (10 sd down). lang_id slips 0.99 -> 0.93: the policy "
    "leaves spans untranslated, which the QE model does not punish. Reward hacking; roll back to the chrF peak "
    "(checkpoint-500).", onset=520))

_s15_len = path(900, (350, 1100), (437, 3900, -1.5))
SPECS.append(Spec(
    "bad-lengths-balloon-val-falls-then-oom-crash-traceback-verl-console",
    Story(Binary(path(.40, (350, .62, .6), (437, .45)), P=128, G=8),
          [verl_acc(path(.42, (350, .612, .6), (437, .50)), 500, "HuggingFaceH4/MATH-500", 4, spread=1.6)],
          "val-core/HuggingFaceH4/MATH-500/acc/mean@4", VERL,
          sides={"len": Sig(_s15_len, .03), "trunc": Sig(path(.01, (350, .02), (437, .55, -1.5)), .08),
                 "entropy": Sig(path(.5, (350, .44), (437, .9, -1)), .03),
                 "kl": Sig(path(0.0002, (350, .012), (437, .06)), .06), "grad": Sig(path(.2, (350, .22), (437, .9)), mode="grad"),
                 "lr": Sig(const(1e-6), mode="exact"), "clip_region": Sig(const(.003), .1),
                 "step_time": timing(50, .09, _s15_len)},
          eval_every=10, eval_at_0=True, cap=4096, sps=150, age_h=2.5),
    writer(w_verl_console)("train.log", False, True, "math_grpo", "qwen25-7b-m500", 20, 3, [
        "(TaskRunner pid=48112) Traceback (most recent call last):",
        '(TaskRunner pid=48112)   File "/workspace/verl/verl/trainer/main_ppo.py", line 317, in run',
        "(TaskRunner pid=48112)     trainer.fit()",
        '(TaskRunner pid=48112)   File "/workspace/verl/verl/trainer/ppo/ray_trainer.py", line 1205, in fit',
        "(TaskRunner pid=48112)     old_log_prob = self.actor_rollout_wg.compute_log_prob(batch)",
        "ray.exceptions.RayTaskError(OutOfMemoryError): ray::WorkerDict.actor_rollout_compute_log_prob() "
        "(pid=49020, ip=10.0.4.17)",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 18.44 GiB. GPU 0 has a total capacity of "
        "79.19 GiB of which 11.02 GiB is free.",
        "{T},118\tERROR worker.py:429 -- Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1')",
    ]), 1715, (437, 1000), "rb",
    "rollback verl console crashed traceback-at-end length-explosion oom checkpoint-rotated",
    "verl GRPO on MATH-500 validation every 10 steps (mean@4, sd ~0.015), max_actor_ckpt_to_keep=3. Val climbs "
    "0.42 -> 0.61 by step 350. Then responses balloon 1100 -> 3900 tokens against a 4096 cap (clip_ratio 0.02 -> "
    "0.55), entropy rises 0.44 -> 0.9, val falls to ~0.51 by step 430 and the score 0.62 -> 0.45; at step 437 the "
    "log-prob pass runs out of memory and the job dies (traceback at the end, 2.5 h ago). The best weights are "
    "around step 350; only global_step_380-420 are still on disk, so the target (~320-350) "
    "has to come from a copy saved elsewhere. Rollback, not resume.", onset=350))

_s16_parts = Parts([Part("accuracy_reward", const(0.0), kind="zero"),
                    Part("format_reward", path(.05, (200, .85, 1), (450, .97), (1500, .98))),
                    Part("tag_count_reward", path(.30, (150, .80, 1), (450, .95), (1500, .96)), kind="partial")],
                   P=16, G=8)
SPECS.append(Spec(
    "stop-accuracy-reward-exactly-zero-format-rewards-learn-trl017-console",
    Story(_s16_parts,
          [PartsEval(_s16_parts, 100, 8, {"total": "eval_reward", "accuracy_reward": "eval_rewards/accuracy_reward/mean",
                                          "format_reward": "eval_rewards/format_reward/mean",
                                          "tag_count_reward": "eval_rewards/tag_count_reward/mean"}, "accuracy_reward")],
          "eval_rewards/accuracy_reward/mean", TRL017,
          sides={"kl": Sig(path(0.0003, (450, .035)), .06), "len": Sig(path(240, (450, 520)), .04),
                 "trunc": Sig(path(.005, (450, .02)), .2), "grad": Sig(path(.4, (450, .3)), mode="grad"),
                 "lr": Sig(warm_linear(1e-6, 20, 1500), mode="exact"), "clip_region": Sig(const(0.0), mode="exact")},
          log_every=10, eval_every=100, beta=0.04, sps=20, age_h=0.05),
    writer(w_trl_console)(12000, "nohup.out"), 1716, (450, 1500), "stop",
    "stop trl console trl017 reward-components task-reward-floor format-only",
    "TRL 0.17 GRPO (stdout dicts) with three reward functions. rewards/accuracy_reward/mean is exactly 0.0 with std "
    "0.0 on every log for 450 steps, train and eval alike: the answer extractor never matches (the prompt asks for "
    "<answer> tags, the grader looks for \\boxed{}). Only the format and tag-count rewards learn (0.05 -> 0.97 and "
    "0.30 -> 0.95), so the total reward rises and the run looks alive. There is no task signal to learn from; 1050 "
    "more steps would only polish the format. Stop and fix the grader; the current weights are as good as any.",
    onset=0))

SPECS.append(Spec(
    "bad-finished-3000-eval-peaked-at-1900-slid-no-checkpoints-trl019-state",
    Story(Binary(path(.30, (1900, .66, 1), (3000, .73)), P=32, G=8),
          [acc1(path(.31, (1200, .60, .8), (1900, .675), (3000, .59)), 500, "eval_rewards/accuracy_reward/mean",
                "eval_reward")],
          "eval_rewards/accuracy_reward/mean", TRL018 | {"comp": "rewards/{fn}/{stat}"},
          sides={"len": Sig(path(300, (3000, 520)), .04), "trunc": Sig(path(.01, (3000, .06)), .15),
                 "grad": Sig(const(.28), mode="grad"), "lr": Sig(warm_cosine(1e-6, 100, 3000), mode="exact"),
                 "clip_region": Sig(const(0.0), mode="exact")},
          log_every=25, eval_every=100, sps=28, age_h=20),
    writer(w_trl_state)(None, None, 25, 0, 1, "outputs/grpo-q7b-3k"), 1717, (3000, 3000), "rb",
    "rollback trl trainer_state trl019 finished no-checkpoints save-strategy-no slow-slide decline-at-peak",
    "TRL 0.19 GRPO (beta 0, so no kl) trained to its planned 3000 steps 20 h ago with save_strategy='no': only the "
    "top-level trainer_state.json and the final weights exist. The train reward rises to the end (0.30 -> 0.73), "
    "but held-out accuracy (N=500, sd 0.021) peaked at ~0.675 around step 1900 and slid from there, no plateau, to "
    "~0.59 at step 3000 (4 sd). The final weights are not the ones to keep: a better model was at ~1900 (to be "
    "re-trained or restored from a copy saved elsewhere). Rollback.", onset=1900, finished=True))

SPECS.append(Spec(
    "bad-reward-server-schema-change-train-drops-instantly-eval-lags-openrlhf-tb",
    Story(Binary(path(.30, (380, .56, .6), (381, .34), (560, .29)), P=128, G=4),
          [acc1(path(.32, (380, .55, .6), (400, .548), (560, .43)), 500, "eval_math_pass1")],
          "eval_math_pass1", OPENRLHF,
          sides={"kl": Sig(path(0.0002, (380, .015), (560, .05)), .06), "len": Sig(path(700, (380, 760), (560, 560)), .04),
                 "trunc": Sig(const(.01), .2), "grad": Sig(path(.3, (380, .3), (390, .55), (560, .45)), mode="grad"),
                 "lr": Sig(const(5e-7), mode="exact"), "clip_region": Sig(const(.01), .1), "step_time": Sig(const(65), .05)},
          extra={"policy_loss": Sig(const(0.0), .01, "add"), "return": Sig(path(.3, (380, .55), (381, .33), (560, .27)), .03, "add")},
          averaged=False, eval_every=20, sps=65, age_h=0.04),
    writer(w_openrlhf_tb)("qwen25-7b-rpp-math", lambda run: [
        f"[{tstr(t_of(run, 0) - 300)}] launch: python -m openrlhf.cli.train_ppo_ray --advantage_estimator "
        "reinforce_baseline --n_samples_per_prompt 4 --rollout_batch_size 128 --remote_rm_url "
        "http://rm-svc:5000/get_reward --eval_steps 20 --logging_steps 1 --use_tensorboard tensorboard",
        f"[{tstr(t_of(run, 0) - 300)}] launch: 115200 prompts / 128 per step -> total training steps: 900",
        f"[{tstr(t_of(run, 380) - 30)}] ops: rm-svc redeployed (v2.3 -> v2.4)",
    ]), 1719, (560, 900), "rb",
    "rollback openrlhf tensorboard reinforce-pp reward-bug instant-drop eval-lags",
    "OpenRLHF REINFORCE++ trained against a remote reward service. At step 380 the service was redeployed and from "
    "then on scores one problem type as 0 whatever the answer: train/reward drops from 0.56 to 0.34 in a single "
    "step. The held-out pass@1 (graded locally, N=500, sd 0.022) does not drop at once; it slides as the policy "
    "learns from the wrong rewards, 0.55 at step 380 -> 0.43 at 560 of 900. The weights at ~380 are the good ones: "
    "roll back there (and fix the reward service).", onset=380))

SPECS.append(Spec(
    "bad-ppo-critic-steady-gsm8k-slides-from-peak-openrlhf-console",
    Story(Binary(path(.30, (520, .60, .6), (900, .50)), P=512, G=1),
          [acc1(path(.31, (520, .585, .6), (900, .50)), 1319, "eval_gsm8k_pass1")],
          "eval_gsm8k_pass1", {k: v for k, v in OPENRLHF.items() if k != "group_std"},
          sides={"kl": Sig(path(0.0002, (520, .02), (900, .06)), .06), "len": Sig(path(300, (520, 280), (900, 240)), .04),
                 "trunc": Sig(const(.004), .2), "grad": Sig(const(.3), mode="grad"), "lr": Sig(const(5e-7), mode="exact"),
                 "clip_region": Sig(path(.02, (900, .06)), .1), "step_time": Sig(const(60), .05)},
          extra={"policy_loss": Sig(const(0.0), .01, "add"), "critic_loss": Sig(path(.08, (520, .03), (900, .06)), .08),
                 "values": Sig(path(.1, (520, .45), (900, .5)), .02, "add"),
                 "return": Sig(path(.3, (520, .58), (900, .47)), .02, "add"),
                 "critic_lr": Sig(const(9e-6), mode="exact"), "critic_grad_norm": Sig(const(1.5), mode="grad")},
          averaged=False, eval_every=20, sps=60, age_h=0.05),
    writer(w_openrlhf_console)("train.log", "advantage_estimator='gae', rollout_batch_size=512, "
                               "n_samples_per_prompt=1, actor_learning_rate=5e-07, critic_learning_rate=9e-06, "
                               "init_kl_coef=0.01"), 1726, (900, 1600), "rb",
    "rollback openrlhf console ppo critic slow-slide decline-at-peak",
    "OpenRLHF PPO with a critic (GAE) on GSM8K, 512 prompts per step, driver log with a status dict per step. "
    "GSM8K pass@1 (N=1319, sd 0.014) climbs 0.31 -> 0.585 by step 520 and turns down right there, no plateau: "
    "0.50 at step 900 of 1600 (6 sd). The critic looks fine (critic_loss small, values tracking returns), which "
    "makes the slide easy to miss; KL triples and responses shorten 280 -> 240. Roll back to ~520.", onset=520))

SPECS.append(Spec(
    "bad-loader-wraps-to-small-easy-shard-train-jumps-eval-slides-custom-jsonl",
    Story(Binary(path(.30, (800, .55, .6), (810, .80), (1100, .88)), P=32, G=8),
          [acc1(path(.32, (800, .60, .6), (820, .598), (1100, .52)), 600, "eval_acc")],
          "eval_acc", {"reward": "reward", "reward_std": "reward_std", "zero_std": "frac_zero_std", "kl": "kl",
                       "entropy": "entropy", "len": "mean_len", "grad": "grad_norm", "lr": "lr"},
          sides={"entropy": Sig(path(.6, (800, .45), (1100, .22)), .03), "kl": Sig(path(0.0, (800, .02), (1100, .05)), .06),
                 "len": Sig(path(380, (800, 400), (1100, 330)), .04), "grad": Sig(const(.35), mode="grad"),
                 "lr": Sig(const(1e-6), mode="exact")},
          log_every=10, eval_every=50, eval_at_0=True, sps=30, age_h=0.04),
    writer(w_custom_jsonl)("logs/train.jsonl", "logs/eval.jsonl",
                           lambda s: {"prompts_seen": s * 32, "unique_prompts_seen": min(s, 800) * 32 + (256 if s > 800 else 0)},
                           {"total_steps": 2000, "batch_prompts": 32, "group_size": 8, "dataset": "math_mix_v2 (25,856 prompts)"}),
    1728, (1100, 2000), "rb",
    "rollback custom jsonl separate-eval-file data-loader-bug train-jumps eval-falls",
    "A hand-written GRPO loop with train records in logs/train.jsonl and held-out evals (600 problems, sd 0.02) in "
    "logs/eval.jsonl. At step 800 the data loader's sharding bug makes it cycle a 256-prompt easy tail: the train "
    "reward jumps 0.55 -> 0.80 and climbs to 0.88, frac_zero_std rises, unique_prompts_seen stops growing. It "
    "looks like a breakthrough; it is memorisation. Held-out accuracy peaked at 0.60 at step 800 and falls to "
    "0.52 by 1100 of 2000 while entropy halves. Roll back to ~800.", onset=800))

# ================================================================================================ subtle ones

SPECS.append(Spec(
    "bad-offpolicy-reuse-clip-ratios-climb-eval-erodes-trl1x-state-save-limit-5",
    Story(Binary(path(.32, (450, .56, .8), (470, .565), (750, .47)), P=32, G=8),
          [acc1(path(.30, (430, .53, .8), (470, .535), (750, .44)), 500, "eval_reward")],
          "eval_reward", TRL1X,
          sides={"clip_region": Sig(path(.04, (470, .05), (520, .12), (750, .31)), .06),
                 "entropy": Sig(path(.55, (470, .41), (750, .78)), .03), "kl": Sig(path(0.001, (470, .03), (750, .30)), .06),
                 "grad": Sig(path(.25, (470, .28), (750, .7)), mode="grad"), "len": Sig(path(480, (750, 560)), .04),
                 "trunc": Sig(path(.01, (750, .03)), .2), "lr": Sig(warm_const(2e-6, 30), mode="exact"),
                 "step_time": Sig(const(58), .05)},
          extra={"sampling/importance_sampling_ratio/mean": Sig(path(1.0, (470, .995), (750, .93)), .005, "add"),
                 "sampling/sampling_logp_difference/mean": Sig(path(.004, (470, .005), (750, .021)), .08)},
          log_every=10, eval_every=50, eval_at_0=True, beta=0.01, sps=55, age_h=0.06),
    writer(w_trl_state)(50, 5, 10, 0, 1, "outputs/grpo-q4b-reuse4"), 1718, (750, 1500), "rb",
    "rollback trl trainer_state trl1x off-policy clip-ratio-drift entropy-rise gradual",
    "TRL 1.x GRPO reusing every generation batch 4 times (steps_per_generation 4, num_iterations 4, lr 2e-6). "
    "Up to ~470 it is fine: eval_reward (N=500, sd 0.022) 0.30 -> 0.535, clip ratios ~5 %. Then the updates outrun "
    "the trust region: clip_ratio/region_mean 0.05 -> 0.31, entropy 0.41 -> 0.78, the vLLM importance ratio drifts "
    "to 0.93, kl 0.03 -> 0.30, and eval falls steadily to 0.44 by step 750 of 1500 (4 sd), the train reward "
    "0.565 -> 0.47. Nothing crashes; it just gets worse. save_total_limit=5 kept only 550-750: the target (~400-450) "
    "has to come from elsewhere. Rollback.", onset=470))

_s20_train = Pref(acc=path(.5, (300, .70, 1), (800, .80), (1300, .86), (2000, .9)),
                  spread=path(.3, (800, 2.4), (1300, 3.8), (2000, 5)), chosen=path(0, (800, -.6), (1300, -1.4)), B=64)
_s20_eval = Pref(acc=path(.5, (300, .64, 1), (800, .71), (1300, .706), (2000, .70)),
                 spread=path(.4, (300, 1.2), (800, 1.9), (1300, 3.6), (2000, 5)), chosen=path(0, (800, -.4), (1300, -1.2)))
SPECS.append(Spec(
    "sor-dpo-eval-acc-flat-since-800-eval-loss-creeps-up-best-ckpt-kept-trl-state",
    Story(_s20_train,
          [PrefEval(_s20_eval, 1500, {"acc": "eval_rewards/accuracies", "margin": "eval_rewards/margins",
                                      "chosen": "eval_rewards/chosen", "rejected": "eval_rewards/rejected",
                                      "loss": "eval_loss"})],
          "eval_rewards/accuracies", DPO_OLD,
          sides={"grad": Sig(path(12, (1300, 19)), mode="grad"), "lr": Sig(warm_linear(5e-7, 100, 2000), mode="exact")},
          extra={"logps/chosen": Sig(path(-240, (1300, -262)), 4, "add"), "logps/rejected": Sig(path(-251, (1300, -300)), 4, "add"),
                 "logits/chosen": Sig(path(-.81, (1300, -.74)), .02, "add"),
                 "logits/rejected": Sig(path(-.80, (1300, -.70)), .02, "add")},
          log_every=10, eval_every=100, sps=30, age_h=0.08),
    writer(w_trl_state)(100, 3, 10, 0, 1, "outputs/dpo-q7b-hh", ("eval_loss", False)), 1720, (1300, 2000), "sor",
    "stop-or-rollback trl trainer_state dpo eval-loss-rises eval-acc-plateau best-model-checkpoint",
    "TRL DPO with load_best_model_at_end on eval_loss (so the best checkpoint is kept beside the last three). Train "
    "accuracy keeps climbing 0.80 -> 0.86 and train loss falls from step 800 to 1300 of 2000, but held-out "
    "preference accuracy (1500 pairs, sd 0.012) has been flat at ~0.71 since step 800 (0.706 now, 0.3 sd below) "
    "while eval_loss creeps up from its minimum as the margins spread: the model grows more confident on the pairs "
    "it gets wrong. Nothing more to gain, and the drift costs little yet: stop; restoring the ~800 checkpoint (the "
    "one kept as best) is as good.", onset=800))

SPECS.append(Spec(
    "conv-nemo-validation-flat-since-1450-at-1900-of-2000-cosine-tail-tb",
    Story(Binary(path(.25, (1000, .57, 1), (1450, .61, .5), (2000, .615)), P=64, G=16),
          [acc1(path(.27, (1000, .55, 1), (1450, .585, .5), (1900, .588), (2000, .589)), 500, "validation/accuracy")],
          "validation/accuracy", NEMO,
          sides={"kl": Sig(path(.002, (1900, .004)), .06), "entropy": Sig(path(.5, (1450, .33), (1900, .31)), .03),
                 "len": Sig(path(800, (1900, 950)), .03), "trunc": Sig(const(.01), .2), "grad": Sig(const(.25), mode="grad"),
                 "lr": Sig(warm_cosine(1e-6, 50, 2000, 1e-8), mode="exact"), "step_time": Sig(const(80), .05)},
          extra={"train/token_mult_prob_error": Sig(const(1.004), .0008, "add"),
                 "validation/avg_length": Sig(path(760, (1900, 930)), .03)},
          eval_every=50, eval_at_0=True, cap=4096, sps=80, age_h=0.04),
    writer(w_nemo_tb)("exp_003", "grpo:\n  max_num_steps: 2000\n  val_period: 50\n  val_at_start: true\n"
                                 "  num_prompts_per_step: 64\n  num_generations_per_prompt: 16\npolicy:\n"
                                 "  optimizer:\n    kwargs:\n      lr: 1.0e-06\n  scheduler: cosine\n"
                                 "logger:\n  tensorboard_enabled: true\n"),
    1721, (1900, 2000), "conv",
    "converged nemo-rl tensorboard plateau cosine-tail near-end",
    "NeMo-RL GRPO at step 1900 of 2000 with a cosine schedule now near 1e-8. Validation accuracy (N=500, sd 0.022) "
    "rose 0.27 -> 0.585 by step 1450 and has gained only ~0.003 since (below noise); the train reward likewise "
    "flat at ~0.61, entropy steady, no sign of damage. Converged with 100 nearly-frozen steps left: stopping now or "
    "letting it finish are both fine (stop preferred).", onset=1450))

SPECS.append(Spec(
    "stop-long-plateau-eval-200-noisy-lucky-highs-every-50-mlflow-files",
    Story(Binary(path(.30, (500, .52, 1), (1300, .53), (3000, .535)), P=16, G=8),
          [acc1(path(.28, (500, .50, 1), (1300, .505), (3000, .51)), 200, "eval/accuracy")],
          "eval/accuracy", {"reward": "train/reward", "reward_std": "train/reward_std", "kl": "train/kl",
                            "entropy": "train/entropy", "len": "train/resp_len", "grad": "train/grad_norm", "lr": "train/lr"},
          sides={"kl": Sig(path(0.0, (500, .015), (1300, .02)), .06), "entropy": Sig(path(.6, (500, .42), (1300, .40)), .03),
                 "len": Sig(const(350), .03), "grad": Sig(const(.3), mode="grad"), "lr": Sig(const(1e-6), mode="exact")},
          log_every=50, eval_every=100, eval_at_0=True, sps=22, age_h=0.2),
    writer(w_mlflow_files)({"max_steps": 3000, "log_every": 50, "eval_every": 100, "eval_n": 200, "lr": 1e-6},
                           "grpo-custom-q3b"), 1722, (1300, 3000), "stop",
    "stop mlflow file-store custom-loop every-50 long-plateau noisy-small-eval",
    "A custom GRPO loop logging to an MLflow file store every 50 steps (train values averaged over the 50), with a "
    "200-problem eval every 100 (sd 0.035). Both curves rose until ~500-600 and have been flat since: train reward "
    "~0.52-0.53, eval level ~0.50 for 700+ steps, KL and entropy settled. The eval points scatter +-0.05; the "
    "highest ones are luck, not a better model behind. 1700 steps of budget remain, but nothing suggests they "
    "would buy anything. Stop; the current weights are as good as any.", onset=600))

SPECS.append(Spec(
    "bad-eval-peaked-450-train-rising-quiet-side-signals-epoch3-hf-tb-trl019",
    Story(Binary(path(.35, (450, .58, .8), (950, .70)), P=32, G=8),
          [acc1(path(.33, (400, .545, .8), (450, .55), (950, .49)), 800, "eval_rewards/accuracy_reward/mean",
                "eval_reward")],
          "eval_rewards/accuracy_reward/mean", TRL018 | {"comp": "rewards/{fn}/{stat}"},
          sides={"len": Sig(path(350, (950, 340)), .04), "trunc": Sig(const(.01), .2), "grad": Sig(const(.3), mode="grad"),
                 "lr": Sig(warm_const(1e-6, 20), mode="exact"), "clip_region": Sig(const(0.0), mode="exact")},
          log_every=10, eval_every=50, sps=35, age_h=0.07),
    writer(w_hf_tb)("a100-12", None, 300), 1723, (950, 2000), "rb",
    "rollback hf tensorboard trl019 multi-epoch small-trainset train-rises-eval-falls quiet-sides",
    "TRL 0.19 GRPO via TensorBoard on a small training set (300 steps per epoch; 3.2 epochs done), beta 0 so no "
    "KL and no entropy are logged. The train reward rises smoothly all the way (0.35 -> 0.70) and the side signals "
    "are quiet: lengths flat at ~345, no truncation, tame grad norms; only frac_reward_zero_std creeps up as more "
    "training groups are solved by every sample. The held-out accuracy (N=800, sd 0.018) peaked at 0.55 around "
    "step 450 and has slid to 0.49 by 950 (3.5 sd): the policy is fitting its training prompts. Roll back to "
    "~450.", onset=450))

SPECS.append(Spec(
    "stop-curriculum-jump-to-hard-stage-signal-gone-zero-std-over-90pct-eval-flat-trl018-state",
    Story(Binary(path(.35, (500, .70, 1), (501, .012), (1200, .013), (2000, .015)), P=32, G=8, spread=1.6),
          [acc1(path(.30, (500, .46, 1), (1200, .462), (2000, .463)), 500, "eval_rewards/accuracy_reward/mean",
                "eval_reward")],
          "eval_rewards/accuracy_reward/mean", TRL018 | {"comp": "rewards/{fn}/{stat}"},
          sides={"kl": Sig(path(0.0005, (500, .03), (1200, .034)), .05),
                 "grad": Sig(path(.3, (500, .3), (510, .04), (1200, .035)), mode="grad"),
                 "len": Sig(path(300, (500, 330), (510, 900), (1200, 1010)), .03),
                 "trunc": Sig(path(.01, (500, .01), (510, .25), (1200, .3)), .08),
                 "lr": Sig(const(1e-6), mode="exact"), "clip_region": Sig(const(0.0), mode="exact")},
          extra={"curriculum_stage": Sig(lambda s: 1.0 if s <= 500 else 3.0, mode="exact")},
          log_every=10, eval_every=100, beta=0.04, sps=26, age_h=0.05),
    writer(w_trl_state)(100, 3, 10, 0, 1, "outputs/grpo-curric"), 1724, (1200, 2000), "stop",
    "stop trl trainer_state trl018 curriculum no-learning-signal zero-std eval-flat",
    "TRL 0.18 GRPO with a curriculum callback (logged as curriculum_stage). Stage 1 worked: reward 0.35 -> 0.70 "
    "and held-out accuracy (N=500, sd 0.022) 0.30 -> 0.46 by step 500. Then the callback jumped straight to stage 3 "
    "(competition problems): the reward falls to ~0.01, frac_reward_zero_std to ~0.92, grad norm to 0.04, answers "
    "run into the cap, and for 700 steps nothing moves: held-out accuracy flat at ~0.46, kl flat. The drop in "
    "reward is the harder data, not damage, so there is nothing to roll back to; there is also no learning signal "
    "left. Stop (and fix the curriculum).", onset=500))

SPECS.append(Spec(
    "sor-plateau-500-to-1100-then-slow-erosion-1.8sd-kl-creeps-trackio",
    Story(Binary(path(.35, (500, .62, 1), (1500, .625)), P=32, G=8),
          [acc1(path(.35, (500, .56, 1), (1100, .56), (1500, .52)), 500, "eval_rewards/accuracy_reward/mean")],
          "eval_rewards/accuracy_reward/mean", TRL020 | {"comp": "rewards/{fn}/{stat}"},
          sides={"kl": Sig(path(0.0005, (500, .02), (1500, .07)), .06), "entropy": Sig(path(.55, (500, .40), (1500, .34)), .03),
                 "len": Sig(const(420), .03), "trunc": Sig(const(.02), .2), "grad": Sig(const(.3), mode="grad"),
                 "lr": Sig(const(1e-6), mode="exact"), "clip_region": Sig(const(0.0), mode="exact")},
          log_every=10, eval_every=50, beta=0.04, sps=33, age_h=0.06),
    writer(w_trackio)("grpo-math", "qwen3-4b-grpo-b004", {"max_steps": 2000, "logging_steps": 10, "eval_steps": 50,
                                                          "beta": 0.04, "learning_rate": 1e-6}),
    1725, (1500, 2000), "sor",
    "stop-or-rollback trackio long-plateau slow-erosion kl-creep within-noise-ish",
    "TRL GRPO logged to Trackio. Held-out accuracy (N=500, sd 0.022) rose to ~0.56 by step 500 and held there to "
    "~1100; since then it has eased to ~0.52 at step 1500 of 2000, about 1.8 sd of one eval over eight noisy points, "
    "while the train reward stays flat at ~0.62 and KL creeps 0.02 -> 0.07. Nothing is left to gain; whether the "
    "erosion is real is hard to tell from noise. Stop; going back to the end of the good plateau (~1100) is as "
    "good.", onset=1100))


CASES = [s.case() for s in SPECS]
STORY = {s.name: s for s in SPECS}


def build_run(spec: Spec) -> dict:
    case = spec.case()
    rng = np.random.default_rng(case.seed)
    st = spec.story
    run = st.draws(rng, case.reached)
    run.update(planned=case.planned, reached=case.reached, eval_every=st.eval_every, age_h=st.age_h, sps=st.sps,
               cap=st.cap, finished=spec.finished)
    if spec.ghost:
        a, b, gst = spec.ghost
        ghost = replace(gst, start=a).draws(np.random.default_rng(case.seed + 1000), b)
        run.update(ghost=ghost, resume_from=a)
    return run


def write_run(case: Case, folder: Path) -> None:
    spec = STORY[case.name]
    run = build_run(spec)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    stamp(folder, run)
    for rel, t in run.get("mtimes", {}).items():
        os.utime(folder / rel, (t, t))


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = STORY[c.name]
        st = spec.story
        steps = st.headline_steps(c.reached)
        lv = st.headline_level
        best_s = max(steps, key=lv)
        sd = st.headline_sd(lv(best_s))
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} "
              f"reached={c.reached}/{c.planned}")
        drop = (lv(best_s) - lv(steps[-1])) / sd if sd else float("nan")
        print(f"    headline {st.headline}: best {lv(best_s):.4g}@{best_s} last {lv(steps[-1]):.4g}@{steps[-1]} "
              f"sd {sd:.4f} ({drop:.1f} sd below best)")
        run = build_run(spec)
        if st.headline == TRAIN:
            key = st.keymap["reward"]
            pts = [(s, v[key if isinstance(key, str) else key[0]]) for s, v in run["train"]]
        else:
            pts = [(s, v[st.headline]) for s, v in run["evals"]]
        stride = max(1, len(pts) // 14)
        print("    drawn " + " ".join(f"{s}:{x:.3f}" for s, x in pts[::stride]) + f" | last {pts[-1][0]}:{pts[-1][1]:.3f}")
        if pts:
            mx = max(pts, key=lambda p: p[1])
            print(f"    drawn max {mx[1]:.3f}@{mx[0]}")


HEADER = """# Holdout set 17: hand-built runs written by make_holdout17.py, independent of the assessor, its judges and the
# generators of the other holdout sets. Labels: what a careful practitioner should do under DESIGN.md's decision
# contract, read from the noise-free levels of each story. rollback_window is inclusive: from the first logged
# headline step whose level is within one sampling sd of the best level to the newest such step not after
# onset_step. Steps are in each run's own logged units.
# Run `.venv/bin/python evals/holdout17/make_holdout17.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout17.py", "holdout17.yaml", "h17-", "holdout17", HEADER, CASES, write_run, check)


if __name__ == "__main__":
    main()
