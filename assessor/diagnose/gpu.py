"""Where step time goes, and how the GPUs are used in each phase.

Two sources, read separately and then combined:

* **Phase timings** (`time_*_s`). Generation and training shares of the step, the step-time level and its
  drift, lasting jumps (robust change points) and one-off stalls (spikes). Through verl v0.7.0 `testing` and
  `save_checkpoint` run inside the step timer, so steps carrying eval or checkpoint time are kept out of the
  shares and out of the level, and read instead as the stalls they are. When a run logs phases but no step
  total (old verl `timing/*` console logs), the step time is the sum of the phases.
* **nvidia-smi telemetry**. Each device's samples are split into idle (utilisation near zero), generation
  (the low-power busy cluster: token-by-token decoding draws noticeably less power than training) and
  training (the high-power cluster). The split is a per-device Otsu threshold on power, kept only when the
  two clusters are clearly apart (Ashman's D) and alternate in time, so one noisy phase is never cut in two.
  Per phase: time share, power, utilisation, memory used and headroom; idle bubbles between busy stretches.

Generation being a large share of the step is reported as the bottleneck to optimise, not as a
training-health problem. Noise alone produces no finding: shifts must be significant against the noise
*and* large in relative terms, stalls far above the local level, clusters clearly separated.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from assessor.diagnose import robust
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.models import Finding, GpuDiagnosis, PhaseStats, Severity, StepTimeJump
from assessor.run import Run

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
Source = Literal["phase_timings", "nvidia_smi", "both"]
PhaseName = Literal["generation", "training", "idle"]

GENERATION = "time_generation_s"
TRAINING = ("time_update_s", "time_update_critic_s")
OTHER_PHASES = (
    "time_ref_logprob_s", "time_old_logprob_s", "time_values_s", "time_advantage_s", "time_reward_s",
    "time_weight_sync_s", "time_make_experience_s",
)
PHASES = (GENERATION, *TRAINING, *OTHER_PHASES)
INSIDE_STEP = ("time_eval_s", "time_checkpoint_s")  # inside verl's step timer through v0.7.0
LENGTH = "response_length_mean"
_WANTED = ("time_step_s", *PHASES, *INSIDE_STEP, LENGTH)
PHASE_LABELS = {
    GENERATION: "generation", "time_update_s": "actor update", "time_update_critic_s": "critic update",
    "time_ref_logprob_s": "reference log-probs", "time_old_logprob_s": "old log-probs",
    "time_values_s": "critic values", "time_advantage_s": "advantage", "time_reward_s": "reward",
    "time_weight_sync_s": "weight sync", "time_make_experience_s": "make-experience",
    "time_eval_s": "eval", "time_checkpoint_s": "checkpoint save",
}

GENERATION_BOUND = 0.6  # generation share above which it is the bottleneck to optimise
GENERATION_DOMINANT = 0.8
OTHER_PHASE_DOMINANT = 0.4  # a non-generation, non-training phase taking this share is worth naming
INSIDE_TOLERANCE = 0.02  # eval/checkpoint seconds below this share of the step are timer noise
MIN_JUMP = 0.10  # a lasting step-time shift must also be this large relative to the level before it
MIN_STALL = 0.20  # a stall costs at least this share of the usual step
STALL_NOISE = 6.0  # ... and this many noise units
LENGTH_ROSE = 0.10  # response length rising this much counts as "longer generations"
CHECKPOINT_OVERHEAD_WATCH = 0.10  # share of wall time lost to checkpoint saves worth a watch

IDLE_UTIL_PCT = 5.0  # utilisation at or below this is idle
MIN_BUSY_SAMPLES = 50  # fewer busy samples cannot show two clusters reliably
MIN_SEPARATION = 4.0  # Ashman's D between the power clusters (unimodal noise stays under ~3.7)
MIN_GAP = 0.2  # the low cluster's mean at least this far below the high one's, relative
MIN_CLUSTER_SHARE = 0.02
MIN_ALTERNATIONS = 2  # each cluster must occur in at least this many separate stretches
SINGLE_PHASE_POWER = 0.5  # one busy cluster above this share of the power limit reads as training
SINGLE_PHASE_UTIL = 90.0  # ... or, without a power limit, above this utilisation
IDLE_WATCH = 0.10  # idle share between busy stretches worth a watch
MEMORY_TIGHT = 0.05  # headroom below this share of total memory is near capacity
MEMORY_QUANTILE = 0.95  # memory is read at a high quantile: peaks, not the typical sample, cause OOMs
TIME_GAP = 5.0  # a telemetry gap longer than this many sampling intervals splits idle stretches

IDLE, GEN, TRAIN = 0, 1, 2
_PHASE_NAMES: dict[int, PhaseName] = {IDLE: "idle", GEN: "generation", TRAIN: "training"}


def diagnose_gpu(ctx: Context) -> GpuDiagnosis | None:
    """Where step time goes (phase timings) and how the GPUs behave in each phase (nvidia-smi).

    Args:
        ctx: The run and its readings.

    Returns:
        The diagnosis, or None when the run has neither phase timings nor nvidia-smi telemetry.
    """
    run = ctx.run
    timings = _read_timings(run)
    telemetry = _read_telemetry(run)
    if timings is None and telemetry is None:
        return None
    findings: list[Finding] = []
    timing = _read_step_times(run, timings) if timings is not None else None
    usage = _read_usage(telemetry) if telemetry is not None else None
    if timing is not None:
        findings.extend(timing.findings)
    if usage is not None:
        findings.extend(usage.findings)

    generation_fraction = training_fraction = None
    fraction_source = ""
    if timing is not None and timing.generation_fraction is not None:
        generation_fraction, fraction_source = timing.generation_fraction, "timings"
    elif usage is not None and usage.generation_fraction is not None:
        generation_fraction, fraction_source = usage.generation_fraction, "telemetry"
    if timing is not None and timing.training_fraction is not None:
        training_fraction = timing.training_fraction
    elif usage is not None:
        training_fraction = usage.training_fraction
    if generation_fraction is not None:
        bound = _generation_bound(generation_fraction, training_fraction, fraction_source, timing, usage)
        if bound is not None:
            findings.append(bound)

    source: Source = "both" if timings is not None and telemetry is not None else (
        "phase_timings" if timings is not None else "nvidia_smi")
    return GpuDiagnosis(
        source=source,
        generation_fraction=generation_fraction, training_fraction=training_fraction,
        step_time_s=timing.step_time_s if timing else None, step_time_drift=timing.drift if timing else None,
        jumps=timing.jumps if timing else [], phases=usage.phases if usage else [],
        idle_fraction=usage.idle_fraction if usage else None, findings=findings,
    )


# --------------------------------------------------------------------------------------------- timings


@dataclass(frozen=True)
class _Timings:
    """Per-step timings, aligned on the steps that have a step time."""

    steps: IntArray
    step_time: FloatArray  # seconds; measured, or the sum of the phases
    clean: BoolArray  # steps whose timer holds no eval or checkpoint time
    subtracted: bool  # eval/checkpoint time subtracted instead of excluded (too few clean steps)
    columns: dict[str, FloatArray]  # phase and length columns, NaN where not logged


def _read_timings(run: Run) -> _Timings | None:
    present = set(run.metric_names("train"))
    columns: dict[str, pd.Series] = {}
    for name in _WANTED:
        if name in present:
            series = run.series(name)
            columns[name] = series[~series.index.duplicated(keep="last")]
    if not columns:
        return None
    table = pd.DataFrame(columns).sort_index()
    phases = [c for c in PHASES if c in table.columns]
    inside = table.reindex(columns=list(INSIDE_STEP)).fillna(0.0).sum(axis=1)
    if "time_step_s" in table.columns:
        step_time = table["time_step_s"]
    elif len(phases) >= 2:
        # No step total (old verl console logs): the phases run one after another, so the step is their
        # sum, plus eval and checkpoint time, which sit in the same loop iteration.
        logged = table[phases].notna().sum(axis=1) >= max(2, len(phases) - 1)
        step_time = (table[phases].sum(axis=1, min_count=1) + inside).where(logged)
    else:
        return None
    keep = np.isfinite(step_time.to_numpy()) & (step_time.to_numpy() > 0)
    if keep.sum() < 3:
        return None
    table, step_time, inside = table[keep], step_time[keep], inside[keep]
    times = step_time.to_numpy(dtype=np.float64)
    inside_s = inside.to_numpy(dtype=np.float64)
    clean = inside_s <= INSIDE_TOLERANCE * times
    subtracted = False
    if clean.sum() < 3:  # eval or a save at every step: subtract them instead of dropping the steps
        times = np.maximum(times - inside_s, 1e-9)
        clean = np.ones(len(times), dtype=bool)
        subtracted = True
    aligned = {c: table[c].to_numpy(dtype=np.float64) for c in (*PHASES, *INSIDE_STEP, LENGTH) if c in table.columns}
    return _Timings(table.index.to_numpy(dtype=np.int64), times, clean, subtracted, aligned)


@dataclass
class _StepTimeReading:
    generation_fraction: float | None = None
    generation_fraction_run: float | None = None
    training_fraction: float | None = None
    step_time_s: float | None = None
    drift: float | None = None
    jumps: list[StepTimeJump] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def _share(t: _Timings, names: tuple[str, ...]) -> FloatArray | None:
    """Per clean step, the share of step time the named phases take (None when none is logged)."""
    present = [t.columns[n][t.clean] for n in names if n in t.columns]
    if not present:
        return None
    stacked = np.vstack(present)
    seconds = np.where(np.isnan(stacked).all(axis=0), np.nan, np.nansum(stacked, axis=0))
    share = seconds / t.step_time[t.clean]
    # Async phases can overlap, so a phase may exceed the step; a share is capped at the whole step.
    share = np.clip(share[np.isfinite(share)], 0.0, 1.0)
    return share if len(share) else None


def _read_step_times(run: Run, t: _Timings) -> _StepTimeReading:
    out = _StepTimeReading()
    steps, times = t.steps[t.clean], t.step_time[t.clean]
    generation = _share(t, (GENERATION,))
    if generation is not None:
        out.generation_fraction = robust.edge_level(generation, at_end=True)
        out.generation_fraction_run = float(np.median(generation))
    training = _share(t, TRAINING)
    if training is not None:
        out.training_fraction = robust.edge_level(training, at_end=True)
    out.step_time_s = robust.edge_level(times, at_end=True)
    start = robust.edge_level(times, at_end=False)
    out.drift = out.step_time_s / start - 1.0 if start > 0 else None

    dominant = _dominant_phase(t, out)
    if dominant is not None:
        out.findings.append(dominant)
    series = robust.prepare(steps, times)
    out.jumps, jump_findings = _jumps(t, series)
    out.findings.extend(jump_findings)
    stalls, stall_findings = _stalls(run, t, series)
    out.jumps = sorted(out.jumps + stalls, key=lambda j: j.step)
    out.findings.extend(stall_findings)
    return out


def _dominant_phase(t: _Timings, reading: _StepTimeReading) -> Finding | None:
    """A phase other than generation and training that takes a large share of the step."""
    best: tuple[float, str] | None = None
    for name in OTHER_PHASES:
        share = _share(t, (name,))
        if share is None:
            continue
        level = robust.edge_level(share, at_end=True)
        if level >= OTHER_PHASE_DOMINANT and (best is None or level > best[0]):
            best = (level, name)
    if best is None:
        return None
    level, name = best
    others = ", ".join(
        f"{label} {num(value)}" for label, value in
        (("generation", reading.generation_fraction), ("training", reading.training_fraction)) if value is not None
    )
    why = ""
    if name == "time_advantage_s":
        reward = _median(t.columns["time_reward_s"][t.clean]) if "time_reward_s" in t.columns else None
        # verl awaits an asynchronously launched reward (`launch_reward_fn_async`) inside its `adv` timer.
        why = (" In verl a reward launched asynchronously is awaited inside the advantage timer, so a slow or remote "
               "reward shows here" + (f" (time_reward_s, the launch, is only {num(reward)} s)" if reward is not None
                                      else "") + ".")
    elif name == "time_reward_s":
        why = " A slow reward function or a remote reward service is the usual cause."
    return finding(
        name, "phase_dominates_step", "info",
        f"The {PHASE_LABELS[name]} phase ({name}) takes {num(level)} of step time recently"
        f"{f' ({others})' if others else ''}: that is where the step goes and what to speed up.{why}",
    )


def _window(steps: IntArray, lo: int, hi: int) -> BoolArray:
    return (steps >= lo) & (steps < hi)


def _median(values: FloatArray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(np.median(finite)) if len(finite) else None


def _jumps(t: _Timings, series: robust.Series) -> tuple[list[StepTimeJump], list[Finding]]:
    """Lasting shifts of the step-time level: significant against the noise and large in relative terms.

    Levels are the medians of the segments between the kept change points; neighbouring shifts in the same
    direction (a ramp cut into steps) make one finding.
    """
    steps, values = series.steps, series.values
    cuts = [int(series.red_steps[k]) for k, _, _ in robust.change_points(series)]
    while True:  # drop shifts too small to matter, then re-level the merged segments
        bounds = [int(steps[0]), *cuts, int(steps[-1]) + 1]
        levels = [float(np.median(values[_window(steps, lo, hi)])) for lo, hi in itertools.pairwise(bounds)]
        small = [c for i, c in enumerate(cuts) if levels[i] <= 0 or abs(levels[i + 1] / levels[i] - 1.0) < MIN_JUMP]
        if not small:
            break
        cuts = [c for c in cuts if c != small[0]]
    jumps = [
        StepTimeJump(step=c, before_s=levels[i], after_s=levels[i + 1], kind="jump") for i, c in enumerate(cuts)
    ]
    findings: list[Finding] = []
    now = robust.edge_level(values, at_end=True)
    i = 0
    while i < len(cuts):
        j = i
        while j + 1 < len(cuts) and (levels[j + 2] > levels[j + 1]) == (levels[i + 1] > levels[i]):
            j += 1
        before, after = levels[i], levels[j + 1]
        if after > before:  # faster steps are no problem to report
            run_steps = cuts[i:j + 1]
            where = f"at step {cuts[i]}" if i == j else f"over steps {cuts[i]}-{cuts[j]}"
            cause, by_length = _jump_cause(t, bounds[i], cuts[i], cuts[j], bounds[j + 2])
            rise = f"from {num(before)} s to {num(after)} s (+{after / before - 1:.0%}) {where}"
            if now >= before + 0.5 * (after - before):
                observation = f"Step time jumped {rise} and stayed (now {num(now)} s): {cause}."
                # Longer responses cost time by nature (the length reading judges whether they are healthy);
                # a slowdown nothing in the logs explains is the one to chase.
                severity: Severity = "info" if by_length else "watch"
                findings.append(finding("time_step_s", "step_time_jump", severity, observation, run_steps))
            else:
                observation = f"Step time rose {rise}, then came back (now {num(now)} s): {cause}."
                findings.append(finding("time_step_s", "step_time_slow_stretch", "info", observation, run_steps))
        i = j + 1
    return jumps, findings


def _jump_cause(t: _Timings, lo: int, first: int, last: int, hi: int) -> tuple[str, bool]:
    """What rose with the step time, and whether longer responses explain it.

    Generation with longer responses, generation alone (slower, not longer), another phase, or nothing logged.
    """
    before, after = _window(t.steps, lo, first) & t.clean, _window(t.steps, last, hi) & t.clean
    total = (_median(t.step_time[after]) or 0.0) - (_median(t.step_time[before]) or 0.0)
    rises: list[tuple[float, str, float, float]] = []
    for name in PHASES:
        if name in t.columns:
            b, a = _median(t.columns[name][before]), _median(t.columns[name][after])
            if b is not None and a is not None:
                rises.append((a - b, name, b, a))
    length_note, longer = "", False
    if LENGTH in t.columns:
        b, a = _median(t.columns[LENGTH][before]), _median(t.columns[LENGTH][after])
        if b is not None and a is not None and b > 0:
            longer = a / b - 1.0 >= LENGTH_ROSE
            length_note = f"response length {'rose' if longer else 'went'} from {num(b)} to {num(a)} tokens"
    competing = "a competing process (a checkpoint uploader, a model merge, another job) or a slower node"
    if rises:
        rise, name, b, a = max(rises)
        if total > 0 and rise >= 0.5 * total:
            phase = f"{PHASE_LABELS[name]} time rose from {num(b)} s to {num(a)} s"
            if name == GENERATION and longer:
                return f"longer generations: {phase} while {length_note}", True
            if name == GENERATION:
                lengths = f" while {length_note}" if length_note else " (response length is not logged)"
                return f"{phase}{lengths}, so generation itself slowed: {competing} on the rollout GPUs, " \
                    "or changed sampling settings", False
            return f"{phase}; look for {competing}, or a change in that phase's work", False
    if longer:
        return f"{length_note} at the same time, so longer generations are the likely cause", True
    if length_note:
        return f"{length_note}, so not longer generations; {competing} is the likelier cause", False
    return f"response length is not logged; {competing}, or longer generations", False


def _stalls(run: Run, t: _Timings, series: robust.Series) -> tuple[list[StepTimeJump], list[Finding]]:
    """One-off slow steps, and the steps whose timer also holds an eval or a checkpoint save."""
    jumps: list[StepTimeJump] = []
    findings: list[Finding] = []
    steps, times = series.steps, series.values
    level_now = float(np.median(times))
    noise = max(series.noise, 1e-3 * level_now)
    saved = {c.step for c in run.checkpoints}
    interval = max(1, run.facts.logging_interval or _typical_interval(t.steps))

    # Unexplained spikes among the clean steps. The first and last points are left out: the first step often
    # carries warm-up (compilation, CUDA graphs), and for the last one we cannot see whether it came back.
    explained = _longer_responses(t)
    spikes = [
        (step, value, level) for step, value, level, z, kind in robust.spikes(steps, times, noise, STALL_NOISE)
        if kind == "outlier" and z > 0 and level > 0 and value / level - 1.0 >= MIN_STALL
        and steps[0] < step < steps[-1] and not explained(step, value / level)
    ]
    for step, value, level in spikes:
        jumps.append(StepTimeJump(step=step, before_s=level, after_s=value, kind="stall"))
    if spikes:
        at_save = [s for s, _, _ in spikes if any(0 <= s - c < interval for c in saved)]
        listed = ", ".join(f"{s} ({num(v)} s)" for s, v, _ in spikes[:5]) + (" ..." if len(spikes) > 5 else "")
        typical = num(float(np.median([lv for _, _, lv in spikes])))
        if len(at_save) >= max(1, len(spikes) // 2) and saved:
            observation = (
                f"Step time spikes at steps {listed} against a usual {typical} s, coinciding with checkpoint saves "
                f"({len(at_save)} of {len(spikes)}): the save (or its upload) stalls training; the level does not move."
            )
            findings.append(finding("time_step_s", "checkpoint_stalls", "info", observation, [s for s, _, _ in spikes]))
        else:
            what = "a one-off stall" if len(spikes) == 1 else f"{len(spikes)} one-off stalls"
            observation = (
                f"Step time spiked at step{'s' if len(spikes) > 1 else ''} {listed} against a usual {typical} s and "
                f"came back: {what} (a checkpoint save, an upload, a slow node), not a lasting slowdown."
            )
            findings.append(finding("time_step_s", "step_time_stall", "info", observation, [s for s, _, _ in spikes]))

    # Eval and checkpoint saves: their own logged seconds are what they cost in wall time (inside verl's step
    # timer through v0.7.0, outside it later); a cost well above the step's usual time is a stall.
    total_time = float(np.sum(t.step_time))
    local = np.interp(t.steps, series.red_steps, series.smooth)
    for name, kind in (("time_checkpoint_s", "checkpoint_stalls"), ("time_eval_s", "eval_stalls")):
        if name not in t.columns:
            continue
        column = np.nan_to_num(t.columns[name])
        mask = column > INSIDE_TOLERANCE * (local if t.subtracted else t.step_time)
        if not mask.any():
            continue
        cost = float(np.median(column[mask]))
        usual = float(np.median(local[mask]))
        if cost < max(MIN_STALL * usual, STALL_NOISE * noise):
            continue  # too small against a step to matter
        stall_steps = [int(s) for s in t.steps[mask]]
        overhead = float(np.sum(column[mask])) / (total_time + (float(np.sum(column[mask])) if t.subtracted else 0.0))
        listed = ", ".join(str(s) for s in stall_steps[:6]) + (
            f" (+{len(stall_steps) - 6} more)" if len(stall_steps) > 6 else "")
        every = f" every {_typical_interval(np.array(stall_steps, dtype=np.int64))} steps" if len(
            stall_steps) >= 3 else ""
        costly = name == "time_checkpoint_s" and overhead >= CHECKPOINT_OVERHEAD_WATCH
        severity: Severity = "watch" if costly else "info"
        observation = (
            f"Periodic stalls{every} at the {PHASE_LABELS[name]} steps ({listed}): {name} adds a median "
            f"{num(cost)} s to a usual {num(usual)} s step (+{cost / usual:.0%}), {_percent(overhead)} of all step "
            "time; these steps are kept out of the phase shares and the step-time level."
        )
        findings.append(finding("time_step_s", kind, severity, observation, stall_steps))
        if name == "time_checkpoint_s":
            jumps.extend(
                StepTimeJump(step=int(t.steps[i]), before_s=float(local[i]), after_s=float(t.step_time[i]),
                             kind="stall")
                for i in np.flatnonzero(mask)[:10]
            )
    return jumps, findings


def _longer_responses(t: _Timings) -> Callable[[int, float], bool]:
    """Whether a slow step is explained by its own responses being longer than their local level."""
    if LENGTH not in t.columns:
        return lambda step, ratio: False
    steps = t.steps[t.clean]
    length = t.columns[LENGTH][t.clean]
    local = pd.Series(length).rolling(7, center=True, min_periods=3).median().to_numpy()

    def explained(step: int, ratio: float) -> bool:
        i = int(np.searchsorted(steps, step))
        if i >= len(steps) or steps[i] != step or not np.isfinite(length[i]) or not local[i] > 0:
            return False
        return bool(length[i] / local[i] - 1.0 >= 0.5 * (ratio - 1.0))

    return explained


def _percent(share: float) -> str:
    return f"{share:.0%}" if share >= 0.01 or share == 0 else f"{share:.1%}"


def _typical_interval(steps: IntArray) -> int:
    return int(np.median(np.diff(steps))) if len(steps) > 1 else 1


def _generation_bound(
    fraction: float, training: float | None, source: str, timing: _StepTimeReading | None,
    usage: _UsageReading | None,
) -> Finding | None:
    if fraction <= GENERATION_BOUND:
        return None
    parts = [f"training {num(training)}"] if training is not None else []
    if source == "timings" and timing is not None and timing.generation_fraction_run is not None:
        parts.insert(0, f"{num(timing.generation_fraction_run)} over the whole run")
    if usage is not None and usage.generation_fraction is not None and source == "timings":
        parts.append(f"GPU telemetry says {num(usage.generation_fraction)}")
    if source == "telemetry" and usage is not None:
        gen, train = usage.phase("generation"), usage.phase("training")
        if gen is not None and train is not None and gen.power_w is not None and train.power_w is not None:
            parts.append(f"at {num(gen.power_w)} W against {num(train.power_w)} W in training")
    where = "of step time recently" if source == "timings" else "of the busy GPU time, from nvidia-smi power"
    severity: Severity = "watch" if fraction >= GENERATION_DOMINANT else "info"
    detail = f" ({'; '.join(parts)})" if parts else ""
    return finding(
        GENERATION if source == "timings" else "gpu", "generation_bound", severity,
        f"Generation takes {num(fraction)} {where}{detail}: generation is the bottleneck to optimise (rollout "
        "engine settings, batch size, response length), not a training-health problem.",
    )


# ------------------------------------------------------------------------------------------- telemetry


@dataclass(frozen=True)
class _Device:
    """One GPU's samples within its busy span, labelled IDLE, GEN or TRAIN."""

    device: int
    time: FloatArray
    labels: IntArray
    util: FloatArray
    power: FloatArray
    memory_used: FloatArray
    memory_total: FloatArray


