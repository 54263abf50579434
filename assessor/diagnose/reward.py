"""The reward trajectory: the primary signal.

The questions a practitioner asks of it: is it still rising, and is the rise itself slowing? Has it
levelled off? Did it peak and then fall (the better model is already behind us)? Levels are compared as
stretch means against their standard errors (with the effective sample size of autocorrelated noise), so a
fall sustained over many steps counts even when each step is noisy, and one bad batch does not.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from assessor.diagnose import robust
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.kl_reward import min_flat_points, primary_reward
from assessor.diagnose.models import Finding, RewardDiagnosis, Severity, SignalSummary, Stretch
from assessor.diagnose.signals import Reading

DECLINE_T = 4.0  # the peak stretch is chosen as the best of many, so its comparison needs a high bar
PROGRESS_T = 3.0
# A slow decline shows over long stretches better than short ones: stretches of a tenth, a fifth and a third of
# the run are each compared with the latest stretch of the same length. The bar falls with the number of
# candidate stretches each best one was picked from (about run / stretch), from 4 standard errors for a tenth.
DECLINE_SHARES = (10, 5, 3)
FINE_DECLINE_SHARES = (20, 40)
FINE_STRETCH_POINTS = 100


def decline_bar(n: int, width: int) -> float:
    """Standard errors a best stretch must stand above the latest one.

    The expected best of k noise-only candidates (sqrt(2 ln k)), plus two.
    """
    candidates = max(2.0, n / max(1, width))
    return min(DECLINE_T, math.sqrt(2.0 * math.log(candidates)) + 2.0)


RISING_YET_MOSTLY_LOST = 0.5
CONVERGED_SHARE = 0.25  # of the budget (planned steps, else the run so far) the plateau must span


def _gain_lost(from_peak: robust.LevelShift, start: float) -> float:
    """Share of the gain from the start to the peak stretch that the latest stretch has given back (0 if none)."""
    gain = from_peak.before - start
    return (from_peak.before - from_peak.after) / gain if gain > 0 else 0.0


def _bar(series: robust.Series, peak: np.ndarray, summary: SignalSummary) -> float:
    """Standard errors the best stretch (mask `peak`) must stand above the latest stretch of the same length.

    The bar for the best stretch alone is high because it was picked as the best of many. A second, independent
    witness lowers it to the bar of an ordinary comparison: the curve's own recent trend, falling since after
    the middle of the best stretch. (A log that averages ten steps a row, as TRL's does, has a tenth of the
    points of a per-step log of the same run, so the selection bar is harder to clear on the same evidence;
    the trend test is not a selection.)
    """
    width = int(peak.sum())
    bar = decline_bar(series.n, width)
    # The fall must be its own evidence: tested over at least two stretches' worth of points, all after the middle
    # of the best stretch (a handful of points after a short peak is the same noise seen twice).
    falling_since_peak = (summary.trend == "falling" and summary.trend_window_start >= np.median(series.steps[peak])
                          and int((series.steps >= summary.trend_window_start).sum()) >= 2 * width)
    return min(bar, PROGRESS_T) if falling_since_peak else bar


def _decline(
    series: robust.Series, width: int, summary: SignalSummary,
) -> tuple[np.ndarray, np.ndarray, robust.LevelShift, bool]:
    """The best stretch and the latest one, at the scale where the decline from one to the other is clearest.

    Returns masks of the best stretch and of the latest stretch of the same length, their level shift, and
    whether the latest stands below the best by more than the bar.
    """
    n = series.n
    best: tuple[float, np.ndarray, np.ndarray, robust.LevelShift] | None = None
    # On a long log a tenth of the run is thousands of steps: a collapse in its last few hundred is a fraction of
    # the latest tenth. Finer stretches, each still of FINE_STRETCH_POINTS points or more, see it whole.
    widths = [width, *(max(width, n // share) for share in DECLINE_SHARES[1:]),
              *(n // share for share in FINE_DECLINE_SHARES if n // share >= FINE_STRETCH_POINTS)]
    for w in widths:
        if 2 * w > n:
            continue
        # The best stretch is sought before the latest one: a best window that overlaps the latest by a few
        # points would hide the decline at this scale however far the curve fell.
        peak = robust.best_window(series, w, end=n - w)
        last = np.zeros(n, dtype=bool)
        last[-w:] = True
        shift = robust.level_shift(series, peak, last)
        margin = -shift.t - _bar(series, peak, summary)
        if best is None or margin > best[0]:
            best = (margin, peak, last, shift)
    if best is None:
        last = np.zeros(n, dtype=bool)
        last[-width:] = True
        peak = robust.best_window(series, width)
        shift = robust.level_shift(series, peak, last)
        return peak, last, shift, -shift.t >= _bar(series, peak, summary)
    return best[1], best[2], best[3], best[0] >= 0


def _halfway_down(series: robust.Series, peak_end: int, from_peak: robust.LevelShift, width: int) -> int | None:
    """The first step after the peak stretch where the curve is halfway down from the peak to now.

    Read on means of a fifth of the latest stretch (`width` points) of the logged values, each dated by its middle
    step: the smoothed curve's centred running median lags at the end of the log, so a collapse in the last few
    hundred steps of a long run never reaches halfway on it.
    """
    halfway = 0.5 * (from_peak.before + from_peak.after)
    k = max(3, width // 5)
    if series.n < k:
        return None
    means = robust.window_means(series.values, k)
    middle = series.steps[k // 2:k // 2 + len(means)]
    down = np.flatnonzero((middle > peak_end) & (means <= halfway))
    return int(middle[down[0]]) if len(down) else None


def diagnose_reward(ctx: Context) -> RewardDiagnosis:
    """Trend, slowing, plateau, and peak-then-decline of the training reward."""
    metric = primary_reward(ctx)
    reading = ctx.book.get(metric) if metric else None
    if metric is None or reading is None:
        return RewardDiagnosis()
    s, series = reading.summary, reading.series
    out = RewardDiagnosis(
        metric=metric, trend=s.trend, slowing=s.slowing, start=s.start, now=s.now, peak=s.peak,
        peak_step=s.peak_step, drop_from_peak_noise=s.drop_from_peak_noise, plateau_start=s.plateau_start,
    )
    width = robust.stretch_width(series.n)
    edge = np.zeros(series.n, dtype=bool)
    first, last = edge.copy(), edge.copy()
    first[:width], last[-width:] = True, True
    peak_mask, latest, from_peak, declined = _decline(series, width, s)
    peak_steps = series.steps[peak_mask]
    progress = robust.level_shift(series, first, last)
    overlapping = bool((peak_mask & latest).any())
    noise = max(series.noise, robust.noise_floor(series.values))
    findings: list[Finding] = []
    gain_lost = _gain_lost(from_peak, progress.before)
    # Rising again is recovery under way, not a better model behind us, unless most of the gain is still gone (a
    # resume that loaded the base weights relearns for hundreds of steps while the checkpoint before it is better).
    # Recovering: the recent trend rises over a window that starts after the best stretch (a window reaching back
    # before it rises with the climb to the peak, whatever happened since).
    recovering = s.trend == "rising" and s.trend_window_start >= int(peak_steps[-1])
    if not overlapping and declined and robust.material_drop(from_peak, series) and (
            not recovering or gain_lost >= RISING_YET_MOSTLY_LOST):
        # The peak and now quoted stay the curve's own (stretches of a tenth of the run, as in the signals table):
        # the decline test's stretches may be wider, and are named by their steps, not given as a second peak.
        latest_steps = series.steps[latest]
        out.peak_stretch = Stretch(first_step=int(peak_steps[0]), last_step=int(peak_steps[-1]), mean=from_peak.before)
        out.latest_stretch = Stretch(first_step=int(latest_steps[0]), last_step=int(latest_steps[-1]),
                                     mean=from_peak.after)
        out.fall_step = _halfway_down(series, int(peak_steps[-1]), from_peak, int(latest.sum()))
        gain = from_peak.before - progress.before
        severity: Severity = "critical" if gain > 0 and from_peak.after <= progress.before else "warning"
        # The share lost is quoted from the start, peak and now of the signals table, so a reader can check it;
        # the test's own stretches (named by their steps) may be wider.
        # A fall inside the latest tenth (found at a finer scale) is quoted at that scale: the table's now, the
        # mean of the whole latest tenth, holds only part of it.
        table_gain = s.peak - s.start
        finer = int(latest.sum()) < width
        now = from_peak.after if finer else s.now
        shown_now = (f"{num(now)} over the latest {int(latest.sum())} logged steps (the table's now, the mean of the "
                     f"latest tenth, is {num(s.now)})" if finer else f"{num(now)} now")
        if table_gain > 0 and now <= s.start:
            lost = f"all of its gain and is below where it started ({num(s.start)})"
        elif table_gain > 0:
            lost = f"{(s.peak - now) / table_gain:.0%} of its gain since the start"
        else:
            lost = "ground"
        again = f"; it is rising again since step {s.trend_window_start}, still far below" if recovering else ""
        findings.append(finding(
            metric, "reward_peaked_then_declined", severity,
            f"{metric} peaked at {num(s.peak)} around step {s.peak_step} and is {shown_now}; the decline "
            f"test's stretch around it, steps {int(peak_steps[0])}–{int(peak_steps[-1])}, averaged "
            f"{-from_peak.t:.1f} standard errors above the latest {int(latest.sum())} logged steps: it has "
            f"lost {lost}{again}",
            [s.peak_step]))
    elif s.trend == "rising":
        slowing = " but the rise is slowing (the latest third moves at under half the middle third's rate)" if (
            s.slowing) else ""
        findings.append(finding(
            metric, "reward_rising", "info",
            f"{metric} is still rising: +{num(s.trend_change)} since step {s.trend_window_start} "
            f"({s.trend_change_noise:.1f} noise units){slowing}", [s.trend_window_start]))
    elif s.trend == "falling" and not _settled_drift(reading, s):
        findings.append(finding(
            metric, "reward_falling", "warning",
            f"{metric} is falling: {num(s.trend_change)} since step {s.trend_window_start} "
            f"({s.trend_change_noise:.1f} noise units)", [s.trend_window_start]))
    elif progress.t <= -PROGRESS_T or progress.after - progress.before <= -noise:
        findings.append(finding(
            metric, "reward_below_start", "critical" if progress.t <= -PROGRESS_T else "warning",
            f"{metric} is below where it started: {num(progress.before)} over the first {width} logged steps, "
            f"{num(progress.after)} over the latest {width} ({progress.t:+.1f} standard errors)", [s.first_step]))
    elif abs(progress.t) < PROGRESS_T and abs(progress.after - progress.before) < 0.5 * noise and series.n >= 10 and (
            _rules_out_a_rise(series, progress)):
        findings.append(finding(
            metric, "reward_no_progress", "watch",
            f"{metric} is where it started: {num(progress.before)} over the first {width} logged steps, "
            f"{num(progress.after)} over the latest {width} ({progress.t:+.1f} standard errors)", [s.first_step]))
    elif robust.progress(series, s.trend_window_start).stalled:
        since = s.plateau_start if s.plateau_start is not None else s.trend_window_start
        bend = robust.level_off(series)
        budget = ctx.facts.planned_total_steps or s.last_step
        if (bend is not None and bend.plateau(min_flat_points=min_flat_points(reading))
                and bend.flat_steps >= CONVERGED_SHARE * budget and progress.t >= PROGRESS_T):
            # Flat for at least as long as it took to climb (the plateau test) and for a quarter of the budget,
            # keeping a small share of the climb's rate: the run has shown what this recipe does, and more steps of
            # it are unlikely to pay. (A shorter pause is one step of a staircase as often as not: patience is
            # cheaper than a lost run.) The climb itself must be established: a "climb" the noise could have drawn
            # (early in a slow run) says nothing about where this recipe levels off.
            findings.append(finding(
                metric, "reward_converged", "watch",
                f"{metric} levelled off around step {bend.step} and is {num(s.now)} now (from "
                f"{num(progress.before)} at the start): it climbed for {bend.climb_steps} steps and in the "
                f"{bend.flat_steps} since has kept {max(0.0, bend.rate_left):.0%} of its climb rate, so it has "
                "converged", [bend.step]))
        elif abs(s.now - progress.before) <= noise and robust.level_shift(series, first, peak_mask).t < PROGRESS_T:
            # Never climbed (its best stretch not established above its first either): "levelled off since step S
            # (from 1 at the start)" read as a plateau reached mid-run.
            findings.append(finding(
                metric, "reward_plateau", "watch",
                f"{metric} has not climbed measurably since the start ({num(progress.before)} over the first {width} "
                f"logged steps, {num(s.now)} now; no stretch of it stands established above the first): there was no "
                "climb to level off from", [s.first_step]))
        else:
            findings.append(finding(
                metric, "reward_plateau", "watch",
                f"{metric} has levelled off at {num(s.now)} since about step {since} (from {num(progress.before)} at "
                "the start)", [since]))
    else:
        findings.append(finding(
            metric, "reward_unclear", "info",
            f"{metric} is up from {num(progress.before)} to {num(progress.after)} over the run; over the latest "
            f"stretch the noise hides whether it is still rising", [s.trend_window_start]))
    shaped = _shaped_decline(ctx) if metric == "reward_mean" else None
    if shaped is not None:
        out.shaped_declined = True
        findings.append(shaped)
    out.findings = findings
    return out


SETTLED_DRIFT_NOISE = 2.0  # a fall smaller than this many noise units across the window can be a plateau's drift


def _settled_drift(reading: Reading, s: SignalSummary) -> bool:
    """Whether a "falling" trend is a long plateau's slight drift: too small to size as a fall, on a level-off.

    Over hundreds of steps on a level, a rank test calls a drift of one noise unit established; the curve is still
    the plateau it has been since it levelled off (a reader sees a flat line), and is read as one.
    """
    change = s.trend_change_noise
    if change is None or not math.isfinite(change) or abs(change) >= SETTLED_DRIFT_NOISE:
        return False
    bend = robust.level_off(reading.series)
    return bend is not None and bend.plateau(min_flat_points=min_flat_points(reading))


NO_PROGRESS_MAX_ERROR = 0.05  # of a 0..1 reward's range: the start-to-now comparison must be this sharp


def _rules_out_a_rise(series: robust.Series, progress: robust.LevelShift) -> bool:
    """Whether "where it started" is shown, not just unproven: the comparison could see a rise of a tenth of the range.

    A 0..1 reward averaged over few completions a step (one prompt of eight rollouts moves in eighths) compares its
    first and latest stretches to within a tenth of the range only after many steps; before that, no visible change
    says nothing. Rewards on other scales are taken as measured (their range is unknown).
    """
    values = series.values
    if float(np.min(values)) < 0.0 or float(np.max(values)) > 1.0 or abs(progress.t) < 1e-9:
        return True
    error = abs(progress.after - progress.before) / abs(progress.t)
    return error <= NO_PROGRESS_MAX_ERROR


SHAPED = "reward_shaped_mean"


def _shaped_decline(ctx: Context) -> Finding | None:
    """The reward the policy is actually optimised on (score minus the KL penalty), when it declines on its own.

    PPO with the KL penalty in the reward (TRL's `objective/rlhf_reward`, verl's `critic/rewards/mean` with
    `use_kl_in_reward`, OpenRLHF's `return`) maximises score - beta * KL. A reward-model score can keep climbing
    while that objective peaks and falls: each point of score is bought with more KL than it is worth, the classic
    over-optimisation of a learned reward. Read with the same decline test as the score.
    """
    reading = ctx.book.get(SHAPED)
    if reading is None or reading.series.n < 10:
        return None
    score = ctx.run.series("reward_mean")
    shaped = ctx.run.series(SHAPED)
    if len(score) and float(score.min()) >= 0.0 and float(score.max()) <= 1.0:
        # A 0..1 score is a verifier's pass rate, not a learned reward model: more of it is genuinely better, and a
        # penalised return summed over long completions falls as KL grows while the task improves. Only a
        # learned score can be over-optimised this way.
        return None
    both = pd.concat([score.rename("score"), shaped.rename("shaped")], axis=1, join="inner").dropna()
    if len(both) and np.allclose(both["score"].to_numpy(), both["shaped"].to_numpy(), rtol=1e-6, atol=1e-9):
        return None  # no KL in the reward: the same curve under two names
    series = reading.series
    width = robust.stretch_width(series.n)
    peak, latest, shift, declined = _decline(series, width, reading.summary)
    if (peak & latest).any() or not declined:
        return None
    steps = series.steps[peak]
    # Only while the score itself kept rising over the same stretches: a flat score with a growing KL is drift
    # without benefit (read by the KL/reward quadrants), not a learned reward being gamed.
    score_reading = ctx.book.get("reward_mean")
    if score_reading is None:
        return None
    on_score = robust.level_shift(
        score_reading.series, robust.nearest(score_reading.series.steps, int(np.median(steps)), int(peak.sum())),
        robust.nearest(score_reading.series.steps, int(series.steps[-1]), int(latest.sum())))
    if on_score.t < PROGRESS_T:
        return None
    # A score that levelled off by the time the penalised reward peaked is the same drift without benefit: its small
    # later gain does not make the earlier, lower-scoring weights the better model (the KL quadrant says "spent").
    bend = robust.level_off(score_reading.series)
    if bend is not None and bend.step <= int(np.median(steps)) and bend.plateau(
            min_flat_points=min_flat_points(score_reading)):
        return None
    return finding(
        SHAPED, "shaped_reward_declined", "warning",
        f"the KL-penalised reward the policy is optimised on (score minus beta x KL) peaked at {num(shift.before)} "
        f"around step {int(np.median(steps))} (mean of steps {int(steps[0])}–{int(steps[-1])}) and averages "
        f"{num(shift.after)} over the latest {int(latest.sum())} logged steps ({-shift.t:.1f} standard errors lower): "
        "the score's later gains cost more KL than they are worth", [int(np.median(steps))])
