"""Held-out evaluation: where it peaked, whether it is falling, and whether it disagrees with training reward.

Eval points are few (every 5-50 steps), so they are read raw: the peak is the best evaluated value, the
decline is measured against the eval curve's own step-to-step noise, and it takes at least two evaluations
past the peak before a decline is called.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection

import numpy as np

from assessor.diagnose import robust
from assessor.diagnose.components import PREFIX as COMPONENT_PREFIX
from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.length import length_reward_correlation
from assessor.diagnose.loss import PREFERENCE_ALGORITHMS, logs_loss_only
from assessor.diagnose.models import EvalCurve, EvalDiagnosis, Finding, Severity

BEHIND_US = ": the best model is behind us"  # how an eval decline ends; see `eval_noise_without_signal`
HOLDING_CLEARLY = 1.0  # an eval within one noise unit of its peak's level is indistinguishable from it


def holds_clearly(evaluation: EvalDiagnosis) -> bool:
    """The preferred held-out eval holds near its peak, within one noise unit of it (`HOLDING_CLEARLY`).

    Between one and two noise units down ("holding" by the decline test, which needs two) it neither confirms a
    fall of the training reward nor clears it: that fall then stands on its own evidence (`eased`).
    """
    return _holding(evaluation) and _below_peak(evaluation) < HOLDING_CLEARLY


def eased(evaluation: EvalDiagnosis) -> bool:
    """The preferred held-out eval is "holding" by the decline test, but one noise unit or more below its peak."""
    return _holding(evaluation) and _below_peak(evaluation) >= HOLDING_CLEARLY


def _holding(evaluation: EvalDiagnosis) -> bool:
    return any(f.kind == "eval_holding" for f in evaluation.findings)


def _below_peak(evaluation: EvalDiagnosis) -> float:
    """How far the latest evaluations stand below the peak's level, in eval noise (unknown: as far as can be)."""
    below = evaluation.decline_from_peak_noise
    return math.inf if below is None else below


# Preferred held-out metrics, best first; `loss` is lower-is-better.
EVAL_METRICS = ("accuracy", "reward_mean", "pass_at_k", "pref_accuracy", "pref_margin", "loss")
class _LowerIsBetter:
    """Held-out measures where lower is better: a loss, an error, failure, hallucination or toxicity rate, perplexity.

    Used as a set (`metric in LOWER_IS_BETTER`): a compile-error rate or a held-out perplexity read as
    higher-is-better turns its improvement into a decline from a "peak" at its worst point.
    """

    WORDS = frozenset({"loss", "err", "error", "errors", "ppl", "perplexity", "wer", "cer", "fail", "failure",
                       "failures", "failed", "timeout", "timeouts", "violation", "violations", "halluc",
                       "hallucination", "hallucinations", "toxic", "toxicity"})

    def __contains__(self, metric: object) -> bool:
        return isinstance(metric, str) and bool(_tokens(metric) & self.WORDS)


LOWER_IS_BETTER = _LowerIsBetter()
# Other held-out series that measure quality (a score, an accuracy, a reward), read one by one.
_QUALITY_WORDS = ("acc", "score", "reward", "pass", "exact", "correct", "match", "win", "solve", "success")
_NOT_QUALITY_WORDS = ("length", "len", "time", "kl", "entropy", "std", "runtime", "per_second", "tokens", "clip",
                      "count", "num_", "rejected", "chosen", "logps", "logits", "truncat")
# Whole words (between separators) that name a quality measure: a reward model's score (`gold_rm_mean`), a judge.
_QUALITY_TOKENS = frozenset({"rm", "gold", "judge", "elo", "rating", "quality", "helpful", "helpfulness", "pref",
                             "winrate", "heldout"})
_GOLD_TOKENS = frozenset({"gold"})
# Whole words that name a reading of generated text (not of the preference pairs): judges, win rates, reward models.
_GENERATION_QUALITY_TOKENS = _QUALITY_TOKENS - {"pref", "heldout"}
# A held-out series named after a public benchmark (`eval/gsm8k`, `val/math500_pass1`) is that benchmark's score.
_BENCHMARK_STEMS = ("gsm8k", "math", "aime", "amc", "mmlu", "humaneval", "mbpp", "gpqa", "hellaswag", "truthfulqa",
                    "olympiad", "minerva", "livecodebench", "bbh", "ifeval", "alpacaeval", "svamp", "asdiv",
                    "theoremqa", "winogrande", "mgsm", "codeforces")
# Held-out series named after a standard text-generation metric (translation, summarisation, extraction): `chrf`,
# `eval_bleu`, `rougeL`, `comet_qe`, `f1`. All are higher-is-better.
_GENERATION_METRIC_STEMS = ("bleu", "sacrebleu", "chrf", "comet", "rouge", "meteor", "bertscore", "bleurt", "f1")
TASK_CHECK_WORDS = ("correct", "accura", "exact", "match", "pass", "solve", "verif")
MIN_EVALS = 4  # evaluations needed to say an eval does not move
PLATEAU_EVALS = 4  # evaluations after the bend needed to call an eval plateau (the slope bound carries the proof)
# Bends tried by the plateau fit: every evaluation up to this many (an ordinary run has far fewer), past it this
# many evenly spaced ones, so an eval logged at every step of a long run keeps the scan O(n).
MAX_BEND_CANDIDATES = 1000


def times_noise(ratio: float, noise: float) -> str:
    """A decline in eval-to-eval noise units, as a sentence says it: past ten the multiple says nothing more.

    The noise has a floor at 1% of the level's scale, so a collapse to 0 reads as "100x": the size is clear from
    the peak and now quoted beside it.

    >>> times_noise(4.21, 0.0666), times_noise(97.5, 0.00411)
    ('4.2x its eval-to-eval noise of 0.0666', 'more than ten times its eval-to-eval noise of 0.00411')
    """
    if ratio >= 10:
        return f"more than ten times its eval-to-eval noise of {num(noise)}"
    return f"{ratio:.1f}x its eval-to-eval noise of {num(noise)}"


def eval_score(metric: str, values: np.ndarray) -> np.ndarray:
    """Eval values turned so that higher is better (a held-out loss is negated)."""
    return -values if metric in LOWER_IS_BETTER else values


def _tokens(metric: str) -> set[str]:
    return set(re.split(r"[^a-z0-9]+", metric.lower()))


def _quality_name(metric: str) -> bool:
    """A held-out series whose name says it measures quality (and not length, time, KL, ...)."""
    lowered = metric.lower()
    named = any(w in lowered for w in _QUALITY_WORDS) or bool(_tokens(metric) & _QUALITY_TOKENS) or any(
        token.startswith(_BENCHMARK_STEMS + _GENERATION_METRIC_STEMS) for token in _tokens(metric))
    # A held-out set's size or count (`heldout_n`) measures nothing about the model.
    counts_only = _tokens(metric) - _SPLIT_TOKENS <= {"n", "size", "total"}
    return named and not counts_only and not any(w in lowered for w in _NOT_QUALITY_WORDS)


_SPLIT_TOKENS = frozenset({"heldout", "held", "out", "holdout", "eval", "val", "validation", "test", "dev"})


def _named_only_held_out(metric: str) -> bool:
    """Its only claim to measuring quality is the held-out set's name (`heldout_n`, `heldout_claims_per_answer`)."""
    lowered, tokens = metric.lower(), _tokens(metric)
    return not (any(w in lowered for w in _QUALITY_WORDS) or tokens & (_QUALITY_TOKENS - {"heldout"})
                or metric in LOWER_IS_BETTER or any(t.startswith(_BENCHMARK_STEMS + _GENERATION_METRIC_STEMS)
                                                     for t in tokens))


