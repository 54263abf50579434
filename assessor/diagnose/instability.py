"""Instability events: spikes in KL, gradient norm and loss, and NaN/inf steps.

A one-step outlier that the next steps recover from is worth noting; a spike after which the signal stays
away is a regime change; NaN or inf in the loss or gradient norm is a numerical event, not missing data.
"""

from __future__ import annotations

import math

import numpy as np

from assessor.diagnose.breakdown import diagnose_breakdown
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.models import ChangePoint, Finding, InstabilityDiagnosis, Severity, Spike
from assessor.diagnose.robust import MAX_SPIKES
from assessor.diagnose.signals import first_rise
from assessor.run import Run

SPIKE_SIGNALS = ("kl", "grad_norm", "pg_loss", "loss", "entropy", "policy_shift_kl")
NAN_SIGNALS = ("loss", "pg_loss", "grad_norm", "kl", "reward_mean", "entropy", "value_loss")


def diagnose_instability(ctx: Context) -> InstabilityDiagnosis:
    """Spikes per signal and non-finite steps, with findings."""
    out = InstabilityDiagnosis()
    findings: list[Finding] = []
    for metric in SPIKE_SIGNALS:
        reading = ctx.book.get(metric)
        if reading is None or not reading.summary.spikes:
            continue
        spikes = _confirmed(reading.summary.spikes, reading.summary.change_points)
        out.spikes[metric] = spikes
        if metric in ("kl", "grad_norm"):
            nan_after = any(s > reading.summary.last_step for s in ctx.run.nonfinite_steps(metric))
            findings.extend(_spike_findings(metric, spikes, reading.summary.last_step, nan_after,
                                            now=reading.summary.now, logged=reading.series.steps))
    if not any(f.signal == "grad_norm" and f.kind == "spike_regime_change" for f in findings):
        findings.extend(_gradient_level_shift(ctx))
    for metric in NAN_SIGNALS:
        steps = ctx.run.nonfinite_steps(metric)
        if not steps:
            continue
        out.nonfinite_steps[metric] = steps
        logged = len(steps) + (len(ctx.run.series(metric)) if ctx.run.has(metric) else 0)
        latest = latest_all_nonfinite(ctx.run, metric)
        share = len(steps) / max(1, logged)
        severity: Severity
        skipped = skipped_since(ctx.run) if metric == "grad_norm" and latest else None
        if skipped is not None:
            # Named from where the skipping began (the first NaN may be fp16's loss-scale search at step 1).
            steps = [s for s in steps if s >= skipped] + [s for s in steps if s < skipped]
            severity, tail = "warning", (
                f"; every one since step {skipped}, while loss and reward stay finite: each of those updates "
                "overflowed and was skipped (fp16 loss scaling), so the weights are not changing")
        elif latest and metric in ("loss", "pg_loss", "grad_norm"):
            # Named from where the final run of NaN/inf began: earlier isolated ones were recovered from.
            final = trailing_nonfinite(ctx.run, metric)
            in_final = set(final)
            steps = final + [s for s in steps if s not in in_final]
            severity, tail = "critical", (f": every logged value since step {final[0]} is NaN/inf, training has "
                                          "diverged" if final else ": the latest logged values are all NaN/inf, "
                                          "training has diverged")
        elif latest:
            # Still NaN at the end (KL or entropy beside a diverging loss): nothing after them to call it passing.
            final = trailing_nonfinite(ctx.run, metric)
            severity, tail = "warning", (f": every logged value since step {final[0]} is NaN/inf, through the latest"
                                         if final else ": the latest logged values are NaN/inf")
        elif share >= 0.2:
            severity, tail = "warning", f" ({share:.0%} of logged steps)"
        else:
            # Isolated NaN gradient norms are what fp16 loss scaling does when it skips a step.
            severity, tail = "watch", " (not lasting: the steps after them are finite)"
        shown = ", ".join(str(s) for s in steps[:6]) + (" …" if len(steps) > 6 else "")
        findings.append(finding(
            metric, "nonfinite", severity, f"{metric} was NaN/inf at {len(steps)} logged steps ({shown}){tail}",
            steps[:6]))
    findings.extend(diagnose_breakdown(ctx))
    raised = _lr_raised(ctx) or _lr_restarted(ctx)
    if raised is not None:
        findings.append(raised)
    diverged = [f.steps[0] for f in findings if f.kind == "nonfinite" and f.severity == "critical" and f.steps]
    if diverged:
        findings.extend(_run_up(ctx, min(diverged)))
    out.findings = findings
    return out


