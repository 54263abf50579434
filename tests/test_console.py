from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import SourceData
from assessor.ingest.console import READER
from assessor.ingest.normalize import normalize_source

# ---------------------------------------------------------------------------------------------- helpers
CLEAR = "\r" + " " * 50 + "\r"


def bar(n: int, total: int, desc: str = "") -> str:
    """One tqdm redraw, as tqdm writes it (no trailing newline)."""
    filled = "█" * (10 * n // total)
    return f"\r{desc}{100 * n // total:3d}%|{filled:<10}| {n}/{total} [00:{n % 60:02d}<00:10,  1.00s/it]"


def write(tmp_path: Path, text: str, name: str = "train.log") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def series(data: SourceData, key: str) -> pd.Series:
    rows = data.frame[data.frame["key"] == key]
    return pd.Series(rows["value"].to_numpy(), index=rows["step"].to_numpy(), dtype="float64")


def steps_of(data: SourceData, key: str) -> list[int]:
    return [int(s) for s in series(data, key).index]


def hf_trainer_log(total: int, log_every: int, *, buffered: bool, eval_every: int | None = None,
                   eval_batches: int = 30) -> str:
    """A console log shaped like an HF/TRL run: vLLM bars every step, the trainer bar, log dicts written
    through `training_bar.write` (clear, print, redraw), an eval bar, and the final summary dict.

    With `buffered`, stdout (the dicts) only reaches the file at the end, after all of stderr (the bars).
    """
    out = ["***** Running training *****\n", f"  Total optimization steps = {total}\n", bar(0, total)]
    stdout: list[str] = []

    def log(text: str, step: int, eval_bar: bool = False) -> None:
        out.append(CLEAR)
        (stdout if buffered else out).append(text + "\n")
        out.append(bar(step, total))
        if eval_bar:
            out.append(bar(eval_batches, eval_batches))

    for step in range(1, total + 1):
        out += ["\n", bar(0, 8, "Processed prompts: "), bar(8, 8, "Processed prompts: "), "\n"]
        out.append(bar(step, total))
        if step % log_every == 0:
            log(f"{{'loss': {step / 1000}, 'grad_norm': 0.5, 'learning_rate': {step * 1e-6}, "
                f"'reward': '{step / total:.4f}', 'epoch': {step / 100}}}", step)
        if eval_every and step % eval_every == 0:
            out.append("\n")
            out += [bar(i, eval_batches) for i in range(eval_batches + 1)]
            log(f"{{'eval_loss': {step / 10}, 'eval_runtime': 1.5, 'epoch': {step / 100}}}", step, eval_bar=True)
    log(f"{{'train_runtime': 123.4, 'train_samples_per_second': 1.5, 'train_loss': 0.01, 'epoch': {total / 100}}}",
        total)
    out.append("\n")
    return "".join(out + stdout)


# ---------------------------------------------------------------------------------------------- sniff
@pytest.mark.parametrize(("name", "head", "expected"), [
    ("train.log", b"step:1 - a:1\n", True),
    ("nohup.out", b"hello\r  5%|", True),
    ("job.err", b"Traceback\n", True),
    ("run.txt", "█ 5/200".encode()[:3], True),  # a multi-byte character cut by the head limit
    ("train.log.1", b"text\n", True),
    ("metrics.csv", b"step,loss\n", False),
    ("events.log", b"\x00\x01\x02binary", False),
    ("empty.log", b"", False),
    ("model.bin", b"text", False),
])
def test_sniff(name: str, head: bytes, expected: bool) -> None:
    assert READER.sniff(Path(name), head) is expected


# ---------------------------------------------------------------------------------------------- TRL dicts
@pytest.mark.parametrize("buffered", [False, True])
def test_trl_steps_come_from_the_trainer_bar_among_vllm_and_eval_bars(tmp_path: Path, buffered: bool) -> None:
    # The eval bar has more updates than the trainer bar (4 evals x 31) and the vLLM bars too (20 x 2):
    # the trainer bar must still be the one chosen.
    path = write(tmp_path, hf_trainer_log(20, 5, buffered=buffered, eval_every=5))
    data = READER.read(path)
    assert data.format == "console_trl"
    assert steps_of(data, "loss") == [5, 10, 15, 20]
    assert steps_of(data, "eval_loss") == [5, 10, 15, 20]
    assert series(data, "reward").tolist() == [0.25, 0.5, 0.75, 1.0]  # string values become numbers
    assert "eval_runtime" in set(data.frame["key"])
    assert steps_of(data, "epoch") == [5, 10, 15, 20]  # eval dicts do not log a second epoch per step
    assert "train_runtime" not in set(data.frame["key"])
    assert data.facts["train_runtime"][0] == 123.4
    assert data.facts["planned_total_steps"][0] == 20
    assert "progress bar" in data.facts["planned_total_steps"][1]
    assert data.facts["framework"][0] == "trl"
    assert data.facts["logging_interval"][0] == 5
    assert any("trainer progress bar (n/20)" in n for n in data.notes)
    assert data.warnings == []


def test_trl_steps_come_from_the_trainer_bar_when_no_dict_repeats_its_position(tmp_path: Path) -> None:
    """holdout30: a TRL console whose dicts do not leave the trainer bar's repeated position (stdout and stderr
    captured apart), beside vLLM's "Processed prompts: 256/256" at every step: the vLLM bar, finishing on every
    update, was taken for the trainer's (its repeated 256/256 look like log events), so the run was planned for 256
    steps and its dicts spaced 1..90 instead of 10..900."""
    out = []
    for step in range(1, 61):
        out += [bar(256, 256, "Processed prompts: "), bar(step, 60)]
        if step % 10 == 0:
            out.append(f"\n{{'loss': {step / 1000}, 'reward': {step / 60:.4f}, 'epoch': {step / 100}}}\n")
    data = READER.read(write(tmp_path, "".join(out)))
    assert steps_of(data, "loss") == [10, 20, 30, 40, 50, 60]
    assert data.facts["planned_total_steps"][0] == 60


def test_trl_every_step_buffered_until_the_end(tmp_path: Path) -> None:
    path = write(tmp_path, hf_trainer_log(50, 1, buffered=True))
    data = READER.read(path)
    assert steps_of(data, "loss") == list(range(1, 51))
    assert series(data, "learning_rate")[37] == pytest.approx(37e-6)  # each dict lands on its own step


def test_trl_dict_after_a_bar_on_the_same_line_and_ansi_codes(tmp_path: Path) -> None:
    text = (
        bar(0, 4) + bar(1, 4) + bar(2, 4) + CLEAR
        + "\x1b[32m{'loss': 0.5, 'learning_rate': 1e-05, 'epoch': 0.5}\x1b[0m\n"
        + bar(2, 4) + bar(3, 4) + bar(4, 4) + CLEAR + bar(4, 4)
        + "{'loss': 0.25, 'learning_rate': 5e-06, 'epoch': 1.0}\n"
    )
    data = READER.read(write(tmp_path, text))
    assert series(data, "loss").to_dict() == {2: 0.5, 4: 0.25}


def test_trl_dict_split_by_a_bar_redraw_is_put_back_together(tmp_path: Path) -> None:
    # A block-buffered stdout flush can stop mid-dict; stderr's bar lands in between.
    text = (
        bar(0, 4) + bar(1, 4) + bar(2, 4) + CLEAR + bar(2, 4) + bar(3, 4)
        + "{'loss': 0.5, 'grad_no" + bar(4, 4) + "rm': 0.7, 'learning_rate': 1e-05}\n"
        + CLEAR + bar(4, 4) + "\n{'loss': 0.25, 'grad_norm': 0.1, 'learning_rate': 5e-06}\n"
    )
    data = READER.read(write(tmp_path, text))
    assert series(data, "grad_norm").to_dict() == {2: 0.7, 4: 0.1}
    assert data.warnings == []


def test_trl_values_nan_inf_numpy_and_tensor_wrappers(tmp_path: Path) -> None:
    text = (
        "{'loss': nan, 'grad_norm': inf, 'learning_rate': 1e-05, 'epoch': 0.1}\n"
        "{'loss': np.float64(0.5), 'grad_norm': -inf, 'reward': tensor(0.25, device='cuda:0'), 'kl': None}\n"
    )
    data = READER.read(write(tmp_path, text))
    loss = series(data, "loss")
    assert math.isnan(loss[1]) and loss[2] == 0.5
    assert series(data, "grad_norm").tolist() == [math.inf, -math.inf]
    assert series(data, "reward").to_dict() == {2: 0.25}
    assert math.isnan(series(data, "kl")[2])


def test_dicts_that_are_not_metric_logs_are_skipped(tmp_path: Path) -> None:
    text = (
        "The tokenizer has new PAD/BOS/EOS tokens. Updated tokens: {'bos_token_id': None, 'pad_token_id': 1}.\n"
        "{'bos_token_id': None, 'pad_token_id': 151643}\n"
        "{'learning_rate': 1e-05, 'output_dir': 'out', 'max_steps': 3, 'logging_steps': 1}\n"
        "{'n': 1, 'logprobs': 1, 'max_tokens': 512}\n"
        "INFO: metrics {'loss': 9.9}\n"
        "{'loss': 0.3, 'learning_rate': 1e-05, 'epoch': 0.1}\n"
        "{'loss': 0.2, 'learning_rate': 1e-05, 'epoch': 0.2}\n"
    )
    data = READER.read(write(tmp_path, text))
    assert series(data, "loss").to_dict() == {1: 0.3, 2: 0.2}
    assert set(data.frame["key"]) == {"loss", "learning_rate", "epoch"}
    assert data.warnings == []


def test_trl_without_a_bar_uses_max_steps(tmp_path: Path) -> None:
    dicts = "".join(f"{{'loss': {i}, 'reward': 0.5, 'epoch': {i / 10}}}\n" for i in range(1, 41))
    text = "Training with max_steps=200, lr=1e-5\n" + dicts + "{'train_runtime': 5.0, 'train_loss': 0.1}\n"
    data = READER.read(write(tmp_path, text))
    assert steps_of(data, "loss") == list(range(5, 201, 5))
    assert data.notes[0] == "no progress bar; steps inferred as 5..200 (every 5) from 40 logged dicts and max_steps=200"
    assert data.facts["planned_total_steps"][0] == 200


def test_trl_with_only_vllm_bars_falls_back_to_spacing(tmp_path: Path) -> None:
    vllm = "".join(bar(0, 8, "Processed prompts: ") + bar(8, 8, "Processed prompts: ") + "\n" for _ in range(3))
    text = "max_steps: 30\n" + "".join(vllm + f"{{'loss': {i}, 'reward': 0.5}}\n" for i in range(1, 4))
    data = READER.read(write(tmp_path, text))
    assert steps_of(data, "loss") == [10, 20, 30]
    assert data.notes[0].startswith("no usable progress bar; steps inferred as 10..30 (every 10)")


def test_trl_without_a_bar_or_settings_counts_dicts(tmp_path: Path) -> None:
    text = "".join(f"{{'loss': {i}, 'grad_norm': 0.5}}\n" for i in range(1, 4))
    data = READER.read(write(tmp_path, text))
    assert steps_of(data, "loss") == [1, 2, 3]
    assert "one dict per step assumed" in data.notes[0]
    assert "planned_total_steps" not in data.facts


def test_trl_logging_steps_beats_counting(tmp_path: Path) -> None:
    # The run is still going: 3 of 20 logs written; max_steps / count would give a wrong interval.
    text = "args: max_steps=200 logging_steps=10\n" + "".join(f"{{'loss': {i}}}\n" for i in range(1, 4))
    data = READER.read(write(tmp_path, text))
    assert steps_of(data, "loss") == [10, 20, 30]
    assert data.facts["logging_interval"][0] == 10


def test_trl_explicit_step_keys_win(tmp_path: Path) -> None:
    text = "{'loss': 0.1, 'step': 7}\n{'loss': 0.2, 'global_step': 9}\n"
    data = READER.read(write(tmp_path, text))
    assert series(data, "loss").to_dict() == {7: 0.1, 9: 0.2}
    assert set(data.frame["key"]) == {"loss"}


def test_trl_half_written_last_dict(tmp_path: Path) -> None:
    text = "{'loss': 0.1, 'reward': 0.5}\n{'loss': 0.2, 'reward': 0.6}\n{'loss': 0.3, 'rew"
    data = READER.read(write(tmp_path, text))
    assert steps_of(data, "loss") == [1, 2]
    assert data.warnings == ["train.log: last line is incomplete (the run may still be writing); ignored"]


def test_trl_model_and_banner_facts(tmp_path: Path) -> None:
    text = (
        "2026-04-04 19:24:11,442 [INFO] sweep: Model: Qwen/Qwen2.5-7B-Instruct\n"
        "  Total optimization steps = 1,000\n"
        "GRPOConfig(max_completion_length=512, num_generations=8, beta=0.0, loss_type='dapo')\n"
        "{'loss': 0.1}\n{'loss': 0.2}\n"
    )
    facts = READER.read(write(tmp_path, text)).facts
    assert facts["model"][0] == "Qwen/Qwen2.5-7B-Instruct"
    assert facts["max_completion_length"][0] == 512
    assert facts["num_generations"][0] == 8
    assert facts["beta"][0] == 0.0
    assert facts["loss_type"][0] == "dapo"
    assert facts["planned_total_steps"] == (1000, "train.log: 'Total optimization steps' banner")


def test_trl_script_command_line_flags(tmp_path: Path) -> None:
    text = (
        "+ accelerate launch --num_processes 8 train_grpo.py --model_name_or_path Qwen/Qwen2-0.5B \\\n"
        "    --max_steps 500 --logging_steps=10 --num_generations 8 --beta 0.04 --bf16\n"
        "{'loss': 0.1}\n{'loss': 0.2}\n"
    )
    data = READER.read(write(tmp_path, text))
    facts = data.facts
    assert facts["model"] == ("Qwen/Qwen2-0.5B", "train.log: command line: model_name_or_path")
    assert facts["num_generations"][0] == 8
    assert facts["beta"][0] == 0.04
    assert facts["logging_interval"][0] == 10
    assert facts["planned_total_steps"][0] == 500
    assert steps_of(data, "loss") == [10, 20]  # no bar: logging_steps spaces the dicts


# ---------------------------------------------------------------------------------------------- resumed TRL runs
def launch(total: int, first: int, last: int, log_every: int, tag: float, *, buffered: bool = False,
           lost_after: int | None = None) -> str:
    """One launch of an HF trainer: a fresh bar drawn at 0, then at `first`..`last` (a resumed launch jumps
    straight to `first`, as HF's ProgressCallback does), a log dict every `log_every` steps whose `loss` is
    `step + tag`. With `buffered`, the dicts reach the file after the bars; `lost_after` drops those after
    that step (a crash loses what stdout still buffered)."""
    out, stdout = [bar(0, total)], []
    for step in range(first, last + 1):
        out.append(bar(step, total))
        if step % log_every == 0:
            out.append(CLEAR)
            if lost_after is None or step <= lost_after:
                (stdout if buffered else out).append(
                    f"{{'loss': {step + tag}, 'reward': 0.5, 'epoch': {step / 100}}}\n")
            out.append(bar(step, total))
    return "".join([*out, "\n", *stdout])


def test_trl_resumed_run_reads_each_launch_at_its_own_steps(tmp_path: Path) -> None:
    # Crashed at step 7, resumed from checkpoint 4: steps 5-7 run (and 6 is logged) twice.
    text = (launch(10, 1, 7, 2, 0.0) + "Traceback (most recent call last):\nRuntimeError: CUDA error\n"
            + "  Continuing training from global step 4\n" + launch(10, 5, 10, 2, 0.5))
    data = READER.read(write(tmp_path, text))
    rows = data.frame[data.frame["key"] == "loss"]
    assert list(zip(rows["step"], rows["value"], strict=True)) == [
        (2, 2.0), (4, 4.0), (6, 6.0), (6, 6.5), (8, 8.5), (10, 10.5)]
    assert any("the bar restarted 1 time(s) (a resumed run)" in n for n in data.notes)
    normalized = normalize_source(data, "train.log")
    loss = next(p for p in normalized.pieces if p.metric == "loss")
    assert loss.steps.tolist() == [2, 4, 6, 8, 10]
    assert loss.values.tolist() == [2.0, 4.0, 6.5, 8.5, 10.5]  # the newest record of step 6
    assert any("logged twice for the same step" in w for w in normalized.warnings)  # the overlap, said


def test_trl_resumed_run_whose_crash_lost_buffered_dicts(tmp_path: Path) -> None:
    # The first launch's stdout reached the file only at exit and lost its dicts after step 2: its log events
    # at steps 4 and 6 must not be taken by the second launch's dicts.
    text = launch(10, 1, 7, 2, 0.0, buffered=True, lost_after=2) + launch(10, 5, 10, 2, 0.5, buffered=True)
    data = READER.read(write(tmp_path, text))
    assert series(data, "loss").to_dict() == {2: 2.0, 6: 6.5, 8: 8.5, 10: 10.5}


@pytest.mark.parametrize("message", [
    "  Continuing training from global step 30",  # transformers 4.x
    "  Resuming training from checkpoint with epoch 0 and global step 30",  # transformers 5.x
])
def test_trl_resumed_run_without_a_bar_restarts_at_the_resume_message(tmp_path: Path, message: str) -> None:
    first = "".join(f"{{'loss': {s}, 'epoch': {s / 100}}}\n" for s in range(10, 51, 10))
    second = "".join(f"{{'loss': {s + 0.5}, 'epoch': {s / 100}}}\n" for s in range(40, 71, 10))
    text = "logging_steps=10\n" + first + message + "\n" + second
    data = READER.read(write(tmp_path, text))
    rows = data.frame[data.frame["key"] == "loss"]
    assert rows["step"].tolist() == [10, 20, 30, 40, 50, 40, 50, 60, 70]
    assert rows["value"].tolist() == [10, 20, 30, 40, 50, 40.5, 50.5, 60.5, 70.5]
    assert "resumed at global step 30 (resume message)" in data.notes[0]


def test_trl_resumed_run_without_a_bar_or_message_restarts_where_epoch_goes_back(tmp_path: Path) -> None:
    # 200 steps per epoch, logged every 5: epoch 0.15 is step 30 again.
    first = "".join(f"{{'loss': {s}, 'epoch': {s / 200}}}\n" for s in range(5, 41, 5))
    second = "".join(f"{{'loss': {s + 0.5}, 'epoch': {s / 200}}}\n" for s in range(30, 51, 5))
    data = READER.read(write(tmp_path, "logging_steps: 5\n" + first + second))
    assert steps_of(data, "loss") == [*range(5, 41, 5), *range(30, 51, 5)]
    assert "epoch went back to 0.15" in data.notes[0]


# ---------------------------------------------------------------------------------------------- verl
VERL_PREFIX = "\x1b[36m(main_task pid=54569)\x1b[0m "
WORKER_PREFIX = "\x1b[36m(WorkerDict pid=55154)\x1b[0m "


def test_verl_console_with_ray_prefixes_ansi_and_numpy_wrappers(tmp_path: Path) -> None:
    config = [
        "{'actor_rollout_ref': {'model': {'path': 'Qwen/Qwen2.5-3B'},",
        "                       'rollout': {'n': 5}},",
        " 'algorithm': {'adv_estimator': 'grpo'},",
        " 'data': {'max_response_length': 1024}}",
    ]
    lines = [
        "command:",
        'bash run.sh "trainer.total_training_steps=3 actor_rollout_ref.actor.optim.lr=1e-6 '
        "trainer.logger=['console']\"",
        "",
        VERL_PREFIX + config[0],
        WORKER_PREFIX + "Flash Attention 2.0 only supports torch.float16 {",  # another worker, interleaved
        VERL_PREFIX + config[1],
        VERL_PREFIX + config[2],
        WORKER_PREFIX + "  'noise': 1}",
        VERL_PREFIX + config[3],
        WORKER_PREFIX + "Total steps: 3, num_warmup_steps: 0",
        VERL_PREFIX + "step:0 - val/test_score/openai/gsm8k:np.float64(0.013)",
        VERL_PREFIX + "step:1 - critic/score/mean:np.float64(0.25) - actor/lr(1e-4):0.010 - actor/pg_loss:-0.018"
        " - response_length/mean:np.int64(300) - actor/entropy:nan",
        "(TaskRunner pid=7, ip=10.0.0.1) step:2 - critic/score/mean:0.5 - actor/lr(1e-4):0.010 - "
        "actor/pg_loss:0.002 - response_length/mean:280 - actor/entropy:0.4",
        VERL_PREFIX + "Let's start with the first step:",
        "step:3 - critic/score/mean:0.75 - actor/lr(1e-4):0.010 - actor/pg_loss:0.001 - "
        "response_length/mean:270 - actor/entropy:0.3",
    ]
    data = READER.read(write(tmp_path, "\n".join(lines) + "\n"))
    assert data.format == "console_verl"
    assert series(data, "critic/score/mean").to_dict() == {1: 0.25, 2: 0.5, 3: 0.75}
    assert series(data, "val/test_score/openai/gsm8k").to_dict() == {0: 0.013}
    assert series(data, "actor/lr(1e-4)").tolist() == [0.01, 0.01, 0.01]  # raw key; the alias table scales it
    assert series(data, "response_length/mean").tolist() == [300, 280, 270]
    assert math.isnan(series(data, "actor/entropy")[1])
    facts = data.facts
    assert facts["framework"][0] == "verl"
    assert facts["model"] == ("Qwen/Qwen2.5-3B", "train.log: printed config: actor_rollout_ref.model.path")
    assert facts["num_generations"][0] == 5
    assert facts["algorithm"][0] == "grpo"
    assert facts["max_completion_length"][0] == 1024
    assert facts["learning_rate"] == (1e-6, "train.log: command line: actor_rollout_ref.actor.optim.lr")
    assert facts["planned_total_steps"][0] == 3
    assert data.warnings == []


def test_verl_trainer_bar_gives_the_planned_steps_and_the_final_validation_line_the_end(tmp_path: Path) -> None:
    """verl's fit() loop: a 'Training Progress' tqdm bar over total_training_steps, and after the last step
    "Final validation metrics: {...}" (pprint of an f-string, so it may come quoted)."""
    lines = [VERL_PREFIX + "Processed prompts: 100%|##########| 512/512 [00:31<00:00, 16.3it/s]"]
    for step in range(1, 5):
        lines.append(VERL_PREFIX + f"step:{step} - critic/score/mean:np.float64(0.{step}) - actor/entropy:0.4")
        lines.append(VERL_PREFIX + f"Training Progress:  {step}%|          | {step}/400 [0:00:50<?, 50.00s/it]")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    running = READER.read(write(tmp_path / "a", "\n".join(lines) + "\n"))
    assert running.facts["planned_total_steps"][0] == 400 and "training_ended" not in running.facts
    assert not running.carries_end_of_training()
    lines.append(VERL_PREFIX + "\"Final validation metrics: {'val-core/openai/gsm8k/acc/mean@1': np.float64(0.76)}\"")
    ended = READER.read(write(tmp_path / "b", "\n".join(lines) + "\n"))
    assert ended.facts["training_ended"][0] is True and ended.carries_end_of_training()


def test_verl_command_line_with_continuations(tmp_path: Path) -> None:
    lines = [
        "+ python3 -m verl.trainer.main_ppo \\",
        "    algorithm.adv_estimator=grpo \\",
        "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\",
        "    actor_rollout_ref.rollout.n=8 $@",
        "step:1 - critic/score/mean:0.1",
    ]
    facts = READER.read(write(tmp_path, "\n".join(lines) + "\n")).facts
    assert facts["model"][0] == "Qwen/Qwen2.5-7B-Instruct"
    assert facts["num_generations"] == (8, "train.log: command line: actor_rollout_ref.rollout.n")
    assert facts["algorithm"][0] == "grpo"


@pytest.mark.parametrize("tail", [
    "step:4 - critic/score/mean:0.9 - actor/pg_loss:0.1 - timing_s/gen:1",  # cut after a value, fewer keys
    "step:4 - critic/score/mean:0.9 - actor/pg_loss:0.1 - timing_s/gen:1 - timing_s/st",  # cut mid-key
    "step:4 - critic/score/mean:0.9 - actor/pg_loss:0.1 - timing_s/gen:1 - timing_s/step:",  # cut before value
])
def test_verl_half_written_last_line(tmp_path: Path, tail: str) -> None:
    full = "".join(
        f"step:{s} - critic/score/mean:0.{s} - actor/pg_loss:0.1 - timing_s/gen:1 - timing_s/step:2\n"
        for s in range(1, 4)
    )
    data = READER.read(write(tmp_path, full + tail))
    assert steps_of(data, "critic/score/mean") == [1, 2, 3]
    assert data.warnings == ["train.log: last line is incomplete (the run may still be writing); ignored"]


def test_verl_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    text = "step:1 - a:1 - b:2\nstep:2 - a:3 - b:4"
    data = READER.read(write(tmp_path, text))
    assert steps_of(data, "a") == [1, 2]
    assert data.warnings == []


# ---------------------------------------------------------------------------------------------- OpenRLHF
def test_openrlhf_global_step_and_eval_lines(tmp_path: Path) -> None:
    lines = [
        "[2025-01-01 10:00:00,000] [INFO] [ppo_trainer.py:400] ✨ Global step 1: {'policy_loss': 0.1, "
        "'reward': 0.2, 'kl': np.float64(0.001), 'actor_lr': 1e-06}",
        "Episode [1/1]:  10%|█         | 1/10 [00:05<00:45,  5.00s/it, act_loss=0.1]",
        "✨ Global step 2: {'policy_loss': 0.05, 'reward': 0.3, 'kl': 0.002, 'actor_lr': 1e-06}",
        "✨ Evaluation completed in 0:00:10, global_step 2, eval_metrics: {'eval_gsm8k_pass1': 0.4, "
        "'eval_response_length_mean': 210.0}",
        "✨ Global step 3 [replay]: {'policy_loss': 0.01, 'reward': 0.5, 'kl': 0.003, 'actor_lr': 1e-06}",
        "✨ Evaluation completed in 0:00:10",
        "eval_metrics: {'eval_gsm8k_pass1': 0.6}",
        "eval_metrics: {'unrelated': 1.0}",  # not right after an "Evaluation completed" message
    ]
    data = READER.read(write(tmp_path, "\n".join(lines) + "\n"))
    assert data.format == "console_openrlhf"
    assert series(data, "reward").to_dict() == {1: 0.2, 2: 0.3, 3: 0.5}
    assert series(data, "kl")[1] == 0.001
    assert series(data, "eval_gsm8k_pass1").to_dict() == {2: 0.4, 3: 0.6}
    eval_rows = data.frame[data.frame["key"] == "eval_gsm8k_pass1"]
    assert set(eval_rows["split"]) == {"eval"}
    assert "unrelated" not in set(data.frame["key"])
    assert data.facts["framework"][0] == "openrlhf"


# ---------------------------------------------------------------------------------------------- step lines
def test_bracket_step_lines_with_crlf_and_a_restart(tmp_path: Path) -> None:
    lines = [f"[Step {s}/300] loss=-0.{s}0 reward_avg=0.125 tokens_per_sec=19.3 avg_response_len=6.4" for s in (1, 2)]
    lines += [f"[Step {s}/500] loss=0.{s} reward_avg=0.250 tokens_per_sec=20.0 avg_response_len=7.0" for s in (1, 2, 3)]
    data = READER.read(write(tmp_path, "\r\n".join(lines), name="metrics.txt"))
    assert data.format == "console_steps"
    assert steps_of(data, "loss") == [1, 2, 1, 2, 3]  # the normalizer keeps the newest segment
    assert data.facts["planned_total_steps"][0] == 500
    assert data.facts["framework"][0] == "reasoning_from_scratch"
    assert data.warnings == []


def test_generic_step_lines_and_prose_that_mentions_steps(tmp_path: Path) -> None:
    lines = [
        "Step 1: Let x=3 and then compute y",  # prose, not a metric line
        "step 1: loss=0.5, reward=0.25, lr=1e-05",
        "Step 2 | loss=0.4 | reward=0.5 | lr=1e-05",
        "step=3 loss=0.3 reward=0.75 lr=1e-05",
        "[Step 4/10] loss=0.2 rew",
    ]
    data = READER.read(write(tmp_path, "\n".join(lines), name="out.txt"))
    assert series(data, "reward").to_dict() == {1: 0.25, 2: 0.5, 3: 0.75}
    assert "x" not in set(data.frame["key"])
    assert data.warnings == ["out.txt: last line is incomplete (the run may still be writing); ignored"]


# ---------------------------------------------------------------------------------------------- nothing
def test_no_metrics_is_a_clear_error(tmp_path: Path) -> None:
    path = write(tmp_path, "Loading model...\n" + bar(3, 10) + "\nDone.\n")
    with pytest.raises(UnreadableSourceError, match=r"train\.log: no training metrics found in this log .*step:N"):
        READER.read(path)


def test_dialect_with_most_records_wins(tmp_path: Path) -> None:
    text = "step 1: loss=0.5\n" + "".join(f"step:{s} - critic/score/mean:0.{s}\n" for s in range(1, 4))
    data = READER.read(write(tmp_path, text))
    assert data.format == "console_verl"
    assert any("also saw 1 console_steps" in n for n in data.notes)


# ---------------------------------------------------------------------------------------------- real logs
Q7B = ["trl-grpo-q7b-rho0.1-s43", "trl-grpo-q7b-rho0.5-s43", "trl-grpo-q7b-rho1.0-s42", "trl-grpo-q7b-rho1.0-s43",
       "trl-grpo-q7b-rho1.5-s44", "trl-grpo-q7b-rho3.0-s44"]


def only_log(real_runs: Path, run: str) -> Path:
    (path,) = [p for p in (real_runs / run).iterdir() if p.suffix in (".log", ".txt")]
    return path


@pytest.mark.parametrize("run", Q7B)
def test_real_trl_q7b_logs(real_runs: Path, run: str) -> None:
    path = only_log(real_runs, run)
    text = path.read_text(encoding="utf-8")
    data = READER.read(path)
    assert data.format == "console_trl"
    # Checked by grep: 40 "{'loss'" dicts, one train_runtime dict, bars over a total of 200.
    assert text.count("{'loss'") == 40
    assert steps_of(data, "reward") == list(range(5, 201, 5))
    assert data.facts["planned_total_steps"][0] == 200
    # Independent check of the step inference: the logged learning rate follows HF's linear schedule
    # (10 warm-up steps, 200 total, peak 1e-4), evaluated at the step before the log.
    lr = series(data, "learning_rate")
    expected = [1e-4 * min((s - 1) / 10, (200 - (s - 1)) / 190) for s in lr.index]
    np.testing.assert_allclose(lr.to_numpy(), expected, rtol=1e-6)
    assert data.facts["train_runtime"][0] > 0
    assert data.facts["model"][0] == "Qwen/Qwen2.5-7B-Instruct"
    assert data.warnings == []


@pytest.mark.parametrize("run", ["trl-grpo-q35-9b-gate-rho0.7-s43", "trl-grpo-q35-9b-gate-rho1.0-s43"])
def test_real_trl_gate_logs_with_string_values(real_runs: Path, run: str) -> None:
    path = only_log(real_runs, run)
    data = READER.read(path)
    assert path.read_text(encoding="utf-8").count("{'loss': '") == 200
    assert steps_of(data, "kl") == list(range(1, 201))
    # epoch grows by one fixed amount per step (0.107 epochs at step 200), so it pins each row's step.
    epoch = series(data, "epoch")
    np.testing.assert_allclose(epoch.to_numpy(), epoch.index.to_numpy() * epoch[200] / 200, rtol=0.01)
    assert data.facts["planned_total_steps"][0] == 200
    assert data.facts["model"][0] == "Qwen/Qwen3.5-9B"


def test_real_trl_gate_rho07_step_71_spike(real_runs: Path) -> None:
    # SOURCE.md: step 71 has kl = 17.76 and grad_norm = 154.6.
    data = READER.read(only_log(real_runs, "trl-grpo-q35-9b-gate-rho0.7-s43"))
    assert series(data, "kl")[71] == pytest.approx(17.76, abs=0.01)
    assert series(data, "grad_norm")[71] == pytest.approx(154.6, abs=0.1)


def test_real_trl_pilot_dicts_printed_after_training(real_runs: Path) -> None:
    # SOURCE.md: 50 steps logged every step, all dicts printed after "Training completed"; reward is 0
    # throughout and completion_length is 256 on 49 of the 50 steps.
    path = only_log(real_runs, "trl-grpo-q35-9b-pilot-noreward-s42")
    text = path.read_text(encoding="utf-8")
    assert text.index("Training completed") < text.index("{'loss'")
    data = READER.read(path)
    assert steps_of(data, "reward") == list(range(1, 51))
    assert (series(data, "reward") == 0).all()
    assert int((series(data, "completion_length") == 256).sum()) == 49
    assert data.facts["planned_total_steps"][0] == 50
    epoch = series(data, "epoch")
    np.testing.assert_allclose(epoch.to_numpy(), epoch.index.to_numpy() * epoch[50] / 50, rtol=0.01)


def test_real_verl_ppo_console_log(real_runs: Path) -> None:
    path = only_log(real_runs, "verl-ppo-qwen25-05b-gsm8k")
    text = path.read_text(encoding="utf-8")
    # grep: one "step:N - " line per step 0..434; val/test_score on the 43 lines at steps 9, 19, ..., 429
    # (SOURCE.md says 40 values to step 399; the file itself has three more).
    line_steps = [int(m) for m in re.findall(r"(?<![\w/])step:(\d+) - ", text)]
    assert line_steps == list(range(435))
    val_steps = [int(m) for m in re.findall(r"step:(\d+) - [^\n]*val/test_score/openai/gsm8k:", text)]
    assert val_steps == list(range(9, 430, 10))

    data = READER.read(path)
    assert data.format == "console_verl"
    assert steps_of(data, "critic/score/mean") == list(range(435))
    assert steps_of(data, "val/test_score/openai/gsm8k") == list(range(9, 430, 10))
    assert series(data, "critic/score/mean")[0] == 0.012  # first step line: critic/score/mean:0.012
    assert series(data, "actor/lr(1e-4)")[0] == 0.01
    facts = data.facts
    assert facts["framework"][0] == "verl"
    assert facts["model"][0] == "Qwen/Qwen2.5-0.5B-Instruct"
    assert facts["max_completion_length"][0] == 512
    assert facts["algorithm"][0] == "ppo"
    assert facts["planned_total_steps"][0] == 435
    assert data.warnings == []


def test_real_rfs_txt_logs(real_runs: Path) -> None:
    first = READER.read(real_runs / "rfs-ch06-grpo-nokl-2048tok" / "rlvr_grpo_original_no_kl_metrics.txt")
    assert first.format == "console_steps"
    assert steps_of(first, "reward_avg") == list(range(1, 251))
    assert first.facts["planned_total_steps"][0] == 12000

    # An aborted start (steps 1-5 of 300) then the 500-step run; the last line has no newline but is whole.
    second = READER.read(real_runs / "rfs-ch07-grpo-nokl-tracking-500" / "ch06_rlvr_grpo_original_no_kl_metrics.txt")
    assert steps_of(second, "loss") == [*range(1, 6), *range(1, 501)]
    assert second.facts["planned_total_steps"][0] == 500
    assert series(second, "loss").iloc[-1] == -916.81
    assert second.warnings == []
