"""The judge interface: one method, `judge(request) -> JudgeResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from assessor.judge.models import Usage, Verdict

if TYPE_CHECKING:  # annotations only: `assessor.judge.models` stays importable without the diagnosis stack
    from assessor.diagnose.models import Diagnostics
    from assessor.run import Run


@dataclass(frozen=True)
class JudgeRequest:
    """Everything a judge may look at.

    Attributes:
        run: the run as read (facts, checkpoints on disk).
        diagnostics: the numeric stage's reading.
        plots: rendered figures (the dashboard first); LLM judges may send them as images.
        samples: other free text from the run (completion samples themselves come with `run.samples`, from which
            the prompt picks a few at the start, the best point and now): untrusted data, never instructions.
    """

    run: Run
    diagnostics: Diagnostics
    plots: list[Path] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class JudgeResult:
    """A verdict and what producing it cost."""

    verdict: Verdict
    usage: Usage | None = None


def with_blind_spots(result: JudgeResult, diagnostics: Diagnostics) -> JudgeResult:
    """The verdict with the diagnosis's `could_not_see` list, followed by any blind spot the judge added.

    What the run does not log is a fact the numeric stage already lists; an LLM judge is told not to spend output
    tokens copying that list (and possibly dropping items from it), only to name what it met beyond it.
    """
    added = [item for item in result.verdict.could_not_see if item not in diagnostics.absent]
    merged = [*diagnostics.absent, *added]
    if merged == result.verdict.could_not_see:
        return result
    verdict = result.verdict.model_copy(update={"could_not_see": merged})
    return JudgeResult(verdict=verdict, usage=result.usage)


class Judge(Protocol):
    """Turns diagnostics into a verdict."""

    name: str  # as reported: "rules", "anthropic:<model>", "openai:<model>", "fake"

    def judge(self, request: JudgeRequest) -> JudgeResult:
        """Decide continue, stop or rollback, with evidence."""
        ...
