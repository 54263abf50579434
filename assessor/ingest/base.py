"""What a reader returns, and the helpers readers share.

A reader turns one file into a `SourceData`: a raw long frame (`step`, `key`, `value`, `split`,
`wall_time`) with the framework's own keys, plus any facts it saw and warnings. Mapping keys to canonical
names, dropping pre-resume duplicates and counting NaN happen once, in `assessor.ingest.normalize`.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from assessor.run import Sample

RAW_COLUMNS = ("step", "key", "value", "split", "wall_time")

# Split hints a reader may give: None lets the alias table decide from the key.
SplitHint = str | None
SPLIT_CODES: dict[SplitHint, int] = {None: -1, "train": 0, "eval": 1}


@dataclass
class SourceData:
    """One file, read.

    Attributes:
        path: the file.
        format: the reader's name.
        frame: raw long frame; `split` holds a hint ("train"/"eval") or None; `key` is the raw key.
        facts: run facts the file states (same names as `RunFacts`), with where they came from.
        warnings: one-line problems with this file (each names the file).
        notes: what the reader did that a user may want to know (e.g. how steps were inferred).
        gpu: nvidia-smi style telemetry (`time`, `device`, `field`, `value`), if the file holds some.
        gpu_devices: device index -> GPU name.
        samples: completions the file holds.
        steps_inferred: how the steps were worked out when the file does not state them (row order, one
            printed dict per step), else None; a file with its own steps is preferred over such a copy.
    """

    path: Path
    format: str
    frame: pd.DataFrame
    facts: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gpu: pd.DataFrame | None = None
    gpu_devices: dict[int, str] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    steps_inferred: str | None = None

    def carries_end_of_training(self) -> bool:
        """Whether the file holds the trainer's end-of-training summary (`train_runtime`, ...).

        The summary row is not a curve, so ingest keeps it out of the metrics table; it survives as a fact
        (`trainer_state.json`, console logs) or as a raw key of the file (JSONL).
        """
        if END_OF_TRAINING & set(self.facts):
            return True
        return bool(len(self.frame)) and bool(END_OF_TRAINING & {str(k) for k in self.frame["key"].cat.categories})


@dataclass(frozen=True)
class KeySeries:
    """One raw key of a reading: its values and their steps, in file order (no split hint, no wall time)."""

    key: str
    steps: np.ndarray  # int64
    values: np.ndarray  # float64, NaN where the file held a null


class KeyedSource(SourceData):
    """A reading held as one `KeySeries` per raw key (a plain metric log read whole, `jsonl._read_whole`).

    `normalize_source` reads the series as they are; the long `frame` every reading has is laid out from them
    only when something else asks for it (the ingest cache, tests): `load_run` never does. Laying out the 10.8 M
    values of a 300,000-step verl log a second time cost 0.15-0.25 s and 80 MiB of peak memory.
    """

    def __init__(self, path: Path, format: str, by_key: list[KeySeries], facts: dict[str, Any]) -> None:
        self.by_key = by_key
        self._frame: pd.DataFrame | None = None
        super().__init__(path=path, format=format, frame=_NOT_LAID_OUT, facts=facts)

    @property
    def frame(self) -> pd.DataFrame:
        """The raw long frame, laid out from the series on first use."""
        if self._frame is None:
            self._frame = _long_frame(self.by_key)
        return self._frame

    @frame.setter
    def frame(self, value: pd.DataFrame) -> None:
        self._frame = None if value is _NOT_LAID_OUT else value

    def carries_end_of_training(self) -> bool:
        """As `SourceData` says, from the keys (without laying out the frame)."""
        return bool(END_OF_TRAINING & set(self.facts)) or any(s.key in END_OF_TRAINING and len(s.values)
                                                               for s in self.by_key)


_NOT_LAID_OUT = pd.DataFrame()


def _long_frame(by_key: list[KeySeries]) -> pd.DataFrame:
    """The raw long frame of `KeySeries`: each key's rows together, in the given order."""
    counts = np.array([len(series.values) for series in by_key], dtype=np.int64)
    total = int(counts.sum())
    return pd.DataFrame({
        "step": np.concatenate([s.steps for s in by_key]) if by_key else np.array([], dtype=np.int64),
        "key": categorical(np.repeat(np.arange(len(by_key), dtype=code_type(len(by_key))), counts),
                           [s.key for s in by_key]),
        "value": np.concatenate([s.values for s in by_key]) if by_key else np.array([], dtype=np.float64),
        "split": categorical(np.full(total, -1, dtype=np.int8), ["train", "eval"]),
        "wall_time": np.full(total, np.nan),
    }, copy=False)


