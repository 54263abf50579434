"""The GPU figure: where step time goes, and how the GPUs are used.

`gpu_figure` draws the share of step time each phase takes (generation vs training, from per-step phase
timings), step time with the diagnosis's lasting jumps and one-off stalls, and, when an nvidia-smi log was
found, power / utilisation / memory over time (else the framework's own memory readings, when logged).
Without phase timings, the split nvidia-smi shows (generation, training, idle) takes the first panel.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from assessor.diagnose.models import Diagnostics
from assessor.ingest.aliases import is_phase_timing
from assessor.plots import style
from assessor.plots._common import FigureData, annotate_signal, legend, legend_above, rc, step_axis
from assessor.plots._layout import Cell, place_rows
from assessor.plots.style import COLORS, Curve, fmt_num, make_curve, plot_curve
from assessor.run import Run

__all__ = ["gpu_figure", "has_gpu_data"]

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
    data = FigureData(run, diagnostics)
    telemetry = _telemetry(run)
    memory_metrics = [m for m in ("gpu_memory_allocated_gb", "gpu_memory_reserved_gb") if data.has(m)]
    second_row = telemetry is not None or bool(memory_metrics)
    seconds = _phase_table(data)
    with rc():
        fig = style.new_figure(style.GPU_PX if second_row else style.GPU_NO_TELEMETRY_PX)
        top = 0.9 if second_row else 0.85  # figure fraction: the header is written above
        # Provisional places: `place_rows` sets the final ones once the panels' labels are known.
        grid = fig.add_gridspec(2 if second_row else 1, 6, height_ratios=[1.25, 1.0] if second_row else None,
                                top=top)
        step_axes: list[Axes] = []
        rows: list[list[Cell]] = [[]]
        if seconds is not None and not seconds.empty:
            share_ax = fig.add_subplot(grid[0, :3])
            _phase_share_panel(share_ax, seconds.div(seconds.sum(axis=1), axis=0))
            step_axes += [share_ax, fig.add_subplot(grid[0, 3:], sharex=share_ax)]
            rows[0] = [Cell(3, (share_ax,)), Cell(3, (step_axes[-1],))]
        elif diagnostics.gpu is not None and diagnostics.gpu.phases:  # the split nvidia-smi shows instead
            bar_ax = fig.add_subplot(grid[0, :2])
            _phase_bar_panel(bar_ax, data)
            step_axes.append(fig.add_subplot(grid[0, 2:]))
            rows[0] = [Cell(2, (bar_ax,)), Cell(4, (step_axes[-1],))]
        else:  # no split to show: step time takes the row
            step_axes.append(fig.add_subplot(grid[0, :]))
            rows[0] = [Cell(6, (step_axes[-1],))]
        _step_time_panel(step_axes[-1], data, seconds)
        if telemetry is not None:
            telemetry_axes = [fig.add_subplot(grid[1, 2 * i:2 * i + 2]) for i in range(3)]
            _telemetry_panels(telemetry_axes, telemetry, data)
            rows.append([Cell(2, (ax,)) for ax in telemetry_axes])
        elif memory_metrics:
            memory_ax = fig.add_subplot(grid[1, :], sharex=step_axes[0])
            _framework_memory_panel(memory_ax, data, memory_metrics)
            step_axes.append(memory_ax)
            rows.append([Cell(6, (memory_ax,))])
        for ax in step_axes:
            step_axis(ax)
            ax.set_xlabel("optimizer step")
        place_rows(fig, rows, [1.25, 1.0] if second_row else [1.0], top=top)
        split = bool(seconds is not None and not seconds.empty) or bool(diagnostics.gpu and diagnostics.gpu.phases)
        title = f"{run.name}  ·  {_title(split, telemetry is not None, bool(memory_metrics))}"
        fig.text(0.012, 0.965 if second_row else 0.95, title, fontsize=14, fontweight="bold", ha="left", va="center")
        fig.text(0.012, 0.932 if second_row else 0.9, _gpu_subtitle(data, telemetry), fontsize=9.5, color="#555555",
                 ha="left", va="center")
    return fig


def _title(split: bool, telemetry: bool, memory: bool) -> str:
    """What the figure holds: a console log with only a step time gets "Step time", not "GPU telemetry"."""
    held = (["time per phase"] if split else []) + ["step time"]
    held += ["GPU telemetry"] if telemetry else ["GPU memory"] if memory else []
    text = held[0] if len(held) == 1 else f"{', '.join(held[:-1])} and {held[-1]}"
    return text[0].upper() + text[1:]


def _gpu_subtitle(data: FigureData, telemetry: pd.DataFrame | None) -> str:
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


def _phase_table(data: FigureData) -> pd.DataFrame | None:
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


def _step_time_panel(ax: Axes, data: FigureData, seconds: pd.DataFrame | None = None) -> None:
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
    annotate_signal(ax, data, "time_step_s")
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
    legend(ax, loc="lower right")


def _step_time_from_wall(data: FigureData) -> Curve:
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


def _telemetry_panels(axes: list[Axes], stats: pd.DataFrame, data: FigureData) -> None:
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
    legend_above(power_ax, ncol=2)
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
    legend_above(memory_ax, ncol=2)


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


def _phase_bar_panel(ax: Axes, data: FigureData) -> None:
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


def _framework_memory_panel(ax: Axes, data: FigureData, metrics: list[str]) -> None:
    ax.set_title("GPU memory reported by the framework (peak per step)", loc="left")
    colors = {"gpu_memory_allocated_gb": COLORS["memory"], "gpu_memory_reserved_gb": COLORS["kl"]}
    for metric in metrics:
        plot_curve(ax, data.curve(metric), colors[metric], label=metric.removeprefix("gpu_memory_").replace("_gb", ""))
    ax.set_ylabel("GB")
    ax.set_ylim(bottom=0)
    legend_above(ax)
