"""The result of `assess`: the verdict, the diagnostics it rests on, and the JSON contract scripts rely on."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assessor.diagnose.models import Diagnostics
from assessor.judge.models import EXIT_CODES, Usage, Verdict


class Assessment(BaseModel):
    """One assessment of one run."""

    model_config = ConfigDict(extra="forbid")

    run: str
    path: str
    framework: str | None
    algorithm: str | None
    last_step: int | None
    judge: str = Field(description="`rules`, `anthropic:<model>`, `openai:<model>`, `fake` or `verdicts:<dir>`.")
    verdict: Verdict
    diagnostics: Diagnostics
    plots: list[str] = Field(default_factory=list, description="Figures written, as paths.")
    usage: Usage | None = None
    judge_fallback: str | None = Field(
        None, description="Why the rules judge decided in place of the LLM `auto` chose (its API was unreachable).")

    @property
    def exit_code(self) -> int:
        """0 continue, 10 stop, 11 rollback: what `assessor assess` exits with."""
        return EXIT_CODES[self.verdict.decision]

    def contract(self) -> dict[str, Any]:
        """The `assess --format json` object (see DESIGN.md, "Contracts")."""
        v = self.verdict
        gpu = self.diagnostics.gpu
        return {
            "run": self.run,
            "path": self.path,
            "framework": self.framework,
            "algorithm": self.algorithm,
            "last_step": self.last_step,
            "decision": v.decision,
            "rollback_step": v.rollback_step,
            "rollback_checkpoint": v.rollback_checkpoint,
            "confidence": v.confidence,
            "run_state": self.diagnostics.run.state,
            "judge": self.judge,
            "headline": v.headline,
            "rationale": v.rationale,
            "evidence": [e.model_dump() for e in v.evidence],
            "risks": v.risks,
            "recommended_actions": v.recommended_actions,
            "could_not_see": v.could_not_see,
            "gpu": gpu.model_dump(exclude={"findings"}) if gpu is not None else None,
            "compute": self.diagnostics.compute.model_dump(),
            "plots": self.plots,
            "usage": self.usage.model_dump() if self.usage else None,
            "diagnostics": self.diagnostics.model_dump(),
        }
