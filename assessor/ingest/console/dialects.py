"""The one-line dialects: verl, OpenRLHF and `[Step i/T]` lines, and the rows they make.

* `console_verl`: verl's console logger, `step:N - key:value - key:value` (Ray prefixes, ANSI colours,
  `np.float64(...)` wrappers).
* `console_openrlhf`: `✨ Global step N: {...}` and `Evaluation completed ..., eval_metrics: {...}`.
* `console_steps`: `[Step i/T] key=value ...` (reasoning-from-scratch) and `step N: key=value, ...`.

The `parse_*` functions read one cleaned segment and keep no state (the scanner keeps what spans lines:
OpenRLHF's last train step and whether an eval banner was just printed); the `read_*` functions turn a
dialect's records into rows and facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from assessor.ingest.base import RecordBuilder, parse_number
from assessor.ingest.facts import Fact

_VERL = re.compile(r"(?<![\w/.-])step:(?P<step>\d+) - (?P<rest>.*)$")
_OPENRLHF = re.compile(r"Global step (?P<step>\d+)(?: \[[^\]]*\])?: (?P<dict>\{.*)$")
_OPENRLHF_EVAL = re.compile(r"eval_metrics: (?P<dict>\{.*)$")
_OPENRLHF_EVAL_STEP = re.compile(r"global_step (?P<step>\d+)")
_STEPS = re.compile(
    r"^\s*\[?\s*step\s*[:=]?\s*(?P<step>\d+)\s*(?:/\s*(?P<total>\d+))?\s*\]?\s*[:|,-]?\s*(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_PAIR = r"[A-Za-z_][\w./@-]*\s*=\s*[^\s,|;=]+"
_PAIRS_ONLY = re.compile(rf"^(?:{_PAIR})(?:[\s,|;]+(?:{_PAIR}))*[\s,|;]*$")
_PAIR_ITEM = re.compile(r"(?P<k>[A-Za-z_][\w./@-]*)\s*=\s*(?P<v>[^\s,|;=]+)")


@dataclass
class Record:
    """One parsed line of the verl, OpenRLHF or steps dialects."""

    step: int
    values: dict[str, Any]
    split: str | None = None
    total: int | None = None


# ---------------------------------------------------------------------- verl
def parse_verl(text: str) -> tuple[int, dict[str, Any], bool] | None:
    """Step, values and completeness of a `step:N - key:value - ...` line; None when the text holds none."""
    match = _VERL.search(text)
    if match is None:
        return None
    values: dict[str, Any] = {}
    complete = True
    for item in match["rest"].strip().split(" - "):
        key, sep, value = item.rpartition(":")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            complete = False  # a cut-off item: the line is incomplete
            continue
        number = parse_number(value)
        values[key] = value if number is None else number
    return int(match["step"]), values, complete


def read_verl(
    name: str, records: list[Record], total: int | None, builder: RecordBuilder, facts: dict[str, Fact],
    bar_total: int | None = None, ended: bool = False,
) -> list[int]:
    """The verl records as rows. Returns the train steps.

    `total` is from the log's 'Total steps' line, else `bar_total` from its trainer's 'Training Progress' bar;
    `ended`: the log holds the 'Final validation metrics' verl prints after the last step.
    """
    for record in records:
        builder.add_row(record.step, record.values)
    facts["framework"] = ("verl", f"{name}: verl console lines (step:N - key:value)")
    if total is not None:
        facts["planned_total_steps"] = (total, f"{name}: 'Total steps' line")
    elif bar_total is not None:
        facts["planned_total_steps"] = (bar_total, f"{name}: the 'Training Progress' bar's total")
    if ended:
        facts["training_ended"] = (True, f"{name}: 'Final validation metrics' line (printed after the last step)")
    return [r.step for r in records]


# ---------------------------------------------------------------------- OpenRLHF
def parse_openrlhf(text: str, after_eval_banner: bool, last_step: int | None) -> tuple[int, str, str | None] | None:
    """Step, printed dict and split (None for train, "eval") of an OpenRLHF line; None when it is not one.

    An `eval_metrics: {...}` dict counts only right after an "Evaluation completed" message (on its line or
    just before it); it takes the `global_step` printed with it, else the last train step seen.
    """
    match = _OPENRLHF.search(text)
    if match is not None:
        return int(match["step"]), match["dict"], None
    match = _OPENRLHF_EVAL.search(text)
    if match is None or not (after_eval_banner or "Evaluation completed" in text):
        return None
    in_line = _OPENRLHF_EVAL_STEP.search(text)
    if in_line is not None:
        step = int(in_line["step"])
    elif last_step is not None:
        step = last_step
    else:
        step = 0
    return step, match["dict"], "eval"


def read_openrlhf(name: str, records: list[Record], builder: RecordBuilder, facts: dict[str, Fact]) -> list[int]:
    """OpenRLHF records into rows (eval dicts in the eval split). Returns the train steps."""
    for record in records:
        builder.add_row(record.step, record.values, record.split, skip=("generated_samples",))
    facts["framework"] = ("openrlhf", f"{name}: OpenRLHF 'Global step N' lines")
    return [r.step for r in records if r.split is None]


# ---------------------------------------------------------------------- [Step i/T] key=value
def parse_steps(text: str) -> tuple[Record | None, bool]:
    """The record of a `[Step i/T] key=value ...` or `step N: key=value, ...` line, else None.

    The flag says whether the text starts like such a line but its pairs do not parse while it holds an
    `=`: a line cut off mid-pair, when no newline follows it.
    """
    match = _STEPS.match(text)
    if match is None:
        return None, False
    if not _PAIRS_ONLY.match(match["rest"]):
        return None, "=" in match["rest"]
    values: dict[str, Any] = {}
    for pair in _PAIR_ITEM.finditer(match["rest"]):
        raw = pair["v"]
        number = parse_number(raw)
        values[pair["k"]] = raw if number is None else number
    if sum(isinstance(v, float) for v in values.values()) * 2 < len(values):
        return None, False  # mostly words: prose that happens to contain "step 3: a=b"
    total = int(match["total"]) if match["total"] else None
    return Record(int(match["step"]), values, total=total), False


def read_steps(name: str, records: list[Record], builder: RecordBuilder, facts: dict[str, Fact]) -> list[int]:
    """`[Step i/T]` records into rows; T of the last line is the planned total. Returns the train steps."""
    for record in records:
        builder.add_row(record.step, record.values)
    total = next((r.total for r in reversed(records) if r.total is not None), None)
    if total is not None:
        facts["planned_total_steps"] = (total, f"{name}: [Step i/T] lines (T of the last line)")
    keys = set(records[-1].values)
    if {"reward_avg", "avg_response_len"} <= keys:
        facts["framework"] = ("reasoning_from_scratch", f"{name}: reasoning-from-scratch metric lines")
    return [r.step for r in records]
