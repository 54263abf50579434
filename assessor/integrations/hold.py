"""Hold the last verdict while what a live run appended since its last full check is immaterial.

A scheduled check of a long run mostly finds a few dozen new steps that look like the thousands before them.
Diagnosing the whole run again for those costs as much as the first check (in a fresh `watch --once`
process: the imports, restoring the cached tables, every descriptor over every step). Instead, the last full
check leaves a compact summary in the watch state (`FullCheck`): for each JSONL metric log it tailed, where it
stopped reading (byte offset and the bytes just before it), the key holding the step, and per series the
recent level and noise band; and a digest of every other file and folder under the run directory. The next
check reads only the appended lines, with `json` and without pandas or the diagnosis stack, and holds the
last verdict when all of these are true:

* the last full check is recent: fewer new steps than `HOLD_SHARE` of the run (1%) since it, so the whole
  diagnosis still runs at least once per 1% of the run; runs shorter than `HOLD_MIN_STEPS` are always
  checked in full (their full check is cheap, and early verdicts move fastest);
* the run was live at the full check, and has not reached its planned total;
* nothing else under the run directory changed: no new checkpoint, no new or rewritten file, no log rotated
  or rewritten in place;
* every new line is a record like those before it: the same keys (no new metric, no end-of-training
  summary), finite numbers (no NaN, inf or null), steps counting up from the last one (no restart);
* every new value lies within `POINT_BAND` noise units of its series' recent level, the mean of the new
  values of a series within `MEAN_BAND`, and no series that never read 0 recently reads exactly 0 (a
  schedule run out); sparse series (evals, logged on fewer than 1 row in `SPARSE_RATIO` of the densest)
  and series with too few points to have a band count as material at any new value.

Anything else gives a full check, with the reason. The bands are those of the raw series as the log writes
them, so the test needs neither the alias table nor the canonical table. `assessor watch --full` turns
holding off. This module imports only the standard library and pydantic; numpy only to build a summary,
which happens after a full check, when it is loaded anyway.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from assessor.judge.models import Decision

if TYPE_CHECKING:
    from assessor.ingest.cache import TailedReading
    from assessor.run import Run

HOLD_SHARE = 0.01
HOLD_MIN_STEPS = 1_000
POINT_BAND = 4.0
MEAN_BAND = 1.5
SPARSE_RATIO = 5
MIN_POINTS = 20  # fewer points than this: no band, any new value is material
_WINDOW_SHARE = 20  # the recent window: the last 1/20 of a series' points ...
_WINDOW_MIN, _WINDOW_MAX = 50, 2_000  # ... within these bounds
_MAD_TO_SIGMA = 1.4826
_GUARD_BYTES = 64
_LAST_LINE_BYTES = 1 << 16
_MAX_ENTRIES = 20_000
_MAX_DEPTH = 10  # deeper than discovery looks (6), and into checkpoint folders, whose files it reads too
_NESTED_KEYS = ("data", "metrics", "logs")  # as the JSONL reader unwraps them (`jsonl._NESTED_KEYS`)
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".git", ".ipynb_checkpoints", "site-packages"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Band(_Model):
    """Where a series' new values may fall and still be "more of the same"."""

    level: float = Field(description="Median of the series' recent window.")
    noise: float = Field(description="Robust spread of the recent window (1.4826 MAD; its SD when the MAD is 0).")
    zero: bool = Field(description="Whether the recent window holds an exact 0.")
    material: bool = Field(False, description="Any new value is material: a sparse series (an eval) or too few "
                           "points for a band.")


class TailedLog(_Model):
    """One JSONL metric log as the full check left it."""

    path: str
    inode: int
    offset: int = Field(description="Byte offset just after the last complete record read.")
    guard: str = Field(description="Hex of the bytes just before `offset`: a log rewritten in place differs there.")
    step_key: str = Field(description="The flat key each record holds its step in.")
    nested: str | None = Field(description="`data` for verl's `{\"step\": N, \"data\": {...}}`; None for flat records.")
    last_step: int
    bands: dict[str, Band]


