"""The loss: an anomaly detector in policy-gradient runs, a progress signal in DPO.

In GRPO, PPO, RLOO and DAPO the logged loss is a clipped surrogate built on advantages that are zero-mean
by construction; it can go up, down or oscillate while the model improves, so its trend is never read as
progress and never raises a warning by itself. What does count is its magnitude changing abruptly (a
sudden doubling or halving, or a blow-up by orders of magnitude): something in the data, the schedule or
the gradients changed. Steps where the loss is exactly 0 are steps where every advantage was 0 (all
completions of every group scored alike); they say nothing about the loss's magnitude and are left out of it.

In DPO the loss is -log sigmoid(beta * margin): it starts at ln 2 (no preference yet) and should fall.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd

from assessor.diagnose import robust
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.models import Finding, LossDiagnosis
from assessor.diagnose.signals import Reading, significant_change
from assessor.run import Run

PREFERENCE_ALGORITHMS = frozenset({"dpo", "ipo", "kto", "orpo", "simpo", "cpo", "apo", "sppo", "nca"})
LN2 = math.log(2)
LN2_BAND = 0.05  # "still at ln 2": a loss that has fallen further has started to separate the pairs
BLOW_UP_FACTOR = 10.0  # an order of magnitude: no schedule or batch mix moves a surrogate loss that far
MIN_ACTIVE = 16  # non-zero points needed to compare the loss magnitude early and late
CONFIRM_MIN = 5  # points on each side of a discontinuity that must show the new magnitude
SIGNIFICANT_NOISE = 3.0
OSCILLATION_SIGN_CHANGES = 0.3  # share of consecutive non-zero points that change sign
OSCILLATION_CENTRE = 0.25  # |median| within a quarter of the spread: centred on zero


def diagnose_loss(ctx: Context) -> LossDiagnosis:
    """Read the policy loss (or, for preference training, the DPO loss).

    Args:
        ctx: The run and its readings.

    Returns:
        The metric read, its pattern (stable, declining, oscillating_around_zero, sign_reversal,
        discontinuity, absent) and findings.
    """
    metric = "pg_loss" if ctx.book.get("pg_loss") is not None else "loss"
    reading = ctx.book.get(metric)
    if reading is None:
        return LossDiagnosis()
    values = reading.series.values
    if not np.any(values):
        s = reading.summary
        return LossDiagnosis(metric=metric, pattern="stable", findings=[finding(
            metric, "loss_exactly_zero", "info",
            f"The {metric} is exactly 0 on all {s.points} logged steps ({s.first_step}-{s.last_step}), so it carries "
            f"no information in this run.",
            [s.first_step],
        )])
    if _is_preference(ctx):
        # A loss-only loop of unknown kind (preference or supervised) is read the same way, in plainer words.
        known = _known_preference(ctx)
        return _preference_loss(reading, _pairs_separated(ctx), "preference loss" if known else "training loss")
    return _policy_loss(ctx, reading)


def _is_preference(ctx: Context) -> bool:
    return _known_preference(ctx) or (not ctx.facts.algorithm and logs_loss_only(ctx.run))


def _known_preference(ctx: Context) -> bool:
    algorithm = (ctx.facts.algorithm or "").lower()
    if algorithm:
        return algorithm in PREFERENCE_ALGORITHMS
    return ctx.run.has("pref_margin") or ctx.run.has("pref_accuracy")


def logs_loss_only(run: Run) -> bool:
    """No training reward of any kind is logged: the loop optimises its loss directly.

    A policy-gradient run always logs the reward it climbs; one that logs losses only is a preference or
    supervised loop, where the loss (and the held-out loss above all) is the measure of progress.
    """
    train = run.metric_names("train")
    return bool(train) and not any(
        m in ("reward_mean", "reward_shaped_mean") or m.startswith(("reward_component/", "pref_")) for m in train)


def _policy_loss(ctx: Context, reading: Reading) -> LossDiagnosis:
    """GRPO/PPO-style surrogate: magnitude anomalies only; the trend is described, never judged."""
    s = reading.summary
    metric = s.metric
    algorithm = (ctx.facts.algorithm or "policy-gradient").upper()
    findings = [finding(
        metric, "loss_not_a_progress_signal", "info",
        f"The {algorithm} {metric} is a surrogate objective on zero-mean advantages: it can rise, fall or oscillate "
        f"in a healthy run, so its trend is not read as progress; only sudden changes of magnitude count.",
        [s.first_step],
    )]
    blow_up = _blow_up(reading)
    if blow_up:
        return LossDiagnosis(metric=metric, pattern="blow_up", findings=[*blow_up, *findings])
    jumps = _discontinuities(reading)
    if jumps:
        return LossDiagnosis(metric=metric, pattern="discontinuity", findings=[*jumps, *findings])
    reversal = _sign_reversal(reading)
    if reversal:
        return LossDiagnosis(metric=metric, pattern="sign_reversal", findings=[*reversal, *findings])
    if _oscillates_around_zero(reading):
        return LossDiagnosis(metric=metric, pattern="oscillating_around_zero", findings=findings)
    noise = _noise(reading)
    if significant_change(s, s.now - s.start, noise) and s.now < s.start:
        return LossDiagnosis(metric=metric, pattern="declining", findings=findings)
    return LossDiagnosis(metric=metric, pattern="stable", findings=findings)


def _blow_up(reading: Reading) -> list[Finding]:
    """The typical size of the non-zero loss growing by an order of magnitude from the early steps."""
    steps, values = _active(reading)
    if len(values) < MIN_ACTIVE:
        return []
    magnitude = np.abs(values)
    quarter = len(values) // 4
    early, late = float(np.median(magnitude[:quarter])), float(np.median(magnitude[-quarter:]))
    if early <= 0 or late < BLOW_UP_FACTOR * early:
        return []
    # Onset: where a running median of the magnitude last rose through the geometric midpoint and stayed.
    window = max(3, len(values) // 20) | 1
    running = pd.Series(magnitude).rolling(window, center=True, min_periods=1).median().to_numpy()
    above = running >= math.sqrt(early * late)
    tail_share = np.cumsum(above[::-1])[::-1] / np.arange(len(above), 0, -1)
    settled = np.flatnonzero(above & (tail_share >= 0.8))
    onset = int(steps[settled[0]]) if len(settled) else int(steps[np.flatnonzero(above)[0]])
    largest = int(np.argmax(magnitude))
    s = reading.summary
    return [finding(
        s.metric, "loss_magnitude_blow_up", "warning",
        f"The {s.metric} magnitude blew up: typically {num(early)} over the first quarter of the run and "
        f"{num(late)} over the last ({num(late / early)}x), above the midpoint from step {onset}; largest "
        f"{num(float(values[largest]))} at step {int(steps[largest])}. A surrogate loss that size means something "
        f"broke: sequence-summed log-probs of ever longer completions, a policy drifting far from the sampler, "
        f"or exploding gradients.",
        sorted({onset, int(steps[largest])}),
    )]


def _discontinuities(reading: Reading) -> list[Finding]:
    """Sudden, lasting doublings or halvings of the loss magnitude."""
    steps, values = _active(reading)
    noise = _noise(reading)
    out: list[Finding] = []
    for step, _, _, _ in robust.discontinuities(steps, values):
        confirmed = _confirm(steps, values, step, noise)
        if confirmed is None:
            continue
        before, after = confirmed
        s = reading.summary
        up = after > before
        out.append(finding(
            s.metric, "loss_discontinuity", "warning" if up else "watch",
            f"The {s.metric} magnitude {'jumped' if up else 'dropped'} from about {num(before)} to {num(after)} at "
            f"step {step} ({num(after / before)}x) and stayed there: something changed abruptly (data, learning-"
            f"rate schedule, {'a gradient explosion' if up else 'advantages vanishing'}); find out what.",
            [step],
        ))
    return out


def _confirm(steps: np.ndarray, values: np.ndarray, step: int, noise: float) -> tuple[float, float] | None:
    """Magnitudes before/after `step` when a longer look confirms a steady, lasting, noise-clearing jump.

    `robust.discontinuities` compares a few points on each side; a loss with a handful of large batches can
    fool that. Here each side is a tenth of the run (at least five points): the magnitude must change by at
    least 2x, each side's log-magnitude must be steadier than the jump, and the change must clear the noise.
    """
    i = int(np.searchsorted(steps, step))
    k = max(CONFIRM_MIN, len(values) // 10)
    left, right = np.abs(values[max(0, i - k):i]), np.abs(values[i:i + k])
    if len(left) < CONFIRM_MIN or len(right) < CONFIRM_MIN or not left.all() or not right.all():
        return None
    before, after = float(np.median(left)), float(np.median(right))
    jump = math.log(after / before)
    spread = max(_mad(np.log(left)), _mad(np.log(right)))
    if abs(jump) < LN2 or spread >= abs(jump) / 2 or abs(after - before) < SIGNIFICANT_NOISE * noise:
        return None
    # A step, not a ramp: neither side may drift by more than a third of the jump on its own (a loss that
    # grows steadily with KL from zero crosses every doubling without any sudden change).
    if max(_drift(np.log(left)), _drift(np.log(right))) >= abs(jump) / 3:
        return None
    return before, after


def _drift(logs: np.ndarray) -> float:
    """Difference between the medians of the second and first half of a stretch."""
    half = len(logs) // 2
    return abs(float(np.median(logs[half:])) - float(np.median(logs[:half])))


def _sign_reversal(reading: Reading) -> list[Finding]:
    """A sustained positive level followed by a sustained negative one, or the reverse (from change points)."""
    s = reading.summary
    noise = _noise(reading)
    for cp in s.change_points:
        jump = abs(cp.after - cp.before)
        clear = max(0.25 * jump, noise / 2)
        if cp.before * cp.after < 0 and abs(cp.before) >= clear and abs(cp.after) >= clear:
            return [finding(
                s.metric, "loss_sign_reversal", "watch",
                f"The {s.metric} changed sign at step {cp.step}: about {num(cp.before)} before, {num(cp.after)} after, "
                f"each held for a stretch. The direction of the updates reversed; read it with the reward, which "
                f"says whether that is good.",
                [cp.step],
            )]
    return []


def _oscillates_around_zero(reading: Reading) -> bool:
    """Median near zero against the spread, and frequent sign changes between consecutive non-zero points."""
    _, values = _active(reading)
    if len(values) < 8:
        return False
    spread = _mad(values) or float(np.std(values))
    signs = np.sign(values)
    changes = float(np.mean(signs[1:] != signs[:-1]))
    return abs(float(np.median(values))) <= OSCILLATION_CENTRE * spread and changes >= OSCILLATION_SIGN_CHANGES


def _pairs_separated(ctx: Context) -> str | None:
    """The preference accuracy or margin, if its latest stretch shows the pairs are being told apart.

    A DPO loss can sit near ln 2 because the labels disagree (crowd-labelled pairs cap the accuracy near 0.6), not
    because nothing is learnt; the accuracy and the margin measure the separation itself. A latest stretch clear of
    chance (accuracy 0.5, margin 0) by three standard errors and by a material amount (the accuracy by
    `LN2_BAND`, the margin by twice it: the loss falls by about half the mean margin) is separation.
    """
    for metric, chance, material in (("pref_accuracy", 0.5, LN2_BAND), ("pref_margin", 0.0, 2 * LN2_BAND)):
        reading = ctx.book.get(metric)
        if reading is None or reading.series.n < 5:
            continue
        values = reading.series.values
        latest = values[-robust.stretch_width(len(values)):]
        error = float(np.std(latest, ddof=1)) / math.sqrt(len(latest)) if len(latest) > 1 else math.inf
        excess = float(np.mean(latest)) - chance
        if excess >= material and excess >= SIGNIFICANT_NOISE * error:
            return f"{metric} {num(float(np.mean(latest)))} over its latest {len(latest)} points"
    # The held-out loss falling clearly below its first evaluations is separation shown on held-out pairs.
    held_out = ctx.run.series("loss", "eval").to_numpy()
    if len(held_out) >= 4:
        first, now = float(np.mean(held_out[:2])), float(np.mean(held_out[-2:]))
        spread = float(np.std(np.diff(held_out), ddof=1)) / math.sqrt(2.0) if len(held_out) > 2 else math.inf
        if first - now >= max(LN2_BAND / 2, SIGNIFICANT_NOISE * spread):
            return f"held-out loss {num(first)} → {num(now)}"
    return None


def _preference_loss(reading: Reading, separated: str | None = None, what: str = "preference loss") -> LossDiagnosis:
    """DPO-style loss: a progress signal that starts at ln 2 and should fall.

    `separated` names the evidence that the pairs are told apart (see `_pairs_separated`): then a loss near
    ln 2 is the data's ceiling, not a stalled policy.
    """
    s = reading.summary
    metric = s.metric
    noise = _noise(reading)
    anomalies = _discontinuities(reading)
    change = s.now - s.start
    # Levels are compared as stretch means against their standard error: the DPO loss is noisy step to step
    # (a few pairs per batch), so a fall of one point-noise unit over a hundred steps is large.
    n = reading.series.n
    width = max(3, n // 10)
    head, tail = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    head[:width], tail[-width:] = True, True
    shift = robust.level_shift(reading.series, head, tail)
    first = float(reading.series.values[0])
    # Sigmoid DPO starts at exactly ln 2 (policy = reference, margin 0); other losses (IPO, hinge) do not.
    at_ln2 = abs(first - LN2) <= max(0.05, noise)
    # The start quoted is the table's (a robust level of the first points); ln 2 is named beside it, not equated
    # with a first logged value that is off it by a batch's noise.
    origin = (f"{num(s.start)} over its first points (its first logged value, at step {s.first_step}, about ln 2 = "
              "0.693: no preference yet)" if at_ln2 and abs(s.start - LN2) > LN2_BAND else
              f"{num(s.start)} (about ln 2 = 0.693 at step {s.first_step}: no preference yet)" if at_ln2
              else num(s.start))
    findings: list[Finding] = []
    pattern: Literal["stable", "declining", "rising", "discontinuity"]
    if change < 0 and (shift.t <= -SIGNIFICANT_NOISE or significant_change(s, change, noise)):
        pattern = "declining"
        findings.append(finding(
            metric, "dpo_loss_declining", "info",
            f"The {what} fell from {origin} to {num(s.now)}: " + (
                "the policy increasingly prefers the chosen responses." if what == "preference loss" else
                "the loop is fitting its objective (the held-out loss says whether that generalises)."),
            [s.first_step, s.last_step],
        ))
    elif change > 0 and (shift.t >= SIGNIFICANT_NOISE or significant_change(s, change, noise)):
        pattern = "rising"
        findings.append(finding(
            metric, "dpo_loss_rising", "warning",
            f"The {what} rose from {num(s.start)} to {num(s.now)}: " + (
                "the policy is losing its preference for the chosen responses (learning rate, data or beta)."
                if what == "preference loss" else "the loop is diverging (learning rate or data)."),
            [s.trend_window_start, s.last_step],
        ))
    else:
        pattern = "stable"
        # "Stays at ln 2" is a claim that it did not fall: the comparison of the two stretches must be fine enough
        # to have shown a fall of LN2_BAND (two standard errors of their difference), or it is only too noisy to say.
        powered = noise * math.sqrt(2.0 / width) <= LN2_BAND / 2
        if (at_ln2 and abs(shift.after - LN2) <= LN2_BAND and abs(shift.t) < 2 and s.points >= 10 and powered
                and not separated):
            findings.append(finding(
                metric, "dpo_loss_flat_at_ln2", "warning",
                f"The {what} stays at {num(s.now)}, ln 2, over {s.points} steps: the policy does not "
                f"separate chosen from rejected at all (check the learning rate, beta and the pairs).",
                [s.first_step, s.last_step],
            ))
    if anomalies:
        pattern = "discontinuity"
    return LossDiagnosis(metric=metric, pattern=pattern, findings=[*anomalies, *findings])


def _active(reading: Reading) -> tuple[np.ndarray, np.ndarray]:
    """Steps and values where the loss is not exactly 0 (exact zeros: every advantage was 0)."""
    series = reading.series
    keep = series.values != 0
    return series.steps[keep], series.values[keep]


def _noise(reading: Reading) -> float:
    return max(reading.summary.noise, robust.noise_floor(reading.series.values))


def _mad(values: np.ndarray) -> float:
    return float(robust.median(np.abs(values - robust.median(values)))) * robust.MAD_TO_SD if len(values) else 0.0


