"""The offline judge: the practitioner's reasoning, written down.

It reads the diagnostics the way the skill guide does, in this order:

1. Is there any learning signal at all? Identical rewards from the first step is a setup failure: stop.
2. Has the run gone past its best point? A reward that peaked and fell, a held-out eval that peaked and
   fell, KL rising while reward falls, a collapse to the reward floor, a blow-up of entropy or length with
   reward falling, or a diverged loss: the better model is behind us, so roll back to the checkpoint at or
   before the best point (or stop where there is nothing earlier worth having).
3. Has it done what it can? KL still rising while reward stays flat (drift without benefit), or reward at
   its ceiling with no spread left (nothing more to learn): stop, keeping the current model.
4. Otherwise continue, with every warning listed as a risk to watch.

Stopping a healthy run is the costliest mistake, so a stop needs positive evidence that the run is spent
or broken; noise, an early run, or a flat stretch on its own are reasons to continue and look again.
"""

from __future__ import annotations

from dataclasses import dataclass

from assessor.diagnose.context import num
from assessor.diagnose.models import SEVERITY_ORDER, Diagnostics, Finding
from assessor.judge.base import JudgeRequest, JudgeResult
from assessor.judge.models import Decision, Evidence, Usage, Verdict
from assessor.run import Checkpoint

# Findings that say the model was better earlier, with how much each counts.
# A weight of 2 (or a critical finding of weight 1) is enough on its own: these are the guide's "the better
# model is behind you" patterns. Generation-quality collapses count fully because a reward number can hide
# them (a policy that no longer ends its answers, or samples one answer deterministically, is broken).
DEGRADATION = {
    "reward_peaked_then_declined": 2.0, "eval_declining": 2.0, "kl_up_reward_down": 2.0,
    "reward_floor_no_signal": 2.0, "reward_below_start": 1.5, "train_eval_divergence": 1.0,
    "entropy_blow_up": 1.0, "entropy_collapse": 2.0, "length_explosion_to_cap": 1.0, "length_collapse": 2.0,
    "length_approaching_cap": 1.0,
    "kl_jump": 2.0, "loss_magnitude_blow_up": 1.0, "loss_discontinuity": 0.5,
    "component_saturated_other_stalls": 2.0, "reward_falling": 1.0, "grad_norm_regime_change": 1.0,
    "narrowing_without_gain": 2.0, "length_split_to_extremes": 2.0,
}
# Findings that say the run has nothing more to give (or, for the setup ones, cannot give it as configured).
SPENT = {
    "kl_up_reward_flat": 1.0, "reward_saturated": 1.5, "dpo_loss_flat_at_ln2": 1.5, "loss_sign_reversal": 1.0,
    "length_truncation": 1.0, "dpo_loss_rising": 1.0, "component_saturated_other_levelled_off": 1.0,
}
# These only argue for stopping while reward is not improving: with reward rising they are risks to watch.
SPENT_UNLESS_IMPROVING = frozenset({"loss_sign_reversal", "length_truncation"})
ROLLBACK_BAR = 2.0  # a critical finding, or two warnings that agree
EARLY_PROGRESS = 0.05
EARLY_POINTS = 8


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
    # Entropy and length findings name their pattern in `kind`; fold severities of the same pattern together.
    if finding.signal == "entropy" and "blow" in finding.kind:
        return "entropy_blow_up"
    # Gradients that jump to a new level and stay there: the optimisation changed regime. On its own that is a
    # risk; with a loss blow-up or a falling reward it is the second witness that the run broke.
    if finding.signal == "grad_norm" and finding.kind in ("spike_regime_change", "level_shift"):
        return "grad_norm_regime_change"
    return finding.kind


# Training-reward trajectories that a current, healthy held-out eval overrules (the guide: eval outranks reward).
REWARD_TRAJECTORY = frozenset({"reward_peaked_then_declined", "reward_below_start", "reward_falling"})


