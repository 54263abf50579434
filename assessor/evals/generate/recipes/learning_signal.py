"""The learning signal and the reward's parts.

Reward saturated at the ceiling, identical rewards from the start (a setup failure), and a format reward
that saturates while correctness stalls or falls.
"""

from __future__ import annotations

import numpy as np

from assessor.evals.generate.model import Array, Ctx, Scenario, Truth, batch_shape, constant_curve
from assessor.evals.generate.numeric import expit, logit, normal_ppf
from assessor.evals.generate.recipes.base import base_run, degrading_truth, ramp, ramp_visible, rise_exp, stop_truth


def _expected_zero_std(acc: Array, sd: Array, g: int) -> Array:
    nodes = normal_ppf((np.arange(32) + 0.5) / 32)
    q = expit(logit(np.clip(acc, 1e-6, 1 - 1e-6))[:, None] + sd[:, None] * nodes[None, :])
    return np.asarray((q**g + (1 - q) ** g).mean(axis=1), dtype=np.float64)


def build_reward_saturation(ctx: Ctx) -> Scenario:
    """Reward at the ceiling, groups all-correct, no learning signal left."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    sat = ctx.step_opt("saturate", 0.4)
    a0 = float(lat.acc[0]) + 0.2
    lat.acc = np.asarray(expit(logit(a0) + (5.0 - logit(a0)) * (1 - np.exp(-t / (sat / 2.5)))), dtype=np.float64)
    lat.difficulty = constant_curve(n, 0.9)
    lat.entropy = lat.entropy * (1 - 0.4 * (1 - np.exp(-t / sat)))
    lat.kl = 0.0005 + 0.03 * (1 - np.exp(-t / sat))
    _, g = batch_shape(ctx)
    zero = _expected_zero_std(lat.acc, lat.difficulty, g)
    onset = int(np.argmax(zero >= 0.7)) + 1 if (zero >= 0.7).any() else n
    return Scenario(lat, Truth(
        ("stop",), "stop", onset, None, False,
        f"Reward reached the ceiling (~{lat.acc[-1]:.2f}) and since about step {onset} most groups score all "
        "alike (zero-spread groups near 1, reward spread near 0): no learning signal is left, stop."))


def build_identical_rewards(ctx: Ctx) -> Scenario:
    """Every completion gets the same reward from step 1: a setup failure."""
    lat = base_run(ctx)
    n = ctx.n
    value = ctx.num("value", 0.0)
    lat.identical = value
    lat.acc = constant_curve(n, value)
    lat.kl = constant_curve(n, 0.0)
    lat.entropy = constant_curve(n, float(lat.entropy[0]))
    lat.length = constant_curve(n, float(lat.length[0]))
    lat.grad = constant_curve(n, 0.0)
    lat.pg_scale = constant_curve(n, 0.0)
    lat.clip_low = constant_curve(n, 0.0)
    lat.clip_high = constant_curve(n, 0.0)
    return Scenario(lat, Truth(
        ("stop",), "stop", 1, None, False,
        f"Every completion has scored exactly {value:g} since step 1: reward_std and the gradient norm are 0 and "
        "every group has zero spread, so nothing is learnt; the reward function or answer parsing is broken."))


def build_component_hacking(ctx: Ctx) -> Scenario:
    """The format reward saturates at 1.0 while correctness stalls or falls."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    lat.fmt = np.minimum(1.0, 0.35 + 0.68 * (1 - np.exp(-t / (0.07 * n))))
    stall = ctx.step_opt("onset", 0.4)
    a0 = float(lat.acc[0])
    rise = rise_exp(np.minimum(t, stall), a0, 0.22, stall / 2.0)
    variant = str(ctx.opt("correctness", "falls"))
    lat.length = lat.length * (1 - 0.3 * ramp(t, stall, 0.4 * n))
    if variant == "falls":
        width = 0.4 * n
        lat.acc = rise - 0.14 * ramp(t, stall, width)
        onset = ramp_visible(stall, width, 0.2)
        return Scenario(lat, degrading_truth(
            ctx, lat.acc, onset,
            f"The format reward saturated at 1.0 early while correctness peaked around step {stall} and has been "
            "falling since; the total reward hides it: the policy is learning the format, not the task.",
        ))
    lat.acc = rise
    onset = min(n, stall + int(0.1 * n))
    return Scenario(lat, stop_truth(
        onset,
        f"The format reward saturated at 1.0 while correctness has been stuck since about step {stall}: the "
        "remaining reward signal is the format, nothing more is being learnt, and correctness has not fallen, so "
        "the weights now are as good as any earlier ones.",
    ))
