"""Ratio clipping: how often the PPO/GRPO trust region binds, on which side, and whether that is growing.

The clipped fraction is a share of tokens, so its sizes are read against its 0..1 bounds: clipping on
most tokens means the step size is too large for the trust region; clipping that keeps growing often comes
before a KL blow-up; a strong imbalance between the low side (probabilities pushed down) and the high side
(pushed up) says which way the policy is being moved. A ratio that is exactly zero on every step is what a
fully on-policy run logs (one optimizer update per batch, TRL's default `num_iterations=1`): the ratio is 1
by construction, nothing can be clipped, and that is normal.
"""

from __future__ import annotations

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.kl_reward import primary_reward, reward_rising
from assessor.diagnose.models import ClippingDiagnosis, Finding, Severity
from assessor.diagnose.signals import Reading, describe

EXCESSIVE = 0.3  # clipping on more than ~30% of tokens: updates too aggressive for the trust region
HIGH = 0.2  # above the ~20% a healthy GRPO run rarely exceeds
MATERIAL = 0.01  # below 1% of tokens clipped, neither a rise nor an imbalance changes the update much
ASYMMETRY = 0.6  # one side at least four times the other
RISE_RELATIVE = 1.5
SIGNIFICANT_NOISE = 3.0
CLEAR_NOISE = 5.0


def diagnose_clipping(ctx: Context) -> ClippingDiagnosis:
    """Read the ratio-clipping curves of a run.

    Args:
        ctx: The run and its readings.

    Returns:
        The clipped fraction now (total, low side, high side), its recent trend, whether it was exactly zero
        on every step, and findings.
    """
    region = ctx.book.get("clip_ratio_region")
    low, high = ctx.book.get("clip_ratio_low"), ctx.book.get("clip_ratio_high")
    dual = ctx.book.get("clip_ratio_dual")
    total = clipped_fraction(ctx)
    if total is None:
        return ClippingDiagnosis()
    s = total.summary
    parts = [r for r in (region, low, high) if r is not None]
    if all(not np.any(r.series.values) for r in parts):
        return ClippingDiagnosis(
            level_now=0.0, low_now=0.0 if low else None, high_now=0.0 if high else None, trend="flat",
            exactly_zero=True, findings=[finding(
                total.summary.metric, "clip_ratio_exactly_zero", "info",
                f"The clipped fraction is exactly 0 on all {s.points} logged steps ({s.first_step}-{s.last_step}): "
                "normal for a fully on-policy run (one update per batch of rollouts, e.g. TRL's default "
                "num_iterations=1), whose probability ratio is 1 by construction; it says nothing about update size.",
                [s.first_step],
            )],
        )
    findings = [*_level(total), *_rising(total), *_asymmetry(low, high), *_dual(dual)]
    findings.extend(_narrowing_without_gain(ctx, findings))
    return ClippingDiagnosis(
        level_now=s.now, low_now=low.summary.now if low else None, high_now=high.summary.now if high else None,
        trend=s.trend, exactly_zero=False, findings=findings,
    )


ENTROPY_MOSTLY_GONE = 0.5  # entropy below half of where it started


def _narrowing_without_gain(ctx: Context, findings: list[Finding]) -> list[Finding]:
    """High-side clipping growing while entropy drains and reward does not improve: collapse onto one mode.

    High-side clipping means the policy keeps pushing up tokens it already favoured. With reward rising that
    is healthy sharpening; with reward flat or falling and entropy mostly gone, it is narrowing that buys
    nothing, and the model from before it began was the better one.
    """
    kinds = {f.kind: f for f in findings if f.severity != "info"}
    rising, high_side = kinds.get("clip_ratio_rising"), kinds.get("clip_ratio_high_side_dominates")
    entropy = ctx.book.get("entropy")
    improving = reward_rising(ctx)
    if rising is None or high_side is None or entropy is None or improving is None:
        return []
    e = entropy.summary
    if improving or e.start <= 0 or e.now >= ENTROPY_MOSTLY_GONE * e.start:
        return []
    return [finding(
        "clip_ratio_region", "narrowing_without_gain", "warning",
        f"High-side clipping has grown since step {rising.steps[0]} while entropy fell from {num(e.start)} to "
        f"{num(e.now)} and {primary_reward(ctx)} is not improving: the policy is collapsing onto a narrow mode "
        "rather than sharpening what works",
        [rising.steps[0]],
    )]


