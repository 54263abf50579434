"""Policy-loss patterns: declining, oscillating around zero, a sign reversal, a blow-up, and NaN divergence."""

from __future__ import annotations

import numpy as np

from assessor.evals.generate.model import Ctx, Scenario, constant_curve
from assessor.evals.generate.recipes.base import (
    base_run,
    degrading_truth,
    healthy_truth,
    peak_then_decline,
    ramp,
    ramp_visible,
    reward_words,
)


def build_pg_loss_declining(ctx: Ctx) -> Scenario:
    """Policy loss stable and slowly shrinking while reward rises."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    lat.pg_mean = 0.05 * np.exp(-t / (0.35 * n)) + 0.004
    lat.pg_scale = 0.006 + 0.01 * np.exp(-t / (0.35 * n))
    return Scenario(lat, healthy_truth(
        "The policy loss is stable and slowly shrinking as updates get smaller, reward keeps rising "
        f"({reward_words(lat.acc)}): normal convergence behaviour, keep training."))


def build_pg_loss_oscillating(ctx: Ctx) -> Scenario:
    """Policy loss oscillating around zero (GRPO's surrogate), reward rising."""
    lat = base_run(ctx)
    lat.pg_scale = constant_curve(ctx.n, ctx.num("pg_scale", 0.04))
    lat.pg_phi = -0.4
    return Scenario(lat, healthy_truth(
        "The GRPO loss oscillates around zero, as the group-normalised surrogate does by construction, while "
        f"reward keeps rising ({reward_words(lat.acc)}); the loss is not a progress signal here."))


def build_pg_loss_sign_reversal(ctx: Ctx) -> Scenario:
    """Policy loss flips from positive to negative and stays; reward turns down."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    flip = ctx.step_opt("onset", 0.55)
    width = max(3.0, 0.05 * n)
    switch = ramp(t, flip - width / 2, width)
    lat.pg_mean = 0.035 - 0.075 * switch
    lat.pg_scale = constant_curve(n, 0.01)
    lat.acc = peak_then_decline(t, float(lat.acc[0]), 0.32, flip, 0.16, 0.35 * n)
    lat.kl = lat.kl + 0.08 * ramp(t, flip, 0.4 * n)
    return Scenario(lat, degrading_truth(
        ctx, lat.acc, flip,
        f"The policy loss was positive and turned negative around step {flip} and stayed there, and reward has "
        "been falling since: the update direction reversed.",
    ))


def build_pg_loss_blowup(ctx: Ctx) -> Scenario:
    """A discontinuity in the policy-loss magnitude, with the run degrading after it."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    jump = ctx.step_opt("onset", 0.62)
    step_up = ramp(t, jump - 1, 1.0)
    lat.pg_scale = 0.02 * (1 + ctx.num("factor", 20.0) * step_up)
    lat.pg_mean = 0.25 * step_up
    lat.grad = lat.grad * (1 + 7 * step_up)
    lat.acc = lat.acc - 0.25 * ramp(t, jump, 0.2 * n)
    lat.entropy = lat.entropy * (1 + 1.0 * ramp(t, jump, 0.2 * n))
    lat.kl = lat.kl + 0.15 * ramp(t, jump, 0.25 * n)
    return Scenario(lat, degrading_truth(
        ctx, lat.acc, jump,
        f"At step {jump} the policy loss jumps by an order of magnitude together with the gradient norm, and reward "
        "falls from there: the optimisation broke.", before=jump - 1,
    ))


def build_nan_divergence(ctx: Ctx) -> Scenario:
    """Gradient norm climbs, then loss and grad norm turn NaN at the end."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    nan_from = ctx.step_opt("nan_at", max(0.5, 1 - max(5, int(0.05 * n)) / n))
    start = max(2, ctx.step_opt("onset", 0.8))
    start = min(start, nan_from - 3)
    width = max(2.0, nan_from - start)
    climb = ramp(t, start, width)
    lat.grad = lat.grad * (1 + 40 * climb**2)
    lat.pg_scale = lat.pg_scale * (1 + 10 * climb)
    lat.acc = lat.acc * (1 - 0.5 * climb)
    lat.entropy = lat.entropy * (1 + 1.5 * climb)
    lat.kl = lat.kl + 0.5 * climb
    after = t >= nan_from
    lat.acc = np.where(after, 0.002, lat.acc)
    lat.length = np.where(after, 2.0 * lat.cap, lat.length)
    lat.nan_from = nan_from
    onset = ramp_visible(start, width, 0.15)
    return Scenario(lat, degrading_truth(
        ctx, lat.acc, onset,
        f"The gradient norm climbs from about step {start}, reward falls, and from step {nan_from} loss and grad "
        "norm are NaN: the run has diverged.",
    ))
