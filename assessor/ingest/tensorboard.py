"""TensorBoard event files (`events.out.tfevents.*`).

The TFRecord framing is read here with `struct`, and each record is decoded by protobuf's C extension with the
part of TensorBoard's `Event` schema we read (`assessor.ingest.tfevent_proto`; tensorboard itself is not needed).
EventAccumulator is not used: by default it keeps 10,000 points per tag, purges events after a restart, and checks
every CRC in pure Python, which makes it about 9x slower than this reader on a 2,000,000-event file
(`benchmarks/bench_tensorboard.py`).

Scalars come in two encodings, both read here: the legacy `simple_value`, and a rank-0 float/double tensor
whose tag carries the `scalars` plugin (metadata that may appear only on a tag's first value).
"""

from __future__ import annotations

import re
import struct
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError  # type: ignore[import-untyped,unused-ignore]

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData, display_name
from assessor.ingest.facts import TEXT_CONFIG_TAGS, facts_from_text_summaries
from assessor.ingest.tfevent_proto import Event

FORMAT = "tensorboard"

# Record framing: uint64 length, uint32 masked CRC32C of the length, data, uint32 masked CRC32C of data.
_LENGTH = struct.Struct("<Q")
_HEADER_SIZE = 12
_FOOTER_SIZE = 4

# TensorProto dtypes a scalar can have (tensorflow/core/framework/types.proto).
_DT_FLOAT = 1
_DT_DOUBLE = 2
_SCALARS_PLUGIN = "scalars"

_TIMESTAMP = re.compile(r"tfevents\.(\d+)")

_VERL_TAGS = ("critic/score/mean", "actor/pg_loss")
_TRL_REWARD_OR_LOSS = ("train/reward", "train/loss")


@dataclass
class _Series:
    """One tag's points from one file, in file order (arrays keep 8 bytes a point, not a Python object)."""

    steps: array[int] = field(default_factory=lambda: array("q"))
    values: array[float] = field(default_factory=lambda: array("d"))
    times: array[float] = field(default_factory=lambda: array("d"))


@dataclass
class _Scan:
    """What one event file held."""

    series: dict[str, _Series]
    events: int
    size: int
    warning: str | None = None
    skipped_tensors: int = 0
    error: str | None = None  # the file could not be read at all
    pos: int = 0  # bytes read as complete records (where a tail read resumes)
    partial: bool = False  # the bytes after `pos` are an incomplete record (still being written)
    texts: dict[str, bytes] = field(default_factory=dict)  # config text summaries by tag (HF's TrainingArguments)


class TensorBoardReader:
    """Reads the scalar summaries of one TensorBoard event file."""

    name = FORMAT

    def sniff(self, path: Path, head: bytes) -> bool:
        """Event files are recognised by name; their first bytes are binary framing."""
        return "tfevents" in path.name

    def read(self, path: Path) -> SourceData:
        """Read one event file.

        Args:
            path: the event file.

        Returns:
            Its scalars, one raw key per tag.

        Raises:
            UnreadableSourceError: the file holds no scalar summaries.
        """
        return read_event_files([path], path.parent)


READER = TensorBoardReader()


def read_event_files(paths: list[Path], rel_root: Path) -> SourceData:
    """Read several event files of one run (e.g. one per restart) into one source.

    Points of each tag are ordered by wall time (stable), so when a resumed run logs steps again, the
    newest record of a step comes last and the shared normalizer keeps it.

    Args:
        paths: event files of one run directory.
        rel_root: folder the file names in warnings and facts are given relative to.

    Returns:
        One `SourceData`; its `path` is the file when there is one, else the files' common folder.

    Raises:
        UnreadableSourceError: none of the files holds a scalar summary.
    """
    if not paths:
        raise UnreadableSourceError(f"{rel_root}: no event files given; point assessor at a run folder")
    ordered = sorted(paths, key=_file_order)
    plugins: dict[str, str] = {}  # shared: a resumed writer may not repeat a tag's metadata
    scans = [_scan_file(path, display_name(path, rel_root), plugins) for path in ordered]
    return source_from_scans(ordered, scans, rel_root)


