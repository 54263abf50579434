"""Run judges over labelled cases and score them (`assessor eval`).

For each case the run is generated (synthetic cases, cached) or read (real cases), diagnosed once, and every
judge gives its verdict on the same diagnostics. Scores, per judge, kept apart for synthetic and real cases:

* **accuracy**: the share of cases whose decision is in the case's `accept` list (a judge error counts as wrong);
* **confusion matrix and per-decision precision and recall**: a correct decision is its own expected label; a
  wrong one is expected to be the case's `preferred` decision (else its first accepted one). So the diagonal
  holds exactly the correct cases, precision(d) = correct d / said d, recall(d) = correct d / expected d;
* **false stops**: "stop" on a case labelled `healthy`, counted on their own (the costliest error);
* **rollbacks inside the window**: among rollbacks on cases with a `rollback_window`, those whose step lies in
  it; the mean distance to the window (0 inside) and to the best step (the window's upper end);
* **detection delay**: each case with an `onset_step` is replayed truncated at `delay_points` evenly spaced
  steps (the last is the full run); the first of them at or after the onset where the judge says stop or
  rollback, minus the onset. Stop/rollback verdicts at truncation points before the onset are false alarms.
  Replays run for cheap judges (rules, thresholds, fake, cassette replays) and for live LLM judges only when
  asked (`replay_llm`); the resolution is one truncation interval;
* **usage**: tokens, requests and cost per assessment (LLM judges), and latency per judgement.
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from assessor.diagnose import diagnose
from assessor.diagnose.models import Diagnostics
from assessor.errors import AssessorError, ConfigError
from assessor.evals.cases import Case, load_cases
from assessor.judge import JUDGES, KEY_VARIABLES, Judge, JudgeRequest, get_judge, resolve_judge_name
from assessor.judge.models import Decision, Usage
from assessor.run import Run

DECISIONS: tuple[Decision, ...] = ("continue", "stop", "rollback")
ALARMS: frozenset[str] = frozenset({"stop", "rollback"})
CHEAP_JUDGES: frozenset[str] = frozenset({"rules", "fake", "thresholds"})
DEFAULT_DELAY_POINTS = 12
SUBSETS = ("all", "fast", "synthetic", "real")
FAST_TAG = "fast"
FLOOR_JUDGE = "rules"
ACCURACY_MARGIN = 0.02
WINDOW_MARGIN = 0.05
Kind = Literal["synthetic", "real"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- results


class DelayResult(_Model):
    """One judge replayed on one failing run, truncated at successive steps."""

    onset_step: int
    points: list[int] = Field(description="Truncation steps, the last being the full run.")
    decisions: list[Decision | None] = Field(description="The verdict at each point (None: the judge failed).")
    detection_step: int | None = Field(None, description="First point at or after the onset with stop/rollback.")
    delay: int | None = Field(None, description="detection_step - onset_step; None if never detected.")
    false_alarms: int = Field(0, description="Stop/rollback verdicts at points before the onset.")
    complete: bool = Field(True, description="False when the judge failed at some point (left out of summaries).")


class CaseOutcome(_Model):
    """One judge's verdict on one case, scored."""

    case: str
    kind: Kind
    pattern: str | None = None
    tags: list[str] = Field(default_factory=list)
    accept: list[Decision]
    preferred: Decision | None = None
    healthy: bool = False
    rollback_window: tuple[int, int] | None = None
    onset_step: int | None = None
    last_step: int | None = None
    decision: Decision | None = Field(None, description="None when the judge failed (see error).")
    rollback_step: int | None = None
    confidence: float | None = None
    headline: str = ""
    correct: bool = False
    false_stop: bool = False
    in_window: bool | None = Field(None, description="For a rollback on a case with a window: inside it?")
    window_distance: int | None = Field(None, description="|rollback step - nearest step of the window|.")
    best_distance: int | None = Field(None, description="|rollback step - best step (window's upper end)|.")
    latency_s: float = 0.0
    usage: Usage | None = None
    error: str | None = None
    stale_cassette: bool = False
    cost_estimated: bool = Field(False, description="Cost computed here from tokens and --price.")
    delay: DelayResult | None = None


class Tally(_Model):
    """Accuracy over a group of cases."""

    cases: int = 0
    correct: int = 0
    accuracy: float | None = None


