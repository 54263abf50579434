"""How reward moves together with KL: the practitioner's central diagnostic.

KL says how far the policy has moved from its reference; reward says whether the move pays. Rising KL with
rising reward is learning; rising KL with flat reward is drift without benefit (the run has done what it
can); rising KL with falling reward is destruction. When the run logs no KL, we say why, and do not guess.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.models import Finding, KlRewardDiagnosis, Quadrant, QuadrantSpan, Severity, SignalSummary
from assessor.diagnose.signals import Reading, first_rise, lasting_damage, logged_keys, passing_jump, settled_step
from assessor.run import Run, RunFacts

TIMELINE_WINDOWS = 6
MIN_WINDOW_POINTS = 16


def primary_reward(ctx: Context) -> str | None:
    """The training reward to read: the task reward, or for preference training the implicit margin."""
    for metric in ("reward_mean", "pref_margin", "pref_accuracy"):
        if ctx.book.get(metric) is not None:
            return metric
    return None


def reward_rising(ctx: Context) -> bool | None:
    """Whether the training reward is still rising (its recent trend), or None when the run logs none."""
    metric = primary_reward(ctx)
    reading = ctx.book.get(metric) if metric else None
    return None if reading is None else reading.summary.trend == "rising"


def diagnose_kl_reward(ctx: Context) -> KlRewardDiagnosis:
    """Quadrant now and over the run's timeline, with findings."""
    reward_metric = primary_reward(ctx)
    kl = ctx.book.get("kl")
    absent = _kl_absent_reason(ctx, kl)
    if absent is not None:
        return KlRewardDiagnosis(
            kl_measured=False, kl_absent_reason=absent,
            findings=[finding("kl", "kl_not_measured", "info", f"KL is not measured: {absent}.")],
        )
    assert kl is not None
    reward = ctx.book.get(reward_metric) if reward_metric else None
    if reward is None:
        return KlRewardDiagnosis(kl_measured=True, findings=[
            finding("kl", "no_reward", "info", "KL is logged but there is no training reward to read it against.")
        ])
    quadrant_now = _quadrant(_kl_trend_now(kl.summary), reward.summary.trend)
    timeline = _timeline(kl, reward)
    per_nat = logged_per_nat(ctx)
    drift = _drift_since_level_off(kl, reward, _early(ctx), per_nat) if quadrant_now in (
        "kl_up_reward_flat", "kl_up_reward_up") else None
    if drift is not None and _held_out_rose_since(ctx, drift[1]):
        drift = None  # the drift bought held-out gains: not "without benefit"
    since = kl.summary.trend_window_start
    then = (robust.level_at(kl.series, since), robust.level_at(reward.series, since))
    findings = _findings(quadrant_now, kl.summary, reward.summary, timeline, drift, then, per_nat,
                         summed=kl_summed_over_sequence(ctx.run))
    # A lurch is read on the logged level as it stands (never more readily than on a KL logged in nats): a jump
    # found on a noisy per-step ramp of a scaled KL is not worth a rollback on an assumed coefficient.
    findings.extend(_kl_jumps(kl, reward, ctx.facts.planned_total_steps))
    if per_nat == 1.0 and not kl_summed_over_sequence(ctx.run):
        findings.extend(_kl_pinned_while_policy_moves(ctx, kl.summary))
    return KlRewardDiagnosis(kl_measured=True, quadrant_now=quadrant_now, timeline=timeline, findings=findings)


