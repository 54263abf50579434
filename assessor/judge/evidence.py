"""The values the LLM judge's evidence sheet is filled with, computed from a `JudgeRequest`.

Every sentence of the sheet lives in `prompts/summary_*.j2` and `prompts/user_data.j2`; this module only picks
and computes what those templates print: plain dicts and lists of numbers, steps and labels. Three rules:

* **One number per quantity.** Each series' start, peak, trough, now, noise and spike counts are computed once
  (the signals table; their definitions are the system message's "Reading the evidence sheet", `prompts/
  system_sheet.j2`) and every other section quotes the same values or refers to them in words. A different
  quantity gets a different name: the best point's level, the highest level before a breakage, the mean of the
  last two evaluations. `tests/test_sheet_numbers.py` holds every real run's sheet to this.
* **Bounded size.** Every list is bounded (the most severe findings, a fixed set of signals, at most six KL/reward
  spans, ...), so a 100,000-step run gives a sheet about as long as a 100-step one. The checkpoint list is the
  exception that stays complete: regular series are compressed into ranges (`100 … 1500 every 100`).
* **Untrusted text stays out.** Run-supplied text (run name, paths, samples, and the labels the run chose) goes
  only into `data_values`, which the user template puts inside the fenced data block. On the sheet a run-chosen
  label is a reference (`[run label 3]`, listed in the block) and sentences pass through the same `Scrubber`;
  only our own names (`KNOWN_NAMES`: canonical metrics, frameworks, algorithms) and plain names made of metric
  words (`untrusted.plain`: `reward_component/format_mean`, a model id) are written as they are.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assessor.diagnose import NO_SAMPLES, UNSEEN_WITHOUT, unseen_entry
from assessor.diagnose.entropy import entropy_summed, fell_fast
from assessor.diagnose.evaluation import LOWER_IS_BETTER
from assessor.diagnose.kl_reward import coefficient_scaled, kl_not_drifting, kl_summed_over_sequence
from assessor.diagnose.learning_signal import within_unit_range
from assessor.diagnose.loss import PREFERENCE_ALGORITHMS
from assessor.diagnose.models import SEVERITY_ORDER, Diagnostics, Finding, QuadrantSpan, SignalSummary, Spike
from assessor.diagnose.robust import MAX_SPIKES, MIN_TREND_POINTS, stretch_width
from assessor.diagnose.signals import SCHEDULE_METRICS
from assessor.ingest.aliases import CANONICAL
from assessor.judge.base import JudgeRequest
from assessor.judge.untrusted import Scrubber, cut, label, neutralise, one_line, plain
from assessor.run import Checkpoint, Run, Sample

FRAMEWORKS = ("trl", "hf", "verl", "openrlhf", "nemo_rl", "reasoning_from_scratch")
MAX_FINDINGS = 20
MAX_SPANS = 6
MAX_EVAL_SIGNALS = 6
MAX_COMPONENTS = 8
MAX_CHANGE_POINTS = 3
MAX_DISCONTINUITIES = 2
MAX_INSTABILITY_SIGNALS = 6
MAX_STEP_JUMPS = 5
MAX_ABSENT = 10
MAX_SAMPLES = 8  # free-text samples handed in with the request, spread over the list
MAX_SAMPLE_CHARS = 1500
SAMPLES_PER_POINT = 2  # completion samples shown at each of start, best point and now
MAX_COMPLETION_CHARS = 600
MAX_SAMPLE_PROMPT_CHARS = 240
MAX_RUN_NAME_CHARS = 200
MAX_PATH_CHARS = 300
MIN_RANGE = 3  # checkpoints in a regular series before it is written as a range

# The curves the signals table shows when the run logs them, in reading order. Left out because another section
# already gives them: terminated length and the clip sides (generation), step time (GPU).
KEY_SIGNALS: tuple[str, ...] = (
    "reward_mean", "reward_std", "reward_zero_std_frac", "advantage_std", "kl", "entropy", "response_length_mean",
    "response_length_clip_ratio", "clip_ratio_region", "importance_ratio_mean", "pg_loss", "loss", "value_loss",
    "value_explained_var", "grad_norm", "lr", "pref_margin", "pref_accuracy", "pref_reward_chosen",
    "pref_reward_rejected", "logps_chosen", "num_gen_batches", "dynamic_filtering_pass_rate", "train_infer_mismatch",
)
# Findings said elsewhere in the prompt: KL's absence with its reason in the "Not visible" list, and that a
# policy-gradient loss is no progress measure in every card but DPO's (whose runs never get this finding).
# Said elsewhere on the sheet in full (the "Not visible" list, the KL section's spans and quadrant, the table's trend
# and the generation section's entropy line): a second copy in the findings costs tokens and, worded differently,
# reads as a second number for one thing.
RESTATED_FINDINGS = frozenset({"kl_not_measured", "loss_not_a_progress_signal", "earlier_drift", "reward_unclear",
                               "entropy_gradual_decline", "kl_up_reward_up", "kl_stable_reward_up"})
# Held-out series that time the eval loop rather than measure the model.
EVAL_LOOP_WORDS = ("runtime", "second")
# Schedules, not measurements: their jumps and noise units mean nothing.
SCHEDULE_SIGNALS = SCHEDULE_METRICS



# --- checkpoints


@dataclass(frozen=True)
class Series:
    """Checkpoints in one regular series (or a single one): `count` of them, `every` steps apart."""

    first: Checkpoint
    last: Checkpoint
    count: int
    every: int | None


def _path_pattern(checkpoint: Checkpoint) -> str:
    """The path with its step number blanked (the last occurrence), so `checkpoint-100` and `-200` match."""
    text = str(checkpoint.step)
    at = checkpoint.path.rfind(text)
    if at < 0:
        return "\x00" + checkpoint.path  # no step in the path: matches nothing else
    return checkpoint.path[:at] + "\x00" + checkpoint.path[at + len(text):]


def series(checkpoints: Sequence[Checkpoint], by_path: bool = True) -> list[Series]:
    """Checkpoints (sorted by step) as regular series: same spacing and, with `by_path`, the same path pattern.

    A series of fewer than `MIN_RANGE` checkpoints is given one entry per checkpoint, so nothing is hidden.

    >>> cps = [Checkpoint(step=s, path=f"checkpoint-{s}") for s in (100, 200, 300, 400, 450)]
    >>> [(s.first.step, s.last.step, s.count, s.every) for s in series(cps)]
    [(100, 400, 4, 100), (450, 450, 1, None)]
    """
    ordered = sorted(checkpoints, key=lambda c: c.step)
    out: list[Series] = []
    i = 0
    while i < len(ordered):
        j = i + 1
        if j < len(ordered):
            gap = ordered[j].step - ordered[i].step
            pattern = _path_pattern(ordered[i])
            while (j < len(ordered) and ordered[j].step - ordered[j - 1].step == gap and gap > 0
                   and (not by_path or _path_pattern(ordered[j]) == pattern)):
                j += 1
            if j - i >= MIN_RANGE:
                out.append(Series(ordered[i], ordered[j - 1], j - i, gap))
                i = j
                continue
        out.append(Series(ordered[i], ordered[i], 1, None))
        i += 1
    return out


def save_interval(checkpoints: Sequence[Checkpoint]) -> int | None:
    """The most common spacing between checkpoints on disk, when there are at least three."""
    steps = sorted({c.step for c in checkpoints})
    gaps = [b - a for a, b in itertools.pairwise(steps)]
    if len(gaps) < 2:
        return None
    best = max(set(gaps), key=lambda g: (gaps.count(g), g))
    return best if gaps.count(best) * 2 >= len(gaps) else None


# --- sections


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def run_values(d: Diagnostics, run: Run, scrub: Scrubber) -> dict[str, Any]:
    """The run and its setup: each fact, or None where the run does not say (the template writes `unknown`)."""
    head, facts = d.run, run.facts
    firsts = [s.first_step for s in d.signals.values() if s.split == "train"]
    algorithm = head.algorithm or facts.algorithm
    framework = head.framework or facts.framework
    planned = head.planned_total_steps or facts.planned_total_steps
    cap_inferred = facts.max_completion_length is None and d.length.cap is not None
    return {
        "framework": scrub.label(framework) if framework else None,
        "algorithm": scrub.label(algorithm) if algorithm else None,
        "model": scrub.label(facts.model) if facts.model else None,
        "state": f"{head.state} ({head.state_reason})" if head.state_reason else head.state,
        "first_step": min(firsts) if firsts else None,
        "last_step": head.last_step,
        "planned_steps": planned,
        "progress": head.progress if head.progress is not None else (
            head.last_step / planned if planned and head.last_step is not None else None),
        "logging_interval": head.logging_interval or facts.logging_interval,
        "save_interval": facts.save_steps or save_interval(run.checkpoints),
        "save_interval_timed": bool(facts.save_steps) and facts.provenance.get("save_steps", "").startswith("measured"),
        # `RunFacts` has no batch size (written as `unknown`); no config states a reward range either, but the
        # findings read a reward that never leaves 0..1 as bounded by it, and the setup says so as they do.
        "batch_size": None,
        "reward_range": _reward_range_read(d, run),
        "group_size": facts.num_generations,
        # Preference training samples nothing: no groups, no generated lengths, no reward function's range.
        "preference": (algorithm or "") in PREFERENCE_ALGORITHMS,
        "beta": facts.beta,
        "learning_rate": facts.learning_rate,
        # Not in any config read, but logged: its peak and latest value say as much (a schedule, a typo like 5e-10).
        "learning_rate_logged": _logged_lr(d) if facts.learning_rate is None else None,
        "max_completion_length": facts.max_completion_length or d.length.cap,
        "max_completion_length_inferred": cap_inferred,
        "loss_type": scrub.label(facts.loss_type) if facts.loss_type else None,
        "vocab_size": facts.vocab_size,
        "ln_vocab": math.log(facts.vocab_size) if facts.vocab_size else None,
    }


def _reward_range_read(d: Diagnostics, run: Run) -> str | None:
    """'0 to 1' when every logged training reward lies in it (as the saturation and floor findings assume)."""
    if not d.reward.metric or not run.has(d.reward.metric):
        return None
    values = run.series(d.reward.metric).to_numpy()
    return "0 to 1 (read off the values, not a config)" if within_unit_range(values[np.isfinite(values)]) else None


def _logged_lr(d: Diagnostics) -> dict[str, float] | None:
    # The signals table's own peak and now, so the setup line and the lr row quote one value each.
    lr = d.signals.get("lr")
    return {"peak": lr.peak, "now": lr.now} if lr is not None else None


def _steps_text(steps: Sequence[int], limit: int = 4) -> str:
    shown = ", ".join(str(s) for s in steps[:limit])
    return shown + (", …" if len(steps) > limit else "")


def findings_values(findings: Sequence[Finding], scrub: Scrubber) -> dict[str, Any]:
    """The most severe findings (at most `MAX_FINDINGS`), and how many of each severity were left out."""
    # "KL is not measured" is said once, with its reason, in the "Not visible" list.
    findings = [f for f in findings if f.kind not in RESTATED_FINDINGS]
    ordered = sorted(findings, key=lambda f: (SEVERITY_ORDER[f.severity], f.steps[0] if f.steps else 0))
    shown = ordered[:MAX_FINDINGS]
    rest = ordered[len(shown):]
    return {
        "total": len(findings),
        "shown": [{"severity": f.severity, "signal": scrub.label(f.signal), "kind": label(f.kind),
                   "steps": _steps_text(f.steps), "observation": scrub(f.observation)} for f in shown],
        "left_out": [{"severity": s, "count": n} for s in SEVERITY_ORDER
                     if (n := sum(1 for f in rest if f.severity == s))],
    }


def spike_values(spikes: Sequence[Spike], told: bool = False) -> dict[str, Any]:
    """A signal's spikes as every place on the sheet counts them: total, one-step, lasting, and the largest.

    `told`: a spike finding already names this signal's largest upward spike; the table then points to it rather
    than naming a largest of its own (a reader met "the largest is 0.046 at step 13" in the finding and "largest a
    dip to 0.164 at 328" in the table for one KL).
    """
    big = max(spikes, key=lambda p: abs(p.size_noise))
    one_step = sum(1 for p in spikes if p.kind == "outlier")
    return {"count": len(spikes), "at_least": len(spikes) >= MAX_SPIKES, "one_step": one_step,
            "lasting": len(spikes) - one_step, "value": big.value, "step": big.step, "level": big.level,
            "dip": big.value < big.level, "told": told}


def _spikes_told(d: Diagnostics) -> set[str]:
    """Signals whose spike finding names their largest upward spike."""
    return {f.signal for f in d.findings if f.kind == "spike_outlier"}


# Noise under this share of a curve's range is no noise a move can be sized against (a smooth exported curve).
SMOOTH_CURVE_NOISE = 1e-3


def _signal_row(
    key: str, s: SignalSummary, scrub: Scrubber, confirmed: list[Spike] | None = None,
    noise: float | None = None, spikes_told: bool = False,
) -> dict[str, Any]:
    """One table row.

    `confirmed`: the instability section's spikes of this signal, so both count them alike; `noise`: the noise the
    findings measure this signal against, when it is not the summary's (held-out series: the eval-to-eval noise).
    """
    schedule = key in SCHEDULE_SIGNALS
    noise = s.noise if noise is None else noise
    trend_noise = s.trend_change_noise if noise == s.noise else s.trend_change / noise if noise > 0 else None
    if noise < SMOOTH_CURVE_NOISE * abs(s.peak - s.trough):
        trend_noise = None  # a curve with no measurable noise (exported smooth, averaged): a ratio to it says nothing
    few = s.points < MIN_TREND_POINTS  # too few for the trend test: no test, not "flat (+0.0)"
    spikes = confirmed if confirmed is not None else s.spikes
    # A magnitude jump where the row already lists a shift is the same event sized twice: the shift's from -> to
    # says it (a reader met one KL jump as "0.0236 -> 0.0759" and "x2.07" side by side).
    # The largest shifts are the ones listed (in step order): a small early step of a smooth rise must not crowd out
    # the jump a finding is about.
    listed = [] if schedule else sorted(
        sorted(s.change_points, key=lambda c: -abs(c.size_noise))[:MAX_CHANGE_POINTS], key=lambda c: c.step)
    shift_steps = [c.step for c in listed]
    near = max(1, (s.last_step - s.first_step) // 100)
    jumps = [] if schedule else [
        c for c in s.discontinuities
        if min(abs(c.before), abs(c.after)) > max(s.noise, 1e-12)  # a ratio only from a non-zero base
        and not any(abs(c.step - at) <= near for at in shift_steps)
    ]
    return {
        "key": key, "name": scrub.label(key), "points": s.points, "start": s.start, "peak": s.peak,
        "peak_step": s.peak_step,
        "trough": s.trough, "trough_step": s.trough_step, "now": s.now, "now_step": s.last_step,
        "trend": f"too few points ({s.points}) for a trend" if few else s.trend,
        "trend_noise": None if schedule or few else _finite(trend_noise), "trend_since": s.trend_window_start,
        "noise": None if schedule else noise,
        "slowing": bool(s.slowing) and s.trend != "flat" and not schedule,
        "plateau_start": None if schedule else s.plateau_start,
        "latest": None if s.latest is None else {"mean": s.latest.mean, "first": s.latest.first_step,
                                                 "last": s.latest.last_step},
        # The segment levels, which chain from one shift to the next, as a reader follows the curve.
        "shifts": [] if schedule else [
            {"step": c.step, "direction": c.direction,
             "before": c.before if c.segment_before is None else c.segment_before,
             "after": c.after if c.segment_after is None else c.segment_after}
            for c in listed],
        "more_shifts": 0 if schedule else max(0, len(s.change_points) - MAX_CHANGE_POINTS),
        "jumps": [{"step": c.step, "ratio": c.ratio} for c in jumps[:MAX_DISCONTINUITIES]],
        "more_jumps": max(0, len(jumps) - MAX_DISCONTINUITIES),
        "spikes": spike_values(spikes, spikes_told) if spikes and not schedule else None,
    }


def _eval_keys(d: Diagnostics) -> list[str]:
    """Held-out rows: the series the eval diagnosis read first, then the others, at most `MAX_EVAL_SIGNALS`.

    One row per series (the same numbers logged under two names are shown once); settings and timings of the
    eval loop (a constant, its wall time) are left out.
    """
    read = [c.metric for c in d.eval.curves]
    keys = sorted((k for k in d.signals if k.startswith("eval/")), key=lambda k: (k not in read, k))
    out: list[str] = []
    seen: set[tuple[object, ...]] = set()
    for key in keys:
        s = d.signals[key]
        if key not in read and (s.peak == s.trough or any(w in key for w in EVAL_LOOP_WORDS)):
            continue
        fingerprint = (s.points, s.first_step, s.last_step, s.start, s.peak, s.peak_step, s.trough, s.now)
        if fingerprint not in seen:
            seen.add(fingerprint)
            out.append(key)
    return out[:MAX_EVAL_SIGNALS]


def signal_rows(d: Diagnostics, scrub: Scrubber) -> list[dict[str, Any]]:
    """The key signals, then a few held-out ones; reward and eval rows agree with their diagnosis records.

    The held-out quality series the eval diagnosis read give the eval-to-eval noise its findings measure against.
    """
    # A schedule that never changed (a constant learning rate) is a setup fact, not a signal to read.
    keys = [k for k in KEY_SIGNALS if k in d.signals
            and not (k in SCHEDULE_SIGNALS and d.signals[k].peak == d.signals[k].trough)] + _eval_keys(d)
    rows = []
    noise_of = {c.metric: c.noise for c in d.eval.curves}
    surrogates = _held_out_surrogates(d, keys)
    # Series the diagnosis reads from a reward rescale on: their start, peak and trough are the new scale's.
    rescaled = next((f.steps[0] for f in d.findings if f.kind == "reward_rescaled" and f.steps), None)
    told = _spikes_told(d)
    for key in keys:
        row = _signal_row(key, d.signals[key], scrub, d.instability.spikes.get(key), noise_of.get(key),
                          key in told)
        row["read_from"] = rescaled if key in d.rescaled_series else None
        r, e = d.reward, d.eval
        if key == r.metric and r.peak is not None and r.peak_step is not None:
            row.update(peak=r.peak, peak_step=r.peak_step, start=r.start if r.start is not None else row["start"],
                       now=r.now if r.now is not None else row["now"])
        # A held-out series whose decline a finding established reads so in the table too: its own rank test over
        # a window spanning the rise and the fall can say "not established" of the same decline.
        primary = bool(e.metric) and key == f"eval/{(e.metric or '').removeprefix('eval/')}"
        row["declined"] = key.startswith("eval/") and any(
            f.kind == "eval_declining" and (f.signal == key or (f.signal == "eval" and primary)) for f in d.findings)
        lower_is_better = key.startswith("eval/") and key.removeprefix("eval/") in LOWER_IS_BETTER
        if lower_is_better:
            # A held-out loss's "peak" is its best, lowest evaluation, and its "trough" its worst (the legend's
            # reading), so a loss that fell and climbed back shows where it was best.
            s = d.signals[key]
            row.update(peak=s.trough, peak_step=s.trough_step, trough=s.peak, trough_step=s.peak_step)
        if primary and e.peak is not None:
            row.update(peak=e.peak, peak_step=e.peak_step)
            if e.now is not None and e.now_step is not None:
                row.update(now=e.now, now_step=e.now_step)
                if (e.now > row["trough"]) if lower_is_better else (e.now < row["trough"]):
                    row.update(trough=e.now, trough_step=e.now_step)
        row["surrogate"] = key in surrogates
        rows.append(row)
    return rows


def _held_out_surrogates(d: Diagnostics, keys: list[str]) -> set[str]:
    """Held-out loss rows of a policy-gradient run that no eval finding reads: its surrogate on held-out prompts.

    TRL's GRPO evaluation logs `eval_loss`, a clipped objective on zero-mean advantages that sits near 0 and moves
    by chance; shown without a word it reads as a held-out loss falling "6 noise units".
    """
    if d.reward.metric is None or (d.run.algorithm or "") in PREFERENCE_ALGORITHMS:
        return set()
    read = {c.metric for c in d.eval.curves}
    return {k for k in keys if k.startswith("eval/") and "loss" in re.split(r"[^a-z0-9]+", k.lower())
            and k not in read}


def reward_values(d: Diagnostics, scrub: Scrubber) -> dict[str, Any]:
    """The reward trajectory's shape (its numbers are in the signals table)."""
    r = d.reward
    # "The rise is slowing" only describes a curve that is still rising.
    # A decline the reward's finding established is sized there (in standard errors of stretch means): a second
    # size in per-step noise units beside it would be two numbers for one fall.
    declined = any(f.kind == "reward_peaked_then_declined" and f.signal == r.metric for f in r.findings)
    return {"metric": scrub.label(r.metric) if r.metric else None, "trend": r.trend,
            "slowing": bool(r.slowing) and r.trend == "rising", "declined": declined,
            "plateau_start": r.plateau_start, "peak_step": r.peak_step, "drop_noise": _finite(r.drop_from_peak_noise)}


def _merge_spans(spans: Sequence[QuadrantSpan]) -> list[QuadrantSpan]:
    merged: list[QuadrantSpan] = []
    for span in spans:
        if merged and merged[-1].quadrant == span.quadrant:
            last = merged[-1]
            merged[-1] = last.model_copy(update={
                "end_step": span.end_step, "reward_change": last.reward_change + span.reward_change,
                "kl_change": last.kl_change + span.kl_change})
        else:
            merged.append(span)
    return merged


SPAN_MOVE_NOISE = 3.0  # a span's level change this many level errors or more is a move, whatever its trend test said
SPAN_MOVE_SHARE = 0.1  # ...and at least this share of the curve's whole range


def _span_label(span: QuadrantSpan, d: Diagnostics) -> str:
    """A span's quadrant in words, agreeing with the two changes printed beside it.

    The quadrant comes from trend tests on the span's points; a level that moved by several noise units across it
    (a step inside the span, a fall at its end) is a move even when no steady trend passes the test, and a reader
    must not meet "reward flat" beside "reward +0.25".
    """
    def error(s: SignalSummary | None) -> float:
        # The levels either end of a span are smoothed over a stretch: their error, not one step's noise.
        return s.noise / math.sqrt(stretch_width(s.points)) if s is not None and s.noise > 0 else math.inf

    def moved(change: float, s: SignalSummary | None) -> bool:
        # Clear of the levels' error, and a tenth of the curve's whole range: a small drift after a big climb is flat.
        return s is not None and abs(change) >= max(SPAN_MOVE_NOISE * error(s), SPAN_MOVE_SHARE * (s.peak - s.trough))

    reward, kl = d.signals.get(d.reward.metric or ""), d.signals.get("kl")
    kl_word = "up" if span.quadrant.startswith("kl_up") else "stable"
    reward_word = span.quadrant.rsplit("_", 1)[-1]
    if moved(span.reward_change, reward):
        reward_word = "up" if span.reward_change > 0 else "down"
    if span.kl_change > 0 and moved(span.kl_change, kl):
        kl_word = "up"
    return f"kl {kl_word} reward {reward_word}"


def kl_values(d: Diagnostics, run: Run, scrub: Scrubber) -> dict[str, Any]:
    """KL against reward: the quadrant now and the merged timeline (at most `MAX_SPANS` spans)."""
    k = d.kl_reward
    # Labelled by what the printed changes show, then joined again where neighbours now read alike.
    spans: list[dict[str, Any]] = []
    for span in _merge_spans(k.timeline):
        label = _span_label(span, d)
        if spans and spans[-1]["quadrant"] == label:
            spans[-1].update(end=span.end_step, reward_change=spans[-1]["reward_change"] + span.reward_change,
                             kl_change=spans[-1]["kl_change"] + span.kl_change)
        else:
            spans.append({"start": span.start_step, "end": span.end_step, "quadrant": label,
                          "reward_change": span.reward_change, "kl_change": span.kl_change})
    shown = spans if len(spans) <= MAX_SPANS else [spans[0], *spans[-(MAX_SPANS - 1):]]
    kl = d.signals.get("kl")
    return {
        "measured": k.kl_measured,
        "absent_reason": scrub(k.kl_absent_reason) if k.kl_absent_reason else None,
        "quadrant_now": k.quadrant_now.replace("_", " ") if k.quadrant_now else None,
        "kl_stable_reading": kl_not_drifting(kl) if kl is not None and k.quadrant_now
        and k.quadrant_now.startswith("kl_stable") else None,
        "beta": run.facts.beta, "kl_now": kl.now if kl is not None else None,
        "coefficient_scaled": coefficient_scaled(run.facts),
        "summed_over_sequence": kl_summed_over_sequence(run),
        # The quadrant now is read on the KL's recent-trend window, the timeline on equal slices of the run: say
        # which window, so a last slice that reads differently is not taken for a contradiction.
        "quadrant_since": kl.trend_window_start if kl is not None else None,
        "spans": shown,
        "omitted": len(spans) - len(shown),
    }


def learning_values(d: Diagnostics, scrub: Scrubber) -> dict[str, Any]:
    """Reward spread, zero-spread groups, advantage spread, saturation, and the reward components."""
    ls = d.learning_signal
    components = []
    # A single reward function with nothing missing *is* the total: the table's reward row reads it, and a second
    # row with its own trend word would read as a different quantity.
    single = len(d.reward_components.components) == 1
    for c in [] if single else d.reward_components.components[:MAX_COMPONENTS]:
        signal = d.signals.get(f"reward_component/{c.name}_mean") or d.signals.get(c.name)
        # start → now alone hides a rise then a collapse: give the peak when it lies between them, and when the
        # component has fallen from it by more than its noise, say so instead of the start-to-now direction.
        between = signal is not None and signal.peak > max(c.start, c.now)
        fell = between and signal is not None and signal.peak - c.now > 2 * signal.noise
        components.append({
            "name": scrub.label(c.name), "start": c.start, "now": c.now,
            "trend": "fell from its peak" if fell else c.trend, "saturated": c.saturated,
            "peak": signal.peak if between and signal is not None else None,
            "peak_step": signal.peak_step if signal is not None else None,
        })
    return {
        "reward_std_start": ls.reward_std_start, "reward_std_now": ls.reward_std_now,
        "zero_std_start": ls.zero_std_frac_start, "zero_std_now": ls.zero_std_frac_now,
        "advantage_std_now": ls.advantage_std_now, "saturated": ls.saturated,
        "identical_from_start": ls.identical_from_start, "components": components,
        "more_components": max(0, len(d.reward_components.components) - MAX_COMPONENTS),
        "single_component": scrub.label(d.reward_components.components[0].name) if single else None,
    }


def _as_the_table_reads(trend: str | None, s: SignalSummary | None) -> str | None:
    """A trend word as the signals table writes it: "up/down, not established", never "flat", over three noise units.

    A reader met "length 608 -> 1024 tokens, trend flat" beside the table's "not established (+3.7)"; another read a
    bare "not established" beside "at its best" as a doubtful decline, so the direction is said too.
    """
    if trend == "flat" and s is not None and s.trend_change_noise is not None and abs(s.trend_change_noise) >= 3:
        return f"{'up' if s.trend_change_noise > 0 else 'down'}, not established"
    return trend


def generation_values(d: Diagnostics, run: Run, scrub: Scrubber) -> dict[str, Any]:
    """Length, entropy, ratio clipping and the loss pattern."""
    ln, en, cl, lo = d.length, d.entropy, d.clipping, d.loss
    return {
        "length": None if ln.now is None else {
            "start": ln.start, "now": ln.now,
            "trend": _as_the_table_reads(ln.trend, d.signals.get("response_length_mean")), "cap": ln.cap,
            "at_cap": ln.at_cap_fraction,
            "truncated_now": ln.clipped_ratio_now, "reward_correlation": ln.length_reward_correlation},
        # Without a mean length, the truncated share (when logged) is still a length reading.
        "truncated_only": (clipped.now if ln.now is None and (clipped := d.signals.get("response_length_clip_ratio"))
                           else None),
        "entropy": None if en.pattern == "absent" else {
            "pattern": _entropy_pattern(d), "start": en.start, "now": en.now, "ln_vocab": en.ln_vocab,
            "summed": entropy_summed(run, en.start, en.now, en.ln_vocab)},
        "clipping": None if cl.level_now is None and not cl.exactly_zero else {
            "now": cl.level_now, "low": cl.low_now, "high": cl.high_now, "trend": cl.trend,
            "exactly_zero": cl.exactly_zero},
        "loss": {"metric": scrub.label(lo.metric) if lo.metric else None, "pattern": lo.pattern.replace("_", " "),
                 # The pattern is read on finite values: a loss that went NaN says so beside it, never "stable" alone.
                 "nonfinite": _nonfinite_span(d.instability.nonfinite_steps.get(lo.metric or ""))},
    }


def _nonfinite_span(steps: Sequence[int] | None) -> dict[str, int] | None:
    return {"count": len(steps), "first": steps[0], "last": steps[-1]} if steps else None


def eval_values(d: Diagnostics, scrub: Scrubber, rows: Sequence[dict[str, Any]] = ()) -> dict[str, Any] | None:
    """Held-out evaluation, None when there is none; `rows`: the table's, to say whether it has the eval's row."""
    e = d.eval
    if e.metric is None or e.points == 0:
        return None
    # The mean of the last two evaluations (what declines and the best point read "now" from) is the primary
    # curve's `now`.
    primary = next((c for c in e.curves if c.metric == f"eval/{e.metric.removeprefix('eval/')}"), None)
    recent = primary.now if primary is not None else None
    return {"metric": scrub.label(e.metric), "points": e.points, "peak": e.peak, "peak_step": e.peak_step,
            "now": e.now, "now_step": e.now_step, "recent": recent, "noise": primary.noise if primary else None,
            "diverging": e.diverging_from_train,
            "in_table": any(r["key"] == f"eval/{e.metric.removeprefix('eval/')}" for r in rows)}


def instability_values(d: Diagnostics, scrub: Scrubber, table: Sequence[str] = ()) -> dict[str, Any]:
    """Spikes per signal (the largest first) and NaN/inf steps; `table`: signals whose spikes the table gives."""
    inst = d.instability
    items = sorted(inst.spikes.items(), key=lambda kv: -max((p.size_noise for p in kv[1]), default=0.0))
    told = _spikes_told(d)
    spikes = [{"metric": scrub.label(metric), "in_table": metric in table, **spike_values(found, metric in told)}
              for metric, found in items[:MAX_INSTABILITY_SIGNALS] if found]
    nonfinite = [{"metric": scrub.label(m), "count": len(steps), "first": steps[0], "last": steps[-1]}
                 for m, steps in list(inst.nonfinite_steps.items())[:MAX_INSTABILITY_SIGNALS] if steps]
    return {"spikes": spikes, "nonfinite": nonfinite}


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def best_values(
    d: Diagnostics, checkpoints: Sequence[Checkpoint], scrub: Scrubber, rows: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The best point (one step, one value) and the checkpoint steps on disk, as ranges.

    The level the best point was measured against is the table's peak when it is one (said in words, not
    repeated); before a breakage it is the highest level before it, named so. "Now" is the table's; only the
    held-out reading's own "now" (the mean of the last two evaluations) is given, under that name.
    """
    b = d.best_checkpoint
    row = next((r for r in rows if r["key"] == b.metric), None)
    summary = d.signals.get(b.metric) if b.metric else None
    peak, peak_step = (row["peak"], row["peak_step"]) if row else (
        (summary.peak, summary.peak_step) if summary else (None, None))
    return {
        "basis": b.basis, "step": b.best_step, "value": b.level, "metric": scrub.label(b.metric) if b.metric else None,
        "smoothed": b.smoothed, "best_level": b.best_level, "best_level_step": b.best_level_step,
        "at_peak": _same(b.best_level, peak) and b.best_level_step == peak_step, "in_table": row is not None,
        "band": b.band, "band_kind": (b.band_kind or "").replace("_", " ") or None, "eval_set_size": b.eval_set_size,
        "eval_set_named": b.eval_set_named,
        # A preference accuracy is a pass rate over held-out pairs, not problems.
        "eval_set_unit": "pairs" if (b.metric or "").removeprefix("eval/").startswith("pref_") else "problems",
        "passed_over": b.passed_over, "loss_bound_step": b.loss_bound_step,
        "reward_changed_step": b.reward_changed_step, "reward_peak_step": b.reward_peak_step,
        "reward_peak_reason": b.reward_peak_reason,
        "decline_start_step": b.decline_start_step,
        "spread_below_noise": b.band_is_own_spread and row is not None,
        "best_level_median": b.best_level_median, "now": b.now_level,
        "now_is_table": row is not None and _same(b.now_level, row["now"]),
        # "Never beat its start" (the system prompt's base-model rule), decided here rather than left to the reader.
        "start": row["start"] if row else None,
        "near_start": row is not None and b.level is not None and b.band is not None
        and abs(b.level - row["start"]) <= b.band,
        "behind": b.behind, "breakage_step": b.breakage_step, "breakage": b.breakage,
        # A held-out best point with evaluations after it and no decline established: named for reference only.
        "later_evaluations": not b.behind and b.basis == "eval" and b.best_step is not None and any(
            c.metric == b.metric and c.now_step > b.best_step for c in d.eval.curves),
        # No next check to confirm a dip on: the run has finished, stalled or crashed.
        "no_next_check": d.run.state != "live", "state": d.run.state,
        "expected_checkpoint_step": b.expected_checkpoint_step, "save_steps": b.save_steps,
        "checkpoint_step": b.checkpoint_step, "reason": scrub(b.reason),
        "on_disk": len(checkpoints),
        "series": [{"first": s.first.step, "last": s.last.step, "count": s.count, "every": s.every}
                   for s in series(checkpoints, by_path=False)],
    }


def _entropy_pattern(d: Diagnostics) -> str:
    """The entropy pattern in words; a decline whose finding dates most of it to a short span says so, not "gradual"."""
    pattern = d.entropy.pattern.replace("_", " ")
    summary = d.signals.get("entropy")
    found = next((f for f in d.entropy.findings if f.kind == "entropy_gradual_decline" and len(f.steps) == 2), None)
    if d.entropy.pattern != "gradual_decline" or found is None or summary is None:
        return pattern
    onset, end = found.steps
    fast = fell_fast(onset, end, summary.first_step, summary.last_step)
    return f"declined, most of it over steps {onset}-{end}" if fast else pattern


def gpu_values(d: Diagnostics) -> dict[str, Any] | None:
    """Phase shares, step time and its changes; None without GPU telemetry or phase timings."""
    g = d.gpu
    if g is None:
        return None
    # A stall at a save or eval step is already in its periodic-stall finding: listing it again is one fact twice.
    periodic = {s for f in d.findings if f.kind in ("checkpoint_stalls", "eval_stalls") for s in f.steps}
    changes = [j for j in g.jumps if not (j.kind == "stall" and j.step in periodic)]
    jumps = changes[-MAX_STEP_JUMPS:]
    return {
        "source": g.source.replace("_", " "), "generation": g.generation_fraction, "training": g.training_fraction,
        "idle": g.idle_fraction, "step_time": g.step_time_s, "step_time_drift": g.step_time_drift,
        "phases": [{"phase": p.phase, "share": p.time_fraction, "power": p.power_w, "util": p.util_pct,
                    "memory": p.memory_used_mib, "headroom": p.memory_headroom_mib} for p in g.phases[:3]],
        "jumps": [{"kind": j.kind, "step": j.step, "before": j.before_s, "after": j.after_s} for j in jumps],
        "earlier_jumps": len(changes) - len(jumps),
    }


def known_names() -> frozenset[str]:
    """Names of our own, written on the sheet as they are.

    Canonical metrics (also as `eval/...`), the diagnosis areas findings are filed under (`kl_reward`, `gpu`,
    ...), the frameworks we detect and the algorithms we hold cards for.
    """
    from assessor.judge.prompts import ALGORITHM_CARDS

    return frozenset([*CANONICAL, *(f"eval/{k}" for k in CANONICAL), *Diagnostics.model_fields, *FRAMEWORKS,
                      *ALGORITHM_CARDS])


_FILE_IN_PROVENANCE = re.compile(r"([^\s:()]+\.[A-Za-z0-9]+)(?=[\s:(]|$)")


def scrubber(request: JudgeRequest) -> Scrubber:
    """The request's `Scrubber`: every label the run chose that the sheet may name gets its reference."""
    d, run = request.diagnostics, request.run
    facts = run.facts
    labels = [f.signal for f in d.findings] + [c.name for c in d.reward_components.components] + list(d.signals)
    labels += [m for m in (d.reward.metric, d.eval.metric, d.loss.metric) if m]
    labels += [c.metric for c in d.eval.curves]
    labels += [*d.instability.spikes, *d.instability.nonfinite_steps]
    labels += [x for x in (d.run.algorithm, facts.algorithm, d.run.framework, facts.framework, facts.model,
                           facts.loss_type) if x]
    # Files a fact was read from ("beta = 0 (wandb/offline-run-…/run-x.wandb (W&B config): beta)"): their folder
    # and file names are the run's own choosing.
    # ... and folders with no file name of their own: an MLflow file store's `mlruns/<experiment>/<run>/params`.
    for where in facts.provenance.values():
        file = _FILE_IN_PROVENANCE.match(where)
        source = file.group(1) if file else where.split(": ", 1)[0]
        if file or "/" in source:
            labels.append(source)
    # Plain names (`reward_component/format_mean`, the model id) are written as they are; any other label the
    # run chose is a reference to the fenced block.
    return Scrubber(sorted(run.checkpoints, key=lambda c: c.step), labels,
                    known_names() | {x for x in labels if plain(x)})


def summary_values(request: JudgeRequest) -> dict[str, Any]:
    """Everything `prompts/summary.j2` and its sections print, for one request."""
    d = request.diagnostics
    checkpoints = sorted(request.run.checkpoints, key=lambda c: c.step)
    scrub = scrubber(request)
    rows = signal_rows(d, scrub)
    return {
        "run": run_values(d, request.run, scrub),
        "findings": findings_values(d.findings, scrub),
        "signals": rows,
        # The window most rows' recent trend is measured on, said once in the table's header.
        "trend_since": max(windows, key=windows.count) if (windows := [
            r["trend_since"] for r in rows if r["trend_noise"] is not None]) else None,
        "reward": reward_values(d, scrub),
        "kl": kl_values(d, request.run, scrub),
        "learning": learning_values(d, scrub),
        "generation": generation_values(d, request.run, scrub),
        "eval": eval_values(d, scrub, rows),
        "instability": instability_values(d, scrub, [row["key"] for row in rows]),
        "best": best_values(d, checkpoints, scrub, rows),
        "gpu": gpu_values(d),
        "absent": absent_values(d.absent[:MAX_ABSENT], bool(request.run.samples), scrub),
    }


def absent_values(absent: Sequence[str], samples: bool, scrub: Scrubber) -> dict[str, list[str]]:
    """What the run does not show: the usual instruments by name (the legend says what each hides), the rest as said.

    `instruments` are the entries the diagnosis wrote in its standard wording; `other` the ones with a reason of
    their own (why KL is not measured, what the best point is judged from without an eval).
    """
    standard = {unseen_entry(name): name for name in UNSEEN_WITHOUT}
    instruments = [standard[a] for a in absent if a in standard] + ([] if samples else [NO_SAMPLES])
    return {"instruments": instruments, "other": [scrub(a) for a in absent if a not in standard]}


# --- the data block (untrusted text)


def _pick_samples(samples: Sequence[Sample], best_step: int | None) -> list[tuple[str, Sample]]:
    """A few samples from the earliest logged, the best point and now, each with which of the three it is."""
    by_step: dict[int, list[Sample]] = {}
    for s in samples:
        if s.step is not None and s.completion.strip():
            by_step.setdefault(s.step, []).append(s)
    steps = sorted(by_step)
    if not steps:
        undated = [s for s in samples if s.step is None and s.completion.strip()]
        return [("now", s) for s in undated[:SAMPLES_PER_POINT]]
    # The first samples the run logged are called that, not "start": a run may begin logging them late.
    chosen: list[tuple[str, int]] = [("earliest logged", steps[0])] if len(steps) > 1 else []
    if best_step is not None and len(steps) > 2:
        middle = min(steps[1:-1], key=lambda s: abs(s - best_step))
        if abs(middle - best_step) < abs(steps[-1] - best_step) and abs(middle - best_step) < abs(
                steps[0] - best_step):
            # Said as the nearest logged, when samples were not logged at the best point itself (a reader met
            # "best point, step 500" beside a best point at 525).
            chosen.append(("best point" if middle == best_step else f"nearest the best point (step {best_step})",
                           middle))
    chosen.append(("now", steps[-1]))
    return [(when, s) for when, step in chosen for s in by_step[step][:SAMPLES_PER_POINT]]


def _spread(texts: Sequence[str], limit: int) -> list[str]:
    if len(texts) <= limit:
        return list(texts)
    picks = sorted({round(i * (len(texts) - 1) / (limit - 1)) for i in range(limit)})
    return [texts[i] for i in picks]


def data_values(request: JudgeRequest, token: str) -> dict[str, Any]:
    """The fenced data block's contents: run name, every checkpoint path (as ranges), completion samples."""
    checkpoints = sorted(request.run.checkpoints, key=lambda c: c.step)

    def path(c: Checkpoint) -> str:
        return neutralise(one_line(c.path, MAX_PATH_CHARS), token)

    best_step = request.diagnostics.best_checkpoint.best_step
    picked = _pick_samples(request.run.samples, best_step)
    return {
        "run_name": neutralise(one_line(request.run.name, MAX_RUN_NAME_CHARS), token),
        "checkpoints": [{"first_step": s.first.step, "last_step": s.last.step, "count": s.count, "every": s.every,
                         "first_path": path(s.first), "last_path": path(s.last)} for s in series(checkpoints)],
        "checkpoints_total": len(checkpoints),
        # Spelled out, so a rollback can copy it exactly rather than rebuild it from a range's first and last path.
        "best_path": next((path(c) for c in reversed(checkpoints)
                           if best_step is not None and c.step <= best_step), None),
        "best_step": best_step,
        "samples": [{"when": when, "step": s.step, "reward": s.reward,
                     "prompt": neutralise(cut(s.prompt, MAX_SAMPLE_PROMPT_CHARS), token) if s.prompt else None,
                     "completion": neutralise(cut(s.completion, MAX_COMPLETION_CHARS), token)} for when, s in picked],
        "samples_logged": len(request.run.samples),
        "texts": [neutralise(cut(t, MAX_SAMPLE_CHARS), token) for t in _spread(request.samples, MAX_SAMPLES)],
        "texts_total": len(request.samples),
        "labels": scrubber(request).listing(token),
    }


def data_parts(request: JudgeRequest) -> list[str]:
    """Every piece of run-supplied text the data block may carry (what the fence token is keyed on)."""
    samples = [part for s in request.run.samples for part in (s.prompt or "", s.completion)]
    return [request.run.name, *(c.path for c in request.run.checkpoints), *samples, *request.samples]

