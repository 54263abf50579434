"""The Slack bot: command parsing, the run-name rules, and real Bolt requests answered through the fake Web API.

Socket Mode itself needs a websocket server; the app is driven instead by dispatching the payloads Socket Mode
would deliver (`BoltRequest(mode="socket_mode")`), with its WebClient pointed at `tests.fake_slack`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from slack_bolt import App, BoltRequest, BoltResponse

from assessor.assessment import Assessment
from assessor.cli import main
from assessor.errors import ConfigError, NoMetricsError
from assessor.integrations import slack_bot
from assessor.integrations.schedule import format_duration, parse_duration
from assessor.integrations.slack import dashboard_of, slack_client
from assessor.integrations.slack_bot import (
    BotCommand,
    RunNameError,
    WatcherThread,
    build_app,
    default_watch_factory,
    parse_command,
    resolve_run,
)
from assessor.pipeline import assess
from tests.conftest import EXAMPLES
from tests.fake_slack import BOT_USER, TOKEN, FakeSlack, fake_slack  # noqa: F401  (the fixture)

CHANNEL = "C0RUNS"
MENTION_TS = "1700000100.000100"


# parsing -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    (f"<@{BOT_USER}> assess grpo-7b/run-3", BotCommand("assess", run="grpo-7b/run-3")),
    ("assess run-3", BotCommand("assess", run="run-3")),
    (f"<@{BOT_USER}|assessor>   STATUS ", BotCommand("status")),
    ("watch run-3 every 2h", BotCommand("watch", run="run-3", every=7200.0)),
    ("watch run-3 15m", BotCommand("watch", run="run-3", every=900.0)),
    ("unwatch run-3", BotCommand("unwatch", run="run-3")),
    ("help", BotCommand("help")),
    (f"<@{BOT_USER}>", BotCommand("help")),
    ("assess <http://run.ai|run.ai>", BotCommand("assess", run="run.ai")),  # Slack linkified the name
    ("assess a&amp;b", BotCommand("assess", run="a&b")),
])
def test_parse_command(text: str, expected: BotCommand) -> None:
    assert parse_command(text) == expected


@pytest.mark.parametrize(("text", "problem"), [
    ("deploy run-3", "I do not know `deploy`."),
    ("assess", "`assess` takes one run name"),
    ("assess a b", "`assess` takes one run name"),
    ("watch run-3", "`watch` takes a run and an interval"),
    ("watch run-3 every soon", "I cannot read `soon` as an interval"),
    ("&lt;!channel&gt; now", "I do not know `&lt;!channel&gt;`."),  # typed text, escaped back
])
def test_what_is_not_understood_gets_help(text: str, problem: str) -> None:
    command = parse_command(text)
    assert command.action == "help" and command.problem is not None and command.problem.startswith(problem)
    assert slack_bot.help_text(command.problem).startswith(command.problem + "\n")
    assert "`watch <run> every 2h`" in slack_bot.help_text(command.problem)


def test_durations() -> None:
    assert [parse_duration(t) for t in ("90s", "15m", "2h", "1d", "1h30m", "1.5h")] == [
        90, 900, 7200, 86400, 5400, 5400]
    assert [format_duration(s) for s in (90, 900, 7200, 86400, 5400)] == ["90s", "15m", "2h", "1d", "90m"]
    for bad in ("", "15", "2x", "0m", "-1h"):
        with pytest.raises(ConfigError, match="duration"):
            parse_duration(bad)


# run names ---------------------------------------------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """runs/ with two runs, a symlink inside the root and two that leave it."""
    runs = tmp_path / "runs"
    (runs / "grpo-a").mkdir(parents=True)
    (runs / "sweep" / "run-b").mkdir(parents=True)
    (tmp_path / "secret").mkdir()
    (runs / "latest").symlink_to(runs / "grpo-a")
    (runs / "leak").symlink_to(tmp_path / "secret")
    (runs / "sweep" / "up").symlink_to("..")  # the root itself: inside
    (runs / "sweep" / "out").symlink_to("../..")  # tmp_path: outside
    return runs


def test_resolve_accepts_runs_and_symlinks_inside_the_root(root: Path) -> None:
    real = root.resolve()
    assert resolve_run("grpo-a", [root]) == real / "grpo-a"
    assert resolve_run("sweep/run-b/", [root]) == real / "sweep" / "run-b"
    assert resolve_run("./grpo-a", [root]) == real / "grpo-a"
    assert resolve_run("latest", [root]) == real / "grpo-a"
    assert resolve_run("sweep/up/grpo-a", [root]) == real / "grpo-a"


@pytest.mark.parametrize(("name", "reply"), [
    ("/etc/passwd", "not by an absolute path like `/etc/passwd`"),
    ("~/runs", "not by an absolute path"),
    ("C:\\runs", "not by an absolute path"),
    ("../secret", "cannot step out of my run roots with `..`"),
    ("grpo-a/../../secret", "cannot step out of my run roots with `..`"),
    ("grpo-a\\..\\..\\secret", "cannot step out of my run roots with `..`"),
    ("leak", "`leak` leads outside my run roots (through a symlink)"),
    ("sweep/out/secret", "leads outside my run roots"),
    ("", "Name a run"),
    (".", "is a run root itself"),
    ("nope", "I found no run `nope` in my run roots. Runs I can see: `grpo-a`, `latest`, `sweep`."),
    ("<!channel>", "I found no run `&lt;!channel&gt;`"),
    ("grpo-a\x00/etc", "Run names cannot contain a NUL character"),
])
def test_resolve_refuses(root: Path, name: str, reply: str) -> None:
    with pytest.raises(RunNameError) as raised:
        resolve_run(name, [root])
    assert reply in str(raised.value)
    assert isinstance(raised.value, ConfigError)


def test_several_roots_first_match_or_root_prefix(tmp_path: Path) -> None:
    first, second = tmp_path / "team-a", tmp_path / "team-b"
    for path in (first / "run-1", second / "run-1", second / "run-2"):
        path.mkdir(parents=True)
    assert resolve_run("run-1", [first, second]) == (first / "run-1").resolve()
    assert resolve_run("team-b/run-1", [first, second]) == (second / "run-1").resolve()
    assert resolve_run("run-2", [first, second]) == (second / "run-2").resolve()
    with pytest.raises(RunNameError, match=r"Runs I can see: `team-a/run-1`, `team-b/run-1`, `team-b/run-2`"):
        resolve_run("run-3", [first, second])


def test_roots_must_be_directories(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a directory; pass --root"):
        slack_bot.check_roots([tmp_path / "missing"])
    with pytest.raises(ConfigError, match="at least one run root"):
        slack_bot.check_roots([])


# the app, through Bolt ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def assessed(tmp_path_factory: pytest.TempPathFactory) -> Assessment:
    return assess(EXAMPLES / "trl-grpo-live", "rules", tmp_path_factory.mktemp("plots"))


class FakeWatch:
    def __init__(self, run_dir: Path, every: float, channel: str, thread_ts: str | None) -> None:
        self.run_dir, self.every, self.channel, self.thread_ts = run_dir, every, channel, thread_ts
        self.started = self.stopped = False

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.stopped = True

    def status(self) -> str:
        return f"every {format_duration(self.every)}, last CONTINUE at step 520"


class Bot(SimpleNamespace):
    app: App
    server: FakeSlack
    watches: list[FakeWatch]
    assessed_dirs: list[Path]


@pytest.fixture
def bot(fake_slack: FakeSlack, root: Path, assessed: Assessment) -> Bot:  # noqa: F811
    watches: list[FakeWatch] = []
    assessed_dirs: list[Path] = []
    dashboard = dashboard_of(assessed)
    assert dashboard is not None

    def start_watch(run_dir: Path, every: float, channel: str, thread_ts: str | None) -> FakeWatch:
        watches.append(FakeWatch(run_dir, every, channel, thread_ts))
        return watches[-1]

    def fake_assess(run_dir: Path, judge: str, plot_dir: Path) -> Assessment:
        assert judge == "rules"
        assessed_dirs.append(run_dir)
        if run_dir.name == "sweep":
            raise NoMetricsError(f"no metrics found in {run_dir.name}; point at a run directory")
        shutil.copy(dashboard, plot_dir / "dashboard.png")
        return assessed.model_copy(update={"run": run_dir.name, "plots": [str(plot_dir / "dashboard.png")]})

    app = build_app([root], client=slack_client(TOKEN, fake_slack.base_url), judge="rules",
                    watch_factory=start_watch, assess_fn=fake_assess)
    return Bot(app=app, server=fake_slack, watches=watches, assessed_dirs=assessed_dirs)


def mention(bot: Bot, text: str, ts: str = MENTION_TS, thread_ts: str | None = None) -> BoltResponse:
    event = {"type": "app_mention", "user": "U0HUMAN", "text": f"<@{BOT_USER}> {text}", "ts": ts,
             "channel": CHANNEL, "event_ts": ts, **({"thread_ts": thread_ts} if thread_ts else {})}
    body = {"token": "unused", "team_id": "T0FAKE", "api_app_id": "A0FAKE", "type": "event_callback",
            "event_id": f"Ev{ts}", "event_time": 1700000100, "event": event,
            "authorizations": [{"team_id": "T0FAKE", "user_id": BOT_USER, "is_bot": True}]}
    return bot.app.dispatch(BoltRequest(body=body, mode="socket_mode"))


def slash(bot: Bot, text: str) -> str:
    body = {"token": "unused", "team_id": "T0FAKE", "team_domain": "fake", "channel_id": CHANNEL,
            "channel_name": "runs", "user_id": "U0HUMAN", "user_name": "human", "command": "/assessor",
            "text": text, "api_app_id": "A0FAKE", "response_url": f"{bot.server.url}/respond/1",
            "trigger_id": "1.2.3"}
    response = bot.app.dispatch(BoltRequest(body=body, mode="socket_mode"))
    assert response.status == 200
    return response.body  # ack(text=...) alone answers with the plain text


def replies(bot: Bot, count: int) -> list[dict[str, Any]]:
    """The bot's first `count` chat.postMessage calls, once they have arrived (handlers run in threads)."""
    bot.server.wait_for(lambda s: len(s.calls_to("chat.postMessage")) >= count)
    return [c.args for c in bot.server.calls_to("chat.postMessage")][:count]


