"""Response length: drift, collapse to a few tokens, explosion to the cap, truncation, spread, length hacking.

Length is the cheapest thing a policy can change, so it is often the first place a reward shortcut shows:
short junk that avoids a penalty, padding that a length-biased reward likes, or completions that never stop
and are cut at the cap (scored on unfinished text). Sizes are read against the run's own start, against
the completion cap (a physical bound), and against the curve's noise, never against fixed token counts.
"""

from __future__ import annotations

import math

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.kl_reward import reward_rising
from assessor.diagnose.models import Finding, LengthDiagnosis, Severity, SignalSummary
from assessor.diagnose.signals import Reading, describe, significant_change
from assessor.run import Run

CAP_TOLERANCE = 0.03  # a batch mean within 3% of the cap: nearly every completion in it was cut off
MIN_PINNED = 3  # an exact repeat of the run's top length this often is a ceiling, not chance
PINNED_SHARE = 0.2  # for integer-valued logs, where repeats are cheap, a ceiling must hold this share of steps
AT_CAP_RECENT = 0.5  # explosion: the mean sits at the cap on at least half of the recent steps
AT_CAP_ALL = 0.9  # ... and on nearly all of them, every completion is being truncated
NEAR_CAP_RISING = 0.8  # a rising mean at four fifths of the cap is running into it
NEAR_CAP = 0.9  # a mean at nine tenths of the cap leaves little room below it
DRIFT_RELATIVE = 0.3  # practitioners investigate a change of more than ~30% of the baseline mean length
COLLAPSE_FRACTION = 0.2  # "a small fraction of its start": a fifth of the starting length or less
SPREAD_FRACTION = 0.5  # the max-min spread (relative to the mean) halved: completions converging to a template
TRUNCATION_ALL = 0.9  # as for the mean at the cap: nearly every completion cut off
TRUNCATION_MOST = 0.5  # most completions cut off
TRUNCATION_HIGH = 0.2  # one in five cut off: the usual "raise the cap or ask why" level
STRONG_CORRELATION = 0.5
MIN_CORRELATION_POINTS = 10
SIGNIFICANT_NOISE = 3.0  # noise units a level change must clear (see signals.significant_change)


SHORTEST_COLLAPSE = 0.1  # the shortest completion of a batch down to a tenth of its early length
SHORTEST_MIN_START = 20  # tokens: below this the shortest answers were terse to begin with (a letter, a number)