def _kl_absent_reason(ctx: Context, kl: Reading | None) -> str | None:
    facts = ctx.facts
    if kl is not None:
        if float(np.max(np.abs(kl.series.values))) == 0.0:
            return "it is logged as exactly 0 throughout, i.e. there is no KL term (0 does not mean no drift)"
        return None
    if facts.algorithm in ("dpo", "ipo"):
        return "DPO keeps the policy near its reference implicitly (through beta); its logs carry no KL"
    if facts.algorithm in ("orpo", "simpo", "cpo"):
        return f"{facts.algorithm.upper()} has no reference model, so there is no KL to log"
    if facts.beta == 0:
        where = facts.provenance.get("beta", "the config")
        return f"beta = 0 ({where}), so there is no KL term and nothing to log"
    if facts.framework == "trl" and facts.algorithm in ("grpo", None):
        return "TRL's GRPO logs `kl` only when beta > 0, and beta = 0 is its default since v0.19"
    if facts.framework == "verl":
        return "verl logs `actor/kl_loss` only with use_kl_loss (or `actor/reward_kl_penalty` with KL in the reward)"
    return "the run does not log it"


KL_JUMP_RATIO = 10.0  # an order of magnitude in one go: a blow-up, whatever the estimator or beta
# Per-token KL in nats: practitioners treat about 0.5 as a warning and 1 as a stop sign. Below a hundredth the
# policy has hardly moved, whatever the ratios say; below a tenth, growth is worth watching, not alarming.
KL_MATERIAL = 0.01
KL_NOTABLE = 0.1
KL_HIGH = 0.5
KL_FAR = 1.0


RFS_DEFAULT_KL_COEFF = 0.001  # reasoning-from-scratch's scripts' default `kl_coeff`


# A per-token KL that never leaves this level, while entropy or answer length moves this much, anchors nothing.
KL_PINNED = 0.002
POLICY_MOVED = {"entropy": 0.3, "response_length_mean": 0.5}  # relative change, start to now


def _kl_pinned_while_policy_moves(ctx: Context, kl: SignalSummary) -> list[Finding]:
    """A KL that stays near zero all run while the policy visibly changes: the reference moves with the policy.

    Against a fixed reference the per-token KL grows as entropy halves or answers double in length (a hundredth of
    a nat and more); one that stays at a few ten-thousandths is measured against a reference that follows the
    policy (TRL's `sync_ref_model` every step) or against the policy itself, and its penalty holds nothing back.
    """
    if kl.points < 30 or kl.peak > KL_PINNED or kl.trend == "rising":
        return []
    moved = []
    for metric, share in POLICY_MOVED.items():
        reading = ctx.book.get(metric)
        if reading is None or reading.summary.start <= 0:
            continue
        s = reading.summary
        if abs(s.now - s.start) >= share * s.start:
            moved.append(f"{metric} {num(s.start)} → {num(s.now)}")
    if not moved:
        return []
    return [finding(
        "kl", "kl_pinned_near_zero", "watch",
        f"KL stays near zero all run (now {num(kl.now)} nats per token, never above {num(kl.peak)}) while the policy "
        f"clearly changed ({', '.join(moved)}): against a fixed reference it would have grown, so the reference "
        "likely follows the policy (a reference synced every few steps) or the KL is measured against the policy "
        "itself; its penalty anchors nothing", [kl.first_step, kl.last_step])]


def coefficient_scaled(facts: RunFacts) -> bool:
    """Whether the run's logged KL is the KL term of its loss (coefficient x KL), not the KL itself."""
    return facts.framework == "reasoning_from_scratch"


def logged_per_nat(ctx: Context) -> float | None:
    """Logged KL units per nat of per-token KL: 1 where the per-token KL itself is logged, None where unknown.

    reasoning-from-scratch logs `kl_loss` = kl_coeff x the KL summed over a completion's tokens, so one nat per
    token reads as kl_coeff x the completion length. The coefficient is the config's beta when known, else the
    scripts' default; without a length the scale is unknown, the levels above (a hundredth, a tenth of a nat) are
    not read at all, and only the KL's growth relative to itself counts.
    """
    if not coefficient_scaled(ctx.facts):
        return 1.0
    length = ctx.book.get("response_length_mean")
    if length is None or length.summary.now <= 0:
        return None
    return (ctx.facts.beta or RFS_DEFAULT_KL_COEFF) * length.summary.now


def _at_least(level: float, nats: float, per_nat: float | None) -> bool:
    """Whether a logged KL level is at least `nats` nats (True where the logged scale is unknown)."""
    return per_nat is None or level >= nats * per_nat


