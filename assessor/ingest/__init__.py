"""Read a run directory, in whatever shape its framework wrote it, into one canonical `Run`.

Readers are looked up by name in `READERS` and imported lazily (TensorBoard's protobuf classes are only
loaded when a run has event files). Each reader parses one format; `normalize` does the rest once.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from assessor.errors import NoMetricsError, RunNotFoundError, UnreadableSourceError
from assessor.ingest.base import Reader, SourceData, read_head
from assessor.ingest.discover import Discovery, discover
from assessor.ingest.facts import read_config_file
from assessor.ingest.normalize import NormalizedSource, merge_sources, normalize_source
from assessor.run import NONFINITE_COLUMNS, Run, RunFacts, Sample, SourceInfo, _rows_by_metric

if TYPE_CHECKING:
    from assessor.ingest.cache import IngestCache

# name -> module holding `READER`; the order is the sniffing order for ordinary files.
READERS: dict[str, str] = {
    "trl_state": "assessor.ingest.trl_state",
    "nvidia_smi": "assessor.ingest.nvidia_smi",
    "csv": "assessor.ingest.csv_log",
    "json": "assessor.ingest.json_doc",
    "jsonl": "assessor.ingest.jsonl",
    "notebook": "assessor.ingest.notebook",
    "console": "assessor.ingest.console",
    "tensorboard": "assessor.ingest.tensorboard",
    "mlflow": "assessor.ingest.mlflow",
    "mlflow_sql": "assessor.ingest.mlflow_sql",
    "trackio": "assessor.ingest.trackio",
    "wandb": "assessor.ingest.wandb",
}
# Every reader whose sniff accepts a file is tried, in this order, until one reads it.
_SNIFFED = ("mlflow_sql", "trackio", "notebook", "trl_state", "nvidia_smi", "csv", "json", "jsonl", "console")
# A file these readers could not read is usually no metric log at all (a README, a data table, a summary): it is
# listed with its reason among the ignored files rather than warned about.
_QUIET = frozenset({"console", "csv", "json", "notebook"})
# Readers of folders and databases, whose file fingerprint does not change when a live run appends: never cached.
_UNCACHED = frozenset({"mlflow", "mlflow_sql", "trackio"})

# Facts stated in configs beat facts read off logs; both beat inference.
_FACT_PRIORITY = {
    "config": 0, "trl_state": 1, "hf_log_list": 1, "mlflow": 1, "mlflow_sql": 1, "mlflow_server": 1, "trackio": 1,
    "tensorboard": 2,
    "jsonl": 2, "wandb": 2, "json": 3, "csv": 3, "notebook": 3,
}


def get_reader(name: str) -> Reader:
    """The reader registered under `name`."""
    if name not in READERS:
        raise KeyError(f"unknown reader {name!r}; known: {', '.join(READERS)}")
    reader: Reader = importlib.import_module(READERS[name]).READER
    return reader


def load_run(path: str | Path, cache: IngestCache | None = None) -> Run:
    """Read everything we understand under `path` (a run directory or a single log file) into a `Run`.

    Args:
        path: the run directory or log file, or `mlflow://HOST:PORT/RUN_ID`: a run on an MLflow tracking server
            (`assessor.ingest.mlflow_server`; needs the `mlflow` extra).
        cache: kept between calls on a live run (`assessor watch`), it reads only what changed since the
            last call (see `assessor.ingest.cache`).

    Raises:
        RunNotFoundError: the path does not exist.
        NoMetricsError: nothing readable was found; the message names what was tried and the fix.
    """
    if isinstance(path, str) and path.startswith("mlflow://"):
        return _load_tracking_run(path)
    root = Path(path).expanduser()
    if not root.exists():
        raise RunNotFoundError(f"{root}: no such file or directory; pass the run's output directory")
    found = discover(root.resolve())
    warnings: list[str] = list(found.warnings)
    ignored: list[str] = []
    if cache is not None:
        cache.begin()
    datas = _read_all(found, warnings, ignored, cache)
    if cache is not None:
        cache.end()
    # Readers name files by absolute path; in a report, paths relative to the run directory read better.
    warnings[:] = [w.replace(f"{found.root}/", "") for w in warnings]
    ignored[:] = [w.replace(f"{found.root}/", "") for w in ignored]

    normalize = cache.normalized if cache is not None else normalize_source
    normalized = [normalize(data, found.rel(data.path)) for data in datas]
    merged = merge_sources(normalized)
    metrics = merged.metrics
    sources = [_source_info(n, data, found, merged.unused) for n, data in zip(normalized, datas, strict=True)]
    warnings.extend(merged.notes)
    for source in normalized:
        warnings.extend(source.warnings)
    if metrics.empty:
        raise NoMetricsError(_nothing_readable_message(root, found, warnings, ignored))
    choice = _choice_summary(sources, ignored)
    if choice:
        warnings.insert(0, choice)

    nonfinite = _nonfinite(normalized)
    warnings.extend(_nonfinite_warnings(nonfinite))
    unknown = sorted({k for n in normalized for k in n.unknown_keys})
    if unknown:
        shown = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
        warnings.append(f"{len(unknown)} metric keys are not in our alias table and keep their own names: {shown}")
    if found.truncated_walk:
        warnings.append(f"{root}: more than 50,000 files; stopped looking. Point assessor at the run's own folder")

    gpu, devices = _gpu(datas)
    samples = _latest_samples(datas, found)
    rows = _rows_by_metric(metrics)  # found once: the measured interval reads it, and so does the diagnosis
    facts = _facts(found, datas, metrics, rows)
    said_ended = any(data.carries_end_of_training() for data in datas)
    tails = [] if said_ended else list(_log_tails(found))  # read once, for both the end and the crash marker
    facts.training_ended = said_ended or _log_says_ended(tails)
    newest_write = _newest_write(datas)
    facts.training_crashed = None if facts.training_ended else _log_says_crashed(tails, newest_write)
    _check_facts(facts, metrics, warnings)
    name = root.name if root.is_dir() else root.stem
    run = Run(
        path=root, name=name, metrics=metrics, nonfinite=nonfinite, checkpoints=found.checkpoints, gpu=gpu,
        gpu_devices=devices, facts=facts, sources=sources, warnings=warnings, ignored=ignored, samples=samples,
        newest_write=newest_write,
    )
    run._rows = rows
    return run


def _load_tracking_run(source: str) -> Run:
    """A run on an MLflow tracking server: one source, no files, checkpoints or telemetry beside it."""
    from assessor.ingest.mlflow_server import read_tracking_run

    data, name = read_tracking_run(source)
    found = Discovery(root=data.path)
    normalized = normalize_source(data, data.path.name)
    merged = merge_sources([normalized])
    warnings = [*merged.notes, *normalized.warnings]
    if merged.metrics.empty:
        raise NoMetricsError(f"{source}: none of the run's metrics could be read; {'; '.join(warnings[:3])}")
    nonfinite = _nonfinite([normalized])
    warnings.extend(_nonfinite_warnings(nonfinite))
    facts = _facts(found, [data], merged.metrics)
    _check_facts(facts, merged.metrics, warnings)
    return Run(
        path=data.path, name=name, metrics=merged.metrics, nonfinite=nonfinite, checkpoints=[], gpu=None,
        gpu_devices={}, facts=facts, sources=[_source_info(normalized, data, found, merged.unused)],
        warnings=warnings, location=source,
    )


# Lines trainers print once training is over: HF Trainer's "Training completed. Do not forget to share your model",
# verl's "Final validation metrics: {...}", the "Training finished" of many loops and launchers.
_ENDED = re.compile(r"(?:^|[\s>|:\]])(Training (?:completed|complete|finished|done)\b|Final validation metrics\b)")
_ENDED_LAST_LINES = 50  # only near a log's end: a marker followed by more training is an earlier run's
_LOG_TAIL_BYTES = 65536
_MAX_LOGS_SCANNED = 50  # a folder of sample dumps is no place to look for it


def _log_tails(found: Discovery) -> Iterator[tuple[float, list[str]]]:
    """Each text log beside the metrics (read for metrics or not): when it was last written, and its last lines."""
    logs = [path for path in found.files if path.suffix in (".log", ".out", ".txt", ".err")]
    for path in logs[:_MAX_LOGS_SCANNED]:
        try:
            with path.open("rb") as fh:
                size = fh.seek(0, 2)
                fh.seek(max(0, size - _LOG_TAIL_BYTES))
                tail = fh.read().decode("utf-8", errors="replace")
            written = path.stat().st_mtime
        except OSError:
            continue
        yield written, [line for line in tail.splitlines() if line.strip()][-_ENDED_LAST_LINES:]


def _log_says_ended(tails: Iterable[tuple[float, list[str]]]) -> bool:
    """A text log beside the metrics (read for metrics or not) ends with an end-of-training line (`_log_tails`)."""
    return any(any(_ENDED.search(line) for line in lines) for _, lines in tails)


# How a training job dies in its log: a Python traceback and its exception, torch's elastic launcher giving up, an
# out-of-memory error, an NCCL watchdog timeout, a C++ abort, the kernel's OOM killer.
_CRASHED = re.compile(
    r"Traceback \(most recent call last\)|ChildFailedError|OutOfMemoryError|CUDA out of memory|"
    r"DistBackendError|NCCL (?:error|timeout|communicator was aborted)|Watchdog caught collective operation timeout|"
    r"terminate called after throwing|Segmentation fault|^Killed\b")
_CRASH_LAST_LINES = 15  # the error must close the log: one the run went on after is an earlier, survived one
_METRIC_LINE = re.compile(r"[{,]\s*'?\"?(?:loss|reward|step|train/|kl)\b|\bstep[:=]\s*\d")


# Metrics written this long after a log's error say the job went on: the error was a side process's (an evaluator
# dying on its own) or an earlier attempt's, not the training job's.
_CRASH_SUPERSEDED_S = 600.0


def _log_says_crashed(tails: Iterable[tuple[float, list[str]]], newest_write: float | None) -> str | None:
    """The error line a text log ends with, when its last lines are an error and no metrics follow (`_log_tails`)."""
    for written, lines in tails:
        if newest_write is not None and newest_write - written > _CRASH_SUPERSEDED_S:
            continue
        last = lines[-_CRASH_LAST_LINES:]
        if any("KeyboardInterrupt" in line for line in last):
            continue  # stopped by hand: the user's decision, not the job dying
        hits = [i for i, line in enumerate(last) if _CRASHED.search(line)]
        if hits and not any(_METRIC_LINE.search(line) for line in last[hits[0]:]):
            error = next((line.strip() for line in reversed(last) if re.search(r"(Error|Exception)\b", line)),
                         last[hits[0]].strip())
            return error[:160]
    return None


def _newest_write(datas: list[SourceData]) -> float | None:
    """When a source file was last written (a live run keeps writing; a stalled one stops)."""
    times = []
    for data in datas:
        try:
            times.append(data.path.stat().st_mtime)
        except OSError:  # a database or folder reader's path, or a file removed since
            continue
    return max(times, default=None)


def _read_all(
    found: Discovery, warnings: list[str], ignored: list[str], cache: IngestCache | None = None
) -> list[SourceData]:
    datas: list[SourceData] = []

    def attempt(reader_name: str, path: Path, quiet: bool = False) -> SourceData | None:
        try:
            return _read(reader_name, path, cache)
        except UnreadableSourceError as error:
            (ignored if quiet else warnings).append(str(error))
            return None

    for data in _trainer_states(found, warnings, cache):
        datas.append(data)
    if found.event_files:
        from assessor.ingest.tensorboard import read_event_files

        read_events = cache.read_event_files if cache is not None else read_event_files
        try:
            datas.append(read_events(sorted(found.event_files), found.root))
        except UnreadableSourceError as error:
            warnings.append(str(error))
    if found.wandb_files:
        from assessor.ingest.wandb import read_wandb_runs

        files, live = sorted(found.wandb_files), cache is not None
        try:  # together: a resumed run's logs continue each other (re-read whole on each watch check)
            if cache is None:
                datas.append(read_wandb_runs(files, found.root, live=live))
            else:
                datas.append(cache.read_uncached("wandb", found.root, lambda: read_wandb_runs(files, found.root, live)))
        except UnreadableSourceError as error:
            warnings.append(str(error))
    for store in found.mlflow_stores:
        read = attempt("mlflow", store)
        if read is not None:
            datas.append(read)
    for path in found.files:
        read = _read_file(path, warnings, ignored, cache)
        if read is not None:
            datas.append(read)
    return datas


def _read_file(path: Path, warnings: list[str], ignored: list[str], cache: IngestCache | None) -> SourceData | None:
    """The file read by the first reader that understands it; one reader failing never hides another."""
    head = read_head(path)
    failures: list[tuple[str, str]] = []
    for reader_name in _SNIFFED:
        if not get_reader(reader_name).sniff(path, head):
            continue
        try:
            return _read(reader_name, path, cache)
        except UnreadableSourceError as error:
            failures.append((reader_name, str(error)))
    if failures:
        # The most general reader tried last knows best what the file is not (a `.log` whose first line is
        # JSON is a console log more often than a JSON-lines file).
        reader_name, message = failures[-1]
        (ignored if reader_name in _QUIET else warnings).append(message)
    return None


def _read(reader_name: str, path: Path, cache: IngestCache | None) -> SourceData:
    reader = get_reader(reader_name)
    if cache is None:
        return reader.read(path)
    if reader_name in _UNCACHED:  # read whole each time; the cache still says whether the reading changed
        return cache.read_uncached(reader_name, path, lambda: reader.read(path))
    return cache.read(reader_name, path, reader.read)


def _trainer_states(found: Discovery, warnings: list[str], cache: IngestCache | None) -> Iterable[SourceData]:
    """The top-level trainer state, and the newest readable checkpoint's (older ones are subsets)."""
    top = [p for step, p in found.trainer_states if step is None]
    in_checkpoints = _live_branch_first(
        sorted(((s, p) for s, p in found.trainer_states if s is not None), reverse=True), found, warnings)
    for path in top:
        try:
            yield _read("trl_state", path, cache)
        except UnreadableSourceError as error:
            warnings.append(str(error))
    for _, path in in_checkpoints:
        try:
            yield _read("trl_state", path, cache)
            return
        except UnreadableSourceError as error:
            warnings.append(f"{error} (trying the previous checkpoint)")