def test_app_checks_the_token_at_startup(fake_slack: FakeSlack, root: Path) -> None:  # noqa: F811
    fake_slack.reject_token("xoxb-wrong")
    with pytest.raises(ConfigError, match=r"Slack rejected SLACK_BOT_TOKEN \(invalid_auth\)"):
        build_app([root], client=slack_client("xoxb-wrong", fake_slack.base_url))


def test_mention_is_acknowledged_at_once_then_answered_in_the_thread(bot: Bot, root: Path) -> None:
    assert mention(bot, "assess grpo-a").status == 200

    ack, verdict = replies(bot, 2)
    assert ack["channel"] == CHANNEL and ack["thread_ts"] == MENTION_TS
    assert ack["text"] == "Assessing `grpo-a`… I will post the verdict in this thread."
    assert verdict["thread_ts"] == MENTION_TS and verdict["text"].startswith("🟢 CONTINUE grpo-a: ")
    assert verdict["blocks"][0]["text"]["text"] == "🟢 CONTINUE: grpo-a"
    bot.server.wait_for(lambda s: bool(s.calls_to("files.completeUploadExternal")))
    complete = bot.server.calls_to("files.completeUploadExternal")[0]
    assert complete.args["channel_id"] == CHANNEL and complete.args["thread_ts"] == MENTION_TS
    assert bot.assessed_dirs == [root.resolve() / "grpo-a"]