def _kl_jumps(kl: Reading, reward: Reading, planned: int | None) -> list[Finding]:
    """KL shifting to a new level several times higher in one go and staying there: a blow-up, not drift.

    A jump that eased back since is a lurch that passed: a breakage only where it left the reward lower.
    """
    # A blow-up that keeps climbing after the jump defeats the level-shift test (the level after it is not flat);
    # on a log scale the tenfold jump itself stands out.
    jump = _held_level_shift(kl, planned) or first_rise(kl.summary, KL_JUMP_RATIO, planned=planned)
    # The latest few logged values, not the smoothed level (which lags a blow-up in its last hundred steps).
    latest_kl = float(np.median(kl.series.values[-3:]))
    if jump is not None and latest_kl < math.sqrt(jump[1] * jump[2]):
        return _lurch_left_damage(latest_kl, reward, jump)  # back below halfway (on a log scale): it did not stay
    if jump is None:
        lurch = passing_jump(kl, KL_JUMP_RATIO, planned)
        return _lurch_left_damage(latest_kl, reward, lurch) if lurch else []
    step, before, after = jump
    if after < KL_MATERIAL:
        return []  # a tenfold rise from about zero to a level that is still about zero is no lurch
    # Worse now than just before the jump: the stretch before it against the latest stretch.
    series = reward.series
    width = robust.stretch_width(series.n)
    before_jump, latest = np.zeros(series.n, dtype=bool), np.zeros(series.n, dtype=bool)
    before_jump[np.flatnonzero(series.steps < step)[-width:]] = True
    latest[-width:] = True
    worse = before_jump.sum() >= 3 and not (before_jump & latest).any() and robust.level_shift(
        series, before_jump, latest).t <= -2.0
    # Quoted as the signals table quotes the same shift (its segments' levels), when the table lists it.
    shown = next(((c.segment_before, c.segment_after) for c in kl.summary.change_points
                  if c.step == step and c.segment_before and c.segment_after is not None), (before, after))
    return [finding(
        "kl", "kl_jump", "critical" if worse else "warning",
        f"KL jumped from about {num(shown[0])} to {num(shown[1])} at step {step} ({shown[1] / shown[0]:.0f}x) "
        f"and stayed there{' while reward fell' if worse else ''}: the policy lurched away from its reference",
        [step])]


def _lurch_left_damage(latest_kl: float, reward: Reading, lurch: tuple[int, float, float]) -> list[Finding]:
    """A KL lurch that eased back, with the reward lower ever since: the weights from before it were better.

    The lurch itself is over (so it is no held jump), but the damage is not: a practitioner reads the weights
    from before the jump as the better model, and any checkpoint from after it as the broken one. A lurch the
    reward recovered from is a passing risk, and is left to the spike report.
    """
    step, before, after = lurch
    damage = lasting_damage(reward, step) if after >= KL_MATERIAL else None
    if damage is None:
        return []
    return [finding(
        "kl", "kl_jump", "warning",
        f"KL jumped from about {num(before)} to {num(after)} at step {step} ({after / before:.0f}x) and is "
        f"{num(latest_kl)} now, but {reward.summary.metric} never got back: "
        f"{num(damage.after)} lately against {num(damage.before)} just before the jump ({-damage.t:.1f} standard "
        "errors lower): the policy lurched away from its reference and the damage stayed", [step])]


