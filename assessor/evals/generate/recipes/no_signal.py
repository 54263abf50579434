"""Runs that learn nothing: a practitioner stops them and fixes the setup.

Reward exactly 0 on almost every step (the task is out of reach), a correctness reward pinned at its floor
while only the format reward moves, and a group size of 2 that leaves most steps with no gradient at all.
(Every completion scoring the same from the start is `identical_rewards`, in `learning_signal`.)
"""

from __future__ import annotations

import numpy as np

from assessor.evals.generate.model import Array, Ctx, Scenario, batch_shape, constant_curve
from assessor.evals.generate.recipes.base import base_run, stop_truth


def _still(ctx: Ctx, lat_n: int) -> dict[str, Array]:
    """Curves of a policy that barely moves: entropy and length as at the start."""
    r = ctx.lrng
    entropy = constant_curve(lat_n, 0.45 + 0.2 * r.random())
    length = constant_curve(lat_n, ctx.num("length_start", 240 + 80 * r.random()))
    return {"entropy": entropy, "length": length}


def build_zero_reward(ctx: Ctx) -> Scenario:
    """Reward exactly 0 on almost every logged step, with a tiny blip now and then: nothing to learn from."""
    lat = base_run(ctx)
    n = ctx.n
    prompts, group = batch_shape(ctx)
    # A logged value is 0 only when every completion of every step it averages scored 0; a share `blips` of the
    # logged values holds one or two lucky completions (a reward of 1/(prompts x group), averaged down).
    blips = ctx.num("blips", 0.08)
    per_step = 1 - (1 - blips) ** (1 / max(1, ctx.spec.logging_steps))
    p = 1 - (1 - per_step) ** (1 / (prompts * group))
    lat.acc = constant_curve(n, p)
    lat.difficulty = constant_curve(n, 0.0)
    still = _still(ctx, n)
    lat.entropy, lat.length = still["entropy"], still["length"]
    lat.kl = constant_curve(n, 0.0004)
    return Scenario(lat, stop_truth(
        1,
        f"Reward is exactly 0 on nearly every logged step (a blip on about 1 in {1 / blips:.0f}, a single lucky "
        f"completion worth {1 / (prompts * group):.3f} of a batch): every group scores all-zero, so advantages, "
        "loss and gradient are 0 and nothing is learnt. The task is out of the model's reach or the reward never "
        "fires: stop and fix the setup."))


def build_correctness_pinned(ctx: Ctx) -> Scenario:
    """The correctness reward sits at its floor (0) on every step; only the format reward moves and rises."""
    lat = base_run(ctx)
    t, n = ctx.t, ctx.n
    lat.acc = constant_curve(n, 0.0)
    lat.fmt = np.minimum(0.97, 0.25 + 0.72 * (1 - np.exp(-t / (ctx.num("format_tau", 0.3) * n))))
    lat.length = lat.length * (1 - 0.15 * (1 - np.exp(-t / (0.3 * n))))
    return Scenario(lat, stop_truth(
        1,
        f"The correctness reward is exactly 0 on every step while the format reward climbs (to ~{lat.fmt[-1]:.2f}) "
        "and carries the whole total: the rising reward is format only, the task itself is never solved (answer "
        "parsing or the correctness check is broken, or the task is out of reach). Stop and fix the reward."))


def build_zero_grad(ctx: Ctx) -> Scenario:
    """Group size 2: most steps have both completions scoring alike, so loss and gradient norm are exactly 0."""
    lat = base_run(ctx)
    n = ctx.n
    prompts, group = batch_shape(ctx)
    p = ctx.num("accuracy", 0.9)
    lat.acc = constant_curve(n, p)
    lat.difficulty = constant_curve(n, 0.2)
    still = _still(ctx, n)
    lat.entropy, lat.length = still["entropy"], still["length"]
    lat.kl = constant_curve(n, 0.0004)
    alike = (p**group + (1 - p) ** group) ** prompts
    return Scenario(lat, stop_truth(
        1,
        f"With {group} completions per prompt and {prompts} prompt(s) a step, about {100 * alike:.0f}% of the steps "
        "have every group scoring alike: zero advantages, loss and gradient norm exactly 0, and reward "
        f"(~{p:.2f}) has not moved: the run burns compute on steps that teach nothing. Stop; raise "
        "num_generations (or the batch) before training again."))
