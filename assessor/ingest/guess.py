"""Canonical names for metric keys nobody listed, read from the words in the key.

The alias table (`aliases.CANONICAL`) is the source of truth. This runs only for keys it does not know, so
that a plain training script's `avg_reward`, `mean_len` or `kl_div` still reaches the diagnosis, which reads
canonical names only. It is narrow on purpose, because a wrong mapping is worse than none:

* every word of the key must be explained by one rule (its stem, an allowed statistic, or a word that only
  says where the number was measured, like `train` or `batch`). So `reward_model_loss`, `length_penalty`,
  `kl_coef` or `f1_score` map to nothing: `model`, `loss`, `penalty`, `coef` and `f1` are unexplained;
* exactly one rule may match;
* `max`/`min` count as statistics only after the stem (`response_length_max`): before it they read like a
  cap or a bound (`max_len`, `min_reward`);
* a statistic with no canonical name of its own (`entropy_std`) maps to nothing, never to the mean.

`normalize.settle_guesses` then drops a guess whenever a listed key of the run already supplies the metric,
or when two different keys guess the same one, and reports every guess it keeps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[^a-z0-9]+")

MEAN = frozenset({"mean", "avg", "average"})
STD = frozenset({"std", "stddev", "stdev"})
MAX = frozenset({"max", "maximum"})
MIN = frozenset({"min", "minimum"})
STAT_WORDS = MEAN | STD | MAX | MIN
# Words that say where a number was measured, not what it is.
WHERE = frozenset({"train", "training", "batch", "step", "rollout", "rollouts"})

LENGTH = frozenset({"len", "length", "lengths"})
LENGTH_UNITS = frozenset({"token", "tokens", "tok", "toks"})  # `avg_response_token_length`: the unit, not a count
RESPONSE = frozenset({
    "response", "responses", "resp", "completion", "completions", "gen", "generation", "generated", "output", "outputs",
    "answer", "answers",
})
RATIO = frozenset({"frac", "fraction", "ratio", "rate", "pct", "percent"})
PERCENT = frozenset({"pct", "percent"})


@dataclass(frozen=True)
class Guess:
    """A canonical name read from a key's words.

    Attributes:
        metric: the canonical name.
        rule: which rule matched, for the note the user sees.
        percent: values may be percentages (`truncated_pct`); the loader divides by 100 when any exceeds 1.
        held_out: the key names a held-out split (`val`, `test`, `heldout`), so it is an eval metric.
        weak: the words fit the metric less surely (a return, a total): `normalize.settle_guesses` uses such a
            guess only when no listed key and no other guess supplies the metric.
    """

    metric: str
    rule: str
    percent: bool = False
    held_out: bool = False  # the key's own words say it was measured on held-out data (`val_acc`)
    weak: bool = False  # a loose name (`avg_return`, `total_reward`): used only when no other key gives the metric


def words(key: str) -> list[str]:
    """The lower-case words of a key, split on `/ _ . -`, spaces and camelCase.

    >>> words("train/avgResponse-len.mean")
    ['train', 'avg', 'response', 'len', 'mean']
    """
    return [w for w in _SEPARATORS.split(_CAMEL.sub("_", key).lower()) if w]


def guess_metric(key: str) -> Guess | None:
    """The canonical name a key's words point to, or None when no rule, or more than one, explains the key.

    Args:
        key: the raw key with any `train/`, `eval/` or `eval_` prefix already removed.

    >>> guess_metric("mean_len").metric
    'response_length_mean'
    >>> guess_metric("kl_coef") is None
    True
    """
    found = [g for g in (_reward_component(key), *(rule(words(key)) for rule in _RULES)) if g is not None]
    return found[0] if len({g.metric for g in found}) == 1 else None  # rules that agree (`reward/format`) are one


# --- the rules: each takes the key's words and returns a Guess or None


def _split_stat(tokens: list[str], stems: frozenset[str]) -> tuple[str | None, list[str]] | None:
    """The key's one statistic ("mean", "std", "max", "min" or None) and its remaining words.

    None when the key has two statistics, or a `max`/`min` that comes before the stem (a cap, not a statistic).
    """
    stats = [(i, w) for i, w in enumerate(tokens) if w in STAT_WORDS]
    if len(stats) > 1:
        return None
    rest = [w for w in tokens if w not in STAT_WORDS]
    if not stats:
        return None, rest
    index, word = stats[0]
    stat = "mean" if word in MEAN else "std" if word in STD else "max" if word in MAX else "min"
    if stat in ("max", "min"):
        first_stem = next((i for i, w in enumerate(tokens) if w in stems), len(tokens))
        if index < first_stem:
            return None
    return stat, rest


_EPISODE = frozenset({"episode", "episodic", "ep", "env"})


def _reward(tokens: list[str]) -> Guess | None:
    stems = frozenset({"reward", "rewards", "rew", "score", "scores"})
    # `ret`, `ep_ret`: a hand-written loop's return, abbreviated (no framework logs its value targets so)
    abbreviated = "ret" in tokens
    tokens = ["return" if w == "ret" else w for w in tokens]
    split = _split_stat(tokens, stems | {"return"})
    if split is None:
        return None
    stat, rest = split
    if "return" in rest:
        # A custom loop's average return (`avg_return`, `episode_return`) is its reward. The plural is left
        # alone on purpose: in PPO logs `returns` are the value targets (`returns_mean`), not rewards.
        if rest.count("return") == 1 and set(rest) <= {"return"} | WHERE | _EPISODE and \
                (stat == "mean" or (stat is None and (abbreviated or set(rest) & (_EPISODE | WHERE)))):
            return Guess("reward_mean", "return words", weak=True)
        return None
    # `total`: the sum of a loop's reward terms (`rew/total`, `total_reward`), the reward it trains on.
    # `rm`: a reward model's score (`rm_score`), the reward an RLHF loop trains on.
    if not set(rest) & stems or not set(rest) <= stems | WHERE | _EPISODE | {"total", "rm"}:
        return None
    return Guess(f"reward_{stat or 'mean'}", "reward words", weak="total" in rest)


def _response_length(tokens: list[str]) -> Guess | None:
    split = _split_stat(tokens, LENGTH)
    if split is None:
        return None
    stat, rest = split
    if not set(rest) & LENGTH or not set(rest) <= LENGTH | LENGTH_UNITS | RESPONSE | WHERE:
        return None
    has_context = bool(set(rest) & RESPONSE)
    if stat in (None, "mean"):
        # A bare `len` says nothing about what was measured; `mean_len` is a per-sample mean, i.e. a response.
        return Guess("response_length_mean", "length words") if has_context or stat == "mean" else None
    if stat in ("max", "min") and has_context:
        return Guess(f"response_length_{stat}", "length words")
    return None  # no canonical response_length_std


def _prompt_length(tokens: list[str]) -> Guess | None:
    split = _split_stat(tokens, LENGTH)
    if split is None or split[0] not in (None, "mean"):
        return None
    rest = set(split[1])
    prompt = {"prompt", "prompts", "query", "queries"}
    if rest & LENGTH and rest & prompt and rest <= LENGTH | prompt | WHERE:
        return Guess("prompt_length_mean", "length words")
    return None


def _truncation(tokens: list[str]) -> Guess | None:
    present = set(tokens)
    truncated = {"truncated", "truncation", "trunc"}
    clipped = {"clip", "clipped"}
    if present & truncated:
        # `truncated` is about length by itself; a count (`num_truncated`) is not a fraction, so ask for a
        # ratio or mean word.
        allowed = truncated | RATIO | MEAN | LENGTH | RESPONSE | WHERE
        if not present & (RATIO | MEAN) or not present <= allowed:
            return None
    elif present & clipped:
        # `clip_ratio` alone is PPO's clipped-update fraction: only a length word makes it truncation.
        allowed = clipped | RATIO | MEAN | LENGTH | RESPONSE | WHERE
        if not present & LENGTH or not present & RATIO or not present <= allowed:
            return None
    else:
        return None
    if len(present & (MEAN | RATIO)) > 1:
        return None  # `truncated_rate_mean`: two statistics, be safe
    return Guess("response_length_clip_ratio", "truncation words", percent=bool(present & PERCENT))


def _entropy(tokens: list[str]) -> Guess | None:
    split = _split_stat(tokens, frozenset({"entropy"}))
    if split is None or split[0] not in (None, "mean"):
        return None
    rest = set(split[1])
    if "entropy" in rest and rest <= {"entropy", "policy", "actor", "token", "per"} | WHERE:
        return Guess("entropy", "entropy word")
    return None


def _kl(tokens: list[str]) -> Guess | None:
    # Coefficients (`kl_coef`, `kl_ctl`, `beta`) and targets are not KL values: they are unexplained words here.
    # Nor is `approx_kl`: in PPO code (CleanRL, SB3) it is the old-to-new policy KL of an update, not the drift
    # from the reference, so it is left alone rather than guessed onto `kl`.
    split = _split_stat(tokens, frozenset({"kl", "kld"}))
    if split is None or split[0] not in (None, "mean"):
        return None
    rest = set(split[1])
    # `kl_init`, `kl_to_sft`: the drift from the starting policy, i.e. from the reference.
    start = {"ref", "reference", "init", "initial", "sft", "base"}
    allowed = {"kl", "kld", "div", "divergence", "token", "per", "to", "from", "vs"} | start | WHERE
    if rest & start:
        allowed |= {"policy", "actor"}  # `policy/kl_ref`: the policy's KL from its reference, not an update's KL
    if rest & {"kl", "kld"} and rest <= allowed:
        return Guess("kl", "KL words")
    return None


ACCURACY_CORE = frozenset({"accuracy", "acc", "exact", "em", "correct", "correctness", "solved", "solve", "pass"})
# Words that only say which held-out split, or which pass@k, the number is.
ACCURACY_OTHER = frozenset({"match", "rate", "at", "k", "1", "heldout", "held", "out", "holdout", "test", "val",
                            "validation", "dev", "answer", "answers"})


def _accuracy(tokens: list[str]) -> Guess | None:
    """`val_acc`, `heldout_exact_match`, `pass_at_1`, `solve_rate`: a held-out score of being right."""
    split = _split_stat(tokens, ACCURACY_CORE)
    if split is None or split[0] not in (None, "mean"):
        return None
    rest = set(split[1])
    if not rest & ACCURACY_CORE or not rest <= ACCURACY_CORE | ACCURACY_OTHER | WHERE:
        return None
    if "match" in rest and "exact" not in rest:
        return None
    held_out = bool(rest & {"heldout", "holdout", "held", "test", "val", "validation", "dev"})
    return Guess("pass_at_k" if "pass" in rest else "accuracy", "accuracy words", held_out=held_out)


# Words before `reward` that do not name a reward function: a total, a split, a transform, or KL shaping.
_NOT_A_FUNCTION_WORD = STAT_WORDS | WHERE | frozenset({
    "total", "sum", "overall", "all", "final", "episode", "env", "kl", "val", "validation", "test", "eval", "heldout",
    "model", "rm", "raw", "shaped", "scaled", "normalized", "norm", "cumulative", "discounted", "per", "sample",
    "chosen", "rejected", "reject",  # a preference pair's implicit rewards, not reward functions
})


def _named_reward(tokens: list[str]) -> Guess | None:
    """`format_reward`, `mean_answer_reward`, `format_reward_std`: one reward function's score, by its name.

    The name is the words before `reward`; a statistic (mean or std) may come first or last.
    """
    body = list(tokens)
    stat = "mean"
    for end in (0, -1):
        if body and body[end] in MEAN | STD:
            stat = "std" if body[end] in STD else "mean"
            body.pop(end)
            break
    if len(body) < 2:
        return None
    if body[-1] in ("reward", "rewards"):
        name = body[:-1]
    elif body[0] in ("reward", "rewards", "rew", "r"):
        # `reward_correctness`, `rewards_format`, a hand loop's `r_correct` or `rew_format`: the same function named
        # after the word; never a preference pair's bookkeeping (`reward_chosen`, `rewards_margin`), which is no
        # reward function.
        name = body[1:]
        if not any(w in _FUNCTION_NAME_WORDS for w in name):
            return None
    else:
        return None
    if any(w in _NOT_A_FUNCTION_WORD or w in ("reward", "rewards") or w.isdigit() for w in name):
        return None
    return Guess(f"reward_component/{'_'.join(name)}_{stat}", "reward function words")


# After `reward`, a word must name what is checked: `reward_scale`, `reward_p90`, `reward_chosen` (a preference
# pair's bookkeeping) name a setting, a statistic or a pair, not a reward function.
_FUNCTION_NAME_WORDS = frozenset({
    "correct", "correctness", "answer", "format", "formatting", "math", "code", "test", "tests", "unit", "exec",
    "execution", "compile", "syntax", "tag", "tags", "think", "thinking", "reasoning", "language", "lang", "length",
    "brevity", "style", "tool", "tools", "xml", "json", "verify", "verified", "verifier", "solve", "solved",
})


_RULES = (_reward, _response_length, _prompt_length, _truncation, _entropy, _kl, _accuracy, _named_reward)

_COMPONENT = re.compile(r"^(?:rewards?|rew)/(?P<fn>[A-Za-z0-9_.\-]+)(?:/(?P<stat>mean|std))?$")
# `reward/total` or `reward/mean` are the total reward, not a reward function called "total" or "mean".
_NOT_A_FUNCTION = STAT_WORDS | {"total", "sum", "overall", "all", "final"}


def _reward_component(key: str) -> Guess | None:
    """`reward/<fn>` or `rew/<fn>` (and `/mean`, `/std`): one reward function's score, like TRL's `rewards/<fn>`."""
    match = _COMPONENT.match(key)
    if not match or match["fn"].lower() in _NOT_A_FUNCTION:
        return None
    return Guess(f"reward_component/{match['fn']}_{match['stat'] or 'mean'}", "reward/<function>")