class Scores(_Model):
    """Decision quality over a set of cases."""

    cases: int = 0
    errors: int = 0
    correct: int = 0
    accuracy: float | None = None
    precision: dict[str, float | None] = Field(default_factory=dict)
    recall: dict[str, float | None] = Field(default_factory=dict)
    confusion: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="expected decision -> judged decision -> cases.")
    healthy: int = 0
    false_stops: int = 0
    false_stop_cases: list[str] = Field(default_factory=list)
    rollbacks: int = Field(0, description="Rollbacks on cases that have a rollback window.")
    rollbacks_in_window: int = 0
    rollback_in_window_rate: float | None = None
    mean_window_distance: float | None = None
    mean_best_distance: float | None = None


class DelaySummary(_Model):
    """Detection delay over the failing cases replayed."""

    cases: int = 0
    detected: int = 0
    missed: list[str] = Field(default_factory=list)
    mean_delay: float | None = None
    median_delay: float | None = None
    max_delay: int | None = None
    false_alarms: int = 0
    cases_with_false_alarms: int = 0
    incomplete: int = 0


class UsageSummary(_Model):
    """What the judgements cost."""

    assessments: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_per_assessment: float | None = None
    cost_usd: float | None = None
    cost_per_assessment_usd: float | None = None
    cost_estimated: bool = Field(False, description="Some costs were estimated from tokens and --price.")
    mean_latency_s: float | None = None
    p95_latency_s: float | None = None
    max_latency_s: float | None = None


class JudgeReport(_Model):
    """Everything measured for one judge."""

    judge: str
    baseline: bool = False
    synthetic: Scores
    real: Scores
    by_pattern: dict[str, Tally] = Field(default_factory=dict)
    by_tag: dict[str, Tally] = Field(default_factory=dict)
    delay_synthetic: DelaySummary
    delay_real: DelaySummary
    usage: UsageSummary
    stale_cassettes: int = 0
    outcomes: list[CaseOutcome] = Field(default_factory=list)


class Skipped(_Model):
    """A case that could not be run at all (e.g. a real run that is not on this machine)."""

    case: str
    reason: str


class FloorCheck(_Model):
    """The result of comparing the rules judge with the recorded floor."""

    passed: bool
    problems: list[str] = Field(default_factory=list)
    message: str


class EvalReport(_Model):
    """An eval run: the judges side by side."""

    source: str
    subset: str
    cases: int
    synthetic_cases: int
    real_cases: int
    delay_points: int
    skipped: list[Skipped] = Field(default_factory=list)
    judges: list[JudgeReport]
    floor: FloorCheck | None = None

    def judge_report(self, name: str) -> JudgeReport | None:
        """The report of the judge called `name` (exactly), if it ran."""
        return next((j for j in self.judges if j.judge == name), None)


class Floor(_Model):
    """The recorded floor the rules judge must stay above (`--check-floor`, `--write-floor`)."""

    judge: str = FLOOR_JUDGE
    subset: str = "fast"
    synthetic_accuracy: float = Field(description="Minimum accuracy on the synthetic cases.")
    max_healthy_false_stops: int = Field(0, description="Most stops on healthy synthetic runs allowed.")
    rollback_in_window: float | None = Field(
        None, description="Minimum share of rollbacks inside the window (None: not checked).")
    measured: dict[str, float | int | None] = Field(
        default_factory=dict, description="The values measured when the floor was written.")


# --- judges


@dataclass
class EvalJudge:
    """A judge as the harness runs it.

    Attributes:
        judge: the judge itself.
        spec: the name it was asked for on the command line.
        baseline: shown as the baseline column.
        cheap: replayed on truncated runs for the detection delay.
        price: USD per million input and output tokens, to estimate the cost of judgements whose usage has
            tokens but no cost.
    """

    judge: Judge
    spec: str
    baseline: bool = False
    cheap: bool = True
    price: tuple[float, float] | None = None

    @property
    def name(self) -> str:
        """The judge's reported name."""
        return self.judge.name