LEFTOVER_AFTER_S = 600.0  # a higher checkpoint written this long before a lower one belongs to another run


def _live_branch_first(
    in_checkpoints: list[tuple[int, Path]], found: Discovery, warnings: list[str],
) -> list[tuple[int, Path]]:
    """Checkpoints' trainer states, the one to read first: the highest step, unless a lower one was written later.

    A trainer writes its checkpoints in step order. A higher checkpoint written well before a lower one is left
    from an earlier run in the same output folder (reused without clearing), or from a branch abandoned by a
    resume from an earlier checkpoint: the latest-written trainer state holds the live run's history.
    """
    times: dict[Path, float] = {}
    for _, path in in_checkpoints:
        try:
            times[path] = path.stat().st_mtime
        except OSError:
            return in_checkpoints
    if not in_checkpoints:
        return in_checkpoints
    step, latest = max(in_checkpoints, key=lambda c: times[c[1]])
    older = [(s, p) for s, p in in_checkpoints if s > step and times[latest] - times[p] > LEFTOVER_AFTER_S]
    if not older:
        return in_checkpoints
    names = ", ".join(found.rel(p.parent) for _, p in older)
    warnings.append(f"{names} {'is' if len(older) == 1 else 'are'} older than {found.rel(latest.parent)} though "
                    f"further on: read as left from an earlier run or an abandoned branch in the same folder, and "
                    f"{found.rel(latest)} as the live run's history; clear the folder or point assessor at the "
                    "run you mean if that is wrong")
    return [(step, latest), *[(s, p) for s, p in in_checkpoints if (s, p) not in older and p != latest]]


