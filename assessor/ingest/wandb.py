"""Weights & Biases local run directories (`wandb/run-*/run-<id>.wandb`, `wandb/offline-run-*/...`).

The `.wandb` file is W&B's transaction log and the only complete local record of a run (newer clients write
no history JSONL, and offline runs may lack `wandb-summary.json` and `config.yaml`). It is read here without
the `wandb` package:

* framing: a 7-byte header (`:W&B`, magic 0xBEE1 little-endian, version 0), then LevelDB-log-style 32 KiB
  blocks of chunks, each with a 7-byte header (uint32 CRC-32 of the type byte + data, uint16 length, uint8
  type FULL=1 / FIRST=2 / MIDDLE=3 / LAST=4); fewer than 7 bytes left in a block are padding;
* payload: a protobuf `wandb_internal.Record`, decoded by a small wire-format reader that keeps only the
  fields needed here (history, config, stats, run, environment) and skips everything else.

History rows become the raw frame. The x-axis is `train/global_step` when the run logs it (HF's
`WandbCallback` and OpenRLHF make it W&B's step metric, so steps then match `trainer_state.json`), carried
forward to rows that lack it as W&B's `step_sync` does; otherwise the history step (`wandb.log(step=...)`,
which verl uses). `_step`, `_runtime`, `_timestamp` and other `_`-keys are W&B bookkeeping and are dropped;
`_timestamp` gives the wall time. System stats (`gpu.{i}.*`) become the GPU telemetry frame that the
nvidia-smi reader also gives, and the run's config gives run facts through `facts.py`.

A folder's `wandb/` often holds every run ever launched from that directory, so not every `.wandb` file there
belongs to the run being assessed. The newest run with history is read, together with the earlier runs it
continues (the same W&B run id, or a run of the same project whose steps start later: a resume from a
checkpoint); they are combined in start order, so the normalizer keeps the newest record of each step.
Older runs that start again from the beginning are other experiments: they are named in a note, not read.
"""

from __future__ import annotations

import math
import os
import re
import struct
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData, display_name, empty_raw_frame
from assessor.ingest.facts import Fact, facts_from_flat_config, flatten, read_config_file
from assessor.ingest.nesting import loads

FORMAT = "wandb"

MAGIC = b":W&B" + struct.pack("<HB", 0xBEE1, 0)
_HEADER_SIZE = len(MAGIC)
_BLOCK = 32 * 1024
_CHUNK_HEADER = struct.Struct("<IHB")
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4

# wandb_internal.Record fields read here (api/proto/wandb_internal.proto); all others are skipped.
_REC_HISTORY, _REC_CONFIG, _REC_STATS, _REC_RUN, _REC_ENVIRONMENT = 2, 5, 7, 17, 26
_RUN_ID, _RUN_PROJECT, _RUN_CONFIG, _RUN_START_TIME = 1, 3, 4, 17
_ENV_GPU_NVIDIA = 24

# Keys that carry a trainer's own step: preferred over W&B's `_step`, which keeps counting across a resume.
STEP_METRICS = ("train/global_step", "trainer/global_step")
# A run folder inside `wandb/`: `run-20250101_120000-<id>`, `offline-run-...`, `dryrun-...` (clients before 0.10).
RUN_DIR = re.compile(r"^(?:offline-run|run|dryrun)-(?P<stamp>\d{8}_\d{6})-(?P<id>[^.]+)$")

# W&B system-metric names -> the nvidia-smi reader's field names (`assessor.ingest.nvidia_smi.FIELD_NAMES`).
GPU_FIELDS = {
    "gpu": "gpu_util_pct",
    "memory": "mem_util_pct",
    "memoryAllocated": "memory_used_pct",  # percent of the card's memory; W&B's own unit
    "temp": "temperature_c",
    "powerWatts": "power_w",
    "powerPercent": "power_pct",
    "enforcedPowerLimitWatts": "power_limit_w",
    "smClock": "sm_clock_mhz",
    "memoryClock": "mem_clock_mhz",
    "graphicsClock": "graphics_clock_mhz",
}
_GPU_KEY = re.compile(r"^(?:system[./])?gpu\.(?P<device>\d+)\.(?P<name>\w+)$")
_MIB = float(1 << 20)