def _held_level_shift(kl: Reading, planned: int | None) -> tuple[int, float, float] | None:
    """A change point at least 3x up whose rise happens between neighbouring points and holds (after settling-in)."""
    steps, values = kl.series.steps, kl.series.values
    settled = settled_step(kl.summary, planned)
    for cp in kl.summary.change_points:
        if cp.step <= settled:
            continue
        if cp.direction != "up" or cp.before <= 0 or cp.after < 3 * cp.before or cp.size_noise < 5:
            continue
        # Abrupt, not a ramp: most of the rise happens between two consecutive logged points near the change
        # point. Binary segmentation also cuts a smooth early rise of KL into steps, which is healthy.
        near = np.flatnonzero(np.abs(steps - cp.step) <= max(3, (kl.summary.last_step - kl.summary.first_step) // 50))
        if len(near) < 2:
            continue
        lo, hi = max(0, int(near[0]) - 1), min(len(values) - 1, int(near[-1]) + 1)
        if hi <= lo:
            continue
        i = lo + int(np.argmax(np.diff(values[lo:hi + 1]))) + 1  # first point after the biggest single step
        # The step must hold: the few points after it sit well above the few before (a one-step spike does not).
        held = float(np.median(values[i:i + 3])) - float(np.median(values[max(0, i - 3):i]))
        if held >= 0.5 * (cp.after - cp.before):
            return cp.step, cp.before, cp.after
    return None


def _early(ctx: Context) -> bool:
    """Under a fifth of the planned steps done: "has not moved yet" is not "will not move"."""
    planned, last = ctx.facts.planned_total_steps, ctx.run.last_step
    return bool(planned and last is not None and last < EARLY_FOR_NEVER_MOVED * planned)


EARLY_FOR_NEVER_MOVED = 0.2
MIN_KL_GROWTH = 1.5  # KL at least half again as far from the reference as when reward stopped improving


HELD_OUT_GAIN_NOISE = 2.0  # eval-to-eval noise units a held-out score must gain for a drift to have paid


def _held_out_rose_since(ctx: Context, step: int) -> bool:
    """A held-out quality series rose clearly since `step`: its latest two evaluations against its first two then.

    The reward standing still while KL drifts is "drift without benefit" only if what the reward stands in for stood
    still too: a reward model's score pinned near its ceiling says nothing about the judged win rate beside it.
    """
    from assessor.diagnose.evaluation import eval_score, held_out_noise, quality_metrics

    for metric in quality_metrics(ctx):
        series = ctx.run.series(metric, "eval")
        steps, values = series.index.to_numpy(), series.to_numpy()
        since = steps >= step
        if since.sum() < 4:
            continue
        score = eval_score(metric, values)
        noise = held_out_noise(ctx, metric, values, score)
        part = score[since]
        if noise > 0 and (float(np.mean(part[-2:])) - float(np.mean(part[:2]))) / noise >= HELD_OUT_GAIN_NOISE:
            return True
    return False


def _drift_since_level_off(
    kl: Reading, reward: Reading, early: bool, per_nat: float | None,
) -> tuple[str, int] | None:
    """Reward levelled off long ago and KL kept climbing since: the observation and the bend's step, or None.

    The practitioner's test: reward has gone nowhere for at least as long as it took to climb (its rate after
    the bend is a small fraction of the climb's, and the data rule out a substantial one), while KL has grown
    by half again or more since the bend: the policy keeps moving for no gain. A recent window alone cannot
    say this on a noisy curve; the whole stretch since the bend can.
    """
    series, metric = reward.series, reward.summary.metric
    if not _at_least(kl.summary.now, KL_NOTABLE, per_nat):
        return None  # a tenth of a nat from the reference is no drift worth stopping a run for
    bend = robust.level_off(series)
    if bend is not None and bend.plateau(min_flat_points=min_flat_points(reward)):
        since, what = bend.step, (
            f"{metric} levelled off around step {bend.step}: it climbed for {bend.climb_steps} steps and in the "
            f"{bend.flat_steps} since has kept {max(0.0, bend.rate_left):.0%} of its climb rate")
    elif bend is None and not early and _never_moved(series, reward.summary.trend_window_start):
        since, what = int(series.steps[0]), f"{metric} has not moved over the whole run"
    else:
        return None
    steps, values = kl.series.steps, kl.series.values
    width = robust.stretch_width(kl.series.n)
    then = float(np.mean(values[robust.nearest(steps, since, width)]))
    now = float(np.mean(values[-width:]))
    if then <= 0 or now < MIN_KL_GROWTH * then:
        return None
    return (f"{what}, while KL went {num(then)} → {num(now)} ({now / then:.1f}x): drift without benefit, the run "
            "has done what it can"), since


def min_flat_points(reading: Reading) -> int:
    """Logged points a flat stretch needs, in units of the points this log has.

    A log that averages its steps between rows (TRL's Trainer: each row is the mean of `logging_steps` steps)
    carries that many steps' evidence per row; the requirement is on evidence, so it shrinks with the average.
    """
    averaged = reading.averaged_steps
    return max(MIN_AVERAGED_FLAT_POINTS, math.ceil(robust.MIN_FLAT_POINTS / averaged))


MIN_AVERAGED_FLAT_POINTS = 8


def _never_moved(series: robust.Series, recent_start: int) -> bool:
    """Flat from the start, shown to be (its most optimistic slope would not move it by a noise unit)."""
    return robust.trend(series, int(series.steps[0])).direction == "flat" and robust.progress(
        series, recent_start).stalled


def _kl_trend_now(kl: SignalSummary) -> str:
    """KL counts as still rising only if the rise is not levelling off into a small fraction of its level.

    Every run's KL grows from near zero; one that has grown eightfold and now adds a tenth of its level while
    clearly slowing down has flattened, which is what a practitioner would call it.
    """
    if kl.trend == "rising" and kl.slowing is True and kl.now > 0 and kl.trend_change < 0.25 * kl.now:
        return "flat"
    return kl.trend


def kl_not_drifting(kl: SignalSummary) -> str | None:
    """Why a KL the quadrant calls stable reads otherwise in the signals table (None when the table says flat too).

    "Stable" means not drifting away from the reference: a falling KL is pulled back, and one still rising but
    levelling off into a small share of its level has flattened (`_kl_trend_now`). Said in words wherever "stable"
    sits beside a table row that reads "falling" or "rising", so the two are not taken for a contradiction.
    """
    if kl.trend == "falling" and kl.now < 0:
        return (f"falling in the table, below 0 to {num(kl.now)}: no KL is negative, so its estimate has broken "
                "down (a KL penalty on it now pays the policy to move away), not pulled back")
    if kl.trend == "falling":
        return "falling in the table: pulled back towards the reference, not drifting"
    if kl.trend == "rising" and _kl_trend_now(kl) != "rising":
        return ("still rising in the table, but slowing and by under a quarter of its level over the window: "
                "levelled off")
    return None


def _kl_steady(kl: SignalSummary) -> str:
    """KL's level in a stable quadrant's finding, in words that agree with the table's trend."""
    if kl.trend == "falling" and kl.now < 0:
        return f"KL falling below 0, to {num(kl.now)} (a broken estimate: a penalty on it is now a bonus)"
    if kl.trend == "falling":
        return f"KL falling to {num(kl.now)} (pulled back, not drifting)"
    if kl.trend == "rising":
        return f"KL levelling off at {num(kl.now)}"
    return f"KL steady at {num(kl.now)}"


def _direction(trend: str) -> str:
    return {"rising": "up", "falling": "down"}.get(trend, "flat")


def _quadrant(kl_trend: str, reward_trend: str) -> Quadrant:
    # A falling KL (a penalty pulling the policy back) counts as "stable": it is not drift.
    kl_part = "kl_up" if kl_trend == "rising" else "kl_stable"
    return f"{kl_part}_reward_{_direction(reward_trend)}"  # type: ignore[return-value]


def _timeline(kl: Reading, reward: Reading) -> list[QuadrantSpan]:
    first = max(int(kl.series.steps[0]), int(reward.series.steps[0]))
    last = min(int(kl.series.steps[-1]), int(reward.series.steps[-1]))
    if last <= first:
        return []
    points = min(len(kl.series.red_steps), len(reward.series.red_steps))
    # Each window needs enough points for its own trend test to have a chance against the noise.
    windows = max(1, min(TIMELINE_WINDOWS, points // MIN_WINDOW_POINTS))
    edges = np.linspace(first, last + 1, windows + 1).astype(int)
    spans: list[QuadrantSpan] = []
    for start, end in itertools.pairwise(edges):
        kl_trend = robust.trend(kl.series, int(start), end_step=int(end))
        reward_trend = robust.trend(reward.series, int(start), end_step=int(end))
        quadrant = _quadrant(kl_trend.direction, reward_trend.direction)
        if spans and spans[-1].quadrant == quadrant:
            previous = spans[-1]
            spans[-1] = previous.model_copy(update={
                "end_step": int(end) - 1, "reward_change": previous.reward_change + reward_trend.change,
                "kl_change": previous.kl_change + kl_trend.change,
            })
        else:
            spans.append(QuadrantSpan(
                start_step=int(start), end_step=int(end) - 1, quadrant=quadrant,
                reward_change=reward_trend.change, kl_change=kl_trend.change,
            ))
    return [part for span in spans for part in _split_at_turn(_retested(span, kl, reward), kl, reward)]


def _split_at_turn(span: QuadrantSpan, kl: Reading, reward: Reading, depth: int = 0) -> list[QuadrantSpan]:
    """A span whose reward went well past both its ends (fell and came back, rose and fell) cut at that turn.

    Whole, its label (the trend test's: mostly rising) and its move (end minus start: negative) say opposite
    things about a collapse and a partial recovery; cut at the low point, each part says one thing. The parts are
    cut again where they turn too (a rise, a collapse and a partial recovery are three spans), down to spans of
    `MIN_WINDOW_POINTS` reduced points.
    """
    series = reward.series
    inside = (series.red_steps > span.start_step) & (series.red_steps < span.end_step)
    if inside.sum() < max(2, 2 * MIN_WINDOW_POINTS if depth else 2) or depth >= MAX_TURNS:
        return [span]
    ends = (robust.level_at(series, span.start_step), robust.level_at(series, span.end_step))
    levels, steps = series.smooth[inside], series.red_steps[inside]
    margin = 2.0 * max(series.noise, robust.noise_floor(series.values))
    if float(levels.min()) < min(ends) - margin:
        turn = int(steps[int(np.argmin(levels))])
    elif float(levels.max()) > max(ends) + margin:
        turn = int(steps[int(np.argmax(levels))])
    else:
        return [span]
    first = span.model_copy(update={"end_step": turn})
    second = span.model_copy(update={"start_step": turn + 1})
    return [*_split_at_turn(_retested(first, kl, reward), kl, reward, depth + 1),
            *_split_at_turn(_retested(second, kl, reward), kl, reward, depth + 1)]


MAX_TURNS = 3  # cuts deep: a span is cut at most this many times over


def _retested(span: QuadrantSpan, kl: Reading, reward: Reading) -> QuadrantSpan:
    """A merged span labelled by the trend tests over its whole length.

    Slices too short to show a slow climb on their own can add up to one that is clear: four "flat" slices that
    together gained 7 noise units are a rising reward, and the label must say what its own numbers say.
    """
    end = span.end_step + 1
    kl_trend = robust.trend(kl.series, span.start_step, end_step=end)
    reward_trend = robust.trend(reward.series, span.start_step, end_step=end)
    # The moves quoted are the smoothed levels' differences across the span (as the table's levels are read), not
    # sums of the slices' fitted changes, which can carry the wrong sign where a curve rose and fell back.
    def moved(series: robust.Series) -> float:
        return robust.level_at(series, span.end_step) - robust.level_at(series, span.start_step)

    reward_moved, kl_moved = moved(reward.series), moved(kl.series)
    # The label says what the quoted move says: a trend the test calls up over a span whose levels moved down (or
    # by a fraction of a noise unit) is no "reward up" (a reader met "reward -0.0215 ... (kl up reward up)").
    reward_direction = _agreeing(reward_trend.direction, reward_moved, reward.series)
    kl_direction = _agreeing(kl_trend.direction, kl_moved, kl.series)
    return span.model_copy(update={"quadrant": _quadrant(kl_direction, reward_direction),
                                   "reward_change": reward_moved, "kl_change": kl_moved})


SPAN_MOVE_NOISE = 0.5  # a span's quoted move must be at least this many noise units to carry its trend's label
SPAN_OBVIOUS_NOISE = 3.0  # a quoted move this large is the span's direction, whatever the rank test over it says


def _agreeing(direction: str, moved: float, series: robust.Series) -> str:
    """A span's trend word, made to agree with its quoted move (the level at its end minus the level at its start).

    A move of `SPAN_OBVIOUS_NOISE` noise units or more gives the direction (a span that rose and then collapsed
    below where it began tests "flat" over its whole length, yet it lost 0.37); a trend whose move has the other
    sign, or is under `SPAN_MOVE_NOISE` noise units, is "flat".
    """
    noise = max(series.noise, robust.noise_floor(series.values))
    if abs(moved) >= SPAN_OBVIOUS_NOISE * noise:
        return "rising" if moved > 0 else "falling"
    if direction == "flat" or abs(moved) < SPAN_MOVE_NOISE * noise or (moved > 0) != (direction == "rising"):
        return "flat"
    return direction


# Keys whose KL is summed over each completion's tokens, not a per-token mean: TRL's PPO, RLOO, online DPO and XPO
# trainers (`objective/kl`, with `objective/entropy` summed the same way) and its Nash-MD trainer (`loss/kl`),
# however a logger prefixes them (`train/objective/kl` in TensorBoard).
SEQUENCE_KL_KEYS = frozenset({"objective/kl", "loss/kl"})


def kl_summed_over_sequence(run: Run) -> bool:
    """Whether the logged KL is a sum over each completion's tokens (TRL's PPO-style keys), not nats per token."""
    keys = logged_keys(run, "kl")
    # `loss/kl` is TRL's only where TRL wrote it; a loop of one's own may log a per-token KL under that name.
    trl_only = {"loss/kl"} if run.facts.framework != "trl" else set()
    return bool(keys) and keys <= SEQUENCE_KL_KEYS - trl_only


def _findings(
    quadrant: Quadrant, kl: SignalSummary, reward: SignalSummary, timeline: list[QuadrantSpan],
    drift: tuple[str, int] | None, then: tuple[float, float], per_nat: float | None, summed: bool = False,
) -> list[Finding]:
    # The moves quote the smoothed levels at both ends of the window, never now minus a fitted change: a line
    # fitted through a jump invents a start the curve never had (a negative KL, a reward above its peak).
    since = kl.trend_window_start
    kl_then, reward_then = then
    kl_move = f"KL {num(kl_then)} → {num(kl.now)} since step {since}"
    reward_level = f"{reward.metric} {num(reward.now)}"
    # Sized from the two levels it quotes, so the numbers check against each other (the table's recent trend is
    # a fitted change, a different quantity).
    size = (reward.now - reward_then) / reward.noise if reward.noise > 0 else 0.0
    reward_move = f"{reward.metric} {num(reward_then)} → {num(reward.now)} ({size:+.1f} noise units)"

    out: list[Finding] = []
    if quadrant == "kl_up_reward_down":
        # A KL still about zero is no move away from the reference: the reward's own findings speak for it.
        # A fall under one noise unit of the level is a trend the test can see but not yet a worse model.
        severity: Severity = "watch" if not _at_least(kl.now, KL_MATERIAL, per_nat) else (
            "critical" if size <= -1.0 else "warning")
        worse = "getting worse" if size <= -1.0 else "its reward edging down (under one noise unit so far)"
        out.append(finding("kl_reward", quadrant, severity,
                           f"{kl_move} while {reward_move}: the policy is moving away from its reference and {worse}",
                           [since]))
    elif drift is not None:
        # Also when the latest window ticks up: on the whole stretch since the bend, that is noise on a plateau.
        out.append(finding("kl_reward", "kl_up_reward_flat", "warning", drift[0], [drift[1]]))
    elif quadrant == "kl_up_reward_flat":
        # A consistent drift (small Mann-Kendall p) that is too small to count as a trend is not "no clear trend".
        way = "up" if reward.trend_change >= 0 else "down"
        # The table calls it flat: the test is significant, but the move is under the quarter of a noise unit a
        # trend also needs (said with both numbers, so "p=0.00" beside "flat" is not read as a contradiction).
        unclear = (f"drifts {way} consistently but by only {reward.trend_change_noise:+.1f} noise units over the "
                   f"same stretch (Mann-Kendall p={reward.trend_p:.2f}; a trend also needs a quarter of a noise "
                   "unit, so the table reads flat), so whether it still pays is unclear" if reward.trend_p < 0.05 else
                   f"shows no clear trend over the same stretch (Mann-Kendall p={reward.trend_p:.2f}), but the noise "
                   "cannot rule out that it is still rising")
        out.append(finding("kl_reward", "kl_up_reward_unclear", "watch", f"{kl_move}; {reward_level} {unclear}",
                           [since]))
    elif quadrant == "kl_up_reward_up":
        out.append(finding("kl_reward", quadrant, "info",
                           f"{kl_move} with {reward_move}: the policy changes and improves on the training "
                           "reward (whether that transfers is the held-out eval's to say)", [since]))
    elif quadrant == "kl_stable_reward_up":
        out.append(finding("kl_reward", quadrant, "info",
                           f"{reward_move} with {_kl_steady(kl)}: improving on the training reward "
                           "without drifting", [since]))
    elif quadrant == "kl_stable_reward_flat":
        out.append(finding("kl_reward", quadrant, "watch",
                           # "no established trend", the table's words: a fit the test cannot call is not "flat"
                           f"{_kl_steady(kl)} and {reward_level} with no established trend: the run is not clearly "
                           "improving or drifting now", [since]))
    else:
        out.append(finding("kl_reward", quadrant, "warning",
                           f"{reward_move} with {_kl_steady(kl)}", [since]))
    # Growth without bound: still rising fast relative to its own level, with no sign of levelling off.
    # (Every run's KL is many times its near-zero start; that alone says nothing.)
    # Not below a hundredth of a nat (per token): there the policy has hardly moved, however fast in relative terms.
    if (kl.trend == "rising" and kl.slowing is not True and kl.now > 0 and kl.trend_change >= 0.25 * kl.now
            and _at_least(kl.now, KL_MATERIAL, per_nat)):
        out.append(finding("kl", "kl_unbounded", "warning" if _at_least(kl.now, KL_NOTABLE, per_nat) else "watch",
                           f"KL is still climbing fast: {num(kl_then)} → {num(kl.now)} since step {since} "
                           f"(+{max(0.0, kl.now - kl_then) / kl.now:.0%} of its current level) with no sign of "
                           "levelling off", [since]))
    # The level itself, whatever its trend: a per-token KL of several nats is far from the reference even when it
    # holds steady and the reward climbs. Only where the per-token KL itself is logged: a coefficient-scaled,
    # summed KL is read by its growth (the sheet says so), and a level converted from it would be a guess.
    if per_nat == 1.0 and not summed and kl.now >= KL_HIGH:
        out.append(finding("kl", "kl_high", "warning" if kl.now >= KL_FAR else "watch",
                           f"KL is high: {num(kl.now)} nats per token now; about 0.5 is a warning level and 1 a stop "
                           "sign: the policy is far from its reference, so read completions for degenerate text "
                           "before trusting the reward", [kl.last_step]))
    earlier_bad = [s for s in timeline[:-1] if s.quadrant in ("kl_up_reward_flat", "kl_up_reward_down")]
    if earlier_bad and quadrant not in ("kl_up_reward_flat", "kl_up_reward_down"):
        span = earlier_bad[-1]
        out.append(finding("kl_reward", "earlier_drift", "info",
                           f"steps {span.start_step}–{span.end_step} were {span.quadrant.replace('_', ' ')}",
                           [span.start_step]))
    return out
