r"""Console and nohup logs: metrics printed to stdout/stderr by the training script.

Four fixed line formats ("dialects") are understood, then two general ones; a file normally holds one, and the
one with the most records wins:

* `console_trl`: the HF Trainer / TRL log dicts, `{'loss': 0.0126, 'grad_norm': ...}` (values may be
  strings). They carry no step, so steps come from the trainer's tqdm bar (see `trl.assign_trl_steps`).
* `console_verl`: verl's console logger, `step:N - key:value - key:value` (Ray prefixes, ANSI colours,
  `np.float64(...)` wrappers).
* `console_openrlhf`: `✨ Global step N: {...}` and `Evaluation completed ..., eval_metrics: {...}`.
* `console_steps`: `[Step i/T] key=value ...` (reasoning-from-scratch) and `step N: key=value, ...`.
* `console_lines`: any other line with a step marker and two or more named numbers, behind any logger prefix
  (`Epoch:[1/1](12/500), Reward: 0.38, Actor Loss: 0.0000`; see `lines`). Read where the fixed dialects
  read nothing.
* `console_table`: a progress table printed as text (`Step | Training Loss | reward`, TAB- or space-aligned;
  see `assessor.ingest.text_tables`); the last one printed is read.

The file is streamed one segment at a time, split on both newlines and carriage returns (tqdm redraws
its bar with `\r`), so multi-GB logs full of vLLM/Ray output stay cheap. Keys are emitted raw; canonical
names are applied later by `assessor.ingest.normalize`.

This module holds the reader (`READER`) and `read_scan`, which turns a finished pass into a source (notebooks
use it for the text of their output cells); the pass over the file is `scan.Scan`, with tqdm bars in `bars`,
TRL dicts and their steps in `trl`, the verl / OpenRLHF / steps lines in `dialects`, the general line in
`lines` and facts from the top of the log in `head`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData
from assessor.ingest.console.dialects import read_openrlhf, read_steps, read_verl
from assessor.ingest.console.lines import read_lines
from assessor.ingest.console.scan import Scan
from assessor.ingest.console.trl import read_trl
from assessor.ingest.facts import Fact
from assessor.ingest.tables import RowTable

TEXT_SUFFIXES = frozenset({".log", ".txt", ".out", ".err"})
TEXT_NAMES = frozenset({"stdout", "stderr", "output", "console", "train_log"})

UNDERSTOOD_FORMATS = (
    "understood line formats: TRL/HF dicts \"{'loss': ...}\", verl \"step:N - key:value - ...\", "
    "OpenRLHF \"Global step N: {...}\", \"[Step i/T] key=value ...\" or \"step N: key=value, ...\", any line "
    "with a step marker and two or more \"name: number\" pairs, or a table with a Step column"
)


class ConsoleReader:
    """Reads console / nohup logs (see the module docstring for the formats)."""

    name = "console"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for `.log/.txt/.out/.err` files (and `nohup.out`-like names) whose first bytes are text."""
        name = path.name.lower()
        suffix_ok = (
            path.suffix.lower() in TEXT_SUFFIXES
            or name.startswith("nohup")
            or name in TEXT_NAMES
            or re.search(r"\.(?:log|out|txt)\.\d+$", name) is not None
        )
        return suffix_ok and _is_text(head)

    def read(self, path: Path) -> SourceData:
        """Read one console log; raise `UnreadableSourceError` when it holds no metric lines."""
        scan = Scan(path.name)
        try:
            # Universal newlines split on "\n", "\r\n" and a bare "\r" (tqdm), streamed line by line.
            with path.open(encoding="utf-8", errors="replace") as handle:
                for raw in handle:
                    terminated = raw.endswith("\n")
                    scan.feed(raw[:-1] if terminated else raw, terminated)
        except OSError as exc:
            raise UnreadableSourceError(f"{path}: cannot read this log ({exc}).") from exc
        scan.finish()
        return read_scan(path, scan)


