"""The `thresholds` baseline: the fixed alerts a training callback raises, as a judge.

This is naive alerting, kept on purpose so every eval report shows how far the assessor is above it. It
reproduces the alerts of the seed projects' training callbacks:

* reward std below 0.05 (no spread left between completions: no learning signal),
* KL above 1,
* entropy below 1,
* total clipping above 0.4 or below 0.01,
* mean response length below 0.5x or above 2x its value at the start.

Each signal is read as a callback sees it: the mean of the latest few logged values (`RECENT` points), not a
trend, a noise estimate or a comparison with the rest of the run. The length's start is the mean of its first
`RECENT` values. A signal the run does not log raises no alert.

Any alert means "stop" (a callback that alerts has no notion of rolling back); no alert means "continue".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assessor.judge.base import JudgeRequest, JudgeResult
from assessor.judge.models import Evidence, Usage, Verdict
from assessor.run import Run

RECENT = 5  # logged values averaged, as a callback's smoothing window would
REWARD_STD_MIN = 0.05
KL_MAX = 1.0
ENTROPY_MIN = 1.0
CLIP_MAX = 0.4
CLIP_MIN = 0.01
LENGTH_LOW = 0.5
LENGTH_HIGH = 2.0


@dataclass(frozen=True)
class Alert:
    """One fixed threshold crossed.

    Attributes:
        signal: canonical metric name (`reward_std`, `kl`, `entropy`, `clip_ratio`, `response_length_mean`).
        value: the recent mean that crossed it.
        observation: one sentence with the value and the threshold.
        step: the latest step the value was read at.
    """

    signal: str
    value: float
    observation: str
    step: int


def series(run: Run, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Steps and values of one training metric, in step order (empty arrays when it is not logged)."""
    metrics = run.metrics
    if not len(metrics):
        return np.array([], dtype=int), np.array([], dtype=float)
    rows = metrics[(metrics["metric"] == metric) & (metrics["split"] == "train")].sort_values("step", kind="stable")
    return rows["step"].to_numpy(dtype=int), rows["value"].to_numpy(dtype=float)


def _recent(run: Run, metric: str) -> tuple[float, int] | None:
    steps, values = series(run, metric)
    if not len(values):
        return None
    return float(np.mean(values[-RECENT:])), int(steps[-1])


def _total_clip(run: Run) -> tuple[float, int] | None:
    region = _recent(run, "clip_ratio_region")
    if region is not None:
        return region
    parts = [r for r in (_recent(run, "clip_ratio_low"), _recent(run, "clip_ratio_high")) if r is not None]
    if not parts:
        return None
    return sum(value for value, _ in parts), max(step for _, step in parts)


def alerts(run: Run) -> list[Alert]:
    """Every fixed alert the run's latest values raise (see the module docstring)."""
    out: list[Alert] = []
    reward_std = _recent(run, "reward_std") or _recent(run, "reward_group_std_mean")
    if reward_std is not None and reward_std[0] < REWARD_STD_MIN:
        out.append(Alert("reward_std", reward_std[0], f"reward std {reward_std[0]:.3g} < {REWARD_STD_MIN}",
                         reward_std[1]))
    kl = _recent(run, "kl")
    if kl is not None and kl[0] > KL_MAX:
        out.append(Alert("kl", kl[0], f"KL {kl[0]:.3g} > {KL_MAX:g}", kl[1]))
    entropy = _recent(run, "entropy")
    if entropy is not None and entropy[0] < ENTROPY_MIN:
        out.append(Alert("entropy", entropy[0], f"entropy {entropy[0]:.3g} < {ENTROPY_MIN:g}", entropy[1]))
    clip = _total_clip(run)
    if clip is not None and not CLIP_MIN <= clip[0] <= CLIP_MAX:
        side = f"> {CLIP_MAX:g}" if clip[0] > CLIP_MAX else f"< {CLIP_MIN:g}"
        out.append(Alert("clip_ratio", clip[0], f"total clipping {clip[0]:.3g} {side}", clip[1]))
    steps, lengths = series(run, "response_length_mean")
    if len(lengths):
        start = float(np.mean(lengths[:RECENT]))
        now = float(np.mean(lengths[-RECENT:]))
        if start > 0 and not LENGTH_LOW * start <= now <= LENGTH_HIGH * start:
            out.append(Alert("response_length_mean", now, f"response length {now:.4g} is {now / start:.2f}x its "
                             f"start {start:.4g} (outside {LENGTH_LOW:g}x-{LENGTH_HIGH:g}x)", int(steps[-1])))
    return out


class ThresholdsJudge:
    """Fixed callback alerts: any alert stops the run, otherwise it continues (see the module docstring)."""

    name = "thresholds"

    def judge(self, request: JudgeRequest) -> JudgeResult:
        """Stop on any fixed alert, else continue."""
        raised = alerts(request.run)
        if raised:
            verdict = Verdict(
                decision="stop", confidence=0.5,
                headline=f"Fixed alert{'s' if len(raised) > 1 else ''}: {'; '.join(a.observation for a in raised)}.",
                rationale="A threshold callback alerts on the latest smoothed values; it has no notion of trends, "
                "noise or rolling back, so any alert stops the run.",
                evidence=[Evidence(signal=a.signal, observation=a.observation, steps=[a.step]) for a in raised],
            )
        else:
            verdict = Verdict(
                decision="continue", confidence=0.5, headline="No fixed alert raised.",
                rationale="Reward std, KL, entropy, clipping and length are all inside the callback's thresholds "
                "(or not logged).",
                evidence=[Evidence(signal="run", observation=f"no alert at step {request.run.last_step}")],
            )
        return JudgeResult(verdict=verdict, usage=Usage())


def make(model: str | None = None, **options: object) -> ThresholdsJudge:
    """The thresholds baseline judge (`--baseline thresholds`); it takes no model or options."""
    return ThresholdsJudge()
