"""The records an eval produces: outcomes per case, scores, summaries, the report and the floor.

All are pydantic models with `extra="forbid"`, so `eval.json` round-trips; `DECISIONS` fixes the order the
decisions are shown in.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from assessor.evals.cases import Case
from assessor.judge.models import Decision, Usage

DECISIONS: tuple[Decision, ...] = ("continue", "stop", "rollback")
FLOOR_JUDGE = "rules"
Kind = Literal["synthetic", "real"]


def case_kind(case: Case) -> Kind:
    """`synthetic` for a generated case, `real` for one read from a path."""
    return "synthetic" if case.run is not None else "real"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DelayResult(_Model):
    """One judge replayed on one run, truncated at successive steps (a failing run, or a healthy one)."""

    onset_step: int | None = Field(description="None for a healthy run: every alarm on it is false.")
    points: list[int] = Field(description="Truncation steps, the last being the full run.")
    decisions: list[Decision | None] = Field(description="The verdict at each point (None: the judge failed).")
    detection_step: int | None = Field(None, description="First point at or after the onset with stop/rollback.")
    delay: int | None = Field(None, description="detection_step - onset_step; None if never detected.")
    delay_share: float | None = Field(None, description="The delay as a share of the run's logged span.")
    false_alarms: int = Field(0, description="Stop/rollback verdicts at points before the onset.")
    complete: bool = Field(True, description="False when the judge failed at some point (left out of summaries).")


class CaseOutcome(_Model):
    """One judge's verdict on one case, scored."""

    case: str
    kind: Kind
    pattern: str | None = None
    scenario: str | None = Field(None, description="The scenario the case writes (one per format), if any.")
    format: str | None = Field(None, description="The on-disk format of a generated case.")
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
    scenarios: int = Field(0, description="Scenarios judged in more than one format.")
    format_disagreements: int = Field(0, description="Scenarios whose verdicts differ between formats.")
    format_disagreement_scenarios: list[str] = Field(default_factory=list)


class FormatDisagreement(_Model):
    """A scenario whose cases (one run written in several formats) got different decisions: a failure."""

    scenario: str
    decisions: dict[str, str] = Field(
        description="format -> decision (`rollback@STEP`; `error` when the judge gave no verdict).")
    cases: dict[str, str] = Field(description="format -> case name.")


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
    median_delay_share: float | None = Field(None, description="Median delay as a share of each run's span.")
    max_delay_share: float | None = None
    healthy_replayed: int = Field(0, description="Healthy runs replayed on their prefixes.")
    healthy_alarms: int = Field(0, description="Stop/rollback verdicts on prefixes of healthy runs.")
    healthy_runs_with_alarms: list[str] = Field(default_factory=list)
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
    format_disagreements: list[FormatDisagreement] = Field(default_factory=list)
    outcomes: list[CaseOutcome] = Field(default_factory=list)


class Skipped(_Model):
    """A case that could not be run at all (e.g. a real run that is not on this machine)."""

    case: str
    reason: str
    not_here: bool = Field(
        False, description="A run not on this machine yet (a real run to fetch, a holdout run to write); not broken.")


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
    max_format_disagreements: int | None = Field(
        None, description="Most scenarios whose verdicts may differ between formats (None: not checked).")
    measured: dict[str, float | int | None] = Field(
        default_factory=dict, description="The values measured when the floor was written.")
