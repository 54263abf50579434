"""Read a live run again cheaply: reuse what has not changed, read only what was appended.

`load_run(path, cache=IngestCache())` keeps, per file, a fingerprint (size, mtime_ns, inode) and what was
read from it last time:

* an unchanged file is not opened; its `SourceData` (and its normalized form) is reused;
* an append-only format (JSONL metric logs, TensorBoard event files) is read from the end of its last
  complete record: a half-written last line or a partial TFRecord is left for the next check and makes
  no warning. Before resuming, the bytes just before that point are compared with what was read there,
  so a file rewritten in place (same inode, e.g. verl restarting and reopening its log with "w") is read
  again from the start, as is a file that shrank or whose inode changed (rotated);
* every other format is read whole when its fingerprint changes. `trainer_state.json` is rewritten whole
  by TRL at every save, so it is one of these;
* a file that cannot be read right now (truncated JSON while it is being rewritten, an empty file just
  opened with "w") keeps its previous `SourceData`, and is tried again at the next check.

What comes out is what a fresh `load_run` returns on the same bytes, with three deliberate differences:
no "(the run may still be writing)" warning for a partial last record; a `trainer_state.json` caught
mid-rewrite keeps its previous complete reading instead of the partial one; and, for TensorBoard runs
with several event files, a tag's plugin metadata is remembered across all the files read so far
rather than only the files before it (metadata is the same in every file a writer produces).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import SourceData, display_name
from assessor.ingest.normalize import NormalizedSource, normalize_source
from assessor.ingest.persist import DiskStore, source_from_state, source_state

# Every reader's warning about a partial last line or record says this (see jsonl, csv_log, console,
# tensorboard, trl_state); a watch leaves such a record for the next check rather than warning about it.
STILL_WRITING = "the run may still be writing"
_READ_CHUNK = 1 << 22  # as the JSONL reader reads (see `jsonl._READ_BYTES`)
_GUARD_BYTES = 64
# Formats rewritten whole by their writer: a reading that came back incomplete is a rewrite in progress.
_REWRITTEN_WHOLE = frozenset({"trl_state"})


@dataclass(frozen=True)
class Fingerprint:
    """What says a file changed, without reading it."""

    size: int
    mtime_ns: int
    inode: int

    @classmethod
    def of(cls, path: Path) -> Fingerprint | None:
        """The file's fingerprint, or None when it cannot be stat'ed (gone, no permission)."""
        try:
            stat = path.stat()
        except OSError:
            return None
        return cls(size=stat.st_size, mtime_ns=stat.st_mtime_ns, inode=stat.st_ino)


class Tail(Protocol):
    """The parse state of one append-only file, fed the bytes appended since the last check."""

    def feed(self, chunk: bytes, at_eof: bool) -> int:
        """Parse the complete records at the start of `chunk`; return how many bytes they took."""
        ...

    def result(self) -> SourceData:
        """The file as read so far (raises `UnreadableSourceError` when nothing in it is usable yet)."""
        ...


class _JsonlTail:
    """JSONL: complete lines are fed to the reader's own `JsonlParse`."""

    def __init__(self, path: Path) -> None:
        from assessor.ingest.jsonl import JsonlParse

        self.parse = JsonlParse(path)
        self.is_samples = False
        self._newline_owed = False  # the last line was taken whole before its newline was written

    def feed(self, chunk: bytes, at_eof: bool) -> int:
        if self.is_samples:
            return len(chunk)  # the cache reads a rollout dump whole; nothing more to parse here
        start = 0
        if self._newline_owed and chunk:
            # That newline ends a line already counted; reading it as an empty line would shift line numbers.
            start = 2 if chunk.startswith(b"\r\n") else 1 if chunk[:1] in (b"\n", b"\r") else 0
            self._newline_owed = False
        end = chunk.rfind(b"\n") + 1
        if end <= start:
            end = start
        if at_eof and end < len(chunk) and _is_complete_json_object(chunk[end:]):
            end = len(chunk)  # a last line written without its newline (yet) but whole
            self._newline_owed = True
        if end > start and self.parse.feed_bytes(chunk[start:end]):
            self.is_samples = True  # a rollout dump, not a metric log: the cache reads it whole instead
        return end

    def result(self) -> SourceData:
        return self.parse.result()


