from __future__ import annotations

import pytest

from assessor.ingest.aliases import CANONICAL, resolve


def test_no_key_is_listed_twice():
    keys = [key for keys in CANONICAL.values() for key in keys]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize(
    ("key", "metric", "split"),
    [
        # TRL GRPO, every key generation, as trainer_state.json and as TensorBoard/W&B (train/ prefix)
        ("reward", "reward_mean", "train"),
        ("train/reward", "reward_mean", "train"),
        ("completion_length", "response_length_mean", "train"),
        ("completions/mean_length", "response_length_mean", "train"),
        ("rewards/accuracy_reward", "reward_component/accuracy_reward_mean", "train"),
        ("rewards/accuracy_reward/mean", "reward_component/accuracy_reward_mean", "train"),
        ("train/rewards/format_reward/std", "reward_component/format_reward_std", "train"),
        ("frac_reward_zero_std", "reward_zero_std_frac", "train"),
        ("clip_ratio/low_mean", "clip_ratio_low", "train"),
        ("step_time", "time_step_s", "train"),
        ("eval_reward", "reward_mean", "eval"),
        ("eval/reward", "reward_mean", "eval"),
        ("eval_rewards/accuracy_reward/mean", "reward_component/accuracy_reward_mean", "eval"),
        ("eval_loss", "loss", "eval"),
        # DPO: rewards/chosen is not a reward function called "chosen"
        ("rewards/chosen", "pref_reward_chosen", "train"),
        ("rewards/margins", "pref_margin", "train"),
        ("rewards/accuracies", "pref_accuracy", "train"),
        # TRL PPO
        ("objective/scores", "reward_mean", "train"),
        ("objective/rlhf_reward", "reward_shaped_mean", "train"),
        ("policy/approxkl_avg", "policy_shift_kl", "train"),
        # verl
        ("critic/score/mean", "reward_mean", "train"),
        ("critic/rewards/mean", "reward_shaped_mean", "train"),
        ("actor/kl_loss", "kl", "train"),
        ("actor/pg_clipfrac", "clip_ratio_region", "train"),
        ("actor/pg_clipfrac_lower", "clip_ratio_dual", "train"),
        ("actor/entropy_loss", "entropy", "train"),
        ("response_length/clip_ratio", "response_length_clip_ratio", "train"),
        ("timing_s/gen", "time_generation_s", "train"),
        ("timing/gen", "time_generation_s", "train"),
        ("timing_s/step", "time_step_s", "train"),
        ("val-core/openai/gsm8k/reward/mean@1", "reward_mean", "eval"),
        ("val-core/openai/gsm8k/acc/mean@16", "accuracy", "eval"),
        ("val-core/openai/gsm8k/acc/best@16/mean", "pass_at_k", "eval"),
        ("val/test_score/openai/gsm8k", "reward_mean", "eval"),
        # OpenRLHF
        ("train/policy_loss", "pg_loss", "train"),
        ("train/ppo_clip_ratio", "clip_ratio_region", "train"),
        ("train/timing/generation", "time_generation_s", "train"),
        ("eval/eval_gsm8k_pass1", "reward_mean", "eval"),
        ("eval/eval_gsm8k_pass8", "pass_at_k", "eval"),
        ("eval_gsm8k_pass1", "reward_mean", "eval"),
        ("eval_truncated_rate", "response_length_clip_ratio", "eval"),
        # NeMo-RL
        ("train/approx_entropy", "entropy", "train"),
        ("train/kl_penalty", "kl", "train"),
        ("timing/train/generation", "time_generation_s", "train"),
        ("validation/accuracy", "accuracy", "eval"),
        # reasoning-from-scratch CSVs
        ("reward_avg", "reward_mean", "train"),
        ("format_reward_avg", "reward_component/format_mean", "train"),
        ("entropy_avg", "entropy", "train"),
        ("eval_acc", "accuracy", "eval"),
        # TRL RLOO before v0.22 and PPOTrainer: the update-time entropy, the legacy PPO's prompt lengths/timers
        ("policy/entropy_avg", "entropy", "train"),
        ("loss/value_avg", "value_loss", "train"),
        ("val/clipfrac_avg", "value_clip_ratio", "train"),
        ("tokens/queries_len_mean", "prompt_length_mean", "train"),
        ("tokens/responses_len_mean", "response_length_mean", "train"),
        ("time/ppo/compute_advantages", "time_advantage_s", "train"),
        ("env/reward_std", "reward_std", "train"),
        # TRL online DPO and KTO: the same preference keys, plus KTO's KL estimate
        ("objective/scores", "reward_mean", "train"),
        ("train/rewards/margins", "pref_margin", "train"),
        ("eval_rewards/chosen", "pref_reward_chosen", "eval"),
        ("kl", "kl", "train"),
        # verl critic (PPO/GAE)
        ("critic/vf_loss", "value_loss", "train"),
        ("critic/vf_explained_var", "value_explained_var", "train"),
        ("critic/values/mean", "value_mean", "train"),
        ("critic/grad_norm", "critic_grad_norm", "train"),
        ("actor/reward_kl_penalty_coeff", "kl_coef", "train"),
        # OpenRLHF status keys under train/ and eval/ (TensorBoard, W&B), critic included
        ("train/reward", "reward_mean", "train"),
        ("train/return", "reward_shaped_mean", "train"),
        ("train/response_length", "response_length_mean", "train"),
        ("train/truncated", "response_length_clip_ratio", "train"),
        ("train/rollout/truncated_rate", "response_length_clip_ratio", "train"),
        ("train/group_reward_std", "reward_group_std_mean", "train"),
        ("train/entropy_loss", "entropy", "train"),
        ("train/ppo_kl", "policy_shift_kl", "train"),
        ("train/vllm_kl", "train_infer_mismatch", "train"),
        ("train/critic_loss", "value_loss", "train"),
        ("train/values", "value_mean", "train"),
        ("train/actor_grad_norm", "grad_norm", "train"),
        ("train/timing/step_total", "time_step_s", "train"),
        ("eval/eval_gsm8k_response_length_mean", "response_length_mean", "eval"),
        ("train/chosen_reward", "pref_reward_chosen", "train"),
        ("train/acc", "pref_accuracy", "train"),
        # NeMo-RL rollout statistics
        ("train/mean_gen_tokens_per_sample", "response_length_mean", "train"),
        ("train/max_gen_tokens_per_sample", "response_length_max", "train"),
        ("train/truncation_rate", "response_length_clip_ratio", "train"),
        ("train/token_mult_prob_error", "train_infer_mismatch", "train"),
        ("validation/avg_length", "response_length_mean", "eval"),
        ("validation/pass_k", "pass_at_k", "eval"),
        # reasoning-from-scratch 7_5 and later
        ("kl_loss", "kl", "train"),
        ("policy_ratio", "importance_ratio_mean", "train"),
        ("adv_std", "advantage_std", "train"),
        # a canonical name logged as it is
        ("reward_mean", "reward_mean", "train"),
        ("response_length_clip_ratio", "response_length_clip_ratio", "train"),
    ],
)
def test_framework_keys_map_to_canonical_names(key, metric, split):
    resolved = resolve(key)
    assert resolved is not None
    assert (resolved.metric, resolved.split, resolved.known) == (metric, split, True)


