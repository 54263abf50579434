"""MLflow tracking stores: the file store (`mlruns/`) here, the SQL store (`mlflow.db`) in `mlflow_sql`.

Users get these by training with `report_to="mlflow"` (HF/TRL: raw Trainer keys such as `reward`, `kl`,
`completions/mean_length`) or `trainer.logger=['console','mlflow']` (verl: `critic/score/mean`, with `@`
rewritten to `_at_`). The layouts are in the reference, section 3.4:

* file store: `mlruns/<experiment_id>/<run_id>/` with `meta.yaml`, `metrics/<key>` (a key's `/` nests folders;
  lines `<timestamp_ms> <value> <step>`, old lines without the step), `params/<name>` (one file per param) and
  `tags/mlflow.runName`. Deleted experiments sit in `mlruns/.trash/`.
* SQL store: tables `metrics(key, value, timestamp, step, is_nan, run_uuid)`, `runs`, `experiments`, `params`,
  `tags`. NaN is stored as `is_nan=1` and +/-inf as +/-`sys.float_info.max` (SQL has no infinities).

One store may hold several runs (re-launches, or unrelated runs sharing a working directory). Merging them
would mix unrelated curves, so a reader takes the newest run (by start time), names it in a note and warns
about the others with the way to pick one: pass the run folder (`mlruns/<exp>/<run_id>`), or set
`ASSESSOR_MLFLOW_RUN` to a run id, id prefix or run name (the only way to choose within an `mlflow.db`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData
from assessor.ingest.facts import Fact, facts_from_flat_config
from assessor.ingest.nesting import load_yaml

RUN_VARIABLE = "ASSESSOR_MLFLOW_RUN"
_RUN_NAME_TAG = "mlflow.runName"
# The file store's meta.yaml keeps the status as MLflow's RunStatus number.
_STATUS = {1: "RUNNING", 2: "SCHEDULED", 3: "FINISHED", 4: "FAILED", 5: "KILLED"}


@dataclass(frozen=True)
class RunMeta:
    """One run in a store, as much as is needed to choose between runs.

    Attributes:
        run_id: MLflow's run id.
        name: the run name (`mlflow.runName`), if any.
        start_ms: start time in ms since the epoch (0 when unknown).
        status: RUNNING, FINISHED, FAILED, KILLED, or a number in old file stores.
        experiment: the experiment's name, or its id.
        where: how a user names this run: its folder, or `<db> run <id>`.
        folder: the run folder (file store only).
    """

    run_id: str
    name: str | None
    start_ms: float
    status: str
    experiment: str
    where: str
    folder: Path | None = None

    def label(self) -> str:
        """`'name' (id)` for messages."""
        return f"{self.name!r} ({self.run_id[:8]})" if self.name else self.run_id

    def started(self) -> str:
        """The start time as UTC text, or "unknown start"."""
        if not self.start_ms:
            return "unknown start"
        return datetime.fromtimestamp(self.start_ms / 1000, tz=UTC).strftime("started %Y-%m-%d %H:%M UTC")


# --- the file store -------------------------------------------------------------------------------------------


def is_run_folder(path: Path) -> bool:
    """A file-store run folder: `meta.yaml` beside a `metrics/` folder."""
    return (path / "meta.yaml").is_file() and (path / "metrics").is_dir()


def store_of_folder(directory: Path, names: Iterable[str], is_root: bool) -> Path | None:
    """The MLflow store to read for a folder met while walking a run directory, or None.

    Args:
        directory: the folder.
        names: the names of its entries (already listed by the walk, so this costs no extra listing).
        is_root: the folder is the one the user passed; then it is read as it is (one run, one experiment).

    Returns:
        For a run folder: itself when it is the root, else its store (two levels up). For an experiment folder
        (`meta.yaml` plus run folders): itself when it is the root, else its parent. None otherwise.
    """
    names = set(names)
    if is_root and directory.name == "mlruns":
        return directory
    if "meta.yaml" not in names:
        return None
    if "metrics" in names and (directory / "metrics").is_dir():
        return directory if is_root else directory.parent.parent
    if any(is_run_folder(directory / name) for name in names if not name.startswith(".")):
        return directory if is_root else directory.parent
    return None


def holds_experiments(directory: Path) -> bool:
    """Whether a folder (an `mlruns/`) holds experiment folders; an SQL store's `mlruns/` holds only artifacts."""
    try:
        with os.scandir(directory) as entries:  # closed even when `any` stops early
            return any(
                e.is_dir() and not e.name.startswith(".") and (Path(e.path) / "meta.yaml").is_file() for e in entries
            )
    except OSError:
        return False


