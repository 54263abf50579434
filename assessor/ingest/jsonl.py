"""JSON-lines metric logs: verl's file logger, OpenRLHF-style dumps, generic `{"step": N, ...}` lines.

verl writes `{"step": N, "data": {...}}` (NaN as null, and it overwrites the file on restart); others
write flat objects with a step key, or event logs whose rows of several types (`{"type": "rollout", ...}`,
`{"type": "eval", ...}`) share one step key such as `grpo_step` (see `assessor.ingest.tables`). NaN may appear
as null, "NaN" or a bare NaN token.
"""

from __future__ import annotations

import io
import json
import math
import re
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import KeyedSource, KeySeries, SourceData, empty_raw_frame, parse_number
from assessor.ingest.tables import KIND_COLUMNS, NAME_COLUMNS, STEP_NAMES, VALUE_COLUMN, RowTable, step_rank
from assessor.run import Sample

# Rollout dumps (verl `rollout_data_dir/<step>.jsonl`, NeMo-RL `train_data_step<N>.jsonl`, generic): the text
# of a completion under one of these keys means the file holds samples, not metrics.
_COMPLETION_KEYS = ("output", "completion", "response", "generated_text", "content")
_PROMPT_KEYS = ("input", "prompt", "question")
_REWARD_KEYS = ("score", "reward", "rewards")
SAMPLES_KEPT = 16
_DIGITS = re.compile(r"(\d+)(?!.*\d)")
_NESTED_KEYS = ("data", "metrics", "logs")
_READ_BYTES = 1 << 22  # 4 MiB: polars keeps the memory it parsed a chunk in; bigger chunks are no faster
_NEWLINE = 10
# Tokens polars refuses (`NaN`, `Infinity`, a byte-order mark): lines holding one are parsed by `json`.
_REFUSED = (b"NaN", b"Infinity", b"\xef\xbb\xbf")
# A null value, which polars reads as a missing key: lines holding one are read by `json` (see `_feed_chunk`).
_NULL = re.compile(rb"null")
_MOSTLY_DIRTY = 16  # one line in 16 needing `json`: parse the whole chunk with it
_SMALLEST_BLOCK = 64
_FEW_BYTES = 1 << 20
# From this size a plain file is first tried in one polars call over the whole file (`_read_whole`): polars then
# parses on every core, and the long table is laid out once, not chunk by chunk.
_WHOLE_FILE_BYTES = 1 << 24
_SCAN_BYTES = 1 << 20  # bytes compared at a time when counting one byte value (fits in a core's cache)

if TYPE_CHECKING:
    import polars as pl


class JsonlReader:
    """Reads one JSON object per line."""

    name = "jsonl"

    def sniff(self, path: Path, head: bytes) -> bool:
        """`.jsonl` files, or `.json`/`.log`/`.txt` files whose first two lines are JSON objects."""
        if path.suffix == ".jsonl":
            return True
        lines = head.split(b"\n", 2)[:2]
        return path.suffix in (".json", ".log", ".txt") and len(lines) == 2 and all(
            line.strip().startswith(b"{") for line in lines) and lines[0].strip().endswith(b"}")

    def read(self, path: Path) -> SourceData:
        """Read the file line by line; a half-written last line is skipped with a warning."""
        try:
            whole = _read_whole(path) if path.stat().st_size >= _WHOLE_FILE_BYTES else None
        except OSError:
            whole = None  # said by the open below
        if whole is not None:
            return whole
        try:
            handle = path.open(encoding="utf-8", errors="replace")
        except OSError as error:
            raise UnreadableSourceError(f"{path}: cannot be read ({error.strerror}); check its permissions") from error
        with handle:
            parse = JsonlParse(path)
            binary = handle.buffer
            pending = b""
            while True:
                chunk = binary.read(_READ_BYTES)
                buffer = pending + chunk
                # Whole lines go to the parser; a last line without its newline is fed alone at the end.
                end = len(buffer) if not chunk else buffer.rfind(b"\n") + 1
                if parse.feed_bytes(buffer[:end]):
                    if parse.first_sample is None:
                        break
                    rest = io.TextIOWrapper(io.BytesIO(parse.unread + buffer[end:] + binary.read()),
                                            encoding="utf-8", errors="replace")
                    return _read_samples(path, rest, parse.first_sample)
                pending = buffer[end:]
                if not chunk:
                    break
        return parse.result()


