"""Where the best version of the model is, and which checkpoint on disk is nearest at or before it.

Held-out eval is the best judge of quality when the run logs it. Without it, the smoothed training reward
is used, weighed against drift: among the steps whose reward is within half a noise unit of the best, the
earliest is preferred when KL is rising, because it buys the same reward with less distance from the
reference.
"""

from __future__ import annotations

import numpy as np

from assessor.diagnose import robust
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
        # The best stretch (a tenth of the run), as the reward diagnosis measures it: one lucky batch is not a peak.
        width = robust.stretch_width(series.n)
        means = np.convolve(series.values, np.ones(width) / width, mode="valid")
        shrink = (1 - series.rho) / (1 + series.rho)
        error = max(series.noise, 1e-12) / np.sqrt(max(1.0, width * shrink))
        kl = ctx.book.get("kl")
        drifting = kl is not None and kl.summary.trend == "rising"
        near_best = np.flatnonzero(means >= means.max() - error)
        if drifting:
            # With KL rising, the earliest stretch within noise of the best buys the same reward for less distance
            # from the reference.
            start = int(near_best[0])
            best_step = int(np.median(series.steps[start:start + width]))
            how = ", the earliest stretch within noise of the peak, since KL keeps rising"
        else:
            # Otherwise the latest such stretch: as good, and with more training behind it (on a plateau the
            # single best stretch is just the luckiest one).
            start = int(near_best[-1])
            best_step = int(np.median(series.steps[start:start + width]))
            how = ", the latest stretch within noise of the peak"
        basis = "reward"
        why = f"{metric} is at its best ({num(float(means[start]))} averaged over steps " \
              f"{int(series.steps[start])}–{int(series.steps[start + width - 1])}) around step {best_step}{how}"
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
