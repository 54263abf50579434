"""Reward trajectory, KL/reward quadrants, learning signal, eval, instability and the best checkpoint:
each on series made to show the pattern and on series made not to."""

from __future__ import annotations

import re

import numpy as np
import pytest

from assessor import load_run
from assessor.diagnose import diagnose
from tests.runs import ar1, make_run

N = 200
STEPS = np.arange(1, N + 1)


def kinds(diagnostics, severities=("warning", "critical")):
    return {f.kind for f in diagnostics.findings if f.severity in severities}


def rising(total: float) -> np.ndarray:
    return total * (1 - np.exp(-STEPS / 80))


@pytest.mark.parametrize(
    ("kl", "reward", "quadrant", "severity"),
    [
        (0.01 + 0.1 * STEPS / N, 0.2 + 0.5 * STEPS / N, "kl_up_reward_up", "info"),
        (0.01 + 0.1 * STEPS / N, 0.6 + 0 * STEPS, "kl_up_reward_flat", "warning"),
        (0.01 + 0.1 * STEPS / N, 0.8 - 0.5 * STEPS / N, "kl_up_reward_down", "critical"),
        (0.05 + 0 * STEPS, 0.2 + 0.5 * STEPS / N, "kl_stable_reward_up", "info"),
        (0.05 + 0 * STEPS, 0.6 + 0 * STEPS, "kl_stable_reward_flat", "watch"),
    ],
)
def test_kl_reward_quadrants(tmp_path, kl, reward, quadrant, severity):
    run = make_run(tmp_path, reward=reward + ar1(1, N, 0.3, 0.05), kl=kl + ar1(2, N, 0.3, 0.004))
    d = diagnose(run)
    assert d.kl_reward.quadrant_now == quadrant
    (f,) = [f for f in d.kl_reward.findings if f.kind == quadrant]
    assert f.severity == severity
    assert f.steps and f.steps[0] >= 1


def test_noise_only_run_has_no_warnings(tmp_path):
    run = make_run(tmp_path, reward=0.5 + ar1(3, N, 0.6, 0.08), kl=0.05 + ar1(4, N, 0.6, 0.003),
                   reward_std=0.3 + ar1(5, N, 0.5, 0.02), grad_norm=0.3 + ar1(6, N, 0.3, 0.03).clip(-0.2),
                   entropy=0.6 + ar1(7, N, 0.5, 0.02))
    d = diagnose(run)
    assert kinds(d) == set()


def test_kl_timeline_shows_when_drift_started(tmp_path):
    kl = np.where(STEPS < 100, 0.02, 0.02 + 0.3 * (STEPS - 100) / 100)
    reward = np.where(STEPS < 100, 0.2 + 0.6 * STEPS / 100, 0.8)
    run = make_run(tmp_path, reward=reward + ar1(8, N, 0.3, 0.03), kl=kl + ar1(9, N, 0.3, 0.003))
    timeline = diagnose(run).kl_reward.timeline
    assert timeline[0].quadrant.endswith("reward_up")
    assert timeline[-1].quadrant == "kl_up_reward_flat"
    assert 60 <= next(s.start_step for s in timeline if s.quadrant == "kl_up_reward_flat") <= 140


def test_missing_kl_is_stated_not_guessed(tmp_path):
    run = make_run(tmp_path, reward=0.5 + ar1(10, N, 0.3, 0.05), config={"beta": 0.0})
    d = diagnose(run)
    assert not d.kl_reward.kl_measured
    assert "beta = 0" in (d.kl_reward.kl_absent_reason or "")
    assert d.kl_reward.quadrant_now is None
    assert any(a.startswith("kl:") for a in d.absent)