_VERL_KEYS = ("critic/score/mean", "actor/pg_loss")
_TRL_REWARD_OR_LOSS = ("train/reward", "train/loss")
STILL_WRITING = "the run may still be writing"  # the phrase `assessor.ingest.cache` looks for


class _WireError(ValueError):
    """A protobuf message that does not parse (the record is skipped)."""


# --- protobuf wire format ---------------------------------------------------------------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise _WireError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _WireError("varint too long")


def _fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) for each field of one message; LEN values come back as bytes.

    Unknown fields are yielded too and the caller ignores them; only a malformed message raises.
    """
    pos = 0
    end = len(buf)
    while pos < end:
        tag, pos = _varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        value: Any
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            if pos + size > end:
                raise _WireError("truncated field")
            value = buf[pos:pos + size]
            pos += size
        elif wire == 1:
            value = buf[pos:pos + 8]
            pos += 8
        elif wire == 5:
            value = buf[pos:pos + 4]
            pos += 4
        else:  # groups (3, 4) are deprecated and never used by W&B
            raise _WireError(f"unsupported wire type {wire}")
        if pos > end:
            raise _WireError("truncated field")
        yield number, wire, value


def _text(value: Any) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else ""


def _item(buf: bytes) -> tuple[str, Any]:
    """Key and value of a `HistoryItem` / `StatsItem` / `ConfigItem` (the value still JSON text or typed)."""
    key = ""
    nested: list[str] = []
    value: Any = None
    for number, wire, raw in _fields(buf):
        if number == 16 and wire == 2:  # value_json
            value = _text(raw)
        elif number == 1 and wire == 2:
            key = _text(raw)
        elif number == 2 and wire == 2:  # nested_key: a logged nested dict, {"a": {"b": 1}} -> ["a", "b"]
            nested.append(_text(raw))
        # Typed values of newer HistoryItems (none=3, boolean=4, integer=5 zigzag, number=6 double).
        elif number == 3 and wire == 0:
            value = math.nan
        elif number == 4 and wire == 0:
            value = float(bool(raw))
        elif number == 5 and wire == 0:
            value = float((raw >> 1) ^ -(raw & 1))
        elif number == 6 and wire == 1 and len(raw) == 8:
            value = struct.unpack("<d", raw)[0]
    if not key and nested:
        key = ".".join(nested)  # W&B shows nested keys dotted
    return key, value


def _number(value: Any) -> float | None:
    """A float from an item value; None for text, media, tables and lists (not curves)."""
    if isinstance(value, float):
        return value
    if not isinstance(value, str):
        return None
    try:
        return float(value)  # also takes W&B's bare NaN / Infinity / -Infinity tokens
    except ValueError:
        pass
    try:
        parsed = loads(value)
    except ValueError:
        return None
    if parsed is None:
        return math.nan  # a logged None: counted as missing, like a JSON null elsewhere
    if isinstance(parsed, bool | int | float):
        return float(parsed)
    return None


def _json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return loads(value)
    except ValueError:  # not JSON, or nested too deeply: kept as the text it is
        return value


def _timestamp(buf: bytes) -> float:
    seconds = nanos = 0
    for number, wire, raw in _fields(buf):
        if number == 1 and wire == 0:
            seconds = raw
        elif number == 2 and wire == 0:
            nanos = raw
    return seconds + nanos / 1e9


# --- framing ----------------------------------------------------------------------------------------------


@dataclass
class _Framing:
    """Record payloads of one file and how the file ended."""

    payloads: list[bytes] = field(default_factory=list)
    partial: bool = False  # the file ends inside a record (live run or crash): normal, read up to it
    corrupt: str | None = None  # a damaged chunk in the middle; records before it were kept


def _records(buf: bytes) -> _Framing:
    """Split a `.wandb` file (header already checked) into record payloads, CRC-checked."""
    out = _Framing()
    size = len(buf)
    pos = _HEADER_SIZE
    pending: list[bytes] | None = None
    crc32 = zlib.crc32
    type_crcs = {kind: crc32(bytes([kind])) for kind in (_FULL, _FIRST, _MIDDLE, _LAST)}
    while pos < size:
        left = _BLOCK - pos % _BLOCK
        if left < _CHUNK_HEADER.size:  # block trailer: zero padding
            pos += left
            continue
        if pos + _CHUNK_HEADER.size > size:
            out.partial = True
            break
        checksum, length, kind = _CHUNK_HEADER.unpack_from(buf, pos)
        start = pos + _CHUNK_HEADER.size
        end = start + length
        if end > size:
            out.partial = True
            break
        if checksum == 0 and length == 0 and kind == 0:
            # Zeros where a chunk should be: space the writer reserved but has not filled yet.
            out.partial = buf[pos:].strip(b"\0") == b""
            if not out.partial:
                out.corrupt = f"an empty chunk header at byte {pos}"
            break
        data = buf[start:end]
        if kind not in type_crcs or length > left - _CHUNK_HEADER.size or crc32(data, type_crcs[kind]) != checksum:
            if end == size or buf[end:].strip(b"\0") == b"":
                out.partial = True  # the last chunk, half-flushed
            else:
                out.corrupt = f"a damaged chunk at byte {pos}"
            break
        pos = end
        if kind == _FULL:
            out.payloads.append(data)
            pending = None
        elif kind == _FIRST:
            pending = [data]
        elif pending is not None:  # MIDDLE or LAST of a record whose FIRST we saw
            pending.append(data)
            if kind == _LAST:
                out.payloads.append(b"".join(pending))
                pending = None
    if pending is not None and not out.corrupt:
        out.partial = True
    return out


def check_header(head: bytes, label: str) -> None:
    """Raise `UnreadableSourceError` unless `head` starts a `.wandb` transaction log we can read."""
    if len(head) < _HEADER_SIZE:
        raise UnreadableSourceError(
            f"{label}: too short to be a W&B transaction log ({len(head)} bytes; the run may not have started "
            "logging yet); wait for W&B to write it, or delete the empty file"
        )
    if head[:4] != MAGIC[:4] or head[4:6] != MAGIC[4:6]:
        raise UnreadableSourceError(
            f"{label}: not a W&B transaction log (starts {head[:7]!r}, expected b':W&B' and magic 0xBEE1); "
            "the file is damaged or not from W&B: restore it from a backup or move it out of the run folder"
        )
    if head[6] != MAGIC[6]:
        raise UnreadableSourceError(
            f"{label}: W&B transaction log format version {head[6]}, but only version 0 is understood; "
            "export the run with `wandb sync --view --verbose` or the W&B API and point assessor at a CSV"
        )


# --- one run ----------------------------------------------------------------------------------------------


@dataclass
class _Key:
    rows: array[int] = field(default_factory=lambda: array("q"))
    values: array[float] = field(default_factory=lambda: array("d"))


@dataclass
class _RunScan:
    """What one `.wandb` file held."""

    path: Path
    label: str
    run_id: str = ""
    project: str = ""
    start_time: float = math.nan
    config: dict[str, Any] = field(default_factory=dict)
    keys: dict[str, _Key] = field(default_factory=dict)
    history_steps: array[int] = field(default_factory=lambda: array("q"))
    step_metric: array[float] = field(default_factory=lambda: array("d"))  # NaN when the row lacks it
    times: array[float] = field(default_factory=lambda: array("d"))
    stats: list[tuple[float, dict[str, float]]] = field(default_factory=list)
    gpu_names: list[str] = field(default_factory=list)
    gpu_memory_bytes: list[int] = field(default_factory=list)
    records: int = 0
    skipped: int = 0
    non_numeric: set[str] = field(default_factory=set)
    warning: str | None = None
    steps: np.ndarray | None = None  # the chosen x-axis per history row, set by `_assign_steps`

    @property
    def rows(self) -> int:
        return len(self.history_steps)


def _scan(path: Path, label: str) -> _RunScan:
    try:
        buf = path.read_bytes()
    except OSError as error:
        raise UnreadableSourceError(f"{label}: cannot be read ({error.strerror}); check its permissions") from error
    check_header(buf[:_HEADER_SIZE], label)
    framing = _records(buf)
    scan = _RunScan(path=path, label=label)
    for payload in framing.payloads:
        scan.records += 1
        try:
            _record(payload, scan)
        except _WireError:
            scan.skipped += 1
    if framing.corrupt:
        scan.warning = (
            f"{label}: {framing.corrupt} (corrupt file?); read the {scan.records} records before it"
        )
    elif framing.partial:
        scan.warning = f"{label}: last record is incomplete ({STILL_WRITING}); read {scan.records} records before it"
    return scan


def _record(payload: bytes, scan: _RunScan) -> None:
    for number, wire, raw in _fields(payload):
        if wire != 2:
            continue
        if number == _REC_HISTORY:
            _history(raw, scan)
        elif number == _REC_STATS:
            _stats(raw, scan)
        elif number == _REC_CONFIG:
            _config(raw, scan.config)
        elif number == _REC_RUN:
            _run(raw, scan)
        elif number == _REC_ENVIRONMENT:
            _environment(raw, scan)


def _history(buf: bytes, scan: _RunScan) -> None:
    row = scan.rows
    step: int | None = None
    step_metric = math.nan
    wall_time = math.nan
    logged_step: float | None = None
    values: list[tuple[str, float]] = []
    for number, wire, raw in _fields(buf):
        if number == 1 and wire == 2:
            key, value = _item(raw)
            if key == "_timestamp":
                wall_time = _number(value) or math.nan
                continue
            if key == "_step":
                logged_step = _number(value)
                continue
            if key.startswith("_"):  # _runtime, _wandb: W&B bookkeeping
                continue
            number_value = _number(value)
            if number_value is None:
                if isinstance(value, str) and not value.lstrip().startswith(("{", "[")):
                    scan.non_numeric.add(key)  # text; media, tables and lists are silently not curves
                continue
            if key in STEP_METRICS:  # the x-axis, not a curve
                if math.isnan(step_metric) and math.isfinite(number_value):
                    step_metric = number_value
                continue
            values.append((key, number_value))
        elif number == 2 and wire == 2:
            step = 0  # a present but empty HistoryStep is step 0
            for sub, sub_wire, sub_raw in _fields(raw):
                if sub == 1 and sub_wire == 0:
                    step = sub_raw - (1 << 64) if sub_raw >= 1 << 63 else sub_raw
    if step is None:
        step = int(logged_step) if logged_step is not None and math.isfinite(logged_step) else row
    keys = scan.keys
    for key, number_value in values:
        column = keys.get(key)
        if column is None:
            column = keys[key] = _Key()
        column.rows.append(row)
        column.values.append(number_value)
    scan.history_steps.append(step)
    scan.step_metric.append(step_metric)
    scan.times.append(wall_time)


def _stats(buf: bytes, scan: _RunScan) -> None:
    when = math.nan
    items: dict[str, float] = {}
    for number, wire, raw in _fields(buf):
        if number == 2 and wire == 2:
            when = _timestamp(raw)
        elif number == 3 and wire == 2:
            key, value = _item(raw)
            if _GPU_KEY.match(key):
                number_value = _number(value)
                if number_value is not None:
                    items[key] = number_value
    if items and math.isfinite(when):
        scan.stats.append((when, items))


def _config(buf: bytes, config: dict[str, Any]) -> None:
    for number, wire, raw in _fields(buf):
        if number == 1 and wire == 2:  # update; `remove` (2) is rare and only drops keys
            key, value = _item(raw)
            if key and not key.startswith("_wandb"):
                config[key] = _json(value)


def _run(buf: bytes, scan: _RunScan) -> None:
    for number, wire, raw in _fields(buf):
        if wire != 2:
            continue
        if number == _RUN_ID:
            scan.run_id = _text(raw)
        elif number == _RUN_PROJECT:
            scan.project = _text(raw)
        elif number == _RUN_CONFIG:
            _config(raw, scan.config)
        elif number == _RUN_START_TIME:
            scan.start_time = _timestamp(raw)


def _environment(buf: bytes, scan: _RunScan) -> None:
    gpus = [raw for number, wire, raw in _fields(buf) if number == _ENV_GPU_NVIDIA and wire == 2]
    if not gpus:
        return
    names, memory = [], []
    for gpu in gpus:
        name, total = "", 0
        for number, wire, raw in _fields(gpu):
            if number == 1 and wire == 2:
                name = _text(raw)
            elif number == 2 and wire == 0:
                total = raw
        names.append(name)
        memory.append(total)
    scan.gpu_names, scan.gpu_memory_bytes = names, memory


def _assign_steps(scan: _RunScan) -> None:
    """Each history row's x-axis: the trainer's step metric where the run logs one, else W&B's step."""
    metric = np.frombuffer(scan.step_metric, dtype=np.float64)
    history = np.frombuffer(scan.history_steps, dtype=np.int64)
    logged = np.isfinite(metric)
    if not logged.any():
        scan.steps = history.copy()
        return
    # step_sync: a row without the step metric belongs to the last step logged (or the first, before any).
    index = np.where(logged, np.arange(len(metric)), -1)
    np.maximum.accumulate(index, out=index)
    first = int(np.argmax(logged))
    index[index < 0] = first
    scan.steps = metric[index].astype(np.int64)


