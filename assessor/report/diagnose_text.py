"""Terminal rendering of `Diagnostics` (rich).

Run names, signal keys and observations come from the run: printed as `rich.text.Text` after `printable`.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from assessor.diagnose.context import num
from assessor.diagnose.models import Diagnostics
from assessor.printable import one_line, printable

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "watch": "cyan", "info": "dim"}
KEY_SIGNALS = (
    "reward_mean", "reward_std", "reward_zero_std_frac", "kl", "entropy", "response_length_mean",
    "response_length_clip_ratio", "clip_ratio_region", "grad_norm", "pg_loss", "loss", "pref_margin",
    "pref_accuracy", "time_step_s",
)


def render_diagnostics(d: Diagnostics, console: Console) -> None:
    """Findings first (most severe on top), then the key curves, the KL/reward timeline and the best point."""
    run = d.run
    progress = f" of {run.planned_total_steps} ({run.progress:.0%})" if run.progress is not None else ""
    console.print(Text.assemble(
        (one_line(run.name), "bold"), "  ", (one_line(f"{run.framework or '?'} · {run.algorithm or '?'}"), "cyan"),
        f"  · step {run.last_step}{progress}",
    ))
    console.print(Text("Findings", style="bold"))
    for f in d.findings:
        console.print(Text.assemble(
            (f"  {f.severity:<9}", SEVERITY_STYLE[f.severity]), (f"{one_line(f.signal)}: ", "bold"),
            printable(f.observation)))
    table = Table(title="Signals", title_justify="left", box=None, pad_edge=False)
    for column in ("signal", "start", "peak (step)", "now", "trend", "noise", "change points"):
        table.add_column(column)
    for key in [k for k in KEY_SIGNALS if k in d.signals] + [k for k in d.signals if k.startswith("eval/")]:
        s = d.signals[key]
        cps = ", ".join(f"{c.step}{'↑' if c.direction == 'up' else '↓'}" for c in s.change_points[:4])
        table.add_row(Text(one_line(key)), num(s.start), f"{num(s.peak)} ({s.peak_step})", num(s.now),
                      f"{s.trend}{' (slowing)' if s.slowing and s.trend != 'flat' else ''}", num(s.noise), cps)
    console.print(table)
    if d.kl_reward.timeline:
        spans = "; ".join(f"{s.start_step}–{s.end_step}: {s.quadrant.replace('_', ' ')}" for s in d.kl_reward.timeline)
        console.print(Text(printable(f"KL/reward over the run: {spans}")))
    best = d.best_checkpoint
    console.print(Text(printable(f"Best point: {best.reason}")))
    if d.gpu is not None and d.gpu.generation_fraction is not None:
        console.print(Text(f"Step time: {d.gpu.generation_fraction:.0%} generation"
                           + (f", {num(d.gpu.step_time_s)} s per step now" if d.gpu.step_time_s else "")))
    for item in d.absent:
        console.print(Text(printable(f"Not visible — {item}"), style="dim"))
