"""A quality turn that has only just begun, read together with the instruments that turned with it.

A scheduled check meets most failures in their first few logged points: the training reward a few standard errors
under the level it held, or the latest evaluation a couple of sampling errors down. Either alone is under the bar a
decline needs, because noise does that often enough. What a practitioner looks at next is whether the policy's own
instruments turned at the same moment: entropy or completion length leaving the course they were on, the gradient
norm, KL or the clipped fraction jumping. A dip that coincides with two such turns is no draw of the noise but the
start of a breakage (an entropy blow-up, a length runaway or collapse, a hack taking hold), and the weights from
before it are the better model.

Each instrument is read against its own course before the turn: the level it held and the line it was on, so a
length that grows all run or an entropy that eases all run does not count as turning because it kept doing so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.breakdown import level_matters
from assessor.diagnose.clipping import clipped_fraction
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.entropy import summed_over_sequence
from assessor.diagnose.evaluation import LOWER_IS_BETTER
from assessor.diagnose.kl_reward import primary_reward
from assessor.diagnose.models import EvalDiagnosis, Finding
from assessor.diagnose.signals import Reading

RECENT_SHARE = 0.2  # a turn this check can only just see starts in the latest fifth of the logged steps
MIN_AFTER = 3  # logged points of the training reward after the turn
REWARD_DROP_T = 2.0  # standard errors of the difference of the two stretch means
EVAL_DROP_UNITS = 2.0  # eval-to-eval noise units (or sampling errors of the difference) of the latest evaluation
MIN_TURNED = 2  # instruments that left their course at the turn
TURN_Z = 4.0  # an instrument's level after the turn, in standard errors of its level from its course before
# How far a level must move (relative to the level held) to matter, and in which direction it is a breakage. Entropy
# and length break both ways (blow-up or collapse, runaway or truncation to nothing); the others only by rising.
MATERIAL = {"entropy": 0.2, "response_length_mean": 0.12, "grad_norm": 0.5, "kl": 0.5, "clip_ratio_region": 0.5,
            "response_length_clip_ratio": 0.5}
BOTH_WAYS = frozenset({"entropy", "response_length_mean"})
CLIP_MATERIAL = 0.005  # a clipped share of tokens under this is no trust region strained, however it grew
TRUNCATION_MATERIAL = 0.03  # completions cut at the cap: a share under this matters to no reward
TOP_ERRORS = 2.0  # a turn starts from the top: its level before within this many standard errors of the best stretch
MIN_BEFORE = 6  # points of an instrument's course before the turn


@dataclass(frozen=True)
class _Drop:
    """The quality measure's turn: where it began and how it reads."""

    step: int  # the last step of the level held: the turn begins after it
    text: str
    earliest: int | None = None  # an evaluation's turn may have begun after the evaluation before it (sparse evals)


@dataclass(frozen=True)
class _Turned:
    metric: str
    before: float
    after: float
    first_after: int  # its first step after the turn


def diagnose_turn(ctx: Context, evaluation: EvalDiagnosis) -> list[Finding]:
    """A `turn_with_instruments` finding: a fresh quality dip and two instruments leaving their course with it."""
    for drop in (_eval_drop(ctx, evaluation), _reward_drop(ctx)):
        if drop is None:
            continue
        turned = [t for metric, reading in _instruments(ctx) if (t := _turned(metric, reading, drop.step)) is not None
                  and _material(ctx, t)]
        if len(turned) < MIN_TURNED:
            continue
        # The breakage's onset is the first step logged after the level held (the step of the turn is still good),
        # or, between two evaluations, where a turned instrument's own lasting shift puts it, if that is earlier.
        onset = min(int(t.first_after) for t in turned)
        if drop.earliest is not None:
            shifts = [cp.step for t in turned if (summary := ctx.book.summary(t.metric)) is not None
                      for cp in summary.change_points
                      if drop.earliest < cp.step < drop.step and (cp.after - cp.before) * (t.after - t.before) > 0]
            onset = min([onset, *shifts])
        # Ratios, not levels: the table and the other findings already give each instrument's levels over their own
        # windows, and a third pair of numbers for the same curve reads as a contradiction.
        moves = ", ".join(_move(t) for t in turned)
        return [finding(
            "instability", "turn_with_instruments", "warning",
            f"{drop.text}, and {len(turned)} of the policy's instruments left the course they were on at the same "
            f"time ({moves}: the median since step {drop.step} over the level before it): a breakage that has just "
            f"begun, not a draw of the noise; the weights from step {drop.step} or before are the better model",
            [onset])]
    return []


