from __future__ import annotations

import importlib
import logging
import math
import sys
import threading
import types
from pathlib import Path

import pytest
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

import assessor.integrations.trl as trl_module
from assessor.integrations.trl import AssessorCallback
from assessor.judge import JudgeRequest, Verdict
from assessor.judge.fake import FakeJudge
from tests.runs import ar1

WAIT = 30.0  # seconds; a bound on waiting for the worker, never a sleep


def history(n: int, collapse_at: int | None = None, interval: int = 10) -> list[dict[str, float]]:
    """TRL GRPO log rows: reward rising under noise; after `collapse_at`, reward falls while KL climbs."""
    noise = ar1(1, n, scale=0.02)
    rows = []
    for i in range(n):
        t = i / n
        reward, kl, std, length = 0.2 + 0.5 * (1 - math.exp(-4 * t)) + noise[i], 0.002 + 0.02 * t, 0.3, 300 + 50 * t
        if collapse_at is not None and i >= collapse_at:
            k = i - collapse_at
            reward, kl = reward - 0.04 * k, kl + 0.05 * k
            std, length = max(0.02, 0.3 - 0.03 * k), max(20, length - 25 * k)
        step = (i + 1) * interval
        rows.append({"step": step, "epoch": step / 1000, "loss": 0.01, "grad_norm": 0.2, "learning_rate": 1e-6,
                     "reward": reward, "reward_std": std, "rewards/acc/mean": reward, "kl": kl, "entropy": 0.5,
                     "completions/mean_length": length, "completions/clipped_ratio": 0.01,
                     "frac_reward_zero_std": 0.2})
    return rows


def trainer(tmp_path: Path, rows: list[dict[str, float]], *, main: bool = True,
            checkpoints: tuple[int, ...] = ()) -> tuple[TrainingArguments, TrainerState, TrainerControl]:
    """What the Trainer hands its callbacks, with `rows` logged so far."""
    output_dir = tmp_path / "grpo-run"
    for step in checkpoints:
        (output_dir / f"checkpoint-{step}").mkdir(parents=True)
    args = TrainingArguments(output_dir=str(output_dir), report_to="none", logging_steps=10, max_steps=1000)
    state = TrainerState(global_step=int(rows[-1]["step"]) if rows else 0, max_steps=1000, logging_steps=10,
                         is_world_process_zero=main)
    state.log_history = list(rows)
    return args, state, TrainerControl()


def test_is_a_trainer_callback():
    assert isinstance(AssessorCallback(), TrainerCallback)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"every": 0}, "`every` must be at least 1"),
    ({"stop_on": {"stop", "pause"}}, "`stop_on` may only hold 'stop' and 'rollback', got pause"),
    ({"final_timeout": -1}, "`final_timeout` must be 0 or more"),
    ({"judge": "nonsense"}, "unknown judge 'nonsense'"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AssessorCallback(**kwargs)


def test_stop_on_accepts_one_decision_as_a_string():
    assert AssessorCallback(stop_on="stop").stop_on == {"stop"}


def test_slack_needs_a_token(monkeypatch):
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    with pytest.raises(ValueError, match="`slack_channel` 'C123': SLACK_BOT_TOKEN is not set"):
        AssessorCallback(slack_channel="C123")


def test_healthy_run_continues(tmp_path):
    callback = AssessorCallback(every=50, judge="rules", stop_on={"stop", "rollback"})
    args, state, control = trainer(tmp_path, history(60))
    callback.on_log(args, state, control, logs=state.log_history[-1])
    assert callback.wait(WAIT)
    assert callback.latest is not None
    assert callback.latest.verdict.decision == "continue"
    assert callback.latest.path == str(Path(args.output_dir).resolve())
    assert callback.latest.run == "grpo-run"
    state.global_step += 1
    callback.on_step_end(args, state, control)
    assert not control.should_training_stop


def test_collapse_stops_training_on_the_next_step(tmp_path, caplog):
    callback = AssessorCallback(every=50, judge="rules", stop_on={"stop", "rollback"})
    args, state, control = trainer(tmp_path, history(60, collapse_at=40), checkpoints=(200, 400))
    callback.on_step_end(args, state, control)  # nothing decided yet
    assert not control.should_training_stop
    callback.on_log(args, state, control)
    assert callback.wait(WAIT)
    assert callback.latest is not None
    verdict = callback.latest.verdict
    assert verdict.decision == "rollback"
    # A folder really in output_dir: the newest one before the collapse began at step 410.
    assert verdict.rollback_checkpoint == "checkpoint-400"
    state.global_step += 1
    with caplog.at_level(logging.WARNING, logger="assessor"):
        callback.on_step_end(args, state, control)
    assert control.should_training_stop
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        f"assessor: stopping training at step 601: rollback at step 600: {verdict.headline}; "
        "roll back to checkpoint-400"
    ]


