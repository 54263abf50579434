"""The decision contract of DESIGN.md ("What the three decisions mean") and the coherence of the evidence sheet.

Constructed runs pin each fault the verdict issue names (no rollback without a checkpoint on disk, targets that
land too early, a rise-then-fall read as flat, finished runs told to look again, zero-heavy series steering the
target), and runs that learn nothing; the real runs are read for findings that contradict their own numbers.
"""

from __future__ import annotations

import itertools
import json
import math
import re

import numpy as np
import pytest

from assessor.diagnose import diagnose
from assessor.ingest import load_run
from assessor.judge.base import JudgeRequest
from assessor.judge.prompts import summarize
from assessor.judge.rules import RulesJudge
from tests.conftest import REAL_RUN_NAMES
from tests.runs import ar1, make_run

N = 300
STEPS = np.arange(1, N + 1)


def verdict(run):
    return RulesJudge().judge(JudgeRequest(run=run, diagnostics=diagnose(run))).verdict


def rise_then_fall() -> np.ndarray:
    """Up from 0.2 to a clear peak of 0.7 at step 120, held to 150, back to about 0.25 by step 260."""
    up = 0.2 + 0.5 * np.clip(STEPS / 120, 0, 1)
    down = 0.5 * np.clip((STEPS - 150) / 110, 0, 1) * 0.9
    return up - down


# --- rollback: whenever a better model is behind, checkpoint on disk or not

def test_a_decline_with_no_checkpoint_on_disk_is_a_rollback_that_names_the_step(tmp_path):
    run = make_run(tmp_path, reward=rise_then_fall() + ar1(1, N, 0.3, 0.03))
    v = verdict(run)
    assert v.decision == "rollback"
    assert v.rollback_checkpoint is None and v.rollback_step is not None and 110 <= v.rollback_step <= 160
    assert any("Keep checkpoints in the run directory" in a for a in v.recommended_actions)
    assert any(f"step {v.rollback_step}" in a for a in v.recommended_actions)


