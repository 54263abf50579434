"""Held-out evaluation: where it peaked, whether it is falling, and whether it disagrees with training reward.

Eval points are few (every 5-50 steps), so they are read raw: the peak is the best evaluated value, the
decline is measured against the eval curve's own step-to-step noise, and it takes at least two evaluations
past the peak before a decline is called.
"""

from __future__ import annotations

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.models import EvalDiagnosis, Finding, Severity

# Preferred held-out metrics, best first; `loss` is lower-is-better.
EVAL_METRICS = ("accuracy", "reward_mean", "pass_at_k", "pref_accuracy", "pref_margin", "loss")
LOWER_IS_BETTER = frozenset({"loss"})


def diagnose_eval(ctx: Context) -> EvalDiagnosis:
    """Peak, now, decline from the peak in noise units, and divergence from training reward."""
    metric = next((m for m in EVAL_METRICS if ctx.run.has(m, "eval")), None)
    if metric is None:
        return EvalDiagnosis()
    series = ctx.run.series(metric, "eval")
    steps, values = series.index.to_numpy(), series.to_numpy()
    sign = -1.0 if metric in LOWER_IS_BETTER else 1.0
    score = sign * values
    peak_index = int(np.argmax(score))
    peak_step, now_step = int(steps[peak_index]), int(steps[-1])
    out = EvalDiagnosis(
        metric=metric, points=len(values), peak_step=peak_step, peak=float(values[peak_index]),
        now=float(values[-1]), now_step=now_step,
    )
    if len(values) < 3:
        return out
    noise = _eval_noise(score)
    recent = float(np.mean(score[-2:]))  # two evaluations, so one unlucky one does not call a decline
    # The best of many noisy evaluations is a lucky one: its level is read with its neighbours, so a single
    # high draw among twenty evaluations does not pass for a peak the model has since fallen from.
    around_peak = score[max(0, peak_index - 1):peak_index + 2]
    decline = (float(np.mean(around_peak)) - recent) / noise
    out.decline_from_peak_noise = decline
    evals_after_peak = len(values) - 1 - peak_index
    findings: list[Finding] = []
    label = f"held-out {metric}"
    # Also compare stretches: the best few consecutive evaluations against the latest few. A steady slide over
    # many evaluations is significant even when each step of it is within the eval-to-eval noise.
    k = max(1, min(3, len(values) // 4))
    windows = np.convolve(score, np.ones(k) / k, mode="valid")
    best_start = int(np.argmax(windows))
    stretch_t = (float(windows[best_start]) - float(np.mean(score[-k:]))) / (noise * np.sqrt(2.0 / k))
    slid = best_start + k <= len(values) - k and stretch_t >= 3.0
    if slid and not (evals_after_peak >= 2 and decline >= 2.0):
        peak_index = best_start + int(np.argmax(score[best_start:best_start + k]))
        peak_step = int(steps[peak_index])
        out.peak_step, out.peak = peak_step, float(values[peak_index])
        evals_after_peak = len(values) - 1 - peak_index
        decline = max(decline, stretch_t)
        out.decline_from_peak_noise = decline
    if evals_after_peak >= 2 and decline >= 2.0:
        relative = (float(score[peak_index]) - recent) / max(abs(float(score[peak_index])), 1e-12)
        severity: Severity = "critical" if relative >= 0.5 else "warning"
        findings.append(finding(
            "eval", "eval_declining", severity,
            f"{label} peaked at {num(out.peak)} at step {out.peak_step} and is {num(out.now)} at step {out.now_step} "
            f"({decline:.1f}x its eval-to-eval noise of {num(noise)}, {evals_after_peak} evaluations since the "
            "peak): the best model is behind us", [peak_step, now_step]))
        out.diverging_from_train = _train_still_up(ctx, peak_step)
        if out.diverging_from_train:
            findings.append(finding(
                "eval", "train_eval_divergence", "warning",
                f"training reward kept rising after step {out.peak_step} while {label} fell: the gains do not "
                "transfer (overfitting to the training prompts, or reward hacking)", [peak_step]))
    elif peak_index == len(values) - 1 or (evals_after_peak <= 1 and decline < 2.0):
        findings.append(finding(
            "eval", "eval_at_best", "info",
            f"{label} is at or near its best ({num(out.now)} at step {out.now_step}; peak {num(out.peak)})",
            [now_step]))
    else:
        findings.append(finding(
            "eval", "eval_holding", "info",
            f"{label} is within noise of its peak ({num(out.peak)} at step {out.peak_step}; now {num(out.now)})",
            [peak_step]))
    out.findings = findings
    return out


def _eval_noise(score: np.ndarray) -> float:
    # Evaluations are separate measurements (fresh samples of a fixed set), so their noise is read from
    # differences without the autocorrelation correction: with a dozen points, a steady slide would otherwise
    # masquerade as autocorrelated noise and hide itself.
    diffs = np.diff(score)
    noise = float(np.median(np.abs(diffs - np.median(diffs)))) * robust.MAD_TO_SD / np.sqrt(2.0) if len(diffs) else 0.0
    # With a handful of points the estimate is rough; never let it fall below 1% of the level's scale.
    return max(noise, 0.01 * float(np.max(np.abs(score))), robust.noise_floor(score))


def _train_still_up(ctx: Context, since_step: int) -> bool:
    reward = ctx.book.get("reward_mean")
    if reward is None:
        return False
    steps, values = reward.series.steps, reward.series.values
    before = values[steps <= since_step]
    after = values[steps > since_step]
    if len(before) < 3 or len(after) < 3:
        return False
    k = max(3, min(len(before), len(after)) // 3)
    rise = float(np.median(after[-k:])) - float(np.median(before[-k:]))
    return rise > max(reward.series.noise, robust.noise_floor(values)) * 0.5