@dataclass(frozen=True)
class _Telemetry:
    devices: list[_Device]
    unused: list[int]  # devices never busy while others were


_FIELDS = ("gpu_util_pct", "power_w", "power_limit_w", "memory_used_mib", "memory_total_mib")


def _read_telemetry(run: Run) -> _Telemetry | None:
    gpu = run.gpu
    if gpu is None or gpu.empty:
        return None
    rows = gpu.loc[gpu["field"].isin(_FIELDS), ["time", "device", "field", "value"]]
    if rows.empty or not (rows["field"] == "gpu_util_pct").any():
        return None
    rows = rows.assign(field=rows["field"].astype(str)).drop_duplicates(["device", "time", "field"], keep="last")
    wide = rows.pivot(index=["device", "time"], columns="field", values="value").reindex(columns=list(_FIELDS))
    prepared: list[tuple[int, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, float | None]] = []
    unused: list[int] = []
    for device, frame in wide.groupby(level="device", sort=True):
        frame = frame[np.isfinite(frame["gpu_util_pct"].to_numpy(dtype=np.float64))]
        if frame.empty:
            continue
        time = frame.index.get_level_values("time").to_numpy(dtype=np.float64)
        order = np.argsort(time, kind="stable")
        util = frame["gpu_util_pct"].to_numpy(dtype=np.float64)[order]
        busy = np.flatnonzero(util > IDLE_UTIL_PCT)
        if len(busy) < 3:
            unused.append(_device_id(device))
            continue
        span = slice(int(busy[0]), int(busy[-1]) + 1)  # idle before the job starts or after it ends is not the run
        limit = _median(frame["power_limit_w"].to_numpy(dtype=np.float64))
        prepared.append((
            _device_id(device), time[order][span], util[span],
            frame["power_w"].to_numpy(dtype=np.float64)[order][span],
            frame["memory_used_mib"].to_numpy(dtype=np.float64)[order][span],
            frame["memory_total_mib"].to_numpy(dtype=np.float64)[order][span], limit,
        ))
    if not prepared:
        return None
    return _Telemetry(_label_devices(prepared), unused)


