"""What a judge returns: a verdict with its evidence, and what it cost."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Decision = Literal["continue", "stop", "rollback"]
EXIT_CODES: dict[Decision, int] = {"continue": 0, "stop": 10, "rollback": 11}  # what `assessor assess` exits with


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Evidence(_Model):
    """One observation the decision rests on."""

    signal: str = Field(description="Canonical metric or area, e.g. `kl`, `reward_mean`, `eval`, `length`.")
    observation: str = Field(description="What the curve shows, with numbers and steps.")
    steps: list[int] = Field(default_factory=list, description="Steps where it shows.")


class Verdict(_Model):
    """A judge's decision about a run, explained.

    The field descriptions double as the schema an LLM judge fills in.
    """

    decision: Decision = Field(description="continue training, stop it, or roll back to an earlier checkpoint.")
    rollback_step: int | None = Field(
        None, description="The step to roll back to; required when decision is rollback, else null.")
    rollback_checkpoint: str | None = Field(
        None, description="A checkpoint path exactly as the checkpoint list gives it (relative to the run "
        "directory), at or before rollback_step; null if none is on disk.")
    confidence: float = Field(ge=0.0, le=1.0, description="How sure the judge is, 0 to 1.")
    headline: str = Field(description="One sentence a busy practitioner reads first.")
    rationale: str = Field(description="The reasoning, a short paragraph: trajectory, KL/reward, signal health, "
                           "best checkpoint.")
    evidence: list[Evidence] = Field(description="The observations the decision rests on, most important first.")
    risks: list[str] = Field(default_factory=list, description="What could go wrong with this decision.")
    recommended_actions: list[str] = Field(default_factory=list, description="Concrete next steps.")
    could_not_see: list[str] = Field(
        default_factory=list, description="Blind spots: signals the run does not log and what that leaves unknown. "
        "The diagnosis's own list (the sheet's 'Not visible in this run') is attached to every verdict; an LLM judge "
        "names only blind spots that list does not, and otherwise leaves this empty.")

    @model_validator(mode="after")
    def _rollback_needs_a_step(self) -> Verdict:
        if self.decision == "rollback" and self.rollback_step is None:
            raise ValueError("decision is rollback but rollback_step is null; give the step to roll back to")
        if self.decision != "rollback" and (self.rollback_step is not None or self.rollback_checkpoint is not None):
            raise ValueError(f"rollback_step/rollback_checkpoint must be null when decision is {self.decision!r}")
        return self


class Usage(_Model):
    """What one judgement cost (LLM judges).

    `input_tokens` counts every input token, those read from the provider's prompt cache (`cached_input_tokens`,
    billed at the cached rate) and those written to it (`cache_write_tokens`, Anthropic only, billed at 1.25x)
    included. `cost_usd` is None when the model's price is unknown (see `assessor.judge.prices`).
    """

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None

    def plus(self, other: Usage | None) -> Usage:
        """The two usages added up (the cost is None only when neither has one)."""
        if other is None:
            return self
        costs = [c for c in (self.cost_usd, other.cost_usd) if c is not None]
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            output_tokens=self.output_tokens + other.output_tokens, requests=self.requests + other.requests,
            latency_s=self.latency_s + other.latency_s, cost_usd=sum(costs) if costs else None,
        )
