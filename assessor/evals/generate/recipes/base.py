"""What every recipe starts from: the healthy base run, the curve shapes that bend it, and the ground truth helpers.

`base_run` is a healthy GRPO run (reward still rising, KL growing slowly, entropy and length drifting gently);
a recipe changes some of its curves with `ramp`, `rise_exp`, `peak_then_decline`, ... and states its answer
with `healthy_truth`, `stop_truth` or `degrading_truth`. The answers follow DESIGN.md ("What the three
decisions mean"): rollback whenever a better model lies behind now, checkpoint in the run folder or not, to a
window of the steps still as good as the best before the breakage (`good_window`); stop when the weights now
are as good as any earlier ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from assessor.evals.generate.model import Array, Ctx, Grpo, Truth, constant_curve
from assessor.evals.generate.numeric import normal_sf
from assessor.judge.models import Decision


def ramp(t: Array, start: float, width: float) -> Array:
    """0 before `start`, a smoothstep to 1 over `width` steps."""
    x = np.clip((t - start) / max(width, 1e-9), 0.0, 1.0)
    return np.asarray(x * x * (3 - 2 * x), dtype=np.float64)


def ramp_visible(start: float, width: float, level: float = 0.2) -> int:
    """Step at which a `ramp(start, width)` has done `level` of its change."""
    x = 0.5 - math.sin(math.asin(1 - 2 * level) / 3)  # inverse of 3x^2 - 2x^3
    return math.ceil(start + x * width)


def _rise_log(t: Array, n: int, a0: float, gain: float, tau: float) -> Array:
    """Decelerating but never-flat growth: a0 at the start, a0 + gain at step n."""
    return np.asarray(a0 + gain * np.log1p(t / tau) / math.log1p(n / tau), dtype=np.float64)


def rise_exp(t: Array, a0: float, gain: float, tau: float) -> Array:
    """Saturating growth: a0 at the start, approaching a0 + gain with time constant `tau`."""
    return np.asarray(a0 + gain * (1 - np.exp(-t / tau)), dtype=np.float64)


def peak_then_decline(t: Array, a0: float, gain: float, peak: int, depth: float, width: float) -> Array:
    """Rise to a peak at step `peak`, then fall by `depth` over `width` steps."""
    rise = rise_exp(np.minimum(t, peak), a0, gain, max(peak / 2.5, 1.0))
    return np.asarray(rise - depth * ramp(t, peak, width), dtype=np.float64)


# "As good as the best": within a quarter of the eventual drop, but at least 0.02 (what a smoothed reward or a
# 500-question eval cannot tell apart) and never more than 0.05, so a large collapse does not widen the window
# to most of the run.
TOLERANCE_SHARE = 0.25
TOLERANCE_MIN = 0.02
TOLERANCE_MAX = 0.05


def _tolerance(best: float, now: float) -> float:
    return min(max(TOLERANCE_SHARE * max(0.0, best - now), TOLERANCE_MIN), TOLERANCE_MAX)


def good_window(quality: Array, before: int) -> tuple[int, int]:
    """The steps (inclusive) whose clean quality is as good as the best reached up to step `before`.

    The best is the highest level up to `before` (the last step before the breakage); "as good" is within the
    tolerance above of it, set by how far the run has fallen since (best - level now).
    """
    head = quality[: max(1, min(before, len(quality)))]
    best = float(head.max())
    tolerance = _tolerance(best, float(quality[-1]))
    good = np.flatnonzero(head >= best - tolerance - 1e-12) + 1
    return int(good[0]), int(good[-1])


def decline_onset(quality: Array, peak: int) -> int:
    """First step after `peak` where the clean quality has left the tolerance band around its best."""
    best = float(quality[:peak].max())
    tolerance = _tolerance(best, float(quality[-1]))
    below = np.flatnonzero(quality[peak:] < best - tolerance)
    return int(peak + below[0] + 1) if len(below) else len(quality)


def truncated_share(lat: Grpo) -> Array:
    """Expected share of completions cut at the cap (log-normal lengths around the latent median)."""
    z = (math.log(lat.cap) - np.log(np.maximum(lat.length, 1e-9))) / np.maximum(lat.length_sigma, 1e-9)
    return normal_sf(z)


def scored(lat: Grpo) -> Array:
    """The correctness reward the run can show: a completion cut at the cap scores nothing."""
    return np.asarray(lat.acc * (1 - truncated_share(lat)), dtype=np.float64)


def _fmt_steps(steps: Sequence[int]) -> str:
    return ", ".join(str(s) for s in steps[:6]) + (" ..." if len(steps) > 6 else "")


def healthy_truth(reasoning: str) -> Truth:
    """The right answer for a healthy run: continue."""
    return Truth(("continue",), "continue", None, None, True, reasoning)


def stop_truth(onset: int, reasoning: str, *, also_continue: bool = False) -> Truth:
    """Nothing more to gain and the weights now are as good as any earlier ones: stop."""
    if also_continue:
        return Truth(("continue", "stop"), None, onset, None, False, reasoning)
    return Truth(("stop",), "stop", onset, None, False, reasoning)


def degrading_truth(
    ctx: Ctx, quality: Array, onset: int, reasoning: str, *, before: int | None = None, also_stop: bool = False,
) -> Truth:
    """A better model lies behind now: rollback, whether or not a checkpoint of it is on disk (DESIGN.md).

    Args:
        ctx: the spec's context (for the checkpoints named in the reasoning).
        quality: the clean quality curve (reward, correctness, held-out accuracy: what "better" means here).
        onset: the first step where the problem is visible.
        reasoning: what the curves show.
        before: the last step before the breakage began (default: the step before the onset). The window is
            the steps up to it whose quality is as good as the best (`good_window`); its upper end, the newest
            such step, is the best target.
        also_stop: stopping is right too (the fix is a restart with another setting, not these weights).
    """
    start, end = good_window(quality, before if before is not None else onset - 1)
    inside = [c for c in ctx.checkpoints if start <= c <= end]
    if inside:
        which = f"Checkpoints {_fmt_steps(inside)} are" if len(inside) > 1 else f"Checkpoint {inside[0]} is"
        note = f" {which} from the good stretch (steps {start}-{end}); the newest is the one to restore."
    else:
        earlier = [c for c in ctx.checkpoints if c < start]
        where = f" (the newest saved before it is {earlier[-1]})" if earlier else ""
        note = (f" No checkpoint from the good stretch (steps {start}-{end}) is in the run folder{where}: restore "
                f"the newest one saved at or before step {end} wherever checkpoints are kept, or re-run to step "
                f"{end} with the fix.")
    accept: tuple[Decision, ...] = ("rollback", "stop") if also_stop else ("rollback",)
    return Truth(accept, "rollback", onset, (start, end), False, reasoning + note)


def base_run(ctx: Ctx, n: int | None = None) -> Grpo:
    """A healthy run: reward still rising, KL growing slowly, entropy and length drifting gently."""
    n = n or ctx.n
    t = np.arange(1, n + 1, dtype=np.float64)
    r = ctx.lrng
    a0 = ctx.num("reward_start", 0.18 + 0.1 * r.random())
    gain = ctx.num("reward_gain", 0.34 + 0.1 * r.random())
    acc = _rise_log(t, n, a0, gain, ctx.num("tau", 0.45 + 0.35 * r.random()) * n)
    kl_end = ctx.num("kl_end", 0.035 + 0.02 * r.random())
    kl = 0.0004 + kl_end * (t / n) ** 1.1
    e0 = 0.45 + 0.2 * r.random()
    entropy = e0 * (1 - 0.3 * (1 - np.exp(-t / (0.6 * n))))
    l0 = ctx.num("length_start", 240 + 80 * r.random())
    length = l0 * (1 + 0.2 * (1 - np.exp(-t / (0.7 * n))))
    off = ctx.recipe.off_policy or ctx.framework == "verl" or int(ctx.opt("num_iterations", 1)) > 1
    clip_scale = 1.0 if off else 0.0
    framework_cap = 1024
    return Grpo(
        acc=acc, kl=kl, entropy=entropy, length=length, length_sigma=constant_curve(n, 0.42),
        difficulty=constant_curve(n, 1.7), clip_low=clip_scale * 0.0008 * (1 + t / n),
        clip_high=clip_scale * 0.0012 * (1 + t / n),
        pg_mean=constant_curve(n, 0.0), pg_scale=constant_curve(n, 0.02),
        grad=0.22 * (1 + 0.4 * np.exp(-t / (0.1 * n))),
        cap=int(ctx.opt("max_completion_length", framework_cap)), noise=ctx.noise,
        gen_share=ctx.num("gen_share", 0.5 + 0.08 * r.random()),
    )


def with_components(ctx: Ctx, lat: Grpo) -> Grpo:
    """Add a format reward that is learnt early (most GRPO recipes have one)."""
    if ctx.opt("components", False):
        t = ctx.t[: len(lat.acc)]
        lat.fmt = np.minimum(0.97, 0.5 + 0.47 * (1 - np.exp(-t / (0.15 * len(t)))))
    return lat


def reward_words(acc: Array) -> str:
    """The clean reward from start to end, for the reasoning."""
    return f"{acc[0]:.2f} to {acc[-1]:.2f}"