def _fingerprint(ctx: Context, metric: str) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """A held-out series' steps and values, to tell one series logged under two names."""
    series = ctx.run.series(metric, "eval")
    return tuple(int(x) for x in series.index), tuple(float(x) for x in np.round(series.to_numpy(), 12))


def quality_metrics(ctx: Context) -> list[str]:
    """Held-out series that measure quality, the preferred one first."""
    names = ctx.run.metric_names("eval")
    # A held-out loss measures quality only where the loss does (preference and supervised losses); a policy-
    # gradient surrogate evaluated on held-out prompts says nothing about how good the model is.
    preference = (ctx.facts.algorithm or "") in PREFERENCE_ALGORITHMS or ctx.run.has("pref_margin")
    # A run that logs no training reward at all optimises its loss directly (a preference or supervised loop that
    # logs losses only): there the held-out loss is the measure of quality, the only one it has.
    preference = preference or logs_loss_only(ctx.run)
    preferred = [m for m in EVAL_METRICS if m in names and (m != "loss" or preference)]
    # A held-out reward that mixes a learned or shaped score with one logged task check (exact match, correctness)
    # is still the proxy the policy optimises; the task check is the closer measure of what is wanted, so it goes
    # first after a plain accuracy. That is what shows a reward model being over-optimised. With several task
    # checks (a multi-task mix, one function per task) the total is their aggregate and stays first.
    task_checks = [m for m in names if m.startswith(COMPONENT_PREFIX) and m.endswith("_mean")
                   and any(w in m[len(COMPONENT_PREFIX):].lower() for w in TASK_CHECK_WORDS)]
    if len(task_checks) == 1 and "reward_mean" in preferred:
        at = preferred.index("reward_mean")
        preferred = preferred[:at] + task_checks + preferred[at:]
    elif len(task_checks) > 1 and "reward_mean" in preferred:
        # The total is one of the checks alone (the others logged with weight 0): the others are checks the policy
        # is not optimised on, the independent measure of what is wanted (a strict answer check beside the lenient
        # one it is trained on), and they go first.
        total = _fingerprint(ctx, "reward_mean")
        trained = [m for m in task_checks if _fingerprint(ctx, m) == total]
        if len(trained) == 1:
            at = preferred.index("reward_mean")
            preferred = preferred[:at] + [m for m in task_checks if m not in trained] + preferred[at:]
    # Named for what they measure (a score, an accuracy, an error rate) before those named only for the held-out set
    # they were taken on (`heldout_claims_per_answer` beside `heldout_halluc_rate`).
    others = sorted((m for m in names if m not in preferred and _quality_name(m)), key=_named_only_held_out)
    if preference and "pref_accuracy" not in names and "loss" in preferred:
        # A preference run's held-out accuracy under a name of its own (OpenRLHF's `eval/acc_mean`) is its preference
        # accuracy: it goes before the held-out loss, as `pref_accuracy` would.
        accuracy = [m for m in others if {"acc", "accuracy"} & _tokens(m)]
        at = preferred.index("loss")
        preferred = preferred[:at] + accuracy + preferred[at:]
        others = [m for m in others if m not in accuracy]
    if preference:
        # A preference run's held-out loss and pair accuracy score the objective it optimises, which it can game
        # (both answers pushed down, the margin still widening); a judge, win rate or reward model reading its
        # generations is the measure of what is wanted, and goes first.
        generated = [m for m in others if _tokens(m) & _GENERATION_QUALITY_TOKENS or "win_rate" in m.lower()]
        preferred, others = generated + preferred, [m for m in others if m not in generated]
    # A gold reward model (or a judge standing in for one) is the measure a learned proxy reward is checked
    # against: it goes first, since over-optimising the proxy shows only there.
    gold = [m for m in others if _tokens(m) & _GOLD_TOKENS]
    if preferred[:1] == ["reward_mean"]:
        # The first held-out measure is the trained reward itself, on held-out prompts: the proxy. A judge, win rate
        # or second reward model scoring the same generations is the independent reading of what is wanted (a
        # summariser pasting the article climbs on ROUGE while the judge falls); the same numbers under a judge's
        # name are the reward itself and fold into it below.
        gold += [m for m in others if m not in gold and (_tokens(m) & _GENERATION_QUALITY_TOKENS
                                                         or "win_rate" in m.lower())]
    if gold:
        preferred, others = gold + preferred, [m for m in others if m not in gold]
    # The same numbers logged under two names (a score and its alias) are one series.
    out: list[str] = []
    seen: list[tuple[tuple[int, ...], tuple[float, ...]]] = []
    for metric in preferred + others:
        fingerprint = _fingerprint(ctx, metric)
        if fingerprint not in seen:
            seen.append(fingerprint)
            out.append(metric)
    return _best_resolved_first(ctx, out)


RESOLUTION_RATIO = 4.0  # a benchmark with this many times the problems of the preferred one goes first


def much_coarser(size: int | None, than: int | None) -> bool:
    """A benchmark of `size` problems beside one of `than`: a quarter as many or fewer (it swings twice as far)."""
    return size is not None and than is not None and size * RESOLUTION_RATIO <= than


def _set_size(metric: str, values: np.ndarray, any_name: bool = False) -> int | None:
    """The eval set size read off the scores.

    `any_name`: also for a metric whose name does not say it is a rate, and then only a size decimal rounding cannot
    produce (30, 1319; not 500 or 2000, which scores rounded to a few decimals fit whatever they measure).
    """
    found = eval_set_size(metric, values, any_name=any_name)
    if found is None or (any_name and not _is_rate_name(metric) and 10**6 % found[1] == 0):
        return None
    return found[1]


def _is_rate_name(metric: str) -> bool:
    return metric == "accuracy" or any(w in metric.lower() for w in _PROPORTION_WORDS)


def _best_resolved_first(ctx: Context, metrics: list[str]) -> list[str]:
    """Among the accuracies of several benchmarks, the one that can resolve a change goes first.

    A 30-problem benchmark (AIME) swings by a sampling error of 0.06 between two evaluations of the same model; a
    500-problem one beside it (MATH-500) by 0.02. When the set sizes show in the scores and another benchmark has
    at least four times the problems of the preferred one (half its sampling error), the larger one says whether
    the model got better or worse, and the small one is read beside it. Benchmarks of similar size keep their
    order (each task of a mix counts on its own).
    """
    if len(metrics) < 2:
        return metrics
    # A pass rate shows its set size in its scores whatever it is called (`eval_aime24_pass1` logged under the
    # canonical `reward_mean`); a score that is no pass rate shows none and is not compared.
    # A benchmark's name caps what its scores show: AIME averaged over 16 samples moves in 1/480ths, but its 30
    # problems are what the sampling error is made of.
    keys = {m: ctx.run.source_keys(m, "eval") for m in metrics}
    sizes = {m: size for m in metrics if (_accuracy_like(m) or _pass_rate_name(m) or m == "reward_mean"
                                          or named_set_size(m, keys[m]) is not None)
             and (size := _smallest(_set_size(m, ctx.run.series(m, "eval").to_numpy(), any_name=True),
                                    named_set_size(m, keys[m]))) is not None}
    first = sizes.get(metrics[0])
    if first is None:
        return metrics
    largest = max(sizes, key=lambda m: sizes[m])
    if not much_coarser(first, sizes[largest]):
        return metrics
    return [largest] + [m for m in metrics if m != largest]


# Problems in benchmarks whose size is fixed by their name, for scores averaged over several samples per problem
# (`aime24_avg16`: multiples of 1/480, not 1/30), where the scores do not show it.
_NAMED_SIZES = (("aime", 30), ("amc", 40), ("gpqa", 198), ("math500", 500), ("gsm8k", 1319), ("humaneval", 164))