# Raw keys and facts that only the trainer's end-of-training summary carries (HF Trainer / TRL).
END_OF_TRAINING = frozenset({"train_runtime", "train_runtime_s", "training_ended"})


class Reader(Protocol):
    """A reader for one on-disk format; registered by name in `assessor.ingest.READERS`."""

    name: str

    def sniff(self, path: Path, head: bytes) -> bool:
        """Whether this reader understands the file, from its name and first bytes."""
        ...

    def read(self, path: Path) -> SourceData:
        """Read the file; raise `UnreadableSourceError` when nothing in it is usable."""
        ...


_NP_WRAPPER = re.compile(r"^\s*(?:np|numpy)\.\w+\((?P<inner>.*)\)\s*$")
_TENSOR_WRAPPER = re.compile(r"^\s*tensor\((?P<inner>[^,)]*)")


def parse_number(value: Any) -> float | None:
    """A float from a logged value, or None when the value is not a number at all.

    NaN-like values (None, "nan", "NaN", `np.float64(nan)`) come back as NaN, so the loader counts them.

    >>> parse_number("np.float64(0.25)"), parse_number("1e-05"), parse_number("abc")
    (0.25, 1e-05, None)
    """
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        wrapped = _NP_WRAPPER.match(text) or _TENSOR_WRAPPER.match(text)
        if wrapped:
            text = wrapped["inner"].strip()
        if text.endswith("%"):
            text = text[:-1]
        if text.lower() in ("", "none", "null"):
            return math.nan
        try:
            return float(text)
        except ValueError:
            return None
    return None


_FLUSH_ROWS = 8192


@dataclass
class _Chunk:
    seq: np.ndarray  # position in the file, shared by every key of a row block
    steps: np.ndarray
    values: np.ndarray
    wall_time: np.ndarray | None


@dataclass
class _RowBlock:
    """Rows that share one key tuple (in TRL logs nearly every row does): stored as a 2-D float array."""

    keys: tuple[str, ...]
    split: SplitHint
    kept: list[bool]
    width: int
    seq: list[int] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)