def build_judge(
    spec: str, *, baseline: bool = False, cassettes: Path | None = None, record: bool = False,
    replay_llm: bool = False, env: Mapping[str, str] | None = None, **options: object,
) -> EvalJudge:
    """Make the judge named `spec` for an eval.

    Args:
        spec: `rules`, `fake`, `thresholds`, `replay:<cassette dir>`, `anthropic[:MODEL]`, `openai[:MODEL]`, `auto`.
        baseline: mark it as the baseline column.
        cassettes: the cassette directory LLM judges record to and replay from.
        record: call LLM judges live even where a cassette exists (and overwrite it).
        replay_llm: also replay live LLM judges on truncated runs (one call per truncation point).
        env: the environment to read API keys from (default: `os.environ`).
        **options: passed to `get_judge` (e.g. `images=False`).

    Raises:
        ConfigError: an unknown judge, a missing key for a live LLM judge, or a missing cassette.
    """
    from assessor.evals.cassette import Cassette, RecordingJudge, ReplayJudge

    if spec == "thresholds":
        from assessor.evals.baseline import ThresholdsJudge

        return EvalJudge(ThresholdsJudge(), spec, baseline)
    if spec.startswith("replay:"):
        return EvalJudge(ReplayJudge(Cassette.open(Path(spec.removeprefix("replay:")))), spec, baseline)
    name = resolve_judge_name(spec, env)
    provider, _, model = name.partition(":")
    if provider not in KEY_VARIABLES:
        return EvalJudge(get_judge(name, env, **options), spec, baseline, cheap=provider in CHEAP_JUDGES)
    if cassettes is None:
        return EvalJudge(get_judge(name, env, **options), spec, baseline, cheap=replay_llm)
    if not model and provider in JUDGES:
        import importlib

        model = str(getattr(importlib.import_module(JUDGES[provider]), "DEFAULT_MODEL", ""))
    full = f"{provider}:{model}" if model else provider
    cassette = Cassette.for_judge(cassettes, full)
    if cassette.exists() and not record:
        return EvalJudge(ReplayJudge(cassette), spec, baseline)
    return EvalJudge(RecordingJudge(get_judge(full, env, **options), cassette), spec, baseline, cheap=replay_llm)


def build_judges(
    judges: Sequence[str], baselines: Sequence[str] = (), prices: Sequence[str] = (), **options: Any,
) -> list[EvalJudge]:
    """The judges of an eval, in column order: `judges`, then `baselines` (marked as such).

    Args:
        judges: judge names (see `build_judge`).
        baselines: judge names shown as baselines (usually `thresholds`).
        prices: `JUDGE=IN,OUT` (USD per million input and output tokens) for judges that report tokens but no
            cost; JUDGE is the judge's full name (`anthropic:claude-sonnet-4-6`), a replay counting as its judge.
        **options: passed to `build_judge` (cassettes, record, replay_llm, env, images).

    Raises:
        ConfigError: a bad judge name or price.
    """
    built = [*(build_judge(spec, **options) for spec in judges),
             *(build_judge(spec, baseline=True, **options) for spec in baselines)]
    for text in prices:
        name, price = parse_price(text)
        matched = [j for j in built if name in (j.spec, j.name, j.name.removesuffix(" (replay)"))]
        if not matched:
            raise ConfigError(f"--price {text}: no judge named {name!r} (judges: {', '.join(j.name for j in built)})")
        for j in matched:
            j.price = price
    return built


def parse_price(text: str) -> tuple[str, tuple[float, float]]:
    """`JUDGE=IN,OUT` as (judge, (USD per million input tokens, USD per million output tokens)).

    Raises:
        ConfigError: not in that form, or a negative price.
    """
    name, _, numbers = text.rpartition("=")
    parts = numbers.split(",")
    try:
        values = tuple(float(v) for v in parts)
    except ValueError:
        values = ()
    if not name or len(values) != 2 or min(values) < 0:
        raise ConfigError(f"--price {text!r}: use JUDGE=IN,OUT in USD per million tokens, e.g. "
                          "anthropic:claude-sonnet-4-6=3,15")
    return name, (values[0], values[1])


# --- cases


@dataclass(frozen=True)
class LoadedCase:
    """A case with its run, ready to judge."""

    case: Case
    file: Path
    run: Run

    @property
    def kind(self) -> Kind:
        """`synthetic` (generated) or `real` (a run on disk)."""
        return case_kind(self.case)


def case_kind(case: Case) -> Kind:
    """`synthetic` for a generated case, `real` for one read from a path."""
    return "synthetic" if case.run is not None else "real"


def read_cases(source: Path, skip: Sequence[Path] = ()) -> list[tuple[Path, Case]]:
    """Every case in `source` (a case file, or every `*.yaml` below a folder).

    Folders whose name starts with a dot (the `.cache` of generated runs, whose configs are YAML too), the
    `cassettes` folder and the folders in `skip` are not searched.

    Raises:
        ConfigError: a bad case file, or none found.
    """
    if not source.is_dir():
        return load_cases(source)
    skipped = [p.resolve() for p in skip]
    files = [f for f in sorted(source.rglob("*.yaml"))
             if not any(part.startswith(".") or part == "cassettes" for part in f.relative_to(source).parts[:-1])
             and not any(f.resolve().is_relative_to(p) for p in skipped)]
    if not files:
        raise ConfigError(f"{source}: no case files (*.yaml) found; point `assessor eval` at the evals/ folder")
    return [item for file in files for item in load_cases(file)]