def test_collapse_without_stop_on_keeps_training(tmp_path):
    callback = AssessorCallback(every=50, judge="rules")
    args, state, control = trainer(tmp_path, history(60, collapse_at=40))
    callback.on_log(args, state, control)
    assert callback.wait(WAIT)
    assert callback.latest is not None
    # A better model is behind: roll back, even with no checkpoint in output_dir (it names the step instead).
    assert callback.latest.verdict.decision == "rollback" and callback.latest.verdict.rollback_checkpoint is None
    callback.on_step_end(args, state, control)
    assert not control.should_training_stop


def test_run_facts_come_from_the_training_arguments(tmp_path):
    judge = FakeJudge()
    callback = AssessorCallback(every=50, judge=judge)
    args, state, control = trainer(tmp_path, history(10))
    args.beta = 0.04  # GRPOConfig fields, which plain TrainingArguments lack
    args.num_generations = 8
    callback.on_log(args, state, control)
    assert callback.wait(WAIT)
    facts = judge.requests[0].run.facts
    assert (facts.beta, facts.num_generations, facts.planned_total_steps) == (0.04, 8, 1000)


def test_non_main_process_does_nothing(tmp_path):
    judge = FakeJudge()
    callback = AssessorCallback(every=10, judge=judge, stop_on={"stop"})
    args, state, control = trainer(tmp_path, history(60), main=False)
    callback.on_log(args, state, control)
    callback.on_step_end(args, state, control)
    assert not callback.running
    assert callback.wait(WAIT)
    assert judge.requests == []
    assert callback.latest is None
    assert not control.should_training_stop


def test_step_guard(tmp_path):
    judge = FakeJudge()
    callback = AssessorCallback(every=50, judge=judge)
    rows = history(20)
    args, state, control = trainer(tmp_path, rows[:4])  # step 40: not due yet
    assessed = []
    for upto in (4, 5, 5, 6, 9, 10):  # steps 40, 50, 50 again, 60, 90, 100
        state.log_history, state.global_step = rows[:upto], int(rows[upto - 1]["step"])
        callback.on_log(args, state, control)
        assert callback.wait(WAIT)
        assessed = [r.run.last_step for r in judge.requests]
    assert assessed == [50, 100]


def test_a_failing_judge_is_one_log_line(tmp_path, caplog):
    def broken(request: JudgeRequest) -> Verdict:
        raise RuntimeError("provider said no\nsecond line")

    callback = AssessorCallback(every=10, judge=FakeJudge(respond=broken), stop_on={"stop"})
    args, state, control = trainer(tmp_path, history(10))
    with caplog.at_level(logging.INFO, logger="assessor"):
        callback.on_log(args, state, control)
        assert callback.wait(WAIT)
    callback.on_step_end(args, state, control)
    assert not control.should_training_stop
    assert callback.latest is None
    assert [r.getMessage() for r in caplog.records] == [
        "assessor: the check at step 100 failed, training goes on: RuntimeError: provider said no second line"
    ]


