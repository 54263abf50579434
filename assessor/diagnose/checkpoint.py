"""Where the best version of the model is, and which checkpoint on disk is nearest at or before it.

Held-out eval is the best judge of quality when the run logs it. Without it, the smoothed training reward
is used, weighed against drift: among the steps whose reward is within half a noise unit of the best, the
earliest is preferred when KL is rising, because it buys the same reward with less distance from the
reference.
"""

from __future__ import annotations

import numpy as np

from assessor.diagnose.context import Context, num
from assessor.diagnose.kl_reward import primary_reward
from assessor.diagnose.models import BestCheckpoint, EvalDiagnosis


def best_checkpoint(ctx: Context, evaluation: EvalDiagnosis) -> BestCheckpoint:
    """The best point of the run and the checkpoint to roll back to."""
    if evaluation.peak_step is not None and evaluation.points >= 2:
        basis, best_step = "eval", evaluation.peak_step
        why = f"held-out {evaluation.metric} peaked at {num(evaluation.peak)} at step {best_step}"
    else:
        metric = primary_reward(ctx)
        reading = ctx.book.get(metric) if metric else None
        if reading is None:
            return BestCheckpoint(basis="none", reason="no reward or eval signal to choose a best point from")
        series = reading.series
        noise = max(series.noise, 1e-12)
        smooth = series.smooth
        best = float(np.max(smooth))
        near_best = np.flatnonzero(smooth >= best - 0.5 * noise)
        kl = ctx.book.get("kl")
        drifting = kl is not None and kl.summary.trend == "rising"
        index = int(near_best[0]) if drifting else int(np.argmax(smooth))
        basis, best_step = "reward", int(series.red_steps[index])
        why = f"smoothed {metric} is at its best ({num(float(smooth[index]))}) at step {best_step}" + (
            ", the earliest step within noise of the peak, since KL keeps rising" if drifting else "")
    return _nearest_checkpoint(ctx, basis, best_step, why)


def _nearest_checkpoint(ctx: Context, basis: str, best_step: int, why: str) -> BestCheckpoint:
    checkpoints = ctx.run.checkpoints
    at_or_before = [c for c in checkpoints if c.step <= best_step]
    if at_or_before:
        chosen = at_or_before[-1]
        gap = best_step - chosen.step
        where = "exactly there" if gap == 0 else f"{gap} steps before it"
        return BestCheckpoint(
            basis=basis, best_step=best_step, checkpoint_step=chosen.step, checkpoint_path=chosen.path,
            reason=f"{why}; {chosen.path} is the newest checkpoint on disk at or before it ({where})",
        )
    if checkpoints:
        reason = (f"{why}; no checkpoint on disk is that early (the earliest is step {checkpoints[0].step}, "
                  f"{checkpoints[0].path})")
    else:
        reason = f"{why}; no checkpoints are on disk"
    return BestCheckpoint(basis=basis, best_step=best_step, reason=reason)