def test_mention_inside_a_thread_answers_in_that_thread(bot: Bot) -> None:
    mention(bot, "assess grpo-a", ts="1700000200.000200", thread_ts="1700000000.000050")
    ack, verdict = replies(bot, 2)
    assert ack["thread_ts"] == verdict["thread_ts"] == "1700000000.000050"


def test_refused_run_names_are_answered_in_the_thread_and_never_assessed(bot: Bot) -> None:
    mention(bot, "assess ../secret")
    mention(bot, "assess leak", ts="1700000100.000200")
    mention(bot, "assess /etc", ts="1700000100.000300")
    texts = sorted(r["text"] for r in replies(bot, 3))
    assert any("cannot step out of my run roots" in t for t in texts)
    assert any("leads outside my run roots" in t for t in texts)
    assert any("not by an absolute path" in t for t in texts)
    assert bot.assessed_dirs == []


def test_a_failed_assessment_is_answered_in_the_thread(bot: Bot) -> None:
    mention(bot, "assess sweep")
    _, failure = replies(bot, 2)
    assert failure["thread_ts"] == MENTION_TS
    assert failure["text"] == "I could not assess `sweep`: no metrics found in sweep; point at a run directory"


def test_unknown_command_gets_the_help(bot: Bot) -> None:
    mention(bot, "deploy to prod")
    (reply,) = replies(bot, 1)
    assert reply["thread_ts"] == MENTION_TS
    assert reply["text"].startswith("I do not know `deploy`.\nI read RL post-training runs")