def clipped_fraction(ctx: Context) -> Reading | None:
    """The clipped fraction of tokens: the logged total, else low + high side (the two regions do not overlap)."""
    region = ctx.book.get("clip_ratio_region")
    if region is not None:
        return region
    low, high = ctx.book.get("clip_ratio_low"), ctx.book.get("clip_ratio_high")
    if low is None or high is None:
        return low or high

    def both_sides() -> Reading | None:
        frame = ctx.run.series("clip_ratio_low").to_frame("low").join(
            ctx.run.series("clip_ratio_high").to_frame("high"), how="inner")
        return describe("clip_ratio_region", "train", frame.index.to_numpy(),
                        (frame["low"] + frame["high"]).to_numpy())

    # Read by the clipping diagnosis and by the breakdown check: summed and described once.
    return ctx.book.derived("clip_ratio_region", both_sides)


def _level(total: Reading) -> list[Finding]:
    """Clipping on a large share of tokens now."""
    s = total.summary
    if s.now < HIGH:
        return []
    severity: Severity = "warning" if s.now >= EXCESSIVE else "watch"
    onset = _settled_step(total, HIGH)
    return [finding(
        s.metric, "clip_ratio_high", severity,
        f"The trust region clips {num(s.now * 100)}% of tokens now ({num(s.start * 100)}% at the start, above "
        f"{num(HIGH * 100)}% since step {onset}): updates are too large for the clip range; the learning rate is "
        f"high relative to epsilon.",
        [onset, s.last_step],
    )]


def _rising(total: Reading) -> list[Finding]:
    """Clipping growing well beyond its start: optimisation becoming more aggressive."""
    s = total.summary
    noise = max(s.noise, robust.noise_floor(total.series.values))
    rise = s.now - s.start
    size = rise / noise
    confirmed = s.trend == "rising" or any(cp.direction == "up" for cp in s.change_points)
    if rise <= 0 or s.now < RISE_RELATIVE * s.start or size < SIGNIFICANT_NOISE or (
            not confirmed and size < CLEAR_NOISE):
        return []
    onset = _settled_step(total, (s.start + s.now) / 2)
    severity: Severity = "watch" if s.now >= MATERIAL else "info"
    return [finding(
        s.metric, "clip_ratio_rising", severity,
        f"The clipped fraction rose from {num(s.start * 100)}% to {num(s.now * 100)}% of tokens (above its "
        f"midpoint since step {onset}): updates push harder against the trust region, often "
        f"before a KL blow-up.",
        [onset, s.last_step],
    )]


def _asymmetry(low: Reading | None, high: Reading | None) -> list[Finding]:
    """One side of the trust region doing most of the clipping over the recent steps."""
    if low is None or high is None:
        return []
    since = max(low.summary.trend_window_start, high.summary.trend_window_start)
    lo = float(np.mean(low.series.values[low.series.steps >= since]))
    hi = float(np.mean(high.series.values[high.series.steps >= since]))
    if lo + hi < MATERIAL:
        return []
    balance = (hi - lo) / (lo + hi)
    if abs(balance) < ASYMMETRY:
        return []
    severity: Severity = "watch" if lo + hi >= HIGH / 2 else "info"
    if balance > 0:
        kind, meaning = "clip_ratio_high_side_dominates", (
            "the policy is growing more confident in tokens it already preferred: learning strong preferences, "
            "or narrowing towards one mode")
    else:
        kind, meaning = "clip_ratio_low_side_dominates", (
            "the policy is pushing down tokens it used to like: correcting mistakes, or unlearning good "
            "behaviour")
    return [finding(
        high.summary.metric if balance > 0 else low.summary.metric, kind, severity,
        f"Since step {since}, {num(hi * 100)}% of tokens are clipped on the high side against {num(lo * 100)}% on "
        f"the low side (asymmetry {num(balance)}): {meaning}.",
        [since, max(low.summary.last_step, high.summary.last_step)],
    )]


def _dual(dual: Reading | None) -> list[Finding]:
    """The dual-clip bound (verl) active on a material share of negative-advantage tokens."""
    if dual is None or dual.summary.now < MATERIAL:
        return []
    s = dual.summary
    return [finding(
        s.metric, "clip_ratio_dual_active", "info",
        f"The dual-clip lower bound binds on {num(s.now * 100)}% of tokens now ({num(s.start * 100)}% at the "
        f"start): tokens with negative advantage whose probability ratio has grown very large.",
        [s.trend_window_start, s.last_step],
    )]


def _settled_step(reading: Reading, level: float) -> int:
    """First step of the final stretch in which the smoothed curve stays at or above `level`."""
    smooth, steps = reading.series.smooth, reading.series.red_steps
    below = np.flatnonzero(smooth < level)
    index = int(below[-1]) + 1 if len(below) else 0
    return int(steps[min(index, len(steps) - 1)])
