"""Composite rewards read one component at a time.

Models learn reward components one by one, and the total hides which. The common failure: an easy
component (format) reaches its ceiling, stops contributing variance, and the total keeps looking healthy
while the component that matters (correctness) stands still or falls. When the logged components do not
add up to the total (a component is not logged, as in runs that log only the format reward next to the
total), the remainder `reward_mean - sum(components)` is read as one more component.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from assessor.diagnose import robust
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.kl_reward import min_flat_points
from assessor.diagnose.models import ComponentSummary, Finding, RewardComponentsDiagnosis, Severity, Trend
from assessor.diagnose.signals import Reading, describe

PREFIX, SUFFIX = "reward_component/", "_mean"
REMAINDER = "remainder"
# A 0..1 reward passing on nine samples in ten: its variance p(1 - p) is at most about a third of the 0.25 it
# can carry, and the few failures left are what the whole advantage of that component is computed from.
BOUNDED_CEILING = 0.9
SPREAD_GONE = 0.25  # recent spread a quarter of the early spread: the component no longer varies
SIGNIFICANT_NOISE = 3.0
CLEAR_NOISE = 5.0
STRETCH_T = 3.0
BEST_T = 4.0  # the best stretch is chosen after looking, so its comparison needs a higher bar
REMAINDER_SHARE = 0.05  # components missing more than 5% of the total: something is not logged
CORRECTNESS_WORDS = ("correct", "accura", "answer", "math", "code", "pass", "exact", "verif", "solve", "task")


@dataclass(frozen=True)
class _Component:
    name: str
    reading: Reading
    direction: Trend  # start to now, tested against noise
    saturated: bool
    levelled_off: robust.LevelOff | None = None  # rose, then has gone nowhere for at least as long as it rose

    @property
    def stalled(self) -> bool:
        """Not improving: flat or falling from start to now, or risen once and flat for a long while since."""
        return not self.saturated and (self.direction != "rising" or self.levelled_off is not None)


def diagnose_components(ctx: Context) -> RewardComponentsDiagnosis:
    """Read each logged reward component (`reward_component/<fn>_mean`) against the others and the total.

    Args:
        ctx: The run and its readings.

    Returns:
        Per component: start, now, direction and whether it is saturated; findings for a component at its
        ceiling while another stalls or falls, and for components moving against the total.
    """
    names = sorted(
        m[len(PREFIX):-len(SUFFIX)] for m in ctx.run.metric_names() if m.startswith(PREFIX) and m.endswith(SUFFIX))
    components = []
    for name in names:
        reading = ctx.book.get(f"{PREFIX}{name}{SUFFIX}")
        if reading is not None:
            components.append(_read(name, reading))
    if not components:
        return RewardComponentsDiagnosis()
    remainder = _remainder(ctx, names)
    if remainder is not None:
        components.append(_read(REMAINDER, remainder))
    total = ctx.book.get("reward_mean")
    # One component and nothing missing: it *is* the total, which the reward and learning-signal readings cover.
    composite = len(components) > 1
    findings = [*_saturated_while_other_stalls(components), *_against_total(components, total),
                *_task_never_moved(ctx, components)] if composite else []
    fallen = next((c for c in components if c.name != REMAINDER and not c.saturated and _fell_from_best(c.reading)),
                  None) if any(f.kind == "component_saturated_other_stalls" for f in findings) else None
    if composite and fallen is None:
        hidden = _task_fell_under_total(components, total)
        if hidden is not None:
            fallen, found = hidden
            findings.append(found)
    return RewardComponentsDiagnosis(
        fallen_task=fallen.reading.summary.metric if fallen is not None else None,
        components=[
            ComponentSummary(name=c.name, start=c.reading.summary.start, now=c.reading.summary.now,
                             trend=c.direction, saturated=c.saturated)
            for c in components
        ],
        findings=findings,
    )


def _read(name: str, reading: Reading) -> _Component:
    bend = robust.level_off(reading.series)
    long_flat = bend if bend is not None and bend.plateau(min_flat_points=min_flat_points(reading)) else None
    return _Component(name, reading, _direction(reading), _saturated(reading), long_flat)


def _direction(reading: Reading) -> Trend:
    """Start-to-now direction.

    Either the edge levels differ by three noise units (with a confirming trend or change point; five
    without), or the mean of the first stretch and of the last stretch differ by `STRETCH_T` standard
    errors and by half a noise unit. The second test is what sees a sustained move in a per-step reward
    averaged over a handful of samples, where each step is noisy but a hundred steps are not.
    """
    s = reading.summary
    values = reading.series.values
    noise = max(s.noise, robust.noise_floor(values))
    change = s.now - s.start
    size = abs(change) / noise
    if size >= SIGNIFICANT_NOISE:
        direction: Trend = "rising" if change > 0 else "falling"
        confirmed = s.trend == direction or any(
            cp.direction == ("up" if change > 0 else "down") for cp in s.change_points)
        if confirmed or size >= CLEAR_NOISE:
            return direction
    w = _stretch(len(values))
    if 2 * w > len(values):
        return "flat"
    early, late = values[:w], values[-w:]
    diff = float(np.mean(late) - np.mean(early))
    if abs(_t(early, late, reading.series.rho)) >= STRETCH_T and abs(diff) >= 0.5 * noise:
        return "rising" if diff > 0 else "falling"
    return "flat"


def _fell_from_best(reading: Reading) -> tuple[float, int] | None:
    """(best stretch mean, its middle step) when the last stretch sits clearly below the best earlier one.

    The best stretch is the best of many candidates, so the bar is higher than for a plain comparison.
    """
    values, steps = reading.series.values, reading.series.steps
    w = _stretch(len(values))
    if 2 * w > len(values):
        return None
    means = robust.window_means(values, w)[: len(values) - 2 * w + 1]  # cumulative sums: O(n), not O(n w)
    best = int(np.argmax(means))
    stretch, recent = values[best:best + w], values[-w:]
    drop = float(np.mean(stretch) - np.mean(recent))
    noise = max(reading.summary.noise, robust.noise_floor(values))
    if drop < 0.5 * noise or -_t(stretch, recent, reading.series.rho) < BEST_T:
        return None
    return float(np.mean(stretch)), int(steps[best + w // 2])


def _stretch(n: int) -> int:
    """Length of the stretches compared: a sixth of the run, at least five points."""
    return max(5, n // 6)


def _t(early: np.ndarray, late: np.ndarray, rho: float) -> float:
    """Welch t of late minus early, with each side's size shrunk to its effective number of points."""
    shrink = (1 - rho) / (1 + rho)
    var = float(np.var(early, ddof=1)) / max(1.0, len(early) * shrink) + float(np.var(late, ddof=1)) / max(
        1.0, len(late) * shrink)
    diff = float(np.mean(late) - np.mean(early))
    if var <= 0:
        return 0.0 if diff == 0 else float(np.sign(diff)) * float("inf")
    return diff / float(np.sqrt(var))


