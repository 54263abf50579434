"""Every real run of the eval set (evals/real-runs/manifest.yaml) loads; counts and step ranges are checked against
the files themselves.

The expected numbers were read off the raw files with grep/awk (and, for event files, TensorBoard's own
EventAccumulator), not from our reader's output. Where a folder's SOURCE.md and the file disagree, the
file wins and the comment says so.
"""

from __future__ import annotations

import pytest

from assessor import load_run
from tests.conftest import REAL_RUN_NAMES

# folder -> (framework, algorithm, last_step, {(metric, split): (points, first_step, last_step)})
EXPECTED = {
    "rfs-ch06-grpo-nokl-2048tok": ("reasoning_from_scratch", "grpo", 258, {
        ("reward_mean", "train"): (258, 1, 258),  # the .txt stops at 250; the CSV reaches further
        ("response_length_mean", "train"): (258, 1, 258),
        ("loss", "train"): (258, 1, 258),
    }),
    "rfs-ch07-grpo-clip-ratio-500": ("reasoning_from_scratch", "grpo", 500, {
        ("reward_mean", "train"): (500, 1, 500),
        ("importance_ratio_mean", "train"): (500, 1, 500),
        ("entropy", "train"): (500, 1, 500),
        ("accuracy", "eval"): (11, 1, 500),
    }),
    "rfs-ch07-grpo-format-reward-500": ("reasoning_from_scratch", "grpo", 500, {
        ("reward_component/format_mean", "train"): (500, 1, 500),
        ("kl", "train"): (500, 1, 500),
        ("accuracy", "eval"): (11, 1, 500),
    }),
    "rfs-ch07-grpo-format-reward-conditional-500": ("reasoning_from_scratch", "grpo", 500, {
        ("reward_component/format_mean", "train"): (500, 1, 500),
    }),
    "rfs-ch07-grpo-kl-500": ("reasoning_from_scratch", "grpo", 500, {
        ("kl", "train"): (500, 1, 500),
        ("advantage_std", "train"): (500, 1, 500),
    }),
    # 7_3 CSV: 5 rows of an aborted start, then the 500-step run; ch06 CSV/.txt: the same run, older script.
    "rfs-ch07-grpo-nokl-tracking-500": ("reasoning_from_scratch", "grpo", 500, {
        ("reward_mean", "train"): (500, 1, 500),
        ("entropy", "train"): (500, 1, 500),
        ("accuracy", "eval"): (11, 1, 500),
    }),
    "trl-dpo-qwen25-05b-orca-pairs": ("trl", "dpo", 75, {
        ("pref_margin", "train"): (75, 1, 75),
        ("pref_accuracy", "train"): (75, 1, 75),
        ("grad_norm", "train"): (71, 3, 75),  # NaN at steps 1, 2, 18 and 74
        ("loss", "train"): (75, 1, 75),
    }),
    "trl-grpo-q35-9b-gate-rho0.7-s43": ("trl", "grpo", 200, {
        ("reward_mean", "train"): (200, 1, 200),
        ("kl", "train"): (200, 1, 200),
        ("response_length_mean", "train"): (200, 1, 200),
    }),
    "trl-grpo-q35-9b-gate-rho1.0-s43": ("trl", "grpo", 200, {
        ("reward_mean", "train"): (200, 1, 200),
        ("reward_component/reward_fn_mean", "train"): (200, 1, 200),
    }),
    "trl-grpo-q35-9b-pilot-noreward-s42": ("trl", "grpo", 50, {
        ("reward_mean", "train"): (50, 1, 50),
        ("lr", "train"): (50, 1, 50),
    }),
    "trl-grpo-q35-9b-rho0.7-s44": ("trl", "grpo", 200, {
        ("reward_mean", "train"): (40, 5, 200),
        ("entropy", "train"): (40, 5, 200),
        ("response_length_clip_ratio", "train"): (40, 5, 200),
    }),
    "verl-grpo-gsm8k-q3b-fsdp-base": ("verl", "grpo", 105, {
        ("reward_mean", "train"): (105, 1, 105),
        ("kl", "train"): (105, 1, 105),
        ("time_generation_s", "train"): (105, 1, 105),
        ("time_step_s", "train"): (105, 1, 105),
        ("gpu_memory_allocated_gb", "train"): (105, 1, 105),
        ("reward_mean", "eval"): (22, 0, 105),
    }),
    "verl-grpo-gsm8k-q7b-fsdp-base": ("verl", "grpo", 105, {
        ("reward_mean", "train"): (105, 1, 105),
        ("reward_mean", "eval"): (22, 0, 105),
    }),
    # SOURCE.md says 40 validation values to step 399; the file holds 43, to step 429.
    "verl-ppo-qwen25-05b-gsm8k": ("verl", "ppo", 434, {
        ("reward_mean", "train"): (435, 0, 434),
        ("value_loss", "train"): (435, 0, 434),
        ("kl", "train"): (435, 0, 434),
        ("entropy", "train"): (435, 0, 434),
        ("lr", "train"): (435, 0, 434),
        ("time_generation_s", "train"): (435, 0, 434),
        ("reward_mean", "eval"): (43, 9, 429),
    }),
    # ---- added 2026-11-26: hand-written loops, MiniMind, Monarch, W&B folders, notebooks, logs pasted into Markdown
    # Epoch:[1/1](i/500) lines; Correct is a fraction correct in the group (train accuracy), Fmt a format rate.
    "grpo-minimind30m-gsm8k-coicozoi": (None, "grpo", 500, {
        ("reward_mean", "train"): (500, 1, 500),
        ("kl", "train"): (500, 1, 500),
        ("response_length_mean", "train"): (500, 1, 500),
        ("pg_loss", "train"): (500, 1, 500),
        ("advantage_std", "train"): (500, 1, 500),
        ("lr", "train"): (500, 1, 500),
    }),
    # Event log keyed by grpo_step: 200 rollout + 200 train rows, 41 evals at 0, 5, ..., 200 (not row numbers).
    "grpo-qwen25math15b-math-lr1e5-shibukizero": (None, "grpo", 200, {
        ("reward_mean", "train"): (200, 1, 200),
        ("reward_std", "train"): (200, 1, 200),
        ("entropy", "train"): (200, 1, 200),
        ("response_length_mean", "train"): (200, 1, 200),
        ("grad_norm", "train"): (200, 1, 200),
        ("accuracy", "eval"): (41, 0, 200),
        ("reward_mean", "eval"): (41, 0, 200),
    }),
    # The console log holds histograms only; the CSV re-typed from it (kind column, optimizer_step) is read.
    # No total reward is logged: answer_reward (= the r1_zero reward) stands in, as the warning says.
    "grpo-qwen25math15b-gsm8k-interrupted-damek": (None, None, 44, {
        ("reward_mean", "train"): (45, 0, 44),
        ("reward_component/answer_mean", "train"): (45, 0, 44),
        ("reward_component/format_mean", "train"): (45, 0, 44),
        ("reward_mean", "eval"): (9, 1, 41),
        ("reward_component/format_mean", "eval"): (9, 1, 41),
    }),
    # split: train / val rows; the val rows' lengths are characters of held-out answers, never train lengths.
    "grpo-lr2e5-olmo2-1b-gsm8k-taogerxu": (None, None, 200, {
        ("reward_mean", "train"): (200, 1, 200),
        ("reward_component/format_mean", "train"): (200, 1, 200),
        ("reward_component/answer_mean", "train"): (200, 1, 200),
        ("entropy", "train"): (200, 1, 200),
        ("grad_norm", "train"): (200, 1, 200),
        ("accuracy", "eval"): (22, 0, 200),
        ("response_length_mean", "eval"): (22, 0, 200),
    }),
    "grpo-qwen-gsm8k-monarch-harishvs": (None, None, 232, {
        ("reward_mean", "train"): (233, 0, 232),
        ("kl", "train"): (233, 0, 232),
        ("pg_loss", "train"): (233, 0, 232),
        ("clip_ratio_region", "train"): (233, 0, 232),
        ("grad_norm", "train"): (233, 0, 232),
        ("time_step_s", "train"): (233, 0, 232),
    }),
    "nb-grpo-phi4-14b-gsm8k-unsloth": (None, "grpo", 100, {
        ("reward_mean", "train"): (100, 1, 100),
        ("reward_std", "train"): (100, 1, 100),
        ("kl", "train"): (100, 1, 100),
        ("loss", "train"): (100, 1, 100),  # the table's "Training Loss"
        ("response_length_mean", "train"): (100, 1, 100),
    }),
    "ppo-qwen25-05b-emoji-rmb-chiswsz": ("trl", "ppo", 500, {
        ("reward_mean", "train"): (500, 1, 500),
        ("kl", "train"): (500, 1, 500),
        ("value_loss", "train"): (500, 1, 500),
        ("entropy", "train"): (500, 1, 500),
        ("value_clip_ratio", "train"): (500, 1, 500),
    }),
    # metrics.csv / eval.csv carry the steps extract.py gave the dicts (1, 10, ..., 370; evals 50..350); the
    # transcribed dicts alone have no steps, so that file is set aside as a copy.
    "trl-dpo-llama31-8b-kpastrology-igabhix001": ("trl", "dpo", 370, {
        ("loss", "train"): (38, 1, 370),
        ("pref_margin", "train"): (38, 1, 370),
        ("pref_accuracy", "train"): (38, 1, 370),
        ("logps_chosen", "train"): (38, 1, 370),
        ("loss", "eval"): (7, 50, 350),
        ("pref_margin", "eval"): (7, 50, 350),
    }),
    "trl-grpo-qwen3-4b-coder-samyakshrestha": ("trl", "grpo", 1130, {
        ("reward_mean", "train"): (226, 5, 1130),
        ("kl", "train"): (226, 5, 1130),
        ("response_length_mean", "train"): (226, 5, 1130),
        ("reward_zero_std_frac", "train"): (226, 5, 1130),
        ("reward_component/correctness_reward_func_mean", "train"): (226, 5, 1130),
        ("reward_component/format_reward_func_mean", "train"): (226, 5, 1130),
    }),
    # phase: train on every row; loss_kl is the (negative-drifting) KL term, loss_pg the policy loss.
    "grpo-qwen-05b-queryrewrite-chaoheng666": (None, "grpo", 100, {
        ("reward_mean", "train"): (100, 1, 100),
        ("kl", "train"): (100, 1, 100),
        ("pg_loss", "train"): (100, 1, 100),
        ("advantage_std", "train"): (100, 1, 100),
        ("loss", "train"): (100, 1, 100),
    }),
}
for _seed in ("rho0.1-s43", "rho0.5-s43", "rho1.0-s42", "rho1.0-s43", "rho1.5-s44", "rho3.0-s44"):
    EXPECTED[f"trl-grpo-q7b-{_seed}"] = ("trl", "grpo", 200, {
        ("reward_mean", "train"): (40, 5, 200),
        ("response_length_mean", "train"): (40, 5, 200),
        ("entropy", "train"): (40, 5, 200),
        ("reward_zero_std_frac", "train"): (40, 5, 200),
    })


