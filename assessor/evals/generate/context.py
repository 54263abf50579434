"""From a spec to the context recipes and writers share, and the recipe's ground truth for a spec."""

from __future__ import annotations

import math

from assessor.errors import ConfigError
from assessor.evals.cases import Generated
from assessor.evals.generate.model import FORMAT_FRAMEWORK, Ctx, Truth, nice_interval, seeded_rng
from assessor.evals.generate.recipes import PATTERNS


def framework_of(spec: Generated) -> str:
    """`trl`, `verl` or `rfs` (reasoning-from-scratch): whose keys and conventions the run uses."""
    if spec.format in FORMAT_FRAMEWORK:
        return FORMAT_FRAMEWORK[spec.format]
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
    framework = framework_of(spec)
    reason = recipe.exclusion(spec.format, framework)
    if reason is not None:
        where = f"{spec.format} ({framework})" if spec.format == "tensorboard" else spec.format
        raise ConfigError(f"pattern {spec.pattern!r} cannot be written as {where}: {reason}; "
                          f"use one of {', '.join(recipe.formats)}")
    if spec.steps < 5:
        raise ConfigError("a generated run needs at least 5 steps")
    n = spec.steps
    finished = bool(spec.options.get("finished", recipe.finished))
    planned = int(spec.options.get("max_steps", 0)) or (
        n if finished else max(n, int(math.ceil(n * recipe.planned_factor / 50) * 50)))
    if finished and planned != n:
        raise ConfigError(f"a finished run has reached its planned steps: max_steps {planned} != steps {n}")
    saves = _save_steps(spec, n, finished and framework in ("trl", "verl"))
    limit = int(spec.options.get("save_total_limit", 3 if spec.format == "trl_live" else 0))
    kept = saves[-limit:] if limit > 0 else list(saves)
    return Ctx(spec, recipe, n, framework, planned, kept, saves, seeded_rng(spec, 1), seeded_rng(spec, 2))


def layout_of(spec: Generated) -> str:
    """A trl_state run's layout: `checkpoints` (the state inside each checkpoint) or `top` (one top-level state).

    Without checkpoints the state can only be the top-level one.
    """
    default = "checkpoints" if spec.options.get("checkpoints", True) else "top"
    return str(spec.options.get("layout", default))


def _save_steps(spec: Generated, n: int, final_save: bool = False) -> list[int]:
    """Save steps; `final_save`: the trainer saved at its last step too (HF and verl do when training ends)."""
    options = spec.options
    layout = layout_of(spec)
    if not options.get("checkpoints", True):
        if spec.format == "trl_state" and layout == "checkpoints":
            raise ConfigError("a trl_state run without checkpoints needs layout: top")
        return []
    save = int(options.get("save_steps", nice_interval(n / 8)))
    steps = list(range(save, n + 1, save))
    newest_state = spec.format == "trl_state" and layout == "checkpoints"  # the state we read is the newest one's
    if (final_save or newest_state) and (not steps or steps[-1] != n):
        steps.append(n)
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