def _source_info(source: NormalizedSource, data: SourceData, found: Discovery, unused: dict[str, str]) -> SourceInfo:
    steps = [int(p.steps[0]) for p in source.pieces if len(p.steps)] + [
        int(p.steps[-1]) for p in source.pieces if len(p.steps)
    ]
    points = source.points
    keys = len({p.source_key for p in source.pieces})
    if data.gpu is not None and data.frame.empty:  # a telemetry-only source (W&B logs hold both)
        points = len(data.gpu)
        keys = int(data.gpu["field"].nunique())
    return SourceInfo(
        path=source.source, format=data.format if data.format else source.format, keys=keys, points=points,
        first_step=min(steps) if steps else None, last_step=max(steps) if steps else None, notes=source.notes,
        used=source.source not in unused, reason=unused.get(source.source),
    )


def _choice_summary(sources: list[SourceInfo], ignored: list[str]) -> str | None:
    """One line saying which files of several were used and which were not, with the short reason why.

    Only when a file could not be read: a file read but superseded (TRL's event file beside its trainer state)
    is the usual case, said in `sources` and in the note on overlapping metrics.
    """
    unused = [s for s in sources if not s.used]
    if not sources or not ignored:
        return None
    used = [s.path for s in sources if s.used]
    skipped = [f"{s.path} ({_short(s.reason or 'not needed')})" for s in unused]
    skipped += [f"{path} ({_short(reason)})" for path, _, reason in (item.partition(": ") for item in ignored)]
    return f"read {len(used)} of {len(sources) + len(ignored)} files: used {', '.join(used) or 'none'}; " \
        f"not used: {', '.join(skipped)}"


