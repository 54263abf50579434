"""The run's one best point, and the checkpoint on disk nearest at or before it.

The best point is read on the closest measure of what is wanted: a held-out eval when the run logs one, else
the training reward. It is the *newest* step whose level is within noise of the best level reached before
anything broke: among equally good points the latest keeps the most training (every step a rollback gives up
is compute thrown away), and a point inside or after a broken stretch (a length explosion, an entropy
blow-up, a KL jump, a divergence) never qualifies, whatever the reward says there.

Levels of the reward are stretch means (a tenth of the run, as everywhere else), compared with the standard
error of such a mean; eval levels are single evaluations, compared with the eval-to-eval noise (or the sampling
error), and an evaluation counts as good as the best only if the median of it and its neighbours does too: on a
slow slide one lucky evaluation can land within noise of the peak, its neighbours cannot. Every report, plot and
judge uses this one point.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.context import Context, num
from assessor.diagnose.evaluation import (
    LOWER_IS_BETTER,
    TYPICAL_EVAL_SET,
    decline_noise,
    eased,
    eval_score,
    eval_set_size,
    holds_clearly,
    measured_eval_noise,
    much_coarser,
    named_sampling_error,
    named_set_size,
    typical_sampling_error,
)
from assessor.diagnose.kl_reward import primary_reward
from assessor.diagnose.models import (
    BandKind,
    BestCheckpoint,
    EvalDiagnosis,
    Finding,
    LearningSignalDiagnosis,
    RewardComponentsDiagnosis,
    RewardDiagnosis,
)

# Generation-quality and optimisation breakages: the model was better before they began, whatever reward says.
# Each with what it says and how much it counts: a weight of 2 is decisive on its own (a policy that no longer
# ends its answers, or samples one answer, is broken); a weight of 1 needs a second witness, and a critical
# finding counts double. The rules judge weighs these same findings with these same numbers.
BREAKAGE_KINDS: dict[str, tuple[str, float]] = {
    "length_explosion_to_cap": ("completion lengths ran to the cap", 1.0),
    "length_collapse": ("completion lengths collapsed", 2.0),
    "length_split_to_extremes": ("completions split into empty and capped ones", 2.0),
    "entropy_blow_up": ("entropy blew up", 1.0),
    "entropy_collapse": ("entropy collapsed", 2.0),
    "entropy_lurch": ("entropy lurched up", 2.0),
    "kl_jump": ("KL jumped", 2.0),
    "narrowing_without_gain": ("the policy narrowed without gain", 2.0),
    "grad_norm_regime_change": ("the gradient norm changed regime", 1.0),
    "loss_magnitude_blow_up": ("the loss blew up", 1.0),
    "loss_discontinuity": ("the loss jumped", 0.5),
    "nonfinite": ("training diverged to NaN/inf", 2.0),
    "grad_norm_run_up": ("the gradient norm climbed into a divergence", 1.0),
    "policy_reset": ("the policy was reset to its reference (weights lost)", 2.0),
    "reward_hacking": ("reward started to be bought at the task's expense", 2.0),
    "chosen_logps_collapse": ("the chosen completions' likelihood collapsed", 2.0),
    "policy_breakdown": ("KL, entropy, gradient norm and clipping left their levels together", 2.0),
    "critic_diverged": ("the critic diverged (it predicts the returns worse than a constant)", 2.0),
    "turn_with_instruments": ("the reward or eval turned down as the policy's instruments left their course", 2.0),
}
CONFIRMED_BREAKAGE = 2.0
FRESH_TURN = "turn_with_instruments"
# A policy that sharpened (entropy collapsed) or sampled hotter (entropy lurched up) is broken only if quality
# suffered: a held-out eval that rose after it says it did not. Divergence, runaway lengths and the rest break
# generation whatever an eval shows.
OVERRULED_BY_EVAL = frozenset(
    {"entropy_collapse", "entropy_lurch", "kl_jump", "grad_norm_regime_change", "policy_breakdown",
     "turn_with_instruments"})
AS_GOOD_ERRORS = 1.0
STEP_BANDS = 2.0  # a drop in one step this many bands deep is a fall, not the start of a slide


def breakage_kind(f: Finding) -> str | None:
    """The breakage a finding reports, folded to one name per pattern (None when it is not a breakage)."""
    if f.signal == "entropy" and "blow" in f.kind:
        return "entropy_blow_up"
    if f.signal == "grad_norm" and f.kind in ("spike_regime_change", "level_shift"):
        return "grad_norm_regime_change"
    if f.kind == "nonfinite":
        return "nonfinite" if f.severity == "critical" else None
    if f.kind == "length_truncation":  # nearly every completion cut off, from a start where few were
        return "length_explosion_to_cap" if f.severity == "critical" else None
    return f.kind if f.kind in BREAKAGE_KINDS else None


def breakage_weight(f: Finding) -> float:
    """How much a breakage finding counts (0 for any other finding)."""
    kind = breakage_kind(f)
    if kind is None or f.severity not in ("warning", "critical"):
        return 0.0
    return BREAKAGE_KINDS[kind][1] * (2.0 if f.severity == "critical" else 1.0)


def breakage_onset(findings: list[Finding]) -> tuple[int, str] | None:
    """Where the run broke, and what broke: the first breakage, once the breakages together are decisive.

    Their weights must add up to `CONFIRMED_BREAKAGE`: a KL jump or an entropy collapse alone, or a gradient
    regime change together with a loss blow-up. A single weak one is a risk, not a break.
    """
    onsets = sorted((f.steps[0], kind, breakage_weight(f)) for f in findings
                    if (kind := breakage_kind(f)) is not None and f.steps and breakage_weight(f) > 0)
    # A fresh turn is dated by its own test: it neither confirms an earlier, weaker breakage nor moves a confirmed one.
    others = [onset for onset in onsets if onset[1] != FRESH_TURN]
    if sum(weight for _, _, weight in others) >= CONFIRMED_BREAKAGE:
        step, kind, _ = others[0]
        return step, BREAKAGE_KINDS[kind][0]
    turn = next((onset for onset in onsets if onset[1] == FRESH_TURN), None)
    if turn is None or turn[2] < CONFIRMED_BREAKAGE:
        return None
    return turn[0], BREAKAGE_KINDS[FRESH_TURN][0]


@dataclass(frozen=True)
class _Curve:
    """Levels along the basis curve: at each step, and their standard error."""

    steps: np.ndarray
    levels: np.ndarray
    band: float  # "as good as the best": the margin below the best level that still counts
    level_error: float  # the standard error of one level
    now: float  # the level over the latest stretch
    now_error: float  # its standard error, for the decline test
    smoothed: bool
    band_kind: BandKind = "standard_error"  # what the band is (see `BestCheckpoint.band_kind`)
    set_size: int | None = None  # problems in the eval set, read off the scores (a sampling-error band)
    set_named: bool = False  # the set size is the benchmark's, from its name, not the scores' finer grid
    ends: np.ndarray | None = None  # last step each level covers (stretch means), when not the step itself
    own_spread: bool = False  # the band is the evaluations' own spread, finer than the noise the table quotes


def _reward_curve(series: robust.Series) -> _Curve | None:
    n = series.n
    width = robust.stretch_width(n)
    if n < 3 or width < 1:
        return None
    means = robust.window_means(series.values, width)
    centres = series.steps[width // 2: width // 2 + len(means)]
    ends = series.steps[width - 1: width - 1 + len(means)]
    shrink = (1 - series.rho) / (1 + series.rho)
    noise = max(series.scatter, robust.noise_floor(series.values))
    error = noise / math.sqrt(max(1.0, width * shrink))
    # "As good as the best": within one standard error of the best stretch mean. (Two, which the luck of picking
    # the best stretch would argue for, carried targets into the first steps of declines on the real runs.)
    return _Curve(centres, means, AS_GOOD_ERRORS * error, error, float(means[-1]), error, smoothed=width > 1,
                  ends=ends)


def _falling_eval(evaluation: EvalDiagnosis) -> str | None:
    """The held-out series the best point is read on: the preferred one, unless it holds while another falls.

    When one held-out measure collapses (one task of a mix, a gold check beside a proxy score) and the preferred
    one does not, a rollback is about the one that fell: go back to before it fell, the series that fell furthest
    (in its noise units) first.
    """
    if evaluation.metric is None:
        return None
    primary_fell = any(f.kind == "eval_declining" and f.signal == "eval" for f in evaluation.findings)
    # A benchmark much coarser than the preferred one (its set size shows: AIME's 30 problems beside MATH-500) can
    # fall by its own sampling noise; it does not choose the best point while the finer one holds.
    first = evaluation.curves[0].set_size if evaluation.curves else None
    falling = [c for c in evaluation.curves[1:] if any(
        f.kind == "eval_declining" and f.signal == c.metric for f in evaluation.findings) and not much_coarser(
        c.set_size, first)]
    if primary_fell and evaluation.curves:
        # Both fell: the one that fell furthest in its own noise dates the decline most clearly. (A held-out
        # preference loss bounds the target on its own terms: `_preference_loss_cap`.)
        falling = [c for c in falling if c.metric.removeprefix("eval/") not in LOWER_IS_BETTER]
        falling.append(evaluation.curves[0])
    if not falling:
        return evaluation.metric
    return max(falling, key=lambda c: c.decline_noise).metric.removeprefix("eval/")


def _eval_curve(ctx: Context, evaluation: EvalDiagnosis, metric: str) -> _Curve | None:
    if evaluation.points < 3:
        return None
    series = ctx.run.series(metric, "eval")
    values = series.to_numpy()
    if len(values) < 3 or float(np.ptp(values)) == 0.0:
        return None  # an eval that never moved has no best point
    score = eval_score(metric, values)
    noise, floored = measured_eval_noise(score)
    # With few evaluations the table and the decline test read them no finer than their sampling error; "as good
    # as the best" stays strict (their own spread), and the text names both so neither reads as the other.
    keys = ctx.run.source_keys(metric, "eval")
    quoted = decline_noise(metric, values, score, keys)
    # "As good as the best" is strict: a pass rate within one sampling error of the best score, when the set
    # size shows, else within the error of a difference of two evaluations (which a collapse after the peak
    # inflates). A pass rate so smooth that its spread is at the floor (an averaged or exported curve) says
    # nothing about its noise: it is read no finer than a typical eval set allows.
    found = eval_set_size(metric, values)
    # A benchmark named for its size (MATH-500) scored as a mean over several samples per problem moves on a finer
    # grid than its problems (mean@4: 1/2000ths); its sampling error is still the problems' (a blind reader).
    named = named_set_size(metric, keys)
    named_error = named_sampling_error(metric, values, keys) if found and named and named < found[1] else None
    if named_error is not None and named is not None:
        found = (named_error, named)
    sampling, set_size = found if found else (None, None)
    typical = typical_sampling_error(metric, values) if sampling is None and floored else None
    band: float
    kind: BandKind
    if sampling is not None:
        band, kind = min(noise, sampling), "sampling_error" if sampling < noise else "eval_noise"
    elif typical is not None and typical > noise:
        band, kind = typical, "typical_sampling_error"
    else:
        # Two single evaluations, each off by the eval-to-eval noise, differ by sqrt(2) times it: one standard
        # error of their difference is what "no worse than the best" can be told apart by.
        band, kind = noise * math.sqrt(2.0), "eval_difference"
    # "Now" is the mean of the last two evaluations, so one unlucky evaluation does not call a decline.
    tail = score[-2:]
    return _Curve(series.index.to_numpy(), score, band, band, float(np.mean(tail)), band / math.sqrt(len(tail)),
                  smoothed=False, band_kind=kind, set_size=set_size if kind == "sampling_error" else None,
                  set_named=named_error is not None and kind == "sampling_error",
                  own_spread=kind in ("eval_noise", "eval_difference") and quoted > noise * 1.0001)


LOCAL_MIN_EVALS = 5  # evaluations before a level read with its neighbours says more than the points alone


def _local_medians(levels: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """Each evaluation read with its eligible neighbours: the median of it and the one either side.

    The median, not the mean: a collapse right after the last good evaluation is a different regime, not noise
    around that evaluation's level, and must not pull it down. At the ends (and beside the broken stretch) two
    evaluations are all there is, and their mean is their median. With fewer than `LOCAL_MIN_EVALS` evaluations
    each level is read alone.
    """
    if len(levels) < LOCAL_MIN_EVALS:
        return levels.astype(np.float64)
    kept = np.where(eligible, levels, np.nan)
    padded = np.concatenate(([np.nan], kept, [np.nan]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an ineligible evaluation flanked by two others
        medians: np.ndarray = np.nanmedian(np.stack([padded[:-2], padded[1:-1], padded[2:]]), axis=0)
    return medians


def _preference_loss_cap(ctx: Context, evaluation: EvalDiagnosis, eligible_before: int | None) -> int | None:
    """In preference training, the newest evaluation still as good as the best on the held-out loss, once it rose.

    The held-out preference loss and accuracy are read on the same pairs; the loss is the finer of the two (one
    number per pair, not a 0/1 per pair), so it shows overfitting several evaluations before the accuracy leaves
    its noise band, and it is what a trainer picks its best model by unless told otherwise. A target past the
    loss's own newest good point is already overfitting. None unless the held-out loss declined (rose) itself.
    """
    if not any(f.kind == "eval_declining" and f.signal == "eval/loss" for f in evaluation.findings):
        return None
    if "loss" not in ctx.run.metric_names("eval"):
        return None
    curve = _eval_curve(ctx, evaluation, "loss")
    if curve is None:
        return None
    eligible = curve.steps < eligible_before if eligible_before is not None else np.ones(len(curve.steps), bool)
    if not eligible.any():
        return None
    best = float(np.max(np.where(eligible, curve.levels, -np.inf)))
    return int(curve.steps[np.flatnonzero(eligible & (curve.levels >= best - curve.band))[-1]])


def _eval_rose_through(curve: _Curve, breakage_step: int) -> bool:
    """The held-out eval's best after the breakage's onset tops its best before by more than its noise band."""
    before, after = curve.levels[curve.steps < breakage_step], curve.levels[curve.steps >= breakage_step]
    return len(before) > 0 and len(after) > 0 and float(np.max(after)) > float(np.max(before)) + curve.band


def best_checkpoint(
    ctx: Context, reward: RewardDiagnosis, evaluation: EvalDiagnosis, components: RewardComponentsDiagnosis,
    findings: list[Finding], signal: LearningSignalDiagnosis, hacked_task: str | None = None,
) -> BestCheckpoint:
    """The run's one best point (see the module docstring) and the checkpoint to roll back to.

    `hacked_task`: the task metric the over-optimisation reading compared the reward with, if any.
    """
    broke = breakage_onset(findings)
    breakage_step, breakage = broke if broke else (None, None)
    if signal.never_learned:
        return BestCheckpoint(
            basis="none", breakage_step=breakage_step, breakage=breakage, save_steps=ctx.facts.save_steps,
            reason="the run never had a learning signal, so no step is better than the model it started from")
    if signal.updates_stopped_step is not None and signal.updates_stopped_step <= _first_train_step(ctx):
        return BestCheckpoint(
            basis="none", breakage_step=breakage_step, breakage=breakage, save_steps=ctx.facts.save_steps,
            reason="no update ever changed the weights, so every step holds the model the run started from")
    curve, basis, metric = None, "none", None
    eval_metric = _falling_eval(evaluation)
    eval_curve = _eval_curve(ctx, evaluation, eval_metric) if eval_metric is not None else None
    overruled = None
    kinds = {kind for f in findings if (kind := breakage_kind(f)) is not None and breakage_weight(f) > 0}
    if (eval_curve is not None and breakage_step is not None and kinds <= OVERRULED_BY_EVAL
            and _eval_rose_through(eval_curve, breakage_step)):
        # The held-out eval got better after it: not a breakage of the model.
        overruled = f"{breakage} at step {breakage_step}, but held-out {eval_metric} rose after it"
        breakage_step, breakage = None, None
    if eval_curve is not None and (breakage_step is None or (eval_curve.steps < breakage_step).sum() >= 2):
        curve, basis, metric = eval_curve, "eval", f"eval/{eval_metric}"
    else:
        # A saturated easy component can carry the total while the one that matters falls: read that one.
        task = components.fallen_task or _gamed_task_component(findings, hacked_task)
        reward_metric = task or ("reward_shaped_mean" if reward.shaped_declined else primary_reward(ctx))
        reading = ctx.book.get(reward_metric) if reward_metric else None
        if reading is not None and float(np.ptp(reading.series.values)) > 0.0:
            curve, basis, metric = _reward_curve(reading.series), "task" if task else "reward", reward_metric
    if curve is None or metric is None:
        return BestCheckpoint(
            basis="none", breakage_step=breakage_step, breakage=breakage, save_steps=ctx.facts.save_steps,
            reason="no reward or held-out curve that moves, so no best point can be named")
    covered = curve.ends if curve.ends is not None else curve.steps
    # A level that covers any step of the broken stretch is not a candidate.
    eligible = covered < breakage_step if breakage_step is not None else np.ones(len(curve.steps), dtype=bool)
    if not eligible.any():
        eligible[0] = True  # broke at once: the start is all there is
    levels = np.where(eligible, curve.levels, -np.inf)
    top = int(np.argmax(levels))
    best_level = float(curve.levels[top])
    as_good = eligible & (curve.levels >= best_level - curve.band)
    lucky = np.zeros(len(curve.levels), dtype=bool)
    lone_top = None
    if basis == "eval":
        # One lucky evaluation on a slow slide can land within the band of the best; its neighbours give it away.
        local = _local_medians(curve.levels, eligible)
        held = eligible & (local >= float(np.max(np.where(eligible, local, -np.inf))) - curve.band)
        if (as_good & held).any():
            lucky = as_good & ~held
            as_good &= held
        else:
            # The top evaluation itself stands alone above its neighbours (a lucky draw): the best level is then the
            # best median of three, and a point counts if it and its neighbourhood are within the band of that.
            ranked = np.where(eligible, local, -np.inf)
            ref = float(np.max(ranked))
            both = held & (curve.levels >= ref - curve.band)
            if both.any():
                as_good, lone_top = both, (float(curve.levels[top]), int(curve.steps[top]))
                top, best_level = int(np.argmax(ranked)), ref
    bound = None
    if basis == "eval" and eval_metric != "loss":
        cap = _preference_loss_cap(ctx, evaluation, eligible_before=breakage_step)
        if cap is not None and _splits(as_good, curve.steps <= cap):
            as_good &= curve.steps <= cap
            bound = cap
    rescored = _rescored_before(curve, as_good, top, basis, metric, evaluation, findings)
    if rescored is not None:
        as_good &= curve.steps < rescored
    capped = _reward_peak_cap(ctx, curve, as_good, basis, metric, evaluation, reward)
    reward_peak, reward_peak_reason = capped if capped is not None else (None, None)
    if reward_peak is not None:
        as_good &= curve.steps <= reward_peak
    newest, best_step, passed_over = _newest(curve, as_good, lucky)
    sign = -1.0 if basis == "eval" and eval_metric in LOWER_IS_BETTER else 1.0
    decline = (best_level - curve.now) / math.hypot(curve.level_error, curve.now_error)
    # Behind us: the curve's own decline finding says so (the eval's, or the reward's), or a breakage does.
    if basis == "eval":
        # The eval's own decline, or the training reward's while the eval stands below its best band: one crashed
        # evaluation is no decline alone, but with an established fall of the reward the better model is behind.
        # An eval that holds over two or more evaluations since its peak outranks the reward's fall (the reward can
        # fall because what it scores changed: a curriculum's harder stage).
        behind = _eval_declined(evaluation, metric) or (
            any(f.kind == "reward_peaked_then_declined" for f in reward.findings)
            and curve.now < best_level - curve.band
            and not (metric == f"eval/{evaluation.metric}" and holds_clearly(evaluation)))
    elif basis == "task":
        behind = True  # read because it fell from its best (see `fallen_task`)
    else:
        behind = any(f.kind in ("reward_peaked_then_declined", "shaped_reward_declined") for f in reward.findings)
    if basis == "eval" and newest == len(curve.steps) - 1:
        behind = False  # the latest evaluation is as good as the best: nothing better lies behind it
    last = ctx.run.last_step or best_step
    behind = behind or (breakage_step is not None and best_step < last)
    latest = len(curve.steps) - 1
    if basis == "eval" and not behind and lucky[latest] and eligible[latest]:
        # Nothing is behind, so there is no way down for the latest evaluation to be a lucky draw on: scoring
        # within the band of the best, it is a point as good as the best, and the newest.
        as_good[latest], lucky[latest] = True, False
        newest, best_step, passed_over = _newest(curve, as_good, lucky)
    knee = _decline_start(curve, as_good) if behind and breakage_step is None else None
    if knee is not None and not _keeps_good_checkpoint(ctx, curve, as_good, knee):
        knee = None
    if knee is not None:
        as_good &= curve.steps <= knee
        newest, best_step, passed_over = _newest(curve, as_good, lucky)
    what = _describe(metric, basis, curve, best_level, int(curve.steps[top]), best_step, breakage_step, breakage,
                     sign, passed_over, lone_top)
    if rescored is not None:
        what += (f"; before step {rescored}, where the training reward jumped in one update with the policy "
                 "unbroken (the reward itself changed there, and the held-out eval declined after it)")
    if knee is not None:
        what += (f"; no later than step {knee}, where a level-then-falling fit puts the start of the decline (later "
                 "points within the band are its first steps)")
    if reward_peak is not None:
        what += f"; no later than step {reward_peak}, {reward_peak_reason}"
    if bound is not None:
        what += (f"; no later than step {bound}, the newest evaluation as good as the best on the held-out loss, "
                 "which has risen since (it shows overfitting before the accuracy does)")
    out = BestCheckpoint(
        basis=basis, metric=metric, best_step=best_step, level=sign * float(curve.levels[newest]),
        best_level=sign * best_level, best_level_step=int(curve.steps[top]), now_level=sign * curve.now,
        band=curve.band, band_kind=curve.band_kind, eval_set_size=curve.set_size, eval_set_named=curve.set_named,
        smoothed=curve.smoothed,
        passed_over=passed_over, loss_bound_step=bound, best_level_median=lone_top is not None,
        reward_changed_step=rescored, reward_peak_step=reward_peak, reward_peak_reason=reward_peak_reason,
        decline_start_step=knee,
        band_is_own_spread=curve.own_spread, behind=bool(behind),
        decline_t=float(decline),
        breakage_step=breakage_step, breakage=breakage, breakage_overruled=overruled, save_steps=ctx.facts.save_steps,
        reason=what,
    )
    return _nearest_checkpoint(ctx, out)


def _newest(curve: _Curve, as_good: np.ndarray, lucky: np.ndarray) -> tuple[int, int, list[int]]:
    """The newest point as good as the best: its index, its step, and the lucky draws after it that were passed over."""
    newest = int(np.flatnonzero(as_good)[-1])
    passed_over = [int(step) for step in curve.steps[lucky & (np.arange(len(lucky)) > newest)]]
    return newest, int(curve.steps[newest]), passed_over


def _eval_declined(evaluation: EvalDiagnosis, metric: str) -> bool:
    """Whether the held-out series the best point is read on (`metric`, or the preferred one) has declined."""
    return any(f.kind == "eval_declining" and f.signal in ("eval", metric) for f in evaluation.findings)


def _gamed_task_component(findings: list[Finding], task: str | None) -> str | None:
    """The task's own reward component, when the reward was bought at its expense (`reward_hacking`).

    The total kept rising, so its best is now; the task component's best is the model to go back to.
    """
    if task is None or not task.startswith("reward_component/"):
        return None
    return task if any(f.kind == "reward_hacking" for f in findings) else None


def _first_train_step(ctx: Context) -> int:
    """The first step the training reward (else the gradient norm) was logged at."""
    for metric in (primary_reward(ctx), "grad_norm"):
        reading = ctx.book.get(metric) if metric else None
        if reading is not None and reading.series.n:
            return int(reading.series.steps[0])
    return 0


def _rescored_before(
    curve: _Curve, as_good: np.ndarray, top: int, basis: str, metric: str, evaluation: EvalDiagnosis,
    findings: list[Finding],
) -> int | None:
    """The step the best point must come before: where the training reward was re-scored (`reward_stepped_up`).

    Only on a held-out decline whose best level came before that step: the run has since been trained on a
    different reward and the eval fell under it, so evaluations after the change that are still within the band
    are the new reward's first steps, not the good stretch. None when it does not apply or would leave no point.
    """
    if basis != "eval" or not _eval_declined(evaluation, metric):
        return None
    step = next((f.steps[0] for f in findings if f.kind == "reward_stepped_up" and f.steps), None)
    if step is None or int(curve.steps[top]) >= step:
        return None
    return step if _splits(as_good, curve.steps < step) else None


def _decline_start(curve: _Curve, as_good: np.ndarray) -> int | None:
    """Where an established decline began, when no breakage dates it; None when it does not apply or keeps all.

    Fitted from the first point as good as the best to the end: a level, then a fall. Two shapes compete; a fall
    in one step (a level, a drop, a slope) when the drop exceeds `STEP_BANDS` bands, else a steady slide (a level,
    then a straight line down from the knee), whose knee a step fit would put late. Points after the knee that
    still land within the band are the slide's first steps, as a practitioner reading the curve would see them.
    The knee is a point estimate (on the labelled runs it saves less than one squared standard error over a knee at
    the newest good point): it moves the best point only along the good stretch, never before its second point.
    """
    start = int(np.flatnonzero(as_good)[0])
    t = curve.steps[start:].astype(np.float64)
    y = curve.levels[start:].astype(np.float64)
    if len(t) < 4:
        return None
    ramp, drop, jumps = _knee_fits(t, y)
    k = int(np.argmin(drop))
    sse = drop if np.isfinite(drop[k]) and jumps[k] > STEP_BANDS * curve.band else ramp
    k = int(np.argmin(sse))
    if not np.isfinite(sse[k]) or k == 0:
        return None  # no fall, or a "level" of one point: nothing says the good stretch ended before its newest point
    step = int(t[k])
    return step if _splits(as_good, curve.steps <= step) else None


def _knee_fits(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both level-then-falling fits at every knee k (the last point of the level), in one O(n) pass of running sums.

    `ramp[k]`: the squared error of a level and a straight slide from t[k] (inf unless it slides down); `drop[k]`: of
    a level up to t[k], then a line of its own from below it (inf unless it steps down and does not climb); `jumps`:
    that step's depth. A slide of one point is not determined: like a least-squares solver, it takes the
    smallest-norm line through it (in the steps' own units).
    """
    n = len(t)
    u = (t - t[0]) / max(float(t[-1] - t[0]), 1.0)  # steps scaled to [0, 1]: the fits' errors do not depend on the unit

    def after(a: np.ndarray) -> np.ndarray:  # sums over i > k, for k = 0 .. n - 2
        return np.cumsum(a[::-1])[::-1][1:]

    def upto(a: np.ndarray) -> np.ndarray:  # sums over i <= k
        return np.cumsum(a)[:-1]

    uk = u[:-1]
    count = np.arange(n - 1, 0, -1, dtype=np.float64)  # points after the knee
    su, suu, sy, syy, suy = after(u), after(u * u), after(y), after(y * y), after(u * y)
    total, total_sq = float(y.sum()), float((y * y).sum())
    # The slide: y = a + b max(u - u_k, 0) over all points.
    sx = su - count * uk
    sxx = suu - 2.0 * uk * su + count * uk * uk
    sxy = suy - uk * sy
    cov, var = sxy - sx * total / n, sxx - sx * sx / n
    ramp = np.where(cov / var < 0, (total_sq - total * total / n) - cov * cov / var, np.inf)
    # The fall: the level's mean up to k, a line of its own after it.
    kept = np.arange(1, n, dtype=np.float64)
    py, pyy = upto(y), upto(y * y)
    level = py / kept
    left = pyy - py * py / kept
    with np.errstate(divide="ignore", invalid="ignore"):
        var_r = suu - su * su / count
        cov_r = suy - su * sy / count
        slope = cov_r / var_r
        right = (syy - sy * sy / count) - cov_r * cov_r / var_r
        start = sy / count - slope * (su / count - uk)  # the line's value at the knee
    gap = float(t[-1] - t[-2])
    slope[-1] = y[-1] * gap / (1.0 + gap * gap)  # one point after the knee (raw units, as lstsq's smallest norm)
    start[-1] = y[-1] / (1.0 + gap * gap)
    right[-1] = 0.0
    jumps = level - start
    drop = np.where((slope <= 0) & (jumps > 0), left + right, np.inf)
    return ramp, drop, jumps


