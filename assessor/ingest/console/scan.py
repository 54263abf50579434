r"""The line scanner: one pass over a console log, segment by segment, collecting every dialect's records.

Each segment (text between two newlines or carriage returns) is cleaned of ANSI colours and Ray worker
prefixes; a tqdm bar update on it is recorded (`bars`) and cut off; the head of the log is read for facts
(`head`); the rest is offered to the one-line dialects (`dialects`) and, when it opens a printed dict, that
dict is reassembled over as many segments as it spans and read as a TRL metric dict (`trl`) or a printed
config. Lines that look like records but do not parse are counted, and a half-written last record is set
apart at the end (`Scan.finish`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from assessor.ingest.console import dialects, lines
from assessor.ingest.console.bars import Bars
from assessor.ingest.console.dialects import Record
from assessor.ingest.console.head import HeadFacts
from assessor.ingest.console.lines import LineRecord
from assessor.ingest.console.trl import TrlDict, looks_metric, resume_step, trl_dict
from assessor.ingest.text_tables import TableScan

# --- segment clean-up
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_RAY_PREFIX = re.compile(r"^\s*\([\w.:-]+ pid=\d+(?:, ip=[\w.:]+)?\)\s?")

# Values inside printed dicts that `ast.literal_eval` refuses: numpy/torch wrappers and bare nan/inf.
_DICT_WRAPPER = re.compile(
    r"\b(?:np|numpy)\.\w+\((?P<inner>[^()]*)\)|\btensor\((?P<tinner>[^,()]*)(?:,[^()]*)?\)"
)
_BARE_NONFINITE = re.compile(r"(?<=[:\[,(])(?P<ws>\s*)(?P<tok>-?inf|nan)(?=\s*[,}\])])")

# How far a printed dict may run over several segments (pprint'ed configs, or a dict split by a bar).
_PENDING_MAX_SEGMENTS = 5000
_PENDING_MAX_CHARS = 2_000_000
# Facts are read from the top of the log only (configs and banners come before training).
_HEAD_SEGMENTS = 100_000


@dataclass
class _Pending:
    """A printed dict that has not closed yet."""

    text: str
    tick: int
    source: str  # Ray prefix of the line that opened it ("" without one)
    segments: int = 1
    metric_like: bool = False


@dataclass
class LastSegment:
    """What the last non-empty segment produced, to judge a half-written last line at the end."""

    dialect: str | None = None  # dialect of the record this segment produced, if any
    malformed: bool = False  # looked like a metric record but did not parse
    counted: bool = False  # already counted in `Scan.malformed`
    terminated: bool = True


class Scan:
    """State of one pass over a log."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.segments = 0
        self.bars = Bars()
        self.trl: list[TrlDict] = []
        self.verl: list[Record] = []
        self.openrlhf: list[Record] = []
        self.steps: list[Record] = []
        self.lines: list[LineRecord] = []  # the general metric line, when no fixed dialect knows a line
        self.tables = TableScan()  # progress tables printed as text
        self.openrlhf_step: int | None = None
        self.recent_eval_banner = 0  # > 0 right after an "Evaluation completed" message
        self.pending: _Pending | None = None
        self.resumed_from: int | None = None  # step of a trainer resume message not yet followed by a dict
        self.malformed = 0
        self.last = LastSegment()
        self.head = HeadFacts(name)
        self.in_head = True  # before the first record: banners, commands and configs are printed here
        self.final_validation = False  # verl prints "Final validation metrics: {...}" once training has ended

    @property
    def records(self) -> int:
        """Records of all dialects so far."""
        return len(self.trl) + len(self.verl) + len(self.openrlhf) + len(self.steps) + len(self.lines)

    # ------------------------------------------------------------------ the per-segment loop
    def feed(self, raw: str, terminated: bool) -> None:
        """Process one segment (text between two newlines or carriage returns)."""
        self.segments += 1
        seg = _ANSI.sub("", raw) if "\x1b" in raw else raw
        source = ""
        if "pid=" in seg[:80]:
            prefix = _RAY_PREFIX.match(seg)
            if prefix is not None:
                source, seg = prefix[0].strip(), seg[prefix.end():]
        rest = seg.lstrip()
        if not rest:
            return
        last = self.last  # reused, not rebuilt: this loop runs once per line of a multi-GB log
        last.dialect, last.malformed, last.counted, last.terminated = None, False, False, terminated
        if self.recent_eval_banner:
            self.recent_eval_banner -= 1

        tail = seg  # what a dict left open on an earlier line continues with
        if "%|" in rest or "Completed |" in rest:  # cheap test before the bar regex
            tail = self.bars.update(rest)
            rest = tail.lstrip()
            if not rest:
                return
        if self.in_head:
            self.in_head = self.segments < _HEAD_SEGMENTS
            self.head.read(rest)
        if rest.startswith(("Final validation metrics", '"Final validation metrics')):
            self.final_validation = True
        if "global step" in rest:  # cheap test before the regex
            resumed = resume_step(rest)
            if resumed is not None:
                self.resumed_from = resumed

        produced = self._dialect_lines(rest)
        if produced:
            if self.tables.open:
                self.tables.finish()  # a dialect's line ends a printed table
        # A table's header names a step column and holds no `key=value` (the cheap test keeps this off most lines).
        elif (self.tables.open or (("tep" in rest or "TEP" in rest) and "=" not in rest and ": " not in rest)) \
                and self.tables.feed(rest):
            return
        if not produced and self.pending is None and not rest.startswith("{") and lines.looks_like(rest):
            record = lines.parse_line(rest)
            if record is not None:
                self._add(self.lines, record, "console_lines")
                produced = True
        if self.pending is not None:
            if produced:  # a real metric line: whatever was pending was not a dict
                self._drop_pending()
            elif source == self.pending.source:  # Ray interleaves other workers' lines; skip those
                self._continue_pending(tail)
                return
            else:
                return
        if not produced and rest.startswith("{"):
            self._start_dict(rest, source)

    def _dialect_lines(self, text: str) -> bool:
        """Try the one-line dialects; True when the segment produced a record."""
        if "step:" in text:
            verl = dialects.parse_verl(text)
            if verl is not None:
                return self._verl(*verl)
        if "lobal step" in text or "eval_metrics" in text:
            if "Evaluation completed" in text:
                self.recent_eval_banner = 2
            if self._openrlhf(text):
                return True
        elif "Evaluation completed" in text:
            self.recent_eval_banner = 2  # the eval dict may follow on the next line
        if "=" in text and ("tep" in text or "TEP" in text):
            return self._steps(text)
        return False

    # ------------------------------------------------------------------ the one-line dialects
    def _verl(self, step: int, values: dict[str, Any], complete: bool) -> bool:
        if not values or not complete:
            self._malformed()
            return not complete and bool(values)
        self._add(self.verl, Record(step, values), "console_verl")
        return True

    def _openrlhf(self, text: str) -> bool:
        line = dialects.parse_openrlhf(text, self.recent_eval_banner > 0, self.openrlhf_step)
        if line is None:
            return False
        step, printed, split = line
        if split is None:
            self.openrlhf_step = step
        else:
            self.recent_eval_banner = 0  # one eval dict per message
        parsed = _literal_dict(printed)
        if parsed is None:
            self._malformed()
            return True
        self._add(self.openrlhf, Record(step, parsed, split), "console_openrlhf")
        return True

    def _steps(self, text: str) -> bool:
        record, cut = dialects.parse_steps(text)
        if record is None:
            if cut:  # `[Step 7/10] loss=0.1 rew` with no newline after it: a line still being written
                self.last.malformed = not self.last.terminated
            return False
        self._add(self.steps, record, "console_steps")
        return True

    # ------------------------------------------------------------------ printed dicts (TRL, configs)
    def _start_dict(self, text: str, source: str) -> None:
        end = _balanced_end(text)
        if end is None:
            # Either a multi-line (pprint'ed) dict or one cut by a bar redraw / the end of the file.
            self.pending = _Pending(text, self.bars.ticks, source, metric_like=looks_metric(text))
            self.last.malformed = self.pending.metric_like
            return
        self._finish_dict(text[: end + 1], self.bars.ticks, metric_like=looks_metric(text))

    def _continue_pending(self, text: str) -> None:
        pending = self.pending
        assert pending is not None
        if text.startswith("{'"):
            # A new dict at the start of a line while the old one never closed: the old one is lost.
            self._drop_pending()
            self._start_dict(text, pending.source)
            return
        pending.text += text
        pending.segments += 1
        end = _balanced_end(pending.text)
        if end is not None:
            self.pending = None
            self._finish_dict(pending.text[: end + 1], pending.tick, pending.metric_like)
        elif pending.segments > _PENDING_MAX_SEGMENTS or len(pending.text) > _PENDING_MAX_CHARS:
            self._drop_pending()
        else:
            self.last.malformed = pending.metric_like

    def _drop_pending(self) -> None:
        if self.pending is not None and self.pending.metric_like:
            self.malformed += 1
        self.pending = None

    def _finish_dict(self, text: str, tick: int, metric_like: bool) -> None:
        parsed = _literal_dict(text)
        if parsed is None:
            if metric_like:
                self._malformed()
            return
        record = trl_dict(parsed, tick)
        if record is not None:
            record.resumed_from, self.resumed_from = self.resumed_from, None
            self._add(self.trl, record, "console_trl")
        elif self.records == 0:
            self.head.read_config(parsed)

    # ------------------------------------------------------------------ bookkeeping
    def _add(self, target: list[Any], record: Any, dialect: str) -> None:
        target.append(record)
        self.in_head = False
        self.last.dialect = dialect
        self.last.malformed = False

    def _malformed(self) -> None:
        self.malformed += 1
        self.last.malformed = self.last.counted = True

    def finish(self) -> None:
        """Settle the state at the end of the file (a half-written last record)."""
        self.tables.finish()
        if self.pending is not None:
            self.last.malformed = self.pending.metric_like
            self.pending = None
        elif self.last.counted:
            self.malformed -= 1  # reported as the incomplete last line instead
        if self.last.dialect is not None and not self.last.terminated:
            by_dialect: dict[str, list[Any]] = {
                "console_verl": self.verl, "console_steps": self.steps, "console_openrlhf": self.openrlhf,
                "console_lines": self.lines,
            }
            records = by_dialect.get(self.last.dialect)
            if records is not None and len(records) > 1:
                sizes = sorted(len(r.values) for r in records[:-1])
                if len(records[-1].values) < sizes[len(sizes) // 2]:
                    records.pop()  # fewer keys than usual and no newline: cut off mid-line
                    self.last.malformed = True


# ---------------------------------------------------------------------- printed-dict parsing
def _balanced_end(text: str) -> int | None:
    """Index of the `}` closing the dict that starts at text[0], or None if it never closes."""
    depth = 0
    quote = ""
    escaped = False
    for i, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
            if depth == 0:
                return i
    return None


def _literal_dict(text: str) -> dict[str, Any] | None:
    """A dict from its printed repr (never `eval`): literal_eval, retried with wrappers and nan/inf fixed."""
    end = _balanced_end(text)
    if end is None:
        return None
    body = text[: end + 1]
    for attempt in range(2):
        try:
            value = ast.literal_eval(body)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            if attempt:
                return None
            # np.float64(0.5) -> 0.5, tensor(0.5, device=...) -> 0.5, bare nan/inf -> 'nan'/'inf'
            body = _DICT_WRAPPER.sub(lambda m: m["inner"] if m["inner"] is not None else m["tinner"], body)
            body = _BARE_NONFINITE.sub(lambda m: f"{m['ws']}'{m['tok']}'", body)
            continue
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return value
        return None
    return None