def test_reward_peak_then_decline_vs_transient_dip(tmp_path):
    peaked = np.where(STEPS < 120, 0.2 + 0.6 * STEPS / 120, 0.8 - 0.4 * (STEPS - 120) / 80)
    d = diagnose(make_run(tmp_path / "a", reward=peaked + ar1(11, N, 0.3, 0.05)))
    (f,) = [f for f in d.reward.findings if f.kind == "reward_peaked_then_declined"]
    assert f.severity in ("warning", "critical") and 90 <= f.steps[0] <= 140

    dip = 0.2 + 0.6 * STEPS / N
    dip[100:106] -= 0.4  # six bad batches, then back on track
    d = diagnose(make_run(tmp_path / "b", reward=dip + ar1(12, N, 0.3, 0.05)))
    assert "reward_peaked_then_declined" not in kinds(d)
    assert d.reward.trend == "rising"


def test_reward_still_rising_and_slowing(tmp_path):
    d = diagnose(make_run(tmp_path, reward=0.1 + rising(0.8) + ar1(13, N, 0.3, 0.02)))
    (f,) = d.reward.findings
    assert f.kind == "reward_rising" and f.severity == "info"
    assert d.reward.slowing is True


def test_saturation_vs_healthy_spread(tmp_path):
    reward = np.clip(0.3 + rising(0.7), 0, 1)
    std = 0.45 * (1 - reward) + 0.005
    zero = np.clip(reward, 0, 1)
    d = diagnose(make_run(tmp_path / "a", reward=reward, reward_std=std, frac_reward_zero_std=zero))
    assert d.learning_signal.saturated
    assert "reward_saturated" in kinds(d)

    d = diagnose(make_run(tmp_path / "b", reward=0.3 + 0.3 * STEPS / N + ar1(14, N, 0.3, 0.03),
                          reward_std=0.4 + ar1(15, N, 0.3, 0.02), frac_reward_zero_std=0.2 + ar1(16, N, 0.3, 0.02)))
    assert not d.learning_signal.saturated
    assert kinds(d) == set()


def test_identical_rewards_from_the_start_is_a_setup_failure(tmp_path):
    d = diagnose(make_run(tmp_path, reward=np.zeros(50), reward_std=np.zeros(50), kl=np.zeros(50)))
    assert d.learning_signal.identical_from_start
    assert "identical_rewards" in kinds(d, ("critical",))


def test_reward_at_floor_with_no_spread(tmp_path):
    reward = np.where(STEPS < 60, 0.8, 0.0)
    zero = np.where(STEPS < 60, 0.4, 1.0)
    d = diagnose(make_run(tmp_path, reward=reward + np.where(STEPS < 60, ar1(17, N, 0.3, 0.05), 0),
                          frac_reward_zero_std=zero))
    assert "reward_floor_no_signal" in kinds(d, ("critical",))


def test_eval_peak_and_decline_while_train_rises(tmp_path):
    evals = np.array([0.30, 0.45, 0.55, 0.60, 0.52, 0.45, 0.40, 0.36, 0.33, 0.30])
    run = make_run(tmp_path, reward=0.2 + 0.6 * STEPS / N + ar1(18, N, 0.3, 0.03), eval_every=20,
                   eval_values=evals, checkpoints=(50, 75, 100, 150))
    d = diagnose(run)
    assert d.eval.peak_step == 80
    assert "eval_declining" in kinds(d) and "train_eval_divergence" in kinds(d)
    assert d.eval.diverging_from_train
    best = d.best_checkpoint
    assert (best.basis, best.best_step, best.checkpoint_step, best.checkpoint_path) == ("eval", 80, 75, "checkpoint-75")


def test_one_lucky_evaluation_among_many_is_not_a_peak_to_fall_from(tmp_path):
    rng = np.random.default_rng(7)
    evals = 0.45 + 0.15 * (1 - np.exp(-np.arange(20) / 6)) + rng.normal(0, 0.012, 20)
    evals[-3:] = [0.637, 0.608, 0.616]  # one high draw, then back on the curve (about 0.60)
    run = make_run(tmp_path, reward=0.2 + 0.4 * STEPS / N + ar1(19, N, 0.3, 0.03), eval_every=10, eval_values=evals)
    assert "eval_declining" not in kinds(diagnose(run))


