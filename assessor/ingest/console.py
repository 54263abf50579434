r"""Console and nohup logs: metrics printed to stdout/stderr by the training script.

Four line formats ("dialects") are understood; a file normally holds one, and the one with the most
records wins:

* `console_trl`: the HF Trainer / TRL log dicts, `{'loss': 0.0126, 'grad_norm': ...}` (values may be
  strings). They carry no step, so steps come from the trainer's tqdm bar (see `_assign_trl_steps`).
* `console_verl`: verl's console logger, `step:N - key:value - key:value` (Ray prefixes, ANSI colours,
  `np.float64(...)` wrappers).
* `console_openrlhf`: `✨ Global step N: {...}` and `Evaluation completed ..., eval_metrics: {...}`.
* `console_steps`: `[Step i/T] key=value ...` (reasoning-from-scratch) and `step N: key=value, ...`.

The file is streamed one segment at a time, split on both newlines and carriage returns (tqdm redraws
its bar with `\r`), so multi-GB logs full of vLLM/Ray output stay cheap. Keys are emitted raw; canonical
names are applied later by `assessor.ingest.normalize`.
"""

from __future__ import annotations

import ast
import itertools
import re
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import RecordBuilder, SourceData, as_int, parse_number
from assessor.ingest.facts import facts_from_flat_config, flatten

Fact = tuple[Any, str]

TEXT_SUFFIXES = frozenset({".log", ".txt", ".out", ".err"})
TEXT_NAMES = frozenset({"stdout", "stderr", "output", "console", "train_log"})

UNDERSTOOD_FORMATS = (
    "understood line formats: TRL/HF dicts \"{'loss': ...}\", verl \"step:N - key:value - ...\", "
    "OpenRLHF \"Global step N: {...}\", \"[Step i/T] key=value ...\" or \"step N: key=value, ...\""
)

# --- segment clean-up
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_RAY_PREFIX = re.compile(r"^\s*\([\w.:-]+ pid=\d+(?:, ip=[\w.:]+)?\)\s?")

# --- tqdm bars: `  5%|▌  | 10/200 [00:37<11:56,  3.77s/it]` and vLLM's `25% Completed | 1/4 [...]`
_BAR = re.compile(r"(?P<pct>\d{1,3})%\s*(?:\|[^|]*\||Completed\s*\|)\s*(?P<n>\d+)/(?P<total>\d+)\s*\[")

# --- dialect line patterns
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

# --- facts printed near the top of a log
_HF_BANNER_TOTAL = re.compile(r"Total optimization steps = (?P<n>[\d,]+)")
_VERL_TOTAL = re.compile(r"Total (?:training )?steps: (?P<n>\d+)")
_TEXT_SETTING = re.compile(
    r"(?<![\w.])(?P<k>max_steps|logging_steps|max_completion_length|num_generations|max_new_tokens|beta|"
    r"loss_type)\s*[=:]\s*['\"]?(?P<v>[\w.+-]+)"
)
_MODEL_TEXT = re.compile(
    r"(?<![\w.])(?:model|model_name|model_id|model_path|model_name_or_path)\s*[=:]\s*['\"]?"
    r"(?P<v>[\w.-]+/[\w.-]+)",
    re.IGNORECASE,
)
_COMMAND = re.compile(r"(?:^|\s)(?:python3?|torchrun|accelerate\s+launch|deepspeed|ray\s+job\s+submit)\s")
_HYDRA = re.compile(
    r"""(?:^|[\s"'])\+{0,2}(?P<k>[A-Za-z_][\w-]*(?:\.[\w-]+)+)=(?P<v>"[^"]*"|'[^']*'|\[[^\]]*\]|[^\s"']+)"""
)
_FLAG = re.compile(r"""(?:^|\s)--(?P<k>[A-Za-z_][\w.-]*)(?:[=\s]\s*(?P<v>"[^"]*"|'[^']*'|(?!--)[^\s\\]+))?""")

