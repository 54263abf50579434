"""Post an assessment to Slack: the verdict as Block Kit, the dashboard as a file in the same thread.

`slack_client()` builds a `slack_sdk.WebClient` from `SLACK_BOT_TOKEN` (and `ASSESSOR_SLACK_BASE_URL`, which points
it at another server, e.g. a local fake in tests) that waits out 429s as Slack's `Retry-After` asks.
`post_assessment()` posts one verdict; `post_run()` assesses a run directory and posts it (`assessor slack post`).

Everything a run or a judge wrote (run names, evidence, risks) is untrusted: it is escaped for Slack's mrkdwn
(`&`, `<`, `>`), so a run named `<!channel>` pings nobody, and cut to Slack's block limits. Slack errors become
one-line `AssessorError`s that say the fix; the token never appears in them.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import urllib.error
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from assessor.assessment import Assessment
from assessor.errors import AssessorError, ConfigError
from assessor.printable import printable
from assessor.report.assessment_text import (
    DECISION_LABEL,
    cost_label,
    missing_checkpoint,
    rollback_label,
    run_label,
    steps_label,
)

if TYPE_CHECKING:
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError

log = logging.getLogger(__name__)

TOKEN_VARIABLE = "SLACK_BOT_TOKEN"
BASE_URL_VARIABLE = "ASSESSOR_SLACK_BASE_URL"
DEFAULT_BASE_URL = "https://slack.com/api/"
INSTALL_HINT = 'pip install "assessor[slack]"'

DECISION_EMOJI = {"continue": "🟢", "stop": "🔴", "rollback": "🟠"}
# Slack's limits (https://docs.slack.dev/reference/block-kit/blocks): longer text is rejected, not cut.
HEADER_LIMIT = 150
SECTION_LIMIT = 3000
CONTEXT_LIMIT = 3000
FALLBACK_LIMIT = 3000
EVIDENCE_SHOWN = 5
RISKS_SHOWN = 3
ITEM_LIMIT = 500  # per evidence item or risk, so one long observation cannot push the others out of the block
RATE_LIMIT_RETRIES = 3

_TOKEN_ERRORS = {"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "no_permission"}
_PARTIAL_ENTITY = re.compile(r"&[a-z]{0,3}$")


class SlackError(AssessorError):
    """Slack could not be reached or kept failing (not a configuration mistake): exit code 1."""

    exit_code = 1


@dataclass(frozen=True)
class PostedMessage:
    """Where a verdict landed.

    Attributes:
        channel: The channel ID Slack posted into.
        ts: The message timestamp (its ID; the thread to answer in).
        file_id: The uploaded dashboard, or None when none was uploaded.
    """

    channel: str
    ts: str
    file_id: str | None = None


class WatchEvent(Protocol):
    """What a watcher hands its notifiers (see `assessor.integrations.watch`)."""

    @property
    def assessment(self) -> Assessment:
        """The assessment the event is about."""
        ...

    @property
    def kind(self) -> str:
        """Why the watcher raised it (e.g. the decision changed)."""
        ...


# client ------------------------------------------------------------------------------------------------------------


def slack_client(
    token: str | None = None, base_url: str | None = None, env: Mapping[str, str] | None = None,
) -> WebClient:
    """A `slack_sdk.WebClient` for the bot, retrying rate-limited calls after Slack's `Retry-After`.

    Args:
        token: The bot token (`xoxb-…`); default `SLACK_BOT_TOKEN`.
        base_url: The Web API base URL; default `ASSESSOR_SLACK_BASE_URL`, else `https://slack.com/api/`.
        env: Where the variables are read from; default `os.environ`.

    Returns:
        The client.

    Raises:
        ConfigError: slack_sdk is not installed, or no token was given.
    """
    sdk = _require("slack_sdk")
    from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

    env = os.environ if env is None else env
    token = (token or env.get(TOKEN_VARIABLE) or "").strip()
    if not token:
        raise ConfigError(
            f"{TOKEN_VARIABLE} is not set; export the Bot User OAuth Token (xoxb-…) of a Slack app with the "
            "chat:write and files:write scopes (README, \"Slack\")"
        )
    url = (base_url or env.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL).strip()
    client: WebClient = sdk.WebClient(
        token=token,
        base_url=url if url.endswith("/") else url + "/",  # slack_sdk joins method names onto it verbatim
        retry_handlers=[ConnectionErrorRetryHandler(), RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES)],
    )
    return client


def _require(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ConfigError(f"Slack support needs {module}, which is not installed; run: {INSTALL_HINT}") from error


# blocks ------------------------------------------------------------------------------------------------------------


def escape(text: object) -> str:
    """Untrusted text made inert for Slack: `&`, `<`, `>` as entities (no mentions, links or `<!channel>`).

    Control characters are dropped; newlines are kept.
    """
    clean = printable(text, "")
    return clean.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clip(text: str, limit: int) -> str:
    """Escaped text cut to `limit` characters with an ellipsis, never in the middle of an `&amp;` entity."""
    if len(text) <= limit:
        return text
    return _PARTIAL_ENTITY.sub("", text[: limit - 1]) + "…"


def inline_code(text: object) -> str:
    """Untrusted text as an inline code span (a backtick would close the span early: it becomes a quote)."""
    flat = " ".join(escape(text).split()).replace("`", "'")
    return f"`{flat}`"


def verdict_text(assessment: Assessment) -> str:
    """The one-line fallback Slack shows in notifications and where blocks cannot be drawn.

    Args:
        assessment: What `assessor.pipeline.assess` returned.

    Returns:
        E.g. `🟠 ROLL BACK my-run: Eval peaked at step 120 and fell since.` (escaped, at most 3000 characters).
    """
    v = assessment.verdict
    text = f"{DECISION_EMOJI[v.decision]} {DECISION_LABEL[v.decision]} {escape(assessment.run)}: {escape(v.headline)}"
    return clip(" ".join(text.split()), FALLBACK_LIMIT)


def verdict_blocks(
    assessment: Assessment, report_location: str | None = None, note: str | None = None,
) -> list[dict[str, Any]]:
    """The verdict as Block Kit blocks: decision, headline, rollback target, evidence, risks, report location.

    Args:
        assessment: What `assessor.pipeline.assess` returned.
        report_location: A URL (linked) or a path (shown as code) where the full report is.
        note: A line shown above the verdict (e.g. why a watcher posted it); trusted text, still escaped.

    Returns:
        The blocks for `chat.postMessage`.
    """
    a = assessment
    v = a.verdict
    blocks: list[dict[str, Any]] = []
    if note:
        blocks.append(_context(escape(note)))
    header = f"{DECISION_EMOJI[v.decision]} {DECISION_LABEL[v.decision]}: {' '.join(escape(a.run).split())}"
    blocks.append({"type": "header", "text": {"type": "plain_text", "text": clip(header, HEADER_LIMIT), "emoji": True}})
    facts = [escape(run_label(a)), f"judge {inline_code(a.judge)}", f"confidence *{v.confidence:.0%}*"]
    blocks.append(_context(" · ".join(facts)))
    blocks.append(_section(f"*{clip(_flat(v.headline), SECTION_LIMIT - 2)}*"))  # cut inside the bold markers
    if rollback_label(a):
        where = inline_code(v.rollback_checkpoint) if v.rollback_checkpoint else escape(missing_checkpoint(a))
        blocks.append(_section(f":rewind: Roll back to *step {v.rollback_step}* ({where})"))
    cost = cost_label(a)
    if cost:
        blocks.append(_context(f"Spent: {escape(cost)}"))
    if v.evidence:
        lines = []
        for item in v.evidence[:EVIDENCE_SHOWN]:
            steps = f" _({steps_label(item.steps)})_" if item.steps else ""
            lines.append(f"• *{clip(_flat(item.signal), 80)}*: {clip(_flat(item.observation), ITEM_LIMIT)}{steps}")
        more = len(v.evidence) - EVIDENCE_SHOWN
        if more > 0:
            lines.append(f"_…and {more} more in the report_")
        blocks.append(_section("*Evidence*\n" + "\n".join(lines)))
    if v.risks:
        risks = [f"• {clip(_flat(risk), ITEM_LIMIT)}" for risk in v.risks[:RISKS_SHOWN]]
        blocks.append(_section("*Risks*\n" + "\n".join(risks)))
    if report_location:
        blocks.append(_context(f"Full report: {_location(report_location)}"))
    return blocks


def _flat(text: str) -> str:
    return " ".join(escape(text).split())


def _section(mrkdwn: str) -> dict[str, Any]:
    # verbatim: Slack does not auto-link names or URLs in run-supplied text.
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(mrkdwn, SECTION_LIMIT), "verbatim": True}}


def _context(mrkdwn: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(mrkdwn, CONTEXT_LIMIT), "verbatim": True}]}


def _location(location: str) -> str:
    if re.match(r"https?://", location) and not re.search(r"[\s|<>]", location):
        return f"<{escape(location)}|{escape(location)}>"
    return inline_code(location)


# posting -----------------------------------------------------------------------------------------------------------


def post_assessment(
    assessment: Assessment, channel: str, *, client: WebClient | None = None, dashboard: Path | None = None,
    report_location: str | None = None, thread_ts: str | None = None, note: str | None = None,
) -> PostedMessage:
    """Post the verdict to a channel, then upload the dashboard into the message's thread.

    The dashboard goes through Slack's current upload flow (`files_upload_v2`: files.getUploadURLExternal, the
    upload itself, files.completeUploadExternal), shared into `channel` and the thread of the verdict.

    Args:
        assessment: What `assessor.pipeline.assess` returned.
        channel: A channel ID (`C0123…`) the bot is a member of.
        client: A client from `slack_client()`; default one built from the environment.
        dashboard: The dashboard PNG to upload; none is uploaded when None or missing.
        report_location: Where the full report is (URL or path), shown under the verdict.
        thread_ts: Post as a reply in this thread instead of a new message.
        note: A line shown above the verdict.

    Returns:
        Where it landed.

    Raises:
        ConfigError: Slack rejected the token, channel or scopes (the message says which and the fix).
        SlackError: Slack could not be reached, or failed in another way.
    """
    client = client or slack_client()
    with slack_errors(client, channel):
        response = client.chat_postMessage(
            channel=channel, text=verdict_text(assessment), blocks=verdict_blocks(assessment, report_location, note),
            thread_ts=thread_ts, unfurl_links=False, unfurl_media=False,
        )
        posted_channel = str(response.get("channel") or channel)
        ts = str(response["ts"])
        file_id = None
        if dashboard is not None and dashboard.is_file():
            upload = client.files_upload_v2(
                file=str(dashboard), filename=dashboard.name, title=f"{assessment.run}: dashboard",
                alt_txt=f"Training dashboard of {assessment.run}", channel=posted_channel,
                thread_ts=thread_ts or ts,
            )
            file_id = str(upload["file"]["id"]) if upload.get("file") else None
    return PostedMessage(channel=posted_channel, ts=ts, file_id=file_id)


def post_run(
    run_dir: str | Path, channel: str, *, judge: str = "auto", out_dir: Path | None = None,
    client: WebClient | None = None, report_url: str | None = None, images: bool = True,
    thread_ts: str | None = None, note: str | None = None,
) -> tuple[Assessment, PostedMessage]:
    """Assess a run directory and post the verdict with its dashboard (`assessor slack post`).

    Args:
        run_dir: The run directory (or one log file).
        channel: The channel ID to post into.
        judge: A judge name, as for `assessor assess --judge`.
        out_dir: Where the plots and reports (report.html, report.md, verdict.json) are written; without it the
            plots are drawn in a temporary folder, deleted after the upload.
        client: A client from `slack_client()`; default one built from the environment.
        report_url: Where readers find the full report (e.g. the CI artifact URL); default the report.html
            written into `out_dir`, if any.
        images: False keeps LLM judges from being sent the dashboard image.
        thread_ts: Post as a reply in this thread.
        note: A line shown above the verdict.

    Returns:
        The assessment (with no plot paths when they were temporary) and where it was posted.
    """
    from assessor.pipeline import assess
    from assessor.report.html import write_reports

    client = client or slack_client()
    with slack_errors(client, channel):
        client.auth_test()  # a wrong token fails now, not after a long (and, with LLM judges, paid) assessment
    with _plot_folder(out_dir) as folder:
        assessment = assess(run_dir, judge, folder, plots=True, images=images)
        location = report_url
        if out_dir is not None:
            report = write_reports(assessment, out_dir)[0]
            location = location or str(report.resolve())
        posted = post_assessment(assessment, channel, client=client, dashboard=folder / "dashboard.png",
                                 report_location=location, thread_ts=thread_ts, note=note)
    if out_dir is None:
        assessment = assessment.model_copy(update={"plots": []})  # the temporary files are gone
    return assessment, posted


@contextmanager
def _plot_folder(out_dir: Path | None) -> Iterator[Path]:
    if out_dir is not None:
        yield out_dir
        return
    with tempfile.TemporaryDirectory(prefix="assessor-slack-") as scratch:
        yield Path(scratch)


def dashboard_of(assessment: Assessment) -> Path | None:
    """The dashboard PNG an assessment wrote, if it is still on disk."""
    for plot in assessment.plots:
        path = Path(plot)
        if path.name == "dashboard.png" and path.is_file():
            return path
    return None


class SlackNotifier:
    """A watch notifier (`assessor watch --notify slack:C…`, the bot's watches): posts each event's verdict.

    The dashboard is uploaded with it when the watch writes plots (`WatchConfig.out_dir`).

    Args:
        channel: The channel ID.
        client: A client from `slack_client()`; default one built from the environment when first needed.
        thread_ts: Post into this thread instead of the channel.
        raise_errors: False logs Slack failures instead of raising them (for background watchers).
    """

    def __init__(self, channel: str, *, client: WebClient | None = None, thread_ts: str | None = None,
                 raise_errors: bool = True) -> None:
        self.channel = channel
        self.client = client
        self.thread_ts = thread_ts
        self.raise_errors = raise_errors

    def notify(self, event: WatchEvent) -> None:
        """Post the event's assessment, with its kind as the note above the verdict."""
        try:
            self.client = self.client or slack_client()
            post_assessment(event.assessment, self.channel, client=self.client, thread_ts=self.thread_ts,
                            dashboard=dashboard_of(event.assessment), note=f"watch: {event.kind}")
        except AssessorError as error:
            if self.raise_errors:
                raise
            log.warning("could not post to Slack: %s", error)


# errors ------------------------------------------------------------------------------------------------------------


@contextmanager
def slack_errors(client: WebClient, channel: str) -> Iterator[None]:
    """Turn slack_sdk's exceptions into one-line errors that say the fix, with the token scrubbed."""
    from slack_sdk.errors import SlackApiError, SlackRequestError

    try:
        yield
    except SlackApiError as error:
        raise explain_api_error(error, channel, client.token) from None
    except (SlackRequestError, urllib.error.URLError, OSError) as error:
        message = f"could not reach Slack at {client.base_url} ({scrub(str(error), client.token)}); check the " \
                  f"network, or {BASE_URL_VARIABLE} if you set it"
        raise SlackError(message) from None


def explain_api_error(error: SlackApiError, channel: str, token: str | None) -> AssessorError:
    """The one-line error for a Slack API error, saying the fix.

    Args:
        error: What slack_sdk raised.
        channel: The channel the call was about.
        token: The token in use, scrubbed from anything echoed back.

    Returns:
        A `ConfigError` for a wrong token, channel or scope, else a `SlackError`.
    """
    data = error.response.data if isinstance(error.response.data, dict) else {}
    code = str(data.get("error") or f"HTTP {error.response.status_code}")
    if code in _TOKEN_ERRORS:
        return ConfigError(
            f"Slack rejected {TOKEN_VARIABLE} ({code}); set it to the Bot User OAuth Token (xoxb-…) from the Slack "
            "app's OAuth & Permissions page, and reinstall the app if it was revoked"
        )
    if code == "channel_not_found":
        return ConfigError(
            f"Slack has no channel {channel!r} the bot can see (channel_not_found); pass the channel ID (C…, "
            "at the bottom of the channel's details) and invite the bot there with /invite"
        )
    if code in ("not_in_channel", "is_archived"):
        return ConfigError(f"the bot cannot post in {channel!r} ({code}); invite it with /invite @<bot name> in "
                           "that channel, or pick another channel")
    if code == "missing_scope":
        needed = scrub(str(data.get("needed") or "chat:write, files:write"), token)
        return ConfigError(f"the Slack app lacks the {needed} scope (missing_scope); add it under OAuth & "
                           "Permissions → Bot Token Scopes and reinstall the app")
    if code == "ratelimited":
        return SlackError("Slack kept rate-limiting the bot (ratelimited) after retrying; try again in a minute")
    return SlackError(f"Slack refused the call ({scrub(code, token)}); see "
                      "https://docs.slack.dev/reference/methods for what it means")


def scrub(text: str, token: str | None) -> str:
    """`text` with the token (and anything shaped like a Slack token) replaced by `xox…`."""
    if token:
        text = text.replace(token, "xox…")
    return re.sub(r"\bx(?:ox[abpre]|app)-[A-Za-z0-9-]+", "xox…", text)