def _device_id(key: object) -> int:
    return int(key) if isinstance(key, (int, float, np.integer, np.floating)) else int(str(key))


def _split_variable(util: FloatArray, power: FloatArray, busy: BoolArray) -> FloatArray:
    """Power when it is reported for the busy samples, else utilisation."""
    return power if np.isfinite(power[busy]).mean() >= 0.8 else util


def _label_devices(
    prepared: list[tuple[int, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, float | None]],
) -> list[_Device]:
    """Idle / generation / training labels, with a threshold per device where its power is bimodal.

    A device whose busy samples form one cluster borrows the threshold of the bimodal devices; failing that,
    the busy samples of all such devices are split together (rollout and trainer GPUs kept apart); failing
    that, the single cluster is training when its power is over half the power limit (or, with no limit
    reported, when utilisation is very high), else generation.
    """
    thresholds: dict[int, float | None] = {}
    by_power: dict[int, bool] = {}
    for device, _, util, power, _, _, _ in prepared:
        busy = util > IDLE_UTIL_PCT
        variable = _split_variable(util, power, busy)
        by_power[device] = variable is power
        order_values = variable[busy]
        thresholds[device] = _two_clusters(order_values[np.isfinite(order_values)])
    found = [v for d, v in thresholds.items() if v is not None and by_power[d]]
    shared = float(np.median(found)) if found else None
    single = [d for d, v in thresholds.items() if v is None]
    pooled: float | None = None
    if shared is None and len(single) > 1 and all(by_power[d] for d in single):
        values = np.concatenate([
            power[(util > IDLE_UTIL_PCT) & np.isfinite(power)] for d, _, util, power, _, _, _ in prepared if d in single
        ])
        pooled = _two_clusters(values, need_alternation=False)
    devices: list[_Device] = []
    for device, time, util, power, used, total, limit in prepared:
        busy = util > IDLE_UTIL_PCT
        variable = _split_variable(util, power, busy)
        threshold = thresholds[device]
        if threshold is None and by_power[device]:
            threshold = shared if shared is not None else pooled
        labels = np.full(len(util), IDLE, dtype=np.int64)
        if threshold is not None:
            labels[busy] = np.where(variable[busy] > threshold, TRAIN, GEN)
        else:
            level = _median(power[busy])
            if limit and level is not None:
                training = level >= SINGLE_PHASE_POWER * limit
            else:
                training = float(np.median(util[busy])) >= SINGLE_PHASE_UTIL
            labels[busy] = TRAIN if training else GEN
        devices.append(_Device(device, time, labels, util, power, used, total))
    return devices


