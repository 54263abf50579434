"""From a spec to the context recipes and writers share, and the recipe's ground truth for a spec."""

from __future__ import annotations

import math

from assessor.errors import ConfigError
from assessor.evals.cases import Generated
from assessor.evals.generate.model import Ctx, Truth, nice_interval, seeded_rng
from assessor.evals.generate.recipes import PATTERNS


def framework_of(spec: Generated) -> str:
    """`trl`, `verl` or `rfs` (reasoning-from-scratch): whose keys and conventions the run uses."""
    if spec.format in ("trl_state", "trl_live", "trl_console"):
        return "trl"
    if spec.format in ("jsonl", "verl_console"):
        return "verl"
    if spec.format == "csv":
        return "rfs"
    framework = str(spec.options.get("framework", "trl"))
    if framework not in ("trl", "verl"):
        raise ConfigError(f"tensorboard runs are written with framework trl or verl, not {framework!r}")
    return framework


def context_for(spec: Generated) -> Ctx:
    """The context of a spec.

    Raises:
        ConfigError: unknown pattern, a format the pattern cannot be written in, or bad options.
    """
    recipe = PATTERNS.get(spec.pattern)
    if recipe is None:
        raise ConfigError(f"unknown pattern {spec.pattern!r}; known: {', '.join(PATTERNS)}")
    if spec.format not in recipe.formats:
        raise ConfigError(f"pattern {spec.pattern!r} cannot be written as {spec.format!r}; use one of {recipe.formats}")
    framework = framework_of(spec)
    if recipe.kind == "dpo" and framework != "trl":
        raise ConfigError(f"pattern {spec.pattern!r} is a TRL DPO run; tensorboard needs framework trl")
    if spec.steps < 5:
        raise ConfigError("a generated run needs at least 5 steps")
    n = spec.steps
    planned = int(spec.options.get("max_steps", 0)) or max(n, int(math.ceil(n * recipe.planned_factor / 50) * 50))
    saves = _save_steps(spec, n)
    limit = int(spec.options.get("save_total_limit", 3 if spec.format == "trl_live" else 0))
    kept = saves[-limit:] if limit > 0 else list(saves)
    return Ctx(spec, recipe, n, framework, planned, kept, saves, seeded_rng(spec, 1), seeded_rng(spec, 2))


def _save_steps(spec: Generated, n: int) -> list[int]:
    options = spec.options
    layout = str(options.get("layout", "checkpoints"))
    if not options.get("checkpoints", True):
        if spec.format == "trl_state" and layout == "checkpoints":
            raise ConfigError("a trl_state run without checkpoints needs layout: top")
        return []
    save = int(options.get("save_steps", nice_interval(n / 8)))
    steps = list(range(save, n + 1, save))
    if spec.format == "trl_state" and layout == "checkpoints" and (not steps or steps[-1] != n):
        steps.append(n)  # the state we read is the newest checkpoint's
    return steps


def truth(spec: Generated) -> Truth:
    """The right answer for a spec, straight from its recipe (no simulation, no judge).

    Args:
        spec: the generated run.

    Returns:
        The recipe's ground truth for these steps, options and checkpoints.

    Raises:
        ConfigError: unknown pattern, or a format the pattern cannot be written in.
    """
    ctx = context_for(spec)
    return ctx.recipe.build(ctx).truth


def checkpoint_steps(spec: Generated) -> list[int]:
    """Steps of the checkpoints `write_run` leaves on disk for this spec."""
    return list(context_for(spec).checkpoints)
