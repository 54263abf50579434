"""Phase timings (`time_*_s`): where the step time goes and how it moves.

Generation and training shares of the step, the step-time level and its drift, lasting jumps (robust change
points) and one-off stalls (spikes). Through verl v0.7.0 `testing` and `save_checkpoint` run inside the step
timer, so steps carrying eval or checkpoint time are kept out of the shares and out of the level, and read
instead as the stalls they are. When a run logs phases but no step total (old verl `timing/*` console logs),
the step time is the sum of the phases.

Noise alone produces no finding: shifts must be significant against the noise *and* large in relative terms,
stalls far above the local level.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pandas as pd

from assessor.diagnose import robust
from assessor.diagnose.context import finding, num
from assessor.diagnose.models import Finding, Severity, StepTimeJump
from assessor.diagnose.robust import finite_median
from assessor.run import Run

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

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

OTHER_PHASE_DOMINANT = 0.4  # a non-generation, non-training phase taking this share is worth naming
INSIDE_TOLERANCE = 0.02  # eval/checkpoint seconds below this share of the step are timer noise
MIN_JUMP = 0.10  # a lasting step-time shift must also be this large relative to the level before it
MIN_STALL = 0.20  # a stall costs at least this share of the usual step
STALL_NOISE = 6.0  # ... and this many noise units
LENGTH_ROSE = 0.10  # response length rising this much counts as "longer generations"
CHECKPOINT_OVERHEAD_WATCH = 0.10  # share of wall time lost to checkpoint saves worth a watch


@dataclass(frozen=True)
class Timings:
    """Per-step timings, aligned on the steps that have a step time."""

    steps: IntArray
    step_time: FloatArray  # seconds; measured, or the sum of the phases
    clean: BoolArray  # steps whose timer holds no eval or checkpoint time
    subtracted: bool  # eval/checkpoint time subtracted instead of excluded (too few clean steps)
    columns: dict[str, FloatArray]  # phase and length columns, NaN where not logged


def read_timings(run: Run) -> Timings | None:
    """The run's per-step timings; None unless 3+ steps have a step time (logged, or the sum of 2+ phases)."""
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
    return Timings(table.index.to_numpy(dtype=np.int64), times, clean, subtracted, aligned)


@dataclass
class StepTimeReading:
    """What the phase timings say: phase shares, step-time level and drift, jumps and stalls, findings."""

    generation_fraction: float | None = None
    generation_fraction_run: float | None = None
    training_fraction: float | None = None
    step_time_s: float | None = None
    drift: float | None = None
    jumps: list[StepTimeJump] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def _share(t: Timings, names: tuple[str, ...]) -> FloatArray | None:
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


def read_step_times(run: Run, t: Timings) -> StepTimeReading:
    """Shares, level and drift of the step time, a dominant phase, lasting jumps and one-off stalls."""
    out = StepTimeReading()
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


def _dominant_phase(t: Timings, reading: StepTimeReading) -> Finding | None:
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
        reward = finite_median(t.columns["time_reward_s"][t.clean]) if "time_reward_s" in t.columns else None
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


def _jumps(t: Timings, series: robust.Series) -> tuple[list[StepTimeJump], list[Finding]]:
    """Lasting shifts of the step-time level: significant against the noise and large in relative terms.

    Levels are the medians of the segments between the kept change points; neighbouring shifts in the same
    direction (a ramp cut into steps) make one finding.
    """
    steps, values = series.steps, series.values
    cuts = [int(series.red_steps[k]) for k, _, _ in robust.change_points(series)]
    while True:  # drop shifts too small to matter, then re-level the merged segments
        bounds = [int(steps[0]), *cuts, int(steps[-1]) + 1]
        levels = [float(robust.median(values[_window(steps, lo, hi)])) for lo, hi in itertools.pairwise(bounds)]
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


def _jump_cause(t: Timings, lo: int, first: int, last: int, hi: int) -> tuple[str, bool]:
    """What rose with the step time, and whether longer responses explain it.

    Generation with longer responses, generation alone (slower, not longer), another phase, or nothing logged.
    """
    before, after = _window(t.steps, lo, first) & t.clean, _window(t.steps, last, hi) & t.clean
    total = (finite_median(t.step_time[after]) or 0.0) - (finite_median(t.step_time[before]) or 0.0)
    rises: list[tuple[float, str, float, float]] = []
    for name in PHASES:
        if name in t.columns:
            b, a = finite_median(t.columns[name][before]), finite_median(t.columns[name][after])
            if b is not None and a is not None:
                rises.append((a - b, name, b, a))
    length_note, longer = "", False
    if LENGTH in t.columns:
        b, a = finite_median(t.columns[LENGTH][before]), finite_median(t.columns[LENGTH][after])
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


def _stalls(run: Run, t: Timings, series: robust.Series) -> tuple[list[StepTimeJump], list[Finding]]:
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
            "time."
        )
        findings.append(finding("time_step_s", kind, severity, observation, stall_steps))
        if name == "time_checkpoint_s":
            jumps.extend(
                StepTimeJump(step=int(t.steps[i]), before_s=float(local[i]), after_s=float(t.step_time[i]),
                             kind="stall")
                for i in np.flatnonzero(mask)[:10]
            )
    return jumps, findings


def _longer_responses(t: Timings) -> Callable[[int, float], bool]:
    """Whether a slow step is explained by its own responses being longer than their local level."""
    if LENGTH not in t.columns:
        return lambda step, ratio: False
    steps = t.steps[t.clean]
    length = t.columns[LENGTH][t.clean]
    levels: list[np.ndarray] = []  # the local level, worked out for the first slow step asked about (often none)

    def explained(step: int, ratio: float) -> bool:
        if not levels:
            levels.append(pd.Series(length).rolling(7, center=True, min_periods=3).median().to_numpy())
        local = levels[0]
        i = int(np.searchsorted(steps, step))
        if i >= len(steps) or steps[i] != step or not np.isfinite(length[i]) or not local[i] > 0:
            return False
        return bool(length[i] / local[i] - 1.0 >= 0.5 * (ratio - 1.0))

    return explained


def _percent(share: float) -> str:
    return f"{share:.0%}" if share >= 0.01 or share == 0 else f"{share:.1%}"


def _typical_interval(steps: IntArray) -> int:
    return int(np.median(np.diff(steps))) if len(steps) > 1 else 1