class RecordBuilder:
    """Collects values in file order and builds the raw long frame once at the end.

    Readers add one value (`add`), one logged dict (`add_row`) or a whole series (`add_column`). Rows that
    share a key tuple are kept as tuples and turned into float arrays every few thousand rows, so a
    100,000-step `trainer_state.json` costs a few C calls per row and 8 bytes per value, not a Python
    object per value. A running sequence number keeps file order for the resume logic downstream.
    """

    def __init__(self) -> None:
        self._chunks: dict[tuple[str, SplitHint], list[_Chunk]] = {}
        self._singles: dict[tuple[str, SplitHint], tuple[list[int], list[int], list[Any], list[float] | None]] = {}
        self._blocks: dict[tuple[tuple[str, ...], SplitHint], _RowBlock] = {}
        self._seq = 0
        self._count = 0
        self.non_numeric: dict[str, int] = {}
        self._text_keys: set[str] = set()

    def add(self, step: int, key: str, value: Any, split: SplitHint = None, wall_time: float | None = None) -> None:
        """Add one value."""
        column = self._singles.get((key, split))
        if column is None:
            column = ([], [], [], [] if wall_time is not None else None)
            self._singles[(key, split)] = column
        column[0].append(self._seq)
        column[1].append(step)
        column[2].append(value)
        if column[3] is not None:
            column[3].append(math.nan if wall_time is None else wall_time)
        self._seq += 1
        self._count += 1

    def add_row(self, step: int, row: Mapping[str, Any], split: SplitHint = None, skip: Iterable[str] = ()) -> None:
        """Add every key of one logged dict, except the `skip` keys."""
        keys = tuple(row)
        block = self._blocks.get((keys, split))
        if block is None:
            skipped = set(skip)
            kept = [k not in skipped for k in keys]
            block = _RowBlock(keys, split, kept=kept, width=sum(kept))
            self._blocks[(keys, split)] = block
        block.seq.append(self._seq)
        block.steps.append(step)
        block.rows.append(tuple(row.values()))  # skipped columns are dropped when the block is flushed
        self._seq += 1
        self._count += block.width
        if len(block.rows) >= _FLUSH_ROWS:
            self._flush_block(block)

    def add_column(
        self, key: str, steps: np.ndarray, values: np.ndarray, split: SplitHint = None,
        wall_time: np.ndarray | None = None,
    ) -> None:
        """Add a whole series at once (readers that already hold arrays, e.g. TensorBoard)."""
        n = len(steps)
        seq = np.arange(self._seq, self._seq + n, dtype=np.int64)
        self._seq += n
        self._count += n
        self._chunks.setdefault((key, split), []).append(_Chunk(
            seq, np.asarray(steps, dtype=np.int64), np.asarray(values, dtype=np.float64),
            None if wall_time is None else np.asarray(wall_time, dtype=np.float64),
        ))

    def reserve(self, rows: int) -> int:
        """Take `rows` sequence numbers for a block of rows added column by column (`add_values`)."""
        first = self._seq
        self._seq += rows
        return first

    def add_values(
        self, key: str, seq: np.ndarray, steps: np.ndarray, values: np.ndarray | list[Any], split: SplitHint = None,
    ) -> None:
        """Add one key's values of a block of rows: `seq` from `reserve`, floats or raw values (text, numbers)."""
        numeric = values if isinstance(values, np.ndarray) else self._to_float(key, values)
        if numeric is None:
            return
        self._count += len(numeric)
        self._chunks.setdefault((key, split), []).append(_Chunk(
            np.asarray(seq, dtype=np.int64), np.asarray(steps, dtype=np.int64), np.asarray(numeric, np.float64), None,
        ))

    def __len__(self) -> int:
        return self._count

    def flush(self) -> None:
        """Turn the rows and values kept as Python objects into arrays (`build` and `state` do this first)."""
        for block in self._blocks.values():
            self._flush_block(block)
        self._flush_singles()

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Everything collected so far as arrays and plain JSON values (see `from_state`)."""
        self.flush()
        arrays: dict[str, np.ndarray] = {}
        series = []
        for index, ((key, split), chunks) in enumerate(self._chunks.items()):
            seq = np.concatenate([c.seq for c in chunks])
            order = np.argsort(seq, kind="stable")
            arrays[f"c{index}_seq"] = seq[order]
            arrays[f"c{index}_steps"] = np.concatenate([c.steps for c in chunks])[order]
            arrays[f"c{index}_values"] = np.concatenate([c.values for c in chunks])[order]
            timed = any(c.wall_time is not None for c in chunks)
            if timed:
                arrays[f"c{index}_times"] = np.concatenate([
                    np.full(len(c.steps), np.nan) if c.wall_time is None else c.wall_time for c in chunks])[order]
            series.append([key, split, timed])
        meta = {
            "series": series, "seq": self._seq, "count": self._count, "non_numeric": self.non_numeric,
            "text_keys": sorted(self._text_keys),
            "blocks": [[list(b.keys), b.split, b.kept] for b in self._blocks.values()],
        }
        return arrays, meta

    @classmethod
    def from_state(cls, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> RecordBuilder:
        """The builder `state` was taken from, ready for more values."""
        builder = cls()
        for index, (key, split, timed) in enumerate(meta["series"]):
            builder._chunks[(str(key), split)] = [_Chunk(
                np.asarray(arrays[f"c{index}_seq"], dtype=np.int64),
                np.asarray(arrays[f"c{index}_steps"], dtype=np.int64),
                np.asarray(arrays[f"c{index}_values"], dtype=np.float64),
                np.asarray(arrays[f"c{index}_times"], dtype=np.float64) if timed else None,
            )]
        builder._seq = int(meta["seq"])
        builder._count = int(meta["count"])
        builder.non_numeric = {str(k): int(v) for k, v in meta["non_numeric"].items()}
        builder._text_keys = {str(k) for k in meta["text_keys"]}
        for keys, split, kept in meta["blocks"]:
            block = _RowBlock(tuple(keys), split, kept=[bool(k) for k in kept], width=sum(bool(k) for k in kept))
            builder._blocks[(block.keys, split)] = block
        return builder

    def _flush_block(self, block: _RowBlock) -> None:
        if not block.rows:
            return
        seq = np.asarray(block.seq, dtype=np.int64)
        steps = np.asarray(block.steps, dtype=np.int64)
        kept = [j for j, keep in enumerate(block.kept) if keep]
        columns: list[np.ndarray | None]
        try:
            table = np.asarray(block.rows, dtype=np.float64)
            columns = [np.ascontiguousarray(table[:, j]) for j in kept]
        except (TypeError, ValueError):  # text somewhere: convert column by column
            transposed = list(zip(*block.rows, strict=True))
            columns = [self._to_float(block.keys[j], list(transposed[j])) for j in kept]
        for key, column in zip((block.keys[j] for j in kept), columns, strict=True):
            if column is not None:
                self._chunks.setdefault((key, block.split), []).append(_Chunk(seq, steps, column, None))
        block.seq, block.steps, block.rows = [], [], []

    def _flush_singles(self) -> None:
        for (key, split), (seq, steps, values, times) in self._singles.items():
            numeric = self._to_float(key, values)
            if numeric is None:
                continue
            self._chunks.setdefault((key, split), []).append(_Chunk(
                np.asarray(seq, dtype=np.int64), np.asarray(steps, dtype=np.int64), numeric,
                None if times is None else np.asarray(times, dtype=np.float64),
            ))
        self._singles = {}

    def counts(self) -> dict[tuple[str, SplitHint], int]:
        """How many values each numeric (key, split) holds."""
        self.flush()
        return {key: sum(len(c.steps) for c in chunks) for key, chunks in self._chunks.items()
                if key[0] not in self._text_keys}

    def series(self) -> dict[tuple[str, SplitHint], tuple[np.ndarray, np.ndarray]]:
        """Each numeric (key, split) as (steps as added, values), in file order: a look before `build`."""
        self.flush()
        out: dict[tuple[str, SplitHint], tuple[np.ndarray, np.ndarray]] = {}
        for (key, split), chunks in self._chunks.items():
            if key in self._text_keys:
                continue
            ordered = _in_file_order(chunks)
            out[(key, split)] = (np.concatenate([c.steps for c in ordered]),
                                 np.concatenate([c.values for c in ordered]))
        return out

    def build(self, step_of_row: np.ndarray | None = None, without: Callable[[str], bool] | None = None,
              held_out: Collection[str] = ()) -> pd.DataFrame:
        """The raw long frame: rows grouped by (key, split), file order kept within each group.

        Args:
            step_of_row: when the steps added were row numbers (`RowTable`), each row's step; rows whose step
                is negative (none) are left out.
            without: keys to leave out.
            held_out: keys added without a split hint that are held-out metrics: given the eval split.
        """
        self.flush()
        categories: dict[str, int] = {}
        codes: list[int] = []
        splits: list[SplitHint] = []
        groups = [(key, "eval" if split is None and key in held_out else split, _in_file_order(chunks))
                  for (key, split), chunks in self._chunks.items()
                  if key not in self._text_keys and (without is None or not without(key))]
        if not groups:
            return empty_raw_frame()
        counts = np.array([sum(len(c.steps) for c in chunks) for _, _, chunks in groups], dtype=np.int64)
        total = int(counts.sum())
        # Each column is filled in place, group after group: no per-key copies on the way to the table.
        steps = np.empty(total, dtype=np.int64)
        values = np.empty(total, dtype=np.float64)
        times = np.full(total, np.nan)
        at = 0
        for key, split, chunks in groups:
            codes.append(categories.setdefault(key, len(categories)))
            splits.append(split)
            for chunk in chunks:
                end = at + len(chunk.steps)
                if step_of_row is None:
                    steps[at:end] = chunk.steps
                elif end > at and int(chunk.steps[-1]) - int(chunk.steps[0]) == end - at - 1 and \
                        bool(np.all(np.diff(chunk.steps) == 1)):  # a run of rows (a block's column): a copy
                    steps[at:end] = step_of_row[int(chunk.steps[0]):int(chunk.steps[-1]) + 1]
                else:
                    steps[at:end] = step_of_row[chunk.steps]
                values[at:end] = chunk.values
                if chunk.wall_time is not None:
                    times[at:end] = chunk.wall_time
                at = end
        split_codes = np.repeat(np.array([SPLIT_CODES[s] for s in splits], dtype=np.int8), counts)
        key_codes = np.repeat(np.asarray(codes, dtype=code_type(len(categories))), counts)
        if step_of_row is not None and len(steps) and int(steps.min()) < 0:
            keep = steps >= 0
            steps, values, times, split_codes, key_codes = (
                steps[keep], values[keep], times[keep], split_codes[keep], key_codes[keep])
        return pd.DataFrame({
            "step": steps,
            "key": categorical(key_codes, list(categories)),
            "value": values,
            "split": categorical(split_codes, ["train", "eval"]),
            "wall_time": times,
        }, copy=False)  # the arrays are fresh: let pandas keep them rather than copy them into blocks

    def _to_float(self, key: str, raw: list[Any]) -> np.ndarray | None:
        """Floats for one key; None when the key holds text rather than numbers."""
        try:
            return np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError):
            pass
        out = np.empty(len(raw), dtype=np.float64)
        bad = 0
        for i, item in enumerate(raw):
            number = parse_number(item)
            if number is None:
                bad += 1
                number = math.nan
            out[i] = number
        if bad == len(raw):
            self._text_keys.add(key)
            return None
        if bad:
            self.non_numeric[key] = self.non_numeric.get(key, 0) + bad
        return out


def _in_file_order(chunks: list[_Chunk]) -> list[_Chunk]:
    """One key's chunks with their values in file order: as they are when each follows the one before."""
    if len(chunks) == 1:
        return chunks
    if all(len(c.seq) < 2 or bool(np.all(c.seq[1:] > c.seq[:-1])) for c in chunks):
        ends = [(int(c.seq[0]), int(c.seq[-1])) for c in chunks if len(c.seq)]
        if all(last < first for (_, last), (first, _) in itertools.pairwise(ends)):
            return chunks  # the usual case (blocks of rows in file order): no sort, no copy
    seq = np.concatenate([c.seq for c in chunks])
    order = np.argsort(seq, kind="stable")
    timed = any(c.wall_time is not None for c in chunks)
    wall = np.concatenate([np.full(len(c.steps), np.nan) if c.wall_time is None else c.wall_time for c in chunks])
    return [_Chunk(seq[order], np.concatenate([c.steps for c in chunks])[order],
                   np.concatenate([c.values for c in chunks])[order], wall[order] if timed else None)]