def _eval_vouches(d: Diagnostics, finding: Finding) -> bool:
    """A held-out eval at or near its best, measured after this reward finding's onset, outranks it.

    A sagging training reward under autocorrelated noise can look like a decline while the held-out score,
    the closer measure of what is wanted, is still at its best. An eval from before the sag says nothing.
    """
    e = d.eval
    if _kind(finding) not in REWARD_TRAJECTORY or e.now_step is None or not finding.steps:
        return False
    at_best = any(f.kind in ("eval_at_best", "eval_holding") for f in e.findings)
    # An eval that never rose vouches for nothing: holding a level the run started at is not health.
    curve = d.signals.get(f"eval/{e.metric}")
    learned = curve is not None and e.now is not None and e.now - curve.start > 2 * curve.noise
    return at_best and learned and e.now_step >= finding.steps[0] and e.now_step >= 0.9 * (d.run.last_step or 0)


def _sort(d: Diagnostics) -> _Weighed:
    degradation, spent, setup, diverged, other = [], [], [], [], []
    for f in d.findings:
        kind = _kind(f)
        if _eval_vouches(d, f):
            other.append(f)  # a risk to watch, not a reason to throw steps away
        elif kind == "identical_rewards":
            setup.append(f)
        elif kind == "nonfinite" and f.severity == "critical":
            diverged.append(f)
        elif kind in DEGRADATION and f.severity in ("warning", "critical"):
            degradation.append(f)
        elif kind in SPENT and f.severity in ("warning", "critical", "watch") and not (
                kind in SPENT_UNLESS_IMPROVING and (d.reward.trend == "rising" or (f.severity == "watch"
                                                    and kind == "length_truncation"))):
            spent.append(f)
        elif f.severity in ("warning", "critical"):
            other.append(f)
    return _Weighed(degradation, spent, setup, diverged, other)


def decide(d: Diagnostics, checkpoints: list[Checkpoint] | None = None) -> Verdict:
    """The verdict for one set of diagnostics (`checkpoints`: those on disk, oldest first)."""
    checkpoints = checkpoints or []
    w = _sort(d)
    if w.setup_failure:
        return _verdict(d, "stop", 0.9, w.setup_failure,
                        "Stop: every completion has scored the same since the start, so there is nothing to learn "
                        "from; fix the reward before spending more GPU time.", w,
                        actions=["Check the reward function on a handful of real completions (parsing, answer "
                                 "extraction, the expected format).",
                                 "Check that prompts and reference answers line up, then restart from the base model."])
    degradation = w.weight(w.degradation, DEGRADATION)
    if _too_early(d) and not w.diverged and degradation < ROLLBACK_BAR:
        return _verdict(d, "continue", 0.4, _top(d, 3),
                        f"Continue: at step {d.run.last_step} it is too early to judge; look again after more steps.",
                        w, actions=["Assess again once reward and KL have a few dozen logged points."])

    if w.diverged or degradation >= ROLLBACK_BAR:
        return _went_past_best(d, w, degradation, checkpoints)
    spent = w.weight(w.spent, SPENT)
    if spent >= 1.0:
        return _spent(d, w, spent)
    return _continue(d, w, degradation)


def _too_early(d: Diagnostics) -> bool:
    reward = d.signals.get(d.reward.metric or "")
    if reward is None:
        return False
    if d.run.progress is not None and d.run.progress < EARLY_PROGRESS:
        return True
    return reward.points < EARLY_POINTS


# Findings that locate a best point in reward or eval themselves (a peak, then less).
DECLINE_KINDS = frozenset({
    "reward_peaked_then_declined", "eval_declining", "kl_up_reward_down", "reward_below_start", "reward_falling",
    "reward_floor_no_signal", "train_eval_divergence", "component_saturated_other_stalls",
})
# Degradations of generation quality: the model was better before they began, whatever reward says.
ONSET_KINDS = frozenset({
    "length_explosion_to_cap", "entropy_blow_up", "entropy_collapse", "length_collapse", "kl_jump",
    "grad_norm_regime_change", "narrowing_without_gain", "length_split_to_extremes",
})


