from __future__ import annotations

import json
from pathlib import Path

import pytest

from assessor import NoMetricsError, load_run
from assessor.errors import UnreadableSourceError
from assessor.ingest.trl_state import READER


def write_state(path: Path, history: list[dict], **extra: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {"global_step": history[-1]["step"] if history else 0, "logging_steps": 10, "max_steps": 1000,
             "log_history": history, **extra}
    path.write_text(json.dumps(state, indent=2, sort_keys=True), encoding="utf-8")
    return path


def grpo_v017_row(step: int, reward: float) -> dict:
    return {"step": step, "epoch": step / 100, "loss": 0.01, "grad_norm": 0.2, "learning_rate": 1e-6,
            "reward": reward, "reward_std": 0.3, "rewards/acc/mean": reward, "rewards/acc/std": 0.3,
            "completions/mean_length": 300.0, "completions/clipped_ratio": 0.01, "frac_reward_zero_std": 0.2,
            "kl": 0.01, "entropy": 0.5}


def test_trl_v014_keys(tmp_path):
    history = [{"step": s, "loss": 0.0, "reward": 0.1 * s, "reward_std": 0.2, "rewards/accuracy_reward": 0.1 * s,
                "completion_length": 200.0 + s, "kl": 0.001 * s, "learning_rate": 1e-6, "grad_norm": 0.1,
                "epoch": 0.01} for s in (1, 2, 3)]
    run = load_run(write_state(tmp_path / "trainer_state.json", history).parent)
    assert run.series("response_length_mean").to_dict() == {1: 201.0, 2: 202.0, 3: 203.0}
    assert run.has("reward_component/accuracy_reward_mean")
    assert run.facts.framework == "trl"
    assert run.facts.algorithm == "grpo"


def test_eval_rows_summary_row_and_nonfinite_tokens(tmp_path):
    path = tmp_path / "trainer_state.json"
    text = json.dumps({
        "global_step": 20, "max_steps": 20, "logging_steps": 10,
        "log_history": [grpo_v017_row(10, 0.4),
                        {"step": 10, "epoch": 0.1, "eval_reward": 0.35, "eval_loss": 0.2, "eval_runtime": 3.0},
                        {**grpo_v017_row(20, 0.5), "grad_norm": "NAN_TOKEN", "kl": None},
                        {"step": 20, "epoch": 0.2, "eval_reward": 0.45},
                        {"step": 20, "epoch": 0.2, "train_runtime": 100.0, "train_loss": 0.01, "total_flos": 1.0,
                         "train_samples_per_second": 1.0, "train_steps_per_second": 0.1}],
    })
    path.write_text(text.replace('"NAN_TOKEN"', "NaN"), encoding="utf-8")  # Python's json writes bare NaN
    run = load_run(tmp_path)
    assert run.series("reward_mean").to_dict() == {10: 0.4, 20: 0.5}
    assert run.series("reward_mean", "eval").to_dict() == {10: 0.35, 20: 0.45}
    assert run.series("loss", "eval").to_dict() == {10: 0.2}
    assert run.nonfinite_steps("grad_norm") == [20]
    assert run.nonfinite_steps("kl") == [20]  # TRL logs None when every value in the window was NaN
    assert run.last_step == 20
    assert not run.has("train_runtime")
    assert any("grad_norm: 1 nan" in w for w in run.warnings)


def test_half_written_state_reads_complete_entries(tmp_path):
    path = write_state(tmp_path / "trainer_state.json", [grpo_v017_row(s, 0.1) for s in (10, 20, 30)])
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.rindex('"reward"')], encoding="utf-8")  # cut inside the third entry
    data = READER.read(path)
    assert sorted(set(data.frame["step"])) == [10, 20]
    assert any("incomplete" in w for w in data.warnings)


def test_garbage_state_is_a_clear_error(tmp_path):
    (tmp_path / "trainer_state.json").write_text("{\"global_step\": 3, ", encoding="utf-8")
    with pytest.raises(NoMetricsError, match=r"trainer_state.json: not valid JSON .* try again"):
        load_run(tmp_path)


def test_empty_log_history(tmp_path):
    write_state(tmp_path / "trainer_state.json", [])
    with pytest.raises(NoMetricsError, match="log_history` is empty"):
        load_run(tmp_path)


def test_live_run_reads_the_newest_checkpoint_and_falls_back_when_it_is_broken(tmp_path):
    rows = [grpo_v017_row(s, s / 1000) for s in range(10, 310, 10)]
    for step in (100, 200, 300):
        write_state(tmp_path / f"checkpoint-{step}" / "trainer_state.json", [r for r in rows if r["step"] <= step])
    run = load_run(tmp_path)
    assert run.last_step == 300
    assert [c.step for c in run.checkpoints] == [100, 200, 300]
    assert [s.path for s in run.sources] == ["checkpoint-300/trainer_state.json"]

    (tmp_path / "checkpoint-300" / "trainer_state.json").write_text("", encoding="utf-8")  # being written
    run = load_run(tmp_path)
    assert run.last_step == 200
    assert any("checkpoint-300" in w and "previous checkpoint" in w for w in run.warnings)


def test_top_level_state_and_a_newer_checkpoint(tmp_path):
    rows = [grpo_v017_row(s, 0.2) for s in range(10, 110, 10)]
    write_state(tmp_path / "trainer_state.json", rows[:5])  # saved by an earlier, interrupted launch
    write_state(tmp_path / "checkpoint-100" / "trainer_state.json", rows)
    run = load_run(tmp_path)
    assert run.last_step == 100
    assert set(run.metrics["source"]) == {"checkpoint-100/trainer_state.json"}


def test_json_list_of_log_dicts(tmp_path):
    rows = [grpo_v017_row(s, 0.5) for s in (5, 10)] + [{"train_runtime": 9.0, "epoch": 1.0, "step": 10}]
    (tmp_path / "step_logs.json").write_text(json.dumps(rows), encoding="utf-8")
    run = load_run(tmp_path)
    assert run.sources[0].format == "hf_log_list"
    assert run.series("reward_mean").index.tolist() == [5, 10]


def test_not_a_trainer_state(tmp_path):
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"hello": 1}), encoding="utf-8")
    with pytest.raises(UnreadableSourceError, match="no `log_history`"):
        READER.read(path)


@pytest.mark.parametrize("ending", ["", "\n", "  \n\n"])
def test_a_complete_list_is_not_called_incomplete_whatever_follows_its_bracket(tmp_path, ending):
    rows = [grpo_v017_row(s, 0.5) for s in (5, 10, 15)]
    (tmp_path / "step_logs.json").write_text(json.dumps(rows) + ending, encoding="utf-8")
    state = {"global_step": 15, "max_steps": 30, "log_history": rows}
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "trainer_state.json").write_text(json.dumps(state) + ending, encoding="utf-8")
    for path in (tmp_path / "step_logs.json", tmp_path / "ckpt" / "trainer_state.json"):
        data = READER.read(path)
        assert data.warnings == [], path
        assert sorted(set(data.frame["step"])) == [5, 10, 15]
    assert READER.read(tmp_path / "ckpt" / "trainer_state.json").facts["planned_total_steps"][0] == 30