def _short(reason: str) -> str:
    """A reason's first clause (what was wrong), without the fix and examples that follow it."""
    return reason.split(";")[0].split(" (")[0].rstrip(".")


def _nonfinite(sources: list[NormalizedSource]) -> pd.DataFrame:
    frames = [f for s in sources for f in s.nonfinite]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype="int64" if c == "step" else "object") for c in NONFINITE_COLUMNS})
    return pd.concat(frames, ignore_index=True)


def _nonfinite_warnings(nonfinite: pd.DataFrame) -> list[str]:
    out = []
    for (metric, split), rows in nonfinite.groupby(["metric", "split"], sort=True):
        steps = sorted(int(s) for s in rows["step"].unique())
        shown = ", ".join(str(s) for s in steps[:8]) + (" ..." if len(steps) > 8 else "")
        kinds = "/".join(sorted(set(rows["kind"])))
        where = "" if split == "train" else f" ({split})"
        out.append(f"{metric}{where}: {len(steps)} {kinds} values at steps {shown} (treated as missing)")
    return out


def _latest_samples(datas: list[SourceData], found: Discovery, keep: int = 8) -> list[Sample]:
    """The newest completions found (those of the latest step first), each named by its source file."""
    samples = [s.model_copy(update={"source": found.rel(d.path)}) for d in datas for s in d.samples]
    samples.sort(key=lambda s: s.step if s.step is not None else -1, reverse=True)
    return samples[:keep]