class JsonlParse:
    """The state of reading one JSONL file, fed line by line.

    `result` may be called after any `feed` and more lines fed afterwards: `assessor.ingest.cache` keeps one
    per file and feeds it only the lines appended since the last check.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.table = RowTable(path.name)
        self.bad_lines: list[int] = []
        self.last_line = 0
        self.rows = 0
        self.first_sample: dict[str, Any] | None = None
        self.unread = b""  # after a rollout dump's first record: the bytes not parsed yet
        self.rows_only = False  # rows that name their kind or metric: parsed one by one (see `feed_bytes`)
        self._schema: pl.Schema | None = None  # the columns polars found in the last chunk (not kept in `state`)

    def feed(self, lines: Iterable[str]) -> bool:
        """Parse more lines; True when the file turned out to be a rollout dump (`first_sample` holds its start)."""
        return any(self._feed_line(line) for line in lines)  # stops at the first sample

    def feed_bytes(self, chunk: bytes) -> bool:
        """Parse whole lines of bytes (the last one may lack its newline), as `feed` would parse them as text.

        Runs of lines are parsed by polars into columns (nested objects become `a/b` columns there, not here).
        A line that needs the exact rules is parsed on its own by `json`: one with an absent value (JSON null
        and a missing key look alike in columns), one polars refuses (not JSON, not an object, `NaN` or
        `Infinity`, nested too deep, invalid UTF-8). Rows that name their kind or are in long form are read
        line by line.

        Returns:
            True when the file turned out to be a rollout dump: `first_sample` holds its first record and
            `unread` the bytes after that line.
        """
        if not chunk:
            return False
        lone_cr = b"\r" in chunk and chunk.count(b"\r") != chunk.count(b"\r\n")
        # A bare "\r" ends a line in text mode: read as text. So are a few lines appended to a file read before
        # (what a watch finds since its last check): `json` reads them in less time than importing polars takes.
        few = self.rows and len(chunk) < _FEW_BYTES and not _polars_loaded()
        if lone_cr or few or _polars() is None:
            return self._feed_text(chunk)
        ends = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == _NEWLINE)
        starts = np.concatenate(([0], ends + 1))
        if starts[-1] == len(chunk):
            starts = starts[:-1]
        count = len(starts)
        line = 0
        while self.rows == 0 and line < count:  # the first record says whether this is a rollout dump
            stop = int(starts[line + 1]) if line + 1 < count else len(chunk)
            if self._feed_line(chunk[int(starts[line]):stop].decode("utf-8", errors="replace")):
                self.unread = chunk[stop:]
                return True
            line += 1
        if self.rows_only:  # rows of kinds or in long form, seen in this chunk or an earlier one
            return self._feed_text(chunk[int(starts[line]):] if line < count else b"")
        if line < count:
            lines = _Lines(chunk, starts)
            if self._feed_chunk(lines, line, count):
                return False
            # JSON null and a missing key look alike in columns: lines holding a null go to `json`
            nulls = lines.with_tokens(line, count, (b"null",))
            if len(nulls) * _MOSTLY_DIRTY > count - line:
                return self._feed_text(lines.span(line, count))
            self._around(lines, line, count, nulls, lambda a, b: self._feed_block(lines, a, b, scanned=False))
        return False

    def _feed_chunk(self, lines: _Lines, first: int, stop: int) -> bool:
        """Lines `first` to `stop` in one polars call; False (nothing read) when they need the careful path.

        The few lines polars would read differently from `json` (a null, which columns cannot tell from a
        missing key; `NaN` or `Infinity`, which polars refuses; blank lines, which it skips; a byte-order mark)
        are replaced by `{}` for polars and parsed by `json` on their own, then written into the columns at
        their row. Anything this cannot mirror exactly (text or flags in such a line, rows that name their kind,
        a null step, types polars cannot unify) leaves the chunk to `_around`, which reads it in smaller blocks.
        """
        lengths = np.diff(np.append(lines.starts[first:stop], lines.end(stop)))
        short = np.flatnonzero(lengths <= 3) + first  # blank lines ("", "\r\n"): polars skips them
        special = np.union1d(lines.with_null_values(first, stop), short).astype(np.int64)
        read = self._chunk_with_json_lines(lines, first, stop, special)
        if read is None:  # refused; the usual reason is a NaN or Infinity token (searched for only now: it is rare)
            refused = lines.with_tokens(first, stop, _REFUSED)
            if not len(refused):
                return False
            read = self._chunk_with_json_lines(lines, first, stop, np.union1d(special, refused).astype(np.int64))
            if read is None:
                return False
        count = stop - first
        columns, unvalued, dropped, bad = read
        keep = np.ones(count, dtype=bool)
        keep[dropped] = False
        if dropped:  # rows of no record: the rows after them move up, as `_feed_line` never counts them
            new_row = np.cumsum(keep) - 1
            columns = [(name, values, new_row[offsets]) for name, values, offsets in columns]
        self.bad_lines.extend(self.last_line + row + 1 for row in bad)
        kept = int(keep.sum())
        self.table.add_block(kept, columns, unvalued)
        self.rows += kept
        self.last_line += count
        return True

    def _chunk_with_json_lines(
        self, lines: _Lines, first: int, stop: int, special: np.ndarray,
    ) -> tuple[list[tuple[str, np.ndarray | list[Any], np.ndarray]], set[str], list[int], list[int]] | None:
        """The columns of lines `first`..`stop` with the `special` lines read by `json`; None if it cannot be.

        Also returns the rows that hold no record (blank lines, non-objects, not JSON) and, of them, the bad ones.
        """
        count = stop - first
        if len(special) * _MOSTLY_DIRTY > count:
            return None
        records: dict[int, dict[str, Any]] = {}  # row in the chunk -> the flat record `json` reads there
        dropped: list[int] = []  # rows that are no record at all (blank, not JSON, not an object) ...
        bad: list[int] = []  # ... and of them, the lines `_feed_line` counts as not JSON
        pieces: list[bytes] = []
        at = first
        for index in special.tolist():
            pieces.append(lines.span(at, index))
            pieces.append(b"{}\n")
            at = index + 1
            row = index - first
            text = lines.span(index, index + 1).decode("utf-8", errors="replace").strip()
            if not text:
                dropped.append(row)
                continue
            try:
                record = json.loads(text)
                flat = _flat_record(record) if isinstance(record, dict) else None
            except (json.JSONDecodeError, RecursionError):
                dropped.append(row)
                bad.append(row)
                continue
            if flat is None:
                dropped.append(row)
                continue
            if _names_its_rows(flat) or not all(_patchable(key, value) for key, value in flat.items()):
                return None
            records[row] = flat
        pieces.append(lines.span(at, stop))
        placeholders = np.zeros(count, dtype=bool)
        placeholders[special - first] = True
        data = b"".join(pieces) if len(pieces) > 1 else pieces[0]
        built = _chunk_columns(data, count, placeholders, records, self._schema)
        if built is None:
            return None
        self._schema = built[2]
        return built[0], built[1], dropped, bad

    def _feed_text(self, chunk: bytes) -> bool:
        lines = io.StringIO(chunk.decode("utf-8", errors="replace"), newline=None)
        return self.feed(lines)

    def _feed_block(self, lines: _Lines, first: int, stop: int, scanned: bool) -> None:
        """Lines `first` to `stop` (exclusive): in columns where polars reads them as `json` would."""
        columns = _block_columns(lines.span(first, stop))
        if columns is None or columns[0] != stop - first:  # refused; or blank lines, which polars skips
            if not scanned:  # the usual reason is a NaN or Infinity token: those lines go to `json`
                dirty = lines.with_tokens(first, stop, _REFUSED)
                if len(dirty) and len(dirty) * _MOSTLY_DIRTY <= stop - first:
                    self._around(lines, first, stop, dirty, lambda a, b: self._feed_block(lines, a, b, True))
                    return
            if stop - first > _SMALLEST_BLOCK:  # something else in it polars refuses: halve, to keep the rest fast
                middle = (first + stop) // 2
                self._feed_block(lines, first, middle, scanned)
                self._feed_block(lines, middle, stop, scanned)
            else:
                self._feed_text(lines.span(first, stop))
            return
        length, flat = columns
        self.table.add_block(length, _column_values(flat, length))
        self.rows += length
        self.last_line += length

    def _around(self, lines: _Lines, first: int, stop: int, singles: np.ndarray,
                between: Callable[[int, int], None]) -> None:
        """`json` for each of the `singles` lines, `between` for the runs of lines between them, in file order."""
        line = first
        for index in [*singles.tolist(), stop]:
            if index > line:
                between(line, index)
            if index < stop:
                self._feed_line(lines.span(index, index + 1).decode("utf-8", errors="replace"))
            line = index + 1

    def _feed_line(self, line: str) -> bool:
        self.last_line += 1
        text = line.strip()
        if not text:
            return False
        try:
            record = json.loads(text)
            flat = _flat_record(record) if isinstance(record, dict) else None
        except (json.JSONDecodeError, RecursionError):  # not JSON, or nested too deep to be a metric record
            self.bad_lines.append(self.last_line)
            return False
        if flat is None:
            return False
        if self.rows == 0 and _is_sample(record):
            self.first_sample = record
            return True
        if not self.rows_only and _names_its_rows(flat):
            self.rows_only = True  # rows of kinds or long form: RowTable works those out row by row
        self.table.add(flat)
        self.rows += 1
        return False

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """What was read so far as arrays and plain JSON values, for the persistent cache (see `from_state`)."""
        arrays, table = self.table.state()
        meta = {"table": table, "bad_lines": self.bad_lines, "last_line": self.last_line, "rows": self.rows,
                "rows_only": self.rows_only}
        return arrays, meta

    @classmethod
    def from_state(cls, path: Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> JsonlParse:
        """The parse `state` was taken from, ready for the lines appended since."""
        parse = cls(path)
        parse.table = RowTable.from_state(arrays, meta["table"])
        parse.bad_lines = [int(n) for n in meta["bad_lines"]]
        parse.last_line = int(meta["last_line"])
        parse.rows = int(meta["rows"])
        parse.rows_only = bool(meta["rows_only"])
        return parse

    def result(self) -> SourceData:
        """The file as read so far; raises `UnreadableSourceError` when no metric record was found."""
        path = self.path
        warnings: list[str] = []
        bad_lines = list(self.bad_lines)
        if bad_lines and bad_lines[-1] == self.last_line:
            warnings.append(
                f"{path.name}: last line is incomplete (the run may still be writing); ignored it"
            )
            bad_lines.pop()
        if bad_lines:
            warnings.append(
                f"{path.name}: {len(bad_lines)} lines are not JSON and were skipped (first: line {bad_lines[0]})"
            )
        if self.rows == 0:
            raise UnreadableSourceError(
                f"{path}: no JSON metric records found; expected one object per line such as "
                '{"step": 1, "reward": 0.5}'
            )
        built = self.table.build()
        warnings.extend(built.warnings)
        if built.frame.empty:
            raise UnreadableSourceError(f"{path}: no numeric values in its JSON records; nothing to read as metrics")
        facts: dict[str, tuple[Any, str]] = {}
        raw_keys = {str(k) for k in built.frame["key"].cat.categories}
        if any(k.startswith(("critic/score/", "actor/pg_loss", "timing_s/")) for k in raw_keys):
            facts["framework"] = ("verl", f"{path.name}: metric keys")
        return SourceData(path=path, format="jsonl", frame=built.frame, facts=facts, warnings=warnings,
                          notes=built.notes, steps_inferred=built.steps_inferred)


def _read_whole(path: Path) -> SourceData | None:
    """A plain metric log in one polars call over the whole file, straight into the raw long frame; or None.

    What `JsonlParse` reads, when the file is the usual kind: one object per line, numbers only, one step column
    on every row with the steps counting up (verl's `{"step": N, "data": {...}}`, a flat `{"step": N, ...}`).
    Lines holding a null are also parsed by `json` (a null is a NaN in the table, a missing key no value; polars
    reads both as null) and put back by their step. Anything unusual returns None and the file is read by
    `JsonlParse` as before: what polars refuses (a `NaN` or `Infinity` token, a byte-order mark mid-file, a
    half-written last line, a line not JSON), a carriage return, text, flags, rows of kinds, a second step
    column, steps going back (a resume), a key polars dropped (every `"key":` is counted in the bytes).
    """
    pl, data = _polars_and_bytes(path)
    if pl is None:
        return None
    first_end = data.find(b"\n")
    if b"\r" in data or _plain_record(data[:first_end] if first_end >= 0 else data) is None:
        return None
    colons = _count_byte(data, ord(":"))
    frame = None
    nulls: dict[str, list[int]] | None = {}
    for infer in (100, None):  # the first rows' columns; all rows' when a key appears later
        try:
            frame = pl.read_ndjson(data, infer_schema_length=infer)
        except Exception:  # polars raises several error types for input it refuses
            return None
        try:
            flat_columns = _flat_frame(frame)
        except RecursionError:
            return None
        if flat_columns is None:
            return None
        columns = dict(flat_columns)
        steps = [name for name in columns if step_rank(name) is not None]
        if len(steps) != 1 or steps[0].strip().lower() not in STEP_NAMES:
            return None
        step_series = columns.pop(steps[0])
        if not step_series.dtype.is_numeric() or step_series.null_count():
            return None
        step_floats = step_series.cast(pl.Float64).to_numpy()
        if len(step_floats) > 1 and not bool(np.all(step_floats[1:] > step_floats[:-1])):
            return None  # a resume or repeated steps: `JsonlParse` keeps each row's place
        if not len(step_floats) or not bool(step_floats[0] >= 0 and np.all(step_floats == np.floor(step_floats))):
            return None
        nulls = _null_rows(data, steps[0], step_floats) if any(s.null_count() for s in columns.values()) else {}
        if nulls is None:
            return None
        if _keys_read(frame) + sum(len(rows) for rows in nulls.values()) == colons:
            break
        frame = None
    if frame is None or nulls is None or nulls.keys() - columns.keys():
        return None
    del data, frame
    step_of_row = step_floats.astype(np.int64)
    by_key: list[KeySeries] = []
    for name, series in columns.items():
        if not series.dtype.is_numeric() or series.null_count() == len(series):
            return None  # text, flags, lists; or a key with no value but null (`JsonlParse` says so)
        values = series.cast(pl.Float64).to_numpy()
        if not series.null_count():
            by_key.append(KeySeries(name, step_of_row, values))
            continue
        present = np.array(series.is_not_null().to_numpy(), dtype=bool)
        present[nulls.get(name, [])] = True  # a JSON null: a NaN value (polars read it as no value)
        rows = np.flatnonzero(present)
        by_key.append(KeySeries(name, step_of_row[rows], values[rows]))
    if not columns:
        return None
    facts: dict[str, tuple[Any, str]] = {}
    if any(k.startswith(("critic/score/", "actor/pg_loss", "timing_s/")) for k in columns):
        facts["framework"] = ("verl", f"{path.name}: metric keys")
    # Kept as one series per key: `normalize_source` reads them so, without a long frame laid out in between.
    return KeyedSource(path=path, format="jsonl", by_key=by_key, facts=facts)


def _polars_and_bytes(path: Path) -> tuple[Any, bytes]:
    """The polars module (None when it cannot be imported) and the file's bytes, read while polars is imported.

    The first long log a process reads pays for both: importing polars (0.1 s) holds Python's lock, the read (0.15 s
    for 300 MiB, mostly the kernel copying the page cache into fresh pages) waits in the kernel without it, so on a
    second core the two overlap. An error reading the file is raised here, as a plain read raises it.
    """
    if _polars_loaded():
        return _polars(), path.read_bytes()
    read: dict[str, Any] = {}

    def read_file() -> None:
        try:
            read["data"] = path.read_bytes()
        except BaseException as error:  # handed to the caller below
            read["error"] = error

    reader = threading.Thread(target=read_file, name="assessor-read", daemon=True)
    reader.start()
    try:
        pl = _polars()
    finally:
        reader.join()
    if "error" in read:
        raise read["error"]
    return pl, read["data"]


def _null_rows(data: bytes, step_key: str, steps: np.ndarray) -> dict[str, list[int]] | None:
    """The rows (found by their step; `steps` count up) of each key holding a JSON null; None if one cannot be read."""
    nulls: dict[str, list[int]] = {}
    found = _NULL.search(data)  # re's literal search: 0.12 s on 302 MiB of JSON lines, where `bytes.find` took 0.20 s
    while found is not None:
        at = found.start()
        start = data.rfind(b"\n", 0, at) + 1
        stop = data.find(b"\n", at)
        stop = len(data) if stop < 0 else stop
        flat = _plain_record(data[start:stop])
        step = flat.get(step_key) if flat is not None else None
        if flat is None or not isinstance(step, int | float) or isinstance(step, bool):
            return None
        row = int(np.searchsorted(steps, step))
        if row >= len(steps) or steps[row] != step:
            return None
        for key, value in flat.items():
            if value is None:
                nulls.setdefault(key, []).append(row)
        found = _NULL.search(data, stop)
    return nulls


def _count_byte(data: bytes, byte: int) -> int:
    """How often `byte` occurs in `data`, compared a megabyte at a time by numpy (a third of `bytes.count`'s time)."""
    view = np.frombuffer(data, dtype=np.uint8)
    equal = np.empty(min(len(view), _SCAN_BYTES), dtype=bool)  # reused: no fresh pages to fault in per chunk
    total = 0
    for start in range(0, len(view), _SCAN_BYTES):
        chunk = view[start:start + _SCAN_BYTES]
        np.equal(chunk, byte, out=equal[:len(chunk)])
        total += int(np.count_nonzero(equal[:len(chunk)]))
    return total


def _plain_record(line: bytes) -> dict[str, Any] | None:
    """A line's flat record when it holds numbers and nulls only (what `_read_whole` can read); else None."""
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, RecursionError, UnicodeDecodeError):
        return None
    if not isinstance(record, dict):
        return None
    flat = _flat_record(record)
    if _names_its_rows(flat) or not all(_patchable(key, value) for key, value in flat.items()):
        return None
    return flat