class FullCheck(_Model):
    """The compact summary of the last full check, which later checks compare what is new against."""

    step: int = Field(description="The run's last step at the full check.")
    at: float = Field(description="When it ran (seconds since the epoch).")
    decision: Decision
    tree: str = Field(description="Digest of every file and folder under the run directory but the tailed logs.")
    logs: list[TailedLog]
    planned_total_steps: int | None = None
    logging_interval: int | None = None


@dataclass(frozen=True)
class Held:
    """A check that held the last verdict: what it read and why that is immaterial."""

    new_steps: int
    last_step: int
    full_step: int

    def line(self) -> str:
        """`50 new steps to 100,050 read; within the bands of the full check at step 100,000; verdict held`."""
        steps = "1 new step" if self.new_steps == 1 else f"{self.new_steps:,} new steps"
        return (f"{steps} to {self.last_step:,} read; within the bands of the full check at step "
                f"{self.full_step:,}; verdict held")


def hold_limit(full: FullCheck) -> int:
    """How many new steps after the full check may still hold its verdict."""
    return int(HOLD_SHARE * full.step)


def try_hold(full: FullCheck, root: Path) -> Held | str | None:
    """Whether the last verdict still stands for what was appended since `full`.

    Returns:
        `Held` when everything new is immaterial; the reason (text) when something is material, for a full
        check; None when no new step was written (the caller checks in full, as without a summary).
    """
    entries = tree_entries(root)
    if entries is None or tree_digest(entries, [Path(log.path) for log in full.logs]) != full.tree:
        return "a file or folder beside the logs changed (a new checkpoint, a new or rewritten file)"
    last = None
    for log in full.logs:
        found = _read_appended(log)
        if isinstance(found, str):
            return found
        if found is not None:
            last = found if last is None else max(last, found)
    if last is None or last <= full.step:
        return None
    new_steps = last - full.step
    if new_steps >= max(1, hold_limit(full)):
        return (f"{new_steps:,} new steps since the full check at step {full.step:,} (a full check every "
                f"{HOLD_SHARE:.0%} of the run)")
    planned, interval = full.planned_total_steps, full.logging_interval or 1
    if planned and last >= planned - interval:
        return f"step {last:,} reaches the planned {planned:,}"
    return Held(new_steps=new_steps, last_step=last, full_step=full.step)


def _read_appended(log: TailedLog) -> int | str | None:
    """The last step appended to the log, checked against its bands; a reason when something is material."""
    path = Path(log.path)
    try:
        with path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            if stat.st_ino != log.inode or stat.st_size < log.offset:
                return f"{path.name} was rotated or rewritten"
            guard = bytes.fromhex(log.guard)
            handle.seek(log.offset - len(guard))
            if handle.read(len(guard)) != guard:
                return f"{path.name} was rewritten in place"
            appended = handle.read()
    except OSError as error:
        return f"{path.name} cannot be read ({error.strerror})"
    complete = appended[:appended.rfind(b"\n") + 1]  # a last line without its newline waits for the next check
    step = log.last_step
    values: dict[str, list[float]] = {}
    for raw in complete.split(b"\n"):
        if not raw.strip():
            continue
        record = _record(raw)
        if record is None:
            return f"{path.name}: an appended line is not a metric record like the others"
        flat = _flat(record, log.nested)
        if flat is None:
            return f"{path.name}: an appended record is laid out differently"
        new_step = flat.pop(log.step_key, None)
        if not _is_step(new_step) or new_step <= step:
            return f"{path.name}: the steps do not count up from {step} (a restart?)"
        step = new_step
        for key, value in flat.items():
            band = log.bands.get(key)
            if band is None:
                return f"{path.name}: a new metric {key!r} at step {step}"
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                return f"{path.name}: {key} is {value!r} at step {step} (NaN, inf or missing)"
            if band.material:
                return f"{path.name}: a new {key} value at step {step} (a sparse series, e.g. an eval)"
            if not abs(value - band.level) <= POINT_BAND * band.noise:
                return f"{path.name}: {key} = {value:g} at step {step} is outside its band " \
                       f"({band.level:g} +/- {POINT_BAND:g} x {band.noise:g})"
            if value == 0 and not band.zero:
                return f"{path.name}: {key} reached 0 at step {step}"
            values.setdefault(key, []).append(float(value))
    for key, new in values.items():
        band = log.bands[key]
        mean = sum(new) / len(new)
        # (a constant series was compared value by value above: its mean may differ from it by rounding)
        if band.noise > 0 and not abs(mean - band.level) <= MEAN_BAND * band.noise:
            return f"{path.name}: the new {key} values average {mean:g}, off its recent level {band.level:g}"
    return step if step > log.last_step else None


