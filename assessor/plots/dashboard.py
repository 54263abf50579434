"""The practitioner's training dashboard: every headline signal over the optimizer step.

`dashboard_figure` lays the GRPO dashboard out as a practitioner does: reward / reward spread / KL on top,
length / clipping / entropy below, reward components / loss / gradient norm at the bottom. DPO runs get the
implicit-reward margin and preference accuracy on top instead. Panels for metrics the run does not log, or logs
as zeros only, are left out (the evidence sheet says what is missing); the diagnosis records may be empty.

The figure marks no "chosen" point by itself: an LLM judge reads it before any decision, and a marked step pulls
towards rolling back to it. Only when a verdict proposes a rollback is the target drawn (`rollback_step`), as a
green line on every panel.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from assessor.diagnose import robust
from assessor.diagnose.entropy import entropy_summed
from assessor.diagnose.loss import PREFERENCE_ALGORITHMS, logs_loss_only
from assessor.diagnose.models import Diagnostics, SignalSummary, Stretch
from assessor.plots import style
from assessor.plots._common import (
    FigureData,
    annotate_signal,
    legend_above,
    log_if_decades,
    mark_best,
    rc,
    robust_ylim,
    step_axis,
)
from assessor.plots._layout import Cell, place_rows
from assessor.plots.style import COLORS, Curve, fmt_num, plot_curve
from assessor.run import Run

__all__ = ["dashboard_figure"]

MAX_COMPONENTS = 6
_GRID_TOP = 0.91  # figure fraction: the header is written above

Panel = Callable[[Axes, FigureData], None]


def _shows(data: FigureData, metric: str) -> bool:
    """Whether the run logs `metric` with at least one non-zero value (an all-zero curve says nothing drawn)."""
    return data.has(metric) and bool(np.any(data.curve(metric).values != 0))


MAX_LEVEL_POINTS = 2000  # stretch means drawn for the reward's bold line (a long run's are evenly thinned)


def sheet_levels(curve: Curve) -> Curve:
    """The reward's bold line as the evidence sheet reads it: means over stretches of a tenth of the run.

    The sheet's start, peak and now for the reward are these stretch means (`diagnose.signals.describe`), so the
    line starts at the sheet's start, tops out at its peak and ends at its now; a different smoother would draw
    other numbers for the same quantities.
    """
    n = len(curve.values)
    if n < 6:
        return curve
    width = robust.stretch_width(n)
    means = robust.window_means(curve.values, width)
    centres = curve.steps[width // 2: width // 2 + len(means)]
    if len(means) > MAX_LEVEL_POINTS:
        keep = np.unique(np.linspace(0, len(means) - 1, MAX_LEVEL_POINTS).round().astype(int))
        keep = np.union1d(keep, [int(np.argmax(means)), int(np.argmin(means))])  # the peak stays drawn
        means, centres = means[keep], centres[keep]
    return dataclasses.replace(curve, smooth_steps=centres, smooth_values=means)


def _reward_panel(ax: Axes, data: FigureData) -> None:
    """Reward mean with its batch min-max band, held-out eval, peak, checkpoints on disk.

    No band of plus or minus the reward's std: that is the spread between rollouts (the learning signal, drawn in
    its own panel), not an uncertainty of the mean, and on a 0..1 reward it shades nearly the whole panel.
    """
    mean = sheet_levels(data.curve("reward_mean"))
    ax.set_title("Reward (train mean)", loc="left")
    band_label = None
    lo_hi: tuple[np.ndarray, np.ndarray] | None = None
    if data.has("reward_min") and data.has("reward_max") and len(mean.smooth_steps) > 1:
        lo_c, hi_c = data.curve("reward_min"), data.curve("reward_max")
        lo_hi = (np.interp(mean.smooth_steps, lo_c.smooth_steps, lo_c.smooth_values),
                 np.interp(mean.smooth_steps, hi_c.smooth_steps, hi_c.smooth_values))
        band_label = "batch min–max"
        if not _band_moves(*lo_hi):  # binary rewards: min 0 and max 1 at every step say nothing
            lo_hi = None
    if lo_hi is not None:
        ax.fill_between(mean.smooth_steps, lo_hi[0], lo_hi[1], color=COLORS["reward_band"], alpha=0.13,
                        linewidth=0, label=band_label, zorder=1)
        for edge in lo_hi:
            ax.plot(mean.smooth_steps, edge, color=COLORS["reward_band"], linewidth=0.8, alpha=0.7, zorder=1)
    plot_curve(ax, mean, COLORS["reward"], label="reward (stretch means)", linewidth=2.4)
    if lo_hi is not None:  # the band must not dictate the scale: keep the mean readable
        span = np.concatenate([mean.draw_values, mean.smooth_values])
        pad = 0.25 * (float(span.max() - span.min()) or 1.0)
        bottom = max(float(np.min(lo_hi[0])), float(span.min()) - pad)
        top = min(float(np.max(lo_hi[1])), float(span.max()) + pad)
        if top > bottom:
            ax.set_ylim(bottom, top)
    peak_step, peak = _peak(mean, data.summary("reward_mean"))
    if data.diag.reward.metric == "reward_mean" and data.diag.reward.peak_step is not None:
        peak_step, peak = data.diag.reward.peak_step, data.diag.reward.peak
    if peak_step is not None and peak is not None:
        ax.plot([peak_step], [peak], marker="*", color=COLORS["peak"], markersize=15, markeredgecolor="black",
                markeredgewidth=0.6, linestyle="none", zorder=7, label=f"train peak {fmt_num(peak)} @ {peak_step}")
    if data.diag.reward.metric == "reward_mean":
        _draw_stretches(ax, data.diag.reward.peak_stretch, data.diag.reward.latest_stretch)
    annotate_signal(ax, data, "reward_mean")
    _mark_disk_checkpoints(ax, data)
    twin = _eval_overlay(ax, data)
    ax.set_ylabel("reward")
    legend_above(ax, [twin] if twin is not None else None)


def _held_out_panel(ax: Axes, data: FigureData) -> None:
    """The held-out eval on its own, for a run with no training reward to draw beside it (none, or all zero)."""
    why = "training reward 0 throughout" if data.has("reward_mean") else "no training reward logged"
    ax.set_title(f"Held-out eval ({why})", loc="left")
    _mark_disk_checkpoints(ax, data)
    _eval_overlay(ax, data, own_panel=True)
    metric = data.eval_metric() or "eval"
    ax.set_ylabel(metric.replace("_", " "))
    legend_above(ax)


def _draw_stretches(ax: Axes, peak: Stretch | None, latest: Stretch | None) -> None:
    """The two stretches the decline test compared, named by their steps as the finding names them.

    Their means are drawn, not written: the sheet's peak and now are the star and the line's ends.
    """
    for stretch, name in ((peak, "decline test: best"), (latest, "vs latest")):
        if stretch is None:
            continue
        ax.hlines(stretch.mean, stretch.first_step, stretch.last_step, colors=COLORS["peak"], linewidth=3.0,
                  alpha=0.8, zorder=6, label=f"{name} steps {stretch.first_step}–{stretch.last_step}")


def _band_moves(lo: np.ndarray, hi: np.ndarray) -> bool:
    """Whether a min-max band changes shape along the run (else it is the reward's fixed range)."""
    gap = float(np.median(hi - lo))
    if gap <= 0:
        return False
    return float(np.ptp(lo) + np.ptp(hi)) > 0.1 * gap


def _peak(curve: Curve, summary: SignalSummary | None) -> tuple[int | None, float | None]:
    if summary is not None:
        return summary.peak_step, summary.peak
    if len(curve.smooth_values) < 3:
        return None, None
    i = int(np.argmax(curve.smooth_values))
    return int(curve.smooth_steps[i]), float(curve.smooth_values[i])


def _mark_disk_checkpoints(ax: Axes, data: FigureData) -> None:
    steps = sorted({c.step for c in data.run.checkpoints})
    if not steps:
        return
    ax.plot(steps, [0.015] * len(steps), "|", color=COLORS["disk"], markersize=14, markeredgewidth=2.2,
            transform=ax.get_xaxis_transform(), clip_on=False, zorder=6, label="checkpoints on disk")


def _eval_overlay(ax: Axes, data: FigureData, own_panel: bool = False) -> Axes | None:
    """Held-out eval on the reward panel: on its axis when it is the reward itself, else a right-hand axis.

    `own_panel`: the panel is the eval's own (no training reward is drawn), so it takes the panel's axis.
    """
    metric = data.eval_metric()
    if metric is None:
        return None
    curve = data.curve(metric, "eval")
    if curve.empty:
        return None
    target = ax if own_panel or metric == "reward_mean" else ax.twinx()
    label = f"held-out {metric.replace('_', ' ')}"
    if target is not ax:
        target.spines["right"].set_visible(True)
        target.set_ylabel(label, color=COLORS["eval"])
        target.tick_params(axis="y", colors=COLORS["eval"])
        target.grid(False)
    many = len(curve.values) > 60
    target.plot(curve.draw_steps, curve.draw_values, color=COLORS["eval"], linewidth=1.0 if many else 1.6,
                marker=None if many else "o", markersize=4, alpha=0.25 if many else 0.9, zorder=4,
                label=label if not many else None)
    if many:
        target.plot(curve.smooth_steps, curve.smooth_values, color=COLORS["eval"], linewidth=2.0, label=label)
    ev = data.diag.eval
    primary = (ev.metric or "").removeprefix("eval/") == metric
    drawn = next((c for c in ev.curves if c.metric == f"eval/{metric}"), None)
    if primary and ev.peak_step is not None and ev.peak is not None:
        peak_step, peak = ev.peak_step, ev.peak
    elif drawn is not None:
        peak_step, peak = drawn.peak_step, drawn.peak
    else:
        i = int(np.argmax(curve.values))
        peak_step, peak = int(curve.steps[i]), float(curve.values[i])
    target.plot([peak_step], [peak], marker="*", color=COLORS["eval"], markersize=15, markeredgecolor="black",
                markeredgewidth=0.6, linestyle="none", zorder=7, label=f"eval peak {fmt_num(peak)} @ {peak_step}")
    return target if target is not ax else None


def _spread_panel(ax: Axes, data: FigureData) -> None:
    """The learning signal: reward std across completions, and the share of groups with no spread."""
    ax.set_title("Learning signal", loc="left")
    twin: Axes | None = None
    if _shows(data, "reward_std"):
        plot_curve(ax, data.curve("reward_std"), COLORS["spread"], label="reward std")
        ax.set_ylabel("reward std", color=COLORS["spread"])
        annotate_signal(ax, data, "reward_std")
    if _shows(data, "reward_zero_std_frac"):
        target = ax
        if _shows(data, "reward_std"):
            twin = ax.twinx()
            twin.spines["right"].set_visible(True)
            twin.grid(False)
            target = twin
        plot_curve(target, data.curve("reward_zero_std_frac"), COLORS["zero_std"], label="groups with zero std",
                   linewidth=1.6)
        target.set_ylim(-0.02, 1.02)
        target.set_ylabel("fraction of groups", color=COLORS["zero_std"])
    legend_above(ax, [twin] if twin is not None else None, ncol=1)


def _kl_panel(ax: Axes, data: FigureData) -> None:
    curve = data.curve("kl")
    ax.set_title("KL to reference", loc="left")
    plot_curve(ax, curve, COLORS["kl"], label="KL (smoothed)")
    log_if_decades(ax, [curve])
    robust_ylim(ax, curve)
    annotate_signal(ax, data, "kl")
    ax.set_ylabel("KL (nats)")


def _pref_margin_panel(ax: Axes, data: FigureData) -> None:
    """DPO's stand-in for reward: implicit rewards of chosen and rejected, and their margin."""
    algorithm = (data.run.facts.algorithm or "dpo").upper()
    implicit = "Implicit reward" if algorithm in ("DPO", "IPO", "KTO") else "Reward"
    ax.set_title(f"{implicit} ({algorithm}): margin = chosen − rejected", loc="left")
    if _shows(data, "pref_reward_chosen"):
        plot_curve(ax, data.curve("pref_reward_chosen"), COLORS["entropy"], label="chosen", raw=False,
                   linewidth=1.3)
    if _shows(data, "pref_reward_rejected"):
        plot_curve(ax, data.curve("pref_reward_rejected"), COLORS["cap"], label="rejected", raw=False,
                   linewidth=1.3)
    margin = data.curve("pref_margin")
    plot_curve(ax, margin, COLORS["reward"], label="margin", linewidth=2.4)
    peak_step, peak = _peak(margin, data.summary("pref_margin"))
    if peak_step is not None and peak is not None:
        ax.plot([peak_step], [peak], marker="*", color=COLORS["peak"], markersize=15, markeredgecolor="black",
                markeredgewidth=0.6, linestyle="none", zorder=7, label=f"peak margin {fmt_num(peak)} @ {peak_step}")
    annotate_signal(ax, data, "pref_margin")
    _mark_disk_checkpoints(ax, data)
    twin = _eval_overlay(ax, data)
    ax.axhline(0, color="#999999", linewidth=0.8)
    ax.set_ylabel("implicit reward")
    legend_above(ax, [twin] if twin is not None else None)


def _pref_accuracy_panel(ax: Axes, data: FigureData) -> None:
    ax.set_title("Preference accuracy", loc="left")
    plot_curve(ax, data.curve("pref_accuracy"), COLORS["spread"], label="accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.axhline(0.5, color="#999999", linewidth=0.8, linestyle=":")
    annotate_signal(ax, data, "pref_accuracy")
    ax.set_ylabel("fraction of pairs")


def _length_panel(ax: Axes, data: FigureData) -> None:
    """Mean response length, min-max band, the token cap, and the truncated share on the right."""
    ax.set_title("Response length", loc="left")
    mean = data.curve("response_length_mean")
    if data.has("response_length_min") and data.has("response_length_max") and len(mean.smooth_steps) > 1:
        lo, hi = data.curve("response_length_min"), data.curve("response_length_max")
        ax.fill_between(mean.smooth_steps, np.interp(mean.smooth_steps, lo.smooth_steps, lo.smooth_values),
                        np.interp(mean.smooth_steps, hi.smooth_steps, hi.smooth_values), color=COLORS["length"],
                        alpha=0.1, linewidth=0, label="min–max")
    plot_curve(ax, mean, COLORS["length"], label="mean length")
    cap = data.run.facts.max_completion_length or data.diag.length.cap
    if cap:
        ax.axhline(cap, color=COLORS["cap"], linestyle="--", linewidth=1.3, label=f"cap {cap} tokens")
    annotate_signal(ax, data, "response_length_mean")
    ax.set_ylabel("tokens")
    twin: Axes | None = None
    if _shows(data, "response_length_clip_ratio"):
        twin = ax.twinx()
        twin.grid(False)
        twin.spines["right"].set_visible(True)
        plot_curve(twin, data.curve("response_length_clip_ratio"), COLORS["truncated"], label="truncated (right)",
                   raw=False, linewidth=1.3)
        twin.lines[-1].set_linestyle(":")
        top = max(0.1, float(np.max(data.curve("response_length_clip_ratio").values)) * 1.1)
        twin.set_ylim(0, min(1.02, top))
        twin.set_ylabel("truncated share", color=COLORS["truncated"])
    legend_above(ax, [twin] if twin is not None else None, ncol=2)


def _clip_panel(ax: Axes, data: FigureData) -> None:
    ax.set_title("Ratio clipping", loc="left")
    for metric, key, label in (("clip_ratio_low", "clip_low", "low"), ("clip_ratio_high", "clip_high", "high"),
                               ("clip_ratio_region", "clip_region", "region (total)")):
        if _shows(data, metric):
            plot_curve(ax, data.curve(metric), COLORS[key], label=label, linewidth=1.8)
    annotate_signal(ax, data, "clip_ratio_region")
    ax.set_ylabel("fraction of tokens clipped")
    legend_above(ax)


def _entropy_panel(ax: Axes, data: FigureData) -> None:
    ax.set_title("Token entropy", loc="left")
    curve = data.curve("entropy")
    plot_curve(ax, curve, COLORS["entropy"], label="entropy")
    robust_ylim(ax, curve)
    ln_vocab = data.diag.entropy.ln_vocab
    if ln_vocab is None and data.run.facts.vocab_size:
        ln_vocab = math.log(data.run.facts.vocab_size)
    summary = data.summary("entropy")
    summed = summary is not None and entropy_summed(data.run, summary.start, summary.now, ln_vocab)
    if summed:  # a sequence sum (TRL PPO): the per-token ceiling is no line for it
        ax.set_title("Entropy, summed over the sequence", loc="left")
    elif ln_vocab is not None and not curve.empty:
        if float(np.max(curve.values)) >= 0.25 * ln_vocab:
            ax.axhline(ln_vocab, color=COLORS["ln_vocab"], linestyle="--", linewidth=1.2,
                       label=f"ln(vocab) = {ln_vocab:.2f} (uniform noise)")
        else:  # drawing it would flatten the curve; say where it is instead
            ax.set_title(f"Token entropy  (ln vocab = {ln_vocab:.1f}, far above)", loc="left")
    annotate_signal(ax, data, "entropy")
    ax.set_ylabel("nats / sequence" if summed else "nats / token")
    legend_above(ax, ncol=1)


def _components_panel(ax: Axes, data: FigureData) -> None:
    ax.set_title("Reward components", loc="left")
    for i, metric in enumerate(_component_metrics(data)):
        name = metric.removeprefix("reward_component/").removesuffix("_mean")
        plot_curve(ax, data.curve(metric), style.COMPONENT_COLORS[i % len(style.COMPONENT_COLORS)], label=name,
                   linewidth=1.8)
    ax.set_ylabel("component reward")
    legend_above(ax, ncol=2)


def _component_metrics(data: FigureData) -> list[str]:
    names = sorted(n for n in data.names() if n.startswith("reward_component/") and n.endswith("_mean")
                   and _shows(data, n))
    return names[:MAX_COMPONENTS]


def _loss_panel(ax: Axes, data: FigureData) -> None:
    metric = "pg_loss" if _shows(data, "pg_loss") else "loss"
    # A preference loop's loss, or that of a loop logging no reward at all, is its objective: progress, not only a
    # numerical check.
    preference = data.run.facts.algorithm in PREFERENCE_ALGORITHMS or (
        metric == "loss" and not data.run.facts.algorithm and logs_loss_only(data.run))
    title = "Loss" if preference else ("Policy loss" if metric == "pg_loss" else "Loss")
    ax.set_title(title + ("" if preference else "  (numerical issues only, not progress)"), loc="left")
    curve = data.curve(metric)
    plot_curve(ax, curve, COLORS["loss"], label=metric)
    robust_ylim(ax, curve)
    if not curve.empty and float(curve.values.min()) < 0 < float(curve.values.max()):
        ax.axhline(0, color="#999999", linewidth=0.8)
    annotate_signal(ax, data, metric)
    ax.set_ylabel(metric)


def _magnitude_panel(metric: str, title: str, color: str, label: str, ylabel: str) -> Panel:
    """A panel for one positive magnitude (gradient norm, critic value loss), log-scaled when it spans decades."""
    def draw(ax: Axes, data: FigureData) -> None:
        curve = data.curve(metric)
        log = log_if_decades(ax, [curve])
        ax.set_title(title + ("  (log scale)" if log else ""), loc="left")
        plot_curve(ax, curve, COLORS[color], label=label)
        robust_ylim(ax, curve)
        annotate_signal(ax, data, metric)
        ax.set_ylabel(ylabel)

    return draw


_grad_panel = _magnitude_panel("grad_norm", "Gradient norm", "grad", "grad norm", "L2 norm")
_value_loss_panel = _magnitude_panel("value_loss", "Critic value loss", "value_loss", "value loss", "value loss")


def _primary_row(data: FigureData) -> list[tuple[int, Panel]]:
    """(relative width, panel) for the top row: reward (or DPO's margin), the learning signal, KL."""
    row: list[tuple[int, Panel]] = []
    if not _shows(data, "reward_mean") and _shows(data, "pref_margin"):
        row.append((6, _pref_margin_panel))
        if _shows(data, "pref_accuracy"):
            row.append((3, _pref_accuracy_panel))
    else:
        if _shows(data, "reward_mean"):
            row.append((6, _reward_panel))
        elif data.eval_metric() is not None:
            row.append((6, _held_out_panel))
        if _shows(data, "reward_std") or _shows(data, "reward_zero_std_frac"):
            row.append((3, _spread_panel))
    if _shows(data, "kl"):
        row.append((3, _kl_panel))
    return row


def _rows(data: FigureData) -> list[list[tuple[int, Panel]]]:
    secondary: list[Panel] = []
    if _shows(data, "response_length_mean"):
        secondary.append(_length_panel)
    if any(_shows(data, m) for m in ("clip_ratio_low", "clip_ratio_high", "clip_ratio_region")):
        secondary.append(_clip_panel)
    if _shows(data, "entropy"):
        secondary.append(_entropy_panel)
    tertiary: list[Panel] = []
    if len(_component_metrics(data)) >= 2:  # a single component is the reward itself
        tertiary.append(_components_panel)
    if _shows(data, "pg_loss") or _shows(data, "loss"):
        tertiary.append(_loss_panel)
    if _shows(data, "grad_norm"):
        tertiary.append(_grad_panel)
    if _shows(data, "value_loss"):
        tertiary.append(_value_loss_panel)
    primary = _primary_row(data)
    rows = [primary] if primary else []
    # few panels below the top: one row of them reads better than two half-empty rows
    groups = [secondary + tertiary] if len(secondary) + len(tertiary) <= 3 else [secondary, tertiary]
    for panels in groups:
        if panels:
            rows.append([(1, p) for p in panels])
    return rows


def _header(data: FigureData, rollback: str | None) -> tuple[str, str]:
    head = data.diag.run
    run, facts = data.run, data.run.facts
    parts = [p for p in (head.framework or facts.framework, (head.algorithm or facts.algorithm or "").upper()) if p]
    last = head.last_step if head.last_step is not None else run.last_step
    planned = head.planned_total_steps or facts.planned_total_steps
    if last is not None and planned:
        parts.append(f"step {last:,} / {planned:,} ({100 * last / planned:.0f}%)")
    elif last is not None:
        parts.append(f"step {last:,} (planned steps unknown)")
    details = []
    if facts.model:
        details.append(facts.model)
    if facts.beta is not None:
        details.append(f"β = {facts.beta:g}")
    if facts.num_generations:
        details.append(f"G = {facts.num_generations}")
    if rollback:
        details.append(f"verdict: roll back to {rollback}")
    return f"{head.name or run.name}  ·  " + "  ·  ".join(parts), "   ·   ".join(details)


def _rollback_label(run: Run, step: int) -> str:
    on_disk = {c.step for c in run.checkpoints}
    return f"ckpt {step}" if step in on_disk else f"step {step} (no ckpt on disk)"


def dashboard_figure(run: Run, diagnostics: Diagnostics, rollback_step: int | None = None) -> Figure:
    """The training dashboard: primary, secondary and tertiary rows of panels over the optimizer step.

    Args:
        run: The run the curves come from.
        diagnostics: Its diagnosis (change points, peaks, eval peak); empty records are fine.
        rollback_step: The step a verdict proposes to roll back to, drawn on every panel; None draws no target
            (the figure an LLM judge reads, and any verdict but a rollback).

    Returns:
        A `Figure` of `style.DASHBOARD_PX` pixels at `style.DASHBOARD_DPI`, not attached to pyplot.
    """
    data = FigureData(run, diagnostics)
    rollback = _rollback_label(run, rollback_step) if rollback_step is not None else None
    with rc():
        fig = style.new_figure(style.DASHBOARD_PX, dpi=style.DASHBOARD_DPI)
        rows = _rows(data)
        drawn: list[tuple[Axes, Panel]] = []
        cells: list[list[Cell]] = []
        if not rows:
            fig.text(0.5, 0.5, "No training curves with non-zero values were logged", ha="center", va="center",
                     fontsize=13, color="#777777")
        else:
            # Provisional places: `place_rows` sets the final ones once the panels' labels are known.
            grid = fig.add_gridspec(len(rows), 1, height_ratios=[1.3] + [1.0] * (len(rows) - 1), top=_GRID_TOP)
            shared: Axes | None = None
            for r, row in enumerate(rows):
                row_grid = grid[r].subgridspec(1, len(row), width_ratios=[width for width, _ in row])
                cells.append([])
                for c, (width, panel) in enumerate(row):
                    ax = fig.add_subplot(row_grid[0, c], sharex=shared)
                    shared = shared or ax
                    made = len(fig.axes)
                    panel(ax, data)
                    step_axis(ax)
                    if r == len(rows) - 1:
                        ax.set_xlabel("optimizer step")
                    drawn.append((ax, panel))
                    cells[-1].append(Cell(width, (ax, *fig.axes[made:])))  # with the twin the panel made, if any
            if shared is not None:
                _shared_xlim(shared, data)
            place_rows(fig, cells, [1.3] + [1.0] * (len(rows) - 1), top=_GRID_TOP)
        if rollback_step is not None and rollback is not None:
            for ax, panel in drawn:  # after the x range is final, so labels can keep inside the panel
                long_label = f"rollback: {rollback}" if panel in (_reward_panel, _pref_margin_panel) else None
                mark_best(ax, rollback_step, rollback, long_label, low=long_label is not None)
        title, subtitle = _header(data, rollback)
        fig.text(0.012, 0.972, title, fontsize=15, fontweight="bold", ha="left", va="center")
        fig.text(0.012, 0.938, subtitle, fontsize=10, color="#555555", ha="left", va="center")
        key = "faint: raw points · bold: smoothed · ▼ change point · red × (▲▼ at an edge): spike · grey ▲▼: off-scale"
        if rollback is not None:
            key += " · green dashed: rollback target"
        if len(run.nonfinite):
            key += " · red |: NaN/inf"
        fig.text(0.99, 0.938, key, fontsize=8.5, color="#777777", ha="right", va="center")
    return fig


def _shared_xlim(ax: Axes, data: FigureData) -> None:
    """All panels span the run's logged steps (a little margin so end points are not cut)."""
    curves = [c for c in data.built_curves() if not c.empty]
    if not curves:
        return
    first = min(float(c.steps[0]) for c in curves)
    last = max(float(c.steps[-1]) for c in curves)
    if last > first:
        pad = 0.01 * (last - first)
        ax.set_xlim(first - pad, last + pad)

