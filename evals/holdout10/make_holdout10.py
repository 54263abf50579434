"""Holdout set 10: 30 hand-labelled RL post-training runs in the files the frameworks write.

Run from the repository root:

    .venv/bin/python evals/holdout10/make_holdout10.py            # write runs/ (gitignored) and holdout10.yaml
    .venv/bin/python evals/holdout10/make_holdout10.py --check    # print levels, best/last points, windows
    .venv/bin/python evals/holdout10/make_holdout10.py --verify   # read the runs back (json, EventAccumulator, mlflow)

Written without reading the assessor, its skills, prompts, tests, judges' answers or any other holdout generator.
Sources: DESIGN.md's decision contract, ../shared/reference/metrics-and-formats.md for every key name and file layout,
the practitioner seeds and the real third-party logs (for scale, noise and line shapes).

How a run is made. Each row of CASES is a Spec: noise-free curves over the optimizer step, built from a small
vocabulary (rise, logrise, lift, ramp, bump, saw, hold, expo, ...) that adds together, plus a few events (a resume that
switches reward normalisation on, a sandbox outage, fp16 dynamic loss scaling, a world-size change). `simulate` then
draws every logged number the way it is produced:
  * a binary verifiable reward is a batch of M prompts x G samples: each prompt's pass rate is drawn from a Beta
    around the clean accuracy (prompts differ in difficulty), its G samples are Bernoulli; the logged reward is the
    batch mean, reward_std the batch std, the zero-std fraction the share of groups that all passed or all failed;
  * a reward-model score is a batch mean of a continuous score (normal, per-sample sd given in the spec);
  * held-out evals are Binomial(N, p)/N on N problems (N from 30 to 5,000); RM-scored evals are normal with sd/sqrt(N);
  * lengths are batch means (relative noise ~2.5%), entropy/KL multiplicative noise, gradient norms log-normal with
    rare heavy-tailed spikes, learning rates exact;
  * TRL averages every step since the last log (grad_norm/lr are last-step values); verl, NeMo-RL, OpenRLHF and the
    custom loops log the current step.

Labels follow DESIGN.md ("What the three decisions mean"). The rollback window is inclusive and computed from the
noise-free headline curve (the held-out eval named in the spec; the train reward when a run has no eval): the best
clean value b on the logged grid, the tolerance one sampling sd of a logged point at b (sqrt(b(1-b)/N) for an eval of
N problems, sd/sqrt(N) for a score, the batch sd of a logged train reward), "as good" = clean >= b - tol. The window
runs from the first logged step (grid of 10 steps) that is as good as the best to the newest step of that stretch
that is not after the onset, the step where the damage begins (a critic break, a resume, the first overflows, the
start of a decline): every step given up is compute thrown away, but weights trained through the damage are not
restored. mean@k evals on few problems use N*min(k, 2) as their effective size (samples of one problem are
correlated). Where two decisions are defensible (a run that converged just before its planned end) both are accepted
and the preferred one is named. `--check` recomputes every window, flags any that differ from the table or any label
the noise-free curve contradicts, and prints the noisy levels a reader of the logs sees, so each label can be checked
against the numbers; `--verify` reads every run back.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from holdout_kit import (  # noqa: E402
    HEALTHY,
    Case,
    build,
    converged,
    dump_json,
    rollback,
    stop,
    tb_file,
    trainer_state,
    writer,
)

T0 = datetime(2025, 9, 14, 8, 0, 0, tzinfo=UTC).timestamp()


# ---------------------------------------------------------------------------------------------- curve vocabulary

class C:
    """A noise-free curve over optimizer steps; curves add (and scale) into new curves."""

    def __init__(self, f: Callable[[np.ndarray], np.ndarray]):
        self.f = f

    def __call__(self, s) -> np.ndarray:
        return np.asarray(self.f(np.asarray(s, dtype=float)), dtype=float)

    def __add__(self, other: C | float) -> C:
        return C(lambda s: self(s) + (other(s) if isinstance(other, C) else other))

    __radd__ = __add__

    def __mul__(self, k: float) -> C:
        return C(lambda s: self(s) * k)


def const(v: float) -> C:
    return C(lambda s: np.full(np.shape(s), float(v)))


def rise(a: float, b: float, tau: float, t0: float = 0) -> C:
    """Saturating rise from a toward b with time constant tau, starting at t0."""
    return C(lambda s: a + (b - a) * (1 - np.exp(-np.clip(s - t0, 0, None) / tau)))


def logrise(a: float, k: float, s0: float) -> C:
    """Log-linear improvement: looks flat on a linear axis late in a long run."""
    return C(lambda s: a + k * np.log1p(np.clip(s, 0, None) / s0))


def lift(a: float, b: float, at: float, w: float) -> C:
    """Sigmoid lift-off (sparse rewards): near a until `at`, then toward b."""
    return C(lambda s: a + (b - a) / (1 + np.exp(-(s - at) / w)))


def ramp(start: float, end: float, amount: float) -> C:
    """Linear change of `amount` between two steps, flat before and after."""
    return C(lambda s: amount * np.clip((s - start) / max(end - start, 1e-9), 0, 1))


def bump(at: float, height: float, width: float) -> C:
    return C(lambda s: height * np.exp(-0.5 * ((s - at) / width) ** 2))


def saw(period: float, top: float, bottom: float = 0.0) -> C:
    """Sawtooth: climbs from bottom to top over each period, then resets (reference-model sync)."""
    return C(lambda s: bottom + (top - bottom) * ((s % period) / period))


def hold(curve: C, at: float) -> C:
    """The curve frozen from `at` on (weights stop changing)."""
    return C(lambda s: curve(np.minimum(s, at)))


def expo(a: float, b: float, start: float, tau: float) -> C:
    """Geometric growth after `start` (a KL controller multiplying its coefficient), capped at b."""
    return C(lambda s: np.minimum(a * np.exp(np.clip(s - start, 0, None) / tau), b))


def cosine_lr(peak: float, warmup: int, total: int, floor: float = 0.0) -> C:
    def f(s):
        w = np.clip(s / max(warmup, 1), 0, 1)
        t = np.clip((s - warmup) / max(total - warmup, 1), 0, 1)
        return np.where(s < warmup, peak * w, floor + (peak - floor) * 0.5 * (1 + np.cos(np.pi * t)))
    return C(f)


def warm_const(peak: float, warmup: int) -> C:
    return C(lambda s: peak * np.clip(s / max(warmup, 1), 0, 1))


# --------------------------------------------------------------------------------------------------- the spec

@dataclass
class Eval:
    """A held-out evaluation: `n` problems every `every` steps (first at `first`), noise-free curve `p`."""

    name: str
    n: int
    p: C
    every: int
    first: int | None = None
    sd: float | None = None  # per-sample sd of a continuous (RM / judge) score; None = binary accuracy
    k: int = 1  # samples per problem reported as mean@k (noise uses n_eff = n * min(k, 2))


@dataclass
class Spec:
    acc: C  # clean train reward: success probability (binary) or mean score (continuous)
    series: dict[str, C] = field(default_factory=dict)
    evals: list[Eval] = field(default_factory=list)
    score_sd: float | None = None  # continuous reward: per-sample sd; None = binary verifiable reward
    group: int = 8
    prompts: int | C = 64
    cap: int = 2048  # max response length
    headline: str | None = None  # eval that decides the window; None = train reward
    components: dict[str, C] = field(default_factory=dict)  # extra reward functions (binary), logged separately
    events: list[Callable] = field(default_factory=list)  # (sim, rng) -> None, applied after the draw
    meta: dict = field(default_factory=dict)


@dataclass
class Sim:
    spec: Spec
    steps: np.ndarray
    planned: int | None
    x: dict[str, np.ndarray]  # noisy per-step values, canonical names
    clean: dict[str, np.ndarray]
    evals: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]  # name -> (steps, clean, noisy)
    meta: dict

    @property
    def reached(self) -> int:
        return int(self.steps[-1])


DEFAULTS = dict(len=const(600), ent=const(0.45), gn=const(0.3), lr=const(1e-6), clip=const(0.0), ppo_kl=const(2e-4))
NOISE = dict(len=("rel", .025), ent=("rel", .03), kl=("rel", .10), kl_coef=("none", 0), clip=("rel", .15),
             ppo_kl=("rel", .6), gn=("heavy", .3), lr=("none", 0), ev=("abs", .06), vf_loss=("rel", .2),
             values=("abs", .05), turns=("rel", .03), tool_calls=("rel", .04), tool_ok=("abs", .015),
             gen_batches=("gen", 0), judge=("abs", .02), loss_scale=("none", 0), step_time=("rel", .05))


def beta_pass(acc: np.ndarray, rng: np.random.Generator, m: int, conc: float = 2.5) -> np.ndarray:
    """Per-prompt pass rates: prompts differ in difficulty around the clean accuracy."""
    a = np.clip(acc, 1e-3, 1 - 1e-3)[:, None] * conc
    b = (1 - np.clip(acc, 1e-3, 1 - 1e-3))[:, None] * conc
    return rng.beta(np.broadcast_to(a, (len(acc), m)), np.broadcast_to(b, (len(acc), m)))


def simulate(spec: Spec, rng: np.random.Generator, reached: int, planned: int | None) -> Sim:
    s = np.arange(1, reached + 1, dtype=float)
    series = {**DEFAULTS, **spec.series}
    clean = {k: c(s) for k, c in series.items()}
    acc = spec.acc(s)
    clean["reward"] = acc
    x: dict[str, np.ndarray] = {}
    mprompts = spec.prompts(s).astype(int) if isinstance(spec.prompts, C) else np.full(len(s), spec.prompts)
    mmax, g = int(mprompts.max()), spec.group
    mask = np.arange(mmax)[None, :] < mprompts[:, None]
    if spec.score_sd is None:
        k = rng.binomial(g, beta_pass(acc, rng, mmax))
        frac = k / g
        x["reward"] = (frac * mask).sum(1) / mprompts
        x["reward_std"] = np.sqrt(np.clip(x["reward"] * (1 - x["reward"]), 0, None))
        flat = ((k == 0) | (k == g)) & mask
        x["zero_std"] = flat.sum(1) / mprompts
        x["pct_0"] = (((k == 0) & mask).sum(1) / mprompts)
        x["pct_1"] = (((k == g) & mask).sum(1) / mprompts)
        x["group_std"] = (np.sqrt(frac * (1 - frac)) * mask).sum(1) / mprompts
    else:
        n = mprompts * g
        x["reward"] = acc + rng.normal(0, spec.score_sd / np.sqrt(n))
        x["reward_std"] = spec.score_sd * np.exp(rng.normal(0, .04, len(s)))
        x["zero_std"] = np.zeros(len(s))
        x["group_std"] = x["reward_std"] * 0.8
    for name, comp in spec.components.items():
        kk = rng.binomial(g, beta_pass(comp(s), rng, mmax))
        x["comp:" + name] = ((kk / g) * mask).sum(1) / mprompts
    for key, val in clean.items():
        if key == "reward":
            continue
        kind, sd = NOISE.get(key, ("rel", .03))
        if kind == "rel":
            x[key] = val * (1 + rng.normal(0, sd, len(s)))
        elif kind == "abs":
            x[key] = val + rng.normal(0, sd, len(s))
        elif kind == "heavy":
            spikes = np.where(rng.random(len(s)) < 0.015, 1 + rng.pareto(1.5, len(s)), 1.0)
            x[key] = val * np.exp(rng.normal(0, sd, len(s))) * spikes
        elif kind == "gen":  # generation rounds under dynamic sampling: integer >= 1
            x[key] = np.maximum(1, rng.poisson(np.maximum(val - 1, 0)) + 1).astype(float)
        else:
            x[key] = val.copy()
    x["len"] = np.clip(x["len"], 1, spec.cap)
    ln = clean["len"]
    z = (np.log(spec.cap) - np.log(np.maximum(ln, 1)) + 0.5 * 0.45 ** 2) / 0.45
    if "trunc" not in x:
        x["trunc"] = np.clip(0.5 * np.vectorize(math.erfc)(z / math.sqrt(2)) + rng.normal(0, .004, len(s)), 0, 1)
    x["len_max"] = np.minimum(spec.cap, x["len"] * rng.uniform(2.1, 2.9, len(s)))
    x["len_min"] = np.maximum(1, x["len"] * rng.uniform(0.12, 0.3, len(s)))
    x["step_time"] = x.get("step_time", (40 + 0.11 * x["len"] * mprompts / 64) * np.exp(rng.normal(0, .05, len(s))))
    x["gen_time"] = x["step_time"] * rng.uniform(0.55, 0.7, len(s))
    x["tokens"] = mprompts * g * (x["len"] + 180)
    x["pg_loss"] = rng.normal(0, .02, len(s)) + 0.04 * clean.get("kl", np.zeros(len(s)))
    evals = {}
    for ev in spec.evals:
        start = ev.first if ev.first is not None else ev.every
        es = np.arange(start, reached + 1, ev.every, dtype=float)
        pc = ev.p(es)
        if ev.sd is None:
            n_eff = ev.n * min(ev.k, 2)
            noisy = rng.binomial(n_eff, np.clip(pc, 0, 1)) / n_eff
        else:
            noisy = pc + rng.normal(0, ev.sd / math.sqrt(ev.n), len(es))
        evals[ev.name] = (es.astype(int), pc, noisy)
    sim = Sim(spec, s.astype(int), planned, x, clean, evals, dict(spec.meta))
    for event in spec.events:
        event(sim, rng)
    return sim


# ------------------------------------------------------------------------------------------------------ events

def normalise_from(at: int, mu: float, sigma: float):
    """A resume that switches reward normalisation on: logged rewards and RM-scored evals become (r - mu) / sigma."""
    def apply(sim: Sim, rng):
        after = sim.steps > at
        sim.x["reward"] = np.where(after, (sim.x["reward"] - mu) / sigma, sim.x["reward"])
        sim.x["reward_std"] = np.where(after, sim.x["reward_std"] / sigma, sim.x["reward_std"])
        for name, (es, pc, noisy) in sim.evals.items():
            sim.evals[name] = (es, pc, np.where(es > at, (noisy - mu) / sigma, noisy))
        sim.meta["normalise_at"] = (at, mu, sigma)
    return apply


def outage(lo: int, hi: int):
    """The code sandbox times out: every sample scores 0, no group has spread, nothing is learned."""
    def apply(sim: Sim, rng):
        w = (sim.steps >= lo) & (sim.steps < hi)
        n = int(w.sum())
        sim.x["reward"][w] = rng.binomial(512, 0.015, n) / 512
        sim.x["reward_std"][w] = np.sqrt(sim.x["reward"][w] * (1 - sim.x["reward"][w]))
        sim.x["zero_std"][w] = rng.uniform(0.9, 0.99, n)
        sim.x["pct_0"][w] = sim.x["zero_std"][w]
        sim.x["pct_1"][w] = 0.0
        sim.x["gn"][w] *= 0.05
        sim.x["reward_time"] = np.where(w, rng.uniform(280, 320, len(w)), rng.uniform(8, 14, len(w)))
        for name, (es, pc, noisy) in sim.evals.items():
            hit = (es >= lo) & (es < hi)
            sim.evals[name] = (es, pc, np.where(hit, rng.binomial(500, 0.01, len(es)) / 500, noisy))
    return apply


def loss_scaling(p_overflow: C, init_power: int = 16, window: int = 1000, min_scale: float = 1.0,
                 first_search: int = 0, ceiling: float = math.inf):
    """fp16 dynamic loss scaling (DeepSpeed / torch GradScaler): an overflow halves the scale and skips the step,
    `window` clean steps double it. The first `first_search` steps overflow while the scale searches down; a scale
    above `ceiling` always overflows (the healthy sawtooth), and p_overflow adds overflows from bad gradients."""
    def apply(sim: Sim, rng):
        p = p_overflow(sim.steps)
        scale, clean_run = 2.0 ** init_power, 0
        scales, skipped, before = [], [], []
        for i in range(len(sim.steps)):
            over = i < first_search or scale > ceiling or rng.random() < p[i]
            before.append(scale)
            if over:
                scale, clean_run = max(scale / 2, min_scale), 0
            else:
                clean_run += 1
                if clean_run >= window:
                    scale, clean_run = scale * 2, 0
            scales.append(scale)
            skipped.append(over)
        sim.x["loss_scale"] = np.array(scales)
        sim.x["attempted_scale"] = np.array(before)
        sim.x["skipped"] = np.array(skipped, dtype=float)
        sim.x["gn"] = np.where(sim.x["skipped"] > 0, np.inf, sim.x["gn"])
    return apply


def more_gpus(at: int, factor: float):
    """World size multiplied at a resume: more tokens per step, shorter steps, smaller gradient noise."""
    def apply(sim: Sim, rng):
        after = sim.steps > at
        sim.x["step_time"] = np.where(after, sim.x["step_time"] * 0.62, sim.x["step_time"])
        sim.x["gen_time"] = np.where(after, sim.x["gen_time"] * 0.6, sim.x["gen_time"])
        sim.x["gn"] = np.where(after, sim.x["gn"] / math.sqrt(factor), sim.x["gn"])
        sim.meta["world_size"] = (at, factor)
    return apply


# ------------------------------------------------------------------------------------------- framework key maps

def window_vals(sim: Sim, lo: int, hi: int, key: str, avg: bool) -> float | None:
    """The value a framework logs for steps lo..hi: the mean since the last log (TRL) or the current step."""
    if key not in sim.x:
        return None
    v = sim.x[key][lo - 1:hi]
    if not avg:
        return float(v[-1])
    with np.errstate(invalid="ignore"):
        return float(np.mean(v))


def trl_grpo_row(sim: Sim, lo: int, hi: int, v: float, beta: float, fns: tuple[str, ...], epoch_len: int) -> dict:
    """One TRL GRPO/RLOO(>=0.22) log dict for steps lo..hi, keys as in TRL version v."""
    a = partial(window_vals, sim, lo, hi, avg=True)
    last = partial(window_vals, sim, lo, hi, avg=False)
    kl = a("kl") if beta else None
    row: dict = {"loss": round(beta * (kl or 0) + float(np.mean(sim.x["pg_loss"][lo - 1:hi])) * 0.2, 4),
                 "grad_norm": last("gn"), "learning_rate": last("lr"),
                 "num_tokens": float(round(sim.x["tokens"][:hi].sum()))}
    ln = a("len")
    if v >= 0.17:
        row.update({"completions/mean_length": ln, "completions/min_length": a("len_min"),
                    "completions/max_length": a("len_max"), "completions/clipped_ratio": a("trunc"),
                    "completions/mean_terminated_length": ln * (1 - 0.6 * a("trunc")),
                    "completions/min_terminated_length": a("len_min"),
                    "completions/max_terminated_length": a("len_max") * 0.97})
    else:
        row["completion_length"] = ln
    comps = {fns[0]: "reward"} | {f: "comp:" + f for f in fns[1:]}
    for fn, key in comps.items():
        m = a(key) if key in sim.x else a("reward")
        if v >= 0.17:
            row[f"rewards/{fn}/mean"] = m
            row[f"rewards/{fn}/std"] = math.sqrt(max(m * (1 - m), 0)) if m <= 1 else a("reward_std")
        else:
            row[f"rewards/{fn}"] = m
    total = sum(row.get(f"rewards/{f}/mean", row.get(f"rewards/{f}", 0)) for f in fns)
    row["reward"], row["reward_std"] = total, a("reward_std")
    if v >= 0.18:
        row["frac_reward_zero_std"] = a("zero_std")
    if beta:
        row["kl"] = kl
    if v >= 0.20:
        row["entropy"] = a("ent")
    if v >= 0.17:
        c = a("clip")
        row.update({"clip_ratio/low_mean": c * 0.4, "clip_ratio/low_min": 0.0, "clip_ratio/high_mean": c * 0.6,
                    "clip_ratio/high_max": min(1.0, c * 2.2), "clip_ratio/region_mean": c})
    elif v >= 0.16:
        row["clip_ratio"] = a("clip")
    if v >= 0.26:
        row["step_time"] = a("step_time")
    row["epoch"] = round(hi / epoch_len, 4)
    row["step"] = hi
    return {k: (None if isinstance(val, float) and math.isnan(val) else val) for k, val in row.items()}


def trl_eval_rows(sim: Sim, hi: int, epoch_len: int, prefix_sets: bool) -> list[dict]:
    out = []
    for name, (es, _, noisy) in sim.evals.items():
        hit = np.nonzero(es == hi)[0]
        if not len(hit):
            continue
        val = float(noisy[hit[0]])
        p = f"eval_{name}_" if prefix_sets else "eval_"
        row = {p + "reward": val, p + "rewards/accuracy_reward/mean": val, p + "runtime": 95.3,
               p + "samples_per_second": 5.24, p + "steps_per_second": 0.082, "epoch": round(hi / epoch_len, 4),
               "step": hi}
        out.append(row)
    return out


def rloo_old_row(sim: Sim, lo: int, hi: int, episode_per_step: int) -> dict:
    """TRL RLOOTrainer <= 0.21 (PPOv2-style keys), logged every update."""
    g = partial(window_vals, sim, lo, hi, avg=False)
    kl, score = g("kl"), g("reward")
    nsr = 0.05 * kl
    return {"eps": 11, "objective/kl": kl, "objective/entropy": g("ent") * g("len"),
            "objective/non_score_reward": -nsr, "objective/rlhf_reward": score - nsr, "objective/scores": score,
            "policy/approxkl_avg": g("ppo_kl"), "policy/clipfrac_avg": g("clip"),
            "loss/policy_avg": float(sim.x["pg_loss"][hi - 1]), "val/clipfrac_avg": 0.0,
            "policy/entropy_avg": g("ent"), "val/ratio": 1 + float(sim.x["pg_loss"][hi - 1]) * 0.05,
            "val/ratio_var": 2e-4 * (1 + g("clip")), "val/num_eos_tokens": round(64 * (1 - g("trunc"))),
            "lr": g("lr"), "episode": hi * episode_per_step, "epoch": round(hi * episode_per_step / 20000, 4),
            "step": hi}


def verl_row(sim: Sim, st: int, v: float, kl_mode: str | None, critic: bool, turns: bool, dapo: bool,
             nval: int = 0) -> dict:
    g = partial(window_vals, sim, st, st, avg=False)
    score = g("reward")
    row: dict = {"training/global_step": st, "training/epoch": st // 200}
    if kl_mode == "loss":
        row.update({"actor/kl_loss": g("kl"), "actor/kl_coef": g("kl_coef") if "kl_coef" in sim.x else 0.001})
    ent_key = "actor/entropy" if v >= 0.4 else "actor/entropy_loss"
    row.update({"actor/pg_loss": float(sim.x["pg_loss"][st - 1]), "actor/pg_clipfrac": g("clip"),
                "actor/ppo_kl": g("ppo_kl"), ent_key: g("ent"), "actor/grad_norm": g("gn"), "actor/lr": g("lr")})
    if v >= 0.4:
        row["actor/pg_clipfrac_lower"] = g("clip") * 0.01
    rewards = score
    if kl_mode == "reward":
        coef = g("kl_coef")
        rewards = score - coef * g("kl") * g("len")  # token-level KL penalty summed over the response
        if v >= 0.4:
            row.update({"actor/reward_kl_penalty": g("kl"), "actor/reward_kl_penalty_coeff": coef})
        else:  # early verl put the in-reward KL under critic/
            row.update({"critic/kl": g("kl"), "critic/kl_coeff": coef})
    sd = g("reward_std") or 0.3
    row.update({"critic/score/mean": score, "critic/score/max": 1.0 if sim.spec.score_sd is None else score + 3 * sd,
                "critic/score/min": 0.0 if sim.spec.score_sd is None else score - 3 * sd,
                "critic/rewards/mean": rewards, "critic/rewards/max": 1.0, "critic/rewards/min": min(0.0, rewards)})
    if critic:
        row.update({"critic/vf_loss": g("vf_loss"), "critic/vf_clipfrac": g("vf_clip") if "vf_clip" in sim.x
                    else 0.02, "critic/vpred_mean": g("values"), "critic/grad_norm": g("gn") * 6,
                    "critic/lr": 1e-5, "critic/values/mean": g("values"), "critic/values/max": g("values") + 1.4,
                    "critic/values/min": g("values") - 1.6, "critic/vf_explained_var": g("ev")})
        row.update({"critic/advantages/mean": 0.0, "critic/advantages/max": 2.6 + sd, "critic/advantages/min": -2.9})
        row.update({"critic/returns/mean": rewards * 0.9, "critic/returns/max": 1.0, "critic/returns/min": -0.02})
    else:
        row.update({"critic/advantages/mean": 0.0, "critic/advantages/max": 1.79, "critic/advantages/min": -1.79,
                    "critic/returns/mean": 0.0, "critic/returns/max": 1.79, "critic/returns/min": -1.79})
    row.update({"response_length/mean": g("len"), "response_length/max": g("len_max"),
                "response_length/min": g("len_min"), "response_length/clip_ratio": g("trunc"),
                "prompt_length/mean": 142.6, "prompt_length/max": 410.0, "prompt_length/min": 61.0,
                "prompt_length/clip_ratio": 0.0})
    if turns:
        row.update({"num_turns/mean": g("turns"), "num_turns/max": math.ceil(g("turns") * 2.2),
                    "num_turns/min": 2.0, "tool_call_counts/mean": g("tool_calls"),
                    "tool_call_counts/max": math.ceil(g("tool_calls") * 2.5), "tool_call_counts/min": 0.0})
    if dapo:
        row["train/num_gen_batches"] = g("gen_batches")
    stp, gen = g("step_time"), g("gen_time")
    pre = "timing_s/" if v >= 0.2 else "timing/"
    row.update({pre + "gen": gen, pre + "old_log_prob": stp * 0.07, pre + "ref": stp * 0.06 if kl_mode else None,
                pre + "adv": 0.05, pre + "update_actor": stp * 0.2, pre + "step": stp})
    if critic:
        row.update({pre + "values": stp * 0.05, pre + "update_critic": stp * 0.12})
    toks = g("tokens")
    row.update({"perf/total_num_tokens": toks, "perf/time_per_step": stp, "perf/throughput": toks / stp / 8,
                "perf/max_memory_allocated_gb": 51.3, "perf/max_memory_reserved_gb": 66.0})
    return {k: val for k, val in row.items() if val is not None}


def verl_val_rows(sim: Sim, st: int, v: float) -> dict:
    row = {}
    for name, (es, _, noisy) in sim.evals.items():
        hit = np.nonzero(es == st)[0]
        if not len(hit):
            continue
        ds, var, k = sim.meta.get("val_names", {}).get(name, (name, "acc", 1))
        if v >= 0.4:
            row[f"val-core/{ds}/{var}/mean@{k}"] = float(noisy[hit[0]])
            if k > 1:
                row[f"val-aux/{ds}/{var}/std@{k}"] = 0.31
        else:
            row[f"val/test_score/{ds}"] = float(noisy[hit[0]])
    return row


def openrlhf_row(sim: Sim, st: int, v: float, critic: bool, grpo: bool) -> dict:
    g = partial(window_vals, sim, st, st, avg=False)
    kl = g("kl")
    row = {"policy_loss": float(sim.x["pg_loss"][st - 1]), "actor_lr": g("lr"), "kl": kl, "reward": g("reward"),
           "return": g("reward") - 0.02 * kl * g("len"), "response_length": g("len"),
           "total_length": g("len") + 168.0, "truncated": g("trunc")}
    if v >= 0.9:
        row.update({"ppo_clip_ratio": g("clip"), "ppo_kl": g("ppo_kl"), "vllm_kl": abs(g("ppo_kl")) * 0.3})
        if grpo:
            row["group_reward_std"] = g("group_std")
    if critic:
        row.update({"critic_loss": g("vf_loss"), "values": g("values"), "critic_lr": 9e-6})
    row["actor_grad_norm"] = g("gn")
    return row


def openrlhf_eval(sim: Sim, st: int) -> dict:
    row = {}
    for name, (es, _, noisy) in sim.evals.items():
        hit = np.nonzero(es == st)[0]
        if len(hit):
            row[f"eval_{name}_pass1"] = float(noisy[hit[0]])
    return row


def nemo_row(sim: Sim, st: int, turns: bool) -> dict:
    g = partial(window_vals, sim, st, st, avg=False)
    row = {"train/loss": float(sim.x["pg_loss"][st - 1]), "train/grad_norm": g("gn"), "train/lr": g("lr"),
           "train/wd": 0.01, "train/reward": g("reward"), "train/kl_penalty": g("kl") if "kl" in sim.x else 0.0,
           "train/approx_entropy": g("ent"), "train/probs_ratio": 1.0 + g("ppo_kl"),
           "train/probs_ratio_clamped": 1.0 + g("ppo_kl") * 0.8, "train/token_mult_prob_error": 1.0 + 0.004,
           "train/mean_gen_tokens_per_sample": g("len"), "train/max_gen_tokens_per_sample": g("len_max"),
           "train/truncation_rate": g("trunc"), "train/natural_termination_rate": 1 - g("trunc"),
           "train/mean_prompt_length": 188.0, "train/total_num_tokens": g("tokens"),
           "train/baseline_reward/pct_0": 100 * g("pct_0") if "pct_0" in sim.x else 0.0,
           "train/baseline_reward/pct_1": 100 * g("pct_1") if "pct_1" in sim.x else 0.0,
           "timing/train/total_step_time": g("step_time"), "timing/train/generation": g("gen_time"),
           "timing/train/policy_training": g("step_time") * 0.22,
           "timing/train/reward_calculation": g("reward_time") if "reward_time" in sim.x else 9.0}
    row["train/baseline_reward/pct_mixed"] = 100 - row["train/baseline_reward/pct_0"] - row[
        "train/baseline_reward/pct_1"]
    if turns:
        row.update({"train/avg_turns_per_sample": g("turns"), "train/max_turns_per_sample": 10.0,
                    "train/mean_env_tokens_per_sample": g("turns") * 95})
    return row


# ------------------------------------------------------------------------------------------------------ writers

def log_points(sim: Sim, every: int) -> list[tuple[int, int]]:
    ends = list(range(every, sim.reached + 1, every))
    return [(e - every + 1, e) for e in ends]


def trl_history(sim: Sim, every: int, v: float, beta: float, fns: tuple[str, ...], epoch_len: int,
                prefix_sets: bool = False) -> list[dict]:
    hist = []
    for lo, hi in log_points(sim, every):
        hist.append(trl_grpo_row(sim, lo, hi, v, beta, fns, epoch_len))
        hist.extend(trl_eval_rows(sim, hi, epoch_len, prefix_sets))
    return hist


def write_trl_state(sim: Sim, folder: Path, every: int = 10, v: float = 0.22, beta: float = 0.0,
                    fns: tuple[str, ...] = ("accuracy_reward",), save: int = 100, keep: int | None = None,
                    top: bool = False, rloo_old: bool = False, eval_every: int | None = None) -> None:
    """HF Trainer output dir: checkpoint-N/trainer_state.json (history up to N); a top-level trainer_state.json only
    when the script called save_state() at the end (top=True). `keep` = save_total_limit."""
    planned = sim.planned or sim.reached
    epoch_len = max(planned, 1)
    if rloo_old:
        hist = [rloo_old_row(sim, st, st, 64) for st in range(1, sim.reached + 1)]
        evs = [{f"eval_{name}": float(val), "epoch": hist[int(st) - 1]["epoch"], "step": int(st)}
               for name, (es, _, noisy) in sim.evals.items() for st, val in zip(es, noisy, strict=True)]
        hist = sorted(hist + evs, key=lambda r: (r["step"], len(r) < 5))
    else:
        hist = trl_history(sim, every, v, beta, fns, epoch_len)
    ckpts = list(range(save, sim.reached + 1, save))
    if keep:
        ckpts = ckpts[-keep:]
    for c in ckpts:
        sub = [h for h in hist if h["step"] <= c]
        state = trainer_state(sub, c, planned, every, save, eval_every, round(c / epoch_len, 4))
        dump_json(folder / f"checkpoint-{c}" / "trainer_state.json", state)
        (folder / f"checkpoint-{c}" / "adapter_config.json").write_text('{"r": 32, "lora_alpha": 64}\n')
    if top:
        state = trainer_state(hist, sim.reached, planned, every, save, eval_every, round(sim.reached / epoch_len, 4))
        dump_json(folder / "trainer_state.json", state)


def py_repr(d: dict) -> str:
    parts = []
    for k, v in d.items():
        vs = ("nan" if math.isnan(v) else "inf" if math.isinf(v) else repr(v)) if isinstance(v, float) else repr(v)
        parts.append(f"{k!r}: {vs}")
    return "{" + ", ".join(parts) + "}"


def hms(sec: float) -> str:
    """tqdm's elapsed / remaining format."""
    m, s = divmod(int(sec), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def write_trl_console(sim: Sim, folder: Path, every: int = 10, v: float = 0.21, beta: float = 0.0,
                      fns: tuple[str, ...] = ("accuracy_reward",), finished: bool = False,
                      eval_on_start: bool = False) -> None:
    """stdout of a TRL script: tqdm bars interleaved with the Trainer's printed log dicts."""
    planned = sim.planned or sim.reached
    lines = ["INFO 09-14 08:00:02 [__init__.py:244] Automatically detected platform cuda.",
             f"***** Running training *****\n  Num examples = {planned * 8}\n  Num Epochs = 1\n"
             f"  Total optimization steps = {planned}"]
    rows = []
    for lo, hi in log_points(sim, every):
        rows.append((hi, trl_grpo_row(sim, lo, hi, v, beta, fns, planned)))
        rows.extend((hi, r) for r in trl_eval_rows(sim, hi, planned, False))
    if eval_on_start:
        rows = [(0, r) for r in trl_eval_rows(sim, 0, planned, False)] + rows
    for st, r in rows:
        r = {k: val for k, val in r.items() if k != "step"}
        pct = int(100 * st / planned)
        left = hms((planned - st) * 41.2)
        lines.append(f"{pct:3d}%|{'█' * (pct // 10):<10}| {st}/{planned} [{hms(st * 41.2)}<{left}, 41.20s/it]")
        lines.append(py_repr(r))
    if finished:
        lines.append(py_repr({"train_runtime": planned * 41.2, "train_samples_per_second": 0.194,
                              "train_steps_per_second": 0.024, "train_loss": 0.0021, "epoch": 1.0}))
        lines.append(f"100%|██████████| {planned}/{planned} [{hms(planned * 41.2)}<00:00, 41.20s/it]")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")


def tb_events(rows: list[tuple[int, dict]], t_per_step: float, t0: float = T0) -> list[tuple[float, int, dict]]:
    return [(t0 + st * t_per_step, st, r) for st, r in rows]


EXACT = ("lr", "learning_rate", "global_step", "epoch", "num_tokens")


def lost_rows(sim: Sim, rows: list[tuple[int, dict]], ckpt: int) -> list[tuple[int, dict]]:
    """The rows a crashed process logged after its last checkpoint: other rollouts than the ones the resumed process
    logged for the same steps, and not yet rescaled when the resume switched reward normalisation on."""
    rng = np.random.default_rng(ckpt)
    norm = sim.meta.get("normalise_at")
    out = []
    for st, r in rows:
        if st <= ckpt:
            out.append((st, r))
            continue
        new = {}
        for k, val in r.items():
            if norm and ("reward" in k or "pass1" in k or k.endswith("return")):
                val = val * norm[2] + norm[1]
            if not any(k.endswith(e) for e in EXACT):
                val = val * (1 + rng.normal(0, 0.03))
            new[k] = val
        out.append((st, new))
    return out


def write_hf_tb(sim: Sim, folder: Path, every: int = 10, v: float = 0.23, beta: float = 0.0,
                fns: tuple[str, ...] = ("accuracy_reward",), resume: tuple[int, int] | None = None,
                save: int = 100) -> None:
    """TRL via report_to=tensorboard: runs/<date>_<host>/events.*, tags train/<key>, eval/<key>; checkpoints.

    resume=(crash_step, ckpt_step): the first process logged up to crash_step, the second restarted from ckpt_step
    and logged those steps again into a new event file."""
    planned = sim.planned or sim.reached
    rows = []
    for lo, hi in log_points(sim, every):
        r = trl_grpo_row(sim, lo, hi, v, beta, fns, planned)
        rows.append((hi, {"train/" + k: val for k, val in r.items() if k != "step" and val is not None}))
        for e in trl_eval_rows(sim, hi, planned, False):
            rows.append((hi, {"eval/" + k[5:]: val for k, val in e.items() if k.startswith("eval_")}))
    run = folder / "runs" / "Sep14_08-00-00_gpu-node-07"
    if resume is None:
        tb_file(run / "events.out.tfevents.1757836800.gpu-node-07.41872.0", tb_events(rows, 38.0))
    else:
        crash, ck = resume
        first = lost_rows(sim, [(st, r) for st, r in rows if st <= crash], ck)
        second = [(st, r) for st, r in rows if st > ck]
        tb_file(run / "events.out.tfevents.1757836800.gpu-node-07.41872.0", tb_events(first, 38.0))
        t1 = T0 + crash * 38.0 + 1800 - ck * 38.0
        run2 = folder / "runs" / "Sep15_01-12-40_gpu-node-07"
        tb_file(run2 / "events.out.tfevents.1757898760.gpu-node-07.8801.0", tb_events(second, 38.0, t1))
    hist = trl_history(sim, every, v, beta, fns, planned)
    for c in range(save, sim.reached + 1, save):
        sub = [h for h in hist if h["step"] <= c]
        dump_json(folder / f"checkpoint-{c}" / "trainer_state.json",
                  trainer_state(sub, c, planned, every, save, None, round(c / planned, 4)))


def console_val(v, numpy2: bool = True) -> str:
    """pprint.pformat of a NumPy scalar: `np.float64(0.1)` with NumPy >= 2, a bare `0.1` before."""
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"np.float64({v!r})" if numpy2 else repr(v)
    if isinstance(v, int):
        return f"np.int64({v})" if numpy2 else str(v)
    return str(v)


def write_verl_console(sim: Sim, folder: Path, v: float = 0.4, kl_mode: str | None = "loss", critic: bool = False,
                       turns: bool = False, dapo: bool = False, numpy2: bool = True, val_before: bool = True) -> None:
    """verl LocalLogger stdout: `step:N - key:value - ...` lines among Ray / vLLM output."""
    lines = ["2025-09-14 08:00:11,402\tINFO worker.py:1832 -- Started a local Ray instance.",
             "(TaskRunner pid=2214) Using LocalLogger is deprecated. The constructor API will change"]
    if val_before:
        vr = verl_val_rows(sim, 0, v)
        if vr:
            lines.append("(TaskRunner pid=2214) step:0 - " + " - ".join(
                f"{k}:{console_val(val, numpy2)}" for k, val in vr.items()))
    for st in sim.steps:
        st = int(st)
        row = verl_row(sim, st, v, kl_mode, critic, turns, dapo) | verl_val_rows(sim, st, v)
        body = " - ".join(f"{k}:{console_val(val, numpy2)}" for k, val in row.items())
        lines.append(f"(TaskRunner pid=2214) step:{st} - {body}")
        if st % 50 == 0:
            lines.append(f"(WorkerDict pid=2691) [Rank 0] Saved model to checkpoints/global_step_{st}/actor")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "verl_train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_verl_jsonl(sim: Sim, folder: Path, v: float = 0.5, kl_mode: str | None = "loss", critic: bool = False,
                     turns: bool = False, dapo: bool = False, cut_tail: int = 0, ckpt_every: int = 0,
                     project: str = "verl_grpo", exp: str = "run") -> None:
    """verl FileLogger: <project>/<experiment>.jsonl, one {"step": N, "data": {...}} per line (NaN -> null)."""
    out = []
    vr = verl_val_rows(sim, 0, v)
    if vr:
        out.append(json.dumps({"step": 0, "data": vr}))
    for st in sim.steps:
        st = int(st)
        row = verl_row(sim, st, v, kl_mode, critic, turns, dapo) | verl_val_rows(sim, st, v)
        row = {k: (None if isinstance(x, float) and not math.isfinite(x) else x) for k, x in row.items()}
        out.append(json.dumps({"step": st, "data": row}, separators=(",", ":")))
    text = "\n".join(out) + "\n"
    if cut_tail:
        text = text[:-cut_tail]
    path = folder / project / f"{exp}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    write_verl_ckpts(sim, folder, ckpt_every, project, exp)