# --- telling metric dicts from other printed dicts
_TRL_KEYS = frozenset({
    "loss", "reward", "learning_rate", "grad_norm", "train_runtime", "train_loss", "kl", "entropy",
    "num_tokens", "reward_std",
})
_TRL_KEY_PREFIXES = ("eval_", "rewards/", "completions/", "objective/", "policy/", "clip_ratio/")
_CONFIG_ONLY_KEYS = frozenset({
    "output_dir", "max_steps", "num_train_epochs", "per_device_train_batch_size", "model_name_or_path",
    "logging_steps", "gradient_accumulation_steps", "seed", "save_steps",
})
_METRIC_HINTS = ("loss", "reward", "learning_rate", "grad_norm", "train_runtime")
_STEP_KEYS = ("step", "global_step")
_SUMMARY_KEY = "train_runtime"

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
class _BarTrack:
    """Updates of every tqdm bar sharing one total, in file order."""

    tick: array[int] = field(default_factory=lambda: array("q"))  # global bar-update counter at the update
    pos: array[int] = field(default_factory=lambda: array("q"))
    described: int = 0  # updates whose bar has a label ("Processed prompts: ...")
    restarts: int = 0  # times the position went down (a new bar with the same total)


@dataclass
class _TrlDict:
    """One printed TRL/HF log dict."""

    kind: str  # "train", "eval" or "summary"
    values: dict[str, Any]
    explicit_step: int | None
    tick: int  # bar updates seen before the dict appeared


@dataclass
class _Record:
    """One parsed line of the verl, OpenRLHF or steps dialects."""

    step: int
    values: dict[str, Any]
    split: str | None = None
    total: int | None = None


@dataclass
class _Pending:
    """A printed dict that has not closed yet."""

    text: str
    tick: int
    source: str  # Ray prefix of the line that opened it ("" without one)
    segments: int = 1
    metric_like: bool = False


@dataclass
class _LastSegment:
    dialect: str | None = None  # dialect of the record this segment produced, if any
    malformed: bool = False  # looked like a metric record but did not parse
    counted: bool = False  # already counted in `_Scan.malformed`
    terminated: bool = True