def _is_sample(record: dict[str, Any]) -> bool:
    text = next((record[k] for k in _COMPLETION_KEYS if k in record), None)
    return isinstance(text, str | list) and bool(text)


def _read_samples(path: Path, handle: Any, first: dict[str, Any]) -> SourceData:
    """The last few completions of a rollout dump (the rest of the file is read but not kept)."""
    default_step = _step_from_name(path.name)
    kept: deque[Sample] = deque(maxlen=SAMPLES_KEPT)
    kept.append(_sample(first, default_step, path.name))
    for line in handle:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and _is_sample(record):
            kept.append(_sample(record, default_step, path.name))
    return SourceData(path=path, format="samples", frame=empty_raw_frame(), samples=list(kept),
                      notes=[f"{path.name}: completion samples (kept the last {len(kept)})"])


def _step_from_name(name: str) -> int | None:
    match = _DIGITS.search(name)
    return int(match[1]) if match else None


def _sample(record: dict[str, Any], default_step: int | None, source: str) -> Sample:
    def text(keys: tuple[str, ...]) -> str | None:
        value = next((record[k] for k in keys if k in record), None)
        if isinstance(value, list):  # chat-format messages
            value = " ".join(str(m.get("content", m)) if isinstance(m, dict) else str(m) for m in value)
        return None if value is None else str(value)

    step = record.get("step")
    reward_raw = next((record[k] for k in _REWARD_KEYS if k in record), None)
    if isinstance(reward_raw, list):
        reward_raw = reward_raw[0] if reward_raw else None
    reward = parse_number(reward_raw) if reward_raw is not None else None
    return Sample(
        step=step if isinstance(step, int) else default_step, prompt=text(_PROMPT_KEYS),
        completion=text(_COMPLETION_KEYS) or "", reward=reward if reward == reward else None, source=source,
    )