def _record(raw: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or not UTF-8
        return None
    return record if isinstance(record, dict) else None


def _flat(record: dict[str, Any], nested: str | None) -> dict[str, Any] | None:
    """The record's flat keys as the JSONL reader flattens it; None when it is laid out otherwise."""
    wrapper = next((k for k in _NESTED_KEYS if isinstance(record.get(k), dict)), None)
    if wrapper != nested:
        return None
    if nested is None:
        return _flatten(record, "")
    outer = {k: v for k, v in record.items() if k != nested}
    inner = _flatten(record[nested], "")
    if inner is None or any(isinstance(v, dict | list) for v in outer.values()):
        return None
    return {**outer, **inner}


def _flatten(record: dict[str, Any], prefix: str) -> dict[str, Any] | None:
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            inner = _flatten(value, f"{prefix}{key}/")
            if inner is None:
                return None
            flat.update(inner)
        elif isinstance(value, list):
            return None  # the reader leaves lists out; a record holding one is not held
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _is_step(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def tree_entries(root: Path) -> list[tuple[str, bytes]] | None:
    """Every file (size, mtime, inode) and folder (mtime) under `root`, by path; None when there are too many.

    Walks where discovery walks, deeper (checkpoint folders too); symlinked folders are not followed (nor are
    they by discovery), their targets are listed instead.
    """
    try:
        top = os.stat(root)
    except OSError:
        return None
    if not os.path.isdir(root):
        return [(os.fspath(root), _file_entry(top))]
    out: list[tuple[str, bytes]] = [("", f"d {top.st_mtime_ns}".encode())]
    stack: list[tuple[str, int]] = [(os.fspath(root), 0)]
    while stack:
        directory, depth = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return None
        for entry in entries:
            if len(out) > _MAX_ENTRIES:
                return None
            try:
                if entry.is_symlink():
                    out.append((entry.path, f"l {os.readlink(entry.path)}".encode(errors="replace")))
                    if entry.is_dir():
                        continue  # as discovery: a symlinked folder is not walked
                if entry.is_dir():
                    out.append((entry.path, f"d {entry.stat().st_mtime_ns}".encode()))
                    hidden = entry.name.startswith(".") and entry.name != ".hydra"
                    if depth < _MAX_DEPTH and entry.name not in _SKIP_DIRS and not hidden:
                        stack.append((entry.path, depth + 1))
                else:
                    out.append((entry.path, _file_entry(entry.stat())))
            except OSError:
                out.append((entry.path, b"?"))  # unreadable now: a change when it heals
    return out


def tree_digest(entries: Iterable[tuple[str, bytes]], tailed: Iterable[Path] = ()) -> str:
    """A digest of `tree_entries` but the `tailed` logs (which only grow, and are compared on their own)."""
    skip = {os.fspath(p) for p in tailed}
    digest = hashlib.blake2b(digest_size=16)
    for path, entry in entries:
        if path not in skip:
            digest.update(path.encode(errors="replace") + b"\0" + entry + b"\n")
    return digest.hexdigest()


def _file_entry(stat: os.stat_result) -> bytes:
    return f"f {stat.st_size} {stat.st_mtime_ns} {stat.st_ino}".encode()


# Building the summary after a full check ----------------------------------------------------------------------------


def summarize(run: Run, decision: Decision, run_state: str, tree: list[tuple[str, bytes]] | None,
              logs: Sequence[TailedReading], at: float) -> FullCheck | None:
    """The summary a later check holds the verdict against; None when this run cannot be held at all.

    `tree` must be listed before the run was read (`tree_entries`), so that whatever changes while the full check
    reads and diagnoses shows as a change at the next check.
    """
    last = run.last_step
    if tree is None or not logs or last is None or last < HOLD_MIN_STEPS or run_state != "live":
        return None
    tailed = []
    for log in logs:
        summary = _summarize_log(log)
        if summary is None:
            return None
        tailed.append(summary)
    digest = tree_digest(tree, [log.path for log in logs])
    return FullCheck(step=last, at=at, decision=decision, tree=digest, logs=tailed,
                     planned_total_steps=run.facts.planned_total_steps, logging_interval=run.facts.logging_interval)


def _summarize_log(log: TailedReading) -> TailedLog | None:
    import numpy as np

    frame = log.frame
    if log.steps_inferred is not None or frame.empty or log.offset < 1:
        return None
    last_record = _last_record(log.path, log.offset)
    if last_record is None:
        return None
    keys = {str(k) for k in frame["key"].cat.categories}
    nested = next((k for k in _NESTED_KEYS if isinstance(last_record.get(k), dict)), None)
    flat = _flat(last_record, nested)
    steps = frame["step"].to_numpy()
    last_step = int(steps.max())
    if flat is None:
        return None
    # The step key: the one key of the last record that is not a metric and holds the file's last step.
    candidates = [k for k, v in flat.items() if k not in keys and _is_step(v) and v == last_step]
    if len(candidates) != 1 or not set(flat) <= keys | set(candidates):
        return None
    codes = frame["key"].cat.codes.to_numpy()
    splits = frame["split"].cat.codes.to_numpy()
    values = frame["value"].to_numpy()
    # The raw frame is grouped by (key, split), in file order within each group.
    change = np.flatnonzero((codes[1:] != codes[:-1]) | (splits[1:] != splits[:-1])) + 1
    starts = np.concatenate(([0], change))
    ends = np.concatenate((change, [len(codes)]))
    groups: dict[int, list[tuple[int, int]]] = {}
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        groups.setdefault(int(codes[start]), []).append((start, end))
    counts = {code: sum(end - start for start, end in spans) for code, spans in groups.items()}
    densest = max(counts.values())
    categories = frame["key"].cat.categories
    bands: dict[str, Band] = {}
    for code, spans in groups.items():
        name = str(categories[code])
        if len(spans) > 1 or counts[code] < MIN_POINTS or counts[code] * SPARSE_RATIO < densest:
            bands[name] = Band(level=0.0, noise=0.0, zero=False, material=True)
            continue
        start, end = spans[0]
        window = values[max(start, end - min(_WINDOW_MAX, max(_WINDOW_MIN, (end - start) // _WINDOW_SHARE))):end]
        window = window[np.isfinite(window)]
        if len(window) < MIN_POINTS:
            bands[name] = Band(level=0.0, noise=0.0, zero=False, material=True)
            continue
        level = float(np.median(window))
        noise = _MAD_TO_SIGMA * float(np.median(np.abs(window - level)))
        if noise == 0.0:
            noise = float(np.std(window))
        bands[name] = Band(level=level, noise=noise, zero=bool((window == 0.0).any()))
    return TailedLog(path=os.fspath(log.path), inode=log.inode, offset=log.offset, guard=log.guard.hex(),
                     step_key=candidates[0], nested=nested, last_step=last_step, bands=bands)


def _last_record(path: Path, offset: int) -> dict[str, Any] | None:
    """The last complete record before `offset` in the log."""
    try:
        with path.open("rb") as handle:
            start = max(0, offset - _LAST_LINE_BYTES)
            handle.seek(start)
            text = handle.read(offset - start)
    except OSError:
        return None
    lines = [line for line in text.split(b"\n") if line.strip()]
    if not lines or (start > 0 and len(lines) < 2):
        return None
    return _record(lines[-1])


__all__ = [
    "HOLD_MIN_STEPS", "HOLD_SHARE", "MEAN_BAND", "POINT_BAND", "Band", "FullCheck", "Held",
    "TailedLog", "hold_limit", "summarize", "tree_digest", "tree_entries", "try_hold",
]