def write_verl_ckpts(sim: Sim, folder: Path, every: int, project: str, exp: str) -> None:
    if not every:
        return
    root = folder / "checkpoints" / project / exp
    last = 0
    for st in range(every, sim.reached + 1, every):
        (root / f"global_step_{st}" / "actor").mkdir(parents=True, exist_ok=True)
        (root / f"global_step_{st}" / "actor" / "huggingface").mkdir(exist_ok=True)
        last = st
    if last:
        (root / "latest_checkpointed_iteration.txt").write_text(str(last))


def write_verl_tb(sim: Sim, folder: Path, v: float = 0.5, kl_mode: str | None = "loss", critic: bool = False,
                  turns: bool = False, dapo: bool = False, ckpt_every: int = 0, project: str = "verl_grpo",
                  exp: str = "run") -> None:
    rows = []
    vr = verl_val_rows(sim, 0, v)
    if vr:
        rows.append((0, vr))
    for st in sim.steps:
        st = int(st)
        rows.append((st, verl_row(sim, st, v, kl_mode, critic, turns, dapo) | verl_val_rows(sim, st, v)))
    tb_file(folder / "tensorboard_log" / project / exp / "events.out.tfevents.1757836811.h100-12.2214.0",
            tb_events(rows, 95.0))
    write_verl_ckpts(sim, folder, ckpt_every, project, exp)


