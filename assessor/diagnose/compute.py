"""What the run has spent for nothing, so that a stop or a rollback carries its price.

Steps (and hours, when step time is known) since the best point, and on steps where no completion carried a
gradient.
"""

from __future__ import annotations

import numpy as np

from assessor.diagnose.context import Context
from assessor.diagnose.models import BestCheckpoint, ComputeAccounting, LearningSignalDiagnosis


def compute_accounting(ctx: Context, best: BestCheckpoint, signal: LearningSignalDiagnosis) -> ComputeAccounting:
    """Steps and hours since the best point, and on zero-signal steps."""
    run = ctx.run
    last = run.last_step
    if last is None:
        return ComputeAccounting()
    since = last - best.best_step if best.best_step is not None and best.behind else None
    reward = ctx.book.get("reward_mean")
    first = reward.summary.first_step if reward is not None else None
    shares = [s for s in (signal.zero_spread_share, signal.zero_reward_share) if s is not None]
    zero_steps = None
    if shares and first is not None:
        interval = run.facts.logging_interval or 1
        zero_steps = round(max(shares) * (last - first + interval))
    step_time = _step_seconds(ctx)
    gpus = len(run.gpu_devices) or None
    out = ComputeAccounting(steps_since_best=since, zero_signal_steps=zero_steps or None, step_time_s=step_time,
                            gpus=gpus)
    if step_time is not None:
        if since is not None:
            out.hours_since_best = since * step_time / 3600
            out.gpu_hours_since_best = out.hours_since_best * gpus if gpus else None
        if zero_steps:
            out.hours_on_zero_signal = zero_steps * step_time / 3600
    return out


def _step_seconds(ctx: Context) -> float | None:
    """Median seconds per optimizer step: logged step time, else the wall clock between logged rows."""
    logged = ctx.run.series("time_step_s")
    if len(logged):
        return float(np.median(logged.to_numpy()))
    rows = ctx.run.metrics
    train = rows[(rows["split"] == "train") & rows["wall_time"].notna()]
    if len(train) < 3:
        return None
    per_step = train.groupby("step")["wall_time"].max().sort_index()
    steps, times = per_step.index.to_numpy(dtype=np.float64), per_step.to_numpy()
    gaps = np.diff(times) / np.diff(steps)
    gaps = gaps[np.isfinite(gaps) & (gaps > 0)]
    return float(np.median(gaps)) if len(gaps) else None
