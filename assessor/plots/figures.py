"""One function per figure, each returning a matplotlib `Figure` (OO API only, never pyplot state).

* `dashboard_figure`: the GRPO dashboard as a practitioner lays it out: reward / reward spread / KL on top,
  length / clipping / entropy below, reward components / loss / gradient norm at the bottom; the chosen
  checkpoint as a green line on every panel, so "where would I roll back to" reads at a glance.
* `kl_reward_figure`: the reward-against-KL trajectory, the central question of RL fine-tuning (what did
  each unit of drift from the reference buy?), with the quadrant spans the diagnosis found.
* `gpu_figure`: where step time goes (generation vs training), step time with its jumps, and nvidia-smi
  power / utilisation / memory when a telemetry log exists.

Every function copes with any subset of metrics missing; the diagnosis records may be empty placeholders.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Literal

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from assessor.diagnose.models import Diagnostics, SignalSummary, Spike
from assessor.ingest.aliases import is_phase_timing
from assessor.plots import style
from assessor.plots.style import COLORS, Curve, fmt_num, make_curve, placeholder, plot_curve
from assessor.run import Run, Split

__all__ = ["dashboard_figure", "gpu_figure", "has_gpu_data", "has_kl", "kl_reward_figure"]

LegendLoc = Literal["best", "upper left", "upper right", "lower left", "lower right"]
EVAL_PREFERENCE = ("accuracy", "reward_mean", "pass_at_k", "maj_at_k")
MAX_COMPONENTS = 6
MAX_SPIKES = 8
# The instability signals: where one wild step means a numerical problem worth marking.
SPIKE_METRICS = frozenset({"kl", "grad_norm", "loss", "pg_loss", "value_loss"})


# --------------------------------------------------------------------------- shared plumbing
@dataclass
class _Data:
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

    def summary(self, metric: str, split: Split = "train") -> SignalSummary | None:
        key = metric if split == "train" else f"eval/{metric}"
        return self.diag.signals.get(key)

    def eval_metric(self) -> str | None:
        """The held-out metric to overlay on the reward: the diagnosis's choice, else the usual suspects."""
        names = self.run.metric_names("eval")
        chosen = self.diag.eval.metric
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


def _step_axis(ax: Axes) -> None:
    ax.xaxis.set_major_formatter(style.steps_formatter())


def _mark_best(ax: Axes, step: int | None, label: str, long_label: str | None = None, low: bool = False) -> None:
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


def _mark_change_points(ax: Axes, summary: SignalSummary | None) -> None:
    """Lasting level shifts as short ticks hanging from the top of the panel."""
    if summary is None or not summary.change_points:
        return
    steps = [cp.step for cp in summary.change_points]
    ax.plot(steps, [0.985] * len(steps), "v", color=COLORS["change"], markersize=6, transform=ax.get_xaxis_transform(),
            clip_on=False, zorder=5)


def _mark_spikes(ax: Axes, spikes: list[Spike]) -> None:
    """The largest isolated spikes, as small red crosses on the raw value."""
    if not spikes:
        return
    spikes = sorted(spikes, key=lambda s: -s.size_noise)[:MAX_SPIKES]
    ax.plot([s.step for s in spikes], [s.value for s in spikes], "x", color=COLORS["spike"], markersize=5,
            markeredgewidth=1.4, zorder=5)


def _mark_nonfinite(ax: Axes, steps: list[int]) -> None:
    """Steps logged as NaN/inf, as red ticks along the bottom (they cannot be drawn as values)."""
    if not steps:
        return
    shown = steps if len(steps) <= 500 else list(np.asarray(steps)[:: math.ceil(len(steps) / 500)])
    ax.plot(shown, [0.0] * len(shown), "|", color=COLORS["nonfinite"], markersize=9, markeredgewidth=1.5,
            transform=ax.get_xaxis_transform(), clip_on=False, zorder=6, label=f"NaN/inf ({len(steps)})")


def _annotate_signal(ax: Axes, data: _Data, metric: str) -> None:
    summary = data.summary(metric)
    _mark_change_points(ax, summary)
    if metric in SPIKE_METRICS:  # elsewhere a "spike" is batch noise a reader should not chase
        spikes = data.diag.instability.spikes.get(metric) or (summary.spikes if summary else [])
        _mark_spikes(ax, spikes)
    _mark_nonfinite(ax, data.run.nonfinite_steps(metric))


def _robust_ylim(ax: Axes, curve: Curve) -> None:
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
        ax.plot(above, [0.97] * len(above), "^", color=COLORS["spike"], markersize=5, transform=transform,
                zorder=6, label="off-scale")
    if len(below):
        ax.plot(below, [0.03] * len(below), "v", color=COLORS["spike"], markersize=5, transform=transform,
                zorder=6, label=None if len(above) else "off-scale")


def _log_if_decades(ax: Axes, curves: list[Curve]) -> bool:
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


def _legend(ax: Axes, extra: list[Axes] | None = None, loc: LegendLoc = "best", ncol: int = 1) -> None:
    """A legend inside the panel on a translucent box (used where there is no strip above the panel)."""
    handles, labels = _handles(ax, extra)
    if handles:
        (extra[-1] if extra else ax).legend(handles, labels, loc=loc, ncol=ncol, frameon=True, framealpha=0.8,
                                            edgecolor="none", facecolor="white")