def _flat_record(record: dict[str, Any]) -> dict[str, Any]:
    """One flat row: verl's `{"step": N, "data": {...}}` keeps its step beside the unwrapped data."""
    for nested in _NESTED_KEYS:
        inner = record.get(nested)
        if isinstance(inner, dict):
            outer = {k: v for k, v in record.items() if k != nested and step_rank(k) is not None}
            return {**outer, **_flatten(inner)}
    return _flatten(record)


def _names_its_rows(flat: dict[str, Any]) -> bool:
    """Whether a row names its kind (`type: "eval"`) or is in long form (`metric`, `value`)."""
    lowered = {k.strip().lower(): v for k, v in flat.items()}
    if any(isinstance(lowered.get(k), str) for k in KIND_COLUMNS):
        return True
    return VALUE_COLUMN in lowered and any(isinstance(lowered.get(k), str) for k in NAME_COLUMNS)


def _polars_loaded() -> bool:
    """Whether polars is imported already (then even a few lines cost nothing more in it)."""
    return "polars" in sys.modules


def _polars() -> Any:
    """polars, imported on first use (None when it cannot be imported: the reader falls back to `json`)."""
    try:
        import polars
    except ImportError:
        return None
    return polars


def _patchable(key: str, value: Any) -> bool:
    """Whether a value `json` read can be written into the float columns as `_feed_line` would read it."""
    if value is None:
        return step_rank(key) is None  # a null step is no step for `RowTable.add`, but NaN for a block
    return isinstance(value, int | float) and not isinstance(value, bool)


