"""Is the run still going? Live, finished, stalled or crashed.

A finished run is judged on which weights to keep, never told to "look again later"; a stalled one (no write
for a long while) may have died without a word; a crashed one ended in NaN/inf. The state comes from the
planned total steps, the trainer's end-of-training summary, the age of the newest write and the last values.
"""

from __future__ import annotations

import numpy as np

from assessor.diagnose.instability import latest_all_nonfinite, skipped_since
from assessor.diagnose.models import RunState
from assessor.run import Run

# No write for this long, and for many step times, is not a slow step: the job has probably died.
STALLED_AFTER_S = 2 * 3600.0
STALLED_STEP_TIMES = 20
DIVERGENCE_SIGNALS = ("loss", "pg_loss", "grad_norm")


def run_state(run: Run, now: float | None) -> tuple[RunState, str]:
    """The run's state and why (`now`: seconds since the epoch, None to leave staleness out)."""
    last = run.last_step
    facts = run.facts
    # Gradient norms NaN/inf while the loss and reward stay finite are skipped updates, not a crash.
    diverged = [m for m in DIVERGENCE_SIGNALS if latest_all_nonfinite(run, m)
                and not (m == "grad_norm" and skipped_since(run) is not None)]
    if diverged:
        return "crashed", f"the latest logged {diverged[0]} values are all NaN/inf"
    if facts.training_ended:
        return "finished", "the trainer wrote its end-of-training summary"
    if facts.training_crashed:
        return "crashed", f"its log ends with an error: {facts.training_crashed}"
    planned = facts.planned_total_steps
    interval = facts.logging_interval or 1
    if planned and last is not None and last >= planned - interval:
        return "finished", f"step {last} of {planned} planned: the last logging step of the run"
    if _schedule_ran_out(run):
        return "finished", "the learning-rate schedule has decayed to 0 at the last logged step"
    if now is not None and run.newest_write is not None:
        idle = now - run.newest_write
        if idle > max(STALLED_AFTER_S, STALLED_STEP_TIMES * (_step_seconds(run) or 0.0)):
            return "stalled", f"no source file has been written for {_hours(idle)}"
    if planned and last is not None:
        return "live", f"step {last} of {planned} planned"
    return "live", "no planned total is known; the run is read as still going"


def _schedule_ran_out(run: Run) -> bool:
    """Whether the learning rate decayed to exactly 0 at the last logged step.

    HF's linear and cosine schedules end at 0 on the planned last step: the trainer meant to stop there.
    """
    values = run.series("lr").to_numpy()
    if len(values) < 3 or values[-1] != 0.0 or not values[-2] > 0.0:
        return False
    # A decay: non-increasing from its peak to the end, with no other zero on the way (a logger that prints 0 now
    # and then, or a rounded value, is not a schedule).
    after_peak = values[int(np.argmax(values)):]
    decaying = bool(np.all(np.diff(after_peak) <= 0.0)) and values[-2] < np.max(values)
    return decaying and int(np.sum(after_peak == 0.0)) == 1


def _step_seconds(run: Run) -> float | None:
    series = run.series("time_step_s")
    return float(np.median(series.to_numpy())) if len(series) else None


def _hours(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:.0f} h" if hours < 48 else f"{hours / 24:.0f} days"