class MlflowReader:
    """Reads one MLflow file store, experiment folder or run folder (discovery hands over the folder whole)."""

    name = "mlflow"

    def sniff(self, path: Path, head: bytes) -> bool:
        """Never sniffed from a file's bytes: discovery routes MLflow folders here."""
        return False

    def read(self, path: Path) -> SourceData:
        """Read the chosen run of the store at `path` (see the module docstring for the choice)."""
        runs = [_file_run_meta(folder, path) for folder in _run_folders(path)]
        if not runs:
            raise UnreadableSourceError(
                f"{path}: the MLflow store holds no runs yet; assess again once training has logged a step, or "
                "pass the folder whose mlruns/ holds the run"
            )
        chosen, warnings, notes = choose_run(runs, path.name)
        assert chosen.folder is not None
        builder = RecordBuilder()
        bad = _read_metric_folder(chosen.folder / "metrics", builder)
        if bad:
            warnings.append(
                f"{chosen.where}: {sum(bad.values())} metric lines are not `<timestamp> <value> <step>` and were "
                f"skipped (in {', '.join(sorted(bad)[:4])})"
            )
        if not len(builder):
            raise UnreadableSourceError(
                f"{chosen.folder}: MLflow run {chosen.label()} has no metrics logged yet; assess again after the "
                "first logging step"
            )
        params = _read_text_files(chosen.folder / "params")
        facts = params_to_facts(params, f"{chosen.where}/params")
        return SourceData(
            path=path, format="mlflow", frame=builder.build(), facts=facts, warnings=warnings, notes=notes,
        )


def _run_folders(path: Path) -> list[Path]:
    """Run folders under a store, an experiment folder, or the run folder itself; `.trash` is skipped."""
    if is_run_folder(path):
        return [path]
    if (path / "meta.yaml").is_file():
        experiments = [path]
    else:
        experiments = [p for p in _subfolders(path) if (p / "meta.yaml").is_file()]
    runs: list[Path] = []
    for experiment in experiments:
        if _meta(experiment / "meta.yaml").get("lifecycle_stage") == "deleted":
            continue
        runs.extend(p for p in _subfolders(experiment) if is_run_folder(p))
    return [r for r in runs if _meta(r / "meta.yaml").get("lifecycle_stage") != "deleted"]


def _subfolders(path: Path) -> list[Path]:
    try:
        with os.scandir(path) as entries:
            return sorted(Path(e.path) for e in entries if e.is_dir() and not e.name.startswith("."))
    except OSError:
        return []