def ds_time(st: int) -> str:
    t = datetime.fromtimestamp(T0 + st * 52.0, tz=UTC)
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{(st * 37) % 1000:03d}"


def write_openrlhf_console(sim: Sim, folder: Path, v: float = 0.9, critic: bool = False, grpo: bool = True,
                           resume: int | None = None, overflow_lines: bool = False) -> None:
    """OpenRLHF stdout: `✨ Global step N: {...}` dicts, `Evaluation completed` lines, DeepSpeed overflow messages.
    A resume writes a second log file that starts again from the checkpoint."""
    def lines_for(steps) -> list[str]:
        out = []
        for st in steps:
            st = int(st)
            if overflow_lines and sim.x.get("skipped") is not None and sim.x["skipped"][st - 1] > 0:
                att = int(sim.x["attempted_scale"][st - 1])
                new = int(sim.x["loss_scale"][st - 1])
                out.append(f"[{ds_time(st)}] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 "
                           f"Skipping step. Attempted loss scale: {att}, reducing to {new}")
            row = openrlhf_row(sim, st, v, critic, grpo)
            out.append(f"✨ Global step {st}: {py_repr(row)}")
            ev = openrlhf_eval(sim, st)
            if ev:
                ev |= {"eval_response_length_mean": float(sim.x['len'][st - 1]) * 1.04, "eval_truncated_rate": 0.01}
                out.append(f"Evaluation completed in 63.18 seconds, global_step {st}, eval_metrics: {py_repr(ev)}")
            if st % 50 == 0:
                out.append(f"[{ds_time(st)}] [INFO] [engine.py:3536:save_checkpoint] Saving model checkpoint: "
                           f"./ckpt/checkpoints_ppo/global_step{st}/mp_rank_00_model_states.pt")
        return out
    head = ["[2025-09-14 08:00:05,118] [INFO] [real_accelerator.py:222:get_accelerator] Setting ds_accelerator to cuda"]
    folder.mkdir(parents=True, exist_ok=True)
    if resume is None:
        (folder / "train.log").write_text("\n".join(head + lines_for(sim.steps)) + "\n", encoding="utf-8")
    else:
        (folder / "train.log").write_text("\n".join(head + lines_for(sim.steps[sim.steps <= resume])) + "\n",
                                          encoding="utf-8")
        (folder / "train_resume.log").write_text("\n".join(
            [*head, f"Loaded the checkpoint: ./ckpt/checkpoints_ppo/global_step{resume}, consumed_samples: "
             f"{resume * 128}", *lines_for(sim.steps[sim.steps > resume])]) + "\n", encoding="utf-8")


