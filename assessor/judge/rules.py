"""The offline judge: the practitioner's reasoning, written down.

It reads the diagnostics the way the skill guide does, in this order:

1. Is there any learning signal at all? Identical rewards, a reward at its floor on almost every step, a task
   component that never fires: nothing can be learnt, so stop and fix the setup.
2. Has the run gone past its best point? A reward or held-out eval that peaked and fell, KL rising while
   reward falls, a collapse to the reward floor, a generation-quality breakage (length, entropy, a KL jump),
   reward hacking, a divergence: a better model lies behind us, so roll back to the run's one best point
   (`Diagnostics.best_checkpoint`), whether or not a checkpoint from then is in the run directory.
3. Has it done what it can? KL still rising while reward stays flat, reward at its ceiling with no spread
   left, gains that never reach the held-out eval, a finished run on a plateau: stop and keep the current
   weights.
4. Otherwise continue, with every warning listed as a risk to watch; a finished run that is still improving
   is worth extending.

Stopping a healthy run is the costliest mistake, so a stop needs positive evidence that the run is spent
or broken; noise, an early run, or a flat stretch on its own are reasons to continue and look again.
The decisions mean what DESIGN.md says they mean ("What the three decisions mean").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from assessor.diagnose import SECONDARY_INSTRUMENTS, unseen_entry
from assessor.diagnose.checkpoint import BREAKAGE_KINDS, OVERRULED_BY_EVAL, breakage_kind
from assessor.diagnose.components import names_the_task
from assessor.diagnose.context import num
from assessor.diagnose.evaluation import LOWER_IS_BETTER, confidence_only, holds_clearly
from assessor.diagnose.models import SEVERITY_ORDER, Diagnostics, EvalCurve, Finding, SignalSummary
from assessor.diagnose.reward import decline_bar
from assessor.diagnose.robust import stretch_width
from assessor.judge.base import JudgeRequest, JudgeResult
from assessor.judge.models import Decision, Evidence, Usage, Verdict
from assessor.run import Checkpoint

# Findings that say the model was better earlier, with how much each counts.
# A weight of 2 (or a critical finding of weight 1) is enough on its own: these are the guide's "the better
# model is behind you" patterns. Generation-quality collapses count fully because a reward number can hide
# them (a policy that no longer ends its answers, or samples one answer deterministically, is broken).
# The breakage patterns (length, entropy, KL jumps, divergence, hacking) carry the weights the diagnosis gives
# them when it places the run's best point before a breakage (`BREAKAGE_KINDS`), so the two cannot disagree.
DEGRADATION = {
    "reward_peaked_then_declined": 2.0, "eval_declining": 2.0, "kl_up_reward_down": 2.0,
    "reward_floor_no_signal": 2.0, "reward_below_start": 1.5, "train_eval_divergence": 1.0,
    "length_approaching_cap": 1.0, "component_saturated_other_stalls": 2.0, "reward_falling": 1.0,
    "reward_per_kl_collapsed": 1.0, "side_eval_declining": 1.0, "shaped_reward_declined": 2.0,
    "eval_latest_drop": 1.0, "shortest_completions_collapsed": 1.0, "length_truncation": 1.0,
    "task_component_declined": 2.0,
    **{kind: weight for kind, (_, weight) in BREAKAGE_KINDS.items() if kind != "nonfinite"},
}
# Degradation only beside a fall of the training reward (then it is the fall's mechanism: answers cut off at the cap
# score nothing); otherwise a reason to stop and raise the cap (SPENT).
DEGRADATION_IF_REWARD_FELL = frozenset({"length_truncation"})
# Findings that say the run has nothing more to give (or, for the setup ones, cannot give it as configured).
SPENT = {
    "kl_up_reward_flat": 1.0, "reward_saturated": 1.5, "dpo_loss_flat_at_ln2": 1.5, "loss_sign_reversal": 1.0,
    "length_truncation": 1.0, "dpo_loss_rising": 1.0, "component_saturated_other_levelled_off": 1.0,
    "eval_not_transferring": 1.0, "eval_plateau": 1.0, "length_at_cap_from_start": 1.0, "task_component_flat": 1.0,
    "critic_not_learning": 1.0, "reward_no_progress": 1.0, "reward_converged": 1.0, "signal_thinning": 1.0,
    "dynamic_sampling_starved": 1.0, "shaped_reward_declined": 1.0,
}
# These only argue for stopping while reward is not improving: with reward rising they are risks to watch.
SPENT_UNLESS_IMPROVING = frozenset({"loss_sign_reversal", "length_truncation", "length_at_cap_from_start",
                                    "signal_thinning"})
# Most groups scoring alike leaves little to learn from, unless a held-out eval still climbs on what is left.
# KL drifting while the reward stands still buys nothing only if the held-out eval stands still too.
SPENT_UNLESS_EVAL_CLIMBING = frozenset({"reward_converged", "signal_thinning", "kl_up_reward_flat",
                                        "dynamic_sampling_starved"})
# A reward at its ceiling says the training prompts are learnt, not that the model is: a held-out eval setting clear
# new highs says more steps pay (holdout39's instruction-following run at 0.97 from step 1, its hard split rising
# 0.41 -> 0.52). Clear ones only: an eval flat since early whose latest evaluation happens to be its best is no climb.
SPENT_UNLESS_EVAL_SETS_HIGHS = frozenset({"reward_saturated"})
# A cap too tight from the very start only says the run is spent when reward never improved under it: a run
# whose reward rose and holds is learning, truncated or not (a risk to watch).
SPENT_UNLESS_NEVER_IMPROVED = frozenset({"length_at_cap_from_start", "reward_no_progress"})
# A reward back where it started says the run is spent only after a long stretch: early runs deserve patience.
LONG_FLAT_POINTS = 400
LONG_FLAT_PROGRESS = 0.4
EARLY_BUDGET_SHARE = 0.2  # of the planned steps: before it, a flat curve is not yet an answer however many points
# A held-out eval shown flat says the run is spent, but not that early in its budget (a noisy eval of a slow learner
# can test flat over its first evaluations).
HELD_OUT_FLAT = frozenset({"eval_not_transferring", "eval_plateau"})
# A critic that never learnt feeds the policy noise: that run is spent as configured, unless it learns anyway (the
# held-out eval moved up, or the reward clearly rose), in which case it is a risk to watch.
SPENT_UNLESS_LEARNING = frozenset({"critic_not_learning"})
CLEAR_RISE_NOISE = 3.0  # a rise of this many noise units since the start is learning, whatever the critic says
SETUP_FAILURE = frozenset({"identical_rewards", "no_learning_signal"})
ROLLBACK_BAR = 2.0  # a critical finding, or two warnings that agree
EARLY_PROGRESS = 0.05
EARLY_POINTS = 8
NEGLIGIBLE_SHARE = 0.05  # a best point this close to now (share of the run) is now


@dataclass(frozen=True)
class _Weighed:
    """Findings sorted into what they argue for."""

    degradation: list[Finding]
    spent: list[Finding]
    setup_failure: list[Finding]
    diverged: list[Finding]
    other_warnings: list[Finding]

    def weight(self, findings: list[Finding], table: dict[str, float]) -> float:
        # A critical finding counts double: it is strong evidence on its own.
        return sum(table.get(_kind(f), 0.0) * (2.0 if f.severity == "critical" else 1.0) for f in findings)


def _blind_spots(d: Diagnostics) -> int:
    """How many missing instruments lower confidence: the ones a verdict leans on, not the secondary ones.

    Reward spread, entropy, length, KL, a held-out eval, timings and samples count; gradient norm, clipping and loss,
    which the sheet also names as not logged, do not.
    """
    secondary = {unseen_entry(name) for name in SECONDARY_INSTRUMENTS}
    return sum(1 for entry in d.absent if entry not in secondary)


class RulesJudge:
    """Deterministic, offline, no keys needed (see the module docstring)."""

    name = "rules"

    def judge(self, request: JudgeRequest) -> JudgeResult:
        """Decide from the diagnostics alone."""
        return JudgeResult(verdict=decide(request.diagnostics, request.run.checkpoints), usage=Usage())


def make(model: str | None = None, **options: object) -> RulesJudge:
    """The rules judge (`--judge rules`)."""
    return RulesJudge()


def _kind(finding: Finding) -> str:
    # Breakage patterns fold severities and signals of the same pattern together (entropy blow-ups, gradient
    # norms that change regime); everything else is its own kind.
    folded = breakage_kind(finding)
    if folded is not None and folded != "nonfinite":
        return folded
    # A side eval (not the preferred held-out measure) falling is a witness, not decisive on its own. A held-out
    # loss is read only where the loss measures quality (preference and supervised training): there it is what the
    # trainer picks its best model by, finer than the accuracy on the same pairs, and its rise is decisive.
    if finding.kind == "eval_declining" and finding.signal not in ("eval", "eval/loss"):
        return "side_eval_declining"
    return finding.kind


# Training-reward trajectories that a current, healthy held-out eval overrules (the guide: eval outranks reward).
# A reward fallen to its floor counts too: when the model held up on held-out data after the fall, what changed is
# what the reward is scored on (harder prompts, a new reward), not the model, and there is nothing to go back to.
# The KL/reward quadrant's "reward down" is the same training-reward fall, read beside KL.
REWARD_TRAJECTORY = frozenset({"reward_peaked_then_declined", "reward_below_start", "reward_falling",
                               "reward_floor_no_signal", "kl_up_reward_down"})


def _eval_vouches(d: Diagnostics, finding: Finding) -> bool:
    """A held-out eval at or near its best, measured after this reward finding's onset, outranks it.

    A sagging training reward under autocorrelated noise can look like a decline while the held-out score,
    the closer measure of what is wanted, is still at its best. An eval from before the sag says nothing.
    """
    e = d.eval
    if _kind(finding) not in REWARD_TRAJECTORY or e.now_step is None or not finding.steps:
        return False
    # ...and only when no held-out series is falling: one task of a mix collapsing is not vouched for by another.
    # "Holding" vouches only within one noise unit of its peak (`holds_clearly`).
    at_best = (any(f.kind in ("eval_at_best", "eval_near_best") for f in e.findings) or holds_clearly(e)) and not any(
        f.kind == "eval_declining" for f in e.findings)
    # An eval that never rose vouches for nothing: holding a level the run started at is not health. Risen: its
    # latest level well above its first, or all its evaluations climbing together (a noisy eval's two single
    # evaluations at either end can hide a steady climb).
    curve = d.signals.get(f"eval/{e.metric}")
    learned = curve is not None and e.now is not None and (e.now - curve.start > 2 * curve.noise or any(
        c.climbed for c in d.eval.curves if c.metric == f"eval/{e.metric}"))
    # After the fall itself, not just after the peak: an eval taken while the reward was still up has not seen it.
    onset = max(finding.steps[0], d.reward.fall_step or 0) if _kind(finding) == "reward_peaked_then_declined" else (
        finding.steps[0])
    if curve is None or not (at_best and learned and e.now_step >= onset):
        return False
    # Current: the latest evaluation the eval cadence allows (or within the last tenth of the run).
    last = d.run.last_step or 0
    return last - e.now_step <= max(0.1 * last, _cadence(curve))


def _cadence(curve: SignalSummary) -> float:
    """Steps between two logged points of a curve, on average (an eval's interval)."""
    return (curve.last_step - curve.first_step) / max(1, curve.points - 1)


def _task_component_vouches(d: Diagnostics, finding: Finding) -> bool:
    """A fall of the total reward while its task component (correctness, tests) rises is a penalty term growing.

    A length or format penalty that grows as answers lengthen pulls the total down while what the run is for keeps
    improving: the total's decline is no better model behind. Only with no task component that fell.
    """
    if _kind(finding) not in REWARD_TRAJECTORY or finding.signal != d.reward.metric or d.reward_components.fallen_task:
        return False
    if any(f.kind in ("task_component_declined", "task_component_flat") for f in d.findings):
        return False
    # Every task component, and each still rising now (its recent trend), not only above where it started.
    tasks = [d.signals.get(f"reward_component/{c.name}_mean") for c in d.reward_components.components
             if names_the_task(c.name) and not c.saturated]
    return bool(tasks) and all(t is not None and t.trend == "rising" for t in tasks)


def _eval_holds_gain(d: Diagnostics) -> bool:
    """The preferred held-out eval holds a gain it made (latest level well past its start), no decline established."""
    curve = next((c for c in d.eval.curves if c.metric == f"eval/{d.eval.metric}"), None)
    if curve is None or any(f.kind == "eval_declining" for f in d.eval.findings):
        return False
    return _holds_gain(curve)


def _warming_up(d: Diagnostics) -> bool:
    """Whether the learning rate is still climbing (warm-up).

    A sag in the training reward then is the step size changing under the policy, not yet the model getting
    worse; only a breakage or a held-out decline says more.
    """
    lr = d.signals.get("lr")
    return lr is not None and lr.trend == "rising" and lr.now > 2 * lr.start > 0


def _never_improved(d: Diagnostics) -> bool:
    """Reward has not risen over the run: where it started, below it, or level since its first stretch."""
    r = d.reward
    kinds = {f.kind for f in r.findings}
    curve = d.signals.get(r.metric or "")
    if curve is None:
        return False
    # A best stretch clearly above the start is an improvement, whatever the latest stretch shows. The best of
    # many stretches is picked after looking, so "clearly" is the decline test's bar (about 4 standard errors).
    best = d.best_checkpoint
    width = stretch_width(curve.points)
    error = best.band if best.metric == r.metric and best.smoothed and best.band else (
        curve.noise / math.sqrt(max(1, width)))
    rose = curve.peak - curve.start > decline_bar(curve.points, width) * error * math.sqrt(2.0)
    if rose:
        return False
    if kinds & {"reward_no_progress", "reward_below_start"}:
        return True
    if kinds & {"reward_plateau", "reward_converged"} and r.plateau_start is not None:
        return r.plateau_start <= curve.first_step + 0.1 * (curve.last_step - curve.first_step)
    return False


FLAT_SHARE_OF_PLAN = 0.2  # a held-out plateau shorter than this share of the planned steps is no answer yet


def _flat_too_short_for_plan(d: Diagnostics, f: Finding) -> bool:
    """A held-out plateau shorter than a fifth of the planned run, while most of the plan is still ahead.

    Flat for as long as it climbed says the recipe stalled; with more than half the budget left, a stall of a few
    evaluations is as often a pause before the next rise (a harder curriculum stage, a schedule) as the end.
    """
    planned = d.run.planned_total_steps
    if not planned or d.run.progress is None or d.run.progress >= 0.5 or len(f.steps) < 2:
        return False
    return f.steps[-1] - f.steps[0] < FLAT_SHARE_OF_PLAN * planned


def _early_in_budget(d: Diagnostics) -> bool:
    """Before a fifth of a known planned run: a slow learner's curves may not show it yet."""
    return d.run.progress is not None and d.run.progress < EARLY_BUDGET_SHARE


def _long_run(d: Diagnostics) -> bool:
    """Long enough that a reward still where it started is an answer, not impatience."""
    curve = d.signals.get(d.reward.metric or "")
    if curve is None:
        return False
    if _early_in_budget(d):
        return False  # many points, but a small share of a long planned run: a slow learner may not show yet
    progress = d.run.progress or 0.0
    return curve.points >= LONG_FLAT_POINTS or (progress >= LONG_FLAT_PROGRESS and curve.points >= EARLY_POINTS * 6)


def _learning_anyway(d: Diagnostics) -> bool:
    """The held-out eval moved up and holds, or the reward rose clearly since the start.

    Holds: its latest level stands clear of where it started, not only its best evaluation (the luckiest of many
    draws of a flat curve tops its start by two noise units easily).
    """
    if any(c.moved and c.decline_noise < 2.0 and _holds_gain(c) for c in d.eval.curves):
        return True
    curve = d.signals.get(d.reward.metric or "")
    return curve is not None and curve.noise > 0 and (curve.now - curve.start) / curve.noise >= CLEAR_RISE_NOISE


def _holds_gain(c: EvalCurve) -> bool:
    """The eval's latest level stands more than two noise units better than its first evaluation."""
    sign = -1.0 if c.metric.removeprefix("eval/") in LOWER_IS_BETTER else 1.0
    return sign * (c.now - c.start) > 2 * c.noise


EVAL_VISIBLE_RISE = 2.0  # noise units across the recent window: a rise a reader sees, if the test cannot call it


def _eval_still_climbing(d: Diagnostics, clear: bool = False) -> bool:
    """A held-out eval still setting new highs: the training reward's plateau is not the model's.

    Clear new highs, or an eval that climbed over the run, scores its highest yet at its latest evaluation and
    moved up a visible `EVAL_VISIBLE_RISE` noise units across its recent window (too few evaluations for the trend
    test to call it): a held-out score still going up is not shown spent, whatever the training reward does (a
    hotter sampling schedule holds the training pass rate down while the greedy eval keeps rising). With `clear`,
    only clear new highs or a clear rise by quarters count (`_eval_climbing`).
    """
    def rising_still(c: EvalCurve) -> bool:
        window = d.signals.get(c.metric)
        moved = window.trend_change_noise if window is not None else None
        return (c.climbed and c.now_step == c.peak_step and moved is not None and math.isfinite(moved)
                and moved >= EVAL_VISIBLE_RISE)

    return any((_eval_climbing(c) or (not clear and rising_still(c))) and c.decline_noise < 1.0 for c in d.eval.curves)


def _sort(d: Diagnostics) -> _Weighed:
    degradation, spent, setup, diverged, other = [], [], [], [], []
    reward_fell = any(_kind(f) in REWARD_TRAJECTORY and f.severity in ("warning", "critical")
                      and not _eval_vouches(d, f) and not _task_component_vouches(d, f) and not _warming_up(d)
                      for f in d.findings)
    for f in d.findings:
        kind = _kind(f)
        if _eval_vouches(d, f) or _task_component_vouches(d, f) or (
                d.best_checkpoint.breakage_overruled and breakage_kind(f) in OVERRULED_BY_EVAL) or (
                _kind(f) in REWARD_TRAJECTORY and _warming_up(d)):
            other.append(f)  # a risk to watch, not a reason to throw steps away
        elif kind == "shaped_reward_declined" and _eval_holds_gain(d):
            spent.append(f)  # KL bought what the held-out eval does not show, and lost nothing it shows: drift
        elif kind in SETUP_FAILURE:
            setup.append(f)
        elif kind == "nonfinite" and f.severity == "critical":
            diverged.append(f)
        elif kind in DEGRADATION and f.severity in ("warning", "critical") and (
                kind not in DEGRADATION_IF_REWARD_FELL or reward_fell):
            degradation.append(f)
        elif kind in SPENT and f.severity in ("warning", "critical", "watch") and not (
                kind in SPENT_UNLESS_IMPROVING and (d.reward.trend == "rising" or (f.severity == "watch"
                                                    and kind == "length_truncation"))) and not (
                kind in SPENT_UNLESS_NEVER_IMPROVED and not _never_improved(d)) and not (
                kind == "reward_no_progress" and (not _long_run(d) or _learning_anyway(d))) and not (
                kind in SPENT_UNLESS_LEARNING and _learning_anyway(d)) and not (
                kind in SPENT_UNLESS_EVAL_CLIMBING and _eval_still_climbing(d)) and not (
                kind in SPENT_UNLESS_EVAL_SETS_HIGHS and _eval_still_climbing(d, clear=True)) and not (
                kind == "signal_thinning" and f.severity == "watch") and not (
                kind in HELD_OUT_FLAT and (_early_in_budget(d) or _flat_too_short_for_plan(d, f))):
            spent.append(f)
        elif f.severity in ("warning", "critical"):
            other.append(f)
    return _Weighed(degradation, spent, setup, diverged, other)


def decide(d: Diagnostics, checkpoints: list[Checkpoint] | None = None) -> Verdict:
    """The verdict for one set of diagnostics (`checkpoints`: those on disk, oldest first)."""
    checkpoints = checkpoints or []
    w = _sort(d)
    if w.setup_failure:
        if _thin_signal_early(d, w):
            return _signal_may_lift_off(d, w)
        return _no_signal(d, w)
    stopped = d.learning_signal.updates_stopped_step
    if stopped is not None and not _declined_before(d, stopped):
        return _updates_stopped(d, w, stopped)
    degradation = w.weight(w.degradation, DEGRADATION)
    finished = d.run.state == "finished"
    if _too_early(d) and not w.diverged and degradation < ROLLBACK_BAR and not finished:
        return _too_early_to_judge(d, w)
    if not w.diverged and degradation >= ROLLBACK_BAR and _early_dip_recovering(d):
        return _dip_recovering(d, w)
    if not w.diverged and degradation >= ROLLBACK_BAR and _early_reward_sag(d, w):
        return _reward_sagging(d, w)
    if w.diverged or degradation >= ROLLBACK_BAR:
        went = _went_past_best(d, w, degradation, checkpoints)
        # A handful of logged rewards has no level to go back to: only a divergence sends such a run back.
        return _too_early_to_judge(d, w) if went.decision == "rollback" and _too_few_points(d) and not (
            w.diverged or finished) else went
    spent = w.weight(w.spent, SPENT)
    if spent >= 1.0 and _all_but_done(d):
        return _let_it_finish(d, w)
    if spent >= 1.0 and _drifted_past_eval_best(d, w):
        return _went_past_best(d, w, spent, checkpoints)
    if spent >= 1.0:
        return _spent(d, w, spent)
    if finished and not _worth_extending(d):
        return _finished_on_plateau(d, w)
    # A job that died on an error mid-plan (or went silent for hours: stalled) is resumed by default; not when it
    # had levelled off, reward and eval alike: then a restart buys little, and the newest saved weights are as good
    # as any.
    if d.run.state in ("crashed", "stalled") and not w.diverged and not _still_improving(d) and not any(
            _eval_climbing(c) and not confidence_only(c, d.eval.curves) for c in d.eval.curves):
        return _died_on_plateau(d, w)
    return _continue(d, w)


DRIFT_WITHOUT_GAIN = frozenset({"kl_up_reward_flat"})
FELL_FROM_BEST_NOISE = 2.0  # the held-out best over the mean of the latest two evaluations, in eval-to-eval noise


def _drifted_past_eval_best(d: Diagnostics, w: _Weighed) -> bool:
    """A run spent by drift (KL climbing for no reward) whose held-out eval now stands clearly below its best.

    The decline test reads the peak with its neighbours, so a sharp peak on a steep climb can read as "holding";
    but a stop says the current weights are as good as any, and while the policy drifts for no gain an eval two
    noise units below its best over the latest two evaluations says they are not (unless that best stands alone
    above its neighbours: a lucky draw): the better model is the one at the best evaluation, and going back there
    costs nothing the run still gains.
    """
    if not {_kind(f) for f in w.spent} & DRIFT_WITHOUT_GAIN or not d.eval.curves:
        return False
    c = d.eval.curves[0]
    window = d.signals.get(c.metric)
    if window is None or c.points < 5 or c.noise <= 0:
        return False
    if d.best_checkpoint.basis != "eval" or d.best_checkpoint.best_level_median:
        return False  # a best evaluation alone above its neighbours is a lucky draw, not a level to go back to
    return c.decline_noise >= FELL_FROM_BEST_NOISE and c.now_step - c.peak_step >= 2 * _cadence(window) - 1e-9


ALL_BUT_DONE = 0.95  # of a known plan: what is left costs less than the check that would stop it


def _all_but_done(d: Diagnostics) -> bool:
    """A live run in the last twentieth of its known plan: stopping it now saves almost nothing."""
    return d.run.state == "live" and d.run.progress is not None and ALL_BUT_DONE <= d.run.progress < 1.0


def _let_it_finish(d: Diagnostics, w: _Weighed) -> Verdict:
    """Spent, but nearly done: nothing is lost by the last few steps, and the final weights are as good as any."""
    left = (d.run.planned_total_steps or 0) - (d.run.last_step or 0)
    headline = (f"Continue to the end: the run has levelled off (see the evidence), but only {left} of its "
                f"{d.run.planned_total_steps} planned steps are left, so stopping now saves little; keep the final "
                "weights, which are as good as any it has had.")
    return _verdict(d, "continue", 0.6, w.spent, headline, w, actions=[
        "Let it finish and keep the final checkpoint; there is no better model behind it to go back to.",
        "Before another run on this data: more steps will not help; change the data, the reward or the model."])


def _declined_before(d: Diagnostics, step: int) -> bool:
    """Whether the model got worse before `step`: a best point behind us by more than a stretch before it.

    After the weights stop changing, a reward that falls (to a reward service's 0, say) is not the model getting
    worse; only a best point clearly before the stop is a better model behind the current weights.
    """
    best = d.best_checkpoint
    if best.best_step is None or not (best.behind or best.breakage_step is not None):
        return False
    if best.breakage_step is not None and best.breakage_step < step:
        return True  # it broke (entropy, length, KL) first, and only then stopped learning
    before, curve = d.learning_signal.reward_before_stop, d.signals.get(d.reward.metric or "")
    if best.basis == "eval" or before is None or curve is None or best.best_level is None:
        return best.best_step < step
    # Fallen by more than a stretch's noise from the best by the time updates stopped: a better model is behind.
    return best.best_level - before > 2 * curve.noise / math.sqrt(stretch_width(curve.points))


def _updates_stopped(d: Diagnostics, w: _Weighed, step: int) -> Verdict:
    evidence = [f for f in d.learning_signal.findings if f.kind == "updates_stopped"]
    last = d.run.last_step or step
    first = min((s.first_step for s in d.signals.values()), default=None)
    from_start = first is not None and step <= first
    headline = (
        f"Stop: the weights have not been able to change since the start (see the evidence), so they are the initial "
        f"ones and the {last - step} steps so far spent compute for nothing; fix the cause and start again."
        if from_start else
        f"Stop: the weights have not been able to change since step {step} (see the evidence), so the current "
        f"weights are those of step {step} and the {last - step} steps since spent compute for nothing; fix the cause "
        "before resuming from the latest checkpoint.")
    return _verdict(
        d, "stop", 0.85, evidence + w.degradation[:2], headline, w,
        actions=["Find why updates stopped: a learning-rate schedule shorter than the run (its decay or total "
                 "steps) or one that never leaves its warm-up, or a reward that returns the same value for every "
                 "completion (a reward service down or timing out, a parser failing), which leaves no advantage and "
                 "no gradient.",
                 "Start again from the initial model once fixed." if from_start else
                 "Resume from the latest checkpoint once fixed: it holds the same weights as any since the stop."])


def _worth_extending(d: Diagnostics) -> bool:
    """Whether a finished run should be extended: only while it still climbs at full pace.

    A rise that is slowing down (the latest third under half the middle third's rate) has reached diminishing
    returns, and with a held-out eval the eval must still be setting clear new highs; otherwise the final weights
    are the ones to keep.
    """
    if d.reward.metric == "pref_margin":
        return False  # preference training on fixed pairs: a further epoch memorises them (the DPO card)
    # With a held-out eval, it decides (the eval outranks the training reward): it must still be setting clear new
    # highs without slowing. A training reward (or a preference margin, which keeps widening as a model overfits
    # its pairs) can climb on after what is wanted has stopped improving, and a training reward that slows while
    # the eval still climbs at full pace is the reward nearing its ceiling, not the model.
    curve = d.eval.curves[0] if d.eval.curves else None
    if curve is not None and curve.points >= 4:
        # A climb the latest half of the evaluations rules in counts too, unless the learning rate was annealed to
        # about 0 at the end (a late rise under a decaying schedule is the annealing; more steps need a new schedule).
        return (_eval_climbing(curve) or (curve.late_rise and not _lr_annealed(d))) and not curve.slowing
    return _still_improving(d) and not d.reward.slowing


def _lr_annealed(d: Diagnostics) -> bool:
    """The learning rate ended at a tenth of its peak or less (a decaying schedule run to its end)."""
    lr = d.signals.get("lr")
    return lr is not None and lr.peak > 0 and lr.now <= 0.1 * lr.peak


EVAL_RISE_ERRORS = 3.0  # the latest quarter of the evaluations this many standard errors above the one before


def _eval_climbing(curve: EvalCurve) -> bool:
    """A held-out curve still climbing: a clear new high at its latest evaluations, or a clear rise by quarters.

    Frequent evaluations of a steady climb gain under a noise unit each, so the latest quarter of them is compared
    with the quarter before as well.
    """
    return curve.new_high_noise >= 1.0 or curve.recent_rise_noise >= EVAL_RISE_ERRORS


def _eval_stands_still(d: Diagnostics) -> EvalCurve | None:
    """The preferred held-out curve when its latest evaluations set no new best (a flat eval is not a climb)."""
    curve = d.eval.curves[0] if d.eval.curves else None
    return curve if curve is not None and curve.points >= 4 and not _eval_climbing(curve) else None


def _still_improving(d: Diagnostics) -> bool:
    """Rising now, or up over the run with its best stretch the latest one and no plateau shown.

    A finished run is stopped on positive evidence that it levelled off; a noisy latest stretch after a steady
    climb that ends at its best is still a climb.
    """
    r = d.reward
    # A preference run's training margin and pair accuracy keep rising as the training pairs are learnt ever more
    # surely: with the held-out measures standing still, that is no improvement.
    if r.metric in ("pref_margin", "pref_accuracy") and _eval_stands_still(d) is not None:
        return False
    if r.trend == "rising":
        return True
    kinds = {f.kind for f in r.findings}
    if kinds & {"reward_plateau", "reward_converged", "reward_no_progress", "reward_below_start"}:
        return False
    best, last = d.best_checkpoint, d.run.last_step or 0
    at_best = best.best_step is not None and not best.behind and last - best.best_step <= 0.1 * last
    if _eval_stands_still(d) is not None:
        return False
    return "reward_unclear" in kinds and at_best and (r.now or 0) > (r.start or 0)


def _too_early(d: Diagnostics) -> bool:
    reward = d.signals.get(d.reward.metric or "")
    if reward is None:
        return False
    if d.run.progress is not None and d.run.progress < EARLY_PROGRESS:
        return True
    return reward.points < EARLY_POINTS


EARLY_DIP_SHARE = 0.1  # of the planned steps: a dip from the start, recovering, is adaptation this early
RECOVERING_NOISE = 2.0  # the latest evaluations' rise, in the eval's noise units, that says it is climbing back


def _early_dip_recovering(d: Diagnostics) -> bool:
    """The held-out eval's best is its first evaluation, the run is in its first tenth, and it is climbing back.

    Going back to the starting weights this early throws away the adaptation the run has paid for; a dip that is
    already reversing is no decline yet (a breakage or a divergence is read on its own).
    """
    best = d.best_checkpoint
    curve = d.eval.curves[0] if d.eval.curves else None
    if d.run.progress is None or d.run.progress >= EARLY_DIP_SHARE or best.basis != "eval" or curve is None:
        return False
    summary = d.signals.get(curve.metric)
    if best.breakage_step is not None or best.best_step is None or summary is None or (
            best.best_step > summary.first_step):
        return False
    return curve.recent_rise_noise >= RECOVERING_NOISE


def _early_reward_sag(d: Diagnostics, w: _Weighed) -> bool:
    """A training-reward sag in the first fifth of a known plan that the held-out eval does not share.

    Early on a policy adapts (longer answers, a new format) and its training reward often sags before it climbs;
    with a held-out eval that shows no decline and nothing broken, there is no better model behind yet.
    """
    if d.run.progress is None or d.run.progress >= EARLY_BUDGET_SHARE or not d.eval.curves:
        return False
    if d.best_checkpoint.breakage_step is not None or any(f.kind == "eval_declining" for f in d.eval.findings):
        return False
    return all(_kind(f) in REWARD_TRAJECTORY for f in w.degradation)


def _reward_sagging(d: Diagnostics, w: _Weighed) -> Verdict:
    return _verdict(d, "continue", 0.45, _top(d, 3),
                    f"Continue: early in the plan (step {d.run.last_step}) the training reward sagged, but the "
                    "held-out eval shows no decline and nothing is broken; a policy adapting early (longer answers, a "
                    "new format) often pays training reward first. Watch that the reward turns up.",
                    w, actions=["Assess again after the next few evaluations: if the held-out eval starts to fall "
                                "with the reward, go back to the best point and lower the learning rate."])


def _dip_recovering(d: Diagnostics, w: _Weighed) -> Verdict:
    return _verdict(d, "continue", 0.45, _top(d, 3),
                    f"Continue: early in the plan (step {d.run.last_step}) the held-out eval dipped below where it "
                    "started and is climbing back; an early dip while the policy adapts (to the answer format, the "
                    "sampling settings) is common. Watch that it recovers past the start.",
                    w, actions=["Assess again after the next few evaluations: if the eval stops climbing below its "
                                "start, go back to the starting weights and lower the learning rate."])


def _too_early_to_judge(d: Diagnostics, w: _Weighed) -> Verdict:
    return _verdict(d, "continue", 0.4, _top(d, 3),
                    f"Continue: at step {d.run.last_step} it is too early to judge; look again after more steps.",
                    w, actions=["Assess again once reward and KL have a few dozen logged points."])


def _too_few_points(d: Diagnostics) -> bool:
    """So few logged rewards that no level, let alone a decline from one, can be read (only a divergence can)."""
    reward = d.signals.get(d.reward.metric or "")
    return reward is not None and reward.points < EARLY_POINTS


# A cause that no amount of waiting fixes: every completion cut at the cap scores nothing, whatever the task.
NO_SIGNAL_CAUSES = frozenset({"length_at_cap_from_start"})


def _thin_signal_early(d: Diagnostics, w: _Weighed) -> bool:
    """Almost no signal yet, early in a known budget, with no cause on the sheet that waiting cannot fix.

    A hard task gives a few solved groups per batch, or none, for the first stretch of a run, and often lifts off
    once the first successes pull the rest along (more so while a warm-up still shrinks every update). Before a
    fifth of the planned steps that is not yet a verdict; a reward identical everywhere, or completions all cut at
    the cap, are (they are setup faults at once).
    """
    return (all(f.kind == "no_learning_signal" for f in w.setup_failure) and _early_in_budget(d)
            and not any(f.kind in NO_SIGNAL_CAUSES and f.severity in ("warning", "critical") for f in d.findings))


def _signal_may_lift_off(d: Diagnostics, w: _Weighed) -> Verdict:
    lr = d.signals.get("lr")
    warming = (f"the learning rate is still warming up ({num(lr.now)} now, rising) and " if lr is not None
               and _warming_up(d) else "")
    headline = (f"Continue for now: almost no learning signal yet, but {warming}only {d.run.progress:.0%} of the "
                "planned steps are done, and hard tasks often lift off late; if nothing has moved by a fifth of the "
                "plan, stop.")
    return _verdict(d, "continue", 0.4, w.setup_failure, headline, w, actions=[
        "If the reward still sits at its floor with almost every group alike at a fifth of the plan, stop and make the "
        "task reachable (easier prompts, partial credit, a checked answer format).",
        "Read a few completions now: a reward that cannot parse the answers looks exactly like a task out of reach."])


def _no_signal(d: Diagnostics, w: _Weighed) -> Verdict:
    identical = any(f.kind == "identical_rewards" for f in w.setup_failure)
    headline = ("Stop: every completion has scored the same since the start, so there is nothing to learn from; fix "
                "the reward before spending more GPU time." if identical else
                "Stop: the run has had no learning signal since the start (see the evidence), so more steps buy "
                "nothing; fix the reward or the data before spending more GPU time.")
    cost = _zero_signal_cost(d)
    if cost:
        headline = headline[:-1] + f" ({cost})."
    return _verdict(d, "stop", 0.9, w.setup_failure, headline, w, actions=[
        "Check the reward function on a handful of real completions (parsing, answer extraction, the expected "
        "format), and that a correct answer can score at all.",
        "Check that prompts and reference answers line up and that the task is within reach of the model (a few "
        "solved prompts per batch); then restart from the base model."])


def _went_past_best(d: Diagnostics, w: _Weighed, degradation: float, checkpoints: list[Checkpoint]) -> Verdict:
    best = d.best_checkpoint
    evidence = [*w.diverged, *w.degradation]
    confidence = min(0.95, 0.6 + 0.08 * degradation + (0.1 if best.basis == "eval" else 0.0))
    last = d.run.last_step or 0
    target = best.best_step
    causes = _causes(d)
    fix = f" Before resuming, address what drove it: {causes}." if causes else ""
    if target is None:
        return _verdict(d, "stop", confidence, evidence,
                        f"Stop: the run is getting worse and no earlier point can be shown to be better.{fix}", w,
                        actions=["Keep the current checkpoint only if its held-out quality is acceptable."]
                        + ([f"Change the setup before any restart: {causes}."] if causes else []))
    gap = last - target
    interval = d.run.logging_interval or 1
    behind = best.behind or best.breakage_step is not None
    if gap < interval or (not behind and gap <= NEGLIGIBLE_SHARE * last):
        return _verdict(d, "stop", confidence, evidence,
                        f"Stop: the run is getting worse and there is no earlier point clearly better than now.{fix}",
                        w, actions=["Keep the current checkpoint only if its held-out quality is acceptable."]
                        + ([f"Change the setup before any restart: {causes}."] if causes else []))
    on_disk = [c for c in checkpoints if c.step <= target]
    cost = _cost_since_best(d)
    why = f"the run was at its best around step {target} and has been getting worse since{cost}."
    actions: list[str] = []
    if on_disk:
        chosen = on_disk[-1]
        step, path = chosen.step, chosen.path
        headline = f"Roll back to {chosen.path} (step {chosen.step}): {why}{fix}"
        actions.append(f"Restore {chosen.path} (step {chosen.step}).")
    else:
        step, path = target, None
        headline = f"Roll back to step {target}: {why}{fix}"
        actions.append(_restore_elsewhere(d, target, checkpoints))
    if causes:
        actions.append(f"Change the setup before resuming: {causes}.")
    if not checkpoints:
        actions.append(_save_more_often(d))
    return _verdict(d, "rollback", confidence, evidence, headline, w, rollback_step=step, actions=actions,
                    rollback_checkpoint=path)


def _restore_elsewhere(d: Diagnostics, target: int, checkpoints: list[Checkpoint]) -> str:
    """What to restore when no checkpoint at or before the target is in the run directory."""
    best = d.best_checkpoint
    if best.expected_checkpoint_step:
        saved = (f"with a save interval of {best.save_steps} steps that is the checkpoint of step "
                 f"{best.expected_checkpoint_step}")
    elif best.save_steps:
        saved = "the save interval puts no checkpoint that early: restart from the base model"
    else:
        saved = "wherever your checkpoints are saved"
    there = f" (the run directory's earliest is step {checkpoints[0].step})" if checkpoints else ""
    return (f"Restore the newest checkpoint saved at or before step {target}{there}: {saved}. If none was kept, "
            f"re-run to step {target} with the fix below.")


def _save_more_often(d: Diagnostics) -> str:
    last = d.run.last_step or 0
    every = max(1, round(last / 10, -1) or last // 10 or 1)
    return (f"Keep checkpoints in the run directory (e.g. every {every} steps, a tenth of this run) so the next "
            "rollback is one restore away.")


def _cost_since_best(d: Diagnostics) -> str:
    c = d.compute
    if not c.steps_since_best:
        return ""
    if c.gpu_hours_since_best:
        return f" ({c.steps_since_best} steps, about {c.gpu_hours_since_best:.1f} GPU-hours, spent since)"
    if c.hours_since_best:
        return f" ({c.steps_since_best} steps, about {c.hours_since_best:.1f} hours of training, spent since)"
    return f" ({c.steps_since_best} steps spent since)"


def _zero_signal_cost(d: Diagnostics) -> str:
    c = d.compute
    reward = d.signals.get(d.reward.metric or "")
    # Only when such batches are most of the run: a count of a few exactly-zero batches would understate a run
    # whose every batch carries almost no signal (a reward just above 0 everywhere).
    if not c.zero_signal_steps or (reward is not None and c.zero_signal_steps < 0.5 * reward.points):
        return ""
    hours = f", about {c.hours_on_zero_signal:.1f} hours," if c.hours_on_zero_signal else ""
    return f"{c.zero_signal_steps} steps{hours} went into batches that carried no gradient"


def _spent(d: Diagnostics, w: _Weighed, spent: float) -> Verdict:
    kinds = {_kind(f) for f in w.spent}
    confidence = min(0.9, 0.55 + 0.1 * spent)
    if "reward_saturated" in kinds:
        headline = ("Stop: reward is at its ceiling and the groups no longer disagree, so there is nothing left to "
                    "learn from these prompts; keep the current model.")
        actions = ["Keep the latest checkpoint.", "For more gains, move to harder prompts (ones the model solves "
                   "only sometimes) rather than training longer."]
    elif "signal_thinning" in kinds:
        headline = ("Stop: the reward has stopped improving and nearly every group of completions now scores alike, so "
                    "almost no batch carries a gradient; the current weights are as good as any, and more steps of "
                    "this setup have little left to learn from.")
        actions = ["Keep the current checkpoint.",
                   "To go on, restore exploration or difficulty first (a higher sampling temperature or clip ceiling, "
                   "larger groups, or prompts the model solves only sometimes)."]
    elif "dynamic_sampling_starved" in kinds:
        headline = ("Stop: dynamic sampling now finds few groups whose completions disagree, so each step pays several "
                    "generation rounds for a thin signal, and the held-out eval is not improving; the current weights "
                    "are as good as any.")
        actions = ["Keep the current checkpoint.",
                   "To go on, refresh the prompt pool with problems the model solves only sometimes (drop the ones it "
                   "always or never solves) rather than training longer on this one."]
    elif "critic_not_learning" in kinds:
        headline = ("Stop: the critic has never learnt to predict the returns (explained variance at or below 0 "
                    "throughout), so the policy is trained on advantages that are noise; fix the critic first.")
        actions = ["Keep the current checkpoint (nothing later will be better while the critic is broken).",
                   "Check the critic's learning rate and warm-up (critic_warmup), value clipping and the value head "
                   "before training further."]
    elif "reward_no_progress" in kinds:
        steps = (d.run.last_step or 0) - (d.signals[d.reward.metric or ""].first_step if d.reward.metric in d.signals
                                          else 0)
        headline = (f"Stop: after {steps} steps {d.reward.metric} is where it started and never rose on the way; the "
                    "run is not learning, and more steps of the same setup will not change that.")
        actions = ["Keep the current checkpoint (no step is better than the start).",
                   "Check the setup before training further: the learning rate (too low to move the policy?), the "
                   "reward (does it ever separate good completions from bad?), and prompt difficulty."]
    elif "task_component_flat" in kinds:
        headline = ("Stop: the reward component that says the task was solved has not moved over the whole run; the "
                    "total moves only on its other parts, so more steps will not teach the task.")
        actions = ["Keep the current checkpoint (on the task it is as good as any).",
                   "Check that the task reward can fire (a few solved prompts per batch), or move to prompts the model "
                   "solves sometimes, before training further."]
    elif "eval_plateau" in kinds and "eval_not_transferring" not in kinds:
        headline = ("Stop: the held-out eval has not moved over the latest half of the run, so on what matters the "
                    "run has converged; more steps buy nothing measurable.")
        actions = ["Keep the current checkpoint (by the held-out eval it is as good as any).",
                   "For more gains, change the recipe (harder prompts, a better reward) rather than training longer."]
    elif "eval_not_transferring" in kinds:
        headline = ("Stop: the training reward rises but the held-out eval does not move, so the gains do not "
                    "transfer; more steps only fit the training prompts.")
        actions = ["Keep the current checkpoint (by the held-out eval it is as good as any).",
                   "Check the eval (does it load the current weights, parse answers the same way?) and the training "
                   "reward for shortcuts before training further."]
    elif "component_saturated_other_levelled_off" in kinds:
        headline = ("Stop: one reward component is at its ceiling and the one that matters stopped improving long "
                    "ago; the reward left to learn from is the easy part, so more steps buy nothing.")
        actions = ["Keep the latest checkpoint (the component that matters is no worse than at its plateau).",
                   "Down-weight or condition the saturated component on correctness, or move to harder prompts, "
                   "before training further."]
    elif "kl_up_reward_flat" in kinds:
        headline = ("Stop: KL keeps rising while reward has stopped improving; further steps only move the model "
                    "away from its reference for no gain.")
        actions = ["Keep the current checkpoint: reward is no better anywhere since it levelled off.",
                   "If more improvement is needed, change the recipe (data, reward, learning rate) rather than "
                   "training longer."]
    elif kinds & {"length_truncation", "length_at_cap_from_start"}:
        headline = ("Stop: a large share of completions is cut off at the length cap while reward does not improve; "
                    "the reward is scoring truncated answers.")
        actions = ["Raise max_completion_length (or add a length penalty) before continuing.",
                   "Check a few truncated completions: rambling or repetition means the policy, not the cap, is the "
                   "problem."]
    elif "loss_sign_reversal" in kinds:
        headline = ("Stop: the policy loss changed sign and stayed there while reward does not improve: the updates "
                    "now push away from what was working.")
        actions = ["Keep the current checkpoint; check the learning rate and the advantage normalisation before "
                   "training further."]
    elif "reward_converged" in kinds:
        metric = d.reward.metric or "reward"
        headline = (f"Stop: {metric} has converged, flat for at least as long as it took to climb, with nothing "
                    "getting worse: the current weights are as good as any, and more steps of this recipe are "
                    "unlikely to pay.")
        actions = ["Keep the current checkpoint.",
                   "For more gains, change the recipe (harder prompts, a better reward, a higher learning rate or "
                   "KL budget) rather than training longer."]
    elif "shaped_reward_declined" in kinds:
        headline = ("Stop: the score's latest gains cost more KL than they are worth (the KL-penalised reward is down "
                    "from its peak) and the held-out eval shows none of them, holding what it gained; more steps only "
                    "move the policy away from its reference, and the current weights are as good as any by the eval.")
        actions = ["Keep the current checkpoint (by the held-out eval it is as good as any).",
                   "To go on, raise the KL penalty (beta) or check the reward model for an exploit before training "
                   "further."]
    else:
        headline = "Stop: the run is no longer learning (the preference loss is not falling)."
        actions = ["Check the learning rate, beta and the preference pairs before restarting."]
    if d.run.state == "finished":
        headline = headline.replace("Stop:", "Stop (the run has finished; keep its final weights):", 1)
    return _verdict(d, "stop", confidence, w.spent, headline, w, actions=actions)


def _finished_on_plateau(d: Diagnostics, w: _Weighed) -> Verdict:
    r = d.reward
    where = f" since about step {r.plateau_start}" if r.plateau_start is not None else ""
    metric = r.metric or "the reward"
    curve = _eval_stands_still(d)
    if curve is not None and curve.peak_step >= curve.now_step:
        # Its best is the latest evaluation, but by less than the noise can show: ended at its best, not climbing.
        headline = (f"Stop: the run has reached its planned end ({d.run.state_reason}) and held-out {curve.metric} "
                    f"ends at its best ({num(curve.peak)} at step {curve.peak_step}) by less than its noise, without a "
                    "climb the noise can show: no case for extending it; keep the final weights.")
    elif curve is not None:
        headline = (f"Stop: the run has reached its planned end ({d.run.state_reason}) and held-out {curve.metric} has "
                    f"not improved on its best ({num(curve.peak)} at step {curve.peak_step}) since; keep the final "
                    "weights.")
    elif r.trend == "rising" and r.slowing:
        headline = (f"Stop: the run has reached its planned end ({d.run.state_reason}) and the rise of {metric} has "
                    f"slowed to under half its earlier rate ({num(r.now)} now): more steps would buy little; keep the "
                    "final weights.")
    elif _still_improving(d):
        headline = (f"Stop: the run has reached its planned end ({d.run.state_reason}) and {metric} ends at its best "
                    f"({num(r.now)}) without a rise the noise can show: no case for extending it; keep the final "
                    "weights.")
    else:
        headline = (f"Stop: the run has reached its planned end ({d.run.state_reason}) and {metric} is no longer "
                    f"improving{where} ({num(r.now)} now); keep the final weights.")
    return _verdict(d, "stop", 0.65, _plateau_evidence(d), headline, w, actions=[
        "Keep the final checkpoint: no earlier point is better by more than noise.",
        "For more gains, change the recipe (harder prompts, a better reward) rather than training longer."])


def _continue(d: Diagnostics, w: _Weighed) -> Verdict:
    reward = d.reward
    rising = reward.trend == "rising"
    concerns = [*w.degradation, *w.other_warnings]
    confidence = 0.75 if rising and not concerns else 0.6 if not concerns else 0.5
    kinds = {f.kind for f in reward.findings}
    finished = d.run.state == "finished"
    if rising and finished:
        headline = (f"Continue (extend the run): it has reached its planned end with {reward.metric} still rising; "
                    "more steps are likely to pay")
    elif rising:
        slowing = " though the rise is slowing" if reward.slowing else ""
        headline = f"Continue: {reward.metric} is still rising{slowing}"
    elif "reward_unclear" in kinds and reward.start is not None and reward.now is not None and (
            reward.now > reward.start):
        # Up over the run, with a latest stretch too noisy to call: neither "flat" nor "converged" describes it.
        headline = (f"Continue: {reward.metric} is up from {num(reward.start)} to {num(reward.now)} over the run and "
                    "its latest stretch is too noisy to say whether it is still rising")
    elif d.kl_reward.quadrant_now == "kl_stable_reward_flat" and kinds & {
            "reward_plateau", "reward_converged", "reward_no_progress"}:
        headline = ("Continue, but the run looks converged: reward and KL are both flat; stop if the current level "
                    "is good enough")
    else:
        headline = f"Continue: nothing in the curves says the run is spent or getting worse ({_quadrant_text(d)})"
    if concerns:
        headline += f"; watch {', '.join(sorted({f.signal for f in concerns})[:3])}"
    headline += "."
    evidence = [f for f in d.findings if f.kind in ("reward_rising", "kl_up_reward_up", "kl_stable_reward_up",
                                                    "eval_at_best", "eval_near_best", "eval_holding")] + concerns
    if finished:
        actions = ["Extend the run from its final checkpoint (raise the planned steps); keep the final weights if "
                   "you cannot."]
    elif d.run.state == "stalled":
        actions = [f"The run looks stalled ({d.run.state_reason}): check the job, then resume from its latest "
                   "checkpoint."]
    else:
        actions = ["Assess again after the next checkpoint."]
    if concerns:
        actions.append("Look at a few completions around the flagged steps before the next check.")
    return _verdict(d, "continue", confidence, evidence or _top(d, 3), headline, w, actions=actions)


def _plateau_evidence(d: Diagnostics) -> list[Finding]:
    """What a stop on a levelled-off run rests on: the reward's, the eval's and the KL/reward findings."""
    return [f for f in d.findings if f.signal in (d.reward.metric, "eval", "kl_reward")][:4] or _top(d, 3)


def _died_on_plateau(d: Diagnostics, w: _Weighed) -> Verdict:
    r = d.reward
    curve = _eval_stands_still(d)
    what = (f"held-out {curve.metric} had not improved on its best ({num(curve.peak)} at step {curve.peak_step})"
            if curve is not None else f"{r.metric or 'the reward'} was no longer climbing ({num(r.now)} now)")
    how = "died" if d.run.state == "crashed" else "looks dead"
    headline = (f"Stop: the job {how} at step {d.run.last_step} ({d.run.state_reason}) and {what}: a restart would "
                "buy little; keep the newest saved weights.")
    return _verdict(d, "stop", 0.6, _plateau_evidence(d), headline, w, actions=[
        "Keep the newest checkpoint saved before the job stopped: no earlier point is better by more than noise.",
        "Fix what killed the job before any new run; for more gains, change the recipe rather than resuming it."])


def _quadrant_text(d: Diagnostics) -> str:
    q = d.kl_reward.quadrant_now
    return q.replace("_", " ") if q else "KL not measured"


def _causes(d: Diagnostics) -> str:
    """What to change before resuming, from the patterns that came with the decline."""
    kinds = {_kind(f) for f in d.findings if f.severity in ("warning", "critical")}
    out = []
    raised = next((f for f in d.findings if f.kind == "lr_raised" and f.steps), None)
    best = d.best_checkpoint
    if raised is not None and best.best_step is not None and best.behind and raised.steps[0] > best.best_step:
        out.append(f"undo the learning-rate change at step {raised.steps[0]} (see the evidence)")
    changed = d.best_checkpoint.reward_changed_step
    if changed is not None:
        out.append(f"find out what changed in the reward at step {changed} (a reward model swapped or refreshed, a "
                   "new reward function) and put back the one the good stretch was trained on")
    if kinds & {"entropy_blow_up", "entropy_lurch", "kl_jump", "loss_magnitude_blow_up", "loss_discontinuity",
                "grad_norm_regime_change", "grad_norm_run_up", "policy_breakdown"}:
        out.append("lower the learning rate or tighten ratio clipping (the policy is taking steps too large)")
    if "kl_up_reward_down" in kinds or "kl_unbounded" in kinds:
        out.append("raise the KL penalty (beta) or lower the learning rate")
    if kinds & {"length_explosion_to_cap", "length_approaching_cap", "length_reward_coupled", "length_truncation",
                "length_truncation_high", "length_split_to_extremes", "length_at_cap_from_start"}:
        out.append("check the reward for a length bias and the completion cap (truncated answers are scored)")
    if "narrowing_without_gain" in kinds or "entropy_collapse" in kinds:
        out.append("keep the policy exploring (an entropy bonus, a higher clip ceiling, or a higher sampling "
                   "temperature)")
    if kinds & {"component_saturated_other_stalls", "component_saturated_other_levelled_off"}:
        out.append("down-weight or condition the saturated reward component on correctness")
    if kinds & {"reward_hacking", "reward_per_kl_collapsed", "shortest_completions_collapsed"}:
        out.append("inspect completions from after the best point for reward hacking, then fix the reward (or raise "
                   "beta) so it cannot be gamed that way")
    if "chosen_logps_collapse" in kinds:
        out.append("lower the learning rate or raise beta, or add an SFT term on the chosen answers (their "
                   "likelihood must not collapse)")
    if "critic_diverged" in kinds:
        out.append("lower the critic's learning rate or tighten value clipping (the critic diverged)")
    if "reward_floor_no_signal" in kinds:
        out.append("restart from the best point; at the floor every group scores the same and nothing is learnt")
    return "; ".join(out)


def _top(d: Diagnostics, n: int) -> list[Finding]:
    # "KL is not measured" is a blind spot (`could_not_see` carries it), not evidence for a decision.
    return [f for f in d.findings if f.kind != "kl_not_measured"][:n]


def _verdict(
    d: Diagnostics, decision: Decision, confidence: float, evidence: list[Finding], headline: str, w: _Weighed,
    rollback_step: int | None = None, actions: list[str] | None = None, rollback_checkpoint: str | None = None,
) -> Verdict:
    used = {id(f) for f in evidence}
    risks = [f"{f.signal}: {f.observation}" for f in sorted(
        [*w.other_warnings, *w.degradation, *w.spent], key=lambda f: SEVERITY_ORDER[f.severity]) if id(f) not in used]
    ordered = sorted(evidence, key=lambda f: SEVERITY_ORDER[f.severity])
    return Verdict(
        decision=decision, rollback_step=rollback_step if decision == "rollback" else None,
        rollback_checkpoint=rollback_checkpoint if decision == "rollback" else None,
        confidence=round(max(0.3, min(0.95, confidence - 0.03 * _blind_spots(d))), 2),
        headline=headline, rationale=_rationale(d), evidence=[
            Evidence(signal=f.signal, observation=f.observation, steps=f.steps) for f in ordered[:8]],
        risks=risks[:6], recommended_actions=actions or [], could_not_see=list(d.absent),
    )


def _rationale(d: Diagnostics) -> str:
    """The reasoning in the skill guide's order: state, trajectory, KL/reward, signal health, best point."""
    parts = [f"Run: {d.run.state} ({d.run.state_reason})."] if d.run.state_reason else []
    r = d.reward
    if r.metric:
        trajectory = next((f.observation for f in r.findings), f"{r.metric} {num(r.start)} → {num(r.now)}")
        parts.append(f"Trajectory: {trajectory}.")
    kl = d.kl_reward
    if kl.kl_measured and kl.quadrant_now:
        parts.append(f"KL/reward now: {kl.quadrant_now.replace('_', ' ')}.")
    elif kl.kl_absent_reason:
        parts.append("KL: not measured (see what could not be seen).")
    signal = [f.observation for f in d.learning_signal.findings]
    if signal:
        parts.append(f"Learning signal: {signal[0]}.")
    for curve in d.eval.curves[:3]:
        parts.append(f"Held-out {curve.metric}: peak {num(curve.peak)} at step {curve.peak_step}, "
                     f"{num(curve.now)} over the last two evaluations (to step {curve.now_step}).")
    parts.append(f"Best point: {d.best_checkpoint.reason}.")
    return " ".join(parts)
