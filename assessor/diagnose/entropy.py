"""Token entropy: the expected gradual decline, a collapse towards determinism, or a blow-up towards noise.

Entropy is measured in nats, so a rise of `d` nats multiplies the per-token perplexity (the effective
number of equally likely next tokens) by e^d; that is the physical scale used for a blow-up. Its ceiling
is ln(vocabulary size), the entropy of uniformly random tokens: a policy near it writes gibberish. A fall is
read as a fraction of the run's own start, since what is "low" depends on the model and the task.
"""

from __future__ import annotations

import math

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.kl_reward import primary_reward
from assessor.diagnose.models import EntropyDiagnosis, Finding, Severity
from assessor.diagnose.signals import Reading, lasting_damage, logged_keys, passing_jump, significant_change
from assessor.run import Run

BLOW_UP_NATS = math.log(10)  # per-token perplexity up tenfold from the start
STILL_UP_NATS = math.log(10) / 2  # perplexity still more than ~3x the start: the blow-up has not healed
NEAR_UNIFORM = 0.5  # half way to ln(vocab): most of the way to random tokens on a log scale
# Vocabulary unknown: take the largest vocabulary in common use (262,144 tokens), which understates how
# close to uniform a given entropy is, so "critical" is only said when it holds for any common tokenizer.
LN_VOCAB_UPPER = math.log(262_144)
COLLAPSE_GONE = 0.1  # a tenth of the starting entropy: near-deterministic whatever the speed
COLLAPSE_FAST = 0.25  # a quarter of the start, reached fast
FAST_SHARE = 0.2  # "fast": most of the fall happens within a fifth of the run
# A collapse is dated from where its middle half begins: the first tenth of a fall to a tenth of the start is the
# gentle sharpening every learning run shows, which can last most of the run before the cliff.
COLLAPSE_EDGE = 0.25
LOW_SHARE = 0.25  # a gradual decline to a quarter of the start is still worth watching
DECLINE_RELATIVE = 0.85  # a decline must take at least 15% off the start to be called one
RISE_RELATIVE = 1.25
SIGNIFICANT_NOISE = 3.0
CLEAR_NOISE = 5.0


def diagnose_entropy(ctx: Context) -> EntropyDiagnosis:
    """Classify the entropy curve and say what it means.

    Args:
        ctx: The run and its readings.

    Returns:
        The pattern (gradual_decline, stable, rising, collapse, blow_up, absent), the start and current
        levels, ln(vocabulary) when the vocabulary is known, and findings.
    """
    vocab = ctx.facts.vocab_size
    ln_vocab = math.log(vocab) if vocab and vocab > 1 else None
    reading = ctx.book.get("entropy")
    if reading is None:
        return EntropyDiagnosis(pattern="absent", ln_vocab=ln_vocab)
    s = reading.summary
    blow_up = _blow_up(reading, ln_vocab)
    if blow_up:
        return EntropyDiagnosis(pattern="blow_up", start=s.start, now=s.now, ln_vocab=ln_vocab, findings=blow_up)
    diagnosis = _pattern(reading, ln_vocab)
    diagnosis.findings.extend(_lurch_left_damage(ctx, reading))
    return diagnosis


def _pattern(reading: Reading, ln_vocab: float | None) -> EntropyDiagnosis:
    """Decline, collapse, rise or stable, with what each means."""
    s = reading.summary
    noise = max(s.noise, robust.noise_floor(reading.series.values))
    change = s.now - s.start
    if change < 0 and s.start > 0 and s.now <= DECLINE_RELATIVE * s.start and significant_change(s, change, noise):
        pattern, findings = _decline(reading)
        return EntropyDiagnosis(pattern=pattern, start=s.start, now=s.now, ln_vocab=ln_vocab, findings=findings)
    if change > 0 and s.now >= RISE_RELATIVE * max(s.start, 0.0) and significant_change(s, change, noise):
        onset = _settled_step(reading, (s.start + s.now) / 2, above=True)
        # A sum over each completion's tokens (above any per-token entropy) grows with the completions' length.
        meaning = ("It is summed over each completion (it starts above any per-token entropy), so it grows with "
                   "completion length: read it against the length before reading it as uncertainty."
                   if summed_over_sequence(reading) else
                   "The policy grows less certain: forgetting if the reward falls, exploration if it rises.")
        return EntropyDiagnosis(pattern="rising", start=s.start, now=s.now, ln_vocab=ln_vocab, findings=[finding(
            "entropy", "entropy_rising", "watch",
            f"Entropy is rising: {num(s.start)} at the start, {num(s.now)} now, above the midpoint since step "
            f"{onset}. {meaning}",
            [onset, s.last_step],
        )])
    return EntropyDiagnosis(pattern="stable", start=s.start, now=s.now, ln_vocab=ln_vocab)


