#!/usr/bin/env python
"""Independent hold-out set for `assessor eval`: 45 labelled runs in 11 on-disk formats.

    .venv/bin/python evals/holdout/make_holdout.py      # writes runs/ (gitignored) and holdout.yaml

Written without looking at the assessor's own generator or judge: shapes and numbers come from the seed articles
(`/work/shared/seeds`) and the look of real logs (`/work/shared/real-runs`); on-disk formats follow
`/work/shared/reference/metrics-and-formats.md`. Nothing here imports the assessor.

Layout: a GRPO simulator (rewards sampled per prompt group, so reward_std and frac_reward_zero_std agree with the
reward), the scenario vocabulary (curve shapes, then failure modes and quirks built from three primitives: `shift`
a curve before sampling, `add` to or `mul` a logged metric after it), DPO and PPO-with-reward-model builders, one
writer per on-disk format, and the case table. Labels follow the decision contract in DESIGN.md (see
../holdout_kit.py); every run is regenerated deterministically from its seed.
"""

from __future__ import annotations

import csv
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import holdout_kit as kit  # noqa: E402
from holdout_kit import HEALTHY, Case, converged, rollback, stop, stop_or_rollback  # noqa: E402

T0 = 1754000000.0  # wall-clock origin for timestamps (fixed, so output is deterministic)


# ------------------------------------------------------------------------------------------------------- noise

def ar1(rng, n, sigma, rho=0.85):
    """Autocorrelated noise with stationary std `sigma`."""
    e = rng.normal(0, sigma * math.sqrt(1 - rho ** 2), n)
    x = np.empty(n)
    x[0] = rng.normal(0, sigma)
    for i in range(1, n):
        x[i] = rho * x[i - 1] + e[i]
    return x


def heavy(rng, n, scale, df=3):
    """Heavy-tailed (Student-t) iid noise."""
    return scale * rng.standard_t(df, n)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def ramp(t, t0, t1):
    """0 before t0, 1 after t1, linear between."""
    return np.clip((np.asarray(t, float) - t0) / max(t1 - t0, 1), 0, 1)


def lr_schedule(t, peak, n_total, warmup=10, kind="linear"):
    w = np.minimum(t / max(warmup, 1), 1)
    frac = np.clip((t - warmup) / max(n_total - warmup, 1), 0, 1)
    decay = 0.5 * (1 + np.cos(np.pi * frac)) if kind == "cosine" else 1 - frac
    return peak * w * np.where(t < warmup, 1, decay)


# ------------------------------------------------------------------------------------------------ curve shapes
# Functions of (t, n): t the steps, n the steps the run reached. A number is a constant, a list a sum.

def rise(lo, hi, mid, width):
    """Logistic rise from lo to hi, centred at `mid`."""
    return lambda t, n: lo + (hi - lo) * sigmoid((t - mid) / width)


def lin(a, b):
    """Straight line from a (step 0) to b (the last step)."""
    return lambda t, n: a + (b - a) * t / n


def creep(a, b, k):
    """a -> b along (t/n)^k: a slow learner (k < 1 front-loaded, k > 1 late)."""
    return lambda t, n: a + (b - a) * (t / n) ** k


def sat(a, b, tau):
    """Exponential approach from a to b with time constant tau (plateau, decay)."""
    return lambda t, n: a + (b - a) * (1 - np.exp(-t / tau))


def step(a, b, t0, t1=None, k=1.0):
    """a until t0, b after t1 (default: the end)."""
    return lambda t, n: a + (b - a) * ramp(t, t0, t1 or n) ** k


def wave(amp, period):
    return lambda t, n: amp * np.sin(t / period)


def cv(spec, t, n):
    if spec is None:
        return None
    if isinstance(spec, list):
        return sum(cv(s, t, n) for s in spec)
    if callable(spec):
        return np.asarray(spec(t, n), float) * np.ones(len(t))
    return np.full(len(t), float(spec))


# --------------------------------------------------------------------------------------- the neutral run, simulated

@dataclass
class Run:
    algo: str                      # grpo | rloo | dapo | ppo | dpo | reinforce++
    n: int                         # steps reached (1..n)
    max_steps: int                 # planned steps
    m: dict = field(default_factory=dict)    # neutral name -> per-step array (index 0 = step 1)
    ev: dict = field(default_factory=dict)   # neutral eval name -> {step: value}
    components: list = field(default_factory=list)  # reward function names (GRPO)

    @property
    def steps(self):
        return np.arange(1, self.n + 1)