def _shortest_collapsed(ctx: Context) -> list[Finding]:
    """The shortest completion of each batch falling to a tenth of its early length: (nearly) empty answers.

    The mean can hold while a growing share of completions says next to nothing; TRL and verl log the batch's
    minimum length beside the mean. An answer of a few tokens that the reward still credits is the commonest
    grader exploit (an empty box, a bare number when the gold answer fails to parse), and one that is not credited
    is a policy that learnt to give up.
    """
    reading = ctx.book.get("response_length_min")
    if reading is None or reading.series.n < 10:
        return []
    values, steps = reading.series.values, reading.series.steps
    k = max(3, len(values) // 10)
    early, late = float(np.median(values[:k])), float(np.median(values[-k:]))
    if early < SHORTEST_MIN_START or late > SHORTEST_COLLAPSE * early:
        return []
    halfway = np.flatnonzero(reading.series.smooth <= 0.5 * (early + late))
    since = int(reading.series.red_steps[halfway[0]]) if len(halfway) else int(steps[-k])
    return [finding(
        "response_length_min", "shortest_completions_collapsed", "warning",
        f"The shortest completion of each batch fell from about {num(early)} tokens to {num(late)} "
        f"({late / early:.0%} of its early length), past halfway from step {since}: some completions are now "
        "(nearly) empty. If the reward still credits them, the grader is being exploited (an empty answer scored "
        "as correct); read the shortest completions.", [since])]


def diagnose_length(ctx: Context) -> LengthDiagnosis:
    """Read the response-length curves of a run.

    Args:
        ctx: The run and its readings.

    Returns:
        Start/now/trend of the mean length, the cap (configured or inferred), the share of recent steps at
        the cap, the truncation rate now, the Spearman correlation of length with reward, and findings.
    """
    reading = ctx.book.get("response_length_mean")
    if reading is None:
        return LengthDiagnosis()
    summary = reading.summary
    cap, cap_source = infer_cap(ctx.run)
    clip = ctx.book.get("response_length_clip_ratio")
    at_cap = at_cap_share(reading, summary.trend_window_start, cap) if cap else None
    correlation = length_reward_correlation(ctx.run)

    findings: list[Finding] = []
    cap_finding = _cap_findings(ctx, reading, cap, cap_source, at_cap, clip)
    findings.extend(cap_finding)
    collapse = _collapse(reading)
    findings.extend(collapse)
    findings.extend(_shortest_collapsed(ctx))
    drift = _drift(reading) if not collapse else []
    # Once at the cap, the drift *is* the explosion: say it once. A mean merely on its way there (a watch) says
    # nothing about how many completions are already cut off, so the truncated share is still read.
    only_approaching = all(f.kind == "length_approaching_cap" and f.severity == "watch" for f in cap_finding)
    if only_approaching:
        findings.extend(_truncation(ctx, reading, clip))
    if not cap_finding:
        findings.extend(drift)
        findings.extend(_spread(ctx, reading))
        findings.extend(_extremes(ctx, reading, cap))
    moving = {"length_explosion_to_cap", "length_approaching_cap", "length_collapse", "length_rising", "length_falling"}
    drifting = any(f.kind in moving for f in [*cap_finding, *collapse, *drift])
    findings.extend(_hacking(ctx, reading, correlation, drifting))
    return LengthDiagnosis(
        start=summary.start, now=summary.now, trend=summary.trend, cap=cap, at_cap_fraction=at_cap,
        clipped_ratio_now=clip.summary.now if clip else None, length_reward_correlation=correlation,
        findings=findings,
    )


def infer_cap(run: Run) -> tuple[int | None, str | None]:
    """The completion token cap: from the configuration, else from a maximum length pinned at one value.

    A logged length can only repeat its run-wide top value exactly, step after step, when something stops
    it there. The maximum-length curve is read first; without it, the mean itself (a batch mean equals the
    top value only when every completion in the batch stopped at the same length, which is what a cap does).

    Args:
        run: The run.

    Returns:
        The cap and where it came from, or (None, None).
    """
    if run.facts.max_completion_length:
        return run.facts.max_completion_length, "configured"
    for metric in ("response_length_max", "response_length_mean"):
        values = run.series(metric).to_numpy()
        if len(values) < MIN_PINNED:
            continue
        top = float(np.max(values))
        if top < 1 or abs(top - round(top)) > 1e-6:
            continue  # caps are whole token counts
        pinned = int(np.sum(np.abs(values - top) <= 1e-6 * top))
        integer_share = float(np.mean(np.abs(values - np.round(values)) < 1e-9))
        if pinned >= MIN_PINNED and (pinned >= PINNED_SHARE * len(values) or integer_share < 0.5):
            return round(top), f"inferred: {metric} is exactly {round(top)} on {pinned} of {len(values)} steps"
    return None, None


def at_cap_share(reading: Reading, since_step: int, cap: int) -> float | None:
    """Share of the logged steps from `since_step` on whose mean length sits at the cap."""
    series = reading.series
    recent = series.values[series.steps >= since_step]
    if not len(recent):
        return None
    return float(np.mean(recent >= (1 - CAP_TOLERANCE) * cap))


def length_reward_correlation(run: Run) -> float | None:
    """Spearman correlation of mean length and reward over the steps that log both (None when unreadable)."""
    length, reward = run.series("response_length_mean"), run.series("reward_mean")
    if not len(length) or not len(reward):
        return None
    joined = length.to_frame("length").join(reward.to_frame("reward"), how="inner")
    if len(joined) < MIN_CORRELATION_POINTS:
        return None
    x, y = joined["length"].to_numpy(), joined["reward"].to_numpy()
    if np.ptp(x) == 0 or np.ptp(y) == 0:  # a constant curve has no ranks to correlate
        return None
    rho = robust.spearman(x, y)
    return rho if math.isfinite(rho) else None


def _cap_findings(
    ctx: Context, reading: Reading, cap: int | None, cap_source: str | None, at_cap: float | None,
    clip: Reading | None,
) -> list[Finding]:
    """Mean length pinned at the cap: explosion during the run, or truncation from the very start."""
    if cap is None or at_cap is None:
        return []
    s = reading.summary
    series = reading.series
    source = "" if cap_source == "configured" else f" ({cap_source})"
    clipped = f"; clipped ratio now {num(clip.summary.now)}" if clip else ""
    if at_cap < AT_CAP_RECENT:
        return _near_cap(reading, cap, source, clip)
    at_cap_mask = series.values >= (1 - CAP_TOLERANCE) * cap
    onset = _final_stretch_start(series.steps, at_cap_mask)
    share = f"{num(at_cap * 100)}% of the steps since {s.trend_window_start}"
    pinned_min = ""
    low = ctx.book.get("response_length_min")
    if low is not None and low.summary.now >= (1 - CAP_TOLERANCE) * cap:
        pinned_min = " Even the shortest completion of each batch reaches the cap: length spread is gone."
    if s.start >= (1 - CAP_TOLERANCE) * cap:
        return [finding(
            "response_length_mean", "length_at_cap_from_start", "warning",
            f"Mean length sits at the {cap}-token cap{source} from the first steps ({num(s.start)} at the start, "
            f"{num(s.now)} now, at the cap on {share}){clipped}: completions are cut off before they finish and "
            f"are scored unfinished; the cap is too tight for what the model writes.{pinned_min}",
            [onset, s.last_step],
        )]
    severity: Severity = "critical" if at_cap >= AT_CAP_ALL else "warning"
    began = departure_step(reading, _settled_step(reading, (s.start + s.now) / 2, above=True), s.now)
    return [finding(
        "response_length_mean", "length_explosion_to_cap", severity,
        f"Mean length ran up to the {cap}-token cap{source}: {num(s.start)} at the start, rising from step "
        f"{began}, at the cap from step {onset} and on {share}{clipped}; completions no longer finish and the "
        f"reward is computed on truncated text.{pinned_min}",
        [min(began, onset), onset, s.last_step],
    )]


def _near_cap(reading: Reading, cap: int, source: str, clip: Reading | None) -> list[Finding]:
    """Mean length running towards the cap, or sitting just under it with no truncation rate to confirm."""
    s = reading.summary
    share = f"{num(s.now / cap * 100)}%"
    rise = s.now - s.start
    if s.now >= NEAR_CAP_RISING * cap and rise > 0 and significant_change(s, rise, _noise(s, reading.series)):
        onset = _settled_step(reading, (s.start + s.now) / 2, above=True)
        clipped = f"; clipped ratio now {num(clip.summary.now)}" if clip else ""
        if clip is not None and clip.summary.now >= TRUNCATION_ALL and clip.summary.start < TRUNCATION_MOST:
            # The mean stops a little short of the cap only because the few completions that still finish are
            # short: nearly every completion is cut off, from a start where few were. That is the explosion.
            began = departure_step(reading, onset, s.now)
            return [finding(
                "response_length_mean", "length_explosion_to_cap", "critical",
                f"Mean length ran up to the {cap}-token cap{source}: {num(s.start)} at the start, rising from step "
                f"{began}, {num(s.now)} now ({share} of the cap){clipped}: nearly every completion is cut off and "
                "the reward is computed on truncated text.", [began, onset, s.last_step],
            )]
        # Doubling on the way to the cap is an explosion in progress; a smaller rise is worth watching.
        return [finding(
            "response_length_mean", "length_approaching_cap", "warning" if s.now >= 2 * s.start else "watch",
            f"Mean length is running up to the {cap}-token cap{source}: {num(s.start)} at the start, {num(s.now)} "
            f"now ({share} of the cap), past its midpoint since step {onset}{clipped}.",
            [onset, s.last_step],
        )]
    if s.now >= NEAR_CAP * cap and clip is None:
        return [finding(
            "response_length_mean", "length_near_cap", "watch",
            f"Mean length is {num(s.now)} now ({num(s.start)} at the start), {share} of {cap} tokens{source}: with "
            f"the mean this close to the cap, many completions are likely cut off, and no clipped ratio is logged "
            f"to say how many.",
            [s.trend_window_start, s.last_step],
        )]
    return []


def _collapse(reading: Reading) -> list[Finding]:
    """Mean length falling to a small fraction of its start and staying there for a sustained stretch."""
    s, series = reading.summary, reading.series
    noise = _noise(s, series)
    threshold = COLLAPSE_FRACTION * s.start
    if s.start <= 0 or s.start - threshold < SIGNIFICANT_NOISE * noise:
        return []
    low = series.values <= threshold
    first, last = _longest_run(low)
    sustained = max(MIN_PINNED, math.ceil(0.05 * series.n))
    if last - first + 1 < sustained:
        return []
    onset, end = int(series.steps[first]), int(series.steps[last])
    level = float(np.median(series.values[first:last + 1]))
    if last == series.n - 1 or s.now <= threshold:
        return [finding(
            "response_length_mean", "length_collapse", "warning",
            f"Mean length collapsed from {num(s.start)} tokens at the start to {num(level)} from step {onset} "
            f"({num(level / s.start * 100)}% of its start) and is {num(s.now)} now: the policy has found that "
            f"saying almost nothing is safest.",
            [onset, end],
        )]
    return [finding(
        "response_length_mean", "length_collapse_recovered", "watch",
        f"Mean length collapsed from {num(s.start)} tokens to {num(level)} over steps {onset}-{end} "
        f"({last - first + 1} logged steps) and has since come back to {num(s.now)}.",
        [onset, end],
    )]


def _drift(reading: Reading) -> list[Finding]:
    """A systematic move of the mean length away from its start."""
    s, series = reading.summary, reading.series
    if s.start <= 0:
        return []
    change = s.now - s.start
    if abs(change) < DRIFT_RELATIVE * s.start or not significant_change(s, change, _noise(s, series)):
        return []
    rising = change > 0
    onset = _settled_step(reading, (s.start + s.now) / 2, above=rising)
    return [finding(
        "response_length_mean", "length_rising" if rising else "length_falling", "watch",
        f"Mean length {'rose' if rising else 'fell'} from {num(s.start)} to {num(s.now)} tokens "
        f"({'+' if rising else ''}{num(change / s.start * 100)}%), past its midpoint from step {onset}: a "
        f"systematic length drift, the commonest sign of a reward that favours "
        f"{'longer' if rising else 'shorter'} answers.",
        [onset, s.last_step],
    )]


def _truncation(ctx: Context, reading: Reading, clip: Reading | None) -> list[Finding]:
    """Share of completions cut at the cap (level and trend), and the gap to the naturally finished length."""
    s = reading.summary
    terminated = ctx.book.get("response_length_terminated_mean")
    gap = ""
    gap_share = None
    if terminated is not None and s.now > 0:
        gap_share = (s.now - terminated.summary.now) / s.now
        if terminated.summary.now <= 0:
            gap = " No completion in the recent batches ends on its own (terminated mean length is 0)."
        elif gap_share >= 0.25:
            gap = (f" Completions that finish average {num(terminated.summary.now)} tokens against {num(s.now)} "
                   f"over all: the truncated ones are the long tail.")
    if clip is None:
        if gap_share is not None and gap_share >= 0.25 and terminated is not None:
            return [finding(
                "response_length_terminated_mean", "length_truncation_gap", "watch",
                f"Mean length {num(s.now)} against {num(terminated.summary.now)} for completions that end on "
                f"their own: many completions are being truncated before they finish.",
                [s.trend_window_start, s.last_step],
            )]
        return []
    c = clip.summary
    noise = _noise(c, clip.series)
    rise = c.now - c.start
    # A share that has at least doubled up to one in five is a rise anyone reads off the plot, however
    # noisy the points in between (short runs logged every few steps give the noise test little to go on).
    doubled = c.now >= TRUNCATION_HIGH and c.now >= 2 * max(c.start, 0.0)
    rising = rise > 0 and c.now >= 0.05 and (doubled or significant_change(c, rise, noise))
    severity: Severity
    if c.now >= TRUNCATION_ALL and c.start < TRUNCATION_MOST:
        severity, what = "critical", "nearly every completion is now cut off at the cap"
    elif c.now >= TRUNCATION_MOST:
        severity, what = "warning", "most completions are cut off at the cap"
    elif c.now >= TRUNCATION_HIGH and rising:
        severity, what = "warning", "a large and growing share of completions is cut off at the cap"
    elif c.now >= TRUNCATION_HIGH:
        severity, what = "watch", "a large share of completions is cut off at the cap"
    elif rising:
        severity, what = "watch", "truncation is rising"
    else:
        return []
    onset = c.first_step
    if rising:
        onset = departure_step(clip, _settled_step(clip, (c.start + c.now) / 2, above=True), c.now)
    since = f"from {num(c.start)} at the start, rising from step {onset}" if rising else f"{num(c.start)} at the start"
    # A share that has been high since the start is a cap set too tight (a risk); one that grew is the run changing.
    return [finding(
        "response_length_clip_ratio", "length_truncation" if rising else "length_truncation_high", severity,
        f"Clipped ratio {num(c.now)} now ({since}): {what}; either raise the cap or ask why the model "
        f"will not stop.{gap}",
        [onset, c.last_step],
    )]


def _spread(ctx: Context, reading: Reading) -> list[Finding]:
    """Within-batch length spread (max - min, relative to the mean) shrinking: completions converging."""
    run = ctx.run
    high, low = run.series("response_length_max"), run.series("response_length_min")
    if not len(high) or not len(low):
        return []
    frame = high.to_frame("max").join(low.to_frame("min"), how="inner").join(
        run.series("response_length_mean").to_frame("mean"), how="inner")
    frame = frame[frame["mean"] > 0]
    spread = describe("response_length_spread", "train", frame.index.to_numpy(),
                      ((frame["max"] - frame["min"]) / frame["mean"]).to_numpy())
    if spread is None:
        return []
    s = spread.summary
    drop = s.start - s.now
    if s.start <= 0 or s.now > SPREAD_FRACTION * s.start or not significant_change(s, -drop, _noise(s, spread.series)):
        return []
    onset = _settled_step(spread, (s.start + s.now) / 2, above=False)
    return [finding(
        "response_length_mean", "length_spread_collapse", "watch",
        f"The spread of lengths within a batch ((max - min) / mean) fell from {num(s.start)} to {num(s.now)} "
        f"(below its midpoint from step {onset}): completions are converging to one template, which often "
        f"precedes mode collapse.",
        [onset, s.last_step],
    )]


NEAR_EMPTY = 0.05  # the shortest completion under a twentieth of the mean: next to nothing
EXTREMES_SHARE = 0.2  # the latest fifth of the logged steps
SHRANK = 0.5  # the shortest completions at most half as long as at the start


def _extremes(ctx: Context, reading: Reading, cap: int | None) -> list[Finding]:
    """Lengths split into near-empty and capped completions while the mean stays put: a bimodal batch.

    The mean hides it: some completions shrink to a handful of tokens (often an empty or bare answer the
    reward still pays for) while others run to the cap. A practitioner sees it in the min and max curves.
    """
    run = ctx.run
    low, high = run.series("response_length_min"), run.series("response_length_max")
    if cap is None or len(low) < 10 or len(high) < 10:
        return []
    frame = low.to_frame("min").join(high.to_frame("max"), how="inner").join(
        run.series("response_length_mean").to_frame("mean"), how="inner")
    frame = frame[frame["mean"] > 0]
    if len(frame) < 10:
        return []
    k = max(3, int(EXTREMES_SHARE * len(frame)))
    early, late = frame.iloc[:k], frame.iloc[-k:]
    short_now = bool((late["min"] <= NEAR_EMPTY * late["mean"]).mean() >= 0.8)
    short_before = bool((early["min"] <= NEAR_EMPTY * early["mean"]).mean() >= 0.5)
    capped_now = bool((late["max"] >= (1 - CAP_TOLERANCE) * cap).mean() >= 0.8)
    # The shortest completions themselves shrank: a minimum that held at ~110 tokens while the mean grew from 2,000
    # to 5,000 is under a twentieth of the mean without anything having become empty.
    shrank = float(late["min"].median()) <= SHRANK * float(early["min"].median())
    if not short_now or short_before or not capped_now or not shrank:
        return []
    split = (frame["min"] <= NEAR_EMPTY * frame["mean"]).to_numpy()
    onset = _final_stretch_start(frame.index.to_numpy(), split)
    improving = reward_rising(ctx) is True
    return [finding(
        "response_length_mean", "length_split_to_extremes", "watch" if improving else "warning",
        f"Since about step {onset} every batch holds near-empty completions (min {num(float(late['min'].median()))} "
        f"tokens) and completions cut at the {cap}-token cap, while the mean stays near "
        f"{num(float(late['mean'].median()))}: lengths have split into two modes"
        + ("" if improving else ", and reward is not improving: the extremes are being rewarded"),
        [onset, int(frame.index[-1])],
    )]


def _hacking(ctx: Context, reading: Reading, correlation: float | None, drifting: bool) -> list[Finding]:
    """Length drifting in the direction the reward pays for: possible length hacking."""
    reward = ctx.book.get("reward_mean")
    if correlation is None or reward is None or not drifting or abs(correlation) < STRONG_CORRELATION:
        return []
    s, r = reading.summary, reward.summary
    length_up = s.now > s.start
    reward_noise = _noise(r, reward.series)
    if r.now - r.start < -SIGNIFICANT_NOISE * reward_noise:
        return []  # length moving while reward falls is a degradation, read by the reward and cap findings
    if (correlation > 0) != length_up:
        return []
    return [finding(
        "response_length_mean", "length_reward_coupled", "watch",
        f"Length and reward are tied (Spearman {num(correlation)}: {'the longer' if correlation > 0 else 'the shorter'}"
        f", the higher) while mean length "
        f"{'rose' if length_up else 'fell'} from {num(s.start)} to {num(s.now)} and reward went from "
        f"{num(r.start)} to {num(r.now)}: {'longer' if length_up else 'shorter'} completions are what gets "
        f"rewarded; read some to rule out length hacking.",
        [s.trend_window_start, s.last_step],
    )]


def _noise(summary: SignalSummary, series: robust.Series) -> float:
    return max(summary.noise, robust.noise_floor(series.values))




def departure_step(reading: Reading, settled: int, now: float) -> int:
    """Where a climb that settled past its midpoint at `settled` began.

    That is the first step after the last one whose smoothed level was still within a quarter of the way from
    the level before the climb to `now`: the midpoint says when a rise became obvious; a rollback must go back
    to before it began.
    """
    smooth, steps = reading.series.smooth, reading.series.red_steps
    before = steps < settled
    if not before.any():
        return settled
    baseline = float(np.median(smooth[before]))
    threshold = baseline + 0.25 * (now - baseline)
    low = np.flatnonzero(before & (smooth <= threshold))
    if not len(low):
        return int(steps[0])
    # The first step after the last one still near the old level: the first of the climb.
    return int(steps[min(int(low[-1]) + 1, len(steps) - 1)])


def _settled_step(reading: Reading, level: float, above: bool) -> int:
    """First step of the final stretch in which the smoothed curve stays past `level`."""
    smooth, steps = reading.series.smooth, reading.series.red_steps
    past = smooth >= level if above else smooth <= level
    return _final_stretch_start(steps, past, share=1.0)


def _final_stretch_start(steps: np.ndarray, mask: np.ndarray, share: float = 0.8) -> int:
    """Earliest step from which at least `share` of the points satisfy `mask`, starting on one that does."""
    if not mask.any():
        return int(steps[-1])
    tail_share = np.cumsum(mask[::-1])[::-1] / np.arange(len(mask), 0, -1)
    candidates = np.flatnonzero(mask & (tail_share >= share - 1e-12))
    return int(steps[candidates[0]]) if len(candidates) else int(steps[np.flatnonzero(mask)[-1]])


def _longest_run(mask: np.ndarray) -> tuple[int, int]:
    """First and last index of the longest stretch of True (0, -1 when there is none)."""
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    if not len(starts):
        return 0, -1
    best = int(np.argmax(ends - starts))
    return int(starts[best]), int(ends[best]) - 1