def test_every_real_run_is_covered():
    assert set(REAL_RUN_NAMES) == set(EXPECTED)


@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_real_run_loads(real_runs, folder):
    framework, algorithm, last_step, metrics = EXPECTED[folder]
    run = load_run(real_runs / folder)
    assert (run.facts.framework, run.facts.algorithm, run.last_step) == (framework, algorithm, last_step)
    for (metric, split), (points, first, last) in metrics.items():
        series = run.series(metric, split)
        assert (len(series), int(series.index.min()), int(series.index.max())) == (points, first, last), (
            metric, split)
    assert not any("Traceback" in w for w in run.warnings)


def test_percent_eval_becomes_a_fraction(real_runs):
    run = load_run(real_runs / "rfs-ch07-grpo-nokl-tracking-500")
    accuracy = run.series("accuracy", "eval")
    assert accuracy[1] == pytest.approx(0.156) and accuracy[50] == pytest.approx(0.462)


def test_aborted_start_is_dropped_and_said(real_runs):
    run = load_run(real_runs / "rfs-ch07-grpo-nokl-tracking-500")
    assert any("7_3_plus_tracking_metrics.csv: a new run starts at line 7" in w for w in run.warnings)


def test_verl_scaled_learning_rate(real_runs):
    run = load_run(real_runs / "verl-ppo-qwen25-05b-gsm8k")
    assert run.series("lr").iloc[0] == pytest.approx(1e-6)  # printed as actor/lr(1e-4):0.010
    assert run.series("critic_lr").iloc[0] == pytest.approx(1e-5)


