"""JSON-lines metric logs: verl's file logger, OpenRLHF-style dumps, generic `{"step": N, ...}` lines.

verl writes `{"step": N, "data": {...}}` (NaN as null, and it overwrites the file on restart); others
write flat objects with a step key, or event logs whose rows of several types (`{"type": "rollout", ...}`,
`{"type": "eval", ...}`) share one step key such as `grpo_step` (see `assessor.ingest.tables`). NaN may appear
as null, "NaN" or a bare NaN token.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import SourceData, empty_raw_frame, parse_number
from assessor.ingest.tables import RowTable, step_rank
from assessor.run import Sample

# Rollout dumps (verl `rollout_data_dir/<step>.jsonl`, NeMo-RL `train_data_step<N>.jsonl`, generic): the text
# of a completion under one of these keys means the file holds samples, not metrics.
_COMPLETION_KEYS = ("output", "completion", "response", "generated_text", "content")
_PROMPT_KEYS = ("input", "prompt", "question")
_REWARD_KEYS = ("score", "reward", "rewards")
SAMPLES_KEPT = 16
_DIGITS = re.compile(r"(\d+)(?!.*\d)")
_NESTED_KEYS = ("data", "metrics", "logs")


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
            handle = path.open(encoding="utf-8", errors="replace")
        except OSError as error:
            raise UnreadableSourceError(f"{path}: cannot be read ({error.strerror}); check its permissions") from error
        with handle:
            parse = JsonlParse(path)
            if parse.feed(handle) and parse.first_sample is not None:
                return _read_samples(path, handle, parse.first_sample)
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

    def feed(self, lines: Iterable[str]) -> bool:
        """Parse more lines; True when the file turned out to be a rollout dump (`first_sample` holds its start)."""
        for line in lines:
            self.last_line += 1
            text = line.strip()
            if not text:
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError:
                self.bad_lines.append(self.last_line)
                continue
            if not isinstance(record, dict):
                continue
            if self.rows == 0 and _is_sample(record):
                self.first_sample = record
                return True
            self.table.add(_flat_record(record))
            self.rows += 1
        return False

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


def _flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}/"))
        elif not isinstance(value, list):
            flat[f"{prefix}{key}"] = value
    return flat


READER = JsonlReader()