def _saturated(reading: Reading) -> bool:
    """At its own ceiling: near 1 for a reward bounded by 0..1, else at its observed top with the spread gone."""
    s, values = reading.summary, reading.series.values
    third = max(3, len(values) // 3)
    if values.min() >= 0 and values.max() <= 1:
        # Mean, not median: per-step values of a 0/1 reward are coarse fractions of a few samples.
        return float(np.mean(values[-third:])) >= BOUNDED_CEILING
    noise = max(s.noise, robust.noise_floor(values))
    early, recent = _spread(values[:third]), _spread(values[-third:])
    return s.now >= s.peak - noise and early > 0 and recent <= SPREAD_GONE * early


def _spread(values: np.ndarray) -> float:
    return float(np.median(np.abs(values - np.median(values)))) * robust.MAD_TO_SD


def _remainder(ctx: Context, names: list[str]) -> Reading | None:
    """`reward_mean - sum(components)` when the logged components clearly do not add up to the total."""
    total = ctx.run.series("reward_mean")
    if not len(total):
        return None
    parts = pd.concat([ctx.run.series(f"{PREFIX}{n}{SUFFIX}").rename(n) for n in names], axis=1, join="inner")
    frame = parts.join(total.rename(" total"), how="inner").dropna()  # the space: no component has that name
    if len(frame) < 3:
        return None
    rest = (frame[" total"] - frame[names].sum(axis=1)).to_numpy()
    scale = float(np.median(np.abs(frame[" total"].to_numpy())))
    if scale == 0 or float(np.median(np.abs(rest))) < REMAINDER_SHARE * scale:
        return None
    # Reward weights (TRL's reward_weights) make total != sum of components without any missing part: then the
    # "rest" is negative, or just a scaled copy of a logged component. Only a positive, independent rest is a part.
    if float(np.median(rest)) < 0:
        return None
    for name in names:
        part = frame[name].to_numpy()
        if np.std(part) > 0 and np.std(rest) > 0 and abs(float(np.corrcoef(part, rest)[0, 1])) > 0.9:
            return None
    return describe(f"{PREFIX}{REMAINDER}{SUFFIX}", "train", frame.index.to_numpy(), rest)


def _label(component: _Component) -> str:
    if component.name == REMAINDER:
        return "the rest of the reward (the total minus the logged components)"
    return component.name


def _subject(component: _Component) -> str:
    """The label at the start of a sentence."""
    return "The rest" + _label(component)[len("the rest"):] if component.name == REMAINDER else (
        f"Reward component {component.name}")


def _correctness_like(component: _Component) -> bool:
    return component.name == REMAINDER or names_the_task(component.name)


def names_the_task(name: str) -> bool:
    """Whether a reward component's name says it scores the task itself (correctness, tests passed, `task`)."""
    return any(w in name.lower() for w in CORRECTNESS_WORDS)


def _saturated_while_other_stalls(components: list[_Component]) -> list[Finding]:
    """One component at its ceiling while another (the one that matters, when recognisable) is flat or falls."""
    findings: list[Finding] = []
    saturated = [c for c in components if c.saturated]
    stalled = [c for c in components if c.stalled]
    # While the task component itself still rises, a stalled side component (concision, style) is not "the one
    # that matters": the run is still learning what it is for.
    if any(_correctness_like(c) and c.name != REMAINDER and c.direction == "rising" and not c.stalled
           for c in components):
        stalled = [c for c in stalled if _correctness_like(c)]
    stalled.sort(key=lambda c: (not _correctness_like(c), c.direction != "falling"))
    for full in saturated:
        s = full.reading.summary
        reached = _reached_step(full.reading)
        if not stalled:
            findings.append(finding(
                s.metric, "component_saturated", "info",
                f"{full.name} is at its ceiling ({_levels(full.reading)}; there since step {reached}): it adds no "
                f"variance, so no learning signal, from here on.",
                [reached, s.last_step],
            ))
            continue
        other = stalled[0]
        o = other.reading.summary
        best = _fell_from_best(other.reading)
        severity: Severity = "warning" if other.direction == "falling" or best else "watch"
        kind = "component_saturated_other_stalls"
        if best is not None:
            # Quoted as the learning-signal section gives this component (stretches of a tenth of the run); the
            # test's own stretches (a sixth) are not a second peak.
            fate = f"has fallen from its peak {num(o.peak)} around step {o.peak_step} to {num(o.now)} now"
        elif other.direction == "falling":
            fate = f"has fallen from {num(o.start)} at the start to {num(o.now)}"
        elif other.levelled_off is not None:
            # It learnt what it could early and has gone nowhere since: the run is spent, not getting worse.
            bend = other.levelled_off
            kind, severity = "component_saturated_other_levelled_off", "warning"
            fate = (f"levelled off around step {bend.step} (it rose for {bend.climb_steps} steps and has kept "
                    f"{max(0.0, bend.rate_left):.0%} of that rate over the {bend.flat_steps} since)")
        else:
            fate = f"stays flat ({num(o.start)} at the start, {num(o.now)} now)"
        findings.append(finding(
            s.metric, kind, severity,
            f"{full.name} is saturated ({_levels(full.reading)}; at its ceiling since step {reached}) while "
            f"{_label(other)} {fate}: the total is carried by the easy component and the one that matters is not "
            f"learning.",
            [reached, best[1] if best else o.trend_window_start, s.last_step],
        ))
    return findings


def _levels(reading: Reading) -> str:
    """Start and now, the numbers the learning-signal section gives the component."""
    s = reading.summary
    return f"start {num(s.start)}, now {num(s.now)}"


MIN_TASK_POINTS = 50  # logged steps before a task component can be shown not to move
TASK_FLAT_PROGRESS = 0.5  # share of the planned steps after which "not yet" becomes "not at all"


def _task_never_moved(ctx: Context, components: list[_Component]) -> list[Finding]:
    """The component that says the task was solved has not moved over the whole run, while another did.

    Positive evidence, not a quiet stretch: flat from start to now, and its most optimistic slope would not move
    it by a noise unit over the run (`robust.progress` on a curve that never rose). The total can then rise on
    a format or length bonus alone; the run is not learning the task.
    """
    tasks = [c for c in components if c.name != REMAINDER and _correctness_like(c)]
    moved = [c for c in components if c.name != REMAINDER and c not in tasks and c.direction != "flat"]
    # Runs learn the easy parts first: the task part not moving *yet* says nothing until most of the planned
    # steps are done, or the easy parts have finished moving (at their ceiling, or levelled off).
    planned, last = ctx.facts.planned_total_steps, ctx.run.last_step or 0
    easy_done = bool(moved) and all(c.saturated or c.levelled_off is not None for c in moved)
    if not (easy_done or (planned and last >= TASK_FLAT_PROGRESS * planned)):
        return []
    out: list[Finding] = []
    for task in tasks:
        series, s = task.reading.series, task.reading.summary
        if series.n < MIN_TASK_POINTS or task.direction != "flat" or task.saturated or not moved:
            continue
        if _fell_from_best(task.reading) is not None:
            continue  # it rose and fell back: that is a decline (read against the total), not a task never learnt
        if robust.trend(series, int(series.steps[0])).direction != "flat":
            continue
        starved = _starved_share(ctx)
        stalled = robust.progress(series, s.trend_window_start).stalled
        if not stalled and starved is None:
            continue
        flat = "its trend is flat and too small to move it by a noise unit" if stalled else "its trend is flat"
        why = (f"; {starved:.0%} of recent groups score alike, so the task reward almost never separates one "
               "completion from another and the run gets next to no signal on it") if starved is not None else ""
        others = ", ".join(f"{_label(c)} {'rose' if c.direction == 'rising' else 'fell'} ({_levels(c.reading)})"
                           for c in moved)
        out.append(finding(
            s.metric, "task_component_flat", "warning",
            f"{_label(task)} has not moved over the whole run ({_levels(task.reading)}; {flat}) while {others}{why}: "
            "whatever the total does, the task is not being learnt", [s.first_step, s.last_step]))
    return out


STARVED_SHARE = 0.5  # most groups with no reward spread: the component left to learn barely ever fires


def _starved_share(ctx: Context) -> float | None:
    """The recent share of groups whose completions all scored alike, when it is most of them.

    With the other components finished, a task component that stays flat while most groups carry no spread is
    positive evidence that it is not being learnt: it sits where it almost never fires (or always does), and a
    group that scores alike has zero advantage. The flatness alone may be a slow climb the noise hides.
    """
    zero = ctx.book.get("reward_zero_std_frac")
    if zero is None or zero.series.n < 3:
        return None
    values = zero.series.values
    recent = float(np.mean(values[-max(3, len(values) // 3):]))
    return recent if recent >= STARVED_SHARE else None


def _task_fell_under_total(
    components: list[_Component], total: Reading | None,
) -> tuple[_Component, Finding] | None:
    """The task's own component fell clearly from its best while the total held or rose on the other parts.

    A code run scored as tests passed plus a style bonus can keep a flat total while the pass rate slides and the
    bonus climbs: the policy trades what the run is for against what is cheap to score. The better model is at the
    task component's best, whatever the total says.
    """
    held = _direction(total) if total is not None else "falling"
    if total is None or held == "falling" or _fell_from_best(total) is not None:
        return None  # a total that fell with it is the reward's own decline, read there
    for c in components:
        if c.name == REMAINDER or not _correctness_like(c):
            continue
        best = _fell_from_best(c.reading)
        if best is None:
            continue
        s, t = c.reading.summary, total.summary
        return c, finding(
            s.metric, "task_component_declined", "warning",
            f"{c.name}, the part of the reward that says the task was done, fell from {num(best[0])} around step "
            f"{best[1]} to {num(s.now)} now while the total reward stayed {held} ({num(t.start)} to "
            f"{num(t.now)}): the other parts carry the total, so the policy is trading the task for what is cheap "
            "to score, and the better model is behind",
            [best[1], s.last_step])
    return None


def _against_total(components: list[_Component], total: Reading | None) -> list[Finding]:
    """A component moving opposite to the total: the total hides a loss (or a gain) in one part."""
    if total is None:
        return []
    direction = _direction(total)
    if direction == "flat":
        return []
    t = total.summary
    findings: list[Finding] = []
    for c in components:
        if c.direction == "flat" or c.direction == direction:
            continue
        s = c.reading.summary
        findings.append(finding(
            s.metric, "component_against_total", "watch",
            # Start to now, said as such: the table's trend word for the same curves is about their recent window.
            f"{_subject(c)} has {_moved(c.direction)} since the start ({num(s.start)} to {num(s.now)}) while the total "
            f"reward has {_moved(direction)} ({num(t.start)} to {num(t.now)}): the total hides what this component "
            "is doing.",
            [s.trend_window_start, s.last_step],
        ))
    return findings


def _moved(direction: Trend) -> str:
    return {"rising": "risen", "falling": "fallen"}.get(direction, "stayed flat")


def _reached_step(reading: Reading) -> int:
    """First step of the final stretch in which the smoothed component stays within noise of where it is now."""
    s = reading.summary
    smooth, steps = reading.series.smooth, reading.series.red_steps
    band = max(s.noise, robust.noise_floor(reading.series.values))
    outside = np.flatnonzero(smooth < s.now - band)
    index = int(outside[-1]) + 1 if len(outside) else 0
    return int(steps[min(index, len(steps) - 1)])