def _two_clusters(values: FloatArray, need_alternation: bool = True) -> float | None:
    """Otsu threshold between a low and a high cluster, or None when the values are not clearly bimodal.

    Bimodal means: enough samples, both clusters at least 2% of them, Ashman's D >= 4 (unimodal noise of
    common shapes stays under about 3.7), the low mean at least 20% under the high one, and, in time order,
    each cluster met in at least two separate stretches (a slow drift crosses once).
    """
    n = len(values)
    if n < MIN_BUSY_SAMPLES:
        return None
    ordered = np.sort(values)
    cumsum = np.cumsum(ordered)
    k = np.arange(1, n)
    left_mean = cumsum[k - 1] / k
    right_mean = (cumsum[-1] - cumsum[k - 1]) / (n - k)
    between = k * (n - k) * (left_mean - right_mean) ** 2
    min_size = max(3, int(MIN_CLUSTER_SHARE * n))
    valid = (ordered[k] > ordered[k - 1]) & (k >= min_size) & (n - k >= min_size)
    if not valid.any():
        return None
    split = int(k[int(np.argmax(np.where(valid, between, -1.0)))])
    low, high = ordered[:split], ordered[split:]
    spread = math.sqrt(float(np.var(low)) + float(np.var(high)))
    low_mean, high_mean = float(np.mean(low)), float(np.mean(high))
    separation = math.sqrt(2.0) * (high_mean - low_mean) / spread if spread > 0 else math.inf
    threshold = 0.5 * (float(ordered[split - 1]) + float(ordered[split]))
    if separation < MIN_SEPARATION or high_mean <= 0 or (high_mean - low_mean) / high_mean < MIN_GAP:
        return None
    if need_alternation:
        above = values > threshold
        starts = np.flatnonzero(np.diff(above.astype(np.int8)) != 0) + 1
        runs_above = int(above[0]) + int(np.sum(above[starts]))
        runs_below = int(not above[0]) + int(np.sum(~above[starts]))
        if min(runs_above, runs_below) < MIN_ALTERNATIONS:
            return None
    return threshold