def simulate_grpo(rng, n, p, length, entropy, kl, max_steps, prompts=16, group=8, cap=1024, scale="binary",
                  lr=1e-6, grad_base=0.25, difficulty_spread=4.0, on_policy=True, algo="grpo",
                  components=("accuracy_reward",)):
    """Per-step metrics from curves: `p` mean success probability, `length` tokens wanted, `entropy`, `kl` (None:
    beta 0, not logged). Rewards are sampled per prompt group (prompts easy and hard around p)."""
    t = np.arange(1, n + 1)
    out = {k: np.empty(n) for k in ("reward", "reward_std", "zero_std", "len_mean", "len_min", "len_max",
                                    "term_len", "clipped")}
    for i in range(n):
        pi = float(np.clip(p[i], 1e-4, 1 - 1e-4))
        q = rng.beta(max(pi * difficulty_spread, 1e-3), max((1 - pi) * difficulty_spread, 1e-3), prompts)
        r = rng.binomial(1, q[:, None], (prompts, group)).astype(float)
        if scale == "pm1":
            r = 2 * r - 1
        out["reward"][i], out["reward_std"][i] = r.mean(), r.std(ddof=1)
        out["zero_std"][i] = np.mean(r.std(axis=1) == 0)
        lens = np.minimum(np.maximum(rng.lognormal(math.log(max(float(length[i]), 2.0)) - 0.08, 0.4,
                                                   prompts * group), 1), cap)
        clipped = lens >= cap
        out["len_mean"][i], out["len_min"][i], out["len_max"][i] = lens.mean(), lens.min(), lens.max()
        out["term_len"][i] = lens[~clipped].mean() if (~clipped).any() else 0.0
        out["clipped"][i] = clipped.mean()
    out["entropy"] = np.maximum(entropy * np.exp(ar1(rng, n, 0.06)), 1e-3)
    if kl is not None:
        out["kl"] = np.maximum(kl * np.exp(ar1(rng, n, 0.15, 0.6)), 0)
    out["grad_norm"] = grad_base * np.exp(ar1(rng, n, 0.25, 0.5) + np.abs(heavy(rng, n, 0.08)))
    out["loss"] = heavy(rng, n, 0.004) + (0.04 * out["kl"] if kl is not None else 0)
    out["lr"] = lr_schedule(t, lr, max_steps, warmup=max(3, max_steps // 40))
    out["clip_region"] = np.zeros(n) if on_policy else np.abs(ar1(rng, n, 0.004)) + 0.002
    out["step_time"] = 18 + out["len_mean"] * 0.05 + np.abs(heavy(rng, n, 1.5))
    out["num_tokens"] = np.cumsum(prompts * group * (out["len_mean"] + 180))
    run = Run(algo, n, max_steps, out, components=list(components))
    if len(components) == 1:
        run.m[f"comp/{components[0]}"] = out["reward"].copy()
    return run


def grpo(p, length, ent, kl=None, ev=None, every=100, items=500, noise=0.0, len_noise=0.0, events=(), **sim):
    """A GRPO-family run: curves for success probability, length, entropy, KL and held-out accuracy (`ev`, sampled
    binomially over `items` at step 0 and every `every` steps; or a {step: accuracy} dict), then `events`."""
    def make(rng, n, planned):
        t = np.arange(1, n + 1, dtype=float)
        s = np.arange(0, n + 1, every, dtype=float)
        c = {"p": cv(p, t, n), "length": cv(length, t, n), "ent": cv(ent, t, n), "kl": cv(kl, t, n), "S": s,
             "ev": cv(ev, s, n) if ev is not None and not isinstance(ev, dict) else np.zeros(len(s))}
        if noise:
            c["p"] = c["p"] + ar1(rng, n, *(noise if isinstance(noise, tuple) else (noise,)))
        if len_noise:
            c["length"] = c["length"] + ar1(rng, n, len_noise)
        for event in events:
            event("pre", c, t, n, rng)
        run = simulate_grpo(rng, n, c["p"], c["length"], c["ent"], c["kl"], max_steps=planned, **sim)
        if isinstance(ev, dict):
            run.ev["acc"] = dict(ev)
        elif ev is not None:
            run.ev["acc"] = {int(k): float(rng.binomial(items, float(np.clip(a, 0, 1))) / items)
                             for k, a in zip(s, c["ev"], strict=True)}
        c["run"] = run
        for event in events:
            event("post", c, t, n, rng)
        return run
    return make


# ------------------------------------------------------------------------ primitives for failure modes and quirks

def shift(t0, t1=None, k=1.0, **amounts):
    """Before sampling: from t0 to t1 (default: the end) add each amount to its curve (p, length, ent, kl, ev)."""
    def event(stage, c, t, n, rng):
        for key, a in amounts.items() if stage == "pre" else ():
            c[key] = c[key] + a * ramp(c["S"] if key == "ev" else t, t0, t1 or n) ** k
    return event


def add(t0, t1=None, k=1.0, **amounts):
    """After sampling: add to logged metrics along a ramp."""
    def event(stage, c, t, n, rng):
        for key, a in amounts.items() if stage == "post" else ():
            c["run"].m[key] = c["run"].m[key] + a * ramp(t, t0, t1 or n) ** k
    return event


def mul(t0, t1=None, exp=False, **factors):
    """After sampling: scale logged metrics by 1 + f (or e^f) along a ramp."""
    def event(stage, c, t, n, rng):
        for key, f in factors.items() if stage == "post" else ():
            r = ramp(t, t0, t1 or n)
            c["run"].m[key] = c["run"].m[key] * (np.exp(f * r) if exp else 1 + f * r)
    return event


def post(fn):
    """After sampling: fn(run, t, rng)."""
    def event(stage, c, t, n, rng):
        if stage == "post":
            fn(c["run"], t, rng)
    return event


# ------------------------------------------------------------------------------------- failure modes and quirks

def decline(at, size, k=1.0, end=None, ev=0.0, sym_at=None, sym_end=None, **symptoms):
    """Peak then decline: from `at` reward slides by `size` (held-out accuracy by `ev`); symptoms (length, ent, kl
    increases) from `sym_at`."""
    return [shift(at, end, k, p=-size), shift(at, end, ev=-ev), shift(sym_at or at, sym_end, **symptoms)]


def overfit(peak, ev_drop):
    """Train reward keeps rising; held-out accuracy peaks at `peak` and falls; answers shorten, entropy drops."""
    return [shift(peak + 10, None, ev=-ev_drop), shift(peak, None, length=-90), shift(peak - 50, None, ent=-.35)]


def kl_blowup(at):
    """KL explodes from `at` (to ~8 in 60 steps), grad norm x20; then length, entropy, reward and eval go."""
    return [shift(at, at + 60, 2, kl=8), shift(at + 15, at + 80, p=-.6), shift(at + 10, at + 70, length=400),
            shift(at + 10, None, ent=1.2), shift(at, at + 80, ev=-.6), mul(at, at + 40, grad_norm=20)]


def entropy_stall(t0, t1):
    """Entropy collapse (the curve is given): groups stop disagreeing between t0 and t1, the signal dies."""
    def fn(run, t, rng):
        run.m["zero_std"] = np.clip(0.35 + 0.65 * ramp(t, t0, t1) + ar1(rng, run.n, 0.02), 0, 1)
        run.m["reward_std"] = run.m["reward_std"] * (1 - 0.8 * ramp(t, t0, t1))
    return [post(fn)]


def entropy_blowup(at):
    """Entropy jumps to ~8 within 25 steps (gibberish): reward collapses, lengths go to the cap."""
    return [shift(at, at + 25, 1.5, ent=8), shift(at + 3, at + 25, p=-.8), shift(at, at + 30, length=800),
            shift(at, at + 1, ev=-.7)]


def length_explosion(at, full):
    """Length climbs from `at` by +1700 tokens (past the cap) by `full`; reward and eval fall from at+60."""
    return [shift(at, full, 1.3, length=1700), shift(at + 60, None, p=-.35), shift(at, None, ent=.3),
            shift(at + 60, at + 240, ev=-.25)]


def length_collapse(at):
    """Completions shrink to a few tokens over 50 steps; reward follows 10 steps later."""
    return [shift(at, at + 50, .7, length=-242), shift(at + 10, at + 60, p=-.65), shift(at, at + 50, ent=-.3)]


def format_hack(at):
    """Two rewards: format saturates at 1 while accuracy (and eval) fall from `at`; the 0..2 total stays flat."""
    def fn(run, t, rng):
        fmt = np.clip(cv(rise(.35, 1.0, 120, 30), t, run.n) + ar1(rng, run.n, .02) * (1 - ramp(t, at + 20, at + 80)),
                      0, 1)
        run.m["comp/accuracy_reward"], run.m["comp/format_reward"] = run.m["reward"].copy(), fmt
        run.m["reward"] = run.m["reward"] + fmt
        run.m["reward_std"] = np.sqrt(run.m["reward_std"] ** 2 + fmt * (1 - fmt))
    return [shift(at, None, p=-.28, length=-200, ent=-.35), shift(at, at + 250, ev=-.3), post(fn)]


def summed3(run, t, rng):
    """Three reward components summed (0..3): format (saturates early), correctness (the sampled one), concision."""
    f = np.clip(cv(rise(.4, .97, 40, 15), t, run.n) + ar1(rng, run.n, .03), 0, 1)
    c = np.clip(cv(rise(.3, .6, 180, 90), t, run.n) + ar1(rng, run.n, .04), 0, 1)
    run.m["comp/format_reward"], run.m["comp/correctness_reward"], run.m["comp/concision_reward"] = \
        f, run.m["reward"].copy(), c
    run.m["reward"] = f + run.m["reward"] + c
    run.m["reward_std"] = np.sqrt(run.m["reward_std"] ** 2 + 0.1)


def no_signal(run, t, rng):
    """The reward never fires: reward, its std, loss and gradients exactly 0 from step 1."""
    for k in ("reward", "reward_std", "loss", "grad_norm", "comp/accuracy_reward"):
        run.m[k] = np.zeros(run.n)
    run.m["zero_std"] = np.ones(run.n)


def saturate(at):
    """Every completion right from `at`: reward exactly 1, its std 0, zero gradient."""
    def fn(run, t, rng):
        done = t >= at
        for k, v in {"reward": 1.0, "comp/accuracy_reward": 1.0, "reward_std": 0.0, "zero_std": 1.0, "loss": 0.0,
                     "grad_norm": 0.0}.items():
            run.m[k][done] = v
    return [post(fn)]


def nan_divergence(at):
    """Grad norm climbs x20 over 25 steps, then loss, grad norm, KL, entropy and rewards are NaN from `at`."""
    def fn(run, t, rng):
        for k in ("loss", "grad_norm", "kl", "entropy", "reward", "reward_std", "comp/accuracy_reward"):
            run.m[k] = np.where(t >= at, np.nan, run.m[k])
        run.m["grad_norm"][at + 1] = float("inf")
    return [mul(at - 25, at, exp=True, grad_norm=3), post(fn)]


def kl_drift(at, ev_drop):
    """Reward flat from `at` while KL keeps climbing (+0.65 to the end); eval slips by `ev_drop`."""
    return [shift(at, None, 1.1, kl=.65), shift(at, None, length=50, ent=-.2, ev=-ev_drop)]


def grad_explosion(at):
    """OpenRLHF: actor grad norm x150 and clip ratio up over 40 steps, then reward, KL, entropy and eval go."""
    return [mul(at, at + 40, exp=True, grad_norm=5), add(at, at + 40, clip_region=.35),
            shift(at + 15, at + 50, p=-.6), add(at + 10, at + 50, kl=2.5, entropy=3), shift(at + 10, at + 50, ev=-.55)]


def critic(run, t, rng):
    """verl PPO with a GAE critic: value loss falls (after a high start), explained variance rises."""
    n = run.n
    run.m["value_loss"] = 0.4 * np.exp(-t / 40) + 0.06 + np.abs(heavy(rng, n, 0.01))
    run.m["value_loss"][:3] = [14.0, 16.5, 7.8]
    run.m["vf_explained_var"] = np.clip(0.6 * (1 - np.exp(-t / 60)) + ar1(rng, n, 0.03), -1, 1)
    run.m["values_mean"] = run.m["reward"] * 0.9 + ar1(rng, n, 0.02)
    run.m["critic_grad_norm"] = 30 * np.exp(-t / 80) + 4 + np.abs(heavy(rng, n, 0.8))
    run.m["vf_clipfrac"] = 0.02 + np.abs(ar1(rng, n, 0.005))
    run.m["ppo_kl"] = ar1(rng, n, 0.0004)
    run.m["reward_kl"] = 0.02 + 0.19 * (1 - np.exp(-t / 150)) + np.abs(ar1(rng, n, 0.01))
    run.m["kl_shaped"] = run.m["reward"] - 0.001 * run.m["reward_kl"]


def value_explosion(at):
    """The critic diverges from `at` (value loss x1800, explained variance below 0); score and eval decay later."""
    return [shift(at + 30, None, p=-.45, ev=-.4), mul(at, at + 60, exp=True, value_loss=7.5, critic_grad_norm=5),
            add(at, at + 50, vf_explained_var=-2.5), add(at, at + 60, 2, values_mean=40)]


def spikes(*steps):
    """Isolated one-step spikes in grad norm, KL and loss; each recovers at once."""
    def fn(run, t, rng):
        for s in steps:
            run.m["grad_norm"][s - 1] *= 60
            run.m["kl"][s - 1] *= 25
            run.m["loss"][s - 1] = 0.9
            run.m["reward"][s - 1] *= 0.7
    return [post(fn)]


def nan_rows(run, t, rng):
    """fp16 loss scaling: a few NaN grad norms, and a step whose entropy and KL came back NaN on every rank."""
    for s in (3, 4, 118, 119, 240):
        run.m["grad_norm"][s - 1] = float("nan")
    run.m["entropy"][176] = run.m["kl"][176] = float("nan")


def dip(at, size, width):
    """A short dip around `at` (a harder data shard) that recovers."""
    return [lambda stage, c, t, n, rng: c.update(p=c["p"] - size * np.exp(-((t - at) / width) ** 2))
            if stage == "pre" else None]


def warmup(steps):
    return [post(lambda run, t, rng: run.m.update(lr=lr_schedule(t, 1e-6, run.max_steps, steps, "cosine")))]


def gen_batches(run, t, rng):
    """DAPO dynamic sampling: 1-3 generation rounds per step, more when groups are flat."""
    run.m["num_gen_batches"] = np.round(1 + 2 * run.m["zero_std"] + rng.random(run.n))


def group_std(run, t, rng):
    run.m["group_std"] = run.m["reward_std"] * 0.8


# --------------------------------------------------------------------------------------- DPO and PPO-with-an-RM

def dpo(tau, margin, chosen, acc, lr, ev_every, ev_loss, ev_acc, ev_margin=0.0, fail=None, at=None):
    """TRL DPO: margins, accuracies and implicit rewards approach their plateau with time constant `tau`.
    fail: None (healthy), "displacement" (margins run away from `at`, chosen likelihood pushed down, eval worsens),
    "forgetting" (chosen and rejected converge again from `at`), "frozen" (nothing moves: loss ln 2)."""
    def make(rng, n, planned):
        t = np.arange(1, n + 1, dtype=float)
        prog, bad = 1 - np.exp(-t / tau), ramp(t, at or n, n)
        m = {"logits_chosen": -2.3 + ar1(rng, n, 0.1), "logits_rejected": -2.4 + ar1(rng, n, 0.1),
             "lr": lr_schedule(t, lr, planned, 30 if fail is None else 20)}
        if fail == "frozen":
            tiny = 1e-4 * ar1(rng, n, 1, 0.2)
            m.update(loss=0.6931 + np.abs(tiny) * 0.1, grad_norm=0.002 + np.abs(ar1(rng, n, 0.001, 0.2)),
                     chosen=tiny, rejected=-tiny, margins=2 * tiny,
                     accuracies=np.round(np.clip(0.5 + rng.normal(0, 0.12, n), 0, 1) * 8) / 8,
                     logps_chosen=-270 + heavy(rng, n, 30), logps_rejected=-300 + heavy(rng, n, 30),
                     lr=lr_schedule(t, lr, planned, 50))
            return Run("dpo", n, planned, m)
        if fail == "displacement":
            bad = bad ** 1.2
            m["margins"] = margin * prog + 24 * bad + heavy(rng, n, 0.5)
            m["chosen"] = chosen * prog - 16 * bad + heavy(rng, n, 0.3)
            m["accuracies"] = np.clip(0.5 + acc * prog + 0.06 * bad + ar1(rng, n, 0.03, 0.3), 0, 1)
            m["logps_chosen"], m["logps_rejected"] = -250 - 320 * bad + heavy(rng, n, 20), -290 - 560 * bad
            m["grad_norm"] = 5 * np.exp(ar1(rng, n, 0.3, 0.3)) * (1 + 3 * bad)
            m["loss"] = np.log1p(np.exp(-np.clip(m["margins"], -5, 40) * 0.9)) * 0.7 + 0.01 * rng.random(n)
        elif fail == "forgetting":
            m["margins"] = margin * prog * (1 - 0.85 * bad) + heavy(rng, n, 0.3)
            m["chosen"] = chosen * prog - 1.5 * bad + heavy(rng, n, 0.2)
            m["accuracies"] = np.clip(0.5 + acc * prog - 0.28 * bad + ar1(rng, n, 0.04, 0.3), 0, 1)
            m["logps_chosen"] = -260 - 90 * bad + heavy(rng, n, 25)
            m["logps_rejected"] = -300 - 60 * bad + heavy(rng, n, 25)
            m["grad_norm"] = 8 * np.exp(ar1(rng, n, 0.3, 0.3)) * (1 + bad)
            m["loss"] = np.log1p(np.exp(-m["margins"] * 0.9)) * 0.8
        else:
            m["margins"] = margin * prog + heavy(rng, n, 0.35)
            m["chosen"] = chosen * prog + heavy(rng, n, 0.25)
            m["accuracies"] = np.round(np.clip(0.5 + acc * prog + ar1(rng, n, 0.05, 0.3), 0, 1) * 16) / 16
            m["logps_chosen"] = -260 - 30 * prog + heavy(rng, n, 40)
            m["logps_rejected"] = -300 - 60 * prog + heavy(rng, n, 45)
            m["grad_norm"] = 6 * np.exp(ar1(rng, n, 0.35, 0.3))
            m["loss"] = np.log1p(np.exp(-m["margins"].clip(-5, 10) * 0.9)) * 0.75 + 0.05 * rng.random(n)
        m["rejected"] = m["chosen"] - m["margins"]
        run = Run("dpo", n, planned, m)
        es = np.arange(ev_every, n + 1, ev_every)
        pr, worse = 1 - np.exp(-es / tau), ramp(es, at or n, n)
        noise = (lambda: rng.normal(0, 0.01, len(es))) if fail is None else (lambda: 0)
        run.ev = {"loss": dict(zip(es.tolist(), (0.693 - ev_loss[0] * pr + ev_loss[1] * worse + noise()).tolist(),
                                   strict=True)),
                  "accuracies": dict(zip(es.tolist(), (0.5 + ev_acc[0] * pr - ev_acc[1] * worse + noise()).tolist(),
                                         strict=True))}
        if ev_margin:
            run.ev["margins"] = dict(zip(es.tolist(), (ev_margin * pr + 6 * worse).tolist(), strict=True))
        return run
    return make


def ppo_rm(clip_drift_at=None):
    """TRL PPOTrainer with a reward model: RM score -0.8 -> ~0.3, KL 0.5 -> ~7.5 nats, ratio ~1. With
    clip_drift_at: clip fraction grows and the ratio drifts from there, KL explodes 40 steps later, score falls."""
    def make(rng, n, planned):
        t = np.arange(1, n + 1, dtype=float)
        kl = 0.5 + 7 * (t / n) ** 1.2 + np.abs(ar1(rng, n, 0.5, 0.5))
        m = {"scores": -0.8 + 1.1 * (1 - np.exp(-t / 120)) + ar1(rng, n, 0.08, 0.5), "kl": kl,
             "entropy": 42 - 6 * t / n + ar1(rng, n, 1.0), "approxkl": 0.002 + np.abs(ar1(rng, n, 0.001)),
             "clipfrac": 0.03 + np.abs(ar1(rng, n, 0.01)), "pg_loss": ar1(rng, n, 0.01, 0.2),
             "value_loss": 0.2 * np.exp(-t / 80) + 0.03 + np.abs(ar1(rng, n, 0.005)),
             "vf_clipfrac": 0.01 + np.abs(ar1(rng, n, 0.005)), "ratio": 1 + ar1(rng, n, 0.004),
             "ratio_var": 1e-4 + np.abs(ar1(rng, n, 5e-5)), "num_eos": 64 - np.abs(ar1(rng, n, 1.5)),
             "lr": lr_schedule(t, 3e-6, planned, 1), "episode": 64 * t, "eps": 12 + ar1(rng, n, 0.5)}
        if clip_drift_at:
            at, r = clip_drift_at, ramp(t, clip_drift_at, n)
            m["clipfrac"] = m["clipfrac"] + 0.42 * r
            m["ratio"] = m["ratio"] + 1.1 * r ** 1.5 + 0.1 * r * np.abs(heavy(rng, n, 1))
            m["approxkl"] = m["approxkl"] * (1 + 40 * r)
            m["kl"] = m["kl"] + 70 * ramp(t, at + 40, n) ** 1.5
            m["scores"] = m["scores"] - 0.5 * ramp(t, at + 60, n)
            m["num_eos"] = m["num_eos"] - 40 * ramp(t, at + 60, n)
        m["nonscore"] = -0.05 * m["kl"]
        m["rlhf_reward"] = m["scores"] + m["nonscore"]
        return Run("ppo", n, planned, m)
    return make


# ------------------------------------------------------------------------------------- scenario bases (shared)

KL_RISING = dict(p=rise(.22, .71, 180, 70), length=rise(260, 300, 200, 80), ent=lin(.5, .25),
                 kl=creep(.002, .122, 1.1), ev=rise(.25, .67, 180, 70), every=100, items=500, prompts=8, cap=768)
RESUMED = dict(p=rise(.35, .78, 150, 60), noise=.02, length=rise(300, 240, 150, 60), ent=lin(.45, .30),
               kl=lin(.001, .051), ev=rise(.4, .7, 150, 60), every=50, items=500)
PEAKED = dict(p=rise(.3, .76, 120, 40), noise=.02, length=260, ent=.5, kl=lin(.003, .103),
              ev=rise(.35, .70, 120, 40), every=100, items=500,
              events=decline(340, .32, k=1.2, ev=.25, sym_at=300, length=120, ent=.25, kl=.25))
VERL_PPO = dict(p=[rise(.02, .64, 45, 18), lin(0, .06)], length=rise(310, 190, 60, 30), ent=lin(.52, .32),
                ev=rise(.05, .55, 45, 18), every=10, items=1319, prompts=256, group=1, cap=512, on_policy=False,
                algo="ppo")
OPENRLHF_RUN = dict(p=rise(.3, .75, 70, 30), length=[240, wave(30, 40)], ent=lin(.8, .5), kl=lin(.001, .031),
                    ev=rise(.35, .75, 70, 30), every=20, items=1319, prompts=32, group=4, algo="reinforce++",
                    on_policy=False)


def with_events(base, *events):
    return grpo(**{**base, "events": [*base.get("events", ()), *events]})


# ============================================================================================== on-disk formats

TRL_GRPO = {"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate", "num_tokens": "num_tokens",
            "len_mean": "completions/mean_length", "len_min": "completions/min_length",
            "len_max": "completions/max_length", "clipped": "completions/clipped_ratio",
            "term_len": "completions/mean_terminated_length", "reward": "reward", "reward_std": "reward_std",
            "zero_std": "frac_reward_zero_std", "kl": "kl", "entropy": "entropy",
            "clip_region": "clip_ratio/region_mean", "step_time": "step_time"}
TRL_LAST = {"grad_norm", "lr", "num_tokens"}          # last-step values; the rest are window means
TRL_DPO = {"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate", "chosen": "rewards/chosen",
           "rejected": "rewards/rejected", "accuracies": "rewards/accuracies", "margins": "rewards/margins",
           "logps_chosen": "logps/chosen", "logps_rejected": "logps/rejected", "logits_chosen": "logits/chosen",
           "logits_rejected": "logits/rejected"}
TRL_PPO = {"scores": "objective/scores", "rlhf_reward": "objective/rlhf_reward",
           "nonscore": "objective/non_score_reward", "kl": "objective/kl", "entropy": "objective/entropy",
           "approxkl": "policy/approxkl_avg", "clipfrac": "policy/clipfrac_avg", "pg_loss": "loss/policy_avg",
           "value_loss": "loss/value_avg", "vf_clipfrac": "val/clipfrac_avg", "ratio": "val/ratio",
           "ratio_var": "val/ratio_var", "num_eos": "val/num_eos_tokens", "lr": "lr", "episode": "episode",
           "eps": "eps"}
VERL = {"reward": "critic/score/mean", "kl": "actor/kl_loss", "entropy": "actor/entropy",
        "len_mean": "response_length/mean", "len_max": "response_length/max", "len_min": "response_length/min",
        "clipped": "response_length/clip_ratio", "loss": "actor/pg_loss", "grad_norm": "actor/grad_norm",
        "lr": "actor/lr", "clip_region": "actor/pg_clipfrac", "step_time": "timing_s/step",
        "value_loss": "critic/vf_loss", "vf_explained_var": "critic/vf_explained_var",
        "values_mean": "critic/values/mean", "critic_grad_norm": "critic/grad_norm",
        "vf_clipfrac": "critic/vf_clipfrac", "ppo_kl": "actor/ppo_kl", "reward_kl": "actor/reward_kl_penalty",
        "num_gen_batches": "train/num_gen_batches"}
OPENRLHF = {"reward": "reward", "kl": "kl", "entropy": "entropy_loss", "len_mean": "response_length",
            "clipped": "truncated", "loss": "policy_loss", "grad_norm": "actor_grad_norm", "lr": "actor_lr",
            "clip_region": "ppo_clip_ratio", "group_std": "group_reward_std", "reward_std": "rollout/reward_std"}
PLAIN = {"reward": "reward_mean", "reward_std": "reward_std", "kl": "kl", "entropy": "entropy",
         "len_mean": "response_len_mean", "clipped": "truncated_frac", "loss": "loss", "grad_norm": "grad_norm",
         "lr": "lr"}


def trl_keys(run):
    if run.algo in ("dpo", "ppo"):
        return dict(TRL_DPO if run.algo == "dpo" else TRL_PPO), {
            "loss": ["eval_loss"], "accuracies": ["eval_rewards/accuracies"], "margins": ["eval_rewards/margins"]}
    keys = dict(TRL_GRPO)
    for c in run.components:
        keys[f"comp/{c}"] = f"rewards/{c}/mean"
    acc = [f"eval_rewards/{run.components[0]}/mean"] + (["eval_reward"] if len(run.components) <= 1 else [])
    return keys, {"acc": acc}


def trl_rows(run, logging_steps=1, steps_per_epoch=500):
    """HF Trainer log_history: train rows every `logging_steps` (window means; grad_norm, lr: last value), eval rows
    as separate dicts. NaNs in a window are dropped from the mean (an all-NaN window logs None), a NaN loss poisons
    the running sum (TRL behaviour)."""
    keys, ekeys = trl_keys(run)
    rows = []
    for s in range(logging_steps, run.n + 1, logging_steps):
        row = {}
        for name, key in keys.items():
            if name not in run.m:
                continue
            win = run.m[name][s - logging_steps:s]
            good = win[np.isfinite(win)]
            if name in TRL_LAST or run.algo == "ppo":
                v = float(win[-1])
            elif name == "loss" and not np.all(np.isfinite(win)):
                v = float("nan")
            else:
                v = float(good.mean()) if good.size else None
            row[key] = round(v, 4) if name == "loss" and v is not None and math.isfinite(v) else v
        row["epoch"], row["step"] = round(s / steps_per_epoch, 4), s
        rows.append(row)
        evals = {key: float(d[s]) for k, d in run.ev.items() if s in d for key in ekeys.get(k, [])}
        if evals:
            rows.append({**evals, "eval_runtime": 41.3, "eval_samples_per_second": 12.1,
                         "eval_steps_per_second": 0.76, "epoch": round(s / steps_per_epoch, 4), "step": s})
    return rows


def write_trl_checkpoints(run, d, rows, logging_steps, save_steps, eval_steps=None, top_level=False):
    def state(s):
        sub = [r for r in rows if r["step"] <= s]
        return kit.trainer_state(sub, s, run.max_steps, logging_steps, save_steps, eval_steps or save_steps,
                                 sub[-1]["epoch"] if sub else 0.0, num_train_epochs=3)

    for s in range(save_steps, run.n + 1, save_steps) if save_steps else ():
        kit.dump_json(d / f"checkpoint-{s}" / "trainer_state.json", state(s))
        (d / f"checkpoint-{s}" / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 16}) + "\n")
    if top_level:
        kit.dump_json(d / "trainer_state.json", state(run.n))