def _start(scan: _RunScan) -> float:
    """When the run started: its run record, else its first row, else the folder name's timestamp."""
    if math.isfinite(scan.start_time) and scan.start_time > 0:
        return scan.start_time
    times = np.frombuffer(scan.times, dtype=np.float64)
    finite = times[np.isfinite(times)]
    if len(finite):
        return float(finite.min())
    match = RUN_DIR.match(scan.path.parent.name)
    if match:
        return float(pd.Timestamp(pd.to_datetime(match["stamp"], format="%Y%m%d_%H%M%S")).timestamp())
    try:
        return scan.path.stat().st_mtime
    except OSError:
        return 0.0


def _chain(scans: list[_RunScan]) -> tuple[list[_RunScan], list[_RunScan]]:
    """The newest run with history and the earlier runs it continues; and the runs left out.

    `scans` are in start order. An earlier run belongs to the chain when it is the same W&B run (a W&B
    resume keeps the id), or when it is of the same project and the chain starts at a later step than it
    does (a trainer resumed from a checkpoint into a new W&B run). A run that starts again from the first
    step is a new experiment, and so is everything before it.
    """
    with_rows = [s for s in scans if s.rows]
    if not with_rows:
        return [], scans
    newest = with_rows[-1]
    chain = [newest]
    for earlier in reversed(with_rows[:-1]):
        head = chain[0]
        assert head.steps is not None and earlier.steps is not None
        if earlier.run_id and earlier.run_id == head.run_id:
            chain.insert(0, earlier)
            continue
        if earlier.project and head.project and earlier.project != head.project:
            break
        if int(head.steps.min()) > int(earlier.steps.min()):
            chain.insert(0, earlier)
            continue
        break
    left_out = [s for s in scans if s not in chain and s.rows]
    return chain, left_out