def _keeps_good_checkpoint(ctx: Context, curve: _Curve, as_good: np.ndarray, cap: int) -> bool:
    """Whether a cap on the best point still leaves a checkpoint on disk inside the good stretch, if one was."""
    saved = [c.step for c in ctx.run.checkpoints]
    if not saved:
        return True
    good = curve.steps[as_good]
    first = int(good[0])
    capped = [step for step in saved if step <= int(good[good <= cap][-1])]
    uncapped = [step for step in saved if step <= int(good[-1])]
    return bool(capped and capped[-1] >= first) or not (uncapped and uncapped[-1] >= first)


def _splits(as_good: np.ndarray, before: np.ndarray) -> bool:
    """A cap on the best point applies only where it keeps a point as good as the best and removes one."""
    return bool((as_good & before).any() and (as_good & ~before).any())


def _reward_peak_cap(
    ctx: Context, curve: _Curve, as_good: np.ndarray, basis: str, metric: str, evaluation: EvalDiagnosis,
    reward: RewardDiagnosis,
) -> tuple[int, str] | None:
    """The step the best point may not pass, and why: the training reward's own best point, when it and the eval fell.

    Two measures of one policy declining: the training reward, averaged over far more samples than a few noisy
    evaluations, dates when the policy started to get worse. Its best point (the newest stretch within one
    standard error of its best) is as late as the good stretch can reach; evaluations after it that still land
    within the eval's band are the slide's first steps. None when it does not apply or would leave no point.
    """
    at_peak = "the newest step at which the training reward still stood within one standard error of its peak"
    newest_good = (f"{at_peak}, before its established decline (later evaluations within the band are draws on the "
                   "way down)")
    # The eval declined, or only eased: too far below its peak to vouch against the reward's fall, short of the
    # decline its own test needs (`holds_clearly`).
    declined = _eval_declined(evaluation, metric)
    if basis != "eval" or not (declined or (metric == f"eval/{evaluation.metric}" and eased(evaluation))) or (
            reward.metric is None):
        return None
    if not any(f.kind == "reward_peaked_then_declined" for f in reward.findings):
        return None
    reading = ctx.book.get(reward.metric)
    levels = _reward_curve(reading.series) if reading is not None else None
    if levels is None:
        return None
    top = int(np.argmax(levels.levels))
    newest = int(np.flatnonzero(levels.levels >= levels.levels[top] - levels.band)[-1])
    step, why = int(levels.steps[newest]), newest_good
    if not declined and len(curve.steps) > 1:
        # With no fall of its own, an evaluation within one eval interval after that step has not shown the slide
        # begun: it is the eval's newest reading of the good stretch, not a draw on the way down.
        interval = int(np.median(np.diff(curve.steps)))
        step, why = step + interval, (f"one eval interval ({interval} steps) after {at_peak} (step {step}), before "
                                      "its established decline (the eval eased short of a decline of its own)")
    if _splits(as_good, curve.steps <= step):
        return step, why
    # No evaluation as good as the best was taken by then: the newest one before the fall is dated (halfway down),
    # rather than a draw from well into the slide.
    fell = reward.fall_step
    if fell is None or fell <= step or not _splits(as_good, curve.steps <= fell):
        return None
    return fell, ("where the training reward's established decline was halfway down (no evaluation within the band "
                  "was taken while it still stood at its peak; later ones are draws on the way down)")