def write_trl_state(run, d, logging_steps=1, save_steps=100, eval_steps=None, top_level=True):
    """TRL output_dir: checkpoint-N/trainer_state.json (+ a top-level trainer_state.json from save_state())."""
    write_trl_checkpoints(run, d, trl_rows(run, logging_steps), logging_steps, save_steps, eval_steps, top_level)


def write_trl_console(run, d, logging_steps=5, save_steps=None, eval_steps=None):
    """A nohup'd TRL script: warnings, tqdm bars with \\r, one python dict per log step (as HF prints it)."""
    rows = trl_rows(run, logging_steps)
    lines = [f"=== run start {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(T0))} UTC ===",
             "/opt/venv/lib/python3.11/site-packages/trl/trainer/grpo_config.py:612: UserWarning: "
             "The default value of `logging_steps` has changed", "  warnings.warn(",
             "Loading checkpoint shards: 100%|██████████| 4/4 [00:03<00:00,  1.21it/s]",
             "max_steps is given, it will override any value given in num_train_epochs",
             "***** Running training *****", f"  Total optimization steps = {run.max_steps}"]
    by_step, bar, secs = {}, [], 0.0
    for r in rows:
        by_step.setdefault(r["step"], []).append(r)
    for s in range(1, run.n + 1):
        secs += 3.1 + 0.4 * math.sin(s)
        pct = int(100 * s / run.max_steps)
        bar.append(f"\r{pct:3d}%|{'█' * (pct // 10):<10}| {s}/{run.max_steps} [{int(secs) // 60:02d}:"
                   f"{int(secs) % 60:02d}<??:??, 3.10s/it]")
        for r in by_step.get(s, []):
            lines += ["".join(bar), "{" + ", ".join(f"'{k}': {v!r}" for k, v in r.items() if k != "step") + "}"]
            bar = []
        if save_steps and s % save_steps == 0:
            lines += ["".join(bar), f"Saving model checkpoint to outputs/checkpoint-{s}"]
            bar = []
    lines += ["".join(bar)] if bar else []
    d.mkdir(parents=True, exist_ok=True)
    (d / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_trl_checkpoints(run, d, rows, logging_steps, save_steps, eval_steps)


def verl_rows(run, ds="openai/gsm8k"):
    """One dict per step (verl logs every step), validation in the same row on test steps, plus a step-0 row."""
    vkey = f"val-core/{ds}/acc/mean@1"
    rows = [(0, {vkey: run.ev["acc"][0]})] if 0 in run.ev.get("acc", {}) else []
    for i, s in enumerate(run.steps):
        row = {key: float(run.m[name][i]) for name, key in VERL.items() if name in run.m}
        row["critic/score/max"] = 1.0 if run.m["reward"][i] > 0 else 0.0
        row["critic/score/min"] = -1.0 if run.algo == "dapo" else 0.0
        row["critic/rewards/mean"] = float(run.m.get("kl_shaped", run.m["reward"])[i])
        row["critic/advantages/mean"] = float(np.round(run.m["reward"][i] * 1e-3, 5))
        if "kl" in run.m and run.algo != "ppo":
            row["actor/kl_coef"] = 0.001
        row.update({"actor/pg_clipfrac_lower": 0.0, "prompt_length/mean": 104.0 + (i % 7),
                    "timing_s/gen": float(run.m["step_time"][i] * 0.62), "perf/max_memory_allocated_gb": 61.2,
                    "training/global_step": int(s)})
        if s in run.ev.get("acc", {}):
            row[vkey] = run.ev["acc"][s]
        rows.append((int(s), row))
    return rows


def verl_checkpoints(d, steps):
    for s in steps:
        (d / f"global_step_{s}" / "actor" / "huggingface").mkdir(parents=True, exist_ok=True)
        (d / f"global_step_{s}" / "data.pt").write_bytes(b"")
    if steps:
        (d / "latest_checkpointed_iteration.txt").write_text(str(steps[-1]))


def write_verl_console(run, d, np_style=False, save_freq=None, nested_ckpt=False):
    prefix = "\x1b[36m(TaskRunner pid=48211)\x1b[0m "

    def fmt(v):
        if isinstance(v, int):
            return f"np.int64({v})" if np_style else str(v)
        if np_style:
            return f"np.float64({v!r})" if math.isfinite(v) else "np.float64(nan)"
        return f"{v:.3f}" if math.isfinite(v) else "nan"

    lines = ["2025-08-01 10:02:11,402\tINFO worker.py:1832 -- Started a local Ray instance.",
             f"{prefix}Size of train dataloader: 7473, Size of val dataloader: 1319",
             f"{prefix}Total training steps: {run.max_steps}"]
    for s, row in verl_rows(run):
        if s and s % 37 == 0:
            lines.append("(WorkerDict pid=48790) INFO 08-01 10:41:07 [block_pool.py:321] "
                         "Successfully reset prefix cache")
        lines.append(f"{prefix}step:{s} - " + " - ".join(f"{k}:{fmt(v)}" for k, v in row.items()))
    d.mkdir(parents=True, exist_ok=True)
    (d / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if save_freq:
        verl_checkpoints(d / "checkpoints" / "verl_grpo" / "exp" if nested_ckpt else d,
                         list(range(save_freq, run.n + 1, save_freq)))


def write_verl_jsonl(run, d, save_freq=None):
    path = d / "verl_dapo" / "qwen7b_dapo.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for s, row in verl_rows(run, ds="math_dapo"):
            data = {k: (v if math.isfinite(v) else None) for k, v in row.items()}   # orjson: NaN -> null
            f.write(json.dumps({"step": s, "data": data}) + "\n")
    if save_freq:
        verl_checkpoints(d, list(range(save_freq, run.n + 1, save_freq)))


def write_tb(run, d, style="hf", logging_steps=1, resume_at=None, resume_from=None, save_steps=None):
    """style hf: <out>/runs/<date>_<host>/ with train/ and eval/ tags (rewrite_logs); verl: raw verl keys under
    tensorboard_log/<project>/<experiment>; openrlhf: train/ and eval/ keys. resume_at/resume_from: the first process
    died at `resume_at`, training resumed from checkpoint `resume_from` in a second event file that logs
    resume_from+1..resume_at again."""
    if style == "hf":
        logdir, events = d / "runs" / "Aug01_10-02-11_gpu-node-07", []
        for r in trl_rows(run, logging_steps):
            ev = any(k.startswith("eval_") for k in r)
            events.append((r["step"], {("eval/" + k[5:] if ev else "train/" + k): v for k, v in r.items()
                                       if k != "step" and (k.startswith("eval_") or not ev)}))
    elif style == "verl":
        logdir = d / "tensorboard_log" / "verl_grpo_math" / "qwen2.5-7b-grpo"
        events = [(s, row) for s, row in verl_rows(run) if s % logging_steps == 0]
    else:
        logdir, events = d / "tensorboard" / "reinforce_pp_qwen3", []
        for i, s in enumerate(run.steps):
            if s % logging_steps == 0:
                row = {"train/" + key: float(run.m[n][i]) for n, key in OPENRLHF.items() if n in run.m}
                events.append((int(s), {**row, "train/global_step": int(s)}))
                if s in run.ev.get("acc", {}):
                    events.append((int(s), {"eval/eval_gsm8k_pass1": run.ev["acc"][s]}))
    timed = [(T0 + 20.0 * j, s, v) for j, (s, v) in enumerate(events)]
    if resume_at:
        first = [e for e in timed if e[1] <= resume_at]
        second = [(w + 900, s, v) for w, s, v in timed if s > resume_from]
        kit.tb_file(logdir / "events.out.tfevents.1754000000.gpu-node-07.48211.0", first)
        kit.tb_file(logdir / "events.out.tfevents.1754009000.gpu-node-07.51877.0", second)
    else:
        kit.tb_file(logdir / "events.out.tfevents.1754000000.gpu-node-07.48211.0", timed)
    if save_steps and style == "hf":
        write_trl_checkpoints(run, d, trl_rows(run, logging_steps), logging_steps, save_steps)
    elif save_steps:
        verl_checkpoints(d, list(range(save_steps, run.n + 1, save_steps)))


def write_wandb_csv(run, d, logging_steps=1, resume_at=None, resume_from=None, save_steps=None):
    """A `run.history()`-style export: _step (W&B's own counter, also counting eval rows), _runtime, _timestamp,
    train/global_step and train/... keys. After a resume _step keeps counting while train/global_step repeats."""
    out = []
    for r in trl_rows(run, logging_steps):
        ev = any(k.startswith("eval_") for k in r)
        rec = {("eval/" + k[5:] if ev else "train/" + k): v for k, v in r.items()
               if k != "step" and (k.startswith("eval_") or not ev)}
        out.append({**rec, "train/global_step": r["step"]})
    if resume_at:
        out = [r for r in out if r["train/global_step"] <= resume_at] + \
              [r for r in out if r["train/global_step"] > resume_from]
    cols = ["_step", "_runtime", "_timestamp", "train/global_step"]
    cols += list(dict.fromkeys(k for r in out for k in r if k not in cols))
    d.mkdir(parents=True, exist_ok=True)
    with (d / "wandb_export_2025-08-03T14_22_51.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for i, r in enumerate(out):
            r = dict(r, _step=i, _runtime=round(31.5 * (i + 1), 3), _timestamp=round(T0 + 31.5 * (i + 1), 3))
            w.writerow(["" if r.get(c) is None else ("NaN" if isinstance(r[c], float) and math.isnan(r[c])
                                                      else r[c]) for c in cols])
    if save_steps:
        write_trl_checkpoints(run, d, trl_rows(run, logging_steps), logging_steps, save_steps)


def write_plain_jsonl(run, d, every=1, ckpt_every=None):
    """A hand-written training script: one JSON object per log call in metrics.jsonl, eval records in the same
    file, checkpoints as ckpt/step_N."""
    d.mkdir(parents=True, exist_ok=True)
    with (d / "metrics.jsonl").open("w", encoding="utf-8") as f:
        for i, s in enumerate(run.steps):
            if s % every:
                continue
            rec = {"step": int(s), **{key: round(float(run.m[n][i]), 6) for n, key in PLAIN.items() if n in run.m}}
            rec.update({f"reward/{c}": round(float(run.m[f"comp/{c}"][i]), 6) for c in run.components
                        if f"comp/{c}" in run.m})
            f.write(json.dumps({**rec, "time": round(T0 + 40.0 * s, 1)}) + "\n")
            if s in run.ev.get("acc", {}):
                f.write(json.dumps({"step": int(s), "eval/accuracy": run.ev["acc"][s]}) + "\n")
    for s in range(ckpt_every, run.n + 1, ckpt_every) if ckpt_every else ():
        (d / "ckpt" / f"step_{s}").mkdir(parents=True, exist_ok=True)
        (d / "ckpt" / f"step_{s}" / "model.safetensors").write_bytes(b"")


def write_rasbt_csv(run, d):
    """reasoning-from-scratch ch07 style CSV (7_3_plus_tracking header); eval_acc in percent on eval steps."""
    cols = ["step", "total_steps", "loss", "reward_avg", "tokens_per_sec", "avg_response_len", "adv_avg",
            "adv_std", "entropy_avg", "eval_acc"]
    d.mkdir(parents=True, exist_ok=True)
    with (d / "grpo_metrics.csv").open("w", newline="", encoding="utf-8") as f:
        f.write(",".join(cols) + "\r\n")
        for i, s in enumerate(run.steps):
            zs, acc = run.m["zero_std"][i], run.ev.get("acc", {}).get(int(s))
            vals = [int(s), run.max_steps, round(float(run.m["loss"][i]) * 100, 4),
                    round(float(run.m["reward"][i]), 4), round(900 + float(run.m["len_mean"][i]) * 0.1, 2),
                    round(float(run.m["len_mean"][i]), 2), 0.0, round(0.0 if zs >= 1 else 0.98 * (1 - zs) ** 0.5, 4),
                    round(float(run.m["entropy"][i]), 4), "" if acc is None else round(100 * acc, 1)]
            f.write(",".join(str(v) for v in vals) + "\r\n")


def write_openrlhf_console(run, d, save_steps=None):
    lines = ["[2025-08-02 09:14:01,101] [INFO] Launching OpenRLHF PPO (reinforce++) with Ray",
             "Episode [1/1]:   0%|          | 0/480 [00:00<?, ?it/s]"]
    for i, s in enumerate(run.steps):
        lines.append(f"✨ Global step {s}: " + repr({key: round(float(run.m[n][i]), 6) for n, key in OPENRLHF.items()
                                                    if n in run.m}))
        if s in run.ev.get("acc", {}):
            a = run.ev["acc"][s]
            lines.append(f"Evaluation completed in 41.20s, global_step {s}, eval_metrics: "
                         f"{{'eval_gsm8k_pass1': {a}, 'eval_gsm8k_pass4': {min(1.0, a + 0.12):.4f}}}")
        if save_steps and s % save_steps == 0:
            (d / "ckpt" / f"global_step{s}").mkdir(parents=True, exist_ok=True)
            lines.append(f"Saving checkpoint: ckpt/global_step{s}")
    d.mkdir(parents=True, exist_ok=True)
    (d / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")


trl_state, trl_console, verl_console, verl_jsonl, tb, wandb_csv, plain_jsonl, rasbt_csv, openrlhf_console = (
    kit.writer(w) for w in (write_trl_state, write_trl_console, write_verl_console, write_verl_jsonl,
                                  write_tb, write_wandb_csv, write_plain_jsonl, write_rasbt_csv,
                                  write_openrlhf_console))


# ================================================================================================== the cases
# Case(name, scenario, format, seed, (steps reached, planned), labels, tags, reasoning)

CASES = [
    # -------- healthy: must not be stopped ---------------------------------------------------------------------
    Case("h-trl-noisy-binary-tiny-batch",
         grpo(rise(.28, .55, 260, 90), lin(310, 278), lin(.55, .47), None, rise(.30, .50, 260, 90), 100, 200,
              noise=.03, len_noise=12, prompts=2, group=4),
         trl_state(logging_steps=1, save_steps=100), 101, (400, 1000), HEALTHY, "grpo trl noisy binary_reward",
         "Batch of 2 prompts x 4 completions: per-step reward swings between 0 and 1, but 50-step means rise from "
         "~0.28 to ~0.5 and eval accuracy 0.30 -> 0.44. Noise is the batch size, not a problem; 400 of 1000 steps."),
    Case("h-verl-slow-learner",
         grpo(creep(.30, .42, .8), lin(420, 450), lin(.62, .55), lin(.0005, .0045), lin(.31, .41), 50, 1319,
              noise=.02, len_noise=10, prompts=32),
         verl_console(save_freq=100), 102, (600, 1500), HEALTHY, "grpo verl slow",
         "Score creeps from 0.30 to ~0.42 over 600 steps with validation 0.31 -> ~0.41; KL loss small and growing "
         "slowly, entropy steady. Slow but real progress, 40% of the planned run."),
    Case("h-trl-console-kl-rises-with-reward", grpo(**KL_RISING),
         trl_console(logging_steps=10, save_steps=100), 103, (500, 600), HEALTHY, "grpo trl kl_rising",
         "beta>0: KL rises steadily 0.002 -> ~0.12 while reward climbs 0.22 -> 0.7 and eval follows. KL rising with "
         "reward rising is the model changing and improving."),
    Case("h-tb-one-step-spikes", with_events(KL_RISING, *spikes(97, 213, 344)),
         tb(style="hf", save_steps=150), 104, (450, 800), HEALTHY, "grpo trl tensorboard spikes",
         "Three isolated one-step spikes (grad_norm x60, KL x25, loss 0.9 at steps 97/213/344); each recovers the "
         "next step and the reward trend is unaffected."),
    Case("h-trl-nan-rows", with_events(KL_RISING, post(nan_rows)),
         trl_state(logging_steps=1, save_steps=50), 105, (300, 500), HEALTHY, "grpo trl nan",
         "A handful of NaN grad_norm values (fp16 loss scaling skipping steps) and one row with entropy and kl null; "
         "everything around them is normal and rising."),
    Case("h-tb-resume-duplicate-steps", grpo(**RESUMED),
         tb(style="hf", resume_at=230, resume_from=200, save_steps=100), 106, (420, 600), HEALTHY,
         "grpo trl tensorboard resume",
         "Crashed at 230, resumed from checkpoint-200: a second event file re-logs 201-230. Reward rose 0.35 -> 0.78 "
         "and holds; the overlap is a logging artefact."),
    Case("h-wandb-csv-resume", grpo(**RESUMED),
         wandb_csv(logging_steps=2, resume_at=300, resume_from=250), 107, (420, 600), HEALTHY,
         "grpo wandb csv resume",
         "W&B export: _step keeps counting after the resume while train/global_step repeats 252-300. Underneath it "
         "is a healthy rising run at step 420 of 600."),
    Case("h-trl-dpo", dpo(160, 2.6, -.35, .38, 5e-7, 100, (.27, 0), (.3, 0), 2.2),
         trl_state(logging_steps=5, save_steps=100), 108, (600, 900), HEALTHY, "dpo trl",
         "DPO loss 0.69 -> ~0.35, accuracy 0.5 -> ~0.85, margins to ~2.5; chosen slightly negative (~-0.35), "
         "rejected falling: the textbook healthy DPO picture. Eval follows train."),
    Case("h-trl-console-very-early",
         grpo(lin(.41, .45), 240, .7, lin(0, .008), noise=.03, len_noise=8, prompts=8),
         trl_console(logging_steps=1), 109, (40, 500), HEALTHY, "grpo trl early",
         "40 of 500 steps: reward ~0.4 with noise, no trend yet, all other metrics ordinary. Too early to judge "
         "anything; let it run."),
    Case("h-verl-very-early",
         grpo(creep(.05, .30, 1.5), lin(330, 280), lin(.52, .42), lin(0, .01), {0: .062}, prompts=64, group=5,
              cap=512),
         verl_console(np_style=True), 110, (25, 435), HEALTHY, "grpo verl early",
         "25 steps in, score rising 0.05 -> ~0.3 from a low start, val at step 0 = 0.06; nothing wrong."),
    Case("c-trl-converged-near-end",
         grpo(rise(.35, .82, 150, 50), rise(280, 240, 150, 50), rise(.42, .30, 200, 100), sat(.004, .064, 250),
              rise(.43, .71, 150, 50), 80, 1319, noise=.015),
         trl_state(logging_steps=10, save_steps=200, eval_steps=80), 111, (960, 1000), converged(),
         "grpo trl converged",
         "960/1000 steps: reward ~0.82 and eval ~0.71 flat since ~step 300, KL flattening. Converged and fine: the "
         "weights now are as good as any (stop), and finishing the last 40 steps is harmless; nothing to roll back "
         "to."),
    Case("h-verl-ppo-critic", with_events(VERL_PPO, post(critic)),
         verl_console(save_freq=50), 112, (420, 435), HEALTHY, "ppo verl",
         "PPO with GAE critic: vf_loss high for the first steps then ~0.06-0.1, explained variance up to ~0.6, "
         "score 0.02 -> ~0.68 and still edging up, validation follows. Healthy; 420/435 steps, let it finish."),
    Case("h-trl-rloo-kl-default",
         grpo(rise(.18, .52, 140, 60), lin(200, 236), lin(.6, .4), lin(.01, .26), prompts=32, group=2, algo="rloo",
              on_policy=False),
         trl_state(logging_steps=10, save_steps=120, top_level=False), 113, (360, 500), HEALTHY, "rloo trl kl_rising",
         "RLOO (beta 0.05) logs KL by default: it rises to ~0.25 while reward rises 0.18 -> 0.5. Only checkpoint "
         "folders (last one at 360 = current step)."),
    Case("h-verl-dapo-length-growth",
         grpo(rise(.12, .42, 320, 140), creep(600, 1500, .9), [lin(.48, .40), wave(.05, 90)], None,
              rise(.10, .30, 320, 140), 50, 960, prompts=32, group=16, cap=4096, scale="pm1", on_policy=False,
              algo="dapo", events=[post(gen_batches)]),
         verl_jsonl(save_freq=100), 114, (700, 1200), HEALTHY, "dapo verl jsonl length_growth",
         "DAPO reasoning run: lengths grow 600 -> ~1500 under a 4096 cap (clip ratio stays ~0-2%) while the -1..1 "
         "score rises and AIME-style val rises. Longer reasoning is the expected effect, not a length explosion."),
    Case("h-trl-ppo-reward-model", ppo_rm(),
         trl_state(logging_steps=1, save_steps=100), 115, (300, 480), HEALTHY, "ppo trl reward_model",
         "TRL PPOTrainer: RM score -0.8 -> ~0.3, KL 0.5 -> ~7.5 nats per sequence rising slowly, ratio ~1, clipfrac "
         "~0.03, value loss falling. Healthy RLHF."),
    Case("h-jsonl-three-components",
         grpo(rise(.25, .58, 220, 90), rise(380, 320, 180, 90), lin(.6, .4), lin(.002, .052),
              rise(.27, .57, 220, 90), 100, 500, events=[post(summed3)],
              components=("format_reward", "correctness_reward", "concision_reward")),
         plain_jsonl(every=1, ckpt_every=100), 116, (500, 800), HEALTHY, "grpo plain jsonl components",
         "Summed reward (0..3): format saturates early (expected), correctness 0.25 -> 0.55 and concision 0.3 -> 0.6 "
         "keep rising with eval accuracy. No component is being gamed."),
    Case("h-tb-verl-long-2000",
         grpo(sat(.35, .65, 700), lin(500, 650), lin(.7, .4), lin(.001, .021), sat(.37, .64, 700), 100, 1319,
              noise=(.02, .95), len_noise=15, prompts=32, cap=2048),
         tb(style="verl", logging_steps=10, save_steps=250), 117, (2000, 3000), HEALTHY, "grpo verl tensorboard long",
         "2000 of 3000 steps, logged every 10: score 0.35 -> ~0.6 still improving, entropy declining slowly "
         "0.7 -> 0.4, KL tiny. A slow, healthy run."),
    Case("h-trl-dip-recovered",
         grpo(rise(.3, .72, 120, 50), 280, lin(.5, .35), lin(.002, .042), noise=.02, len_noise=10,
              events=dip(150, .14, 12)),
         trl_state(logging_steps=5, save_steps=100), 118, (400, 600), HEALTHY, "grpo trl dip",
         "Reward dipped ~0.14 around step 150 for ~25 steps and came back; since 200 it sits at 0.7+. A recovered "
         "wobble is not a decline; 400 of 600 steps, holding healthily."),
    Case("h-openrlhf-console", with_events(OPENRLHF_RUN, post(group_std)),
         openrlhf_console(save_steps=50), 119, (220, 480), HEALTHY, "reinforce++ openrlhf",
         "OpenRLHF REINFORCE++: reward 0.3 -> 0.75, eval pass@1 follows, KL small and rising, grad norm steady. "
         "Healthy at 220/480."),
    Case("h-trl-hard-task-many-zero-std",
         grpo(lin(.06, .15), lin(700, 805), lin(.62, .55), noise=.01, len_noise=20, cap=2048, difficulty_spread=1.2),
         trl_console(logging_steps=5), 120, (350, 800), HEALTHY, "grpo trl hard_task",
         "Hard task: ~half or more of the groups are all-wrong (frac_reward_zero_std high), but reward creeps "
         "0.06 -> 0.15 with stable entropy and lengths. Sparse but alive."),
    Case("h-trl-warmup-flat-start",
         grpo(step(.33, .45, 70, 120), 300, step(.6, .55, 70, 120), lin(0, .012), noise=.02, len_noise=8,
              events=warmup(60)),
         trl_state(logging_steps=1, save_steps=50), 121, (120, 1000), HEALTHY, "grpo trl early warmup",
         "60-step LR warmup: reward flat at ~0.33 for 70 steps, starting to climb by 90-120. 120/1000 steps; a flat "
         "warmup is not a stall."),
    Case("h-jsonl-pm1-reward",
         grpo(rise(.38, .66, 110, 40), 350, lin(.55, .45), lin(.003, .043), rise(.4, .6, 110, 40), 50, 500,
              len_noise=10, prompts=8, scale="pm1"),
         plain_jsonl(every=2), 122, (260, 300), HEALTHY, "grpo plain jsonl pm1",
         "Reward on a -1..1 scale goes from about -0.25 to +0.3 (accuracy 0.38 -> 0.65) and is still inching up; "
         "negative numbers are the scale, not a failure."),
    Case("h-rasbt-csv-tiny-batch",
         grpo(rise(.35, .7, 60, 25), rise(420, 340, 60, 25), [.45, wave(.05, 30)], None,
              {1: .156, 50: .344, 100: .41, 150: .416, 200: .43}, prompts=1),
         rasbt_csv(), 123, (240, 500), HEALTHY, "grpo plain csv",
         "One prompt x 8 rollouts per step (reasoning-from-scratch style): reward per step is 0..1 noise around a "
         "mean rising 0.35 -> 0.7; MATH-500 15.6 -> 43.0 still improving."),
    Case("c-tb-verl-converged-at-end",
         grpo(rise(.55, .95, 20, 8), rise(220, 190, 40, 20), lin(.35, .25), sat(0, .02, 60), step(.85, .88, 0, 60),
              10, 1319, prompts=64, group=5),
         tb(style="verl", save_steps=50), 124, (300, 300), converged(), "grpo verl tensorboard converged",
         "300 steps (the planned end, though verl's TensorBoard does not say so): score ~0.95 since ~60, val "
         "0.85-0.88 flat, KL flat. Converged: the weights now are as good as any (stop); nothing to roll back to."),

    # -------- failing, stalled or done ---------------------------------------------------------------------------
    Case("f-trl-peak-then-decline", grpo(**PEAKED),
         trl_state(logging_steps=5, save_steps=100), 201, (600, 1000), rollback(250, 360, 360),
         "grpo trl peak_then_decline",
         "Reward reaches ~0.76 by 250, holds to ~350 and slides to ~0.45 by 600 with KL, entropy and length up; eval "
         "agrees (0.70 at 300, 0.5 at 600). The best model is behind: restore ~300-360 (checkpoint-300 on disk)."),
    Case("f-trl-eval-peaks-train-rises",
         grpo(rise(.3, .92, 220, 90), 300, .5, creep(.004, .204, 1.5), step(.38, .62, 0, 250), 50, 1319,
              events=overfit(250, .15)),
         trl_state(logging_steps=10, save_steps=50, eval_steps=50), 202, (600, 800), rollback(250, 300, 300),
         "grpo trl eval_decline overfit",
         "Train reward keeps rising to ~0.9 but held-out accuracy (1319 items, +-1.3 pts) peaks ~0.62 at 250-300 "
         "and falls steadily to ~0.47. The policy fits the train prompts, not the task; go back to the eval peak."),
    Case("f-verl-kl-blowup",
         grpo(rise(.2, .68, 100, 35), 330, .45, lin(.004, .060), rise(.2, .65, 100, 35), 20, 1319, prompts=64,
              group=5, events=kl_blowup(300)),
         verl_console(save_freq=50), 203, (420, 600), rollback(240, 300, 305), "grpo verl kl_blow_up",
         "actor/kl_loss ~0.03-0.05 until 300 then past 1 by ~335 and ~8 by 360 with grad norm x20; score and "
         "validation collapse right after. Score ~0.67 and val ~0.65 from ~240 to 300: restore global_step_300."),
    Case("f-trl-entropy-collapse-stall",
         grpo(sat(.3, .45, 40), sat(260, 200, 40), sat(.615, .015, 40), noise=.01, events=entropy_stall(60, 160)),
         trl_console(logging_steps=5, save_steps=50), 204, (300, 1000), stop(100),
         "grpo trl entropy_collapse stall",
         "Entropy falls 0.6 -> 0.02 by ~150 and stays; reward rose to ~0.45 by ~100 and has been flat since while "
         "zero-std groups go to ~1: no learning signal left. The current weights are as good as any earlier ones "
         "(no decline to go back from): stop, and rethink temperature / entropy before training on."),
    Case("f-tb-entropy-blowup-gibberish",
         grpo(rise(.35, .8, 90, 30), 300, lin(.45, .32), None, rise(.3, .7, 90, 30), 50, 500,
              events=entropy_blowup(250)),
         tb(style="hf", logging_steps=2, save_steps=50), 205, (320, 600), rollback(160, 250, 252),
         "grpo trl tensorboard entropy_blow_up collapse",
         "Entropy jumps from ~0.35 to ~8 within 25 steps after 250, lengths go to the 1024 cap and reward collapses "
         "to ~0: the model emits noise. Reward ~0.78 from ~160 to 250: restore checkpoint-250."),
    Case("f-verl-jsonl-length-explosion",
         grpo(rise(.15, .48, 120, 50), 700, .5, None, rise(.15, .40, 120, 50), 50, 960, prompts=32, group=16,
              cap=2048, scale="pm1", on_policy=False, algo="dapo",
              events=[*length_explosion(260, 440), post(gen_batches)]),
         verl_jsonl(save_freq=50), 206, (500, 800), rollback(250, 300, 300),
         "dapo verl jsonl length_explosion truncation",
         "Response length climbs from ~700 past the 2048 cap from ~260 on; clip ratio goes toward ~0.9 and from "
         "~320 the -1..1 score and validation fall. Truncated answers are scored as wrong; score and val were at "
         "their best from ~250 to ~300, as the lengths started to take off: global_step_300 or 250."),
    Case("f-trl-length-collapse",
         grpo(rise(.45, .8, 50, 20), 250, .5, lin(.003, .046), prompts=8, cap=512, events=length_collapse(120)),
         trl_state(logging_steps=2, save_steps=40), 207, (260, 500), rollback(90, 125, 125),
         "grpo trl length_collapse collapse",
         "Mean completion length drops from ~250 to under 10 tokens over 120-170 and reward falls from ~0.8 to "
         "~0.15: the model stopped reasoning. Reward ~0.78 from ~90 until the lengths start to go at ~120-125: "
         "checkpoint-120."),
    Case("f-trl-console-format-hacking",
         grpo(rise(.3, .56, 80, 30), 420, .55, None, rise(.33, .55, 80, 30), 50, 500, events=format_hack(180),
              components=("accuracy_reward", "format_reward")),
         trl_console(logging_steps=10, save_steps=100, eval_steps=50), 208, (500, 800), rollback(150, 200, 200),
         "grpo trl reward_hacking component_saturation",
         "The format reward saturates at 1.0 (its std 0) while accuracy_reward falls 0.55 -> ~0.3 after 180 and "
         "held-out accuracy 0.55 -> ~0.3; the summed reward (0..2) looks flat, which hides it. Accuracy was at its "
         "best (~0.55) from ~150 to ~200: go back to checkpoint-200."),
    Case("f-trl-console-identical-rewards",
         grpo(1e-6, 1400, .9, prompts=8, cap=512, events=[post(no_signal)]),
         trl_console(logging_steps=1), 209, (60, 500), stop(1), "grpo trl setup_failure",
         "Reward, reward_std, loss and grad_norm are exactly 0 from step 1, frac_reward_zero_std 1, most completions "
         "run to the 512 cap: the reward never fires, gradients are zero. Stop and fix the reward / max length."),
    Case("f-verl-ppo-value-explosion", with_events(VERL_PPO, post(critic), *value_explosion(170)),
         verl_console(save_freq=50, np_style=True, nested_ckpt=True), 210, (360, 435), rollback(120, 180, 175),
         "ppo verl value_loss_explosion",
         "critic/vf_loss goes from ~0.07 to >100 over 170-230, vf_explained_var falls below 0 and critic grad norm "
         "explodes; score and validation decay from ~200. The advantages are garbage from ~175; the score had "
         "plateaued at ~0.66 from ~120: go back to global_step_150 (the newest before the critic broke)."),
    Case("f-trl-loss-nan",
         grpo(rise(.25, .6, 90, 30), 300, lin(.55, .45), lin(.003, .033), rise(.25, .55, 90, 30), 50, 500,
              len_noise=10, events=nan_divergence(205)),
         trl_state(logging_steps=1, save_steps=50), 211, (240, 600), rollback(150, 185, 182),
         "grpo trl nan divergence",
         "grad_norm climbs x20 over 180-205, then loss/grad_norm are NaN on every step from 205 and reward metrics "
         "are null: the weights are gone. Reward ~0.58 from ~150 until the grad-norm run-up at ~185: resume from "
         "checkpoint-150 with a lower LR."),
    Case("f-trl-dpo-margin-blowup",
         dpo(100, 2.4, -.3, .42, 5e-6, 50, (.33, .9), (.25, .12), 2.0, fail="displacement", at=220),
         trl_state(logging_steps=5, save_steps=100, eval_steps=50), 212, (700, 1000), rollback(200, 250, 250),
         "dpo trl likelihood_displacement overfit",
         "Margins run past 20, chosen rewards fall to ~-16 and logps/chosen -250 -> -570 (the model lowers the "
         "preferred answers' likelihood too); train loss ~0 but eval loss rises from its ~0.41 low at ~200 and eval "
         "accuracy falls after ~250. Go back to checkpoint-200 (or up to 250)."),
    Case("f-trl-grpo-saturated-zero-std",
         grpo(lambda t, n: np.minimum(cv(rise(.5, 1.05, 120, 35), t, n), 1.0), rise(180, 140, 120, 35),
              sat(.31, .01, 150), prompts=8, difficulty_spread=60, events=saturate(250)),
         trl_state(logging_steps=1, save_steps=100), 213, (400, 1000), stop(250), "grpo trl saturation zero_std",
         "Reward exactly 1.0 with reward_std 0 and frac_reward_zero_std 1 for 150 steps, loss and grad norm 0: every "
         "completion is right, the gradient is zero. Nothing more to learn on this data: stop (use harder prompts)."),
    Case("f-tb-verl-late-degradation",
         grpo(rise(.3, .72, 200, 70), 320, lin(.45, .35), lin(.002, .032), rise(.3, .65, 200, 70), 50, 1319,
              noise=.015, prompts=32, events=decline(690, .3, k=.8, ev=.2, length=150, ent=.6, kl=.2)),
         tb(style="verl", logging_steps=1, save_steps=100), 214, (800, 800), rollback(500, 690, 700),
         "grpo verl tensorboard late_decline",
         "Healthy for 690 of 800 steps (score ~0.72 from ~500, val ~0.65); over the last ~110 the score slides to "
         "~0.45, entropy rises 0.38 -> ~1, KL jumps and val drops ~0.2. The better model is behind: global_step_600 "
         "(or a step up to 690)."),
    Case("f-trl-ppo-clip-ratio-drift", ppo_rm(clip_drift_at=160),
         trl_state(logging_steps=1, save_steps=40), 215, (320, 480), rollback(160, 210, 170),
         "ppo trl clip_fraction kl_blow_up",
         "From ~160 policy/clipfrac_avg grows 0.04 -> 0.45 and val/ratio drifts to ~2; from ~200 KL explodes "
         "(8 -> 70+) and the RLHF reward falls while EOS counts drop. Score and RLHF reward were best at ~200-210: "
         "restore checkpoint-200 (or 160) and lower the LR."),
    Case("f-trl-kl-drift-reward-flat",
         grpo(rise(.3, .62, 110, 35), 300, .5, lin(.003, .162), rise(.32, .60, 110, 35), 100, 1319, noise=.015,
              events=kl_drift(220, .03)),
         trl_console(logging_steps=10, save_steps=100, eval_steps=100), 216, (700, 1500),
         stop_or_rollback(200, 300, 300), "grpo trl kl_drift plateau",
         "Reward flat at ~0.62 since ~220 while KL keeps rising 0.05 -> ~0.7: the model drifts with nothing to show. "
         "Eval (1319 items, sd ~0.013) slips 0.60 -> ~0.57 over 500 steps, barely more than its noise: stop, the "
         "weights now are about as good as any; taking the ~200-300 checkpoint is as good."),
    Case("f-trl-dpo-no-learning", dpo(160, 0, 0, 0, 5e-7, 100, (0, 0), (0, 0), fail="frozen"),
         trl_state(logging_steps=10, save_steps=100), 217, (300, 1200), stop(1), "dpo trl setup_failure no_learning",
         "300 steps: loss 0.6931 throughout, accuracy ~0.5, margins ~1e-4, grad norm ~0.002. The policy is not "
         "moving (e.g. adapter not attached / LR effectively 0). Stop and fix the setup."),
    Case("f-trl-dpo-rewards-converging",
         dpo(80, 2.0, -.4, .35, 2e-5, 50, (.25, .22), (.3, .22), fail="forgetting", at=260),
         wandb_csv(logging_steps=5, save_steps=50), 218, (500, 600), rollback(200, 260, 280),
         "dpo wandb csv forgetting",
         "Margins reach ~2 by ~250, then chosen and rejected rewards converge again (margin ~0.3), train accuracy "
         "0.85 -> ~0.6 and eval accuracy/loss worsen after their best at 250. The model loses its preference; go "
         "back to checkpoint-250."),
    Case("f-openrlhf-grad-explosion", with_events(OPENRLHF_RUN, post(group_std), *grad_explosion(190)),
         tb(style="openrlhf", logging_steps=1), 219, (300, 480), rollback(140, 195, 195),
         "reinforce++ openrlhf tensorboard grad_explosion collapse",
         "Actor grad norm climbs ~150x over 190-230 and the clip ratio to ~0.35, then reward falls 0.75 -> ~0.15, "
         "KL and entropy jump. No checkpoints in the folder: the rollback names a step in ~140-195 (reward ~0.73)."),
    Case("f-wandb-csv-peak-decline-no-ckpt", grpo(**PEAKED),
         wandb_csv(logging_steps=5), 221, (600, 1000), rollback(250, 360, 360), "grpo wandb csv peak_then_decline",
         "W&B history export logged every 5 steps (train/global_step 5..600; _step is W&B's row counter and also "
         "counts the eval rows). Reward ~0.76 from 250 to ~350, then slides to ~0.45 by 600, eval 0.7 -> 0.45. No "
         "checkpoints here: the rollback names a training step."),
    Case("f-rasbt-csv-peak-no-ckpt",
         grpo(rise(.3, .72, 50, 20), 480, .45, None, {1: .156, 50: .39, 100: .462, 150: .398, 200: .262, 250: .21,
                                                      300: .19},
              prompts=1, events=decline(150, .55, end=220, sym_end=230, length=300, ent=3.0)),
         rasbt_csv(), 220, (300, 300), rollback(100, 140, 150),
         "grpo plain csv eval_decline entropy_blow_up finished",
         "Finished (300/300). MATH-500 15.6 -> 46.2 at step 100 then 39.8, 26.2, 21.0, 19.0; reward falls after ~150 "
         "as entropy climbs to ~3.5 and lengths grow. The step-100 model was best (eval at 150 is already ~3 sd "
         "lower, though train reward held to ~150): keep ~100-140, not the final weights."),
]


def write_run(case, folder):
    run = case.scenario(np.random.default_rng(case.seed), case.reached, case.planned)
    case.write(run, folder)


if __name__ == "__main__":
    kit.build(HERE, "make_holdout.py", "holdout.yaml", "holdout-", "holdout",
              "# Independent hold-out set, written by make_holdout.py (do not edit by hand: edit its CASES table and\n"
              "# re-run it). Labels: what a practitioner should do with each run (DESIGN.md decision contract).\n",
              CASES, write_run)