def test_dpo_nan_grad_norm_is_counted(real_runs):
    run = load_run(real_runs / "trl-dpo-qwen25-05b-orca-pairs")
    assert run.nonfinite_steps("grad_norm") == [1, 2, 18, 74]


def test_folders_say_which_file_was_read_and_which_was_not(real_runs):
    damek = load_run(real_runs / "grpo-qwen25math15b-gsm8k-interrupted-damek")
    assert [(s.path, s.used) for s in damek.sources] == [("metrics.csv", True)]
    assert any(i.startswith("grpo_train_loop_log.txt: no training metrics found") for i in damek.ignored)
    assert any("no total reward is logged; read `rollout/answer_reward`" in w for w in damek.warnings)

    dpo = load_run(real_runs / "trl-dpo-llama31-8b-kpastrology-igabhix001")
    (copy,) = [s for s in dpo.sources if not s.used]
    assert copy.path == "raw/logs_runpod_dpo_metric_lines.txt"
    assert "same values as metrics.csv but at other steps" in (copy.reason or "")

    minimind = load_run(real_runs / "grpo-minimind30m-gsm8k-coicozoi")
    assert [s.format for s in minimind.sources] == ["console_lines"]
    assert minimind.facts.planned_total_steps == 500

    notebook = load_run(real_runs / "nb-grpo-phi4-14b-gsm8k-unsloth")
    assert {s.path: s.format for s in notebook.sources} == {"metrics.csv": "csv", "raw-output.txt": "console_table"}


def test_event_log_evals_are_at_their_grpo_steps(real_runs):
    run = load_run(real_runs / "grpo-qwen25math15b-math-lr1e5-shibukizero")
    accuracy = run.series("accuracy", "eval")
    assert accuracy.index.tolist() == list(range(0, 201, 5))
    assert accuracy[195] == pytest.approx(0.677734375)  # the author's best, "67.77% at step 195"
    assert run.nonfinite.empty  # clip_fraction, approx_kl, reference_kl are null on every row: not logged


@pytest.mark.parametrize("folder", REAL_RUN_NAMES)
def test_every_quadrant_span_says_what_its_own_numbers_say(real_runs, folder):
    # "steps 1-2300: reward -0.0215, KL +0.0326 (kl up reward up)": a label its own move contradicts.
    from assessor.diagnose import diagnose

    for span in diagnose(load_run(real_runs / folder)).kl_reward.timeline:
        kl_part, reward_part = span.quadrant.split("_reward_")
        assert reward_part == "flat" or (span.reward_change > 0) == (reward_part == "up"), span
        assert kl_part != "kl_up" or span.kl_change > 0, span