def test_the_save_interval_names_the_checkpoint_to_restore(tmp_path):
    run = make_run(tmp_path, reward=rise_then_fall() + ar1(2, N, 0.3, 0.03), config={"save_steps": 50})
    d = diagnose(run)
    assert d.best_checkpoint.save_steps == 50
    assert d.best_checkpoint.expected_checkpoint_step == (d.best_checkpoint.best_step // 50) * 50
    v = verdict(run)
    assert any(f"checkpoint of step {d.best_checkpoint.expected_checkpoint_step}" in a
               for a in v.recommended_actions)


def test_a_rise_then_fall_back_to_the_start_is_never_continue(tmp_path):
    for seed in range(3):
        v = verdict(make_run(tmp_path / str(seed), reward=rise_then_fall() + ar1(seed, N, 0.3, 0.04),
                             kl=0.02 + 0 * STEPS + ar1(seed + 9, N, 0.3, 0.001)))
        assert v.decision == "rollback", v.headline
        assert "flat" not in v.headline and "converged" not in v.headline


def test_the_target_is_the_newest_good_checkpoint_not_the_earliest(tmp_path):
    # A long plateau from step 80, then a collapse at 250: any checkpoint on the plateau is as good, and the
    # newest before the collapse throws away the least compute.
    reward = np.where(STEPS < 80, 0.2 + 0.5 * STEPS / 80, 0.7)
    reward = np.where(STEPS >= 250, 0.05, reward) + ar1(3, N, 0.3, 0.03)
    kl = 0.01 + 0.2 * STEPS / N + ar1(4, N, 0.3, 0.002)  # rising KL used to pull the target to the earliest
    v = verdict(make_run(tmp_path, reward=reward, kl=kl, checkpoints=(50, 100, 150, 200, 250, 300)))
    assert v.decision == "rollback"
    assert v.rollback_checkpoint in ("checkpoint-150", "checkpoint-200")  # on the plateau, not its first step


def test_one_best_point_everywhere(tmp_path):
    reward = rise_then_fall() + ar1(5, N, 0.3, 0.03)
    run = make_run(tmp_path, reward=reward, checkpoints=(50, 100, 150, 200))
    d = diagnose(run)
    v = verdict(run)
    best = d.best_checkpoint
    assert best.best_step is not None and best.checkpoint_step == v.rollback_step
    assert f"step {best.best_step}" in v.headline
    # The best level is the reward's peak as the signal table quotes it.
    assert best.best_level == pytest.approx(d.signals["reward_mean"].peak)


# --- finished and stalled runs

def test_a_finished_run_on_a_plateau_stops_and_is_never_told_to_look_again(tmp_path):
    reward = np.where(STEPS < 60, 0.2 + 0.5 * STEPS / 60, 0.7) + ar1(6, N, 0.3, 0.03)
    run = make_run(tmp_path, reward=reward, config={"max_steps": N + 1})
    d = diagnose(run)
    assert d.run.state == "finished"
    v = verdict(run)
    assert v.decision == "stop"
    assert not any("assess again" in a.lower() for a in v.recommended_actions)


def test_a_finished_run_still_rising_is_worth_extending(tmp_path):
    reward = 0.2 + 0.5 * STEPS / N + ar1(7, N, 0.3, 0.02)
    v = verdict(make_run(tmp_path, reward=reward, config={"max_steps": N}))
    assert v.decision == "continue" and "extend" in v.headline.lower()
    assert not any("assess again" in a.lower() for a in v.recommended_actions)


def test_a_run_that_stopped_writing_is_stalled(tmp_path):
    run = make_run(tmp_path, reward=0.2 + 0.5 * STEPS / N + ar1(8, N, 0.3, 0.02), config={"max_steps": 1000})
    assert run.newest_write is not None
    assert diagnose(run, now=run.newest_write + 60).run.state == "live"
    stalled = diagnose(run, now=run.newest_write + 3 * 24 * 3600)
    assert stalled.run.state == "stalled" and "3 days" in stalled.run.state_reason


# --- zero-heavy and tiny series

def test_a_gradient_norm_that_is_mostly_exact_zeros_reports_no_ratio_and_moves_no_target(tmp_path):
    rng = np.random.default_rng(9)
    grad = np.where(rng.random(N) < 0.7, 0.0, 0.2 + rng.random(N) * 1e-3)
    grad[200:] = np.where(rng.random(N - 200) < 0.7, 0.0, 0.5)
    reward = rise_then_fall() + ar1(10, N, 0.3, 0.03)
    d = diagnose(make_run(tmp_path, reward=reward, grad_norm=grad, checkpoints=(50, 100, 150, 200)))
    assert not [f for f in d.findings if f.signal == "grad_norm" and f.kind in ("spike_regime_change",
                                                                                 "level_shift")]
    assert not d.signals["grad_norm"].discontinuities and not d.signals["grad_norm"].spikes
    assert d.best_checkpoint.breakage_step is None


def test_no_best_step_is_named_on_a_constant_curve(tmp_path):
    d = diagnose(make_run(tmp_path, reward=np.zeros(N), reward_std=np.zeros(N)))
    assert d.best_checkpoint.basis == "none" and d.best_checkpoint.best_step is None


def test_a_kl_jump_from_about_zero_to_still_about_zero_is_no_lurch(tmp_path):
    kl = np.where(STEPS < 150, 5e-6, 1e-4) * (1 + ar1(11, N, 0.3, 0.05))
    d = diagnose(make_run(tmp_path, reward=0.3 + ar1(12, N, 0.3, 0.05), kl=kl))
    assert "kl_jump" not in {f.kind for f in d.findings}


# --- runs that learn nothing

def test_a_reward_of_zero_on_most_steps_is_no_learning_signal(tmp_path):
    rng = np.random.default_rng(13)
    reward = np.where(rng.random(N) < 0.9, 0.0, 0.125)
    v = verdict(make_run(tmp_path, reward=reward, reward_std=np.where(reward > 0, 0.3, 0.0),
                         kl=0.001 + 0 * STEPS + ar1(14, N, 0.3, 1e-4)))
    assert v.decision == "stop"
    assert any(e.signal == "reward_mean" and "no learning signal" in e.observation for e in v.evidence)
    d = diagnose(make_run(tmp_path / "b", reward=reward))
    kinds = {f.kind for f in d.findings}
    assert "reward_peaked_then_declined" not in kinds  # 0 at the start, the peak and now is no decline
    assert not any("converged" in f.observation for f in d.findings)
    assert d.learning_signal.never_learned and d.learning_signal.zero_reward_share == pytest.approx(
        float(np.mean(reward == 0)))


def test_a_task_component_pinned_at_its_floor_while_format_rises_is_no_learning_signal(tmp_path):
    fmt = np.clip(0.1 + 0.9 * STEPS / 150, 0, 1) + ar1(15, N, 0.3, 0.02)
    correct = np.zeros(N)
    v = verdict(make_run(tmp_path, reward=fmt + correct, rewards__format_reward__mean=fmt,
                         rewards__correctness_reward__mean=correct))
    assert v.decision == "stop"
    assert any("correctness_reward" in e.observation and "floor" in e.observation for e in v.evidence)


def test_a_late_first_success_is_learning_not_a_dead_run(tmp_path):
    # Zero for the first 60% of the run, then the reward starts to fire and climbs: keep going.
    reward = np.where(STEPS < 180, 0.0, 0.6 * (STEPS - 180) / 120) + np.where(STEPS < 180, 0, ar1(16, N, 0.3, 0.02))
    v = verdict(make_run(tmp_path, reward=np.clip(reward, 0, 1)))
    assert v.decision == "continue"


def test_eval_that_never_moves_while_training_reward_rises_is_not_continue(tmp_path):
    reward = 0.2 + 0.5 * STEPS / N + ar1(17, N, 0.3, 0.02)
    evals = np.full(15, 0.31)
    v = verdict(make_run(tmp_path, reward=reward, eval_every=20, eval_values=evals))
    assert v.decision == "stop"
    assert any("does not respond to training" in e.observation for e in v.evidence)


# --- the sheet does not contradict itself (real runs)

MAGNITUDE = re.compile(r"[-+]?\d+(?:\.\d+)?e[+]?0*([4-9]|\d{2,})", re.IGNORECASE)
UNITS = re.compile(r"([-+]?\d+(?:\.\d+)?) (?:noise units|standard errors)")
RATIO = re.compile(r"\((\d+(?:\.\d+)?)x\)")


def _real_folders() -> list[str]:
    return sorted(REAL_RUN_NAMES)


@pytest.mark.parametrize("folder", _real_folders())
def test_no_finding_on_a_real_run_contradicts_its_numbers(real_runs, folder):
    d = diagnose(load_run(real_runs / folder))
    for f in d.findings:
        text = f.observation
        assert not MAGNITUDE.search(text), text  # no 3.4e+05-style magnitudes
        assert all(abs(float(x)) < 1000 for x in UNITS.findall(text)), text
        assert all(float(x) < 10_000 for x in RATIO.findall(text)), text
    reward = d.signals.get(d.reward.metric or "")
    if reward is not None and any(f.kind == "reward_peaked_then_declined" for f in d.findings):
        assert reward.peak > reward.now
    if d.learning_signal.never_learned:
        assert not any("converged" in f.observation or f.kind == "reward_peaked_then_declined"
                       for f in d.findings)
        assert d.best_checkpoint.best_step is None
    best = d.best_checkpoint
    if best.best_step is not None and best.breakage_step is not None:
        assert best.best_step < best.breakage_step


# --- learning nothing, seen from the task, the eval and the critic

def with_evals(run_dir, name: str, every: int, values: np.ndarray):
    """Append held-out evaluations `eval_<name>` every `every` steps to a `make_run` log and read it again."""
    with (run_dir / "log.jsonl").open("a", encoding="utf-8") as log:
        for k, value in enumerate(values, start=1):
            log.write(f'{{"step": {k * every}, "eval_{name}": {float(value)}}}\n')
    return load_run(run_dir)


def test_a_task_component_flat_near_its_floor_while_most_groups_score_alike_is_stop(tmp_path):
    rng = np.random.default_rng(30)
    fmt = np.clip(0.15 + 0.85 * STEPS / 60, 0, 1) - np.abs(ar1(31, N, 0.3, 0.01))
    accuracy = rng.binomial(64, 0.03, N) / 64  # a few lucky completions a batch, no trend
    zero_spread = np.clip(0.85 * np.clip(STEPS / 60, 0, 1) + ar1(32, N, 0.3, 0.03), 0, 1)
    run = make_run(tmp_path, reward=fmt + accuracy, rewards__format_reward__mean=fmt,
                   rewards__accuracy_reward__mean=accuracy, frac_reward_zero_std=zero_spread)
    d = diagnose(run)
    task = next(f for f in d.findings if f.kind == "task_component_flat")
    assert "accuracy_reward" in task.observation and "score alike" in task.observation
    assert verdict(run).decision == "stop"


def test_a_zero_reward_run_with_a_few_lucky_batches_is_stopped_not_rolled_back(tmp_path):
    rng = np.random.default_rng(33)
    reward = np.where(rng.random(N) < 0.7, 0.0, rng.choice([0.03, 0.06], N))
    grad = np.where(STEPS <= 20, 0.02, 0.0)
    v = verdict(make_run(tmp_path, reward=reward, grad_norm=grad))
    assert v.decision == "stop" and v.rollback_step is None
    assert any("no learning signal" in e.observation for e in v.evidence)


def test_a_finished_run_whose_rise_is_slowing_keeps_its_final_weights(tmp_path):
    reward = 0.3 + 0.4 * (1 - np.exp(-STEPS / 90)) + ar1(34, N, 0.3, 0.01)
    run = make_run(tmp_path, reward=reward, config={"max_steps": N})
    d = diagnose(run)
    assert d.run.state == "finished" and d.reward.slowing
    v = verdict(run)
    assert v.decision == "stop" and "keep the final weights" in v.headline


def test_a_held_out_pass_rate_that_stays_put_while_a_0_1_reward_climbs_does_not_transfer(tmp_path):
    reward = 0.35 + 0.27 * STEPS / N + ar1(35, N, 0.3, 0.03)
    # 1,000 problems, a pass rate that never moves; noisy enough that its own slope cannot be pinned under 1.5
    # noise units, but at the top of its band it gained a tenth of what the training reward did
    accuracy = np.array([0.334, 0.319, 0.314, 0.338, 0.349, 0.35, 0.362, 0.318, 0.32, 0.34, 0.346, 0.311, 0.342,
                         0.335, 0.35, 0.321])
    run = with_evals(make_run(tmp_path, reward=reward).path, "accuracy", 18, accuracy)
    assert "eval_not_transferring" in {f.kind for f in diagnose(run).findings}
    assert verdict(run).decision == "stop"


def test_the_held_out_task_check_outranks_the_held_out_reward_it_is_part_of(tmp_path):
    # A reward-model score climbs on held-out prompts too; the exact-match check logged beside it peaks and falls.
    reward = -0.6 + 3.0 * STEPS / N + ar1(37, N, 0.3, 0.03)
    run = make_run(tmp_path, reward=reward, checkpoints=(100, 150, 200, 250, 300))
    rm_score = -0.5 + 3.0 * np.arange(1, 11) / 10
    exact = np.array([0.30, 0.38, 0.45, 0.51, 0.55, 0.53, 0.49, 0.46, 0.44, 0.43])
    with_evals(run.path, "rewards/Skywork-RM/mean", 30, rm_score)
    run = with_evals(run.path, "rewards/exact_match/mean", 30, exact)
    d = diagnose(run)
    assert d.eval.metric == "reward_component/exact_match_mean"
    v = verdict(run)
    assert v.decision == "rollback" and 120 <= (v.rollback_step or 0) <= 180


def test_an_eval_that_rose_then_slid_is_a_decline_not_noise(tmp_path):
    # Its two slopes are not eval-to-eval noise: the noise is read off second differences.
    reward = 0.33 + 0.38 * (1 - np.exp(-STEPS / 120)) + ar1(38, N, 0.3, 0.01)
    evals = np.array([0.359, 0.394, 0.433, 0.507, 0.526, 0.554, 0.546, 0.596, 0.592, 0.571, 0.549, 0.535, 0.523,
                      0.542, 0.52])
    run = with_evals(make_run(tmp_path, reward=reward, checkpoints=(140, 160, 180, 200)).path, "accuracy", 20, evals)
    assert "eval_declining" in {f.kind for f in diagnose(run).findings}
    v = verdict(run)
    assert v.decision == "rollback" and 140 <= (v.rollback_step or 0) <= 200


def test_a_critic_that_never_learnt_stops_a_run_that_is_not_learning_anyway(tmp_path):
    explained = -0.5 + 0.3 * STEPS / N + ar1(39, N, 0.3, 0.05)
    reward = 0.04 + ar1(40, N, 0.3, 0.01)
    run = make_run(tmp_path, reward=reward, critic__vf_explained_var=explained)
    d = diagnose(run)
    assert "critic_not_learning" in {f.kind for f in d.findings}
    v = verdict(run)
    assert v.decision == "stop" and "critic" in v.headline
    learnt = make_run(tmp_path / "ok", reward=0.2 + 0.4 * STEPS / N + ar1(41, N, 0.3, 0.02),
                      critic__vf_explained_var=np.clip(-0.5 + 2 * STEPS / N, -0.5, 0.8) + ar1(42, N, 0.3, 0.03))
    assert "critic_not_learning" not in {f.kind for f in diagnose(learnt).findings}
    assert verdict(learnt).decision == "continue"


def test_a_critic_still_climbing_towards_zero_in_its_warm_up_has_not_failed_to_learn(tmp_path):
    """holdout16: verl's critic_warmup trains the critic alone for its first 40 steps; 22 steps in, its explained
    variance has climbed from -0.75 to -0.21 and crosses 0 a few steps later. A scheduled check then read "never
    learnt" and stopped a healthy run. A critic stuck near -0.2 for hundreds of steps, creeping up by a fraction of
    what is left to 0, still has."""
    n = 22
    steps = np.arange(1, n + 1)
    warming = -0.75 + 0.025 * steps + ar1(55, n, 0.3, 0.02)
    run = make_run(tmp_path, reward=0.15 + 0.005 * np.sin(steps), critic__vf_explained_var=warming)
    assert "critic_not_learning" not in {f.kind for f in diagnose(run).findings}
    assert verdict(run).decision == "continue"
    stuck = -0.25 + 0.06 * STEPS / N + ar1(57, N, 0.3, 0.03)
    run = make_run(tmp_path / "stuck", reward=0.05 + ar1(58, N, 0.3, 0.01), critic__vf_explained_var=stuck)
    assert "critic_not_learning" in {f.kind for f in diagnose(run).findings}


def test_a_dip_of_a_few_early_evaluations_within_one_sampling_error_is_not_a_decline(tmp_path):
    # Four evaluations on 1,000 problems: 0.330 → 0.304 is under two sampling errors (0.015 each).
    reward = 0.26 + 0.06 * STEPS / N + ar1(43, N, 0.3, 0.02)
    run = with_evals(make_run(tmp_path, reward=reward).path, "accuracy", 75, np.array([0.330, 0.318, 0.309, 0.304]))
    assert "eval_declining" not in {f.kind for f in diagnose(run).findings}
    assert verdict(run).decision == "continue"


def test_the_latest_evaluation_the_cadence_allows_vouches_for_a_sagging_reward(tmp_path):
    # Harder prompts arrive at step 200: the training reward drops, the fixed held-out eval keeps climbing. The
    # last evaluation is one eval interval old, as fresh as the cadence allows.
    reward = np.where(STEPS < 200, 0.3 + 0.45 * STEPS / 200, 0.45) + ar1(44, N, 0.3, 0.02)
    evals = 0.29 + 0.03 * np.arange(1, 5)  # steps 60, 120, 180, 240; the run is at step 290
    run = with_evals(make_run(tmp_path, reward=reward[:290]).path, "accuracy", 60, evals)
    v = verdict(run)
    assert v.decision == "continue"


# --- what holdout 5 showed: finished runs, saturation, long flat runs, one task of a mix, the PPO objective

def test_a_learning_rate_decayed_to_zero_at_the_last_step_marks_a_finished_run(tmp_path):
    lr = 1e-6 * (1 - STEPS / N)
    reward = 0.3 + 0.3 * (1 - np.exp(-STEPS / 60)) + ar1(45, N, 0.3, 0.02)
    run = make_run(tmp_path, reward=reward, learning_rate=lr)
    d = diagnose(run)
    assert d.run.state == "finished" and "decayed to 0" in d.run.state_reason
    assert verdict(run).decision == "stop"


def test_a_training_scripts_own_config_json_gives_the_planned_steps(tmp_path):
    run = make_run(tmp_path, reward=0.3 + 0.2 * STEPS / N + ar1(46, N, 0.3, 0.02))
    (tmp_path / "config.json").write_text('{"total_steps": 1000, "log_every": 1, "group_size": 8, "lr": 1e-6}')
    run = load_run(tmp_path)
    assert run.facts.planned_total_steps == 1000 and run.facts.num_generations == 8
    (tmp_path / "config.json").write_text('{"model_type": "qwen2", "total_steps": 1000, "vocab_size": 151936}')
    assert load_run(tmp_path).facts.planned_total_steps is None  # a model's config says nothing about the run


def test_a_0_1_reward_within_5_percent_of_its_ceiling_with_most_groups_alike_is_saturated(tmp_path):
    reward = np.clip(0.68 + 0.29 * (1 - np.exp(-STEPS / 50)) + ar1(47, N, 0.3, 0.008), 0, 1)
    zero_spread = np.clip(reward ** 8 + ar1(48, N, 0.3, 0.02), 0, 1)  # groups of 8 all correct
    run = make_run(tmp_path, reward=reward, frac_reward_zero_std=zero_spread, kl=0.03 + ar1(49, N, 0.3, 0.001))
    assert "reward_saturated" in {f.kind for f in diagnose(run).findings}
    assert verdict(run).decision == "stop"


@pytest.mark.parametrize(("points", "decision"), [(450, "stop"), (120, "continue")])
def test_a_reward_where_it_started_stops_a_long_run_but_not_a_young_one(tmp_path, points, decision):
    reward = 0.15 + ar1(50, points, 0.3, 0.02)
    assert verdict(make_run(tmp_path, reward=reward, loss=ar1(51, points, 0.3, 0.01))).decision == decision


def test_one_task_of_a_mix_collapsing_on_held_out_data_is_a_rollback_to_before_it_fell(tmp_path):
    reward = np.where(STEPS < 200, 0.4 + 0.2 * STEPS / 200, 0.6 - 0.13 * (STEPS - 200) / 100) + ar1(52, N, 0.3, 0.01)
    run = make_run(tmp_path, reward=reward)
    steps = 25
    math_verify = np.array([0.40, 0.48, 0.54, 0.58, 0.60, 0.61, 0.62, 0.62, 0.62, 0.63, 0.63, 0.63])
    ifeval = np.array([0.55, 0.65, 0.72, 0.76, 0.77, 0.78, 0.77, 0.78, 0.60, 0.48, 0.42, 0.41])
    with_evals(run.path, "rewards/math_verify/mean", steps, math_verify)
    run = with_evals(run.path, "rewards/ifeval_strict/mean", steps, ifeval)
    v = verdict(run)
    assert v.decision == "rollback" and 150 <= (v.rollback_step or 0) <= 200


def test_a_breakage_the_held_out_eval_rose_through_does_not_hold_the_best_point_back(tmp_path):
    entropy = np.where(STEPS < 60, 0.55, np.maximum(0.03, 0.55 - 0.52 * (STEPS - 60) / 100)) + ar1(53, N, 0.3, 0.005)
    reward = np.minimum(0.8, 0.35 + 0.45 * STEPS / 130) + ar1(54, N, 0.3, 0.015)
    evals = np.array([0.38, 0.47, 0.56, 0.63, 0.68, 0.70, 0.71, 0.70, 0.71, 0.70, 0.71, 0.70])
    run = with_evals(make_run(tmp_path, reward=reward, entropy=entropy).path, "accuracy", 25, evals)
    d = diagnose(run)
    assert d.best_checkpoint.breakage_step is None and (d.best_checkpoint.best_step or 0) >= 250
    assert verdict(run).decision != "rollback"


def test_ppo_whose_kl_penalised_reward_falls_while_the_score_climbs_is_rolled_back_to_its_peak(tmp_path):
    kl = np.where(STEPS < 100, 15 * STEPS / 100, 15 + 55 * (STEPS - 100) / 200) + ar1(55, N, 0.3, 0.5)
    score = 0.4 + 5.7 * STEPS / N + ar1(56, N, 0.3, 0.1)
    shaped = score - 0.05 * kl * (1 + STEPS / 100)
    run = make_run(tmp_path, **{"objective/scores": score, "objective/rlhf_reward": shaped, "objective/kl": kl})
    d = diagnose(run)
    assert d.reward.shaped_declined
    v = verdict(run)
    peak = int(STEPS[np.argmax(np.convolve(shaped, np.ones(30) / 30, mode="same"))])
    assert v.decision == "rollback" and abs((v.rollback_step or 0) - peak) <= 60


def test_a_kl_penalised_reward_falling_after_the_score_levelled_off_is_drift_not_a_better_model_behind(tmp_path):
    # Online DPO judged by a reward model: the score climbs to 1.6 by step 80, then creeps to 1.75 while KL
    # doubles; the penalised reward peaks just after the bend and falls. The weights at the peak score lower
    # than today's, so nothing better lies behind: a spent run (holdout22's online-DPO case).
    kl = 1.0 + 9.0 * STEPS / N + ar1(59, N, 0.3, 0.3)
    score = np.where(STEPS < 80, -0.5 + 2.1 * STEPS / 80, 1.6 + 0.15 * (STEPS - 80) / 220) + ar1(60, N, 0.3, 0.05)
    shaped = score - 0.06 * kl
    run = make_run(tmp_path, **{"objective/scores": score, "objective/rlhf_reward": shaped, "objective/kl": kl})
    assert not diagnose(run).reward.shaped_declined
    assert verdict(run).decision == "stop"


@pytest.mark.parametrize("eval_rises", [False, True])
def test_dapo_whose_dynamic_sampling_needs_ten_rounds_a_step_stops_unless_the_eval_still_climbs(tmp_path, eval_rises):
    # verl DAPO: num_gen_batches climbs from 1-2 to its cap of 10 (one group in ten still mixed); the kept-batch
    # score sits near 0.5 by construction. With the held-out eval flat for the second half the run is spent; with
    # the eval still setting highs it is learning on what is left (holdout22, holdout17).
    rounds = np.clip(np.round(1.2 + 9 * np.clip((STEPS - 60) / 160, 0, 1) + ar1(61, N, 0.3, 0.3)), 1, 10)
    score = 0.48 + 0.04 * STEPS / N + ar1(62, N, 0.3, 0.02)
    evals = (np.linspace(0.30, 0.62, 12) if eval_rises else
             np.array([0.30, 0.38, 0.45, 0.52, 0.57, 0.58, 0.57, 0.58, 0.56, 0.58, 0.57, 0.58]))
    run = make_run(tmp_path, reward=score, train__num_gen_batches=rounds, eval_every=25, eval_values=evals)
    assert "dynamic_sampling_starved" in {f.kind for f in diagnose(run).findings}
    v = verdict(run)
    assert v.decision == ("continue" if eval_rises else "stop")


def test_a_finished_preference_run_is_not_extended_for_another_epoch(tmp_path):
    margin = 0.1 + 0.8 * STEPS / N + ar1(57, N, 0.3, 0.02)
    lr = 5e-7 * (1 - STEPS / N)
    run = make_run(tmp_path, rewards__margins=margin, rewards__accuracies=np.clip(0.5 + 0.25 * STEPS / N, 0, 1),
                   loss=0.69 - 0.15 * STEPS / N + ar1(58, N, 0.3, 0.01), learning_rate=lr)
    d = diagnose(run)
    assert d.run.state == "finished" and d.reward.metric == "pref_margin"
    v = verdict(run)
    assert v.decision == "stop" and "extend the run" not in v.headline.lower()


def test_a_reward_sag_while_the_learning_rate_still_warms_up_is_not_a_rollback(tmp_path):
    n = 90
    steps = np.arange(1, n + 1)
    lr = 3e-6 * steps / 100  # warming up to step 100
    reward = 0.49 - 0.1 * np.clip((steps - 20) / 40, 0, 1) + ar1(59, n, 0.3, 0.015)
    v = verdict(make_run(tmp_path, reward=reward, learning_rate=lr))
    assert v.decision == "continue"
    # the same sag with the learning rate already at its plateau is a decline
    assert verdict(make_run(tmp_path / "b", reward=reward, learning_rate=np.full(n, 3e-6))).decision == "rollback"


def test_a_kl_penalised_reward_that_falls_only_because_kl_grows_under_a_flat_score_is_drift_not_hacking(tmp_path):
    kl = 0.05 + 1.6 * (STEPS / N) ** 1.5 + ar1(60, N, 0.3, 0.01)
    score = np.minimum(0.6, 0.3 + 0.3 * STEPS / 90) + ar1(61, N, 0.3, 0.01)
    run = make_run(tmp_path, reward=score, critic__rewards__mean=score - 0.05 * kl, kl=kl)
    assert not diagnose(run).reward.shaped_declined
    assert verdict(run).decision == "stop"


def test_a_learning_rate_logged_as_0_now_and_then_is_not_a_finished_schedule(tmp_path):
    lr = np.where(STEPS % 7 == 0, 0.0, 1e-6)
    lr[-1] = 0.0
    run = make_run(tmp_path, reward=0.3 + 0.2 * STEPS / N + ar1(62, N, 0.3, 0.02), learning_rate=lr)
    assert diagnose(run).run.state == "live"


# --- from the holdout6 first read and the holdout4 blind read

def test_kl_and_reward_moves_quote_the_curves_levels_not_now_minus_a_fitted_change(tmp_path):
    # KL about 0.02 until a jump to about 1.6 late in the window: a line fitted through the jump puts its start
    # below zero; the finding must quote where the curve really was.
    kl = np.where(STEPS < 270, 0.02, 1.6) + ar1(70, N, 0.3, 0.002)
    reward = np.where(STEPS < 270, 0.55, 0.1) + ar1(71, N, 0.3, 0.02)
    d = diagnose(make_run(tmp_path, reward=reward, kl=kl))
    moves = [f.observation for f in d.kl_reward.findings if f.observation.startswith("KL ") and "→" in f.observation]
    assert moves
    for text in moves:
        start = float(re.match(r"KL (-?[0-9.e+-]+) →", text).group(1))
        assert 0 <= start < 0.1, text


def test_an_eval_whose_latest_evaluation_is_its_best_has_not_declined(tmp_path):
    reward = 0.48 + ar1(72, N, 0.3, 0.03)  # a curriculum holds the training reward level by design
    evals = np.array([0.34, 0.36, 0.38, 0.37, 0.41, 0.43, 0.42, 0.45, 0.43, 0.508])
    run = with_evals(make_run(tmp_path, reward=reward).path, "accuracy", 30, evals)
    curve = diagnose(run).eval.curves[0]
    assert curve.decline_noise == 0.0
    assert verdict(run).decision == "continue"


def test_a_finished_run_whose_eval_still_climbs_at_full_pace_is_extended_though_the_reward_slows(tmp_path):
    reward = 0.3 + 0.3 * (1 - np.exp(-STEPS / 90)) + ar1(73, N, 0.3, 0.01)
    evals = 0.3 + 0.4 * np.arange(1, 16) / 15 + np.array([0, .004, -.003, .002, 0, -.004, .003, 0, .002, -.002,
                                                          .003, 0, -.003, .004, 0])
    run = with_evals(make_run(tmp_path, reward=reward, config={"max_steps": N}).path, "accuracy", 20, evals)
    d = diagnose(run)
    assert d.run.state == "finished" and d.reward.slowing
    v = verdict(run)
    assert v.decision == "continue" and "extend" in v.headline.lower()
    # the same run with an eval that has stopped setting new highs keeps its final weights
    flat = np.minimum(evals, 0.55)
    flat[-4:] = [0.55, 0.548, 0.551, 0.549]
    run = with_evals(make_run(tmp_path / "b", reward=reward, config={"max_steps": N}).path, "accuracy", 20, flat)
    assert verdict(run).decision == "stop"


def test_a_held_out_mean_reward_flat_over_a_dozen_evaluations_does_not_transfer_a_rising_reward(tmp_path):
    reward = 0.42 + 0.2 * STEPS / N + ar1(74, N, 0.3, 0.04)
    held_out = np.array([0.288, 0.34, 0.294, 0.278, 0.324, 0.292, 0.304, 0.336, 0.32, 0.296, 0.276, 0.286, 0.282,
                         0.326])
    run = with_evals(make_run(tmp_path, reward=reward).path, "reward", 20, held_out)
    assert "eval_not_transferring" in {f.kind for f in diagnose(run).findings}
    assert verdict(run).decision == "stop"


def test_a_custom_loops_policy_entropy_and_reference_kl_are_read(tmp_path):
    entropy = np.where(STEPS < 250, 0.4, 0.4 + 2.5 * np.clip((STEPS - 250) / 20, 0, 1)) + ar1(75, N, 0.3, 0.01)
    run = make_run(tmp_path, reward=0.3 + 0.3 * np.minimum(STEPS, 200) / 200 + ar1(76, N, 0.3, 0.02),
                   policy__entropy=entropy, policy__kl_ref=0.02 + 0.001 * ar1(77, N, 0.3, 1.0))
    assert {"entropy", "kl"} <= set(run.metric_names())
    assert "entropy_blow_up" in {f.kind for f in diagnose(run).findings}


def test_one_evaluation_far_below_the_peak_before_it_is_said_and_never_called_within_noise(tmp_path):
    evals = np.array([0.29, 0.33, 0.44, 0.43, 0.48, 0.53, 0.56, 0.58, 0.57, 0.55, 0.57, 0.588, 0.094])
    run = with_evals(make_run(tmp_path, reward=0.4 + 0.2 * STEPS / N + ar1(78, N, 0.3, 0.02)).path, "accuracy",
                     23, evals)
    d = diagnose(run)
    kinds = {f.kind for f in d.eval.findings}
    assert "eval_latest_drop" in kinds and "eval_holding" not in kinds
    assert verdict(run).decision == "continue"  # one evaluation on its own is a reason to look, not to roll back


def test_a_reward_rising_again_but_still_far_below_its_peak_has_a_better_model_behind_it(tmp_path):
    # A resume that loaded the base weights: 0.6 until step 200, back to 0.22, relearning to about 0.4.
    reward = np.where(STEPS < 200, 0.22 + 0.38 * np.minimum(STEPS, 150) / 150, 0.22 + 0.2 * (STEPS - 200) / 100)
    v = verdict(make_run(tmp_path, reward=reward + ar1(79, N, 0.3, 0.02), checkpoints=(100, 150, 200, 250)))
    assert v.decision == "rollback" and v.rollback_step in (150, 200)


def test_a_learning_rate_at_zero_for_the_latest_stretch_stops_a_live_run(tmp_path):
    lr = np.where(STEPS < 150, 1e-6 * (1 - STEPS / 150) + 1.3e-9, 0.0)
    reward = 0.3 + 0.2 * np.minimum(STEPS, 150) / 150 + ar1(80, N, 0.3, 0.015)
    run = make_run(tmp_path, reward=reward, learning_rate=lr, config={"max_steps": 1000})
    d = diagnose(run)
    assert d.learning_signal.updates_stopped_step == 150
    v = verdict(run)
    assert v.decision == "stop" and "step 150" in v.headline


def test_a_learning_rate_printed_at_too_few_decimals_is_not_a_stop(tmp_path):
    lr = np.where(STEPS < 200, 1e-6, 0.0)  # 1e-6 is one unit of the printed precision; below it prints 0
    reward = 0.3 + 0.3 * STEPS / N + ar1(81, N, 0.3, 0.015)
    assert diagnose(make_run(tmp_path, reward=reward, learning_rate=lr)).learning_signal.updates_stopped_step is None


def test_a_reward_service_returning_0_at_the_peak_is_a_stop_but_a_collapse_then_no_gradient_is_a_rollback(tmp_path):
    grad = np.where(STEPS < 200, 0.3, 0.0) + np.where(STEPS < 200, np.abs(ar1(82, N, 0.3, 0.02)), 0.0)
    peak = 0.22 + 0.38 * np.minimum(STEPS, 150) / 150 + ar1(83, N, 0.3, 0.02)
    outage = np.where(STEPS < 200, peak, 0.0)
    v = verdict(make_run(tmp_path, reward=outage, reward_std=np.where(STEPS < 200, 0.4, 0.0), grad_norm=grad))
    assert v.decision == "stop" and "step 200" in v.headline
    # the model fell first (steps 120-200), and only then every group scored 0
    collapse = np.where(STEPS < 120, peak, np.maximum(0.0, 0.6 - 0.6 * (STEPS - 120) / 80))
    collapse = np.where(STEPS < 200, collapse, 0.0)
    v = verdict(make_run(tmp_path / "b", reward=collapse, reward_std=np.where(STEPS < 200, 0.4, 0.0),
                         grad_norm=grad))
    assert v.decision == "rollback" and v.rollback_step is not None and v.rollback_step <= 130


def test_five_logged_rewards_are_too_few_for_any_rollback(tmp_path):
    reward = np.array([0.219, 0.0625, 0.0469, 0.0469, 0.0469])
    v = verdict(make_run(tmp_path, reward=reward, reward_std=np.array([0.3, 0.1, 0.0, 0.0, 0.0])))
    assert v.decision == "continue" and "too early" in v.headline


def test_an_eval_too_noisy_to_show_the_training_gain_is_never_called_not_transferring(tmp_path):
    reward = 0.43 + 0.08 * STEPS / N + ar1(84, N, 0.3, 0.01)  # gained about 0.08
    # 64 problems an evaluation: eval-to-eval noise near 0.1, larger than all the training reward gained
    held_out = np.array([0.39, 0.5, 0.33, 0.45, 0.61, 0.36, 0.42, 0.3, 0.48, 0.41, 0.52, 0.36])
    run = with_evals(make_run(tmp_path, reward=reward).path, "accuracy", 25, held_out)
    assert "eval_not_transferring" not in {f.kind for f in diagnose(run).findings}
    assert verdict(run).decision == "continue"



# --- format independence: the same story read from every format

def _rfs_csv(root, reward: np.ndarray, kl_loss: np.ndarray):
    """A reasoning-from-scratch 7_5 metrics CSV (its `kl_loss` is the KL coefficient times the KL)."""
    root.mkdir(parents=True, exist_ok=True)
    header = "step,total_steps,loss,kl_loss,policy_ratio,reward_avg,tokens_per_sec,avg_response_len"
    rows = [f"{s},650,0.1,{k:.6f},1.0,{r:.6f},20.0,300.0" for s, k, r in zip(STEPS, kl_loss, reward, strict=True)]
    (root / "rlvr_grpo_metrics.csv").write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return load_run(root)


def test_a_coefficient_scaled_kl_that_keeps_growing_on_a_reward_plateau_is_drift_whatever_its_level(tmp_path):
    # KL 0.3 -> 4 nats while the reward levelled off at step 60; rasbt logs kl_loss = 0.02 x KL (0.006 -> 0.08),
    # under the tenth of a nat a KL logged as itself would need. The drift is the same story: stop.
    kl = 0.3 + 3.7 * STEPS / N
    reward = np.minimum(0.55, 0.3 + 0.25 * STEPS / 60) + ar1(80, N, 0.3, 0.03)
    run = _rfs_csv(tmp_path / "rfs", reward, 0.02 * kl + ar1(81, N, 0.3, 0.001))
    d = diagnose(run)
    assert "kl_up_reward_flat" in {f.kind for f in d.kl_reward.findings}
    assert verdict(run).decision == "stop"
    plain = make_run(tmp_path / "trl", reward=reward, kl=kl + ar1(81, N, 0.3, 0.05))
    assert verdict(plain).decision == "stop"


# --- from the holdout7 first read: the best point on a smooth pass rate

def test_a_smooth_pass_rate_is_not_read_finer_than_a_typical_eval_set_allows(tmp_path):
    # Held-out accuracy every 20 steps, averaged (its set size does not show) and so smooth that its own
    # eval-to-eval spread is under the 1% floor (the measurement says nothing about its noise): best 0.366 at
    # 180, 0.354 and 0.352 at 200 and 220, then a slide.
    # 1.4 points below the best is no worse on any eval set of a realistic size: the newest as-good point is 220,
    # and the checkpoint to restore is global 200, not 100.
    reward = np.where(STEPS < 230, 0.3 + 0.15 * STEPS / 230, 0.45 - 0.06 * (STEPS - 230) / 70) + ar1(90, N, 0.3, 0.01)
    evals = np.array([0.2051, 0.2253, 0.2457, 0.2659, 0.2854, 0.3053, 0.3251, 0.3452, 0.3661, 0.3543, 0.3521,
                      0.3489, 0.3352, 0.3211, 0.3063])
    run = with_evals(make_run(tmp_path, reward=reward, checkpoints=(100, 200)).path, "accuracy", 20, evals)
    best = diagnose(run).best_checkpoint
    assert best.basis == "eval" and best.band_kind == "typical_sampling_error"
    assert best.best_step == 220 and best.checkpoint_step == 200
    assert "pass rate on 1,000 problems" in best.reason
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_step == 200
    # A score that is no pass rate keeps its own eval-to-eval noise.
    other = with_evals(make_run(tmp_path / "loss", reward=reward, checkpoints=(100, 200)).path, "reward_score", 20,
                       evals)
    assert diagnose(other).best_checkpoint.band_kind != "typical_sampling_error"


@pytest.mark.parametrize(("pattern", "seed", "steps"),
                         [("pg_loss_sign_reversal", 2, 400), ("kl_up_reward_flat", 3, 400)])
def test_a_scenario_gets_one_verdict_whether_its_rows_average_ten_steps_or_log_one(tmp_path, pattern, seed, steps):
    # Scenarios whose verdict used to depend on the format: a decline of about 0.1 from a peak that per-step rows
    # showed past the best-of-many bar and TRL's ten-step means did not (the reward's own falling trend since the
    # peak is the second witness now), and a KL drift read from reasoning-from-scratch's coefficient-scaled KL.
    from assessor.evals.cases import Generated
    from assessor.evals.generate import write_run

    decisions = {}
    for fmt, logging_steps in (("trl_state", 10), ("tensorboard", 10), ("jsonl", 1), ("csv", 1)):
        spec = Generated(pattern=pattern, format=fmt, seed=seed, steps=steps, logging_steps=logging_steps,
                         options={"prompts": 8, "num_generations": 8})
        decisions[fmt] = verdict(load_run(write_run(spec, tmp_path / fmt))).decision
    assert len(set(decisions.values())) == 1, decisions


# --- from the holdout8 first read

def test_nemo_rl_group_shares_at_0_and_1_are_the_zero_spread_fraction_and_show_saturation(tmp_path):
    # A 0..1 reward at 0.97 from the first step, 60% of prompts all correct and 1% all wrong (NeMo-RL logs the
    # shares in percent): the model starts at the task's ceiling and there is nothing to learn.
    reward = 0.968 + ar1(100, N, 0.3, 0.004)
    run = make_run(tmp_path, reward=reward, baseline_reward__pct_0=1.0 + ar1(101, N, 0.3, 0.3),
                   baseline_reward__pct_1=60.0 + ar1(102, N, 0.3, 2.0))
    zero = run.series("reward_zero_std_frac")
    assert len(zero) == N and 0.55 < float(zero.median()) < 0.7
    assert verdict(run).decision == "stop"


def test_a_learning_rate_that_never_leaves_a_billionth_is_a_stop_with_the_initial_weights(tmp_path):
    lr = 1e-14 * STEPS  # a warm-up spanning millions of steps: 3e-12 by step 300
    reward = 0.31 + ar1(103, N, 0.5, 0.02)
    run = make_run(tmp_path, reward=reward, learning_rate=lr, kl=1e-6 + ar1(104, N, 0.3, 1e-7))
    v = verdict(run)
    assert v.decision == "stop" and "initial ones" in v.headline
    normal = make_run(tmp_path / "normal", reward=reward, learning_rate=1e-6 + 0 * lr)
    assert "updates_stopped" not in {f.kind for f in diagnose(normal).findings}


def test_almost_every_group_alike_in_both_halves_is_no_learning_signal_whatever_the_odd_lucky_group_adds(tmp_path):
    # Every completion cut at a 256-token cap: reward about 0.002 (a lucky group now and then), 99% of groups alike
    # from the first step. The reward's best stretch is twice its first one, but nothing is being learnt: stop.
    rng = np.random.default_rng(105)
    reward = rng.binomial(1, 0.3, N) * rng.uniform(0.0, 0.008, N)
    zero = np.clip(0.992 + ar1(106, N, 0.3, 0.004), 0, 1)
    run = make_run(tmp_path, reward=reward, frac_reward_zero_std=zero, reward_std=0.001 + 0 * reward)
    d = diagnose(run)
    assert d.learning_signal.never_learned
    assert verdict(run).decision == "stop"


def test_a_reward_flat_for_longer_than_it_climbed_has_converged_unless_the_eval_still_climbs(tmp_path):
    # PPO at a KL equilibrium: the score climbed for 80 steps and has been flat for 220 since, KL steady.
    reward = np.minimum(1.1, -0.3 + 1.4 * STEPS / 80) + ar1(110, N, 0.3, 0.05)
    kl = np.minimum(6.0, 6.0 * STEPS / 80) + ar1(111, N, 0.3, 0.05)
    run = make_run(tmp_path / "flat", reward=reward, kl=kl)
    assert "reward_converged" in {f.kind for f in diagnose(run).reward.findings}
    assert verdict(run).decision == "stop"
    # Still climbing at a steady rate: no plateau, so no convergence.
    rising = make_run(tmp_path / "rising", reward=-0.3 + 1.4 * STEPS / N + ar1(112, N, 0.3, 0.05), kl=kl)
    assert "reward_converged" not in {f.kind for f in diagnose(rising).reward.findings}
    assert verdict(rising).decision == "continue"
    # The same plateau while a held-out eval still sets clear new highs: the model is still getting better.
    evals = np.linspace(0.30, 0.52, 15)
    climbing = with_evals(make_run(tmp_path / "eval", reward=reward, kl=kl).path, "accuracy", 20, evals)
    assert verdict(climbing).decision == "continue"


def test_a_plateaus_slight_drift_that_the_trend_test_calls_falling_is_still_the_plateau(tmp_path):
    # Logged every 10 steps: the reward climbed to 0.58 by step 600 and has sat there for 800 steps, drifting down
    # 0.012 (about one noise unit) over the latest 600: the rank test calls that "falling", a reader sees a flat
    # line. It is a converged run (stop), not a falling one waiting to be watched (continue).
    n = 140
    t = np.arange(1, n + 1)
    rng = np.random.default_rng(9)
    reward = np.minimum(0.58, 0.3 + 0.28 * t / 60) - 0.012 * np.clip((t - 80) / 60, 0, None) + rng.normal(0, 0.015, n)
    run = make_run(tmp_path, reward=reward, interval=10)
    d = diagnose(run)
    assert d.signals["reward_mean"].trend == "falling"
    kinds = {f.kind for f in d.reward.findings}
    assert "reward_converged" in kinds and "reward_falling" not in kinds
    assert verdict(run).decision == "stop"


def test_a_converged_reward_is_not_spent_while_a_few_evaluations_still_visibly_rise_to_a_new_best(tmp_path):
    # The training pass rate held down by a hotter sampling schedule, flat for 220 steps; the greedy held-out score,
    # nine evaluations of 500 problems, goes 0.47 -> 0.62, noisy, its latest the best: too few evaluations for the
    # trend test, but a rise a reader sees. Still improving: continue.
    reward = np.minimum(1.1, -0.3 + 1.4 * STEPS / 80) + ar1(110, N, 0.3, 0.05)
    kl = np.minimum(6.0, 6.0 * STEPS / 80) + ar1(111, N, 0.3, 0.05)
    evals = np.array([0.466, 0.508, 0.504, 0.528, 0.598, 0.552, 0.566, 0.55, 0.618])
    run = with_evals(make_run(tmp_path / "eval", reward=reward, kl=kl).path, "accuracy", 33, evals)
    assert "reward_converged" in {f.kind for f in diagnose(run).reward.findings}
    assert verdict(run).decision == "continue"
    # The same evaluations with the latest back at the plateau: no visible rise, so the plateau is the answer.
    flat = with_evals(make_run(tmp_path / "flat", reward=reward, kl=kl).path, "accuracy", 33,
                      np.array([0.466, 0.508, 0.504, 0.528, 0.598, 0.552, 0.566, 0.55, 0.556]))
    assert verdict(flat).decision == "stop"


def test_a_run_spent_by_kl_drift_whose_eval_fell_two_noise_units_from_a_sharp_best_rolls_back_to_it(tmp_path):
    # The reward levelled off at step 160 while KL climbs 25-fold; the held-out pass rate climbed to 0.406 at step 250
    # (a sharp peak at the top of a steep climb, which the decline test reads with the lower evaluation before it)
    # and has fallen at every evaluation since: 0.384, 0.376, 0.326. Stopping would keep weights clearly worse than
    # those of step 250: roll back there. With the latest evaluations holding at the peak, the stop stands.
    n = 400
    t = np.arange(1, n + 1)
    reward = np.minimum(0.62, 0.2 + 0.42 * t / 160) + ar1(120, n, 0.3, 0.02)
    kl = 0.03 + 0.75 * np.clip((t - 100) / 300, 0, None) ** 1.5 + ar1(121, n, 0.3, 0.005)
    climb = [0.23, 0.266, 0.312, 0.36, 0.406]
    fell = with_evals(make_run(tmp_path / "fell", reward=reward, kl=kl).path, "accuracy", 50,
                      np.array([*climb, 0.384, 0.376, 0.326]))
    assert "eval_declining" not in {f.kind for f in diagnose(fell).findings}
    v = verdict(fell)
    assert v.decision == "rollback" and v.rollback_step == 250
    held = with_evals(make_run(tmp_path / "held", reward=reward, kl=kl).path, "accuracy", 50,
                      np.array([*climb, 0.398, 0.41, 0.402]))
    assert verdict(held).decision == "stop"


def test_a_collapse_in_the_last_few_hundred_steps_of_a_long_run_is_a_decline_not_a_rise(tmp_path):
    # 8,000 steps logged one by one, the reward still creeping up, then in the last 200 steps it falls by 0.3 while
    # entropy blows up. A tenth of the run is 800 steps: the collapse is a quarter of the latest tenth, and the
    # trend window (the latest third) still reads "rising". Read at a finer scale it is a decline, dated where it
    # fell, and the run goes back to before it; the same run without the collapse is left to climb.
    n = 8000
    t = np.arange(1, n + 1)
    rng = np.random.default_rng(5)
    base = 0.45 + 0.25 * (1 - np.exp(-t / 2500))
    fall = 0.3 * np.clip((t - (n - 200)) / 60, 0, 1)
    blow_up = 2.0 * np.clip((t - (n - 200)) / 100, 0, 1)
    run = make_run(tmp_path / "collapse", reward=base - fall + rng.normal(0, 0.03, n),
                   entropy=0.4 - 0.05 * t / n + blow_up + rng.normal(0, 0.01, n))
    d = diagnose(run)
    declined = next(f for f in d.reward.findings if f.kind == "reward_peaked_then_declined")
    assert "rising again" not in declined.observation and "over the latest" in declined.observation
    assert d.reward.fall_step is not None and d.reward.fall_step > n - 200
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_step is not None and n - 1000 <= v.rollback_step <= n - 200
    healthy = make_run(tmp_path / "healthy", reward=base + rng.normal(0, 0.03, n),
                       entropy=0.4 - 0.05 * t / n + rng.normal(0, 0.01, n))
    assert verdict(healthy).decision == "continue"


def test_a_gold_reward_models_held_out_score_is_read_and_outranks_the_proxy(tmp_path):
    # Proxy reward rising throughout; the gold RM scored every 25 steps peaks at step 125 and falls.
    reward = -0.5 + 2.5 * STEPS / N + ar1(113, N, 0.3, 0.05)
    gold = np.array([0.05, 0.25, 0.42, 0.55, 0.62, 0.61, 0.58, 0.52, 0.47, 0.43, 0.40, 0.36])
    run = with_evals(make_run(tmp_path, reward=reward).path, "gold_rm_mean", 25, gold)
    run = with_evals(run.path, "reward_mean", 25, np.linspace(0.0, 2.0, 12))
    d = diagnose(run)
    assert d.eval.metric == "gold_rm_mean"
    v = verdict(run)
    assert v.decision == "rollback" and 100 <= (v.rollback_step or 0) <= 150


def _dpo_with_evals(root, accuracy: np.ndarray, margin: np.ndarray, loss: np.ndarray):
    n = 600
    steps = np.arange(1, n + 1)
    run = make_run(root, loss=np.maximum(0.1, 0.69 - 0.5 * steps / n) + ar1(120, n, 0.3, 0.01),
                   rewards__margins=0.3 + 2.0 * steps / n + ar1(121, n, 0.3, 0.05),
                   rewards__accuracies=np.minimum(0.9, 0.55 + 0.4 * steps / n) + ar1(122, n, 0.3, 0.02),
                   config={"max_steps": 1200, "beta": 0.1})
    run = with_evals(run.path, "rewards/accuracies", 100, accuracy)
    run = with_evals(run.path, "rewards/margins", 100, margin)
    return with_evals(run.path, "loss", 100, loss)


def test_a_held_out_plateau_is_no_plateau_while_another_held_out_measure_sets_new_highs(tmp_path):
    accuracy = np.array([0.621, 0.675, 0.701, 0.715, 0.711, 0.713])
    # The held-out margin still sets clear new highs: the model still improves on held-out pairs.
    rising = _dpo_with_evals(tmp_path / "rising", accuracy, np.array([0.74, 1.12, 1.35, 1.35, 1.36, 1.47]),
                             np.array([0.603, 0.559, 0.531, 0.533, 0.527, 0.523]))
    assert "eval_plateau" not in {f.kind for f in diagnose(rising).eval.findings}
    assert verdict(rising).decision == "continue"
    # Everything held-out stands still for four evaluations over as long as it climbed: converged on what matters.
    flat = _dpo_with_evals(tmp_path / "flat", accuracy, np.array([0.16, 0.47, 0.62, 0.63, 0.61, 0.57]),
                           np.array([0.658, 0.612, 0.580, 0.580, 0.581, 0.576]))
    assert "eval_plateau" in {f.kind for f in diagnose(flat).eval.findings}
    assert verdict(flat).decision == "stop"


# --- from the holdout9 first read

def test_a_penalised_return_falling_under_a_0_1_verifier_reward_is_no_over_optimisation(tmp_path):
    # REINFORCE++ with the KL in the reward: the return (reward minus beta x KL summed over ~700 tokens) falls as
    # KL grows, while the verifier's pass rate keeps rising. A rule-based 0..1 score cannot be over-optimised.
    kl = 0.06 * STEPS / N + ar1(130, N, 0.3, 0.002)
    score = 0.22 + 0.26 * STEPS / N + ar1(131, N, 0.3, 0.03)
    run = make_run(tmp_path, reward=score, **{"objective/rlhf_reward": score - 0.02 * 700 * kl, "kl": kl})
    assert not diagnose(run).reward.shaped_declined
    assert verdict(run).decision == "continue"


def test_a_strict_check_logged_beside_the_lenient_one_the_policy_is_trained_on_is_the_held_out_measure(tmp_path):
    # The eval total is the lenient boxed check alone (strict_match is logged with weight 0): the lenient check
    # climbs as the policy learns to list several boxed answers, the strict one peaks at step 500 and falls.
    reward = 0.45 + 0.4 * STEPS / N + ar1(132, N, 0.3, 0.02)
    lenient = np.array([0.471, 0.496, 0.525, 0.554, 0.572, 0.58, 0.6, 0.669, 0.684, 0.768, 0.866, 0.866])
    strict = np.array([0.444, 0.494, 0.504, 0.496, 0.578, 0.532, 0.554, 0.514, 0.534, 0.41, 0.424, 0.388])
    run = make_run(tmp_path, reward=reward, checkpoints=(100, 200))
    run = with_evals(run.path, "reward", 25, lenient)
    run = with_evals(run.path, "rewards/boxed_match/mean", 25, lenient)
    run = with_evals(run.path, "rewards/strict_match/mean", 25, strict)
    d = diagnose(run)
    assert d.eval.metric is not None and "strict_match" in d.eval.metric
    assert verdict(run).decision == "rollback"


def test_the_best_point_names_the_eval_set_size_its_sampling_error_was_read_from(tmp_path):
    # Pass rates on 500 problems (multiples of 1/500): the band is one sampling error and says which set size.
    reward = 0.3 + 0.3 * STEPS / N + ar1(140, N, 0.3, 0.02)
    evals = np.array([180, 230, 228, 275, 262, 290, 262, 265, 232, 240, 206, 221]) / 500
    run = with_evals(make_run(tmp_path, reward=reward).path, "accuracy", 25, evals)
    best = diagnose(run).best_checkpoint
    assert best.band_kind == "sampling_error" and best.eval_set_size == 500


def test_kl_reward_spans_quote_level_moves_with_the_tables_sign(tmp_path):
    # KL climbs and falls back part of the way; reward rises: each span's KL move has the sign of the smoothed
    # levels' difference across it (a sum of slices' fitted changes could carry the other sign).
    kl = np.where(STEPS < 200, 0.003 + 0.009 * STEPS / 200, 0.012 - 0.004 * (STEPS - 200) / 100)
    kl = kl + ar1(150, N, 0.3, 0.002)
    reward = 0.2 + 0.25 * np.minimum(1, STEPS / 150) + ar1(151, N, 0.3, 0.03)
    run = make_run(tmp_path, reward=reward, kl=kl)
    d = diagnose(run)
    from assessor.diagnose import robust

    kl_series = robust.prepare(run.series("kl").index.to_numpy(), run.series("kl").to_numpy())
    for span in d.kl_reward.timeline:
        level_move = robust.level_at(kl_series, span.end_step) - robust.level_at(kl_series, span.start_step)
        assert span.kl_change == pytest.approx(level_move)


# --- a lurch that passed but left damage; an eval from before a fall (holdout8's 22k-step collapse)

def _lurch_run(tmp_path, recovers: bool):
    """A 0..1 reward up to 0.7 by step 200, held; at step 400 KL jumps 15x for 60 steps and eases back by 520."""
    n = 600
    steps = np.arange(1, n + 1)
    kl = 0.02 + np.where((steps >= 400) & (steps < 460), 0.28, 0.0)
    kl = kl + np.where((steps >= 460) & (steps < 520), 0.28 * (520 - steps) / 60, 0.0) + ar1(61, n, 0.3, 0.001)
    reward = 0.2 + 0.5 * np.clip(steps / 200, 0, 1)
    fall = np.clip((steps - 400) / 40, 0, 1) * 0.3
    back = np.clip((steps - 440) / 60, 0, 1) * (0.3 if recovers else 0.1)
    reward = reward - fall + back + ar1(62, n, 0.3, 0.03)
    evals = np.where(np.arange(1, 13) * 50 <= 400, 0.6, 0.6 if recovers else 0.48)  # the eval at step 400 is still good
    run = make_run(tmp_path, reward=reward, kl=kl, checkpoints=tuple(range(50, n + 1, 50)))
    return with_evals(run.path, "accuracy", 50, evals)


def test_a_kl_lurch_that_eased_back_but_left_the_reward_lower_holds_the_best_point_before_it(tmp_path):
    run = _lurch_run(tmp_path, recovers=False)
    d = diagnose(run)
    lurch = [f for f in d.kl_reward.findings if f.kind == "kl_jump"]
    assert lurch and lurch[0].steps[0] in (399, 400), [f.observation for f in d.kl_reward.findings]
    assert "damage stayed" in lurch[0].observation
    assert d.best_checkpoint.breakage_step == lurch[0].steps[0]
    v = verdict(run)
    assert v.decision == "rollback"
    assert v.rollback_step is not None and v.rollback_step < 400  # the checkpoint saved at the jump is the broken one
    assert v.rollback_checkpoint == "checkpoint-350"


def test_a_kl_lurch_the_reward_recovered_from_is_no_breakage(tmp_path):
    d = diagnose(_lurch_run(tmp_path, recovers=True))
    assert not [f for f in d.kl_reward.findings if f.kind == "kl_jump"]
    assert d.best_checkpoint.breakage_step is None


def test_an_eval_taken_before_the_reward_fell_does_not_vouch_for_the_fall(tmp_path):
    # The reward peaks around step 200 and falls from 250; the last evaluation (step 240, at its best) was taken
    # while the reward was still up: it has not seen the fall, so it cannot call it noise.
    reward = np.where(STEPS < 150, 0.2 + 0.5 * STEPS / 150, 0.7) - 0.35 * np.clip((STEPS - 250) / 30, 0, 1)
    evals = 0.3 + 0.06 * np.arange(1, 5)  # steps 60, 120, 180, 240
    run = with_evals(make_run(tmp_path, reward=reward + ar1(63, N, 0.3, 0.02)).path, "accuracy", 60, evals)
    d = diagnose(run)
    assert d.reward.fall_step is not None and d.reward.fall_step > 240
    assert verdict(run).decision == "rollback"


def test_a_kl_reward_span_over_a_collapse_and_partial_recovery_is_cut_at_the_low_point(tmp_path):
    # The run is read in six slices of 100 steps; one holds a collapse at 310 and a partial recovery by 380. Whole,
    # that slice reads "reward up" (mostly rising) while its move is a loss: cut at the low point it reads both.
    steps = np.arange(1, 601)
    reward = 0.2 + 0.5 * np.clip(steps / 200, 0, 1) - 0.4 * np.clip((steps - 310) / 10, 0, 1)
    reward = reward + 0.3 * np.clip((steps - 320) / 60, 0, 1) + ar1(64, 600, 0.3, 0.02)
    d = diagnose(make_run(tmp_path, reward=reward, kl=0.05 + ar1(65, 600, 0.3, 0.002)))
    noise = d.signals["reward_mean"].noise
    for span in d.kl_reward.timeline:
        if span.quadrant.endswith("reward_up"):
            assert span.reward_change > -noise, span
        if span.quadrant.endswith("reward_down"):
            assert span.reward_change < noise, span
    assert any(s.quadrant.endswith("reward_down") and s.end_step < 330 for s in d.kl_reward.timeline)


def test_a_collapse_with_a_partial_recovery_is_a_decline_at_every_scale(tmp_path):
    # Up to 0.7 by step 200, held to 400, down to 0.4 by 440 and back to 0.5 by 500. Read over thirds of the run,
    # the best stretch (205-404) touches the latest (401-600) by a few points; that must not hide the fall.
    n = 600
    steps = np.arange(1, n + 1)
    reward = 0.2 + 0.5 * np.clip(steps / 200, 0, 1) - 0.3 * np.clip((steps - 400) / 40, 0, 1)
    reward = reward + 0.1 * np.clip((steps - 440) / 60, 0, 1) + ar1(62, n, 0.3, 0.03)
    run = make_run(tmp_path, reward=reward, checkpoints=tuple(range(50, n + 1, 50)))
    d = diagnose(run)
    assert any(f.kind == "reward_peaked_then_declined" for f in d.reward.findings)
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_step is not None and 200 <= v.rollback_step < 400


def _entropy_lurch_run(tmp_path, evals: np.ndarray | None = None):
    """No KL logged (TRL's default); entropy doubles at step 400 for 60 steps and eases back; the reward falls
    from 0.7 to 0.4 and gets back only to 0.5."""
    n = 600
    steps = np.arange(1, n + 1)
    entropy = 0.4 + np.where((steps >= 400) & (steps < 460), 0.8, 0.0)
    entropy = entropy + np.where((steps >= 460) & (steps < 520), 0.8 * (520 - steps) / 60, 0.0) + ar1(66, n, 0.3, 0.01)
    reward = 0.2 + 0.5 * np.clip(steps / 200, 0, 1) - 0.3 * np.clip((steps - 400) / 40, 0, 1)
    reward = reward + 0.1 * np.clip((steps - 440) / 60, 0, 1) + ar1(62, n, 0.3, 0.03)
    run = make_run(tmp_path, reward=reward, entropy=entropy, checkpoints=tuple(range(50, n + 1, 50)))
    return run if evals is None else with_evals(run.path, "accuracy", 50, evals)


def test_an_entropy_lurch_that_left_the_reward_lower_holds_the_best_point_before_it(tmp_path):
    # The eval taken at step 400 still reads as good; the training metrics say the policy lurched there.
    run = _entropy_lurch_run(tmp_path, evals=np.where(np.arange(1, 13) * 50 <= 400, 0.6, 0.48))
    d = diagnose(run)
    assert any(f.kind == "entropy_lurch" for f in d.entropy.findings)
    assert d.best_checkpoint.breakage_step is not None and 399 <= d.best_checkpoint.breakage_step <= 400
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_checkpoint == "checkpoint-350"


def test_an_entropy_lurch_the_held_out_eval_rose_through_is_no_breakage(tmp_path):
    # A planned step up in sampling temperature: hotter samples score lower in training, the greedy eval improves.
    run = _entropy_lurch_run(tmp_path, evals=0.4 + 0.02 * np.arange(1, 13))
    assert diagnose(run).best_checkpoint.breakage_step is None


def test_a_spike_on_the_newest_logged_step_is_not_said_to_have_recovered(tmp_path):
    kl = 0.02 + ar1(67, N, 0.3, 0.001)
    kl[-1] = 0.3
    reward = 0.2 + 0.5 * np.clip(STEPS / 150, 0, 1) + ar1(68, N, 0.3, 0.02)
    spikes = [f for f in diagnose(make_run(tmp_path, reward=reward, kl=kl)).findings if f.kind == "spike_outlier"]
    assert spikes and f"at step {N}" in spikes[0].observation
    assert "recovered" not in spikes[0].observation and "not known yet" in spikes[0].observation


# --- fp16 loss scaling: skipped updates are not divergence (holdout10's first read)

def _fp16_run(tmp_path, diverge_from: int | None, skip_from: int | None):
    """Reward up to 0.5 by step 150 then flat; grad_norm NaN on steps 1-4 (the loss scale's first search)."""
    n = 400
    steps = np.arange(1, n + 1)
    reward = 0.2 + 0.3 * np.clip(steps / 150, 0, 1) + ar1(69, n, 0.3, 0.02)
    loss = 0.01 * ar1(70, n, 0.3, 1.0)
    grad = 0.4 + ar1(71, n, 0.3, 0.02)
    grad[:4] = np.nan
    if skip_from is not None:
        grad[skip_from - 1:] = np.nan
    if diverge_from is not None:
        grad[diverge_from - 1:] = np.nan
        loss[diverge_from - 1:] = np.nan
        reward[diverge_from - 1:] = np.nan
    return make_run(tmp_path, reward=reward, loss=loss, grad_norm=grad, checkpoints=tuple(range(50, n + 1, 50)))


def test_gradient_norms_that_overflow_on_every_step_while_the_loss_stays_finite_are_skipped_updates(tmp_path):
    run = _fp16_run(tmp_path, diverge_from=None, skip_from=301)
    d = diagnose(run)
    assert d.run.state != "crashed"
    assert d.learning_signal.updates_stopped_step == 301
    assert not any(f.kind == "nonfinite" and f.severity == "critical" for f in d.findings)
    v = verdict(run)
    assert v.decision == "stop", v.headline


def test_a_divergence_is_dated_from_its_final_run_of_nans_not_the_loss_scales_first_search(tmp_path):
    run = _fp16_run(tmp_path, diverge_from=301, skip_from=None)
    d = diagnose(run)
    assert d.run.state == "crashed"
    assert d.best_checkpoint.breakage_step == 301
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_checkpoint in ("checkpoint-250", "checkpoint-300")


def test_a_30_problem_benchmark_swinging_beside_a_rising_500_problem_one_is_read_second(tmp_path):
    # AIME-sized scores (multiples of 1/30) with a lucky high and two low draws; MATH-500-sized scores rising.
    # The finer benchmark says whether the model got better; the coarse one's swing is its sampling noise.
    reward = 0.3 + 0.3 * np.clip(STEPS / 250, 0, 1) + ar1(74, N, 0.3, 0.02)
    run = make_run(tmp_path, reward=reward, checkpoints=tuple(range(50, N + 1, 50)))
    aime = np.array([3, 2, 2, 3, 5, 4, 3, 4, 5, 8, 4, 3]) / 30  # steps 25 ... 300
    with_evals(run.path, "accuracy", 25, aime)
    math500 = np.round((0.52 + 0.13 * np.clip(np.arange(1, 13) / 10, 0, 1) + np.random.default_rng(75).normal(
        0, 0.012, 12)) * 500) / 500
    run = with_evals(run.path, "math500_accuracy", 25, math500)
    d = diagnose(run)
    assert d.eval.metric == "math500_accuracy", d.eval.metric
    assert not d.best_checkpoint.behind
    assert verdict(run).decision == "continue"


def test_a_benchmark_of_similar_size_collapsing_beside_a_holding_one_still_chooses_the_best_point(tmp_path):
    reward = 0.3 + 0.3 * np.clip(STEPS / 250, 0, 1) + ar1(76, N, 0.3, 0.02)
    run = make_run(tmp_path, reward=reward, checkpoints=tuple(range(50, N + 1, 50)))
    steady = np.round((0.55 + np.random.default_rng(77).normal(0, 0.01, 12)) * 500) / 500
    with_evals(run.path, "accuracy", 25, steady)
    falling = np.array([161, 181, 199, 209, 213, 211, 207, 179, 151, 129, 113, 101]) / 400  # a 400-problem set
    d = diagnose(with_evals(run.path, "code_accuracy", 25, falling))
    assert d.best_checkpoint.behind and d.best_checkpoint.best_step is not None and d.best_checkpoint.best_step <= 175


def test_an_entropy_summed_over_the_completion_is_no_blow_up_when_completions_grow(tmp_path):
    # TRL's PPOv2-style `objective/entropy` sums over the completion: it doubles when lengths double. Logged beside
    # the per-token `policy/entropy_avg`, the per-token one is read; alone, no per-token test applies to it.
    reward = 0.2 + 0.5 * np.clip(STEPS / 200, 0, 1) + ar1(78, N, 0.3, 0.02)
    length = 230 + 320 * np.clip(STEPS / 250, 0, 1)
    summed = 1.5 * length * (1 - 0.3 * STEPS / N) + ar1(79, N, 0.3, 5.0)
    per_token = 1.5 * (1 - 0.3 * STEPS / N) + ar1(80, N, 0.3, 0.02)
    both = diagnose(make_run(tmp_path / "both", reward=reward, objective__entropy=summed,
                             policy__entropy_avg=per_token, response_length_mean=length))
    assert both.entropy.start is not None and both.entropy.start < 2
    alone = diagnose(make_run(tmp_path / "alone", reward=reward, objective__entropy=summed,
                              response_length_mean=length))
    assert not any(f.kind == "entropy_blow_up" for f in alone.findings)


def test_a_run_resumed_into_a_new_log_is_read_from_its_first_step(tmp_path):
    # The first launch wrote log.jsonl to step 100; the resume from checkpoint 90 writes log_resume.jsonl. The file
    # that reaches furthest holds only steps 90-200; the run's first 89 steps are in the other.
    import json

    tmp_path.mkdir(exist_ok=True)
    first = [{"step": s, "reward": 0.2 + 0.004 * s, "kl": 0.01} for s in range(1, 101)]
    resumed = [{"step": s, "reward": 0.6 - 0.002 * (s - 90) + 0.001, "kl": 0.02} for s in range(90, 201)]
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in first), encoding="utf-8")
    (tmp_path / "log_resume.jsonl").write_text("".join(json.dumps(r) + "\n" for r in resumed), encoding="utf-8")
    run = load_run(tmp_path)
    reward = run.series("reward_mean")
    assert int(reward.index[0]) == 1 and int(reward.index[-1]) == 200 and len(reward) == 200
    assert reward[95] == pytest.approx(0.6 - 0.002 * 5 + 0.001)  # where both logged a step, the newer file's value
    assert reward[50] == pytest.approx(0.4)


