"""What a reader returns, and the helpers readers share.

A reader turns one file into a `SourceData`: a raw long frame (`step`, `key`, `value`, `split`,
`wall_time`) with the framework's own keys, plus any facts it saw and warnings. Mapping keys to canonical
names, dropping pre-resume duplicates and counting NaN happen once, in `assessor.ingest.normalize`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

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
    """

    path: Path
    format: str
    frame: pd.DataFrame
    facts: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gpu: pd.DataFrame | None = None
    gpu_devices: dict[int, str] = field(default_factory=dict)


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


class RecordBuilder:
    """Collects values per (key, split) in file order and builds the raw long frame once at the end.

    Column-per-key lists keep the hot loop to two appends per value, which matters for a
    100,000-step `trainer_state.json`.
    """

    def __init__(self) -> None:
        self._columns: dict[tuple[str, SplitHint], tuple[list[int], list[Any], list[float] | None]] = {}
        self.non_numeric: dict[str, int] = {}

    def add(self, step: int, key: str, value: Any, split: SplitHint = None, wall_time: float | None = None) -> None:
        """Add one value."""
        column = self._columns.get((key, split))
        if column is None:
            column = ([], [], [] if wall_time is not None else None)
            self._columns[(key, split)] = column
        column[0].append(step)
        column[1].append(value)
        if column[2] is not None:
            column[2].append(math.nan if wall_time is None else wall_time)

    def add_row(self, step: int, row: Mapping[str, Any], split: SplitHint = None, skip: Iterable[str] = ()) -> None:
        """Add every key of one logged dict (skipping the given keys)."""
        skipped = set(skip)
        columns = self._columns
        for key, value in row.items():
            if key in skipped:
                continue
            column = columns.get((key, split))
            if column is None:
                column = ([], [], None)
                columns[(key, split)] = column
            column[0].append(step)
            column[1].append(value)

    def add_column(
        self, key: str, steps: np.ndarray, values: np.ndarray, split: SplitHint = None,
        wall_time: np.ndarray | None = None,
    ) -> None:
        """Add a whole series at once (readers that already hold arrays, e.g. TensorBoard)."""
        column = self._columns.get((key, split))
        if column is None:
            column = ([], [], None if wall_time is None else [])
            self._columns[(key, split)] = column
        column[0].extend(np.asarray(steps, dtype=np.int64).tolist())
        column[1].extend(np.asarray(values, dtype=np.float64).tolist())
        if column[2] is not None:
            column[2].extend(
                np.full(len(steps), np.nan).tolist() if wall_time is None else np.asarray(wall_time).tolist()
            )

    def __len__(self) -> int:
        return sum(len(col[0]) for col in self._columns.values())

    def build(self) -> pd.DataFrame:
        """The raw long frame, rows grouped by key, file order kept within a key."""
        categories: dict[str, int] = {}
        codes: list[int] = []
        splits: list[SplitHint] = []
        counts: list[int] = []
        steps: list[np.ndarray] = []
        values: list[np.ndarray] = []
        times: list[np.ndarray] = []
        for (key, split), (key_steps, key_values, key_times) in self._columns.items():
            numeric = self._to_float(key, key_values)
            if numeric is None:
                continue
            codes.append(categories.setdefault(key, len(categories)))
            splits.append(split)
            counts.append(len(key_steps))
            steps.append(np.asarray(key_steps, dtype=np.int64))
            values.append(numeric)
            times.append(
                np.full(len(key_steps), np.nan) if key_times is None else np.asarray(key_times, dtype=np.float64)
            )
        if not counts:
            return empty_raw_frame()
        repeat = np.asarray(counts)
        split_codes = np.array([SPLIT_CODES[s] for s in splits], dtype=np.int8)
        return pd.DataFrame({
            "step": np.concatenate(steps),
            "key": pd.Categorical.from_codes(np.repeat(np.asarray(codes), repeat), categories=list(categories)),
            "value": np.concatenate(values),
            "split": pd.Categorical.from_codes(np.repeat(split_codes, repeat), categories=["train", "eval"]),
            "wall_time": np.concatenate(times),
        })

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
            return None
        if bad:
            self.non_numeric[key] = bad
        return out


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
