"""The rules judge on constructed runs: every pattern of the diagnosis, healthy runs included.

A healthy run stopped is the costliest error, so the healthy and noisy cases come first.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from assessor.diagnose import diagnose
from assessor.judge.base import JudgeRequest
from assessor.judge.rules import RulesJudge
from tests.runs import ar1, make_run

N = 300
STEPS = np.arange(1, N + 1)


def verdict(run):
    return RulesJudge().judge(JudgeRequest(run=run, diagnostics=diagnose(run))).verdict


def rising(total: float, tau: float = 120) -> np.ndarray:
    return total * (1 - np.exp(-STEPS / tau))


HEALTHY = {
    "rising with kl": {"reward": 0.2 + rising(0.6), "kl": 0.005 + rising(0.05, 200), "reward_std": 0.4 - rising(0.1),
                       "entropy": 0.6 - rising(0.2, 400)},
    "rising without kl": {"reward": 0.2 + rising(0.5), "reward_std": 0.35 + 0 * STEPS, "entropy": 0.5 - rising(0.1)},
    "noisy but improving": {"reward": 0.3 + 0.25 * STEPS / N, "kl": 0.02 + 0.03 * STEPS / N},
}


@pytest.mark.parametrize("case", sorted(HEALTHY))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_healthy_runs_continue(tmp_path, case, seed):
    series = {k: v + ar1(seed * 10 + i, N, 0.5, 0.03 * (float(np.mean(np.abs(v))) + 0.01))
              for i, (k, v) in enumerate(HEALTHY[case].items())}
    v = verdict(make_run(tmp_path, **series))
    assert v.decision == "continue", v.headline


@pytest.mark.parametrize("seed", range(6))
def test_pure_noise_is_never_stopped(tmp_path, seed):
    run = make_run(tmp_path, reward=0.5 + ar1(seed, N, 0.6, 0.1), kl=0.05 + ar1(seed + 50, N, 0.6, 0.004),
                   reward_std=0.3 + ar1(seed + 99, N, 0.3, 0.02))
    assert verdict(run).decision == "continue"


def test_one_step_spike_and_transient_dip_do_not_stop_a_run(tmp_path):
    reward = 0.2 + rising(0.6) + ar1(7, N, 0.4, 0.03)
    reward[150:155] -= 0.4
    kl = 0.01 + rising(0.04) + ar1(8, N, 0.4, 0.002)
    kl[200] = 1.5
    assert verdict(make_run(tmp_path, reward=reward, kl=kl)).decision == "continue"


def test_very_early_run_continues(tmp_path):
    early = make_run(tmp_path, reward=np.array([0.1, 0.3, 0.2, 0.25, 0.3]), kl=np.array([0, 1e-3, 2e-3, 2e-3, 3e-3]))
    v = verdict(early)
    assert v.decision == "continue" and v.confidence <= 0.5


def test_peak_then_decline_rolls_back_to_the_checkpoint_before_the_peak(tmp_path):
    reward = np.where(STEPS < 150, 0.2 + 0.6 * STEPS / 150, 0.8 - 0.5 * (STEPS - 150) / 150)
    run = make_run(tmp_path, reward=reward + ar1(9, N, 0.3, 0.03), kl=0.01 + 0.2 * STEPS / N,
                   checkpoints=(50, 100, 150, 200, 250))
    v = verdict(run)
    assert v.decision == "rollback"
    assert v.rollback_step in (100, 150) and v.rollback_checkpoint == f"checkpoint-{v.rollback_step}"
    assert any(e.signal in ("reward_mean", "kl_reward") for e in v.evidence)


def test_eval_decline_rolls_back_to_the_eval_peak(tmp_path):
    evals = np.array([0.30, 0.42, 0.50, 0.55, 0.58, 0.52, 0.46, 0.41, 0.37, 0.33, 0.30, 0.28, 0.25, 0.22, 0.2])
    run = make_run(tmp_path, reward=0.2 + 0.5 * STEPS / N + ar1(10, N, 0.3, 0.03), eval_every=20,
                   eval_values=evals, checkpoints=(60, 90, 120, 180))
    v = verdict(run)
    assert (v.decision, v.rollback_step, v.rollback_checkpoint) == ("rollback", 90, "checkpoint-90")


def test_kl_rising_with_flat_reward_stops(tmp_path):
    reward = np.where(STEPS < 100, 0.2 + 0.5 * STEPS / 100, 0.7) + ar1(11, N, 0.3, 0.02)
    kl = 0.01 + 0.4 * STEPS / N + ar1(12, N, 0.3, 0.003)
    v = verdict(make_run(tmp_path, reward=reward, kl=kl))
    assert v.decision == "stop"
    assert "KL" in v.headline


def test_kl_rising_with_falling_reward_rolls_back(tmp_path):
    reward = np.where(STEPS < 120, 0.2 + 0.5 * STEPS / 120, 0.7 - 0.5 * (STEPS - 120) / 180)
    kl = np.where(STEPS < 120, 0.02, 0.02 + 0.5 * (STEPS - 120) / 180)
    v = verdict(make_run(tmp_path, reward=reward + ar1(13, N, 0.3, 0.02), kl=kl + ar1(14, N, 0.3, 0.003),
                         checkpoints=(100, 200)))
    assert (v.decision, v.rollback_checkpoint) == ("rollback", "checkpoint-100")


def test_saturated_reward_with_no_spread_stops(tmp_path):
    reward = np.clip(0.4 + rising(0.62, 60), 0, 1)
    v = verdict(make_run(tmp_path, reward=reward, reward_std=np.clip(0.45 * (1 - reward), 0, 1),
                         frac_reward_zero_std=np.clip(reward, 0, 1)))
    assert v.decision == "stop"


def test_identical_rewards_from_the_start_stop(tmp_path):
    v = verdict(make_run(tmp_path, reward=np.zeros(60), reward_std=np.zeros(60), learning_rate=np.full(60, 1e-5)))
    assert v.decision == "stop" and v.confidence >= 0.7


def test_collapse_to_the_reward_floor_rolls_back(tmp_path):
    reward = np.where(STEPS < 120, 0.8, 0.0) + np.where(STEPS < 120, ar1(15, N, 0.3, 0.05), 0.0)
    v = verdict(make_run(tmp_path, reward=reward, frac_reward_zero_std=np.where(STEPS < 120, 0.4, 1.0),
                         checkpoints=(100, 200)))
    assert (v.decision, v.rollback_checkpoint) == ("rollback", "checkpoint-100")


def test_length_explosion_to_the_cap_rolls_back_before_its_onset(tmp_path):
    length = np.where(STEPS < 140, 250.0, 512.0) + np.where(STEPS < 140, ar1(16, N, 0.3, 8.0), 0.0)
    clipped = np.where(STEPS < 140, 0.01, 1.0)
    reward = 0.7 + ar1(17, N, 0.3, 0.05)
    v = verdict(make_run(tmp_path, reward=reward, completions__mean_length=length, completions__clipped_ratio=clipped,
                         completions__max_length=np.full(N, 512.0), checkpoints=(50, 100, 150, 200),
                         config={"max_completion_length": 512}))
    assert v.decision == "rollback" and v.rollback_step is not None and v.rollback_step <= 140


def test_entropy_blow_up_with_reward_collapse_rolls_back(tmp_path):
    entropy = np.where(STEPS < 160, 0.4, 9.0) + ar1(18, N, 0.3, 0.02)
    reward = np.where(STEPS < 160, 0.6, 0.05) + ar1(19, N, 0.3, 0.03)
    v = verdict(make_run(tmp_path, reward=reward, entropy=entropy, checkpoints=(100, 150, 200),
                         config={"vocab_size": 151936}))
    # Reward sat on a plateau until the blow-up at 160: either checkpoint on that plateau is a right answer.
    assert v.decision == "rollback" and v.rollback_checkpoint in ("checkpoint-100", "checkpoint-150")


def test_diverged_loss_rolls_back(tmp_path):
    loss = 0.05 + ar1(20, N, 0.3, 0.01)
    loss[-5:] = np.nan
    grad = 0.3 + ar1(21, N, 0.3, 0.02)
    grad[-5:] = np.nan
    v = verdict(make_run(tmp_path, reward=0.2 + rising(0.5) + ar1(22, N, 0.3, 0.02), loss=loss, grad_norm=grad,
                         checkpoints=(100, 200, 280)))
    assert v.decision in ("rollback", "stop")
    assert any(e.signal in ("loss", "grad_norm") for e in v.evidence)


def test_loss_blow_up_with_a_gradient_regime_change_rolls_back_before_the_jump(tmp_path):
    broke = STEPS >= 200
    loss = np.where(broke, 0.3, 0.01) * (1 + ar1(23, N, 0.3, 0.3))
    grad = np.where(broke, 1.8, 0.25) + ar1(24, N, 0.3, 0.03)
    reward = 0.2 + rising(0.3) + ar1(25, N, 0.3, 0.03)
    v = verdict(make_run(tmp_path / "a", reward=reward, loss=loss, grad_norm=grad, checkpoints=(100, 150, 200, 250)))
    assert v.decision == "rollback" and v.rollback_step is not None and v.rollback_step < 200

    # The gradient level shift alone is a risk to watch, not a reason to throw steps away.
    quiet = 0.01 * (1 + ar1(26, N, 0.3, 0.3))
    v = verdict(make_run(tmp_path / "b", reward=reward, loss=quiet, grad_norm=grad, checkpoints=(100, 150, 200, 250)))
    assert v.decision == "continue"
    assert any(e.signal == "grad_norm" for e in v.evidence)


def test_kl_blow_up_on_a_flat_reward_rolls_back_to_just_before_the_jump(tmp_path):
    kl = np.where(STEPS < 220, 0.01 + 0.01 * STEPS / 220, 0.4 + 0.6 * (STEPS - 220) / 80)
    reward = 0.45 + ar1(27, N, 0.3, 0.08)  # flat and noisy: its "best stretch" is luck
    v = verdict(make_run(tmp_path, reward=reward, kl=kl * (1 + ar1(28, N, 0.3, 0.08)),
                         checkpoints=(50, 100, 150, 200, 250)))
    assert v.decision == "rollback" and v.rollback_step == 200


def test_dpo_that_never_leaves_ln2_stops_and_healthy_dpo_continues(tmp_path):
    flat = make_run(tmp_path / "a", loss=np.log(2) + ar1(23, N, 0.3, 0.002),
                    rewards__margins=ar1(24, N, 0.3, 0.01), rewards__accuracies=0.5 + ar1(25, N, 0.3, 0.03),
                    rewards__chosen=ar1(26, N, 0.3, 0.01), rewards__rejected=ar1(27, N, 0.3, 0.01))
    assert verdict(flat).decision == "stop"
    healthy = make_run(tmp_path / "b", loss=np.log(2) * np.exp(-STEPS / 200) + ar1(28, N, 0.3, 0.01),
                       rewards__margins=rising(3.0, 150) + ar1(29, N, 0.3, 0.05),
                       rewards__accuracies=0.5 + rising(0.4) + ar1(30, N, 0.3, 0.03),
                       rewards__chosen=ar1(31, N, 0.3, 0.02), rewards__rejected=-rising(3.0, 150))
    assert verdict(healthy).decision == "continue"


def test_verdict_explains_itself(tmp_path):
    reward = np.where(STEPS < 150, 0.2 + 0.6 * STEPS / 150, 0.8 - 0.5 * (STEPS - 150) / 150)
    v = verdict(make_run(tmp_path, reward=reward + ar1(32, N, 0.3, 0.03), checkpoints=(100, 200)))
    assert v.headline and v.rationale and v.evidence and v.recommended_actions
    assert "Best point" in v.rationale
    assert any("kl" in item for item in v.could_not_see)


def test_a_current_held_out_eval_at_its_best_outranks_a_sagging_training_reward(tmp_path):
    # Training reward bumps up and sags back under strongly autocorrelated noise; the held-out score keeps rising.
    reward = 0.2 + rising(0.3) + 0.08 * np.exp(-((STEPS - 220) / 25.0) ** 2) + ar1(29, N, 0.9, 0.01)
    rising_eval = 0.2 + 0.25 * (1 - np.exp(-np.arange(1, 16) / 5))
    v = verdict(make_run(tmp_path / "a", reward=reward, eval_every=20, eval_values=rising_eval))
    assert v.decision == "continue"

    # An eval that never moved vouches for nothing: the reward trajectory decides.
    flat_eval = np.full(15, 0.2) + np.random.default_rng(3).normal(0, 0.005, 15)
    d = diagnose(make_run(tmp_path / "b", reward=reward, eval_every=20, eval_values=flat_eval))
    from assessor.judge.rules import _eval_vouches
    assert not any(_eval_vouches(d, f) for f in d.findings)


def test_a_run_that_rose_is_not_called_converged_until_its_plateau_is_shown(tmp_path):
    reward = 0.2 + rising(0.3, tau=60) + ar1(30, N, 0.5, 0.08)
    v = verdict(make_run(tmp_path, reward=reward, kl=0.01 + 0 * STEPS + ar1(31, N, 0.3, 0.0005)))
    assert v.decision == "continue"
    assert "converged" not in v.headline and "flat" not in v.headline


def test_dpo_blind_spots_fit_preference_training_and_kl_is_said_once(tmp_path):
    from rich.console import Console

    from assessor.pipeline import assess_run
    from assessor.report.assessment_text import render_assessment
    from assessor.report.markdown import render_markdown

    run = make_run(tmp_path, loss=np.log(2) * np.exp(-STEPS / 200) + ar1(28, N, 0.3, 0.01),
                   rewards__margins=rising(3.0, 150) + ar1(29, N, 0.3, 0.05),
                   rewards__accuracies=0.5 + rising(0.4) + ar1(30, N, 0.3, 0.03),
                   rewards__chosen=ar1(31, N, 0.3, 0.02), rewards__rejected=-rising(3.0, 150),
                   config={"beta": 0.1, "loss_type": "sigmoid"})
    assert run.facts.algorithm == "dpo"
    assessment = assess_run(run, "rules", plots=False)
    blind = " ".join(assessment.verdict.could_not_see)
    # Nothing is sampled in DPO: no groups, no reward spread, no generated lengths; and it has no "training reward".
    assert "reward_std" not in blind and "response_length" not in blind and "entropy" not in blind
    assert "training reward alone" not in blind and "pref_margin alone" in blind
    assert "generation vs training" not in blind
    console = Console(file=io.StringIO(), width=200, highlight=False)
    render_assessment(assessment, console)
    text = console.file.getvalue()
    reason = next(item for item in assessment.verdict.could_not_see if item.startswith("kl: ")).removeprefix("kl: ")
    assert text.count(reason) == 1, text
    assert text.lower().count("not measured") <= 1
    markdown = render_markdown(assessment).split("## Findings")[0]
    assert markdown.count(reason) == 1


def test_grpo_blind_spots_still_name_reward_spread(tmp_path):
    run = make_run(tmp_path, reward=0.2 + rising(0.5) + ar1(3, N, 0.3, 0.02))
    blind = " ".join(verdict(run).could_not_see)
    assert "reward_std: not logged" in blind and "training reward alone" in blind
