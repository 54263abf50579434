from __future__ import annotations

import json

import pytest

from assessor import NoMetricsError, load_run


def test_step_log_with_crlf_percent_eval_and_an_appended_restart(tmp_path):
    header = "step,total_steps,loss,reward_avg,avg_response_len,eval_acc"
    aborted = [f"{s},300,0.1,0.2,100,{'15.6' if s == 1 else ''}" for s in range(1, 6)]
    fresh = [f"{s},500,0.1,{s / 100:.2f},100,{'15.6' if s == 1 else ('46.2' if s == 50 else '')}" for s in range(1, 61)]
    (tmp_path / "metrics.csv").write_bytes(("\r\n".join([header, *aborted, *fresh]) + "\r\n").encode())
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == list(range(1, 61))
    assert run.series("reward_mean")[60] == pytest.approx(0.6)
    assert run.series("accuracy", "eval").to_dict() == {1: pytest.approx(0.156), 50: pytest.approx(0.462)}
    assert run.facts.planned_total_steps == 500
    assert any("a new run starts at line 7" in w and "dropped 5" in w for w in run.warnings)
    assert run.nonfinite.empty  # empty eval cells are "not logged", not NaN


def test_tracker_export_skips_min_max_bands_and_picks_one_run(tmp_path):
    lines = ["Step,grpo-a - train/reward,grpo-a - train/reward__MIN,grpo-a - train/reward__MAX,grpo-a - train/kl,"
             "grpo-b - train/reward"]
    lines += [f"{s},{s / 10},{s / 10 - 0.1},{s / 10 + 0.1},{s / 1000},{s}" for s in range(10, 60, 10)]
    (tmp_path / "export.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert run.series("reward_mean").to_dict() == {10: 1.0, 20: 2.0, 30: 3.0, 40: 4.0, 50: 5.0}
    assert run.series("kl").index.tolist() == [10, 20, 30, 40, 50]
    assert run.sources[0].format == "tracker_csv"
    assert any("holds 2 runs" in w and "'grpo-a'" in w for w in run.warnings)


def test_wandb_history_csv_uses_the_trainer_step_not_wandb_step(tmp_path):
    # W&B's `_step` counts log calls (eval rows too) and keeps counting after a resume; HF logs its own step
    # as `train/global_step`. A resume at step 20 re-logs steps 22-30.
    lines = ["_step,_runtime,_timestamp,train/global_step,train/reward,eval/accuracy"]
    rows = [(s, 0.1 + s / 100, "") for s in range(2, 32, 2)]
    rows += [(s, 0.2 + s / 100, "") for s in range(22, 62, 2)]
    rows.insert(5, (10, "", 0.4))  # an eval row at step 10
    lines += [f"{i},{i * 3.0},{1754000000 + i},{s},{r},{e}" for i, (s, r, e) in enumerate(rows)]
    (tmp_path / "wandb_export.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    reward = run.series("reward_mean")
    assert reward.index.tolist() == list(range(2, 62, 2))
    assert reward[24] == pytest.approx(0.44)  # the resumed run's value
    assert run.series("accuracy", "eval").to_dict() == {10: pytest.approx(0.4)}
    assert not {"_runtime", "_timestamp", "_step"} & {s.source_key for s in run.metrics.itertuples()}
    assert any("steps go backwards" in w for w in run.warnings)


def test_csv_with_a_half_written_last_line(tmp_path):
    (tmp_path / "m.csv").write_text("step,reward,kl\n1,0.1,0.01\n2,0.2,0.02\n3,0.", encoding="utf-8")
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == [1, 2]
    assert any("m.csv: last line is incomplete" in w for w in run.warnings)


def test_csv_header_only_is_a_clear_error(tmp_path):
    (tmp_path / "m.csv").write_text("step,reward\n", encoding="utf-8")
    with pytest.raises(NoMetricsError, match=r"m.csv: header only, no logged steps yet"):
        load_run(tmp_path)


def test_verl_file_logger_jsonl_with_nulls_and_a_partial_tail(tmp_path):
    lines = [json.dumps({"step": s, "data": {"critic/score/mean": s / 10, "actor/grad_norm": None if s == 2 else 0.1,
                                            "timing_s/gen": 30.0, "timing_s/step": 50.0}}) for s in range(1, 5)]
    (tmp_path / "exp.jsonl").write_text("\n".join(lines) + '\n{"step": 5, "data": {"critic/sc', encoding="utf-8")
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == [1, 2, 3, 4]
    assert run.nonfinite_steps("grad_norm") == [2]
    assert run.facts.framework == "verl"
    assert run.has("time_generation_s") and run.has("time_step_s")
    assert any("last line is incomplete" in w for w in run.warnings)


def test_generic_jsonl_with_nan_spellings(tmp_path):
    text = (
        '{"step": 1, "reward": 0.1, "kl": NaN}\n{"step": 2, "reward": "NaN", "kl": 0.2}\n{"step": 3, "reward": 0.3}\n'
    )
    (tmp_path / "log.jsonl").write_text(text, encoding="utf-8")
    run = load_run(tmp_path)
    assert run.series("reward_mean").to_dict() == {1: 0.1, 3: 0.3}
    assert run.nonfinite_steps("reward_mean") == [2]
    assert run.nonfinite_steps("kl") == [1]


def test_empty_directory_and_empty_files(tmp_path):
    with pytest.raises(NoMetricsError, match="no training logs found"):
        load_run(tmp_path)
    (tmp_path / "log.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(NoMetricsError, match=r"log\.jsonl: no JSON metric records"):
        load_run(tmp_path)


def test_rollout_dumps_become_samples_not_metrics(tmp_path):
    (tmp_path / "log.jsonl").write_text('{"step": 1, "reward": 0.5}\n{"step": 2, "reward": 0.6}\n', encoding="utf-8")
    dumps = tmp_path / "rollouts"
    dumps.mkdir()
    for step in (10, 20):
        lines = [
            json.dumps({"input": f"Q{i}", "output": f"answer {step}-{i}", "gts": "4", "score": i % 2, "step": step})
            for i in range(3)
        ]
        (dumps / f"{step}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "train_data_step30.jsonl").write_text(
        json.dumps({"idx": 0, "content": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}],
                    "rewards": [1.0]}) + "\n", encoding="utf-8")
    run = load_run(tmp_path)
    assert run.series("reward_mean").to_dict() == {1: 0.5, 2: 0.6}  # samples did not leak into the metrics
    assert run.samples[0].step == 30 and run.samples[0].source == "train_data_step30.jsonl"
    assert "ok" in run.samples[0].completion
    step_20 = [s for s in run.samples if s.step == 20]
    assert [s.completion for s in step_20] == ["answer 20-0", "answer 20-1", "answer 20-2"]
    assert step_20[1].reward == 1.0 and step_20[1].prompt == "Q1"


def test_jsonl_steps_on_it_and_on_the_trainer_step_over_wandb_step(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "log.jsonl").write_text(
        "".join(json.dumps({"it": s, "avg_reward": s / 1000}) + "\n" for s in range(10, 130, 10)), encoding="utf-8")
    assert load_run(tmp_path / "a").series("reward_mean").index.tolist() == list(range(10, 130, 10))

    # Old W&B clients' wandb-history.jsonl: `_step` counts log calls; HF logs its own step as train/global_step.
    (tmp_path / "b").mkdir()
    rows = [{"_step": i, "_runtime": 3.0 * i, "train/global_step": 5 * (i + 1), "train/reward": i / 10}
            for i in range(8)]
    (tmp_path / "b" / "wandb-history.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert load_run(tmp_path / "b").series("reward_mean").index.tolist() == [5, 10, 15, 20, 25, 30, 35, 40]