def test_noisy_flat_eval_is_not_a_decline(tmp_path):
    evals = 0.5 + np.array([0.01, -0.02, 0.015, -0.01, 0.02, -0.015, 0.0, 0.01, -0.02, 0.005])
    run = make_run(tmp_path, reward=0.5 + ar1(19, N, 0.3, 0.03), eval_every=20, eval_values=evals)
    assert "eval_declining" not in kinds(diagnose(run))


def test_six_evaluations_whose_robust_spread_drew_low_are_not_a_decline(tmp_path):
    """holdout19: a 2% pass rate on 500 problems, evaluated six times (14, 11, 6, 12, 12, 7 solved), read a 'decline
    of 2.5x its eval-to-eval noise' from its first evaluation: the median of four second differences put the noise
    at 0.0024, a third of the sampling error the scores themselves show. A real fall over as few is still one."""
    reward = 0.01 + 0.02 * STEPS / N + ar1(19, N, 0.3, 0.003)
    noisy = np.array([0.028, 0.022, 0.012, 0.024, 0.024, 0.014])
    run = make_run(tmp_path / "a", reward=reward, eval_every=30, eval_values=noisy)
    assert "eval_declining" not in kinds(diagnose(run))
    fell = np.array([0.50, 0.52, 0.51, 0.53, 0.40, 0.38])
    run = make_run(tmp_path / "b", reward=0.5 + ar1(19, N, 0.3, 0.01), eval_every=30, eval_values=fell)
    assert "eval_declining" in kinds(diagnose(run))


def test_one_step_kl_spike_vs_kl_blow_up(tmp_path):
    kl = 0.05 + ar1(20, N, 0.3, 0.002)
    kl[100] = 0.5
    d = diagnose(make_run(tmp_path / "a", reward=0.5 + ar1(21, N, 0.3, 0.03), kl=kl))
    assert [s.kind for s in d.instability.spikes["kl"]] == ["outlier"]
    assert "spike_regime_change" not in kinds(d)

    blown = 0.05 + ar1(22, N, 0.3, 0.002) + np.where(STEPS > 150, 2.0, 0.0)
    d = diagnose(make_run(tmp_path / "b", reward=0.5 + ar1(23, N, 0.3, 0.03), kl=blown))
    assert any(cp.step == 151 and cp.direction == "up" for cp in d.signals["kl"].change_points)


def test_nan_loss_at_the_end_is_critical_and_isolated_nan_is_not(tmp_path):
    loss = 0.1 + ar1(24, N, 0.3, 0.01)
    loss[-4:] = np.nan
    d = diagnose(make_run(tmp_path / "a", reward=0.5 + ar1(25, N, 0.3, 0.03), loss=loss))
    assert d.instability.nonfinite_steps["loss"] == [197, 198, 199, 200]
    assert "nonfinite" in kinds(d, ("critical",))

    grad = 1.0 + ar1(26, N, 0.3, 0.05)
    grad[[10, 90]] = np.nan
    d = diagnose(make_run(tmp_path / "b", reward=0.5 + ar1(27, N, 0.3, 0.03), grad_norm=grad))
    assert [f.severity for f in d.findings if f.kind == "nonfinite"] == ["watch"]


def test_best_checkpoint_from_reward_when_no_eval(tmp_path):
    peaked = np.where(STEPS < 120, 0.2 + 0.6 * STEPS / 120, 0.8 - 0.4 * (STEPS - 120) / 80)
    run = make_run(tmp_path, reward=peaked + ar1(28, N, 0.3, 0.02), checkpoints=(50, 100, 150, 200))
    best = diagnose(run).best_checkpoint
    assert best.basis == "reward" and 100 <= (best.best_step or 0) <= 140
    assert best.checkpoint_path == "checkpoint-100"