def _reward_drop(ctx: Context) -> _Drop | None:
    """The most significant fall of the training reward that began in the latest fifth of the run, if any.

    Every candidate start is tested at once from cumulative sums (the test of `robust.level_shift` on the points
    after it against twice as many before it, at least five): O(n) in the logged points.
    """
    metric = primary_reward(ctx)
    reading = ctx.book.get(metric) if metric else None
    if reading is None or reading.series.n < 4 * MIN_AFTER:
        return None
    series = reading.series
    steps, values, n = series.steps, series.values, series.n
    recent = steps[-1] - RECENT_SHARE * (steps[-1] - steps[0])
    last = n - 1 - MIN_AFTER  # the latest candidate leaves MIN_AFTER points after it
    first = max(1, int(np.searchsorted(steps, recent, side="left")))
    if first > last:
        return None
    cands = np.arange(first, last + 1)
    sums = np.concatenate(([0.0], np.cumsum(values, dtype=np.float64)))
    n_after = n - 1 - cands
    lo = np.maximum(0, cands + 1 - np.maximum(5, 2 * n_after))
    n_before = cands + 1 - lo
    after = (sums[n] - sums[cands + 1]) / n_after
    before = (sums[cands + 1] - sums[lo]) / n_before
    shrink = (1 - series.rho) / (1 + series.rho)
    noise = max(series.scatter, robust.noise_floor(values))
    error = noise * np.sqrt(1 / np.maximum(1.0, n_before * shrink) + 1 / np.maximum(1.0, n_after * shrink))
    t = (after - before) / error
    spread = float(np.percentile(values, 95) - np.percentile(values, 5))
    material = before - after >= robust.MATERIAL_DROP * np.maximum(np.abs(before), spread)
    ok = (t <= -REWARD_DROP_T) & material
    if not ok.any():
        return None
    k = int(np.argmin(np.where(ok, t, np.inf)))
    i = int(cands[k])
    # A fall from the top: the level before the turn within two standard errors of the best stretch of the run.
    width = max(3, robust.stretch_width(n))
    stretch_error = noise / math.sqrt(max(1.0, width * shrink))
    if before[k] < float(np.max(robust.window_means(values, width))) - TOP_ERRORS * stretch_error:
        return None
    return _Drop(int(steps[i]), f"{metric} fell from {num(float(before[k]))} to {num(float(after[k]))} over its "
                                      f"latest {n - i - 1} logged points, since step {int(steps[i])} "
                                      f"({-float(t[k]):.1f} standard errors)")