def source_from_scans(ordered: list[Path], scans: list[_Scan], rel_root: Path, keep: bool = False) -> SourceData:
    """One `SourceData` from the scans of a run's event files (in `_file_order`).

    `keep` leaves the scans' points in place (for `assessor.ingest.cache`, which appends to them later);
    otherwise each tag's points are released as soon as they are merged.
    """
    warnings: list[str] = []
    notes: list[str] = []
    skipped = 0
    for scan in scans:
        skipped += scan.skipped_tensors
        if scan.warning:
            warnings.append(scan.warning)
        if scan.error:
            warnings.append(scan.error)

    source_path = ordered[0] if len(ordered) == 1 else ordered[0].parent
    label = display_name(source_path, rel_root)
    tags = list(dict.fromkeys(tag for scan in scans for tag in scan.series))
    if not tags:
        errors = [scan.error for scan in scans if scan.error]
        if errors and len(errors) == len(scans):
            raise UnreadableSourceError(errors[0])
        if not any(scan.size for scan in scans):
            what = "is empty"
        elif not any(scan.events for scan in scans):
            what = "holds no complete event record"
        else:
            what = "holds no scalar summaries"
        raise UnreadableSourceError(
            f"{label}: {what}; point assessor at the folder with the training event files"
        )

    builder = RecordBuilder()
    for tag in tags:
        parts = [scan.series[tag] if keep else scan.series.pop(tag) for scan in scans if tag in scan.series]
        steps, values, times = _merge(parts)
        builder.add_column(tag, steps, values, split=None, wall_time=times)

    if len(ordered) > 1:
        names = ", ".join(display_name(p, rel_root) for p in ordered)
        notes.append(f"{label}: combined {len(ordered)} event files ({names}), each tag ordered by wall time")
    if skipped:
        notes.append(f"{label}: skipped {skipped} scalar-plugin tensors that are not one float or double")

    return SourceData(
        path=source_path,
        format=FORMAT,
        frame=builder.build(),
        facts=_facts(tags, label) | facts_from_text_summaries([scan.texts for scan in scans], label),
        warnings=warnings,
        notes=notes,
    )


def _scan_file(path: Path, name: str, plugins: dict[str, str]) -> _Scan:
    """Every scalar point of one file, per tag in file order; stops at the first bad or partial record."""
    try:
        buf = path.read_bytes()
    except OSError as err:
        error = f"{name}: cannot be read ({err.strerror}); check the file's permissions"
        return _Scan(series={}, events=0, size=0, error=error)
    scan = _Scan(series={}, events=0, size=len(buf))
    scan_records(buf, 0, name, plugins, scan)
    if scan.partial:
        scan.warning = _incomplete(name, scan.events)
    return scan


def new_scan() -> _Scan:
    """An empty scan, to be filled by `scan_records` (tail reading in `assessor.ingest.cache`)."""
    return _Scan(series={}, events=0, size=0)