def code_type(categories: int) -> type[np.signedinteger[Any]]:
    """The narrowest integer type for codes of `categories` labels (pandas would narrow a wider one by copying)."""
    if categories <= np.iinfo(np.int8).max:
        return np.int8
    return np.int16 if categories <= np.iinfo(np.int16).max else np.int32


def categorical(codes: np.ndarray, categories: list[str]) -> pd.Categorical[str]:
    """A categorical column from integer codes (the cheap way to label millions of rows)."""
    return pd.Categorical.from_codes(codes, categories=pd.Index(categories))  # pandas narrows the codes itself


def empty_raw_frame() -> pd.DataFrame:
    """A raw frame with no rows."""
    return pd.DataFrame({
        "step": np.array([], dtype=np.int64),
        "key": pd.Categorical([]),
        "value": np.array([], dtype=np.float64),
        "split": pd.Categorical([], categories=["train", "eval"]),
        "wall_time": np.array([], dtype=np.float64),
    })


def read_head(path: Path, size: int = 4096) -> bytes:
    """The first bytes of a file (empty when unreadable)."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def as_int(value: Any) -> int | None:
    """An int from a config value, or None."""
    number = parse_number(value)
    if number is None or not math.isfinite(number):
        return None
    return int(number)


def display_name(path: Path, rel_root: Path) -> str:
    """A file's name as warnings and notes show it: relative to the run directory, else just its name."""
    try:
        relative = path.relative_to(rel_root)
    except ValueError:
        return path.name
    return relative.as_posix() if relative.parts else path.name