# --- a reward that changed its scale, not its model (holdout10: normalisation switched on at a resume, a reward
# model refreshed every few hundred steps)

def _rescaled_run(tmp_path, broken: bool):
    """Reward up from 0.2 to 0.7 by step 300; at step 400 it steps to 0.1 in one update (a new scale) and climbs
    on from there. KL, entropy and length run on unbroken, unless `broken` (then entropy doubles and KL jumps)."""
    n = 600
    steps = np.arange(1, n + 1)
    reward = np.where(steps < 400, 0.2 + 0.5 * np.clip(steps / 300, 0, 1), 0.1 + 0.3 * (steps - 400) / 200)
    reward = reward + ar1(81, n, 0.3, 0.02)
    kl = 0.01 + 0.05 * steps / n + ar1(82, n, 0.3, 0.002)
    entropy = 0.5 - 0.1 * steps / n + ar1(83, n, 0.3, 0.01)
    length = 300 + 50 * steps / n + ar1(84, n, 0.3, 5.0)
    if broken:
        entropy = np.where(steps >= 400, entropy * 2.5, entropy)
        kl = np.where(steps >= 400, kl * 8, kl)
    return make_run(tmp_path, reward=reward, kl=kl, entropy=entropy, completion_length=length,
                    checkpoints=tuple(range(50, n + 1, 50)))


