"""Plumbing shared by the figures: the run and its diagnosis, markers, axis helpers, legends, rcParams.

* `FigureData`: the run and its diagnosis, with one `Curve` built per metric however many panels draw it.
* Markers on a step axis: the chosen checkpoint, change points, spikes, NaN/inf steps (`annotate_signal`
  puts the last three on a panel as the diagnosis found them).
* Axis helpers: optimizer-step ticks, y-limits that let a few extreme points go off-scale, a log scale for
  values spanning decades, and the two legend placements.
* `rc`: our rcParams while one figure is built.

Downsampling, smoothing and the palette live in `assessor.plots.style`.
"""

from __future__ import annotations

import math
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Literal

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes

from assessor.diagnose.models import Diagnostics, SignalSummary, Spike
from assessor.plots import style
from assessor.plots.style import COLORS, Curve, make_curve
from assessor.run import Run, Split

LegendLoc = Literal["best", "upper left", "upper right", "lower left", "lower right"]
EVAL_PREFERENCE = ("accuracy", "reward_mean", "pass_at_k", "maj_at_k")
MAX_SPIKES = 8
# The instability signals: where one wild step means a numerical problem worth marking.
SPIKE_METRICS = frozenset({"kl", "grad_norm", "loss", "pg_loss", "value_loss"})


@dataclass
class FigureData:
    """The run and its diagnosis, with curves built once per metric."""

    run: Run
    diag: Diagnostics
    _curves: dict[tuple[str, str], Curve] = field(default_factory=dict)
    _train_names: set[str] | None = None

    def names(self) -> set[str]:
        if self._train_names is None:
            self._train_names = set(self.run.metric_names("train"))
        return self._train_names

    def has(self, metric: str, split: Split = "train") -> bool:
        if split == "train":
            return metric in self.names()
        return self.run.has(metric, split)

    def curve(self, metric: str, split: Split = "train") -> Curve:
        key = (metric, split)
        if key not in self._curves:
            series = self.run.series(metric, split) if self.has(metric, split) else pd.Series(dtype="float64")
            self._curves[key] = make_curve(series.index.to_numpy(), series.to_numpy())
        return self._curves[key]

    def built_curves(self) -> list[Curve]:
        """The curves built so far, that is those of the panels drawn."""
        return list(self._curves.values())

    def summary(self, metric: str, split: Split = "train") -> SignalSummary | None:
        key = metric if split == "train" else f"eval/{metric}"
        return self.diag.signals.get(key)

    def eval_metric(self) -> str | None:
        """The held-out metric to overlay on the reward: the diagnosis's choice, else the usual suspects."""
        names = self.run.metric_names("eval")
        # The curve the best point is read on comes first: a dashboard that draws one eval while the target was
        # chosen on another hides the evidence for the rollback.
        best = self.diag.best_checkpoint
        chosen = best.metric if best.basis == "eval" and best.metric else self.diag.eval.metric
        if chosen:
            chosen = chosen.removeprefix("eval/")
            if chosen in names:
                return chosen
        for metric in EVAL_PREFERENCE:
            if metric in names:
                return metric
        usable = [n for n in names if "loss" not in n and "runtime" not in n and "per_second" not in n]
        return usable[0] if usable else None

    def best_step(self) -> tuple[int | None, str]:
        """The step of the chosen checkpoint (or of the best point when no checkpoint is on disk), its label."""
        best = self.diag.best_checkpoint
        if best.checkpoint_step is not None:
            return best.checkpoint_step, f"ckpt {best.checkpoint_step}"
        if best.best_step is not None:
            return best.best_step, f"best step {best.best_step} (no ckpt)"
        return None, ""


def step_axis(ax: Axes) -> None:
    ax.xaxis.set_major_formatter(style.steps_formatter())


def mark_best(ax: Axes, step: int | None, label: str, long_label: str | None = None, low: bool = False) -> None:
    """The chosen checkpoint as a labelled vertical line (label at the top, or low on the reward panel).

    On the reward panel the best point is usually near the top of the curve, so the label goes low.
    """
    if step is None:
        return
    ax.axvline(step, color=COLORS["checkpoint"], linestyle="--", linewidth=1.4, alpha=0.9, zorder=4)
    lo, hi = ax.get_xlim()
    right_half = hi > lo and (step - lo) / (hi - lo) > 0.6  # label on the side with room
    text = long_label or label
    ax.text(step, 0.08 if low else 0.94, f"{text} " if right_half else f" {text}",
            transform=ax.get_xaxis_transform(), ha="right" if right_half else "left",
            va="bottom" if low else "top", fontsize=7.5, color=COLORS["checkpoint"],
            fontweight="bold", zorder=6, clip_on=True,
            bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.7})


def mark_change_points(ax: Axes, summary: SignalSummary | None) -> None:
    """Lasting level shifts as short ticks hanging from the top of the panel."""
    if summary is None or not summary.change_points:
        return
    steps = [cp.step for cp in summary.change_points]
    ax.plot(steps, [0.985] * len(steps), "v", color=COLORS["change"], markersize=6, transform=ax.get_xaxis_transform(),
            clip_on=False, zorder=5)