LURCH_FACTOR = 2.0  # entropy doubling in one go between steady stretches: the sampling changed character


def _lurch_left_damage(ctx: Context, reading: Reading) -> list[Finding]:
    """Entropy doubling in one go and holding a while, with the reward lower ever since (however entropy went on).

    Too small and short for a blow-up (tenfold perplexity), and often eased back by now, but a policy that lurched
    and never earned its reward back is broken from that step: the weights before it were better. A held-out eval
    that rose after it overrules this (a planned temperature step raises entropy and costs train reward alone).
    """
    metric = primary_reward(ctx)
    reward = ctx.book.get(metric) if metric else None
    lurch = passing_jump(reading, LURCH_FACTOR, ctx.facts.planned_total_steps) if (
        reward is not None and not summed_over_sequence(reading)) else None
    if reward is None or lurch is None:
        return []
    step, before, after = lurch
    damage = lasting_damage(reward, step)
    if damage is None:
        return []
    return [finding(
        "entropy", "entropy_lurch", "warning",
        f"Entropy jumped from about {num(before)} to {num(after)} at step {step} ({after / before:.1f}x) and "
        f"{metric} never got back: {num(damage.after)} lately against {num(damage.before)} just before the jump "
        f"({-damage.t:.1f} standard errors lower): the policy lurched and the damage stayed", [step])]


def summed_over_sequence(reading: Reading) -> bool:
    """An entropy summed over each completion (TRL PPO's `objective/entropy`): it starts above any per-token entropy.

    Such a sum grows with completion length, so the per-token tests (a blow-up in nats, a doubling) do not apply.
    """
    return reading.summary.start > LN_VOCAB_UPPER


# Keys whose entropy is a sum over each completion's tokens: TRL's PPO, RLOO (before v0.22), online DPO and XPO
# trainers' `objective/entropy`, `(-logprobs).sum(1).mean()`, however a logger prefixes it.
SEQUENCE_ENTROPY_KEYS = frozenset({"objective/entropy"})


def entropy_summed(run: Run, start: float | None, now: float | None, ln_vocab: float | None) -> bool:
    """Whether the run's entropy is summed over each completion: read from a key that sums it, or above ln(vocab)."""
    keys = logged_keys(run, "entropy")
    return (bool(keys) and keys <= SEQUENCE_ENTROPY_KEYS) or _above_uniform(start, now, ln_vocab)


def _above_uniform(start: float | None, now: float | None, ln_vocab: float | None) -> bool:
    """Whether an entropy curve sits above ln(vocabulary), which no per-token entropy can.

    Then it is summed over the sequence (TRL's PPO `objective/entropy`), and the uniform-noise ceiling, a per-token
    line, does not apply to it: the sheet and the dashboard leave the comparison out and say why.
    """
    # Without the model's vocabulary, the largest common one bounds any per-token entropy.
    ceiling = ln_vocab if ln_vocab is not None else LN_VOCAB_UPPER
    return any(level is not None and level > ceiling for level in (start, now))


def _blow_up(reading: Reading, ln_vocab: float | None) -> list[Finding]:
    """Entropy jumping far above its start (per-token perplexity up at least tenfold, many noise units)."""
    s = reading.summary
    noise = max(s.noise, robust.noise_floor(reading.series.values))
    rise = s.peak - s.start
    if rise < BLOW_UP_NATS or rise < CLEAR_NOISE * noise or summed_over_sequence(reading):
        return []
    onset = _first_crossing(reading, s.start + rise / 2)
    ceiling, ceiling_text = (
        (ln_vocab, f"ln(vocabulary) = {num(ln_vocab)}") if ln_vocab is not None else
        (LN_VOCAB_UPPER, f"against ln(262,144) = {num(LN_VOCAB_UPPER)} for the largest common vocabulary, since "
         f"this run's is not known; the true share can only be higher")
    )
    still_up = s.now - s.start >= STILL_UP_NATS
    fraction = s.now / ceiling
    perplexity = f"about {num(math.exp(s.now))} equally likely tokens per position"
    shape = (f"rose from {num(s.start)} to {num(s.peak)} (peak at step {s.peak_step}), past half-way from step "
             f"{onset}")
    severity: Severity
    if still_up and fraction >= NEAR_UNIFORM:
        severity = "critical"
        verdict = (f"and is {num(s.now)} now, {num(fraction * 100)}% of the entropy of uniform noise "
                   f"({ceiling_text}): {perplexity}, the policy is emitting near-random tokens.")
    elif still_up:
        severity = "warning"
        ceiling_note = f" ({num(fraction * 100)}% of ln(vocabulary))" if ln_vocab is not None else ""
        verdict = (f"and is still {num(s.now)} now{ceiling_note}: {perplexity}; the policy has lost much of "
                   f"what it was sure of.")
    else:
        severity = "watch"
        verdict = f"and has since come back to {num(s.now)}: an episode of near-random sampling the run recovered from."
    return [finding("entropy", "entropy_blow_up", severity, f"Entropy blew up: it {shape}, {verdict}",
                    [onset, s.peak_step])]