def _target_step(d: Diagnostics, w: _Weighed) -> int | None:
    """Where to go back to: the best point, or earlier if generation quality started degrading before it."""
    best = d.best_checkpoint.best_step
    # A saturated component hides the one that matters: go back to where that one was best.
    component_best = [f.steps[1] for f in w.degradation
                      if _kind(f) == "component_saturated_other_stalls" and len(f.steps) > 1]
    if component_best:
        best = component_best[0] if best is None else min(best, component_best[0])
    onsets = [f.steps[0] for f in w.degradation if _kind(f) in ONSET_KINDS and f.steps]
    if onsets:
        first_interval = d.run.logging_interval or 1
        before_onset = max(d.signals[d.reward.metric].first_step if d.reward.metric in d.signals else 0,
                           min(onsets) - first_interval)
        # Without a decline in reward or eval, the "best" step is only the luckiest stretch of a flat curve;
        # the onset of the breakage is what the data actually locate.
        declined = any(_kind(f) in DECLINE_KINDS for f in w.degradation)
        return before_onset if best is None or not declined else min(best, before_onset)
    return best


def _went_past_best(d: Diagnostics, w: _Weighed, degradation: float, checkpoints: list[Checkpoint]) -> Verdict:
    best = d.best_checkpoint
    evidence = [*w.diverged, *w.degradation]
    confidence = min(0.95, 0.6 + 0.08 * degradation + (0.1 if best.basis == "eval" else 0.0))
    last = d.run.last_step or 0
    target = _target_step(d, w)
    causes = _causes(d)
    fix = f" Before resuming, address what drove it: {causes}." if causes else ""
    on_disk = [c for c in checkpoints if target is not None and c.step <= target]
    # A rollback has to be something the user can do: it needs a checkpoint on disk at or before the best point.
    if target is not None and on_disk and last - target > max(1, 0.05 * last):
        chosen = on_disk[-1]
        actions = [f"Restore {chosen.path} (step {chosen.step})."]
        if causes:
            actions.append(f"Change the setup before resuming: {causes}.")
        return _verdict(d, "rollback", confidence, evidence,
                        f"Roll back to {chosen.path}: the run was better around step {target} and has been getting "
                        f"worse since.{fix}", w, rollback_step=chosen.step, actions=actions,
                        rollback_checkpoint=chosen.path)
    if target is not None and last - target > max(1, 0.05 * last):
        earliest = f" (the earliest on disk is step {checkpoints[0].step})" if checkpoints else ""
        return _verdict(d, "stop", confidence, evidence,
                        f"Stop: the run was better around step {target} and has been getting worse since, and no "
                        f"checkpoint from then is on disk{earliest}.{fix}", w,
                        actions=[f"If a checkpoint near step {target} was saved elsewhere, restore it; otherwise "
                                 f"retrain to about step {target}."]
                        + ([f"Change the setup before any restart: {causes}."] if causes else []))
    return _verdict(d, "stop", confidence, evidence,
                    f"Stop: the run is getting worse and there is no earlier point clearly better than now.{fix}",
                    w, actions=["Keep the current checkpoint only if its held-out quality is acceptable."]
                    + ([f"Change the setup before any restart: {causes}."] if causes else []))