LR_RAISED = 1.5  # the learning rate set at least half again above anything it had been, after holding there
LR_HELD_SHARE = 0.1  # ... for a tenth of the logged steps or more before (a warm-up ramp does not hold)


def _lr_raised(ctx: Context) -> Finding | None:
    """The learning rate raised in one step to a level it keeps, after it had held its earlier level for a while.

    A warm-up climbs; a schedule decays. A jump to several times the level the run was trained at (a resume with new
    settings, a changed config) is an intervention, and what the policy does right after it is likely its effect.
    """
    series = ctx.run.series("lr")
    values, steps = series.to_numpy(), series.index.to_numpy()
    n = len(values)
    if n < 10 or not np.all(np.isfinite(values)) or float(np.max(values)) <= 0.0:
        return None
    before_max = np.maximum.accumulate(values)[:-1]
    rises = np.flatnonzero(values[1:] >= LR_RAISED * np.maximum(before_max, 1e-300)) + 1
    for i in rises:
        prior = float(before_max[i - 1])
        held = int(np.sum(values[:i] >= prior * (1 - 1e-6)))
        if prior <= 0 or held < LR_HELD_SHARE * n or float(np.median(values[i:])) < LR_RAISED * prior:
            continue
        step = int(steps[i])
        return finding(
            "lr", "lr_raised", "watch",
            f"the learning rate was raised from {num(prior)} to {num(float(values[i]))} at step {step} and kept "
            f"there ({held} logged steps at {num(prior)} before): not a warm-up or a schedule, a change of settings "
            "(a resume with a new config?); read what the other signals did right after it", [step])
    return None


LR_RESTART_LOW, LR_RESTART_HIGH = 0.1, 0.5  # decayed under a tenth of its peak, back over half of it ...
LR_RESTART_STEPS = 3  # ... within this many logged steps (a warm-up ramp takes longer)
LR_RESTART_HELD_SHARE = 0.05  # ... after staying that low for this share of the logged steps (not a few stray zeros)
LR_RESTART_HELD_POINTS = 5  # ... and at least this many of them
MAX_RESTART_CANDIDATES = 64  # steps checked in full (each walks back over its low stretch)


def _lr_restarted(ctx: Context) -> Finding | None:
    """The learning rate back near its peak within a few steps after it had decayed to almost nothing.

    A schedule with restarts, or a resume that reset the scheduler: the policy takes full-size steps again after a
    stretch of tiny ones, and what it does right after is likely the restart's effect. Not a warm-up: the low point
    comes after the peak it returns to.
    """
    series = ctx.run.series("lr")
    values, steps = series.to_numpy(), series.index.to_numpy()
    n = len(values)
    if n < 10 or not np.all(np.isfinite(values)):
        return None
    # Candidates at once (O(n)): back over half the peak so far, from under a tenth of it within the last few steps.
    peak = np.maximum.accumulate(values)
    index = np.arange(n)
    peak_at = np.maximum.accumulate(np.where(values >= peak, index, 0))
    k = LR_RESTART_STEPS
    window_min = np.min(np.stack([values[k - j - 1:n - j - 1] for j in range(k)]), axis=0)  # values[i-k:i]
    prior = peak[k - 1:n - 1]
    hits = np.flatnonzero((prior > 0) & (values[k:] >= LR_RESTART_HIGH * prior)
                          & (window_min <= LR_RESTART_LOW * prior)) + k
    for i in hits[:MAX_RESTART_CANDIDATES]:
        top_at, top = int(peak_at[i - 1]), float(peak[i - 1])
        low_at = i - k + int(np.argmin(values[i - k:i]))
        low = float(values[low_at])
        if low_at <= top_at:
            continue  # a warm-up still climbing: the low point comes before the peak
        # Decayed, not a glitch: it had stayed that low for a while (a few stray zeros logged mid-run are none).
        held = low_at
        while held > top_at and values[held - 1] <= LR_RESTART_LOW * top:
            held -= 1
        if low_at - held + 1 >= max(LR_RESTART_HELD_POINTS, LR_RESTART_HELD_SHARE * n):
            step = int(steps[i])
            return finding(
                "lr", "lr_raised", "watch",
                f"the learning rate jumped back from {num(low)} to {num(float(values[i]))} at step {step} (its peak "
                f"was {num(top)} at step {int(steps[top_at])}): a schedule restart or a resume that reset the "
                "scheduler, so the policy takes full-size steps again; read what the other signals did right after it",
                [step])
    return None