def _legend_above(ax: Axes, extra: list[Axes] | None = None, ncol: int = 3) -> None:
    """A legend in the strip above the panel, right-aligned, so it never hides the curves.

    A lone entry is left out: the panel title already names the only curve.
    """
    handles, labels = _handles(ax, extra)
    if len(handles) < 2:
        return
    ax.legend(handles, labels, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=min(ncol, len(handles)),
              borderaxespad=0.2, columnspacing=1.0, handlelength=1.5, handletextpad=0.4, fontsize=7.5)


# --------------------------------------------------------------------------- dashboard panels
Panel = Callable[[Axes, _Data], None]


def _reward_panel(ax: Axes, data: _Data) -> None:
    """Reward mean with its spread band, held-out eval, peak, checkpoints on disk."""
    mean = data.curve("reward_mean")
    ax.set_title("Reward (train mean)", loc="left")
    band_label = None
    lo_hi: tuple[np.ndarray, np.ndarray] | None = None
    if data.has("reward_std") and len(mean.smooth_steps) > 1:
        std = data.curve("reward_std")
        s = np.interp(mean.smooth_steps, std.smooth_steps, std.smooth_values)
        lo_hi = (mean.smooth_values - s, mean.smooth_values + s)
        band_label = "± reward std"
    elif data.has("reward_min") and data.has("reward_max") and len(mean.smooth_steps) > 1:
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
    plot_curve(ax, mean, COLORS["reward"], label="reward (smoothed)", linewidth=2.4)
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
    _annotate_signal(ax, data, "reward_mean")
    _mark_disk_checkpoints(ax, data)
    twin = _eval_overlay(ax, data)
    ax.set_ylabel("reward")
    _legend_above(ax, [twin] if twin is not None else None)


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


def _mark_disk_checkpoints(ax: Axes, data: _Data) -> None:
    steps = sorted({c.step for c in data.run.checkpoints})
    if not steps:
        return
    ax.plot(steps, [0.015] * len(steps), "|", color=COLORS["disk"], markersize=14, markeredgewidth=2.2,
            transform=ax.get_xaxis_transform(), clip_on=False, zorder=6, label="checkpoints on disk")


def _eval_overlay(ax: Axes, data: _Data) -> Axes | None:
    """Held-out eval on the reward panel: same axis when it is the reward itself, else a right-hand axis."""
    metric = data.eval_metric()
    if metric is None:
        return None
    curve = data.curve(metric, "eval")
    if curve.empty:
        return None
    target = ax if metric == "reward_mean" else ax.twinx()
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
    if ev.peak_step is not None and ev.peak is not None:
        peak_step, peak = ev.peak_step, ev.peak
    else:
        i = int(np.argmax(curve.values))
        peak_step, peak = int(curve.steps[i]), float(curve.values[i])
    target.plot([peak_step], [peak], marker="*", color=COLORS["eval"], markersize=15, markeredgecolor="black",
                markeredgewidth=0.6, linestyle="none", zorder=7, label=f"eval peak {fmt_num(peak)} @ {peak_step}")
    return target if target is not ax else None


def _spread_panel(ax: Axes, data: _Data) -> None:
    """The learning signal: reward std across completions, and the share of groups with no spread."""
    ax.set_title("Learning signal", loc="left")
    twin: Axes | None = None
    if data.has("reward_std"):
        plot_curve(ax, data.curve("reward_std"), COLORS["spread"], label="reward std")
        ax.set_ylabel("reward std", color=COLORS["spread"])
        _annotate_signal(ax, data, "reward_std")
    if data.has("reward_zero_std_frac"):
        target = ax
        if data.has("reward_std"):
            twin = ax.twinx()
            twin.spines["right"].set_visible(True)
            twin.grid(False)
            target = twin
        plot_curve(target, data.curve("reward_zero_std_frac"), COLORS["zero_std"], label="groups with zero std",
                   linewidth=1.6)
        target.set_ylim(-0.02, 1.02)
        target.set_ylabel("fraction of groups", color=COLORS["zero_std"])
    _legend_above(ax, [twin] if twin is not None else None, ncol=1)


def _kl_panel(ax: Axes, data: _Data) -> None:
    curve = data.curve("kl")
    ax.set_title("KL to reference", loc="left")
    plot_curve(ax, curve, COLORS["kl"], label="KL (smoothed)")
    _log_if_decades(ax, [curve])
    _robust_ylim(ax, curve)
    _annotate_signal(ax, data, "kl")
    ax.set_ylabel("KL (nats)")


