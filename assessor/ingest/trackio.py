"""Hugging Face Trackio's local store: one SQLite database per project, `<project>.db`.

It lives in `$TRACKIO_DIR`, else `$HF_HOME/trackio` (default `~/.cache/huggingface/trackio`), not in the training
output directory: point assessor at that folder or at the `.db` file. Layout (reference, section 3.5, from
`trackio/sqlite_storage.py` at 0.36): `metrics(id, run_id, timestamp TEXT, run_name, step INTEGER, metrics TEXT)`
with one JSON object per log call, `configs(id, run_id, run_name, config JSON, created_at)`, and `system_metrics`
(no step; not read). Non-finite values are the strings "NaN", "Infinity", "-Infinity" inside the JSON. The
`run_id` column arrived in 2026; older databases key runs by `run_name` only. With TRL `report_to="trackio"`
the keys are `train/...` and `eval/...`.

A project holds many runs: as for MLflow, the newest is read and the others named in a warning
(`ASSESSOR_MLFLOW_RUN`, despite its name, picks a Trackio run by id or name too).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData
from assessor.ingest.facts import Fact, facts_from_flat_config, flatten
from assessor.ingest.mlflow import RunMeta, choose_run
from assessor.ingest.nesting import MAX_DEPTH, loads
from assessor.ingest.sqlite import columns, read_database, tables


class TrackioReader:
    """Reads the newest run (or the one `ASSESSOR_MLFLOW_RUN` names) of a Trackio project database."""

    name = "trackio"

    def sniff(self, path: Path, head: bytes) -> bool:
        """An SQLite file with Trackio's `metrics` and `configs` tables (MLflow's have no `configs`)."""
        return {"metrics", "configs"} <= tables(path, head) and "runs" not in tables(path, head)

    def read(self, path: Path) -> SourceData:
        """Read the chosen run; raise `UnreadableSourceError` when the project has no logged metrics."""
        return read_database(path, _read, "the Trackio database", "a run")


def _read(path: Path, db: sqlite3.Connection) -> SourceData:
    run_column = "run_id" if "run_id" in columns(db, "metrics") else "run_name"
    rows = db.execute(
        f"SELECT {run_column}, MAX(run_name), MIN(timestamp), MIN(id) FROM metrics GROUP BY {run_column}"
    ).fetchall()
    runs = [
        RunMeta(
            run_id=str(run), name=str(name) if name else None, start_ms=_ms(first) or float(first_id),
            status="", experiment=path.stem, where=f"{path.name} run {run}",
        )
        for run, name, first, first_id in rows
    ]
    if not runs:
        raise UnreadableSourceError(
            f"{path}: the Trackio project holds no logged metrics yet; assess again after the first logging step"
        )
    chosen, warnings, notes = choose_run(runs, path.name, tracker="Trackio", group="project")
    builder = RecordBuilder()
    bad = 0
    for step, text in db.execute(
        f"SELECT step, metrics FROM metrics WHERE {run_column} = ? ORDER BY id", (chosen.run_id,)
    ):
        try:
            record = loads(text)  # json accepts the NaN/Infinity strings as strings; parse_number reads them
        except (TypeError, ValueError):
            bad += 1
            continue
        if isinstance(record, dict):
            # `_`-named fields are Trackio's own bookkeeping and media descriptors (`{"_type": "image", ...}`).
            flat = flatten(record)
            builder.add_row(int(step or 0), {k: v for k, v in flat.items() if not k.rsplit(".", 1)[-1].startswith("_")})
    if bad:
        warnings.append(f"{path.name}: {bad} metric rows are not JSON (or nest deeper than {MAX_DEPTH} levels) and "
                        "were skipped")
    frame = builder.build()
    if frame.empty:
        raise UnreadableSourceError(
            f"{path}: Trackio run {chosen.label()} has no numeric metrics yet; assess again after the first "
            "logging step"
        )
    return SourceData(
        path=path, format="trackio", frame=frame, facts=_config_facts(db, run_column, chosen, path.name),
        warnings=warnings, notes=notes,
    )


def _config_facts(db: sqlite3.Connection, run_column: str, run: RunMeta, label: str) -> dict[str, Fact]:
    if run_column not in columns(db, "configs"):
        return {}
    row = db.execute(
        f"SELECT config FROM configs WHERE {run_column} = ? ORDER BY id DESC LIMIT 1", (run.run_id,)
    ).fetchone()
    try:
        config: Any = loads(row[0]) if row else None
    except (TypeError, ValueError):
        return {}
    if not isinstance(config, dict):
        return {}
    return facts_from_flat_config(flatten(config), f"{label} config")


def _ms(timestamp: Any) -> float:
    try:
        return datetime.fromisoformat(str(timestamp)).timestamp() * 1000
    except ValueError:
        return 0.0


READER = TrackioReader()