class _Scan:
    """State of one pass over a log."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.segments = 0
        self.bars: dict[int, _BarTrack] = {}
        self.bar_ticks = 0
        self.trl: list[_TrlDict] = []
        self.verl: list[_Record] = []
        self.openrlhf: list[_Record] = []
        self.steps: list[_Record] = []
        self.openrlhf_step: int | None = None
        self.recent_eval_banner = 0  # > 0 right after an "Evaluation completed" message
        self.pending: _Pending | None = None
        self.malformed = 0
        self.last = _LastSegment()
        # facts, by source
        self.config_facts: dict[str, Fact] = {}
        self.command_flat: dict[str, Any] = {}
        self.text_flat: dict[str, Any] = {}
        self.text_model: str | None = None
        self.hf_banner_total: int | None = None
        self.verl_total: int | None = None
        self.command_next = False
        self.in_head = True  # before the first record: banners, commands and configs are printed here

    @property
    def records(self) -> int:
        return len(self.trl) + len(self.verl) + len(self.openrlhf) + len(self.steps)

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
            tail = self._bar(rest)
            rest = tail.lstrip()
            if not rest:
                return
        if self.in_head:
            self.in_head = self.segments < _HEAD_SEGMENTS
            self._head_facts(rest)

        produced = self._dialect_lines(rest)
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

    def _bar(self, seg: str) -> str:
        """Record a tqdm bar update; return the text after the bar (a dict may follow on the same line)."""
        match = _BAR.search(seg)
        if match is None:
            return seg
        total = int(match["total"])
        pos = int(match["n"])
        if total > 0:
            track = self.bars.get(total)
            if track is None:
                track = self.bars[total] = _BarTrack()
            if track.pos and pos < track.pos[-1]:
                track.restarts += 1
            track.tick.append(self.bar_ticks)
            track.pos.append(pos)
            if seg[: match.start()].strip():
                track.described += 1
            self.bar_ticks += 1
        close = seg.find("]", match.end())
        return "" if close < 0 else seg[close + 1:]

    def _dialect_lines(self, text: str) -> bool:
        """Try the one-line dialects; True when the segment produced a record."""
        if "step:" in text:
            verl = _VERL.search(text)
            if verl is not None:
                return self._verl(int(verl["step"]), verl["rest"])
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

    # ------------------------------------------------------------------ dialect 2: verl
    def _verl(self, step: int, rest: str) -> bool:
        values: dict[str, Any] = {}
        ok = True
        for item in rest.strip().split(" - "):
            key, sep, value = item.rpartition(":")
            key, value = key.strip(), value.strip()
            if not sep or not key or not value:
                ok = False  # a cut-off item: the line is incomplete
                continue
            number = parse_number(value)
            values[key] = value if number is None else number
        if not values or not ok:
            self._malformed()
            return not ok and bool(values)
        self._add(self.verl, _Record(step, values), "console_verl")
        return True

    # ------------------------------------------------------------------ dialect 3: OpenRLHF
    def _openrlhf(self, text: str) -> bool:
        match = _OPENRLHF.search(text)
        split: str | None = None
        if match is not None:
            step = int(match["step"])
            self.openrlhf_step = step
        else:
            match = _OPENRLHF_EVAL.search(text)
            if match is None or not (self.recent_eval_banner or "Evaluation completed" in text):
                return False
            in_line = _OPENRLHF_EVAL_STEP.search(text)
            if in_line is not None:
                step = int(in_line["step"])
            elif self.openrlhf_step is not None:
                step = self.openrlhf_step
            else:
                step = 0
            split = "eval"
            self.recent_eval_banner = 0  # one eval dict per message
        parsed = _literal_dict(match["dict"])
        if parsed is None:
            self._malformed()
            return True
        self._add(self.openrlhf, _Record(step, parsed, split), "console_openrlhf")
        return True

    # ------------------------------------------------------------------ dialect 4: [Step i/T] k=v
    def _steps(self, text: str) -> bool:
        match = _STEPS.match(text)
        if match is None:
            return False
        if not _PAIRS_ONLY.match(match["rest"]):
            # `[Step 7/10] loss=0.1 rew` with no newline after it: a line still being written
            self.last.malformed = not self.last.terminated and "=" in match["rest"]
            return False
        values: dict[str, Any] = {}
        for pair in _PAIR_ITEM.finditer(match["rest"]):
            raw = pair["v"]
            number = parse_number(raw)
            values[pair["k"]] = raw if number is None else number
        if sum(isinstance(v, float) for v in values.values()) * 2 < len(values):
            return False  # mostly words: prose that happens to contain "step 3: a=b"
        total = int(match["total"]) if match["total"] else None
        self._add(self.steps, _Record(int(match["step"]), values, total=total), "console_steps")
        return True

    # ------------------------------------------------------------------ dialect 1: TRL dicts
    def _start_dict(self, text: str, source: str) -> None:
        end = _balanced_end(text)
        if end is None:
            # Either a multi-line (pprint'ed) dict or one cut by a bar redraw / the end of the file.
            self.pending = _Pending(text, self.bar_ticks, source, metric_like=_looks_metric(text))
            self.last.malformed = self.pending.metric_like
            return
        self._finish_dict(text[: end + 1], self.bar_ticks, metric_like=_looks_metric(text))

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
        if _is_trl_metrics(parsed):
            step_value = next((parsed[k] for k in _STEP_KEYS if k in parsed), None)
            explicit = as_int(step_value) if step_value is not None else None
            kind = "summary" if _SUMMARY_KEY in parsed else "eval" if _is_eval(parsed) else "train"
            self._add(self.trl, _TrlDict(kind, parsed, explicit, tick), "console_trl")
        elif self.records == 0 and _is_config(parsed) and not self.config_facts:
            self.config_facts = facts_from_flat_config(flatten(parsed), f"{self.name}: printed config")

    # ------------------------------------------------------------------ bookkeeping
    def _add(self, target: list[Any], record: Any, dialect: str) -> None:
        target.append(record)
        self.in_head = False
        self.last.dialect = dialect
        self.last.malformed = False

    def _malformed(self) -> None:
        self.malformed += 1
        self.last.malformed = self.last.counted = True

    def _head_facts(self, text: str) -> None:
        """Cheap, reliable facts from banners, settings and command lines at the top of the log."""
        if self.command_next or _COMMAND.search(text) or text.lstrip().startswith("command:"):
            self.command_next = text.rstrip().endswith("\\")
            if text.strip() == "command:":
                self.command_next = True
            for hydra in _HYDRA.finditer(text):
                self.command_flat.setdefault(hydra["k"], _unquote(hydra["v"]))
            for flag in _FLAG.finditer(text):
                value = flag["v"]
                self.command_flat.setdefault(flag["k"], True if value is None else _unquote(value))
            return
        if "Total " in text:
            banner = _HF_BANNER_TOTAL.search(text)
            if banner is not None and self.hf_banner_total is None:
                self.hf_banner_total = int(banner["n"].replace(",", ""))
            verl_total = _VERL_TOTAL.search(text)
            if verl_total is not None and self.verl_total is None:
                self.verl_total = int(verl_total["n"])
        if "=" in text or ":" in text:
            for setting in _TEXT_SETTING.finditer(text):
                self.text_flat.setdefault(setting["k"], setting["v"])
            if self.text_model is None and ("odel" in text or "ODEL" in text):
                model = _MODEL_TEXT.search(text)
                if model is not None:
                    self.text_model = model["v"]

    def finish(self) -> None:
        """Settle the state at the end of the file (a half-written last record)."""
        if self.pending is not None:
            self.last.malformed = self.pending.metric_like
            self.pending = None
        elif self.last.counted:
            self.malformed -= 1  # reported as the incomplete last line instead
        if self.last.dialect is not None and not self.last.terminated:
            records = {"console_verl": self.verl, "console_steps": self.steps,
                       "console_openrlhf": self.openrlhf}.get(self.last.dialect)
            if records is not None and len(records) > 1:
                sizes = sorted(len(r.values) for r in records[:-1])
                if len(records[-1].values) < sizes[len(sizes) // 2]:
                    records.pop()  # fewer keys than usual and no newline: cut off mid-line
                    self.last.malformed = True


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
        scan = _Scan(path.name)
        try:
            # Universal newlines split on "\n", "\r\n" and a bare "\r" (tqdm), streamed line by line.
            with path.open(encoding="utf-8", errors="replace") as handle:
                for raw in handle:
                    terminated = raw.endswith("\n")
                    scan.feed(raw[:-1] if terminated else raw, terminated)
        except OSError as exc:
            raise UnreadableSourceError(f"{path}: cannot read this log ({exc}).") from exc
        scan.finish()

        counts = {
            "console_trl": sum(d.kind != "summary" for d in scan.trl),
            "console_verl": len(scan.verl),
            "console_openrlhf": len(scan.openrlhf),
            "console_steps": len(scan.steps),
        }
        dialect = max(counts, key=lambda k: counts[k])
        if counts[dialect] == 0:
            raise UnreadableSourceError(
                f"{path}: no training metrics found in this log ({UNDERSTOOD_FORMATS})."
            )

        builder = RecordBuilder()
        facts: dict[str, Fact] = {}
        notes: list[str] = []
        if dialect == "console_trl":
            train_steps = _read_trl(scan, builder, facts, notes)
        elif dialect == "console_verl":
            train_steps = _read_verl(scan, builder, facts)
        elif dialect == "console_openrlhf":
            train_steps = _read_openrlhf(scan, builder, facts)
        else:
            train_steps = _read_steps(scan, builder, facts)
        frame = builder.build()
        if frame.empty:
            raise UnreadableSourceError(
                f"{path}: metric lines were found but none held numbers ({UNDERSTOOD_FORMATS})."
            )

        facts = _merge_facts(scan, facts)
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
                          notes=notes)


# ---------------------------------------------------------------------- per-dialect frame builders
def _read_trl(scan: _Scan, builder: RecordBuilder, facts: dict[str, Fact], notes: list[str]) -> list[int]:
    """TRL/HF dicts into rows; the summary dict becomes facts. Returns the train steps."""
    steps, note, total = _assign_trl_steps(scan)
    notes.append(note)
    train_steps: list[int] = []
    for record, step in zip(scan.trl, steps, strict=True):
        if record.kind == "summary":
            for key, value in record.values.items():
                number = parse_number(value)
                if key not in ("epoch", *_STEP_KEYS) and number is not None:
                    facts[key] = (number, f"{scan.name}: final Trainer summary dict")
            continue
        # An eval dict repeats `epoch`; keep the train one so a step never holds two epoch values.
        skip = (*_STEP_KEYS, "epoch") if record.kind == "eval" else _STEP_KEYS
        builder.add_row(step, record.values, None, skip=skip)
        if record.kind == "train":
            train_steps.append(step)
    facts["framework"] = ("trl", f"{scan.name}: TRL/HF Trainer log dicts")
    if total is not None:
        facts["planned_total_steps"] = (total, f"{scan.name}: trainer progress bar total (n/{total})")
    elif scan.hf_banner_total is not None:
        facts["planned_total_steps"] = (
            scan.hf_banner_total, f"{scan.name}: 'Total optimization steps' banner",
        )
    return train_steps


def _read_verl(scan: _Scan, builder: RecordBuilder, facts: dict[str, Fact]) -> list[int]:
    for record in scan.verl:
        builder.add_row(record.step, record.values)
    facts["framework"] = ("verl", f"{scan.name}: verl console lines (step:N - key:value)")
    if scan.verl_total is not None:
        facts["planned_total_steps"] = (scan.verl_total, f"{scan.name}: 'Total steps' line")
    return [r.step for r in scan.verl]


def _read_openrlhf(scan: _Scan, builder: RecordBuilder, facts: dict[str, Fact]) -> list[int]:
    for record in scan.openrlhf:
        builder.add_row(record.step, record.values, record.split, skip=("generated_samples",))
    facts["framework"] = ("openrlhf", f"{scan.name}: OpenRLHF 'Global step N' lines")
    return [r.step for r in scan.openrlhf if r.split is None]


def _read_steps(scan: _Scan, builder: RecordBuilder, facts: dict[str, Fact]) -> list[int]:
    for record in scan.steps:
        builder.add_row(record.step, record.values)
    total = next((r.total for r in reversed(scan.steps) if r.total is not None), None)
    if total is not None:
        facts["planned_total_steps"] = (total, f"{scan.name}: [Step i/T] lines (T of the last line)")
    keys = set(scan.steps[-1].values)
    if {"reward_avg", "avg_response_len"} <= keys:
        facts["framework"] = ("reasoning_from_scratch", f"{scan.name}: reasoning-from-scratch metric lines")
    return [r.step for r in scan.steps]


# ---------------------------------------------------------------------- TRL step inference
def _assign_trl_steps(scan: _Scan) -> tuple[list[int], str, int | None]:
    """Steps for the printed dicts, a note saying how, and the trainer bar's total.

    HF writes each log dict with `training_bar.write`, which clears the bar and redraws it at the same
    position, so every log leaves a repeated position ("log event") on the trainer bar. stdout is often
    block-buffered while the bar goes to stderr, so dicts can appear long after their step (all of them
    after training, in some logs). Each dict therefore takes the earliest unused log event that happened
    before it appeared; with no such event, the bar's last position before it. Without a usable bar, the
    steps are spaced evenly (logging_steps, or max_steps / number of dicts).
    """
    total = _trainer_total(scan)
    if total is not None:
        steps = _steps_from_bar(scan, scan.bars[total])
        train = [
            s for s, d in zip(steps, scan.trl, strict=True) if d.kind == "train" and d.explicit_step is None
        ]
        if steps and all(b > a for a, b in itertools.pairwise(train)):
            note = f"steps read from the trainer progress bar (n/{total}) at each logged dict"
            return steps, note, total
    return (*_steps_without_bar(scan, total), total)


def _trainer_total(scan: _Scan) -> int | None:
    """The total of the trainer's bar among all bars in the file.

    Ranked by: has at least one log event per printed dict (HF writes every dict through the trainer
    bar), is mostly unlabelled (vLLM and dataset bars carry a label), rarely restarts (eval and vLLM bars
    restart every time), then by the number of updates (the brief's "most frequent total").
    """
    if not scan.bars:
        return None
    n_dicts = len(scan.trl)

    def rank(total: int) -> tuple[bool, bool, bool, int]:
        track = scan.bars[total]
        updates = len(track.pos)
        return (_count_events(track) >= n_dicts, track.described * 2 < updates, track.restarts <= 2, updates)

    best = max(scan.bars, key=rank)
    track = scan.bars[best]
    if track.described * 2 >= len(track.pos) and track.restarts > 2:
        return None  # only labelled, restarting bars (vLLM "Processed prompts"): no trainer bar here
    return best


def _count_events(track: _BarTrack) -> int:
    pos = track.pos
    return sum(1 for i in range(1, len(pos)) if pos[i] == pos[i - 1])


def _steps_from_bar(scan: _Scan, track: _BarTrack) -> list[int]:
    pos = np.frombuffer(track.pos, dtype=np.int64) if len(track.pos) else np.empty(0, dtype=np.int64)
    tick = np.frombuffer(track.tick, dtype=np.int64) if len(track.tick) else np.empty(0, dtype=np.int64)
    repeat = np.flatnonzero(pos[1:] == pos[:-1])
    event_tick = tick[repeat]  # the event happened right after this update (clear, write, redraw)
    event_pos = pos[repeat]
    steps: list[int] = []
    cursor = 0
    previous = 0
    for record in scan.trl:
        if cursor < len(event_tick) and event_tick[cursor] < record.tick:
            step = int(event_pos[cursor])
            cursor += 1
        else:
            seen = int(np.searchsorted(tick, record.tick, side="left"))
            step = int(pos[seen - 1]) if seen else previous
        if record.explicit_step is not None:
            step = record.explicit_step
        steps.append(step)
        previous = step
    return steps


def _steps_without_bar(scan: _Scan, bar_total: int | None) -> tuple[list[int], str]:
    """Evenly spaced steps for the train dicts; eval dicts take the step of the train dict before them."""
    n_train = sum(d.kind == "train" and d.explicit_step is None for d in scan.trl)
    logging_steps = as_int(scan.text_flat.get("logging_steps", scan.command_flat.get("logging_steps")))
    max_steps = bar_total or scan.hf_banner_total or as_int(scan.text_flat.get("max_steps")) or as_int(
        scan.command_flat.get("max_steps"))
    lead = "no usable progress bar" if scan.bars else "no progress bar"
    if logging_steps is not None and logging_steps > 0:
        interval, why = logging_steps, f"logging_steps={logging_steps}"
    elif max_steps is not None and max_steps > 0 and n_train and max_steps % n_train == 0:
        interval, why = max_steps // n_train, f"max_steps={max_steps}"
    else:
        interval, why = 1, "one dict per step assumed"
    steps: list[int] = []
    index = 0
    current = 0
    for record in scan.trl:
        if record.explicit_step is not None:
            current = record.explicit_step
        elif record.kind == "train":
            index += 1
            current = index * interval
        steps.append(current)
    note = f"{lead}; steps inferred as {interval}..{max(index, 1) * interval}"
    if interval > 1:
        note += f" (every {interval})"
    note += f" from {n_train} logged dicts and {why}"
    return steps, note


# ---------------------------------------------------------------------- facts
def _merge_facts(scan: _Scan, dialect_facts: Mapping[str, Fact]) -> dict[str, Fact]:
    """Facts by trust, lowest first: log text, command line, printed config, then what the dialect read."""
    merged: dict[str, Fact] = {}
    merged.update(facts_from_flat_config(scan.text_flat, f"{scan.name}: log text"))
    if scan.text_model is not None:
        merged["model"] = (scan.text_model, f"{scan.name}: log text")
    merged.update(facts_from_flat_config(scan.command_flat, f"{scan.name}: command line"))
    merged.update(scan.config_facts)
    merged.update(dialect_facts)
    return merged


def _constant_spacing(steps: Iterable[int]) -> int | None:
    unique = np.unique(np.fromiter(steps, dtype=np.int64))
    if len(unique) < 3:
        return None
    gaps = np.unique(np.diff(unique))
    return int(gaps[0]) if len(gaps) == 1 and gaps[0] > 0 else None


# ---------------------------------------------------------------------- printed-dict helpers
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


def _looks_metric(text: str) -> bool:
    """Cheap check on the start of a printed dict: does it name a TRL metric key?"""
    head = text[:400]
    return "'eval_" in head or any(f"'{key}'" in head for key in _METRIC_HINTS)


def _is_trl_metrics(values: Mapping[str, Any]) -> bool:
    """A TRL/HF log dict: a known metric key, mostly numeric values, and no config-only keys."""
    keys = values.keys()
    if not any(k in _TRL_KEYS or k.startswith(_TRL_KEY_PREFIXES) for k in keys):
        return False
    if any(k in _CONFIG_ONLY_KEYS for k in keys):
        return False
    numeric = sum(
        1 for v in values.values()
        if v is None or (not isinstance(v, dict | list | tuple | set) and parse_number(v) is not None)
    )
    return numeric * 10 >= len(values) * 9


def _is_eval(values: Mapping[str, Any]) -> bool:
    keys = [k for k in values if k not in ("epoch", *_STEP_KEYS)]
    return bool(keys) and all(k.startswith("eval_") for k in keys)


def _is_config(values: Mapping[str, Any]) -> bool:
    """A printed run configuration: nested sections, or many settings."""
    return any(isinstance(v, dict) for v in values.values()) or len(values) >= 8


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _is_text(head: bytes) -> bool:
    """Whether the first bytes look like a text log (no NULs, valid UTF-8 apart from a cut last char)."""
    if not head or b"\x00" in head:
        return False
    text = head.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    return bad <= max(3, len(text) // 100)


READER = ConsoleReader()
