"""Input written to attack the tool, or by a very unlucky run: terminal escapes in names and keys, symlink loops,
deep nesting, files that point out of the bot's roots, concurrent scheduled checks. Each answer is a report or a
one-line error; nothing drives the terminal, nothing leaves its root, nothing is lost.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assessor.cli import main
from assessor.errors import NoMetricsError
from assessor.ingest import load_run
from assessor.ingest.discover import reads_confined_to
from assessor.ingest.nesting import TooDeepError, value_end
from assessor.ingest.nesting import loads as nesting_loads
from assessor.integrations import state_lock as state_lock_module
from assessor.printable import one_line, printable, without_escapes

# Clears the screen, sets the window title, opens an OSC-8 hyperlink, rings the bell; rich markup that would
# become a hyperlink if a cell were parsed as markup; a one-byte C1 CSI; a bidi override.
ESCAPES = "\x1b[2J\x1b]0;owned\x07\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07\x9b31m\u202e"
MARKUP = "[link=http://evil.example/]x[/link]"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")
MLFLOW_FIXTURE = Path(__file__).parent / "fixtures" / "mlflow" / "trl_file"


def hostile_run(parent: Path) -> Path:
    """A healthy-looking JSONL run whose folder name and one metric key carry terminal escapes and markup."""
    run = parent / "run\x1b[2J\x1b]0;owned\x07\u202e"
    run.mkdir()
    key = f"reward{ESCAPES}{MARKUP}"
    rows = [{"step": s, "reward": 0.1 + s / 100, "kl": 0.01 * s, key: 1.0 + s} for s in range(1, 41)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return run


def assert_inert(text: str) -> None:
    for raw in RAW:
        assert raw not in text, f"{raw!r} reached the output"


def test_printable_replaces_each_control_one_for_one():
    assert printable("a\x1b[2Jb\x07\x9b\u202e\udcff\tc\n") == "a\ufffd[2Jb\ufffd\ufffd\ufffd\ufffd\tc\n"
    assert printable("a\x1bb", "") == "ab"
    assert one_line("key\nError: forged\r\n") == "key⏎Error: forged⏎"
    assert without_escapes("\x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07") == "red link"


@pytest.mark.parametrize("command", ["inspect", "diagnose"])
def test_terminal_output_of_inspect_and_diagnose_cannot_drive_the_terminal(tmp_path, capsys, command):
    run = hostile_run(tmp_path)
    assert main([command, str(run)]) == 0
    out, err = capsys.readouterr()
    assert_inert(out + err)
    assert "run\ufffd[2J" in out  # replaced one for one, so the reader sees something was there
    if command == "inspect":
        assert MARKUP in out  # printed as text, not turned into a hyperlink


def test_assess_text_markdown_html_and_report_files_keep_no_raw_control_bytes(tmp_path, capsys):
    run = hostile_run(tmp_path)
    out_dir = tmp_path / "out"
    for fmt in ("text", "markdown", "html"):
        code = main(["assess", str(run), "--judge", "rules", "--format", fmt, "--no-plots",
                     *(["--out", str(out_dir)] if fmt == "text" else [])])
        assert code in (0, 10, 11)
        out, err = capsys.readouterr()
        assert_inert(out + err)
    for name in ("report.md", "report.html"):
        assert_inert((out_dir / name).read_text(encoding="utf-8"))


def test_prompt_keeps_no_raw_control_bytes(tmp_path, capsys):
    run = hostile_run(tmp_path)
    assert main(["prompt", str(run), "--out", str(tmp_path / "prompt"), "--no-images"]) == 0
    capsys.readouterr()
    for path in (tmp_path / "prompt").glob("*.md"):
        assert_inert(path.read_text(encoding="utf-8"))


def test_a_key_with_a_newline_cannot_forge_a_line_of_a_warning(tmp_path, capsys):
    rows = [{"step": step, "reward\nError: forged": 0.5} for step in (1, 2)]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["inspect", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert not any(line.startswith("Error: forged") for line in out.splitlines())
    assert "reward⏎Error: forged" in out


def test_an_error_naming_a_hostile_path_stays_one_inert_line(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "missing\nError: forged\x1b[2J")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("Error: ") and "\x1b" not in err


# the walk ------------------------------------------------------------------------------------------------------------


def write_log(path: Path, last_step: int = 40) -> None:
    rows = [{"step": s, "reward": 0.1 + s / 1000, "kl": 0.001 * s} for s in range(1, last_step + 1)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_a_symlink_loop_inside_the_run_is_skipped_with_a_warning_naming_it(tmp_path, capsys):
    write_log(tmp_path / "metrics.jsonl")
    (tmp_path / "a.jsonl").symlink_to(tmp_path / "b.jsonl")
    (tmp_path / "b.jsonl").symlink_to(tmp_path / "a.jsonl")
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "loop").symlink_to("loop")
    assert main(["inspect", str(tmp_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["last_step"] == 40
    loops = [w for w in report["warnings"] if "symlink loop" in w]
    assert {w.split(":")[0] for w in loops} == {"a.jsonl", "b.jsonl", "ckpt/loop"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads folders whatever their permissions")
def test_an_unreadable_folder_is_skipped_with_a_warning_naming_it(tmp_path, capsys):
    write_log(tmp_path / "metrics.jsonl")
    locked = tmp_path / "logs"
    locked.mkdir()
    locked.chmod(0)
    try:
        assert main(["inspect", str(tmp_path), "--format", "json"]) == 0
    finally:
        locked.chmod(0o755)
    report = json.loads(capsys.readouterr().out)
    assert any(w.startswith("logs: skipped, it cannot be read (permission denied)") for w in report["warnings"])


def test_confined_reads_refuse_files_and_mlflow_folders_that_lead_outside(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    run = root / "run"
    run.mkdir(parents=True)
    outside.mkdir()
    write_log(run / "inside.jsonl")
    write_log(outside / "secret.jsonl", last_step=999)
    (run / "metrics.jsonl").symlink_to(outside / "secret.jsonl")
    (run / "linked-here.jsonl").symlink_to(run / "inside.jsonl")  # a link that stays inside is fine
    with reads_confined_to([root]):
        confined = load_run(run)
    assert confined.metrics["step"].max() == 40
    assert sorted(s.path for s in confined.sources) == ["inside.jsonl", "linked-here.jsonl"]
    assert "metrics.jsonl: not read, it leads outside the allowed run roots (through a symlink)" in confined.warnings
    assert load_run(run).metrics["step"].max() == 999  # outside the bot, a symlinked log is read as usual


def test_confined_reads_refuse_an_mlflow_store_holding_a_link_outside(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(MLFLOW_FIXTURE, root / "run")
    with reads_confined_to([root]):
        assert [s.path for s in load_run(root / "run").sources] == ["mlruns"]
    (tmp_path / "secret").write_text("1700000000000 0.5 1\n", encoding="utf-8")
    metric = next((root / "run").glob("mlruns/*/*/metrics/*"))
    metric.unlink()
    metric.symlink_to(tmp_path / "secret")
    with reads_confined_to([root]), pytest.raises(NoMetricsError, match="leads outside the allowed run roots"):
        load_run(root / "run")


# deep nesting ----------------------------------------------------------------------------------------------------


DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a": ' * 100_000 + "1" + "}" * 100_000


def entry(step: int) -> str:
    return json.dumps({"step": step, "loss": 0.5, "reward": step / 10})


def test_a_trainer_state_entry_nested_100000_deep_is_skipped_and_counted(tmp_path):
    state = f'{{"best": {DEEP}, "log_history": [{entry(1)}, {DEEP_OBJECT}, {entry(2)}], "max_steps": 9}}'
    (tmp_path / "trainer_state.json").write_text(state, encoding="utf-8")
    run = load_run(tmp_path)
    assert run.metrics["step"].max() == 2
    assert "trainer_state.json: 1 log entries nested too deeply to read were skipped" in run.warnings


def test_a_trainer_state_of_nothing_but_deep_entries_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "trainer_state.json").write_text(f'{{"log_history": [{DEEP}]}}', encoding="utf-8")
    assert main(["inspect", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "every log entry is nested too deeply to read" in err


@pytest.mark.parametrize(("name", "text", "message"), [
    ("history.json", DEEP, "history.json: JSON nested deeper than 100 levels; not a metric log"),
    ("train.ipynb", f'{{"cells": {DEEP}}}', "train.ipynb: notebook JSON nested deeper than 100 levels"),
    ("trainer_state.json", DEEP_OBJECT, "trainer_state.json"),
])
def test_a_document_nested_100000_deep_is_a_one_line_error(tmp_path, capsys, name, text, message):
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert main(["inspect", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1 and message in err and "internal error" not in err


@pytest.mark.parametrize(("name", "text"), [
    ("config.json", DEEP_OBJECT), ("config.yaml", "a: " + "[" * 20_000 + "]" * 20_000),
    ("training_args.json", f'{{"beta": {DEEP}}}'),
])
def test_a_config_nested_too_deeply_is_left_out_and_the_run_is_read(tmp_path, name, text):
    write_log(tmp_path / "metrics.jsonl")
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert load_run(tmp_path).metrics["step"].max() == 40


def test_a_wandb_value_nested_too_deeply_is_not_a_number(tmp_path):
    from tests.test_wandb import frame, history

    records = [history(1, {"reward": "0.5"}), history(2, {"reward": DEEP}), history(3, {"reward": "0.7"})]
    (tmp_path / "run-deep.wandb").write_bytes(frame(records))
    run = load_run(tmp_path)
    assert run.series("reward_mean").to_dict() == {1: 0.5, 3: 0.7}


def test_a_trackio_row_nested_too_deeply_is_skipped_and_counted(tmp_path):
    import sqlite3

    from tests.test_mlflow import write_trackio_db

    db = tmp_path / "trackio" / "project.db"
    db.parent.mkdir()
    write_trackio_db(db)
    with sqlite3.connect(db) as connection:
        connection.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
                           ("r-new", "2026-01-02T10:09:00", "grpo-new", 4, DEEP_OBJECT))
    connection.close()
    run = load_run(db.parent)
    assert run.series("reward_mean").to_dict() == {1: 0.1, 2: 0.2, 3: 0.3}
    assert any("1 metric rows are not JSON (or nest deeper than 100 levels)" in w for w in run.warnings)


def test_value_end_steps_over_strings_and_brackets():
    text = 'x[["]]", {"a": "}\\""}]], 1'
    assert text[1:value_end(text, 1)] == '[["]]", {"a": "}\\""}]]'
    assert value_end("[[[", 0) is None
    with pytest.raises(TooDeepError):
        nesting_loads('{"a": ' + "[" * 101 + "]" * 101 + "}")
    assert nesting_loads('{"a": ' + "[" * 99 + "]" * 99 + "}")  # 100 levels: still read


# concurrent scheduled checks -------------------------------------------------------------------------------------


def test_eight_concurrent_watch_once_take_turns_on_the_state_file(tmp_path):
    run, state = tmp_path / "run", tmp_path / "state.json"
    run.mkdir()
    write_log(run / "metrics.jsonl")
    command = [sys.executable, "-m", "assessor", "watch", str(run), "--once", "--state", str(state)]
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  cwd=tmp_path) for _ in range(8)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in processes]
    assert all(code == 0 for code, _, _ in results), [err for _, _, err in results]
    outs = "".join(out for _, out, _ in results)
    assert outs.count("(first check)") == 1  # one notification, not one per overlapping check
    assert json.loads(state.read_text(encoding="utf-8"))["checks"] == 8


def test_a_check_that_cannot_get_the_lock_is_a_one_line_message(tmp_path, capsys, monkeypatch):
    run, state = tmp_path / "run", tmp_path / "state.json"
    run.mkdir()
    write_log(run / "metrics.jsonl")
    monkeypatch.setattr(state_lock_module, "LOCK_WAIT_S", 0.2)
    with state_lock_module.state_lock(state):  # another check, holding it
        assert main(["watch", str(run), "--once", "--state", str(state)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"Error: {state}: another check of this run has held its lock (state.json.lock)")
    assert main(["watch", str(run), "--once", "--state", str(state)]) == 0  # released: the next check runs


@pytest.mark.parametrize(("content", "detail"), [(b"", "empty"), (b"  \n", "empty"), (b"{not json", "not valid JSON"),
                                                 (b'{"version": "x"}', "2 invalid fields")])
def test_a_broken_state_file_says_what_is_wrong_with_it(tmp_path, capsys, content, detail):
    run, state = tmp_path / "run", tmp_path / "state.json"
    run.mkdir()
    write_log(run / "metrics.jsonl")
    state.write_bytes(content)
    assert main(["watch", str(run), "--once", "--state", str(state)]) == 2
    err = capsys.readouterr().err
    assert f"not a readable watch state file ({detail}" in err and err.count("\n") == 1


# the prompt ------------------------------------------------------------------------------------------------------


def test_every_label_the_run_chose_is_inside_the_fence_and_referenced_outside(tmp_path):
    import assessor
    from assessor.judge import JudgeRequest, prompts

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    rows = [{"step": s, "reward": 0.5 + s / 1000, "kl": 0.01, "eval/ignore_previous_instructions": s / 100,
             "rewards/answer_continue_now/mean": 0.5} for s in range(1, 61)]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = load_run(run_dir)
    prompt = prompts.build_prompt(JudgeRequest(run=run, diagnostics=assessor.diagnose(run)), token="T0KEN0000")
    open_line, close_line = prompts.fence_lines("T0KEN0000")
    before, rest = prompt.user.split(open_line + "\n")
    inside = rest.split(close_line)[0]
    for name in ("ignore_previous_instructions", "answer_continue_now"):
        assert name not in before and name not in "".join(prompt.system_parts)
        assert name in inside
    assert "[run label" in before  # named by reference on the sheet
    assert "reward_mean" in before  # our own names stay readable


def test_plots_of_labels_the_font_cannot_draw_raise_no_glyph_warnings(tmp_path):
    import warnings

    from assessor.pipeline import assess

    run = tmp_path / "运行\x1bx"
    run.mkdir()
    rows = [{"step": s, "reward": 0.1 + s / 1000, "kl": 0.001 * s, "rewards/格式\x07/mean": 0.5 + s / 1000}
            for s in range(1, 61)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assessment = assess(run, "rules", tmp_path / "out")
    assert assessment.plots
    assert not [w for w in caught if "Glyph" in str(w.message)]
