"""Panels placed in rows with margins measured once from their labels (instead of matplotlib's constrained layout).

Constrained layout measures the tight box of every artist of every panel (creating and measuring each tick label)
twice per layout, and `savefig` adds an undrawn pass of the whole figure to run it: about a fifth of a long run's
plotting time, for margins that depend only on a few texts. Here each panel's margins are the sizes of what sits
outside its box, computed from the texts themselves: the tick labels its axes will draw (their locator's ticks
through their formatter, without laying out a tick object for each), axis labels, the title, an offset or multiplier
text, and a legend outside the box. The texts are measured with the figure's own Agg renderer, the one that draws
them, through matplotlib's cache of text sizes, so the draw finds them measured.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib
import matplotlib.text as mtext
import numpy as np
from matplotlib import cbook
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties

# Space around each panel's decorations, in inches (about what the constrained layout used before kept).
W_PAD = 0.06
H_PAD = 0.08
PASSES = 2  # tick locators depend on the panel's size: a second pass measures the labels at the final size


@dataclass(frozen=True)
class Cell:
    """One panel in a row: its share of the row's width and its axes (a twin sharing its box after the first)."""

    width: float
    axes: tuple[Axes, ...]


def agg_renderer(fig: Figure) -> RendererBase:
    """The Agg renderer that `save_figure` draws the figure with (attaching an Agg canvas if it has none)."""
    canvas = fig.canvas if type(fig.canvas) is FigureCanvasAgg else FigureCanvasAgg(fig)
    renderer: RendererBase = canvas.get_renderer()  # type: ignore[no-untyped-call]
    return renderer


def place_rows(fig: Figure, rows: list[list[Cell]], heights: list[float], top: float = 1.0) -> None:
    """Position the panels: rows from the top of the area below `top` (figure fraction), cells left to right.

    Each row's height is its share (`heights`) of what the rows' decorations leave; each cell's width its share of
    what its row's decorations leave. A panel's decorations are measured on all of its axes (a twin's labels on
    the right count for its right margin).
    """
    renderer = agg_renderer(fig)
    width_px, height_px = fig.bbox.width, fig.bbox.height
    w_pad, h_pad = W_PAD * fig.dpi, H_PAD * fig.dpi
    for _ in range(PASSES):
        extents = [[_extent(cell.axes, renderer, fig.dpi) for cell in row] for row in rows]
        tops = [max(e[2] for e in row) for row in extents]
        bottoms = [max(e[3] for e in row) for row in extents]
        free = height_px * top - sum(tops) - sum(bottoms) - 2 * h_pad * len(rows)
        unit = max(free, 0.0) / sum(heights)
        y = height_px * top
        for row, row_extents, row_top, row_bottom, share in zip(rows, extents, tops, bottoms, heights, strict=True):
            y -= h_pad + row_top
            box_height = unit * share
            y_box = y - box_height
            used = sum(e[0] + e[1] + 2 * w_pad for e in row_extents)
            per_width = max(width_px - used, 0.0) / sum(cell.width for cell in row)
            x = 0.0
            for cell, (left, right, _, _) in zip(row, row_extents, strict=True):
                x += w_pad + left
                box_width = per_width * cell.width
                # A twin follows: `set_position` moves every axes twinned with this one.
                cell.axes[0].set_position((x / width_px, y_box / height_px, box_width / width_px,
                                           box_height / height_px))
                x += box_width + right + w_pad
            y = y_box - row_bottom - h_pad