def _keys_read(frame: pl.DataFrame) -> int:
    """How many `"key": value` pairs the frame holds (no value is null: lines with a null are read by `json`)."""
    import polars as pl

    def present(series: pl.Series) -> int:
        count = len(series) - series.null_count()
        if isinstance(series.dtype, pl.Struct):
            fields = series.struct.unnest()
            count += sum(present(fields[name]) for name in fields.columns)
        return count

    return sum(present(frame[name]) for name in frame.columns)


def _chunk_columns(
    data: bytes, count: int, placeholders: np.ndarray, records: Mapping[int, Mapping[str, Any]],
    schema: pl.Schema | None = None,
) -> tuple[list[tuple[str, np.ndarray | list[Any], np.ndarray]], set[str], pl.Schema] | None:
    """`count` lines read by polars (`placeholders` rows are `{}`), with the `records` `json` read written in.

    `schema`, the columns of the chunk before, saves polars a pass inferring them; it is used only when the
    frame read with it holds as many keys as the text has (`"key":` counted in the bytes), so a key new in this
    chunk is never dropped. Returns the columns as `RowTable.add_block` takes them, the names of those with no
    value but null, and the frame's schema; or None when polars refuses the lines or the records cannot be
    written into its columns as they are.
    """
    pl = _polars()
    frame = None
    if schema is not None:  # the last chunk's columns: read in one pass, checked below to hold every key
        try:
            frame = pl.read_ndjson(io.BytesIO(data), schema=schema)
        except Exception:  # a value of another type than before: infer the columns again
            frame = None
        # Every `"key":` has a colon; text may hold more (a time of day), so the exact count settles a difference.
        keys = _keys_read(frame) if frame is not None else -1
        if keys != data.count(b":") and keys != data.count(b'":'):
            frame = None  # a key the schema does not have (polars drops it without a word), or a key in text
    if frame is None:
        try:
            frame = pl.read_ndjson(io.BytesIO(data), infer_schema_length=None)
        except Exception:  # polars raises several error types for input it refuses; the caller reads it in blocks
            return None
    if frame.height != count:
        return None
    try:
        flat = _flat_frame(frame, placeholders)
    except RecursionError:
        return None
    if flat is None:
        return None
    patches: dict[str, list[tuple[int, float | None]]] = {}
    for row, record in records.items():
        for key, value in record.items():
            patches.setdefault(key, []).append((row, value))
    out: list[tuple[str, np.ndarray | list[Any], np.ndarray]] = []
    unvalued: set[str] = set()
    named = set()
    for name, series in flat:
        named.add(name)
        patch = patches.get(name, [])
        dtype = series.dtype
        if dtype == pl.String and name.strip().lower() in (*KIND_COLUMNS, *NAME_COLUMNS):
            return None  # rows that name their kind or metric are read row by row
        if not (dtype.is_numeric() or dtype == pl.Null):
            if patch:
                return None
            if dtype in (pl.String, pl.Boolean):  # lists and other types are not curves (as `_flatten` says)
                has = series.is_not_null()
                out.append((name, series.filter(has).to_list(), np.flatnonzero(has.to_numpy())))
            continue
        nulls = series.null_count()
        if not patch and not nulls:
            out.append((name, series.cast(pl.Float64).to_numpy(), np.arange(count, dtype=np.int64)))
            continue
        values = np.array(series.cast(pl.Float64).to_numpy(), dtype=np.float64)  # a writable copy, NaN for null
        present = np.array(series.is_not_null().to_numpy(), dtype=bool)
        valued = nulls < count
        for row, value in patch:
            values[row] = math.nan if value is None else float(value)
            present[row] = True
            valued = valued or value is not None
        offsets = np.flatnonzero(present)
        if not valued:
            unvalued.add(name)
        out.append((name, values[offsets], offsets))
    for name in patches.keys() - named:  # keys only the `json` lines hold
        rows = np.array([row for row, _ in patches[name]], dtype=np.int64)
        numbers = np.array([math.nan if v is None else float(v) for _, v in patches[name]], dtype=np.float64)
        order = np.argsort(rows, kind="stable")
        if all(v is None for _, v in patches[name]):
            unvalued.add(name)
        out.append((name, numbers[order], rows[order]))
    return out, unvalued, frame.schema


