"""MLflow's SQL store kept in SQLite (`mlflow.db`, the default since MLflow 3.7), read with the stdlib.

Tables (reference, section 3.4): `metrics(key, value, timestamp, step, is_nan, run_uuid)`, `runs`,
`experiments`, `params`, `tags`. NaN is stored as `is_nan=1` and +/-inf as +/-`sys.float_info.max` (SQL has no
infinities). The database is opened read-only, so a tracking server writing to it is neither blocked nor
changed. Which run is read when there are several: see `assessor.ingest.mlflow`.
"""

from __future__ import annotations

import math
import sqlite3
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData
from assessor.ingest.mlflow import RunMeta, choose_run, params_to_facts
from assessor.ingest.sqlite import read_database, tables

_TABLES = frozenset({"metrics", "runs", "experiments", "params"})


class MlflowSqlReader:
    """Reads the chosen run of an MLflow SQLite database."""

    name = "mlflow_sql"

    def sniff(self, path: Path, head: bytes) -> bool:
        """An SQLite file (`.db`, `.sqlite`) with MLflow's tables."""
        return tables(path, head) >= _TABLES

    def read(self, path: Path) -> SourceData:
        """Read the chosen run; raise `UnreadableSourceError` when the database holds no run with metrics."""
        return read_database(path, _read, "the MLflow database", "a server")


def _read(path: Path, db: sqlite3.Connection) -> SourceData:
    rows = db.execute(
        "SELECT r.run_uuid, r.name, r.start_time, r.status, COALESCE(e.name, r.experiment_id) "
        "FROM runs r LEFT JOIN experiments e ON e.experiment_id = r.experiment_id "
        "WHERE COALESCE(r.lifecycle_stage, 'active') != 'deleted' "
        "AND COALESCE(e.lifecycle_stage, 'active') != 'deleted'"
    ).fetchall()
    runs = [
        RunMeta(
            run_id=str(run_id), name=str(name) if name else None, start_ms=float(start or 0),
            status=str(status or ""), experiment=str(experiment), where=f"{path.name} run {run_id}",
        )
        for run_id, name, start, status, experiment in rows
    ]
    if not runs:
        raise UnreadableSourceError(
            f"{path}: the MLflow database holds no runs yet; assess again once training has logged a step"
        )
    chosen, warnings, notes = choose_run(runs, path.name)
    builder = RecordBuilder()
    # Timestamp order is logging order (the table has no insertion order of its own); duplicate steps stay.
    cursor = db.execute(
        "SELECT key, timestamp, step, value, is_nan FROM metrics WHERE run_uuid = ? ORDER BY key, timestamp, step",
        (chosen.run_id,),
    )
    for key, key_rows in _by_key(cursor):
        table = np.asarray(key_rows, dtype=np.float64)
        values = table[:, 2].copy()
        values[table[:, 3] != 0] = math.nan
        # +/-inf were stored as +/-float max: give them back as inf so they are counted as non-finite.
        values[values >= sys.float_info.max] = math.inf
        values[values <= -sys.float_info.max] = -math.inf
        builder.add_column(key, table[:, 1].astype(np.int64), values, wall_time=table[:, 0] / 1000.0)
    if not len(builder):
        raise UnreadableSourceError(
            f"{path}: MLflow run {chosen.label()} has no metrics logged yet; assess again after the first logging step"
        )
    params = {
        str(k): str(v) for k, v in db.execute("SELECT key, value FROM params WHERE run_uuid = ?", (chosen.run_id,))
    }
    facts = params_to_facts(params, f"{path.name} params")
    return SourceData(
        path=path, format="mlflow_sql", frame=builder.build(), facts=facts, warnings=warnings, notes=notes,
    )


def _by_key(cursor: Iterable[tuple[Any, ...]]) -> Iterator[tuple[str, list[tuple[float, float, float, int]]]]:
    """(key, [(timestamp, step, value, is_nan), ...]) from rows sorted by key."""
    key: str | None = None
    rows: list[tuple[float, float, float, int]] = []
    for row_key, stamp, step, value, is_nan in cursor:
        if row_key != key:
            if key is not None:
                yield key, rows
            key, rows = str(row_key), []
        number = math.nan if value is None else float(value)
        rows.append((float(stamp or 0), float(step or 0), number, int(is_nan or 0)))
    if key is not None:
        yield key, rows


READER = MlflowSqlReader()
