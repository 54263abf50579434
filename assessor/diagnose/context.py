"""What every diagnosis function receives: the run, and the readings of its curves."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from assessor.diagnose.models import Finding, RunState, Severity
from assessor.diagnose.signals import SignalBook
from assessor.run import Run, RunFacts


@dataclass
class Context:
    """The run being diagnosed and a shared cache of per-signal readings."""

    run: Run
    # `run_state`'s answer: a finished, stalled or crashed run has no next evaluation to wait for.
    state: RunState = "live"
    book: SignalBook = field(init=False)

    def __post_init__(self) -> None:
        self.book = SignalBook(self.run)

    @property
    def facts(self) -> RunFacts:
        """The run's facts (framework, algorithm, beta, caps, ...)."""
        return self.run.facts


def num(value: float | None) -> str:
    """A number as a practitioner would say it: three significant digits, no exponent for ordinary sizes.

    >>> num(0.123456), num(1234.5), num(3e-05), num(0.000145), num(None)
    ('0.123', '1234', '3e-05', '0.00015', 'n/a')
    """
    if value is None or not math.isfinite(value):
        return "n/a"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 1e-3:
        return f"{value:.3g}"
    return f"{value:.2g}"  # two digits: 0.00012 -> 0.00015 is a rise


def finding(signal: str, kind: str, severity: Severity, observation: str, steps: list[int] | None = None) -> Finding:
    """Shorthand for a `Finding`."""
    return Finding(signal=signal, kind=kind, severity=severity, observation=observation, steps=steps or [])
