"""`assessor watch` on a run directory the test keeps writing to, with a fake clock (no real waiting)."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from assessor.cli import main
from assessor.errors import ConfigError
from assessor.integrations.notify import (
    NotifyError,
    StdoutNotifier,
    WatchEvent,
    WebhookNotifier,
    notifiers_from,
)
from assessor.integrations.schedule import parse_duration
from assessor.integrations.watch import (
    WatchConfig,
    Watcher,
    default_state_path,
    load_state,
    material_digest,
)
from assessor.judge import JudgeResult, Usage, get_judge
from assessor.judge.fake import FakeJudge
from tests.runs import ar1

N = 300
STEPS = np.arange(1, N + 1)


def healthy_then_collapse() -> list[str]:
    """Reward rises until step 150, then falls while KL blows up: rules say continue, then roll back (~170)."""
    peak = 0.2 + 0.6 * (1 - np.exp(-149 / 50))
    rise = 0.2 + 0.6 * (1 - np.exp(-STEPS / 50))
    reward = np.where(STEPS < 150, rise, peak - 0.6 * np.clip((STEPS - 150) / 60, 0, 1)) + ar1(1, N, 0.4, 0.02)
    kl = np.where(STEPS < 150, 0.01 + 0.02 * STEPS / 150, 0.03 + 0.5 * np.clip((STEPS - 150) / 60, 0, 1) ** 2)
    kl = kl + np.abs(ar1(2, N, 0.4, 0.002))
    spread = 0.35 + ar1(3, N, 0.3, 0.01)
    return [json.dumps({"step": int(s), "reward": float(r), "kl": float(k), "reward_std": float(d)})
            for s, r, k, d in zip(STEPS, reward, kl, spread, strict=True)]


LINES = healthy_then_collapse()


class LiveRun:
    """A run directory that grows like a live one: log lines (possibly cut mid-line) and checkpoints."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.log = root / "log.jsonl"
        self.written = ""
        self.log.write_text("", encoding="utf-8")

    def grow_to(self, step: int, half_line: bool = False) -> None:
        text = "".join(line + "\n" for line in LINES[:step])
        if half_line:
            text += LINES[step][:20]
        with self.log.open("a", encoding="utf-8") as handle:
            handle.write(text[len(self.written):] if text.startswith(self.written) else "")
        self.written = text
        for checkpoint in range(50, step + 1, 50):
            (self.root / f"checkpoint-{checkpoint}").mkdir(exist_ok=True)


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Recorder:
    def __init__(self) -> None:
        self.events: list[WatchEvent] = []

    def notify(self, event: WatchEvent) -> None:
        self.events.append(event)

    @property
    def kinds(self) -> list[tuple[str, str]]:
        return [(e.kind, e.assessment.verdict.decision) for e in self.events]


def config(tmp_path: Path, run: Path, **overrides: object) -> WatchConfig:
    values: dict[str, object] = {"run_dir": run, "every": 900.0, "state_path": tmp_path / "state" / "watch.json",
                                 "idle_timeout": None}
    values.update(overrides)
    return WatchConfig.model_validate(values)


def test_one_notification_per_verdict_change_and_none_after_a_restart(tmp_path):
    live = LiveRun(tmp_path / "run")
    clock, recorder = Clock(), Recorder()
    watcher = Watcher(config(tmp_path, live.root), [recorder], clock=clock)
    for step, half in [(60, False), (120, True), (130, False), (160, True), (200, False), (230, True), (260, False)]:
        live.grow_to(step, half_line=half)
        outcome = watcher.check()
        assert outcome.step == step
        assert not any("still be writing" in w for w in watcher.cache.sources()[0].warnings)
        clock.sleep(900)
    assert recorder.kinds == [("first", "continue"), ("escalated", "rollback")]
    assert recorder.events[1].previous_decision == "continue"
    assert recorder.events[1].step is not None and 160 < recorder.events[1].step <= 200

    outcome = watcher.check()  # nothing new on disk: nothing re-read, nothing re-judged
    assert outcome.notified is None and outcome.reasons == ("nothing new since step 260; kept the last verdict",)

    restarted = Watcher(config(tmp_path, live.root), [recorder], clock=clock)
    assert restarted.check().notified is None
    live.grow_to(280)
    assert restarted.check().notified is None
    assert len(recorder.events) == 2
    assert restarted.state.notifications == 2 and restarted.state.checks == 10