def fell_fast(onset: int, end: int, first_step: int, last_step: int) -> bool:
    """Most of a fall within a fifth of the logged span (`FAST_SHARE`): fast, whether or not it went far."""
    return end - onset <= FAST_SHARE * max(1, last_step - first_step)


def _decline(reading: Reading) -> tuple[str, list[Finding]]:
    """Collapse (fast, or to a tiny fraction of the start) or the gradual decline training is expected to show."""
    s = reading.summary
    ratio = s.now / s.start
    onset, end = _fall_span(reading)
    fast = fell_fast(onset, end, s.first_step, s.last_step)
    pct = f"{num(ratio * 100)}% of its start"
    if ratio <= COLLAPSE_GONE or (ratio <= COLLAPSE_FAST and fast):
        severity: Severity = "warning" if ratio <= COLLAPSE_GONE else "watch"
        scale = ""
        if ratio <= COLLAPSE_GONE and s.now > 0 and float(np.min(reading.series.smooth)) > 0:
            # A collapse to a tenth or less is multiplicative (each update sharpens the distribution by a factor):
            # read on a log scale, its span starts where the collapse did, not in the gentle decline before it.
            onset, end = _fall_span(reading, log=True, edge=COLLAPSE_EDGE)
            scale = " (read on a log scale)"
        return "collapse", [finding(
            "entropy", "entropy_collapse", severity,
            f"Entropy collapsed from {num(s.start)} to {num(s.now)} ({pct}), most of the fall{scale} over steps "
            f"{onset}-{end}: the sampling distribution is close to deterministic, so groups stop exploring and "
            f"completions converge to one answer.",
            [onset, end],
        )]
    if ratio <= LOW_SHARE:
        return "gradual_decline", [finding(
            "entropy", "entropy_low", "watch",
            f"Entropy fell from {num(s.start)} to {num(s.now)} ({pct}), most of the fall over steps {onset}-{end} "
            f"(not fast enough over the run, nor far enough, to count as a collapse): the policy is becoming very "
            f"confident; watch for completions converging.",
            [onset, end],
        )]
    # Fast but not far: most of the fall in a short span is no "gradual" decline (blind readers met the word beside
    # change-point cliffs), though it stopped well short of a collapse.
    pace = f", most of it over steps {onset}-{end}" if fast else " gradually"
    return "gradual_decline", [finding(
        "entropy", "entropy_gradual_decline", "info",
        f"Entropy declined{pace} from {num(s.start)} to {num(s.now)} ({pct}): the policy is sharpening, "
        f"as expected while it learns.",
        [onset, end],
    )]




def _fall_span(reading: Reading, log: bool = False, edge: float = 0.1) -> tuple[int, int]:
    """Steps between which the smoothed curve covers most (`edge` to 1 - `edge`) of its fall from start to now.

    `log`: the fall measured on a log scale (all levels must be positive).
    """
    s = reading.summary
    smooth, steps = reading.series.smooth, reading.series.red_steps
    start, now = s.start, s.now
    if log:
        smooth, start, now = np.log(smooth), math.log(start), math.log(now)
    drop = start - now
    reached = np.flatnonzero(smooth <= now + edge * drop)
    end_index = int(reached[0]) if len(reached) else int(np.argmin(smooth))
    before = np.flatnonzero(smooth[:end_index + 1] >= start - edge * drop)
    start_index = int(before[-1]) if len(before) else 0
    return int(steps[start_index]), int(steps[end_index])


def _first_crossing(reading: Reading, level: float) -> int:
    """First step where the smoothed curve reaches `level`."""
    above = np.flatnonzero(reading.series.smooth >= level)
    return int(reading.series.red_steps[above[0]]) if len(above) else reading.summary.peak_step


def _settled_step(reading: Reading, level: float, above: bool) -> int:
    """First step of the final stretch in which the smoothed curve stays past `level`."""
    smooth, steps = reading.series.smooth, reading.series.red_steps
    outside = np.flatnonzero(smooth < level if above else smooth > level)
    index = int(outside[-1]) + 1 if len(outside) else 0
    return int(steps[min(index, len(steps) - 1)])