def _gpu(datas: list[SourceData]) -> tuple[pd.DataFrame | None, dict[int, str]]:
    frames = [d.gpu for d in datas if d.gpu is not None]
    devices: dict[int, str] = {}
    for data in datas:
        devices.update(data.gpu_devices)
    if not frames:
        return None, devices
    gpu = pd.concat(frames, ignore_index=True).sort_values(["time", "device"], kind="stable").reset_index(drop=True)
    return gpu, devices


def _facts(found: Discovery, datas: list[SourceData], metrics: pd.DataFrame,
           rows: Mapping[tuple[str, str], np.ndarray | slice] | None = None) -> RunFacts:
    candidates: list[tuple[int, str, Any, str]] = []
    # The run's own config files first, then the newest checkpoint's (a resume may change arguments), then JSON
    # documents of single values beside a log (a custom loop's `run.json`: its settings, under a name of its own).
    configs = [path for _, path in sorted(found.config_files, key=lambda item: (item[0] is not None, -(item[0] or 0)))]
    for path in configs + _settings_beside_logs(found, datas):
        for name, (value, origin) in read_config_file(path, found.rel(path)).items():
            candidates.append((_FACT_PRIORITY["config"], name, value, origin))
    for data in datas:
        priority = _FACT_PRIORITY.get(data.format, 4)
        for name, (value, origin) in data.facts.items():
            candidates.append((priority, name, value, origin))
    chosen: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    for _, name, value, origin in sorted(candidates, key=lambda c: c[0]):
        if name in RunFacts.model_fields and name != "provenance" and name not in chosen and value is not None:
            chosen[name] = value
            provenance[name] = origin
    interval = _measured_interval(metrics, rows)
    if interval is not None:
        chosen["logging_interval"] = interval
        provenance["logging_interval"] = "measured: median gap between logged training steps"
    if "save_steps" not in chosen:
        saves = _timed_save_interval(metrics, rows)
        if saves is not None:
            chosen["save_steps"] = saves
            provenance["save_steps"] = "measured: the steps at which a checkpoint save was timed (time_checkpoint_s)"
    # Framework first: which keys an algorithm leaves depends on the framework that logged them.
    if "framework" not in chosen or chosen["framework"] == "hf":
        framework = _infer_framework(metrics)
        if framework:
            chosen["framework"] = framework
            provenance["framework"] = "inferred from the metric keys"
    if "algorithm" not in chosen:
        algorithm = _infer_algorithm(metrics, chosen.get("framework"))
        if algorithm:
            chosen["algorithm"] = algorithm
            provenance["algorithm"] = "inferred from the logged metrics"
    return RunFacts(**chosen, provenance=provenance)


