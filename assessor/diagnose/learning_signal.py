"""Is there still a learning signal?

Group-relative methods learn only from groups whose completions score differently: when every completion
of a prompt gets the same reward, its advantages are all zero. So the spread of rewards (reward_std, the
share of zero-spread groups, the advantage spread) is the health of the learning signal, and a reward at
its ceiling with no spread left means the data has nothing more to teach.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from assessor.diagnose import robust
from assessor.diagnose.components import PREFIX as COMPONENT_PREFIX
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.evaluation import eval_set_size, quality_metrics
from assessor.diagnose.instability import skipped_since
from assessor.diagnose.models import ConstantComponent, Finding, LearningSignalDiagnosis
from assessor.diagnose.signals import Reading

NO_SPREAD = 1e-6  # advantage or reward spread this small means every completion scored the same


def diagnose_learning_signal(ctx: Context) -> LearningSignalDiagnosis:
    """Reward spread, zero-spread groups, saturation, identical rewards from the start."""
    reward = ctx.book.get("reward_mean")
    std = ctx.book.get("reward_std")
    zero = ctx.book.get("reward_zero_std_frac")
    adv = ctx.book.get("advantage_std")
    out = LearningSignalDiagnosis(
        reward_std_start=std.summary.start if std else None,
        reward_std_now=std.summary.now if std else None,
        zero_std_frac_start=zero.summary.start if zero else None,
        zero_std_frac_now=zero.summary.now if zero else None,
        advantage_std_now=adv.summary.now if adv else None,
    )
    stopped = _updates_stopped(ctx)
    if stopped is not None:
        out.updates_stopped_step = stopped.steps[0]
        if reward is not None:
            before = reward.series.values[reward.series.steps < stopped.steps[0]]
            width = robust.stretch_width(reward.series.n)
            out.reward_before_stop = float(np.mean(before[-width:])) if len(before) else None
    if reward is None:
        return out
    no_spread_share = _no_spread_share(zero, adv)
    findings: list[Finding] = []
    _measure_shares(ctx, reward, std, zero, adv, out)

    flat_from_start = _identical_from_start(reward, std, adv)
    if flat_from_start:
        out.identical_from_start = out.never_learned = True
        findings.append(finding(
            "reward_mean", "identical_rewards", "critical",
            f"every completion has scored the same since the start (reward {num(reward.summary.start)} with no "
            f"spread over {reward.summary.points} logged steps): no learning signal at all, a setup failure "
            "(reward function, parsing, or prompts)", [reward.summary.first_step]))
        out.findings = findings
        return out
    no_signal = _no_signal(ctx, reward, out)
    if no_signal is not None:
        out.never_learned = True
        findings.append(no_signal)
        out.findings = findings + _partial_signal_findings(reward, out, no_signal_found=True)
        return out
    findings.extend(_partial_signal_findings(reward, out, no_signal_found=False, moved=_moved_on_zero_gradient(ctx)))

    ceiling, floor = _bounds(reward)
    recent_share = no_spread_share[1] if no_spread_share else None
    # The spread within each group (OpenRLHF's group_reward_std) says it better than the batch's, when logged.
    spread = ctx.book.get("reward_group_std_mean") or std
    spread_gone = (recent_share is not None and recent_share >= 0.9) or (
        spread is not None and spread.summary.start > 0 and spread.summary.now < 0.2 * spread.summary.start)
    r = reward.summary
    if ceiling is not None and spread_gone and r.now >= ceiling - 0.1 * max(1.0, ceiling - (floor or 0.0)):
        out.saturated = True
        findings.append(finding(
            "reward_mean", "reward_saturated", "warning",
            f"reward is at its ceiling ({num(r.now)} of {num(ceiling)}) and the spread is gone"
            f"{_share_text(no_spread_share)}: the data has nothing more to teach; harder prompts or stopping",
            [r.plateau_start or r.trend_window_start]))
    elif floor is not None and spread_gone and r.now <= floor + 0.05 * max(1.0, (ceiling or 1.0) - floor) and (
            r.peak - floor <= NEVER_OFF_FLOOR * max(1.0, (ceiling or 1.0) - floor)) and r.trend != "rising":
        # At the floor all along: not a fall (its "peak" is a lucky stretch), a run with almost nothing to learn from.
        # A reward climbing off the floor, however little of the range it has covered yet, is a lift-off.
        out.never_learned = True
        findings.append(finding(
            "reward_mean", "no_learning_signal", "critical",
            f"no learning signal over the run: the reward has sat at its floor since the start (now {num(r.now)}, "
            f"never above {num(r.peak)} for a stretch) and {_share_words(no_spread_share)}: almost every advantage "
            "is zero. The policy has had next to nothing to learn from, so more steps buy nothing: make the task "
            "reachable (easier prompts, a reward that gives partial credit, a working tool or answer format) first",
            [int(reward.series.steps[0])]))
    elif floor is not None and spread_gone and r.now <= floor + 0.05 * max(1.0, (ceiling or 1.0) - floor) and (
            r.trend != "rising"):
        findings.append(finding(
            "reward_mean", "reward_floor_no_signal", "critical",
            f"reward has fallen to its floor ({num(r.now)}, from a peak of {num(r.peak)} at step {r.peak_step}) "
            f"and {_share_words(no_spread_share)}: the policy gets no gradient "
            "and cannot recover on its own", [_onset(reward)]))
    elif (ceiling == 1.0 and floor == 0.0 and recent_share is not None and recent_share >= 0.5
          and r.trend != "rising" and r.now >= NEAR_CEILING):
        # A 0..1 reward this close to 1 leaves most groups all-correct (at 0.95 with eight samples, two in three):
        # the share with no spread is what the level implies, and what little is left is the rare failure.
        out.saturated = True
        findings.append(finding(
            "reward_mean", "reward_saturated", "warning",
            f"reward is at its ceiling ({num(r.now)} of 1.0, not rising) and {recent_share:.0%} of recent groups "
            "score alike: almost nothing is left to learn from these prompts; harder prompts or stopping",
            [r.plateau_start or r.trend_window_start]))
    elif recent_share is not None and recent_share >= 0.5 and no_spread_share and no_spread_share[0] < recent_share:
        findings.append(finding(
            "reward_zero_std_frac", "signal_thinning", "watch" if recent_share < 0.8 else "warning",
            f"{recent_share:.0%} of recent groups have zero reward spread (from {no_spread_share[0]:.0%} early): "
            "most completions no longer carry gradient", [_onset(zero or adv or reward)]))
    elif ceiling == 1.0 and floor == 0.0 and zero is None and r.now >= 0.97 and (
            r.trend != "rising" or r.start >= SATURATED_START):
        # No per-group share of zero spread is logged (a batch-wide std or advantage spread is not one): at this
        # level of a 0..1 reward almost every group of completions scores the same anyway. Still rising a little
        # counts too when it started at the ceiling: the prompts were too easy from the first step.
        out.saturated = True
        findings.append(finding(
            "reward_mean", "reward_saturated", "watch",
            f"reward sits at its ceiling ({num(r.now)} of 1.0; the run logs no per-group spread, but at this level "
            "almost every group scores the same): little is left to learn from these prompts",
            [r.plateau_start or r.trend_window_start]))
    if std is not None and not out.saturated and std.summary.trend == "falling" and std.summary.start > 0 and (
            std.summary.now < 0.3 * std.summary.start):
        findings.append(finding(
            "reward_std", "reward_std_collapsing", "watch",
            f"reward spread is falling ({num(std.summary.start)} → {num(std.summary.now)}): the learning signal is "
            "thinning", [std.summary.trend_window_start]))
    starved = _dynamic_sampling_starved(ctx)
    if starved is not None:
        findings.append(starved)
    if stopped is not None:
        findings.append(stopped)
    out.findings = findings
    return out


STARVED_KEPT_SHARE = 0.2  # at most one group in five still scores mixed: five or more generation rounds per step


def _dynamic_sampling_starved(ctx: Context) -> Finding | None:
    """Dynamic sampling (DAPO) that must generate many rounds to find groups whose completions disagree.

    Groups that all score alike are dropped and generation repeats until the batch is full, so the share of groups
    kept (OpenRLHF's `dynamic_filtering_pass_rate`, or about 1 / verl's `train/num_gen_batches`) is the share that
    still carries a gradient. When it has fallen to a fifth or less, the prompts are nearly all solved or out of
    reach: each step costs that many generation rounds for a thin signal. The training reward is then measured on
    the kept groups only, so its level says little; the held-out eval says whether the run still gains.
    """
    rate = ctx.book.get("dynamic_filtering_pass_rate")
    rounds = ctx.book.get("num_gen_batches")
    if rate is not None:
        values = rate.series.values / (100.0 if float(np.max(rate.series.values)) > 1.0 else 1.0)
        reading, measure, source = rate, np.clip(values, 0.0, 1.0), "the dynamic-sampling pass rate"
    elif rounds is not None and float(np.min(rounds.series.values)) >= 1.0:
        reading, measure, source = rounds, 1.0 / rounds.series.values, "one over the generation rounds per step"
    else:
        return None
    k = max(3, len(measure) // 10)
    if len(measure) < 2 * k:
        return None
    early, recent = float(np.mean(measure[:k])), float(np.mean(measure[-k:]))
    if recent > STARVED_KEPT_SHARE or early < 2 * recent:
        return None
    onset = int(reading.series.steps[int(np.argmax(measure <= 0.5 * (early + recent)))])
    return finding(
        reading.summary.metric, "dynamic_sampling_starved", "warning",
        f"dynamic sampling keeps about {recent:.0%} of generated groups now, from {early:.0%} early ({source}): "
        "nearly every prompt is solved every time or never, so each step pays several generation rounds for a thin "
        "signal, and the training reward (over the kept groups only) no longer shows progress; only a held-out "
        "eval can", [onset])


UPDATES_STOPPED_POINTS = 5  # logged steps (and at least this share of the run) with no possible update
UPDATES_STOPPED_SHARE = 0.05


def _updates_stopped(ctx: Context) -> Finding | None:
    """The weights stopped changing: the learning rate, or the gradient norm, exactly 0 to the end after being positive.

    A schedule that decays over fewer steps than the run, or a reward service that returns 0 for everything (no
    spread, no advantage, no gradient), leaves the weights where they were while the GPUs keep generating. The
    learning rate's own end-of-schedule 0 on the last step is the run finishing (`run_state`), not this.
    """
    for metric, what in (("lr", "the learning rate"), ("grad_norm", "the gradient norm")):
        series = ctx.run.series(metric)
        values, steps = series.to_numpy(), series.index.to_numpy()
        if len(values) < 2 * UPDATES_STOPPED_POINTS:
            continue
        moving = np.flatnonzero(values != 0.0)
        if not len(moving) or moving[-1] == len(values) - 1:
            continue
        first_zero = int(moving[-1]) + 1
        zeros, before = len(values) - first_zero, values[:first_zero]
        # Positive before, not a metric that is mostly 0 anyway (TRL's grad_norm 0.0 on skipped steps).
        if zeros < max(UPDATES_STOPPED_POINTS, UPDATES_STOPPED_SHARE * len(values)) or np.mean(before == 0.0) > 0.2 or (
                len(before) < 2 * UPDATES_STOPPED_POINTS):
            continue
        step = int(steps[first_zero])
        if _still_moving(ctx, step) or _quantised(before):
            continue  # the policy still changes, or a logger printed a small value at too few decimals
        return finding(
            metric, "updates_stopped", "critical",
            f"{what} has been exactly 0 on every one of the last {zeros} logged steps (since step {step}, after being "
            f"positive before): the weights cannot change, so they are those of step {step}, and every step since "
            "spends compute for nothing", [step])
    never = _never_a_gradient(ctx)
    if never is not None:
        return never
    skipped = skipped_since(ctx.run)
    if skipped is not None:
        return finding(
            "grad_norm", "updates_stopped", "critical",
            f"the gradient norm has been NaN/inf on every logged step since step {skipped} while loss and reward stay "
            "finite: each update overflowed and was skipped (fp16 loss scaling), so the weights are those of step "
            f"{skipped}, and every step since spends compute for nothing", [skipped])
    return _lr_negligible(ctx) or _lr_zero_policy_frozen(ctx)


NEVER_A_GRADIENT_POINTS = 20  # logged steps, all with a gradient norm of exactly 0, before "never" can be said


def _never_a_gradient(ctx: Context) -> Finding | None:
    """A gradient norm of exactly 0 on every logged step while the groups do differ: no update ever happened.

    With spread in the groups' rewards there are non-zero advantages, so a zero gradient on every step means the
    gradient never reached the trainable weights (adapters under gradient checkpointing without inputs that require
    grad, frozen parameters, an optimizer over the wrong ones). A logger that writes 0 for a norm it cannot read is
    told apart by the policy itself: then the reward, entropy or KL still move.
    """
    grad = ctx.run.series("grad_norm").to_numpy()
    if len(grad) < NEVER_A_GRADIENT_POINTS or np.any(grad != 0.0):
        return None
    spread = ctx.book.get("reward_std") or ctx.book.get("reward_group_std_mean")
    if spread is None or not float(np.median(spread.series.values)) > 0.0:
        return None  # no spread either: the learning-signal findings say why
    first = int(ctx.run.series("grad_norm").index[0])
    if _still_moving(ctx, first):
        return None
    return finding(
        "grad_norm", "updates_stopped", "critical",
        f"the gradient norm is exactly 0 on all {len(grad)} logged steps although the groups' rewards differ (non-zero "
        "advantages): no gradient ever reached the trainable weights (e.g. adapters under gradient checkpointing "
        "without inputs that require grad, or frozen parameters), so the weights are the initial ones and every "
        "step spends compute for nothing", [first])


LR_NEGLIGIBLE = 1e-9  # LLM RL fine-tuning runs at about 1e-7 to 1e-5; a hundredth of the smallest moves nothing


def _lr_negligible(ctx: Context) -> Finding | None:
    """A learning rate too small ever to move the weights (a warm-up spanning millions of steps, a unit slip).

    Adam-style optimisers move each weight by about the learning rate per step, so below a billionth the weights
    after thousands of steps are the initial ones, whatever the loss and the gradients say.
    """
    series = ctx.run.series("lr")
    values, steps = series.to_numpy(), series.index.to_numpy()
    if len(values) < 2 * UPDATES_STOPPED_POINTS:
        return None
    top = float(np.max(np.abs(values)))
    if not 0.0 < top <= LR_NEGLIGIBLE * (1 + 1e-9):  # "about a billionth": 1e-09 itself counts
        return None
    first = int(steps[0])
    if _still_moving(ctx, first):
        return None
    return finding(
        "lr", "updates_stopped", "critical",
        f"the learning rate has never been above {top:.2g} in {len(values)} logged steps (to step {int(steps[-1])}): "
        "at a billionth or less per step the weights cannot have moved from where they started, so they are the "
        "initial ones and every step spends compute for nothing (check the schedule: a warm-up far longer than the "
        "run, or the learning rate's units)", [first])


def _lr_zero_policy_frozen(ctx: Context) -> Finding | None:
    """A learning rate of exactly 0 on every logged step, and a KL to the reference of exactly 0 on every one too.

    A logger printing a small rate at too few decimals shows 0 as well, so the rate alone says nothing; but a policy
    that has taken any update differs from its reference, and its logged KL is no longer exactly 0. Both at 0 all
    along, with gradients computed (a non-zero gradient norm) and nothing else moving, is a run whose weights never
    left their initial values (a learning rate passed as 0).
    """
    lr_series = ctx.run.series("lr")
    lr, kl = lr_series.to_numpy(), ctx.run.series("kl").to_numpy()
    grad = ctx.run.series("grad_norm").to_numpy()
    if len(lr) < NEVER_A_GRADIENT_POINTS or len(kl) < NEVER_A_GRADIENT_POINTS or np.any(lr != 0.0) or (
            np.any(kl != 0.0)) or not (len(grad) and float(np.mean(grad > 0.0)) >= 0.5):
        return None
    first = int(lr_series.index[0])
    if _still_moving(ctx, first) or _printed_coarsely(ctx):
        return None
    critic = ctx.run.series("value_loss").to_numpy()
    if len(lr) < CRITIC_WARMUP_POINTS and len(critic) >= NEVER_A_GRADIENT_POINTS and float(np.ptp(critic)) > 0.0:
        return None  # a critic warm-up: the value head trains alone for its first steps (verl's critic_warmup)
    return finding(
        "lr", "updates_stopped", "critical",
        f"the learning rate is exactly 0 on all {len(lr)} logged steps and the KL to the reference is exactly 0 on all "
        f"{len(kl)} as well, while gradients are computed (grad norm positive): no update has moved the weights, so "
        "they are the initial ones and every step spends compute for nothing (check how the learning rate reaches "
        "the optimizer)", [first])


CRITIC_WARMUP_POINTS = 100  # logged steps a PPO run's actor may sit at a learning rate of 0 while its critic warms up


def _printed_coarsely(ctx: Context) -> bool:
    """The log prints its numbers at four decimals or fewer: a learning rate of 1e-06 shows as 0.000 there.

    Read off the run's other curves (entropy, reward, gradient norm), which are never all round at that precision
    unless the printer rounded them.
    """
    for metric in ("entropy", "reward_mean", "grad_norm"):
        values = ctx.run.series(metric).to_numpy()
        values = values[np.isfinite(values) & (values != 0.0)]
        if len(values) >= NEVER_A_GRADIENT_POINTS:
            scaled = values * 1e4
            return bool(np.all(np.abs(scaled - np.round(scaled)) < 1e-6 * np.maximum(1.0, np.abs(scaled))))
    return False


def _quantised(values: np.ndarray) -> bool:
    """The last positive values are one unit of a fixed number of decimals (1e-07 before 0): rounding, not 0."""
    last = float(values[-1])
    return last > 0 and abs(math.log10(last) - round(math.log10(last))) < 1e-9 and last <= 1e-4


def _still_moving(ctx: Context, step: int) -> bool:
    """Reward, entropy or KL drifts after `step`: frozen weights would sample from one unchanging policy."""
    for metric in ("reward_mean", "entropy", "kl"):
        reading = ctx.book.get(metric)
        if reading is None:
            continue
        after = reading.series.steps >= step
        if after.sum() < 2 * UPDATES_STOPPED_POINTS:
            continue
        idx = np.flatnonzero(after)
        first, second = np.zeros(reading.series.n, dtype=bool), np.zeros(reading.series.n, dtype=bool)
        first[idx[: len(idx) // 2]], second[idx[len(idx) // 2:]] = True, True
        if abs(robust.level_shift(reading.series, first, second).t) >= 4.0:
            return True
    return False


MIN_SIGNAL_POINTS = 20  # logged steps before "it never learned" can be said
NO_SIGNAL_SHARE = 0.8  # a reward stuck at its floor on this share of the steps carries (almost) no signal
PINNED_SHARE = 0.95  # a component at one exact value on this share of the steps does not move
NEAR_CEILING = 0.95  # a 0..1 reward within 5% of its ceiling
SATURATED_START = 0.9  # a 0..1 reward that starts this high had at most a tenth of its range left to learn
ALMOST_EVERY_GROUP = 0.95  # zero-spread share over the whole run that leaves no room for learning at all
NEVER_OFF_FLOOR = 0.1  # a best stretch within a tenth of the reward's range of its floor never left it


def _measure_shares(
    ctx: Context, reward: Reading, std: Reading | None, zero: Reading | None, adv: Reading | None,
    out: LearningSignalDiagnosis,
) -> None:
    """Exact-zero and constant shares: of the reward, of the group spread, of the gradient and of the loss."""
    values = reward.series.values
    out.zero_reward_share = robust.zero_share(values)
    out.constant_reward_share = _modal(values)[1]
    flags = []
    if std is not None:
        flags.append(pd.Series(std.series.values <= NO_SPREAD, index=std.series.steps))
    if zero is not None:
        flags.append(pd.Series(zero.series.values >= 1 - NO_SPREAD, index=zero.series.steps))
    if adv is not None:
        flags.append(pd.Series(adv.series.values <= NO_SPREAD, index=adv.series.steps))
    if flags:
        joined = pd.concat(flags, axis=1).groupby(level=0).max()
        out.zero_spread_share = float(joined.fillna(False).any(axis=1).mean())
    for metric, field in (("grad_norm", "zero_grad_share"), ("loss", "zero_loss_share")):
        reading = ctx.book.get(metric)
        if reading is not None and reading.series.n >= MIN_SIGNAL_POINTS // 2:
            setattr(out, field, robust.zero_share(reading.series.values))
    for name in ctx.run.metric_names():
        if not (name.startswith(COMPONENT_PREFIX) and name.endswith("_mean")):
            continue
        component = ctx.book.get(name)
        if component is None or component.series.n < MIN_SIGNAL_POINTS // 2:
            continue
        value, share = _modal(component.series.values)
        if share >= PINNED_SHARE:
            out.constant_components.append(ConstantComponent(
                name=name[len(COMPONENT_PREFIX):-len("_mean")], value=value, share=share,
                at_floor=value <= float(np.min(component.series.values))))


FORMAT_WORDS = ("format", "xml", "tag", "style", "length", "len_", "think", "reasoning")
PENALTY_WORDS = ("penalt", "punish", "cost")


def _shaping(name: str) -> bool:
    """A component that shapes how the answer looks or how long it is, or takes something off: not the task."""
    lowered = name.lower()
    return any(word in lowered for word in FORMAT_WORDS + PENALTY_WORDS)


def _modal(values: np.ndarray) -> tuple[float, float]:
    """The most common exact value and its share."""
    if not len(values):
        return 0.0, 0.0
    uniques, counts = np.unique(values, return_counts=True)
    top = int(np.argmax(counts))
    return float(uniques[top]), float(counts[top] / len(values))


def _alike_in_both_halves(ctx: Context) -> float | None:
    """The lower of the two halves' mean zero-spread fractions, when both are at least `ALMOST_EVERY_GROUP`."""
    zero = ctx.book.get("reward_zero_std_frac")
    if zero is None or zero.series.n < MIN_SIGNAL_POINTS // 2:
        return None
    lower = min(_half_shares(zero.series.values))
    return lower if lower >= ALMOST_EVERY_GROUP else None


