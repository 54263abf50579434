"""Running the judges over the cases: `run_eval` loads, judges and scores; `evaluate` does the judging.

Each run is diagnosed once and judged by every judge; a case with an onset is then replayed truncated at
`delay_points` for the cheap judges (detection delay). One broken run or failed judgement is scored as a
failure, not allowed to end the eval (unless `ASSESSOR_DEBUG` is set).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from assessor.diagnose import diagnose
from assessor.diagnose.models import Diagnostics
from assessor.errors import AssessorError, ConfigError
from assessor.evals.harness.judges import EvalJudge
from assessor.evals.harness.loading import LoadedCase, load_located, locate_runs, read_cases, select_cases
from assessor.evals.harness.models import CaseOutcome, EvalReport
from assessor.evals.harness.scoring import detection, judge_report, score_case
from assessor.judge import JudgeRequest
from assessor.judge.models import Decision
from assessor.run import Run

DEFAULT_DELAY_POINTS = 12


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


def _first_step(run: Run) -> int:
    steps = run.metrics["step"][run.metrics["split"] == "train"] if len(run.metrics) else run.metrics["step"]
    return int(steps.min()) if len(steps) else 0


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

    def __init__(self, run: Run, now: float | None = None) -> None:
        self.run = run
        self.diagnostics: Diagnostics | None = None
        self.failure: str | None = None
        self._plots: list[Path] | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        try:
            self.diagnostics = diagnose(run, now=now)
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
        from assessor.pipeline import resolve_rollback

        if self.diagnostics is None:
            return _Judged(None, fields={"error": self.failure})
        bind = getattr(judge.judge, "bind_case", None)
        if callable(bind):
            bind(case)
        started = time.monotonic()
        try:
            plots = self.plots() if getattr(judge.judge, "wants_images", False) else []
            # Completion samples travel with the run (`run.samples`); the prompt picks start, best point and now.
            result = judge.judge.judge(JudgeRequest(run=self.run, diagnostics=self.diagnostics, plots=plots))
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

    # Failing runs are replayed for the detection delay, healthy ones for alarms on their prefixes. A problem that
    # `continue` also answers (a plateau where stopping only saves compute) has nothing to detect, so it is neither.
    plans = [(item, delay_points(item.run, delay_count) if item.case.needs_action or item.case.healthy
              else []) for item in loaded]
    cheap = [j for j in judges if j.cheap]
    if progress is not None:
        progress.start(sum(len(judges) + len(cheap) * max(len(points) - 1, 0) for _, points in plans))
    outcomes: dict[str, list[CaseOutcome]] = {j.name: [] for j in judges}
    clocks = clock_per_file(loaded)
    for item, points in plans:
        case = item.case
        full = _Point(item.run, now=clocks.get(item.file))
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
            if j.cheap and points:
                span = points[-1] - _first_step(item.run)
                delay = detection(case.onset_step, points, [*at_points[j.name], result.decision], span)
            outcomes[j.name].append(score_case(case, result.decision, result.rollback_step,
                                               last_step=item.run.last_step, delay=delay, **result.fields))
    return outcomes


def clock_per_file(loaded: Sequence[LoadedCase]) -> dict[Path, float]:
    """When each case file's runs are judged: the newest write among its runs on disk.

    A labelled set is written (or copied, keeping file times) at one moment; its runs' ages are their distances
    from that moment, so a run stalled for five hours when the set was made is still stalled when it is scored a
    week later, and a live one is still live. The wall clock would call every run of an old set stalled; no clock
    at all would call none. Copies that reset the file times leave every run equally fresh: none is stalled.
    Generated (synthetic) cases are left out: their cache is written a run at a time, whenever one is missing.
    """
    newest: dict[Path, float] = {}
    for item in loaded:
        written = item.run.newest_write
        if item.kind == "real" and written is not None:
            newest[item.file] = max(newest.get(item.file, written), written)
    return newest


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
    if not judges:
        raise ConfigError("name at least one judge (e.g. --judge rules)")
    names_seen = [j.name for j in judges]
    if len(set(names_seen)) != len(names_seen):
        raise ConfigError(f"a judge is named twice ({', '.join(names_seen)}); name each once")
    root = source if source.is_dir() else source.parent
    cache_dir = cache_dir or root / ".cache"
    cases = select_cases(read_cases(source, [cache_dir]), subset, names)
    where, skipped = locate_runs(cases, cache_dir)
    loaded, failed = load_located(cases, where)
    skipped.extend(failed)
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
