"""Figures of a run and its diagnosis, written as PNG files.

`render_plots(run, diagnostics, out_dir)` writes:

* `dashboard.png` (always): the practitioner's dashboard (see `dashboard.dashboard_figure`);
* `kl_reward.png` when the run logs a KL: reward against KL, coloured by step (`trajectory.kl_reward_figure`);
* `gpu.png` when the run logs phase timings or an nvidia-smi log was found (`gpu.gpu_figure`).

Each figure function returns a matplotlib `Figure` and copes with any subset of metrics missing; the
diagnosis records may be empty placeholders. `_common` holds what the figures share.

Only the object-oriented matplotlib API is used (`Figure` + `FigureCanvasAgg`), so rendering never
touches pyplot's global figure registry or the interactive backend of the calling program.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from assessor.diagnose.models import Diagnostics
from assessor.plots import _forked
from assessor.plots.dashboard import dashboard_figure
from assessor.plots.gpu import gpu_figure, has_gpu_data
from assessor.plots.trajectory import has_kl, kl_reward_figure
from assessor.run import Run

__all__ = ["dashboard_figure", "gpu_figure", "kl_reward_figure", "render_plots", "save_figure"]


def save_figure(fig: Figure, path: Path) -> Path:
    """Write one figure as a PNG of exactly its pixel size (no tight bounding box, so sizes are stable).

    Args:
        fig: A figure from `dashboard_figure`, `kl_reward_figure` or `gpu_figure`.
        path: Where to write it; the parent folder must exist.

    Returns:
        The path written.
    """
    if type(fig.canvas) is not FigureCanvasAgg:
        # Attaches itself as fig.canvas: Agg rendering whatever backend pyplot may use. An Agg canvas already there
        # (the layout measured its texts with its renderer) is kept, so the draw reuses those measurements.
        FigureCanvasAgg(fig)
    with warnings.catch_warnings():
        # A run name or metric key in a script the font lacks (or with control characters) is drawn as boxes;
        # one stderr warning per character would bury the verdict.
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font", category=UserWarning)
        fig.savefig(path, format="png", dpi=fig.dpi)
    return path


def render_plots(
    run: Run, diagnostics: Diagnostics, out_dir: Path, fork: bool = False, rollback_step: int | None = None,
) -> list[Path]:
    """Draw the figures a run supports and write them into `out_dir` (created if needed).

    Args:
        run: The loaded run.
        diagnostics: `assessor.diagnose.diagnose(run)`; empty or placeholder records are handled.
        out_dir: Folder for the PNG files.
        fork: when a core is free, draw the figures after the dashboard in a forked child meanwhile
            (`_forked`); for a one-shot command, not a host program such as a training job.
        rollback_step: a verdict's rollback target, drawn on the dashboard (`dashboard_figure`).

    Returns:
        Paths written, in order: `dashboard.png`, then `kl_reward.png` and `gpu.png` when drawn.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    def dashboard(run: Run, diagnostics: Diagnostics) -> Figure:
        return dashboard_figure(run, diagnostics, rollback_step=rollback_step)

    jobs: list[tuple[str, Callable[[Run, Diagnostics], Figure]]] = [("dashboard.png", dashboard)]
    if has_kl(run):
        jobs.append(("kl_reward.png", kl_reward_figure))
    if has_gpu_data(run):
        jobs.append(("gpu.png", gpu_figure))

    def draw(chosen: list[tuple[str, Callable[[Run, Diagnostics], Figure]]]) -> list[Path]:
        return [save_figure(make(run, diagnostics), out_dir / name) for name, make in chosen]

    child = _forked.start(lambda: draw(jobs[1:])) if fork and len(jobs) > 1 and _forked.spare_core() else None
    if child is None:
        return draw(jobs)
    try:
        first = draw(jobs[:1])
    finally:
        rest = child.paths()  # the child is waited for even when the dashboard failed here
    return first + (rest if rest is not None else draw(jobs[1:]))