RUN_UP_FROM = 2.0  # the gradient norm above twice its usual level, step after step, is the climb under way
RUN_UP_TO = 5.0  # and at least five times it by the last finite step: a climb, not a noisy patch
RUN_UP_MIN_POINTS = 20


def _run_up(ctx: Context, nan_from: int) -> list[Finding]:
    """The gradient norm's climb into a divergence: where the run broke, before the first NaN.

    Gradients seldom go from their usual size to NaN in one step; they grow for a while first (an exponential
    run-up as the policy steps further each update). The weights saved during the climb are already suspect, so
    the divergence is dated from where the gradient norm left its usual level for good (more than `RUN_UP_FROM`
    times its median before, read as the median of each step and its neighbours, so one quiet step inside the
    climb does not end it), when it reached `RUN_UP_TO` times that median before the NaN.
    """
    if not ctx.run.has("grad_norm"):
        return []
    series = ctx.run.series("grad_norm")
    steps, values = series.index.to_numpy(), series.to_numpy()
    keep = steps < nan_from
    steps, values = steps[keep], values[keep]
    if len(values) < RUN_UP_MIN_POINTS:
        return []
    usual = float(np.median(values[: int(len(values) * 0.8)]))
    if usual <= 0 or values[-1] < RUN_UP_TO * usual:
        return []
    padded = np.concatenate(([values[0]], values, [values[-1]]))
    local = np.median(np.stack([padded[:-2], padded[1:-1], padded[2:]]), axis=0)
    below = np.flatnonzero(local < RUN_UP_FROM * usual)
    start = int(below[-1]) + 1 if len(below) else 0
    if start >= len(values) - 1 or start == 0:
        return []  # a climb of one step, or one that began with the log: nothing earlier to date it by
    return [finding(
        "grad_norm", "grad_norm_run_up", "warning",
        f"grad_norm climbed from about {num(usual)} to {num(float(values[-1]))} "
        f"({values[-1] / usual:.0f}x) over steps {int(steps[start])}-{int(steps[-1])}, before the first NaN at step "
        f"{nan_from}: the divergence began with that climb, and weights saved during it are suspect",
        [int(steps[start]), int(steps[-1])])]


def skipped_since(run: Run) -> int | None:
    """Where every optimiser step began to be skipped: gradient norms NaN/inf to the end, loss and reward finite.

    That is dynamic loss scaling (fp16) overflowing on every step, or a trainer that refuses non-finite updates:
    the weights stay where they were. A model that diverged shows NaN in its loss and rewards too.
    """
    trailing = trailing_nonfinite(run, "grad_norm")
    if len(trailing) < SKIPPED_POINTS:
        return None
    start = trailing[0]
    outputs = [m for m in ("loss", "pg_loss", "reward_mean") if run.has(m)]
    if not outputs:
        return None
    for metric in outputs:
        if any(s >= start for s in run.nonfinite_steps(metric)):
            return None
        if not (run.series(metric).index.to_numpy() >= start).any():
            return None
    return start


SKIPPED_POINTS = 5


def trailing_nonfinite(run: Run, metric: str) -> list[int]:
    """The steps of the metric's final run of NaN/inf values, up to its latest logged step (empty if that is finite)."""
    finite = run.series(metric).index.to_numpy()
    last_finite = int(finite[-1]) if len(finite) else None
    return [s for s in sorted(run.nonfinite_steps(metric)) if last_finite is None or s > last_finite]


def latest_all_nonfinite(run: Run, metric: str, k: int = 3) -> bool:
    """Whether the last `k` logged values of the metric are all non-finite."""
    return len(trailing_nonfinite(run, metric)) >= k


GRAD_SHIFT_RATIO = 3.0


def _gradient_level_shift(ctx: Context) -> list[Finding]:
    """The gradient norm moving up to a new level several times higher and staying there, with or without a spike."""
    reading = ctx.book.get("grad_norm")
    rise = first_rise(reading.summary, GRAD_SHIFT_RATIO, change_points=True,
                      planned=ctx.facts.planned_total_steps) if reading is not None else None
    if rise is None:
        return []
    step, before, after = rise
    assert reading is not None
    now = reading.summary.now
    stayed = (f"and stayed there for a while (it has since come back down, {num(now)} now): the optimisation "
              "changed regime for a stretch" if _came_back(before, after, now)
              else "and stayed there: the optimisation changed regime")
    return [finding(
        "grad_norm", "level_shift", "warning",
        f"grad_norm moved from about {num(before)} to {num(after)} at step {step} ({after / before:.0f}x) {stayed}",
        [step])]