def _eval_drop(ctx: Context, evaluation: EvalDiagnosis) -> _Drop | None:
    """The latest evaluation twice its noise or more under the best, which one of the two before it still held.

    The turn begins after the newest evaluation not itself that far under the best: a fall that began earlier than
    two evaluations ago is no fresh turn (the decline findings read it).
    """
    for curve in evaluation.curves:
        reading = ctx.book.get(curve.metric.removeprefix("eval/"), "eval")
        if reading is None or reading.series.n < 3:
            continue
        sign = -1.0 if curve.metric.removeprefix("eval/") in LOWER_IS_BETTER else 1.0
        steps, values = reading.series.steps, sign * reading.series.values
        peak, latest = float(np.max(values[:-1])), float(values[-1])
        unit = curve.noise
        if curve.set_size:
            p = min(max(sign * peak, 0.0), 1.0)
            sampling = math.sqrt(2 * p * (1 - p) / curve.set_size)
            unit = min(unit, sampling) if unit > 0 else sampling
        if not unit > 0 or peak - latest < EVAL_DROP_UNITS * unit:
            continue
        held = np.flatnonzero(values[:-1] > peak - EVAL_DROP_UNITS * unit)  # not itself down by a drop's size
        if held[-1] < len(values) - 3:
            continue
        top = int(held[-1])
        earlier = int(steps[top - 1]) if top > 0 else None
        # One evaluation against the best: a comparison of its own, not the decline test's size, and named so.
        return _Drop(int(steps[top]), f"the latest evaluation of {curve.metric}, {num(sign * latest)} at step "
                                      f"{int(steps[-1])}, is {(peak - latest) / unit:.1f} eval-noise units under its "
                                      f"best one so far, {num(sign * peak)} (a single evaluation against the best, not "
                                      f"the decline test)", earlier)
    return None


def _instruments(ctx: Context) -> list[tuple[str, Reading]]:
    out = []
    for metric in ("entropy", "response_length_mean", "grad_norm", "kl", "response_length_clip_ratio"):
        reading = ctx.book.get(metric)
        if reading is not None and not (metric == "entropy" and summed_over_sequence(reading)):
            out.append((metric, reading))
    clip = clipped_fraction(ctx)
    if clip is not None:
        out.append(("clip_ratio_region", clip))
    return out


def _turned(metric: str, reading: Reading, onset: int) -> _Turned | None:
    """The instrument's level since `onset` against its course before it, when it left that course, else None.

    Its course is the level and the line of the points just before the turn (three times as many as came after,
    at least six); the level since is the median of the points after. It has turned when that median stands
    `TURN_Z` standard errors off both the level and the line, the same way, by a material share of the level.
    """
    series = reading.series
    steps, values = series.steps, series.values
    after = steps > onset
    n_after = int(after.sum())
    if n_after < 2:
        return None
    end = int(np.searchsorted(steps, onset, side="right"))
    start = max(0, end - max(MIN_BEFORE, 3 * n_after))
    if end - start < MIN_BEFORE:
        return None
    x, y = steps[start:end].astype(np.float64), values[start:end]
    fit = robust.theil_sen(y, x)
    held = float(np.median(y))
    line = fit.intercept + fit.slope * x if math.isfinite(fit.slope) else np.full(len(y), held)
    scatter = max(float(np.median(np.abs(y - line))) * robust.MAD_TO_SD, robust.noise_floor(y))
    error = 1.2533 * scatter / math.sqrt(n_after)
    later = values[after]
    level = float(np.median(later))
    projected = float(np.median(later - (fit.intercept + fit.slope * steps[after]))) if math.isfinite(
        fit.slope) else level - held
    off_level, off_line = level - held, projected
    if off_level * off_line <= 0 or min(abs(off_level), abs(off_line)) < TURN_Z * error:
        return None
    if off_level < 0 and metric not in BOTH_WAYS:
        return None
    if abs(off_level) < MATERIAL[metric] * abs(held):
        return None
    return _Turned(metric, held, level, int(steps[after][0]))


def _move(turned: _Turned) -> str:
    """How far an instrument moved, as a factor of the level it held (from zero: the level it reached)."""
    if turned.before > 0 and turned.after > 0:
        return f"{turned.metric} ×{turned.after / turned.before:.2g}"
    return f"{turned.metric} {num(turned.before)} → {num(turned.after)}"


def _material(ctx: Context, turned: _Turned) -> bool:
    """A level that matters where it went: a KL more than about zero, a clipped or truncated share that counts."""
    return level_matters(ctx, turned.metric, turned.after,
                         {"clip_ratio_region": CLIP_MATERIAL, "response_length_clip_ratio": TRUNCATION_MATERIAL})