def _settings_beside_logs(found: Discovery, datas: list[SourceData]) -> list[Path]:
    """JSON files no reader took (single values: settings or a summary) in the run folder or beside a log read."""
    read = {data.path for data in datas}
    folders = {data.path.parent for data in datas} | {found.root}
    return [p for p in found.files if p.suffix.lower() == ".json" and p not in read and p.parent in folders]


SAVE_TIMER = ("time_checkpoint_s", "train")
REGULAR_SHARE = 0.8  # of the gaps between timed saves, this share equal: a save interval, not ad-hoc saves


def _timed_save_interval(metrics: pd.DataFrame, rows: Mapping[tuple[str, str], np.ndarray | slice] | None = None,
                         ) -> int | None:
    """The save interval read off the steps where a checkpoint save was timed (verl's `timing_s/save_checkpoint`).

    A run that logs how long each save took says when it saved, though no config beside the log gives the interval
    (published logs, checkpoints kept elsewhere): three or more timed saves at one regular gap.
    """
    found: np.ndarray | slice | None = rows.get(SAVE_TIMER) if rows is not None else (
        ((metrics["metric"] == SAVE_TIMER[0]) & (metrics["split"] == SAVE_TIMER[1])).to_numpy())
    if found is None:
        return None
    values = metrics["value"].to_numpy(dtype=float)[found]
    steps = np.unique(metrics["step"].to_numpy()[found][np.isfinite(values) & (values > 0)])
    if len(steps) < 3:
        return None
    gaps = np.diff(steps)
    gap = int(np.median(gaps))
    return gap if gap > 0 and float(np.mean(gaps == gap)) >= REGULAR_SHARE else None


