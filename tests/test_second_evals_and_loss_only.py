"""Shapes the blind holdout14 set met first: loss-only loops, a second benchmark beside the task's own, a length
term in the reward, group-outcome shares, compound checkpoint folder names, and a training reward that dates the
turn of a held-out decline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from assessor.diagnose import diagnose
from assessor.ingest import load_run
from assessor.judge.base import JudgeRequest
from assessor.judge.rules import RulesJudge
from tests.runs import ar1, make_run


def verdict(run):
    return RulesJudge().judge(JudgeRequest(run=run, diagnostics=diagnose(run))).verdict


def kinds(run) -> set[str]:
    return {f.kind for f in diagnose(run).findings}


def write_jsonl(root: Path, rows: list[dict[str, float]]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "log.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")


def loss_only_csv(root: Path, eval_loss: np.ndarray, every: int = 50, steps: int = 1100) -> None:
    """A custom DPO loop's CSV: train_loss every 5 steps, eval_loss every `every`; no reward logged at all."""
    root.mkdir(parents=True, exist_ok=True)
    rows = ["step,epoch,train_loss,grad_norm,lr,eval_loss"]
    noise = ar1(3, steps // 5, 0.3, 0.01)
    for i, step in enumerate(range(5, steps + 1, 5)):
        train = 0.69 - 0.35 * step / steps + noise[i]
        ev = f"{eval_loss[step // every - 1]:.4f}" if step % every == 0 else ""
        rows.append(f"{step},{step / 400:.3f},{train:.4f},{1.0 + noise[i]:.3f},5e-07,{ev}")
    (root / "log.csv").write_text("\r\n".join(rows) + "\r\n", encoding="utf-8")


# --- ingest


def test_a_per_step_train_loss_column_is_the_training_loss(tmp_path):
    loss_only_csv(tmp_path, np.full(22, 0.6))
    run = load_run(tmp_path)
    assert run.has("loss") and len(run.series("loss")) == 220


def test_the_trainers_one_line_train_loss_summary_is_still_not_a_curve(tmp_path):
    rows = [{"step": s, "loss": 0.7 - s / 1000, "reward": 0.3} for s in range(1, 101)]
    rows.append({"step": 100, "train_loss": 0.65, "train_runtime": 100.0})
    write_jsonl(tmp_path, rows)
    run = load_run(tmp_path)
    assert "train_loss" not in run.metric_names() and len(run.series("loss")) == 100
    notes = [n for source in run.sources for n in source.notes]
    assert any("train_loss logged 1 time: read as the trainer's end-of-run summary" in n for n in notes)


def test_compound_checkpoint_folder_names_are_checkpoints(tmp_path):
    loss_only_csv(tmp_path, np.full(22, 0.6))
    for step in (200, 400, 600):
        (tmp_path / f"ckpt_step{step}").mkdir()
    assert [c.step for c in load_run(tmp_path).checkpoints] == [200, 400, 600]


def test_a_share_of_all_or_none_groups_is_the_zero_spread_share_not_a_task_score(tmp_path):
    """It falls as groups turn mixed while the reward climbs: learning signal, not a gamed task."""
    n = 300
    steps = np.arange(1, n + 1)
    run = make_run(tmp_path, reward=0.2 + 0.18 * steps / n + ar1(1, n, 0.3, 0.02),
                   frac_solved_all_or_none=0.34 - 0.2 * steps / n + ar1(2, n, 0.3, 0.02),
                   kl=0.002 + 0.04 * steps / n)
    assert run.has("reward_zero_std_frac") and not run.has("frac_solved_all_or_none")
    assert "reward_hacking" not in kinds(run)
    assert verdict(run).decision == "continue"


# --- a loop that logs losses only


def test_a_loss_only_run_is_judged_on_its_held_out_loss(tmp_path):
    """Eval loss falls to its best around step 400, then climbs for 700 steps: the better model is behind."""
    evals = np.arange(50, 1101, 50)
    level = np.where(evals <= 400, 0.69 - 0.11 * evals / 400, 0.58 + 0.08 * (evals - 400) / 700)
    loss_only_csv(tmp_path, level + ar1(4, len(evals), 0.0, 0.004))
    run = load_run(tmp_path)
    d = diagnose(run)
    assert d.best_checkpoint.basis == "eval" and d.best_checkpoint.metric == "eval/loss"
    assert "eval_declining" in {f.kind for f in d.findings}
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_step is not None and 300 <= v.rollback_step <= 600
    loss_text = " ".join(f.observation for f in d.findings if f.signal == "loss")
    assert "training loss" in loss_text and "surrogate" not in loss_text and "prefers the chosen" not in loss_text


# --- a second held-out measure


def two_benchmarks(root: Path, task_gain: float) -> None:
    """Reward climbing; an unrelated benchmark (`eval_accuracy`) flat; the task's own (`eval_gsm8k_acc`) gaining."""
    rng = np.random.default_rng(5)
    rows: list[dict[str, float]] = []
    n = 260
    for step in range(1, n + 1):
        rows.append({"step": step, "reward": 0.55 + 0.25 * step / n + float(rng.normal(0, 0.03)),
                     "kl": 0.001 + 0.01 * step / n})
        if step % 20 == 0 or step == 1:
            rows.append({"step": step, "eval_accuracy": 0.425 + float(rng.normal(0, 0.012)),
                         "eval_gsm8k_acc": 0.64 + task_gain * step / n + float(rng.normal(0, 0.01))})
    write_jsonl(root, rows)


def test_a_flat_side_benchmark_beside_a_rising_task_eval_is_no_failure_to_transfer(tmp_path):
    two_benchmarks(tmp_path, task_gain=0.17)
    run = load_run(tmp_path)
    found = kinds(run)
    assert "eval_not_transferring" not in found and "eval_transfers_elsewhere" in found
    assert verdict(run).decision == "continue"


def test_with_both_benchmarks_flat_the_gains_still_do_not_transfer(tmp_path):
    two_benchmarks(tmp_path, task_gain=0.0)
    found = kinds(load_run(tmp_path))
    assert "eval_not_transferring" in found and "eval_transfers_elsewhere" not in found


# --- a length term in the reward


def shortening(root: Path, length_end: float, component: str | None = None) -> None:
    """Reward rising with length moving from 800 to `length_end` (tied to it); held-out accuracy flat at 0.86.

    `component`: log the reward also as its one named reward function (`rewards/<component>/mean`); "split": as an
    accuracy part that stays and a length part that rises.
    """
    rng = np.random.default_rng(7)
    n = 400
    rows: list[dict[str, float]] = []
    for step in range(1, n + 1):
        share = step / n
        reward = 0.58 + 0.1 * share + float(rng.normal(0, 0.015))
        parts = {f"rewards/{component}/mean": reward} if component else {}
        if component == "split":  # an accuracy part that stays, a length part that buys the rise
            parts = {"rewards/accuracy/mean": reward - 0.1 * share, "rewards/length_penalty/mean": 0.1 * share}
        rows.append({"step": step, "reward": reward,
                     "completion_length": 800 + (length_end - 800) * share + float(rng.normal(0, 15)),
                     "kl": 0.005 + 0.015 * share, **parts})
        if step % 20 == 0 or step == 1:
            rows.append({"step": step, "eval_accuracy": 0.86 + float(rng.normal(0, 0.008))})
    write_jsonl(root, rows)


def test_shorter_answers_at_the_same_held_out_accuracy_are_the_gain_of_a_logged_length_term(tmp_path):
    shortening(tmp_path, length_end=500, component="split")
    run = load_run(tmp_path)
    found = kinds(run)
    assert "eval_not_transferring" not in found and "eval_holds_answers_shorter" in found
    assert verdict(run).decision == "continue"


def test_shorter_answers_with_no_reward_part_logged_are_said_but_not_taken_for_a_length_term(tmp_path):
    """holdout30: a verl run whose sampler replayed one shard (answers 640 -> 380 tokens as it was memorised, train
    score to 0.93, MATH flat since step 260 at 40% of the plan) logs no reward parts; shorter answers were taken for
    "the reward's length term" and the run continued. With nothing logged that scores length, that is a guess: the
    gains do not transfer, and the shortening is said beside it."""
    shortening(tmp_path, length_end=500)
    run = load_run(tmp_path)
    flat = next(f for f in diagnose(run).findings if f.kind == "eval_not_transferring")
    assert "no logged reward part scores length" in flat.observation
    assert verdict(run).decision == "stop"


def test_shorter_answers_are_no_length_term_when_the_reward_s_only_logged_part_is_the_accuracy(tmp_path):
    """holdout24: a GRPO run memorising a small training set (answers shorter as they are recalled) whose one reward
    function is the accuracy was read as "the training gain is the reward's length term". A length term needs a
    logged part that scores length; with parts logged and none of them about length, the gains do not transfer."""
    shortening(tmp_path / "accuracy", length_end=500, component="accuracy_reward")
    found = kinds(load_run(tmp_path / "accuracy"))
    assert "eval_not_transferring" in found and "eval_holds_answers_shorter" not in found
    shortening(tmp_path / "penalty", length_end=500, component="length_penalty")
    assert "eval_holds_answers_shorter" in kinds(load_run(tmp_path / "penalty"))


def test_longer_answers_at_the_same_held_out_accuracy_are_not(tmp_path):
    shortening(tmp_path, length_end=1100)
    found = kinds(load_run(tmp_path))
    assert "eval_not_transferring" in found and "eval_holds_answers_shorter" not in found


# --- the training reward dates a held-out decline's turn


def test_the_best_point_is_no_later_than_the_training_reward_peak_when_both_fell(tmp_path):
    """Reward peaks at step 300 and falls; the eval, noisier and every 50 steps, still scores within its noise
    at 350 and 400 before its decline shows: those are draws on the way down."""
    n = 600
    steps = np.arange(1, n + 1)
    reward = np.where(steps <= 300, 0.3 + 0.4 * steps / 300, 0.7 - 0.25 * (steps - 300) / 300)
    evals = np.arange(50, n + 1, 50)
    ev = np.where(evals <= 300, 0.3 + 0.3 * evals / 300, 0.6 - 0.12 * (evals - 300) / 300)
    ev = ev + np.array([0, 0, 0, 0, 0, 0, 0.02, 0.015, 0, 0, 0, 0])
    run = make_run(tmp_path, reward=reward + ar1(8, n, 0.3, 0.02), kl=0.002 + 0.05 * steps / n,
                   eval_every=50, eval_values=ev)
    best = diagnose(run).best_checkpoint
    assert best.behind and best.reward_peak_step is not None
    assert best.best_step is not None and best.best_step <= best.reward_peak_step
    assert f"no later than step {best.reward_peak_step}" in best.reason


# --- what the sheet and the dashboard show of them


def test_a_run_without_a_training_reward_draws_its_held_out_eval(tmp_path):
    from assessor.plots import dashboard_figure

    evals = np.arange(50, 1101, 50)
    loss_only_csv(tmp_path, 0.69 - 0.1 * evals / 1100 + ar1(4, len(evals), 0.0, 0.004))
    run = load_run(tmp_path)
    figure = dashboard_figure(run, diagnose(run))
    titles = [ax.get_title(loc="left") for ax in figure.axes]
    assert "Held-out eval (no training reward logged)" in titles


def test_a_run_whose_training_reward_is_all_zero_is_not_said_to_log_none(tmp_path):
    """holdout29's blind reader met "Held-out eval (no training reward logged)" above a sheet with a reward row."""
    from assessor.plots import dashboard_figure

    n = 300
    run = make_run(tmp_path, reward=np.zeros(n), kl=np.zeros(n), eval_every=50, eval_values=np.full(6, 0.12))
    titles = [ax.get_title(loc="left") for ax in dashboard_figure(run, diagnose(run)).axes]
    assert "Held-out eval (training reward 0 throughout)" in titles, titles


def test_an_established_eval_decline_is_not_called_not_established_in_the_table(tmp_path):
    from assessor.judge.prompts import summarize

    evals = np.arange(50, 1101, 50)
    level = np.where(evals <= 400, 0.69 - 0.11 * evals / 400, 0.58 + 0.08 * (evals - 400) / 700)
    loss_only_csv(tmp_path, level + ar1(4, len(evals), 0.0, 0.004))
    run = load_run(tmp_path)
    row = next(line for line in summarize(JudgeRequest(run=run, diagnostics=diagnose(run))).splitlines()
               if line.startswith("| eval/loss "))
    assert "declined from its peak (sized in the findings)" in row
    cells = [c.strip() for c in row.strip("|").split("|")]
    peak, trough = float(cells[2].split(" @ ")[0]), float(cells[3].split(" @ ")[0])
    assert peak < trough  # lower is better: the peak is the best, lowest evaluation


# --- a preference loop's training loss near ln 2


def test_a_training_loss_near_ln2_is_no_stall_while_the_held_out_loss_falls(tmp_path):
    """Noisy pairs keep the training loss near ln 2; the held-out loss falling shows the pairs are separated."""
    n = 400
    rng = np.random.default_rng(13)
    rows: list[dict[str, float]] = []
    for step in range(1, n + 1):
        rows.append({"step": step, "loss": 0.693 + float(rng.normal(0, 0.02))})
        if step % 40 == 0:
            rows.append({"step": step, "eval_loss": 0.69 - 0.1 * step / n + float(rng.normal(0, 0.004))})
    write_jsonl(tmp_path, rows)
    found = kinds(load_run(tmp_path))
    assert "dpo_loss_flat_at_ln2" not in found


def test_kl_climbing_fast_at_a_few_thousandths_of_a_nat_is_not_called_unbounded(tmp_path):
    n = 300
    steps = np.arange(1, n + 1)
    reward = 0.3 + 0.3 * steps / n + ar1(14, n, 0.3, 0.02)
    assert "kl_unbounded" not in kinds(make_run(tmp_path / "tiny", reward=reward, kl=0.0005 + 0.006 * steps / n))
    assert "kl_unbounded" in kinds(make_run(tmp_path / "large", reward=reward, kl=0.005 + 0.3 * steps / n))


def test_an_established_reward_decline_has_one_size_on_the_sheet():
    from assessor.judge.prompts import summarize

    run = load_run(Path(__file__).resolve().parents[1] / "examples" / "verl-grpo-gsm8k")
    diagnostics = diagnose(run)
    assert any(f.kind == "reward_peaked_then_declined" for f in diagnostics.findings)
    text = summarize(JudgeRequest(run=run, diagnostics=diagnostics))
    trajectory = text.split("## Reward trajectory")[1].split("\n## ")[0]
    assert "declined from its peak" in trajectory and "noise units" not in trajectory


def test_the_best_point_line_names_a_band_finer_than_the_tables_noise_apart_from_it(tmp_path):
    """Seven evaluations of a pass rate on 200 problems: the table reads them no finer than their sampling error,
    the best point uses their own (smaller) spread, and the sheet must not call both "its eval-to-eval noise"."""
    from assessor.judge.prompts import summarize

    rng = np.random.default_rng(15)
    ev = np.array([62, 70, 78, 82, 83, 82, 84]) / 200
    rows: list[dict[str, float]] = []
    for step in range(1, 351):
        rows.append({"step": step, "reward": 0.3 + 0.2 * step / 350 + float(rng.normal(0, 0.02)),
                     "kl": 0.002 + 0.02 * step / 350})
        if step % 50 == 0:
            rows.append({"step": step, "eval_accuracy": float(ev[step // 50 - 1])})
    write_jsonl(tmp_path, rows)
    run = load_run(tmp_path)
    d = diagnose(run)
    text = summarize(JudgeRequest(run=run, diagnostics=d))
    line = next(x for x in text.splitlines() if x.startswith("- chosen as the newest"))
    curve = next(c for c in d.eval.curves if c.metric == d.best_checkpoint.metric)
    band = d.best_checkpoint.band
    assert band is not None and curve.noise > band
    assert "its eval-to-eval noise" not in line and "the spread of its evaluations" in line


def test_the_sheet_says_when_the_training_reward_bounds_the_best_point(tmp_path):
    from assessor.judge.prompts import summarize

    n = 600
    steps = np.arange(1, n + 1)
    reward = np.where(steps <= 300, 0.3 + 0.4 * steps / 300, 0.7 - 0.25 * (steps - 300) / 300)
    evals = np.arange(50, n + 1, 50)
    ev = np.where(evals <= 300, 0.3 + 0.3 * evals / 300, 0.6 - 0.12 * (evals - 300) / 300)
    ev = ev + np.array([0, 0, 0, 0, 0, 0, 0.02, 0.015, 0, 0, 0, 0])
    run = make_run(tmp_path, reward=reward + ar1(8, n, 0.3, 0.02), kl=0.002 + 0.05 * steps / n,
                   eval_every=50, eval_values=ev)
    d = diagnose(run)
    assert d.best_checkpoint.reward_peak_step is not None
    text = summarize(JudgeRequest(run=run, diagnostics=d))
    assert (f"no later than step {d.best_checkpoint.reward_peak_step}: the newest step at which the training reward "
            "still stood within one standard error of its peak") in text


def test_a_loss_only_runs_loss_panel_is_not_called_a_numerical_check(tmp_path):
    from assessor.plots import dashboard_figure

    evals = np.arange(50, 1101, 50)
    loss_only_csv(tmp_path, 0.69 - 0.1 * evals / 1100 + ar1(4, len(evals), 0.0, 0.004))
    run = load_run(tmp_path)
    titles = [ax.get_title(loc="left") for ax in dashboard_figure(run, diagnose(run)).axes]
    assert "Loss" in titles and not any("numerical issues only" in t for t in titles)


def test_a_critics_value_loss_and_a_whitened_reward_are_read_for_what_they_are(tmp_path):
    """`value/loss` is the critic's loss, not the policy's; whitened reward statistics (mean 0, std 1 by
    construction) are no reward functions."""
    rows = [{"step": s, "value/loss": 1.0 / s, "reward/whitened_mean": 0.0, "reward/whitened_std": 1.0,
             "policy/kl_ref": 0.001 * s} for s in range(1, 101)]
    write_jsonl(tmp_path, rows)
    run = load_run(tmp_path)
    assert run.has("value_loss") and not run.has("loss")
    assert not [m for m in run.metric_names() if m.startswith("reward_component/")]


def test_a_single_reward_function_is_not_listed_again_beside_the_total(tmp_path):
    from assessor.judge.prompts import summarize

    n = 300
    steps = np.arange(1, n + 1)
    reward = 0.3 + 0.3 * steps / n + ar1(16, n, 0.3, 0.02)
    run = make_run(tmp_path, reward=reward, rewards__accuracy_reward__mean=reward, kl=0.002 + 0.02 * steps / n)
    text = summarize(JudgeRequest(run=run, diagnostics=diagnose(run)))
    assert "one reward function, accuracy_reward: it is the total" in text
    assert "reward components (start" not in text


# --- a slow slide from a level: its first steps still land within the band


def sliding_eval_run(root: Path, checkpoints: tuple[int, ...] = ()):
    """Eval every 50 steps: rises to 0.6 by step 400, holds to 600, then slides 0.03 per 100 steps; the training
    reward holds its level (nothing broke, nothing dates the turn but the eval itself). The evaluations at 650 and
    700 still score within the band of the best, the first steps of the slide."""
    n = 1000
    steps = np.arange(1, n + 1)
    evals = np.arange(50, n + 1, 50)
    ev = np.where(evals <= 400, 0.3 + 0.3 * evals / 400, np.where(evals <= 600, 0.6, 0.6 - 0.12 * (evals - 600) / 400))
    # evaluations at   50     100    150    200    250    300    350    400    450    500    550    600
    ev = ev + np.array([0.012, -0.01, 0.012, -0.01, 0.012, -0.01, 0.012, -0.01, 0.012, -0.01, 0.012, -0.01,
                        -0.004, 0.024, -0.01, 0.01, -0.01, 0.01, -0.01, 0.01])
    #                   650    700    750    800    850    900    950    1000
    return make_run(root, reward=np.minimum(0.3 + 0.3 * steps / 400, 0.6) + ar1(8, n, 0.3, 0.02),
                    kl=0.002 + 0.01 * steps / n, eval_every=50, eval_values=ev, checkpoints=checkpoints)


def test_the_best_point_is_no_later_than_where_a_slow_slide_began(tmp_path):
    best = diagnose(sliding_eval_run(tmp_path)).best_checkpoint
    assert best.behind and best.breakage_step is None
    assert best.decline_start_step == 600 and best.best_step == 600  # 700 scored within the band, on the way down
    assert "no later than step 600, where a level-then-falling fit puts the start of the decline" in best.reason


def test_a_slide_start_that_would_leave_no_saved_checkpoint_in_the_good_stretch_is_not_applied(tmp_path):
    """Saved from step 700 on: checkpoint-700 scored within the band of the best; going back further has no file."""
    best = diagnose(sliding_eval_run(tmp_path, checkpoints=(700, 800, 900, 1000))).best_checkpoint
    assert best.decline_start_step is None and best.best_step == 700 and best.checkpoint_step == 700


def test_a_fall_in_one_step_keeps_the_last_point_before_it(tmp_path):
    """A level of 0.41, then a crash to 0.06 in one evaluation: a straight slide fitted through it would date the
    turn evaluations too early; the drop is the turn."""
    n = 200
    steps = np.arange(1, n + 1)
    ev = np.array([0.2, 0.3, 0.38, 0.402, 0.411, 0.407, 0.059, 0.03, 0.012, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                   0.0, 0.0, 0.0])
    run = make_run(tmp_path, reward=np.minimum(0.2 + 0.3 * steps / 60, 0.5) + ar1(4, n, 0.3, 0.02),
                   kl=0.002 + 0.01 * steps / n, eval_every=10, eval_values=ev)
    best = diagnose(run).best_checkpoint
    assert best.behind and best.best_step == 60


# --- a reward that drops to zero as the weights go NaN is the broken policy scoring, not a new ruler


def test_a_reward_that_falls_as_the_loss_goes_nan_is_no_rescale(tmp_path):
    """Weights NaN from step 541: the loss and gradient norm log NaN, the reward 0.0, while KL, entropy and length
    (computed by the rollout engine) still print numbers. Read as a reward re-scored with the policy unbroken, the run
    became 'never learned since the start'; it diverged, and the weights before it are better."""
    n = 700
    steps = np.arange(1, n + 1)
    dead = steps >= 541
    reward = np.where(dead, 0.0, 0.3 + 0.2 * np.minimum(steps / 400, 1.0) + ar1(5, n, 0.3, 0.03))
    nan = np.where(dead, np.nan, 1.0)
    run = make_run(tmp_path, reward=reward, reward_std=np.where(dead, 0.0, 0.45), loss=nan * 0.01,
                   grad_norm=nan * (0.2 + ar1(6, n, 0.3, 0.02)), kl=0.002 + 0.015 * steps / n,
                   entropy=0.8 - 0.15 * steps / n, completion_length=500 + 100 * steps / n,
                   checkpoints=(100, 200, 300, 400, 500, 600, 700))
    found = kinds(run)
    assert "reward_rescaled" not in found and "identical_rewards" not in found and "nonfinite" in found
    v = verdict(run)
    assert v.decision == "rollback" and v.rollback_step is not None and v.rollback_step <= 540


# --- holdout15: a saturated set-level reward, and a decline that rests on one evaluation


def test_the_spread_within_groups_says_the_signal_is_gone_when_no_batch_spread_is_logged(tmp_path):
    """OpenRLHF's group_reward_std falls from 0.30 to 0.03 while a pass@8-style reward sits at 0.99."""
    n = 800
    steps = np.arange(1, n + 1)
    reward = np.minimum(0.85 + 0.14 * steps / 350, 0.99) + 0.004 * np.sin(steps)
    group_std = np.maximum(0.30 - 0.27 * steps / 350, 0.03)
    run = make_run(tmp_path, reward=reward, group_reward_std=group_std, kl=0.002 + 0.01 * steps / n)
    assert run.has("reward_group_std_mean") and not run.has("reward_std")
    d = diagnose(run)
    assert d.learning_signal.saturated and "reward_saturated" in {f.kind for f in d.findings}
    assert not any(a.startswith("reward_std: not logged") for a in d.absent)


def test_a_decline_resting_on_the_latest_of_two_evaluations_after_the_peak_is_one_low_evaluation(tmp_path):
    """A plateau near 0.595 (evaluations 0.008 apart), a top of 0.612, one more at the plateau's level, then 0.566:
    one low evaluation, as with one evaluation after the peak; not an established decline."""
    ev = np.array([0.446, 0.482, 0.52, 0.568, 0.508, 0.538, 0.59, 0.588, 0.6, 0.598, 0.584, 0.594, 0.598, 0.612, 0.594,
                   0.566])
    n = 800
    steps = np.arange(1, n + 1)
    run = make_run(tmp_path, reward=np.minimum(0.3 + 0.3 * steps / 350, 0.6) + ar1(3, n, 0.3, 0.02),
                   kl=0.002 + 0.01 * steps / n, eval_every=50, eval_values=ev)
    found = kinds(run)
    assert "eval_declining" not in found and "eval_latest_drop" in found
    # The same decline with the first evaluation after the top already below the plateau is a decline.
    ev2 = ev.copy()
    ev2[-2] = 0.578
    assert "eval_declining" in kinds(make_run(tmp_path / "b", reward=np.minimum(0.3 + 0.3 * steps / 350, 0.6)
                                              + ar1(3, n, 0.3, 0.02), kl=0.002 + 0.01 * steps / n, eval_every=50,
                                              eval_values=ev2))


def signal_gone_run(root: Path, eval_late_gain: float):
    """Reward levels off at 0.61 from step 350; from then on 96% of groups score alike (entropy collapsed). The eval
    levels off with it (its latest evaluation a new best by under its noise), or climbs on by `eval_late_gain`."""
    n = 800
    steps = np.arange(1, n + 1)
    reward = np.minimum(0.38 + 0.23 * steps / 350, 0.61) + ar1(11, n, 0.3, 0.02)
    zero = np.minimum(0.37 + 0.59 * steps / 350, 0.96) + ar1(12, n, 0.3, 0.01)
    entropy = np.maximum(0.75 * np.exp(-steps / 120), 0.033)
    evals = np.arange(50, n + 1, 50)
    ev = np.minimum(0.36 + 0.16 * evals / 350, 0.52) + eval_late_gain * np.maximum(evals - 350, 0) / 450
    ev = ev + np.array([0.01, -0.01] * 7 + [-0.01, 0.016])  # the latest a new best by a hair, as plateaus do
    return make_run(root, reward=reward, frac_reward_zero_std=zero, entropy=entropy, kl=0.002 + 0.06 * steps / n,
                    eval_every=50, eval_values=ev, config={"max_steps": 2000})


def test_a_levelled_reward_with_nearly_every_group_alike_and_a_flat_eval_is_spent(tmp_path):
    run = signal_gone_run(tmp_path, eval_late_gain=0.0)
    assert "signal_thinning" in kinds(run)
    v = verdict(run)
    assert v.decision == "stop" and "nearly every group of completions now scores alike" in v.headline


def test_the_same_with_the_eval_still_climbing_goes_on(tmp_path):
    assert verdict(signal_gone_run(tmp_path, eval_late_gain=0.12)).decision == "continue"


def test_a_reward_at_its_floor_from_the_start_never_had_a_signal_it_did_not_fall(tmp_path):
    """A tool agent succeeding on 2% of episodes for 700 steps, 92% of groups all-fail: nothing was learnt, and the
    sheet must not call a lucky early stretch a peak the run fell from."""
    n = 700
    steps = np.arange(1, n + 1)
    rng = np.random.default_rng(15)
    reward = rng.binomial(256, 0.022, n) / 256
    zero = np.clip(0.93 + ar1(16, n, 0.3, 0.01), 0, 1)
    run = make_run(tmp_path, reward=reward, frac_reward_zero_std=zero, kl=0.001 + 0.01 * steps / n)
    d = diagnose(run)
    found = {f.kind: f for f in d.findings}
    assert "no_learning_signal" in found and "reward_floor_no_signal" not in found
    assert "sat at its floor since the start" in found["no_learning_signal"].observation
    assert d.learning_signal.never_learned and verdict(run).decision == "stop"


def test_the_holding_eval_finding_quotes_the_mean_its_ratio_is_taken_from(tmp_path):
    """The ratio compares the evaluations around the peak (a mean of three) with the latest two: quoting only the
    peak evaluation left readers unable to check it (0.571 vs 0.565 over a noise of 0.0057 is 1x, not 0.1x)."""
    ev = np.array([0.40, 0.46, 0.50, 0.53, 0.55, 0.56, 0.571, 0.556, 0.56, 0.565, 0.566])
    n = 550
    steps = np.arange(1, n + 1)
    run = make_run(tmp_path, reward=np.minimum(0.3 + 0.3 * steps / 300, 0.6) + ar1(3, n, 0.3, 0.02),
                   kl=0.002 + 0.01 * steps / n, eval_every=50, eval_values=ev)
    holding = next(f for f in diagnose(run).findings if f.kind == "eval_holding")
    assert "3 evaluations, mean 0.562" in holding.observation


def test_the_slide_start_fits_equal_a_least_squares_fit_at_every_knee():
    """The knee's two fits come from running sums (a 300k-step reward curve has as many levels); at every knee they
    must equal a least-squares solver's answer, the one-point slide included."""
    from assessor.diagnose.checkpoint import _knee_fits

    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(4, 30))
        t = np.sort(rng.choice(np.arange(0, 3000, 10), n, replace=False)).astype(np.float64)
        y = 0.5 + np.cumsum(rng.normal(0, 0.02, n))
        ramp, drop, jumps = _knee_fits(t, y)
        for k in range(n - 1):
            x = np.maximum(t - t[k], 0.0)
            design = np.stack([np.ones(n), x], axis=1)
            coef, *_ = np.linalg.lstsq(design, y, rcond=None)
            expected = float(np.sum((design @ coef - y) ** 2)) if coef[1] < 0 else np.inf
            assert ramp[k] == pytest.approx(expected, rel=1e-6, abs=1e-12)
            design = np.stack([(t <= t[k]).astype(np.float64), (t > t[k]).astype(np.float64), x], axis=1)
            coef, *_ = np.linalg.lstsq(design, y, rcond=None)
            assert jumps[k] == pytest.approx(coef[0] - coef[1], rel=1e-6, abs=1e-9)
            expected = float(np.sum((design @ coef - y) ** 2)) if coef[2] <= 0 and coef[0] > coef[1] else np.inf
            assert drop[k] == pytest.approx(expected, rel=1e-6, abs=1e-12)


def test_a_task_component_standing_still_is_not_excused_by_the_held_out_total_gaining_with_the_format_parts(
        tmp_path):
    """holdout17: the held-out accuracy component sat at 0 while the held-out total (format and tag parts) gained,
    and a finding said "the gains do reach held-out data, and the flat one measures something training does not
    target". The task check is what training targets; the total gaining with the other parts is the proxy."""
    rng = np.random.default_rng(6)
    rows: list[dict[str, float]] = []
    n = 260
    for step in range(1, n + 1):
        fmt = min(1.0, 0.3 + 0.7 * step / 150) + float(rng.normal(0, 0.02))
        rows.append({"step": step, "reward": fmt, "rewards/format_reward/mean": fmt,
                     "rewards/accuracy_reward/mean": 0.0, "kl": 0.001 + 0.01 * step / n})
        if step % 20 == 0:
            efmt = min(1.0, 0.3 + 0.7 * step / 150) + float(rng.normal(0, 0.01))
            rows.append({"step": step, "eval_reward": efmt, "eval_rewards/format_reward/mean": efmt,
                         "eval_rewards/accuracy_reward/mean": 0.005 * float(rng.integers(0, 2))})
    write_jsonl(tmp_path, rows)
    found = kinds(load_run(tmp_path))
    assert "eval_transfers_elsewhere" not in found


def test_the_luckiest_evaluation_of_a_flat_side_benchmark_is_no_peak_it_fell_from(tmp_path):
    """holdout17: two flat side benchmarks (AIME pass@k on 30 problems, MATH-500) each had one lucky evaluation;
    against it the latest two read as 2x-2.6x noise lower, two side declines made a rollback of a healthy run. The
    peak is read with its neighbours, as the preferred series' is; a side benchmark that really slid still counts."""
    rng = np.random.default_rng(7)
    flat = np.array([0.50, 0.496, 0.482, 0.512, 0.484, 0.474, 0.482, 0.508, 0.512, 0.538, 0.512, 0.524, 0.518,
                     0.482, 0.492, 0.50, 0.49, 0.476, 0.516, 0.488])
    slid = np.concatenate([np.linspace(0.40, 0.52, 10), np.linspace(0.51, 0.42, 10)]) + rng.normal(0, 0.006, 20)
    outcomes = {}
    for name, side in (("flat", flat), ("slid", slid)):
        rows: list[dict[str, float]] = []
        for step in range(1, 401):
            rows.append({"step": step, "reward": 0.3 + 0.3 * step / 400 + float(rng.normal(0, 0.03))})
            if step % 20 == 0:
                k = step // 20 - 1
                rows.append({"step": step, "eval_accuracy": 0.3 + 0.2 * step / 400 + float(rng.normal(0, 0.01)),
                             "eval_math500_acc": float(side[k])})
        write_jsonl(tmp_path / name, rows)
        outcomes[name] = {(f.kind, f.signal) for f in diagnose(load_run(tmp_path / name)).findings}
    assert ("eval_declining", "eval/math500_acc") not in outcomes["flat"]
    assert ("eval_declining", "eval/math500_acc") in outcomes["slid"]


def test_a_preference_runs_held_out_accuracy_under_its_own_name_is_read_before_its_held_out_loss(tmp_path):
    """OpenRLHF DPO logs its held-out preference accuracy as `eval/acc_mean` beside `eval/eval_loss`."""
    rows: list[dict[str, float]] = []
    for step in range(10, 910, 10):
        rows.append({"step": step, "train/loss": 0.69 - 0.2 * step / 900, "train/acc": 0.55 + 0.3 * step / 900,
                     "train/chosen_reward": -0.1 * step / 900, "train/reject_reward": -1.0 * step / 900})
        if step % 50 == 0:
            rows.append({"step": step, "eval/acc_mean": 0.55 + 0.1 * min(step, 500) / 500,
                         "eval/eval_loss": 0.68 - 0.08 * min(step, 500) / 500})
    write_jsonl(tmp_path, rows)
    (tmp_path / "config.json").write_text(json.dumps({"algorithm": "dpo"}))
    d = diagnose(load_run(tmp_path))
    assert d.eval.metric == "acc_mean", d.eval.metric


def test_a_held_out_error_rate_or_perplexity_is_read_lower_is_better(tmp_path):
    """holdout18's blind readers: a compile-error rate and a held-out call-error rate falling as the model improved
    read as "peaked at the first evaluation ... a worsening of 5.6x", with the best point at step 0."""
    rows: list[dict[str, float]] = []
    for step in range(1, 401):
        rows.append({"step": step, "reward": 0.3 + 0.3 * step / 400})
        if step % 25 == 0:
            rows.append({"step": step, "val/heldout_call_err": 0.24 - 0.12 * step / 400,
                         "val/val_ppl": 14.0 - 3.0 * step / 400})
    write_jsonl(tmp_path, rows)
    d = diagnose(load_run(tmp_path))
    assert not any(f.kind in ("eval_declining", "side_eval_declining") for f in d.findings)
    assert d.best_checkpoint.best_step is None or d.best_checkpoint.best_step >= 350
    assert verdict(load_run(tmp_path)).decision == "continue"


def test_a_column_of_unix_timestamps_is_no_metric(tmp_path):
    """holdout18: a loop writing `time` (a wall clock) into every row; the sheet showed it as a rising held-out row."""
    rows = [{"step": s, "split": "train", "reward": 0.3 + s / 1000, "time": 1795664772.5 + 30 * s}
            for s in range(1, 301)]
    rows += [{"step": s, "split": "val", "val_solve_rate": 0.2 + s / 3000, "time": 1795664772.5 + 30 * s}
             for s in range(0, 301, 50)]
    write_jsonl(tmp_path, rows)
    run = load_run(tmp_path)
    assert not any("time" in name for split in ("train", "eval") for name in run.metric_names(split))