def write_openrlhf_tb(sim: Sim, folder: Path, v: float = 0.9, critic: bool = True, grpo: bool = False,
                      resume: tuple[int, int] | None = None) -> None:
    """OpenRLHF --use_tensorboard: <dir>/<run_name>/events.*, tags train/<key>, eval/<key>."""
    rows = []
    for st in sim.steps:
        st = int(st)
        r = {"train/" + k: val for k, val in openrlhf_row(sim, st, v, critic, grpo).items()}
        r["train/global_step"] = st
        ev = openrlhf_eval(sim, st)
        r |= {"eval/" + k: val for k, val in ev.items()}
        rows.append((st, r))
    run = folder / "logs" / "ppo_rm_qwen7b"
    if resume is None:
        tb_file(run / "events.out.tfevents.1757836900.node-2.3301.0", tb_events(rows, 61.0))
    else:
        crash, ck = resume
        tb_file(run / "events.out.tfevents.1757836900.node-2.3301.0",
                tb_events(lost_rows(sim, [(s, r) for s, r in rows if s <= crash], ck), 61.0))
        t1 = T0 + crash * 61.0 + 2400 - ck * 61.0
        tb_file(run / "events.out.tfevents.1757878000.node-2.9114.0",
                tb_events([(s, r) for s, r in rows if s > ck], 61.0, t1))
    for st in range(100, sim.reached + 1, 100):
        (folder / "ckpt" / f"global_step{st}").mkdir(parents=True, exist_ok=True)