# --- the reader -------------------------------------------------------------------------------------------


class WandbReader:
    """Reads one W&B transaction log (`run-<id>.wandb`)."""

    name = FORMAT

    def sniff(self, path: Path, head: bytes) -> bool:
        """`.wandb` files, or any file starting with W&B's header."""
        return path.suffix == ".wandb" or head.startswith(MAGIC[:6])

    def read(self, path: Path) -> SourceData:
        """Read one `.wandb` file (see `read_wandb_runs` for several).

        Args:
            path: the `.wandb` file.

        Returns:
            Its history as a raw frame, its system GPU stats, and facts from its config.

        Raises:
            UnreadableSourceError: the file is not a W&B log, or holds no history and no GPU stats.
        """
        return read_wandb_runs([path], path.parent)


READER = WandbReader()


def read_wandb_runs(paths: list[Path], rel_root: Path, live: bool = False) -> SourceData:
    """Read the `.wandb` files of one folder into one source (see the module docstring for which are read).

    Args:
        paths: `.wandb` files found under the run folder (usually one per `wandb/*run-*` directory).
        rel_root: folder the file names in warnings, notes and facts are given relative to.
        live: the run is being watched (`assessor watch`): a half-written last record is expected, so it
            makes no warning.

    Returns:
        One `SourceData`; its `path` is the file, or the runs' common folder when several are combined.

    Raises:
        UnreadableSourceError: no file is a readable W&B log with history or GPU stats.
    """
    if not paths:
        raise UnreadableSourceError(f"{rel_root}: no .wandb files given; point assessor at a run folder")
    warnings: list[str] = []
    notes: list[str] = []
    scans: list[_RunScan] = []
    for path in paths:
        try:
            scan = _scan(path, display_name(path, rel_root))
        except UnreadableSourceError as error:
            warnings.append(str(error))
            continue
        if scan.warning and not (live and STILL_WRITING in scan.warning):
            warnings.append(scan.warning)
        if scan.skipped:
            warnings.append(f"{scan.label}: {scan.skipped} records did not parse and were skipped")
        if scan.non_numeric:
            notes.append(f"{scan.label}: text values ignored for {sorted(scan.non_numeric)[:8]}")
        _assign_steps(scan)
        scans.append(scan)
    if not scans:
        more = f" (and {len(warnings) - 1} more unreadable .wandb files)" if len(warnings) > 1 else ""
        raise UnreadableSourceError(warnings[0] + more)
    scans.sort(key=lambda s: (_start(s), s.label))
    chain, left_out = _chain(scans)
    if left_out:
        names = ", ".join(s.label for s in left_out)
        notes.append(
            f"{names}: other W&B runs in this folder that the newest run does not continue (they start again "
            "from the first step, or belong to another project); not read. Point assessor at one of their "
            "folders to assess it"
        )
    if len(chain) > 1:
        notes.append(
            f"combined {len(chain)} W&B runs in start order ({', '.join(s.label for s in chain)}); where a resumed "
            "run logged a step again, its newest record is kept"
        )
    stats_runs = chain or [s for s in scans if s.stats][-1:]
    gpu, devices = _gpu_frame(stats_runs)
    if not chain and gpu is None:
        labels = ", ".join(s.label for s in scans)
        damaged = [w for w in warnings if STILL_WRITING not in w]
        problem = damaged[0] if damaged else f"{labels}: no history rows and no GPU stats"
        raise UnreadableSourceError(
            f"{problem}; nothing was logged with wandb.log yet. Wait for the first logging step, or point "
            "assessor at the trainer's output directory"
        )
    frame = _frame(chain) if chain else empty_raw_frame()
    source = chain[-1] if chain else stats_runs[-1]
    # Several runs: name their common folder (usually `wandb/`), as the TensorBoard reader does for event files.
    path = source.path if len(chain) < 2 else Path(os.path.commonpath([s.path.parent.parent for s in chain]))
    step_note = _step_note(chain)
    if step_note:
        notes.append(step_note)
    return SourceData(
        path=path, format=FORMAT, frame=frame, facts=_facts(chain or stats_runs, rel_root),
        warnings=warnings, notes=notes, gpu=gpu, gpu_devices=devices,
    )


