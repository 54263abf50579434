"""Is there still a learning signal?

Group-relative methods learn only from groups whose completions score differently: when every completion
of a prompt gets the same reward, its advantages are all zero. So the spread of rewards (reward_std, the
share of zero-spread groups, the advantage spread) is the health of the learning signal, and a reward at
its ceiling with no spread left means the data has nothing more to teach.
"""

from __future__ import annotations

import numpy as np

from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.models import Finding, LearningSignalDiagnosis
from assessor.diagnose.signals import Reading

NO_SPREAD = 1e-6  # advantage or reward spread this small means every completion scored the same


def diagnose_learning_signal(ctx: Context) -> LearningSignalDiagnosis:
    """Reward spread, zero-spread groups, saturation, identical rewards from the start."""
    reward = ctx.book.get("reward_mean")
    std = ctx.book.get("reward_std")
    zero = ctx.book.get("reward_zero_std_frac")
    adv = ctx.book.get("advantage_std")
    out = LearningSignalDiagnosis(
        reward_std_start=std.summary.start if std else None,
        reward_std_now=std.summary.now if std else None,
        zero_std_frac_start=zero.summary.start if zero else None,
        zero_std_frac_now=zero.summary.now if zero else None,
        advantage_std_now=adv.summary.now if adv else None,
    )
    if reward is None:
        return out
    no_spread_share = _no_spread_share(zero, adv)
    findings: list[Finding] = []

    flat_from_start = _identical_from_start(reward, std, adv)
    if flat_from_start:
        out.identical_from_start = True
        findings.append(finding(
            "reward_mean", "identical_rewards", "critical",
            f"every completion has scored the same since the start (reward {num(reward.summary.start)} with no "
            f"spread over {reward.summary.points} logged steps): no learning signal at all, a setup failure "
            "(reward function, parsing, or prompts)", [reward.summary.first_step]))
        out.findings = findings
        return out

    ceiling, floor = _bounds(reward)
    recent_share = no_spread_share[1] if no_spread_share else None
    spread_gone = (recent_share is not None and recent_share >= 0.9) or (
        std is not None and std.summary.start > 0 and std.summary.now < 0.2 * std.summary.start)
    r = reward.summary
    if ceiling is not None and spread_gone and r.now >= ceiling - 0.1 * max(1.0, ceiling - (floor or 0.0)):
        out.saturated = True
        findings.append(finding(
            "reward_mean", "reward_saturated", "warning",
            f"reward is at its ceiling ({num(r.now)} of {num(ceiling)}) and the spread is gone"
            f"{_share_text(no_spread_share)}: the data has nothing more to teach; harder prompts or stopping",
            [r.plateau_start or r.trend_window_start]))
    elif floor is not None and spread_gone and r.now <= floor + 0.05 * max(1.0, (ceiling or 1.0) - floor):
        findings.append(finding(
            "reward_mean", "reward_floor_no_signal", "critical",
            f"reward has fallen to its floor ({num(r.now)}, from a peak of {num(r.peak)} at step {r.peak_step}) "
            f"and every group now scores the same{_share_text(no_spread_share)}: the policy gets no gradient "
            "and cannot recover on its own", [_onset(reward)]))
    elif recent_share is not None and recent_share >= 0.5 and no_spread_share and no_spread_share[0] < recent_share:
        findings.append(finding(
            "reward_zero_std_frac", "signal_thinning", "watch" if recent_share < 0.8 else "warning",
            f"{recent_share:.0%} of recent groups have zero reward spread (from {no_spread_share[0]:.0%} early): "
            "most completions no longer carry gradient", [_onset(zero or adv or reward)]))
    elif ceiling == 1.0 and floor == 0.0 and no_spread_share is None and std is None and r.trend != "rising" and (
            r.now >= 0.97):
        out.saturated = True
        findings.append(finding(
            "reward_mean", "reward_saturated", "watch",
            f"reward sits at its ceiling ({num(r.now)} of 1.0; the run logs no reward spread, but at this level "
            "almost every group scores the same): little is left to learn from these prompts",
            [r.plateau_start or r.trend_window_start]))
    if std is not None and not out.saturated and std.summary.trend == "falling" and std.summary.start > 0 and (
            std.summary.now < 0.3 * std.summary.start):
        findings.append(finding(
            "reward_std", "reward_std_collapsing", "watch",
            f"reward spread is falling ({num(std.summary.start)} → {num(std.summary.now)}): the learning signal is "
            "thinning", [std.summary.trend_window_start]))
    out.findings = findings
    return out


def _no_spread_share(zero: Reading | None, adv: Reading | None) -> tuple[float, float] | None:
    """Share of zero-spread groups (early, recent): logged directly, or from the advantage spread per step."""
    if zero is not None:
        return float(np.clip(zero.summary.start, 0, 1)), float(np.clip(zero.summary.now, 0, 1))
    if adv is not None:
        flat = adv.series.values <= NO_SPREAD
        k = max(3, len(flat) // 10)
        return float(np.mean(flat[:k])), float(np.mean(flat[-k:]))
    return None


def _identical_from_start(reward: Reading, std: Reading | None, adv: Reading | None) -> bool:
    values = reward.series.values
    if len(values) < 5 or float(np.ptp(values)) > NO_SPREAD:
        return False
    spreads = [r.series.values for r in (std, adv) if r is not None]
    return all(float(np.max(np.abs(s))) <= NO_SPREAD for s in spreads)


def _bounds(reward: Reading) -> tuple[float | None, float | None]:
    """The reward's ceiling and floor when the data shows them (a 0/1 reward, or a pinned maximum)."""
    values = reward.series.values
    low, high = float(np.min(values)), float(np.max(values))
    if low >= 0.0 and high <= 1.0:
        return 1.0, 0.0
    return high, low


def _share_text(share: tuple[float, float] | None) -> str:
    return f" ({share[1]:.0%} of recent groups with zero spread)" if share else ""


def _onset(reading: Reading) -> int:
    summary = reading.summary
    if summary.change_points:
        return summary.change_points[-1].step
    return summary.trend_window_start