def _pref_margin_panel(ax: Axes, data: _Data) -> None:
    """DPO's stand-in for reward: implicit rewards of chosen and rejected, and their margin."""
    ax.set_title("Implicit reward (DPO): margin = chosen − rejected", loc="left")
    if data.has("pref_reward_chosen"):
        plot_curve(ax, data.curve("pref_reward_chosen"), COLORS["entropy"], label="chosen", raw=False,
                   linewidth=1.3)
    if data.has("pref_reward_rejected"):
        plot_curve(ax, data.curve("pref_reward_rejected"), COLORS["cap"], label="rejected", raw=False,
                   linewidth=1.3)
    margin = data.curve("pref_margin")
    plot_curve(ax, margin, COLORS["reward"], label="margin", linewidth=2.4)
    peak_step, peak = _peak(margin, data.summary("pref_margin"))
    if peak_step is not None and peak is not None:
        ax.plot([peak_step], [peak], marker="*", color=COLORS["peak"], markersize=15, markeredgecolor="black",
                markeredgewidth=0.6, linestyle="none", zorder=7, label=f"peak margin {fmt_num(peak)} @ {peak_step}")
    _annotate_signal(ax, data, "pref_margin")
    _mark_disk_checkpoints(ax, data)
    twin = _eval_overlay(ax, data)
    ax.axhline(0, color="#999999", linewidth=0.8)
    ax.set_ylabel("implicit reward")
    _legend_above(ax, [twin] if twin is not None else None)


