"""Posting to Slack: the real slack_sdk against the local fake Web API in `tests.fake_slack` (no network)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.http_retry import builtin_handlers
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from assessor.assessment import Assessment
from assessor.cli import main
from assessor.errors import ConfigError
from assessor.integrations import slack
from assessor.integrations.slack import (
    PostedMessage,
    SlackError,
    SlackNotifier,
    post_assessment,
    post_run,
    slack_client,
    verdict_blocks,
    verdict_text,
)
from assessor.judge.models import Evidence
from assessor.pipeline import assess
from tests.conftest import EXAMPLES
from tests.fake_slack import TOKEN, FakeSlack, fake_slack  # noqa: F401  (the fixture)

TRL = EXAMPLES / "trl-grpo-live"


@pytest.fixture(scope="module")
def assessed(tmp_path_factory: pytest.TempPathFactory) -> Assessment:
    """The rules judge's assessment of the bundled TRL run, with its plots on disk."""
    return assess(TRL, "rules", tmp_path_factory.mktemp("plots"))


@pytest.fixture
def dashboard(assessed: Assessment) -> Path:
    path = slack.dashboard_of(assessed)
    assert path is not None
    return path


@pytest.fixture
def client(fake_slack: FakeSlack) -> WebClient:  # noqa: F811
    return slack_client(TOKEN, fake_slack.base_url)


@pytest.fixture
def slack_env(monkeypatch: pytest.MonkeyPatch, fake_slack: FakeSlack) -> FakeSlack:  # noqa: F811
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("ASSESSOR_SLACK_BASE_URL", fake_slack.base_url)
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    return fake_slack


def block_texts(blocks: list[dict[str, Any]]) -> list[str]:
    texts = []
    for block in blocks:
        if "text" in block:
            texts.append(block["text"]["text"])
        texts += [element["text"] for element in block.get("elements", [])]
    return texts


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# posting -----------------------------------------------------------------------------------------------------------


def test_post_sends_the_verdict_then_uploads_the_dashboard_into_its_thread(
    fake_slack: FakeSlack, client: WebClient, assessed: Assessment, dashboard: Path,  # noqa: F811
) -> None:
    posted = post_assessment(assessed, "C0TEST", client=client, dashboard=dashboard,
                             report_location="https://ci.example/run/7/report.html")

    assert [c.method for c in fake_slack.calls] == [
        "chat.postMessage", "files.getUploadURLExternal", "upload", "files.completeUploadExternal"]
    assert all(c.token == TOKEN for c in fake_slack.calls if c.method not in ("upload",))
    message = fake_slack.calls_to("chat.postMessage")[0]
    assert message.args["channel"] == "C0TEST"
    blocks = message.json_arg("blocks")
    assert blocks[0]["type"] == "header"
    assert blocks[0]["text"]["text"] == "🟢 CONTINUE: trl-grpo-live"
    texts = "\n".join(block_texts(blocks))
    assert assessed.verdict.headline in texts
    assert "judge `rules`" in texts and f"confidence *{assessed.verdict.confidence:.0%}*" in texts
    assert f"*{assessed.verdict.evidence[0].signal}*" in texts
    assert "<https://ci.example/run/7/report.html|https://ci.example/run/7/report.html>" in texts
    assert message.args["text"].startswith("🟢 CONTINUE trl-grpo-live: ")

    url_request = fake_slack.calls_to("files.getUploadURLExternal")[0]
    assert url_request.args["filename"] == "dashboard.png"
    assert int(url_request.args["length"]) == dashboard.stat().st_size
    assert fake_slack.uploads[posted.file_id or ""] == dashboard.read_bytes()
    complete = fake_slack.calls_to("files.completeUploadExternal")[0]
    assert complete.args["channel_id"] == "C0TEST"
    assert complete.args["thread_ts"] == posted.ts  # the dashboard sits under the verdict, not beside it
    assert complete.json_arg("files") == [{"id": posted.file_id, "title": "trl-grpo-live: dashboard"}]
    assert posted == PostedMessage(channel="C0TEST", ts=message_ts(fake_slack), file_id=posted.file_id)