def test_watch_status_unwatch_by_mention(bot: Bot, root: Path) -> None:
    mention(bot, "watch latest every 2h")
    (reply,) = replies(bot, 1)
    assert reply["text"] == "Now watching `grpo-a` every 2h; results will be posted here."
    (watch,) = bot.watches
    assert (watch.run_dir, watch.every, watch.channel, watch.thread_ts) == (
        root.resolve() / "grpo-a", 7200.0, CHANNEL, MENTION_TS)
    assert watch.started and not watch.stopped

    mention(bot, "status", ts="1700000100.000200")
    assert replies(bot, 2)[1]["text"] == "Watching 1 run:\n• `grpo-a`: every 2h, last CONTINUE at step 520"

    mention(bot, "unwatch grpo-a", ts="1700000100.000300")
    assert replies(bot, 3)[2]["text"] == "Stopped watching `grpo-a`."
    assert watch.stopped

    mention(bot, "status", ts="1700000100.000400")
    assert replies(bot, 4)[3]["text"].startswith("I am not watching any runs.")


def test_slash_command_acks_at_once_and_posts_the_verdict_in_the_channel(bot: Bot) -> None:
    assert slash(bot, "assess sweep/run-b") == "Assessing `sweep/run-b`… I will post the verdict here."
    (verdict,) = replies(bot, 1)
    assert verdict["channel"] == CHANNEL and "thread_ts" not in verdict
    assert verdict["blocks"][0]["text"]["text"] == "🟢 CONTINUE: run-b"


def test_slash_command_watch_status_unwatch(bot: Bot) -> None:
    assert slash(bot, "watch grpo-a every 30m") == "Now watching `grpo-a` every 30m; results will be posted here."
    assert slash(bot, "watch grpo-a every 1h") == "Still watching `grpo-a` every 1h; results will be posted here."
    first, second = bot.watches
    assert first.stopped and second.started and second.thread_ts is None
    assert slash(bot, "status") == "Watching 1 run:\n• `grpo-a`: every 1h, last CONTINUE at step 520"
    assert slash(bot, "unwatch grpo-a") == "Stopped watching `grpo-a`."
    assert slash(bot, "unwatch grpo-a") == "I was not watching `grpo-a`. `status` lists what I watch."
    assert slash(bot, "assess ../x").startswith("Run names cannot step out of my run roots")
    assert slash(bot, "").startswith("I read RL post-training runs")
    assert bot.server.calls_to("chat.postMessage") == []


def test_slash_command_failure_after_the_ack_goes_to_the_response_url(bot: Bot) -> None:
    assert slash(bot, "assess sweep").startswith("Assessing `sweep`…")
    bot.server.wait_for(lambda s: bool(s.calls_to("respond")))
    assert bot.server.calls_to("respond")[0].args["text"].startswith("I could not assess `sweep`: no metrics")


# the default watch factory: a real Watcher in a thread --------------------------------------------------------------


