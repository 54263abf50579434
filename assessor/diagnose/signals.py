"""Per-signal reading: levels, trend, slowing, noise, peak, plateau, change points, discontinuities, spikes."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.models import ChangePoint, Discontinuity, SignalSummary, Spike, Stretch
from assessor.run import Run, Split

MIN_POINTS = 3
LATEST_SHIFT_POINTS = 3  # points after a late lasting shift before they, not the stretch, are the current level
# Curves whose levels are stretch means rather than medians of the smoothed curve (see `describe`).
MEAN_LEVEL_PREFIXES = ("reward_mean", "reward_component/", "pref_margin", "pref_accuracy")
# Curves where a one-step spike means something (instability, a stall); spikes elsewhere are just noise.
SPIKE_METRICS = frozenset({
    "kl", "grad_norm", "pg_loss", "loss", "entropy", "policy_shift_kl", "time_step_s", "reward_mean", "value_loss",
})


SIGNIFICANT_NOISE = 3.0  # a level change must clear three noise units ...
CLEAR_NOISE = 5.0  # ... and, unless a trend or change point in the same direction confirms it, five


def significant_change(summary: SignalSummary, change: float, noise: float) -> bool:
    """A level change that noise does not explain (3 noise units with a confirming trend or change point, else 5)."""
    size = abs(change) / noise
    if size < SIGNIFICANT_NOISE:
        return False
    direction = "up" if change > 0 else "down"
    confirmed = summary.trend == ("rising" if change > 0 else "falling") or any(
        cp.direction == direction for cp in summary.change_points)
    return confirmed or size >= CLEAR_NOISE


EARLY_SHARE = 0.1  # KL and gradient norms move many-fold while a run settles in; that is not a jump


def settled_step(summary: SignalSummary, planned: int | None = None) -> float:
    """Where the settling-in ends: a share of the whole run, of its planned steps when known.

    So a check early in a long run does not read the first steps' growth (KL and gradient norms move many-fold
    while a run settles in) as a jump.
    """
    span = max(summary.last_step - summary.first_step, (planned or 0) - summary.first_step)
    return summary.first_step + EARLY_SHARE * span


def first_rise(
    summary: SignalSummary, factor: float, change_points: bool = False, planned: int | None = None,
) -> tuple[int, float, float] | None:
    """The first jump up by at least `factor` past the first tenth of the run: (step, level before, level after).

    Jumps come from the log-scale discontinuities (both sides steady), and with `change_points` also from the
    lasting level shifts, so a rise that keeps climbing after it and one that settles at a new level both count.
    `planned`: the run's planned total steps, when known.
    """
    start = settled_step(summary, planned)
    rises = [(d.step, d.before, d.after) for d in summary.discontinuities]
    if change_points:
        rises += [(cp.step, cp.before, cp.after) for cp in summary.change_points if cp.direction == "up"]
    # A ratio needs a base that is a level, not "about zero" on this curve's own scale.
    base = 1e-3 * max(abs(summary.peak), abs(summary.trough))
    return next(((step, before, after) for step, before, after in sorted(rises)
                 if step > start and before > base and after >= factor * before), None)


TRACKER_RUN_PREFIX = " - "  # a W&B panel export names a column "<run name> - <key>"


def logged_keys(run: Run, metric: str) -> set[str]:
    """The keys a metric was read from, as its framework named them.

    Without a tracker export's `<run> - ` prefix or a logger's `train/` one.
    """
    return {key.rsplit(TRACKER_RUN_PREFIX, 1)[-1].removeprefix("train/") for key in run.source_keys(metric)}


SCHEDULE_METRICS = frozenset({"lr"})  # set by the trainer, not measured: read as logged


@dataclass(frozen=True)
class Reading:
    """A prepared curve and its summary."""

    series: robust.Series
    summary: SignalSummary
    averaged_steps: int = 1  # optimizer steps each logged point averages (TRL's Trainer logs interval means)


def describe(metric: str, split: Split, steps: np.ndarray, values: np.ndarray) -> Reading | None:
    """The robust reading of one curve (None when it has fewer than three points)."""
    if len(values) < MIN_POINTS:
        return None
    series = robust.prepare(steps, values)
    smooth, red_steps = series.smooth, series.red_steps
    noise = max(series.noise, robust.noise_floor(series.values))
    if metric.startswith(MEAN_LEVEL_PREFIXES) and series.n >= 6:
        # Rewards are read as stretch means (a tenth of the run), the levels every reward comparison uses, so the
        # start, peak and now quoted anywhere are the same numbers the tests were run on.
        width = robust.stretch_width(series.n)
        means = robust.window_means(series.values, width)
        start, now = float(means[0]), float(means[-1])
        peak_i, trough_i = int(np.argmax(means)), int(np.argmin(means))
        peak, trough = float(means[peak_i]), float(means[trough_i])
        peak_step = int(series.steps[peak_i + width // 2])
        trough_step = int(series.steps[trough_i + width // 2])
    else:
        edge = _edge_points(series)
        now = robust.edge_level(series.red_values, at_end=True, width=edge) if len(series.red_values) >= 6 else (
            float(smooth[-1]))
        start = robust.edge_level(series.red_values, at_end=False, width=edge) if len(series.red_values) >= 6 else (
            float(smooth[0]))
        peak_index, trough_index = int(np.argmax(smooth)), int(np.argmin(smooth))
        peak, trough = max(float(smooth[peak_index]), now, start), min(float(smooth[trough_index]), now, start)
        peak_step, trough_step = int(red_steps[peak_index]), int(red_steps[trough_index])
    if split == "eval" or metric in SCHEDULE_METRICS:
        # Each evaluation is its own measurement of one checkpoint (the first often of the model before any
        # training): start, peak, trough and now are evaluations, never a smoothed blend of several. A schedule
        # (the learning rate) is set, not measured: its logged values are exact, and a smoothed "now" of 1e-07
        # beside a logged 0 would hide the end of the schedule.
        raw, raw_steps = series.values, series.steps
        start, now = float(raw[0]), float(raw[-1])
        peak_i, trough_i = int(np.argmax(raw)), int(np.argmin(raw))
        peak, trough = float(raw[peak_i]), float(raw[trough_i])
        peak_step, trough_step = int(raw_steps[peak_i]), int(raw_steps[trough_i])
    recent = robust.trend(series)
    found = robust.change_points(series)
    chained = robust.segment_levels(series, [k for k, _, _ in found])
    cps = [
        ChangePoint(
            step=int(red_steps[k]), direction="up" if after > before else "down", before=before, after=after,
            size_noise=abs(after - before) / noise, segment_before=seg_before, segment_after=seg_after,
        )
        for (k, before, after), (seg_before, seg_after) in zip(found, chained, strict=True)
    ]
    if cps and not (split == "eval" or metric in SCHEDULE_METRICS or metric.startswith(MEAN_LEVEL_PREFIXES)):
        # A lasting shift inside the latest stretch (a live run that just blew up): the current level is the one
        # after it, not a median of the stretch that is still mostly from before.
        since = series.red_values[series.red_steps >= cps[-1].step]
        if LATEST_SHIFT_POINTS <= len(since) < _edge_points(series):
            now = float(np.median(since))
            peak, trough = max(peak, now), min(trough, now)
    jumps = [
        Discontinuity(step=s, before=b, after=a, ratio=r) for s, b, a, r in robust.discontinuities(
            series.red_steps, series.red_values)
    ]
    # On a curve that is mostly exact zeros, every non-zero value "spikes": nothing to read there.
    outliers = [
        Spike(step=s, value=v, level=lv, size_noise=z, kind=kind)
        for s, v, lv, z, kind in robust.spikes(series.steps, series.values, series.noise)
    ] if metric in SPIKE_METRICS and not robust.zero_heavy(series.values) else []
    if split == "eval":
        # The first evaluation has no level before it to spike from: it is where the run started.
        outliers = [o for o in outliers if o.step != int(series.steps[0])]
    summary = SignalSummary(
        metric=metric, split=split, points=series.n, first_step=int(series.steps[0]),
        last_step=int(series.steps[-1]), start=start, now=now, peak=peak,
        peak_step=peak_step, trough=trough, trough_step=trough_step,
        noise=series.noise, drop_from_peak_noise=(peak - now) / noise, rise_from_trough_noise=(now - trough) / noise,
        trend=recent.direction,
        trend_window_start=recent.window_start, trend_change=recent.change, trend_change_noise=recent.change_noise,
        trend_p=recent.p_value, slowing=robust.slowing(series), plateau_start=robust.plateau_start(
            series, recent.direction),
        change_points=cps, discontinuities=jumps, spikes=outliers,
        latest=None if split == "eval" else _latest_if_apart(metric, series, now, noise),
    )
    return Reading(series, summary)


LATEST_SHARE = 6  # the last sixth of a stretch: short enough to show where a fast move at the end has got to


def _latest_if_apart(metric: str, series: robust.Series, now: float, noise: float) -> Stretch | None:
    """A reward's last few logged steps, when their mean stands more than three noise units from the stretch mean.

    A reward's `now` is the mean of the latest tenth of the run, the level its decline tests compare; a collapse in
    the last few dozen steps shows in it only in part. The sheet then quotes both.
    """
    if not metric.startswith(MEAN_LEVEL_PREFIXES) or series.n < 6:
        return None
    k = max(3, robust.stretch_width(series.n) // LATEST_SHARE)
    mean = float(np.mean(series.values[-k:]))
    if abs(mean - now) <= 3 * noise:
        return None
    return Stretch(first_step=int(series.steps[-k]), last_step=int(series.steps[-1]), mean=mean)


EDGE_POINTS = 200  # logged points, at most, a training signal's start and now are read over


def _edge_points(series: robust.Series) -> int:
    """Reduced points a training signal's start and now are read over: about a tenth, at most `EDGE_POINTS` logged.

    A tenth of a long run is thousands of steps: a blow-up in the last few hundred steps of a 20,000-step run is the
    level now, not a twentieth of a median.
    """
    return max(3, min(robust.edge_width(len(series.red_values)), math.ceil(EDGE_POINTS / series.bin_size)))


@dataclass
class SignalBook:
    """Readings of a run's curves, computed on first use and kept."""

    run: Run
    _cache: dict[tuple[str, str], Reading | None] = field(default_factory=dict)
    _derived: dict[str, Reading | None] = field(default_factory=dict)

    def get(self, metric: str, split: Split = "train") -> Reading | None:
        """The reading of one metric, or None when it is absent or too short."""
        key = (metric, split)
        if key not in self._cache:
            series = self.run.series(metric, split)
            reading = describe(metric, split, series.index.to_numpy(), series.to_numpy()) if len(series) else None
            interval = self.run.facts.logging_interval or 1
            if reading is not None and split == "train" and self.run.facts.framework == "trl" and interval > 1:
                reading = replace(reading, averaged_steps=interval)
            self._cache[key] = reading
        return self._cache[key]

    def derived(self, name: str, build: Callable[[], Reading | None]) -> Reading | None:
        """A reading computed from others (a sum of two logged curves), built on first use and kept.

        Kept apart from the logged readings: `all_summaries` lists what the run logged.
        """
        if name not in self._derived:
            self._derived[name] = build()
        return self._derived[name]

    def summary(self, metric: str, split: Split = "train") -> SignalSummary | None:
        """Just the summary."""
        reading = self.get(metric, split)
        return reading.summary if reading else None

    def all_summaries(self) -> dict[str, SignalSummary]:
        """Every reading made so far, keyed `metric` (train) or `eval/metric`."""
        out: dict[str, SignalSummary] = {}
        for (metric, split), reading in sorted(self._cache.items()):
            if reading is not None:
                out[metric if split == "train" else f"eval/{metric}"] = reading.summary
        return out