def test_heartbeat_after_a_quiet_spell(tmp_path):
    live = LiveRun(tmp_path / "run")
    live.grow_to(60)
    clock, recorder = Clock(), Recorder()
    watcher = Watcher(config(tmp_path, live.root, heartbeat=3600.0), [recorder], clock=clock)
    kinds = []
    for _ in range(9):
        kinds.append(watcher.check().notified)
        clock.sleep(900)
    assert kinds == ["first", None, None, None, "heartbeat", None, None, None, "heartbeat"]
    assert watcher.state.last_heartbeat_at == watcher.state.last_notified_at


class CountingJudge(FakeJudge):
    """A stand-in LLM judge: counts its calls, agrees with the rules judge."""

    name = "stub:llm"

    def __init__(self) -> None:
        rules = get_judge("rules")
        super().__init__(respond=lambda request: rules.judge(request).verdict.model_copy(
            update={"headline": "stub says " + rules.judge(request).verdict.headline}))


def test_llm_judge_is_called_only_when_the_diagnostics_change(tmp_path):
    live = LiveRun(tmp_path / "run")
    llm = CountingJudge()
    clock = Clock()

    def judges(name: str, **_: object):
        return llm if name == "stub:llm" else get_judge(name)

    watcher = Watcher(config(tmp_path, live.root, llm_judge="stub:llm"), [Recorder()], clock=clock,
                      judge_factory=judges)
    called = []
    digests = []
    for step in (100, 102, 104, 106, 230, 232):
        live.grow_to(step)
        outcome = watcher.check()
        called.append(outcome.llm_called)
        digests.append(watcher.state.digest)
        assert outcome.judge == "stub:llm" and outcome.assessment is not None
        assert outcome.assessment.verdict.headline.startswith("stub says")
    # A call whenever the digest differs from the one the last LLM verdict was given, and only then.
    expected = [True] + [digests[i] != digests[i - 1] for i in range(1, len(digests))]
    assert called == expected
    assert called[0] and called[4] and not all(called)
    assert len(llm.requests) == watcher.state.llm_calls == sum(called)
    assert watcher.state.llm_calls_saved == len(called) - sum(called)
    assert any("LLM call saved" in r for r in watcher.last.reasons) or called[-1]


class PricedJudge(CountingJudge):
    """A stand-in LLM judge whose every call costs tokens and money, partly from the prompt cache."""

    def judge(self, request):
        result = super().judge(request)
        return JudgeResult(verdict=result.verdict, usage=Usage(
            input_tokens=12_000, cached_input_tokens=10_000, output_tokens=500, requests=1, cost_usd=0.0165))


def test_llm_usage_and_cost_are_kept_in_the_state_and_the_summary(tmp_path):
    live = LiveRun(tmp_path / "run")
    llm = PricedJudge()
    watcher = Watcher(config(tmp_path, live.root, llm_judge="stub:llm"), [Recorder()], clock=Clock(),
                      judge_factory=lambda name, **_: llm if name == "stub:llm" else get_judge(name))
    for step in (100, 102, 230):
        live.grow_to(step)
        outcome = watcher.check()
        if outcome.llm_called:
            assert any("($0.0165)" in r for r in outcome.reasons)
    calls = watcher.state.llm_calls
    assert calls >= 2 and watcher.state.llm_calls_saved == 3 - calls
    total = watcher.state.llm_usage
    assert (total.requests, total.input_tokens, total.cached_input_tokens) == (calls, 12_000 * calls, 10_000 * calls)
    assert total.cost_usd == pytest.approx(0.0165 * calls)
    assert watcher.state.llm is not None and watcher.state.llm.usage is not None
    reloaded = load_state(watcher.state_path, live.root)
    assert reloaded.llm_usage == total  # kept across restarts
    line = watcher.summary().line()
    assert f"{calls} LLM calls (${0.0165 * calls:.4f}, {12_000 * calls:,} input tokens of which " \
        f"{10_000 * calls:,} cached, {500 * calls:,} output)" in line


def test_material_digest_ignores_the_noise_of_a_few_more_steps(tmp_path):
    live = LiveRun(tmp_path / "run")
    from assessor import diagnose, load_run

    parts = []
    for step in (110, 112):
        live.grow_to(step)
        parts.append(material_digest(diagnose(load_run(live.root)), "continue"))
    assert parts[0] == parts[1]
    assert set(parts[0]) == {"decision", "findings", "quadrant", "reward_trend", "kl_trend",
                             "rollback_checkpoint_step"}