def test_a_running_check_makes_the_next_one_skip(tmp_path):
    started, release = threading.Event(), threading.Event()

    def slow(request: JudgeRequest) -> Verdict:
        started.set()
        release.wait(WAIT)
        return FakeJudge().respond(request)

    judge = FakeJudge(respond=slow)
    callback = AssessorCallback(every=10, judge=judge)
    args, state, control = trainer(tmp_path, history(10))
    callback.on_log(args, state, control)
    assert started.wait(WAIT)
    state.log_history, state.global_step = history(11), 110
    callback.on_log(args, state, control)  # returns at once: no second worker, nothing queued
    assert callback.running
    assert len(judge.requests) == 1
    release.set()
    assert callback.wait(WAIT)
    assert [r.run.last_step for r in judge.requests] == [100]
    callback.on_log(args, state, control)  # the next log, once free, checks again
    assert callback.wait(WAIT)
    assert [r.run.last_step for r in judge.requests] == [100, 110]


def test_on_verdict_and_slack(tmp_path, monkeypatch):
    posted = []
    fake_slack = types.ModuleType("assessor.integrations.slack")
    fake_slack.slack_client = lambda: object()
    fake_slack.post_assessment = lambda assessment, channel, **kw: posted.append((assessment, channel, kw))
    monkeypatch.setitem(sys.modules, "assessor.integrations.slack", fake_slack)
    seen = []
    callback = AssessorCallback(every=10, judge="rules", slack_channel="C123", on_verdict=seen.append)
    args, state, control = trainer(tmp_path, history(10))
    callback.on_log(args, state, control)
    assert callback.wait(WAIT)
    assert seen == [callback.latest]
    [(assessment, channel, kw)] = posted
    assert (assessment, channel, kw["note"]) == (callback.latest, "C123", "TRL callback, step 100")
    assert kw["dashboard"].name == "dashboard.png"  # drawn in the check's scratch folder, gone afterwards
    assert assessment.plots == []


def test_plots_are_kept_per_step_in_out_dir(tmp_path):
    callback = AssessorCallback(every=10, judge="rules", out_dir=tmp_path / "checks")
    args, state, control = trainer(tmp_path, history(10))
    callback.on_log(args, state, control)
    assert callback.wait(WAIT)
    assert callback.latest is not None
    assert Path(callback.latest.plots[0]) == tmp_path / "checks" / "step-100" / "dashboard.png"
    assert Path(callback.latest.plots[0]).is_file()


def test_ranks_stop_together_under_torch_distributed(tmp_path, monkeypatch):
    broadcasts = []

    def broadcast(flag: bool) -> bool:
        broadcasts.append(flag)
        return True  # the main process said stop

    monkeypatch.setattr(trl_module, "_in_process_group", lambda: True)
    monkeypatch.setattr(trl_module, "_broadcast_from_main", broadcast)
    callback = AssessorCallback(every=50, judge="rules", stop_on={"stop"})
    args, state, control = trainer(tmp_path, history(60), main=False)
    state.global_step = 601  # not a multiple of `every`: ranks do not meet
    callback.on_step_end(args, state, control)
    assert broadcasts == [] and not control.should_training_stop
    state.global_step = 650
    callback.on_step_end(args, state, control)
    assert broadcasts == [False]
    assert control.should_training_stop


def test_train_end_waits_a_bounded_time(tmp_path):
    release = threading.Event()

    def slow(request: JudgeRequest) -> Verdict:
        release.wait(WAIT)
        return FakeJudge().respond(request)

    callback = AssessorCallback(every=10, judge=FakeJudge(respond=slow), final_timeout=0.01)
    args, state, control = trainer(tmp_path, history(10))
    callback.on_log(args, state, control)
    callback.on_train_end(args, state, control)
    assert callback.running  # gave up after final_timeout; training was not held up
    release.set()
    assert callback.wait(WAIT)


def test_imports_without_transformers(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # `import transformers` now raises ImportError
    try:
        module = importlib.reload(trl_module)
        assert module.AssessorCallback.__mro__[1] is object
        callback = module.AssessorCallback(every=5)
        assert callback.latest is None
    finally:
        monkeypatch.undo()
        importlib.reload(trl_module)
    assert issubclass(trl_module.AssessorCallback, TrainerCallback)
