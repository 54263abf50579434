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
* **format disagreements**: a scenario written in several formats (cases sharing `Case.scenario`: the same run,
  so the same labels) whose decisions differ between formats is a failure of its own, listed with each
  format's decision and counted per judge (`Scores.format_disagreements`);
* **usage**: tokens, requests and cost per assessment (LLM judges), and latency per judgement.

The modules: `models` (the records), `judges` (building the judges), `loading` (choosing the cases, locating
their runs), `running` (judging them), `scoring` (the numbers above) and `floor` (the rules judge's floor).
"""

from __future__ import annotations

from assessor.evals.harness.floor import (
    ACCURACY_MARGIN,
    WINDOW_MARGIN,
    check_floor,
    floor_from,
    read_floor,
    write_floor,
)
from assessor.evals.harness.judges import CHEAP_JUDGES, EvalJudge, build_judge, build_judges, parse_price
from assessor.evals.harness.loading import FAST_TAG, SUBSETS, LoadedCase, locate_runs, read_cases, select_cases
from assessor.evals.harness.models import (
    DECISIONS,
    FLOOR_JUDGE,
    CaseOutcome,
    DelayResult,
    DelaySummary,
    EvalReport,
    Floor,
    FloorCheck,
    FormatDisagreement,
    JudgeReport,
    Kind,
    Scores,
    Skipped,
    Tally,
    UsageSummary,
    case_kind,
)
from assessor.evals.harness.running import DEFAULT_DELAY_POINTS, Progress, delay_points, evaluate, run_eval
from assessor.evals.harness.scoring import (
    ALARMS,
    detection,
    expected_decision,
    format_disagreements,
    judge_report,
    score_case,
    summarize,
    summarize_delays,
    summarize_usage,
    tally,
)

__all__ = [
    "ACCURACY_MARGIN", "ALARMS", "CHEAP_JUDGES", "DECISIONS", "DEFAULT_DELAY_POINTS", "FAST_TAG", "FLOOR_JUDGE",
    "SUBSETS", "WINDOW_MARGIN", "CaseOutcome", "DelayResult", "DelaySummary", "EvalJudge", "EvalReport", "Floor",
    "FloorCheck", "FormatDisagreement", "JudgeReport", "Kind", "LoadedCase", "Progress", "Scores", "Skipped",
    "Tally", "UsageSummary", "build_judge", "build_judges", "case_kind", "check_floor", "delay_points",
    "detection", "evaluate", "expected_decision", "floor_from", "format_disagreements", "judge_report",
    "locate_runs", "parse_price", "read_cases", "read_floor", "run_eval", "score_case", "select_cases",
    "summarize", "summarize_delays", "summarize_usage", "tally", "write_floor",
]
