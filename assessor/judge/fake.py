"""Canned judges for tests, evals and demos: queued verdicts, or a function of the request."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from assessor.judge.base import JudgeRequest, JudgeResult
from assessor.judge.models import Evidence, Usage, Verdict


def _default(request: JudgeRequest) -> Verdict:
    return Verdict(
        decision="continue", confidence=0.5, headline="Canned verdict from the fake judge (no judgement made).",
        rationale="The fake judge returns a fixed verdict; use --judge rules or an LLM judge for a real one.",
        evidence=[Evidence(signal="run", observation=f"{request.run.name}: step {request.run.last_step}")],
    )


class FakeJudge:
    """Returns queued verdicts in order, then `respond(request)` (by default a fixed continue)."""

    name = "fake"

    def __init__(
        self, verdicts: Iterable[Verdict] = (), respond: Callable[[JudgeRequest], Verdict] = _default
    ) -> None:
        self.queue: deque[Verdict] = deque(verdicts)
        self.respond = respond
        self.requests: list[JudgeRequest] = []

    def enqueue(self, *verdicts: Verdict) -> None:
        """Queue verdicts to return, in order."""
        self.queue.extend(verdicts)

    def judge(self, request: JudgeRequest) -> JudgeResult:
        """The next queued verdict, or the function's."""
        self.requests.append(request)
        verdict = self.queue.popleft() if self.queue else self.respond(request)
        return JudgeResult(verdict=verdict, usage=Usage(requests=0))


def make(model: str | None = None, **options: object) -> FakeJudge:
    """The fake judge (`--judge fake`)."""
    return FakeJudge()