def _frame(chain: list[_RunScan]) -> pd.DataFrame:
    builder = RecordBuilder()
    keys = list(dict.fromkeys(k for scan in chain for k in scan.keys))
    for key in keys:
        steps, values, times = [], [], []
        for scan in chain:
            column = scan.keys.get(key)
            if column is None:
                continue
            assert scan.steps is not None
            rows = np.frombuffer(column.rows, dtype=np.int64)
            steps.append(scan.steps[rows])
            values.append(np.frombuffer(column.values, dtype=np.float64))
            times.append(np.frombuffer(scan.times, dtype=np.float64)[rows])
        builder.add_column(key, np.concatenate(steps), np.concatenate(values), split=None,
                           wall_time=np.concatenate(times))
    return builder.build()


def _step_note(chain: list[_RunScan]) -> str | None:
    for scan in chain:
        metric = np.frombuffer(scan.step_metric, dtype=np.float64)
        if np.isfinite(metric).any():
            return "steps are the trainer's `train/global_step` (W&B's step metric), not W&B's `_step`"
    return None


def _gpu_frame(scans: list[_RunScan]) -> tuple[pd.DataFrame | None, dict[int, str]]:
    """System stats as nvidia-smi style telemetry (`time`, `device`, `field`, `value`)."""
    times: list[float] = []
    devices: list[int] = []
    fields: list[str] = []
    values: list[float] = []
    names: dict[int, str] = {}
    for scan in scans:
        for index, name in enumerate(scan.gpu_names):
            if name:
                names[index] = name
        for when, items in scan.stats:
            used_bytes: dict[int, float] = {}
            used_pct: dict[int, float] = {}
            for key, value in items.items():
                match = _GPU_KEY.match(key)
                if match is None:
                    continue
                device, name = int(match["device"]), match["name"]
                if name == "memoryAllocatedBytes":
                    used_bytes[device] = value
                    name_out = "memory_used_mib"
                    value = value / _MIB
                else:
                    if name == "memoryAllocated":
                        used_pct[device] = value
                    name_out = GPU_FIELDS.get(name, name)
                times.append(when)
                devices.append(device)
                fields.append(name_out)
                values.append(value)
            for device in used_bytes.keys() | used_pct.keys():
                total = _total_mib(scan, device, used_bytes.get(device), used_pct.get(device))
                if total is not None:
                    times.append(when)
                    devices.append(device)
                    fields.append("memory_total_mib")
                    values.append(total)
    if not times:
        return None, names
    gpu = pd.DataFrame({"time": times, "device": devices, "field": fields, "value": values})
    gpu = gpu[np.isfinite(gpu["value"].to_numpy(dtype=np.float64))]
    gpu = gpu.drop_duplicates(subset=["time", "device", "field"], keep="last").reset_index(drop=True)
    return (gpu if len(gpu) else None), names