def _measured_interval(metrics: pd.DataFrame, rows: Mapping[tuple[str, str], np.ndarray | slice] | None = None,
                       ) -> int | None:
    """The median gap between the logged steps of the most-logged training metric.

    `rows`: the table's rows of each (metric, split) (`run._rows_by_metric`), when already found; on a categorical
    table the counts are read off them, instead of comparing every row of a table of tens of millions.
    """
    metric = metrics["metric"]
    if isinstance(metric.dtype, pd.CategoricalDtype):
        rows = _rows_by_metric(metrics) if rows is None else rows
        where = {str(name): i for i, name in enumerate(metric.cat.categories)}
        counted = np.zeros(len(where), dtype=np.int64)
        for (name, split), found in rows.items():
            if split == "train":
                counted[where[name]] = found.stop - found.start if isinstance(found, slice) else len(found)
        # ordered as `value_counts` orders them (the same sort of the same counts), so ties fall the same way
        counts = pd.Series(counted, index=metric.cat.categories).sort_values(ascending=False)
        if counts.empty or counts.iloc[0] == 0:
            return None
        steps = np.sort(metrics["step"].to_numpy()[rows[(str(counts.index[0]), "train")]])
    else:
        train = (metrics["split"] == "train").to_numpy()
        counts = metric[train].value_counts()
        if counts.empty or counts.iloc[0] == 0:
            return None
        top = (metric == counts.index[0]).to_numpy() & train
        steps = np.sort(metrics["step"].to_numpy()[top])
    # a sort, then the distinct: numpy's hashing `unique` is slower
    steps = steps[np.concatenate(([True], steps[1:] != steps[:-1]))] if len(steps) else steps
    if len(steps) < 2:
        return None
    return int(np.median(np.diff(steps)))


def _raw_keys(metrics: pd.DataFrame) -> set[str]:
    """The keys as the framework wrote them, without the `train/` that TensorBoard and W&B copies add."""
    keys = {str(k) for k in metrics["source_key"].cat.categories}
    return {k[len("train/"):] if k.startswith("train/") else k for k in keys}


# TRL's PPO-style trainers (PPOTrainer, RLOOTrainer before v0.22, online DPO): `objective/*`, `policy/*`, and the
# legacy (<= v0.11) PPOTrainer's `ppo/*`, `env/*`.
_TRL_PPO_STYLE = ("objective/", "policy/approxkl_avg", "policy/clipfrac_avg", "loss/policy_avg", "ppo/", "env/reward")
# Status keys only OpenRLHF writes (reference section 1.6); a run needs several of them, since a script of one's
# own may well log a `return` or a `truncated`.
_OPENRLHF_KEYS = frozenset({
    "actor_lr", "actor_grad_norm", "critic_lr", "critic_grad_norm", "critic_loss", "ppo_clip_ratio", "ppo_kl",
    "vllm_kl", "group_reward_std", "return", "total_length", "truncated", "response_length", "ptx_loss",
    "logprobs_diff", "dynamic_filtering_pass_rate", "timing/make_experience", "timing/ppo_train",
    "timing/step_total", "timing/broadcast", "rollout/truncated_rate", "chosen_reward", "reject_reward",
})
# NeMo-RL's GRPO keys (reference section 1.7), held to the same standard.
_NEMO_RL_KEYS = frozenset({
    "token_mult_prob_error", "approx_entropy", "kl_penalty", "mean_gen_tokens_per_sample", "gen_kl_error",
    "probs_ratio_clamped", "natural_termination_rate", "global_valid_toks", "timing/train/total_step_time",
    "baseline_reward/pct_0",
})
_SEVERAL = 3
# Keys only a preference trainer that samples its own pairs writes (TRL's OnlineDPO, XPO and NashMD trainers): the
# KL and entropy of its generations, the judge's or reward model's scores, and its end-of-sequence rate.
_ONLINE_PREFERENCE_KEYS = frozenset({
    "objective/kl", "objective/entropy", "objective/scores", "objective/rlhf_reward", "objective/model_scores",
    "loss/kl", "val/contain_eos_token", "val/model_contain_eos_token", "rewards/probabilities", "mixture_coef",
})