def _is_complete_json_object(data: bytes) -> bool:
    text = data.decode("utf-8", errors="replace").strip()
    if not text.startswith("{"):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


@dataclass
class _TensorBoardFile:
    """One event file's scan, resumed where its last complete record ended."""

    path: Path
    name: str
    plugins: dict[str, str]

    def __post_init__(self) -> None:
        from assessor.ingest.tensorboard import new_scan

        self.scan = new_scan()

    def feed(self, chunk: bytes, at_eof: bool) -> int:
        from assessor.ingest.tensorboard import scan_records

        return scan_records(chunk, self.scan.pos, self.name, self.plugins, self.scan)


@dataclass
class _Tailed:
    """Where a tail read of one file stands."""

    tail: _JsonlTail | _TensorBoardFile
    offset: int = 0
    guard: bytes = b""  # the bytes just before `offset`, to notice a rewrite in place


@dataclass(frozen=True)
class TailedReading:
    """A JSONL metric log as the last load left it: where its reading stopped, and what it read."""

    path: Path
    inode: int
    offset: int  # just after the last complete record read
    guard: bytes  # the bytes just before `offset`
    frame: pd.DataFrame  # the raw frame (`SourceData.frame`)
    steps_inferred: str | None


@dataclass
class _Entry:
    fingerprint: Fingerprint | None
    data: SourceData | None = None
    error: UnreadableSourceError | None = None
    tailed: _Tailed | None = None


@dataclass
class CacheStats:
    """What the last `load_run` with this cache did, file by file."""

    reused: int = 0
    appended: int = 0
    reread: int = 0
    kept_previous: int = 0
    bytes_read: int = 0
    files_changed: bool = False  # a file appeared or vanished

    @property
    def changed(self) -> bool:
        """Whether anything on disk changed since the last load (False: every file was reused)."""
        return bool(self.appended or self.reread or self.files_changed)