class _Lines:
    """A chunk of whole lines and where each starts."""

    def __init__(self, chunk: bytes, starts: np.ndarray) -> None:
        self.chunk = chunk
        self.starts = starts

    def span(self, first: int, stop: int) -> bytes:
        """The bytes of lines `first` to `stop` (exclusive)."""
        if first >= stop:
            return b""
        return self.chunk[int(self.starts[first]):self.end(stop)]

    def end(self, stop: int) -> int:
        """Where line `stop` starts (the end of the chunk for the last)."""
        return int(self.starts[stop]) if stop < len(self.starts) else len(self.chunk)

    def with_null_values(self, first: int, stop: int) -> np.ndarray:
        """The lines among `first`..`stop` holding a null value (`: null`; or perhaps one: never too few)."""
        found = []
        for match in _NULL.finditer(self.chunk, int(self.starts[first]), self.end(stop)):  # rare: a cheap search
            before = self.chunk[max(0, match.start() - 16):match.start()].rstrip()
            if not before or before.endswith(b":"):  # not a key's name (`"only_null": 1`) nor text
                found.append(match.start())
        lines = np.searchsorted(self.starts, np.asarray(found, dtype=np.int64), side="right") - 1
        return np.unique(lines)

    def with_tokens(self, first: int, stop: int, tokens: tuple[bytes, ...]) -> np.ndarray:
        """The lines among `first`..`stop` that hold one of `tokens` (sorted)."""
        begin = int(self.starts[first])
        end = int(self.starts[stop]) if stop < len(self.starts) else len(self.chunk)
        positions: list[int] = []
        for token in tokens:  # `bytes.find` runs at memory speed; a regex would not
            at = self.chunk.find(token, begin, end)
            while at >= 0:
                positions.append(at)
                at = self.chunk.find(token, at + 1, end)
        lines = np.searchsorted(self.starts, np.asarray(positions, dtype=np.int64), side="right") - 1
        return np.unique(lines)