def test_best_checkpoint_when_nothing_is_on_disk(tmp_path):
    run = make_run(tmp_path, reward=0.1 + rising(0.8) + ar1(29, N, 0.3, 0.02))
    best = diagnose(run).best_checkpoint
    assert best.checkpoint_path is None and best.best_step is not None
    assert "no checkpoints are in the run directory" in best.reason


def test_findings_are_sorted_most_severe_first(tmp_path):
    kl = 0.01 + 0.1 * STEPS / N
    run = make_run(tmp_path, reward=0.8 - 0.5 * STEPS / N + ar1(30, N, 0.3, 0.03), kl=kl)
    order = {"critical": 0, "warning": 1, "watch": 2, "info": 3}
    severities = [order[f.severity] for f in diagnose(run).findings]
    assert severities == sorted(severities)


def test_kl_up_after_reward_levelled_off_long_ago_is_drift(tmp_path):
    reward = np.where(STEPS < 60, 0.2 + 0.4 * STEPS / 60, 0.6)
    kl = 0.002 + 0.2 * (STEPS / N) ** 1.2
    d = diagnose(make_run(tmp_path / "a", reward=reward + ar1(40, N, 0.3, 0.06), kl=kl + ar1(41, N, 0.3, 0.002)))
    (f,) = [f for f in d.kl_reward.findings if f.kind == "kl_up_reward_flat"]
    assert f.severity == "warning" and 40 <= f.steps[0] <= 80
    # The same shape with KL still a few hundredths of a nat from the reference is no drift worth a stop.
    tiny = diagnose(make_run(tmp_path / "b", reward=reward + ar1(40, N, 0.3, 0.06),
                             kl=0.1 * kl + ar1(41, N, 0.3, 0.0002)))
    assert "kl_up_reward_flat" not in kinds(tiny)


def test_kl_up_while_reward_still_climbs_slowly_is_not_drift(tmp_path):
    reward = 0.2 + 0.4 * np.log1p(STEPS / 20) / np.log1p(N / 20)
    kl = 0.002 + 0.1 * (STEPS / N) ** 1.2
    d = diagnose(make_run(tmp_path, reward=reward + ar1(42, N, 0.3, 0.06), kl=kl + ar1(43, N, 0.3, 0.002)))
    assert "kl_up_reward_flat" not in kinds(d)


def test_kl_tenfold_jump_that_keeps_climbing_is_a_blow_up(tmp_path):
    kl = np.where(STEPS < 120, 0.01 + 0.02 * STEPS / 120, 0.5 + 1.5 * (STEPS - 120) / 80)
    reward = np.where(STEPS < 120, 0.3 + 0.3 * STEPS / 120, 0.6 - 0.2 * (STEPS - 120) / 80)
    d = diagnose(make_run(tmp_path, reward=reward + ar1(44, N, 0.3, 0.04), kl=kl * (1 + ar1(45, N, 0.3, 0.1))))
    (f,) = [f for f in d.kl_reward.findings if f.kind == "kl_jump"]
    assert 115 <= f.steps[0] <= 125 and f.severity == "critical"


def test_kl_growing_many_fold_from_near_zero_early_is_not_a_jump(tmp_path):
    kl = 0.0005 + 0.05 * (1 - np.exp(-STEPS / 15))
    d = diagnose(make_run(tmp_path, reward=0.2 + 0.4 * STEPS / N + ar1(46, N, 0.3, 0.04),
                          kl=kl * (1 + ar1(47, N, 0.3, 0.05))))
    assert "kl_jump" not in kinds(d, ("watch", "warning", "critical"))


def test_a_regime_change_downwards_is_said_as_a_drop_not_a_jump():
    """holdout18's blind reader: "kl jumped to 0.0314 (local level 0.036, -12x noise)" described a step down."""
    from assessor.diagnose.instability import _spike_findings
    from assessor.diagnose.models import Spike

    down = _spike_findings("kl", [Spike(step=2818, value=0.0314, level=0.036, size_noise=-12.0,
                                        kind="regime_change")], 3000)[0]
    assert down.observation.startswith("kl dropped to 0.0314") and "12x noise" in down.observation
    up = _spike_findings("kl", [Spike(step=2818, value=0.05, level=0.036, size_noise=12.0,
                                      kind="regime_change")], 3000)[0]
    assert up.observation.startswith("kl jumped to 0.05")