def test_a_reward_that_steps_to_a_new_scale_with_the_policy_unbroken_is_read_from_the_step_on(tmp_path):
    run = _rescaled_run(tmp_path, broken=False)
    d = diagnose(run)
    assert any(f.kind == "reward_rescaled" for f in d.findings)
    assert d.best_checkpoint.behind is False
    assert verdict(run).decision == "continue"
    # the sheet's table says its reward row is read on the new scale (a reader met a start and a peak that quietly
    # restarted at the rescale, beside a dashboard curve peaking far above them)
    sheet = summarize(JudgeRequest(run=run, diagnostics=d))
    row = next(line for line in sheet.splitlines() if line.startswith("| reward_mean |"))
    step = next(f.steps[0] for f in d.findings if f.kind == "reward_rescaled")
    assert f"read from step {step}, where the reward's scale changed" in row
    assert "read from step" not in next(line for line in sheet.splitlines() if line.startswith("| kl |"))


def test_a_reward_that_drops_in_one_update_while_the_policy_lurches_is_a_collapse_not_a_rescale(tmp_path):
    run = _rescaled_run(tmp_path, broken=True)
    d = diagnose(run)
    assert not any(f.kind == "reward_rescaled" for f in d.findings)
    assert verdict(run).decision == "rollback"


def test_a_best_point_on_the_latest_evaluation_has_nothing_behind_it(tmp_path):
    # The training reward fell (harder prompts, a stricter reward model) while the held-out eval set a new high at
    # its latest evaluation: the best point is now, and the sheet must not say a better model lies behind.
    reward = rise_then_fall() + ar1(85, N, 0.3, 0.02)
    evals = np.array([0.30, 0.33, 0.36, 0.38, 0.37, 0.40, 0.41, 0.40, 0.42, 0.41, 0.39, 0.43])
    d = diagnose(with_evals(make_run(tmp_path, reward=reward).path, "accuracy", 25, evals))
    best = d.best_checkpoint
    assert best.basis == "eval" and best.best_step == 300
    assert not best.behind


def test_one_lucky_evaluation_on_a_slow_slide_is_not_the_newest_good_point(tmp_path):
    # Plateau at ~0.56 from step 60 to 120, then a slide; the evaluation at 180 scores 0.573 by luck, between 0.537
    # and 0.486. On its own it is within noise of the best; with its neighbours it is already on the way down.
    reward = 0.4 + 0.2 * np.clip(STEPS / 150, 0, 1) + ar1(60, N, 0.3, 0.01)
    evals = np.array([0.431, 0.455, 0.481, 0.519, 0.573, 0.560, 0.550, 0.534, 0.537, 0.573, 0.486, 0.463, 0.449,
                      0.429, 0.415])
    run = with_evals(make_run(tmp_path, reward=reward).path, "pass_rate", 20, evals)
    d = diagnose(run)
    best = d.best_checkpoint
    assert best.basis == "eval" and best.behind
    assert 100 <= best.best_step <= 140, best.reason
    # The sheet says which evaluation was passed over and why, so a reader does not pick it back up.
    assert best.passed_over == [200]
    assert "passed over: the evaluation at step 200" in summarize(JudgeRequest(run=run, diagnostics=d))


def test_the_last_good_evaluation_before_a_collapse_keeps_its_place(tmp_path):
    # A steady climb to 0.589 at step 220, then one collapsed evaluation: the median with its neighbours does not
    # let the collapse pull the last good evaluation down.
    reward = 0.3 + 0.3 * np.clip(STEPS / 220, 0, 1) + ar1(61, N, 0.3, 0.01)
    evals = np.array([0.302, 0.328, 0.359, 0.397, 0.43, 0.467, 0.50, 0.533, 0.566, 0.579, 0.589, 0.454])
    run = with_evals(make_run(tmp_path, reward=reward).path, "pass_rate", 20, evals)
    best = diagnose(run).best_checkpoint
    assert best.best_step == 220, best.reason


def test_a_climb_the_noise_could_have_drawn_is_not_convergence(tmp_path):
    # 67 steps into a slow run: a rise of under one point-noise unit over the first 16 steps, then flat. The recipe
    # has not shown where it levels off; "converged, stop" would end a run that climbs to twice this later.
    steps = np.arange(1, 68)
    reward = 0.255 + 0.023 * np.clip(steps / 16, 0, 1) + ar1(60, len(steps), 0.2, 0.03)
    run = make_run(tmp_path, reward=reward)
    assert "reward_converged" not in {f.kind for f in diagnose(run).findings}
    assert verdict(run).decision == "continue"


def test_a_divergence_is_dated_from_the_gradient_climb_that_led_into_it(tmp_path):
    # Gradient norm ~0.25 until step 180, then doubling every ~8 steps to 6 at step 219, NaN from 220 on.
    g = 0.25 + ar1(63, N, 0.3, 0.03)
    g[180:220] = 0.25 * 2 ** ((STEPS[180:220] - 180) / 8.5)
    loss = 0.05 + ar1(64, N, 0.3, 0.01)
    g[219:], loss[219:] = np.nan, np.nan
    reward = 0.3 + 0.3 * np.clip(STEPS / 200, 0, 1) + ar1(65, N, 0.3, 0.01)
    reward[219:] = np.nan
    run = with_evals(make_run(tmp_path, reward=reward, grad_norm=g, loss=loss, checkpoints=(100, 150, 200)).path,
                     "pass_rate", 50, np.array([0.30, 0.40, 0.45, 0.47]))
    d = diagnose(run)
    climb = only_kind(d.findings, "grad_norm_run_up")
    assert 185 <= climb.steps[0] <= 200, climb.observation
    best = d.best_checkpoint
    assert best.breakage_step == climb.steps[0] and best.best_step == 150
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_step == 150


def only_kind(findings, kind):
    (found,) = [f for f in findings if f.kind == kind]
    return found


def test_a_preference_runs_target_is_no_later_than_its_held_out_loss_was_good(tmp_path):
    # DPO overfitting: held-out loss lowest at step 140 and rising steeply after; held-out accuracy, coarser, tops
    # out at 160 and stays within its noise until ~220. The loss shows the overfitting first.
    margin = 0.3 + 3.0 * STEPS / N + ar1(66, N, 0.3, 0.05)
    run_dir = make_run(tmp_path, rewards__margins=margin, rewards__accuracies=np.clip(0.55 + 0.4 * STEPS / N, 0, 1),
                       loss=0.6 - 0.5 * STEPS / N + ar1(67, N, 0.3, 0.01), checkpoints=(100, 120, 140, 160, 180, 200,
                                                                                      220)).path
    k = np.arange(1, 16)  # evaluations every 20 steps
    eval_loss = np.where(k <= 7, 0.56 - 0.022 * k, 0.406 + 0.09 * (k - 7))
    accuracy = np.array([0.60, 0.65, 0.69, 0.71, 0.715, 0.72, 0.722, 0.724, 0.718, 0.71, 0.70, 0.69, 0.678, 0.666,
                         0.654])
    with (run_dir / "log.jsonl").open("a", encoding="utf-8") as log:
        for i, (lo, acc) in enumerate(zip(eval_loss, accuracy, strict=True), start=1):
            log.write(f'{{"step": {i * 20}, "eval_loss": {lo}, "eval_rewards/accuracies": {acc}}}\n')
    run = load_run(run_dir)
    best = diagnose(run).best_checkpoint
    assert best.basis == "eval" and best.loss_bound_step == 140, best.reason
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_step == 140


def test_an_entropy_collapse_is_dated_from_where_it_collapsed_not_from_the_gentle_decline_before(tmp_path):
    # Entropy eases from 0.68 to 0.5 over 250 steps (a policy learning), then falls by a factor of 25 in 100 steps.
    n = 420
    steps = np.arange(1, n + 1)
    entropy = np.where(steps <= 250, 0.68 - 0.18 * steps / 250, 0.5 * np.exp(-(steps - 250) / 31))
    entropy = np.maximum(entropy, 0.015) * (1 + ar1(68, n, 0.3, 0.02))
    run = make_run(tmp_path, entropy=entropy, reward=0.3 + 0.3 * np.clip(steps / 250, 0, 1) + ar1(69, n, 0.3, 0.01))
    collapse = only_kind(diagnose(run).findings, "entropy_collapse")
    assert collapse.severity == "warning" and 240 <= collapse.steps[0] <= 270, collapse.observation


def test_a_top_evaluation_alone_above_its_neighbours_is_not_the_level_to_match(tmp_path):
    # A plateau near 0.445 from step 240 to 340 (2,000-sample pass rates, sampling error 0.011) with one draw of
    # 0.469 at 280, then a slide. Nothing else is within one sampling error of 0.469; the plateau's newest
    # evaluation is the point as good as the best.
    evals = np.array([0.203, 0.229, 0.251, 0.256, 0.292, 0.304, 0.332, 0.33, 0.349, 0.373, 0.408, 0.413, 0.441,
                      0.433, 0.469, 0.436, 0.451, 0.444, 0.428, 0.43, 0.403, 0.409, 0.397, 0.384, 0.363, 0.371, 0.366])
    counts = np.round(evals * 2000) / 2000  # pass rates on 2,000 problems, as the scores show
    n = 520
    steps = np.arange(1, n + 1)
    reward = 0.3 + 0.2 * np.clip(steps / 300, 0, 1) + ar1(70, n, 0.3, 0.01)
    run_dir = make_run(tmp_path, reward=reward).path
    with (run_dir / "log.jsonl").open("a", encoding="utf-8") as log:
        for k, value in enumerate(counts):
            log.write(f'{{"step": {k * 20}, "eval_accuracy": {value}}}\n')
    best = diagnose(load_run(run_dir)).best_checkpoint
    # 340 is the plateau's newest evaluation; a level-then-falling fit reads its 0.444 (below 320's 0.451) as the
    # slide's first step and dates the turn at 320. Both are on the plateau; nothing before 300 or after 340 is.
    assert best.best_level_median and best.best_step in (320, 340), best.reason
    assert "alone above the evaluations either side" in best.reason


def test_a_resume_that_loaded_the_base_model_is_a_policy_reset(tmp_path):
    # Reward 0.6 and KL 0.08 by step 200; the resume at 200 restored the step count but not the weights: reward is
    # back at 0.25 and KL near 0 in one update, and the run relearns slowly from there.
    reward = np.where(STEPS < 200, 0.25 + 0.35 * np.clip(STEPS / 150, 0, 1), 0.25 + 0.1 * (STEPS - 200) / 100)
    kl = np.where(STEPS < 200, 0.08 * np.clip(STEPS / 150, 0, 1) + 0.002, 0.004 + 0.01 * (STEPS - 200) / 100)
    run = make_run(tmp_path, reward=reward + ar1(71, N, 0.3, 0.02), kl=kl * (1 + ar1(72, N, 0.3, 0.05)))
    d = diagnose(run)
    reset = only_kind(d.findings, "policy_reset")
    assert reset.steps[0] in (200, 201)  # the first step logged on the base weights, within a step's noise
    assert d.best_checkpoint.breakage_step == reset.steps[0]
    v = verdict(run)
    assert v.decision == "rollback" and (v.rollback_step or 0) < 200


def test_the_learning_rate_is_quoted_as_logged_not_smoothed(tmp_path):
    # A linear decay to exactly 0 on the last step: the sheet's "now" for lr is that 0, matching the run state
    # ("decayed to 0"), not a smoothed 1e-8 of the last few values.
    lr = 1e-6 * (1 - STEPS / N)
    run = make_run(tmp_path, reward=0.3 + 0.2 * np.clip(STEPS / 200, 0, 1) + ar1(73, N, 0.3, 0.01), learning_rate=lr)
    d = diagnose(run)
    assert d.run.state == "finished"
    row = d.signals["lr"]
    assert row.now == 0.0 and row.start == lr[0] and row.peak == lr[0] and row.trough == 0.0


def test_an_evaluation_just_below_the_peak_is_said_to_be_below_it_not_near_its_best(tmp_path):
    reward = 0.3 + 0.2 * np.clip(STEPS / 200, 0, 1) + ar1(74, N, 0.3, 0.01)
    evals = np.array([0.10, 0.14, 0.13, 0.18, 0.16, 0.21, 0.19, 0.23, 0.205])
    run = with_evals(make_run(tmp_path, reward=reward).path, "accuracy", 30, evals)
    found = only_kind(diagnose(run).findings, "eval_near_best")
    assert "below its peak" in found.observation and "near its best" not in found.observation


def test_a_gradient_norm_of_exactly_zero_on_every_step_with_differing_groups_is_weights_that_never_moved(tmp_path):
    # LoRA under gradient checkpointing without inputs that require grad: grad_norm 0.0 at every log, the groups'
    # rewards differ (reward_std ~0.35), the reward only samples one unchanging policy.
    n = 30
    reward = 0.36 + ar1(75, n, 0.2, 0.02)
    run = make_run(tmp_path / "frozen", interval=10, reward=reward, reward_std=0.35 + ar1(76, n, 0.2, 0.01),
                   grad_norm=np.zeros(n))
    d = diagnose(run)
    stopped = only_kind(d.findings, "updates_stopped")
    assert "exactly 0 on all 30 logged steps" in stopped.observation
    assert verdict(run).decision == "stop"
    # Said once, with its cause: not again as a share of zero norms with a guessed one ("every group scored alike"),
    # and no best point is named on a curve that only samples the initial weights.
    assert "mostly_zero_gradient" not in {f.kind for f in d.findings}
    assert d.best_checkpoint.basis == "none" and d.best_checkpoint.best_step is None
    # A logger that writes 0 for a norm it cannot read, on a run that learns: the reward rises, nothing is said.
    rising = make_run(tmp_path / "learning", interval=10, reward=0.3 + 0.01 * np.arange(n) + ar1(77, n, 0.2, 0.01),
                      reward_std=0.35 + ar1(78, n, 0.2, 0.01), grad_norm=np.zeros(n))
    assert "updates_stopped" not in {f.kind for f in diagnose(rising).findings}


def test_a_training_reward_near_zero_beside_a_held_out_pass_rate_near_a_half_is_no_learning_signal(tmp_path):
    # The reward cannot read the answers (an extractor mismatch): ~1% on every training batch, while the same
    # policy passes ~48% of 500 held-out problems.
    reward = np.clip(0.012 + ar1(79, N, 0.2, 0.006), 0, 1)
    evals = np.round((0.48 + ar1(80, 12, 0.0, 0.02)) * 500) / 500
    run = with_evals(make_run(tmp_path, reward=reward).path, "accuracy", 25, evals)
    signal = only_kind(diagnose(run).findings, "no_learning_signal")
    assert "held-out accuracy" in signal.observation
    assert verdict(run).decision == "stop"


def test_a_filters_pass_rate_is_not_a_task_measure(tmp_path):
    # OpenRLHF's dynamic_filtering_pass_rate is the share of groups the filter kept; it falls as more groups come
    # back all right, while the model improves. Not a task metric the reward is "bought" against.
    reward = 0.3 + 0.3 * np.clip(STEPS / 250, 0, 1) + ar1(81, N, 0.3, 0.01)
    kept = 0.75 - 0.15 * STEPS / N + ar1(82, N, 0.3, 0.01)
    run = make_run(tmp_path, reward=reward, dynamic_filtering_pass_rate=kept)
    assert "reward_hacking" not in {f.kind for f in diagnose(run).findings}
    assert verdict(run).decision == "continue"


def test_a_30_problem_benchmark_under_the_canonical_eval_name_does_not_outrank_a_500_problem_one(tmp_path):
    # OpenRLHF's console logs eval_aime24_pass1 and eval_math500_pass1, and the first is read as the held-out reward.
    # Its set size (30) shows in its scores, MATH-500's (500) in its own: the finer one says whether the model got
    # better, and AIME's swing of two problems does not choose the best point.
    reward = 0.3 + 0.3 * np.clip(STEPS / 250, 0, 1) + ar1(83, N, 0.3, 0.01)
    aime = np.array([3, 3, 4, 3, 5, 7, 4, 3, 2, 3, 2, 3]) / 30
    math500 = np.round((0.50 + 0.12 * np.arange(12) / 11) * 500) / 500
    lines = []
    for step in STEPS:
        lines.append(f"✨ Global step {step}: {{'reward': {reward[step - 1]:.6f}, 'kl': {0.001 * step / N:.6g}, "
                     f"'actor_lr': 1e-06, 'actor_grad_norm': 0.3}}")
        if step % 25 == 0 and step // 25 <= 12:
            k = step // 25 - 1
            lines.append(f"Evaluation completed in 71.40 seconds, global_step {step}, eval_metrics: "
                         f"{{'eval_aime24_pass1': {aime[k]:.6f}, 'eval_math500_pass1': {math500[k]}}}")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    d = diagnose(run)
    assert d.eval.metric == "math500_pass1", [c.metric for c in d.eval.curves]
    assert verdict(run).decision == "continue"


def test_the_shortest_completions_collapsing_to_nothing_is_said_and_counts_towards_a_rollback(tmp_path):
    # The reward accelerates while the batch's shortest completion falls from ~140 tokens to single digits: an
    # empty answer is being credited. Alone it is a warning to read the completions, not a rollback.
    shortest = np.where(STEPS < 150, 140.0, np.maximum(6.0, 140.0 - 2.0 * (STEPS - 150))) + ar1(84, N, 0.3, 2.0)
    reward = 0.3 + 0.3 * np.clip(STEPS / 300, 0, 1) + ar1(85, N, 0.3, 0.01)
    run = make_run(tmp_path, reward=reward, completions__min_length=np.maximum(shortest, 1.0),
                   completions__mean_length=400 + ar1(86, N, 0.3, 5.0))
    found = only_kind(diagnose(run).findings, "shortest_completions_collapsed")
    assert found.severity == "warning" and 150 <= found.steps[0] <= 230
    assert verdict(run).decision == "continue"  # one instrument alone: watch, read the completions


def test_the_sheets_level_shifts_chain_from_one_to_the_next(tmp_path):
    reward = np.select([STEPS < 80, STEPS < 160, STEPS < 230], [0.2, 0.5, 0.35], 0.7) + ar1(87, N, 0.3, 0.02)
    run = make_run(tmp_path, reward=reward)
    sheet = summarize(JudgeRequest(run=run, diagnostics=diagnose(run)))
    shifts = re.search(r"shifts at ([^;|]*)", sheet)
    assert shifts is not None
    levels = re.findall(r"(-?[\d.]+)→(-?[\d.]+)", shifts.group(1))
    assert len(levels) >= 2
    assert all(after == before for (_, after), (before, _) in itertools.pairwise(levels))


def test_an_eval_decline_on_a_run_with_no_learning_signal_is_not_called_a_better_model_behind_us(tmp_path):
    # The extractor mismatch again, with a lucky early evaluation: the policy had nothing to learn from, so a
    # "peak" at the second evaluation and the evaluations after it are noise, not a model to go back to. The sheet
    # must not say both "nothing was learnt" and "the best model is behind us".
    reward = np.clip(0.012 + ar1(79, N, 0.2, 0.006), 0, 1)
    evals = np.array([0.470, 0.540, 0.480, 0.474, 0.476, 0.478, 0.472, 0.470, 0.476, 0.474, 0.472, 0.476])
    run = with_evals(make_run(tmp_path, reward=reward).path, "accuracy", 25, evals)
    findings = diagnose(run).findings
    assert only_kind(findings, "no_learning_signal").severity == "critical"
    declining = only_kind(findings, "eval_declining")
    assert declining.severity == "watch"
    assert "behind us" not in declining.observation.replace("not a better model behind us", "")
    assert verdict(run).decision == "stop"


def test_an_eval_holding_near_its_peak_quotes_the_comparison_it_made_not_a_bare_within_noise(tmp_path):
    # The last evaluation alone is well below the peak, the last two together are not far enough below the
    # evaluations around it: the finding says which comparison was made, with its multiple of the noise, so a
    # reader does not meet "within noise" beside a peak and a "now" four noise units apart.
    reward = 0.3 + 0.3 * np.clip(STEPS / 250, 0, 1) + ar1(84, N, 0.3, 0.01)
    evals = np.array([0.40, 0.45, 0.50, 0.52, 0.50, 0.54, 0.51, 0.53, 0.52, 0.54, 0.52, 0.48])
    run = with_evals(make_run(tmp_path, reward=reward).path, "accuracy", 25, evals)
    holding = only_kind(diagnose(run).findings, "eval_holding")
    assert "within noise" not in holding.observation
    assert "above the latest two (mean 0.5; now 0.48)" in holding.observation
    assert "short of the 2x a decline needs" in holding.observation