def _block_columns(data: bytes) -> tuple[int, list[tuple[str, pl.Series]]] | None:
    """Lines of JSON objects (none holding a null) as flat columns; or None.

    None when polars refuses the block (a line that is not an object, mixed types it cannot unify, nesting
    deeper than its limit) or when a row names its kind or metric: the caller then reads the lines one by one.
    """
    pl = _polars()
    try:
        frame = pl.read_ndjson(io.BytesIO(data), infer_schema_length=None)
    except Exception:  # polars raises several error types for input it refuses; the caller reads it line by line
        return None
    try:
        flat = _flat_frame(frame)
    except RecursionError:  # objects nested deeper than Python recurses: read line by line, counted as bad
        return None
    if flat is None:
        return None
    kept = []
    for name, series in flat:
        if series.dtype == pl.String and name.strip().lower() in (*KIND_COLUMNS, *NAME_COLUMNS):
            return None
        if series.dtype.is_numeric() or series.dtype in (pl.String, pl.Boolean, pl.Null):
            kept.append((name, series))
        # lists and other types are not curves (as `_flatten` leaves lists out)
    return frame.height, kept


def _column_values(
    flat: list[tuple[str, pl.Series]], length: int,
) -> list[tuple[str, np.ndarray | list[Any], np.ndarray]]:
    """The flat columns as `RowTable.add_block` takes them: values where a row has the key (null: it has not)."""
    import polars as pl

    out: list[tuple[str, np.ndarray | list[Any], np.ndarray]] = []
    for name, series in flat:
        present = series.is_not_null()
        offsets = np.flatnonzero(present.to_numpy()) if series.null_count() else np.arange(length, dtype=np.int64)
        if series.dtype == pl.Null or not len(offsets):
            out.append((name, np.empty(0), np.empty(0, dtype=np.int64)))
        elif series.dtype.is_numeric():
            out.append((name, series.cast(pl.Float64).to_numpy()[offsets], offsets))
        else:
            out.append((name, series.filter(present).to_list(), offsets))
    return out