def _meta(path: Path) -> dict[str, Any]:
    try:
        meta = load_yaml(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, yaml.YAMLError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _file_run_meta(folder: Path, store: Path) -> RunMeta:
    meta = _meta(folder / "meta.yaml")
    tags = _read_text_files(folder / "tags", only=(_RUN_NAME_TAG,))
    name = tags.get(_RUN_NAME_TAG) or meta.get("run_name") or None
    start = meta.get("start_time")
    if not isinstance(start, int | float):
        # An unreadable meta.yaml: the newest metric write stands in for the start time.
        start = max((p.stat().st_mtime * 1000 for p in (folder / "metrics").rglob("*") if p.is_file()), default=0)
    experiment = _meta(folder.parent / "meta.yaml").get("name") or folder.parent.name
    try:
        where = folder.relative_to(store.parent).as_posix()
    except ValueError:
        where = folder.as_posix()
    return RunMeta(
        run_id=str(meta.get("run_id") or folder.name), name=str(name) if name else None, start_ms=float(start),
        status=_status(meta.get("status")), experiment=str(experiment), where=where, folder=folder,
    )


def _status(value: Any) -> str:
    if isinstance(value, int):
        return _STATUS.get(value, str(value))
    return "" if value is None else str(value)


def _read_text_files(folder: Path, only: Sequence[str] = ()) -> dict[str, str]:
    """`params/` or `tags/`: one file per name (a `/` in a name nests folders), the value is the file's text."""
    out: dict[str, str] = {}
    if not folder.is_dir():
        return out
    paths = [folder / name for name in only] if only else sorted(p for p in folder.rglob("*") if p.is_file())
    for path in paths:
        try:
            out[path.relative_to(folder).as_posix()] = path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
    return out


def _read_metric_folder(folder: Path, builder: RecordBuilder) -> dict[str, int]:
    """Add every metric file under `metrics/` to `builder`; returns the count of malformed lines per key."""
    bad: dict[str, int] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        key = path.relative_to(folder).as_posix()
        try:
            data = path.read_bytes()
        except OSError:
            bad[key] = bad.get(key, 0) + 1
            continue
        # MLflow ends every line with "\n": text after the last one is a line still being written, and reading
        # it could turn "1700000000000 0.5 1" cut after the value into an old two-field line at step 0.
        data = data[: data.rfind(b"\n") + 1]
        steps, values, times, skipped = parse_metric_lines(data.decode("utf-8", errors="replace"))
        if skipped:
            bad[key] = skipped
        if len(steps):
            builder.add_column(key, steps, values, wall_time=times)
    return bad


def parse_metric_lines(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    r"""Steps, values and wall times (s) of a file-store metric file; plus how many lines were malformed.

    >>> steps, values, times, bad = parse_metric_lines("1700000000000 0.5 3\n1700000001000 nan 4\n")
    >>> steps.tolist(), values.tolist(), times.tolist(), bad
    ([3, 4], [0.5, nan], [1700000000.0, 1700000001.0], 0)
    >>> parse_metric_lines("1700000000000 0.25\n")[0].tolist()  # old two-field lines log step 0
    [0]
    """
    tokens = text.split()
    lines = text.count("\n")
    if lines and len(tokens) == 3 * lines:
        try:
            times = np.asarray(tokens[0::3], dtype=np.float64) / 1000.0
            values = np.asarray(tokens[1::3], dtype=np.float64)  # numpy parses "nan", "inf" and "-inf" too
            steps = np.asarray(tokens[2::3], dtype=np.int64)
            return steps, values, times, 0
        except (TypeError, ValueError):
            pass  # some line is odd: go line by line
    step_list: list[int] = []
    value_list: list[float] = []
    time_list: list[float] = []
    bad = 0
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        try:
            if len(fields) == 3:
                step = int(fields[2])
            elif len(fields) == 2:
                step = 0
            else:
                raise ValueError(line)
            stamp, value = float(fields[0]) / 1000.0, float(fields[1])
        except ValueError:
            bad += 1
            continue
        step_list.append(step)
        value_list.append(value)
        time_list.append(stamp)
    return (
        np.asarray(step_list, dtype=np.int64), np.asarray(value_list, dtype=np.float64),
        np.asarray(time_list, dtype=np.float64), bad,
    )


# --- choosing a run, params -> facts --------------------------------------------------------------------------


def choose_run(
    runs: list[RunMeta], store_label: str, tracker: str = "MLflow", group: str = "experiment"
) -> tuple[RunMeta, list[str], list[str]]:
    """The run to read: the one `ASSESSOR_MLFLOW_RUN` names, else the newest; plus warnings and notes.

    Args:
        runs: the store's runs.
        store_label: how messages name the store.
        tracker: how messages name the tracker ("MLflow", "Trackio").
        group: what the tracker calls a group of runs ("experiment", "project").

    Raises:
        UnreadableSourceError: `ASSESSOR_MLFLOW_RUN` is set but names no run in this store.
    """
    warnings: list[str] = []
    wanted = os.environ.get(RUN_VARIABLE, "").strip()
    ordered = sorted(runs, key=lambda r: (r.start_ms, r.run_id), reverse=True)
    if wanted:
        matching = [r for r in ordered if r.run_id == wanted or r.name == wanted]
        matching = matching or [r for r in ordered if r.run_id.startswith(wanted)]
        if not matching:
            shown = ", ".join(r.label() for r in ordered[:6])
            raise UnreadableSourceError(
                f"{store_label}: {RUN_VARIABLE}={wanted!r} names no {tracker} run here (runs: {shown}); set it to one "
                "of these ids or names"
            )
        chosen, how = matching[0], f"chosen by {RUN_VARIABLE}"
    else:
        chosen, how = ordered[0], "the newest" if len(ordered) > 1 else "the only run"
    others = [r for r in ordered if r is not chosen]
    notes = [
        f"{tracker} run {chosen.label()} in {group} {chosen.experiment!r}, {chosen.started()}, "
        f"status {chosen.status or 'unknown'} ({how})"
    ]
    if others:
        shown = "; ".join(f"{r.label()} at {r.where}, {r.started()}" for r in others[:5])
        more = f" and {len(others) - 5} more" if len(others) > 5 else ""
        pick = (
            "pass that run's folder to assess it" if chosen.folder is not None
            else f"set {RUN_VARIABLE}=<run id or name> to assess another"
        )
        warnings.append(
            f"{store_label}: holds {len(runs)} {tracker} runs; read {chosen.label()} ({how}, {chosen.started()}) and "
            f"not the others, which may be unrelated: {shown}{more}. To choose, {pick}"
        )
    return chosen, warnings, notes


def params_to_facts(params: dict[str, str], origin: str) -> dict[str, Fact]:
    """Facts from a run's params, matched like a config file's keys.

    HF/TRL log the training arguments (and the model config) under their own names; verl logs its config
    flattened with `/` (`actor_rollout_ref/actor/kl_loss_coef`, lists as `<name>/list_len`, `<name>/0`, ...),
    which we turn into the dotted paths the config matcher knows.

    >>> params_to_facts({"actor_rollout_ref/rollout/n": "5"}, "params")["num_generations"]
    (5, 'params: actor_rollout_ref/rollout/n')
    """
    dotted = {key.replace("/", "."): key for key in params}
    facts = facts_from_flat_config({d: params[k] for d, k in dotted.items()}, origin)
    # Name each fact's origin with the param as MLflow shows it.
    facts = {
        name: (value, f"{origin}: {dotted.get(where.rsplit(': ', 1)[-1], where.rsplit(': ', 1)[-1])}")
        for name, (value, where) in facts.items()
    }
    if any(k.startswith(("actor_rollout_ref.", "algorithm.adv_estimator")) for k in dotted):
        facts.setdefault("framework", ("verl", f"{origin}: verl config names"))
    return facts


READER = MlflowReader()