def _no_signal(ctx: Context, reward: Reading, out: LearningSignalDiagnosis) -> Finding | None:
    """A run that never had anything to learn from, over its whole length and its latest half alike.

    The reward sits at its floor on most steps (exactly 0, or one constant that is its minimum), or every
    group scores alike on almost every step, or the component that says the task was solved never leaves its
    floor while only format components move. A rise later in the run, however late, is learning: this is
    about runs where nothing fires at all.
    """
    values, steps = reward.series.values, reward.series.steps
    n = len(values)
    if n < MIN_SIGNAL_POINTS:
        return None
    second_half = values[n // 2:]
    value, share = _modal(values)
    recent_value, recent_share = _modal(second_half)
    rising = reward.summary.trend == "rising"
    # Never off the floor for a whole stretch: a run that learnt and then collapsed to the floor had one.
    never_rose = _never_rose_off(values, value, unit_range=_bounds(reward) == (1.0, 0.0))
    reasons = []
    if share >= NO_SIGNAL_SHARE and recent_share >= NO_SIGNAL_SHARE and recent_value == value and (
            value <= float(np.min(values))) and not rising and never_rose:
        what = "exactly 0" if value == 0 else f"exactly {num(value)}, its lowest value"
        reasons.append(f"the reward is {what} on {share:.0%} of {n} logged steps")
    spread = out.zero_spread_share
    if spread is not None and spread >= NO_SIGNAL_SHARE and not rising and never_rose and _recent_spread_gone(ctx):
        reasons.append(f"every group scored alike (zero reward spread) on {spread:.0%} of steps, so the advantages "
                       "are zero")
    # Almost every group alike in both halves of the run: what the reward "rose" by is the odd lucky group.
    alike = _alike_in_both_halves(ctx)
    if alike is not None and not rising and not reasons:
        reasons.append(f"{alike:.0%} or more of the groups scored alike (zero reward spread) in both halves of the "
                       "run, so almost every advantage is zero")
    # A gradient of exactly zero is what a batch with no spread produces: on most steps of both halves, it says
    # the same as the spread where the run logs none. (Not the loss: a GRPO surrogate on zero-mean advantages is
    # exactly 0 on every on-policy step whether or not anything is learnt.)
    zeros = _zero_halves(ctx, "grad_norm")
    if zeros is not None and min(zeros) >= NO_SIGNAL_SHARE and not rising and never_rose and not (
            spread is not None and spread >= NO_SIGNAL_SHARE):
        reasons.append(f"the gradient was exactly zero on {zeros[0]:.0%} of the steps of the first half of the run "
                       f"and {zeros[1]:.0%} of the second")
    held_out = _far_below_held_out(ctx, reward)
    if held_out is not None and not rising and never_rose and not reasons:
        reasons.append(held_out)
    # A penalty or format term resting at 0 is no task left unsolved (a length penalty not phased in yet).
    floor = [c for c in out.constant_components if c.at_floor and c.share >= PINNED_SHARE and not _shaping(c.name)]
    moving = [m for m in ctx.run.metric_names() if m.startswith(COMPONENT_PREFIX) and m.endswith("_mean")
              and m[len(COMPONENT_PREFIX):-len("_mean")] not in {c.name for c in out.constant_components}]
    if not floor:
        floor = _task_parts_never_off_floor(ctx, out)
        moving = [m for m in moving if m[len(COMPONENT_PREFIX):-len("_mean")] not in {c.name for c in floor}]
    unlogged = _unlogged_part_at_zero(ctx, reward)
    if unlogged is not None and not floor and moving:
        floor = [unlogged]
    if floor and moving:
        pinned = ", ".join(f"{c.name} at {num(c.value)} on {c.share:.0%} of steps" for c in floor)
        moved = ", ".join(m[len(COMPONENT_PREFIX):-len("_mean")] for m in moving)
        reasons.append(f"the task component never leaves its floor ({pinned}) while only {moved} moves")
    if not reasons:
        return None
    grad = out.zero_grad_share
    extra = f"; grad norm is exactly 0 on {grad:.0%} of steps" if grad is not None and grad >= 0.5 else ""
    return finding(
        "reward_mean", "no_learning_signal", "critical",
        f"no learning signal over the run: {'; '.join(reasons)}{extra}. The policy has had nothing to learn from "
        "since the start, so more steps buy nothing: fix the reward or the data (parsing, answer format, task "
        "difficulty) first", [int(steps[0])])


def _task_parts_never_off_floor(ctx: Context, out: LearningSignalDiagnosis) -> list[ConstantComponent]:
    """Task parts of the reward that scatter just above their floor but never leave it.

    A correctness part scored on a few hundred samples of prompts that are all too hard reads 0 on most steps and
    1/256 or 2/256 on the rest: not one exact value on almost every step (`PINNED_SHARE`), yet no more signal. Held
    to the test the total reward is held to (its most common value is its lowest, no stretch rose far off it:
    `_never_rose_off`), in both halves of the run.
    """
    pinned = {c.name for c in out.constant_components}
    stuck = []
    for name in ctx.run.metric_names():
        if not (name.startswith(COMPONENT_PREFIX) and name.endswith("_mean")):
            continue
        part = name[len(COMPONENT_PREFIX):-len("_mean")]
        reading = ctx.book.get(name)
        if part in pinned or _shaping(part) or reading is None or reading.series.n < MIN_SIGNAL_POINTS:
            continue
        values = reading.series.values
        value, share = _modal(values)
        at_floor = value <= float(np.min(values))
        if reading.summary.trend != "rising" and at_floor and _never_rose_off(
                values, value, unit_range=within_unit_range(values)) and (
                min(share, _modal(values[len(values) // 2:])[1]) >= NO_SIGNAL_SHARE):
            stuck.append(ConstantComponent(name=part, value=value, share=share, at_floor=True))
    return stuck


def _never_rose_off(values: np.ndarray, value: float, unit_range: bool) -> bool:
    """No stretch of the run rose far off `value`: a run that learnt and then collapsed to its floor had one.

    "Far" is a quarter of the way to the highest value logged; on a 0..1 score also a tenth of the range
    (`NEVER_OFF_FLOOR`): a lucky batch sets the maximum, and against it a best stretch of 3% would pass for a rise.
    """
    best_stretch = float(np.max(robust.window_means(values, robust.stretch_width(len(values)))))
    return best_stretch - value <= 0.25 * (float(np.max(values)) - value) or (
        unit_range and best_stretch <= NEVER_OFF_FLOOR)


FAR_BELOW = 0.1  # a training pass rate under a tenth of the same policy's held-out pass rate


def _far_below_held_out(ctx: Context, reward: Reading) -> str | None:
    """A 0..1 training reward near zero all run while the same policy passes a real share of held-out problems.

    The policy that solves half of the held-out set cannot be solving one training prompt in a hundred: either the
    reward cannot read its answers (an answer extractor or format the completions do not match) or the training
    prompts are far beyond it. Either way almost every group scores 0 alike and nothing is learnt. Needs a held-out
    pass rate (its set size shows in its scores) and a training reward that stays inside 0..1.
    """
    values = reward.series.values
    if float(np.min(values)) < 0.0 or float(np.max(values)) > 1.0:
        return None
    for metric in quality_metrics(ctx):
        scores = ctx.run.series(metric, "eval").to_numpy()
        if len(scores) < 3 or eval_set_size(metric, scores, any_name=True) is None:
            continue
        held = float(np.median(scores))
        best = float(np.max(robust.window_means(values, robust.stretch_width(len(values)))))
        if held > 0.0 and best < FAR_BELOW * held:
            return (f"the training reward never rose above {num(best)} (its best stretch) while the same policy "
                    f"passes {num(held)} of held-out {metric}: the reward cannot see the answers (an extractor or "
                    "format mismatch) or the training prompts are far out of reach, so almost every group scores 0 "
                    "alike")
        return None
    return None


def _zero_halves(ctx: Context, metric: str) -> tuple[float, float] | None:
    """Share of exactly-zero values in each half of a metric's curve (None when it is not logged enough)."""
    reading = ctx.book.get(metric)
    if reading is None or reading.series.n < MIN_SIGNAL_POINTS:
        return None
    return _half_shares(reading.series.values == 0.0)


def _unlogged_part_at_zero(ctx: Context, reward: Reading) -> ConstantComponent | None:
    """The part of the reward that no logged component covers, when it is exactly 0 on (almost) every step.

    A log with the total and only its format component (the total equal to the format reward, step by step)
    says the rest of the reward, the task part, never fired.
    """
    parts = [m for m in ctx.run.metric_names() if m.startswith(COMPONENT_PREFIX) and m.endswith("_mean")]
    # Only when every logged part is a format or style bonus: a single task reward logged as its own component
    # equals the total too, and then nothing is missing.
    if not parts or not all(any(w in m.lower() for w in FORMAT_WORDS) for m in parts):
        return None
    frame = pd.concat([ctx.run.series(m).rename(m) for m in parts], axis=1, join="inner")
    total = pd.Series(reward.series.values, index=reward.series.steps)
    joined = frame.join(total.rename(" total"), how="inner").dropna()
    if len(joined) < MIN_SIGNAL_POINTS:
        return None
    rest = (joined[" total"] - joined[parts].sum(axis=1)).to_numpy()
    share = float(np.mean(np.abs(rest) <= 1e-9))
    if share < PINNED_SHARE:
        return None
    return ConstantComponent(name="the rest of the reward (not logged as a component)", value=0.0, share=share,
                             at_floor=True)


def _recent_spread_gone(ctx: Context) -> bool:
    """The zero-spread share is as high over each half of the run (not a collapse after learning)."""
    for metric in ("reward_std", "reward_zero_std_frac", "advantage_std"):
        reading = ctx.book.get(metric)
        if reading is None:
            continue
        values = reading.series.values
        gone = values >= 1 - NO_SPREAD if metric == "reward_zero_std_frac" else values <= NO_SPREAD
        return min(_half_shares(gone)) >= NO_SIGNAL_SHARE
    return False


def _half_shares(flags: np.ndarray) -> tuple[float, float]:
    """Mean of the first and of the second half of a run's points (of flags: the share of True in each)."""
    half = len(flags) // 2
    return float(np.mean(flags[:half])) if half else 0.0, float(np.mean(flags[half:])) if len(flags) else 0.0


# Instruments that only move when the weights do: a lasting shift of one at a step whose logged gradient norm is 0
# shows that the 0 is not the update's (a norm logged on a skipped or accumulation micro-step).
WEIGHT_WITNESSES = ("entropy", "response_length_mean", "kl")


def _moved_on_zero_gradient(ctx: Context) -> list[str]:
    """Instruments with a lasting level shift at a step where grad norm is logged as exactly 0 (`metric at step`)."""
    grad = ctx.book.get("grad_norm")
    if grad is None:
        return []
    zero_steps = set(grad.series.steps[grad.series.values == 0.0].tolist())
    moved = []
    for metric in WEIGHT_WITNESSES:
        summary = ctx.book.summary(metric)
        shift = next((cp for cp in summary.change_points if cp.step in zero_steps), None) if summary else None
        if shift is not None:
            moved.append(f"{metric} at step {shift.step} ({num(shift.before)}→{num(shift.after)})")
    return moved


def _partial_signal_findings(
    reward: Reading, out: LearningSignalDiagnosis, no_signal_found: bool, moved: list[str] | None = None,
) -> list[Finding]:
    """What the shares say short of "no signal at all": gradients mostly zero, a component pinned at its floor.

    `moved`: instruments that shifted on zero-gradient steps (then the logged zeros cannot all be real).
    """
    findings = []
    step = reward.summary.first_step
    grad = out.zero_grad_share
    # Updates that stopped (or never started) are said by `updates_stopped`, with their cause; the share of zero
    # norms would be the same steps again, with a guessed cause.
    if grad is not None and grad >= 0.5 and not no_signal_found and out.updates_stopped_step is None:
        if moved:
            # The share is a fact; what it means is not, when the policy visibly changed on such steps.
            text = (f"grad norm is logged as exactly 0 on {grad:.0%} of logged steps, yet {', '.join(moved)} shifted "
                    "on such steps: the weights did change, so these zeros are likely not the updates' norm; read "
                    "learning from the reward spread instead")
        else:
            text = (f"grad norm is exactly 0 on {grad:.0%} of logged steps: those updates changed nothing (every "
                    "group scored alike, or the step was skipped), so most of the compute teaches nothing")
        findings.append(finding("grad_norm", "mostly_zero_gradient", "warning", text, [step]))
    if not no_signal_found:
        for c in out.constant_components:
            if c.at_floor:
                findings.append(finding(
                    f"{COMPONENT_PREFIX}{c.name}_mean", "component_pinned_at_floor", "watch",
                    f"reward component {c.name} is {num(c.value)} (its floor) on {c.share:.0%} of logged steps: it "
                    "has not fired yet", [step]))
    return findings


def _no_spread_share(zero: Reading | None, adv: Reading | None) -> tuple[float, float] | None:
    """Share of zero-spread groups (early, recent): logged directly, or from the advantage spread per step."""
    if zero is not None:
        return float(np.clip(zero.summary.start, 0, 1)), float(np.clip(zero.summary.now, 0, 1))
    if adv is not None:
        flat = adv.series.values <= NO_SPREAD
        k = max(3, len(flat) // 10)
        return float(np.mean(flat[:k])), float(np.mean(flat[-k:]))
    return None


def _identical_from_start(reward: Reading, std: Reading | None, adv: Reading | None) -> bool:
    values = reward.series.values
    if len(values) < 5 or float(np.ptp(values)) > NO_SPREAD:
        return False
    spreads = [r.series.values for r in (std, adv) if r is not None]
    return all(float(np.max(np.abs(s))) <= NO_SPREAD for s in spreads)


def _bounds(reward: Reading) -> tuple[float | None, float | None]:
    """The reward's ceiling and floor when the data shows them (a 0/1 reward, or a pinned maximum)."""
    values = reward.series.values
    if within_unit_range(values):
        return 1.0, 0.0
    return float(np.max(values)), float(np.min(values))


def within_unit_range(values: np.ndarray) -> bool:
    """Every value between 0 and 1: a reward read as bounded by them (its ceiling 1, its floor 0)."""
    return bool(len(values)) and float(np.min(values)) >= 0.0 and float(np.max(values)) <= 1.0


def _share_words(share: tuple[float, float] | None) -> str:
    """'every group now scores the same', said as often as the share of zero-spread groups says it."""
    if share is None:
        return "the groups' reward spread is gone"
    if share[1] >= 0.995:
        return "every group now scores the same (all recent groups with zero spread)"
    return f"nearly every group now scores the same ({share[1]:.0%} of recent groups with zero spread)"


def _share_text(share: tuple[float, float] | None) -> str:
    return f" ({share[1]:.0%} of recent groups with zero spread)" if share else ""


def _onset(reading: Reading) -> int:
    summary = reading.summary
    if summary.change_points:
        return summary.change_points[-1].step
    return summary.trend_window_start