def _describe(
    metric: str, basis: str, curve: _Curve, best_level: float, best_level_step: int, best_step: int,
    breakage_step: int | None, breakage: str | None, sign: float, passed_over: list[int],
    lone_top: tuple[float, int] | None = None,
) -> str:
    if basis == "eval":
        # With few evaluations the table quotes the sampling error a decline is read against; a band that is the
        # evaluations' own (finer) spread is named apart from it.
        noise_name = "the spread of its evaluations" if curve.own_spread else "its eval-to-eval noise"
        within = {"sampling_error": f"one sampling error (a pass rate on {curve.set_size} problems, read off the "
                                    "scores)",
                  "typical_sampling_error": f"the sampling error of a pass rate on {TYPICAL_EVAL_SET:,} problems",
                  "eval_difference": f"sqrt(2) x {noise_name} of {num(curve.band / math.sqrt(2.0))}, "
                                     "one standard error of the difference of two evaluations"}.get(
            curve.band_kind, noise_name)
        if curve.own_spread:
            within += " (stricter than the table's noise, the eval-to-eval noise a decline is read against)"
        text = (f"{metric} was best at {num(sign * best_level)} at step {best_level_step}; the newest evaluation "
                f"within {within} ({num(curve.band)}) of that is step {best_step}")
        if best_step == best_level_step:
            text = f"{metric} was best at {num(sign * best_level)} at step {best_step}"
        if lone_top is not None:
            text = (f"{metric} scored {num(sign * lone_top[0])} at step {lone_top[1]}, alone above the evaluations "
                    f"either side; its best median of three consecutive evaluations is {num(sign * best_level)} "
                    f"around step {best_level_step}, and the newest evaluation within {within} ({num(curve.band)}) "
                    f"of that, with its neighbours, is step {best_step}")
        if passed_over:
            steps = ", ".join(str(step) for step in passed_over)
            text += (f" (the evaluation{'s' if len(passed_over) > 1 else ''} at step {steps} scored within it too, but "
                     "not with the evaluations either side: a lucky draw on the way down)")
    else:
        text = (f"{metric} (smoothed: stretch means) was best at {num(best_level)} around step {best_level_step}; the "
                f"newest stretch within one standard error ({num(curve.band)}) of that is centred on step {best_step}")
        if best_step == best_level_step:
            text = f"{metric} (smoothed: stretch means) was best at {num(best_level)} around step {best_step}"
    if breakage_step is not None:
        text += f", before {breakage} at step {breakage_step}"
    return text


def _nearest_checkpoint(ctx: Context, best: BestCheckpoint) -> BestCheckpoint:
    step = best.best_step
    assert step is not None
    checkpoints = ctx.run.checkpoints
    at_or_before = [c for c in checkpoints if c.step <= step]
    save = best.save_steps
    expected = (step // save) * save if save else None
    if at_or_before:
        chosen = at_or_before[-1]
        gap = step - chosen.step
        where = "exactly there" if gap == 0 else f"{gap} steps before it"
        return best.model_copy(update={
            "checkpoint_step": chosen.step, "checkpoint_path": chosen.path, "expected_checkpoint_step": expected,
            "reason": f"{best.reason}; {chosen.path} is the newest checkpoint on disk at or before it ({where})"})
    if checkpoints:
        tail = (f"; no checkpoint on disk is that early (the earliest is step {checkpoints[0].step}, "
                f"{checkpoints[0].path})")
    else:
        tail = "; no checkpoints are in the run directory"
    if expected:
        tail += f" (the save interval of {save} steps would have written one at step {expected})"
    return best.model_copy(update={"expected_checkpoint_step": expected, "reason": best.reason + tail})
