"""Terminal rendering of `RunInspection` (rich).

File names, metric keys, notes and warnings come from the run: every one is printed as `rich.text.Text` (never
parsed as console markup, so `[link=...]` in a key stays text) after `printable`/`one_line`.
"""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from assessor.inspection import RunInspection
from assessor.printable import one_line, printable


def render_inspection(report: RunInspection, console: Console) -> None:
    """Print what was read from a run: sources, metrics, checkpoints, GPU, facts, warnings."""
    facts = report.facts
    title = Text.assemble(
        (one_line(report.name), "bold"), "  ",
        (one_line(f"{report.framework or 'unknown framework'} · {report.algorithm or 'unknown algorithm'}"), "cyan"),
        f"  · last step {report.last_step}",
        f" · logged every {facts.logging_interval} steps" if facts.logging_interval else "",
    )
    console.print(title)

    sources = Table(title="Sources", title_justify="left", box=None, pad_edge=False)
    for column in ("file", "read by", "keys", "values", "steps", "used"):
        sources.add_column(column, justify="right" if column in ("keys", "values") else "left")
    for source in report.sources:
        steps = f"{source.first_step}–{source.last_step}" if source.first_step is not None else "–"
        sources.add_row(Text(one_line(source.path)), Text(one_line(source.format)), str(source.keys),
                        str(source.points), steps,
                        "yes" if source.used else "no")
    console.print(sources)
    for source in report.sources:
        # How each file was read (which cell of a notebook, how steps were found), and why one was not used.
        for note in source.notes[:3]:
            console.print(Text(printable(f"  {source.path}: {note}"), style="dim"))
        if not source.used and source.reason:
            console.print(Text(printable(f"  {source.path} not used: {source.reason}"), style="dim"))
    if report.ignored:
        # Every file tried and skipped, with the reader's reason and the fix.
        console.print(Text("Skipped (no metrics read from them):", style="dim"))
        for item in report.ignored[:20]:
            console.print(Text(printable(f"  {item}"), style="dim"))
        if len(report.ignored) > 20:
            console.print(Text(f"  and {len(report.ignored) - 20} more", style="dim"))

    metrics = Table(title="Metrics", title_justify="left", box=None, pad_edge=False)
    for column in ("metric", "from key", "points", "steps", "NaN/inf"):
        metrics.add_column(column, justify="right" if column in ("points", "NaN/inf") else "left")
    for name, info in report.metrics.items():
        metrics.add_row(
            Text(one_line(name)), Text(one_line(info.source_key)), str(info.points),
            f"{info.first_step}–{info.last_step}",
            str(info.nonfinite) if info.nonfinite else "",
        )
    console.print(metrics)

    lines: list[Text] = []
    if report.phase_timings:
        lines.append(Text(printable(f"Phase timings: {', '.join(report.phase_timings)}")))
    if report.checkpoints:
        ckpt_steps = [c.step for c in report.checkpoints]
        newest = ", ".join(c.path for c in report.checkpoints[-4:])
        lines.append(Text(printable(
            f"Checkpoints: {len(ckpt_steps)} on disk (steps {ckpt_steps[0]}–{ckpt_steps[-1]}): "
            f"{'…, ' if len(ckpt_steps) > 4 else ''}{newest}"
        )))
    else:
        lines.append(Text("Checkpoints: none on disk"))
    if report.gpu:
        gpu = report.gpu
        lines.append(Text(printable(
            f"GPU telemetry: {gpu.devices} × {', '.join(sorted(set(gpu.names)))}, {gpu.samples} samples over "
            f"{gpu.duration_s / 60:.0f} min ({', '.join(gpu.fields)})"
        )))
    else:
        lines.append(Text("GPU telemetry: none"))
    stated = {k: v for k, v in facts.model_dump(exclude={"provenance"}).items() if v is not None}
    if stated:
        fact_lines = ", ".join(f"{k}={v}" for k, v in stated.items())
        lines.append(Text(printable(f"Facts: {fact_lines}")))
    console.print(Group(*lines))
    if report.warnings:
        console.print(Text("Warnings:", style="yellow bold"))
        for warning in report.warnings:
            console.print(Text(f"  • {one_line(warning)}", style="yellow"))