@dataclass
class _UsageReading:
    phases: list[PhaseStats] = field(default_factory=list)
    idle_fraction: float | None = None
    generation_fraction: float | None = None
    training_fraction: float | None = None
    findings: list[Finding] = field(default_factory=list)

    def phase(self, name: str) -> PhaseStats | None:
        return next((p for p in self.phases if p.phase == name), None)


def _read_usage(telemetry: _Telemetry) -> _UsageReading:
    out = _UsageReading()
    devices = telemetry.devices
    labels = np.concatenate([d.labels for d in devices])
    total = len(labels)
    for code in (GEN, TRAIN, IDLE):
        mask = labels == code
        if not mask.any():
            continue
        power = np.concatenate([d.power[d.labels == code] for d in devices])
        util = np.concatenate([d.util[d.labels == code] for d in devices])
        used, headroom = _tightest_memory(devices, code)
        out.phases.append(PhaseStats(
            phase=_PHASE_NAMES[code],
            time_fraction=float(mask.sum()) / total, power_w=_median(power), util_pct=_median(util),
            memory_used_mib=used, memory_headroom_mib=headroom,
        ))
    out.idle_fraction = float(np.sum(labels == IDLE)) / total
    out.generation_fraction = float(np.sum(labels == GEN)) / total
    out.training_fraction = float(np.sum(labels == TRAIN)) / total
    if out.generation_fraction == 0.0 and out.training_fraction == 0.0:
        out.generation_fraction = out.training_fraction = None
    per_device = _idle_bubbles(devices)
    bubbles = [b for device in per_device for b in device]
    if out.idle_fraction >= IDLE_WATCH and bubbles:
        durations = np.array(bubbles)
        per_gpu = round(len(bubbles) / sum(1 for d in per_device if d))
        out.findings.append(finding(
            "gpu", "idle_bubbles", "watch",
            f"The GPUs sit idle {out.idle_fraction:.0%} of the time between busy stretches, in about "
            f"{per_gpu} bubbles per GPU (median {num(float(np.median(durations)))} s, "
            f"longest {num(float(durations.max()))} s): they wait on work off the GPU (reward calls, data "
            "loading, a sync between generation and training, a straggler).",
        ))
    out.findings.extend(_memory_findings(out))
    if telemetry.unused:
        listed = ", ".join(str(d) for d in telemetry.unused)
        out.findings.append(finding(
            "gpu", "unused_gpu", "info",
            f"GPU{'s' if len(telemetry.unused) > 1 else ''} {listed} stayed idle throughout while the others worked.",
        ))
    return out


