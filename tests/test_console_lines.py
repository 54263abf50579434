"""The general metric line and text progress tables: console output as hand-written loops print it."""

from __future__ import annotations

from pathlib import Path

import pytest

from assessor import load_run
from assessor.errors import UnreadableSourceError
from assessor.ingest.console import READER
from assessor.ingest.console.lines import parse_line


def write(tmp_path: Path, lines: list[str], name: str = "train.log") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "step", "values"),
    [
        # MiniMind's GRPO trainer
        ("Epoch:[1/1](12/500), Reward: 0.38, KL_ref: 0.0004, Actor Loss: 0.0000, Avg Len: 129",
         12, {"Reward": 0.38, "KL_ref": 0.0004, "Actor Loss": 0.0, "Avg Len": 129.0}),
        # a pipe-separated loop (PyTorch Monarch actors)
        ("step:12 | policy_loss=-0.0005 | mean_reward=0.14", 12, {"policy_loss": -0.0005, "mean_reward": 0.14}),
        # a logger prefix with a date and a clock time, key=value pairs separated by spaces
        ("2026-01-01 12:00:00 INFO train: step=12 loss=0.031 reward=0.41 kl=0.002",
         12, {"loss": 0.031, "reward": 0.41, "kl": 0.002}),
        ("[2026-01-01 12:00:00,123][__main__][INFO] - Step 40/200 - loss: 0.52 - reward: 0.61 - lr: 1e-06",
         40, {"loss": 0.52, "reward": 0.61, "lr": 1e-06}),
        ("INFO:root:Iteration 7: Mean Reward: 0.25, Response Length: 311.5", 7,
         {"Mean Reward": 0.25, "Response Length": 311.5}),
        ("iter 300 | loss 0.1 | reward=0.5 | kl=np.float64(0.01)", 300, {"reward": 0.5, "kl": 0.01}),
        ("global_step=15 reward_mean=0.7 entropy=1.2", 15, {"reward_mean": 0.7, "entropy": 1.2}),
        ("[12:00:01] grpo_step=3, reward: 0.2, step_time: 3.5s, gpu_mem: 71%", 3,
         {"reward": 0.2, "step_time": 3.5, "gpu_mem": 71.0}),
    ],
)
def test_metric_lines_as_tools_print_them(line, step, values):
    record = parse_line(line)
    assert record is not None
    assert (record.step, record.values) == (step, pytest.approx(values))


@pytest.mark.parametrize(
    "line",
    [
        "GRPO Iteration:  0 Epoch:  0 Microbatch:  12 / 128",  # counters only
        "[MEM cuda:1][Before grpo microbatch train step] alloc=21.88 GB  reserved=23.54 GB",  # no step number
        "Step 1: Let x=3 and then compute y",  # prose
        "step 5 finished at 2026-01-01 12:00:00, date=2026-01-02",  # dates and times are not numbers
        "step=3 model=Qwen/Qwen2.5-0.5B dtype=bfloat16 seed=0",  # a settings line: mostly words
        "Epoch 3, loss: 0.4",  # no step marker
    ],
)
def test_lines_that_are_not_metric_lines(line):
    assert parse_line(line) is None


def test_minimind_log_reads_at_its_own_steps_with_names_normalised(tmp_path):
    lines = ["nohup: ignoring input", "Model Params: 30.03M", "Trainable Params: 30.025M"]
    lines += [
        f"Epoch:[1/1]({s}/500), Reward: {0.3 + s / 1000:.4f}, Fmt: 1.00, Correct: 0.00, KL_ref: 0.0004, "
        f"Adv Std: 0.9248, Actor Loss: 0.0000, Avg Len: {120 + s}, LR: 0.00000100"
        for s in range(1, 31)
    ]
    run = load_run(write(tmp_path, lines, "r1_main.log"))
    assert run.sources[0].format == "console_lines"
    assert any("general metric-line reader" in n for n in run.sources[0].notes)
    assert run.last_step == 30 and run.facts.planned_total_steps == 500
    for metric in ("reward_mean", "kl", "response_length_mean", "pg_loss", "advantage_std", "lr"):
        assert run.series(metric).index.tolist() == list(range(1, 31)), metric
    assert "Model Params" not in set(run.metrics["source_key"].astype(str))


def test_a_within_epoch_counter_continues_across_epochs(tmp_path):
    lines = [f"Epoch:[{e}/2]({i}/3), Reward: 0.{e}{i}, Loss: 0.5" for e in (1, 2) for i in (1, 2, 3)]
    data = READER.read(write(tmp_path, lines))
    steps = sorted(set(data.frame["step"].tolist()))
    assert steps == [1, 2, 3, 4, 5, 6]
    assert data.facts["planned_total_steps"][0] == 6


def test_fixed_dialects_still_read_their_lines(tmp_path):
    data = READER.read(write(tmp_path, [f"step:{s} - critic/score/mean:0.{s} - actor/entropy:1.0" for s in (1, 2)]))
    assert data.format == "console_verl"


def test_text_progress_table_tab_separated_with_comments(tmp_path):
    lines = ["# re-typed from the notebook", "Step\tTraining Loss\treward\treward_std\tcompletion_length\tkl"]
    lines += [f"{s}\t0.000000\t0.{s}\t0.05\t200.0\t0.00000{s}" for s in range(1, 6)]
    data = READER.read(write(tmp_path, lines, "raw-output.txt"))
    assert data.format == "console_table"
    run = load_run(tmp_path)
    assert run.series("reward_mean").index.tolist() == [1, 2, 3, 4, 5]
    assert run.has("loss") and run.has("response_length_mean") and run.has("kl")


def test_text_progress_table_pipes_and_pandas_alignment(tmp_path):
    pipes = ["| Step | Training Loss | reward | rewards / accuracy_reward |", "|---|---|---|---|"]
    pipes += [f"| {s * 10} | 0.01 | 0.{s} | 0.{s} |" for s in range(1, 4)]
    run = load_run(write(tmp_path, pipes, "table.txt"))
    assert run.series("reward_component/accuracy_reward_mean").index.tolist() == [10, 20, 30]
    aligned = ["    Step  Training Loss  Validation Loss    reward"]
    aligned += [f"{i}   {s}       0.500000           No log  0.{s}" for i, s in enumerate((5, 10, 15))]
    aligned += ["3     20       0.400000         0.450000  0.9"]
    other = tmp_path / "pandas"
    other.mkdir()
    run = load_run(write(other, aligned, "table.txt"))
    assert run.series("reward_mean").index.tolist() == [5, 10, 15, 20]
    assert run.series("loss", "eval").to_dict() == {20: 0.45}  # "No log" is not logged, not a value


def test_a_log_with_no_metrics_still_names_what_it_understands(tmp_path):
    with pytest.raises(UnreadableSourceError, match="any line with a step marker"):
        READER.read(write(tmp_path, ["Loading model...", "Done."]))