def named_set_size(metric: str, keys: Collection[str] = ()) -> int | None:
    """The problem count a benchmark's name implies (`aime24` 30, `math500` 500), or None.

    `keys`: what the framework logged it as, which may name the benchmark where the canonical name does not
    (OpenRLHF's `eval_math500_pass1` is the held-out `reward_mean`).
    """
    tokens = set().union(*map(_name_tokens, (metric, *keys)))
    return next((size for token in sorted(tokens) for stem, size in _NAMED_SIZES if token.startswith(stem)), None)


def _name_tokens(name: str) -> set[str]:
    """A logged name's words, and the same with hyphens and underscores inside a word dropped.

    verl names a validation series after its data source (`val-core/HuggingFaceH4/MATH-500/reward/mean@1`):
    `MATH-500` is the benchmark `math500`, not the words `math` and `500`.
    """
    lowered = name.lower()
    joined = {re.sub(r"[-_]", "", part) for part in re.split(r"[^a-z0-9_-]+", lowered)}
    return _tokens(lowered) | joined


def _smallest(*sizes: int | None) -> int | None:
    known = [size for size in sizes if size is not None]
    return min(known) if known else None


def _pass_rate_name(metric: str) -> bool:
    """A held-out pass rate by its name: `eval_math500_pass1`, `pass@1`, `pass_at_1`."""
    return any(token.startswith("pass") for token in _tokens(metric))


def _accuracy_like(metric: str) -> bool:
    """A held-out accuracy (of some benchmark): `accuracy`, `val-core/math500/acc/mean@1`, `eval_gsm8k_accuracy`."""
    return metric == "accuracy" or (bool(_tokens(metric) & {"acc", "accuracy"}) and not any(
        w in metric.lower() for w in (*_NOT_QUALITY_WORDS, "format")))


def checked_against_answers(metric: str) -> bool:
    """A held-out score a verifier checks against answers, not one a reward model gives.

    An accuracy, a pass rate or an exact match: `heldout/math_acc`, `val/pass@1`, `eval/exact_match`.
    """
    return _accuracy_like(metric) or _pass_rate_name(metric) or bool(
        _tokens(metric) & {"exact", "em", "solved", "correct"})


def diagnose_eval(ctx: Context) -> EvalDiagnosis:
    """Peak, now, decline from the peak in noise units, and divergence from training reward, per eval series."""
    metrics = quality_metrics(ctx)
    if not metrics:
        return EvalDiagnosis()
    out = _primary(ctx, metrics[0])
    declining = any(f.kind == "eval_declining" for f in out.findings)
    for metric in metrics:
        # A declining eval is a decline, not a plateau: the plateau test is left out for it.
        curve, findings = _curve(ctx, metric, primary=metric == metrics[0], may_plateau=not declining)
        if curve is not None:
            out.curves.append(curve)
            findings = [_free_to_go_back(ctx, f, curve, metrics[0]) for f in findings]
        out.findings.extend(findings)
    # A plateau of one held-out measure while another still sets clear new highs (a preference run's eval loss or
    # margin, a second benchmark) is no plateau of the model: the held-out data still shows it improving.
    if any(c.new_high_noise >= 1.0 and not confidence_only(c, out.curves) for c in out.curves):
        out.findings = [f for f in out.findings if f.kind != "eval_plateau"]
    out.findings = [_bought_by_shortening(ctx, _transfers_elsewhere(ctx, f, out.curves))
                    if f.kind == "eval_not_transferring" else f for f in out.findings]
    return out


FREE_DECLINE_NOISE = 3.0  # a second eval's fall this large, with nothing to give up on the first, is decisive


def _free_to_go_back(ctx: Context, fell: Finding, curve: EvalCurve, primary: str) -> Finding:
    """A second held-out eval's clear fall, when the preferred one was as good at its peak: a better model behind.

    Going back to the second eval's peak gives up nothing the preferred eval can show (it scored within its own
    noise of now there) and wins back the whole fall: the earlier model is at least as good on one and clearly
    better on the other. Without that, a second eval's fall is a witness only (a side task traded for the goal).
    """
    if fell.kind != "eval_declining" or fell.signal == "eval" or curve.decline_noise < FREE_DECLINE_NOISE:
        return fell
    # Decisive only against the larger of the eval-to-eval noise and the set's sampling error: a 30-problem
    # benchmark's evaluations can run smoother than its sampling error for a while, and its fall be one draw.
    own = ctx.run.series(curve.metric.removeprefix("eval/"), "eval").to_numpy()
    score = eval_score(curve.metric.removeprefix("eval/"), own)
    peak = int(np.argmax(score))
    fall = float(np.mean(_around_peak(score, peak))) - float(np.mean(score[peak + 1:][-2:]))
    if fall < FREE_DECLINE_NOISE * max(curve.noise, sampling_error(curve.metric, own) or 0.0):
        return fell
    series = ctx.run.series(primary, "eval")
    if len(series) < 3 or primary in LOWER_IS_BETTER:
        return fell
    steps, values = series.index.to_numpy(), series.to_numpy()
    if much_coarser(curve.set_size, _set_size(primary, values)):
        return fell  # a much coarser benchmark (AIME's 30 problems beside MATH-500) can fall by its own draws
    noise = held_out_noise(ctx, primary, values, eval_score(primary, values))
    then = float(np.mean(_around_peak(values, int(np.argmin(np.abs(steps - curve.peak_step))))))
    now = float(np.mean(values[-2:]))
    if now - then > noise:
        return fell  # the preferred eval gained since: going back costs something, the trade is the user's call
    # Said as the numbers show it: no worse then than now by more than its noise, or clearly better then.
    compared = (f"was better then ({num(then)} around step {curve.peak_step} against {num(now)} now, more than its "
                f"noise of {num(noise)} apart)" if then - now > noise else
                f"was as good then ({num(then)} around step {curve.peak_step}, {num(now)} now, within its noise of "
                f"{num(noise)})")
    return fell.model_copy(update={
        "severity": "critical",
        "observation": f"{fell.observation}; the main held-out eval ({primary}, read first) {compared}, so going "
                       "back gives up nothing on it: a better model is behind"})


def _bought_by_shortening(ctx: Context, flat: Finding) -> Finding:
    """A training gain that came with much shorter answers, the held-out score holding: a length term at work.

    A reward with a length penalty (or a cost per token) rises as answers shrink; the task's held-out score is
    not meant to move with that part, and holding it while answers get cheaper is the gain. (Longer answers at
    the same held-out score are no such gain, and a falling score is read as a decline elsewhere.)
    """
    if flat.kind != "eval_not_transferring":
        return flat
    # Only a logged length term says so: without one, answers that shrink while the training reward climbs and the
    # eval stands still are as often a memorised shard (short, exact answers to prompts seen before) as a penalty.
    length = ctx.book.get("response_length_mean")
    rho = length_reward_correlation(ctx.run)
    if length is None or rho is None or rho > -SHORTER_RHO:
        return flat
    start, now = length.summary.start, length.summary.now
    if start <= 0 or now > (1 - SHORTER_SHARE) * start:
        return flat
    parts = [m for m in ctx.run.metric_names("train") if m.startswith(COMPONENT_PREFIX)]
    if not any(w in m.lower() for m in parts for w in _LENGTH_TERM_WORDS):
        return flat.model_copy(update={"observation": (
            f"{flat.observation}; the answers also got shorter ({num(start)} → {num(now)} tokens, Spearman "
            f"{num(rho)} with the reward), but no logged reward part scores length, so that is no length term's gain")})
    return finding(
        flat.signal, "eval_holds_answers_shorter", "info",
        f"{_what_stood_still(flat)}; but the answers got shorter ({num(start)} → {num(now)} tokens, Spearman "
        f"{num(rho)} with the reward): the training gain is the reward's length term, and the held-out score holding "
        "while answers get cheaper is that gain kept", flat.steps)


