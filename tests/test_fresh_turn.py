"""A quality dip that has only just begun counts when the policy's instruments turned with it (`diagnose.turn`)."""

from __future__ import annotations

import numpy as np

from assessor.diagnose import diagnose
from assessor.diagnose.checkpoint import breakage_onset
from assessor.diagnose.context import finding
from assessor.judge.rules import decide
from tests.runs import ar1, make_run

N, ONSET = 300, 270  # 300 steps of a 1,000-step plan, the dip in the latest 30


def _run(tmp_path, name: str, *, dip: float, turn: bool, seed: int = 5, **extra: np.ndarray):
    steps = np.arange(1, N + 1)
    after = np.clip((steps - ONSET) / 10, 0, 1)  # the turn takes ten steps to show in full
    reward = 0.30 + 0.25 * np.minimum(1, steps / 200) - dip * after + ar1(seed, N, 0.3, 0.03)
    entropy = 0.45 - 0.05 * steps / N + (0.2 * after if turn else 0) + ar1(seed + 1, N, 0.3, 0.01)
    grad = np.exp(np.log(0.2) + (np.log(2.2) * after if turn else 0) + ar1(seed + 2, N, 0.3, 0.08))
    length = 600 + 0.3 * steps + ar1(seed + 3, N, 0.3, 12)
    return make_run(tmp_path / name, config={"max_steps": 1000}, reward=reward, entropy=entropy, grad_norm=grad,
                    completions__mean_length=length, **extra)


def kinds(run) -> set[str]:
    return {f.kind for f in diagnose(run).findings}


def test_a_fresh_reward_dip_with_entropy_and_grad_norm_turning_at_once_is_a_rollback_to_before_it(tmp_path):
    run = _run(tmp_path, "turned", dip=0.025, turn=True)
    d = diagnose(run)
    turn = next(f for f in d.findings if f.kind == "turn_with_instruments")
    # Each instrument's move as a factor of the level it held: its levels are the table's and other findings' to give.
    assert "entropy ×1." in turn.observation and "grad_norm ×2." in turn.observation
    verdict = decide(d, run.checkpoints)
    assert verdict.decision == "rollback" and verdict.rollback_step is not None
    assert 240 <= verdict.rollback_step <= ONSET


def test_the_same_dip_with_steady_instruments_or_turning_instruments_over_a_rising_reward_is_no_turn(tmp_path):
    steady = _run(tmp_path, "steady", dip=0.025, turn=False)
    assert "turn_with_instruments" not in kinds(steady)
    assert decide(diagnose(steady), steady.checkpoints).decision == "continue"
    no_dip = _run(tmp_path, "no-dip", dip=0.0, turn=True)
    assert "turn_with_instruments" not in kinds(no_dip)


def test_a_latest_evaluation_down_with_instruments_turning_names_the_evaluation_before_it(tmp_path):
    # Every 25 steps: a plateau wobbling by about 0.01 from step 125, then 0.535 at step 300.
    evals = np.array([0.40, 0.45, 0.49, 0.52, 0.55, 0.565, 0.555, 0.57, 0.56, 0.575, 0.565, 0.535])
    steps = np.arange(1, N + 1)
    after = np.clip((steps - 275) / 10, 0, 1)
    reward = 0.30 + 0.25 * np.minimum(1, steps / 200) + ar1(11, N, 0.3, 0.03)
    common = {"config": {"max_steps": 1000}, "eval_every": 25, "eval_values": evals, "reward": reward}
    length = 600 + 0.3 * steps + ar1(12, N, 0.3, 12)
    grad = np.exp(np.log(0.2) + ar1(13, N, 0.3, 0.08))
    turned = make_run(tmp_path / "turned", completions__mean_length=length * (1 + 0.6 * after),
                      grad_norm=grad * (1 + 1.5 * after), **common)
    d = diagnose(turned)
    turn = next(f for f in d.findings if f.kind == "turn_with_instruments")
    assert "the latest evaluation of eval/reward_mean, 0.535 at step 300" in turn.observation
    verdict = decide(d, turned.checkpoints)
    assert verdict.decision == "rollback" and verdict.rollback_step == 275
    alone = make_run(tmp_path / "alone", completions__mean_length=length, grad_norm=grad, **common)
    assert "turn_with_instruments" not in kinds(alone)


def test_a_fresh_turn_neither_confirms_nor_moves_an_earlier_breakage():
    weak = finding("entropy", "entropy_blow_up", "warning", "entropy blew up", [50])
    turn = finding("instability", "turn_with_instruments", "warning", "a fresh turn", [270])
    assert breakage_onset([weak, turn]) == (270, breakage_onset([turn])[1])  # dated by the turn, not the weak one
    strong = finding("kl", "kl_jump", "warning", "KL jumped", [120])
    assert breakage_onset([strong, turn])[0] == 120 and breakage_onset([strong])[0] == 120


def test_between_two_evaluations_the_turn_starts_where_the_instruments_shifted(tmp_path):
    # holdout38's OpenRLHF run: lengths ran away from step 262, the evaluation at 275 still scored as the best and the
    # one at 300 fell; the weights at 275 were already turning, so the best point is the evaluation at 250.
    evals = np.array([0.40, 0.45, 0.49, 0.52, 0.55, 0.565, 0.555, 0.57, 0.56, 0.575, 0.565, 0.535])
    steps = np.arange(1, N + 1)
    jump = (steps > 262).astype(float)
    reward = 0.30 + 0.25 * np.minimum(1, steps / 200) + ar1(11, N, 0.3, 0.03)
    length = (600 + 0.3 * steps + ar1(12, N, 0.3, 12)) * (1 + 0.6 * jump)
    grad = np.exp(np.log(0.2) + ar1(13, N, 0.3, 0.08)) * (1 + 1.5 * jump)
    run = make_run(tmp_path / "early", config={"max_steps": 1000}, eval_every=25, eval_values=evals, reward=reward,
                   completions__mean_length=length, grad_norm=grad)
    d = diagnose(run)
    turn = next(f for f in d.findings if f.kind == "turn_with_instruments")
    assert 250 < turn.steps[0] < 275
    verdict = decide(d, run.checkpoints)
    assert verdict.decision == "rollback" and verdict.rollback_step == 250