def passing_jump(reading: Reading, factor: float, planned: int | None = None) -> tuple[int, float, float] | None:
    """A jump up by `factor` or more after the settling-in, held a while, wherever the curve went after it.

    Returns (step of the biggest single rise there, level before, level after), from the log-scale
    discontinuities (both sides steady). Unlike `first_rise`, the jump need not be among the run's largest
    changes nor stand on a level: a lurch that lasted a while and eased back is found as well as one that stayed.
    """
    steps, values = reading.series.steps, reading.series.values
    start = settled_step(reading.summary, planned)
    jumps = [(step, before, after) for step, before, after, ratio in robust.discontinuities(steps, values)
             if step > start and ratio >= factor]
    if not jumps:
        return None
    step, before, after = jumps[0]
    # The change test places the jump anywhere its medians see it; the lurch is the biggest single rise near there.
    near = np.flatnonzero(np.abs(steps - step) <= 10 * max(1, int(np.median(np.diff(steps)))))
    if len(near) >= 2:
        step = int(steps[near[0] + 1 + int(np.argmax(np.diff(values[near[0]:near[-1] + 1])))])
    return step, before, after


LASTING_DAMAGE_T = 3.0  # standard errors the reward since a lurch must stand below the stretch just before it


def lasting_damage(reward: Reading, step: int) -> robust.LevelShift | None:
    """The reward's fall from the stretch just before `step` to the latest stretch since, when it is lasting.

    Lasting: LASTING_DAMAGE_T standard errors or more, and material (a percent of the reward's scale). None when
    the reward got back, or when either side has too few points to say.
    """
    series = reward.series
    width = robust.stretch_width(series.n)
    before, since = np.zeros(series.n, dtype=bool), np.zeros(series.n, dtype=bool)
    before[np.flatnonzero(series.steps < step)[-width:]] = True
    since[np.flatnonzero(series.steps >= step)[-width:]] = True
    if before.sum() < 3 or since.sum() < 3:
        return None
    shift = robust.level_shift(series, before, since)
    return shift if shift.t <= -LASTING_DAMAGE_T and robust.material_drop(shift, series) else None