def read_scan(path: Path, scan: Scan) -> SourceData:
    """The source a finished pass over a log found; raise `UnreadableSourceError` when it holds no metrics."""
    # Fixed dialects first on a tie: they know their lines' meaning, the general ones only their shape.
    counts = {
        "console_trl": sum(d.kind != "summary" for d in scan.trl),
        "console_verl": len(scan.verl),
        "console_openrlhf": len(scan.openrlhf),
        "console_steps": len(scan.steps),
        "console_lines": len(scan.lines),
        "console_table": len(scan.tables.tables[-1].rows) if scan.tables.tables else 0,
    }
    dialect = max(counts, key=lambda k: counts[k])
    if counts[dialect] == 0:
        raise UnreadableSourceError(
            f"{path}: no training metrics found in this log ({UNDERSTOOD_FORMATS})."
        )

    builder = RecordBuilder()
    facts: dict[str, Fact] = {}
    notes: list[str] = []
    inferred: str | None = None
    if dialect == "console_table":
        frame, train_steps = _read_table(scan, notes)
    else:
        if dialect == "console_trl":
            train_steps = read_trl(scan.name, scan.trl, scan.bars, scan.head, builder, facts, notes)
            if "one dict per step assumed" in notes[-1]:
                inferred = notes[-1]
        elif dialect == "console_verl":
            train_steps = read_verl(scan.name, scan.verl, scan.head.verl_total, builder, facts,
                                    bar_total=scan.bars.training_total, ended=scan.final_validation)
        elif dialect == "console_openrlhf":
            train_steps = read_openrlhf(scan.name, scan.openrlhf, builder, facts)
        elif dialect == "console_steps":
            train_steps = read_steps(scan.name, scan.steps, builder, facts)
        else:
            train_steps = read_lines(scan.name, scan.lines, builder, facts)
            notes.append("read by the general metric-line reader (a step marker and named numbers on each line)")
        frame = builder.build()
    if frame.empty:
        raise UnreadableSourceError(
            f"{path}: metric lines were found but none held numbers ({UNDERSTOOD_FORMATS})."
        )

    facts = scan.head.merge(facts)
    if "logging_interval" not in facts:
        interval = _constant_spacing(train_steps)
        if interval is not None:
            facts["logging_interval"] = (interval, f"{path.name}: spacing of the logged steps")

    warnings: list[str] = []
    if scan.last.malformed:
        warnings.append(f"{path.name}: last line is incomplete (the run may still be writing); ignored")
    if scan.malformed > 0:
        warnings.append(
            f"{path.name}: {scan.malformed} line(s) looked like metric records but did not parse; skipped"
        )
    if builder.non_numeric:
        keys = ", ".join(sorted(builder.non_numeric))
        notes.append(f"non-numeric values read as missing for: {keys}")
    others = [f"{n} {k}" for k, n in counts.items() if k != dialect and n]
    if others:
        notes.append(f"also saw {', '.join(others)} record(s) of other formats; ignored")
    return SourceData(path=path, format=dialect, frame=frame, facts=dict(facts), warnings=warnings,
                      notes=notes, steps_inferred=inferred)


def _read_table(scan: Scan, notes: list[str]) -> tuple[pd.DataFrame, list[int]]:
    """The last progress table printed as text (a table printed again at the end is the complete one)."""
    table = RowTable(scan.name)
    for row in scan.tables.tables[-1].records():
        table.add(row)
    frame = table.build().frame
    printed = len(scan.tables.tables)
    notes.append(f"read the progress table printed as text (the last of {printed})" if printed > 1
                 else "read the progress table printed as text")
    return frame, sorted({int(s) for s in frame["step"]})


def _constant_spacing(steps: Iterable[int]) -> int | None:
    unique = np.unique(np.fromiter(steps, dtype=np.int64))
    if len(unique) < 3:
        return None
    gaps = np.unique(np.diff(unique))
    return int(gaps[0]) if len(gaps) == 1 and gaps[0] > 0 else None


def _is_text(head: bytes) -> bool:
    """Whether the first bytes look like a text log (no NULs, valid UTF-8 apart from a cut last char)."""
    if not head or b"\x00" in head:
        return False
    text = head.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    return bad <= max(3, len(text) // 100)


READER = ConsoleReader()
