"""Robust statistics for noisy training curves.

RL curves are autocorrelated (consecutive batches share a policy), spiky, and logged at uneven intervals.
Everything here is built so that noise alone does not produce a finding:

* the noise level comes from first differences (trends and level shifts cancel out of them), corrected for
  lag-1 autocorrelation, so a wandering but trendless curve is not mistaken for a moving one;
* trends are Theil-Sen slopes tested with Mann-Kendall, with the variance inflated by the autocorrelation
  (an effective sample size), never a least-squares line through spikes;
* change points come from binary segmentation, kept only when the shift is large against the noise *and*
  significant with the effective sample size;
* long series are reduced to at most a few hundred bin medians first, which keeps a 100,000-step run cheap.

Every function here is O(n) or O(n log n) in the raw points: the all-pairs statistics (Theil-Sen, Mann-Kendall)
and the breakpoint scans run on the reduced curve, whose length is bounded by `MAX_POINTS`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
import pandas as pd

MAX_POINTS = 400
OBVIOUS_CHANGE_NOISE = 4.0
MAD_TO_SD = 1.4826
RHO_PRIOR_POINTS = 30  # autocorrelation estimates from fewer points than this are shrunk by at least half
MIN_FLAT_POINTS = 20  # logged points after a bend before a plateau can be told from a noisy, slow climb
MIN_CLIMB_POINTS = 2  # logged points before a bend


@dataclass(frozen=True)
class Series:
    """One curve prepared for analysis: raw points, and a reduced copy (bin medians) for the slow parts."""

    steps: np.ndarray  # raw, sorted, int64
    values: np.ndarray  # raw, finite, float64
    red_steps: np.ndarray  # reduced: median step of each bin
    red_values: np.ndarray  # reduced: median value of each bin
    bin_size: int
    noise: float  # point-to-point noise of the raw values (robust standard deviation)
    rho: float  # lag-1 autocorrelation of the noise, from differences
    scatter: float  # the same, tails included (plain standard deviation): what the error of a stretch mean needs
    red_rho_local: float  # of the reduced points, from locally centred differences (blind to a bending trend)
    smooth: np.ndarray  # smoothed level on the reduced grid

    @property
    def n(self) -> int:
        """Number of raw points."""
        return len(self.values)

    @property
    def red_noise(self) -> float:
        """Noise of one reduced point (a bin median of `bin_size` raw points)."""
        return self.noise * (1.2533 / math.sqrt(self.bin_size) if self.bin_size > 1 else 1.0)


def prepare(steps: np.ndarray, values: np.ndarray, max_points: int = MAX_POINTS) -> Series:
    """Reduce, smooth and measure the noise of one curve (steps sorted, values finite)."""
    steps = np.asarray(steps, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    bin_size = max(1, math.ceil(n / max_points))
    if bin_size > 1:
        usable = (n // bin_size) * bin_size
        red_values = row_medians(values[:usable].reshape(-1, bin_size))
        # as `np.median` of the integer steps: averaged in float64
        red_steps = row_medians(steps[:usable].astype(np.float64).reshape(-1, bin_size)).astype(np.int64)
        if usable < n:  # the tail keeps its own bin so the latest steps are never dropped
            red_values = np.append(red_values, median(values[usable:]))
            red_steps = np.append(red_steps, int(np.median(steps[usable:])))
    else:
        red_values, red_steps = values.copy(), steps.copy()
    noise, rho = noise_level(values)
    # Trends are tested on the reduced points, so their autocorrelation is measured there (also cheap: a
    # running median over 100,000 raw differences per curve would cost more than the rest of the diagnosis).
    _, red_rho_local = noise_level(red_values, local=True)
    return Series(steps, values, red_steps, red_values, bin_size, noise, rho, scatter_level(values, noise, rho),
                  red_rho_local, smooth(red_values))


def median(values: np.ndarray) -> float:
    """`np.median` of a 1-D array, the same number, in a single-pivot selection.

    `np.median` selects its middle pair and the largest value (its NaN check) in one multi-pivot `partition`, which
    numpy runs with its generic introselect; one pivot runs numpy's vectorised quickselect, several times faster on
    a long curve (0.3 ms against 2.1-2.8 ms on 300,000 values). The other middle value of an even count is the
    largest below the pivot, and the two are averaged as `np.median` averages them. An input holding NaN, or not
    floating point, goes to `np.median` itself.
    """
    values = np.asarray(values)
    n = len(values)
    if n < 64 or values.ndim != 1 or values.dtype != np.float64 or bool(np.isnan(values).any()):
        return float(np.median(values))
    middle = n // 2
    part = np.partition(values, middle)
    found = part[middle] if n % 2 else (part[:middle].max() + part[middle]) / 2
    if found == 0:  # 0.0 or -0.0: which of equal zeros lands in the middle is the selection's; ask np.median's
        return float(np.median(values))
    return float(found)


def row_medians(rows: np.ndarray) -> np.ndarray:
    """`np.median(rows, axis=1)` of a 2-D float array, the same numbers, by a single-pivot selection (see `median`)."""
    rows = np.asarray(rows)
    if rows.ndim != 2 or rows.dtype != np.float64 or rows.shape[1] < 2 or not rows.shape[0]:
        return np.asarray(np.median(rows, axis=1))
    middle = rows.shape[1] // 2
    part = np.partition(rows, middle, axis=1)
    out = part[:, middle] if rows.shape[1] % 2 else (part[:, :middle].max(axis=1) + part[:, middle]) / 2
    nan = np.isnan(part).any(axis=1)
    if nan.any():  # as `np.median`: a row holding NaN has a NaN median
        out = np.where(nan, math.nan, out)
    zero = out == 0
    if zero.any():  # 0.0 or -0.0: which of equal zeros lands in the middle is the selection's; ask np.median's
        out = out.copy()
        out[zero] = np.median(rows[zero], axis=1)
    return np.asarray(out)


def scatter_level(values: np.ndarray, noise: float, rho: float) -> float:
    """Point-to-point spread with its tails, never below the robust noise.

    The plain standard deviation of first differences, corrected as `noise_level` corrects its robust one.
    The robust noise ignores the occasional far-off value, which is right for trends and change points; a
    stretch *mean*, though, carries every value, so its error must too. A reward that sits at 0.125 on most
    steps and jumps to 0.9 now and then has a tiny robust noise, but its stretch means wander by the jumps.
    """
    if len(values) < 4:
        return noise
    diffs = np.diff(values)
    spread = float(np.std(diffs)) / math.sqrt(2.0 * (1.0 - rho))
    return max(noise, spread)


def noise_level(values: np.ndarray, local: bool = False) -> tuple[float, float]:
    """Robust noise standard deviation and lag-1 autocorrelation, from first differences.

    For AR(1) noise with variance s^2 and autocorrelation r, differences have variance 2 s^2 (1 - r) and
    lag-1 autocorrelation -(1 - r) / 2; a trend or a level shift barely touches either.

    >>> rng = np.random.default_rng(0)
    >>> round(noise_level(rng.normal(0, 2.0, 5000))[0], 1)
    2.0
    """
    if len(values) < 4:
        spread = float(np.std(values)) if len(values) > 1 else 0.0
        return spread, 0.0
    diffs = np.diff(values)
    center: np.ndarray | float = median(diffs)
    if local and len(diffs) >= 9:
        # Centred on a running median, differences forget a slowly bending trend (fast early learning).
        center = pd.Series(diffs).rolling(9, center=True, min_periods=1).median().to_numpy()
    mad = float(median(np.abs(diffs - center))) * MAD_TO_SD
    if mad == 0.0:  # discrete or mostly constant metrics: fall back to the mean absolute deviation
        mad = float(np.mean(np.abs(diffs - center))) * 1.2533
    if mad == 0.0:
        return 0.0, 0.0
    clipped = np.clip(diffs - center, -4 * mad, 4 * mad)  # spikes must not set the autocorrelation
    denominator = float(np.dot(clipped, clipped))
    acf_diff = float(np.dot(clipped[1:], clipped[:-1])) / denominator if denominator else -0.5
    # An autocorrelation read off a few dozen points is mostly noise (its error is about 2 / sqrt(n) here), and
    # a dip or a bend alone can fake a high one; it is shrunk towards 0, the value for fresh batches each step.
    rho = min(0.9, max(0.0, 1.0 + 2.0 * acf_diff)) * len(diffs) / (len(diffs) + RHO_PRIOR_POINTS)
    return mad / math.sqrt(2.0 * (1.0 - rho)), rho


def smooth(values: np.ndarray) -> np.ndarray:
    """A running median (spikes do not move it) followed by a short running mean."""
    n = len(values)
    if n < 5:
        return values.astype(np.float64).copy()
    window = int(min(31, max(3, n // 12)) | 1)
    series = pd.Series(values)
    median = series.rolling(window, center=True, min_periods=1).median()
    return median.rolling(max(3, window // 2) | 1, center=True, min_periods=1).mean().to_numpy()


def edge_width(n: int) -> int:
    """Points in the first or last stretch `edge_level` reads (about a tenth of the curve, 3 to 50)."""
    return int(min(50, max(3, n // 10)))


def edge_level(values: np.ndarray, at_end: bool, width: int | None = None) -> float:
    """Robust level of the first or last stretch of a curve: the median of `width` points (about a tenth of it)."""
    k = edge_width(len(values)) if width is None else width
    part = values[-k:] if at_end else values[:k]
    return float(np.median(part))


def finite_median(values: np.ndarray) -> float | None:
    """Median of the finite values (NaN and inf left out), or None when there are none."""
    finite = values[np.isfinite(values)]
    return float(np.median(finite)) if len(finite) else None


def normal_sf(z: float) -> float:
    """Upper tail of the standard normal distribution, P(Z > z)."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


