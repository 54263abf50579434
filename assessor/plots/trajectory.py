"""The reward-against-KL trajectory: what did each unit of drift from the reference buy?

`kl_reward_figure` draws the smoothed reward against the smoothed KL, coloured by step, the central question
of RL fine-tuning, with the quadrant spans the diagnosis found (`kl_reward.timeline`) as wide strokes under
the path and the chosen checkpoint as a diamond on it.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from assessor.diagnose.models import Diagnostics
from assessor.plots import style
from assessor.plots._common import FigureData, rc
from assessor.plots.style import COLORS, placeholder
from assessor.run import Run

__all__ = ["has_kl", "kl_reward_figure"]

QUADRANT_STYLE: dict[str, tuple[str, str]] = {
    "kl_up_reward_up": ("#2ecc71", "KL ↑ reward ↑"),
    "kl_stable_reward_up": ("#27ae60", "KL flat, reward ↑"),
    "kl_up_reward_flat": ("#f39c12", "KL ↑ reward flat"),
    "kl_stable_reward_flat": ("#95a5a6", "KL flat, reward flat"),
    "kl_up_reward_down": ("#e74c3c", "KL ↑ reward ↓"),
    "kl_stable_reward_down": ("#c0392b", "KL flat, reward ↓"),
}


def has_kl(run: Run) -> bool:
    """Whether the run logs a KL to the reference (the KL/reward figure needs it)."""
    return run.has("kl")


def kl_reward_figure(run: Run, diagnostics: Diagnostics) -> Figure:
    """Reward against KL, smoothed, coloured by step, with the diagnosis's quadrant spans.

    Args:
        run: The run; needs `kl` and a reward (`reward_mean`, else `pref_margin`) to draw a trajectory.
        diagnostics: Its diagnosis (`kl_reward.timeline`, chosen checkpoint); may be empty.

    Returns:
        A `Figure` of `style.KL_REWARD_PX` pixels; a placeholder text when there is no trajectory to draw.
    """
    data = FigureData(run, diagnostics)
    reward_metric = "reward_mean" if data.has("reward_mean") else "pref_margin"
    with rc():
        fig = style.new_figure(style.KL_REWARD_PX)
        ax = fig.add_axes((0.09, 0.27, 0.74, 0.66))
        steps, kl, reward = _trajectory(data, reward_metric)
        ax.set_title(f"{run.name}: reward against KL (what each unit of drift bought)", loc="left")
        if len(steps) < 2:
            placeholder(ax, ax.get_title(loc="left"), "Not enough overlapping KL and reward points to draw a path")
            return fig
        if style.spans_decades(kl, 1.5):
            ax.set_xscale("log")
            positive = kl[kl > 0]
            kl = np.maximum(kl, float(positive.min()))  # a KL of exactly 0 at the start would vanish on a log axis
        _draw_quadrants(ax, data, steps, kl, reward)
        norm = Normalize(vmin=float(steps[0]), vmax=float(steps[-1]))
        cmap = colormaps["viridis"]
        points = np.column_stack([kl, reward])
        segments = np.stack([points[:-1], points[1:]], axis=1)
        lines = LineCollection(list(segments), cmap=cmap, norm=norm, linewidth=2.2, zorder=3)
        lines.set_array((steps[:-1] + steps[1:]) / 2)
        ax.add_collection(lines)
        every = max(1, len(steps) // 120)
        ax.scatter(kl[::every], reward[::every], c=steps[::every], cmap=cmap, norm=norm, s=14, zorder=4,
                   edgecolors="none")
        ax.autoscale_view()
        _label_point(ax, kl[0], reward[0], f"start (step {int(steps[0])})", "#333333")
        _label_point(ax, kl[-1], reward[-1], f"now (step {int(steps[-1])})", "#000000")
        best_step, best_label = data.best_step()
        if best_step is not None and steps[0] <= best_step <= steps[-1]:
            i = int(np.argmin(np.abs(steps - best_step)))
            ax.plot([kl[i]], [reward[i]], "D", color=COLORS["checkpoint"], markersize=9, markeredgecolor="black",
                    zorder=6, label=best_label)
        cax = fig.add_axes((0.86, 0.27, 0.022, 0.66))
        bar = fig.colorbar(lines, cax=cax)
        bar.set_label("optimizer step")
        bar.ax.yaxis.set_major_formatter(style.steps_formatter())
        ax.set_xlabel("KL to reference (smoothed" + (", log scale)" if ax.get_xscale() == "log" else ")"))
        ax.set_ylabel(f"{reward_metric.replace('_', ' ')} (smoothed)")
        handles, labels = ax.get_legend_handles_labels()
        if handles:  # under the plot: the path may go anywhere inside it
            fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(0.09, 0.19), ncol=1, fontsize=8.5,
                       title="quadrant spans from the diagnosis" if data.diag.kl_reward.timeline else None,
                       title_fontsize=8.5, alignment="left")
    return fig


def _trajectory(data: FigureData, reward_metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Smoothed reward on its own steps, with smoothed KL interpolated to them (within KL's range)."""
    reward, kl = data.curve(reward_metric), data.curve("kl")
    if len(reward.smooth_steps) < 2 or len(kl.smooth_steps) < 2:
        return np.array([]), np.array([]), np.array([])
    steps = reward.smooth_steps
    inside = (steps >= kl.smooth_steps[0]) & (steps <= kl.smooth_steps[-1])
    steps = steps[inside]
    return steps, np.interp(steps, kl.smooth_steps, kl.smooth_values), reward.smooth_values[inside]


def _draw_quadrants(ax: Axes, data: FigureData, steps: np.ndarray, kl: np.ndarray, reward: np.ndarray) -> None:
    """Each quadrant span as a wide translucent stroke under the path, labelled in the legend by steps."""
    for number, span in enumerate(data.diag.kl_reward.timeline, start=1):
        inside = (steps >= span.start_step) & (steps <= span.end_step)
        index = np.flatnonzero(inside)
        if len(index) == 0:
            continue
        lo, hi = max(0, index[0] - 1), min(len(steps), index[-1] + 2)  # overlap so strokes join up
        color, name = QUADRANT_STYLE.get(span.quadrant, ("#95a5a6", span.quadrant))
        ax.plot(kl[lo:hi], reward[lo:hi], color=color, linewidth=14, alpha=0.3, solid_capstyle="round", zorder=1,
                label=f"{number}. steps {span.start_step}–{span.end_step}: {name} "
                      f"(Δreward {span.reward_change:+.3g}, ΔKL {span.kl_change:+.3g})")
        mid = index[len(index) // 2]
        ax.annotate(str(number), (kl[mid], reward[mid]), xytext=(-12, 8), textcoords="offset points", fontsize=10,
                    fontweight="bold", color=color, zorder=7)


def _label_point(ax: Axes, x: float, y: float, text: str, color: str) -> None:
    """A hollow marker with its label on the side of the plot that has room."""
    ax.plot([x], [y], "o", color=color, markersize=8, markerfacecolor="white", markeredgewidth=2, zorder=6)
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    if ax.get_xscale() == "log" and x > 0 and x0 > 0:
        fx = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
    else:
        fx = (x - x0) / (x1 - x0) if x1 > x0 else 0.5
    fy = (y - y0) / (y1 - y0) if y1 > y0 else 0.5
    right, top = fx > 0.7, fy > 0.85
    ax.annotate(text, (x, y), xytext=(-10 if right else 10, -14 if top else 8), textcoords="offset points",
                ha="right" if right else "left", fontsize=9, fontweight="bold", color=color, zorder=7,
                bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.7})