def test_default_watch_factory_runs_a_watcher_thread(
    fake_slack: FakeSlack, root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,  # noqa: F811
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the watch's state file stays in the test
    shutil.copytree(EXAMPLES / "trl-grpo-live", root / "live")
    factory = default_watch_factory(slack_client(TOKEN, fake_slack.base_url), "rules", [root])
    watch = factory(root / "live", 7200.0, CHANNEL, MENTION_TS)
    assert isinstance(watch, WatcherThread)
    assert watch.status() == "every 2h, no check yet"

    watch.start()
    fake_slack.wait_for(lambda s: bool(s.calls_to("chat.postMessage")))
    message = fake_slack.calls_to("chat.postMessage")[0]
    assert message.args["channel"] == CHANNEL and message.args["thread_ts"] == MENTION_TS
    assert message.json_arg("blocks")[0]["elements"][0]["text"] == "watch: first"
    watch.stop()
    assert watch.thread is not None
    watch.thread.join(timeout=10)
    assert watch.status() == "every 2h, last CONTINUE at step 520, stopped"


# serving -----------------------------------------------------------------------------------------------------------


def test_bot_needs_an_app_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], root: Path,
) -> None:
    monkeypatch.delenv("SLACK_APP_TOKEN", raising=False)
    assert main(["slack", "bot", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: SLACK_APP_TOKEN is not set; the bot connects in Socket Mode") and err.count("\n") == 1

    monkeypatch.setenv("SLACK_APP_TOKEN", "xoxb-not-an-app-token")
    assert main(["slack", "bot", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "SLACK_APP_TOKEN is not an app-level token (xapp-…)" in err and "xoxb-not-an-app-token" not in err


def test_bot_serves_in_socket_mode_with_the_environment(
    fake_slack: FakeSlack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],  # noqa: F811
    root: Path,
) -> None:
    started: list[tuple[App, str]] = []
    monkeypatch.setattr(slack_bot, "run_socket_mode", lambda app, token: started.append((app, token)))
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1-fake")
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("ASSESSOR_SLACK_BASE_URL", fake_slack.base_url)

    assert main(["slack", "bot", "--root", str(root), "--judge", "rules"]) == 0
    ((app, app_token),) = started
    assert app_token == "xapp-1-fake" and app.client.base_url == fake_slack.base_url
    assert "Slack bot ready (judge rules)" in capsys.readouterr().err
    assert {c.method for c in fake_slack.calls} == {"auth.test"}


# files that lead out of the roots ----------------------------------------------------------------------------------


def leaky_run(root: Path, outside: Path) -> Path:
    """A run whose own log has 40 steps and whose `metrics.jsonl` links to a 999-step file outside the root."""
    run = root / "leaky"
    run.mkdir()
    outside.mkdir()
    for path, last in ((run / "inside.jsonl", 40), (outside / "secret.jsonl", 999)):
        path.write_text("".join(json.dumps({"step": s, "reward": 0.5, "kl": 0.01}) + "\n" for s in range(1, last + 1)),
                        encoding="utf-8")
    (run / "metrics.jsonl").symlink_to(outside / "secret.jsonl")
    return run


def test_assess_reads_no_file_that_leads_outside_the_roots(fake_slack: FakeSlack, root: Path,  # noqa: F811
                                                           tmp_path: Path) -> None:
    leaky_run(root, tmp_path / "outside")
    seen: list[Assessment] = []

    def real_assess(run_dir: Path, judge: str, plot_dir: Path) -> Assessment:
        seen.append(assess(run_dir, judge, plot_dir, plots=False))
        return seen[-1]

    app = build_app([root], client=slack_client(TOKEN, fake_slack.base_url), judge="rules",
                    watch_factory=lambda *args: pytest.fail("no watch here"), assess_fn=real_assess)
    bot = Bot(app=app, server=fake_slack, watches=[], assessed_dirs=[])
    mention(bot, "assess leaky")
    replies(bot, 2)
    (assessment,) = seen
    assert assessment.last_step == 40  # the 999 steps behind the symlink were not read


def test_a_watch_reads_no_file_that_leads_outside_the_roots(
    fake_slack: FakeSlack, root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,  # noqa: F811
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    run = leaky_run(root, tmp_path / "outside")
    watch = default_watch_factory(slack_client(TOKEN, fake_slack.base_url), "rules", [root])(
        run, 7200.0, CHANNEL, MENTION_TS)
    assert isinstance(watch, WatcherThread)
    watch.start()
    fake_slack.wait_for(lambda s: bool(s.calls_to("chat.postMessage")))
    watch.stop()
    assert watch.thread is not None
    watch.thread.join(timeout=10)
    assert watch.watcher is not None and watch.watcher.last is not None
    assert watch.watcher.last.assessment is not None and watch.watcher.last.assessment.last_step == 40