def write_state(path: Path, steps: int, max_steps: int = 200, summary: bool = False) -> str:
    rows = [json.loads(line) for line in LINES[:steps]]
    history: list[dict[str, object]] = [{"step": r["step"], "reward": r["reward"], "kl": r["kl"]} for r in rows]
    if summary:
        history.append({"train_runtime": 1234.5, "train_loss": 0.01, "step": steps, "epoch": 1.0})
    text = json.dumps({"global_step": steps, "max_steps": max_steps, "log_history": history})
    path.write_text(text, encoding="utf-8")
    return text


def test_trainer_state_rewritten_mid_read_is_survived(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    state = run / "trainer_state.json"
    state.write_text('{"global_step": 3, "log_hist', encoding="utf-8")  # first check: nothing readable yet
    clock, recorder = Clock(), Recorder()
    watcher = Watcher(config(tmp_path, run), [recorder], clock=clock)
    outcome = watcher.check()
    assert outcome.assessment is None and outcome.notified is None and outcome.exit_code == 2
    assert "could not read the run" in outcome.reasons[0] and "trying again" in outcome.reasons[0]

    write_state(state, 60)
    assert watcher.check().notified == "first"
    text = write_state(state, 80)
    state.write_text(text[: len(text) * 2 // 3], encoding="utf-8")  # TRL is rewriting it right now
    outcome = watcher.check()
    assert outcome.step == 60 and outcome.notified is None
    state.write_text("", encoding="utf-8")
    assert watcher.check().step == 60
    write_state(state, 80)
    assert watcher.check().step == 80
    assert [e.kind for e in recorder.events] == ["first"]


def test_the_watch_ends_at_the_planned_total_and_says_so_once(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    state = run / "trainer_state.json"
    write_state(state, 60, max_steps=100)
    clock, recorder = Clock(), Recorder()
    watcher = Watcher(config(tmp_path, run, idle_timeout=86400.0), [recorder], clock=clock)
    grown = iter([80, 100])

    def sleep_and_grow(seconds: float) -> None:
        clock.sleep(seconds)
        write_state(state, next(grown), max_steps=100)

    watcher._sleep = sleep_and_grow
    summary = watcher.run()
    assert summary.ended == "reached the planned 100 steps" and summary.checks == 3
    assert [e.kind for e in recorder.events] == ["first", "ended"]
    restarted = Watcher(config(tmp_path, run), [recorder], clock=clock)
    assert restarted.check().notified is None  # the end was already announced


def test_the_watch_ends_on_the_trainers_summary_row(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write_state(run / "trainer_state.json", 60, max_steps=500, summary=True)
    recorder = Recorder()
    outcome = Watcher(config(tmp_path, run), [recorder], clock=Clock()).check()
    assert outcome.ended == "the trainer wrote its end-of-training summary"
    assert [e.kind for e in recorder.events] == ["ended"]


def test_the_watch_ends_after_the_idle_timeout(tmp_path):
    live = LiveRun(tmp_path / "run")
    live.grow_to(60)
    clock, recorder = Clock(), Recorder()
    watcher = Watcher(config(tmp_path, live.root, idle_timeout=3600.0), [recorder], clock=clock, sleep=clock.sleep)
    summary = watcher.run()
    assert summary.checks == 5 and summary.ended == "no new step for 1h (idle timeout 1h)"
    assert [e.kind for e in recorder.events] == ["first", "ended"]


def test_stop_event_ends_the_loop(tmp_path):
    live = LiveRun(tmp_path / "run")
    live.grow_to(60)
    stop = threading.Event()
    clock = Clock()

    def sleep(seconds: float) -> None:
        clock.sleep(seconds)
        stop.set()

    summary = Watcher(config(tmp_path, live.root), [], clock=clock, sleep=sleep).run(stop)
    assert summary.checks == 1 and summary.ended is None


class Failing:
    def notify(self, event: WatchEvent) -> None:
        raise NotifyError("webhook https://hooks.example/… answered HTTP 500")


def test_a_failing_notifier_is_logged_and_the_event_offered_again(tmp_path):
    live = LiveRun(tmp_path / "run")
    live.grow_to(60)
    logged: list[str] = []
    clock = Clock()
    watcher = Watcher(config(tmp_path, live.root), [Failing()], clock=clock, warn=logged.append)
    assert watcher.check().notified is None and "HTTP 500" in logged[0]
    recorder = Recorder()
    watcher.notifiers = [Failing(), recorder]
    assert watcher.check().notified == "first"  # one notifier took it: delivered
    assert len(recorder.events) == 1


class Hook(http.server.BaseHTTPRequestHandler):
    statuses: ClassVar[list[int]] = []
    bodies: ClassVar[list[dict[str, object]]] = []

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        type(self).bodies.append(json.loads(self.rfile.read(length)))
        status = type(self).statuses.pop(0) if type(self).statuses else 200
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def hook_server():
    Hook.statuses, Hook.bodies = [], []
    server = http.server.HTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hooks/SECRET"
    server.shutdown()
    server.server_close()


def an_event(tmp_path: Path) -> WatchEvent:
    live = LiveRun(tmp_path / "run")
    live.grow_to(200)
    recorder = Recorder()
    Watcher(config(tmp_path, live.root), [recorder], clock=Clock()).check()
    return recorder.events[0]


def test_webhook_posts_json_and_retries_once_on_5xx(tmp_path, hook_server):
    event = an_event(tmp_path)
    waits: list[float] = []
    Hook.statuses = [503]
    WebhookNotifier(hook_server, sleep=waits.append).notify(event)
    assert len(Hook.bodies) == 2 and waits == [2.0]
    body = Hook.bodies[-1]
    assert body["event"] == "first" and body["step"] == 200
    assert isinstance(body["text"], str) and "ROLLBACK" in body["text"]
    assessment = body["assessment"]
    assert isinstance(assessment, dict) and assessment["decision"] == "rollback" and "diagnostics" not in assessment

    Hook.statuses = [500, 502]
    with pytest.raises(NotifyError, match="HTTP 502") as raised:
        WebhookNotifier(hook_server, sleep=waits.append).notify(event)
    assert "SECRET" not in str(raised.value)  # the URL's path often is the webhook's secret
    Hook.statuses = [400]
    with pytest.raises(NotifyError, match="HTTP 400"):
        WebhookNotifier(hook_server, sleep=waits.append).notify(event)
    assert len(Hook.bodies) == 5  # no retry on a 4xx


def test_webhook_unreachable_is_a_notify_error(tmp_path):
    with pytest.raises(NotifyError, match="could not be reached"):
        WebhookNotifier("http://127.0.0.1:9/x", timeout=2).notify(an_event(tmp_path))


def test_notifiers_from_specs(tmp_path, monkeypatch):
    import assessor.integrations.slack as slack

    stdout, webhook, slack_notifier = notifiers_from(["stdout", "webhook:https://hooks.example.com/x", "slack:C123"])
    assert isinstance(stdout, StdoutNotifier) and isinstance(webhook, WebhookNotifier)
    assert isinstance(slack_notifier, slack.SlackNotifier) and slack_notifier.channel == "C123"
    posted: list[tuple[str, str | None]] = []
    monkeypatch.setattr(slack, "slack_client", lambda: object())
    monkeypatch.setattr(slack, "post_assessment",
                        lambda assessment, channel, **kw: posted.append((channel, kw["note"])))
    slack_notifier.notify(an_event(tmp_path))
    assert posted == [("C123", "watch: first")]
    for bad in ("email:me", "webhook:ftp://x", "slack:", "stdout:x"):
        with pytest.raises(ConfigError, match="--notify"):
            notifiers_from([bad])


def test_state_file_is_checked_and_defaults_outside_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    path = default_state_path(tmp_path / "run")
    assert path.parent == tmp_path / "xdg" / "assessor" / "watch" and path.suffix == ".json"
    other = tmp_path / "other.json"
    live = LiveRun(tmp_path / "run")
    live.grow_to(60)
    Watcher(config(tmp_path, live.root, state_path=other), [], clock=Clock()).check()
    assert json.loads(other.read_text(encoding="utf-8"))["last_step"] == 60
    assert not list(other.parent.glob(".other.json.*.tmp"))  # the temporary file was renamed
    with pytest.raises(ConfigError, match="state of another run"):
        load_state(other, tmp_path / "elsewhere")
    other.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="delete it to start over"):
        load_state(other, live.root)


def test_cli_once_exits_with_the_assess_code_and_prints_the_event(tmp_path, capsys):
    live = LiveRun(tmp_path / "run")
    live.grow_to(100)
    state = str(tmp_path / "state.json")
    args = ["watch", str(live.root), "--once", "--state", state]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "step 100: CONTINUE (first check)" in out and "1 checks, 0 LLM calls, 0 saved" in err
    assert main(args) == 0
    assert capsys.readouterr().out == ""  # nothing changed: nothing said
    live.grow_to(220)
    assert main(args) == 11
    out, _ = capsys.readouterr()
    assert "CONTINUE -> ROLLBACK (verdict escalated)" in out
    assert main(["watch", str(live.root), "--once", "--every", "15", "--state", state]) == 2
    assert "invalid duration '15'" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["watch", str(empty), "--once", "--state", str(tmp_path / "e.json")]) == 2
    assert "could not read the run" in capsys.readouterr().err


def test_a_new_checkpoint_alone_is_news(tmp_path):
    live = LiveRun(tmp_path / "run")
    live.grow_to(60)
    watcher = Watcher(config(tmp_path, live.root), [], clock=Clock())
    watcher.check()
    assert watcher.check().reasons[0].startswith("nothing new")
    (live.root / "checkpoint-60").mkdir()
    (live.root / "checkpoint-60" / "model.safetensors").write_bytes(b"")
    assert not watcher.check().reasons


class Flaky(FakeJudge):
    name = "flaky"

    def judge(self, request):
        if not self.requests:
            self.requests.append(request)
            raise RuntimeError("a bug")
        return super().judge(request)


def test_an_unexpected_error_in_a_check_is_logged_and_the_loop_goes_on(tmp_path):
    live = LiveRun(tmp_path / "run")
    live.grow_to(60)
    clock, logged, recorder = Clock(), [], Recorder()
    watcher = Watcher(config(tmp_path, live.root, judge="flaky", idle_timeout=1800.0), [recorder], clock=clock,
                      sleep=clock.sleep, judge_factory=lambda name, **_: Flaky(), warn=logged.append)
    summary = watcher.run()
    assert logged == ["watch: check failed (RuntimeError: a bug); trying again next time"]
    assert [e.kind for e in recorder.events] == ["first", "ended"] and summary.ended is not None


def test_llm_judge_without_its_key_names_the_llm_judge_option(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    live = LiveRun(tmp_path / "run")
    live.grow_to(60)
    code = main(["watch", str(live.root), "--once", "--llm-judge", "anthropic:claude-haiku-4-5",
                 "--state", str(tmp_path / "s.json")])
    err = capsys.readouterr().err
    assert code == 2
    assert "--llm-judge anthropic:claude-haiku-4-5 needs ANTHROPIC_API_KEY" in err
    assert "--judge anthropic" not in err and "leave out --llm-judge" in err


def test_watch_keeps_checking_with_rules_while_the_llm_api_is_down(tmp_path, monkeypatch):
    """The real SDK pointed at a closed port: `--judge auto` and `--llm-judge` both leave the rules verdict."""
    pytest.importorskip("anthropic")
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", dead)
    live = LiveRun(tmp_path / "run")
    live.grow_to(60)
    for i, options in enumerate(({"judge": "auto"}, {"llm_judge": "anthropic:claude-haiku-4-5"})):
        recorder = Recorder()
        watcher = Watcher(config(tmp_path, live.root, state_path=tmp_path / f"s{i}.json", **options), [recorder])
        watcher.judge = get_judge(watcher.config.judge, max_retries=0)  # no SDK back-off in the test
        if watcher.llm_judge is not None:
            watcher.llm_judge = get_judge("anthropic:claude-haiku-4-5", max_retries=0)
        outcome = watcher.check()
        assert outcome.decision == "continue" and outcome.judge == "rules", options
        assert any("could not connect" in r and "ask again next check" in r for r in outcome.reasons), outcome.reasons
        assert recorder.kinds == [("first", "continue")]


def test_ctrl_c_on_a_looping_watch_prints_the_counters(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    live = LiveRun(tmp_path / "run")
    live.grow_to(60)
    state = tmp_path / "state.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "assessor", "watch", str(live.root), "--every", "1h", "--state", str(state)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + 120
        while not state.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert state.exists(), proc.communicate(timeout=10)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Aborted" not in err and "Traceback" not in err
    assert "watch: 1 checks, 0 LLM calls, 0 saved, 1 notifications" in err and "interrupted (Ctrl-C)" in err
    assert "step 60: CONTINUE (first check)" in out


@pytest.mark.parametrize(("every", "options"), [
    ("2m", {}), ("15m", {"cache_ttl": "1h"}), ("1h", {"cache_ttl": "1h"}), ("6h", {}),
])
def test_the_llm_judge_keeps_its_cached_prefix_alive_between_checks(tmp_path, every, options):
    live = LiveRun(tmp_path / "run")
    made: dict[str, dict[str, object]] = {}

    def judges(name: str, **given: object):
        made[name] = given
        return get_judge("rules")

    cfg = config(tmp_path, live.root, llm_judge="stub:llm", every=parse_duration(every))
    watcher = Watcher(cfg, [Recorder()], judge_factory=judges)
    assert made == {}  # made by the first full check (a check that holds its verdict needs none)
    assert watcher.judge is not None and watcher.llm_judge is not None
    assert made["stub:llm"] == options and made["rules"] == {}
