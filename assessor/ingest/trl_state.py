"""HF/TRL `trainer_state.json`, and JSON files holding the same `log_history` records.

`log_history` is a list of flat dicts: training rows, separate `eval_*` rows that share a step with a
training row, and one end-of-training summary row. A checkpoint's copy stops at its own step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData, as_int
from assessor.ingest.nesting import TooDeepError, loads, value_end

_SUMMARY_KEYS = frozenset({
    "train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos", "train_loss",
})
# Keys only TRL's RL trainers log; plain HF Trainer runs have loss/grad_norm/learning_rate only.
# Keys only TRL trainers add to the HF log: GRPO/RLOO/DPO, and the PPO-style trainers (PPO, RLOO < v0.22).
_TRL_HINTS = (
    "reward", "rewards/", "completions/", "completion_length", "kl", "frac_reward_zero_std", "logps/", "objective/",
    "policy/approxkl_avg", "policy/clipfrac_avg", "loss/policy_avg",
)
_CHUNK = 1 << 22
_SEPARATORS = re.compile(r"[\s,]*")


class TrlStateReader:
    """Reads `trainer_state.json` and JSON lists of TRL log dicts."""

    name = "trl_state"

    def sniff(self, path: Path, head: bytes) -> bool:
        """`trainer_state.json`, or a `.json` file that is a list of log dicts or holds `log_history`."""
        if path.name == "trainer_state.json":
            return True
        if path.suffix != ".json":
            return False
        text = head.lstrip()
        # A list of rows without HF's `step` (an event log keyed by `grpo_step`) is left to the `json` reader.
        return (text.startswith(b"[") and b"{" in text[:64] and b'"step"' in head) or b'"log_history"' in head

    def read(self, path: Path) -> SourceData:
        """Read one file (see the module docstring)."""
        warnings: list[str] = []
        builder = RecordBuilder()
        facts: dict[str, tuple[Any, str]] = {}
        rows = 0
        try:
            stream = _HistoryStream(path, warnings)
            for index, entry in enumerate(stream):
                if not isinstance(entry, dict):
                    continue
                step = entry.get("step")
                if not isinstance(step, int):
                    step = index + 1
                if _is_summary(entry):
                    if entry.get("train_runtime") is not None:
                        facts["train_runtime_s"] = (entry["train_runtime"], f"{path.name}: train_runtime")
                    continue
                builder.add_row(step, entry, skip=("step",))
                rows += 1
        except OSError as error:
            raise UnreadableSourceError(f"{path}: cannot be read ({error.strerror}); check its permissions") from error
        if rows == 0 and stream.too_deep:
            raise UnreadableSourceError(f"{path}: every log entry is nested too deeply to read; not a "
                                        "trainer_state.json a trainer wrote")
        if rows == 0:
            raise UnreadableSourceError(
                f"{path}: `log_history` is empty (no step has been logged yet); assess again after the first "
                "logging step"
            )
        frame = builder.build()
        state = stream.state
        for fact, key in (("planned_total_steps", "max_steps"), ("logging_interval", "logging_steps")):
            value = as_int(state.get(key))
            if value and value > 0:
                facts[fact] = (value, f"{path.name}: {key}")
        keys = [str(k) for k in frame["key"].cat.categories]
        is_trl = any(k.startswith(_TRL_HINTS) for k in keys)
        facts["framework"] = ("trl" if is_trl else "hf", f"{path.name}: metric keys")
        notes = []
        if builder.non_numeric:
            warnings.append(f"{path.name}: non-numeric values ignored for {sorted(builder.non_numeric)}")
        best = state.get("best_model_checkpoint")
        if best:
            notes.append(f"the trainer marks {best} as its best checkpoint (by `metric_for_best_model`)")
        return SourceData(path=path, format=stream.format, frame=frame, facts=facts, warnings=warnings, notes=notes)


def _is_summary(entry: dict[str, Any]) -> bool:
    """The end-of-training row: run totals, no curves."""
    return ("train_runtime" in entry or "train_loss" in entry) and not set(entry) - _SUMMARY_KEYS - {"step", "epoch"}


class _HistoryStream:
    """Iterates `log_history` entries; `state` holds the other top-level fields once iteration ends.

    Entries are decoded one at a time by the C decoder from a sliding 4 MiB window, so a 200 MB file never
    sits in memory as one string or one tree of dicts (`json.load` needs about 5.7x the file size). A file
    cut short (a run saving right now, a crash) yields its complete entries and a warning; an entry nested
    past the parser's limit is stepped over and counted (entries are read flat, so shallower nesting is harmless).
    """

    def __init__(self, path: Path, warnings: list[str]) -> None:
        self.path = path
        self.warnings = warnings
        self.state: dict[str, Any] = {}
        self.too_deep = 0  # entries stepped over
        self._handle: IO[str] = path.open(encoding="utf-8", errors="replace")
        self._buffer = self._handle.read(_CHUNK)
        marker = self._buffer.find('"log_history"')
        while marker < 0 and not self._buffer.lstrip().startswith("["):
            more = self._handle.read(_CHUNK)  # a state whose leading fields exceed one window (rare)
            if not more:
                break
            self._buffer += more
            marker = self._buffer.find('"log_history"')
        self._prefix: str | None
        if self._buffer.lstrip().startswith("["):
            self._prefix, self.format = None, "hf_log_list"
            self._start = self._buffer.find("[") + 1
        elif marker >= 0:
            self._prefix, self.format = self._buffer[:marker], "trl_state"
            self._start = self._buffer.find("[", marker) + 1
        else:
            self._handle.close()
            raise UnreadableSourceError(_not_a_state_message(path, self._buffer))

    def __iter__(self) -> Iterator[Any]:
        decode = json.JSONDecoder().raw_decode
        buffer, position, count, complete = self._buffer, self._start, 0, False
        self._buffer = ""
        with self._handle as handle:
            while True:
                match = _SEPARATORS.match(buffer, position)
                position = match.end() if match else position
                if position >= len(buffer):  # nothing left in the window (a closing `]` may be its last character)
                    more = handle.read(_CHUNK)
                    if not more:
                        break
                    buffer, position = buffer[position:] + more, 0
                    continue
                if buffer[position] == "]":
                    complete = True
                    self.state = _state_without_history(self._prefix, buffer[position + 1:] + handle.read())
                    break
                try:
                    entry, position = decode(buffer, position)
                except RecursionError:  # past the parser's limit; an entry that parses is only read flat
                    end = value_end(buffer, position)
                    if end is not None:
                        self.too_deep, position = self.too_deep + 1, end
                        continue
                    more = handle.read(_CHUNK)
                    if not more:
                        break
                    buffer, position = buffer[position:] + more, 0
                    continue
                except json.JSONDecodeError:
                    more = handle.read(_CHUNK)  # the entry runs past the window, or the file ends mid-entry
                    if not more:
                        break
                    buffer, position = buffer[position:] + more, 0
                    continue
                count += 1
                yield entry
        if self.too_deep:
            self.warnings.append(f"{self.path.name}: {self.too_deep} log entries nested too deeply to read "
                                 "were skipped")
        if complete:
            return
        self.state = _state_without_history(self._prefix, "}")
        if not count and not self.too_deep:
            raise UnreadableSourceError(
                f"{self.path}: not valid JSON and no complete log entry in it; if the run is saving right now, "
                "try again in a minute"
            )
        self.warnings.append(
            f"{self.path.name}: file is incomplete (the run may still be writing it); read the {count} complete "
            "log entries"
        )


def _state_without_history(prefix: str | None, suffix: str) -> dict[str, Any]:
    if prefix is None:
        return {}
    try:
        document = loads(prefix + '"log_history": null' + suffix)
    except ValueError:  # not JSON, or nested too deeply: the fields beside the history are not read
        return {}
    return document if isinstance(document, dict) else {}


def _not_a_state_message(path: Path, text: str) -> str:
    try:
        document = loads(text)
    except json.JSONDecodeError as error:
        return (
            f"{path}: not valid JSON ({error.msg} at line {error.lineno}) and no log entries to recover; "
            "if the run is saving right now, try again in a minute"
        )
    except TooDeepError as error:
        return f"{path}: JSON {error}; not a trainer_state.json"
    if isinstance(document, dict):
        return f"{path}: no `log_history` list in this JSON; expected an HF/TRL trainer_state.json"
    return f"{path}: not a trainer_state.json or a JSON list of log entries"


READER = TrlStateReader()