# Words in a reward component's name that say it scores length (a penalty per token, a cap, brevity).
_LENGTH_TERM_WORDS = ("len", "token", "concise", "brev", "overlong", "cost", "short")


def _what_stood_still(flat: Finding) -> str:
    """An `eval_not_transferring` finding's observation without its conclusion (what follows the colon)."""
    return flat.observation.split(":")[0]


def confidence_only(curve: EvalCurve, curves: list[EvalCurve]) -> bool:
    """A held-out preference margin still widening while the held-out loss beside it sets no new best.

    The loss is the margin read through a sigmoid, pair by pair: a wider average margin with no better loss is
    pairs already ranked right growing more confident while the others do not improve, not a better model.
    """
    return curve.metric.removeprefix("eval/") == "pref_margin" and any(
        other.metric.removeprefix("eval/") == "loss" and other.new_high_noise < 1.0 for other in curves)


def _transfers_elsewhere(ctx: Context, flat: Finding, curves: list[EvalCurve]) -> Finding:
    """A held-out measure that stood still while another gained clearly over the same steps: the gains transfer.

    Two benchmarks (the task's own and an unrelated one kept to watch for forgetting): the unrelated one holding
    is what it is there to show, not a sign that nothing transfers. The finding is kept as info, naming the other.
    """
    if len(flat.steps) < 2:
        return flat
    # A component of the trained reward standing still is something training does target (a task check at its
    # floor while the format parts gain): the held-out total gaining with those parts is the proxy, not a transfer.
    if flat.signal.removeprefix("eval/").startswith(COMPONENT_PREFIX):
        return flat
    first, last = flat.steps[0], flat.steps[-1]
    for curve in curves:
        if curve.metric == flat.signal or confidence_only(curve, curves):
            continue
        metric = curve.metric.removeprefix("eval/")
        series = ctx.run.series(metric, "eval")
        steps, values = series.index.to_numpy(), series.to_numpy()
        inside = (steps >= first) & (steps <= last)
        if inside.sum() < 4 or curve.noise <= 0:
            continue
        score = eval_score(metric, values[inside])
        gained = (float(np.mean(score[-2:])) - float(np.mean(score[:2]))) / curve.noise
        if gained >= TRANSFER_GAIN_NOISE:
            shown = values[inside]
            return finding(
                flat.signal, "eval_transfers_elsewhere", "info",
                f"{_what_stood_still(flat)}; but held-out {metric} gained {num(float(np.mean(shown[:2])))} → "
                f"{num(float(np.mean(shown[-2:])))} ({gained:.1f} eval-to-eval noise units) over the same steps: the "
                f"gains do reach held-out data, and the flat one measures something training does not target",
                flat.steps)
    return flat