def test_verl_scaled_learning_rate_is_unscaled():
    resolved = resolve("actor/lr(1e-4)")
    assert resolved is not None
    assert resolved.metric == "lr"
    assert resolved.scale == pytest.approx(1e-4)


def test_percent_flag_only_for_percent_columns():
    assert resolve("eval_acc").percent  # type: ignore[union-attr]
    assert not resolve("reward").percent  # type: ignore[union-attr]


@pytest.mark.parametrize("key", ["step", "global_step", "train/global_step", "train_runtime", "total_flos", "_step"])
def test_counters_and_summaries_are_not_metrics(key):
    assert resolve(key) is None


def test_unknown_keys_pass_through_under_their_own_name():
    resolved = resolve("train/my_custom/thing")
    assert resolved is not None
    assert (resolved.metric, resolved.split, resolved.known) == ("my_custom/thing", "train", False)
    assert resolve("eval_my_custom").metric == "my_custom"  # type: ignore[union-attr]
    assert resolve("eval_my_custom").split == "eval"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "key",
    [
        # listed framework keys we keep under their own names: never guessed at
        "beta", "kl_coef", "entropy_coef", "num_input_tokens_seen", "train/filtered_reward", "eval_num_samples",
        "train/probs_ratio_clamped", "vespo/phi_seq_mean", "time/ppo/forward_pass", "objective/scores_margin",
        "count/chosen", "rollout/num_samples",
    ],
)
def test_listed_passthrough_keys_are_known_and_not_guessed(key):
    resolved = resolve(key)
    assert resolved is not None
    assert resolved.known and resolved.own_name is None


@pytest.mark.parametrize("key", ["reward/frac_flat_groups", "rewards/frac_zero_std", "reward/zero_std_frac",
                                 "train/reward/no_spread_share", "reward/frac_all_same", "rewards/zero_variance_frac",
                                 "reward/same_score_groups"])
def test_a_share_of_groups_that_scored_alike_is_the_zero_spread_fraction_not_a_reward_function(key):
    # holdout13: a custom loop's `reward/frac_flat_groups` was read as a reward component's mean (holdout37's blind
    # readers met `reward/frac_all_same` listed as one).
    resolved = resolve(key)
    assert resolved is not None and resolved.metric == "reward_zero_std_frac"


@pytest.mark.parametrize("key", ["eval/epoch", "eval_epoch"])
def test_the_eval_loops_epoch_counter_is_not_a_held_out_measurement(key):
    # HF's Trainer logs `epoch` with every evaluation; as a held-out row it "rose +307692 noise units".
    assert resolve(key) is None
    assert resolve("epoch") is not None  # the training epoch stays (resumes and epoch boundaries read it)
