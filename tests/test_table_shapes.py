"""Tables as people write them: any step column, a kind column, long form, JSON documents, event logs."""

from __future__ import annotations

import json

import pytest

from assessor import load_run
from assessor.ingest.tables import RowTable, step_rank


@pytest.mark.parametrize(
    "column",
    ["step", "Step", "global_step", "optimizer_step", "iteration", "iter", "grpo_step", "GRPO_Iteration",
     "train_step"],
)
def test_the_step_column_is_found_by_name(tmp_path, column):
    lines = [f"{column},reward,kl"] + [f"{s},{s / 10},{s / 1000}" for s in (10, 20, 30)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == [10, 20, 30]
    assert column not in set(run.metrics["source_key"].astype(str))  # the counter is the axis, not a curve


def test_names_that_end_like_a_step_but_are_not_counters():
    assert step_rank("tokens_per_step") is None
    assert step_rank("timing_s/step") is None  # verl's step time
    assert step_rank("step_time") is None


def test_a_step_like_column_holding_fractions_stays_a_metric(tmp_path):
    lines = ["iteration,warmup_step,reward"] + [f"{s},{s / 3:.3f},{s / 10}" for s in (1, 2, 3)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == [1, 2, 3]
    assert run.series("warmup_step").tolist() == pytest.approx([0.333, 0.667, 1.0])


def test_without_a_step_column_rows_are_steps_and_it_is_said(tmp_path):
    (tmp_path / "losses.csv").write_text("loss,reward\n0.5,0.1\n0.4,0.2\n0.3,0.3\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == [1, 2, 3]
    assert any("losses.csv: no step column" in w and "steps 1, 2, ..." in w for w in run.warnings)


def test_a_data_table_without_steps_is_not_read_as_metrics(tmp_path):
    question = "Natalia sold clips to 48 of her friends in April, and then she sold half as many in May."
    (tmp_path / "samples.csv").write_text(f'question,score\n"{question}",1\n"{question}",0\n', encoding="utf-8")
    (tmp_path / "log.csv").write_text("step,reward\n1,0.5\n2,0.6\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert {s.path for s in run.sources} == {"log.csv"}
    assert any(i.startswith("samples.csv: no step column and long text") for i in run.ignored)


# ------------------------------------------------------------------------------------------------ kinds of rows
TIDY = """kind,grpo_iteration,optimizer_step,n,answer_reward,format_reward
rollout,0,0,256,0.066,0.215
eval,0,1,1319,0.041,0.246
rollout,1,1,256,0.043,0.254
rollout,2,2,256,0.102,0.340
rollout,3,3,256,0.137,0.426
rollout,4,4,256,0.301,0.684
rollout,5,5,256,0.414,0.777
eval,5,6,1319,0.243,0.685
rollout,6,6,256,0.473,0.766
"""


def test_tidy_csv_with_a_kind_column_puts_eval_rows_in_the_eval_split(tmp_path):
    (tmp_path / "metrics.csv").write_text(TIDY, encoding="utf-8")
    run = load_run(tmp_path)
    assert run.last_step == 6  # optimizer_step, not grpo_iteration and not the row number
    answer = run.series("reward_component/answer_mean")
    assert answer.index.tolist() == [0, 1, 2, 3, 4, 5, 6]
    held_out = run.series("reward_component/answer_mean", "eval")
    assert held_out.to_dict() == {1: pytest.approx(0.041), 6: pytest.approx(0.243)}
    # No total reward logged: the task's own component stands in for it, and the user is told.
    assert run.series("reward_mean").to_dict() == answer.to_dict()
    assert run.series("reward_mean", "eval").index.tolist() == [1, 6]
    assert any("no total reward is logged; read `rollout/answer_reward`" in w for w in run.warnings)
    assert run.has("rollout/n") and run.has("n", "eval")  # kinds keep their own unknown keys apart


def test_split_and_phase_columns_work_like_kind(tmp_path):
    rows = [{"step": 0, "split": "val", "accuracy": 0.0, "avg_response_length": 290.0}]
    for s in range(1, 4):
        rows.append({"step": s, "split": "train", "loss": -0.01 * s, "mean_reward": 0.1 * s, "token_entropy": 0.9})
    rows.append({"step": 3, "split": "val", "accuracy": 0.3, "avg_response_length": 350.0})
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert run.series("accuracy", "eval").to_dict() == {0: 0.0, 3: 0.3}
    assert run.series("response_length_mean", "eval").to_dict() == {0: 290.0, 3: 350.0}
    assert not run.has("response_length_mean")  # a val row's length is not a training length
    assert run.series("reward_mean").index.tolist() == [1, 2, 3]
    assert run.has("entropy") and run.last_step == 3


def test_an_event_log_keyed_by_grpo_step_is_not_read_in_row_order(tmp_path):
    # The shape of a CS336 A5 loop: eval, rollout, train and summary rows, each with its own keys.
    rows = [{"type": "eval", "grpo_step": 0, "optimizer_step": 0, "reward": 0.04, "answer_accuracy": 0.04}]
    for s in range(1, 6):
        rows += [
            {"type": "rollout", "grpo_step": s, "reward": 0.1 * s, "std_reward": 0.3, "avg_response_token_length": 300},
            {"type": "train", "grpo_step": s, "optimizer_step": s, "loss": -0.01, "grad_norm": 0.3,
             "token_entropy": 0.9, "clip_fraction": None, "reference_kl": None, "reference_model_cached": False},
            {"type": "grpo_step_summary", "grpo_step": s, "step_seconds": 29.7},
        ]
        if s % 5 == 0:
            rows.append({"type": "eval", "grpo_step": s, "optimizer_step": s, "reward": 0.3, "answer_accuracy": 0.3})
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert run.last_step == 5
    assert run.series("reward_mean").to_dict() == pytest.approx({1: 0.1, 2: 0.2, 3: 0.3, 4: 0.4, 5: 0.5})
    assert run.series("accuracy", "eval").to_dict() == {0: 0.04, 5: 0.3}
    assert run.series("time_step_s").index.tolist() == [1, 2, 3, 4, 5]
    assert run.has("entropy") and run.has("response_length_mean") and run.has("reward_std")
    # Never-filled fields are "not logged", not NaN; flags are settings, not curves.
    assert not run.has("kl") and not run.has("clip_ratio_region") and run.nonfinite.empty
    assert not run.has("reference_model_cached")


def test_long_form_table(tmp_path):
    text = "step,metric,value\n" + "".join(
        f"{s},reward,{s / 10}\n{s},kl,{s / 100}\n{s},completions/mean_length,{100 + s}\n" for s in (1, 2, 3)
    )
    (tmp_path / "scalars.csv").write_text(text, encoding="utf-8")
    run = load_run(tmp_path)
    assert run.series("kl").to_dict() == pytest.approx({1: 0.01, 2: 0.02, 3: 0.03})
    assert run.series("response_length_mean").tolist() == [101.0, 102.0, 103.0]


def test_long_form_jsonl_with_a_split_column():
    table = RowTable("scalars.jsonl")
    for row in (
        {"step": 10, "name": "reward", "value": 0.5, "split": "train"},
        {"step": 10, "name": "reward", "value": 0.4, "split": "eval"},
    ):
        table.add(row)
    frame = table.build().frame
    splits = frame["split"].astype(object).where(frame["split"].notna(), "no hint")
    rows = sorted(zip(frame["key"].astype(str), splits, frame["value"], strict=True))
    assert rows == [("eval/reward", "eval", 0.4), ("train/reward", "no hint", 0.5)]


# ------------------------------------------------------------------------------------------------ JSON documents
def test_json_list_of_rows_without_hf_step(tmp_path):
    rows = [{"iteration": i, "policy_loss": 0.1, "mean_reward": i / 10} for i in range(1, 6)]
    (tmp_path / "history.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")
    run = load_run(tmp_path)
    assert run.sources[0].format == "json"
    assert run.series("reward_mean").index.tolist() == [1, 2, 3, 4, 5]


def test_json_columns_and_rows_by_step(tmp_path):
    (tmp_path / "curves.json").write_text(
        json.dumps({"step": [5, 10, 15], "reward": [0.1, 0.2, 0.3], "kl": [0.0, 0.01, 0.02]}), encoding="utf-8")
    assert load_run(tmp_path).series("reward_mean").index.tolist() == [5, 10, 15]
    (tmp_path / "curves.json").unlink()
    (tmp_path / "by_step.json").write_text(
        json.dumps({"1": {"reward": 0.1, "kl": 0.0}, "2": {"reward": 0.2, "kl": 0.1}}), encoding="utf-8")
    assert load_run(tmp_path).series("kl").to_dict() == {1: 0.0, 2: 0.1}


def test_a_json_summary_is_skipped_with_its_reason(tmp_path):
    (tmp_path / "run_summary.json").write_text(json.dumps({"best_accuracy": 0.6, "n_steps": 200}, indent=2),
                                               encoding="utf-8")
    (tmp_path / "log.jsonl").write_text('{"step": 1, "reward": 0.5}\n{"step": 2, "reward": 0.6}\n', encoding="utf-8")
    run = load_run(tmp_path)
    assert [s.path for s in run.sources] == ["log.jsonl"]
    assert any(i.startswith("run_summary.json: holds single values") for i in run.ignored)


def test_a_held_out_row_whose_keys_already_say_eval_is_not_filed_under_eval_twice(tmp_path):
    # holdout39: a loop writing {"split": "eval", "eval/gsm8k_test_acc": ...} was read as `eval/eval/gsm8k_test_acc`,
    # so the sheet called one eval "too few for a table row" beside the table's row for the other name.
    rows = [{"step": s, "reward_mean": 0.3 + s / 1000, "kl": 0.01} for s in range(1, 201)]
    rows += [{"step": s, "split": "eval", "eval/gsm8k_test_acc": 0.5 + s / 2000, "math500_acc": 0.3}
             for s in range(20, 201, 20)]
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert sorted(load_run(tmp_path).metric_names("eval")) == ["gsm8k_test_acc", "math500_acc"]
