"""JSON-lines metric logs: verl's file logger, OpenRLHF-style dumps, generic `{"step": N, ...}` lines.

verl writes `{"step": N, "data": {...}}` (NaN as null, and it overwrites the file on restart); others
write flat objects with a step key. NaN may appear as null, "NaN" or a bare NaN token.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData, empty_raw_frame, parse_number
from assessor.run import Sample

# Most trustworthy first: the trainer's own step beats W&B's `_step` (old clients' wandb-history.jsonl), which
# counts log calls and keeps counting after a resume.
_STEP_KEYS = ("train/global_step", "trainer/global_step", "global_step", "step", "iteration", "iter", "it", "_step")
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
        """`.jsonl` files, or `.json`/`.log` files whose first line is a JSON object with a step."""
        if path.suffix == ".jsonl":
            return True
        first = head.split(b"\n", 1)[0].strip()
        return path.suffix in (".json", ".log", ".txt") and first.startswith(b"{") and first.endswith(b"}") \
            and any(f'"{k}"'.encode() in first for k in _STEP_KEYS)

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
        self.builder = RecordBuilder()
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
            step, metrics = _split_record(record)
            if step is None:
                step = self.rows + 1
            self.builder.add_row(step, metrics, skip=_STEP_KEYS)
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
        builder = self.builder
        if builder.non_numeric:
            warnings.append(f"{path.name}: non-numeric values ignored for {sorted(builder.non_numeric)[:8]}")
        facts: dict[str, tuple[Any, str]] = {}
        frame = builder.build()
        raw_keys = {str(k) for k in frame["key"].cat.categories}
        if any(k.startswith(("critic/score/", "actor/pg_loss", "timing_s/")) for k in raw_keys):
            facts["framework"] = ("verl", f"{path.name}: metric keys")
        return SourceData(path=path, format="jsonl", frame=frame, facts=facts, warnings=warnings)


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


def _split_record(record: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
    step: int | None = None
    for key in _STEP_KEYS:
        value = record.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            step = int(value)
            break
    for nested in _NESTED_KEYS:
        inner = record.get(nested)
        if isinstance(inner, dict):
            return step, _flatten(inner)
    return step, _flatten(record)


def _flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}/"))
        elif not isinstance(value, list):
            flat[f"{prefix}{key}"] = value
    return flat


READER = JsonlReader()