def _total_mib(scan: _RunScan, device: int, used_bytes: float | None, used_pct: float | None) -> float | None:
    """A card's memory: from the environment record, else from used bytes over the used percentage."""
    if device < len(scan.gpu_memory_bytes) and scan.gpu_memory_bytes[device] > 0:
        return scan.gpu_memory_bytes[device] / _MIB
    if used_bytes is not None and used_pct is not None and used_pct > 0:
        return used_bytes / (used_pct / 100.0) / _MIB
    return None


def _facts(runs: list[_RunScan], rel_root: Path) -> dict[str, Fact]:
    """Facts from the runs' configs (newest wins), else their `files/config.yaml`; framework from keys."""
    facts: dict[str, Fact] = {}
    for scan in runs:
        if scan.config:
            facts.update(facts_from_flat_config(flatten(scan.config), f"{scan.label} (W&B config)"))
        else:
            config_yaml = scan.path.parent / "files" / "config.yaml"
            if config_yaml.is_file():
                facts.update(read_config_file(config_yaml, display_name(config_yaml, rel_root)))
    keys = {k for scan in runs for k in scan.keys}
    config_keys = {k for scan in runs for k in flatten(scan.config)}
    label = runs[-1].label if runs else ""
    if any(k in keys for k in _VERL_KEYS) or any(k.startswith("timing_s/") for k in keys) \
            or any(k.startswith("actor_rollout_ref.") for k in config_keys):
        facts.setdefault("framework", ("verl", f"{label}: metric keys"))
    elif "train/epoch" in keys and any(k in keys for k in _TRL_REWARD_OR_LOSS):
        facts.setdefault("framework", ("trl", f"{label}: metric keys"))
    return facts

