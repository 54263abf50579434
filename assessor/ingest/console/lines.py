r"""The general metric line, read when no fixed dialect knows a line: a step marker and named numbers.

Hand-written training loops print their metrics in many layouts; a person reads them all the same way. A line
is a metric line when it carries

* a step marker: `step 12`, `step:12`, `step=12`, `Step 12/500`, `[Step 12/500]`, `global_step=12`,
  `grpo_step=12`, `iter 12`, `Iteration 12`, or `(12/500)` (MiniMind's `Epoch:[1/1](12/500)`), and
* two or more `name: number` or `name=number` pairs, separated by commas, pipes, semicolons, tabs, ` - ` or
  spaces, with numbers written as `0.38`, `-5e-04`, `12%`, `3.2s`, `nan` or `np.float64(0.3)`;

behind any logger prefix (`2026-01-01 12:00:00 INFO train: step=12 loss=0.031 reward=0.41`). A name may be
several words when its pair stands alone between separators (`Actor Loss: 0.0000, Avg Len: 129`); names are
emitted as written and normalised with every other key (`aliases.normal_form`). Counters (`Epoch: 1`,
`Microbatch: 3`) are neither metrics nor counted as pairs, and a line whose `name: value` pairs are mostly
words (a config print, prose) is not a metric line. Dates and clock times never read as numbers: a value must
end at a separator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assessor.ingest.base import RecordBuilder, parse_number
from assessor.ingest.facts import Fact

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_VALUE = (
    rf"(?P<v>(?:np|numpy)\.\w+\({_NUMBER}\)|{_NUMBER}|[-+]?(?:nan|NaN|inf|Inf))"
    r"(?P<unit>%|s|ms|sec|secs|GB|GiB|MB|MiB|tok/s|it/s|samples/s)?"
)
_END = r"(?=$|[\s,|;)\]}])"
_NAME = r"[A-Za-z_][\w./@-]*"
_PAIR = re.compile(rf"(?<![\w.])(?P<k>{_NAME})\s*[:=]\s*{_VALUE}{_END}")
_ALONE = re.compile(rf"(?P<k>(?:{_NAME}\s+){{0,3}}{_NAME})\s*[:=]\s*{_VALUE}\s*$")
_ANY_PAIR = re.compile(rf"(?<![\w.]){_NAME}\s*[:=]\s*[^\s,|;]+")
_SEGMENT = re.compile(r"\s*(?:[,|;\t]|\s-\s)\s*")

# Step markers, most explicit first. Each match names the step and, where printed, the planned total.
_MARKERS = (
    re.compile(r"(?<![\w/])global[_ ]step\s*[:=]?\s*(?P<i>\d+)(?!\.\d)", re.IGNORECASE),
    re.compile(r"(?<![\w/])step\s*[:=]?\s*(?P<i>\d+)(?!\.\d)(?:\s*/\s*(?P<t>\d+))?", re.IGNORECASE),
    re.compile(r"(?<![\w/])[A-Za-z][A-Za-z0-9]*_step\s*[:=]\s*(?P<i>\d+)(?!\.\d)", re.IGNORECASE),
    re.compile(r"(?<![\w/])iter(?:ation)?\s*[:=]?\s*(?P<i>\d+)(?!\.\d)(?:\s*/\s*(?P<t>\d+))?", re.IGNORECASE),
    re.compile(r"\(\s*(?P<i>\d+)\s*/\s*(?P<t>\d+)\s*\)"),
)
_FRACTION = _MARKERS[-1]
_EPOCH = re.compile(r"(?<![\w/])epoch\s*[:=]?\s*\[?\s*(?P<e>\d+)\s*/\s*(?P<n>\d+)\s*\]?", re.IGNORECASE)
_LEVELS = frozenset({"INFO", "DEBUG", "WARNING", "WARN", "ERROR", "CRITICAL", "TRACE", "NOTICE"})
# Counters printed beside the metrics: never curves, never counted towards the two pairs a line needs.
COUNTERS = frozenset({
    "step", "steps", "global_step", "epoch", "epochs", "iter", "iteration", "batch", "microbatch", "micro_batch",
    "minibatch", "mini_batch", "rank", "gpu", "device", "worker", "local_rank", "world_size", "total_steps",
    "max_steps",
})
_MIN_PAIRS = 2


@dataclass
class LineRecord:
    """One general metric line."""

    step: int
    values: dict[str, float]
    total: int | None = None
    epoch: int | None = None  # `Epoch [e/E]` before a within-epoch `(i/T)` marker
    epochs: int | None = None


def looks_like(text: str) -> bool:
    """Cheap test before the regexes (which cost more on lines that are not metric lines, the most of a log).

    Two or more pair separators, and `step`/`iter` followed by a number, or a `(i/T)` fraction.
    """
    if text.count(":") + text.count("=") < _MIN_PAIRS:
        return False
    low = text.lower()
    for word in ("step", "iter"):
        at = low.find(word)
        while at >= 0:
            end = at + len(word)
            while end < len(low) and (low[end].isalpha() or low[end] == "_"):  # `iteration`
                end += 1
            while end < len(low) and low[end] in " :=\t[":
                end += 1
            if end < len(low) and low[end].isdigit():
                return True
            at = low.find(word, at + 1)
    return "(" in text and _FRACTION.search(text) is not None


def parse_line(text: str) -> LineRecord | None:
    """The record of a general metric line (see the module docstring), else None."""
    marker = None
    for pattern in _MARKERS:
        marker = pattern.search(text)
        if marker is not None:
            break
    if marker is None:
        return None
    epoch = _EPOCH.search(text) if marker.re is _MARKERS[-1] else None
    spans = sorted(m.span() for m in (marker, epoch) if m is not None)
    rest = text
    for start, end in reversed(spans):
        rest = f"{rest[:start]} | {rest[end:]}"
    values, words = _pairs(rest)
    metrics = {k: v for k, v in values.items() if k.lower().replace(" ", "_") not in COUNTERS}
    if len(metrics) < _MIN_PAIRS or len(values) * 2 < words:
        return None
    total = int(marker["t"]) if "t" in marker.groupdict() and marker["t"] else None
    return LineRecord(
        int(marker["i"]), metrics, total,
        int(epoch["e"]) if epoch is not None else None, int(epoch["n"]) if epoch is not None else None,
    )


def _pairs(text: str) -> tuple[dict[str, float], int]:
    """The numeric pairs of a line without its marker, and how many `name: anything` pairs it holds at all."""
    values: dict[str, float] = {}
    words = 0
    for segment in _SEGMENT.split(text):
        if not segment:
            continue
        found = list(_PAIR.finditer(segment))
        words += max(len(_ANY_PAIR.findall(segment)), len(found))
        if len(found) == 1:
            alone = _ALONE.search(segment)
            if alone is not None:
                found_name = _name(alone["k"])
                number = _number(alone["v"])
                if found_name and number is not None:
                    values[found_name] = number
                continue
        for pair in found:
            number = _number(pair["v"])
            if number is not None:
                values[pair["k"]] = number
    return values, words


def _name(raw: str) -> str:
    """A multi-word name without the logger's level word before it (`INFO Reward` is `Reward`)."""
    parts = raw.split()
    while len(parts) > 1 and parts[0].upper() in _LEVELS:
        parts.pop(0)
    return " ".join(parts)


def _number(raw: str) -> float | None:
    return parse_number(raw)


def read_lines(name: str, records: list[LineRecord], builder: RecordBuilder, facts: dict[str, Fact]) -> list[int]:
    """General metric lines into rows. Returns the train steps.

    A within-epoch `(i/T)` counter after `Epoch [e/E]` restarts every epoch: its step is `(e - 1) * T + i`
    (`e * T + i` when the log counts epochs from 0).
    """
    from_zero = any(r.epoch == 0 for r in records)
    steps = []
    for record in records:
        step = record.step
        if record.epoch is not None and record.total:
            step += (record.epoch if from_zero else max(record.epoch - 1, 0)) * record.total
        builder.add_row(step, record.values)
        steps.append(step)
    last = records[-1]
    if last.total:
        epochs = last.epochs if last.epoch is not None and last.epochs else 1
        facts["planned_total_steps"] = (last.total * epochs, f"{name}: the step counter's total (i/{last.total})")
    return steps