def _spent(d: Diagnostics, w: _Weighed, spent: float) -> Verdict:
    saturated = any(_kind(f) == "reward_saturated" for f in w.spent)
    drifting = any(_kind(f) == "kl_up_reward_flat" for f in w.spent)
    carried = any(_kind(f) == "component_saturated_other_levelled_off" for f in w.spent)
    confidence = min(0.9, 0.55 + 0.1 * spent)
    truncation = any(_kind(f) == "length_truncation" for f in w.spent)
    reversal = any(_kind(f) == "loss_sign_reversal" for f in w.spent)
    if saturated:
        headline = ("Stop: reward is at its ceiling and the groups no longer disagree, so there is nothing left to "
                    "learn from these prompts; keep the current model.")
        actions = ["Keep the latest checkpoint.", "For more gains, move to harder prompts (ones the model solves "
                   "only sometimes) rather than training longer."]
    elif carried:
        headline = ("Stop: one reward component is at its ceiling and the one that matters stopped improving long "
                    "ago; the reward left to learn from is the easy part, so more steps buy nothing.")
        actions = ["Keep the latest checkpoint (the component that matters is no worse than at its plateau).",
                   "Down-weight or condition the saturated component on correctness, or move to harder prompts, "
                   "before training further."]
    elif drifting:
        headline = ("Stop: KL keeps rising while reward has stopped improving; further steps only move the model "
                    "away from its reference for no gain.")
        actions = ["Keep the checkpoint nearest the end of the reward plateau's start.",
                   "If more improvement is needed, change the recipe (data, reward, learning rate) rather than "
                   "training longer."]
    elif truncation:
        headline = ("Stop: a large share of completions is cut off at the length cap while reward does not improve; "
                    "the reward is scoring truncated answers.")
        actions = ["Raise max_completion_length (or add a length penalty) before continuing.",
                   "Check a few truncated completions: rambling or repetition means the policy, not the cap, is the "
                   "problem."]
    elif reversal:
        headline = ("Stop: the policy loss changed sign and stayed there while reward does not improve: the updates "
                    "now push away from what was working.")
        actions = ["Keep the checkpoint from before the reversal; check the learning rate and the advantage "
                   "normalisation."]
    else:
        headline = "Stop: the run is no longer learning (the preference loss is not falling)."
        actions = ["Check the learning rate, beta and the preference pairs before restarting."]
    return _verdict(d, "stop", confidence, w.spent, headline, w, actions=actions)


def _continue(d: Diagnostics, w: _Weighed, degradation: float) -> Verdict:
    reward = d.reward
    rising = reward.trend == "rising"
    concerns = [*w.degradation, *w.other_warnings]
    confidence = 0.75 if rising and not concerns else 0.6 if not concerns else 0.5
    kinds = {f.kind for f in reward.findings}
    if rising:
        slowing = " though the rise is slowing" if reward.slowing else ""
        headline = f"Continue: {reward.metric} is still rising{slowing}"
    elif "reward_unclear" in kinds and reward.start is not None and reward.now is not None and (
            reward.now > reward.start):
        # Up over the run, with a latest stretch too noisy to call: neither "flat" nor "converged" describes it.
        headline = (f"Continue: {reward.metric} is up from {num(reward.start)} to {num(reward.now)} over the run and "
                    "its latest stretch is too noisy to say whether it is still rising")
    elif d.kl_reward.quadrant_now == "kl_stable_reward_flat" and kinds & {"reward_plateau", "reward_no_progress"}:
        headline = ("Continue, but the run looks converged: reward and KL are both flat; stop if the current level "
                    "is good enough")
    else:
        headline = f"Continue: nothing in the curves says the run is spent or getting worse ({_quadrant_text(d)})"
    if concerns:
        headline += f"; watch {', '.join(sorted({f.signal for f in concerns})[:3])}"
    headline += "."
    evidence = [f for f in d.findings if f.kind in ("reward_rising", "kl_up_reward_up", "kl_stable_reward_up",
                                                    "eval_at_best", "eval_holding")] + concerns
    actions = ["Assess again after the next checkpoint."]
    if concerns:
        actions.append("Look at a few completions around the flagged steps before the next check.")
    return _verdict(d, "continue", confidence, evidence or _top(d, 3), headline, w, actions=actions)


def _quadrant_text(d: Diagnostics) -> str:
    q = d.kl_reward.quadrant_now
    return q.replace("_", " ") if q else "KL not measured"


