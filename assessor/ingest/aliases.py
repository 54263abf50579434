"""One table from framework metric keys to canonical names.

Every reader hands us the keys exactly as the framework wrote them; `resolve` turns one key into a
canonical metric name, a split (train or eval) and a unit conversion. It tries, in order:

1. the key as written, then its normal form (`normal_form`: lower case, `_` for spaces, no spaces around `/`),
   so that a notebook's `Training Loss` or `Rewards / Accuracies` meets `training_loss` and `rewards/accuracies`;
2. the exact name in the table, framework patterns (`rewards/<fn>/mean`, verl validation keys, OpenRLHF eval
   keys) and a row-kind prefix (`rollout/reward`, `val/accuracy`: see `KIND_WORDS`);
3. its last path segments (`metrics/reward` is `reward`), unless the key sits under a framework's own prefix;
4. its words (`guess.guess_metric`: `avg_reward`, `mean_len`, `format_reward`). Such a guess is marked
   (`Resolved.own_name`) so `normalize` can drop it when a listed key says the same and report it otherwise.

Keys we do not know pass through under their own name (minus a `train/` prefix, so TensorBoard and JSON
copies of one key still meet).

Sources for the names: `../shared/reference/metrics-and-formats.md` (TRL, verl, OpenRLHF, NeMo-RL, the
reasoning-from-scratch CSVs), checked against each framework's source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from assessor.ingest.guess import STAT_WORDS, guess_metric

Split = Literal["train", "eval"]

# canonical name -> the framework keys that mean it (train split; eval keys are derived by prefix).
CANONICAL: dict[str, tuple[str, ...]] = {
    # --- reward and learning signal
    "reward_mean": (
        "reward", "critic/score/mean", "objective/scores", "env/reward_mean", "ppo/mean_scores",
        "rollout/reward_mean", "reward_avg",
    ),
    "reward_std": ("reward_std", "env/reward_std", "ppo/std_scores", "rollout/reward_std"),
    "reward_max": ("critic/score/max",),
    "reward_min": ("critic/score/min",),
    "reward_shaped_mean": ("critic/rewards/mean", "objective/rlhf_reward", "return"),
    "reward_shaped_max": ("critic/rewards/max",),
    "reward_shaped_min": ("critic/rewards/min",),
    "reward_group_std_mean": ("group_reward_std",),
    "reward_zero_std_frac": ("frac_reward_zero_std",),
    "reward_kl_penalty": ("objective/non_score_reward", "ppo/mean_non_score_reward"),
    "advantage_mean": (
        "critic/advantages/mean", "adv_avg", "adv_mean", "ppo/policy/advantages_mean", "advantages/mean",
    ),
    "advantage_std": ("adv_std",),
    "advantage_max": ("critic/advantages/max", "advantages/max"),
    "advantage_min": ("critic/advantages/min", "advantages/min"),
    "returns_mean": ("critic/returns/mean", "ppo/returns/mean"),
    "dynamic_filtering_pass_rate": ("dynamic_filtering_pass_rate",),
    "num_gen_batches": ("train/num_gen_batches", "num_gen_batches"),
    # --- KL and policy movement
    "kl": (
        "kl", "objective/kl", "actor/kl_loss", "actor/reward_kl_penalty", "critic/kl", "kl_penalty",
        "kl_loss", "loss_kl",
    ),
    "kl_coef": ("objective/kl_coef", "actor/kl_coef", "actor/reward_kl_penalty_coeff", "critic/kl_coeff"),
    "policy_shift_kl": ("policy/approxkl_avg", "ppo/policy/approxkl", "actor/ppo_kl", "ppo_kl"),
    "entropy": (
        "entropy", "objective/entropy", "actor/entropy", "actor/entropy_loss", "entropy_loss",
        "approx_entropy", "entropy_avg", "ppo/policy/entropy", "policy/entropy_avg", "ent",
    ),
    "clip_ratio_region": (
        "clip_ratio/region_mean", "clip_ratio", "policy/clipfrac_avg", "ppo/policy/clipfrac",
        "actor/pg_clipfrac", "ppo_clip_ratio", "clip_fraction",
    ),
    "clip_ratio_low": ("clip_ratio/low_mean",),
    "clip_ratio_high": ("clip_ratio/high_mean",),
    "clip_ratio_low_min": ("clip_ratio/low_min",),
    "clip_ratio_high_max": ("clip_ratio/high_max",),
    "clip_ratio_dual": ("actor/pg_clipfrac_lower",),
    "importance_ratio_mean": ("val/ratio", "ppo/policy/ratio", "probs_ratio", "policy_ratio"),
    "train_infer_mismatch": (
        "sampling/sampling_logp_difference/mean", "training/rollout_probs_diff_mean", "vllm_kl",
        "gen_kl_error", "token_mult_prob_error",
    ),
    # --- losses and optimisation
    # `training_loss`: the HF notebook progress table's "Training Loss" column.
    "loss": ("loss", "ppo/loss/total", "training_loss", "train_loss"),
    "pg_loss": ("policy_loss", "loss/policy_avg", "ppo/loss/policy", "actor/pg_loss", "loss_pg", "actor_loss"),
    "value_loss": ("loss/value_avg", "ppo/loss/value", "critic/vf_loss", "critic_loss", "value/loss", "vf_loss"),
    "value_clip_ratio": ("critic/vf_clipfrac", "val/clipfrac_avg", "ppo/val/clipfrac"),
    "value_explained_var": ("critic/vf_explained_var", "ppo/val/var_explained"),
    "value_mean": ("critic/values/mean", "critic/vpred_mean", "values", "ppo/val/mean"),
    "grad_norm": ("grad_norm", "actor/grad_norm", "actor_grad_norm", "gradient_norm", "gnorm"),
    "critic_grad_norm": ("critic/grad_norm", "critic_grad_norm"),
    "lr": ("learning_rate", "lr", "ppo/learning_rate", "actor/lr", "actor_lr"),
    "critic_lr": ("critic/lr", "critic_lr"),
    # --- lengths
    "response_length_mean": (
        "completions/mean_length", "completion_length", "tokens/responses_len_mean", "response_length/mean",
        "response_length", "rollout/response_length_mean", "mean_gen_tokens_per_sample", "avg_response_len",
        "resp_len",
    ),
    "response_length_max": ("completions/max_length", "response_length/max", "max_gen_tokens_per_sample"),
    "response_length_min": ("completions/min_length", "response_length/min"),
    "response_length_clip_ratio": (
        "completions/clipped_ratio", "response_length/clip_ratio", "truncated", "rollout/truncated_rate",
        "truncation_rate",
    ),
    "response_length_terminated_mean": ("completions/mean_terminated_length",),
    "response_length_terminated_min": ("completions/min_terminated_length",),
    "response_length_terminated_max": ("completions/max_terminated_length",),
    "prompt_length_mean": ("prompt_length/mean", "mean_prompt_length", "tokens/queries_len_mean"),
    "natural_termination_rate": ("natural_termination_rate",),
    # --- tokens, throughput, phases
    "tokens_total": ("num_tokens",),
    "tokens_step": ("perf/total_num_tokens", "total_num_tokens"),
    "tokens_per_s": ("tokens_per_sec",),
    "throughput_tokens_per_s_per_gpu": ("perf/throughput", "timing/train/valid_tokens_per_sec_per_gpu"),
    "mfu": ("perf/mfu/actor",),
    "time_step_s": (
        "step_time", "timing_s/step", "perf/time_per_step", "timing/step_total", "timing/step",
        "timing/train/total_step_time", "time/ppo/total", "step_seconds", "step_time_seconds",
    ),
    "time_generation_s": (
        "timing_s/gen", "timing/gen", "timing/generation", "timing/train/generation", "rollout_seconds",
    ),
    "time_update_s": (
        "timing_s/update_actor", "timing/update_actor", "timing/ppo_train", "timing/train/policy_training",
        "time/ppo/optimize_step",
    ),
    "time_update_critic_s": ("timing_s/update_critic", "timing/update_critic"),
    "time_ref_logprob_s": ("timing_s/ref", "timing/ref", "timing/train/policy_and_reference_logprobs"),
    "time_old_logprob_s": ("timing_s/old_log_prob", "timing/old_log_prob"),
    "time_values_s": ("timing_s/values", "timing/values"),
    "time_advantage_s": (
        "timing_s/adv", "timing/adv", "timing/train/advantage_calculation", "time/ppo/compute_advantages",
    ),
    "time_reward_s": (
        "timing_s/reward", "timing/reward", "timing/train/reward_calculation", "time/ppo/compute_rewards",
    ),
    "time_make_experience_s": ("timing/make_experience",),
    "time_weight_sync_s": (
        "timing_s/update_weights", "timing/broadcast",
        "timing/train/prepare_for_generation/transfer_and_update_weights",
    ),
    "time_eval_s": ("timing_s/testing", "timing/testing"),
    "time_checkpoint_s": ("timing_s/save_checkpoint", "timing/save_checkpoint", "timing/train/checkpointing"),
    "gpu_memory_allocated_gb": ("perf/max_memory_allocated_gb",),
    "gpu_memory_reserved_gb": ("perf/max_memory_reserved_gb",),
    "cpu_memory_used_gb": ("perf/cpu_memory_used_gb",),
    # --- preference optimisation (DPO and friends)
    "pref_accuracy": ("rewards/accuracies", "acc", "pref_acc", "preference_accuracy"),
    "pref_margin": ("rewards/margins", "reward_margin", "reward_margins"),
    "pref_reward_chosen": ("rewards/chosen", "chosen_reward", "rewards_chosen_mean"),
    "pref_reward_rejected": ("rewards/rejected", "reject_reward", "rejected_reward", "rewards_rejected_mean"),
    "logps_chosen": ("logps/chosen", "logps_chosen", "chosen_logp", "chosen_logps"),
    "logps_rejected": ("logps/rejected", "logps_rejected", "rejected_logp", "rejected_logps"),
    "logits_chosen": ("logits/chosen",),
    "logits_rejected": ("logits/rejected",),
    "mean_token_accuracy": ("mean_token_accuracy",),
    # --- held-out evaluation (also reached through the eval prefixes)
    "accuracy": ("eval_acc", "accuracy"),
    "pass_at_k": ("pass_k",),
    "epoch": ("epoch", "training/epoch"),
}

# Keys that are counters, axes or end-of-run summaries rather than curves.
NOT_METRICS: frozenset[str] = frozenset({
    "step", "global_step", "_step", "_runtime", "_timestamp", "total_steps", "trainer/global_step",
    "training/global_step", "train_runtime", "train_samples_per_second", "train_steps_per_second",
    "total_flos", "timestamp", "wall_time", "episode", "eps",
})
# Keys that are an end-of-run summary when logged a few times (once per run segment: the HF Trainer's
# `train_loss`, the mean over training, written beside `train_runtime`) and a curve when logged on every step
# (a custom loop's CSV column).
SUMMARY_WHEN_ONCE: frozenset[str] = frozenset({"train_loss", "train/train_loss"})

# Keys we know and deliberately keep under their own name (not "unknown").
KNOWN_PASSTHROUGH_PREFIXES: tuple[str, ...] = (
    "rewards/", "completions/", "clip_ratio/", "sampling/", "critic/", "actor/", "response_length/",
    "prompt_length/", "timing_s/", "timing_per_token_ms/", "timing/", "perf/", "global_seqlen/",
    "val-aux/", "val-core/", "objective/", "policy/", "loss/", "val/", "tokens/", "env/", "ppo/",
    "rollout/", "tools/", "response_length_non_aborted/", "response/", "training/", "variance_proxy/",
    "rollout_corr/", "performance/", "baseline_reward/", "num_turns/", "tool_call_counts/",
    "time/", "vespo/", "moe/", "mtp/", "count/", "ray/",
)
KNOWN_PASSTHROUGH: frozenset[str] = frozenset({
    "runtime", "samples_per_second", "steps_per_second", "entropy_coef", "aux_loss", "nll_loss",
    "cispo_clip_ratio", "policy_ratio", "kl_coef", "total_length", "ptx_loss", "logprobs_diff",
    "loss_mean", "acc_mean", "generated_samples",
    # TRL PPOTrainer's `val/` keys are about the value head and ratios, not a validation split
    "val/num_eos_tokens", "val/ratio_var",
    # HF Trainer and TRL (`beta` is online DPO's logged coefficient, never a KL value)
    "num_input_tokens_seen", "beta",
    # OpenRLHF (`eval_num_samples` once the eval prefix is off)
    "num_samples",
    # NeMo-RL GRPO and DPO
    "filtered_reward", "wd", "probs_ratio_clamped", "probs_ratio_min", "probs_ratio_max",
    "probs_ratio_clamped_min", "probs_ratio_clamped_max", "policy_kl_error", "js_divergence_error",
    "sampling_importance_ratio", "global_valid_seqs", "global_valid_toks", "num_valid_samples",
    "mean_total_tokens_per_sample", "avg_turns_per_sample", "max_turns_per_sample", "mean_env_tokens_per_sample",
    "max_seq_mult_prob_error", "mean_seq_mult_prob_error", "min_seq_mult_prob_error", "num_masked_seqs",
    "masked_correct_pct", "draft_grad_norm", "sft_loss", "preference_loss",
})

# Values logged as percentages (0-100) that we keep as fractions.
PERCENT_IF_ABOVE_ONE: frozenset[str] = frozenset({"eval_acc"})

_ALIASES: dict[str, str] = {}
for _canonical, _keys in CANONICAL.items():
    for _key in _keys:
        if _key in _ALIASES:  # pragma: no cover - guarded by a test as well
            raise ValueError(f"alias {_key!r} is listed for both {_ALIASES[_key]!r} and {_canonical!r}")
        _ALIASES[_key] = _canonical
# A key that already is a canonical name means that metric (a script may log `reward_mean` directly).
for _canonical in CANONICAL:
    _ALIASES.setdefault(_canonical, _canonical)

# Words that name the kind of row a metric came from, as the first segment of a key: a table's `type`, `kind`,
# `split` or `phase` column gives keys like `rollout/reward` or `val/accuracy` (see `assessor.ingest.tables`).
# Held-out kinds put the metric in the eval split. `eval/` and `test/` are read above with the framework prefixes.
HELD_OUT_KINDS: frozenset[str] = frozenset({
    "eval", "evaluation", "val", "valid", "validation", "test", "dev", "heldout", "holdout",
})
KIND_WORDS: frozenset[str] = HELD_OUT_KINDS | {"train", "rollout", "rollouts"}
# The held-out loss as notebooks (`Validation Loss`) and Keras-style scripts name it.
HELD_OUT_LOSSES: frozenset[str] = frozenset({"validation_loss", "val_loss"})

_SPACES_AROUND_SLASH = re.compile(r"\s*/\s*")
_SPACES = re.compile(r"\s+")
_SCALE_SUFFIX = re.compile(r"^(?P<base>.+)\((?P<scale>[0-9.]+e[-+]?\d+)\)$")
# Names for the share of groups that all scored alike (no reward spread, no advantage).
_ZERO_SPREAD = re.compile(
    r"zero[_-]?std|std[_-]?zero|zero[_-]?var(?:iance)?|no[_-]?variance|flat[_-]?groups?|no[_-]?spread|identical[_-]?rewards?"
    r"|all[_-]?same|same[_-]?(?:score|reward)s?")
# The share of groups whose completions all passed or all failed (`frac_solved_all_or_none`): the same quantity
# for a pass/fail reward, whatever else the name says.
_ALL_OR_NONE = re.compile(r"all[_-]?or[_-]?(?:none|nothing)")
# Eval-split counters the evaluation loop logs beside its scores (HF's `eval/epoch`): not measurements.
EVAL_BOOKKEEPING = frozenset({"epoch"})
_NORMALISED = re.compile(r"whiten|normali[sz]", re.IGNORECASE)
_REWARD_FN = re.compile(r"^rewards/(?P<fn>.+?)(?:/(?P<stat>mean|std))?$")
# A reward's named parts under a namespace of their own: verl's `reward_extra_info/<name>/mean` (what a custom
# `compute_score` returns besides `score`), `reward_breakdown/<name>`, `reward_terms/<name>`.
_REWARD_PART = re.compile(
    r"^rewards?_(?:extra_info|extra|info|breakdown|terms|components?|parts|fns?|functions?)/(?P<fn>[^/]+?)"
    r"(?:/(?P<stat>mean|std))?$")
# verl's MLflow logger writes `@` as `_at_` (MLflow rejects `@` in metric keys).
_VERL_VAL = re.compile(
    r"^val-core/(?P<ds>.+)/(?P<var>[^/]+)/(?P<stat>mean|best|maj|worst)(?:@|_at_)(?P<n>\d+)(?:/mean)?$"
)
_OPENRLHF_EVAL = re.compile(r"^(?P<ds>.*?)_?(?P<what>pass(?P<n>\d+)|response_length_mean|truncated_rate)$")
_VERL_OLD_VAL = re.compile(r"^val/test_score/(?P<ds>.+)$")


@dataclass(frozen=True)
class Resolved:
    """What one framework key means.

    Attributes:
        metric: canonical name (or the key itself when unknown).
        split: "train" or "eval".
        scale: multiply raw values by this (verl's `actor/lr(1e-4)` prints lr in units of 1e-4).
        percent: values may be percentages; the loader divides by 100 when any value exceeds 1.
        known: False when the key is not in our table (it passes through under its own name, or was guessed).
        own_name: set when `metric` was guessed from the key's words: the name the key keeps when the guess
            is not used (see `normalize.settle_guesses`).
        weak: the guess is a loose one (`guess.Guess.weak`), used only when nothing else gives the metric.
    """

    metric: str
    split: Split
    scale: float = 1.0
    percent: bool = False
    known: bool = True
    own_name: str | None = None
    weak: bool = False


def normal_form(key: str) -> str:
    """A key as people type it, in the form our table lists: lower case, `_` for spaces, no spaces around `/`.

    >>> normal_form("Rewards / Accuracies"), normal_form("Training Loss"), normal_form("KL_ref")
    ('rewards/accuracies', 'training_loss', 'kl_ref')
    """
    return _SPACES.sub("_", _SPACES_AROUND_SLASH.sub("/", key.strip())).lower()


def resolve(key: str) -> Resolved | None:
    """Map one raw metric key to its canonical meaning; None for counters and run summaries.

    The key as written is tried first, then its normal form (`normal_form`); a listed meaning of either beats a
    guess from the words (see the module docstring for the order).

    >>> resolve("train/rewards/accuracy_reward/mean")  # doctest: +ELLIPSIS
    Resolved(metric='reward_component/accuracy_reward_mean', split='train', scale=1.0, percent=False, known=True, ...)
    >>> resolve("eval_reward").metric, resolve("eval_reward").split
    ('reward_mean', 'eval')
    >>> resolve("train/avg_reward").metric, resolve("train/avg_reward").own_name
    ('reward_mean', 'avg_reward')
    >>> resolve("Rewards / Margins").metric, resolve("val/accuracy").split
    ('pref_margin', 'eval')
    """
    k = key.strip()
    scale = 1.0
    match = _SCALE_SUFFIX.match(k)
    if match:
        k, scale = match["base"], float(match["scale"])
    written = _resolve(k, scale)
    if written is None or written.known:
        return written
    normal = normal_form(k)
    if normal == k:
        return written
    typed = _resolve(normal, scale)
    if typed is None or typed.known:
        return typed
    if written.own_name is None and typed.own_name is not None:
        return replace(typed, own_name=k)  # guessed from the normal form; kept under the name as written otherwise
    return written


def _resolve(k: str, scale: float) -> Resolved | None:
    if k in NOT_METRICS:
        return None
    split: Split = "train"
    for prefix in ("system/", "system."):
        if k.startswith(prefix):
            k = k[len(prefix):]
    said_train = k.startswith("train/") and k not in _ALIASES
    if said_train:
        k = k[len("train/"):]
        if k in NOT_METRICS:
            return None
    if k.startswith(("eval/", "test/")):
        split, k = "eval", k.split("/", 1)[1]
        if k.startswith("eval_"):  # OpenRLHF: eval/eval_gsm8k_pass1
            k = k[len("eval_"):]
            return _openrlhf_eval(k, scale) or Resolved(k, "eval", scale, known=False)
    elif k.startswith("eval_") and k != "eval_acc":
        split, k = "eval", k[len("eval_"):]
        if k not in _ALIASES:  # OpenRLHF's console prints eval_<dataset>_pass1 without the eval/ prefix
            openrlhf = _openrlhf_eval(k, scale)
            if openrlhf is not None:
                return openrlhf
    elif k.startswith("validation/"):
        split, k = "eval", k[len("validation/"):]
        if k == "avg_length":
            return Resolved("response_length_mean", "eval", scale)
    elif k.startswith(("val-core/", "val-aux/", "val/test_score/")):
        return _verl_validation(k, scale)
    elif k in HELD_OUT_LOSSES:
        return Resolved("loss", "eval", scale)
    if k in NOT_METRICS or (split == "eval" and k in EVAL_BOOKKEEPING):
        return None
    if k in _ALIASES:
        canonical = _ALIASES[k]
        if canonical == "accuracy" and not said_train:  # a held-out number unless the key says it is training's
            split = "eval"
        return Resolved(canonical, split, scale, percent=k in PERCENT_IF_ABOVE_ONE)
    if (_ZERO_SPREAD.search(k) and "reward" in k.lower()) or _ALL_OR_NONE.search(k):
        # `reward/frac_flat_groups`, `rewards/zero_std_frac`: the share of groups whose completions all scored the
        # same, not a reward function's mean.
        return Resolved("reward_zero_std_frac", split, scale, known=False, own_name=k)
    if "reward" in k.lower() and _NORMALISED.search(k):
        # The reward after whitening or normalisation (mean 0 and spread 1 by construction): bookkeeping of the
        # advantage computation, neither the reward nor one of its functions; kept under its own name.
        return Resolved(k, split, scale)
    fn_match = _REWARD_FN.match(k) or _REWARD_PART.match(k)
    if fn_match and fn_match["fn"] not in STAT_WORDS:  # `rewards/mean` is the total reward: left to the guess
        stat = fn_match["stat"] or "mean"
        return Resolved(f"reward_component/{fn_match['fn']}_{stat}", split, scale)
    if k.endswith("_reward_avg"):  # reasoning-from-scratch: format_reward_avg
        return Resolved(f"reward_component/{k[: -len('_reward_avg')]}_mean", split, scale)
    if k in KNOWN_PASSTHROUGH:
        return Resolved(k, split, scale)
    kind, sep, rest = k.partition("/")
    if sep and kind.lower() in KIND_WORDS:
        return _of_kind(k, kind.lower(), rest, split, scale)
    named = _named_by_tail_or_words(k, split, scale)
    # `rewards/mean` reaches here (not a reward function): it is for the guess, despite its known prefix. A custom
    # loop's `policy/entropy` or `loss/kl` shares a prefix with framework keys we keep as they are, but its words
    # name a metric the diagnosis reads; the guess is settled against the run's listed keys (`settle_guesses`).
    if k.startswith(KNOWN_PASSTHROUGH_PREFIXES) and not fn_match:
        return named if named is not None and named.metric in _GUESSED_UNDER_KNOWN_PREFIX else Resolved(k, split, scale)
    return named if named is not None else Resolved(k, split, scale, known=False)


# Canonical metrics a key under a framework prefix may still be guessed onto (the curves a diagnosis cannot do
# without); everything else under those prefixes keeps its own name.
_GUESSED_UNDER_KNOWN_PREFIX = frozenset({"entropy", "kl"})


def _named_by_tail_or_words(k: str, split: Split, scale: float) -> Resolved | None:
    """A key's meaning from its last segments (`metrics/reward`, `grpo/policy/kl`) or its words, else None."""
    parts = k.split("/")
    for start in range(1, len(parts)):
        tail = "/".join(parts[start:])
        if tail in _ALIASES:
            where: Split = "eval" if _ALIASES[tail] == "accuracy" else split
            return Resolved(_ALIASES[tail], where, scale, known=False, own_name=k)
    guess = guess_metric(k)
    if guess is not None:
        where = "eval" if guess.held_out else split
        return Resolved(guess.metric, where, scale, percent=guess.percent, known=False, own_name=k, weak=guess.weak)
    return None


def _of_kind(key: str, kind: str, rest: str, split: Split, scale: float) -> Resolved | None:
    """`<kind>/<metric>` as a row-kind column makes it (`rollout/reward`, `val/accuracy`): the metric, in its split.

    A metric that keeps its own name keeps the kind too, so `rollout/n` and `eval/n` stay apart.
    """
    inner = _resolve(rest, scale)
    if inner is None:
        return None
    where: Split = "eval" if kind in HELD_OUT_KINDS else inner.split if split == "train" else split
    own = key if inner.own_name is not None else None
    if inner.metric == rest and inner.metric not in CANONICAL:
        return replace(inner, metric=key, split=where, own_name=own)
    return replace(inner, split=where, own_name=own)


def _verl_validation(key: str, scale: float) -> Resolved:
    match = _VERL_VAL.match(key)
    if match:
        stat = match["stat"]
        if stat == "mean":
            metric = "accuracy" if match["var"] == "acc" else "reward_mean"
            return Resolved(metric, "eval", scale)
        if stat == "best":
            return Resolved("pass_at_k", "eval", scale)
        if stat == "maj":
            return Resolved("maj_at_k", "eval", scale)
    if _VERL_OLD_VAL.match(key):
        return Resolved("reward_mean", "eval", scale)
    return Resolved(key, "eval", scale, known=key.startswith(("val-aux/", "val-core/")))


def _openrlhf_eval(key: str, scale: float) -> Resolved | None:
    match = _OPENRLHF_EVAL.match(key)
    if not match:
        return None
    what = match["what"]
    if what == "pass1":
        return Resolved("reward_mean", "eval", scale)
    if what.startswith("pass"):
        return Resolved("pass_at_k", "eval", scale)
    if what == "response_length_mean":
        return Resolved("response_length_mean", "eval", scale)
    return Resolved("response_length_clip_ratio", "eval", scale)


def is_phase_timing(metric: str) -> bool:
    """True for the canonical per-step phase timings (`time_*_s`)."""
    return metric.startswith("time_") and metric.endswith("_s")
