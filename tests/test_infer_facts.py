"""Algorithm and framework: from configs first, from the logged keys only when the config says nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assessor import load_run
from assessor.ingest.facts import facts_from_flat_config, flatten
from tests.test_tensorboard import scalar, write_events


def trainer_state(path: Path, keys: dict[str, float], steps: int = 6) -> None:
    history = [{"step": s, "epoch": s / steps, **{k: v * s for k, v in keys.items()}} for s in range(1, steps + 1)]
    path.write_text(json.dumps({"global_step": steps, "log_history": history}), encoding="utf-8")


def jsonl(path: Path, keys: dict[str, float], steps: int = 6) -> None:
    rows = [{"step": s, **{k: v * s for k, v in keys.items()}} for s in range(1, steps + 1)]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")


GRPO_KEYS = {"reward": 0.1, "reward_std": 0.3, "completions/mean_length": 100.0, "kl": 0.01, "loss": 0.01}
TRL_PPO_KEYS = {
    "objective/scores": 0.1, "objective/rlhf_reward": 0.1, "objective/kl": 0.5, "objective/entropy": 40.0,
    "policy/approxkl_avg": 0.01, "policy/clipfrac_avg": 0.1, "loss/policy_avg": -0.01, "val/ratio": 1.0, "lr": 1e-6,
}
OPENRLHF_KEYS = {
    "train/reward": 0.1, "train/return": 0.1, "train/policy_loss": 0.01, "train/response_length": 200.0,
    "train/kl": 0.001, "train/actor_lr": 1e-6, "train/ppo_clip_ratio": 0.01, "train/truncated": 0.0,
}


@pytest.mark.parametrize(
    ("config", "algorithm", "framework"),
    [
        # TRL RLOOTrainer before v0.22 (PPOv2-style) and after (GRPO-style, which GRPOConfig's scale_rewards rules out)
        ({"rloo_k": 4, "num_ppo_epochs": 4, "kl_coef": 0.05}, "rloo", "trl"),
        ({"num_generations": 2, "normalize_advantages": False, "reward_clip_range": None, "beta": 0.05}, "rloo", "trl"),
        ({"num_generations": 8, "normalize_advantages": False, "reward_clip_range": None, "scale_rewards": "group"},
         None, None),
        # TRL PPOTrainer (a value head)
        ({"vf_coef": 0.1, "cliprange_value": 0.2, "num_ppo_epochs": 4}, "ppo", "trl"),
        # OpenRLHF, before and after its flags moved to dotted groups
        ({"advantage_estimator": "rloo", "n_samples_per_prompt": 4}, "rloo", "openrlhf"),
        ({"advantage_estimator": "reinforce"}, "reinforce++", "openrlhf"),
        ({"advantage_estimator": "reinforce_baseline"}, "reinforce++", "openrlhf"),
        ({"algo": {"advantage": {"estimator": "group_norm"}}}, "grpo", "openrlhf"),
        ({"algo": {"advantage": {"estimator": "group_norm"}, "dynamic_filtering_enable": True}}, "dapo", "openrlhf"),
        # verl: DAPO is the GRPO estimator plus dynamic sampling
        ({"algorithm": {"adv_estimator": "grpo", "filter_groups": {"enable": True}},
          "actor_rollout_ref": {"rollout": {"n": 8}}}, "dapo", "verl"),
        ({"algorithm": {"adv_estimator": "grpo", "filter_groups": {"enable": False}},
          "actor_rollout_ref": {"rollout": {"n": 8}}}, "grpo", "verl"),
        ({"algorithm": {"adv_estimator": "reinforce_plus_plus"}, "actor_rollout_ref": {"rollout": {"n": 8}}},
         "reinforce++", "verl"),
        # TRL GRPO's loss_type "dapo" (its default since v0.22) is a loss normalisation, not the DAPO algorithm
        ({"num_generations": 8, "loss_type": "dapo", "scale_rewards": "group"}, None, None),
    ],
)
def test_algorithm_and_framework_from_config(config, algorithm, framework):
    facts = facts_from_flat_config(flatten(config), "config.yaml")
    assert facts.get("algorithm", (None, ""))[0] == algorithm
    assert facts.get("framework", (None, ""))[0] == framework


def test_trl_rloo_config_beats_the_grpo_looking_keys(tmp_path):
    trainer_state(tmp_path / "trainer_state.json", GRPO_KEYS)
    config = {"num_generations": 2, "normalize_advantages": False, "reward_clip_range": None, "beta": 0.05}
    (tmp_path / "training_args.json").write_text(json.dumps(config), encoding="utf-8")
    run = load_run(tmp_path)
    assert (run.facts.framework, run.facts.algorithm) == ("trl", "rloo")
    assert "RLOOConfig" in run.facts.provenance["algorithm"]


def test_trl_grpo_without_config_is_grpo(tmp_path):
    trainer_state(tmp_path / "trainer_state.json", GRPO_KEYS)
    run = load_run(tmp_path)
    assert (run.facts.framework, run.facts.algorithm) == ("trl", "grpo")


def test_trl_ppo_keys_are_trl_ppo_not_hf(tmp_path):
    trainer_state(tmp_path / "trainer_state.json", {**TRL_PPO_KEYS, "loss/value_avg": 0.5, "val/clipfrac_avg": 0.1})
    run = load_run(tmp_path)
    assert (run.facts.framework, run.facts.algorithm) == ("trl", "ppo")


def test_trl_legacy_ppo_keys_are_trl_ppo(tmp_path):
    keys = {"env/reward_mean": 0.1, "objective/kl": 0.1, "ppo/loss/value": 0.3, "ppo/policy/approxkl": 0.01}
    jsonl(tmp_path / "log.jsonl", keys)
    run = load_run(tmp_path)
    assert (run.facts.framework, run.facts.algorithm) == ("trl", "ppo")


def test_trl_ppo_style_keys_without_a_value_head_are_rloo(tmp_path):
    trainer_state(tmp_path / "trainer_state.json", TRL_PPO_KEYS)
    run = load_run(tmp_path)
    assert (run.facts.framework, run.facts.algorithm) == ("trl", "rloo")


def test_openrlhf_tensorboard_run_is_openrlhf(tmp_path):
    events = (scalar(tag, s, v * s, 1e9 + s) for s in range(1, 7) for tag, v in OPENRLHF_KEYS.items())
    write_events(tmp_path / "tensorboard" / "run", events)
    run = load_run(tmp_path)
    assert run.facts.framework == "openrlhf"
    assert run.facts.algorithm is None  # its GRPO, REINFORCE++ and RLOO log the same keys: not guessed


def test_openrlhf_estimator_from_wandb_style_config(tmp_path):
    jsonl(tmp_path / "log.jsonl", OPENRLHF_KEYS)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"advantage_estimator": {"value": "reinforce_plus_plus"}}))
    run = load_run(tmp_path)
    assert (run.facts.framework, run.facts.algorithm) == ("openrlhf", "reinforce++")
    assert run.facts.provenance["algorithm"] == "config.yaml: advantage_estimator"


def test_openrlhf_critic_keys_are_ppo(tmp_path):
    jsonl(tmp_path / "log.jsonl", {**OPENRLHF_KEYS, "train/critic_loss": 0.2, "train/values": 0.1})
    run = load_run(tmp_path)
    assert (run.facts.framework, run.facts.algorithm) == ("openrlhf", "ppo")


def test_nemo_rl_keys_are_nemo_rl(tmp_path):
    keys = {"train/reward": 0.1, "train/approx_entropy": 1.0, "train/token_mult_prob_error": 1.0,
            "train/kl_penalty": 0.01, "train/mean_gen_tokens_per_sample": 300.0}
    jsonl(tmp_path / "log.jsonl", keys)
    assert load_run(tmp_path).facts.framework == "nemo_rl"


def test_a_plain_script_is_no_framework(tmp_path):
    jsonl(tmp_path / "log.jsonl", {"return": 0.1, "reward": 0.1, "response_length": 100.0})
    assert load_run(tmp_path).facts.framework is None


def test_verl_dapo_keys_without_config_are_dapo(tmp_path):
    jsonl(tmp_path / "log.jsonl", {"critic/score/mean": 0.1, "actor/pg_loss": 0.01, "train/num_gen_batches": 2.0})
    run = load_run(tmp_path)
    assert (run.facts.framework, run.facts.algorithm) == ("verl", "dapo")


@pytest.mark.parametrize("extra", [
    {"objective/kl": 3.0, "objective/entropy": 120.0, "objective/scores": 0.5, "val/contain_eos_token": 0.95},  # online
    {"loss/kl": 3.0, "objective/entropy": 120.0, "rewards/probabilities": 0.52, "mixture_coef": 0.5},  # Nash-MD
])
def test_preference_keys_beside_generation_keys_are_online_preference_training(tmp_path, extra):
    """holdout25's blind readers: TRL online DPO, XPO and Nash-MD runs were read as offline DPO, whose card says
    "no generation, no KL curve" beside a logged KL, entropy, win rate and EOS rate. Pairs sampled from the policy
    make it online preference training, with a card of its own; offline pairs stay DPO."""
    pref = {"rewards/chosen": 0.1, "rewards/rejected": -0.1, "rewards/margins": 0.2, "rewards/accuracies": 0.6}
    (tmp_path / "online").mkdir()
    jsonl(tmp_path / "online" / "log.jsonl", {**pref, **extra})
    assert load_run(tmp_path / "online").facts.algorithm == "online_dpo"
    (tmp_path / "offline").mkdir()
    jsonl(tmp_path / "offline" / "log.jsonl", {**pref, "loss": 0.6})
    assert load_run(tmp_path / "offline").facts.algorithm == "dpo"
    from assessor.judge import prompts
    assert prompts.ALGORITHM_CARDS["online_dpo"] == ("online_dpo",)


def test_an_error_ending_a_log_that_metrics_were_written_long_after_is_no_crash(tmp_path):
    """holdout27: an evaluator process died with a CUDA OOM (evaluator.log) three hours before the training log's
    latest row; the run was read as crashed and sent back to step 0. An error the metrics went on after belongs to a
    side process or an earlier attempt; an error written last is the job dying."""
    import os
    import time

    jsonl(tmp_path / "train_log.jsonl", GRPO_KEYS)
    log = tmp_path / "evaluator.log"
    log.write_text("loading step 700\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n",
                   encoding="utf-8")
    now = time.time()
    os.utime(tmp_path / "train_log.jsonl", (now, now))
    os.utime(log, (now - 3 * 3600, now - 3 * 3600))
    assert load_run(tmp_path).facts.training_crashed is None
    os.utime(log, (now, now))
    assert load_run(tmp_path).facts.training_crashed is not None


def test_higher_checkpoints_written_long_before_a_lower_one_are_leftovers_not_the_runs_history(tmp_path):
    """holdout27: a TRL output folder reused by a new run live at checkpoint-800 still held checkpoint-1500 and
    checkpoint-2000 of an earlier run that collapsed three days before; the newest-numbered trainer state was read,
    and the live run was sent back to step 400 of the old one. A trainer writes checkpoints in step order: the
    latest-written trainer state is the live run's history, and the folder is said to be mixed."""
    import os
    import time

    now = time.time()
    for step, age in ((2000, 3 * 86400), (1500, 3 * 86400 + 3600), (800, 60), (400, 4 * 3600)):
        folder = tmp_path / f"checkpoint-{step}"
        folder.mkdir()
        trainer_state(folder / "trainer_state.json", GRPO_KEYS, steps=step)
        os.utime(folder / "trainer_state.json", (now - age, now - age))
    run = load_run(tmp_path)
    assert run.last_step == 800
    assert any("older than checkpoint-800" in w for w in run.warnings)
    for step in (2000, 1500, 800, 400):  # written in step order: the highest is the history, as before
        os.utime(tmp_path / f"checkpoint-{step}" / "trainer_state.json", (now - 10 * (3000 - step),) * 2)
    assert load_run(tmp_path).last_step == 2000