def _tightest_memory(devices: list[_Device], code: int) -> tuple[float | None, float | None]:
    """Memory used and headroom in one phase, on the device with the least headroom (used at its 95th pct)."""
    best: tuple[float, float] | None = None
    for d in devices:
        used = d.memory_used[(d.labels == code) & np.isfinite(d.memory_used)]
        if not len(used):
            continue
        peak = float(np.quantile(used, MEMORY_QUANTILE))
        total = _median(d.memory_total)
        headroom = total - peak if total is not None else math.nan
        if best is None or (math.isfinite(headroom) and (not math.isfinite(best[1]) or headroom < best[1])):
            best = (peak, headroom)
    if best is None:
        return None, None
    return best[0], best[1] if math.isfinite(best[1]) else None


def _memory_findings(usage: _UsageReading) -> list[Finding]:
    out: list[Finding] = []
    for phase in usage.phases:
        if phase.phase == "idle" or phase.memory_headroom_mib is None or phase.memory_used_mib is None:
            continue
        total = phase.memory_used_mib + phase.memory_headroom_mib
        if total <= 0 or phase.memory_headroom_mib >= MEMORY_TIGHT * total:
            continue
        other = usage.phase("training" if phase.phase == "generation" else "generation")
        note = ""
        if other is not None and other.memory_headroom_mib is not None:
            note = f"; in {other.phase} the headroom is {num(other.memory_headroom_mib)} MiB"
        reserve = (" (a rollout engine such as vLLM reserves a fixed share of memory up front, so check that "
                   "share before reading this as a leak)") if phase.phase == "generation" else ""
        out.append(finding(
            "gpu", "memory_near_capacity", "watch",
            f"Memory is near capacity during {phase.phase}: {num(phase.memory_used_mib)} of {num(total)} MiB "
            f"used (95th percentile), {num(phase.memory_headroom_mib)} MiB headroom{note}{reserve}; "
            "a longer batch or response can run out of memory.",
        ))
    return out


def _idle_bubbles(devices: list[_Device]) -> list[list[float]]:
    """Per device, durations (s) of idle stretches between busy samples; gaps in the log are not bubbles."""
    out: list[list[float]] = []
    for d in devices:
        out.append([])
        if len(d.time) < 3:
            continue
        dt = np.diff(d.time)
        period = float(np.median(dt)) if len(dt) else 0.0
        idle = d.labels == IDLE
        if not idle.any() or period <= 0:
            continue
        # A new stretch starts at every idle sample whose predecessor is busy or lies across a log gap.
        starts = idle & np.r_[True, (~idle[:-1]) | (dt > TIME_GAP * period)]
        ids = np.cumsum(starts)
        counts = np.bincount(ids[idle])[1:]
        out[-1].extend(float(c) * period for c in counts if c > 0)
    return out
