"""`AssessorCallback`: assess a transformers / TRL run while it trains, without ever holding training up.

    trainer = GRPOTrainer(..., callbacks=[AssessorCallback(every=50, judge="rules", stop_on={"stop"})])

What it reads. The Trainer writes `trainer_state.json` only into `checkpoint-*/` at saves, so the files in
`output_dir` lag the run by up to `save_steps`; the in-memory `state.log_history` has every logged row. So at a
check the callback copies `log_history` (on the training thread: a list of small flat dicts, cheap) and, in a
background thread, writes it with the run facts from the training arguments (beta, group size, completion cap)
as a `trainer_state.json` + `training_args.json` snapshot in a temporary folder, reads that with `load_run`,
and points the run at `output_dir`: its name and path, and the `checkpoint-*` folders really there, so a
rollback names a checkpoint that exists. Other files in `output_dir` (TensorBoard events, GPU logs) are not
read here; `assessor assess OUTPUT_DIR` or `assessor watch` read everything.

When. Checks start from `on_log`, right after the Trainer appends a row (`on_step_end` runs before the step's
row is logged, so it would always see one logging interval less), at most once every `every` optimizer steps,
on the main process only. One check runs at a time, in a daemon thread; a check due while one is running is
skipped, not queued, and the next log tries again. Every failure inside a check is logged as one line on the
`assessor` logger and training goes on.

Stopping. With `stop_on`, a finished check whose decision is in it makes the next `on_step_end` set
`control.should_training_stop`. Under `torch.distributed` every rank has to stop at the same step or the others
hang in their next collective, so there the main process's flag is broadcast to all ranks at the steps that
are multiples of `every` (the only steps all ranks agree on) and the run stops at the first such step.

transformers is optional: without it `AssessorCallback` is a plain class with the same hook signatures, for
training loops that call them themselves.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assessor.assessment import Assessment
from assessor.errors import ConfigError
from assessor.ingest import load_run
from assessor.ingest.discover import checkpoint_step
from assessor.judge import Judge, get_judge
from assessor.pipeline import assess_run
from assessor.run import Checkpoint

if TYPE_CHECKING:
    from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
else:
    try:
        from transformers import TrainerCallback
    except ImportError:  # a hand-written loop can still call the hooks; see the module docstring
        TrainerCallback = object

__all__ = ["AssessorCallback"]

log = logging.getLogger("assessor")

STOP_DECISIONS = frozenset({"stop", "rollback"})
# Training arguments that are run facts; only RL configs (GRPOConfig, RLOOConfig, ...) have most of them.
_FACT_ARGS = ("beta", "num_generations", "max_completion_length", "learning_rate", "loss_type")


@dataclass(frozen=True)
class _Snapshot:
    """What a check reads, copied on the training thread so training can go on changing the originals."""

    step: int
    output_dir: Path
    history: list[dict[str, Any]]
    state: dict[str, Any]
    config: dict[str, Any]


class AssessorCallback(TrainerCallback):
    """Assesses the run every `every` steps in a background thread; can stop training on a bad verdict.

    Args:
        every: Optimizer steps between checks (a check starts at the first log at or after that many steps).
        judge: A judge name (`rules`, `auto`, `anthropic[:MODEL]`, `openai[:MODEL]`, `fake`) or a `Judge`.
        stop_on: Decisions that stop training: a subset of {"stop", "rollback"}; empty never stops.
        out_dir: Where each check writes its plots, in `step-<N>/`; none are kept without it.
        slack_channel: A Slack channel ID to post each verdict (and its dashboard) to; needs `SLACK_BOT_TOKEN`.
        on_verdict: Called with each finished `Assessment`, in the background thread.
        final_timeout: Seconds `on_train_end` waits for a check still running; 0 does not wait.

    Attributes:
        latest: The newest finished assessment, or None.

    Raises:
        ValueError: An argument is out of range, the judge cannot be used (unknown name, missing API key), or
            Slack is asked for without `SLACK_BOT_TOKEN` in the environment.
    """

    def __init__(
        self, every: int = 50, judge: str | Judge = "rules", stop_on: Iterable[str] = (),
        out_dir: str | Path | None = None, slack_channel: str | None = None,
        on_verdict: Callable[[Assessment], None] | None = None, final_timeout: float = 0.0,
    ) -> None:
        if every < 1:
            raise ValueError(f"`every` must be at least 1 step, got {every!r}")
        self.stop_on = frozenset([stop_on] if isinstance(stop_on, str) else stop_on)  # "stop" is one decision
        if not self.stop_on <= STOP_DECISIONS:
            unknown = ", ".join(sorted(self.stop_on - STOP_DECISIONS))
            raise ValueError(f"`stop_on` may only hold 'stop' and 'rollback', got {unknown}")
        if final_timeout < 0:
            raise ValueError(f"`final_timeout` must be 0 or more seconds, got {final_timeout!r}")
        if slack_channel is not None:
            from assessor.integrations.slack import slack_client

            try:
                slack_client()  # fails now, not at the first check hours in, when the token or slack_sdk is missing
            except ConfigError as error:
                raise ValueError(f"`slack_channel` {slack_channel!r}: {error}") from error
        try:
            self.judge: Judge = get_judge(judge) if isinstance(judge, str) else judge
        except ConfigError as error:
            raise ValueError(str(error)) from error
        self.every = every
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.slack_channel = slack_channel
        self.on_verdict = on_verdict
        self.final_timeout = final_timeout
        self.latest: Assessment | None = None
        self._last_assessed_step = 0  # the step of the last check started; 0 before the first
        self._worker: threading.Thread | None = None
        self._stop_verdict: Assessment | None = None  # set by the worker, acted on by the next on_step_end

    # hooks ---------------------------------------------------------------------------------------------------------

    def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        """Start a check when one is due, on the main process, unless one is still running."""
        if not state.is_world_process_zero or not state.log_history:
            return
        step = state.global_step
        if step < self._last_assessed_step + self.every:
            return
        if self.running:
            log.info("assessor: step %d: the previous check is still running; skipping this one", step)
            return
        self._last_assessed_step = step
        snapshot = _Snapshot(
            step=step, output_dir=Path(args.output_dir or "."),
            history=[dict(row) for row in state.log_history],
            state={"global_step": step, "max_steps": state.max_steps, "logging_steps": state.logging_steps},
            config={name: value for name in _FACT_ARGS
                    if isinstance(value := getattr(args, name, None), int | float | str)},
        )
        self._worker = threading.Thread(target=self._check, args=(snapshot,), name="assessor", daemon=True)
        self._worker.start()

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                    **kwargs: Any) -> None:
        """Stop training when a finished check's decision is in `stop_on`."""
        if not self.stop_on:
            return
        distributed = _in_process_group()
        if distributed and state.global_step % self.every:
            return  # ranks may only meet in a collective at steps they all agree on
        verdict = self._stop_verdict if state.is_world_process_zero else None
        stop = _broadcast_from_main(verdict is not None) if distributed else verdict is not None
        if not stop:
            return
        control.should_training_stop = True
        self._stop_verdict = None  # acted on; a later `trainer.train()` with this callback starts clean
        if verdict is not None:
            v = verdict.verdict
            where = f"; roll back to {v.rollback_checkpoint}" if v.rollback_checkpoint else ""
            log.warning("assessor: stopping training at step %d: %s at step %s: %s%s", state.global_step,
                        v.decision, verdict.last_step, v.headline, where)

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                     **kwargs: Any) -> None:
        """Wait up to `final_timeout` seconds for a check still running."""
        if self.final_timeout > 0:
            self.wait(self.final_timeout)

    # API -----------------------------------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether a check is in progress."""
        return self._worker is not None and self._worker.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running check, if any; True when none is running afterwards."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        return not self.running

    # background ----------------------------------------------------------------------------------------------------

    def _check(self, snapshot: _Snapshot) -> None:
        # Runs in the worker thread: nothing may escape it, and every failure is one log line.
        with tempfile.TemporaryDirectory(prefix="assessor-trl-") as scratch:
            try:
                assessment = self._assess(snapshot, Path(scratch))
            except Exception as error:
                log.error("assessor: the check at step %d failed, training goes on: %s: %s", snapshot.step,
                          type(error).__name__, _one_line(error))
                return
            dashboard = next((Path(p) for p in assessment.plots if Path(p).name == "dashboard.png"), None)
            if self.out_dir is None:
                assessment = assessment.model_copy(update={"plots": []})  # they vanish with `scratch`
            self.latest = assessment
            v = assessment.verdict
            log.info("assessor: step %d: %s (%s): %s", snapshot.step, v.decision, assessment.judge, v.headline)
            if v.decision in self.stop_on:
                self._stop_verdict = assessment
            if self.on_verdict is not None:
                try:
                    self.on_verdict(assessment)
                except Exception as error:
                    log.error("assessor: on_verdict failed at step %d: %s: %s", snapshot.step,
                              type(error).__name__, _one_line(error))
            if self.slack_channel is not None:
                try:
                    from assessor.integrations.slack import post_assessment

                    post_assessment(assessment, self.slack_channel, dashboard=dashboard,
                                    note=f"TRL callback, step {snapshot.step}")
                except Exception as error:
                    log.error("assessor: could not post the step %d verdict to Slack: %s: %s", snapshot.step,
                              type(error).__name__, _one_line(error))

    def _assess(self, snapshot: _Snapshot, scratch: Path) -> Assessment:
        folder = scratch / "run"
        folder.mkdir()
        state = {**snapshot.state, "log_history": snapshot.history}
        (folder / "trainer_state.json").write_text(json.dumps(state), encoding="utf-8")
        (folder / "training_args.json").write_text(json.dumps(snapshot.config), encoding="utf-8")
        output_dir = snapshot.output_dir.resolve()
        run = replace(load_run(folder), path=output_dir, name=output_dir.name,
                      checkpoints=_checkpoints(output_dir))
        plots = self.out_dir / f"step-{snapshot.step}" if self.out_dir is not None else None
        if plots is None and self.slack_channel is not None:
            plots = scratch / "plots"  # only for the dashboard posted to Slack
        return assess_run(run, self.judge, out_dir=plots)


def _checkpoints(output_dir: Path) -> list[Checkpoint]:
    """The Trainer's `checkpoint-<N>` folders directly under `output_dir`, oldest first."""
    if not output_dir.is_dir():
        return []
    found = []
    for path in output_dir.iterdir():
        step = checkpoint_step(path.name, is_dir=True) if path.is_dir() else None
        if step is not None:
            found.append(Checkpoint(step=step, path=path.name))
    return sorted(found, key=lambda c: c.step)


def _in_process_group() -> bool:
    # A process that never imported torch has no process group; importing torch here would cost seconds.
    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.distributed.is_available() and torch.distributed.is_initialized())


def _broadcast_from_main(flag: bool) -> bool:
    """The main process's `flag`, on every rank (a collective: every rank must call it at the same step)."""
    box = [flag]
    sys.modules["torch"].distributed.broadcast_object_list(box, src=0)
    return bool(box[0])


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or "(no message)"