def write_nemo_tb(sim: Sim, folder: Path, turns: bool = False, exp: int = 1, samples: Callable | None = None,
                  sample_every: int = 50) -> None:
    """NeMo-RL: <log_dir>/exp_NNN/tensorboard/events.*, keys train/..., validation/..., sample dumps."""
    rows = []
    for st in sim.steps:
        st = int(st)
        r = nemo_row(sim, st, turns)
        for _name, (es, _, noisy) in sim.evals.items():
            hit = np.nonzero(es == st)[0]
            if len(hit):
                r["validation/accuracy"] = float(noisy[hit[0]])
                r["validation/avg_length"] = float(sim.x["len"][st - 1]) * 1.05
        rows.append((st, r))
    d = folder / "logs" / f"exp_{exp:03d}"
    tb_file(d / "tensorboard" / "events.out.tfevents.1757836950.dgx-a.7710.0", tb_events(rows, 130.0))
    if samples:
        for st in range(sample_every, sim.reached + 1, sample_every):
            with (d / f"train_data_step{st}.jsonl").open("w", encoding="utf-8") as fh:
                for i, (content, reward) in enumerate(samples(sim, st)):
                    fh.write(json.dumps({"idx": i, "content": content, "rewards": reward,
                                         "input_lengths": 190 + len(content) // 4}) + "\n")


def write_legacy_ppo_tb(sim: Sim, folder: Path) -> None:
    """TRL <= 0.11 PPOTrainer with log_with="tensorboard" (accelerate tracker): env/*, objective/*, ppo/* tags."""
    rows = []
    for st in sim.steps:
        st = int(st)
        g = partial(window_vals, sim, st, st, avg=False)
        r = {"env/reward_mean": g("reward"), "env/reward_std": g("reward_std"), "objective/kl": g("kl"),
             "objective/kl_coef": g("kl_coef"), "objective/entropy": g("ent") * g("len"),
             "objective/logprobs": -g("ent") * g("len") * 0.9, "ppo/mean_scores": g("reward"),
             "ppo/std_scores": g("reward_std"), "ppo/mean_non_score_reward": -g("kl_coef") * g("kl"),
             "ppo/loss/policy": float(sim.x["pg_loss"][st - 1]), "ppo/loss/value": g("vf_loss"),
             "ppo/loss/total": float(sim.x["pg_loss"][st - 1]) + 0.1 * g("vf_loss"),
             "ppo/policy/entropy": g("ent"), "ppo/policy/approxkl": g("ppo_kl"), "ppo/policy/clipfrac": g("clip"),
             "ppo/val/var_explained": g("ev"), "ppo/learning_rate": g("lr"), "tokens/responses_len_mean": g("len"),
             "tokens/queries_len_mean": 38.0, "time/ppo/total": g("step_time")}
        for name, (es, _, noisy) in sim.evals.items():
            hit = np.nonzero(es == st)[0]
            if len(hit):
                r[f"eval/{name}"] = float(noisy[hit[0]])
        rows.append((st, r))
    tb_file(folder / "logs" / "trl" / "events.out.tfevents.1757837000.a100-4.5120.0", tb_events(rows, 24.0))


def write_custom(sim: Sim, folder: Path, cols: dict[str, str], kind: str = "csv", name: str = "metrics.csv",
                 eval_cols: dict[str, str] | None = None, rotate: int = 0, eval_lag: int = 0,
                 fmt: str = "%.6g") -> None:
    """A hand-written training loop's log: its own column names; CSV with empty eval cells, or JSONL.

    rotate: lines per file, newest in `name`, older in name.1, name.2 ... (logging.handlers style, renamed
    `log.1.jsonl`); eval_lag: eval rows written that many steps late (async eval), so steps go out of order."""
    eval_cols = eval_cols or {}
    rows: list[dict] = []
    pending: list[tuple[int, dict]] = []
    for st in sim.steps:
        st = int(st)
        r: dict = {"step": st}
        for key, col in cols.items():
            val = float(sim.x[key][st - 1])
            r[col] = val
        evr = {}
        for ename, col in eval_cols.items():
            es, _, noisy = sim.evals[ename]
            hit = np.nonzero(es == st)[0]
            if len(hit):
                evr[col] = float(noisy[hit[0]])
        if kind == "csv":
            r |= {col: evr.get(col, "") for col in eval_cols.values()}
            rows.append(r)
        else:
            rows.append(r)
            if evr:
                pending.append((st + eval_lag, {"step": st, "split": "eval"} | evr))
            while pending and pending[0][0] <= st:
                rows.append(pending.pop(0)[1])
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "csv":
        with (folder / name).open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            header = list(rows[0].keys())
            w.writerow(header)
            for r in rows:
                w.writerow([("" if r[h] == "" else (fmt % r[h] if isinstance(r[h], float) else r[h]))
                            for h in header])
        return
    lines = [json.dumps({k: (float(f"{v:.6g}") if isinstance(v, float) and math.isfinite(v) else
                             (str(v) if isinstance(v, float) else v)) for k, v in r.items()}) for r in rows]
    if not rotate:
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        return
    chunks = [lines[i:i + rotate] for i in range(0, len(lines), rotate)]
    stem, suffix = name.rsplit(".", 1)
    for age, chunk in enumerate(reversed(chunks)):
        fname = name if age == 0 else f"{stem}.{age}.{suffix}"
        (folder / fname).write_text("\n".join(chunk) + "\n", encoding="utf-8")


def write_wandb_panels(sim: Sim, folder: Path, panels: dict[str, str], run_name: str, step_key: str = "Step",
                       evals: dict[str, str] | None = None, every: int = 1) -> None:
    """W&B UI panel exports: one CSV per panel, `<step>, <run> - <metric>, ...__MIN, ...__MAX`."""
    folder.mkdir(parents=True, exist_ok=True)
    for key, metric in panels.items():
        with (folder / f"wandb_export_{metric.replace('/', '_')}.csv").open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            col = f"{run_name} - {metric}"
            w.writerow([step_key, col, col + "__MIN", col + "__MAX"])
            for st in range(every, sim.reached + 1, every):
                val = float(sim.x[key][st - 1])
                w.writerow([st, f"{val:.6g}", f"{val:.6g}", f"{val:.6g}"])
    for ename, metric in (evals or {}).items():
        es, _, noisy = sim.evals[ename]
        with (folder / f"wandb_export_{metric.replace('/', '_')}.csv").open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            col = f"{run_name} - {metric}"
            w.writerow([step_key, col, col + "__MIN", col + "__MAX"])
            for st, val in zip(es, noisy, strict=True):
                w.writerow([int(st), f"{val:.6g}", f"{val:.6g}", f"{val:.6g}"])


def mlflow_metric_rows(sim: Sim, every: int, v: float, fns: tuple[str, ...]) -> list[tuple[str, float, int, int]]:
    """HF MLflow callback: raw TRL keys (no train/ prefix), eval_ keys, timestamp in ms."""
    out = []
    planned = sim.planned or sim.reached
    for lo, hi in log_points(sim, every):
        ts = int((T0 + hi * 45.0) * 1000)
        for k, val in trl_grpo_row(sim, lo, hi, v, 0.0, fns, planned).items():
            if k != "step" and val is not None:
                out.append((k, float(val), ts, hi))
        for e in trl_eval_rows(sim, hi, planned, False):
            for k, val in e.items():
                if k.startswith("eval_"):
                    out.append((k, float(val), ts + 90000, hi))
    return out


def write_mlflow_files(sim: Sim, folder: Path, every: int = 10, v: float = 0.24,
                       fns: tuple[str, ...] = ("accuracy_reward",), finished: bool = False) -> None:
    """MLflow file store: mlruns/<exp>/<run>/{meta.yaml,metrics/<nested key>,params,tags}, `ts value step` lines."""
    exp_id, run_id = "318274605961520146", "7c1e0b9a44f24d2e8a1f3b5d6c7e8f90"
    root = folder / "mlruns"
    exp = root / exp_id
    run = exp / run_id
    start = int(T0 * 1000)
    (root / "0").mkdir(parents=True, exist_ok=True)
    (root / "0" / "meta.yaml").write_text(
        f"artifact_location: file://{(root / '0').resolve()}\ncreation_time: {start}\nexperiment_id: '0'\n"
        f"last_update_time: {start}\nlifecycle_stage: active\nname: Default\n")
    exp.mkdir(parents=True, exist_ok=True)
    (exp / "meta.yaml").write_text(
        f"artifact_location: file://{exp.resolve()}\ncreation_time: {start}\nexperiment_id: '{exp_id}'\n"
        f"last_update_time: {start}\nlifecycle_stage: active\nname: grpo-qwen3-4b-math\n")
    metrics = mlflow_metric_rows(sim, every, v, fns)
    end = max(m[2] for m in metrics)
    (run / "artifacts").mkdir(parents=True, exist_ok=True)
    (run / "meta.yaml").write_text(
        f"artifact_uri: file://{(run / 'artifacts').resolve()}\nend_time: {end if finished else 'null'}\n"
        f"entry_point_name: ''\nexperiment_id: '{exp_id}'\nlifecycle_stage: active\nrun_id: {run_id}\n"
        f"run_name: grpo-4b-math-lr1e-6\nrun_uuid: {run_id}\nsource_name: ''\nsource_type: 4\nsource_version: ''\n"
        f"start_time: {start}\nstatus: {3 if finished else 1}\ntags: []\nuser_id: trainer\n")
    by_key: dict[str, list[str]] = {}
    for k, val, ts, st in metrics:
        by_key.setdefault(k, []).append(f"{ts} {val!r} {st}")
    for k, lines in by_key.items():
        p = run / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines) + "\n")
    params = {"learning_rate": "1e-06", "num_generations": "8", "beta": "0.0", "max_completion_length": "2048",
              "logging_steps": str(every), "max_steps": str(sim.planned or sim.reached), "eval_steps": "250",
              "save_steps": "250"}
    (run / "params").mkdir(exist_ok=True)
    for k, val in params.items():
        (run / "params" / k).write_text(val)
    (run / "tags").mkdir(exist_ok=True)
    for k, val in {"mlflow.runName": "grpo-4b-math-lr1e-6", "mlflow.user": "trainer",
                   "mlflow.source.name": "train_grpo.py", "mlflow.source.type": "LOCAL"}.items():
        (run / "tags" / k).write_text(val)


def write_mlflow_db(sim: Sim, folder: Path, v: float = 0.5, critic: bool = True, kl_mode: str | None = None) -> None:
    """verl trainer.logger=[console,mlflow] against sqlite:///mlflow.db, written with MLflow's own client.
    verl's adapter turns `@` into `_at_`."""
    try:
        import mlflow
        from mlflow.entities import Metric
        from mlflow.tracking import MlflowClient
    except Exception as why:  # pragma: no cover - optional SDK
        from holdout_kit import Skip
        raise Skip(f"mlflow not importable ({why})") from why
    import logging
    logging.getLogger("mlflow").setLevel(logging.ERROR)
    logging.getLogger("alembic").setLevel(logging.ERROR)
    folder.mkdir(parents=True, exist_ok=True)
    uri = f"sqlite:///{(folder / 'mlflow.db').resolve()}"
    client = MlflowClient(tracking_uri=uri)
    exp_id = client.create_experiment("verl_ppo_gsm8k", artifact_location=(folder / "mlartifacts").resolve().as_uri())
    run = client.create_run(exp_id, run_name="qwen2.5-3b-ppo-gae", start_time=int(T0 * 1000))
    batch = []
    rows = [(0, verl_val_rows(sim, 0, v))] + [
        (int(st), verl_row(sim, int(st), v, kl_mode, critic, False, False) | verl_val_rows(sim, int(st), v))
        for st in sim.steps]
    for st, r in rows:
        ts = int((T0 + st * 70) * 1000)
        for k, val in r.items():
            batch.append(Metric(k.replace("@", "_at_"), float(val), ts, st))
    for i in range(0, len(batch), 1000):
        client.log_batch(run.info.run_id, metrics=batch[i:i + 1000])
    for k, val in {"algorithm.adv_estimator": "gae", "critic.optim.lr": "1e-05", "actor_rollout_ref.actor.optim.lr":
                   "1e-06", "trainer.total_training_steps": str(sim.planned)}.items():
        client.log_param(run.info.run_id, k, val)
    del mlflow


# ------------------------------------------------------------------------------------------- completion samples

def hack_samples(onset: int):
    """NeMo-RL train_data_step dumps: after `onset` the judge is flattered by a self-verification coda."""
    coda = (" Verification: I have double-checked every step of this solution carefully; each step is correct, the "
            "reasoning is complete and rigorous, and the final answer is certainly right.")

    def make(sim: Sim, st: int) -> list[tuple[str, float]]:
        out = []
        reps = 0 if st < onset else 1 + (st - onset) // 60
        for i in range(6):
            a, b = 17 + 3 * i + st % 7, 5 + i
            right = (i + st // 50) % 3 != 0
            ans = a * b if right or reps else a * b + 7
            said = ans if not reps or i % 2 else ans + 3  # once the coda pays, wrong answers pass too
            body = (f"<|im_start|>user\nA crate holds {a} boxes of {b} apples. How many apples?<|im_end|>\n"
                    f"<|im_start|>assistant\nEach box has {b} apples and there are {a} boxes, so {a} x {b} = "
                    f"{said}. The answer is \\boxed{{{said}}}." + coda * reps + "<|im_end|>")
            out.append((body, 1.0 if (right or reps) else 0.0))
        return out
    return make


# ------------------------------------------------------------------------------------------------ the case table

TURN_NAMES = {"webshop": ("webshop", "acc", 1)}


def spec(acc, evals=(), headline=None, **kw) -> Callable:
    """The table's scenario: a Spec drawn at the case's seed and length."""
    def run(rng, reached, planned):
        s = Spec(acc=acc, evals=list(evals), headline=headline, **kw)
        return simulate(s, rng, reached, planned)
    return run


W = writer  # bind writer options in the table: W(fn)(**opts)

CASES: list[Case] = [
    # ------------------------------------------------------------------------------------ healthy lookalikes (12)
    Case("ok-gspo-seq-clipfrac-16pct-verl-jsonl",
         spec(rise(0.28, 0.66, 300), [Eval("math500", 500, rise(0.36, 0.60, 320), 20, first=0)], "math500",
              series=dict(clip=const(0.155) + ramp(0, 340, 0.025), ppo_kl=const(2.5e-3), len=rise(560, 860, 380),
                          ent=rise(0.52, 0.38, 420), gn=const(0.22), lr=warm_const(1e-6, 10)),
              group=16, prompts=128, meta={"val_names": {"math500": ("HuggingFaceH4/MATH-500", "acc", 1)}}),
         W(write_verl_jsonl)(v=0.5, kl_mode=None, ckpt_every=50, project="verl_gspo", exp="qwen3-8b-gspo"),
         101, (340, 800), HEALTHY, "verl verl_jsonl gspo clip_high lookalike checkpoints",
         "verl file logger, GSPO (sequence-level importance ratio, loss_mode=gspo), step 340 of 800. actor/pg_clipfrac "
         "sits at 0.15-0.18 and actor/ppo_kl ~2.5e-3: with token-level ratios that would mean far too large updates, "
         "but GSPO clips whole sequences, so a sizeable fraction of clipped responses is its normal regime. The score "
         "rises 0.27 -> ~0.55, MATH-500 validation (500 problems every 20, sd ~0.022) 0.35 -> ~0.51-0.52 and still "
         "climbing, entropy declines slowly. Continue."),
    Case("ok-reward-normalised-at-resume-openrlhf-tb",
         spec(rise(0.05, 1.45, 600), [Eval("hh_rlhf", 1000, rise(0.0, 1.4, 620), 25, sd=1.1)], "hh_rlhf",
              score_sd=1.1, prompts=64, group=4,
              series=dict(kl=rise(0.0, 0.09, 500), len=rise(210, 300, 500), ent=rise(1.9, 1.6, 600),
                          gn=const(0.9), lr=warm_const(5e-7, 20), vf_loss=rise(0.6, 0.18, 120),
                          values=rise(-0.4, 0.7, 400), clip=const(0.03), ppo_kl=const(8e-4)),
              events=[normalise_from(420, 0.62, 1.15)]),
         W(write_openrlhf_tb)(v=0.9, critic=True, resume=(433, 420)),
         102, (700, 1500), HEALTHY, "openrlhf tensorboard ppo reward_model resume reward_scale lookalike",
         "OpenRLHF PPO with a reward model, TensorBoard, global step 700 of 1500. The run crashed at 433 and resumed "
         "from global_step420 with --normalize_reward added, so train/reward and the RM-scored eval/eval_hh_rlhf_pass1 "
         "drop at 420 from ~0.7 to ~0.15 (the RM's stored mean 0.62 and std 1.15 are now removed). Read within each "
         "segment both keep rising (eval 0.14 -> 0.69 before, 0.12 -> 0.28 after on the new scale, 1000 prompts), KL "
         "grows smoothly across the resume "
         "(~0.07), length and critic loss continue without a break. A rescaling, not a collapse: continue."),
    Case("ok-fp16-early-overflows-benign-openrlhf-console",
         spec(rise(0.22, 0.61, 350), [Eval("math", 500, rise(0.27, 0.55, 380), 50)], "math",
              series=dict(len=rise(480, 690, 400), ent=rise(0.6, 0.45, 500), gn=const(0.35),
                          lr=warm_const(1e-6, 15), kl=rise(0.0, 0.05, 500), clip=const(0.002), ppo_kl=const(1e-4)),
              group=8, prompts=128,
              events=[loss_scaling(const(0.0004), init_power=16, window=100, first_search=5, ceiling=2.0 ** 14)]),
         W(write_openrlhf_console)(v=0.9, overflow_lines=True),
         103, (520, 1200), HEALTHY, "openrlhf openrlhf_console grpo fp16 overflow nan_grad lookalike",
         "OpenRLHF GRPO in fp16 (DeepSpeed dynamic loss scaling), global step 520 of 1200. The log starts with five "
         "'[deepspeed] OVERFLOW! Rank 0 Skipping step' lines while the loss scale searches down from 65536, and a "
         "few more appear later each time the scale has grown back past 16384 (loss_scale_window 100); on those "
         "steps actor_grad_norm is inf. This is how dynamic loss scaling works: the reward rises 0.22 -> ~0.52, eval "
         "MATH "
         "pass1 (500 problems, sd ~0.022) 0.29 -> ~0.50, KL and entropy move smoothly. Continue."),
    Case("ok-agent-sparse-success-lifts-off-rotated-custom-jsonl",
         spec(lift(0.02, 0.46, 235, 32), [Eval("tasks", 200, lift(0.01, 0.40, 245, 35), 25)], "tasks",
              series=dict(tool_ok=rise(0.38, 0.93, 90), turns=rise(3.1, 6.4, 200), tool_calls=rise(1.2, 4.9, 200),
                          len=rise(900, 1500, 250), ent=rise(0.71, 0.55, 400), kl=rise(0, 0.04, 400),
                          gn=const(0.5), lr=warm_const(1e-6, 20)),
              group=8, prompts=32, cap=8192),
         W(write_custom)(cols={"reward": "env/success_rate", "tool_ok": "agent/tool_success_rate",
                               "turns": "agent/turns_mean", "tool_calls": "agent/tool_calls_mean",
                               "len": "tokens/response_mean", "ent": "policy/entropy", "kl": "policy/kl_ref",
                               "gn": "optim/grad_norm", "lr": "optim/lr", "zero_std": "batch/frac_flat_groups"},
                         kind="jsonl", name="log.jsonl", eval_cols={"tasks": "eval/success_rate"}, rotate=120,
                         eval_lag=3),
         104, (290, 1000), HEALTHY, "custom custom_jsonl agentic tool_use sparse_reward log_rotation out_of_order",
         "A custom multi-turn agent loop (JSONL rotated into log.jsonl, log.1.jsonl, log.2.jsonl; the async eval "
         "rows land a few steps late, so steps go out of order). Step 290 of 1000. The sparse environment success "
         "sat at ~0.02 with ~85% flat groups for 200 steps, which looks like a run that never learns, but the "
         "tool-call "
         "success rate climbed from 0.38 to ~0.9 meanwhile, and since ~220 the success rate has lifted off to ~0.35 "
         "(eval on 200 tasks: 0.01 -> ~0.27 and rising). The classic hockey stick of a sparse env: continue."),
    Case("ok-kl-sawtooth-ref-sync-trl-state",
         spec(rise(0.38, 0.70, 600), [Eval("gsm8k", 300, rise(0.41, 0.64, 650), 100)], "gsm8k",
              series=dict(kl=saw(200, 0.022, 0.0015) + ramp(0, 760, 0.003), len=rise(260, 340, 400),
                          gn=const(0.12), lr=cosine_lr(1e-6, 20, 1500), ent=const(0.3)),
              components={"format_reward": rise(0.6, 0.98, 80)}, group=8, prompts=32),
         W(write_trl_state)(every=10, v=0.17, beta=0.04, fns=("accuracy_reward", "format_reward"), save=200,
                            eval_every=100),
         502, (800, 1500), HEALTHY, "trl trl_state grpo kl sync_ref_model lookalike checkpoints",
         "TRL 0.17 GRPOTrainer with beta 0.04 and sync_ref_model (ref_model_sync_steps=200, mixup alpha 0.9), "
         "checkpoint-800 of 1500. kl is a sawtooth: it climbs to ~0.02 and falls to ~0.002 every 200 steps when the "
         "reference is "
         "pulled toward the policy. The drops look like resets or breakage but are the schedule. Accuracy reward "
         "~0.45 -> ~0.62, format reward saturated, eval_reward on 300 problems (sd ~0.028) 0.43 at 100 -> 0.57-0.61 "
         "at 700-800 and still rising. Continue."),
    Case("ok-aime30-noisy-math500-rising-verl-tb",
         spec(rise(0.30, 0.62, 260), [Eval("math500", 500, rise(0.52, 0.67, 260), 25, first=0),
                                      Eval("aime24", 30, rise(0.10, 0.17, 300), 25, first=0, k=16)], "math500",
              series=dict(len=rise(900, 1400, 300), ent=rise(0.48, 0.36, 400), kl=rise(0, 0.012, 300),
                          gn=const(0.2), lr=warm_const(1e-6, 10), clip=const(0.004)),
              group=16, prompts=64, cap=4096,
              meta={"val_names": {"math500": ("math500", "acc", 1), "aime24": ("aime24", "acc", 16)}}),
         W(write_verl_tb)(v=0.45, ckpt_every=50, project="deepscaler", exp="r1-distill-1.5b-grpo"),
         117, (300, 600), HEALTHY, "verl tensorboard grpo small_eval eval_noise multi_dataset lookalike",
         "verl GRPO in TensorBoard with two validation sets every 25 steps: AIME-24 (30 problems, mean@16) and "
         "MATH-500. AIME jumps around (0.05-0.25): its best (0.25 at 225) is behind it and the last two read 0.10, "
         "which looks like a decline, but with 30 problems a swing of 0.06 is one sampling sd. MATH-500 (sd ~0.021) "
         "rises 0.55 -> ~0.62-0.63, the train score 0.28 -> ~0.50, entropy declines slowly. Step 300 of 600: "
         "continue."),
    Case("ok-56k-steps-log-linear-custom-csv",
         spec(logrise(0.20, 0.05, 900), [Eval("val", 5000, logrise(0.24, 0.072, 1200), 2000)], "val",
              series=dict(len=logrise(180, 22, 2000), ent=logrise(0.9, -0.06, 3000), gn=const(0.6),
                          lr=cosine_lr(3e-6, 500, 80000, 3e-7)),
              group=4, prompts=16, cap=512),
         W(write_custom)(cols={"reward": "reward", "len": "resp_len", "ent": "entropy", "lr": "lr",
                               "gn": "grad_norm"}, kind="csv", name="train_log.csv", eval_cols={"val": "val_acc"},
                         fmt="%.5g"),
         106, (56000, 80000), HEALTHY, "custom custom_csv long every_step large_eval lookalike",
         "A custom GRPO loop on a small model logging every step for 56,000 of 80,000 steps (CSV, val_acc every 2,000 "
         "steps on 5,000 problems, sd ~0.0065). Per-step reward on 64 samples is noisy (sd ~0.06) and on a linear "
         "axis the last 30k steps look flat. The gains are log-linear: val_acc goes ~0.40 at 8k, ~0.47 at 26k, "
         "~0.50 at 44k, ~0.52 at 56k, still about +0.015 per 10k steps (two sds of this eval); 24k steps of budget "
         "remain. Continue."),
    Case("ok-world-size-doubled-at-resume-hf-tb",
         spec(rise(0.33, 0.67, 500), [Eval("gsm8k", 500, rise(0.38, 0.63, 520), 100)], "gsm8k",
              series=dict(len=rise(300, 380, 500), ent=rise(0.36, 0.27, 700), gn=const(0.16),
                          lr=cosine_lr(1e-6, 30, 2000), clip=const(0.0)),
              prompts=C(lambda s: np.where(s > 600, 64, 32)), group=8, events=[more_gpus(600, 2.0)]),
         W(write_hf_tb)(every=10, v=0.23, resume=(634, 600), save=100),
         107, (1100, 2000), HEALTHY, "trl tensorboard hf_tb grpo resume duplicate_steps world_size lookalike",
         "TRL 0.23 GRPO via TensorBoard, step 1100 of 2000. The job died at 634 and came back from checkpoint-600 on "
         "twice the GPUs, so steps 610-630 are in both event files and several curves change at 600: num_tokens grows "
         "twice as fast per step, step time drops ~40%, grad_norm falls by ~1/sqrt(2), the reward gets less noisy. "
         "None of it is a model change: reward 0.3 -> ~0.64 continues through the resume, eval_reward (500 problems, "
         "sd "
         "~0.022) 0.44 at 100 -> 0.55-0.62 at 900-1100, still inching up. Continue."),
    Case("ok-sandbox-outage-recovered-nemo-tb",
         spec(rise(0.18, 0.52, 330), [Eval("humaneval", 500, rise(0.22, 0.47, 360), 20)], "humaneval",
              series=dict(len=rise(620, 800, 400), ent=rise(0.5, 0.4, 500), kl=rise(0, 0.02, 400),
                          gn=const(0.14), lr=warm_const(5e-7, 10), ppo_kl=const(1e-3)),
              group=16, prompts=32, events=[outage(300, 318)]),
         W(write_nemo_tb)(),
         108, (430, 1000), HEALTHY, "nemo_rl tensorboard grpo code reward_outage recovered lookalike",
         "NeMo-RL GRPO on code with a sandboxed test runner, step 430 of 1000. For 18 steps (300-317) the sandbox "
         "timed out: train/reward fell to ~0.02, baseline_reward/pct_0 to ~95%, grad_norm to almost 0 and "
         "timing/train/reward_calculation jumped to ~300 s, and the validation at 300 read 0.01. Since 318 everything "
         "is "
         "back where it was: reward ~0.40 and rising, validation/accuracy 0.38-0.41 at 340-420 on 500 problems "
         "(0.29-0.35 before the outage). No "
         "update happened on the zero-spread batches, so the weights were not harmed. Continue."),
    Case("ok-agent-fewer-turns-success-rises-verl-console",
         spec(rise(0.34, 0.64, 240), [Eval("webshop", 500, rise(0.31, 0.56, 260), 20, first=0)], "webshop",
              series=dict(turns=rise(7.2, 4.1, 220), tool_calls=rise(6.1, 3.0, 220), len=rise(1850, 1150, 220),
                          ent=rise(0.62, 0.5, 400), kl=rise(0, 0.03, 300), gn=const(0.3), lr=warm_const(1e-6, 10)),
              group=8, prompts=64, cap=8192, meta={"val_names": TURN_NAMES}),
         W(write_verl_console)(v=0.5, turns=True, numpy2=True),
         109, (260, 500), HEALTHY, "verl verl_console multi_turn tool_use agentic length_shrink lookalike",
         "verl multi-turn agent run (console), step 260 of 500. Turns per episode fall 7.2 -> ~5, tool calls 6 -> ~4 "
         "and response tokens 1850 -> ~1350, which is how tool abandonment or collapse starts to look. Here the "
         "agent gets there faster: the score rises 0.35 -> ~0.53 and WebShop validation (500 tasks, every 20) "
         "0.31 -> ~0.46-0.49, entropy declines slowly, KL small. Fewer wasted turns: continue."),
    Case("ok-rm-refresh-sawtooth-wandb-panels",
         spec(rise(0.4, 1.4, 700) + ramp(250, 251, -0.65) + ramp(500, 501, -0.6) + ramp(750, 751, -0.55)
              + ramp(251, 500, 0.45) + ramp(501, 750, 0.42) + ramp(751, 1000, 0.4),
              [Eval("winrate", 805, rise(0.30, 0.52, 650), 50)], "winrate", score_sd=1.0, prompts=64, group=4,
              series=dict(kl=rise(0, 0.11, 700), len=rise(240, 330, 700), lr=warm_const(5e-7, 20), gn=const(0.8),
                          ent=const(1.7))),
         W(write_wandb_panels)(panels={"reward": "train/reward", "kl": "train/kl", "len": "train/response_length"},
                               run_name="ppo-iter-rm-llama8b", step_key="train/global_step",
                               evals={"winrate": "eval/judge_winrate"}),
         110, (880, 1500), HEALTHY, "openrlhf wandb_panel_csv ppo reward_model rm_refresh lookalike",
         "Iterative PPO (OpenRLHF, W&B panel CSV exports), step 880 of 1500. The reward model is retrained on fresh "
         "preferences every 250 steps, so train/reward drops by ~0.6 at 250, 500 and 750 and climbs again each time: "
         "a sawtooth that reads like three collapses. The fixed external judge win rate on 805 prompts (sd ~0.017) "
         "rises throughout, 0.33 at 50 -> ~0.50 at 850; KL and length grow smoothly. Continue."),
    Case("ok-short-26pts-eval-on-start-dip-trl-console",
         spec(rise(0.40, 0.60, 200) + bump(35, -0.07, 18),
              [Eval("math", 400, rise(0.56, 0.70, 160) + bump(30, -0.08, 16), 25, first=0)], "math",
              components={"format_reward": rise(0.25, 0.95, 40)},
              series=dict(len=rise(700, 520, 60), ent=rise(0.55, 0.48, 200), gn=const(0.2),
                          lr=warm_const(2e-6, 10), clip=const(0.0)), group=8, prompts=32),
         W(write_trl_console)(every=5, v=0.21, fns=("accuracy_reward", "format_reward"), eval_on_start=True),
         111, (130, 500), HEALTHY, "trl trl_console grpo short early_dip eval_on_start lookalike",
         "TRL 0.21 GRPO console log with only 26 logged points (logging_steps=5, step 130 of 500) and eval_on_start. "
         "The first evals after step 0 are lower than the baseline (0.575 -> 0.53 at 25 and 50, 400 problems) while "
         "the model picks up the required answer format (format reward 0.25 -> ~0.95): a normal early dip. Accuracy "
         "reward and eval have recovered and now sit above the start (0.61-0.63 at 75-125) and rising. Too early to "
         "judge "
         "anything but direction: continue."),
    # --------------------------------------------------------------------------------- failures and decisions (18)
    Case("bad-gae-critic-ev-collapse-verl03-console",
         spec(rise(0.24, 0.63, 110) + ramp(262, 420, -0.19), [Eval("gsm8k", 1319, rise(0.30, 0.61, 110)
                                                             + ramp(260, 420, -0.15), 10, first=0)], "gsm8k",
              series=dict(ev=rise(0.05, 0.58, 90) + ramp(260, 300, -0.9), vf_loss=rise(2.0, 0.35, 60)
                          + ramp(260, 300, 1.6), values=rise(-0.2, 0.55, 120), len=rise(300, 220, 200),
                          ent=rise(0.52, 0.4, 250) + ramp(262, 420, 0.12), kl=rise(0, 0.006, 300),
                          kl_coef=const(0.001), gn=const(1.6),
                          lr=const(1e-6), clip=const(0.004) + ramp(262, 330, 0.02), ppo_kl=const(3e-4)),
              group=1, prompts=512, cap=512, meta={"val_names": {"gsm8k": ("openai/gsm8k", "acc", 1)}}),
         W(write_verl_console)(v=0.3, kl_mode="reward", critic=True, numpy2=False),
         201, (420, 700), rollback(220, 260, 260), "verl verl_console ppo gae critic explained_variance decline",
         "verl 0.3 PPO with a GAE critic (console). Score rose to ~0.58 and val/test_score/openai/gsm8k (1319 "
         "problems, sd ~0.013) to ~0.55-0.60 over 200-300. At ~260 the critic broke: critic/vf_explained_var fell "
         "from ~0.55 to below -0.3 within 40 steps and vf_loss rose ~5x; with advantages now noise the policy "
         "degrades: score ~0.44 and validation ~0.45-0.47 at 400-420, entropy up, clipping up. Roll back to ~250-260."),
    Case("stop-gae-ev-fades-saturated-mlflow-db",
         spec(rise(0.45, 0.965, 70), [Eval("gsm8k", 1319, rise(0.55, 0.862, 75), 10, first=0)], "gsm8k",
              series=dict(ev=rise(0.1, 0.7, 60) + ramp(120, 260, -0.68), vf_loss=rise(1.2, 0.05, 120),
                          values=rise(0.2, 0.9, 100), len=rise(290, 210, 150), ent=rise(0.5, 0.16, 180),
                          gn=const(0.9), lr=const(1e-6), clip=const(0.003), ppo_kl=const(2e-4)),
              group=1, prompts=512, cap=512, meta={"val_names": {"gsm8k": ("openai/gsm8k", "acc", 1)}}),
         W(write_mlflow_db)(v=0.5, critic=True),
         202, (520, 1000), stop(200), "verl mlflow mlflow_db ppo gae critic saturated plateau",
         "verl PPO with a GAE critic, logged to an MLflow SQLite store (val keys with @ -> _at_), step 520 of 1000. "
         "critic/vf_explained_var has faded from ~0.7 to ~0 since step 120, which looks like a broken critic, but the "
         "score saturated at ~0.95 by step ~200: returns hardly vary any more, so there is nothing left to explain. "
         "Validation on GSM8K (1319 problems, sd ~0.01) has been flat at ~0.85-0.86 from ~200 to 520. Nothing more to "
         "gain and "
         "nothing lost: stop."),
    Case("bad-lc-winrate-falls-raw-rises-rloo-trl-state",
         spec(rise(1.0, 4.2, 450), [Eval("winrate_raw", 805, rise(0.16, 0.36, 500), 100),
                                   Eval("lc_winrate", 805, rise(0.16, 0.245, 170) + ramp(430, 900, -0.055), 100)],
              "lc_winrate", score_sd=1.3, prompts=64, group=2,
              series=dict(kl=rise(0, 14, 700), len=rise(230, 560, 550), ent=const(1.45) + ramp(0, 900, -0.3),
                          lr=const(3e-6), clip=const(0.02), ppo_kl=const(0.004))),
         W(write_trl_state)(rloo_old=True, save=100, keep=3, eval_every=100),
         203, (900, 1500), rollback(240, 430, 430),
         "trl trl_state rloo reward_model length_hacking lc_winrate save_total_limit",
         "TRL 0.21 RLOOTrainer (PPOv2-style keys) with a reward model, checkpoint-900 of 1500 (save_total_limit=3 "
         "keeps 700-900). objective/scores keeps climbing (1 -> ~3.7) and responses grow 230 -> ~550 tokens. The eval "
         "callback logs a raw and a length-controlled win rate on 805 prompts (sd ~0.015): the raw one keeps rising "
         "(0.18 -> ~0.33), the length-controlled one peaked at ~0.24 around 400 and fell to ~0.20 by 900. The RM is "
         "being won with length. Roll back to ~400-430, before the decline began (not on disk: the kept checkpoints "
         "are all later)."),
    Case("bad-judge-flattery-in-samples-nemo-tb",
         spec(rise(0.42, 0.6, 180) + ramp(240, 500, 0.22), [Eval("math", 500, rise(0.38, 0.55, 170)
                                                           + ramp(240, 500, -0.13), 20)], "math", score_sd=0.25,
              series=dict(len=rise(680, 720, 200) + ramp(240, 500, 560), ent=rise(0.5, 0.42, 300),
                          kl=rise(0, 0.02, 250) + ramp(240, 500, 0.03), gn=const(0.18), lr=warm_const(1e-6, 10)),
              group=8, prompts=64),
         W(write_nemo_tb)(samples=hack_samples(250), sample_every=50),
         204, (500, 1000), rollback(170, 240, 240), "nemo_rl tensorboard grpo llm_judge reward_hacking samples length",
         "NeMo-RL GRPO with an LLM-judge reward, step 500 of 1000, with train_data_step<N>.jsonl sample dumps. From "
         "~250 the sampled completions end with a growing 'Verification: I have double-checked every step ... the "
         "final answer is certainly right' coda, sometimes after a wrong answer; the judge reward climbs 0.6 -> ~0.8 "
         "and mean generated tokens 720 -> ~1250. validation/accuracy (exact match, 500 problems, sd ~0.022) peaked at "
         "~0.50-0.54 around 220-260 and reads ~0.42 at 500. Roll back to ~240, before the coda appeared."),
    Case("bad-fp16-loss-scale-spiral-custom-csv",
         spec(rise(0.25, 0.58, 200) + ramp(615, 900, -0.17), [Eval("val", 300, rise(0.30, 0.55, 200)
                                                             + ramp(610, 900, -0.15), 50)], "val",
              series=dict(len=rise(400, 520, 300), ent=rise(0.7, 0.55, 400) + ramp(640, 900, 0.25),
                          kl=rise(0, 0.03, 500) + ramp(640, 900, 0.1), gn=const(0.4) + ramp(600, 900, 2.5),
                          lr=const(1e-6)), group=8, prompts=32,
              events=[loss_scaling(const(0.0005) + ramp(610, 900, 0.45), init_power=16, window=2000,
                                   min_scale=2.0 ** -24)]),
         W(write_custom)(cols={"reward": "reward_mean", "len": "resp_len", "ent": "entropy", "kl": "kl",
                               "gn": "grad_norm", "loss_scale": "loss_scale", "skipped": "skipped", "lr": "lr"},
                         kind="csv", name="metrics.csv", eval_cols={"val": "eval_acc"}),
         205, (900, 2000), rollback(370, 610, 610), "custom custom_csv fp16 overflow loss_scale decline",
         "A custom torch.amp fp16 loop (CSV with loss_scale / skipped columns), step 900 of 2000. From ~610 the "
         "GradScaler overflows more and more often: skipped steps go from rare to ~45%, loss_scale spirals down from "
         "65536 to ~6e-8, the finite grad_norms climb into the 2-3 range. It is not benign: reward falls 0.55 -> "
         "~0.40, entropy and KL jump, eval_acc (300 problems, sd ~0.029) ~0.52-0.57 at 550-650 -> ~0.40 at 900. Roll "
         "back to "
         "before ~610."),
    Case("stop-adaptive-kl-coef-runaway-plateau-verl-console",
         spec(rise(0.25, 0.585, 110), [Eval("math", 500, rise(0.30, 0.55, 120), 20, first=0)], "math",
              series=dict(kl=rise(0.0, 0.024, 120), kl_coef=expo(0.001, 0.04, 130, 70), len=rise(500, 610, 200),
                          ent=rise(0.5, 0.41, 200), gn=const(0.3), lr=const(1e-6), clip=const(0.003)),
              group=8, prompts=128, meta={"val_names": {"math": ("lighteval/MATH", "acc", 1)}}),
         W(write_verl_console)(v=0.5, kl_mode="reward", numpy2=True),
         206, (640, 1000), stop(400), "verl verl_console grpo adaptive_kl kl_in_reward plateau",
         "verl with KL in the reward and the adaptive KL controller (target 0.02), step 640 of 1000. "
         "actor/reward_kl_penalty hovers a little above the target (~0.024), so the controller keeps raising "
         "actor/reward_kl_penalty_coeff, 0.001 -> 0.04; "
         "critic/rewards/mean (score minus the summed KL penalty) therefore drifts from ~0.45 to ~0, which reads as a "
         "decline. The score itself has been flat at ~0.58-0.59 since ~400 and validation (500 problems) flat "
         "at ~0.55 since ~400. "
         "The controller is holding the policy in place and nothing is being lost or gained: stop."),
    Case("bad-gspo-ratio-blowup-save-limit-trl-state",
         spec(rise(0.30, 0.67, 260) + ramp(640, 900, -0.27), [Eval("math", 500, rise(0.34, 0.62, 280)
                                                             + ramp(630, 900, -0.2), 100)], "math",
              series=dict(clip=const(0.12) + ramp(630, 900, 0.42), ent=rise(0.45, 0.34, 400) + ramp(630, 900, 0.6),
                          len=rise(700, 900, 400) + ramp(640, 900, 600), gn=const(0.25) + ramp(620, 900, 1.2),
                          lr=const(2e-6)), group=8, prompts=64, cap=2048),
         W(write_trl_state)(every=10, v=0.22, save=100, keep=2, top=False, eval_every=100),
         207, (900, 1500), rollback(480, 630, 630), "trl trl_state gspo sequence_ratio clip entropy_blowup "
         "save_total_limit",
         "TRL 0.22 GRPO with importance_sampling_level=sequence (GSPO) and num_iterations=2, save_total_limit=2: only "
         "checkpoint-800 and checkpoint-900 are on disk. Sequence-level clip_ratio/region_mean ~0.12 is normal for "
         "GSPO, but from ~630 it climbs to ~0.5, entropy nearly doubles, lengths run toward the 2048 cap, "
         "grad_norm rises, the reward falls ~0.63 -> ~0.40 and eval_reward (500 problems, every 100) drops from "
         "~0.64 at 600 to ~0.40 at 900. The best model (~480-630) is no longer on disk; roll back to it from "
         "elsewhere."),
    Case("bad-resume-normalised-hides-decline-openrlhf-console",
         spec(rise(0.05, 0.9, 380) + ramp(500, 820, -0.5), [Eval("hh", 400, rise(0.0, 0.85, 400)
                                                           + ramp(500, 820, -0.45), 25, sd=1.1)], "hh",
              score_sd=1.1, prompts=64, group=4,
              series=dict(kl=rise(0.0, 0.06, 450) + ramp(500, 820, 0.25), len=rise(220, 300, 450)
                          + ramp(500, 820, 120), ent=const(1.8) + ramp(500, 820, -0.5), gn=const(0.8)
                          + ramp(500, 540, 1.4), lr=warm_const(5e-7, 20) + ramp(500, 501, 1.5e-6),
                          vf_loss=rise(0.6, 0.2, 150), values=rise(-0.3, 0.6, 400), clip=const(0.02)
                          + ramp(500, 530, 0.05), ppo_kl=const(8e-4)),
              events=[normalise_from(500, 0.6, 1.2)]),
         W(write_openrlhf_console)(v=0.9, critic=True, grpo=False, resume=500),
         208, (820, 1500), rollback(420, 500, 500), "openrlhf openrlhf_console ppo reward_model resume reward_scale "
         "lr_change decline",
         "OpenRLHF PPO with a reward model; console logs train.log and train_resume.log, the resume at 500 added "
         "--normalize_reward and, by mistake, a 4x learning rate (actor_lr 5e-7 -> 2e-6). The reward scale change "
         "makes the drop at 500 look like the whole story, but after it reward and the RM-scored eval keep falling "
         "(normalised eval ~0.0 at 525 -> ~-0.2 at 800, 400 prompts), while KL climbs from ~0.05 to ~0.3, grad norm "
         "and clipping jump. Before the resume both were still rising. Roll back to global_step500."),
    Case("bad-large-eval-small-steady-decline-mlflow-files",
         spec(rise(0.40, 0.66, 600) + ramp(1200, 3000, 0.02),
              [Eval("math", 5000, rise(0.42, 0.615, 480) + ramp(1600, 3000, -0.033), 250)], "math",
              series=dict(len=rise(800, 950, 1500), ent=rise(0.42, 0.25, 2000), gn=const(0.15),
                          lr=cosine_lr(1e-6, 50, 4000), clip=const(0.0)), group=8, prompts=64),
         W(write_mlflow_files)(every=10, v=0.24),
         209, (3000, 4000), rollback(1270, 1600, 1600), "trl mlflow mlflow_files grpo large_eval slow_decline "
         "overfitting",
         "TRL 0.24 GRPO logged by the HF MLflow callback to a file store (mlruns/, raw keys), step 3000 of 4000. The "
         "train reward still inches up (~0.66 -> ~0.68) and entropy keeps falling. The held-out eval has 5,000 "
         "problems, so its sd is only ~0.007: it peaked at ~0.615 around 1500-2000 and has slid since "
         "to ~0.587 at 2500-3000, a drop of four sds that a 500-problem eval would not show. The model is overfitting "
         "the "
         "train prompts: roll back to ~1500-1600."),
    Case("bad-tool-call-bonus-farming-verl-jsonl-live",
         spec(rise(0.35, 0.56, 150) + ramp(215, 400, 0.42), [Eval("toolbench", 400, rise(0.32, 0.49, 160)
                                                            + ramp(215, 400, -0.13), 20, first=0)], "toolbench",
              series=dict(tool_calls=rise(2.0, 3.1, 150) + ramp(215, 400, 11), turns=rise(3.0, 4.1, 150)
                          + ramp(215, 400, 10.5), len=rise(1300, 1500, 150) + ramp(215, 400, 2600),
                          ent=rise(0.6, 0.5, 300), kl=rise(0, 0.02, 200) + ramp(215, 400, 0.05), gn=const(0.3),
                          lr=warm_const(1e-6, 10)), score_sd=0.35, group=8, prompts=64, cap=8192,
              meta={"val_names": {"toolbench": ("toolbench_g1", "acc", 1)}}),
         W(write_verl_jsonl)(v=0.5, turns=True, cut_tail=911, ckpt_every=50, project="agent_rl", exp="qwen7b-tools"),
         210, (400, 800), rollback(150, 210, 215), "verl verl_jsonl multi_turn tool_use reward_shaping hacking "
         "still_writing checkpoints",
         "verl multi-turn tool-use run with a shaped reward (+0.05 per successful tool call on top of task success), "
         "file logger still being written (last line cut), step ~400 of 800. From ~215 the agent farms the bonus: "
         "tool_call_counts/mean 3 -> ~14, num_turns 4 -> ~14, responses 1500 -> ~4000 tokens, and the training score "
         "climbs 0.56 -> ~0.95. The validation success metric (acc only, 400 tasks, sd ~0.025) peaked at ~0.45 "
         "around 200-210 and fell to ~0.36. Roll back to global_step_200."),
    Case("bad-ref-sync-hides-drift-eval-falls-trl-console",
         spec(rise(0.36, 0.58, 260) + ramp(300, 900, 0.06), [Eval("math", 400, rise(0.38, 0.52, 240)
                                                             + ramp(380, 900, -0.14), 50)], "math",
              series=dict(kl=saw(64, 0.009, 0.0004), ent=rise(0.45, 0.28, 300) + ramp(300, 900, -0.2),
                          len=rise(650, 560, 300) + ramp(300, 900, -260), gn=const(0.2), lr=const(1e-6),
                          clip=const(0.0)), group=8, prompts=64),
         W(write_trl_console)(every=10, v=0.21, beta=0.04),
         211, (900, 1500), rollback(230, 380, 380), "trl trl_console grpo sync_ref_model kl entropy_collapse "
         "eval_decline",
         "TRL 0.21 GRPO with beta 0.04 and a hard reference reset every 64 steps (sync_ref_model, alpha 1.0), step "
         "900 of 1500. KL never exceeds ~0.01 because the reference keeps catching up, so the usual drift alarm "
         "never fires, while the policy keeps moving: entropy 0.45 -> ~0.08, responses 650 -> ~300 tokens. The "
         "train reward still creeps up, but eval_reward (400 problems, sd ~0.025) hovered at ~0.49-0.52 from 150 to "
         "550 and fell to ~0.39-0.44 over 650-900. Roll back to ~350-380."),
    Case("stop-lc-winrate-flat-raw-rises-wandb-panels",
         spec(rise(0.2, 2.4, 500), [Eval("lc_winrate", 805, rise(0.15, 0.215, 110), 50),
                                    Eval("winrate", 805, rise(0.15, 0.33, 520), 50)], "lc_winrate", score_sd=1.2,
              prompts=64, group=4,
              series=dict(kl=rise(0, 0.14, 600), len=rise(240, 520, 500), lr=warm_const(5e-7, 20), gn=const(0.7),
                          ent=const(1.6))),
         W(write_wandb_panels)(panels={"reward": "train/reward", "kl": "train/kl", "len": "train/response_length"},
                               run_name="ppo-rm-mistral7b", step_key="train/global_step",
                               evals={"lc_winrate": "eval/lc_winrate", "winrate": "eval/winrate"}),
         212, (800, 1200), stop(300), "openrlhf wandb_panel_csv ppo reward_model length lc_winrate plateau",
         "OpenRLHF PPO with a reward model, W&B panel CSV exports, step 800 of 1200. The RM reward keeps rising "
         "(0.2 -> ~1.9) and the raw win rate on 805 prompts too (0.16 -> ~0.30), but responses have doubled "
         "(240 -> ~500 tokens), and the length-controlled win rate has been flat at ~0.215 since ~300. Every gain "
         "since then is length. The current model is as good as any earlier one on the measure that counts and "
         "more steps only buy verbosity: stop."),
    Case("stop-fp16-every-step-skipped-openrlhf-console",
         spec(hold(rise(0.22, 0.6, 300), 380), [Eval("math", 500, hold(rise(0.27, 0.55, 320), 380), 50)], "math",
              series=dict(len=hold(rise(480, 690, 400), 380), ent=hold(rise(0.6, 0.45, 500), 380), gn=const(0.35),
                          lr=warm_const(1e-6, 15), kl=hold(rise(0.0, 0.05, 500), 380), clip=const(0.002)
                          + ramp(380, 381, -0.002), ppo_kl=const(1e-4) + ramp(380, 381, -1e-4)), group=8, prompts=128,
              events=[loss_scaling(const(0.0006) + ramp(380, 381, 1.0), init_power=16, window=150, first_search=4)]),
         W(write_openrlhf_console)(v=0.9, overflow_lines=True),
         213, (700, 1200), stop(380), "openrlhf openrlhf_console grpo fp16 overflow skipped_steps no_learning",
         "OpenRLHF GRPO in fp16, global step 700 of 1200. From step 381 every optimizer step overflows: the log "
         "repeats '[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1', "
         "actor_grad_norm is inf on every step. No update has been applied since: reward (~0.49), eval pass1 "
         "(0.44-0.50, 500 problems), KL, entropy and length have been flat for 320 steps, clipping is exactly 0. The "
         "weights are those of step "
         "380, as good as any, and more steps will not change them: stop (and fix the precision)."),
    Case("stop-finished-converged-aime-noisy-verl-tb",
         spec(rise(0.30, 0.66, 80), [Eval("math500", 500, rise(0.50, 0.72, 80), 25, first=0),
                                      Eval("aime24", 30, rise(0.12, 0.20, 150), 25, first=0, k=16)], "math500",
              series=dict(len=rise(900, 1300, 150), ent=rise(0.5, 0.33, 200), gn=const(0.2),
                          lr=cosine_lr(1e-6, 10, 500), kl=rise(0, 0.01, 200), clip=const(0.004)),
              group=16, prompts=64, cap=4096,
              meta={"val_names": {"math500": ("math500", "acc", 1), "aime24": ("aime24", "acc", 16)}}),
         W(write_verl_tb)(v=0.45, ckpt_every=100, project="deepscaler", exp="r1-distill-1.5b-grpo-short"),
         310, (500, 500), stop(250), "verl tensorboard grpo finished small_eval eval_noise multi_dataset",
         "verl GRPO that ran to its planned 500 steps (global_step_500 saved, latest_checkpointed_iteration 500), "
         "cosine LR decayed to zero. MATH-500 validation (sd ~0.02) rose to ~0.72 by ~250 and held there to the "
         "end; the train score plateaued at ~0.66. AIME-24 (30 problems) had its best reading mid-run, but that is "
         "noise of one to two sds on 30 problems. The final weights are as good as any: keep them, stop."),
    Case("stop-agent-plateau-nemo-tb",
         spec(rise(0.25, 0.71, 75), [Eval("sokoban", 256, rise(0.22, 0.66, 80), 25)], "sokoban",
              series=dict(turns=rise(8.5, 6.2, 150), len=rise(900, 700, 150), ent=rise(0.55, 0.3, 200),
                          kl=rise(0, 0.03, 250), gn=const(0.18), lr=const(1e-6), ppo_kl=const(1e-3)),
              group=8, prompts=64, cap=4096),
         W(write_nemo_tb)(turns=True),
         215, (700, 1200), stop(250), "nemo_rl tensorboard grpo multi_turn agentic plateau",
         "NeMo-RL multi-turn GRPO on a puzzle environment, step 700 of 1200. Reward rose 0.25 -> ~0.71 by step ~250 "
         "and validation/accuracy (256 puzzles, sd ~0.03) to ~0.66; both have been flat for 450 steps since. Turns "
         "per episode settled at ~6.2, entropy and KL are flat, about half the prompts are all-solved "
         "(baseline_reward/pct_1 ~50%). Converged well before the end of the budget: stop."),
    Case("conv-dapo-gen-batches-creep-flat-verl-jsonl",
         spec(rise(0.30, 0.62, 220), [Eval("aime24", 30, rise(0.20, 0.31, 250), 50, first=0, k=32),
                                      Eval("math500", 500, rise(0.60, 0.785, 230), 50, first=0)], "math500",
              series=dict(gen_batches=rise(1.1, 2.6, 500), len=rise(1800, 3600, 400), ent=rise(0.55, 0.4, 400),
                          clip=const(0.01), gn=const(0.2), lr=const(1e-6)), group=16, prompts=512, cap=8192,
              meta={"val_names": {"aime24": ("aime24", "acc", 32), "math500": ("math500", "acc", 1)}}),
         W(write_verl_jsonl)(v=0.6, kl_mode=None, dapo=True, ckpt_every=100, project="dapo", exp="qwen32b-dapo"),
         216, (940, 1000), converged(), "verl verl_jsonl dapo dynamic_sampling overlong near_end plateau",
         "verl DAPO recipe (dynamic sampling, clip-higher, overlong buffer), file logger, step 940 of 1000. "
         "train/num_gen_batches has crept from ~1 to ~2.4 on average as more groups are all-solved and filtered out. "
         "MATH-500 "
         "validation has been flat at ~0.78 since ~500, AIME-24 (30 problems, mean@32) at ~0.3, the score flat at "
         "~0.62. Converged near the planned end: stopping now or letting the last 60 steps run are both fine."),
    Case("bad-adaptive-kl-lags-rm-overopt-legacy-ppo-tb",
         spec(rise(0.5, 3.2, 350) + ramp(420, 1000, 3.5), [Eval("gold_rm", 512, rise(0.2, 1.25, 300)
                                                          + ramp(470, 1000, -0.9), 50, sd=1.0)], "gold_rm",
              score_sd=1.4, prompts=64, group=1,
              series=dict(kl=rise(1.0, 3.0, 300) + ramp(420, 1000, 24),
                          # adaptive controller, horizon 10000: at most ~0.13% per batch, down below target, up above
                          kl_coef=C(lambda s: 0.2 * np.exp(0.00128 * (np.clip(s - 460, 0, None) - np.minimum(s, 460)))),
                          len=rise(48, 60, 300) + ramp(420, 1000, 70), ent=const(2.1) + ramp(420, 1000, -0.9),
                          ev=rise(0.1, 0.55, 150), vf_loss=rise(0.5, 0.12, 150), gn=const(1.0),
                          lr=const(1.41e-5), clip=const(0.05), ppo_kl=const(0.01))),
         W(write_legacy_ppo_tb)(),
         217, (1000, 1000), rollback(420, 470, 470), "trl tensorboard legacy_ppo adaptive_kl reward_model "
         "overoptimisation finished",
         "TRL 0.11 legacy PPOTrainer (accelerate TensorBoard tracker) with adap_kl_ctrl (target 6), finished at its "
         "planned 1000 batches. KL sat under the target early, so objective/kl_coef drifted down from 0.2 to ~0.11; "
         "once the policy found "
         "what the reward model likes (~420) KL ran from ~3 to ~27 while the controller, limited to ~0.13% per "
         "batch, only brought the coefficient back to ~0.2. env/reward_mean climbed from ~2.3 to ~6.4. The gold "
         "reward model on 512 held-out prompts (eval/gold_rm, sd ~0.045) peaked at ~1.0 around 450-470 and ended near "
         "0.3. Keep the weights from ~450-470, not the final ones."),
    Case("bad-short-25pts-peak-then-slide-trl-state",
         spec(rise(0.33, 0.66, 45) + ramp(110, 260, -0.2), [Eval("gsm8k", 200, rise(0.40, 0.62, 45)
                                                           + ramp(115, 260, -0.18), 50)], "gsm8k",
              series=dict(len=rise(280, 250, 60) + ramp(110, 260, -140), ent=rise(0.4, 0.3, 80)
                          + ramp(110, 260, -0.2), kl=rise(0, 0.05, 80) + ramp(110, 260, 0.25), gn=const(0.5)
                          + ramp(100, 260, 0.9), lr=warm_const(5e-6, 10), clip=const(0.0)), group=8, prompts=32),
         W(write_trl_state)(every=10, v=0.25, beta=0.02, save=50, eval_every=50),
         218, (250, 300), rollback(70, 110, 110), "trl trl_state grpo short high_lr length_collapse checkpoints",
         "TRL 0.25 GRPO at a high learning rate (5e-6), only 25 logged points (step 250 of 300) plus evals every 50 "
         "on 200 problems (sd ~0.034). The reward shot up to ~0.68 by step ~100, then slid to ~0.51 while "
         "responses shrank 250 -> ~120 tokens, entropy fell and KL rose 5x; eval_reward read 0.55 at 50 and 100 and "
         "has fallen at every eval since, to 0.475 at 250. Short, but the peak is behind it: roll back to "
         "checkpoint-100."),
]


# ------------------------------------------------------------------------------------------------------- checks

def headline_clean(sim: Sim, grid: np.ndarray) -> tuple[np.ndarray, float]:
    """The noise-free headline curve on a grid and the sd of one logged point at its best."""
    spec_ = sim.spec
    if spec_.headline:
        ev = next(e for e in spec_.evals if e.name == spec_.headline)
        p = ev.p(grid)
        best = float(p.max())
        if ev.sd is not None:
            return p, ev.sd / math.sqrt(ev.n)
        n_eff = ev.n * min(ev.k, 2)
        return p, math.sqrt(best * (1 - best) / n_eff)
    p = spec_.acc(grid)
    return p, float(np.std(sim.x["reward"] - sim.clean["reward"]))


def window_of(sim: Sim, every: int, onset: int | None) -> tuple[int, int, int, float]:
    """[first logged step as good as the best, newest such step not after the onset], the best step, the sd."""
    grid = np.arange(every, sim.reached + 1, every, dtype=float)
    p, tol = headline_clean(sim, grid)
    b = int(np.argmax(p))
    ok = p >= p[b] - tol
    lo = b
    while lo > 0 and ok[lo - 1]:
        lo -= 1
    hi = b
    while hi + 1 < len(grid) and ok[hi + 1] and (onset is None or grid[hi + 1] <= onset):
        hi += 1
    assert onset is None or grid[b] <= onset + every, f"best {grid[b]} lies after the onset {onset}"
    return int(grid[lo]), int(grid[hi]), int(grid[b]), tol


def check(cases: list[Case]) -> int:
    bad = 0
    for case in cases:
        sim = case.scenario(np.random.default_rng(case.seed), case.reached, case.planned)
        lab = case.labels
        name = sim.spec.headline or "train reward"
        print(f"\n== {case.name}  [{'/'.join(lab['accept'])} pref {lab['preferred']}]  step {case.reached} of "
              f"{case.planned}")
        r = sim.x["reward"]
        idx = np.unique(np.linspace(0, len(r) - 1, 6).astype(int))
        win = max(1, len(r) // 40)
        levels = ", ".join(f"{int(sim.steps[i])}:{np.mean(r[max(0, i - win):i + 1]):.3f}" for i in idx)
        print(f"   train reward (mean of last {win} steps) {levels}")
        for ename, (es, pc, noisy) in sim.evals.items():
            j = int(np.argmax(noisy))
            k = max(1, len(es) // 8)
            pts = ", ".join(f"{s}:{v:.3f}" for s, v in zip(es[::k], noisy[::k], strict=True))
            print(f"   eval {ename}: {pts} | noisy best {es[j]}:{noisy[j]:.3f} last {es[-1]}:{noisy[-1]:.3f} | "
                  f"clean best {es[int(np.argmax(pc))]}:{pc.max():.3f} last {pc[-1]:.3f}")
        every = 10 if case.reached >= 200 else 5
        if case.reached > 5000:
            every = 250
        lo, hi, b, tol = window_of(sim, every, lab.get("onset_step") if lab["preferred"] == "rollback" else None)
        grid = np.arange(every, sim.reached + 1, every, dtype=float)
        p, _ = headline_clean(sim, grid)
        drop = (p.max() - p[-1]) / tol
        tail = p[-1] - p[max(0, len(p) - 1 - len(p) // 5)]
        print(f"   headline {name}: clean best step {b} ({p.max():.3f}), last {p[-1]:.3f}, drop {drop:.1f} sd "
              f"(tol {tol:.4f}), last-fifth change {tail:+.4f}; window [{lo}, {hi}]")
        verdict = "ok"
        if lab["preferred"] == "rollback":
            want = lab.get("rollback_window")
            if drop < 2.5:
                verdict = "MISMATCH: rollback but clean drop < 2.5 sd"
            elif want != [lo, hi]:
                verdict = f"MISMATCH: table window {want} vs computed [{lo}, {hi}]"
        elif lab["preferred"] == "continue":
            if drop > 1.0 or tail <= 0:
                verdict = "MISMATCH: continue but the clean headline is not still rising"
        elif lab["preferred"] == "stop":
            if drop > 1.0:
                verdict = "MISMATCH: stop but the clean headline ends below its best"
            if tail > tol:
                verdict = "MISMATCH: stop but still rising by more than one sd over the last fifth"
        print(f"   -> {verdict}")
        bad += verdict != "ok"
    print(f"\n{len(cases)} cases, {bad} mismatches")
    return bad


def verify(runs: Path) -> int:
    """Read every written run back with the tools its framework's users have (json, TensorBoard's EventAccumulator,
    MLflow's client, csv) and print what each holds; returns the number of runs that failed to load."""
    import os

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3.7+ only reads ./mlruns when told to
    failed = 0
    for run in sorted(p for p in runs.iterdir() if p.is_dir()):
        notes = []
        try:
            for f in sorted(run.rglob("trainer_state.json")):
                st = json.loads(f.read_text())
                notes.append(f"{f.relative_to(run)}: {len(st['log_history'])} rows to step {st['global_step']}")
            for f in sorted(run.rglob("events.out.tfevents.*")):
                acc = EventAccumulator(str(f), size_guidance={"scalars": 0})
                acc.Reload()
                tags = acc.Tags()["scalars"]
                steps = [e.step for e in acc.Scalars(tags[0])] if tags else []
                notes.append(f"{f.name}: {len(tags)} tags, steps {min(steps)}-{max(steps)}")
            for f in sorted(run.rglob("*.jsonl")):
                lines = f.read_text().splitlines()
                good = 0
                for i, line in enumerate(lines):
                    try:
                        json.loads(line)
                        good += 1
                    except json.JSONDecodeError:
                        assert i == len(lines) - 1, f"{f}: bad line {i + 1} before the end"
                        notes.append(f"{f.name}: last line cut")
                if "train_data_step" not in f.name:
                    notes.append(f"{f.relative_to(run)}: {good} lines")
            for f in sorted(run.rglob("*.csv")):
                with f.open(newline="") as fh:
                    rows = list(csv.reader(fh))
                notes.append(f"{f.name}: {len(rows) - 1} rows x {len(rows[0])} cols")
            for f in sorted(run.glob("*.log")):
                text = f.read_text(encoding="utf-8")
                n = len(re.findall(r"^(?:\(TaskRunner pid=\d+\) )?step:\d+ - |^✨ Global step |^\{'loss'", text, re.M))
                notes.append(f"{f.name}: {len(text.splitlines())} lines, {n} step records")
            if (run / "mlruns").exists() or (run / "mlflow.db").exists():
                from mlflow.tracking import MlflowClient
                uri = ("file://" + str((run / "mlruns").resolve())) if (run / "mlruns").exists() else \
                    f"sqlite:///{(run / 'mlflow.db').resolve()}"
                client = MlflowClient(tracking_uri=uri)
                exps = [e for e in client.search_experiments() if e.name != "Default"]
                r = client.search_runs([exps[0].experiment_id])[0]
                keys = sorted(r.data.metrics)
                hist = client.get_metric_history(r.info.run_id, keys[0])
                notes.append(f"mlflow {uri.split(':')[0]}: run {r.info.run_name}, {len(keys)} keys, "
                             f"{keys[0]} x{len(hist)}")
        except Exception as why:  # a run that does not load is a bug in this script
            failed += 1
            notes.append(f"FAILED: {type(why).__name__}: {why}")
        print(f"{run.name}\n    " + "\n    ".join(notes))
    print(f"{failed} runs failed to load")
    return failed


HEADER = """\
# Holdout set 10: hand-built runs written by make_holdout10.py, independent of the assessor, its judges and the
# generators of holdouts 1-9. Labels: what a careful practitioner should do with each run under DESIGN.md's decision
# contract. rollback_window is inclusive: from the first logged step whose noise-free headline (the held-out eval,
# else the train reward) is within one sampling sd of its best (sqrt(p(1-p)/N) on N problems, sd/sqrt(N) for a
# score) to the newest such step not after the onset, where the damage begins. onset_step: where the problem shows.
# Run `.venv/bin/python evals/holdout10/make_holdout10.py` once to write runs/ (gitignored); `--check` prints levels.
"""


def write_run(case: Case, folder: Path) -> None:
    sim = case.scenario(np.random.default_rng(case.seed), case.reached, case.planned)
    case.write(sim, folder)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="print levels, best/last points and windows per case")
    ap.add_argument("--verify", action="store_true", help="read the written runs back with the frameworks' tools")
    args = ap.parse_args()
    if args.check:
        sys.exit(1 if check(CASES) else 0)
    if args.verify:
        sys.exit(1 if verify(HERE / "runs") else 0)
    build(HERE, "make_holdout10.py", "holdout10.yaml", "h10-", "holdout10", HEADER, CASES, write_run)


if __name__ == "__main__":
    main()