def _infer_algorithm(metrics: pd.DataFrame, framework: str | None) -> str | None:
    """The algorithm from the logged metrics, for runs whose config does not name it."""
    names = {str(name) for name in metrics["metric"].cat.categories}
    keys = _raw_keys(metrics)
    # Preference losses other than DPO leave keys of their own (TRL): ORPO its odds terms, KTO its per-kind
    # counts, CPO/SimPO an NLL term without ORPO's odds.
    if keys & {"log_odds_ratio", "log_odds_chosen"}:
        return "orpo"
    if keys & {"count/chosen", "count/rejected", "rewards/chosen_sum", "logps/chosen_sum"}:
        return "kto"
    if names & {"pref_margin", "pref_reward_chosen", "pref_accuracy"}:
        if keys & _ONLINE_PREFERENCE_KEYS:
            return "online_dpo"  # TRL's online DPO, XPO and Nash-MD: pairs sampled from the policy each step
        return "cpo" if "nll_loss" in keys else "dpo"
    if names & {"value_loss", "value_mean", "value_explained_var"}:
        return "ppo"
    if names & {"num_gen_batches", "dynamic_filtering_pass_rate"}:  # dynamic sampling: DAPO
        return "dapo"
    if framework == "trl" and any(k.startswith(("objective/", "policy/")) for k in keys):
        # PPO-style TRL keys without a value head (PPO's was caught above): RLOOTrainer before v0.22.
        return "rloo"
    if framework == "openrlhf":
        return None  # its GRPO, REINFORCE++ and RLOO log the same keys; only `--advantage_estimator` tells
    if "reward_mean" in names and (
        names & {"reward_zero_std_frac", "reward_std", "advantage_std"} or framework in ("trl", "verl")
    ):
        return "grpo"
    return None


def _infer_framework(metrics: pd.DataFrame) -> str | None:
    """The framework from the metric keys, for runs whose readers and configs do not say."""
    keys = _raw_keys(metrics)
    if any(k.startswith(("critic/", "actor/", "timing_s/", "val-core/")) for k in keys):
        return "verl"
    if any(k.startswith(("completions/", "rewards/")) or k == "frac_reward_zero_std" for k in keys):
        return "trl"
    if any(k.startswith(_TRL_PPO_STYLE) for k in keys):
        return "trl"
    if len(keys & _OPENRLHF_KEYS) >= _SEVERAL:
        return "openrlhf"
    if len(keys & _NEMO_RL_KEYS) >= _SEVERAL or any(k.startswith("timing/train/") for k in keys):
        return "nemo_rl"
    return None


def _check_facts(facts: RunFacts, metrics: pd.DataFrame, warnings: list[str]) -> None:
    # Say so when the run has gone past what its config planned (an extended or mislabelled run).
    if not facts.planned_total_steps:
        return
    train = (metrics["split"] == "train").to_numpy()
    last = int(metrics["step"].to_numpy().max(initial=-1, where=train)) if train.any() else None
    if last is not None and last > facts.planned_total_steps:
        warnings.append(
            f"logged steps reach {last}, past the planned {facts.planned_total_steps} "
            f"({facts.provenance.get('planned_total_steps', 'config')})"
        )


def _nothing_readable_message(root: Path, found: Discovery, warnings: list[str], ignored: list[str]) -> str:
    problems = warnings + ignored
    if len(problems) == 1:
        return problems[0]
    if problems:  # every file tried, with its reason, on one line
        return f"{root}: no metrics in any of the {len(problems)} files tried: " + " | ".join(problems)
    if found.checkpoints:
        return (
            f"{root}: found {len(found.checkpoints)} checkpoints but no metric logs; keep `trainer_state.json` in "
            "checkpoints, or point assessor at the folder with the training logs"
        )
    return (
        f"{root}: no training logs found (looked for trainer_state.json, TensorBoard event files, MLflow stores, "
        "W&B run logs, CSV, JSONL and console logs); point assessor at the run's output directory"
    )