def _extent(axes: tuple[Axes, ...], renderer: RendererBase, dpi: float) -> tuple[float, float, float, float]:
    """Pixels that a panel's decorations take beyond its box: left, right, top, bottom."""
    left = right = top = bottom = offset_height = title_height = 0.0
    box = axes[0].get_window_extent(renderer)
    for ax in axes:
        if ax.yaxis.get_visible():
            depth, along, offset = _axis_sizes(ax.yaxis, "y", renderer, dpi)
            if ax.yaxis.get_ticks_position() == "right" or ax.yaxis.label_position == "right":  # a twin's
                right = max(right, depth)
            else:
                left = max(left, depth)
            offset_height = max(offset_height, offset)  # a multiplier or offset written above the axis
            bottom = max(bottom, along / 2)  # the lowest tick label may stand half below the box
        if ax.xaxis.get_visible():
            depth, along, _ = _axis_sizes(ax.xaxis, "x", renderer, dpi)
            bottom = max(bottom, depth)
            left, right = max(left, along / 2), max(right, along / 2)  # end labels centred on the edges
        titles = [ax.get_title(loc=loc) for loc in ("left", "center", "right")]
        if any(titles):
            # The three titles share the font set when the axes was made; the pad is the rc's, in points.
            _, height = _text_size(renderer, " ".join(titles), ax.title.get_fontproperties())
            title_height = max(title_height, height + matplotlib.rcParams["axes.titlepad"] * dpi / 72)
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            outside = legend.get_window_extent(renderer)
            left, right = max(left, box.x0 - outside.x0), max(right, outside.x1 - box.x1)
            top, bottom = max(top, outside.y1 - box.y1), max(bottom, box.y0 - outside.y0)
    # The title is lifted above an offset text it would cross; a legend above the box stands beside the title.
    top = max(top, offset_height + title_height)
    return left, right, top, bottom


def _axis_sizes(axis: Axis, name: str, renderer: RendererBase, dpi: float) -> tuple[float, float, float]:
    """An axis's depth away from the box (ticks, tick labels, axis label), its widest label along it, its offset text.

    The tick labels are those the axis will draw: its locator's ticks inside the view limits, through its formatter.
    """
    locs = np.asarray(axis.get_majorticklocs(), dtype=float)
    low, high = sorted(axis.get_view_interval())
    span = (high - low) * 1e-9
    locs = locs[(locs >= low - span) & (locs <= high + span)]
    formatter = axis.get_major_formatter()
    labels = [label for label in formatter.format_ticks(list(locs)) if label] if len(locs) else []
    if not labels:
        return 0.0, 0.0, 0.0
    tick = axis.majorTicks[0]
    sizes = [_text_size(renderer, label, tick.label1.get_fontproperties()) for label in labels]
    # Our figures keep the rc's tick pad (`Tick.get_pad` is typed as returning nothing).
    pad = matplotlib.rcParams["ytick.major.pad" if name == "y" else "xtick.major.pad"]
    outward = (tick.get_tick_padding() + pad) * dpi / 72
    across = max(w if name == "y" else h for w, h in sizes)
    along = max(h if name == "y" else w for w, h in sizes)
    depth = outward + across
    label = axis.label
    if label.get_visible() and label.get_text():
        _, height = _text_size(renderer, label.get_text(), label.get_fontproperties())
        depth += axis.labelpad * dpi / 72 + height
    offset_text = axis.get_offset_text()
    offset = formatter.get_offset() if offset_text.get_visible() else ""
    offset_height = _text_size(renderer, offset, offset_text.get_fontproperties())[1] + outward if offset else 0.0
    return depth, along, offset_height


def _text_size(renderer: RendererBase, text: str, prop: FontProperties) -> tuple[float, float]:
    """Width and height (ascent + descent) in pixels of one line of text, math included ($...$).

    Through matplotlib's own cache of text sizes when it has one (private, keyed by renderer and font), else asked
    of the renderer directly.
    """
    ismath = cbook.is_math_text(text)
    dpi = renderer.points_to_pixels(72.0)
    if _CACHED_METRICS is not None:
        width, height, _ = _CACHED_METRICS(renderer, text, prop, ismath, dpi)
    else:
        width, height, _ = renderer.get_text_width_height_descent(text, prop, ismath=ismath)
    return width, height


_CACHED_METRICS = getattr(mtext, "_get_text_metrics_with_cache", None)