def scan_records(buf: bytes, offset: int, name: str, plugins: dict[str, str], scan: _Scan) -> int:
    """Add the scalar points of the complete records in `buf` to `scan`; returns the bytes consumed.

    `offset` is where `buf` starts in the file (it only shows in `scan.pos`). The scan stops at an
    incomplete last record (`scan.partial`, no warning: the caller decides whether the run is still
    writing) or at a corrupt record (`scan.warning`).
    """
    series = scan.series
    # Bound append methods per tag: the hot loop then costs one dict lookup and three calls a point.
    appenders: dict[str, tuple[Callable[[int], None], Callable[[float], None], Callable[[float], None]]] = {
        tag: (points.steps.append, points.values.append, points.times.append) for tag, points in series.items()
    }
    unpack_length = _LENGTH.unpack_from
    parse = Event.FromString
    skipped = 0
    events = scan.events
    size = len(buf)
    pos = 0
    partial = False
    warning: str | None = None

    def column(tag: str) -> tuple[Callable[[int], None], Callable[[float], None], Callable[[float], None]]:
        points = series[tag] = _Series()
        out = appenders[tag] = (points.steps.append, points.values.append, points.times.append)
        return out

    while pos < size:
        # Only the length is checked, against the file size. Data CRCs are not verified: that is the slow
        # part of every pure-Python reader, and a corrupt record fails protobuf parsing anyway.
        start = pos + _HEADER_SIZE
        if start > size:
            partial = True
            break
        (length,) = unpack_length(buf, pos)
        end = start + length
        if end + _FOOTER_SIZE > size:
            if _header_ok(buf, pos):
                partial = True
            else:
                warning = f"{name}: record {events + 1} has a corrupt length field; read {events} events before it"
            break
        try:
            event = parse(buf[start:end])
        except DecodeError:
            warning = (
                f"{name}: record {events + 1} is not a valid event (corrupt file?); "
                f"read {events} events before it"
            )
            break
        pos = end + _FOOTER_SIZE
        events += 1
        summary_values = event.summary.value
        count = len(summary_values)
        if not count:
            continue  # file_version, session_log, graph, ...
        step = event.step
        wall_time = event.wall_time
        if count == 1:
            # Fast path (nearly every record): one value. A non-zero `simple_value` can only be read when the
            # oneof holds it, which saves a WhichOneof call for all but zero values.
            value = summary_values[0]
            number = value.simple_value
            if number or value.WhichOneof("value") == "simple_value":
                add_step, add_value, add_time = appenders.get(value.tag) or column(value.tag)
                add_step(step)
                add_value(number)
                add_time(wall_time)
                continue
        for value in summary_values:
            kind = value.WhichOneof("value")
            tag = value.tag
            if kind == "simple_value":
                number = value.simple_value
            elif kind == "tensor":
                if value.HasField("metadata") and value.metadata.plugin_data.plugin_name:
                    plugins[tag] = value.metadata.plugin_data.plugin_name
                if plugins.get(tag) != _SCALARS_PLUGIN:
                    if tag in TEXT_CONFIG_TAGS and plugins.get(tag) == "text":  # run facts, not a curve
                        scan.texts[tag] = b"".join(value.tensor.string_val[:1])
                    continue
                tensor_number = _tensor_scalar(value.tensor)
                if tensor_number is None:
                    skipped += 1
                    continue
                number = tensor_number
            else:
                continue  # images, histograms, audio
            add_step, add_value, add_time = appenders.get(tag) or column(tag)
            add_step(step)
            add_value(number)
            add_time(wall_time)
    scan.events = events
    scan.skipped_tensors += skipped
    scan.partial = partial
    scan.warning = warning
    scan.pos = offset + pos
    scan.size = max(scan.size, offset + size)
    return pos


def _tensor_scalar(tensor: Any) -> float | None:
    """The value of a rank-0 float or double tensor (a `TensorProto`), or None for any other tensor."""
    dtype = tensor.dtype
    if dtype == _DT_FLOAT:
        packed, code, width = tensor.float_val, "<f", 4
    elif dtype == _DT_DOUBLE:
        packed, code, width = tensor.double_val, "<d", 8
    else:
        return None
    if len(packed) == 1:
        return float(packed[0])
    content: bytes = tensor.tensor_content
    if not packed and len(content) == width:
        return float(struct.unpack(code, content)[0])
    return None


def _merge(parts: list[_Series]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One tag's points from all files, stably ordered by wall time."""
    steps = np.concatenate([np.frombuffer(p.steps, dtype=np.int64) for p in parts])
    values = np.concatenate([np.frombuffer(p.values, dtype=np.float64) for p in parts])
    times = np.concatenate([np.frombuffer(p.times, dtype=np.float64) for p in parts])
    if len(times) > 1 and not bool(np.all(times[1:] >= times[:-1])):
        order = np.argsort(times, kind="stable")
        steps, values, times = steps[order], values[order], times[order]
    return steps, values, times


def _facts(tags: Iterable[str], label: str) -> dict[str, tuple[str, str]]:
    """Framework, when the tag names make it evident."""
    names = set(tags)
    provenance = f"{label}: tag names"
    if any(t in names for t in _VERL_TAGS) or any(t.startswith("timing_s/") for t in names):
        return {"framework": ("verl", provenance)}
    if "train/epoch" in names and any(t in names for t in _TRL_REWARD_OR_LOSS):
        return {"framework": ("trl", provenance)}
    return {}


def _incomplete(name: str, events: int) -> str:
    return (
        f"{name}: last record is incomplete (the run may still be writing); read {events} events before it"
    )


def _header_ok(buf: bytes, pos: int) -> bool:
    """Whether a record's length field matches its CRC (told apart: a partial tail from a corrupt length)."""
    stored = int(struct.unpack_from("<I", buf, pos + 8)[0])
    return _masked_crc32c(buf[pos:pos + 8]) == stored


def _masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC-32C; only ever run on one 8-byte header, so a bitwise loop is fine."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _file_order(path: Path) -> tuple[int, str]:
    """Event files sort by the creation time in their name, then by name (ties of equal wall time only)."""
    match = _TIMESTAMP.search(path.name)
    return (int(match[1]) if match else 0, path.name)