@dataclass
class IngestCache:
    """Per-file reading state kept between `load_run` calls on the same run (see the module docstring)."""

    stats: CacheStats = field(default_factory=CacheStats)
    # Where readings are also kept on disk for the next process (`assessor.ingest.persist`); None: memory only.
    store: DiskStore | None = None
    _entries: dict[tuple[str, Path], _Entry] = field(default_factory=dict)
    _touched: set[tuple[str, Path]] = field(default_factory=set)
    _normalized: dict[int, tuple[SourceData, str, NormalizedSource]] = field(default_factory=dict)
    _event_files: dict[Path, _Entry] = field(default_factory=dict)
    _event_source: tuple[tuple[tuple[Path, Fingerprint | None], ...], SourceData] | None = None
    _plugins: dict[str, str] = field(default_factory=dict)
    _files_seen: frozenset[tuple[str, Path]] = frozenset()
    # Sources read whole at every check (W&B logs, MLflow stores, databases): a digest of what was read last.
    _uncached: dict[tuple[str, Path], str] = field(default_factory=dict)

    def begin(self) -> None:
        """Start one `load_run`."""
        self.stats = CacheStats()
        self._touched = set()

    def end(self) -> None:
        """Finish one `load_run`: forget files that are gone, note whether the set of files changed."""
        for key in set(self._entries) - self._touched:
            del self._entries[key]
        self._uncached = {k: v for k, v in self._uncached.items() if k in self._touched}
        live = {id(entry.data) for entry in self._entries.values() if entry.data is not None}
        if self._event_source is not None:
            live.add(id(self._event_source[1]))
        self._normalized = {k: v for k, v in self._normalized.items() if k in live}
        files = frozenset(self._touched)
        self.stats.files_changed = files != self._files_seen
        self._files_seen = files

    def sources(self) -> list[SourceData]:
        """Every `SourceData` the last load used (for callers that look at raw keys or facts)."""
        out = [entry.data for entry in self._entries.values() if entry.data is not None]
        if self._event_source is not None:
            out.append(self._event_source[1])
        return out

    def tailed_logs(self) -> list[TailedReading]:
        """The JSONL metric logs the last load read by their appended bytes, where each reading stopped."""
        out = []
        for (reader_name, path), entry in self._entries.items():
            tailed = entry.tailed
            if reader_name != "jsonl" or tailed is None or entry.data is None or entry.fingerprint is None or \
                    not isinstance(tailed.tail, _JsonlTail) or tailed.tail.is_samples:
                continue
            out.append(TailedReading(path=path, inode=entry.fingerprint.inode, offset=tailed.offset, guard=tailed.guard,
                                  frame=entry.data.frame, steps_inferred=entry.data.steps_inferred))
        return out

    def training_ended(self) -> bool:
        """Whether a source carries the trainer's end-of-training summary (`train_runtime`, ...)."""
        return any(data.carries_end_of_training() for data in self.sources())

    def read(self, reader_name: str, path: Path, read: Callable[[Path], SourceData]) -> SourceData:
        """What `read(path)` (the reader named `reader_name`) returns, from the cache where possible.

        Raises:
            UnreadableSourceError: as the reader does, when there is no earlier reading to fall back on.
        """
        key = (reader_name, path)
        self._touched.add(key)
        fingerprint = Fingerprint.of(path)
        entry = self._entries.get(key)
        if entry is None and self.store is not None:
            entry = self._restore(reader_name, path, fingerprint)
        if entry is not None and fingerprint is not None and entry.fingerprint == fingerprint:
            self.stats.reused += 1
            self._entries[key] = entry
            return _answer(entry)
        if reader_name == "jsonl":
            updated = self._read_tail(path, fingerprint, entry, lambda: _JsonlTail(path), read)
        else:
            updated = self._read_whole(reader_name, path, fingerprint, entry, read)
        self._entries[key] = updated
        if self.store is not None and updated.fingerprint is not None:
            self._persist(reader_name, path, updated)
        return _answer(updated)

    def _restore(self, reader_name: str, path: Path, fingerprint: Fingerprint | None) -> _Entry | None:
        """The entry a previous process left on disk for this file, or None (none, or not usable)."""
        assert self.store is not None
        saved = self.store.load(reader_name, path)
        if saved is None:
            return None
        arrays, body = saved
        try:
            old = Fingerprint(**body["fingerprint"])
            if body["kind"] == "tail":
                from assessor.ingest.jsonl import JsonlParse

                tail = _JsonlTail(path)
                tail.parse = JsonlParse.from_state(path, arrays, body["parse"])
                tail._newline_owed = bool(body["newline_owed"])
                tailed = _Tailed(tail=tail, offset=int(body["offset"]), guard=bytes.fromhex(body["guard"]))
                entry = _Entry(fingerprint=old, tailed=tailed)
                if old == fingerprint:  # unchanged: its reading is needed now (else the tail read makes it)
                    entry.data = tail.result()
                    entry.data.warnings[:] = [w for w in entry.data.warnings if STILL_WRITING not in w]
                return entry
            return _Entry(fingerprint=old, data=source_from_state(arrays, body["source"]))
        except Exception:  # a cache file that does not hold what it should: read the source instead
            return None

    def _persist(self, reader_name: str, path: Path, entry: _Entry) -> None:
        assert self.store is not None and entry.fingerprint is not None
        fingerprint = {"size": entry.fingerprint.size, "mtime_ns": entry.fingerprint.mtime_ns,
                       "inode": entry.fingerprint.inode}
        tailed = entry.tailed
        if tailed is not None and isinstance(tailed.tail, _JsonlTail) and not tailed.tail.is_samples:
            arrays, parse = tailed.tail.parse.state()
            body = {"kind": "tail", "fingerprint": fingerprint, "offset": tailed.offset, "guard": tailed.guard.hex(),
                    "newline_owed": tailed.tail._newline_owed, "parse": parse}
            self.store.save(reader_name, path, arrays, body)
        elif entry.data is not None:
            state = source_state(entry.data)
            if state is not None:
                self.store.save(reader_name, path, state[0], {"kind": "whole", "fingerprint": fingerprint,
                                                              "source": state[1]})

    def read_uncached(self, reader_name: str, path: Path, read: Callable[[], SourceData]) -> SourceData:
        """What `read()` returns for a source read whole at every check; its change is judged on what was read.

        A W&B log, an MLflow store (a folder) or a database gives no file fingerprint that says "appended", so
        the reading itself is compared with the last one: new steps count as a change (`stats.reread`).

        Raises:
            UnreadableSourceError: as `read` does.
        """
        key = (reader_name, path)
        self._touched.add(key)
        try:
            data = read()
        except UnreadableSourceError as error:
            self._note_uncached(key, f"unreadable: {error}")
            raise
        self._note_uncached(key, _digest(data))
        return data

    def _note_uncached(self, key: tuple[str, Path], digest: str) -> None:
        if self._uncached.get(key) == digest:
            self.stats.reused += 1
        else:
            self.stats.reread += 1
            self._uncached[key] = digest

    def read_event_files(self, paths: list[Path], rel_root: Path) -> SourceData:
        """What `tensorboard.read_event_files(paths, rel_root)` returns, reading only appended records."""
        from assessor.ingest.tensorboard import _file_order, source_from_scans

        ordered = sorted(paths, key=_file_order)
        fingerprints = tuple((p, Fingerprint.of(p)) for p in ordered)
        if self._event_source is not None and self._event_source[0] == fingerprints:
            self.stats.reused += len(ordered)
            return self._event_source[1]
        self._event_files = {p: e for p, e in self._event_files.items() if p in set(ordered)}
        scans = []
        for path, fingerprint in fingerprints:
            entry = self._event_files.get(path)
            if entry is not None and entry.fingerprint == fingerprint and entry.tailed is not None:
                self.stats.reused += 1
            else:
                start = partial(_TensorBoardFile, path, display_name(path, rel_root), self._plugins)
                entry = self._tail_only(path, fingerprint, entry, start)
                self._event_files[path] = entry
            assert entry.tailed is not None and isinstance(entry.tailed.tail, _TensorBoardFile)
            scans.append(entry.tailed.tail.scan)
        try:
            data = source_from_scans(ordered, scans, rel_root, keep=True)
        except UnreadableSourceError:
            self._event_source = None
            raise
        data.warnings[:] = [w for w in data.warnings if STILL_WRITING not in w]
        self._event_source = (fingerprints, data)
        return data

    def normalized(self, data: SourceData, rel_path: str) -> NormalizedSource:
        """`normalize_source(data, rel_path)`, computed once per reading of a file."""
        cached = self._normalized.get(id(data))
        if cached is not None and cached[0] is data and cached[1] == rel_path:
            return cached[2]
        result = normalize_source(data, rel_path)
        self._normalized[id(data)] = (data, rel_path, result)
        return result

    def _read_whole(
        self, reader_name: str, path: Path, fingerprint: Fingerprint | None, entry: _Entry | None,
        read: Callable[[Path], SourceData],
    ) -> _Entry:
        previous = entry.data if entry is not None else None
        try:
            data = read(path)
        except UnreadableSourceError as error:
            if previous is not None:
                # Mid-rewrite (or briefly unreadable): keep the last good reading and try again next check.
                self.stats.kept_previous += 1
                return _Entry(fingerprint=None, data=previous)
            self.stats.reread += 1
            return _Entry(fingerprint=fingerprint, error=error)
        if previous is not None and reader_name in _REWRITTEN_WHOLE and _still_writing(data):
            self.stats.kept_previous += 1
            return _Entry(fingerprint=None, data=previous)
        self.stats.reread += 1
        self.stats.bytes_read += fingerprint.size if fingerprint else 0
        data.warnings[:] = [w for w in data.warnings if STILL_WRITING not in w]
        return _Entry(fingerprint=fingerprint, data=data)

    def _read_tail(
        self, path: Path, fingerprint: Fingerprint | None, entry: _Entry | None,
        new_tail: Callable[[], _JsonlTail], read: Callable[[Path], SourceData],
    ) -> _Entry:
        updated = self._tail_only(path, fingerprint, entry, new_tail)
        assert updated.tailed is not None
        tail = updated.tailed.tail
        assert isinstance(tail, _JsonlTail)
        if tail.is_samples:
            updated.tailed = None  # rollout dumps are read whole (only their last samples are kept)
            return self._read_whole("jsonl", path, fingerprint, entry, read)
        previous = entry.data if entry is not None else None
        try:
            updated.data = tail.result()
        except UnreadableSourceError as error:
            if previous is not None:
                self.stats.kept_previous += 1
                updated.data = previous
            else:
                updated.error = error
        return updated

    def _tail_only(
        self, path: Path, fingerprint: Fingerprint | None, entry: _Entry | None,
        new_tail: Callable[[], _JsonlTail | _TensorBoardFile],
    ) -> _Entry:
        """Advance the file's tail state over what was appended (or start over if it was rewritten)."""
        tailed = entry.tailed if entry is not None else None
        if tailed is None or fingerprint is None or not _appended_to(path, entry, fingerprint, tailed):
            tailed = _Tailed(tail=new_tail())
            self.stats.reread += 1
        else:
            self.stats.appended += 1
        try:
            with path.open("rb") as handle:
                handle.seek(tailed.offset)
                pending = b""
                while True:
                    chunk = handle.read(_READ_CHUNK)
                    at_eof = not chunk
                    buffer = pending + chunk
                    if not buffer:
                        break
                    self.stats.bytes_read += len(chunk)
                    used = tailed.tail.feed(buffer, at_eof)
                    if used:
                        tailed.guard = (tailed.guard + buffer[:used])[-_GUARD_BYTES:]
                        tailed.offset += used
                    pending = buffer[used:]
                    if at_eof:
                        break
        except OSError as error:
            # Vanished or unreadable between the listing and the read: keep what we had, try again next check.
            previous = entry.data if entry is not None else None
            unreadable = UnreadableSourceError(f"{path}: cannot be read ({error.strerror}); check its permissions")
            return _Entry(fingerprint=None, data=previous, tailed=tailed, error=None if previous else unreadable)
        return _Entry(fingerprint=fingerprint, tailed=tailed)


