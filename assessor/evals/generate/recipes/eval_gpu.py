"""Held-out evaluation and throughput: an eval peak while training reward rises, a generation-bound run."""

from __future__ import annotations

import numpy as np

from assessor.evals.generate.model import Ctx, Scenario, nice_interval
from assessor.evals.generate.recipes.base import base_run, degrading_truth, healthy_truth, ramp, reward_words, rise_exp


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
    top = float(quality.max())
    threshold = top - 0.25 * (top - float(quality[-1]))
    good = np.flatnonzero(quality >= threshold) + 1
    start, end = int(good[0]), int(good[-1])
    onset = min(n, end + 1)
    return Scenario(lat, degrading_truth(
        ctx, quality, onset,
        f"Held-out accuracy peaked around step {int(np.argmax(quality)) + 1} and has fallen since, while the "
        "training reward keeps rising: the policy overfits the training prompts; go back to the eval peak.",
        good_from=start, until=end,
    ))


def build_generation_bound(ctx: Ctx) -> Scenario:
    """A healthy run whose steps are dominated by rollout generation."""
    lat = base_run(ctx)
    lat.gen_share = ctx.num("gen_share", 0.76)
    return Scenario(lat, healthy_truth(
        f"Training is healthy (reward {reward_words(lat.acc)}, still rising); generation takes about "
        f"{100 * lat.gen_share:.0f}% of each step, a throughput bottleneck worth optimising, not a reason to stop."))
