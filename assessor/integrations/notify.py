"""Where `assessor watch` sends its events: stdout, a Slack channel, or any webhook that takes JSON.

`notifiers_from(["stdout", "slack:C0123", "webhook:https://hooks.example.com/x"])` builds them from the
`--notify` values. A notifier raises on failure; the watcher logs the error and keeps watching.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol

from assessor.errors import AssessorError, ConfigError
from assessor.judge.models import Decision
from assessor.printable import one_line

if TYPE_CHECKING:
    from assessor.assessment import Assessment

EventKind = Literal["first", "changed", "escalated", "heartbeat", "ended"]


class NotifyError(AssessorError):
    """A notification could not be delivered (the watch logs it and carries on)."""

    exit_code = 1


@dataclass(frozen=True)
class WatchEvent:
    """Something a watch has to say about a run.

    Attributes:
        kind: `first` (the first verdict of this watch), `changed` (a different decision), `escalated` (a more
            severe one: continue < stop < rollback), `heartbeat` (nothing changed for a while), `ended`
            (the run finished or went idle; the final verdict).
        assessment: The current assessment.
        previous_decision: The decision notified before this one (None for `first`).
        run_dir: The watched run.
        step: The last step read.
    """

    kind: EventKind
    assessment: Assessment
    previous_decision: Decision | None
    run_dir: Path | str
    step: int | None


class Notifier(Protocol):
    """Delivers watch events somewhere."""

    def notify(self, event: WatchEvent) -> None:
        """Deliver one event; raise when it could not be delivered."""
        ...


_KIND_WORDS: dict[EventKind, str] = {
    "first": "first check", "changed": "verdict changed", "escalated": "verdict escalated",
    "heartbeat": "still", "ended": "run ended",
}


def event_line(event: WatchEvent) -> str:
    """One line for a human: `run step 1300: CONTINUE -> ROLLBACK (verdict escalated): headline`."""
    verdict = event.assessment.verdict
    decision = verdict.decision.upper()
    moved = f"{event.previous_decision.upper()} -> {decision}" if event.kind in ("changed", "escalated") and \
        event.previous_decision else decision
    return one_line(f"{event.assessment.run} step {event.step}: {moved} ({_KIND_WORDS[event.kind]}): "
                    f"{verdict.headline}")


class StdoutNotifier:
    """Prints one line per event (for cron mail, a systemd journal, `kubectl logs`)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream

    def notify(self, event: WatchEvent) -> None:
        """Print the event's line."""
        stream = self.stream if self.stream is not None else sys.stdout
        stream.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {event_line(event)}\n")
        stream.flush()


class WebhookNotifier:
    """POSTs each event as JSON to a URL, retrying once on 429 or 5xx.

    The body is `{"text": <one line>, "event": kind, "previous_decision": ..., "step": ..., "run_dir": ...,
    "assessment": <the assess --format json contract without "diagnostics">}`. The diagnostics are left out:
    they run to hundreds of kilobytes, more than chat webhooks (Slack, Teams, Discord) accept, and a
    receiver that wants them can run `assessor assess RUN --format json`. `text` makes the body postable
    as-is to Slack-style incoming webhooks.
    """

    def __init__(
        self, url: str, *, timeout: float = 10.0, retry_delay: float = 2.0,
        open_url: Callable[..., Any] = urllib.request.urlopen, sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.retry_delay = retry_delay
        self._open = open_url
        self._sleep = sleep

    def payload(self, event: WatchEvent) -> dict[str, Any]:
        """The JSON body for one event."""
        contract = event.assessment.contract()
        contract.pop("diagnostics", None)
        return {
            "text": event_line(event), "event": event.kind, "previous_decision": event.previous_decision,
            "step": event.step, "run_dir": str(event.run_dir), "assessment": contract,
        }

    def notify(self, event: WatchEvent) -> None:
        """POST the event; one retry after a 429 or a 5xx.

        Raises:
            NotifyError: the server refused it or could not be reached.
        """
        body = json.dumps(self.payload(event)).encode("utf-8")
        for attempt in (1, 2):
            request = urllib.request.Request(
                self.url, data=body, method="POST",
                headers={"Content-Type": "application/json", "User-Agent": "assessor-watch"},
            )
            try:
                with self._open(request, timeout=self.timeout) as response:
                    response.read()
                return
            except urllib.error.HTTPError as error:
                error.close()  # it holds the response's socket
                retryable = error.code == 429 or error.code >= 500
                if retryable and attempt == 1:
                    self._sleep(_retry_after(error, self.retry_delay))
                    continue
                raise NotifyError(f"webhook {_safe(self.url)} answered HTTP {error.code} {error.reason}") from None
            except (urllib.error.URLError, OSError) as error:
                reason = getattr(error, "reason", error)
                raise NotifyError(f"webhook {_safe(self.url)} could not be reached ({reason})") from None


def _retry_after(error: urllib.error.HTTPError, default: float) -> float:
    """The server's Retry-After in seconds (capped at a minute), else `default`."""
    value = error.headers.get("Retry-After") if error.headers is not None else None
    try:
        return min(60.0, max(0.0, float(value))) if value is not None else default
    except ValueError:
        return default


def _safe(url: str) -> str:
    """The URL without its path and query: webhook URLs often carry their secret in the path."""
    parsed = urllib.parse.urlsplit(url)
    return f"{parsed.scheme}://{parsed.netloc}/…"


def notifiers_from(specs: Iterable[str]) -> list[Notifier]:
    """Notifiers for `--notify` values: `stdout`, `slack:CHANNEL` or `webhook:URL`.

    Raises:
        ConfigError: a value of another form.
    """
    notifiers: list[Notifier] = []
    for spec in specs:
        kind, _, target = spec.partition(":")
        if spec == "stdout":
            notifiers.append(StdoutNotifier())
        elif kind == "slack" and target:
            from assessor.integrations.slack import SlackNotifier  # only a Slack watch needs slack_sdk

            notifiers.append(SlackNotifier(target))
        elif kind == "webhook" and target.startswith(("http://", "https://")):
            notifiers.append(WebhookNotifier(target))
        else:
            raise ConfigError(
                f"--notify {spec!r} is not understood; use stdout, slack:CHANNEL_ID or webhook:https://..."
            )
    return notifiers