def _causes(d: Diagnostics) -> str:
    """What to change before resuming, from the patterns that came with the decline."""
    kinds = {_kind(f) for f in d.findings if f.severity in ("warning", "critical")}
    out = []
    if kinds & {"entropy_blow_up", "loss_magnitude_blow_up", "loss_discontinuity", "grad_norm_regime_change"}:
        out.append("lower the learning rate or tighten ratio clipping (the policy is taking steps too large)")
    if "kl_up_reward_down" in kinds or "kl_unbounded" in kinds:
        out.append("raise the KL penalty (beta) or lower the learning rate")
    if kinds & {"length_explosion_to_cap", "length_approaching_cap", "length_reward_coupled", "length_truncation",
                "length_split_to_extremes"}:
        out.append("check the reward for a length bias and the completion cap (truncated answers are scored)")
    if "narrowing_without_gain" in kinds or "entropy_collapse" in kinds:
        out.append("keep the policy exploring (an entropy bonus, a higher clip ceiling, or a higher sampling "
                   "temperature)")
    if kinds & {"component_saturated_other_stalls", "component_saturated_other_levelled_off"}:
        out.append("down-weight or condition the saturated reward component on correctness")
    if "reward_floor_no_signal" in kinds:
        out.append("restart from an earlier checkpoint; at the floor every group scores the same and nothing is learnt")
    return "; ".join(out)


def _top(d: Diagnostics, n: int) -> list[Finding]:
    return d.findings[:n]


def _verdict(
    d: Diagnostics, decision: Decision, confidence: float, evidence: list[Finding], headline: str, w: _Weighed,
    rollback_step: int | None = None, actions: list[str] | None = None, rollback_checkpoint: str | None = None,
) -> Verdict:
    used = {id(f) for f in evidence}
    risks = [f"{f.signal}: {f.observation}" for f in sorted(
        [*w.other_warnings, *w.degradation, *w.spent], key=lambda f: SEVERITY_ORDER[f.severity]) if id(f) not in used]
    if decision == "continue" and d.kl_reward.kl_measured is False:
        risks.append("KL is not measured, so drift from the reference cannot be watched directly.")
    ordered = sorted(evidence, key=lambda f: SEVERITY_ORDER[f.severity])
    return Verdict(
        decision=decision, rollback_step=rollback_step if decision == "rollback" else None,
        rollback_checkpoint=rollback_checkpoint if decision == "rollback" else None,
        confidence=round(max(0.3, min(0.95, confidence - 0.03 * len(d.absent))), 2),
        headline=headline, rationale=_rationale(d), evidence=[
            Evidence(signal=f.signal, observation=f.observation, steps=f.steps) for f in ordered[:8]],
        risks=risks[:6], recommended_actions=actions or [], could_not_see=list(d.absent),
    )


def _rationale(d: Diagnostics) -> str:
    """The reasoning in the skill guide's order: trajectory, KL/reward, signal health, best point."""
    parts = []
    r = d.reward
    if r.metric:
        trajectory = next((f.observation for f in r.findings), f"{r.metric} {num(r.start)} → {num(r.now)}")
        parts.append(f"Trajectory: {trajectory}.")
    kl = d.kl_reward
    if kl.kl_measured and kl.quadrant_now:
        parts.append(f"KL/reward now: {kl.quadrant_now.replace('_', ' ')}.")
    elif kl.kl_absent_reason:
        parts.append(f"KL: not measured ({kl.kl_absent_reason}).")
    signal = [f.observation for f in d.learning_signal.findings]
    if signal:
        parts.append(f"Learning signal: {signal[0]}.")
    if d.eval.metric and d.eval.peak_step is not None:
        parts.append(f"Held-out {d.eval.metric}: peak {num(d.eval.peak)} at step {d.eval.peak_step}, "
                     f"now {num(d.eval.now)}.")
    parts.append(f"Best point: {d.best_checkpoint.reason}.")
    return " ".join(parts)