def mark_spikes(ax: Axes, spikes: list[Spike]) -> None:
    """The largest isolated spikes, as small red crosses on the raw value.

    A spike beyond a scale `robust_ylim` set is drawn as a red triangle at that edge, over the grey off-scale
    marker: the largest spikes are the ones most likely to be off the scale, and they are still spikes.
    """
    if not spikes:
        return
    spikes = sorted(spikes, key=lambda s: -s.size_noise)[:MAX_SPIKES]
    bottom, top = ax.get_ylim() if not ax.get_autoscaley_on() else (-math.inf, math.inf)
    shown = [s for s in spikes if bottom <= s.value <= top]
    ax.plot([s.step for s in shown], [s.value for s in shown], "x", color=COLORS["spike"], markersize=5,
            markeredgewidth=1.4, zorder=5)
    transform = ax.get_xaxis_transform()
    for edge, marker, position in ((top, "^", 0.97), (bottom, "v", 0.03)):
        off = [s.step for s in spikes if (s.value > edge if marker == "^" else s.value < edge)]
        if off:
            ax.plot(off, [position] * len(off), marker, color=COLORS["spike"], markersize=6, transform=transform,
                    zorder=7)


def mark_nonfinite(ax: Axes, steps: list[int]) -> None:
    """Steps logged as NaN/inf, as red ticks along the bottom (they cannot be drawn as values)."""
    if not steps:
        return
    shown = steps if len(steps) <= 500 else list(np.asarray(steps)[:: math.ceil(len(steps) / 500)])
    ax.plot(shown, [0.0] * len(shown), "|", color=COLORS["nonfinite"], markersize=9, markeredgewidth=1.5,
            transform=ax.get_xaxis_transform(), clip_on=False, zorder=6, label=f"NaN/inf ({len(steps)})")


def annotate_signal(ax: Axes, data: FigureData, metric: str) -> None:
    summary = data.summary(metric)
    mark_change_points(ax, summary)
    if metric in SPIKE_METRICS:  # elsewhere a "spike" is batch noise a reader should not chase
        spikes = data.diag.instability.spikes.get(metric) or (summary.spikes if summary else [])
        mark_spikes(ax, spikes)
    mark_nonfinite(ax, data.run.nonfinite_steps(metric))


def robust_ylim(ax: Axes, curve: Curve) -> None:
    """Let a few extreme points go off-scale (marked at the edge) rather than flatten the whole curve."""
    if len(curve.values) < 20 or ax.get_yscale() == "log":
        return
    lo, hi = np.percentile(curve.values, [1, 99])
    lo = min(lo, float(curve.smooth_values.min()))
    hi = max(hi, float(curve.smooth_values.max()))
    spread = hi - lo
    vmin, vmax = float(curve.values.min()), float(curve.values.max())
    if spread <= 0 or (vmax - hi <= 0.5 * spread and lo - vmin <= 0.5 * spread):
        return
    pad = 0.08 * spread
    top = hi + pad if vmax - hi > 0.5 * spread else vmax + pad
    bottom = lo - pad if lo - vmin > 0.5 * spread else vmin - pad
    ax.set_ylim(bottom, top)
    above = curve.draw_steps[curve.draw_values > top]
    below = curve.draw_steps[curve.draw_values < bottom]
    transform = ax.get_xaxis_transform()
    if len(above):
        # Grey, not the spikes' red: an off-scale point is a drawing matter, not a spike the sheet counts.
        ax.plot(above, [0.97] * len(above), "^", color=COLORS["offscale"], markersize=4, transform=transform,
                zorder=6, label="off-scale")
    if len(below):
        ax.plot(below, [0.03] * len(below), "v", color=COLORS["offscale"], markersize=4, transform=transform,
                zorder=6, label=None if len(above) else "off-scale")


def log_if_decades(ax: Axes, curves: list[Curve]) -> bool:
    values = np.concatenate([c.values for c in curves if not c.empty]) if any(not c.empty for c in curves) else None
    if values is not None and style.spans_decades(values):
        ax.set_yscale("log")
        return True
    return False


def _handles(ax: Axes, extra: list[Axes] | None) -> tuple[list[Artist], list[str]]:
    handles, labels = ax.get_legend_handles_labels()
    for other in extra or []:
        more_handles, more_labels = other.get_legend_handles_labels()
        handles += more_handles
        labels += more_labels
    return handles, labels


def legend(ax: Axes, extra: list[Axes] | None = None, loc: LegendLoc = "best", ncol: int = 1) -> None:
    """A legend inside the panel on a translucent box (used where there is no strip above the panel)."""
    handles, labels = _handles(ax, extra)
    if handles:
        (extra[-1] if extra else ax).legend(handles, labels, loc=loc, ncol=ncol, frameon=True, framealpha=0.8,
                                            edgecolor="none", facecolor="white")


def legend_above(ax: Axes, extra: list[Axes] | None = None, ncol: int = 3) -> None:
    """A legend in the strip above the panel, right-aligned, so it never hides the curves (one row of it at most).

    A lone entry is left out: the panel title already names the only curve.
    """
    handles, labels = _handles(ax, extra)
    if len(handles) < 2:
        return
    if len(handles) > ncol:
        # More than one row would climb over the panel's title: inside the panel, where the curves leave room.
        ax.legend(handles, labels, loc="best", ncol=2, framealpha=0.85, borderaxespad=0.3, columnspacing=1.0,
                  handlelength=1.5, handletextpad=0.4, fontsize=7)
        return
    ax.legend(handles, labels, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=min(ncol, len(handles)),
              borderaxespad=0.2, columnspacing=1.0, handlelength=1.5, handletextpad=0.4, fontsize=7.5)


def rc() -> AbstractContextManager[None]:
    """Our rcParams while one figure is built (restored after; pyplot is never involved)."""
    return matplotlib.rc_context(style.RC)
