"""`assessor slack bot`: a Socket Mode Slack app that assesses runs on request.

People mention the bot (`@assessor assess grpo-7b/run-3`) or use the slash command (`/assessor status`):

* `assess <run>`: acknowledged at once; the assessment runs in a worker thread and the verdict, with its
  dashboard, is posted in the thread of the mention (in the channel for the slash command);
* `watch <run> every 2h` / `unwatch <run>`: scheduled checks that post into the thread where they were asked;
* `status`: the runs being watched and their last decision;
* anything else: the help text.

Runs are named relative to the configured roots, never by an absolute path: a name with a `..` component, or
one whose real path (symlinks followed) leaves its root, is refused with a reply that says so. Every file read
for a request is held to the same rule (`reads_confined_to`): `run/metrics.jsonl -> /etc/...` is not read. With
several roots, `<root folder name>/<run>` picks a root explicitly; otherwise the first root holding the run wins.
A run on an MLflow tracking server (`mlflow://HOST:PORT/RUN_ID`) is read only from the servers the bot was started
with (`--mlflow-server`): otherwise anyone in a channel could make the bot connect to any host its network reaches.

The parsing and the path rules (`parse_command`, `resolve_run`) are pure and tested on their own; `build_app`
wires them to slack_bolt; `serve` reads the tokens and runs the app in Socket Mode.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any, Literal, Protocol

from assessor.assessment import Assessment
from assessor.errors import AssessorError, ConfigError
from assessor.integrations.schedule import format_duration, parse_duration
from assessor.integrations.slack import (
    SlackNotifier,
    escape,
    inline_code,
    post_assessment,
    scrub,
    slack_client,
    slack_errors,
)
from assessor.report.assessment_text import DECISION_LABEL

if TYPE_CHECKING:
    from slack_bolt import Ack, App, Respond
    from slack_sdk import WebClient

    from assessor.integrations.watch import Watcher

log = logging.getLogger(__name__)

APP_TOKEN_VARIABLE = "SLACK_APP_TOKEN"
SLASH_COMMAND = "/assessor"
ASSESS_WORKERS = 2  # assessments are CPU-bound (plots) or wait on an LLM: a couple at a time is plenty

Action = Literal["assess", "status", "watch", "unwatch", "help"]

HELP = (
    "I read RL post-training runs and say *continue*, *stop* or *roll back*. Ask me:\n"
    "• `assess <run>`: assess a run now (the verdict and its dashboard come in the thread)\n"
    "• `watch <run> every 2h`: check a run on a schedule and post the results here\n"
    "• `unwatch <run>`: stop watching it\n"
    "• `status`: the runs I am watching and their last decision\n"
    "A run is a folder inside one of my run roots, e.g. `grpo-7b/run-3`; with several roots, "
    "`<root>/<run>` picks one."
)


class RunNameError(ConfigError):
    """A run name the bot refuses or cannot find; the message is the reply (already escaped for Slack)."""


@dataclass(frozen=True)
class BotCommand:
    """One request to the bot, parsed from a mention or the slash command.

    Attributes:
        action: What was asked; `help` also for anything not understood.
        run: The run name as typed (for assess, watch, unwatch).
        every: The watch interval in seconds.
        problem: Why the text was not understood, shown above the help.
    """

    action: Action
    run: str | None = None
    every: float | None = None
    problem: str | None = None


class BotWatch(Protocol):
    """A running watch on one run, as the bot manages it."""

    def start(self) -> None:
        """Begin checking in the background."""

    def stop(self) -> None:
        """Stop checking (returns at once)."""

    def status(self) -> str:
        """One line: the interval and the last decision."""
        ...


WatchFactory = Callable[["Path | str", float, str, "str | None"], BotWatch]
"""`(run_dir, every_seconds, channel, thread_ts) -> BotWatch`: how the bot starts a watch."""
AssessFn = Callable[["Path | str", str, Path], Assessment]
"""`(run_dir, judge, plot_dir) -> Assessment`: how the bot assesses a run (plots go into `plot_dir`)."""


# parsing -----------------------------------------------------------------------------------------------------------

_MENTION = re.compile(r"<[@!#][^>]*>")
_LABELLED_LINK = re.compile(r"<[^>|]+\|([^>]+)>")
_BARE_LINK = re.compile(r"<([^>|]+)>")


def parse_command(text: str) -> BotCommand:
    """Read a mention's or slash command's text.

    Mentions (`<@U123>`) are dropped and links Slack made from run names (`<http://x.ai|x.ai>`) are turned back
    into their text, so `@assessor assess run-3` and `/assessor assess run-3` read the same.

    Args:
        text: The message text as Slack delivers it (entities escaped).

    Returns:
        The command; `help`, with the `problem`, when the text asks for nothing the bot knows.
    """
    plain = _BARE_LINK.sub(r"\1", _LABELLED_LINK.sub(r"\1", _MENTION.sub(" ", text)))
    plain = plain.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    words = plain.split()
    if not words:
        return BotCommand("help")
    verb, args = words[0].lower(), words[1:]
    if verb == "help":
        return BotCommand("help")
    if verb == "status":
        return BotCommand("status")
    if verb in ("assess", "unwatch"):
        if len(args) != 1:
            return BotCommand("help", problem=f"`{verb}` takes one run name, e.g. `{verb} grpo-7b/run-3`.")
        return BotCommand("assess" if verb == "assess" else "unwatch", run=args[0])
    if verb == "watch":
        if len(args) == 3 and args[1].lower() == "every":
            args = [args[0], args[2]]
        if len(args) != 2:
            return BotCommand("help", problem="`watch` takes a run and an interval, e.g. "
                                              "`watch grpo-7b/run-3 every 2h`.")
        try:
            every = parse_duration(args[1])
        except ConfigError:
            return BotCommand("help", problem=f"I cannot read {inline_code(args[1])} as an interval; "
                                              "write e.g. `90s`, `15m`, `2h` or `1d`.")
        return BotCommand("watch", run=args[0], every=every)
    return BotCommand("help", problem=f"I do not know {inline_code(verb)}.")


def help_text(problem: str | None = None) -> str:
    """The help reply, with what went wrong first when something did."""
    return f"{problem}\n{HELP}" if problem else HELP


# run names ---------------------------------------------------------------------------------------------------------


def resolve_run(name: str, roots: Sequence[Path]) -> Path:
    """The run directory a name refers to, inside one of the roots.

    Refused: empty names, absolute paths (POSIX or Windows, or `~`), any `..` component, and names whose real
    path (symlinks followed) is not inside the real path of the root they were found under. A symlink that stays
    inside its root is fine. `<root folder name>/<run>` looks only in that root; otherwise the roots are tried
    in order and the first that holds the run wins.

    Args:
        name: The run name as the user typed it.
        roots: The configured run roots.

    Returns:
        The run's real path.

    Raises:
        RunNameError: The name is refused or names nothing; the message is the reply.
    """
    text = name.strip()
    shown = inline_code(text)
    if not text:
        raise RunNameError("Name a run: `assess <run>`, where the run is a folder inside one of my run roots.")
    if text.startswith("~") or PurePosixPath(text).is_absolute() or PureWindowsPath(text).anchor:
        raise RunNameError(f"I only read runs by their name inside my run roots, not by an absolute path like "
                           f"{shown}; try e.g. `assess grpo-7b/run-3`.")
    parts = [part for part in re.split(r"[/\\]", text) if part not in ("", ".")]
    if "\x00" in text:
        raise RunNameError("Run names cannot contain a NUL character; name a folder inside a root.")
    if ".." in parts:
        raise RunNameError(f"Run names cannot step out of my run roots with `..` ({shown}); name a folder "
                           "inside a root.")
    if not parts:
        raise RunNameError(f"{shown} is a run root itself; name a run folder inside it, e.g. `assess run-3`.")
    real_roots = [root.resolve() for root in roots]
    for root, relative in _candidates(parts, real_roots):
        real = (root / relative).resolve()
        if not real.is_relative_to(root):
            raise RunNameError(f"{shown} leads outside my run roots (through a symlink); I only read runs "
                               "inside the configured roots.")
        if real.exists():
            return real
    raise RunNameError(f"I found no run {shown} in my run roots. {_listing(real_roots)}")


def resolve_tracking_run(name: str, servers: Sequence[str]) -> str:
    """`mlflow://HOST:PORT/RUN_ID`, if its server is one the bot was started with.

    Raises:
        RunNameError: a malformed address, or a server not on the list.
    """
    from assessor.ingest.mlflow_server import parse

    try:
        server, _ = parse(name)
    except ConfigError as error:
        raise RunNameError(str(error)) from None
    if server not in servers:
        allowed = ", ".join(servers) if servers else "none (start me with --mlflow-server http://HOST:PORT)"
        raise RunNameError(f"I only read runs from the MLflow servers I was started with, not {server}. "
                           f"Allowed: {allowed}.")
    return name


def _candidates(parts: list[str], roots: list[Path]) -> list[tuple[Path, str]]:
    """(root, relative name) pairs to try: an explicit `<root name>/` prefix first, then every root in order."""
    relative = "/".join(parts)
    pairs = [(root, "/".join(parts[1:])) for root in roots if len(parts) > 1 and parts[0] == root.name]
    return pairs + [(root, relative) for root in roots]


def _listing(roots: list[Path], limit: int = 8) -> str:
    names: list[str] = []
    for root in roots:
        prefix = f"{root.name}/" if len(roots) > 1 else ""
        try:
            names += sorted(prefix + p.name for p in root.iterdir()
                            if p.is_dir() and not p.name.startswith(".") and p.resolve().is_relative_to(root))
        except OSError:
            continue
    if not names:
        return "My run roots are empty."
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return "Runs I can see: " + ", ".join(inline_code(n) for n in names[:limit]) + more + "."


def check_roots(roots: Sequence[Path]) -> list[Path]:
    """The roots' real paths, checked to be directories.

    Raises:
        ConfigError: No root was given, or one is not a directory.
    """
    if not roots:
        raise ConfigError("give the bot at least one run root: assessor slack bot --root DIR")
    for root in roots:
        if not Path(root).is_dir():
            raise ConfigError(f"run root {str(root)!r} is not a directory; pass --root with a folder of runs")
    return [Path(root).resolve() for root in roots]


# the bot -----------------------------------------------------------------------------------------------------------


Reply = Callable[[str], None]


class _Bot:
    """What the Bolt handlers share: the roots, the assessment workers and the watches."""

    def __init__(self, roots: list[Path], client: WebClient, judge: str, watch_factory: WatchFactory,
                 assess_fn: AssessFn, tracking_servers: Sequence[str] = ()) -> None:
        self.roots = roots
        self.tracking_servers = [server.rstrip("/") for server in tracking_servers]
        self.client = client
        self.judge = judge
        self.watch_factory = watch_factory
        self.assess_fn = assess_fn
        self.workers = ThreadPoolExecutor(max_workers=ASSESS_WORKERS, thread_name_prefix="assessor-slack")
        self.watches: dict[Path | str, tuple[str, BotWatch]] = {}
        self.lock = threading.Lock()

    def run(self, command: BotCommand, channel: str, thread_ts: str | None, reply: Reply) -> None:
        """Answer one command; an assessment is acknowledged here and answered from a worker."""
        try:
            if command.action == "help":
                reply(help_text(command.problem))
            elif command.action == "status":
                reply(self.status())
            else:
                assert command.run is not None  # parse_command gives every other action a run
                run_dir: Path | str = (resolve_tracking_run(command.run, self.tracking_servers)
                                       if command.run.startswith("mlflow://") else resolve_run(command.run, self.roots))
                name = self.display_name(run_dir)
                if command.action == "assess":
                    where = "in this thread" if thread_ts else "here"
                    reply(f"Assessing {inline_code(name)}… I will post the verdict {where}.")
                    self.workers.submit(self.assess_and_post, run_dir, name, channel, thread_ts, reply)
                elif command.action == "watch":
                    assert command.every is not None
                    reply(self.watch(run_dir, name, command.every, channel, thread_ts))
                else:
                    reply(self.unwatch(run_dir, name))
        except RunNameError as error:
            reply(str(error))
        except AssessorError as error:
            reply(escape(str(error)))
        except Exception as error:  # e.g. an unreadable root: answer rather than leave the user waiting
            log.exception("answering %r failed", command)
            reply(f"That failed with an internal error ({type(error).__name__}); the bot's log has the traceback.")

    def display_name(self, run_dir: Path | str) -> str:
        if isinstance(run_dir, str):
            return run_dir
        for root in self.roots:
            if run_dir.is_relative_to(root):
                relative = run_dir.relative_to(root).as_posix()
                return f"{root.name}/{relative}" if len(self.roots) > 1 else relative
        return run_dir.name

    def assess_and_post(
        self, run_dir: Path | str, name: str, channel: str, thread_ts: str | None, reply: Reply,
    ) -> None:
        from assessor.ingest.discover import reads_confined_to

        try:
            with tempfile.TemporaryDirectory(prefix="assessor-slack-") as scratch, reads_confined_to(self.roots):
                assessment = self.assess_fn(run_dir, self.judge, Path(scratch))
                post_assessment(assessment, channel, client=self.client, dashboard=Path(scratch) / "dashboard.png",
                                thread_ts=thread_ts)
        except AssessorError as error:
            reply(f"I could not assess {inline_code(name)}: {escape(scrub(str(error), self.client.token))}")
        except Exception as error:  # a worker thread has no one else to tell: answer, log, keep serving
            log.exception("assessing %s failed", run_dir)
            reply(f"Assessing {inline_code(name)} failed with an internal error ({type(error).__name__}); "
                  "the bot's log has the traceback.")

    def watch(self, run_dir: Path | str, name: str, every: float, channel: str, thread_ts: str | None) -> str:
        with self.lock:
            previous = self.watches.pop(run_dir, None)
            if previous is not None:
                previous[1].stop()
            watch = self.watch_factory(run_dir, every, channel, thread_ts)
            watch.start()
            self.watches[run_dir] = (name, watch)
        verb = "Now watching" if previous is None else "Still watching"
        return f"{verb} {inline_code(name)} every {format_duration(every)}; results will be posted here."

    def unwatch(self, run_dir: Path | str, name: str) -> str:
        with self.lock:
            entry = self.watches.pop(run_dir, None)
        if entry is None:
            return f"I was not watching {inline_code(name)}. `status` lists what I watch."
        entry[1].stop()
        return f"Stopped watching {inline_code(name)}."

    def status(self) -> str:
        with self.lock:
            entries = sorted(self.watches.values(), key=lambda entry: entry[0])
        if not entries:
            return "I am not watching any runs. Start with `watch <run> every 2h`."
        lines = [f"• {inline_code(name)}: {escape(watch.status())}" for name, watch in entries]
        return f"Watching {len(entries)} run{'s' if len(entries) != 1 else ''}:\n" + "\n".join(lines)


def _safe(reply: Reply) -> Reply:
    """A reply that logs instead of raising: a failed answer must not take a handler or worker down."""

    def send(text: str) -> None:
        try:
            reply(text)
        except Exception:
            log.exception("could not answer in Slack")

    return send


def build_app(
    roots: Sequence[Path], *, client: WebClient | None = None, token: str | None = None, judge: str = "auto",
    watch_factory: WatchFactory | None = None, assess_fn: AssessFn | None = None,
    slash_command: str = SLASH_COMMAND, tracking_servers: Sequence[str] = (),
) -> App:
    """The Bolt app: `app_mention` events and the slash command, answered from the run roots.

    Args:
        roots: Folders holding runs; runs are named relative to them.
        client: The Web API client; default `slack_client(token)`.
        token: The bot token when no client is given; default `SLACK_BOT_TOKEN`.
        judge: The judge for `assess` (and for watches started by the default watch factory).
        watch_factory: How watches are started; default a `Watcher` thread posting via `SlackNotifier`.
        assess_fn: How runs are assessed; default `assessor.pipeline.assess`.
        slash_command: The slash command's name, as configured in the Slack app.
        tracking_servers: MLflow tracking servers (`http://HOST:PORT`) whose runs may be named as
            `mlflow://HOST:PORT/RUN_ID`; none by default.

    Returns:
        The app, ready for `run_socket_mode`.

    Raises:
        ConfigError: A root is not a directory, slack_bolt is missing, or Slack rejects the token.
    """
    checked = check_roots(roots)
    bolt = _require_bolt()
    client = client or slack_client(token)
    with slack_errors(client, channel="(none)"):
        client.auth_test()  # a bad token is a one-line error here, not a Bolt traceback
    bot = _Bot(checked, client, judge, watch_factory or default_watch_factory(client, judge, checked),
               assess_fn or _assess, tracking_servers)
    app: App = bolt.App(client=client, name="assessor")

    @app.event("app_mention")
    def on_mention(event: dict[str, Any]) -> None:
        channel = str(event["channel"])
        thread_ts = str(event.get("thread_ts") or event["ts"])  # answer in the mention's thread

        def reply(text: str) -> None:
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text)

        bot.run(parse_command(str(event.get("text") or "")), channel, thread_ts, _safe(reply))

    @app.command(slash_command)
    def on_command(ack: Ack, command: dict[str, Any], respond: Respond) -> None:
        acknowledged = False

        def reply(text: str) -> None:
            # Slack wants the acknowledgement within 3 s: the first answer is the ack, later ones go via respond.
            nonlocal acknowledged
            if acknowledged:
                respond(text=text)
            else:
                acknowledged = True
                ack(text=text)

        bot.run(parse_command(str(command.get("text") or "")), str(command["channel_id"]), None, _safe(reply))
        if not acknowledged:
            ack()

    return app


def _require_bolt() -> Any:
    import importlib

    try:
        return importlib.import_module("slack_bolt")
    except ImportError as error:
        raise ConfigError('the Slack bot needs slack_bolt, which is not installed; run: pip install "assessor[slack]"'
                          ) from error


def _assess(run_dir: Path | str, judge: str, plot_dir: Path) -> Assessment:
    from assessor.pipeline import assess

    return assess(run_dir, judge, plot_dir)


# watches -----------------------------------------------------------------------------------------------------------


class WatcherThread:
    """An `assessor.integrations.watch.Watcher` running in a daemon thread, posting into Slack.

    With `judge` other than `rules`, the rules judge checks every time and `judge` is consulted as the watch's
    LLM judge, only when the diagnostics changed materially: a watch every 15 minutes for days would otherwise
    pay for an LLM call at every check.

    Args:
        run_dir: The run to watch.
        every: Seconds between checks.
        judge: The bot's judge.
        notifier: Where events go; a failed post is logged by the watcher and offered again at the next check.
        roots: The bot's run roots: no file whose real path is outside them is read.
    """

    def __init__(self, run_dir: Path | str, every: float, judge: str, notifier: SlackNotifier,
                 roots: Sequence[Path]) -> None:
        self.run_dir = run_dir
        self.roots = list(roots)
        self.every = every
        self.judge = judge
        self.notifier = notifier
        self.stopping = threading.Event()
        self.watcher: Watcher | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        """Build the watcher (importing watch.py only now) and start its loop in a daemon thread."""
        from assessor.integrations.watch import WatchConfig, Watcher

        llm_judge = None if self.judge == "rules" else self.judge
        config = WatchConfig(run_dir=self.run_dir, every=self.every, judge="rules", llm_judge=llm_judge)
        watcher = Watcher(config, notifiers=[self.notifier])
        self.watcher = watcher
        self.thread = threading.Thread(target=self._loop, args=(watcher,), daemon=True,
                                       name=f"assessor-watch-{Path(self.run_dir).name}")
        self.thread.start()

    def _loop(self, watcher: Watcher) -> None:
        from assessor.ingest.discover import reads_confined_to

        try:
            with reads_confined_to(self.roots):  # set in this thread: context variables do not cross threads
                watcher.run(self.stopping)
        except Exception:  # a background watch must not die silently
            log.exception("watching %s failed", self.run_dir)

    def stop(self) -> None:
        """Ask the loop to stop; it ends at its next wake-up."""
        self.stopping.set()

    def status(self) -> str:
        """`every 2h, last CONTINUE at step 300`; `no check yet` before the first; `ended` after the last."""
        parts = [f"every {format_duration(self.every)}"]
        last = self.watcher.last if self.watcher is not None else None
        assessment = last.assessment if last is not None else None
        if assessment is None:
            parts.append("no check yet")
        else:
            parts.append(f"last {DECISION_LABEL[assessment.verdict.decision]} at step {assessment.last_step}")
        if self.stopping.is_set():
            parts.append("stopped")
        elif self.thread is not None and not self.thread.is_alive():
            parts.append("ended (the run finished or went idle)")
        return ", ".join(parts)


def default_watch_factory(client: WebClient, judge: str, roots: Sequence[Path]) -> WatchFactory:
    """Watches as `WatcherThread`s whose results are posted to the channel (and thread) they were asked in."""

    def start_watch(run_dir: Path | str, every: float, channel: str, thread_ts: str | None) -> BotWatch:
        notifier = SlackNotifier(channel, client=client, thread_ts=thread_ts)
        return WatcherThread(run_dir, every, judge, notifier, roots)

    return start_watch


# serving -----------------------------------------------------------------------------------------------------------


def run_socket_mode(app: App, app_token: str) -> None:
    """Connect to Slack in Socket Mode and answer until interrupted (blocks).

    Args:
        app: From `build_app`.
        app_token: The app-level token (`xapp-…`, scope connections:write).
    """
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    handler = SocketModeHandler(app, app_token, web_client=app.client)
    handler.start()  # type: ignore[no-untyped-call]  # slack_bolt leaves start() unannotated


def serve(roots: Sequence[Path], *, judge: str = "auto", env: Mapping[str, str] | None = None,
          on_ready: Callable[[str], None] | None = None, tracking_servers: Sequence[str] = ()) -> None:
    """Run the bot (`assessor slack bot`): check the tokens and roots, build the app, connect, answer.

    Args:
        roots: Folders holding runs.
        judge: The judge for assessments.
        env: Where SLACK_BOT_TOKEN, SLACK_APP_TOKEN and ASSESSOR_SLACK_BASE_URL are read; default `os.environ`.
        on_ready: Told one line when the app is built, before connecting.
        tracking_servers: MLflow tracking servers whose runs may be named (`mlflow://HOST:PORT/RUN_ID`).

    Raises:
        ConfigError: A token is missing or of the wrong kind, a root is not a directory, slack_bolt is missing.
    """
    env = os.environ if env is None else env
    app_token = (env.get(APP_TOKEN_VARIABLE) or "").strip()
    if not app_token.startswith("xapp-"):
        problem = "is not set" if not app_token else "is not an app-level token (xapp-…)"
        raise ConfigError(
            f"{APP_TOKEN_VARIABLE} {problem}; the bot connects in Socket Mode with an app-level token: create one "
            "with the connections:write scope under Basic Information → App-Level Tokens (README, \"Slack\")"
        )
    app = build_app(roots, client=slack_client(env=env), judge=judge, tracking_servers=tracking_servers)
    if on_ready is not None:
        on_ready(f"Slack bot ready (judge {judge}); connecting in Socket Mode, Ctrl-C stops it")
    run_socket_mode(app, app_token)