def _confirmed(spikes: list[Spike], change_points: list[ChangePoint]) -> list[Spike]:
    """A spike counts as a regime change only where a lasting level shift was also found nearby."""
    out = []
    for spike in spikes:
        lasting = any(abs(cp.step - spike.step) <= max(5, abs(spike.step) // 20) for cp in change_points)
        out.append(spike if spike.kind == "outlier" or lasting else spike.model_copy(update={"kind": "outlier"}))
    return out


def _came_back(before: float, after: float, now: float) -> bool:
    """Whether a curve that moved from `before` to `after` is now back over half the way to where it was, or past it.

    Past it counts: a gradient norm that jumped from 0.24 to 0.42 and has since decayed to 0.05 came back (a blind
    reader met "did not come back" beside a table whose every later shift was downwards).
    """
    towards = math.copysign(1.0, after - before)
    return (now - before) * towards < 0.5 * abs(after - before)


REGIME_MIN_SHARE = 0.1  # of the larger of the two levels: a lasting shift smaller than this is no new regime


def _spike_findings(
    metric: str, spikes: list[Spike], last_step: int, nan_after: bool = False, now: float | None = None,
    logged: np.ndarray | None = None,
) -> list[Finding]:
    out: list[Finding] = []
    # A lasting shift of a few percent is many noise units on a smooth curve, but no change of regime: a KL of 0.001
    # moving to 0.00105 as the policy starts to learn (a blind reader's "regime change").
    regime = [s for s in spikes if s.kind == "regime_change"
              and abs(s.value - s.level) >= REGIME_MIN_SHARE * max(abs(s.level), abs(s.value))]
    outliers = [s for s in spikes if s.kind == "outlier" and s.size_noise > 0]
    # A jump that stays is a warning (and dates a breakage); a drop that stays is the update settling or the
    # schedule decaying (a gradient norm halving once warm-up ends), worth a look, not a break.
    ups = [s for s in regime if s.value > s.level]
    if regime:
        shown = ups or regime
        first = shown[0]
        moved = "dropped" if first.value < first.level else "jumped"  # a step down is no jump (a blind reader)
        # "Did not come back" is about the steps after the shift; where the curve has since gone back towards its
        # old level, say so (a reader met it beside a gradient norm back at a fortieth of the jump).
        after = (f"stayed there for a while; it has since come back {'down' if moved == 'jumped' else 'up'} "
                 f"({num(now)} now)" if now is not None and _came_back(first.level, first.value, now)
                 else "did not come back")
        out.append(finding(
            metric, "spike_regime_change", "warning" if ups else "watch",
            f"{metric} {moved} to {num(first.value)} at step {first.step} (local level {num(first.level)}, "
            f"{abs(first.size_noise):.0f}x noise) and {after}", [s.step for s in shown]))
    if outliers:
        biggest = max(outliers, key=lambda s: s.size_noise)
        # A spike on the newest logged step has no next steps yet: whether it passes is for the next check.
        # Steps logged as NaN after it are no recovery: the values ended there.
        # A spike a step or two before the end has only those steps to recover on: say how many.
        later = int((logged > biggest.step).sum()) if logged is not None else None
        after = ("the later steps were logged as NaN or inf" if biggest.step >= last_step and nan_after else
                 "it is the newest logged step, so whether it passes is not known yet" if biggest.step >= last_step
                 else f"the {'one step' if later == 1 else f'{later} steps'} logged since recovered"
                 if later is not None and later < 3 else "the next steps recovered")
        # Counted as the signals table and the instability section count them (all spikes, then the one-step
        # ones), so the sheet gives one count; the finding is about the upward one-step ones among them.
        one_step = sum(1 for s in spikes if s.kind == "outlier")
        at_least = "at least " if len(spikes) >= MAX_SPIKES else ""
        counted = f"{at_least}{len(spikes)} spike{'s' if len(spikes) > 1 else ''}"
        out.append(finding(
            metric, "spike_outlier", "watch",
            f"{metric}: {counted} ({one_step} one-step, {len(spikes) - one_step} lasting; {len(outliers)} of the "
            f"one-step ones upward); of those upward ones the largest is {num(biggest.value)} at step "
            f"{biggest.step} (local level {num(biggest.level)}); {after}", [s.step for s in outliers]))
    return out
