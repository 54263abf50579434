"""HF/TRL `trainer_state.json`, and JSON files holding the same `log_history` records.

`log_history` is a list of flat dicts: training rows, separate `eval_*` rows that share a step with a
training row, and one end-of-training summary row. A checkpoint's copy stops at its own step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData, as_int

_SUMMARY_KEYS = frozenset({
    "train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos", "train_loss",
})
_AXIS_KEYS = frozenset({"step"})
# Keys only TRL's RL trainers log; plain HF Trainer runs have loss/grad_norm/learning_rate only.
_TRL_HINTS = ("reward", "rewards/", "completions/", "completion_length", "kl", "frac_reward_zero_std", "logps/")


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
        return text.startswith(b"[") and b"{" in text[:64] or b'"log_history"' in head

    def read(self, path: Path) -> SourceData:
        """Read one file (see the module docstring)."""
        warnings: list[str] = []
        try:
            with path.open("rb") as handle:
                document = json.load(handle)
        except json.JSONDecodeError as error:
            document = _salvage(path, error, warnings)
        except OSError as error:
            raise UnreadableSourceError(f"{path}: cannot be read ({error.strerror}); check its permissions") from error

        state: dict[str, Any] = {}
        if isinstance(document, dict) and isinstance(document.get("log_history"), list):
            state, history = document, document["log_history"]
            fmt = "trl_state"
        elif isinstance(document, list):
            history, fmt = document, "hf_log_list"
        else:
            raise UnreadableSourceError(
                f"{path}: no `log_history` list in this JSON; expected an HF/TRL trainer_state.json"
            )
        builder = RecordBuilder()
        facts: dict[str, tuple[Any, str]] = {}
        interval = as_int(state.get("logging_steps"))
        rows = 0
        for index, entry in enumerate(history):
            if not isinstance(entry, dict):
                continue
            step = entry.get("step")
            if not isinstance(step, int):
                step = (index + 1) * (interval or 1)
            if _SUMMARY_KEYS.intersection(entry) and not set(entry) - _SUMMARY_KEYS - {"step", "epoch"}:
                runtime = entry.get("train_runtime")
                if runtime is not None:
                    facts["train_runtime_s"] = (runtime, f"{path.name}: train_runtime")
                continue
            builder.add_row(step, entry, skip=_AXIS_KEYS)
            rows += 1
        if rows == 0:
            raise UnreadableSourceError(
                f"{path}: `log_history` is empty (no step has been logged yet); assess again after the first "
                "logging step"
            )
        frame = builder.build()
        origin = path.name
        for fact, key in (("planned_total_steps", "max_steps"), ("logging_interval", "logging_steps")):
            value = as_int(state.get(key))
            if value and value > 0:
                facts[fact] = (value, f"{origin}: {key}")
        keys = [str(k) for k in frame["key"].cat.categories]
        is_trl = any(k.startswith(_TRL_HINTS) for k in keys)
        facts["framework"] = ("trl" if is_trl else "hf", f"{origin}: metric keys")
        notes = []
        if builder.non_numeric:
            warnings.append(f"{path.name}: non-numeric values ignored for {sorted(builder.non_numeric)}")
        best = state.get("best_model_checkpoint")
        if best:
            notes.append(f"the trainer marks {best} as its best checkpoint (by `metric_for_best_model`)")
        return SourceData(path=path, format=fmt, frame=frame, facts=facts, warnings=warnings, notes=notes)


def _salvage(path: Path, error: json.JSONDecodeError, warnings: list[str]) -> Any:
    """Read the complete entries of a half-written file (a run still writing, or a crash mid-save)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    start = text.find('"log_history"')
    if start < 0 and text.lstrip().startswith("["):
        start = text.find("[")
    else:
        start = text.find("[", start) if start >= 0 else -1
    if start < 0:
        raise UnreadableSourceError(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno}) and no log entries to recover; "
            "if the run is saving right now, try again in a minute"
        ) from error
    decoder = json.JSONDecoder()
    history: list[Any] = []
    position = start + 1
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text) or text[position] != "{":
            break
        try:
            entry, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            break
        history.append(entry)
    if not history:
        raise UnreadableSourceError(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno}) and no complete log entry in it; "
            "if the run is saving right now, try again in a minute"
        ) from error
    warnings.append(
        f"{path.name}: file is incomplete (the run may still be writing it); read the {len(history)} complete "
        "log entries"
    )
    return {"log_history": history}


READER = TrlStateReader()