def test_a_second_evals_lone_best_evaluation_is_no_level_to_fall_from(tmp_path):
    """holdout20: a finished DPO run's held-out loss read 0.547, 0.517, 0.548 around its best and 0.57, 0.53 at the
    end: 'risen 5.4x its noise from 0.517' sent a run that should keep its final weights back to step 800."""
    import json

    loss = [0.665, 0.644, 0.618, 0.579, 0.568, 0.559, 0.547, 0.517, 0.548, 0.572, 0.571, 0.534]
    acc = [0.583, 0.603, 0.656, 0.694, 0.7, 0.744, 0.753, 0.723, 0.729, 0.769, 0.745, 0.741]
    rows = [{"step": s, "loss": 0.6 - 0.0002 * s, "rewards/accuracies": 0.6 + 0.0002 * s,
             "rewards/margins": 0.5 + 0.001 * s} for s in range(1, 1201)]
    rows += [{"step": 100 * (k + 1), "eval_loss": lo, "eval_rewards/accuracies": a}
             for k, (lo, a) in enumerate(zip(loss, acc, strict=True))]
    (tmp_path / "log.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    d = diagnose(load_run(tmp_path))
    assert not [f for f in d.findings if f.kind == "eval_declining"]


def test_a_train_eval_divergence_quotes_the_two_levels_it_compares(tmp_path):
    """holdout19/21 blind readers: 'training reward kept rising after step 500' beside a flat table trend (the reward
    had risen once and held): the finding now gives the two levels it compares."""
    reward = 0.2 + 0.4 * np.minimum(1, STEPS / 150) + ar1(19, N, 0.3, 0.01)
    evals = np.array([0.30, 0.40, 0.45, 0.47, 0.44, 0.40, 0.36, 0.33, 0.31, 0.30])
    d = diagnose(make_run(tmp_path, reward=reward, eval_every=20, eval_values=evals))
    found = next(f for f in d.findings if f.kind == "train_eval_divergence")
    assert "kept rising" not in found.observation
    assert re.search(r"\(0\.\d+ → 0\.\d+, medians of the latest steps on each side\)", found.observation), found



@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_rise_a_collapse_and_a_partial_recovery_give_kl_reward_spans_labelled_by_their_own_moves(tmp_path, seed):
    # Reward climbs 0.4 -> 0.8 over 1,480 steps, collapses to 0.25 in 40 and recovers to 0.40; KL creeps up. A span
    # holding the climb and the collapse tests "flat" (or "rising") over its length and lost 0.37: its label must
    # say what its numbers say, and the collapse must read as a fall somewhere.
    n = 2300
    t = np.arange(1, n + 1)
    rng = np.random.default_rng(seed)
    level = np.where(t <= 1480, 0.4 + 0.4 * t / 1480,
                     np.where(t <= 1520, 0.8 - 0.55 * (t - 1480) / 40, 0.25 + 0.15 * (t - 1520) / 780))
    run = make_run(tmp_path, reward=level + rng.normal(0, 0.03, n), kl=0.02 + 0.04 * t / n + rng.normal(0, 0.002, n))
    d = diagnose(run)
    noise = d.signals["reward_mean"].noise
    for span in d.kl_reward.timeline:
        reward_part = span.quadrant.split("_reward_")[1]
        assert reward_part != "flat" or abs(span.reward_change) < 4 * noise, span
        assert reward_part == "flat" or (span.reward_change > 0) == (reward_part == "up"), span
    assert any(s.quadrant.endswith("reward_down") and s.reward_change < -0.3 for s in d.kl_reward.timeline)



def test_a_lasting_jump_that_later_went_back_is_not_said_to_have_never_come_back():
    from assessor.diagnose.instability import _spike_findings
    from assessor.diagnose.models import Spike

    # holdout33's OpenRLHF run: grad_norm jumped to 2.34 at step 221 (from 0.353) and stayed; it is 0.0578 now.
    jump = [Spike(step=221, value=2.34, level=0.353, size_noise=51.0, kind="regime_change")]
    text = _spike_findings("grad_norm", jump, last_step=1400, now=0.0578)[0].observation
    assert "did not come back" not in text and "come back down (0.0578 now)" in text
    still = _spike_findings("grad_norm", jump, last_step=1400, now=2.2)[0].observation
    assert "did not come back" in still
    # Past the old level counts as back: holdout37's grad_norm jumped 0.243 -> 0.423 and has decayed to 0.05 since.
    past = [Spike(step=100, value=0.423, level=0.243, size_noise=9.0, kind="regime_change")]
    text = _spike_findings("grad_norm", past, last_step=820, now=0.05)[0].observation
    assert "did not come back" not in text and "come back down (0.05 now)" in text


def test_a_gradient_level_shift_that_later_went_back_says_so(tmp_path):
    n = 300
    t = np.arange(1, n + 1)
    grad = np.where(t < 100, 0.2, np.where(t < 180, 2.3, 0.1)) + 0.01 * ar1(140, n)
    run = make_run(tmp_path, reward=0.3 + 0.3 * t / n + 0.01 * ar1(141, n), grad_norm=grad)
    shift = next(f for f in diagnose(run).findings if f.kind == "level_shift" and f.signal == "grad_norm")
    assert "it has since come back down" in shift.observation


def test_the_level_now_of_a_long_run_is_read_over_its_last_few_hundred_steps(tmp_path):
    # 20,000 steps logged one by one; entropy blows up from 0.35 to 3 over the last 400. A tenth of the run is 2,000
    # steps, whose median is still from before: the table's now must be the level now.
    n = 20000
    t = np.arange(1, n + 1)
    rng = np.random.default_rng(12)
    entropy = 0.35 + 2.65 * np.clip((t - (n - 400)) / 150, 0, 1) + rng.normal(0, 0.02, n)
    run = make_run(tmp_path, reward=0.5 + 0.1 * t / n + rng.normal(0, 0.03, n), entropy=entropy)
    summary = diagnose(run).signals["entropy"]
    assert summary.now > 2.5 and summary.start < 0.4


def test_an_entropy_summed_over_each_completion_is_read_against_length_not_as_uncertainty(tmp_path):
    # A custom loop logs entropy as a sum over each completion's tokens: 130 -> 390 as completions lengthen (no
    # vocabulary is known). No per-token entropy exceeds ln(262,144) = 12.5: the rise is length, not uncertainty.
    from assessor.diagnose.entropy import entropy_summed

    n = 300
    t = np.arange(1, n + 1)
    length = 300 + 600 * t / n
    run = make_run(tmp_path, reward=0.3 + 0.3 * t / n + 0.01 * ar1(150, n), entropy=0.43 * length + ar1(151, n),
                   completion_length=length)
    d = diagnose(run)
    rising = next(f for f in d.findings if f.kind == "entropy_rising")
    assert "summed over each completion" in rising.observation and "less certain" not in rising.observation
    assert entropy_summed(run, d.entropy.start, d.entropy.now, d.entropy.ln_vocab)


def test_a_spike_one_step_before_the_end_has_recovered_over_one_step_only():
    from assessor.diagnose.instability import _spike_findings
    from assessor.diagnose.models import Spike

    spike = [Spike(step=419, value=4.2, level=0.46, size_noise=30.0, kind="outlier")]
    text = _spike_findings("grad_norm", spike, last_step=420, logged=np.arange(1, 421))[0].observation
    assert "the one step logged since recovered" in text and "the next steps" not in text
    earlier = _spike_findings("grad_norm", spike, last_step=600, logged=np.arange(1, 601))[0].observation
    assert "the next steps recovered" in earlier
