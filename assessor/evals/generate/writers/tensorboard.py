"""TensorBoard event files for TRL and verl runs, written deterministically.

TRL's layout is `runs/<date>_<host>/` with `train/` and `eval/` tags and the args as text; verl's is
`tensorboard_log/<project>/<experiment>/` with its bare metric names.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from assessor.errors import ConfigError
from assessor.evals.generate.model import HOST, RUN_START_TS, Array, Ctx, Row, constant_curve
from assessor.evals.generate.rows import merge_rows, trl_columns, trl_eval_rows, trl_rows, trl_summary_row, verl_rows
from assessor.evals.generate.simulate import Attempt
from assessor.evals.generate.writers.hf_files import training_args
from assessor.evals.generate.writers.verl import verl_names, write_verl_checkpoints


def _wall_times(ctx: Ctx, step_time: Array, offset_hours: float = 0.0) -> Array:
    start = RUN_START_TS + 3600 * (ctx.spec.seed % 7) + 3600 * offset_hours
    return np.asarray(start + np.cumsum(step_time), dtype=np.float64)


def _write_events(path: Path, start: float, points: Iterable[tuple[float, int, Mapping[str, Any]]],
                  text: Mapping[str, str] | None = None) -> None:
    """Write a TensorBoard event file with TensorBoard's own record writer.

    One event per scalar, as `SummaryWriter.add_scalar` does; deterministic (fixed wall times, no writer
    thread stamping the clock), which `EventFileWriter` is not.
    """
    try:  # TensorBoard's own writer, so the eval runs are event files as trainers write them
        from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2
        from tensorboard.summary.writer.record_writer import RecordWriter
    except ImportError:
        raise ConfigError('writing the synthetic eval runs needs tensorboard (reading event files does not); run: '
                          'pip install "assessor[eval]"') from None

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        writer = RecordWriter(handle)
        writer.write(event_pb2.Event(wall_time=start, file_version="brain.Event:2").SerializeToString())
        for tag, content in (text or {}).items():
            value = summary_pb2.Summary.Value(
                tag=f"{tag}/text_summary",
                metadata=summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text")),
                tensor=tensor_pb2.TensorProto(dtype=7, string_val=[content.encode()],
                                              tensor_shape=tensor_shape_pb2.TensorShapeProto()),
            )
            event = event_pb2.Event(wall_time=start, step=0, summary=summary_pb2.Summary(value=[value]))
            writer.write(event.SerializeToString())
        make_value = summary_pb2.Summary.Value
        for wall, step, values in points:
            for tag, number in values.items():
                if number is None:
                    continue
                summary = summary_pb2.Summary(value=[make_value(tag=tag, simple_value=float(number))])
                event = event_pb2.Event(wall_time=wall, step=step, summary=summary)
                writer.write(event.SerializeToString())


def _tb_name(wall: float, pid: int) -> str:
    return f"events.out.tfevents.{int(wall)}.{HOST}.{pid}.0"


def _trl_tb_points(rows: list[Row], walls: Array) -> list[tuple[float, int, dict[str, Any]]]:
    """HF's TensorBoard callback: `train/<key>`, `eval/<key>` (the `rewrite_logs` names)."""
    points = []
    for row in rows:
        step = int(row["step"])
        values: dict[str, Any] = {}
        for key, value in row.items():
            if key == "step":
                continue
            if key.startswith("eval_"):
                values[f"eval/{key[5:]}"] = value
            else:
                values[f"train/{key}"] = value
        values["train/global_step"] = step
        later = 1.0 if "eval_reward" in row else 2.0 if "train_runtime" in row else 0.0
        points.append((float(walls[step - 1]) + later, step, values))
    return points


def write_trl_tensorboard(ctx: Ctx, target: Path, attempts: list[Attempt], folder: str = "runs") -> None:
    """HF's TensorBoard callback: one events file per launch under `<folder>/<date>_<host>/`."""
    logging_steps = ctx.spec.logging_steps
    for number, attempt in enumerate(attempts):
        cols = trl_columns(ctx, attempt.obs)
        rows = merge_rows(trl_rows(ctx, cols, logging_steps, attempt.first, attempt.last),
                           trl_eval_rows(ctx, attempt.evals, attempt.first, attempt.last))
        summary = trl_summary_row(ctx, attempt.obs) if number == len(attempts) - 1 else None
        if summary is not None:  # `train/train_runtime`, `train/train_loss`, ... at the last step
            rows.append(summary)
        step_time = attempt.obs["step_time"] if "step_time" in attempt.obs else constant_curve(ctx.n, 4.0)
        walls = _wall_times(ctx, step_time, attempt.hours)
        start = float(walls[attempt.first - 1]) - float(step_time[attempt.first - 1]) - 30.0
        stamp = datetime.fromtimestamp(start, tz=UTC).strftime("%b%d_%H-%M-%S")
        args = json.dumps(training_args(ctx, logging_steps), indent=2)
        _write_events(target / folder / f"{stamp}_{HOST}" / _tb_name(start, 41822 + number), start,
                      _trl_tb_points(rows, walls), text={"args": args})


def write_verl_tensorboard(ctx: Ctx, target: Path, attempts: list[Attempt]) -> None:
    """The verl TensorBoard logger: one events file per launch under `tensorboard_log/`."""
    project, experiment = verl_names(ctx)
    for number, attempt in enumerate(attempts):
        walls = _wall_times(ctx, attempt.obs["step_time"], attempt.hours)
        points = []
        for step, row in verl_rows(ctx, attempt.obs, attempt.evals, attempt.first, attempt.last):
            wall = float(walls[max(step, 1) - 1]) - (float(attempt.obs["step_time"][0]) if step == 0 else 0.0)
            points.append((wall, step, row))
        start = points[0][0] - 20.0
        _write_events(target / "tensorboard_log" / project / experiment / _tb_name(start, 2291 + number), start, points)
    write_verl_checkpoints(ctx, target)
