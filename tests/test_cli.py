from __future__ import annotations

import json

import pytest

from assessor.cli import main
from tests.conftest import EXAMPLES


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_inspect_json_follows_the_design_contract(capsys):
    code, out, err = run_cli(capsys, "inspect", str(EXAMPLES / "trl-grpo-live"), "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert {"path", "framework", "algorithm", "last_step", "sources", "metrics", "checkpoints", "gpu", "facts",
            "warnings"} <= set(report)
    assert (report["framework"], report["algorithm"], report["last_step"]) == ("trl", "grpo", 520)
    assert report["checkpoints"] == [{"step": s, "path": f"checkpoint-{s}"} for s in (300, 400, 500)]
    reward = report["metrics"]["reward_mean"]
    assert reward["source_key"] == "train/reward"  # the event file runs ahead of the newest checkpoint
    assert (reward["points"], reward["first_step"], reward["last_step"]) == (52, 10, 520)
    assert report["gpu"]["devices"] == 2
    facts = report["facts"]
    assert (facts["beta"], facts["num_generations"], facts["max_completion_length"]) == (0.04, 8, 1024)
    assert facts["provenance"]["beta"] == "checkpoint-500/training_args.bin: beta"  # the newest checkpoint's
    assert all(s["path"] and not s["path"].startswith("/") for s in report["sources"])


def test_inspect_text_names_sources_metrics_and_checkpoints(capsys):
    code, out, _ = run_cli(capsys, "inspect", str(EXAMPLES / "verl-grpo-gsm8k"))
    assert code == 0
    assert "train.log" in out
    assert "critic/score/mean" in out
    assert "global_step_200" in out
    assert "time_generation_s" in out


def test_missing_run_is_a_one_line_error_with_exit_2(capsys, tmp_path):
    code, out, err = run_cli(capsys, "inspect", str(tmp_path / "nope"))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("Error: ") and "no such file or directory" in err


def test_directory_without_logs_is_a_one_line_error(capsys, tmp_path):
    (tmp_path / "notes.md").write_text("hello", encoding="utf-8")
    code, _, err = run_cli(capsys, "inspect", str(tmp_path))
    assert code == 2
    assert err.count("\n") == 1 and "no training logs found" in err


def test_unreadable_json_names_the_file_and_the_fix(capsys, tmp_path):
    (tmp_path / "trainer_state.json").write_text("{not json", encoding="utf-8")
    code, _, err = run_cli(capsys, "inspect", str(tmp_path))
    assert code == 2
    assert "trainer_state.json: not valid JSON" in err and "try again" in err and err.count("\n") == 1


def test_bad_option_is_a_usage_error(capsys):
    code, _, err = run_cli(capsys, "inspect", str(EXAMPLES / "trl-grpo-live"), "--format", "xml")
    assert code == 2
    assert "xml" in err