def _primary(ctx: Context, metric: str) -> EvalDiagnosis:
    series = ctx.run.series(metric, "eval")
    steps, values = series.index.to_numpy(), series.to_numpy()
    score = eval_score(metric, values)
    peak_index = int(np.argmax(score))
    peak_step, now_step = int(steps[peak_index]), int(steps[-1])
    out = EvalDiagnosis(
        metric=metric, points=len(values), peak_step=peak_step, peak=float(values[peak_index]),
        now=float(values[-1]), now_step=now_step,
    )
    if len(values) < 3:
        return out
    if float(np.ptp(values)) == 0.0:
        return out  # identical at every evaluation: no peak to read (see `_curve`)
    noise = held_out_noise(ctx, metric, values, score)
    recent = float(np.mean(score[-2:]))  # two evaluations, so one unlucky one does not call a decline
    # The best of many noisy evaluations is a lucky one: its level is read with its neighbours, so a single
    # high draw among twenty evaluations does not pass for a peak the model has since fallen from.
    around_peak = _around_peak(score, peak_index)
    decline = (float(np.mean(around_peak)) - recent) / noise
    out.decline_from_peak_noise = decline
    evals_after_peak = len(values) - 1 - peak_index
    findings: list[Finding] = []
    label = f"held-out {metric}"
    # Also compare stretches: the best few consecutive evaluations against the latest few. A steady slide over
    # many evaluations is significant even when each step of it is within the eval-to-eval noise.
    k = max(1, min(3, len(values) // 4))
    windows = np.convolve(score, np.ones(k) / k, mode="valid")
    best_start = int(np.argmax(windows))
    stretch_t = (float(windows[best_start]) - float(np.mean(score[-k:]))) / (noise * np.sqrt(2.0 / k))
    # A slide shows before the latest evaluation too: one crashed evaluation at the end is not a slide.
    before_last_t = (float(windows[best_start]) - float(np.mean(score[-k - 1:-1]))) / (noise * np.sqrt(2.0 / k))
    slid = best_start + k <= len(values) - k - 1 and stretch_t >= 3.0 and before_last_t >= 2.0
    if slid and not (evals_after_peak >= 2 and decline >= 2.0):
        peak_index = best_start + int(np.argmax(score[best_start:best_start + k]))
        peak_step = int(steps[peak_index])
        out.peak_step, out.peak = peak_step, float(values[peak_index])
        evals_after_peak = len(values) - 1 - peak_index
        decline = max(decline, stretch_t)
        out.decline_from_peak_noise = decline
    # Nor is a decline carried by the latest evaluation alone: with two evaluations since the peak ("now" is their
    # mean), the first of them must stand below the peak's level too, or one low evaluation is all there is.
    rests_on_latest = evals_after_peak == 2 and not slid and (
        float(np.mean(around_peak)) - float(score[-2])) / noise < 1.0
    if evals_after_peak >= 2 and decline >= 2.0 and not rests_on_latest:
        relative = (float(score[peak_index]) - recent) / max(abs(float(score[peak_index])), 1e-12)
        severity: Severity = "critical" if relative >= 0.5 else "warning"
        findings.append(finding(
            "eval", "eval_declining", severity,
            f"{label} peaked at {num(out.peak)} at step {out.peak_step} and is {num(out.now)} at step {out.now_step}; "
            f"the evaluations around the peak stand {times_noise(decline, noise)} above the latest ones "
            f"({evals_after_peak} evaluations since the peak){BEHIND_US}", [peak_step, now_step]))
        rise = _train_rise_since(ctx, peak_step)
        out.diverging_from_train = rise is not None
        if rise is not None:
            # Said as the two levels it compares: "kept rising" read wrongly for a reward that rose once and held.
            findings.append(finding(
                "eval", "train_eval_divergence", "warning",
                f"the training reward stands higher now than around step {out.peak_step} ({num(rise[0])} → "
                f"{num(rise[1])}, medians of the latest steps on each side) while {label} fell: the gains do not "
                "transfer (overfitting to the training prompts, or reward hacking)", [peak_step]))
    elif (evals_after_peak == 1 or rests_on_latest) and (
            float(score[peak_index]) - float(score[-1])) / noise >= ONE_EVAL_DROP:
        # One evaluation is not a decline (a broken eval job scores 0 too), but it is not "within noise" either.
        drop = (float(score[peak_index]) - float(score[-1])) / noise
        findings.append(finding(
            "eval", "eval_latest_drop", "warning",
            f"the latest {label} ({num(out.now)} at step {out.now_step}) fell {drop:.0f}x its eval-to-eval noise "
            f"below the peak ({num(out.peak)} at step {out.peak_step}, "
            + ("the evaluation before it" if evals_after_peak == 1 else
               "with the one between them still within noise of the peak's level") + "); one evaluation, so "
            + ("not yet a decline on its own: check that evaluation, and assess again after the next one"
               if ctx.state == "live" else
               f"not a decline on its own: check that evaluation (the run is {ctx.state}: no later evaluation will "
               "settle it)"),
            [peak_step, now_step]))
    elif peak_index == len(values) - 1:
        findings.append(finding(
            "eval", "eval_at_best", "info",
            f"{label} is at its best ({num(out.now)} at step {out.now_step})", [now_step]))
    elif evals_after_peak <= 1 and decline < 2.0:
        # One evaluation after the peak: say how far below it is, in the noise the decline test uses, rather than
        # "near its best" for an evaluation two noise units down.
        below = (float(score[peak_index]) - float(score[-1])) / noise
        where = f"{below:.1f}x its eval-to-eval noise of {num(noise)} below its peak" if below >= 0.05 else (
            "level with its peak")
        findings.append(finding(
            "eval", "eval_near_best", "info",
            f"{label} is {where} ({num(out.now)} at step {out.now_step}; peak {num(out.peak)} at step "
            f"{out.peak_step}), one evaluation after it: too few to call a decline", [peak_step, now_step]))
    else:
        shown = math.floor(max(decline, 0.0) * 10) / 10  # rounded down: 1.96 is not "2.0x, under the 2x"
        findings.append(finding(
            "eval", "eval_holding", "info",
            f"{label} holds near its peak: the evaluations around the peak ({num(out.peak)} at step "
            f"{out.peak_step}; {len(around_peak)} evaluations, mean {num(_shown_mean(metric, around_peak))}) stand "
            + (f"{shown:.1f}x its eval-to-eval noise of {num(noise)} above the latest two (mean "
               f"{num(float(np.mean(values[-2:])))}; now {num(out.now)}): short of the 2x a decline "
               "needs"
               if shown >= 0.1 else
               f"within a tenth of its eval-to-eval noise of {num(noise)} of the latest two (mean "
               f"{num(float(np.mean(values[-2:])))}; now {num(out.now)}): nothing measurable is lost since the peak"
               if decline > 0 else
               f"no higher than the latest two (mean {num(float(np.mean(values[-2:])))}; now {num(out.now)}): "
               "nothing is lost since the peak"),
            [peak_step]))
    out.findings = findings
    return out


def _shown_mean(metric: str, score: np.ndarray) -> float:
    """The mean of some scores in the metric's own units (a held-out loss is scored negated)."""
    return -float(np.mean(score)) if metric in LOWER_IS_BETTER else float(np.mean(score))


def _curve(ctx: Context, metric: str, primary: bool, may_plateau: bool) -> tuple[EvalCurve | None, list[Finding]]:
    """One held-out series: its peak-to-now decline (non-primary ones) and whether it moves while training does.

    The primary series' decline is read by `_primary`; here every series is also compared with the training
    reward over the same steps, because a gain that does not show on held-out data does not transfer.
    """
    series = ctx.run.series(metric, "eval")
    steps, values = series.index.to_numpy(), series.to_numpy()
    if len(values) < 3:
        return None, []
    score = eval_score(metric, values)
    noise = held_out_noise(ctx, metric, values, score)
    peak_index = int(np.argmax(score))
    # A decline is read on the evaluations after the peak (up to the last two): a latest evaluation that is
    # the peak has fallen from nothing, whatever the one before it scored.
    after_peak = score[peak_index + 1:][-2:]
    recent = float(np.mean(after_peak)) if len(after_peak) else float(score[peak_index])
    name = f"eval/{metric}"
    constant = float(np.ptp(values)) == 0.0
    moved = float(np.max(score)) - float(np.mean(score[:2])) > 2 * noise and not constant
    train = _train_change(ctx, int(steps[0]), int(steps[-1]))
    curve = EvalCurve(
        metric=name, points=len(values), start=float(values[0]), peak=float(values[peak_index]),
        peak_step=int(steps[peak_index]),
        new_high_noise=(float(np.max(score[-2:])) - float(np.max(score[:-2]))) / noise if len(score) > 2 else 0.0,
        recent_rise_noise=_recent_rise(score, noise), late_rise=_late_rise(steps, score, noise),
        climbed=_climbed(steps, score, noise), now=float(np.mean(values[-2:])), now_step=int(steps[-1]), noise=noise,
        decline_noise=(float(score[peak_index]) - recent) / noise, moved=moved, train_change_noise=train,
        slowing=_slowing(steps, score), set_size=_set_size(metric, values),
    )
    findings: list[Finding] = []
    evals_after_peak = len(values) - 1 - peak_index
    # The peak is read with its neighbours, as the best point reads it (an evaluation counts only if the median of
    # it and those either side does too): the luckiest of many evaluations of a flat curve is not a level the model
    # has fallen from (the single best is picked after looking).
    fell_from_around = (float(np.median(_around_peak(score, peak_index))) - recent) / noise >= 2.0
    if (not primary and not constant and evals_after_peak >= 2 and curve.decline_noise >= 2.0
            and fell_from_around):
        best = (f"was at its best (lowest) at {num(curve.peak)} at step {curve.peak_step} and has risen to average"
                if metric in LOWER_IS_BETTER else
                f"peaked at {num(curve.peak)} at step {curve.peak_step} and averages")
        findings.append(finding(
            name, "eval_declining", "warning",
            f"held-out {metric} {best} {num(curve.now)} over the last two evaluations (a worsening of "
            f"{times_noise(curve.decline_noise, noise)})",
            [curve.peak_step, curve.now_step]))
    train_rose = train is not None and train >= TRAIN_ROSE_T
    if constant:
        # Identical at every evaluation: with training reward rising, the gains do not reach held-out data (or
        # the eval does not see the current weights); either way more steps cannot be shown to pay.
        findings.append(finding(
            name, "eval_not_transferring" if train_rose else "eval_constant", "warning" if train_rose else "watch",
            f"held-out {metric} is {num(float(values[0]))} at every one of {len(values)} evaluations"
            + (f", while the training reward rose ({train:.1f} standard errors over the same steps)" if train_rose
               else "") + ": it does not respond to training (check that the eval loads the current weights and "
            "parses the answers)", [int(steps[0]), int(steps[-1])]))
    elif primary and may_plateau:
        # Only the preferred held-out measure says whether the run is spent: a format rate or a side metric
        # that saturated says nothing about the task while the main eval still climbs.
        findings.extend(_not_transferring(ctx, name, metric, steps, score, noise))
    return curve, findings


def _around_peak(score: np.ndarray, peak_index: int) -> np.ndarray:
    """The best evaluation and the one either side: the peak's level, read with its neighbours."""
    return score[max(0, peak_index - 1):peak_index + 2]


RECENT_RISE_MIN_EVALS = 8  # two quarters of at least two evaluations each


def _recent_rise(score: np.ndarray, noise: float) -> float:
    """The latest quarter's mean over the quarter before it, in standard errors of their difference.

    With frequent evaluations a steady climb adds less than one noise unit from one evaluation to the next, so
    "the latest evaluation is a clear new high" misses it; two fixed quarters, each averaged, show it.
    """
    n = len(score)
    if n < RECENT_RISE_MIN_EVALS or noise <= 0:
        return 0.0
    width = n // 4
    latest, before = score[-width:], score[-2 * width:-width]
    return (float(np.mean(latest)) - float(np.mean(before))) / (noise * math.sqrt(2.0 / width))


LATE_RISE_MIN_EVALS = 5


def _late_rise(steps: np.ndarray, score: np.ndarray, noise: float) -> bool:
    """The latest half of the evaluations still climbs, beyond what their noise could draw, up to the latest one.

    A steady climb of a third of a noise unit per evaluation sets no single clear new high and, over few
    evaluations, no clear rise of one quarter over the next; the slope of the whole latest half does show it.
    """
    half = len(score) // 2
    return half >= LATE_RISE_MIN_EVALS and _climbs_to_latest(steps, score, noise, since=len(score) - half)


def _climbed(steps: np.ndarray, score: np.ndarray, noise: float) -> bool:
    """All the evaluations climb together, up to the latest one (within its noise of the best).

    Start against now compares two single noisy evaluations; a dozen evaluations of a 400-problem set rising by
    a noise unit or two in all show their climb only as a slope.
    """
    return len(score) >= LATE_RISE_MIN_EVALS and _climbs_to_latest(steps, score, noise, since=0)


def _climbs_to_latest(steps: np.ndarray, score: np.ndarray, noise: float, since: int) -> bool:
    """The evaluations from index `since` on climb, up to now: not a rise, then a fall.

    Climb: the Theil-Sen slope's 90% lower bound is above 0. Up to now: the latest evaluation is within its noise of
    the best of all of them.
    """
    if noise <= 0:
        return False
    fit = robust.theil_sen(score[since:], steps[since:].astype(np.float64), alpha=0.90)
    return fit.low_slope > 0 and float(score[-1]) >= float(np.max(score)) - noise


def _slowing(steps: np.ndarray, score: np.ndarray) -> bool:
    """A rising eval whose latest third of the span gains at under half the rate of everything before it."""
    if len(score) < 6:
        return False
    cut = steps[0] + 2 * (steps[-1] - steps[0]) / 3
    early, late = steps <= cut, steps >= cut
    if early.sum() < 2 or late.sum() < 2:
        return False
    rate_early = (float(np.mean(score[early][-2:])) - float(score[0])) / max(1.0, float(cut - steps[0]))
    rate_late = (float(np.mean(score[-2:])) - float(np.mean(score[early][-2:]))) / max(1.0, float(steps[-1] - cut))
    return rate_early > 0 and rate_late < 0.5 * rate_early


# Answers at least this much shorter than at the start, their length tied to the reward at least this tightly
# (falling length, rising reward): a length term in the reward is what is being learnt.
SHORTER_SHARE, SHORTER_RHO = 0.2, 0.5
# A second held-out measure that gained this many of its eval-to-eval noise units over the steps where the first
# stood still shows the training gains do transfer.
TRANSFER_GAIN_NOISE = 3.0


def _not_transferring(
    ctx: Context, name: str, metric: str, steps: np.ndarray, score: np.ndarray, noise: float,
) -> list[Finding]:
    """An eval shown to have levelled off, with the training reward still rising over the flat stretch or not.

    The eval is the closest measure of what is wanted: one that has demonstrably stopped improving says more
    steps are not paying, whatever the training reward does. With the training reward still rising over the
    flat stretch, the later gains do not transfer; without, the run has converged on held-out data. A short
    or noisy eval cannot show a plateau, and then nothing is said.
    """
    if float(score[-1]) > float(np.max(score[:-1])):
        return []  # the latest evaluation is the best yet
    bend = _levelled_off(steps, score, noise)
    if bend is None:
        return _never_moved(ctx, name, metric, steps, score, noise)
    flat = steps >= bend.step
    part, part_steps = score[flat], steps[flat]
    sign = -1.0 if metric in LOWER_IS_BETTER else 1.0
    levels = (f"{num(sign * float(np.mean(part[:2])))} → {num(sign * float(np.mean(part[-2:])))} over "
              f"{len(part)} evaluations, {_rate_left(bend.rate_left)}")
    train = _train_change(ctx, int(part_steps[0]), int(part_steps[-1]))
    if train is not None and train >= TRAIN_ROSE_T and _material_train_rise(ctx, int(part_steps[0]),
                                                                           int(part_steps[-1])):
        return [finding(
            name, "eval_not_transferring", "warning",
            f"training reward rose ({train:.1f} standard errors) between steps {int(part_steps[0])} and "
            f"{int(part_steps[-1])} while held-out {metric} levelled off ({levels}): the later gains do not transfer",
            [int(part_steps[0]), int(part_steps[-1])])]
    return [finding(
        name, "eval_plateau", "warning",
        f"held-out {metric} levelled off around step {bend.step}: it improved for {bend.climb_steps} steps and has "
        f"barely moved in the {bend.flat_steps} since ({levels}); on held-out data the run has converged",
        [int(part_steps[0]), int(part_steps[-1])])]


def _never_moved(
    ctx: Context, name: str, metric: str, steps: np.ndarray, score: np.ndarray, noise: float,
) -> list[Finding]:
    """An eval shown not to move over the whole run while the training reward rose over the same steps.

    Shown, not merely unproven: the most optimistic Theil-Sen slope (90% upper bound) would not move it by one and
    a half eval noise units across all the evaluations.
    """
    if len(score) < 2 + PLATEAU_EVALS:
        return []
    x = steps.astype(np.float64)
    fit = robust.theil_sen(score, x, alpha=0.90)
    optimistic = float(fit.high_slope) * float(x[-1] - x[0])
    shift = _train_shift(ctx, int(steps[0]), int(steps[-1]))
    if shift is None or shift.t < TRAIN_ROSE_T:
        return []
    train = shift.t
    same_scale = _same_scale(ctx, metric)
    if same_scale and 1.5 * noise >= shift.after - shift.before:
        return []  # too noisy to tell: even a full transfer of the training gain would read as "did not move"
    if optimistic >= 1.5 * noise and not (same_scale and (
            _small_share_of_training_gain(shift.after - shift.before, optimistic)
            or _halves_show_small_share(ctx, steps, score, noise))):
        return []
    sign = -1.0 if metric in LOWER_IS_BETTER else 1.0
    return [finding(
        name, "eval_not_transferring", "warning",
        f"training reward rose ({train:.1f} standard errors) between steps {int(steps[0])} and {int(steps[-1])} while "
        f"held-out {metric} did not move ({num(sign * float(np.mean(score[:2])))} → "
        f"{num(sign * float(np.mean(score[-2:])))} over {len(score)} evaluations, eval-to-eval noise {num(noise)}): "
        "the gains do not transfer", [int(steps[0]), int(steps[-1])])]


TRANSFER_SHARE = 0.25  # an eval gain under a quarter of the training gain: most of the gain does not transfer


def _halves_show_small_share(ctx: Context, steps: np.ndarray, score: np.ndarray, noise: float) -> bool:
    """The eval's second half against its first, beside the training reward's over the same steps.

    A slope extrapolated across all the evaluations carries the slope's whole uncertainty; two half means pin a
    flat eval's level far better (a dozen evaluations at 0.28-0.34 gained nothing, give or take 0.015), so a
    training reward that gained 0.12 between the same halves is shown not to transfer.
    """
    half = len(score) // 2
    reading = ctx.book.get("reward_mean")
    if half < PLATEAU_EVALS or reading is None:
        return False
    first, second = score[:half], score[half:]
    bound = float(np.mean(second) - np.mean(first)) + 1.645 * noise * math.sqrt(1 / len(first) + 1 / len(second))
    train_steps = reading.series.steps
    early = (train_steps >= steps[0]) & (train_steps <= steps[half - 1])
    late = (train_steps >= steps[half]) & (train_steps <= steps[-1])
    if early.sum() < 2 or late.sum() < 2:
        return False
    shift = robust.level_shift(reading.series, early, late)
    return shift.t >= TRAIN_ROSE_T and _small_share_of_training_gain(shift.after - shift.before, bound)


def _small_share_of_training_gain(gain: float, optimistic: float) -> bool:
    """A pass-rate eval whose most optimistic gain is a small share of what a 0..1 training reward gained.

    When both are success rates on the same scale, a training reward that climbed by 0.27 against a held-out
    rate that, at the top of its confidence band, gained 0.03 says the gains stay on the training prompts, even
    where a dozen noisy evaluations cannot pin the eval's own slope to under a noise unit or so. The caller checks
    that the two are on the same scale (`_same_scale`).
    """
    return gain > 0 and optimistic < TRANSFER_SHARE * gain


def _same_scale(ctx: Context, metric: str) -> bool:
    """A held-out success rate (or mean reward) and a 0..1 training reward: their gains compare directly."""
    if metric in LOWER_IS_BETTER:
        return False
    if not any(w in metric.lower() for w in _PROPORTION_WORDS):
        # A held-out mean reward is the training reward function on held-out prompts (verl's val score, OpenRLHF's
        # eval reward): on the same 0..1 scale it is as comparable as a named pass rate.
        held_out = ctx.run.series(metric, "eval").to_numpy()
        if metric != "reward_mean" or float(np.min(held_out)) < 0 or float(np.max(held_out)) > 1:
            return False
    reading = ctx.book.get("reward_mean")
    return reading is not None and float(np.min(reading.series.values)) >= 0 and float(
        np.max(reading.series.values)) <= 1


def _levelled_off(steps: np.ndarray, score: np.ndarray, noise: float) -> robust.LevelOff | None:
    """The bend of an eval that rose and then stood still for at least as long as it climbed, or None.

    The reward's plateau test (`robust.LevelOff`) on separate evaluations: the best continuous two-piece linear
    fit gives the bend; the climb rate is the gain up to it over its length (an eval can rise in one interval);
    the rate since is a Theil-Sen slope whose 90% upper bound must also stay well under the climb rate.
    """
    n = len(score)
    if n < 2 + PLATEAU_EVALS:
        return None
    x = steps.astype(np.float64)
    best_sse, best_i = math.inf, -1
    candidates = np.arange(1, n - PLATEAU_EVALS + 1)
    if len(candidates) > MAX_BEND_CANDIDATES:  # each fit is O(n): an evenly spaced subset keeps the scan O(n)
        candidates = np.unique(np.linspace(1, n - PLATEAU_EVALS, MAX_BEND_CANDIDATES).round().astype(np.int64))
    for i in candidates:
        design = np.column_stack([np.ones(n), np.minimum(x, x[i]), np.maximum(x - x[i], 0.0)])
        coef, *_ = np.linalg.lstsq(design, score, rcond=None)
        sse = float(np.sum((design @ coef - score) ** 2))
        if sse < best_sse:
            best_sse, best_i = sse, int(i)
    after = x >= x[best_i]
    gain = float(np.mean(score[after][:2])) - float(score[0])
    climb = x[best_i] - x[0]
    if gain <= 2 * noise or climb <= 0:
        return None
    fit = robust.theil_sen(score[after], x[after], alpha=0.90)
    rate = gain / climb
    out = robust.LevelOff(
        step=int(x[best_i]), climb_steps=int(climb), flat_steps=int(x[-1] - x[best_i]), flat_points=int(after.sum()),
        climb_rate=rate, rate_after=float(fit.slope), rate_after_upper=float(fit.high_slope))
    return out if out.plateau(min_flat_points=PLATEAU_EVALS) else None


TRAIN_ROSE_T = 4.0
ONE_EVAL_DROP = 4.0  # a single evaluation this many noise units below the peak just before it is worth a word


def _train_change(ctx: Context, first: int, last: int) -> float | None:
    """Training reward's change between the stretches around two steps, in standard errors (None: not logged)."""
    shift = _train_shift(ctx, first, last)
    return None if shift is None else shift.t


TRAIN_RISE_SHARE = 0.2  # of the training reward's whole climb: a rise smaller than this is its plateau's drift


def _material_train_rise(ctx: Context, first: int, last: int) -> bool:
    """Whether the training reward's rise between two steps is a material share of its climb over the run.

    Stretch means over a long plateau are precise: a drift of 0.03 after a climb of 0.32 stands 20 standard errors
    out, yet the reward levelled off with the eval (a reader met "training reward rose (21.8 standard errors)"
    beside "reward_mean levelled off ... kept 1% of its climb rate").
    """
    shift, reading = _train_shift(ctx, first, last), ctx.book.get("reward_mean")
    if shift is None or reading is None:
        return False
    climb = reading.summary.peak - reading.summary.start
    return climb <= 0 or shift.after - shift.before >= TRAIN_RISE_SHARE * climb


def _train_shift(ctx: Context, first: int, last: int) -> robust.LevelShift | None:
    """Training reward's stretches around two steps compared (None: not logged, or the stretches overlap)."""
    reading = ctx.book.get("reward_mean")
    if reading is None:
        return None
    series = reading.series
    width = robust.stretch_width(series.n)
    near_first = robust.nearest(series.steps, first, width)
    near_last = robust.nearest(series.steps, last, width)
    if (near_first & near_last).any():
        return None
    return robust.level_shift(series, near_first, near_last)


_PROPORTION_WORDS = ("acc", "pass", "exact", "correct", "match", "solve", "success")


def _as_rate(metric: str, values: np.ndarray, any_name: bool = False) -> tuple[np.ndarray, float] | None:
    """A pass rate's finite scores as fractions, and the scale they were logged on (1 or 100); None if no rate.

    `any_name`: whatever the metric is called (the scores alone must show a set size).
    """
    if not any_name and metric != "accuracy" and not any(w in metric.lower() for w in _PROPORTION_WORDS):
        return None
    finite = values[np.isfinite(values)]
    if len(finite) < 3 or float(np.min(finite)) < 0:
        return None
    scale = 100.0 if float(np.max(finite)) > 1.0 else 1.0
    if scale == 100.0 and float(np.max(finite)) > 100.0:
        return None
    return finite / scale, scale


TYPICAL_EVAL_SET = 1000  # problems: MATH-500 has 500, GSM8K's test set 1,319; few held-out sets are much larger


def typical_sampling_error(metric: str, values: np.ndarray) -> float | None:
    """The sampling error of a pass rate at its best level on a typical eval set, for a rate whose size is hidden.

    Scores that are averaged or rounded do not show their set size; they are still pass rates on a few hundred
    to about a thousand problems, so two checkpoints closer than about sqrt(p (1 - p) / 1000) cannot be told
    apart, however smoothly the curve happens to run. None for scores that are not pass rates.
    """
    rate = _as_rate(metric, values)
    if rate is None:
        return None
    p, scale = rate
    level = float(np.max(p))
    return scale * math.sqrt(level * (1 - level) / TYPICAL_EVAL_SET)


def sampling_error(metric: str, values: np.ndarray) -> float | None:
    """The standard error of one evaluation of a pass rate, from the size of the eval set, when it shows."""
    found = eval_set_size(metric, values)
    return found[0] if found else None


def eval_set_size(metric: str, values: np.ndarray, any_name: bool = False) -> tuple[float, int] | None:
    """`sampling_error`'s error and the set size N it was read from, or None.

    Pass rates on a fixed set of N problems are multiples of 1/N, so N can be read off the scores themselves
    (0.562 and 0.548 on 500 problems); the error of one score is then sqrt(p (1 - p) / N). This measures how
    far apart two checkpoints must score to differ, without the eval-to-eval noise a collapse inflates. None
    for scores that are not pass rates, or whose set size does not show (rounded or averaged values).
    """
    rate = _as_rate(metric, values, any_name=any_name)
    if rate is None:
        return None
    p, scale = rate
    sizes = np.arange(20, 5001)
    fits = np.ones(len(sizes), dtype=bool)
    # A block of distinct scores at a time (a score repeated says nothing new), stopping once no size fits: the
    # memory stays bounded however many evaluations there are, and scores that are no pass rates stop at once.
    distinct = np.unique(p)
    for start in range(0, len(distinct), 64):
        counts = np.outer(distinct[start:start + 64], sizes)
        fits &= np.all(np.abs(counts - np.round(counts)) <= 1e-6 * sizes, axis=0)
        if not fits.any():
            return None
    n = int(sizes[int(np.argmax(fits))])
    level = float(np.max(p))
    return scale * math.sqrt(max(level * (1 - level), 1.0 / n) / n), n


NOISE_EVALS = 10  # evaluations (eight second differences) before their own spread is a measurement
ROBUST_DOUBT = 2.0  # plain over robust spread of a few evaluations' differences: the robust one drew low


def decline_noise(metric: str, values: np.ndarray, score: np.ndarray, keys: Collection[str] = ()) -> float:
    """The noise a held-out decline is measured against: the eval-to-eval noise, read off the evaluations.

    With fewer than `NOISE_EVALS` evaluations that spread is a guess (three differences can look steady by luck),
    and a pass rate on N problems is then read no finer than its sampling error: a dip of two such guesses early
    in a run is not a decline. With more, the evaluations' own spread is the better measure (two checkpoints
    scored on the same problems differ by less than two independent samples would).
    """
    noise = eval_noise(score)
    if len(values) < NOISE_EVALS:
        plain = _plain_eval_noise(score)
        # The robust spread of a few differences is the suspect only when the plain one is more than twice it. A
        # benchmark named for its size is read no finer than that size allows (HumanEval's 164 problems), whatever
        # grid its rounded scores fit (three decimals fit 1,000 problems).
        # The name may be that of a key it was logged as (`keys`).
        sampling = max(sampling_error(metric, values) or 0.0, named_sampling_error(metric, values, keys) or 0.0)
        noise = max(noise, sampling, plain if plain > ROBUST_DOUBT * noise else 0.0)
    return noise


def held_out_noise(ctx: Context, metric: str, values: np.ndarray, score: np.ndarray) -> float:
    """`decline_noise` of a held-out series, its benchmark named by the metric or by any key it was logged as."""
    return decline_noise(metric, values, score, ctx.run.source_keys(metric, "eval"))


def named_sampling_error(metric: str, values: np.ndarray, keys: Collection[str] = ()) -> float | None:
    """A pass rate's sampling error at its best level on the problem count its benchmark's name implies."""
    size, rate = named_set_size(metric, keys), _as_rate(metric, values, any_name=True)
    if size is None or rate is None:
        return None
    p, scale = rate
    level = float(np.max(p))
    return scale * math.sqrt(max(level * (1 - level), 1.0 / size) / size)


def _plain_eval_noise(score: np.ndarray) -> float:
    """The eval-to-eval noise from the plain spread of second differences (no outlier guard).

    With a handful of evaluations the robust spread is the median of three or four numbers and can land at a third
    of the truth (six evaluations of a 2% pass rate on 500 problems, 0.028 0.022 0.012 0.024 0.024 0.014, read
    0.0024 where their sampling error is 0.0063); the plain spread is the steadier of the two there. A collapse is
    not hidden by it: its one kink is a single large difference among a few, and the fall stays several times it.
    """
    if len(score) < 5:
        return 0.0
    return float(np.std(np.diff(score, n=2), ddof=1)) / math.sqrt(6.0)


def eval_noise(score: np.ndarray) -> float:
    """Eval-to-eval noise: a robust spread of second differences, never under 1% of the level's scale."""
    return measured_eval_noise(score)[0]


def measured_eval_noise(score: np.ndarray) -> tuple[float, bool]:
    """`eval_noise`, and whether it is its floor (the evaluations are too smooth for their spread to say more)."""
    # Evaluations are separate measurements (fresh samples of a fixed set), so their noise is read from
    # differences without the autocorrelation correction: with a dozen points, a steady slide would otherwise
    # masquerade as autocorrelated noise and hide itself. Second differences (var 6 sigma^2 for independent
    # noise) also cancel a straight climb or slide, so a curve that rose and then fell does not read its own
    # two slopes as noise; first differences stand in when there are too few points for them.
    if len(score) >= 5:
        noise = _difference_spread(np.diff(score, n=2)) / math.sqrt(6.0)
    elif len(score) >= 2:
        noise = _difference_spread(np.diff(score)) / math.sqrt(2.0)
    else:
        noise = 0.0
    # With a handful of points the estimate is rough; never let it fall below 1% of the level's scale.
    floor = max(0.01 * float(np.max(np.abs(score))), robust.noise_floor(score))
    return max(noise, floor), noise <= floor


def _difference_spread(diffs: np.ndarray) -> float:
    """The standard deviation of differences: robustly (the MAD), unless most of them tie.

    A rate counted on a few hundred samples near its floor (0, 1/256, 2/256, mostly 0) has differences that are
    mostly exactly equal: their MAD is 0 though the values plainly scatter, and a noise of 0 would make a move of
    one success in a thousand read as dozens of standard errors. Then the plain standard deviation is the spread.
    """
    deviations = np.abs(diffs - np.median(diffs))
    if robust.zero_heavy(deviations):
        return float(np.std(diffs))
    return float(np.median(deviations)) * robust.MAD_TO_SD


def _rate_left(rate_left: float) -> str:
    """How fast an eval still climbs after levelling off, against its climb, in words that read at any value."""
    if rate_left <= 0.005:
        return "no longer improving (its rate since is zero or negative)"
    return f"improving at {rate_left:.0%} of the rate it improved at before"


def _train_rise_since(ctx: Context, since_step: int) -> tuple[float, float] | None:
    """The training reward's level just before `since_step` and now, when it stands higher now (else None)."""
    reward = ctx.book.get("reward_mean")
    if reward is None:
        return None
    steps, values = reward.series.steps, reward.series.values
    before = values[steps <= since_step]
    after = values[steps > since_step]
    if len(before) < 3 or len(after) < 3:
        return None
    k = max(3, min(len(before), len(after)) // 3)
    then, now = float(np.median(before[-k:])), float(np.median(after[-k:]))
    return (then, now) if now - then > max(reward.series.noise, robust.noise_floor(values)) * 0.5 else None


def eval_noise_without_signal(evaluation: EvalDiagnosis) -> EvalDiagnosis:
    """The eval's decline read again on a run whose training reward carries no learning signal.

    With nothing to learn from, the policy barely moves: an evaluation "peak" early on is one lucky draw and the
    "decline" after it is evaluation noise or slow drift, not a better model to go back to (the fix is the reward
    or the data). The finding stays on the sheet, as a watch item that says so, so the sheet does not say both
    "nothing was learnt" and "the best model is behind us".
    """
    findings = []
    for f in evaluation.findings:
        if f.kind == "eval_declining" and f.observation.endswith(BEHIND_US):
            f = f.model_copy(update={
                "severity": "watch",
                "observation": f.observation[: -len(BEHIND_US)] + (
                    "; with no learning signal in the training reward the policy had nothing to learn from, so this "
                    "is read as evaluation noise or drift, not a better model behind us (fix the reward first)"),
            })
        findings.append(f)
    return evaluation.model_copy(update={"findings": findings})