class TheilSen(NamedTuple):
    """A Theil-Sen line and the confidence interval of its slope (Sen 1968)."""

    slope: float
    intercept: float  # median(y) - slope * median(x)
    low_slope: float
    high_slope: float


# All pairs of points are n^2 / 2 slopes: past this many points the fit runs on this many evenly spaced ones.
# The curves fitted here are reduced ones (at most `MAX_POINTS` + 1) or evaluations (dozens to hundreds), so
# the thinning never touches a run of ordinary length; it only keeps a pathological input from n^2 memory.
THEIL_SEN_MAX_POINTS = 2000


def theil_sen(y: np.ndarray, x: np.ndarray, alpha: float = 0.95) -> TheilSen:
    """Median of the pairwise slopes, with the two-sided `alpha` confidence interval of Sen (1968), eq. 2.6.

    Pairs with equal x are left out; ties in x and in y narrow the variance of the rank statistic. The same
    numbers as `scipy.stats.theilslopes(y, x, alpha)` (checked against it in the tests).
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    x = np.asarray(x, dtype=np.float64).ravel()
    if len(x) > THEIL_SEN_MAX_POINTS:
        keep = np.unique(np.linspace(0, len(x) - 1, THEIL_SEN_MAX_POINTS).round().astype(np.int64))
        x, y = x[keep], y[keep]
    dx = x[:, None] - x[None, :]
    forward = dx > 0
    slopes = (y[:, None] - y[None, :])[forward] / dx[forward]
    slopes.sort()
    if not len(slopes):  # every x the same: no slope to read
        return TheilSen(math.nan, math.nan, math.nan, math.nan)
    slope = float(np.median(slopes))
    intercept = float(np.median(y) - slope * np.median(x))
    z = NormalDist().inv_cdf(min(alpha, 1.0 - alpha) / 2.0)
    n = len(y)
    ties = sum(_tie_term(counts) for counts in (_tie_counts(x), _tie_counts(y)))
    variance = 1 / 18.0 * (n * (n - 1) * (2 * n + 5) - ties)
    if variance < 0:  # ties on both sides (a constant y over repeated x): no interval to read
        return TheilSen(slope, intercept, math.nan, math.nan)
    sigma = math.sqrt(variance)
    upper = min(int(np.round((len(slopes) - z * sigma) / 2.0)), len(slopes) - 1)
    lower = max(int(np.round((len(slopes) + z * sigma) / 2.0)) - 1, 0)
    return TheilSen(slope, intercept, float(slopes[lower]), float(slopes[upper]))


def _tie_counts(values: np.ndarray) -> np.ndarray:
    return np.unique(values, return_counts=True)[1]


def _tie_term(counts: np.ndarray) -> int:
    """Sum of t (t - 1) (2 t + 5) over groups of t tied values (0 for values that occur once)."""
    t = counts.astype(np.int64)
    return int(np.sum(t * (t - 1) * (2 * t + 5)))


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, tied values sharing the mean of their ranks."""
    # Tied values share one rank whatever their order, so any sort gives the same ranks (numpy's vectorised
    # quicksort: 4 ms against 25 ms for a stable sort of 300,000 values); NaNs, each its own rank, keep the stable one.
    unordered_nan = values.dtype.kind in "fc" and bool(np.isnan(values).any())
    order = np.argsort(values, kind="stable" if unordered_nan else "quicksort")
    ordered = values[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    ends = np.append(starts[1:], len(values))  # one past each group of equal values
    group_rank = (starts + 1 + ends) / 2.0  # mean of ranks starts+1 .. ends
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.repeat(group_rank, ends - starts)
    return ranks


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rank correlation (ties get average ranks); NaN when either side is constant."""
    rx, ry = average_ranks(np.asarray(x)), average_ranks(np.asarray(y))
    if float(np.ptp(rx)) == 0.0 or float(np.ptp(ry)) == 0.0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


@dataclass(frozen=True)
class TrendResult:
    """The recent direction of a curve."""

    direction: str  # rising | falling | flat
    change: float  # Theil-Sen change across the window, metric units
    change_noise: float
    p_value: float
    window_start: int  # first step of the window


def mann_kendall_p(y: np.ndarray, rho: float) -> float:
    """Two-sided Mann-Kendall p-value with ties, variance inflated for lag-1 autocorrelation `rho`."""
    n = len(y)
    if n < 4:
        return 1.0
    signs = np.sign(y[None, :] - y[:, None])
    s = float(np.triu(signs, 1).sum())
    _, counts = np.unique(y, return_counts=True)
    ties = float(np.sum(counts * (counts - 1) * (2 * counts + 5)))
    variance = (n * (n - 1) * (2 * n + 5) - ties) / 18.0
    if variance <= 0:
        return 1.0
    inflation = (1 + rho) / (1 - rho) if rho < 1 else float("inf")
    z = (s - math.copysign(1.0, s)) / math.sqrt(variance * inflation) if s else 0.0
    return 2 * normal_sf(abs(z))


MIN_TREND_POINTS = 4  # fewer points in a window is no test of a direction (reported flat, with no change)


def trend(
    series: Series, start_step: int | None = None, alpha: float = 0.05, min_change_noise: float = 0.25,
    end_step: int | None = None,
) -> TrendResult:
    """Direction over part of a curve (by default its last third, at least 8 points; `end_step` exclusive).

    A trend needs both a significant Mann-Kendall test and a change of at least `min_change_noise` noise
    units across the window, so that a very long run does not report a drift nobody would care about.
    """
    steps, values = series.red_steps, series.red_values
    if start_step is None:
        span = steps[-1] - steps[0]
        start_step = int(steps[-1] - span / 3) if span else int(steps[0])
    mask = steps >= start_step
    if end_step is not None:
        mask &= steps < end_step
    if mask.sum() < 8 and end_step is None:
        mask = np.zeros(len(steps), dtype=bool)
        mask[-min(8, len(steps)):] = True
    x, y = steps[mask].astype(np.float64), values[mask]
    if len(y) < MIN_TREND_POINTS or x[-1] == x[0]:
        return TrendResult("flat", 0.0, 0.0, 1.0, int(x[0]) if len(x) else 0)
    fit = theil_sen(y, x)
    slope = float(fit.slope)
    change = slope * float(x[-1] - x[0])
    noise = max(series.noise, noise_floor(series.values))
    # The noise's autocorrelation, seen two ways: around the window's own line (blind to the run's early
    # bend but unreliable in short windows) and from locally centred differences over the whole run.
    rho = max(_residual_rho(y - (fit.intercept + slope * x)), _reduced_rho(series, local=True))
    p_value = mann_kendall_p(y, rho)
    change_noise = change / noise
    direction = "flat"
    # `noise` is the curve's stationary spread, so no amount of autocorrelation carries it this far on its
    # own: a move this large is a trend even when the window is too short or too bent for the test.
    obvious = abs(change_noise) >= OBVIOUS_CHANGE_NOISE
    if (p_value < alpha and abs(change_noise) >= min_change_noise) or obvious:
        direction = "rising" if change > 0 else "falling"
    return TrendResult(direction, change, change_noise, p_value, int(x[0]))


def _reduced_rho(series: Series, local: bool) -> float:
    """Autocorrelation of the noise between consecutive reduced points (bin medians decorrelate)."""
    if local:
        return series.red_rho_local
    return series.rho if series.bin_size == 1 else min(0.9, series.rho ** series.bin_size)


def _residual_rho(residuals: np.ndarray) -> float:
    """Lag-1 autocorrelation of residuals around the window's own trend line, bias-corrected for short windows.

    Measured inside the window rather than over the whole run: early fast learning bends the curve, and
    over the whole run that bend would read as strongly autocorrelated noise and hide a real recent trend.
    """
    n = len(residuals)
    centred = residuals - np.median(residuals)
    scale = float(np.median(np.abs(centred))) * MAD_TO_SD
    if n < 6 or scale == 0.0:
        return 0.0
    clipped = np.clip(centred, -4 * scale, 4 * scale)
    r1 = float(np.dot(clipped[1:], clipped[:-1]) / np.dot(clipped, clipped))
    return min(0.9, max(0.0, r1 + (1 + 3 * r1) / n))


def noise_floor(values: np.ndarray) -> float:
    """A tiny positive noise for constant curves, so ratios stay finite."""
    scale = float(np.max(np.abs(values))) if len(values) else 0.0
    return max(1e-12, 1e-6 * scale)


def slowing(series: Series) -> bool | None:
    """Whether the latest third moves at well under half the rate of the middle third (None: too short)."""
    steps = series.red_steps
    if len(steps) < 12:
        return None
    span = steps[-1] - steps[0]
    middle = trend(series, int(steps[0] + span / 3))
    thirds = (steps >= steps[0] + span / 3) & (steps < steps[0] + 2 * span / 3)
    if thirds.sum() < 4:
        return None
    x, y = steps[thirds].astype(np.float64), series.red_values[thirds]
    middle_slope = float(theil_sen(y, x).slope)
    latest = trend(series)
    latest_slope = latest.change / max(1.0, float(steps[-1] - latest.window_start))
    if middle.direction == "flat" or middle_slope == 0:
        return None
    same_direction = math.copysign(1.0, latest_slope) == math.copysign(1.0, middle_slope)
    return (not same_direction) or abs(latest_slope) < 0.5 * abs(middle_slope)


def change_points(
    series: Series, max_changes: int = 5, min_jump_noise: float = 0.75, min_t: float = 5.0
) -> list[tuple[int, float, float]]:
    """Lasting level shifts: (index into the reduced series, level before, level after).

    Binary segmentation on the reduced curve. A split is kept when the two sides differ by at least
    `min_jump_noise` raw-noise units and by `min_t` standard errors computed with the effective sample
    size; `min_t` is high because the best of hundreds of candidate splits is being tested.
    """
    values = series.red_values
    n = len(values)
    min_segment = max(4, n // 20)
    if n < 2 * min_segment:
        return []
    noise = max(series.noise, noise_floor(series.values))
    red_rho = _reduced_rho(series, local=False)
    shrink = (1 - red_rho) / (1 + red_rho)
    found: list[tuple[int, float, float]] = []
    segments = [(0, n)]
    while segments and len(found) < max_changes:
        best: tuple[float, int, int, int] | None = None
        for lo, hi in segments:
            split = _best_split(values[lo:hi], min_segment)
            if split is None:
                continue
            k, gain = split
            if best is None or gain > best[0]:
                best = (gain, lo, hi, lo + k)
        if best is None:
            break
        _, lo, hi, k = best
        left, right = values[lo:k], values[k:hi]
        jump = float(np.mean(right) - np.mean(left))
        residual = np.concatenate((left - np.mean(left), right - np.mean(right)))
        spread = max(float(np.std(residual)), series.red_noise, noise_floor(series.values))
        n_left, n_right = max(1.0, len(left) * shrink), max(1.0, len(right) * shrink)
        t_stat = abs(jump) / (spread * math.sqrt(1 / n_left + 1 / n_right))
        segments.remove((lo, hi))
        if abs(jump) >= min_jump_noise * noise and t_stat >= min_t:
            found.append((k, float(np.median(left)), float(np.median(right))))
            segments.extend([(lo, k), (k, hi)])
    return sorted(found)


def segment_levels(series: Series, cuts: list[int]) -> list[tuple[float, float]]:
    """For each shift (an index into the reduced series, sorted), the medians of the segments either side of it.

    A segment runs from the shift before to the shift after, so consecutive shifts chain: one's level after is
    the next one's level before, as a reader follows the curve. (`change_points` gives each shift the levels of the
    split that found it, whose sides can span shifts found later inside them; its tests are written on those.)
    """
    values = series.red_values
    bounds = [0, *cuts, len(values)]
    return [(float(np.median(values[bounds[i]:k])), float(np.median(values[k:bounds[i + 2]])))
            for i, k in enumerate(cuts)]


def _best_split(values: np.ndarray, min_segment: int) -> tuple[int, float] | None:
    n = len(values)
    if n < 2 * min_segment:
        return None
    cumsum = np.cumsum(values)
    total = cumsum[-1]
    k = np.arange(min_segment, n - min_segment + 1)
    left_mean = cumsum[k - 1] / k
    right_mean = (total - cumsum[k - 1]) / (n - k)
    gain = k * (n - k) / n * (left_mean - right_mean) ** 2
    best = int(np.argmax(gain))
    return int(k[best]), float(gain[best])


MAX_SPIKES = 10  # spikes kept per curve, the largest first: a count of 10 means "at least 10"


def spikes(steps: np.ndarray, values: np.ndarray, noise: float, threshold: float = 6.0,
           limit: int = MAX_SPIKES) -> list[
    tuple[int, float, float, float, str]
]:
    """Points far from their neighbours: (step, value, local level, size in noise units, outlier|regime_change)."""
    n = len(values)
    if n < 7 or noise <= 0:
        return []
    level = _spike_levels(values, noise, threshold)
    z = (values - level) / noise
    candidates = np.flatnonzero(np.abs(z) >= threshold)
    if not len(candidates):
        return []
    candidates = candidates[np.argsort(-np.abs(z[candidates]))][:limit]
    out = []
    for i in sorted(int(c) for c in candidates):
        before = values[max(0, i - 5):i]
        after = values[i + 1:i + 6]
        if len(before) and len(after):
            stays_away = abs(float(np.median(after)) - float(np.median(before))) > 3 * noise and (
                math.copysign(1, float(np.median(after)) - float(np.median(before))) == math.copysign(1, z[i])
            )
        else:
            stays_away = False
        out.append((int(steps[i]), float(values[i]), float(level[i]), float(z[i]),
                    "regime_change" if stays_away else "outlier"))
    return out


_SPIKE_WINDOW = 7
_SPIKE_MIN_PERIODS = 3


def _spike_levels(values: np.ndarray, noise: float, threshold: float) -> np.ndarray:
    """`spikes`' local levels (`centred_median` of 7), at every point that can be a spike; NaN elsewhere.

    A point's level, the median of its window, lies between the window's lowest and highest values, so a point
    within `threshold` noise units of both can be no spike: (v - level) / noise is at most (v - lowest) / noise in
    floating point too (subtraction and division round monotonically). The window's extremes take 12 vectorised
    passes; the medians, a sorted window each as `centred_median` sorts them, only where the bound allows a
    spike (a handful on a long curve instead of every point: `spikes` on 300,000 points 4.2 ms against 13.3 ms).
    The ends and any curve holding a non-finite value get `centred_median` itself.
    """
    n = len(values)
    window, half = _SPIKE_WINDOW, _SPIKE_WINDOW // 2
    if n < 64 or values.dtype != np.float64 or not bool(np.isfinite(values).all()):
        return centred_median(values, window, _SPIKE_MIN_PERIODS)
    inner = n - window + 1
    lowest, highest = values[:inner].copy(), values[:inner].copy()
    for shift in range(1, window):
        np.minimum(lowest, values[shift:shift + inner], out=lowest)
        np.maximum(highest, values[shift:shift + inner], out=highest)
    centre = values[half:n - half]
    maybe = ((centre - lowest) / noise >= threshold) | ((centre - highest) / noise <= -threshold)
    at = np.flatnonzero(maybe) + half
    level = np.full(n, math.nan)
    if len(at):
        windows = np.lib.stride_tricks.sliding_window_view(values, window)[at - half]
        level[at] = np.sort(windows, axis=1)[:, half]  # as `trailing_median` sorts each window
    for i in [*range(half), *range(n - half, n)]:  # the ends' shorter windows, as `centred_median` reads them
        level[i] = float(np.median(values[max(0, i - half):i + half + 1]))
    return level


# Rows of a sliding window sorted at a time: bounds the memory of the windowed medians below.
_WINDOW_BLOCK = 1 << 16


def trailing_median(values: np.ndarray, window: int) -> np.ndarray:
    """Median of the `window` values ending at each index (NaN before the first full window).

    The numbers of `pd.Series(values).rolling(window).median()` for finite values, from sorted sliding windows:
    for the short windows used here several times faster than pandas' skiplist on long curves.
    """
    n = len(values)
    out = np.full(n, math.nan)
    if n < window or window < 1:
        return out
    windows = np.lib.stride_tricks.sliding_window_view(np.asarray(values, dtype=np.float64), window)
    middle = window // 2
    for start in range(0, len(windows), _WINDOW_BLOCK):
        ordered = np.sort(windows[start:start + _WINDOW_BLOCK], axis=1)
        median = ordered[:, middle] if window % 2 else (ordered[:, middle - 1] + ordered[:, middle]) / 2
        out[window - 1 + start:window - 1 + start + len(median)] = median
    return out


def centred_median(values: np.ndarray, window: int, min_periods: int) -> np.ndarray:
    """Median of the `window` values centred on each index, fewer at the ends (NaN under `min_periods`).

    The numbers of `pd.Series(values).rolling(window, center=True, min_periods=...).median()` for finite values
    and an odd window.
    """
    n = len(values)
    half = window // 2
    out = np.full(n, math.nan)
    out[half:n - half] = trailing_median(values, window)[window - 1:]
    for i in [*range(min(half, n)), *range(max(half, n - half), n)]:
        part = values[max(0, i - half):i + half + 1]
        if len(part) >= min_periods:
            out[i] = float(np.median(part))
    return out


def _trailing_medians_for_jumps(values: np.ndarray, k: int, least: float) -> np.ndarray | None:
    """`trailing_median(values, k)` where a jump of `least` or more between neighbouring stretches may be read.

    `discontinuities` compares the median of the k values before each point with that of the k from it. Each
    median lies between its stretch's lowest and highest values, so the two can differ by `least` only where the
    stretches' extremes do (in floating point too); elsewhere the median is left NaN, as no jump is read there.
    None when no point has such a pair (a smooth curve: nothing more to compute). Short curves, curves where such
    pairs are common (an eighth of the points or more) and any holding a non-finite value get `trailing_median`.
    """
    n = len(values)
    if n < 64 or not bool(np.isfinite(values).all()):
        return trailing_median(values, k)
    count = n - k + 1  # stretches values[j:j + k]
    lowest, highest = values[:count].copy(), values[:count].copy()
    for shift in range(1, k):
        np.minimum(lowest, values[shift:shift + count], out=lowest)
        np.maximum(highest, values[shift:shift + count], out=highest)
    # the points k..n-k have a full stretch before them (starting k earlier) and one from them
    later, earlier = slice(k, n - k + 1), slice(0, n - 2 * k + 1)
    reach = (highest[later] - lowest[earlier] >= least) | (lowest[later] - highest[earlier] <= -least)
    if not reach.any():
        return None
    if np.count_nonzero(reach) * 8 > len(reach):  # a curve jumping about everywhere: every median, in sorted blocks
        return trailing_median(values, k)
    at = np.flatnonzero(reach) + k
    needed = np.zeros(count, dtype=bool)
    needed[at] = True
    needed[at - k] = True
    starts = np.flatnonzero(needed)
    ordered = np.sort(np.lib.stride_tricks.sliding_window_view(values, k)[starts], axis=1)  # as `trailing_median`
    middle = k // 2
    out = np.full(n, math.nan)
    out[starts + k - 1] = ordered[:, middle] if k % 2 else (ordered[:, middle - 1] + ordered[:, middle]) / 2
    return out


def discontinuities(steps: np.ndarray, values: np.ndarray, limit: int = 5) -> list[tuple[int, float, float, float]]:
    """Sudden doublings or halvings of a curve's magnitude: (step, before, after, ratio).

    Compares the median magnitude just before and just after each point; both sides must be steady
    (their own spread well under the jump), so noise around zero does not count.
    """
    n = len(values)
    k = int(min(10, max(3, n // 20)))
    if n < 2 * k + 1 or zero_heavy(values):
        return []
    magnitude = np.abs(values)
    floor = max(material_floor(values), 1e-3 * float(median(magnitude)) if n else 0.0)
    logm = np.log(np.maximum(magnitude, floor))
    trailing = _trailing_medians_for_jumps(logm, k, math.log(2))  # of the k values ending at each index
    if trailing is None:
        return []  # no two neighbouring stretches far enough apart for a doubling
    series = pd.Series(logm)
    before = np.concatenate(([math.nan], trailing[:-1]))  # ... ending just before it
    after = np.concatenate((trailing[k - 1:], np.full(k - 1, math.nan)))  # of the k values starting at it
    spread_before = series.rolling(k).std().shift(1).to_numpy()
    spread_after = series[::-1].rolling(k).std()[::-1].to_numpy()
    jump = after - before
    steady = (np.maximum(spread_before, spread_after) < np.abs(jump) / 2) & (np.abs(jump) >= math.log(2))
    steady &= np.isfinite(jump)
    out: list[tuple[int, float, float, float]] = []
    candidates = np.flatnonzero(steady)
    # Neighbouring indices see the same jump: keep the sharpest one of each run of candidates.
    groups = np.split(candidates, np.flatnonzero(np.diff(candidates) > k) + 1) if len(candidates) else []
    for group in groups:
        i = int(group[np.argmax(np.abs(jump[group]))])
        out.append((int(steps[i]), float(math.exp(before[i])), float(math.exp(after[i])), float(math.exp(jump[i]))))
        if len(out) >= limit:
            break
    return out


def plateau_start(series: Series, trend_direction: str) -> int | None:
    """First step of the final stretch where the level stays within half a noise unit of where it is now."""
    if trend_direction != "flat" or len(series.smooth) < 8:
        return None
    band = 0.5 * max(series.noise, noise_floor(series.values))
    now = float(series.smooth[-1])
    outside = np.flatnonzero(np.abs(series.smooth - now) > band)
    start_index = int(outside[-1]) + 1 if len(outside) else 0
    if start_index >= len(series.smooth):
        return None
    span = series.red_steps[-1] - series.red_steps[0]
    if span and (series.red_steps[-1] - series.red_steps[start_index]) < 0.2 * span:
        return None
    return int(series.red_steps[start_index])


@dataclass(frozen=True)
class LevelShift:
    """The difference between two stretches of a curve, with its significance."""

    before: float  # mean of the first stretch
    after: float  # mean of the second
    t: float  # difference in standard errors, with the effective sample size of autocorrelated noise


def level_shift(series: Series, first: np.ndarray, second: np.ndarray) -> LevelShift:
    """Compare two stretches of the raw curve (boolean masks): is the change more than noise?

    A stretch mean has a much smaller error than one point, so a fall of one noise unit sustained over fifty
    steps is significant where a single step of the same size is not.
    """
    a, b = series.values[first], series.values[second]
    if len(a) < 2 or len(b) < 2:
        return LevelShift(float(np.mean(a)) if len(a) else math.nan, float(np.mean(b)) if len(b) else math.nan, 0.0)
    shrink = (1 - series.rho) / (1 + series.rho)
    noise = max(series.scatter, noise_floor(series.values))
    error = noise * math.sqrt(1 / max(1.0, len(a) * shrink) + 1 / max(1.0, len(b) * shrink))
    before, after = float(np.mean(a)), float(np.mean(b))
    return LevelShift(before, after, (after - before) / error)


MATERIAL_DROP = 0.01  # of a reward's scale: a smaller fall is no worse model, however many points show it


def material_drop(shift: LevelShift, series: Series) -> bool:
    """Whether a fall from one stretch to another is big enough to matter: 1% of the curve's scale or more.

    On a long, quiet curve a fall of 0.003 on a reward at 0.97 can stand several standard errors out; no
    practitioner would give up steps for it. The scale is the larger of the earlier level and the curve's own spread.
    """
    spread = float(np.percentile(series.values, 95) - np.percentile(series.values, 5))
    return shift.before - shift.after >= MATERIAL_DROP * max(abs(shift.before), spread)


def level_at(series: Series, step: int) -> float:
    """The smoothed level at the reduced point nearest `step`."""
    index = int(np.argmin(np.abs(series.red_steps - step)))
    return float(series.smooth[index])


def nearest(steps: np.ndarray, step: int, width: int) -> np.ndarray:
    """Mask of the `width` points whose steps are nearest `step` (a stretch around it, ties to the earlier)."""
    mask = np.zeros(len(steps), dtype=bool)
    mask[np.argsort(np.abs(steps - step), kind="stable")[:width]] = True
    return mask


def stretch_width(n: int) -> int:
    """Points in a "stretch" whose mean stands for a level: a tenth of the curve, at least five when it has them."""
    return max(min(5, n // 3), n // 10, 1)


def window_means(values: np.ndarray, width: int) -> np.ndarray:
    """Means of every `width` consecutive values (`n - width + 1` of them), from cumulative sums: O(n)."""
    width = max(1, min(width, len(values)))
    sums = np.concatenate(([0.0], np.cumsum(values, dtype=np.float64)))
    return (sums[width:] - sums[:-width]) / width


def zero_share(values: np.ndarray) -> float:
    """Share of values that are exactly 0 (0.0 when there are none)."""
    return float(np.mean(values == 0.0)) if len(values) else 0.0


# A curve that is exactly 0 on most steps (TRL logs grad_norm 0.0 on skipped steps, a loss of 0 with identical
# rewards): ratios and jumps from a zero base mean nothing, so they are not read off it.
ZERO_HEAVY_SHARE = 0.5


def zero_heavy(values: np.ndarray) -> bool:
    """Whether at least half of the values are exactly 0."""
    return zero_share(values) >= ZERO_HEAVY_SHARE


def material_floor(values: np.ndarray) -> float:
    """The smallest magnitude that counts as a level rather than "about zero" for this curve.

    A thousandth of the curve's typical large magnitude (its 95th percentile): a KL of 1e-9 going to 1e-4 is a
    rise from zero, not a 100,000-fold jump.
    """
    magnitude = np.abs(values[np.isfinite(values)])
    return max(noise_floor(values), 1e-3 * float(np.percentile(magnitude, 95))) if len(magnitude) else 1e-12


def best_window(series: Series, width: int, end: int | None = None) -> np.ndarray:
    """Mask of the `width` consecutive raw points with the highest mean (among the first `end` points if given)."""
    n = series.n
    width = max(1, min(width, n))
    means = window_means(series.values[:end] if end is not None and end >= width else series.values, width)
    start = int(np.argmax(means))
    mask = np.zeros(n, dtype=bool)
    mask[start:start + width] = True
    return mask


@dataclass(frozen=True)
class Progress:
    """Is a curve still improving, or has it demonstrably stopped?"""

    earlier_slope: float  # per step, before the recent window
    recent_slope: float  # per step, in the recent window
    recent_upper: float  # upper confidence bound of the recent slope (autocorrelation-widened)
    stalled: bool  # the recent rate is shown to be well below the earlier one


def progress(series: Series, start_step: int, share: float = 0.3) -> Progress:
    """Whether the rise of a curve has stopped, with evidence rather than for want of it.

    A flat trend test on a noisy window only says the rise is not proven; calling a plateau needs the
    opposite proof: the recent slope's upper confidence bound below `share` of the earlier slope (or, for a
    curve that never rose, too small to move it by a noise unit across the window).
    """
    steps, values = series.red_steps.astype(np.float64), series.red_values
    early = steps < start_step
    if early.sum() < 4 or (~early).sum() < 6:
        return Progress(0.0, 0.0, math.inf, False)
    earlier = float(theil_sen(values[early], steps[early]).slope)
    rose = trend(series, int(steps[0]), end_step=start_step).direction == "rising"
    # A curve that rose is judged on its recent window; one that never rose, on the whole run.
    window = ~early if rose else np.ones(len(steps), dtype=bool)
    slope, upper = _rate_with_upper(series, window)
    span = float(steps[window][-1] - steps[window][0])
    noise = max(series.noise, noise_floor(series.values))
    stalled = upper < share * earlier if rose else upper * span < noise
    return Progress(earlier, slope, upper, stalled)


def _rate_with_upper(series: Series, window: np.ndarray) -> tuple[float, float]:
    """Theil-Sen slope of the reduced curve over `window`, and its 90% upper bound widened for autocorrelation."""
    steps, values = series.red_steps.astype(np.float64), series.red_values
    fit = theil_sen(values[window], steps[window], alpha=0.90)
    rho = max(_residual_rho(values[window] - (fit.intercept + fit.slope * steps[window])),
              _reduced_rho(series, local=True))
    widen = math.sqrt((1 + rho) / (1 - rho))
    return float(fit.slope), float(fit.slope + (fit.high_slope - fit.slope) * widen)


@dataclass(frozen=True)
class LevelOff:
    """Where a rising curve bent over, and how much of its climb rate is left after the bend."""

    step: int  # the bend: best breakpoint of a continuous two-piece linear fit
    climb_steps: int  # from the first point to the bend
    flat_steps: int  # from the bend to the last point
    flat_points: int  # raw logged points after the bend
    climb_rate: float  # per step before the bend (Theil-Sen)
    rate_after: float  # per step after the bend (Theil-Sen)
    rate_after_upper: float  # its upper confidence bound, autocorrelation-widened

    @property
    def rate_left(self) -> float:
        """The rate after the bend as a share of the climb rate (0: stopped, 1: no bend at all)."""
        return self.rate_after / self.climb_rate if self.climb_rate > 0 else math.inf

    def stopped(self, share: float = 0.1, proof: float = 0.5, min_flat_points: int = MIN_FLAT_POINTS) -> bool:
        """The climb has all but stopped: under `share` of its rate is left, and the data rule out `proof` of it.

        The first is the practitioner's reading of the curve (flat since the bend); the second keeps noise from
        faking it (the most optimistic rate after the bend is still well below the climb). A handful of points
        after a bend cannot show either, so a short flat stretch never counts.
        """
        return (self.flat_points >= min_flat_points and self.climb_rate > 0 and self.rate_left < share
                and self.rate_after_upper < proof * self.climb_rate)

    def plateau(self, min_flat_points: int = MIN_FLAT_POINTS) -> bool:
        """Stopped, and flat for at least as long as it climbed: the run has shown what it will do.

        `min_flat_points`: logged points after the bend needed (fewer for separate evaluations than for
        autocorrelated training steps).
        """
        # Measured as totals too: a slow rate kept for many times as long as the climb (a fast first burst, then
        # a steady slow rise) can add as much as the climb did, and that is no plateau.
        gained = self.climb_rate * self.climb_steps
        return (self.stopped(min_flat_points=min_flat_points) and self.flat_steps >= self.climb_steps
                and self.rate_after * self.flat_steps < 0.5 * gained
                and self.rate_after_upper * self.flat_steps < gained)


def level_off(series: Series, min_points: int = 5) -> LevelOff | None:
    """The bend of a curve that rose and then (maybe) flattened, from a continuous two-piece linear fit.

    The bend is where one straight climb followed by one straight stretch fits the reduced curve best; the
    rates on either side are then measured robustly, so a slow, still-rising tail and a curve that stopped
    dead at the bend are told apart by the rate left after it. None when the curve is too short or never rose.
    """
    steps, values = series.red_steps.astype(np.float64), series.red_values
    n = len(steps)
    if n < 2 * min_points + 2:
        return None
    best_sse, best_i, best_coef = math.inf, -1, np.zeros(3)
    # The climb may be short in logged points (a coarse log whose fast early rise spans two rows): the bend
    # may come after two points; the flat side keeps `min_points`.
    for i in range(MIN_CLIMB_POINTS, n - min_points):
        design = np.column_stack([np.ones(n), np.minimum(steps, steps[i]), np.maximum(steps - steps[i], 0.0)])
        coef, *_ = np.linalg.lstsq(design, values, rcond=None)
        sse = float(np.sum((design @ coef - values) ** 2))
        if sse < best_sse:
            best_sse, best_i, best_coef = sse, i, coef
    bend = int(steps[best_i])
    early = steps < bend
    # The climb rate: robust (Theil-Sen) where the climb has the points for it, else the fitted first piece.
    climb = float(theil_sen(values[early], steps[early]).slope) if early.sum() >= 4 else float(best_coef[1])
    if climb <= 0:
        return None
    after, after_upper = _rate_with_upper(series, ~early)
    return LevelOff(
        step=bend, climb_steps=bend - int(steps[0]), flat_steps=int(steps[-1]) - bend,
        flat_points=int(np.sum(series.steps > bend)), climb_rate=climb, rate_after=after,
        rate_after_upper=after_upper,
    )
