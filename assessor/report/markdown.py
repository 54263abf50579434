"""GitHub-flavoured Markdown rendering of an `Assessment` (for PR comments, wikis, `report.md`).

Every string from a run or a judge is escaped: Markdown punctuation that would change the layout is
backslash-escaped and `<`, `>`, `&` become entities, so untrusted text can neither inject HTML (GitHub
renders raw HTML in Markdown) nor break a list or a table. Control characters (ESC, BEL, ...) are replaced in
the whole document, so `cat report.md` cannot drive the terminal.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from assessor.assessment import Assessment
from assessor.diagnose.context import num
from assessor.printable import printable
from assessor.report.assessment_text import (
    DECISION_LABEL,
    cost_label,
    missing_checkpoint,
    quadrant_label,
    rollback_label,
    run_label,
    steps_label,
    usage_label,
)

DECISION_MARK = {"continue": "🟢", "stop": "🔴", "rollback": "🟠"}
PLOT_TITLES = {"dashboard": "Dashboard", "kl_reward": "Reward against KL", "gpu": "Step time and GPU phases"}
_SPECIAL = re.compile(r"([\\`*\[\]|#])")


def md(text: object) -> str:
    """Untrusted text made inert for Markdown: one line, layout punctuation escaped, `<>&` as entities."""
    flat = " ".join(str(text).split())
    escaped = _SPECIAL.sub(r"\\\1", flat)
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code(text: object, in_table: bool = False) -> str:
    """Untrusted text as inline code (backticks become quotes, so it cannot close the span).

    Args:
        text: The text.
        in_table: Escape `|` too, as a table cell needs even inside code.
    """
    flat = " ".join(str(text).split()).replace("`", "'")
    if in_table:
        flat = flat.replace("|", "\\|")
    return f"`{flat}`"


def render_markdown(assessment: Assessment, base: Path | None = None) -> str:
    """The assessment as one Markdown document.

    Args:
        assessment: What `assessor.pipeline.assess` returned.
        base: The folder the document will be written to: plot links are made relative to it. Without it
            they are the paths the plots were written to.

    Returns:
        The document, ending with a newline.
    """
    a = assessment
    v = a.verdict
    lines = [
        f"# {DECISION_MARK[v.decision]} {DECISION_LABEL[v.decision]}: {md(a.run)}",
        "",
        f"**{md(v.headline)}**",
        "",
    ]
    facts = [f"confidence **{v.confidence:.0%}**", f"judge {code(a.judge)}", md(run_label(a))]
    rollback = rollback_label(a)
    if rollback:
        where = code(v.rollback_checkpoint) if v.rollback_checkpoint else md(missing_checkpoint(a))
        facts.insert(0, f"roll back to **step {v.rollback_step}** ({where})")
    cost = cost_label(a)
    if cost:
        facts.append(f"spent: {md(cost)}")
    lines += [" · ".join(facts), ""]
    if v.rationale:
        lines += [md(v.rationale), ""]
    lines += _list("Evidence", [
        f"**{md(e.signal)}**: {md(e.observation)}" + (f" _({steps_label(e.steps)})_" if e.steps else "")
        for e in v.evidence
    ])
    lines += _list("Recommended actions", [md(x) for x in v.recommended_actions])
    lines += _list("Risks", [md(x) for x in v.risks])
    lines += _list("Could not see", [md(x) for x in v.could_not_see])
    lines += _plots(a, base)
    lines += _findings(a)
    lines += _signals(a)
    lines += _run_facts(a)
    return printable("\n".join(lines).rstrip("\n") + "\n")


def _list(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    return [f"## {title}", "", *(f"- {item}" for item in items), ""]


def _plots(a: Assessment, base: Path | None) -> list[str]:
    if not a.plots:
        return []
    lines = ["## Plots", ""]
    for plot in a.plots:
        path = Path(plot)
        link = os.path.relpath(path, base) if base is not None else str(path)
        link = link.replace(os.sep, "/").replace(" ", "%20").replace("(", "%28").replace(")", "%29")
        lines += [f"![{PLOT_TITLES.get(path.stem, md(path.stem))}]({link})", ""]
    return lines


def _findings(a: Assessment) -> list[str]:
    findings = a.diagnostics.findings
    if not findings:
        return []
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    summary = ", ".join(f"{n} {severity}" for severity, n in counts.items())
    lines = [
        "## Findings", "", "<details>", f"<summary>{len(findings)} findings ({summary})</summary>", "",
        "| severity | signal | observation | steps |", "|---|---|---|---|",
    ]
    lines += [f"| {f.severity} | {code(f.signal, True)} | {md(f.observation)} | {steps_label(f.steps)} |"
              for f in findings]
    return [*lines, "", "</details>", ""]


def _signals(a: Assessment) -> list[str]:
    from assessor.report.diagnose_text import KEY_SIGNALS

    signals = a.diagnostics.signals
    keys = [k for k in KEY_SIGNALS if k in signals] + [k for k in signals if k.startswith("eval/")]
    if not keys:
        return []
    lines = [
        "## Key signals", "", "<details>", f"<summary>{len(keys)} signals: start, peak, now, recent trend</summary>",
        "", "| signal | start | peak (step) | now | trend | noise |", "|---|---:|---:|---:|---|---:|",
    ]
    for key in keys:
        s = signals[key]
        trend = s.trend + (" (slowing)" if s.slowing and s.trend != "flat" else "")
        lines.append(f"| {code(key, True)} | {num(s.start)} | {num(s.peak)} ({s.peak_step}) | {num(s.now)} | {trend} "
                     f"| {num(s.noise)} |")
    return [*lines, "", "</details>", ""]


def _run_facts(a: Assessment) -> list[str]:
    d = a.diagnostics
    rows = [("Run", md(a.run)), ("Path", code(a.path, True)), ("Framework · algorithm · step", md(run_label(a))),
            ("Best point", md(d.best_checkpoint.reason))]
    if d.kl_reward.quadrant_now:
        rows.append(("KL/reward now", md(quadrant_label(d.kl_reward.quadrant_now))))
    if d.gpu is not None and d.gpu.generation_fraction is not None:
        step = f", {num(d.gpu.step_time_s)} s per step" if d.gpu.step_time_s else ""
        rows.append(("Step time", f"{d.gpu.generation_fraction:.0%} generation{step}"))
    rows.append(("Judge", code(a.judge, True)))
    usage = usage_label(a.usage)
    if usage:
        rows.append(("Usage", md(usage)))
    return ["## Run", "", "| | |", "|---|---|", *(f"| {k} | {value} |" for k, value in rows), ""]
