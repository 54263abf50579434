"""Turning verdicts into scores: one case at a time, then per judge.

`score_case` checks one verdict against the case's labels; `summarize`, `tally`, `summarize_delays` and
`summarize_usage` aggregate the outcomes, `detection` reads the verdicts of a truncated replay, and
`judge_report` gathers everything measured for one judge.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from assessor.evals.cases import Case
from assessor.evals.harness.judges import EvalJudge
from assessor.evals.harness.models import (
    DECISIONS,
    CaseOutcome,
    DelayResult,
    DelaySummary,
    FormatDisagreement,
    JudgeReport,
    Scores,
    Tally,
    UsageSummary,
    case_kind,
)
from assessor.judge.models import Decision

ALARMS: frozenset[str] = frozenset({"stop", "rollback"})


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
        scenario=case.scenario, format=case.run.format if case.run is not None else None,
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
    groups = _scenario_groups(outcomes)
    disagreements = [d.scenario for d in format_disagreements(outcomes)]
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
        scenarios=len(groups), format_disagreements=len(disagreements),
        format_disagreement_scenarios=disagreements,
    )


def _scenario_groups(outcomes: Iterable[CaseOutcome]) -> dict[str, list[CaseOutcome]]:
    """The outcomes of each scenario judged in more than one case, in case order."""
    groups: dict[str, list[CaseOutcome]] = {}
    for o in outcomes:
        if o.scenario is not None:
            groups.setdefault(o.scenario, []).append(o)
    return {name: group for name, group in groups.items() if len(group) > 1}


def format_disagreements(outcomes: Iterable[CaseOutcome]) -> list[FormatDisagreement]:
    """Scenarios whose decisions differ between the formats they were written in.

    A failed judgement counts as a decision of its own (that format could not be judged). Rollback steps may
    differ; decisions may not.
    """
    found: list[FormatDisagreement] = []
    for name, group in _scenario_groups(outcomes).items():
        if len({o.decision for o in group}) <= 1:
            continue
        decisions: dict[str, str] = {}
        cases: dict[str, str] = {}
        for o in group:
            key = o.format or o.case
            if key in decisions:  # one scenario written twice in one format (two tensorboard frameworks)
                key = o.case
            shown: str = "error" if o.decision is None else o.decision
            if o.decision == "rollback" and o.rollback_step is not None:
                shown += f"@{o.rollback_step}"
            decisions[key] = shown
            cases[key] = o.case
        found.append(FormatDisagreement(scenario=name, decisions=decisions, cases=cases))
    return found


def tally(outcomes: Iterable[CaseOutcome], key: Callable[[CaseOutcome], Iterable[str]]) -> dict[str, Tally]:
    """Accuracy per group; a case counts in every group `key` names for it."""
    groups: dict[str, list[bool]] = {}
    for o in outcomes:
        for name in key(o):
            groups.setdefault(name, []).append(o.correct)
    return {name: Tally(cases=len(v), correct=sum(v), accuracy=_ratio(sum(v), len(v)))
            for name, v in sorted(groups.items())}


def detection(
    onset: int | None, points: Sequence[int], decisions: Sequence[Decision | None], span: int | None = None,
) -> DelayResult:
    """Detection step, delay and false alarms from the verdicts at successive truncation points.

    `onset` None is a healthy run: every stop or rollback on one of its prefixes is a false alarm. `span` (the
    run's logged steps, first to last) turns the delay into a share of the run.
    """
    if onset is None:
        return DelayResult(onset_step=None, points=list(points), decisions=list(decisions),
                           false_alarms=sum(1 for d in decisions if d in ALARMS),
                           complete=all(d is not None for d in decisions))
    detection_step = next((p for p, d in zip(points, decisions, strict=True) if p >= onset and d in ALARMS), None)
    delay = None if detection_step is None else detection_step - onset
    return DelayResult(
        onset_step=onset, points=list(points), decisions=list(decisions), detection_step=detection_step,
        delay=delay, delay_share=delay / span if delay is not None and span else None,
        false_alarms=sum(1 for p, d in zip(points, decisions, strict=True) if p < onset and d in ALARMS),
        complete=all(d is not None for d in decisions),
    )


def summarize_delays(outcomes: Sequence[CaseOutcome]) -> DelaySummary:
    """Detection delay and false alarms over the outcomes that were replayed."""
    replayed = [o for o in outcomes if o.delay is not None]
    healthy = [o for o in replayed if o.delay is not None and o.delay.onset_step is None and o.delay.complete]
    failing = [o for o in replayed if o.delay is not None and o.delay.onset_step is not None]
    complete = [o for o in failing if o.delay is not None and o.delay.complete]
    delays = [o.delay.delay for o in complete if o.delay is not None and o.delay.delay is not None]
    shares = [o.delay.delay_share for o in complete if o.delay is not None and o.delay.delay_share is not None]
    false_alarms = [o.delay.false_alarms for o in complete if o.delay is not None]
    return DelaySummary(
        cases=len(complete), detected=len(delays),
        missed=[o.case for o in complete if o.delay is not None and o.delay.delay is None],
        mean_delay=_mean([float(d) for d in delays]),
        median_delay=float(statistics.median(delays)) if delays else None,
        max_delay=max(delays) if delays else None, false_alarms=sum(false_alarms),
        cases_with_false_alarms=sum(1 for n in false_alarms if n),
        median_delay_share=float(statistics.median(shares)) if shares else None,
        max_delay_share=max(shares) if shares else None,
        healthy_replayed=len(healthy), healthy_alarms=sum(o.delay.false_alarms for o in healthy if o.delay),
        healthy_runs_with_alarms=[o.case for o in healthy if o.delay and o.delay.false_alarms],
        incomplete=len(replayed) - len(complete) - len(healthy),
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
        format_disagreements=format_disagreements(outcomes), outcomes=list(outcomes),
    )
