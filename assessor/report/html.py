"""One self-contained HTML page per assessment, and the report files `assess --out` writes.

The page loads nothing from anywhere: the CSS is inline, the plots are embedded as base64 `data:` URIs and a
Content-Security-Policy forbids scripts and remote resources. Every string from a run or a judge (run
names, observations, headlines) is untrusted and goes through jinja2's autoescaping.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import jinja2

from assessor.assessment import Assessment
from assessor.diagnose.context import num
from assessor.printable import printable
from assessor.report.assessment_text import (
    DECISION_LABEL,
    contract_json,
    cost_label,
    missing_checkpoint,
    quadrant_label,
    run_label,
    steps_label,
    usage_label,
)
from assessor.report.markdown import PLOT_TITLES, render_markdown

TEMPLATES = Path(__file__).parent / "templates"
PLOT_CAPTIONS = {
    "dashboard": "Primary: reward mean and spread, KL. Secondary: length, clipping, entropy. Tertiary: loss, "
                 "grad norm, reward components. Change points, peaks and the chosen checkpoint are marked.",
    "kl_reward": "Reward against KL to the reference, coloured by step: up and to the right is learning, "
                 "right without up is drift.",
    "gpu": "Where step time goes (generation vs training) and how the GPUs are used in each phase.",
}
REPORT_FILES = ("report.html", "report.md", "verdict.json")


@dataclass(frozen=True)
class Figure:
    """A plot as the page shows it."""

    key: str
    title: str
    caption: str
    src: str  # data: URI


def write_reports(assessment: Assessment, out_dir: Path) -> list[Path]:
    """Write `report.html`, `report.md` and `verdict.json` (the JSON contract) into `out_dir`.

    Args:
        assessment: What `assessor.pipeline.assess` returned; its plots are embedded / linked.
        out_dir: The folder (created if needed); usually the one the plots were written to.

    Returns:
        The three paths, in that order.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    html, markdown, verdict = (out_dir / name for name in REPORT_FILES)
    html.write_text(render_html(assessment), encoding="utf-8")
    markdown.write_text(render_markdown(assessment, base=out_dir), encoding="utf-8")
    verdict.write_text(contract_json(assessment) + "\n", encoding="utf-8")
    return [html, markdown, verdict]


def render_html(assessment: Assessment) -> str:
    """The assessment as one self-contained HTML page (plots read from `assessment.plots` and embedded).

    Args:
        assessment: What `assessor.pipeline.assess` returned.

    Returns:
        The page.
    """
    template = _environment().get_template("report.html.j2")
    # Autoescaping stops markup, not ESC or BEL: `cat report.html` must not drive the terminal either.
    return printable(template.render(**_view(assessment)))


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
    )


def _view(a: Assessment) -> dict[str, object]:
    v = a.verdict
    d = a.diagnostics
    figures = _figures(a.plots)
    counts: dict[str, int] = {}
    for f in d.findings:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    return {
        "a": a,
        "v": v,
        "label": DECISION_LABEL[v.decision],
        "run_line": run_label(a),
        "missing_checkpoint": missing_checkpoint(a),
        "cost": cost_label(a),
        "evidence": [(e.signal, e.observation, steps_label(e.steps)) for e in v.evidence],
        "dashboard": next((f for f in figures if f.key == "dashboard"), None),
        "kl_figure": next((f for f in figures if f.key == "kl_reward"), None),
        "figures": [f for f in figures if f.key not in ("dashboard", "kl_reward")],
        "findings": [(f.severity, f.signal, f.observation, steps_label(f.steps)) for f in d.findings],
        "severity_counts": list(counts.items()),
        "signals": _signals(a),
        "facts": _facts(a),
        "judge_rows": _judge_rows(a),
        "version": _version(),
    }


def _figures(plots: list[str]) -> list[Figure]:
    figures = []
    for plot in plots:
        path = Path(plot)
        if path.suffix.lower() != ".png" or not path.is_file():
            continue
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        figures.append(Figure(key=path.stem, title=PLOT_TITLES.get(path.stem, path.stem),
                              caption=PLOT_CAPTIONS.get(path.stem, ""), src=f"data:image/png;base64,{data}"))
    return figures


def _signals(a: Assessment) -> list[tuple[str, str, str, str, str, str]]:
    from assessor.report.diagnose_text import KEY_SIGNALS

    signals = a.diagnostics.signals
    keys = [k for k in KEY_SIGNALS if k in signals] + [k for k in signals if k.startswith("eval/")]
    rows = []
    for key in keys:
        s = signals[key]
        trend = s.trend + (", slowing" if s.slowing and s.trend != "flat" else "")
        rows.append((key, num(s.start), f"{num(s.peak)} @ {s.peak_step}", num(s.now), trend, num(s.noise)))
    return rows


def _facts(a: Assessment) -> list[tuple[str, str]]:
    d = a.diagnostics
    header = d.run
    rows = [("Run", a.run), ("Path", a.path), ("Framework", a.framework or "unknown"),
            ("Algorithm", a.algorithm or "unknown"),
            ("Last step", str(a.last_step) if a.last_step is not None else "none")]
    if header.planned_total_steps:
        progress = f" ({header.progress:.0%} done)" if header.progress is not None else ""
        rows.append(("Planned steps", f"{header.planned_total_steps}{progress}"))
    if header.logging_interval:
        rows.append(("Logged every", f"{header.logging_interval} step{'s' if header.logging_interval != 1 else ''}"))
    rows.append(("Best point", d.best_checkpoint.reason))
    if d.kl_reward.quadrant_now:
        rows.append(("KL / reward now", quadrant_label(d.kl_reward.quadrant_now)))
    gpu = d.gpu
    if gpu is not None:
        if gpu.generation_fraction is not None:
            rows.append(("Generation share", f"{gpu.generation_fraction:.0%} of step time"))
        if gpu.step_time_s is not None:
            drift = f" ({gpu.step_time_drift:+.0%} since the start)" if gpu.step_time_drift is not None else ""
            rows.append(("Step time", f"{num(gpu.step_time_s)} s{drift}"))
    # Blind spots the verdict already lists (under "Could not see") are not repeated here.
    rows += [("Not logged", item) for item in d.absent if item not in a.verdict.could_not_see]
    return rows


def _judge_rows(a: Assessment) -> list[tuple[str, str]]:
    rows = [("Judge", a.judge), ("Confidence", f"{a.verdict.confidence:.0%}")]
    usage = a.usage
    if usage_label(usage) and usage is not None:
        rows.append(("Tokens", f"{usage.input_tokens:,} in · {usage.output_tokens:,} out"))
        rows.append(("Requests", str(usage.requests)))
        if usage.latency_s:
            rows.append(("Time", f"{usage.latency_s:.1f} s"))
        if usage.cost_usd is not None:
            rows.append(("Cost", f"${usage.cost_usd:.4f}"))
    return rows


def _version() -> str:
    try:
        return version("assessor")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without installing
        return "dev"
