"""Terminal rendering of an `Assessment` (rich), and its JSON contract as text.

Run names, observations and every other string a judge or a run supplies are untrusted: they are printed as
`rich.text.Text` (never parsed as console markup) with control characters (ESC included) replaced.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from assessor.assessment import Assessment
from assessor.judge.models import Usage
from assessor.printable import json_text, printable

DECISION_LABEL = {"continue": "CONTINUE", "stop": "STOP", "rollback": "ROLL BACK"}
DECISION_STYLE = {
    "continue": "bold white on green4",
    "stop": "bold white on red3",
    "rollback": "bold black on orange1",
}
DECISION_ACCENT = {"continue": "green4", "stop": "red3", "rollback": "orange1"}


def contract_json(assessment: Assessment, indent: int | None = 2) -> str:
    """`assessment.contract()` as strict JSON (non-finite floats become null, so every parser reads it).

    Args:
        assessment: The assessment to serialise.
        indent: JSON indentation; None for one line.

    Returns:
        The JSON text, without a trailing newline.
    """
    return json_text(json.dumps(_finite(assessment.contract()), indent=indent, ensure_ascii=False, allow_nan=False))


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def steps_label(steps: Sequence[int], limit: int = 5) -> str:
    """Steps as a short label: `step 120`, `steps 50, 100, 150`, `steps 10, 20, … 240 (12)`.

    Args:
        steps: Steps, in the order they were given.
        limit: How many to list before eliding.

    Returns:
        The label, or an empty string when there are no steps.
    """
    if not steps:
        return ""
    if len(steps) == 1:
        return f"step {steps[0]}"
    if len(steps) <= limit:
        return "steps " + ", ".join(str(s) for s in steps)
    head = ", ".join(str(s) for s in steps[: limit - 1])
    return f"steps {head}, … {steps[-1]} ({len(steps)})"


def rollback_label(assessment: Assessment) -> str | None:
    """`to step 100 (checkpoints/global_step_100)` for a rollback, else None."""
    v = assessment.verdict
    if v.decision != "rollback":
        return None
    return f"to step {v.rollback_step} ({v.rollback_checkpoint or missing_checkpoint(assessment)})"


def missing_checkpoint(assessment: Assessment) -> str:
    """What to restore when no checkpoint at or before the rollback step is in the run directory."""
    best = assessment.diagnostics.best_checkpoint
    if best.expected_checkpoint_step:
        return (f"not in the run directory: restore the one your save interval of {best.save_steps} steps wrote at "
                f"step {best.expected_checkpoint_step}")
    return "not in the run directory: restore the newest checkpoint you saved at or before it, or re-run to it"


def cost_label(assessment: Assessment) -> str | None:
    """What the run spent for nothing: steps (and hours) since its best point and on zero-signal steps."""
    c = assessment.diagnostics.compute
    parts = []
    if c.steps_since_best:
        hours = (f", about {c.gpu_hours_since_best:.1f} GPU-hours" if c.gpu_hours_since_best else
                 f", about {c.hours_since_best:.1f} h" if c.hours_since_best else "")
        parts.append(f"{c.steps_since_best} steps{hours} since the best point")
    if c.zero_signal_steps:
        hours = f", about {c.hours_on_zero_signal:.1f} h" if c.hours_on_zero_signal else ""
        parts.append(f"{c.zero_signal_steps} steps{hours} on batches with no learning signal")
    return "; ".join(parts) or None


def quadrant_label(quadrant: str) -> str:
    """`kl_up_reward_down` → `KL up, reward down`."""
    kl, _, reward = quadrant.removeprefix("kl_").partition("_reward_")
    return f"KL {kl}, reward {reward}"


def run_label(assessment: Assessment) -> str:
    """`verl · grpo · step 240 of 300 (80%)`: what was assessed, in one line."""
    header = assessment.diagnostics.run
    step = f"step {assessment.last_step}" if assessment.last_step is not None else "no steps"
    if header.planned_total_steps:
        step += f" of {header.planned_total_steps}"
        if header.progress is not None:
            step += f" ({header.progress:.0%})"
    state = header.state if header.state != "live" else ""
    return (f"{assessment.framework or 'unknown framework'} · {assessment.algorithm or 'unknown algorithm'} · {step}"
            + (f" · {state}" if state else ""))


def usage_label(usage: Usage | None) -> str | None:
    """Tokens, requests, time and cost of an LLM judgement; None when nothing was spent."""
    if usage is None or (usage.requests == 0 and usage.input_tokens == 0 and usage.output_tokens == 0):
        return None
    cached = f" ({usage.cached_input_tokens:,} cached)" if usage.cached_input_tokens else ""
    parts = [f"{usage.input_tokens:,} input{cached} + {usage.output_tokens:,} output tokens",
             f"{usage.requests} request{'s' if usage.requests != 1 else ''}"]
    if usage.latency_s:
        parts.append(f"{usage.latency_s:.1f} s")
    if usage.cost_usd is not None:
        parts.append(f"${usage.cost_usd:.4f}")
    elif usage.requests:
        parts.append("cost unknown (no price for this model: set ASSESSOR_PRICES)")
    return ", ".join(parts)


def render_assessment(assessment: Assessment, console: Console, written: Sequence[Path | str] = ()) -> None:
    """Print the verdict: decision badge, headline, rollback target, evidence, risks, actions, blind spots.

    Args:
        assessment: What `assessor.pipeline.assess` returned.
        console: Where to print.
        written: Files written for this assessment (reports, then plots), listed at the end.
    """
    v = assessment.verdict
    accent = DECISION_ACCENT[v.decision]
    _emit(console, Text.assemble(
        (f" {DECISION_LABEL[v.decision]} ", DECISION_STYLE[v.decision]),
        "  ", (f"confidence {v.confidence:.0%}", "bold"),
        "  ", (assessment.run, "bold"), "  ", (run_label(assessment), "cyan"),
    ))
    _emit(console, Text(v.headline, style="bold"))
    rollback = rollback_label(assessment)
    if rollback:
        _emit(console, Text.assemble(("Roll back ", f"bold {accent}"), rollback))
    cost = cost_label(assessment)
    if cost:
        _emit(console, Text.assemble(("Spent ", f"bold {accent}"), cost))
    if v.rationale:
        _emit(console, Text(v.rationale, style="dim"))
    _section(console, "Evidence", [
        Text.assemble((f"{e.signal}: ", "bold"), e.observation,
                      (f"  ({steps_label(e.steps)})" if e.steps else "", "dim"))
        for e in v.evidence
    ], bullet="•", accent=accent)
    _section(console, "Risks", [Text(r) for r in v.risks], bullet="!", accent="yellow")
    _section(console, "Recommended actions", [Text(a) for a in v.recommended_actions], bullet="→", accent=accent)
    _section(console, "Could not see", [Text(c, style="dim") for c in v.could_not_see], bullet="?", accent="dim")
    judge = Text.assemble(("Judge: ", "bold"), assessment.judge)
    usage = usage_label(assessment.usage)
    if usage:
        judge.append(f" ({usage})", style="dim")
    _emit(console, judge)
    if written:
        _emit(console, Text.assemble(("Wrote: ", "bold"), ", ".join(str(p) for p in written)))


def _section(console: Console, title: str, lines: list[Text], bullet: str, accent: str) -> None:
    if not lines:
        return
    _emit(console, Text(title, style="bold underline"))
    for line in lines:  # wrapped by hand for a hanging indent without a table's trailing padding
        for i, part in enumerate(line.wrap(console, max(console.width - 4, 20))):
            part.rstrip()
            _emit(console, Text.assemble((f"  {bullet} " if i == 0 else "    ", accent), part))


def _emit(console: Console, text: Text) -> None:
    # rich keeps ESC and most other control characters: a run name or an observation could drive the terminal.
    # Replaced one for one, so the styled spans still line up.
    console.print(Text(printable(text.plain), style=text.style, spans=text.spans, end=text.end))
