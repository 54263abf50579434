"""Whatever lands in a run directory, `inspect` answers with a report or a one-line error: never a traceback."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assessor.cli import main
from tests.conftest import EXAMPLES

# What may not reach a terminal: C0 controls but tab and newline, DEL, C1. (JSON output escapes them.)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

NAMES = ["trainer_state.json", "log.jsonl", "metrics.csv", "events.out.tfevents.1.host.1.0", "train.log",
         "nvidia-smi.csv", "step_logs.json", "out.txt", "history.json", "train.ipynb"]

VALID = {
    "trainer_state.json": json.dumps({"log_history": [{"step": 1, "reward": 0.5}, {"step": 2, "reward": 0.6}]}),
    "log.jsonl": '{"step": 1, "reward": 0.5}\n{"step": 2, "reward": 0.6}\n',
    "metrics.csv": "step,reward\n1,0.5\n2,0.6\n",
    "train.log": "step:1 - critic/score/mean:0.5\nstep:2 - critic/score/mean:0.6\n",
    "nvidia-smi.csv": "timestamp, utilization.gpu [%]\n2024/01/01 00:00:00.000, 50 %\n",
    "step_logs.json": json.dumps([{"step": 1, "loss": 0.1}]),
    "out.txt": "[Step 1/10] loss=0.1 reward_avg=0.5\n",
    "history.json": json.dumps({"history": [{"grpo_step": 1, "reward": 0.5}, {"grpo_step": 2, "reward": 0.6}]}),
    "train.ipynb": json.dumps({"cells": [{"cell_type": "code", "outputs": [{
        "output_type": "display_data",
        "data": {"text/html": "<table><tr><th>Step</th><th>reward</th></tr><tr><td>1</td><td>0.5</td></tr></table>"},
    }]}]}),
}
# Written to attack the tool (issue 15): nesting far past any parser's recursion limit, terminal escapes and
# markup in keys, NUL bytes, newlines in keys. Each is tried in every file name above.
_DEEP = "[" * 50_000 + "]" * 50_000
HOSTILE = {  # drawn by name: hypothesis would print 100 kB examples in full
    "deep list": _DEEP,
    "deep log entry": '{"log_history": [{"step": 1, "reward": 0.5}, ' + _DEEP + "]}",
    "deep record": '{"step": 1, "reward": 0.5}\n' + '{"a": ' * 50_000 + "1" + "}" * 50_000 + "\n",
    "deep yaml": "a: " + "[" * 5_000 + "]" * 5_000,
    "escapes in a key": json.dumps(
        {"step": 1, "reward\x1b[2J\x1b]8;;http://x/\x07x\x1b]8;;\x07[link=http://x/]y[/link]": 0.5}) + "\n",
    "newline and NUL in keys": json.dumps({"step": 1, "reward\nError: forged": 0.5, "kl\x00": 0.1}) + "\n",
    "escapes in a header": "step,reward\x1b[31m,\x9bkl\n1,0.5,0.1\n2,0.6,0.1\n",
}
# Deep records in line-oriented logs: each is a bad record, skipped and counted, never an internal error.
DEEP_RECORDS = {
    ("log.jsonl", "deep list"), ("log.jsonl", "deep log entry"), ("log.jsonl", "deep record"),
    ("train.log", "deep record"), ("step_logs.json", "deep record"), ("out.txt", "deep record"),
    ("history.json", "deep record"), ("metrics.csv", "deep record"), ("nvidia-smi.csv", "deep record"),
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=st.dictionaries(
        st.sampled_from(NAMES),
        st.one_of(
            st.binary(max_size=300),
            st.text(max_size=300),
            # a valid file cut at a random point, as a run that is still writing leaves it
            st.sampled_from(sorted(VALID)).flatmap(
                lambda name: st.integers(0, len(VALID[name])).map(lambda cut: VALID[name][:cut].encode())
            ),
            st.sampled_from(sorted(HOSTILE)).map(lambda name: ("hostile", name)),
        ),
        max_size=4,
    ),
    # entries that cannot be looked at: a symlink loop, a link to itself, a dangling link
    links=st.lists(st.sampled_from(["loop", "self", "dangling"]), max_size=2, unique=True),
    fmt=st.sampled_from(["json", "text"]),
)
def test_random_and_truncated_files_never_crash(tmp_path_factory, files, links, fmt, capsys):
    run = tmp_path_factory.mktemp("run")
    for name, content in files.items():
        if isinstance(content, tuple):
            content = HOSTILE[content[1]]
        data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
        (run / name).write_bytes(data)
    if "loop" in links:
        (run / "a.jsonl").symlink_to(run / "b.jsonl")
        (run / "b.jsonl").symlink_to(run / "a.jsonl")
    if "self" in links:
        (run / "self.log").symlink_to("self.log")
    if "dangling" in links:
        (run / "gone.csv").symlink_to(run / "missing" / "gone.csv")
    code = main(["inspect", str(run), "--format", fmt])
    out, err = capsys.readouterr()
    assert code in (0, 2), err
    assert not _CONTROL.search(out + err), "a control character reached the terminal"
    if code == 2:
        assert out == "" and err.startswith("Error: ") and err.count("\n") == 1
    elif fmt == "json":
        json.loads(out)


@pytest.mark.parametrize(("name", "case"), sorted(DEEP_RECORDS))
def test_deep_records_in_jsonl_and_csv_are_skipped_not_fatal(tmp_path, capsys, name, case):
    (tmp_path / name).write_text(HOSTILE[case], encoding="utf-8")
    assert main(["inspect", str(tmp_path), "--format", "json"]) in (0, 2)
    assert "internal error" not in capsys.readouterr().err


def test_truncated_event_file_in_a_real_layout(tmp_path, capsys):
    source = next((EXAMPLES / "trl-grpo-live" / "runs").rglob("events.out.tfevents.*"))
    target = tmp_path / "runs" / "x"
    target.mkdir(parents=True)
    data = source.read_bytes()
    (target / source.name).write_bytes(data[: len(data) - 37])
    assert main(["inspect", str(tmp_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert any("incomplete" in w for w in report["warnings"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_unreadable_file_is_named(tmp_path, capsys):
    path = tmp_path / "log.jsonl"
    path.write_text('{"step": 1, "reward": 0.5}\n', encoding="utf-8")
    path.chmod(0)
    assert main(["inspect", str(tmp_path)]) == 2
    assert "log.jsonl" in capsys.readouterr().err


def test_a_single_file_can_be_inspected(capsys):
    log = EXAMPLES / "verl-grpo-gsm8k" / "train.log"
    assert main(["inspect", str(log), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["last_step"] == 240
    assert [s["path"] for s in report["sources"]] == ["train.log"]


def test_symlink_loop_does_not_hang(tmp_path, capsys):
    (tmp_path / "log.jsonl").write_text('{"step": 1, "reward": 0.5}\n', encoding="utf-8")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    assert main(["inspect", str(tmp_path)]) == 0
    assert isinstance(Path(tmp_path).resolve(), Path)