def select_cases(
    cases: Sequence[tuple[Path, Case]], subset: str = "all", names: Sequence[str] = (),
) -> list[tuple[Path, Case]]:
    """The cases an eval runs, in file order.

    Args:
        cases: every case, with its file (from `load_cases`).
        subset: `all`; `synthetic` or `real`; `fast`: the cases tagged `fast` plus the first synthetic case of
            each pattern (deterministic, and small enough for CI).
        names: glob patterns on case names; when given, only matching cases are kept (`!GLOB` leaves cases out).

    Raises:
        ConfigError: an unknown subset, or names that match nothing.
    """
    if subset not in SUBSETS:
        raise ConfigError(f"unknown subset {subset!r}; use one of {', '.join(SUBSETS)}")
    chosen: list[tuple[Path, Case]] = []
    patterns_seen: set[str] = set()
    for file, case in cases:
        if (subset == "synthetic" and case.run is None) or (subset == "real" and case.run is not None):
            continue
        if subset == "fast":
            first_of_pattern = case.run is not None and case.run.pattern not in patterns_seen
            if case.run is not None:
                patterns_seen.add(case.run.pattern)
            if not (first_of_pattern or FAST_TAG in case.tags):
                continue
        chosen.append((file, case))
    if names:
        # `!GLOB` leaves cases out (e.g. `--case '!holdout-*'`); plain globs keep only what they match.
        keep = [n for n in names if not n.startswith("!")]
        drop = [n[1:] for n in names if n.startswith("!")]
        chosen = [(f, c) for f, c in chosen
                  if (not keep or any(fnmatch.fnmatchcase(c.name, n) for n in keep))
                  and not any(fnmatch.fnmatchcase(c.name, n) for n in drop)]
        if not chosen:
            raise ConfigError(f"no case matches {', '.join(names)} in the {subset} subset")
    return chosen


def locate_runs(
    cases: Sequence[tuple[Path, Case]], cache_dir: Path,
) -> tuple[dict[str, Path], list[Skipped]]:
    """Where each case's run is: generated ones made (or found) in `cache_dir`, real ones next to their file.

    Returns:
        The run folder by case name, and the cases that cannot be run (with the reason).
    """
    where: dict[str, Path] = {}
    skipped: list[Skipped] = []
    generated = [case for _, case in cases if case.run is not None]
    if generated:
        try:
            from assessor.evals.generate import generate_all
        except ImportError as error:
            raise ConfigError(f"synthetic cases need assessor.evals.generate, which cannot be imported ({error})") \
                from error
        where.update({name: Path(path) for name, path in generate_all(generated, cache_dir).items()})
    for file, case in cases:
        if case.path is not None:
            path = (file.parent / case.path).resolve()
            if path.exists():
                where[case.name] = path
            else:
                # A case file may come with the script that writes its runs (evals/holdout/make_holdout.py).
                makers = sorted(file.parent.glob("make_*.py"))
                hint = f"; write the runs with `python {makers[0]}`" if makers else ""
                skipped.append(Skipped(case=case.name, reason=f"{path} does not exist{hint}"))
        elif case.name not in where:
            skipped.append(Skipped(case=case.name, reason="the generator made no run for it"))
    return where, skipped


def delay_points(run: Run, count: int = DEFAULT_DELAY_POINTS) -> list[int]:
    """`count` evenly spaced truncation steps over the run's training steps, the last one always included.

    Each point is the latest logged step at or before its share of the way from the first step to the last.
    """
    metrics = run.metrics
    train = metrics[metrics["split"] == "train"] if len(metrics) else metrics
    steps = sorted({int(s) for s in (train if len(train) else metrics)["step"].to_numpy()})
    if not steps:
        return []
    first, last = steps[0], steps[-1]
    points: list[int] = []
    for i in range(1, max(count, 1) + 1):
        target = first + (last - first) * i / max(count, 1)
        at = max((s for s in steps if s <= target + 1e-9), default=first)
        if at not in points:
            points.append(at)
    if points[-1] != last:
        points.append(last)
    return points


# --- scoring