def message_ts(server: FakeSlack) -> str:
    return "1700000000.000001"  # the fake numbers its messages from 1


def test_a_reply_goes_into_the_given_thread_with_its_dashboard(
    fake_slack: FakeSlack, client: WebClient, assessed: Assessment, dashboard: Path,  # noqa: F811
) -> None:
    post_assessment(assessed, "C0TEST", client=client, dashboard=dashboard, thread_ts="1699999999.000100",
                    note="watch: decision changed")

    message = fake_slack.calls_to("chat.postMessage")[0]
    assert message.args["thread_ts"] == "1699999999.000100"
    assert block_texts(message.json_arg("blocks"))[0] == "watch: decision changed"
    assert fake_slack.calls_to("files.completeUploadExternal")[0].args["thread_ts"] == "1699999999.000100"


def test_without_a_dashboard_only_the_message_is_posted(
    fake_slack: FakeSlack, client: WebClient, assessed: Assessment, tmp_path: Path,  # noqa: F811
) -> None:
    posted = post_assessment(assessed, "C0TEST", client=client, dashboard=tmp_path / "missing.png")
    assert [c.method for c in fake_slack.calls] == ["chat.postMessage"]
    assert posted.file_id is None


def test_rate_limited_call_is_retried_after_retry_after(
    fake_slack: FakeSlack, client: WebClient, assessed: Assessment, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    # slack_sdk sleeps Retry-After plus up to a second of jitter: record the wait instead of sleeping it.
    waits: list[float] = []
    monkeypatch.setattr(builtin_handlers, "time", SimpleNamespace(sleep=waits.append))
    fake_slack.rate_limit("chat.postMessage", times=1, retry_after="1")

    posted = post_assessment(assessed, "C0TEST", client=client)

    attempts = fake_slack.calls_to("chat.postMessage")
    assert [a.status for a in attempts] == [429, 200]
    assert attempts[0].args == attempts[1].args
    assert len(waits) == 1 and 1 <= waits[0] < 2
    assert posted.ts == "1700000000.000001"


def test_rate_limited_for_good_is_a_one_line_error(
    fake_slack: FakeSlack, client: WebClient, assessed: Assessment, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    monkeypatch.setattr(builtin_handlers, "time", SimpleNamespace(sleep=lambda seconds: None))
    fake_slack.rate_limit("chat.postMessage", times=10, retry_after="0")

    with pytest.raises(SlackError, match=r"rate-limiting .*try again in a minute"):
        post_assessment(assessed, "C0TEST", client=client)
    assert len(fake_slack.calls_to("chat.postMessage")) == 1 + slack.RATE_LIMIT_RETRIES


@pytest.mark.parametrize(("error", "extra", "expected"), [
    ("channel_not_found", {}, r"no channel 'C0TEST' the bot can see \(channel_not_found\); pass the channel ID"),
    ("not_in_channel", {}, r"cannot post in 'C0TEST' \(not_in_channel\); invite it with /invite"),
    ("missing_scope", {"needed": "files:write", "provided": "chat:write"},
     r"lacks the files:write scope \(missing_scope\); add it under OAuth & Permissions"),
])
def test_slack_errors_say_the_fix(
    fake_slack: FakeSlack, client: WebClient, assessed: Assessment, dashboard: Path,  # noqa: F811
    error: str, extra: dict[str, str], expected: str,
) -> None:
    method = "files.getUploadURLExternal" if error == "missing_scope" else "chat.postMessage"
    fake_slack.fail(method, error, **extra)
    with pytest.raises(ConfigError, match=expected) as raised:
        post_assessment(assessed, "C0TEST", client=client, dashboard=dashboard)
    assert "\n" not in str(raised.value) and TOKEN not in str(raised.value)


def test_unreachable_slack_names_the_base_url(assessed: Assessment, monkeypatch: pytest.MonkeyPatch) -> None:
    closed = FakeSlack().start()
    closed.stop()  # its port now refuses connections
    monkeypatch.setattr(builtin_handlers, "time", SimpleNamespace(sleep=lambda seconds: None))
    client = slack_client(TOKEN, closed.base_url)
    client.retry_handlers = [h for h in client.retry_handlers if isinstance(h, RateLimitErrorRetryHandler)]
    with pytest.raises(SlackError, match=r"could not reach Slack at http://127\.0\.0\.1:\d+/api/ .*ASSESSOR_SLACK"):
        post_assessment(assessed, "C0TEST", client=client)


def test_slack_notifier_posts_a_watch_event(
    fake_slack: FakeSlack, client: WebClient, assessed: Assessment,  # noqa: F811
) -> None:
    event = SimpleNamespace(assessment=assessed, kind="changed")
    SlackNotifier("C0WATCH", client=client, thread_ts="1699999999.000200").notify(event)
    message = fake_slack.calls_to("chat.postMessage")[0]
    assert message.args["channel"] == "C0WATCH" and message.args["thread_ts"] == "1699999999.000200"
    assert block_texts(message.json_arg("blocks"))[0] == "watch: changed"
    assert len(fake_slack.uploads) == 1  # the dashboard the assessment wrote


# blocks ------------------------------------------------------------------------------------------------------------


def test_untrusted_text_cannot_ping_or_link(assessed: Assessment) -> None:
    hostile = assessed.model_copy(update={
        "run": "<!channel> & <@U0BOSS>",
        "verdict": assessed.verdict.model_copy(update={
            "headline": "Ask <!here> now",
            "evidence": [Evidence(signal="<#C0GENERAL>", observation="see <https://evil.example|the docs> `x`")],
            "risks": ["<!subteam^S0OPS> & friends"],
        }),
    })
    blocks = verdict_blocks(hostile, report_location="reports/<!everyone>.html")
    everything = json.dumps(blocks, ensure_ascii=False) + verdict_text(hostile)
    assert "<" not in everything and ">" not in everything
    assert "&lt;!channel&gt; &amp; &lt;@U0BOSS&gt;" in blocks[0]["text"]["text"]
    assert "&lt;!here&gt;" in verdict_text(hostile)
    assert "`reports/&lt;!everyone&gt;.html`" in block_texts(blocks)[-1]
    assert all(b["text"].get("verbatim") for b in blocks if b["type"] == "section")


def test_blocks_fit_slack_limits(assessed: Assessment) -> None:
    long = assessed.model_copy(update={
        "run": "r" * 400,
        "verdict": assessed.verdict.model_copy(update={
            "headline": "&" * 4000,
            "evidence": [Evidence(signal=f"s{i}", observation="x" * 2000) for i in range(9)],
        }),
    })
    blocks = verdict_blocks(long)
    assert len(blocks[0]["text"]["text"]) <= slack.HEADER_LIMIT
    assert all(len(text) <= slack.SECTION_LIMIT for text in block_texts(blocks))
    headline = block_texts(blocks)[2]
    assert headline.endswith("&amp;…*")  # cut between entities, never inside one, and still bold
    evidence = next(t for t in block_texts(blocks) if t.startswith("*Evidence*"))
    assert "*s4*" in evidence and "*s5*" not in evidence
    assert len(verdict_text(long)) <= slack.FALLBACK_LIMIT


def test_rollback_shows_its_target(assessed: Assessment) -> None:
    rollback = assessed.model_copy(update={"verdict": assessed.verdict.model_copy(update={
        "decision": "rollback", "rollback_step": 300, "rollback_checkpoint": "checkpoint-300"})})
    blocks = verdict_blocks(rollback)
    assert blocks[0]["text"]["text"] == "🟠 ROLL BACK: trl-grpo-live"
    assert ":rewind: Roll back to *step 300* (`checkpoint-300`)" in block_texts(blocks)


# client ------------------------------------------------------------------------------------------------------------


def test_client_reads_the_environment_and_honours_retry_after() -> None:
    client = slack_client(env={"SLACK_BOT_TOKEN": " xoxb-1 ", "ASSESSOR_SLACK_BASE_URL": "http://127.0.0.1:9/api"})
    assert client.token == "xoxb-1"
    assert client.base_url == "http://127.0.0.1:9/api/"
    assert any(isinstance(h, RateLimitErrorRetryHandler) for h in client.retry_handlers)
    assert slack_client(env={"SLACK_BOT_TOKEN": "xoxb-1"}).base_url == "https://slack.com/api/"


def test_missing_token_says_how_to_get_one() -> None:
    with pytest.raises(ConfigError, match=r"SLACK_BOT_TOKEN is not set; export the Bot User OAuth Token"):
        slack_client(env={})


def test_missing_sdk_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def without_slack(name: str, package: str | None = None) -> Any:
        if name.startswith("slack_sdk"):
            raise ImportError(name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", without_slack)
    with pytest.raises(ConfigError, match=r'pip install "assessor\[slack\]"'):
        slack_client("xoxb-1")


def test_scrub_removes_tokens() -> None:
    assert slack.scrub("bad xoxb-123-abc and xapp-1-A0-9", "xoxb-123-abc") == "bad xox… and xox…"


# post_run and the CLI ----------------------------------------------------------------------------------------------


def test_post_run_writes_reports_and_links_them(slack_env: FakeSlack, tmp_path: Path) -> None:
    assessment, posted = post_run(TRL, "C0TEST", judge="rules", out_dir=tmp_path)
    assert (tmp_path / "report.html").is_file() and assessment.plots
    texts = block_texts(slack_env.calls_to("chat.postMessage")[0].json_arg("blocks"))
    assert f"Full report: `{(tmp_path / 'report.html').resolve()}`" in texts
    assert slack_env.uploads[posted.file_id or ""] == (tmp_path / "dashboard.png").read_bytes()


def test_post_run_without_out_leaves_no_stale_plot_paths(slack_env: FakeSlack) -> None:
    assessment, posted = post_run(TRL, "C0TEST", judge="rules")
    assert assessment.plots == [] and posted.file_id in slack_env.uploads


def test_cli_posts_and_exits_with_the_decision(
    slack_env: FakeSlack, capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    shutil.copytree(TRL, run)
    code, out, _ = run_cli(capsys, "slack", "post", str(run), "--channel", "C0TEST", "--judge", "rules",
                           "--report-url", "https://ci.example/7")
    assert code == 0  # continue
    assert out == "posted continue for run to C0TEST (ts 1700000000.000001, with the dashboard)\n"
    assert [c.method for c in slack_env.calls] == [
        "auth.test", "chat.postMessage", "files.getUploadURLExternal", "upload", "files.completeUploadExternal"]
    texts = block_texts(slack_env.calls_to("chat.postMessage")[0].json_arg("blocks"))
    assert "Full report: <https://ci.example/7|https://ci.example/7>" in texts


def test_cli_with_a_rejected_token_is_a_one_line_error_without_the_token(
    slack_env: FakeSlack, capsys: pytest.CaptureFixture[str],
) -> None:
    slack_env.reject_token(TOKEN)
    code, out, err = run_cli(capsys, "slack", "post", str(TRL), "--channel", "C0TEST", "--judge", "rules")
    assert code == 2
    assert err.startswith("Error: Slack rejected SLACK_BOT_TOKEN (invalid_auth); set it to the Bot User OAuth Token")
    assert err.count("\n") == 1
    assert TOKEN not in out + err
    assert [c.method for c in slack_env.calls] == ["auth.test"]  # refused before assessing or posting


def test_cli_without_a_token_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    code, _, err = run_cli(capsys, "slack", "post", str(TRL), "--channel", "C0TEST", "--judge", "rules")
    assert code == 2
    assert err.startswith("Error: SLACK_BOT_TOKEN is not set;") and err.count("\n") == 1


def test_cli_slack_help_lists_both_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "slack", "--help")
    assert code == 0 and "post" in out and "bot" in out
