"""Held-out evaluation and throughput: an eval peak while training reward rises, a generation-bound run."""

from __future__ import annotations

import numpy as np

from assessor.evals.generate.model import Ctx, Scenario, nice_interval
from assessor.evals.generate.recipes.base import (
    base_run,
    decline_onset,
    degrading_truth,
    healthy_truth,
    ramp,
    reward_words,
    rise_exp,
    stop_truth,
)


def default_eval_every(ctx: Ctx) -> int:
    """A round tenth of the steps between held-out evaluations (none for runs under 40 steps)."""
    return nice_interval(ctx.n / 10) if ctx.n >= 40 else 0


def build_eval_peak(ctx: Ctx) -> Scenario:
    """Held-out accuracy peaks and declines while training reward keeps rising (overfitting)."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    peak = ctx.step_opt("onset", 0.45)
    e0 = float(lat.acc[0]) * 0.9
    rise = rise_exp(np.minimum(t, peak), e0, 0.22, peak / 2.5)
    quality = rise - ctx.num("depth", 0.14) * ramp(t, peak, n - peak)
    lat.eval_quality = quality
    lat.entropy = lat.entropy * (1 - 0.3 * ramp(t, peak, n - peak))
    onset = decline_onset(quality, peak)
    return Scenario(lat, degrading_truth(
        ctx, quality, onset,
        f"Held-out accuracy peaked around step {int(np.argmax(quality)) + 1} and has fallen since, while the "
        "training reward keeps rising: the policy overfits the training prompts; go back to the eval peak.",
    ))


def build_generation_bound(ctx: Ctx) -> Scenario:
    """A healthy run whose steps are dominated by rollout generation."""
    lat = base_run(ctx)
    lat.gen_share = ctx.num("gen_share", 0.76)
    return Scenario(lat, healthy_truth(
        f"Training is healthy (reward {reward_words(lat.acc)}, still rising); generation takes about "
        f"{100 * lat.gen_share:.0f}% of each step, a throughput bottleneck worth optimising, not a reason to stop."))


def build_eval_flat(ctx: Ctx) -> Scenario:
    """Training reward rises while the held-out eval does not move (or returns the same number every time)."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    level = ctx.num("eval_level", float(lat.acc[0]) * 0.9)
    lat.eval_quality = level + 0.004 * np.sin(t / max(1.0, 0.2 * n))  # flat: wobbles far below its noise
    identical = bool(ctx.opt("eval_identical", False))
    lat.eval_identical = identical
    every = ctx.eval_every
    risen = np.flatnonzero(lat.acc - lat.acc[0] >= 0.08)
    onset = min(n, max(3 * every if every else 1, int(risen[0]) + 1 if len(risen) else n))
    how = "returns the very same number at every evaluation" if identical else f"stays flat at ~{level:.2f}"
    return Scenario(lat, stop_truth(
        onset,
        f"Training reward climbs ({reward_words(lat.acc)}) while the held-out eval {how}: the gain does not "
        "transfer beyond the training prompts (or the eval is broken), so more steps buy nothing that matters; "
        "the eval never peaked, so no earlier weights are better: stop and look at the eval."))