def expected_decision(case: Case, decision: Decision | None) -> Decision:
    """The label a decision is scored against: itself when accepted, else `preferred` (or the first accepted)."""
    if decision is not None and decision in case.accept:
        return decision
    return case.preferred or case.accept[0]


def score_case(
    case: Case, decision: Decision | None, rollback_step: int | None = None, **fields: Any,
) -> CaseOutcome:
    """Score one verdict (or a failed judgement: `decision=None`) against the case's labels.

    Args:
        case: the labelled case.
        decision: the judge's decision, None if it failed.
        rollback_step: the step a rollback targets.
        **fields: other `CaseOutcome` fields to carry (usage, latency_s, error, headline, ...).
    """
    window = case.rollback_window
    in_window = window_distance = best_distance = None
    if decision == "rollback" and window is not None and rollback_step is not None:
        low, high = window
        in_window = low <= rollback_step <= high
        window_distance = 0 if in_window else min(abs(rollback_step - low), abs(rollback_step - high))
        best_distance = abs(rollback_step - high)
    return CaseOutcome(
        case=case.name, kind=case_kind(case), pattern=case.run.pattern if case.run is not None else None,
        tags=list(case.tags), accept=list(case.accept), preferred=case.preferred, healthy=case.healthy,
        rollback_window=window, onset_step=case.onset_step, decision=decision,
        rollback_step=rollback_step if decision == "rollback" else None,
        correct=decision is not None and decision in case.accept,
        false_stop=case.healthy and decision == "stop", in_window=in_window, window_distance=window_distance,
        best_distance=best_distance, **fields,
    )


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _mean(values: Sequence[float]) -> float | None:
    return float(statistics.fmean(values)) if values else None


def summarize(outcomes: Sequence[CaseOutcome]) -> Scores:
    """Accuracy, precision/recall, confusion, false stops and rollback placement over `outcomes`."""
    confusion = {expected: dict.fromkeys(DECISIONS, 0) for expected in DECISIONS}
    for o in outcomes:
        if o.decision is not None:
            expected = o.decision if o.correct else (o.preferred or o.accept[0])
            confusion[expected][o.decision] += 1
    precision = {d: _ratio(confusion[d][d], sum(confusion[e][d] for e in DECISIONS)) for d in DECISIONS}
    recall = {d: _ratio(confusion[d][d], sum(confusion[d].values())) for d in DECISIONS}
    rollbacks = [o for o in outcomes if o.in_window is not None]
    correct = sum(o.correct for o in outcomes)
    return Scores(
        cases=len(outcomes), errors=sum(o.decision is None for o in outcomes), correct=correct,
        accuracy=_ratio(correct, len(outcomes)), precision=dict(precision), recall=dict(recall),
        confusion={e: dict(row) for e, row in confusion.items()},
        healthy=sum(o.healthy for o in outcomes), false_stops=sum(o.false_stop for o in outcomes),
        false_stop_cases=[o.case for o in outcomes if o.false_stop],
        rollbacks=len(rollbacks), rollbacks_in_window=sum(bool(o.in_window) for o in rollbacks),
        rollback_in_window_rate=_ratio(sum(bool(o.in_window) for o in rollbacks), len(rollbacks)),
        mean_window_distance=_mean([float(o.window_distance or 0) for o in rollbacks]),
        mean_best_distance=_mean([float(o.best_distance or 0) for o in rollbacks]),
    )


def tally(outcomes: Iterable[CaseOutcome], key: Callable[[CaseOutcome], Iterable[str]]) -> dict[str, Tally]:
    """Accuracy per group; a case counts in every group `key` names for it."""
    groups: dict[str, list[bool]] = {}
    for o in outcomes:
        for name in key(o):
            groups.setdefault(name, []).append(o.correct)
    return {name: Tally(cases=len(v), correct=sum(v), accuracy=_ratio(sum(v), len(v)))
            for name, v in sorted(groups.items())}


def detection(onset: int, points: Sequence[int], decisions: Sequence[Decision | None]) -> DelayResult:
    """Detection step, delay and false alarms from the verdicts at successive truncation points."""
    detection_step = next((p for p, d in zip(points, decisions, strict=True) if p >= onset and d in ALARMS), None)
    return DelayResult(
        onset_step=onset, points=list(points), decisions=list(decisions), detection_step=detection_step,
        delay=None if detection_step is None else detection_step - onset,
        false_alarms=sum(1 for p, d in zip(points, decisions, strict=True) if p < onset and d in ALARMS),
        complete=all(d is not None for d in decisions),
    )


