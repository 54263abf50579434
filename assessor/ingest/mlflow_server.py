"""A run on a running MLflow tracking server, read through MLflow's own client (`pip install "assessor[mlflow]"`).

Teams that log to a shared server have no run folder to point at: `assessor assess mlflow://HOST:PORT/RUN_ID` (or
`RUN_ID --tracking-uri http://HOST:PORT`) reads the run's metric histories and params over the server's REST API
with `mlflow.MlflowClient`, which handles the API's paging, authentication (`MLFLOW_TRACKING_TOKEN`,
`MLFLOW_TRACKING_USERNAME`/`PASSWORD`) and TLS settings as MLflow users have them configured. `mlflow://` means
plain HTTP; name an `https://` server with `--tracking-uri`. The metrics then go through the same canonical table as
a file store's (`assessor.ingest.mlflow`), so verdicts do not depend on where the run was kept.
"""

from __future__ import annotations

import math
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from assessor.errors import ConfigError, RunNotFoundError, UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData
from assessor.ingest.mlflow import params_to_facts

SCHEME = "mlflow://"
INSTALL_HINT = 'pip install "assessor[mlflow]"'
_URI = re.compile(r"^mlflow://(?P<host>[^/?#\s]+)/(?P<run>[0-9A-Za-z_-]+)/?$")
_RUN_ID = re.compile(r"^[0-9A-Za-z_-]+$")
# MLflow's client retries an unreachable server 7 times with a growing back-off (minutes); a CLI says so sooner.
# The user's own settings of these variables win.
_CLIENT_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_TIMEOUT": "30",
                    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1"}


def is_tracking_uri(source: str | Path) -> bool:
    """Whether `source` names a run on a tracking server (`mlflow://...`) rather than a path."""
    return isinstance(source, str) and source.startswith(SCHEME)


def tracking_source(run: str, tracking_uri: str | None) -> str:
    """The `mlflow://` name of `run` (a run id, with `--tracking-uri`), or `run` itself when it already is one.

    Raises:
        ConfigError: a run that is not a run id, or a tracking URI that is not http(s).
    """
    if tracking_uri is None:
        return run
    if not tracking_uri.startswith(("http://", "https://")):
        raise ConfigError(f"--tracking-uri {tracking_uri}: give the server's http:// or https:// address")
    if not _RUN_ID.match(run):
        raise ConfigError(f"{run}: with --tracking-uri, name the run by its MLflow run id (32 hex characters)")
    return f"{SCHEME}{tracking_uri.rstrip('/')}/{run}"


def parse(source: str) -> tuple[str, str]:
    """(tracking URI, run id) from `mlflow://HOST:PORT/RUN_ID` or `mlflow://https://HOST/.../RUN_ID`.

    Raises:
        ConfigError: not of that form.
    """
    rest = source[len(SCHEME):]
    if rest.startswith(("http://", "https://")):  # written by `tracking_source` for --tracking-uri
        server, _, run_id = rest.rstrip("/").rpartition("/")
        if server and _RUN_ID.match(run_id):
            return server, run_id
    match = _URI.match(source)
    if match is None:
        raise ConfigError(f"{source}: expected mlflow://HOST:PORT/RUN_ID (or RUN_ID --tracking-uri URL)")
    return f"http://{match['host']}", match["run"]


def server_of(source: str) -> str:
    """The tracking server's address in `source` (for allow-lists)."""
    return parse(source)[0]


def read_tracking_run(source: str) -> tuple[SourceData, str]:
    """Every metric history and the params of one run on a tracking server, and the run's name.

    Raises:
        ConfigError: mlflow is not installed, or the URI is malformed.
        RunNotFoundError: the server has no such run.
        UnreadableSourceError: the server cannot be reached, or the run has logged no metric yet.
    """
    server, run_id = parse(source)
    client = _client(server)
    from mlflow.exceptions import MlflowException

    try:
        remote = client.get_run(run_id)
        keys = sorted(remote.data.metrics)
        histories = {key: client.get_metric_history(run_id, key) for key in keys}
    except MlflowException as error:
        code = str(getattr(error, "error_code", ""))
        if code in ("RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE") or "not found" in str(error).lower():
            raise RunNotFoundError(f"{source}: the MLflow server at {server} has no run {run_id}; copy the run id "
                                   "from the run's page in the MLflow UI") from None
        raise UnreadableSourceError(f"{source}: the MLflow server did not answer ({_one_line(error)}); check that "
                                    f"it is running at {server}") from None
    except OSError as error:
        raise UnreadableSourceError(f"{source}: cannot reach the MLflow server at {server} ({_one_line(error)}); "
                                    "check the address and that the server is running") from None
    builder = RecordBuilder()
    for key, history in histories.items():
        ordered = sorted(history, key=lambda m: (m.timestamp, m.step))
        if not ordered:
            continue
        values = np.array([_value(m.value) for m in ordered], dtype=np.float64)
        steps = np.array([int(m.step) for m in ordered], dtype=np.int64)
        stamps = np.array([m.timestamp / 1000.0 for m in ordered], dtype=np.float64)
        builder.add_column(key, steps, values, wall_time=stamps)
    info = remote.info
    label = f"{info.run_name} ({run_id})" if info.run_name else run_id
    if not len(builder):
        raise UnreadableSourceError(f"{source}: MLflow run {label} has no metrics logged yet; assess again after the "
                                    "first logging step")
    started = datetime.fromtimestamp((info.start_time or 0) / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
    notes = [f"MLflow run {label} on {server}, experiment {info.experiment_id}, started {started}, "
             f"status {info.status}"]
    facts = params_to_facts(dict(remote.data.params), f"{server} run {run_id} params")
    data = SourceData(path=Path(run_id), format="mlflow_server", frame=builder.build(), facts=facts, notes=notes)
    return data, info.run_name or run_id


def _client(server: str) -> Any:
    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise ConfigError(f"reading runs from an MLflow tracking server needs mlflow; run: {INSTALL_HINT}") from None
    for variable, value in _CLIENT_DEFAULTS.items():
        os.environ.setdefault(variable, value)
    return MlflowClient(tracking_uri=server)


def _value(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= 200 else text[:199] + "…"