def _rescored_run(tmp_path, jump_at: int | None, burst: bool = False):
    """A reward model swapped at `jump_at`: the training score jumps from ~0.9 to ~1.6 in one update and climbs on,
    with KL, entropy and length running on unbroken, while the held-out score (another judge) peaked at 260 and
    erodes from 320 on. `burst`: instead, five lucky batches at `jump_at` and back to the old level."""
    reward = 0.5 + 0.4 * np.clip(STEPS / 200, 0, 1) + ar1(91, N, 0.3, 0.02)
    if jump_at is not None:
        steps = STEPS  # lower case: ruff reads an upper-case name on the left as a constant (SIM300)
        after = steps >= jump_at
        if burst:
            after &= steps < jump_at + 5
        reward = np.where(after, reward + 0.7 + (0.0 if burst else 0.002 * (STEPS - jump_at)), reward)
    kl = 0.01 + 0.04 * STEPS / N + ar1(92, N, 0.3, 0.002)
    entropy = 0.6 - 0.1 * STEPS / N + ar1(93, N, 0.3, 0.01)
    length = 300 + 40 * STEPS / N + ar1(94, N, 0.3, 5.0)
    evals = np.array([0.40, 0.46, 0.52, 0.56, 0.59, 0.61, 0.62, 0.61, 0.62, 0.62, 0.61, 0.62, 0.62, 0.58, 0.55, 0.53,
                      0.51, 0.50, 0.48, 0.47])
    run = make_run(tmp_path, reward=reward, kl=kl, entropy=entropy, completion_length=length)
    return with_evals(run.path, "reward_mean", 20, evals[: N // 20])


def test_a_reward_that_jumps_in_one_update_with_the_policy_unbroken_was_rescored_and_the_best_point_is_before_it(
        tmp_path):
    # holdout12's swapped reward-model endpoint: the sheet named a best point after the swap (the evaluations just
    # after it were still within noise of the peak), though the run has been trained on another reward since.
    run = _rescored_run(tmp_path / "swapped", jump_at=250)
    d = diagnose(run)
    stepped = only_kind(d.findings, "reward_stepped_up")
    assert stepped.steps[0] in (250, 251) and "the reward itself changed" in stepped.observation  # within a step
    assert d.best_checkpoint.reward_changed_step == stepped.steps[0] and d.best_checkpoint.best_step < 250
    v = verdict(run)
    assert v.decision == "rollback" and (v.rollback_step or 0) < 250
    assert f"what changed in the reward at step {stepped.steps[0]}" in " ".join([v.headline, *v.recommended_actions])
    # The same run without the swap: nothing is said about the reward, and the best point is the newest good one.
    plain = diagnose(_rescored_run(tmp_path / "plain", jump_at=None))
    assert "reward_stepped_up" not in {f.kind for f in plain.findings}
    assert plain.best_checkpoint.reward_changed_step is None and plain.best_checkpoint.best_step >= 250


def test_a_burst_of_lucky_batches_is_not_a_new_reward_level(tmp_path):
    d = diagnose(_rescored_run(tmp_path, jump_at=250, burst=True))
    assert "reward_stepped_up" not in {f.kind for f in d.findings}


def test_held_out_series_named_after_benchmarks_are_read_as_held_out_scores(tmp_path):
    # A custom loop logs `eval_gsm8k`, `eval_math500` and `eval_mmlu_stem` (no "acc" or "score" in the names): they
    # are the benchmarks' pass rates, and the best point is read on them, not on the training reward.
    reward = 0.3 + 0.3 * np.clip(STEPS / 250, 0, 1) + ar1(95, N, 0.3, 0.01)
    gsm8k = np.round((0.55 + 0.2 * np.clip(np.arange(1, 13) / 10, 0, 1)) * 1319) / 1319
    run_dir = make_run(tmp_path, reward=reward).path
    with_evals(run_dir, "math500", 25, np.round((0.40 + 0.1 * np.arange(12) / 11) * 500) / 500)
    with_evals(run_dir, "mmlu_stem", 25, np.full(12, 0.52) + ar1(96, 12, 0.0, 0.01))
    run = with_evals(run_dir, "gsm8k", 25, gsm8k)
    d = diagnose(run)
    assert {c.metric for c in d.eval.curves} == {"eval/gsm8k", "eval/math500", "eval/mmlu_stem"}
    assert d.best_checkpoint.basis == "eval" and d.best_checkpoint.metric == "eval/gsm8k"


def test_a_reward_that_sank_below_its_start_as_truncation_rose_has_its_better_model_behind_it(tmp_path):
    # Logged every 10 steps (TRL's means): reward ~0.30 for the first stretch, then ~0.23 as a fifth and more of
    # the completions run into the 512-token cap. The fall from the start is the decline (below where it started,
    # by more than noise) and the truncation is its mechanism, not only a reason to stop and raise the cap: the
    # early weights score better under this cap, so they are the ones to go back to.
    n = 30
    steps = np.arange(1, n + 1) * 10
    reward = np.where(steps <= 50, 0.30, 0.235) + ar1(98, n, 0.2, 0.03)
    clipped = np.where(steps <= 50, 0.06, np.minimum(0.06 + 0.004 * (steps - 50), 0.4))
    length = 280 + 135 * clipped / 0.4 + ar1(98, n, 0.2, 4.0)
    run = make_run(tmp_path / "cut", interval=10, reward=reward, completions__mean_length=length,
                   completions__clipped_ratio=clipped, completions__max_length=np.full(n, 512.0),
                   checkpoints=(50, 100, 150, 200, 250, 300), config={"max_completion_length": 512})
    kinds = {f.kind: f.severity for f in diagnose(run).findings}
    assert kinds.get("reward_below_start") in ("warning", "critical") and "length_truncation" in kinds
    v = verdict(run)
    assert v.decision == "rollback" and (v.rollback_step or 0) <= 60
    # The same truncation with a reward that holds its level is a reason to stop and raise the cap, no rollback.
    held = make_run(tmp_path / "held", interval=10, reward=0.30 + ar1(98, n, 0.2, 0.03),
                    completions__mean_length=length, completions__clipped_ratio=clipped,
                    completions__max_length=np.full(n, 512.0), checkpoints=(50, 100, 150, 200, 250, 300),
                    config={"max_completion_length": 512})
    assert verdict(held).decision != "rollback"


def test_a_task_reward_component_falling_while_the_total_rises_is_reward_bought_at_the_tasks_expense(tmp_path):
    # holdout13: accuracy (0/1) plus a length penalty; the total rises the whole run because completions get
    # shorter, while the accuracy component peaked around step 150 and fell since. A start-to-now reading calls the
    # task "never moved"; it rose and fell, and the model was better at its peak.
    accuracy = 0.43 + 0.12 * np.clip(STEPS / 150, 0, 1) - 0.1 * np.clip((STEPS - 150) / 150, 0, 1)
    penalty = -0.40 + 0.28 * np.clip((STEPS - 150) / 150, 0, 1)
    accuracy, penalty = accuracy + ar1(99, N, 0.2, 0.01), penalty + ar1(100, N, 0.2, 0.005)
    run = make_run(tmp_path, reward=accuracy + penalty, rewards__accuracy_reward__mean=accuracy,
                   rewards__length_penalty__mean=penalty)
    d = diagnose(run)
    kinds = {f.kind for f in d.findings}
    assert "reward_hacking" in kinds and "task_component_flat" not in kinds
    assert d.best_checkpoint.basis == "task" and d.best_checkpoint.metric == "reward_component/accuracy_reward_mean"
    v = verdict(run)
    assert v.decision == "rollback" and 100 <= (v.rollback_step or 0) <= 170


def test_when_two_held_out_measures_fall_the_one_that_fell_furthest_dates_the_best_point(tmp_path):
    # mean@2 accuracy and best@2 on the same problems: both peak around step 150 and fall; best@2 falls further
    # in its own noise, and the best point is read on it (the accuracy's band reaches past the fall's start).
    reward = 0.3 + 0.3 * np.clip(STEPS / 250, 0, 1) + ar1(101, N, 0.3, 0.01)
    steps = np.arange(1, 21) * 15
    accuracy = np.round((0.50 + 0.10 * np.clip(steps / 150, 0, 1) - 0.05 * np.clip((steps - 150) / 150, 0, 1)
                         + ar1(102, 20, 0.0, 0.012)) * 1000) / 1000
    best_at_4 = np.round((0.65 + 0.12 * np.clip(steps / 150, 0, 1) - 0.12 * np.clip((steps - 150) / 150, 0, 1)
                          + ar1(103, 20, 0.0, 0.012)) * 500) / 500
    run_dir = make_run(tmp_path, reward=reward).path
    with_evals(run_dir, "pass_at_k", 15, best_at_4)
    d = diagnose(with_evals(run_dir, "accuracy", 15, accuracy))
    curves = {c.metric: c.decline_noise for c in d.eval.curves}
    assert curves["eval/pass_at_k"] > curves["eval/accuracy"] >= 2.0
    assert d.best_checkpoint.metric == "eval/pass_at_k" and (d.best_checkpoint.best_step or 0) <= 180


def test_a_few_evaluations_are_read_no_finer_than_their_sampling_error(tmp_path):
    # Eight evaluations of a pass rate on 500 problems: their own spread (four to six second differences) can
    # come out at a third of the sampling error by luck, and a dip of two would read as a decline.
    reward = 0.2 + 0.05 * STEPS / N + ar1(104, N, 0.3, 0.01)
    evals = np.array([0.266, 0.268, 0.286, 0.234, 0.220, 0.232, 0.266, 0.252])
    d = diagnose(with_evals(make_run(tmp_path, reward=reward).path, "math500_acc", 35, evals))
    (curve,) = d.eval.curves
    assert curve.noise == pytest.approx(math.sqrt(0.25 * 0.75 / 500), rel=0.1)
    assert "eval_declining" not in {f.kind for f in d.findings}


def test_a_flat_reward_over_many_points_early_in_a_long_planned_run_is_not_yet_an_answer(tmp_path):
    # 500 per-step points of a slow learner in a 4000-step run: the reward has not moved beyond its noise yet.
    n = 500
    reward = 0.2 + 0.00002 * np.arange(n) + ar1(105, n, 0.3, 0.05)
    run = make_run(tmp_path, reward=reward, config={"max_steps": 4000})
    assert verdict(run).decision == "continue"


def test_a_shift_inside_the_latest_stretch_is_the_current_level_on_the_sheet(tmp_path):
    # A live run that blew up in its last 15 of 300 steps: KL from ~0.03 to ~0.85 and staying there. The median of
    # the latest stretch (30 points) is still mostly from before; the sheet's "now" is the level after the shift.
    kl = np.where(STEPS < 286, 0.03, 0.85) * (1 + ar1(106, N, 0.3, 0.05))
    d = diagnose(make_run(tmp_path, reward=0.3 + 0.2 * np.clip(STEPS / 200, 0, 1) + ar1(107, N, 0.3, 0.01), kl=kl))
    row = d.signals["kl"]
    assert row.now == pytest.approx(0.85, rel=0.1) and row.peak >= row.now


def test_a_flat_held_out_eval_early_in_a_long_planned_run_is_not_yet_a_reason_to_stop(tmp_path):
    # The training reward rises; the held-out eval (12 evaluations) stays put. At step 300 of a planned 3000 that
    # is a slow learner's first tenth; at step 300 of 400 it says the gains do not transfer.
    reward = 0.3 + 0.2 * np.clip(STEPS / 250, 0, 1) + ar1(108, N, 0.3, 0.01)
    evals = np.round((0.40 + ar1(109, 12, 0.0, 0.01)) * 500) / 500
    early = with_evals(make_run(tmp_path / "early", reward=reward, config={"max_steps": 3000}).path, "accuracy",
                       25, evals)
    late = with_evals(make_run(tmp_path / "late", reward=reward, config={"max_steps": 400}).path, "accuracy", 25,
                      evals)
    assert "eval_not_transferring" in {f.kind for f in diagnose(late).findings}
    assert verdict(late).decision == "stop"
    assert verdict(early).decision == "continue"


def test_a_learning_rate_tripled_at_a_resume_is_named_and_undone_in_the_advice(tmp_path):
    # 1e-6 for 150 steps, then 3e-6 (a resume with a new config): the reward, at its best before, falls after it.
    lr = np.where(STEPS < 150, 1e-6, 3e-6)
    reward = np.where(STEPS < 150, 0.3 + 0.3 * np.clip(STEPS / 120, 0, 1), 0.6 - 0.25 * np.clip((STEPS - 150) / 60, 0,
                                                                                                      1))
    run = make_run(tmp_path, reward=reward + ar1(110, N, 0.3, 0.01), learning_rate=lr)
    raised = only_kind(diagnose(run).findings, "lr_raised")
    assert raised.steps == [150] and "1e-06 to 3e-06" in raised.observation
    v = verdict(run)
    assert v.decision == "rollback" and "undo the learning-rate change at step 150" in v.headline
    # A warm-up ramp, then a cosine decay: no raise is named.
    warm = np.minimum(STEPS / 30, 1.0) * 1e-6 * (0.5 + 0.5 * np.cos(np.pi * STEPS / N))
    plain = make_run(tmp_path / "plain", reward=0.3 + 0.2 * np.clip(STEPS / 200, 0, 1) + ar1(111, N, 0.3, 0.01),
                     learning_rate=warm)
    assert "lr_raised" not in {f.kind for f in diagnose(plain).findings}


# --- what holdout 17 showed: frequent evaluations of a steady climb, held-out metrics named for their task


def test_a_finished_run_whose_frequent_evaluations_still_climb_is_extended(tmp_path):
    """Evaluated every 10 steps, a steady climb adds under one noise unit per evaluation: the latest one is never
    a clear new high, but the latest quarter of the evaluations stands well above the quarter before."""
    rng = np.random.default_rng(75)
    reward = 0.2 + 0.45 * STEPS / N + ar1(75, N, 0.3, 0.02)
    evals = 0.2 + 0.4 * np.arange(1, 31) / 30 + rng.normal(0, 0.018, 30)
    evals[-2:] = evals[:-2].max() - [0.005, 0.01]  # the latest two set no new high
    run = with_evals(make_run(tmp_path, reward=reward, config={"max_steps": N}).path, "accuracy", 10, evals)
    d = diagnose(run)
    curve = d.eval.curves[0]
    assert d.run.state == "finished" and curve.new_high_noise < 1.0 and curve.recent_rise_noise >= 3.0
    v = verdict(run)
    assert v.decision == "continue" and "extend" in v.headline.lower()
    # the same evaluations levelled off over their latest half: the final weights are kept
    flat = evals.copy()
    flat[15:] = 0.4 + np.tile([0.006, -0.004, 0.002, -0.006, 0.004], 3)
    run = with_evals(make_run(tmp_path / "b", reward=np.minimum(reward, 0.45), config={"max_steps": N}).path,
                     "accuracy", 10, flat)
    assert diagnose(run).eval.curves[0].recent_rise_noise < 3.0
    assert verdict(run).decision == "stop"


@pytest.mark.parametrize("name", ["chrf", "bleu", "rougeL", "comet_qe", "sacrebleu", "f1"])
def test_held_out_text_generation_metrics_are_read_as_quality(tmp_path, name):
    """A translation run's chrF falling from its peak while the reward (a QE model) still climbs is a rollback; the
    eval was ignored when its name was not a known quality word."""
    reward = 0.7 + 0.15 * STEPS / N + ar1(76, N, 0.3, 0.01)
    peak_then_slide = np.concatenate([52 + 6 * np.arange(1, 11) / 10, 58 - 5 * np.arange(1, 6) / 5])
    scores = peak_then_slide + np.array([.3, -.2, .1, 0, -.3, .2, 0, -.1, .2, 0, .1, -.2, 0, .2, -.1])
    run = with_evals(make_run(tmp_path, reward=reward).path, name, 20, scores)
    d = diagnose(run)
    assert f"eval/{name}" in [c.metric for c in d.eval.curves]
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_step is not None and 160 <= v.rollback_step <= 200


def test_a_preference_runs_held_out_loss_rising_while_its_accuracy_holds_sends_it_back_to_the_loss_minimum(tmp_path):
    """holdout17: DPO's held-out accuracy flat since its peak while the held-out loss climbs 9 noise units off its
    minimum (the model grows confident on the pairs it gets wrong). The loss is the trainer's own measure of the
    best model: a decline of it is a better model behind, not a side witness waiting for a second one."""
    accuracy = np.array([0.62, 0.67, 0.70, 0.712, 0.709, 0.711, 0.708, 0.710, 0.707, 0.709, 0.711, 0.708])
    margin = np.linspace(0.3, 2.4, 12)
    loss = np.array([0.62, 0.58, 0.55, 0.53, 0.54, 0.545, 0.57, 0.60, 0.63, 0.66, 0.70, 0.74])
    n = 1200
    steps = np.arange(1, n + 1)
    run = make_run(tmp_path, loss=np.maximum(0.1, 0.69 - 0.5 * steps / n) + ar1(123, n, 0.3, 0.01),
                   rewards__margins=0.3 + 2.0 * steps / n + ar1(124, n, 0.3, 0.05),
                   rewards__accuracies=np.minimum(0.9, 0.55 + 0.4 * steps / n) + ar1(125, n, 0.3, 0.02),
                   config={"max_steps": 2000, "beta": 0.1})
    run = with_evals(run.path, "rewards/accuracies", 100, accuracy)
    run = with_evals(run.path, "rewards/margins", 100, margin)
    run = with_evals(run.path, "loss", 100, loss)
    d = diagnose(run)
    loss_decline = next(f for f in d.findings if f.kind == "eval_declining" and f.signal == "eval/loss")
    # a loss is best at its lowest: it "has risen", it did not "peak" (a blind reader's complaint)
    assert "was at its best (lowest) at" in loss_decline.observation and "peaked" not in loss_decline.observation
    assert not any(f.kind == "eval_declining" and f.signal == "eval" for f in d.findings)
    v = verdict(run)
    # the newest evaluation as good as the loss minimum (0.53 at 400; 0.54 at 500), before its climb
    assert v.decision == "rollback" and v.rollback_step in (400, 500)


def test_a_reward_fallen_to_its_floor_while_the_held_out_eval_holds_is_a_stop_not_a_rollback(tmp_path):
    """holdout17: a curriculum callback jumps to a stage the policy cannot solve. The reward falls to about 0 and
    nearly every group scores alike, but the held-out eval, taken all along, holds its level: what changed is the
    data, not the model, so nothing better lies behind; with no learning signal left, stop. The same run whose
    held-out eval falls after the drop is a rollback."""
    n = 600
    steps = np.arange(1, n + 1)
    rng = np.random.default_rng(126)
    reward = np.where(steps <= 250, 0.35 + 0.35 * steps / 250, 0.012) + np.abs(ar1(126, n, 0.3, 0.01))
    zero_spread = np.where(steps <= 250, 0.3, 0.92) + ar1(127, n, 0.3, 0.01)
    k = np.arange(1, 13)  # evaluations every 50 steps
    # (holdout17's evaluations) a lucky best at the stage change, then the level it climbed to, within noise
    holds = np.array([0.40, 0.396, 0.41, 0.438, 0.484, 0.458, 0.462, 0.464, 0.446, 0.48, 0.464, 0.458])
    falls = np.where(k <= 5, holds, 0.46 - 0.03 * (k - 5)) + np.where(k <= 5, 0, rng.normal(0, 0.004, 12))
    outcomes = {}
    for name, evals in (("holds", holds), ("falls", falls)):
        run = make_run(tmp_path / name, reward=reward, frac_reward_zero_std=zero_spread,
                       config={"max_steps": 1000})
        run = with_evals(run.path, "accuracy", 50, evals)
        d = diagnose(run)
        assert "reward_floor_no_signal" in {f.kind for f in d.findings}
        # the sheet's best point agrees with the verdict: nothing better behind while the eval holds
        assert d.best_checkpoint.behind is (name == "falls")
        outcomes[name] = verdict(run)
    assert outcomes["holds"].decision == "stop", outcomes["holds"].headline
    assert outcomes["falls"].decision == "rollback"


def test_a_latest_evaluation_at_the_peak_with_nothing_behind_is_the_best_point_not_a_lucky_draw(tmp_path):
    """holdout17: a converged run whose latest evaluation matched its peak; the best point passed it over as "a
    lucky draw on the way down" and named an earlier step "for reference", beside "nothing is lost since the peak"."""
    reward = 0.3 + 0.3 * np.clip(STEPS / 150, 0, 1) + ar1(128, N, 0.3, 0.01)
    # holdout17's evaluations from its climb's end on, every 20 steps here
    evals = np.array([0.518, 0.57, 0.578, 0.598, 0.552, 0.572, 0.594, 0.594, 0.59, 0.584, 0.58, 0.568, 0.572, 0.558,
                      0.598])
    run = with_evals(make_run(tmp_path, reward=reward).path, "accuracy", 20, evals)
    best = diagnose(run).best_checkpoint
    assert not best.behind
    assert best.best_step == 300 and not best.passed_over, best.reason
    assert "lucky draw" not in summarize(JudgeRequest(run=run, diagnostics=diagnose(run)))


def test_chosen_log_probs_falling_short_of_a_collapse_get_a_watch_and_change_nothing(tmp_path):
    """holdout17's blind reader met a chosen log-prob row falling -187 -> -235 with no word on it, though the DPO
    card flags the pattern. A fall short of the collapse ratio is a watch; three times as negative is the collapse."""
    n = 600
    steps = np.arange(1, n + 1)
    common = {"loss": np.maximum(0.1, 0.69 - 0.4 * steps / n) + ar1(130, n, 0.3, 0.01),
                  "rewards__margins": 0.3 + 2.0 * steps / n + ar1(131, n, 0.3, 0.05),
                  "rewards__accuracies": np.minimum(0.9, 0.55 + 0.4 * steps / n) + ar1(132, n, 0.3, 0.02),
                  "config": {"beta": 0.1}}
    falling = make_run(tmp_path / "a", logps__chosen=-187 - 50 * steps / n + ar1(133, n, 0.3, 3.0), **common)
    d = diagnose(falling)
    assert {f.kind: f.severity for f in d.findings}.get("chosen_logps_falling") == "watch"
    assert "chosen_logps_collapse" not in {f.kind for f in d.findings}
    assert verdict(falling).decision == "continue"
    collapsed = make_run(tmp_path / "b", logps__chosen=-187 - 500 * steps / n + ar1(134, n, 0.3, 3.0), **common)
    assert "chosen_logps_collapse" in {f.kind for f in diagnose(collapsed).findings}


def test_kl_drifting_while_the_reward_model_score_stands_still_is_no_drift_without_benefit_if_the_eval_rose(tmp_path):
    """holdout18: a [0, 1] reward model's score climbs fast and then creeps near its ceiling while KL grows, which
    reads as "KL up, reward flat: drift without benefit"; but the judged win rate beside it rose 4 sd since the
    reward levelled off. The same run whose win rate stood still since then is the drift the stop is for."""
    n = 1100
    steps = np.arange(1, n + 1)
    reward = np.where(steps < 400, 0.62 + 0.22 * steps / 400, 0.84 + 0.03 * (steps - 400) / 700)
    reward = reward + ar1(140, n, 0.3, 0.01)
    kl = 1.0 + 4.0 * steps / n + ar1(141, n, 0.3, 0.05)
    rising = np.array([0.51, 0.534, 0.576, 0.568, 0.59, 0.638, 0.608, 0.622, 0.642, 0.656, 0.644])
    flat = np.array([0.51, 0.534, 0.576, 0.568, 0.59, 0.582, 0.575, 0.588, 0.579, 0.585, 0.581])
    decisions = {}
    for name, win in (("rising", rising), ("flat", flat)):
        run = with_evals(make_run(tmp_path / name, reward=reward, kl=kl, config={"max_steps": 3000}).path,
                         "win_rate", 100, win)
        kinds = {f.kind for f in diagnose(run).findings}
        decisions[name] = (verdict(run).decision, "kl_up_reward_flat" in kinds)
    assert decisions["rising"] == ("continue", False)
    assert decisions["flat"][0] == "stop"


def test_a_thin_signal_while_the_learning_rate_still_warms_up_early_is_not_a_stop(tmp_path):
    """holdout19: a hard maths run at step 120 of 1000, warm-up to step 150 (lr 8e-7 of 1e-6), reward ~0.005 with
    98-99% of groups all wrong, was stopped as a setup failure; the same thin signal after the warm-up, late in the
    budget, is still a stop."""
    import numpy as np

    from assessor import diagnose
    from assessor.judge.rules import decide
    from tests.runs import make_run

    def run(root, n, warm):
        rng = np.random.default_rng(3)
        steps = np.arange(1, n + 1)
        reward = rng.binomial(64 * 8, 0.005, n) / (64 * 8)
        zero = 1 - rng.binomial(64, 0.015, n) / 64
        grad = np.where(rng.random(n) < 0.55, 0.0, rng.lognormal(-2, 0.3, n))
        lr = 1e-6 * np.minimum(1.0, steps / warm)
        return make_run(root, reward=reward, frac_reward_zero_std=zero, grad_norm=grad, learning_rate=lr,
                        config={"max_steps": 1000})

    early = run(tmp_path / "early", 120, 150)
    assert decide(diagnose(early)).decision == "continue"
    late = run(tmp_path / "late", 600, 150)
    assert decide(diagnose(late)).decision == "stop"


def test_a_learning_rate_and_a_kl_of_exactly_0_all_along_mean_the_weights_never_moved(tmp_path):
    """holdout19: a TRL run whose learning rate was passed as 0 (0.0 on every log, KL exactly 0 with beta > 0, grad
    norm ~0.3) was told to continue at step 400 of 2000. A rate printed as 0 by a coarse logger, beside a KL that
    moves, is not that case."""
    import numpy as np

    from assessor import diagnose
    from assessor.judge.rules import decide
    from tests.runs import ar1, make_run

    n = 40
    reward = 0.31 + ar1(5, n, 0.3, 0.02)
    grad = 0.3 * np.exp(ar1(6, n, 0.3, 0.2))
    frozen = make_run(tmp_path / "frozen", reward=reward, kl=np.zeros(n), grad_norm=grad, learning_rate=np.zeros(n),
                      config={"max_steps": 200})
    d = diagnose(frozen)
    assert d.learning_signal.updates_stopped_step == 1
    assert decide(d).decision == "stop"
    moving = make_run(tmp_path / "moving", reward=reward, kl=0.001 * np.arange(1, n + 1), grad_norm=grad,
                      learning_rate=np.zeros(n), config={"max_steps": 200})
    assert diagnose(moving).learning_signal.updates_stopped_step is None
    # holdout16's prefixes: a console printing three decimals shows a 1e-06 rate and a young KL as 0.000; and a PPO
    # actor sits at a rate of 0 while its critic warms up (verl's critic_warmup), the value loss falling.
    printed = make_run(tmp_path / "printed", reward=np.round(reward, 3), kl=np.zeros(n), grad_norm=np.round(grad, 3),
                       learning_rate=np.zeros(n), entropy=np.round(0.6 + ar1(7, n, 0.3, 0.01), 3))
    assert diagnose(printed).learning_signal.updates_stopped_step is None
    warming = make_run(tmp_path / "critic", reward=reward, kl=np.zeros(n), grad_norm=grad, learning_rate=np.zeros(n),
                       **{"critic/vf_loss": 40 * np.exp(-np.arange(n) / 10) + 1.5})
    assert diagnose(warming).learning_signal.updates_stopped_step is None


def _two_eval_run(root, easy, hard):
    import json

    import numpy as np

    from assessor import load_run
    from tests.runs import ar1

    n = 1100
    reward = 0.6 + 0.1 * np.minimum(1, np.arange(n) / 600) + ar1(9, n, 0.3, 0.01)
    rows = [{"step": s + 1, "reward": float(reward[s])} for s in range(n)]
    for k, (e, h) in enumerate(zip(easy, hard, strict=True)):
        rows.append({"step": 50 * (k + 1), "eval/easy_acc": e, "eval/hard_acc": h})
    root.mkdir(parents=True)
    (root / "log.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return load_run(root)


def test_a_second_evals_clear_fall_is_a_rollback_when_the_first_was_as_good_at_its_peak(tmp_path):
    """holdout19: the hard split (the goal) fell from 0.36 to 0.20 (400 problems, 8.7x its noise) while the easy
    split held at 0.88; a second eval's fall only counted as a witness and the run was told to continue. Going back
    to step 600 gives up nothing on the easy split. When the easy split gained since, the trade is the user's."""
    import numpy as np

    from assessor import diagnose
    from assessor.judge.rules import decide

    k = np.arange(22)
    wobble = np.array([0.0, 1, -1, 0.5, -0.5, 1, 0, -1, 0.5, -0.5, 1] * 2)  # +-1 sampling sd, no trend
    hard = np.where(k < 12, 0.2 + 0.014 * k, 0.354 - 0.015 * (k - 11)) + 0.024 * wobble
    easy = np.minimum(0.88, 0.83 + 0.007 * k) + 0.016 * wobble[::-1]
    verdict = decide(diagnose(_two_eval_run(tmp_path / "holds", easy, hard)))
    assert verdict.decision == "rollback" and 500 <= verdict.rollback_step <= 650
    gained = np.minimum(0.88, 0.83 + 0.007 * k) + np.where(k > 12, 0.008 * (k - 12), 0) + 0.016 * wobble[::-1]
    d = diagnose(_two_eval_run(tmp_path / "gained", gained, hard))
    assert [f.severity for f in d.findings if f.signal == "eval/hard_acc"] == ["warning"]
    assert decide(d).decision == "continue"


def test_a_task_component_falling_under_a_total_held_up_by_a_bonus_is_a_rollback(tmp_path):
    """holdout19: a code run scored tests-passed + 0.35 x lint bonus; the pass rate fell from 0.48 to 0.36 over 200
    steps while the bonus climbed and the total stayed flat, and the run was told to continue."""
    import numpy as np

    from assessor import diagnose
    from assessor.judge.rules import decide
    from tests.runs import ar1, make_run

    n = 1000
    steps = np.arange(1, n + 1)
    task = np.where(steps < 800, 0.28 + 0.2 * np.minimum(1, steps / 700), 0.48 - 0.12 * (steps - 800) / 200)
    bonus = np.where(steps < 800, 0.3 + 0.3 * steps / 800, 0.6 + 0.35 * (steps - 800) / 200)
    task, bonus = task + ar1(1, n, 0.3, 0.03), bonus + ar1(2, n, 0.3, 0.02)
    traded = make_run(tmp_path / "traded", reward=task + 0.35 * bonus, rewards__tests_pass__mean=task,
                      rewards__lint_bonus__mean=bonus)
    d = diagnose(traded)
    assert [f.kind for f in d.findings if f.kind == "task_component_declined"] == ["task_component_declined"]
    verdict = decide(d)
    assert verdict.decision == "rollback" and 650 <= verdict.rollback_step <= 820
    rising = np.where(steps < 800, task, 0.48 + 0.05 * (steps - 800) / 200 + ar1(3, n, 0.3, 0.03))
    healthy = make_run(tmp_path / "healthy", reward=rising + 0.35 * bonus, rewards__tests_pass__mean=rising,
                       rewards__lint_bonus__mean=bonus)
    assert "task_component_declined" not in {f.kind for f in diagnose(healthy).findings}


def test_a_thin_signal_early_in_the_plan_waits_unless_a_cause_is_on_the_sheet(tmp_path):
    """holdout19: runs whose reward sits at exactly 0 for the first quarter and then climbs were stopped on every
    check before the climb. Early in a known plan that is not yet a verdict; completions all cut at the cap from the
    start (holdout8) are a cause no waiting fixes, and stay a stop."""
    import numpy as np

    from assessor import diagnose
    from assessor.judge.rules import decide
    from tests.runs import make_run

    rng = np.random.default_rng(8)
    n = 120
    reward = rng.binomial(512, 0.003, n) / 512
    zero = 1 - rng.binomial(64, 0.01, n) / 64
    sparse = make_run(tmp_path / "sparse", reward=reward, frac_reward_zero_std=zero, learning_rate=np.full(n, 1e-6),
                      completions__mean_length=600 + rng.normal(0, 20, n), config={"max_steps": 1000})
    assert decide(diagnose(sparse)).decision == "continue"
    cut = make_run(tmp_path / "cut", reward=reward, frac_reward_zero_std=zero, learning_rate=np.full(n, 1e-6),
                   completions__mean_length=np.full(n, 256.0), completions__clipped_ratio=np.full(n, 0.99),
                   config={"max_steps": 1000, "max_completion_length": 256})
    assert decide(diagnose(cut)).decision == "stop"


def test_a_reward_climbing_off_its_floor_is_a_lift_off_not_a_run_without_signal(tmp_path):
    """holdout19 (a TRL run logging every 10 steps, cut at step 420 of 1000): reward exactly 0 for 300 steps, then
    climbing, 94% of groups still alike. Read as 'the reward has sat at its floor since the start' (and, once that
    was guarded, 'fallen to its floor from a peak of 0.0447', the peak being now), and stopped."""
    import numpy as np

    from assessor import diagnose
    from assessor.judge.rules import decide
    from tests.runs import make_run

    reward = np.zeros(42)
    reward[[2, 10, 20, 23, 29, 31]] = [0.0062, 0.0039, 0.0062, 0.0008, 0.0094, 0.0008]
    reward[33:] = [0.0078, 0.0094, 0.007, 0.0234, 0.0086, 0.0336, 0.0648, 0.0461, 0.0703]
    spread = np.where(reward > 0, 1 - 0.4 * np.sqrt(reward) - 0.006, 1.0)
    grad = np.where(np.arange(len(reward)) >= 39, 0.1, 0.0)
    run = make_run(tmp_path, interval=10, reward=reward, frac_reward_zero_std=spread, grad_norm=grad,
                   config={"max_steps": 1000})
    d = diagnose(run)
    assert not {f.kind for f in d.findings} & {"no_learning_signal", "reward_floor_no_signal"}
    assert decide(d).decision == "continue"


def test_a_collapse_is_dated_from_its_cliff_not_from_the_gentle_sharpening_before_it(tmp_path):
    """holdout21's blind readers: 'broken from step 420: entropy collapsed' where entropy eased 0.40 -> 0.28 by 420,
    held there, and fell off a cliff to 0.03 at 1330: the target was sent 850 steps back, past real held-out gains."""
    import numpy as np

    from assessor import diagnose
    from tests.runs import ar1, make_run

    n = 1400
    steps = np.arange(1, n + 1)
    entropy = np.where(steps < 420, 0.4 - 0.12 * steps / 420, 0.28)
    entropy = np.where(steps < 1330, entropy, 0.03) * np.exp(ar1(12, n, 0.3, 0.02))
    reward = 0.35 + 0.3 * np.minimum(1, steps / 1000) + ar1(13, n, 0.3, 0.01)
    reward[1330:] -= 0.2
    d = diagnose(make_run(tmp_path, reward=reward, entropy=entropy))
    collapse = next(f for f in d.findings if f.kind == "entropy_collapse")
    assert collapse.steps[0] >= 1200, collapse.observation
    assert d.best_checkpoint.breakage_step is None or d.best_checkpoint.breakage_step >= 1200


def test_a_kl_jump_after_which_the_held_out_eval_set_a_clear_new_best_is_no_breakage(tmp_path):
    """holdout21: the warm-up ended at step 200, KL jumped 0.002 -> 0.011 and the grad norm 0.2 -> 0.9, the reward
    dipped and recovered, and the held-out accuracy went on to its best (0.57 at 500 against 0.51 before): 'broken
    from step 210: KL jumped' sent the healthy run back to step 200."""
    import numpy as np

    from assessor import diagnose
    from assessor.judge.rules import decide
    from tests.runs import ar1, make_run

    n = 520
    steps = np.arange(1, n + 1)
    kl = np.where(steps < 210, 0.002, 0.011) * (1 + ar1(14, n, 0.3, 0.03))
    grad = np.where(steps < 215, 0.2, 0.9) * np.exp(ar1(15, n, 0.3, 0.05))
    reward = 0.45 + 0.1 * np.minimum(1, steps / 200) + ar1(16, n, 0.3, 0.01)
    reward[210:320] -= 0.08 * (1 - (steps[210:320] - 210) / 110)
    rising = np.array([0.42, 0.46, 0.49, 0.505, 0.46, 0.50, 0.52, 0.535, 0.55, 0.565])
    run = make_run(tmp_path / "rose", reward=reward, kl=kl, grad_norm=grad, eval_every=50, eval_values=rising,
                   config={"max_steps": 1500})
    assert decide(diagnose(run)).decision == "continue"
    fell = np.array([0.42, 0.46, 0.49, 0.505, 0.46, 0.44, 0.42, 0.41, 0.40, 0.39])
    run = make_run(tmp_path / "fell", reward=reward, kl=kl, grad_norm=grad, eval_every=50, eval_values=fell,
                   config={"max_steps": 1500})
    assert decide(diagnose(run)).decision == "rollback"


_NCCL_END = """[rank3]:[E1126 03:12:55.149301 ProcessGroupNCCL.cpp:1664] Exception detected by watchdog
terminate called after throwing an instance of 'c10::DistBackendError'
E1126 03:13:02.551000 1021 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 3
Traceback (most recent call last):
  File "/opt/conda/bin/torchrun", line 8, in <module>
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
"""


@pytest.mark.parametrize(("tail", "crashed"), [
    (_NCCL_END, True),
    ("Traceback (most recent call last):\n  File 'train.py', line 3\nKeyboardInterrupt\n", False),  # by hand
    ("Traceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of memory\n"
     + "".join(f"{{'loss': 0.1, 'reward': 0.7, 'step': {s}}}\n" for s in range(5)), False),  # resumed after it
])
def test_a_job_that_died_on_an_error_is_crashed_and_stopped_when_it_had_levelled_off(tmp_path, tail, crashed):
    """holdout21: a TRL run flat for 650 steps whose console log ends in an NCCL watchdog timeout was told to
    continue as if live. A crashed run mid-plan is resumed by default, but not once reward and eval had levelled
    off: a restart buys little. A log stopped by hand (KeyboardInterrupt), or one that went on after an error, is no
    crash."""
    import numpy as np

    from assessor import diagnose
    from assessor.judge.rules import decide
    from assessor.pipeline import truncate
    from tests.runs import ar1, make_run

    n = 1460
    steps = np.arange(1, n + 1)
    reward = 0.5 + 0.24 * np.minimum(1, steps / 800) + ar1(17, n, 0.3, 0.01)
    evals = 0.45 + 0.21 * np.minimum(1, np.arange(1, 15) / 8) + np.array([0.0, 0.01, -0.01] * 4 + [0.0, 0.01])
    make_run(tmp_path, reward=reward, eval_every=100, eval_values=evals, config={"max_steps": 2000})
    (tmp_path / "train.log").write_text("starting\n" + tail, encoding="utf-8")
    from assessor import load_run

    run = load_run(tmp_path)
    assert (run.facts.training_crashed is not None) == crashed
    d = diagnose(run)
    assert (d.run.state == "crashed") == crashed
    if crashed:
        assert decide(d).decision == "stop"
        assert truncate(run, 700).facts.training_crashed is None  # a prefix of a crashed run was live


def test_a_learning_rate_of_a_billionth_is_the_weights_never_moving(tmp_path):
    """holdout21's blind reader: a learning rate of 1e-09 all run (a config typo) had no finding; the guide's 'never
    rises above about a billionth' had to be applied by hand (the test was strictly below 1e-9)."""
    import numpy as np

    from assessor import diagnose
    from tests.runs import ar1, make_run

    n = 300
    run = make_run(tmp_path, reward=0.3 + ar1(91, n, 0.3, 0.02), kl=2e-7 * (1 + ar1(92, n, 0.3, 0.05)),
                   learning_rate=np.full(n, 1e-9))
    assert diagnose(run).learning_signal.updates_stopped_step == 1


def test_a_preference_run_is_judged_on_its_generations_judge_not_on_the_held_out_loss_it_games(tmp_path):
    # KTO with the undesirable side over-weighted: everything is pushed down, the held-out loss keeps falling (the
    # objective being gamed) while a judge scoring the generations peaks at step 400 and falls (holdout22).
    judge = np.array([5.40, 5.58, 6.03, 6.12, 6.08, 5.88, 5.52, 5.37, 5.21, 5.26, 4.79, 4.67])
    loss = np.array([0.464, 0.44, 0.402, 0.376, 0.345, 0.358, 0.32, 0.314, 0.305, 0.269, 0.268, 0.256])
    run = _dpo_with_evals(tmp_path, np.linspace(0.6, 0.8, 12), np.linspace(0.5, 2.5, 12), loss)
    run = with_evals(run.path, "judge_score", 100, judge)
    d = diagnose(run)
    assert d.eval.metric is not None and "judge_score" in d.eval.metric
    v = verdict(run)
    assert v.decision == "rollback" and 300 <= (v.rollback_step or 0) <= 500


def test_a_held_out_margin_that_widens_while_the_held_out_loss_sets_no_new_best_is_confidence_not_progress(tmp_path):
    # Twin of the held-out-plateau test above: the eval margin still sets new highs, but the eval loss (the margin
    # through a sigmoid, pair by pair) has gone back up from its best: pairs already right grow surer, nothing more.
    accuracy = np.array([0.621, 0.675, 0.701, 0.715, 0.711, 0.713])
    run = _dpo_with_evals(tmp_path, accuracy, np.array([0.74, 1.12, 1.35, 1.35, 1.36, 1.47]),
                          np.array([0.603, 0.559, 0.531, 0.540, 0.545, 0.548]))
    assert {"eval_plateau", "eval_not_transferring"} & {f.kind for f in diagnose(run).eval.findings}
    assert verdict(run).decision == "stop"


@pytest.mark.parametrize("climbing", [False, True])
def test_a_job_silent_for_hours_is_stopped_when_it_had_levelled_off_and_resumed_when_it_still_climbed(
        tmp_path, climbing):
    """holdout15/18: a run whose files were last written hours ago at half its plan, reward and eval flat for as long
    as they climbed, was told to continue as if live. A stalled job is read like a crashed one: resumed while it was
    still improving, stopped (keep the newest weights) once it had levelled off."""
    import os
    import time

    from assessor import load_run
    from assessor.judge.rules import decide
    from tests.runs import make_run

    n = 1000
    steps = np.arange(1, n + 1)
    rise = np.minimum(1, steps / (2000 if climbing else 600))
    evals = 0.45 + 0.2 * np.minimum(1, np.arange(1, 11) * 100 / (2000 if climbing else 600))
    make_run(tmp_path, reward=0.3 + 0.4 * rise + ar1(63, n, 0.3, 0.01), eval_every=100, eval_values=evals,
             config={"max_steps": 2000})
    written = time.time() - 5 * 3600
    for path in tmp_path.iterdir():
        os.utime(path, (written, written))
    d = diagnose(load_run(tmp_path), now=time.time())
    assert d.run.state == "stalled"
    v = decide(d)
    assert v.decision == ("continue" if climbing else "stop")
    assert climbing or "looks dead" in v.headline
    assert decide(diagnose(load_run(tmp_path))).decision == "continue"  # without a clock: read as live


def test_an_eval_judges_each_case_file_at_the_moment_its_runs_were_written(tmp_path):
    """The newest write among a case file's runs is its clock: a run five hours older than its set-mates is stalled
    whenever the set is scored; runs copied without their file times are all fresh; generated cases have none."""
    import os
    import time

    from assessor import load_run
    from assessor.evals.cases import Case
    from assessor.evals.harness.loading import LoadedCase
    from assessor.evals.harness.running import clock_per_file
    from tests.runs import make_run

    base = time.time() - 7 * 24 * 3600  # the set was written a week ago
    items = []
    for k, age in enumerate((0.1, 5.0)):
        root = tmp_path / f"run{k}"
        make_run(root, reward=np.linspace(0.2, 0.6, 50))
        for path in root.iterdir():
            os.utime(path, (base - age * 3600, base - age * 3600))
        case = Case(name=f"c{k}", path=str(root), accept=["continue"])
        items.append(LoadedCase(case, tmp_path / "set.yaml", load_run(root)))
    clocks = clock_per_file(items)
    assert clocks[tmp_path / "set.yaml"] == pytest.approx(base - 0.1 * 3600, abs=1.0)
    states = [diagnose(item.run, now=clocks[item.file]).run.state for item in items]
    assert states == ["live", "stalled"]


def test_a_training_reward_sagging_beside_a_growing_kl_is_outranked_by_a_held_out_eval_at_its_best(tmp_path):
    """holdout23: a math+code mixture whose code share grows; the aggregate training reward peaks and sags (each
    source's reward still rising) while a small KL grows, and the held-out eval holds at its best. The KL/reward
    quadrant's "reward down" is the same training-reward fall the eval outranks: no stop, no rollback."""
    n = 1500
    steps = np.arange(1, n + 1)
    reward = 0.48 + 0.05 * np.minimum(1, steps / 900) - 0.02 * np.clip((steps - 900) / 600, 0, 1)
    kl = 0.002 + 0.011 * steps / n
    evals = np.array([0.56, 0.59, 0.60, 0.61, 0.62, 0.64, 0.65, 0.66, 0.67, 0.68, 0.69, 0.70, 0.70, 0.71, 0.71])
    run = make_run(tmp_path, reward=reward + ar1(64, n, 0.3, 0.01), kl=kl + ar1(65, n, 0.3, 0.0003),
                   eval_every=100, eval_values=evals, config={"max_steps": 3000})
    d = diagnose(run)
    assert {"kl_up_reward_down", "reward_peaked_then_declined"} & {f.kind for f in d.findings}
    assert verdict(run).decision == "continue"
    # A quadrant fall of under one noise unit is no critical finding (holdout23's reader: "-0.9 noise units").
    for f in d.findings:
        if f.kind == "kl_up_reward_down" and "(-0." in f.observation:
            assert f.severity != "critical" and "edging down" in f.observation


def _verl_two_benchmarks(root, aime: np.ndarray, math500: np.ndarray):
    """A verl JSONL log: a rising score, and MATH-500 (mean@4) and AIME24 (mean@16) every 40 steps."""
    import json

    root.mkdir(parents=True, exist_ok=True)
    n = 40 * (len(aime) - 1)
    score = 0.3 + 0.3 * np.minimum(1, np.arange(1, n + 1) / (0.7 * n)) + ar1(66, n, 0.3, 0.01)
    lines = []
    for step in range(0, n + 1):
        data = {} if step == 0 else {"critic/score/mean": float(score[step - 1])}
        if step % 40 == 0:
            data["val-core/aime24/acc/mean@16"] = float(aime[step // 40])
            data["val-core/math500/acc/mean@4"] = float(math500[step // 40])
        lines.append(json.dumps({"step": step, "data": data}))
    (root / "log.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_run(root)


def test_two_benchmarks_mapped_to_one_name_keep_their_own_and_a_coarse_ones_draws_send_nobody_back(tmp_path):
    """holdout23: AIME24 (30 problems, mean@16: scores in 1/480) took the name `accuracy` from MATH-500 beside it, and
    its lucky 0.30 at step 1640 followed by 0.20s read as a decisive fall while MATH-500 held; a run converged a
    little before its planned end was sent back. A benchmark a quarter as fine as the preferred one is a witness."""
    rng = np.random.default_rng(67)
    k = 30
    math500 = np.round((0.47 + 0.2 * np.minimum(1, np.arange(k) / 20) + rng.normal(0, 0.012, k)) * 2000) / 2000
    aime = np.round((0.12 + 0.1 * np.minimum(1, np.arange(k) / 20) + rng.normal(0, 0.02, k)) * 480) / 480
    aime[24], aime[-2:] = 0.3, [0.2, 0.2063]
    run = _verl_two_benchmarks(tmp_path, aime, math500)
    assert {"val-core/aime24/acc/mean@16", "val-core/math500/acc/mean@4"} <= set(run.metric_names("eval"))
    d = diagnose(run)
    assert not any(f.kind == "eval_declining" and f.severity == "critical" for f in d.findings)
    assert verdict(run).decision != "rollback"


def test_a_benchmark_named_for_its_30_problems_reads_after_the_500_problem_one_beside_it(tmp_path):
    """holdout23's blind readers: `aime24_avg16` (averaged over 16 samples: its scores do not show its 30 problems)
    was read first beside `math500_acc`; the best point and every eval finding used the coarse one."""
    rng = np.random.default_rng(68)
    run = make_run(tmp_path, reward=0.4 + 0.2 * np.minimum(1, STEPS / 200) + ar1(69, N, 0.3, 0.01))
    run = with_evals(run.path, "aime24_avg16", 25, np.round(0.1 + rng.uniform(0, 0.1, 12), 4))
    run = with_evals(run.path, "math500_acc", 25, np.round(0.5 + 0.15 * np.linspace(0, 1, 12) * 500) / 500)
    assert diagnose(run).eval.metric == "math500_acc"


def test_small_numbers_keep_two_digits_so_a_rise_is_visible():
    """holdout23's blind reader: "KL 0.0001 -> 0.0001" quoted a rise from 0.00012 to 0.00015 at one digit."""
    import doctest

    from assessor.diagnose import context

    assert context.num(0.00012) != context.num(0.000145)
    assert doctest.testmod(context).failed == 0


def test_a_silent_preference_run_whose_held_out_accuracy_stands_still_is_stopped_though_its_margin_grows(tmp_path):
    """holdout18: an OpenRLHF DPO run silent for 5 hours at step 900 of 2400, held-out accuracy flat since step 500,
    training accuracy and margins still rising. The training pairs being learnt ever more surely is no improvement
    while the held-out pairs stand still: a dead job on a plateau is stopped, not resumed."""
    import os
    import time

    accuracy = np.array([0.55, 0.60, 0.65, 0.70, 0.69, 0.70])  # flat for less than it climbed: no plateau yet
    _dpo_with_evals(tmp_path, accuracy, np.linspace(0.5, 1.6, 6), np.array([0.66, 0.64, 0.62, 0.60, 0.61, 0.61]))
    written = time.time() - 5 * 3600
    for path in tmp_path.iterdir():
        os.utime(path, (written, written))
    d = diagnose(load_run(tmp_path), now=time.time())
    assert d.run.state == "stalled" and d.reward.trend == "rising"
    assert RulesJudge().judge(JudgeRequest(run=load_run(tmp_path), diagnostics=d)).verdict.decision == "stop"


@pytest.mark.parametrize("recovering", [True, False])
def test_an_early_dip_below_the_start_that_is_climbing_back_is_no_rollback_to_the_base(tmp_path, recovering):
    """holdout18's prefixes: a base model adapting to the answer format loses ten points of held-out accuracy in its
    first 40 steps and climbs back; checked at 6% of the plan it was sent back to step 0. A dip still at its bottom is
    sent back as before."""
    n = 90
    steps = np.arange(1, n + 1)
    dip = np.where(steps < 40, 0.6 - 0.1 * steps / 40, 0.5 + (0.1 * (steps - 40) / 50 if recovering else 0.0))
    back = [0.52, 0.56, 0.60] if recovering else [0.52, 0.52, 0.53]
    evals = np.array([0.63, 0.60, 0.56, 0.53, 0.525, 0.52, *back])
    run = make_run(tmp_path, reward=dip + ar1(70, n, 0.3, 0.01), eval_every=10, eval_values=evals,
                   config={"max_steps": 1300})
    v = verdict(run)
    assert v.decision == ("continue" if recovering else "rollback")


@pytest.mark.parametrize(("planned", "decision"), [(1500, "continue"), (400, "stop")])
def test_a_held_out_plateau_shorter_than_a_fifth_of_the_plan_is_no_stop_with_most_of_the_plan_ahead(
        tmp_path, planned, decision):
    """holdout21/14 prefixes: a held-out eval flat for 200 steps after a 150-step climb was stopped at 23% of a
    1500-step plan (a curriculum's next stage then lifted it). The same curve as most of a 400-step plan is a stop."""
    n = 350
    steps = np.arange(1, n + 1)
    reward = 0.5 + 0.3 * np.minimum(1, steps / 300) + ar1(71, n, 0.3, 0.01)
    evals = np.array([0.36, 0.40, 0.43, 0.45, 0.45, 0.44, 0.45, 0.44, 0.45, 0.45, 0.44, 0.45, 0.45, 0.44])
    run = make_run(tmp_path, reward=reward, eval_every=25, eval_values=evals, config={"max_steps": planned})
    d = diagnose(run)
    assert {"eval_plateau", "eval_not_transferring"} & {f.kind for f in d.findings}
    assert verdict(run).decision == decision


def test_a_reward_collapsing_in_its_last_steps_is_quoted_where_it_has_got_to_not_only_as_a_stretch_mean(tmp_path):
    """holdout23's blind reader: a live run whose reward fell 0.65 -> 0.2 over its last 90 steps was quoted "now
    0.573", the mean of its latest tenth (180 steps), while the dashboard showed 0.2."""
    n = 1800
    steps = np.arange(1, n + 1)
    reward = 0.3 + 0.35 * np.minimum(1, steps / 1000) - 0.45 * np.clip((steps - 1710) / 90, 0, 1)
    run = make_run(tmp_path, reward=reward + ar1(72, n, 0.3, 0.01))
    d = diagnose(run)
    latest = d.signals["reward_mean"].latest
    assert latest is not None and latest.mean < 0.35 < d.signals["reward_mean"].now
    row = next(line for line in summarize(JudgeRequest(run=run, diagnostics=d)).splitlines()
               if line.startswith("| reward_mean"))
    assert f"average {latest.mean:.3g}" in row
    steady = make_run(tmp_path / "steady", reward=0.3 + 0.35 * np.minimum(1, steps / 1000) + ar1(73, n, 0.3, 0.01))
    assert diagnose(steady).signals["reward_mean"].latest is None
    # A held-out row's "now" is its latest evaluation already (holdout24's reader met the note on an eval row).
    run = make_run(tmp_path / "evals", reward=reward, eval_every=100,
                   eval_values=np.array([0.3, 0.4, 0.5, 0.55, *[0.6] * 13, 0.1]))
    assert all(s.latest is None for key, s in diagnose(run).signals.items() if key.startswith("eval/"))


@pytest.mark.parametrize("annealed", [False, True])
def test_a_finished_run_whose_held_out_eval_still_climbs_over_its_latest_half_is_extended_unless_annealed(
        tmp_path, annealed):
    """holdout24: a run finished at its planned 1200 steps with a constant learning rate, held-out accuracy 0.53 ->
    0.61 over its last 500 steps (each evaluation under one noise unit above the one before, the last the best), was
    told to stop with "has not improved on its best (0.606 at step 1200) since". A late rise the slope rules in is
    worth extending; under a schedule annealed to 0 it is the annealing, and the final weights are kept."""
    n = 1200
    steps = np.arange(1, n + 1)
    lr = 1e-6 * (1 - steps / n) if annealed else np.full(n, 1e-6)
    evals = np.array([0.506, 0.528, 0.504, 0.508, 0.472, 0.53, 0.53, 0.548, 0.578, 0.586, 0.566, 0.606])
    run = make_run(tmp_path, reward=0.4 + 0.2 * steps / n + ar1(74, n, 0.3, 0.02), learning_rate=lr,
                   eval_every=100, eval_values=evals, config={"max_steps": n})
    d = diagnose(run)
    assert d.run.state == "finished" and d.eval.curves[0].late_rise
    v = verdict(run)
    assert v.decision == ("stop" if annealed else "continue")
    assert "not improved on its best (0.606 at step 1200) since" not in v.headline


def test_a_reward_of_eighths_is_not_called_where_it_started_before_the_comparison_could_see_a_rise(tmp_path):
    """holdout23: one prompt of eight rollouts a step (the reward moves in eighths), 140 steps into a relaunch with
    its held-out score rising: "reward_mean is where it started (-1.1 standard errors)" stopped it, though the
    comparison could not have seen a rise of a quarter of the range. A 0..1 reward's "no progress" needs a sharp
    comparison (its error under 5% of the range); a smooth batch mean gets it as before."""
    rng = np.random.default_rng(76)
    n = 140
    eighths = rng.binomial(8, 0.45, n) / 8
    run = make_run(tmp_path / "eighths", reward=eighths, config={"max_steps": 200})
    assert "reward_no_progress" not in {f.kind for f in diagnose(run).findings}
    smooth = make_run(tmp_path / "smooth", reward=0.45 + ar1(77, 600, 0.3, 0.01), config={"max_steps": 800})
    assert "reward_no_progress" in {f.kind for f in diagnose(smooth).findings}


def _coming_apart(n: int, onset: int, reward: np.ndarray, instruments: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Side signals steady until `onset`, then (those named) climbing away over the last steps of the run."""
    steps = np.arange(1, n + 1)
    ramp = np.clip((steps - onset) / (n - onset), 0, 1)
    steady = {"kl": 0.025, "entropy": 0.42, "grad_norm": 0.25, "clip_ratio__region_mean": 0.01}
    rise = {"kl": 12.0, "entropy": 3.8, "grad_norm": 8.0, "clip_ratio__region_mean": 8.0}
    out = {"reward": reward}
    for i, (key, level) in enumerate(steady.items()):
        factor = rise[key] ** ramp if key in instruments else 1.0
        out[key] = level * factor * np.exp(ar1(80 + i, n, 0.3, 0.08))
    return out


def test_instruments_leaving_their_levels_together_are_a_breakage_even_before_the_reward_falls(tmp_path):
    """holdout26: an OpenRLHF run on a reward plateau whose entropy went 0.42 -> 1.6, KL 0.025 -> 0.34, grad norm
    0.25 -> 2 and the clipped fraction 1% -> 8% over its last 80 steps, reward not yet down, was stopped ("KL keeps
    rising while reward has stopped improving"): the current weights are the broken ones. Three instruments turning
    together with no reward gain are a breakage; the newest good point is before it. A rise of the same instruments
    that the reward pays for, or one instrument alone, is no such thing."""
    n, onset = 1600, 1520
    steps = np.arange(1, n + 1)
    plateau = 0.35 + 0.23 * np.minimum(1, steps / 800) + ar1(81, n, 0.3, 0.03)
    every = ("kl", "entropy", "grad_norm", "clip_ratio__region_mean")
    run = make_run(tmp_path / "broke", config={"max_steps": 3000}, **_coming_apart(n, onset, plateau, every))
    breakdown = next(f for f in diagnose(run).findings if f.kind == "policy_breakdown")
    assert "→" not in breakdown.observation and "×" in breakdown.observation  # factors, not a second pair of levels
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_step is not None and 800 <= v.rollback_step < onset
    paying = plateau + 0.3 * np.clip((steps - onset) / (n - onset), 0, 1)
    run = make_run(tmp_path / "paid", config={"max_steps": 3000}, **_coming_apart(n, onset, paying, every))
    assert "policy_breakdown" not in {f.kind for f in diagnose(run).findings}
    run = make_run(tmp_path / "alone", config={"max_steps": 3000}, **_coming_apart(n, onset, plateau, ("entropy",)))
    assert "policy_breakdown" not in {f.kind for f in diagnose(run).findings}


def test_a_noisy_held_out_eval_that_climbs_over_all_its_evaluations_vouches_for_the_run(tmp_path):
    """holdout26: a hand loop's total reward (task + format + a length penalty) eased from 0.50 to 0.45 as answers
    grew, while its task reward rose 0.42 -> 0.52 and the 400-problem held-out accuracy climbed 0.40 -> 0.50 over 13
    evaluations (the latest the best). It was stopped ("getting worse") because its first and latest evaluations
    differed by just under two noise units and `task` was not read as the task. A held-out eval whose evaluations
    climb together vouches for the run; a component named `task` is the task."""
    n = 1300
    steps = np.arange(1, n + 1)
    task = 0.42 + 0.1 * steps / n + ar1(82, n, 0.3, 0.03)
    fmt = 0.93 + 0.05 * np.minimum(1, steps / 500) + ar1(83, n, 0.3, 0.005)
    penalty = -0.01 - 0.15 * steps / n + ar1(84, n, 0.3, 0.005)
    evals = np.array([0.395, 0.383, 0.403, 0.407, 0.412, 0.407, 0.453, 0.412, 0.458, 0.432, 0.472, 0.44, 0.497])
    run = make_run(tmp_path, reward=task + 0.1 * fmt + penalty - 0.04 * np.minimum(1, steps / 100),
                   rewards__task__mean=task, rewards__format__mean=fmt, rewards__length_penalty__mean=penalty,
                   eval_every=100, eval_values=evals, config={"max_steps": 3000})
    d = diagnose(run)
    assert d.eval.curves[0].climbed
    assert verdict(run).decision == "continue"


def test_a_critic_that_learnt_and_then_diverged_is_a_breakage_before_the_policy_pays(tmp_path):
    """holdout25: verl PPO whose critic's explained variance reached 0.6 and then fell to -1.8 from step 800 (value
    loss x40), score and GSM8K still holding, was told to continue. A critic predicting worse than a constant
    teaches the policy against its reward: roll back to before it. A mediocre critic holding 0.35 is no such thing."""
    n, onset = 950, 800
    steps = np.arange(1, n + 1)
    reward = 0.28 + 0.3 * np.minimum(1, steps / 780) + ar1(85, n, 0.3, 0.03)
    learnt = np.minimum(0.6, 0.8 * steps / 600) - 0.2
    diverged = np.where(steps < onset, learnt, 0.4 - 2.2 * (steps - onset) / (n - onset))
    run = make_run(tmp_path / "diverged", reward=reward, critic__vf_explained_var=diverged + ar1(86, n, 0.3, 0.05),
                   config={"max_steps": 1500})
    kinds = {f.kind for f in diagnose(run).findings}
    assert "critic_diverged" in kinds
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_step is not None and 600 <= v.rollback_step <= onset
    mediocre = make_run(tmp_path / "mediocre", reward=reward, config={"max_steps": 1500},
                        critic__vf_explained_var=np.minimum(0.35, 0.5 * steps / 300) + ar1(87, n, 0.3, 0.05))
    assert "critic_diverged" not in {f.kind for f in diagnose(mediocre).findings}


def test_an_agent_loop_logging_episode_success_and_no_reward_is_read_on_its_success(tmp_path):
    """holdout25: a hand-written agent loop logged `train/episode_success` and `eval/eval_success`, no reward; its
    success fell 0.46 -> 0.27 after the policy began repeating tool calls, and it was told to continue with nothing
    read. A training success rate under any prefix stands in for the reward, and a held-out success is quality."""
    n = 260
    steps = np.arange(1, n + 1)
    success = 0.18 + 0.28 * np.minimum(1, steps / 190) - 0.2 * np.clip((steps - 190) / 70, 0, 1)
    run = make_run(tmp_path, interval=5, train__episode_success=success + ar1(88, n, 0.3, 0.02),
                   train__mean_turns=4 + 7 * np.clip((steps - 190) / 70, 0, 1), config={"max_steps": 3000})
    assert run.has("reward_mean")
    assert verdict(run).decision == "rollback"


@pytest.mark.parametrize(("key", "stands_in"), [
    ("env__success", True), ("train__tests_passed_frac", True), ("train__correct_frac", True),
    ("train__task_success_rate", True), ("train__timeout_rate", False), ("train__pref_accuracy", False),
])
def test_a_loops_one_success_share_stands_in_for_a_missing_reward(tmp_path, key, stands_in):
    """A loop with no reward logs what it is trained on as a share solved, passed or succeeded, under a name of its
    own; a failure share (timeouts, errors) or a preference pair accuracy is no reward."""
    n = 120
    run = make_run(tmp_path, **{key: np.linspace(0.1, 0.5, n), "train__kl": np.linspace(0, 0.05, n)})
    assert run.has("reward_mean") is stands_in


def test_a_flat_reward_is_not_rescued_by_one_lucky_evaluation_but_by_an_eval_that_holds_a_gain(tmp_path):
    """holdout25: a search agent whose tool returned nothing sat at reward 0.33 for 700 steps of 2000; its held-out
    accuracy went 0.29 -> 0.34 (1.3 noise units) with one lucky 0.366 along the way. "Learning anyway" read the lucky
    evaluation as a gain and the run continued. A gain that holds is its latest level clear of the start; then the
    flat reward is no answer yet."""
    n = 700
    reward = 0.33 + ar1(94, n, 0.3, 0.04)
    lucky = np.array([0.29, 0.292, 0.338, 0.366, 0.332, 0.34, 0.338, 0.322, 0.352, 0.316, 0.356, 0.322, 0.354, 0.324])
    run = make_run(tmp_path / "lucky", reward=reward, eval_every=50, eval_values=lucky, config={"max_steps": 2000})
    assert verdict(run).decision == "stop"
    held = np.array([0.29, 0.31, 0.35, 0.38, 0.40, 0.41, 0.40, 0.41, 0.40, 0.42, 0.41, 0.40, 0.41, 0.41])
    run = make_run(tmp_path / "held", reward=reward, eval_every=50, eval_values=held, config={"max_steps": 2000})
    assert "where it started" not in verdict(run).headline  # (its eval's own plateau may stop it, on its own terms)


def test_a_total_reward_pulled_down_by_a_growing_penalty_while_the_task_part_still_rises_is_no_decline(tmp_path):
    """holdout26's live checks: a hand loop's total (task + format + a length penalty) peaked early and eased as
    answers lengthened while its task reward kept rising; checked at 29% of its plan it was rolled back to step
    700. The total's fall is the penalty growing; what the run is for still improves. With the task part falling
    too, the total's decline stands."""
    n = 867
    steps = np.arange(1, n + 1)
    task = 0.41 + 0.09 * steps / n + ar1(95, n, 0.3, 0.02)
    penalty = -0.01 - 0.13 * steps / n + ar1(96, n, 0.3, 0.004)
    fmt = 0.93 + 0.04 * np.minimum(1, steps / 400) + ar1(97, n, 0.3, 0.004)
    total = task + 0.1 * fmt + penalty
    run = make_run(tmp_path / "penalty", reward=total, rewards__task__mean=task, rewards__format__mean=fmt,
                   rewards__length_penalty__mean=penalty, config={"max_steps": 3000})
    assert verdict(run).decision == "continue"
    falling = 0.5 - 0.06 * steps / n + ar1(95, n, 0.3, 0.02)
    run = make_run(tmp_path / "task-falls", reward=falling + 0.1 * fmt + penalty, rewards__task__mean=falling,
                   rewards__format__mean=fmt, rewards__length_penalty__mean=penalty, config={"max_steps": 3000})
    assert verdict(run).decision != "continue"


def test_a_benchmark_named_for_its_size_is_read_no_finer_than_that_size_however_its_scores_are_rounded(tmp_path):
    """holdout25's live check at 10% of a code-RL run: HumanEval+ (164 problems) at 0.579, 0.579, 0.561, 0.506 over
    its first four evaluations, logged to three decimals (which fit a grid of 1,000 problems), read as a decline of
    2.4 noise units and rolled back to step 100. On 164 problems one evaluation is off by about 0.04: a 0.07 dip
    is under two of them."""
    from assessor.diagnose.evaluation import decline_noise

    values = np.array([0.579, 0.579, 0.561, 0.506])
    assert decline_noise("humaneval_plus_pass1", values, values) >= math.sqrt(0.579 * 0.421 / 164) - 1e-9
    n = 300
    steps = np.arange(1, n + 1)
    make_run(tmp_path, reward=0.3 + 0.05 * steps / n + ar1(98, n, 0.3, 0.03), config={"max_steps": 3000},
             eval_every=100, eval_values=values[1:])
    # make_run names the held-out series `eval_reward`; write HumanEval+ under its own name beside it
    lines = (tmp_path / "log.jsonl").read_text(encoding="utf-8").splitlines()
    at = zip((0, 100, 200, 300), values, strict=True)
    lines += [f'{{"step": {s}, "eval/humaneval_plus_pass1": {v}}}' for s, v in at]
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    from assessor import load_run
    assert verdict(load_run(tmp_path)).decision != "rollback"


@pytest.mark.parametrize("eval_falls", [False, True])
def test_a_kl_penalised_reward_down_while_the_held_out_eval_holds_its_gain_is_drift_not_a_better_model_behind(
        tmp_path, eval_falls):
    """holdout25: a TRL PPO run on a learned reward model whose score crept on while KL went 6 -> 24 (the KL-penalised
    rlhf_reward down 7 standard errors from its peak) and whose judge win rate held 0.60-0.64 since step 450 was
    rolled back to 750. The eval shows no better model behind: stop. With the eval falling too, a rollback."""
    n = 950
    steps = np.arange(1, n + 1)
    score = 0.2 + 2.4 * np.minimum(1, steps / 450) + 0.7 * np.clip((steps - 450) / 500, 0, 1) + ar1(99, n, 0.3, 0.1)
    kl = 1 + 5 * np.minimum(1, steps / 450) + 18 * np.clip((steps - 450) / 500, 0, 1) + ar1(100, n, 0.3, 0.3)
    head = [0.493, 0.477, 0.485, 0.507, 0.525, 0.538, 0.54, 0.58, 0.605, 0.585, 0.61]
    tail = [0.58, 0.56, 0.55, 0.53, 0.52, 0.51, 0.5, 0.49] if eval_falls else [0.565, 0.595, 0.642, 0.63, 0.613,
                                                                               0.57, 0.603, 0.62]
    run = make_run(tmp_path, objective__scores=score, objective__rlhf_reward=score - 0.05 * kl, objective__kl=kl,
                   eval_every=50, eval_values=np.array(head + tail), config={"max_steps": 2000})
    assert "shaped_reward_declined" in {f.kind for f in diagnose(run).findings}
    assert verdict(run).decision == ("rollback" if eval_falls else "stop")


@pytest.mark.parametrize("eval_falls", [False, True])
def test_an_early_training_reward_sag_the_held_out_eval_does_not_share_is_no_rollback_yet(tmp_path, eval_falls):
    """holdout28's live checks: verl GRPO at step 60 of 600, its answers doubling in length and its training score
    sagging 0.32 -> 0.25 while MATH-500 barely moved, was sent back to step 20. In the first fifth of a plan, a sag
    of the training reward alone is adaptation until the held-out eval shares it; when it does, roll back."""
    n = 60
    steps = np.arange(1, n + 1)
    reward = 0.3 + 0.03 * np.minimum(1, steps / 12) - 0.08 * np.clip((steps - 15) / 40, 0, 1) + ar1(101, n, 0.3, 0.01)
    evals = np.array([0.42, 0.43, 0.42, 0.36, 0.31, 0.29] if eval_falls else [0.42, 0.43, 0.42, 0.42, 0.43, 0.42])
    run = make_run(tmp_path, reward=reward, response_length=450 + 6 * steps, eval_every=10, eval_values=evals,
                   config={"max_steps": 600})
    v = verdict(run)
    assert v.decision == ("rollback" if eval_falls else "continue")
    assert eval_falls or "training reward sagged" in v.headline


def test_held_out_names_a_hallucination_rate_is_lower_is_better_and_a_count_measures_nothing():
    """holdout27: `heldout_halluc_rate` (lower is better) was read as higher-is-better and put after
    `heldout_claims_per_answer` and `heldout_n` (a sample count), which the eval order read as quality measures
    because they were named for the held-out set."""
    from assessor.diagnose.evaluation import LOWER_IS_BETTER, _named_only_held_out, _quality_name

    assert "heldout_halluc_rate" in LOWER_IS_BETTER and "toxicity_score" in LOWER_IS_BETTER
    assert not _quality_name("heldout_n") and _quality_name("heldout_halluc_rate")
    assert _named_only_held_out("heldout_claims_per_answer") and not _named_only_held_out("heldout_halluc_rate")
    assert sorted(["heldout_claims_per_answer", "heldout_halluc_rate"], key=_named_only_held_out)[0] == (
        "heldout_halluc_rate")


def test_a_share_of_groups_solved_or_failed_falling_is_no_task_score_falling(tmp_path):
    """holdout27: `frac_solved_or_failed` (groups all solved or all failed: no signal) fell 0.31 -> 0.13 as a 0/1
    reward rose 0.21 -> 0.47, and was read as a task score falling: "reward hacking", rollback to step 0."""
    n = 600
    steps = np.arange(1, n + 1)
    reward = 0.21 + 0.26 * steps / n + ar1(102, n, 0.3, 0.02)
    run = make_run(tmp_path, reward=reward, frac_solved_or_failed=0.31 - 0.18 * steps / n + ar1(103, n, 0.3, 0.01),
                   config={"max_steps": 2500})
    assert "reward_hacking" not in {f.kind for f in diagnose(run).findings}
    assert verdict(run).decision == "continue"


def test_a_benchmark_named_only_in_the_key_it_was_logged_as_is_read_no_finer_than_its_size(tmp_path):
    """holdout29's live check of an OpenRLHF run at step 150: MATH-500 (`eval_math500_pass1`, read as the held-out
    `reward_mean`) at 0.412, 0.412, 0.394, 0.390 was called a decline of 4.8 eval-to-eval noise units and rolled back
    to step 50. On 500 problems one evaluation is off by about 0.022: the dip is one of those, not a decline."""
    steps = np.arange(1, 151)
    reward = 0.30 + 0.03 * steps / 150 + ar1(101, 150, 0.3, 0.01)
    pass1 = {0: 0.412, 50: 0.412, 100: 0.394, 150: 0.39}
    lines = ["Evaluation completed in 88.41 seconds, global_step 0, eval_metrics: {'eval_math500_pass1': 0.412}"]
    for step in steps:
        lines.append(f"✨ Global step {step}: {{'reward': {reward[step - 1]:.6f}, 'kl': {0.004 + 1e-5 * step:.6g}, "
                     f"'actor_lr': 1e-06, 'actor_grad_norm': 0.33}}")
        if step in pass1:
            lines.append(f"Evaluation completed in 91.70 seconds, global_step {step}, eval_metrics: "
                         f"{{'eval_math500_pass1': {pass1[step]}}}")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    d = diagnose(run)
    assert d.eval.curves and d.eval.curves[0].decline_noise >= math.sqrt(0.412 * 0.588 / 500) - 1e-9
    assert "eval_declining" not in {f.kind for f in d.findings}
    assert verdict(run).decision != "rollback"


def test_a_penalty_not_yet_phased_in_is_no_task_component_stuck_at_its_floor(tmp_path):
    """holdout29's live checks of a hand-written GRPO loop whose length penalty ramps in from step 300: before it,
    `reward/len_penalty` is 0 on every step while `reward/correct` climbs, and the run was stopped at steps 100-300
    as 'the task component never leaves its floor (len_penalty at 0)'. A penalty or format term resting at 0 is no
    task left unsolved; the correctness reward beside it is what says the task."""
    n = 200
    steps = np.arange(1, n + 1)
    correct = 0.50 + 0.08 * steps / n + ar1(102, n, 0.3, 0.02)
    run = make_run(tmp_path, reward__total=correct, reward__correct=correct, reward__len_penalty=np.zeros(n),
                   kl=1e-5 * steps, grad_norm=0.3 + ar1(103, n, 0.3, 0.02))
    d = diagnose(run)
    assert "no_learning_signal" not in {f.kind for f in d.findings}, d.findings
    assert verdict(run).decision == "continue"


def test_a_truncation_rate_on_a_benchmark_is_no_quality_measure(tmp_path):
    """holdout5's OpenRLHF console logs `eval_math500_truncated_rate` (0 at every evaluation) beside the pass rates;
    named for a benchmark, it was read as a held-out quality eval that "does not respond to training": stop."""
    from assessor.diagnose.context import Context
    from assessor.diagnose.evaluation import quality_metrics

    steps = np.arange(1, 241)
    reward = 0.25 + 0.12 * steps / 240 + ar1(104, 240, 0.3, 0.03)
    lines = []
    for step in steps:
        lines.append(f"✨ Global step {step}: {{'reward': {reward[step - 1]:.6f}, 'kl': {0.004 + 2e-5 * step:.6g}, "
                     f"'actor_lr': 1e-06, 'actor_grad_norm': 0.33}}")
        if step % 40 == 0:
            lines.append(f"Evaluation completed in 38.40 seconds, global_step {step}, eval_metrics: "
                         f"{{'eval_math500_pass1': {0.30 + 0.005 * step / 40:.3f}, "
                         "'eval_math500_truncated_rate': 0.0, 'eval_truncated_rate': 0.0}")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert not [m for m in quality_metrics(Context(run)) if "truncated" in m]
    assert "eval_not_transferring" not in {f.kind for f in diagnose(run).findings}


def test_a_gradient_norm_that_drops_to_a_lower_level_and_stays_dates_no_breakage(tmp_path):
    """holdout30: a hand-written loop's gradient norm halved at step 64 (0.885 -> 0.474) and stayed; the run blew
    up at 560. The drop was taken as 'the gradient norm changed regime', a breakage, and the run was sent back to
    step 40 instead of 560. A norm settling lower is no break; a jump that stays still is one."""
    n = 400
    steps = np.arange(1, n + 1)
    grad = np.where(steps < 64, 0.9, 0.45) * (1 + ar1(105, n, 0.3, 0.02))
    grad[63] = 0.2  # the step it dropped on, below both levels (as logged: a dip that opens the new level)
    reward = 0.3 + 0.3 * np.minimum(1, steps / 250) + ar1(106, n, 0.3, 0.01)
    run = make_run(tmp_path, reward=reward, grad_norm=grad, kl=0.01 * steps / n)
    d = diagnose(run)
    drops = [f for f in d.findings if f.signal == "grad_norm" and f.kind == "spike_regime_change"]
    assert all(f.severity == "watch" and "dropped" in f.observation for f in drops), drops
    assert d.best_checkpoint.breakage_step is None
    assert verdict(run).decision == "continue"


def test_a_mean_over_samples_on_a_named_benchmark_is_banded_by_its_problems_not_its_grid(tmp_path):
    """holdout30's blind reader: MATH-500 scored as mean@4 (a 1/2000 grid) was given "one sampling error of a pass
    rate on 2000 problems" as its as-good-as-the-best margin, half the width of its 500 problems' error."""
    import json

    n = 400
    rng = np.random.default_rng(12)
    rows = [{"step": s, "reward": 0.4 + 0.2 * s / n + float(rng.normal(0, 0.01))} for s in range(1, n + 1)]
    levels = [0.50, 0.55, 0.60, 0.62, 0.63, 0.64, 0.64, 0.65]
    for k, level in enumerate(levels):
        score = round((level + float(rng.normal(0, 0.01))) * 2000) / 2000
        rows.append({"step": 50 * (k + 1), "val-core/math500/acc/mean@4": score})
    (tmp_path / "log.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    best = diagnose(load_run(tmp_path)).best_checkpoint
    assert best.eval_set_size != 2000
    assert best.eval_set_size is None or (best.eval_set_size == 500 and best.eval_set_named)


def test_a_held_out_judge_beside_the_held_out_copy_of_the_trained_reward_is_read_first(tmp_path):
    """holdout30: a verl summariser trained on ROUGE whose validation logs the reward (ROUGE, still rising) and a
    judge score of the same summaries (6.9 at step 400, 5.7 by 900, the summaries pasting the article): the judge
    fell as a side eval and the run continued on ROUGE. The held-out reward is the proxy being optimised; a judge
    of the same generations is the independent measure, and its peak is the better model."""
    import json

    n = 900
    rng = np.random.default_rng(14)
    rows = [{"step": s, "critic/score/mean": 0.25 + 0.12 * s / n + float(rng.normal(0, 0.01)),
             "actor/entropy": 0.9 - 0.4 * s / n, "actor/kl_loss": 0.01 + 0.08 * s / n} for s in range(1, n + 1)]
    for s in range(50, n + 1, 50):
        judge = 5.5 + 1.4 * min(s, 400) / 400 - 1.2 * max(0, s - 400) / 500 + float(rng.normal(0, 0.05))
        rows.append({"step": s, "val-core/cnn/reward/mean@1": 0.24 + 0.13 * s / n + float(rng.normal(0, 0.003)),
                     "val-aux/cnn/judge/mean@1": judge})
    (tmp_path / "run.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    d = diagnose(run)
    assert "judge" in (d.eval.curves[0].metric if d.eval.curves else ""), [c.metric for c in d.eval.curves]
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_step is not None and 350 <= v.rollback_step <= 450


def test_a_kl_pinned_near_zero_while_the_policy_changes_is_said_to_anchor_nothing(tmp_path):
    """holdout30's blind reader: a TRL run with its reference synced to the policy every step kept a KL of 0.0004 for
    1,000 steps while entropy halved and answers doubled, and nothing on the sheet questioned it. A KL that grows
    with the policy, however small, is no such case."""
    n = 300
    steps = np.arange(1, n + 1)
    common = {"reward": 0.5 + 0.1 * steps / n + ar1(107, n, 0.3, 0.01), "entropy": 0.58 - 0.28 * steps / n,
              "completion_length": 420 + 480 * steps / n}
    run = make_run(tmp_path / "synced", kl=0.0004 + ar1(108, n, 0.3, 0.00002), **common)
    assert "kl_pinned_near_zero" in {f.kind for f in diagnose(run).findings}
    run = make_run(tmp_path / "anchored", kl=0.0004 + 0.03 * steps / n, **common)
    assert "kl_pinned_near_zero" not in {f.kind for f in diagnose(run).findings}


def test_an_eval_holding_within_a_tenth_of_its_noise_is_not_said_to_stand_0x_above(tmp_path):
    """holdout31's blind reader met "stand 0.0x its eval-to-eval noise" (the evaluations 0.656 and 0.655)."""
    n = 400
    steps = np.arange(1, n + 1)
    evals = np.array([0.40, 0.52, 0.60, 0.66, 0.70, 0.701, 0.6998, 0.7001])
    run = make_run(tmp_path, reward=0.3 + 0.2 * np.minimum(1, steps / 250) + ar1(113, n, 0.3, 0.01),
                   eval_every=50, eval_values=evals)
    holding = [f.observation for f in diagnose(run).findings if f.kind == "eval_holding"]
    assert holding and all("0.0x" not in o for o in holding), holding


def test_a_live_run_spent_in_the_last_twentieth_of_its_plan_is_let_finish(tmp_path):
    """holdout's verl PPO run at step 420 of 435, its eval flat since step 100 while the training score climbs, was
    stopped: the 15 steps left cost less than the check. Stopping it saves almost nothing and keeping the final
    weights loses nothing: continue to the end. With a fifth of the plan left, the same curves are a stop."""
    n = 420
    steps = np.arange(1, n + 1)
    reward = 0.1 + 0.6 * np.minimum(1, steps / 400) + ar1(114, n, 0.3, 0.01)
    evals = np.concatenate([0.1 + 0.42 * np.arange(1, 11) / 10, 0.525 + 0.005 * (np.arange(32) % 2)])
    for total, decision in ((435, "continue"), (525, "stop")):
        run = make_run(tmp_path / str(total), reward=reward, eval_every=10, eval_values=evals,
                       config={"max_steps": total})
        assert verdict(run).decision == decision, total


@pytest.mark.parametrize(("name", "size"), [
    ("val-core/HuggingFaceH4/MATH-500/reward/mean@1", 500),  # verl names validation after the data source
    ("val-core/openai/gsm8k/reward/mean@1", 1319),
    ("eval_math500_pass1", 500),
    ("eval/aime_2024/pass@1", 30),
    ("eval/math_hard/accuracy", None),
])
def test_a_benchmark_is_known_by_its_name_however_the_framework_spells_it(name, size):
    from assessor.diagnose.evaluation import named_set_size

    assert named_set_size(name) == size


def test_a_training_reward_drifting_on_its_plateau_is_no_gain_that_fails_to_transfer(tmp_path):
    # The reward climbed 0.36 -> 0.68 by step 350 and drifted to 0.71 over the 1,250 steps since; the held-out score
    # levelled off with it. Its stretch means are precise enough to call the drift many standard errors, but a
    # tenth of the climb is the plateau's drift: the eval has converged with the reward (eval_plateau), not
    # "stood still while the training reward rose".
    n = 1600
    t = np.arange(1, n + 1)
    reward = np.where(t <= 350, 0.36 + 0.32 * t / 350, 0.68 + 0.03 * (t - 350) / 1250) + ar1(130, n, 0.3, 0.025)
    evals = np.array([0.19, 0.36, 0.52, 0.60, 0.64, 0.645, 0.65, 0.655, 0.66, 0.655, 0.665, 0.67, 0.668, 0.672,
                      0.675, 0.67])
    run = with_evals(make_run(tmp_path, reward=reward).path, "reward_mean", 100, evals)
    kinds = {f.kind for f in diagnose(run).findings}
    assert "eval_plateau" in kinds and "eval_not_transferring" not in kinds
    assert verdict(run).decision == "stop"


def test_a_reward_at_its_ceiling_from_the_first_step_is_saturated_though_it_still_edges_up(tmp_path):
    # holdout33: an instruct model on GSM8K, 40 steps, the score 0.92-0.97 from step 1 edging up to 0.98 (no
    # per-group spread logged; at this level almost every group scores alike). The prompts were too easy from the
    # first step: stop. A run that climbed there from 0.6 is still learning and goes on.
    n = 40
    t = np.arange(1, n + 1)
    rng = np.random.default_rng(0)
    easy = make_run(tmp_path / "easy", reward=np.clip(0.94 + 0.045 * t / n + rng.normal(0, 0.008, n), 0, 1),
                    kl=1e-5 * t)
    d = diagnose(easy)
    assert d.signals["reward_mean"].trend == "rising" and "reward_saturated" in {f.kind for f in d.findings}
    assert verdict(easy).decision == "stop"
    climbing = make_run(tmp_path / "climbing", reward=np.clip(0.6 + 0.38 * t / n + rng.normal(0, 0.012, n), 0, 1),
                        kl=1e-5 * t)
    assert verdict(climbing).decision == "continue"


def test_a_task_part_scattering_just_above_its_floor_under_climbing_format_and_brevity_parts_is_stop(tmp_path):
    """holdout34: a hand loop's reward is r_correct + r_format + 0.25 r_brevity; the total climbs 0.28 -> 1.13 on the
    format and brevity parts alone while r_correct is 0 on 83% of steps and 1/256 or 2/256 on the rest, and held-out
    accuracy is 0.0-0.008 at every evaluation. It was rolled back as reward hacking ('r_correct fell from 0.00104 to
    0.00069, 29.9 standard errors': a noise of ~0 read off mostly tied differences). Nothing was ever learnt: stop."""
    rng = np.random.default_rng(7)
    n = 900
    steps = np.arange(1, n + 1)
    fmt = np.clip(0.25 + 0.73 * steps / 600, 0, 0.98) + ar1(71, n, 0.3, 0.02)
    brevity = 0.12 + 0.46 * np.clip(steps / 700, 0, 1) + ar1(72, n, 0.3, 0.02)
    correct = np.where(rng.random(n) < 0.83, 0.0, rng.choice([1 / 256, 2 / 256], n))
    run = make_run(tmp_path, reward=correct + fmt + 0.25 * brevity, r_correct=correct, r_format=fmt,
                   r_brevity=brevity, config={"max_steps": 3000})
    run = with_evals(tmp_path, "heldout_acc", 100, np.array([0.0, 0.004, 0.004, 0.008, 0.0, 0.0, 0.004, 0.008, 0.008]))
    d = diagnose(run)
    assert "reward_hacking" not in {f.kind for f in d.findings}
    v = verdict(run)
    assert v.decision == "stop"
    assert any("correct" in e.observation and "floor" in e.observation for e in v.evidence)


def test_eval_noise_is_not_zero_when_most_differences_tie():
    """A pass rate near its floor (0, 1/256, 2/256, mostly 0) has mostly tied differences: their MAD is 0, and a
    noise of (nearly) 0 made a move of one success in a thousand read as dozens of standard errors."""
    from assessor.diagnose.evaluation import eval_noise

    values = np.zeros(200)
    values[::10] = 1 / 256  # one success in 256 on every tenth step
    values[5::20] = 2 / 256
    assert eval_noise(values) >= 0.5 * float(np.std(np.diff(values, n=2))) / math.sqrt(6.0)
    # and on a curve whose differences do not tie, the robust spread is kept (an outlier does not inflate it)
    smooth = 0.5 + ar1(5, 40, 0.0, 0.01)
    smooth[20] += 0.3
    assert eval_noise(smooth) < 0.02


def test_an_eval_that_eased_short_of_a_decline_does_not_vouch_for_a_training_reward_that_fell(tmp_path):
    """holdout35: a DAPO loop's upper clip lets entropy run up (0.47 -> 1.06) from step ~520; the training reward
    falls 6.7 standard errors from its peak and the held-out accuracy eases from 0.53 to 0.48 (1.6x its noise below
    the evaluations around its peak, short of the 2x a decline needs). The easing eval was read as 'holding' and
    vouched for the run: continue. Between one and two noise units down it neither confirms nor clears the fall: roll
    back, to the eval's newest good point before the reward fell, not to its lucky 0.538 at step 600."""
    n = 900
    steps = np.arange(1, n + 1)
    level = np.where(steps <= 500, -0.27 + 0.46 * steps / 500, 0.19 - 0.06 * np.clip((steps - 520) / 300, 0, 1))
    entropy = 0.47 + 0.6 * np.clip((steps - 520) / 380, 0, 1)
    run = make_run(tmp_path, reward=level + ar1(81, n, 0.3, 0.03), entropy=entropy + ar1(82, n, 0.3, 0.01),
                   config={"max_steps": 1600})
    acc = [0.392, 0.396, 0.386, 0.422, 0.394, 0.412, 0.448, 0.43, 0.462, 0.472, 0.49, 0.526, 0.532, 0.512, 0.538,
           0.506, 0.464, 0.5, 0.528, 0.478, 0.482, 0.484]
    run = with_evals(tmp_path, "accuracy", 40, np.array(acc))
    d = diagnose(run)
    assert 1.0 <= (d.eval.decline_from_peak_noise or 0.0) < 2.0
    v = verdict(run)
    assert v.decision == "rollback"
    assert v.rollback_step is not None and 480 <= v.rollback_step <= 560


def test_a_lucky_evaluation_well_into_a_dated_fall_is_not_the_target(tmp_path):
    """holdout35: an agent's training sandbox breaks at step 900; the training reward falls 0.50 -> 0.29 from there
    and held-out success, best at 0.535 at step 900, slides to 0.445 by 1200, with a lucky 0.522 at step 1050
    between 0.49 and 0.48. The reward dates the fall, but no evaluation within the band came before its newest good
    point (~880), so that bound was dropped and the rollback went to 1050, well into the slide. The newest
    evaluation before the dated fall: 900."""
    n = 1200
    steps = np.arange(1, n + 1)
    level = np.where(steps <= 700, 0.30 + 0.2 * steps / 700, 0.5) - 0.21 * np.clip((steps - 900) / 100, 0, 1)
    run = make_run(tmp_path, reward=level + ar1(91, n, 0.3, 0.03), config={"max_steps": 3000})
    success = [0.32, 0.285, 0.282, 0.343, 0.33, 0.35, 0.405, 0.405, 0.395, 0.45, 0.425, 0.43, 0.443, 0.497, 0.492,
               0.487, 0.5, 0.535, 0.468, 0.49, 0.522, 0.48, 0.448, 0.445]
    run = with_evals(tmp_path, "success_rate", 50, np.array(success))
    v = verdict(run)
    assert v.decision == "rollback"
    assert v.rollback_step == 900
    best = diagnose(run).best_checkpoint
    assert best.reward_peak_step is not None and best.reward_peak_reason is not None
    assert f"no later than step {best.reward_peak_step}, {best.reward_peak_reason}" in best.reason


def test_a_reward_at_one_level_from_its_first_step_never_levelled_off(tmp_path):
    """holdout34's blind reader: 'reward_mean has levelled off at 1 since about step 540 (from 1 at the start)' for a
    summed reward whose format part sat at its ceiling from step 1: a plateau reached mid-run, read off a curve that
    never moved."""
    rng = np.random.default_rng(6)
    reward = np.round(0.997 + np.round(rng.normal(0.003, 0.0018, 80) * 1280) / 1280, 4)  # 80 logs, every 10 steps
    run = make_run(tmp_path, reward=reward, interval=10, config={"max_steps": 2500})
    plateau = [f for f in diagnose(run).findings if f.kind == "reward_plateau"]
    assert plateau and all("levelled off" not in f.observation for f in plateau)
    assert "not climbed measurably since the start" in plateau[0].observation


def test_a_single_drop_two_evaluations_after_the_peak_does_not_call_the_peak_the_one_before_it(tmp_path):
    """holdout36's blind reader: 'fell 7x ... below the peak of the evaluation before it (0.594 at step 225)' for the
    latest evaluation at 275, with 250 between them."""
    n = 275
    reward = 0.3 + 0.3 * np.clip(np.arange(1, n + 1) / 200, 0, 1) + ar1(97, n, 0.3, 0.01)
    evals = np.array([0.416, 0.396, 0.45, 0.476, 0.488, 0.464, 0.496, 0.494, 0.594, 0.532, 0.482])
    run = with_evals(make_run(tmp_path, reward=reward, config={"max_steps": 1000}).path, "accuracy", 25, evals)
    drop = only_kind(diagnose(run).findings, "eval_latest_drop")
    assert "the evaluation before it" not in drop.observation and "at step 225" in drop.observation


@pytest.mark.parametrize(("evals", "decision"), [
    # A held-out split still setting clear new highs: the training prompts are learnt, the model is not done.
    (np.array([0.41, 0.42, 0.44, 0.45, 0.47, 0.48, 0.50, 0.51, 0.53]), "continue"),
    # The same saturated reward over an eval that stopped moving: nothing left to gain.
    (np.array([0.41, 0.45, 0.47, 0.47, 0.468, 0.472, 0.469, 0.471, 0.47]), "stop"),
])
def test_a_saturated_reward_is_spent_unless_the_held_out_eval_still_sets_clear_new_highs(tmp_path, evals, decision):
    # holdout39: an instruction-following reward at 0.97 from step 1 was stopped while its hard split rose 0.41 -> 0.52.
    reward = np.clip(0.68 + 0.29 * (1 - np.exp(-STEPS / 50)) + ar1(47, N, 0.3, 0.008), 0, 1)
    zero_spread = np.clip(reward ** 8 + ar1(48, N, 0.3, 0.02), 0, 1)
    run = make_run(tmp_path, reward=reward, frac_reward_zero_std=zero_spread, kl=0.03 + ar1(49, N, 0.3, 0.001),
                   eval_every=N // len(evals), eval_values=evals)
    assert "reward_saturated" in {f.kind for f in diagnose(run).findings}
    assert verdict(run).decision == decision


@pytest.mark.parametrize(("key", "rescale"), [("eval_rm_score", True), ("eval_math_acc", False)])
def test_a_held_out_pass_rate_that_steps_with_the_reward_says_the_model_changed_not_the_ruler(tmp_path, key, rescale):
    # holdout39: a chat template changed at a relaunch; the reward stepped down in one update with KL, entropy and the
    # gradient norm unbroken, and a held-out accuracy fell with it. A reward model's held-out scores step with a new
    # reward model; a pass rate a verifier checks cannot.
    _rescaled_run(tmp_path, broken=False)  # written to tmp_path; read again below with the evaluations added
    log = tmp_path / "log.jsonl"
    rows = [json.dumps({"step": s, key: (0.55 if s <= 400 else 0.35) + 0.002 * ((s // 50) % 3)})
            for s in range(50, 601, 50)]
    log.write_text(log.read_text(encoding="utf-8") + "\n".join(rows) + "\n", encoding="utf-8")
    d = diagnose(load_run(tmp_path))
    assert any(f.kind == "reward_rescaled" for f in d.findings) is rescale