def summarize_delays(outcomes: Sequence[CaseOutcome]) -> DelaySummary:
    """Detection delay and false alarms over the outcomes that were replayed."""
    replayed = [o for o in outcomes if o.delay is not None]
    complete = [o for o in replayed if o.delay is not None and o.delay.complete]
    delays = [o.delay.delay for o in complete if o.delay is not None and o.delay.delay is not None]
    false_alarms = [o.delay.false_alarms for o in complete if o.delay is not None]
    return DelaySummary(
        cases=len(complete), detected=len(delays),
        missed=[o.case for o in complete if o.delay is not None and o.delay.delay is None],
        mean_delay=_mean([float(d) for d in delays]),
        median_delay=float(statistics.median(delays)) if delays else None,
        max_delay=max(delays) if delays else None, false_alarms=sum(false_alarms),
        cases_with_false_alarms=sum(1 for n in false_alarms if n), incomplete=len(replayed) - len(complete),
    )


def summarize_usage(outcomes: Sequence[CaseOutcome]) -> UsageSummary:
    """Tokens, requests, cost and latency per assessment."""
    judged = [o for o in outcomes if o.decision is not None or o.usage is not None]
    usages = [o.usage for o in judged if o.usage is not None]
    tokens = sum(u.input_tokens + u.output_tokens for u in usages)
    costs = [u.cost_usd for u in usages if u.cost_usd is not None]
    latencies = sorted(o.latency_s for o in judged)
    p95 = latencies[min(len(latencies) - 1, math.ceil(0.95 * len(latencies)) - 1)] if latencies else None
    requests = sum(u.requests for u in usages)
    return UsageSummary(
        assessments=len(judged), requests=requests, input_tokens=sum(u.input_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
        tokens_per_assessment=_ratio(tokens, len(judged)) if requests else None,
        cost_usd=sum(costs) if costs else None,
        cost_per_assessment_usd=sum(costs) / len(judged) if costs and judged else None,
        cost_estimated=any(o.cost_estimated for o in judged),
        mean_latency_s=_mean(latencies), p95_latency_s=p95, max_latency_s=latencies[-1] if latencies else None,
    )


def judge_report(judge: EvalJudge, outcomes: Sequence[CaseOutcome]) -> JudgeReport:
    """All of one judge's scores from its outcomes."""
    synthetic = [o for o in outcomes if o.kind == "synthetic"]
    real = [o for o in outcomes if o.kind == "real"]
    return JudgeReport(
        judge=judge.name, baseline=judge.baseline, synthetic=summarize(synthetic), real=summarize(real),
        by_pattern=tally(synthetic, lambda o: [o.pattern] if o.pattern else []),
        by_tag=tally(outcomes, lambda o: o.tags),
        delay_synthetic=summarize_delays(synthetic), delay_real=summarize_delays(real),
        usage=summarize_usage(outcomes), stale_cassettes=sum(o.stale_cassette for o in outcomes),
        outcomes=list(outcomes),
    )


# --- running


class Progress(Protocol):
    """Where the harness reports progress (the CLI draws a bar)."""

    def start(self, total: int) -> None:
        """The number of judgements planned."""

    def advance(self, label: str) -> None:
        """One judgement done; `label` says which."""


@dataclass(frozen=True)
class _Judged:
    decision: Decision | None
    rollback_step: int | None = None
    fields: dict[str, Any] = field(default_factory=dict)


class _Point:
    """One run (full or truncated), diagnosed once and judged by every judge."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.diagnostics: Diagnostics | None = None
        self.failure: str | None = None
        self._plots: list[Path] | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        try:
            self.diagnostics = diagnose(run)
        except Exception as error:  # one broken run must not end the eval; it is scored as failed
            if os.environ.get("ASSESSOR_DEBUG"):
                raise
            self.failure = f"diagnose failed: {type(error).__name__}: {error}"

    def plots(self) -> list[Path]:
        if self._plots is None:
            from assessor.plots import render_plots

            assert self.diagnostics is not None
            self._scratch = tempfile.TemporaryDirectory(prefix="assessor-eval-")
            self._plots = render_plots(self.run, self.diagnostics, Path(self._scratch.name))
        return self._plots

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()

    def judge(self, judge: EvalJudge, case: str) -> _Judged:
        from assessor.pipeline import resolve_rollback, sample_text

        if self.diagnostics is None:
            return _Judged(None, fields={"error": self.failure})
        bind = getattr(judge.judge, "bind_case", None)
        if callable(bind):
            bind(case)
        started = time.monotonic()
        try:
            plots = self.plots() if getattr(judge.judge, "wants_images", False) else []
            result = judge.judge.judge(JudgeRequest(run=self.run, diagnostics=self.diagnostics, plots=plots,
                                                    samples=[sample_text(s) for s in self.run.samples]))
        except Exception as error:
            if os.environ.get("ASSESSOR_DEBUG"):
                raise
            message = str(error) if isinstance(error, AssessorError) else f"{type(error).__name__}: {error}"
            return _Judged(None, fields={"error": message, "latency_s": time.monotonic() - started})
        elapsed = time.monotonic() - started
        verdict = resolve_rollback(result.verdict, self.run)
        usage = result.usage
        latency = usage.latency_s if usage is not None and usage.requests and usage.latency_s else elapsed
        estimated = usage is not None and usage.cost_usd is None and judge.price is not None and usage.requests > 0
        if estimated and usage is not None and judge.price is not None:
            cost = (usage.input_tokens * judge.price[0] + usage.output_tokens * judge.price[1]) / 1e6
            usage = usage.model_copy(update={"cost_usd": cost})
        return _Judged(verdict.decision, verdict.rollback_step, {
            "confidence": verdict.confidence, "headline": verdict.headline, "usage": usage, "latency_s": latency,
            "stale_cassette": bool(getattr(judge.judge, "last_stale", False)), "cost_estimated": estimated,
        })


def evaluate(
    loaded: Sequence[LoadedCase], judges: Sequence[EvalJudge], *, delay_count: int = DEFAULT_DELAY_POINTS,
    progress: Progress | None = None,
) -> dict[str, list[CaseOutcome]]:
    """Judge every case with every judge (and replay the failing ones for cheap judges).

    Returns:
        The scored outcomes per judge name, in case order.
    """
    from assessor.pipeline import truncate

    plans = [(item, delay_points(item.run, delay_count) if item.case.onset_step is not None else [])
             for item in loaded]
    cheap = [j for j in judges if j.cheap]
    if progress is not None:
        progress.start(sum(len(judges) + len(cheap) * max(len(points) - 1, 0) for _, points in plans))
    outcomes: dict[str, list[CaseOutcome]] = {j.name: [] for j in judges}
    for item, points in plans:
        case = item.case
        full = _Point(item.run)
        judged: dict[str, _Judged] = {}
        try:
            for j in judges:
                judged[j.name] = full.judge(j, case.name)
                if progress is not None:
                    progress.advance(f"{case.name} · {j.name}")
        finally:
            full.close()
        at_points: dict[str, list[Decision | None]] = {j.name: [] for j in cheap}
        for step in points[:-1]:
            point = _Point(truncate(item.run, step))
            try:
                for j in cheap:
                    at_points[j.name].append(point.judge(j, case.name).decision)
                    if progress is not None:
                        progress.advance(f"{case.name} @ {step} · {j.name}")
            finally:
                point.close()
        for j in judges:
            result = judged[j.name]
            delay = None
            if case.onset_step is not None and j.cheap and points:
                delay = detection(case.onset_step, points, [*at_points[j.name], result.decision])
            outcomes[j.name].append(score_case(case, result.decision, result.rollback_step,
                                               last_step=item.run.last_step, delay=delay, **result.fields))
    return outcomes


def run_eval(
    source: Path, judges: Sequence[EvalJudge], *, subset: str = "all", names: Sequence[str] = (),
    cache_dir: Path | None = None, delay_count: int = DEFAULT_DELAY_POINTS, progress: Progress | None = None,
    warn: Callable[[str], None] | None = None,
) -> EvalReport:
    """Load the cases under `source`, run them, and score every judge.

    Args:
        source: a case file or a folder of them (`evals/`).
        judges: the judges, in column order (see `build_judge`).
        subset: `all`, `fast`, `synthetic` or `real` (see `select_cases`).
        names: glob patterns on case names.
        cache_dir: where generated runs are kept (default: `.cache` beside the case files).
        delay_count: truncation points for the detection delay.
        progress: told how many judgements are planned and when each is done.
        warn: told about cases skipped (e.g. a real run not on this machine).

    Raises:
        ConfigError: no cases, a bad case file, an unknown subset, no judge.
    """
    from assessor.ingest import load_run

    if not judges:
        raise ConfigError("name at least one judge (e.g. --judge rules)")
    names_seen = [j.name for j in judges]
    if len(set(names_seen)) != len(names_seen):
        raise ConfigError(f"a judge is named twice ({', '.join(names_seen)}); name each once")
    root = source if source.is_dir() else source.parent
    cache_dir = cache_dir or root / ".cache"
    cases = select_cases(read_cases(source, [cache_dir]), subset, names)
    where, skipped = locate_runs(cases, cache_dir)
    loaded: list[LoadedCase] = []
    for file, case in cases:
        if case.name not in where:
            continue
        try:
            loaded.append(LoadedCase(case, file, load_run(where[case.name])))
        except AssessorError as error:
            skipped.append(Skipped(case=case.name, reason=str(error)))
    if warn is not None:
        for item in skipped:
            warn(f"skipped case {item.case}: {item.reason}")
    outcomes = evaluate(loaded, judges, delay_count=delay_count, progress=progress)
    return EvalReport(
        source=str(source), subset=subset, cases=len(loaded),
        synthetic_cases=sum(item.kind == "synthetic" for item in loaded),
        real_cases=sum(item.kind == "real" for item in loaded), delay_points=delay_count, skipped=skipped,
        judges=[judge_report(j, outcomes[j.name]) for j in judges],
    )


# --- floor


def floor_from(report: EvalReport, judge: str = FLOOR_JUDGE) -> Floor:
    """A floor a little below what `judge` measured now (accuracy - 0.02, window rate - 0.05, false stops as is).

    Raises:
        ConfigError: the judge did not run or there were no synthetic cases.
    """
    scores = _floor_scores(report, judge)
    assert scores.accuracy is not None
    rate = scores.rollback_in_window_rate
    return Floor(
        judge=judge, subset=report.subset,
        synthetic_accuracy=max(0.0, math.floor((scores.accuracy - ACCURACY_MARGIN) * 100) / 100),
        max_healthy_false_stops=scores.false_stops,
        rollback_in_window=None if rate is None else max(0.0, math.floor((rate - WINDOW_MARGIN) * 100) / 100),
        measured={"synthetic_accuracy": scores.accuracy, "healthy_false_stops": scores.false_stops,
                  "rollback_in_window": rate, "synthetic_cases": scores.cases},
    )


def check_floor(report: EvalReport, floor: Floor) -> FloorCheck:
    """Compare the floor judge's synthetic scores with `floor`.

    Raises:
        ConfigError: the floor's judge did not run or there were no synthetic cases.
    """
    scores = _floor_scores(report, floor.judge)
    assert scores.accuracy is not None
    problems: list[str] = []
    if scores.accuracy < floor.synthetic_accuracy:
        problems.append(f"synthetic accuracy {scores.accuracy:.3f} < floor {floor.synthetic_accuracy:.3f}")
    if scores.false_stops > floor.max_healthy_false_stops:
        problems.append(f"{scores.false_stops} false stops on healthy runs > floor {floor.max_healthy_false_stops}"
                        f" ({', '.join(scores.false_stop_cases)})")
    rate = scores.rollback_in_window_rate
    if floor.rollback_in_window is not None and rate is not None and rate < floor.rollback_in_window:
        problems.append(f"rollbacks inside the window {rate:.3f} < floor {floor.rollback_in_window:.3f}")
    where = f"{floor.judge} judge on {scores.cases} synthetic cases ({report.subset} subset)"
    if problems:
        message = f"floor check failed: {where}: {'; '.join(problems)}"
    else:
        shown = "n/a" if rate is None else f"{rate:.2f}"
        message = (f"floor check passed: {where}: accuracy {scores.accuracy:.2f}, {scores.false_stops} false "
                   f"stops, rollbacks in window {shown}")
    return FloorCheck(passed=not problems, problems=problems, message=message)


def read_floor(path: Path) -> Floor:
    """The floor recorded in a JSON file.

    Raises:
        ConfigError: the file is missing or not a floor.
    """
    try:
        return Floor.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as error:
        first = str(error).splitlines()[0]
        raise ConfigError(f"{path}: not a readable floor file ({first}); write one with --write-floor") from error


def write_floor(floor: Floor, path: Path) -> None:
    """Record `floor` as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(floor.model_dump_json(indent=2) + "\n", encoding="utf-8")


def _floor_scores(report: EvalReport, judge: str) -> Scores:
    found = report.judge_report(judge)
    if found is None:
        raise ConfigError(f"the floor is about the {judge} judge; add --judge {judge}")
    if found.synthetic.accuracy is None:
        raise ConfigError(f"the floor is about synthetic cases and none ran ({report.subset} subset)")
    return found.synthetic