def _pref_accuracy_panel(ax: Axes, data: _Data) -> None:
    ax.set_title("Preference accuracy", loc="left")
    plot_curve(ax, data.curve("pref_accuracy"), COLORS["spread"], label="accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.axhline(0.5, color="#999999", linewidth=0.8, linestyle=":")
    _annotate_signal(ax, data, "pref_accuracy")
    ax.set_ylabel("fraction of pairs")


def _length_panel(ax: Axes, data: _Data) -> None:
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
    _annotate_signal(ax, data, "response_length_mean")
    ax.set_ylabel("tokens")
    twin: Axes | None = None
    if data.has("response_length_clip_ratio"):
        twin = ax.twinx()
        twin.grid(False)
        twin.spines["right"].set_visible(True)
        plot_curve(twin, data.curve("response_length_clip_ratio"), COLORS["truncated"], label="truncated (right)",
                   raw=False, linewidth=1.3)
        twin.lines[-1].set_linestyle(":")
        top = max(0.1, float(np.max(data.curve("response_length_clip_ratio").values)) * 1.1)
        twin.set_ylim(0, min(1.02, top))
        twin.set_ylabel("truncated share", color=COLORS["truncated"])
    _legend_above(ax, [twin] if twin is not None else None, ncol=2)


def _clip_panel(ax: Axes, data: _Data) -> None:
    ax.set_title("Ratio clipping", loc="left")
    for metric, key, label in (("clip_ratio_low", "clip_low", "low"), ("clip_ratio_high", "clip_high", "high"),
                               ("clip_ratio_region", "clip_region", "region (total)")):
        if data.has(metric):
            plot_curve(ax, data.curve(metric), COLORS[key], label=label, linewidth=1.8)
    _annotate_signal(ax, data, "clip_ratio_region")
    ax.set_ylabel("fraction of tokens clipped")
    _legend_above(ax)


def _entropy_panel(ax: Axes, data: _Data) -> None:
    ax.set_title("Token entropy", loc="left")
    curve = data.curve("entropy")
    plot_curve(ax, curve, COLORS["entropy"], label="entropy")
    _robust_ylim(ax, curve)
    ln_vocab = data.diag.entropy.ln_vocab
    if ln_vocab is None and data.run.facts.vocab_size:
        ln_vocab = math.log(data.run.facts.vocab_size)
    if ln_vocab is not None and not curve.empty:
        if float(np.max(curve.values)) >= 0.25 * ln_vocab:
            ax.axhline(ln_vocab, color=COLORS["ln_vocab"], linestyle="--", linewidth=1.2,
                       label=f"ln(vocab) = {ln_vocab:.2f} (uniform noise)")
        else:  # drawing it would flatten the curve; say where it is instead
            ax.set_title(f"Token entropy  (ln vocab = {ln_vocab:.1f}, far above)", loc="left")
    _annotate_signal(ax, data, "entropy")
    ax.set_ylabel("nats / token")
    _legend_above(ax, ncol=1)


def _components_panel(ax: Axes, data: _Data) -> None:
    ax.set_title("Reward components", loc="left")
    for i, metric in enumerate(_component_metrics(data)):
        name = metric.removeprefix("reward_component/").removesuffix("_mean")
        plot_curve(ax, data.curve(metric), style.COMPONENT_COLORS[i % len(style.COMPONENT_COLORS)], label=name,
                   linewidth=1.8)
    ax.set_ylabel("component reward")
    _legend_above(ax, ncol=2)


def _component_metrics(data: _Data) -> list[str]:
    names = sorted(n for n in data.names() if n.startswith("reward_component/") and n.endswith("_mean"))
    return names[:MAX_COMPONENTS]


def _loss_panel(ax: Axes, data: _Data) -> None:
    metric = "pg_loss" if data.has("pg_loss") else "loss"
    preference = data.run.facts.algorithm == "dpo"
    title = "Loss" if preference else ("Policy loss" if metric == "pg_loss" else "Loss")
    ax.set_title(title + ("" if preference else "  (numerical issues only, not progress)"), loc="left")
    curve = data.curve(metric)
    plot_curve(ax, curve, COLORS["loss"], label=metric)
    _robust_ylim(ax, curve)
    if not curve.empty and float(curve.values.min()) < 0 < float(curve.values.max()):
        ax.axhline(0, color="#999999", linewidth=0.8)
    _annotate_signal(ax, data, metric)
    ax.set_ylabel(metric)


def _grad_panel(ax: Axes, data: _Data) -> None:
    curve = data.curve("grad_norm")
    log = _log_if_decades(ax, [curve])
    ax.set_title("Gradient norm" + ("  (log scale)" if log else ""), loc="left")
    plot_curve(ax, curve, COLORS["grad"], label="grad norm")
    _robust_ylim(ax, curve)
    _annotate_signal(ax, data, "grad_norm")
    ax.set_ylabel("L2 norm")


def _value_loss_panel(ax: Axes, data: _Data) -> None:
    curve = data.curve("value_loss")
    log = _log_if_decades(ax, [curve])
    ax.set_title("Critic value loss" + ("  (log scale)" if log else ""), loc="left")
    plot_curve(ax, curve, COLORS["value_loss"], label="value loss")
    _robust_ylim(ax, curve)
    _annotate_signal(ax, data, "value_loss")
    ax.set_ylabel("value loss")


def _kl_absent_text(data: _Data) -> str:
    reason = data.diag.kl_reward.kl_absent_reason
    if reason:
        return "KL not logged\n" + _wrap(reason, 42)
    beta = data.run.facts.beta
    if beta == 0:
        return "KL not logged (beta = 0:\nno KL term, TRL's default)"
    if data.run.facts.algorithm == "dpo":
        return "KL not logged\n(DPO logs no KL to the reference)"
    return "KL not logged"


def _wrap(text: str, width: int) -> str:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    if line:
        lines.append(line)
    return "\n".join(lines[:4])


def _primary_row(data: _Data) -> list[tuple[int, Panel | str, str]]:
    """(columns out of 12, panel or placeholder text, title) for the top row."""
    if not data.has("reward_mean") and data.has("pref_margin"):
        first: tuple[int, Panel | str, str] = (6, _pref_margin_panel, "Implicit reward (DPO)")
        second: tuple[int, Panel | str, str] = (
            (3, _pref_accuracy_panel, "Preference accuracy") if data.has("pref_accuracy")
            else (3, "Preference accuracy not logged", "Preference accuracy"))
    else:
        first = (6, _reward_panel, "Reward") if data.has("reward_mean") else (6, "Reward not logged", "Reward")
        second = ((3, _spread_panel, "Learning signal") if data.has("reward_std") or data.has("reward_zero_std_frac")
                  else (2, "Reward std not logged:\nthe learning signal\ncannot be read", "Learning signal"))
        if isinstance(second[1], str):  # a placeholder needs less room than a curve
            first = (7, first[1], first[2])
    third: tuple[int, Panel | str, str] = (
        (3, _kl_panel, "KL") if data.has("kl") else (3, _kl_absent_text(data), "KL to reference"))
    return [first, second, third]


def _rows(data: _Data) -> list[list[tuple[int, Panel | str, str]]]:
    secondary: list[Panel] = []
    if data.has("response_length_mean"):
        secondary.append(_length_panel)
    if any(data.has(m) for m in ("clip_ratio_low", "clip_ratio_high", "clip_ratio_region")):
        secondary.append(_clip_panel)
    if data.has("entropy"):
        secondary.append(_entropy_panel)
    tertiary: list[Panel] = []
    if len(_component_metrics(data)) >= 2:  # a single component is the reward itself
        tertiary.append(_components_panel)
    if data.has("pg_loss") or data.has("loss"):
        tertiary.append(_loss_panel)
    if data.has("grad_norm"):
        tertiary.append(_grad_panel)
    if data.has("value_loss"):
        tertiary.append(_value_loss_panel)
    rows = [_primary_row(data)]
    # few panels below the top: one row of them reads better than two half-empty rows
    groups = [secondary + tertiary] if len(secondary) + len(tertiary) <= 3 else [secondary, tertiary]
    for panels in groups:
        if panels:
            rows.append([(12 // len(panels), p, "") for p in panels])
    return rows


def _header(data: _Data) -> tuple[str, str]:
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
    best = data.diag.best_checkpoint
    if best.checkpoint_step is not None or best.best_step is not None:
        where = f"checkpoint {best.checkpoint_step}" if best.checkpoint_step is not None else f"step {best.best_step}"
        details.append(f"chosen: {where} (by {best.basis})")
    return f"{head.name or run.name}  ·  " + "  ·  ".join(parts), "   ·   ".join(details)


def dashboard_figure(run: Run, diagnostics: Diagnostics) -> Figure:
    """The training dashboard: primary, secondary and tertiary rows of panels over the optimizer step.

    Args:
        run: The run the curves come from.
        diagnostics: Its diagnosis (change points, peaks, chosen checkpoint, eval peak); empty records are fine.

    Returns:
        A `Figure` of `style.DASHBOARD_PX` pixels at `style.DPI`, not attached to pyplot.
    """
    data = _Data(run, diagnostics)
    with _rc():
        fig = style.new_figure(style.DASHBOARD_PX, top=0.91)
        rows = _rows(data)
        grid = fig.add_gridspec(len(rows), 1, height_ratios=[1.3] + [1.0] * (len(rows) - 1))
        shared: Axes | None = None
        drawn: list[tuple[Axes, Panel]] = []
        for r, row in enumerate(rows):
            cells = grid[r].subgridspec(1, len(row), width_ratios=[width for width, _, _ in row])
            for c, (_, panel, title) in enumerate(row):
                spec = cells[0, c]
                if isinstance(panel, str):  # not shared: its hidden ticks would hide every panel's ticks
                    placeholder(fig.add_subplot(spec), title, panel)
                    continue
                ax = fig.add_subplot(spec, sharex=shared)
                shared = shared or ax
                panel(ax, data)
                _step_axis(ax)
                if r == len(rows) - 1:
                    ax.set_xlabel("optimizer step")
                drawn.append((ax, panel))
        if shared is not None:
            _shared_xlim(shared, data)
        best_step, best_label = data.best_step()
        for ax, panel in drawn:  # after the x range is final, so labels can keep inside the panel
            long_label = None
            if panel in (_reward_panel, _pref_margin_panel) and best_step is not None:
                long_label = f"chosen: {best_label} (by {diagnostics.best_checkpoint.basis})"
            _mark_best(ax, best_step, best_label, long_label, low=long_label is not None)
        title, subtitle = _header(data)
        fig.text(0.012, 0.972, title, fontsize=15, fontweight="bold", ha="left", va="center")
        fig.text(0.012, 0.938, subtitle, fontsize=10, color="#555555", ha="left", va="center")
        key = "faint: raw points · bold: smoothed · ▼ change point · red ×: spike · green dashed: chosen checkpoint"
        if len(run.nonfinite):
            key += " · red |: NaN/inf"
        fig.text(0.99, 0.938, key, fontsize=8.5, color="#777777", ha="right", va="center")
    return fig


def _shared_xlim(ax: Axes, data: _Data) -> None:
    """All panels span the run's logged steps (a little margin so end points are not cut)."""
    curves = [c for c in data._curves.values() if not c.empty]
    if not curves:
        return
    first = min(float(c.steps[0]) for c in curves)
    last = max(float(c.steps[-1]) for c in curves)
    if last > first:
        pad = 0.01 * (last - first)
        ax.set_xlim(first - pad, last + pad)


# --------------------------------------------------------------------------- KL vs reward
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
    data = _Data(run, diagnostics)
    reward_metric = "reward_mean" if data.has("reward_mean") else "pref_margin"
    with _rc():
        fig = style.new_figure(style.KL_REWARD_PX, constrained=False)
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


def _trajectory(data: _Data, reward_metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Smoothed reward on its own steps, with smoothed KL interpolated to them (within KL's range)."""
    reward, kl = data.curve(reward_metric), data.curve("kl")
    if len(reward.smooth_steps) < 2 or len(kl.smooth_steps) < 2:
        return np.array([]), np.array([]), np.array([])
    steps = reward.smooth_steps
    inside = (steps >= kl.smooth_steps[0]) & (steps <= kl.smooth_steps[-1])
    steps = steps[inside]
    return steps, np.interp(steps, kl.smooth_steps, kl.smooth_values), reward.smooth_values[inside]


def _draw_quadrants(ax: Axes, data: _Data, steps: np.ndarray, kl: np.ndarray, reward: np.ndarray) -> None:
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


# --------------------------------------------------------------------------- GPU
PHASE_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("generation", "generation", ("time_generation_s",)),
    ("training", "policy update", ("time_update_s", "time_update_critic_s")),
    ("logprob", "log-probs / values", ("time_old_logprob_s", "time_ref_logprob_s", "time_values_s")),
    ("reward_phase", "reward", ("time_reward_s", "time_make_experience_s")),
    ("advantage", "advantage", ("time_advantage_s",)),
)
TELEMETRY_FIELDS = ("power_w", "gpu_util_pct", "memory_used_mib")


def has_gpu_data(run: Run) -> bool:
    """Whether there is anything for the GPU figure: per-step phase timings or nvidia-smi telemetry."""
    telemetry = run.gpu is not None and len(run.gpu) > 0
    return telemetry or any(is_phase_timing(m) for m in run.metric_names("train"))


def gpu_figure(run: Run, diagnostics: Diagnostics) -> Figure:
    """Where step time goes, step time and its jumps, and nvidia-smi power, utilisation and memory.

    Args:
        run: The run (phase timings from its metrics, telemetry from `run.gpu`).
        diagnostics: Its diagnosis (`gpu.jumps`, `gpu.phases`); may be None or empty.

    Returns:
        A `Figure`: `style.GPU_PX` with a second row (telemetry or framework-reported memory), else
        `style.GPU_NO_TELEMETRY_PX`.
    """
    data = _Data(run, diagnostics)
    telemetry = _telemetry(run)
    memory_metrics = [m for m in ("gpu_memory_allocated_gb", "gpu_memory_reserved_gb") if data.has(m)]
    second_row = telemetry is not None or bool(memory_metrics)
    seconds = _phase_table(data)
    with _rc():
        fig = style.new_figure(style.GPU_PX if second_row else style.GPU_NO_TELEMETRY_PX,
                               top=0.9 if second_row else 0.85)
        grid = fig.add_gridspec(2 if second_row else 1, 6, height_ratios=[1.25, 1.0] if second_row else None)
        step_axes: list[Axes] = []
        if seconds is not None and not seconds.empty:
            share_ax = fig.add_subplot(grid[0, :3])
            _phase_share_panel(share_ax, seconds.div(seconds.sum(axis=1), axis=0))
            step_axes += [share_ax, fig.add_subplot(grid[0, 3:], sharex=share_ax)]
        elif diagnostics.gpu is not None and diagnostics.gpu.phases:  # the split nvidia-smi shows instead
            _phase_bar_panel(fig.add_subplot(grid[0, :2]), data)
            step_axes.append(fig.add_subplot(grid[0, 2:]))
        else:  # no split to show: step time takes the row
            step_axes.append(fig.add_subplot(grid[0, :]))
        _step_time_panel(step_axes[-1], data, seconds)
        if telemetry is not None:
            _telemetry_panels([fig.add_subplot(grid[1, 2 * i:2 * i + 2]) for i in range(3)], telemetry, data)
        elif memory_metrics:
            memory_ax = fig.add_subplot(grid[1, :], sharex=step_axes[0])
            _framework_memory_panel(memory_ax, data, memory_metrics)
            step_axes.append(memory_ax)
        for ax in step_axes:
            _step_axis(ax)
            ax.set_xlabel("optimizer step")
        title = f"{run.name}  ·  GPU time and telemetry"
        fig.text(0.012, 0.965 if second_row else 0.95, title, fontsize=14, fontweight="bold", ha="left", va="center")
        fig.text(0.012, 0.932 if second_row else 0.9, _gpu_subtitle(data, telemetry), fontsize=9.5, color="#555555",
                 ha="left", va="center")
    return fig


def _gpu_subtitle(data: _Data, telemetry: pd.DataFrame | None) -> str:
    gpu = data.diag.gpu
    parts = []
    if gpu is not None:
        if gpu.generation_fraction is not None:
            parts.append(f"generation {100 * gpu.generation_fraction:.0f}% of step time")
        if gpu.training_fraction is not None:
            parts.append(f"training {100 * gpu.training_fraction:.0f}%")
        if gpu.step_time_s is not None:
            parts.append(f"step time now {fmt_num(gpu.step_time_s)} s")
        if gpu.step_time_drift is not None:
            parts.append(f"drift {100 * gpu.step_time_drift:+.0f}% since start")
        if gpu.idle_fraction is not None:
            parts.append(f"GPUs idle {100 * gpu.idle_fraction:.0f}% of samples")
    if data.run.gpu_devices:
        names = sorted(set(data.run.gpu_devices.values()))
        parts.append(f"{len(data.run.gpu_devices)} × {names[0]}" if len(names) == 1 else f"{len(names)} GPU models")
    return "   ·   ".join(parts) if parts else "phase timings from the training log"


def _phase_table(data: _Data) -> pd.DataFrame | None:
    """Per-step seconds of each phase group plus `other`, for steps that log a step time (sorted by step)."""
    if not data.has("time_step_s"):
        return None
    wanted = [m for _, _, metrics in PHASE_GROUPS for m in metrics if data.has(m)]
    if not wanted:
        return None
    step = data.run.series("time_step_s")
    step = step[~step.index.duplicated(keep="last")]
    table = pd.DataFrame(index=step.index)
    for key, _, metrics in PHASE_GROUPS:
        parts = [data.run.series(m) for m in metrics if data.has(m)]
        if parts:
            joined = pd.concat([p[~p.index.duplicated(keep="last")] for p in parts], axis=1)
            table[key] = joined.sum(axis=1, min_count=1).reindex(step.index)
    table = table.fillna(0.0)
    table["other"] = (step - table.sum(axis=1)).clip(lower=0.0)
    return table[table.sum(axis=1) > 0].sort_index()


def _phase_share_panel(ax: Axes, shares: pd.DataFrame) -> None:
    """Stacked share of each phase in the step time, step by step (bin means for long runs)."""
    binned = _bin_mean(shares, 1000)
    labels = {key: label for key, label, _ in PHASE_GROUPS} | {"other": "other (sync, eval, ckpt, idle)"}
    columns = [c for c in binned.columns if float(binned[c].max()) > 0]
    ax.stackplot(binned.index.to_numpy(dtype=float), *[binned[c].to_numpy() for c in columns],
                 labels=[labels[c] for c in columns], colors=[COLORS[c] for c in columns], alpha=0.85,
                 linewidth=0)
    ax.set_ylim(0, 1)
    ax.set_xlim(float(binned.index.min()), float(binned.index.max()))
    ax.yaxis.set_major_formatter(lambda v, _pos: f"{100 * v:.0f}%")
    ax.set_ylabel("share of step time")
    gen = float(shares["generation"].median()) if "generation" in shares else None
    ax.set_title("Share of step time" + (f"  (generation: median {100 * gen:.0f}%)" if gen is not None else ""),
                 loc="left")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=len(columns), frameon=False, fontsize=8)


def _bin_mean(frame: pd.DataFrame, max_rows: int) -> pd.DataFrame:
    if len(frame) <= max_rows:
        return frame
    size = math.ceil(len(frame) / max_rows)
    groups = np.arange(len(frame)) // size
    out = frame.groupby(groups).mean()
    out.index = pd.Index(frame.index.to_numpy()[::size][: len(out)])
    return out


def _step_time_panel(ax: Axes, data: _Data, seconds: pd.DataFrame | None = None) -> None:
    """Seconds per step (logged, else from the log's timestamps), with the diagnosis's jumps and stalls.

    With phase timings, the phases are stacked faintly under the line in seconds, so a jump shows which
    phase grew (usually generation, when responses get longer).
    """
    if data.has("time_step_s"):
        curve, source = data.curve("time_step_s"), "logged"
    else:
        curve, source = _step_time_from_wall(data), "from log timestamps"
    shaded = seconds is not None and not seconds.empty
    ax.set_title(f"Step time ({source})" + ("  · shaded: seconds per phase" if shaded else ""), loc="left")
    if curve.empty:
        ax.text(0.5, 0.5, "No step time logged", transform=ax.transAxes, ha="center", va="center", color="#777777",
                fontsize=11)
        ax.set_yticks([])
        return
    if seconds is not None and not seconds.empty:
        binned = _bin_mean(seconds, 1000)
        columns = [c for c in binned.columns if float(binned[c].max()) > 0]
        ax.stackplot(binned.index.to_numpy(dtype=float), *[binned[c].to_numpy() for c in columns],
                     colors=[COLORS[c] for c in columns], alpha=0.3, linewidth=0, zorder=1)
    plot_curve(ax, curve, COLORS["step_time"], label="seconds per step")
    _annotate_signal(ax, data, "time_step_s")
    gpu = data.diag.gpu
    jumps = [j for j in gpu.jumps if j.kind == "jump"] if gpu is not None else []
    stalls = [j for j in gpu.jumps if j.kind == "stall"] if gpu is not None else []
    for i, jump in enumerate(jumps):  # lasting changes: a line and its levels, labels staggered
        ax.axvline(jump.step, color=COLORS["cap"], linestyle="--", linewidth=1.2, alpha=0.8,
                   label="lasting jump" if i == 0 else None)
        ax.text(jump.step, 0.93 - 0.07 * (i % 4), f" {fmt_num(jump.before_s)}→{fmt_num(jump.after_s)} s",
                transform=ax.get_xaxis_transform(), fontsize=7.5, color=COLORS["cap"], va="top", ha="left",
                bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.7})
    if stalls:  # one-off slow steps: a marker on the point is enough
        ax.plot([j.step for j in stalls], [j.after_s for j in stalls], "o", color=COLORS["generation"],
                markersize=6, markerfacecolor="none", markeredgewidth=1.6, zorder=6, label="one-off stall")
    ax.set_ylim(0, float(max(curve.draw_values.max(), curve.smooth_values.max())) * 1.15)  # room for labels
    ax.set_ylabel("seconds")
    _legend(ax, loc="lower right")


def _step_time_from_wall(data: _Data) -> Curve:
    metrics = data.run.metrics
    train = metrics[(metrics["split"] == "train") & metrics["wall_time"].notna()]
    if train.empty:
        return make_curve(np.array([]), np.array([]))
    per_step = train.groupby("step")["wall_time"].min().sort_index()
    dt, ds = np.diff(per_step.to_numpy()), np.diff(per_step.index.to_numpy())
    ok = (ds > 0) & (dt >= 0)
    return make_curve(per_step.index.to_numpy()[1:][ok], dt[ok] / ds[ok])


def _telemetry(run: Run) -> pd.DataFrame | None:
    """nvidia-smi samples as one row per time bin and field: median, min and max across devices."""
    gpu = run.gpu
    if gpu is None or gpu.empty:
        return None
    frame = gpu[gpu["field"].isin(["power_w", "power_limit_w", "gpu_util_pct", "memory_used_mib",
                                   "memory_total_mib"])]
    if frame.empty:
        return None
    t0 = float(frame["time"].min())
    span = float(frame["time"].max()) - t0
    bins = 1000
    width = max(span / bins, 1e-9)
    binned = frame.assign(bin=((frame["time"] - t0) / width).astype("int64").clip(upper=bins - 1))
    # per device first (so a device sampled twice in a bin counts once), then across devices
    per_device = binned.groupby(["bin", "field", "device"], observed=True)["value"].median()
    stats = per_device.groupby(level=["bin", "field"], observed=True).agg(["median", "min", "max"]).reset_index()
    stats["hours"] = (stats["bin"] + 0.5) * width / 3600.0
    return stats


def _telemetry_field(stats: pd.DataFrame, name: str) -> pd.DataFrame:
    return stats[stats["field"] == name].sort_values("hours")


def _time_axis(ax: Axes, stats: pd.DataFrame) -> float:
    """Hours, or minutes for short runs; returns the factor applied to `hours`."""
    hours = float(stats["hours"].max()) if len(stats) else 0.0
    if hours < 2:
        ax.set_xlabel("minutes since first nvidia-smi sample")
        return 60.0
    ax.set_xlabel("hours since first nvidia-smi sample")
    return 1.0


def _telemetry_panels(axes: list[Axes], stats: pd.DataFrame, data: _Data) -> None:
    """Power, utilisation and memory over time: median across devices (bold, smoothed), min-max band faint."""
    devices = len(data.run.gpu_devices)
    if not devices and data.run.gpu is not None:
        devices = int(data.run.gpu["device"].nunique())
    across = f"median of {devices} GPUs" if devices > 1 else "one GPU"
    power_ax, util_ax, memory_ax = axes
    _telemetry_line(power_ax, stats, "power_w", COLORS["power"], f"power ({across})", 1.0)
    limit = _telemetry_field(stats, "power_limit_w")
    if not limit.empty:
        watts = float(limit["median"].median())
        power_ax.axhline(watts, color=COLORS["cap"], linestyle="--", linewidth=1.2, label=f"limit {watts:.0f} W")
    power_ax.set_ylim(bottom=0)
    power_ax.set_ylabel("watts")
    power_ax.set_title("Power draw", loc="left")
    _legend_above(power_ax, ncol=2)
    _telemetry_line(util_ax, stats, "gpu_util_pct", COLORS["util"], f"utilisation ({across})", 1.0)
    util_ax.set_ylim(0, 105)
    util_ax.set_ylabel("GPU utilisation %")
    util_ax.set_title("Utilisation", loc="left")
    _telemetry_line(memory_ax, stats, "memory_used_mib", COLORS["memory"], f"used ({across})", 1 / 1024)
    total = _telemetry_field(stats, "memory_total_mib")
    if not total.empty:
        cap = float(total["median"].max()) / 1024
        memory_ax.axhline(cap, color=COLORS["cap"], linestyle="--", linewidth=1.2, label=f"total {cap:.0f} GiB")
        memory_ax.set_ylim(0, cap * 1.08)
    memory_ax.set_ylabel("GiB")
    memory_ax.set_title("Memory used vs total", loc="left")
    _legend_above(memory_ax, ncol=2)


def _telemetry_line(ax: Axes, stats: pd.DataFrame, name: str, color: str, label: str, scale: float) -> None:
    factor = _time_axis(ax, stats)
    rows = _telemetry_field(stats, name)
    if rows.empty:
        ax.text(0.5, 0.5, f"{name} not in the nvidia-smi log", transform=ax.transAxes, ha="center", va="center",
                color="#777777")
        return
    x = rows["hours"].to_numpy() * factor
    median = rows["median"].to_numpy() * scale
    ax.fill_between(x, rows["min"].to_numpy() * scale, rows["max"].to_numpy() * scale, color=color, alpha=0.08,
                    linewidth=0)
    ax.plot(x, median, color=color, linewidth=0.6, alpha=0.35)
    # generation and training alternate every few seconds: the smoothed level is what shows a drift
    ax.plot(*style.smoothed(x, median), color=color, linewidth=2.0, label=label)


def _phase_bar_panel(ax: Axes, data: _Data) -> None:
    """Time share, power and utilisation of each phase nvidia-smi saw (generation, training, idle)."""
    gpu = data.diag.gpu
    phases = gpu.phases if gpu is not None else []
    colors = {"generation": COLORS["generation"], "training": COLORS["training"], "idle": COLORS["other"]}
    names = [p.phase for p in phases]
    y = np.arange(len(phases))[::-1]
    ax.barh(y, [100 * p.time_fraction for p in phases], color=[colors[n] for n in names], height=0.6)
    for yi, phase in zip(y, phases, strict=True):
        bits = [f"{100 * phase.time_fraction:.0f}% of time"]
        if phase.power_w is not None:
            bits.append(f"{phase.power_w:.0f} W")
        if phase.util_pct is not None:
            bits.append(f"{phase.util_pct:.0f}% util")
        if phase.memory_headroom_mib is not None:
            bits.append(f"{phase.memory_headroom_mib / 1024:.0f} GiB free")
        ax.text(1.5, yi - 0.42, " · ".join(bits), va="top", ha="left", fontsize=8.5, color="#333333")
    ax.set_yticks(y, names)
    ax.set_ylim(-0.9, len(phases) - 0.4)
    ax.set_xlim(0, 100)
    ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:.0f}%")
    ax.set_xlabel("share of telemetry time")
    ax.grid(axis="y", visible=False)
    ax.set_title("Where the GPU time goes (nvidia-smi)", loc="left")


def _framework_memory_panel(ax: Axes, data: _Data, metrics: list[str]) -> None:
    ax.set_title("GPU memory reported by the framework (peak per step)", loc="left")
    colors = {"gpu_memory_allocated_gb": COLORS["memory"], "gpu_memory_reserved_gb": COLORS["kl"]}
    for metric in metrics:
        plot_curve(ax, data.curve(metric), colors[metric], label=metric.removeprefix("gpu_memory_").replace("_gb", ""))
    ax.set_ylabel("GB")
    ax.set_ylim(bottom=0)
    _legend_above(ax)


# --------------------------------------------------------------------------- rc context
def _rc() -> AbstractContextManager[None]:
    """Our rcParams while one figure is built (restored after; pyplot is never involved)."""
    return matplotlib.rc_context(style.RC)