def _appended_to(path: Path, entry: _Entry | None, fingerprint: Fingerprint, tailed: _Tailed) -> bool:
    """Whether the file only grew since the tail was read: same inode, longer, same bytes before the offset."""
    old = entry.fingerprint if entry is not None else None
    if old is not None and old.inode != fingerprint.inode:
        return False
    if old is not None and old.size == fingerprint.size:  # written to, yet no longer: rewritten in place
        return False
    if fingerprint.size < tailed.offset:
        return False
    if not tailed.guard:
        return tailed.offset == 0
    try:
        with path.open("rb") as handle:
            handle.seek(tailed.offset - len(tailed.guard))
            return handle.read(len(tailed.guard)) == tailed.guard
    except OSError:
        return False


def _digest(data: SourceData) -> str:
    """A digest of everything a reading holds that a verdict can depend on (arrays hashed as bytes)."""
    digest = hashlib.blake2b(digest_size=16)
    frame = data.frame
    for column in ("step", "value", "wall_time"):
        digest.update(np.ascontiguousarray(frame[column].to_numpy()).tobytes())
    for column in ("key", "split"):
        digest.update(np.ascontiguousarray(frame[column].cat.codes.to_numpy()).tobytes())
        digest.update(repr(list(frame[column].cat.categories)).encode())
    if data.gpu is not None:
        digest.update(pd.util.hash_pandas_object(data.gpu, index=False).to_numpy().tobytes())
    extras = (data.format, sorted(data.facts.items(), key=lambda item: item[0]), data.warnings, data.notes,
              [s.model_dump_json() for s in data.samples], data.steps_inferred)
    digest.update(repr(extras).encode())
    return digest.hexdigest()


def _answer(entry: _Entry) -> SourceData:
    if entry.data is not None:
        return entry.data
    if entry.error is not None:
        raise entry.error
    raise UnreadableSourceError("no reading yet")  # not reached: every entry holds data or an error


def _still_writing(data: SourceData) -> bool:
    return any(STILL_WRITING in warning for warning in data.warnings)