def _flat_frame(frame: pl.DataFrame, placeholders: np.ndarray | None = None) -> list[tuple[str, pl.Series]] | None:
    """`_flat_record` on columns: verl's `data` unwrapped beside the step keys, other objects as `a/b` names.

    `placeholders` marks rows that stand for lines read elsewhere (their null `data` says nothing).
    """
    import polars as pl

    for nested in _NESTED_KEYS:
        if nested in frame.columns and isinstance(frame[nested].dtype, pl.Struct):
            missing = frame[nested].null_count()
            if missing and (placeholders is None or bool((frame[nested].is_null().to_numpy() & ~placeholders).any())):
                return None  # some rows wrap their values and some do not: row by row
            outer = [(c, frame[c]) for c in frame.columns if c != nested and step_rank(c) is not None]
            inner = _flat_series(frame[nested], "")
            names = {name for name, _ in inner}
            return [(c, s) for c, s in outer if c not in names] + inner
    return [item for column in frame.columns for item in _flat_series(frame[column], f"{column}")]


def _flat_series(series: pl.Series, name: str) -> list[tuple[str, pl.Series]]:
    import polars as pl

    if not isinstance(series.dtype, pl.Struct):
        return [(name, series)]
    prefix = f"{name}/" if name else ""
    fields = series.struct.unnest()
    return [item for field in fields.columns for item in _flat_series(fields[field], f"{prefix}{field}")]


def _flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}/"))
        elif not isinstance(value, list):
            flat[f"{prefix}{key}"] = value
    return flat


READER = JsonlReader()
