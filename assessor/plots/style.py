"""Shared look of every figure: sizes, colours, and the drawing helpers the panels reuse.

One colour per signal across all figures, so a practitioner who learnt "purple is KL" on the dashboard
reads the KL/reward trajectory without a legend. Everything draws on `Axes` it is given (OO API only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from assessor.diagnose.robust import MAX_POINTS, median, row_medians, smooth

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

DPI = 100
# The dashboard is the image an LLM judge is sent, billed by its pixels (Anthropic: width x height / 750 tokens,
# after scaling to ~1.15 megapixels): drawn on the same 16 x 10 inch layout at 65 dpi it costs ~900 tokens
# instead of ~1,530 (1600 x 1000 at 100 dpi), and titles, ticks and legends stay legible.
DASHBOARD_DPI = 65
DASHBOARD_PX = (1040, 650)
KL_REWARD_PX = (1100, 850)
GPU_PX = (1600, 1000)
GPU_NO_TELEMETRY_PX = (1600, 600)

MAX_DRAWN = 2000  # points per drawn line: beyond this a 1600 px panel cannot show more anyway
# Long curves are smoothed on bin medians, reduced exactly as the diagnosis reduces them, so the peak and
# levels it reports sit on the drawn line.
MAX_SMOOTH_BINS = MAX_POINTS

COLORS: dict[str, str] = {
    "reward": "#1f5fbf",
    "reward_band": "#7fa7e6",
    "eval": "#e07b00",
    "kl": "#7b3fa8",
    "spread": "#2b8c8c",
    "zero_std": "#b5651d",
    "length": "#8c5a2b",
    "cap": "#c0392b",
    "truncated": "#d35400",
    "clip_low": "#2f6db5",
    "clip_high": "#c0392b",
    "clip_region": "#555555",
    "entropy": "#1a9a6c",
    "ln_vocab": "#c0392b",
    "loss": "#444444",
    "value_loss": "#8e44ad",
    "grad": "#34495e",
    "checkpoint": "#1e8449",
    "disk": "#888888",
    "change": "#222222",
    "peak": "#d4a017",
    "nonfinite": "#e74c3c",
    "spike": "#e74c3c",
    "offscale": "#9a9a9a",
    "generation": "#e67e22",
    "training": "#2e86c1",
    "logprob": "#8e44ad",
    "reward_phase": "#27ae60",
    "advantage": "#f1c40f",
    "other": "#bbbbbb",
    "power": "#c0392b",
    "util": "#2e86c1",
    "memory": "#16a085",
    "step_time": "#34495e",
}
COMPONENT_COLORS = ("#1f5fbf", "#e07b00", "#1a9a6c", "#c0392b", "#7b3fa8", "#8c5a2b", "#d35fa0", "#555555")

RC: dict[RcKeyType, Any] = {
    "font.size": 9.5,
    "axes.titlesize": 10.5,
    "axes.titleweight": "bold",
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "grid.linewidth": 0.6,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
}


def new_figure(size_px: tuple[int, int], dpi: int = DPI) -> Figure:
    """A figure of exactly `size_px` pixels when saved at its `dpi` (never registered with pyplot).

    No layout engine: the figures place their panels themselves (`_layout.place_rows`), once, so that twin-axis
    labels and outside legends keep clear of the next panel without a layout pass at every draw.
    """
    return Figure(figsize=(size_px[0] / dpi, size_px[1] / dpi), dpi=dpi)


@dataclass(frozen=True)
class Curve:
    """One series ready to draw: raw points reduced for drawing, and its smoothed level."""

    steps: np.ndarray  # raw steps, sorted
    values: np.ndarray  # raw values, finite
    draw_steps: np.ndarray  # at most MAX_DRAWN raw points, spikes kept (min/max per bin)
    draw_values: np.ndarray
    smooth_steps: np.ndarray  # smoothed level (on bin medians for long curves)
    smooth_values: np.ndarray

    @property
    def empty(self) -> bool:
        """No finite point at all."""
        return len(self.values) == 0


def make_curve(steps: np.ndarray, values: np.ndarray) -> Curve:
    """Sort, drop non-finite values, reduce for drawing and smooth with `robust.smooth`."""
    steps = np.asarray(steps, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    keep = np.isfinite(values) & np.isfinite(steps)
    steps, values = steps[keep], values[keep]
    if len(steps) > 1 and np.any(np.diff(steps) < 0):
        order = np.argsort(steps, kind="stable")
        steps, values = steps[order], values[order]
    draw_steps, draw_values = minmax_decimate(steps, values, MAX_DRAWN)
    smooth_steps, smooth_values = smoothed(steps, values)
    return Curve(steps, values, draw_steps, draw_values, smooth_steps, smooth_values)


def minmax_decimate(x: np.ndarray, y: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """At most `max_points` (+2) points that keep each bin's lowest and highest value and both ends, in order.

    A plain stride would drop exactly the spikes a practitioner looks for; min/max per bin draws the same
    envelope as the full line (bins are narrower than a pixel column of any panel) at a cost independent of
    the run's length once reduced: O(n) here, and a bounded number of points for matplotlib to draw.
    """
    n = len(y)
    if n <= max_points:
        return x, y
    bins = max(1, (max_points - 2) // 2)
    size = math.ceil(n / bins)
    usable = (n // size) * size
    starts = np.arange(0, usable, size)
    blocks = y[:usable].reshape(-1, size)
    picks = [np.array([0, n - 1]), blocks.argmin(axis=1) + starts, blocks.argmax(axis=1) + starts]
    if usable < n:  # the newest points are a bin of their own, so their extremes are drawn too
        tail = y[usable:]
        picks.append(np.array([usable + int(np.argmin(tail)), usable + int(np.argmax(tail))]))
    index = np.unique(np.concatenate(picks))
    return x[index], y[index]


def smoothed(steps: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bold line: bin medians for long curves (as the diagnosis does), then `robust.smooth`."""
    n = len(values)
    if n == 0:
        return steps, values
    size = math.ceil(n / MAX_SMOOTH_BINS)
    if size > 1:
        usable = (n // size) * size
        red_values = row_medians(values[:usable].reshape(-1, size))  # np.median's numbers, in a third of the time
        red_steps = row_medians(steps[:usable].reshape(-1, size))
        if usable < n:  # the newest steps keep their own bin: the end of the run is what matters most
            red_values = np.append(red_values, median(values[usable:]))
            red_steps = np.append(red_steps, median(steps[usable:]))
    else:
        red_steps, red_values = steps, values
    return red_steps, smooth(red_values)


def plot_curve(ax: Axes, curve: Curve, color: str, label: str | None = None, raw: bool = True,
               linewidth: float = 2.0) -> None:
    """Raw points faint, smoothed level bold."""
    if curve.empty:
        return
    if raw and len(curve.values) > 1:
        marker = "o" if len(curve.values) <= 60 else None
        alpha = 0.22 if len(curve.values) <= 500 else 0.12  # dense raw lines fill in; keep them behind the level
        ax.plot(curve.draw_steps, curve.draw_values, color=color, alpha=alpha, linewidth=0.8, marker=marker,
                markersize=2.5, zorder=2)
    if len(curve.values) == 1:
        ax.plot(curve.steps, curve.values, "o", color=color, label=label, zorder=3)
        return
    ax.plot(curve.smooth_steps, curve.smooth_values, color=color, linewidth=linewidth, label=label, zorder=3)


def placeholder(ax: Axes, title: str, text: str) -> None:
    """An empty panel that says plainly what is missing (for the primary signals)."""
    ax.set_title(title, loc="left")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(True)
        spine.set_color("#cccccc")
        spine.set_linestyle((0, (3, 3)))
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="#777777", fontsize=11,
            wrap=True)


def steps_formatter() -> FuncFormatter:
    """Step ticks as 1.5k / 20k / 1.2M instead of long integers."""

    def fmt(value: float, _pos: int | None) -> str:
        magnitude = abs(value)
        if magnitude >= 1e6:
            return f"{value / 1e6:g}M"
        if magnitude >= 1e4:
            return f"{value / 1e3:g}k"
        return f"{value:g}"

    return FuncFormatter(fmt)


def spans_decades(values: np.ndarray, decades: float = 2.0) -> bool:
    """Whether positive values span at least `decades` orders of magnitude (then a log axis reads better)."""
    positive = values[values > 0]
    if len(positive) < 3 or len(positive) < 0.9 * len(values):
        return False
    lo, hi = np.percentile(positive, [1, 99])
    return bool(lo > 0 and hi / lo >= 10**decades)


def fmt_num(value: float | None) -> str:
    """A compact number for labels."""
    if value is None or not math.isfinite(value):
        return "n/a"
    magnitude = abs(value)
    if magnitude == 0:
        return "0"
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 1:
        return f"{value:.3g}"
    if magnitude >= 1e-3:
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return f"{value:.1e}"
