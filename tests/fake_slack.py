"""A local stand-in for the Slack Web API, for driving the real slack_sdk / slack_bolt in tests.

One threaded `http.server` on 127.0.0.1 (an ephemeral port) answers, under `/api/`:

* `auth.test`, `chat.postMessage`, `files.getUploadURLExternal` (its `upload_url` points back at this server),
  `files.completeUploadExternal`, and any other method with `{"ok": true}`;
* `POST /upload/<file id>`: the file bytes (step 2 of Slack's upload flow);
* `POST /respond/<id>`: a slash command's `response_url`.

Every request is recorded (method, headers, form or JSON arguments, raw bytes). Failures are scriptable: a 429
with `Retry-After` for the next N calls of a method, `invalid_auth` for a given token, any Slack error code for
the next N calls of a method. The fixture sets nothing global: pass `fake_slack.base_url` to the client, or set
`ASSESSOR_SLACK_BASE_URL` with monkeypatch.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.local_http import LocalServer, reply

BOT_USER = "UASSESSOR"
TOKEN = "xoxb-fake-0000-secret"


@dataclass
class SlackCall:
    """One request as the server saw it."""

    method: str  # the API method (`chat.postMessage`), or `upload` / `respond`
    path: str
    headers: dict[str, str]
    args: dict[str, Any]
    raw: bytes
    status: int = 200

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)

    @property
    def token(self) -> str | None:
        auth = self.header("Authorization") or ""
        return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else self.args.get("token")

    def json_arg(self, name: str) -> Any:
        """An argument that slack_sdk sends JSON-encoded inside a form (e.g. `files`) or as JSON already."""
        value = self.args.get(name)
        return json.loads(value) if isinstance(value, str) else value


@dataclass
class _Failure:
    error: str
    remaining: int
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


class FakeSlack(LocalServer):
    """The server, its scripted failures and the requests it received."""

    def __init__(self) -> None:
        self.calls: list[SlackCall] = []
        self.uploads: dict[str, bytes] = {}
        self.failures: dict[str, list[_Failure]] = {}
        self.rejected_tokens: set[str] = set()
        self.lock = threading.RLock()  # wait_for's condition reads the calls under the same lock
        self.changed = threading.Condition(self.lock)
        self._ids = itertools.count(1)
        super().__init__(_handler(self))

    @property
    def base_url(self) -> str:
        """What `ASSESSOR_SLACK_BASE_URL` is set to."""
        return self.url + "/api/"

    # scripting -------------------------------------------------------------------------------------------------
    def rate_limit(self, method: str, times: int = 1, retry_after: str = "1") -> None:
        """Answer the next `times` calls of `method` with 429 and `Retry-After`."""
        self._script(method, _Failure("ratelimited", times, status=429, headers={"Retry-After": retry_after}))

    def fail(self, method: str, error: str, times: int = 1, **extra: Any) -> None:
        """Answer the next `times` calls of `method` with `{"ok": false, "error": error, **extra}`."""
        self._script(method, _Failure(error, times, extra=extra))

    def reject_token(self, token: str) -> None:
        """Answer every call made with `token` with `invalid_auth`."""
        self.rejected_tokens.add(token)

    def _script(self, method: str, failure: _Failure) -> None:
        with self.lock:
            self.failures.setdefault(method, []).append(failure)

    # assertions ------------------------------------------------------------------------------------------------
    def calls_to(self, method: str) -> list[SlackCall]:
        with self.lock:
            return [c for c in self.calls if c.method == method]

    def wait_for(self, condition: Callable[[FakeSlack], bool], timeout: float = 10.0) -> None:
        """Block until `condition(self)` holds (calls arrive from worker threads), or fail the test."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not condition(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    methods = [c.method for c in self.calls]
                    raise AssertionError(f"timed out waiting; calls so far: {methods}")
                self.changed.wait(min(left, 0.1))

    def texts(self, method: str = "chat.postMessage") -> list[str]:
        return [str(c.args.get("text", "")) for c in self.calls_to(method)]

    # answering -------------------------------------------------------------------------------------------------
    def _answer(self, call: SlackCall) -> tuple[int, dict[str, str], Any]:
        with self.changed:
            self.calls.append(call)
            self.changed.notify_all()
            scripted = self.failures.get(call.method) or []
            failure = scripted[0] if scripted else None
            if failure is not None:
                failure.remaining -= 1
                if failure.remaining <= 0:
                    scripted.pop(0)
        if call.method in ("upload", "respond"):
            return 200, {}, "OK"
        if call.token in self.rejected_tokens:
            return 200, {}, {"ok": False, "error": "invalid_auth"}
        if failure is not None:
            call.status = failure.status
            return failure.status, failure.headers, {"ok": False, "error": failure.error, **failure.extra}
        return 200, {}, self._success(call)

    def _success(self, call: SlackCall) -> dict[str, Any]:
        args = call.args
        if call.method == "auth.test":
            return {"ok": True, "url": "https://fake.slack.test/", "team": "Fake", "user": "assessor",
                    "team_id": "T0FAKE", "user_id": BOT_USER, "bot_id": "B0FAKE", "is_enterprise_install": False}
        if call.method == "chat.postMessage":
            ts = f"1700000000.{next(self._ids):06d}"
            return {"ok": True, "channel": args.get("channel"), "ts": ts,
                    "message": {"type": "message", "text": args.get("text"), "ts": ts, "bot_id": "B0FAKE"}}
        if call.method == "files.getUploadURLExternal":
            file_id = f"F{next(self._ids):08d}"
            return {"ok": True, "upload_url": f"{self.url}/upload/{file_id}", "file_id": file_id}
        if call.method == "files.completeUploadExternal":
            files = call.json_arg("files") or []
            return {"ok": True, "files": [{"id": f["id"], "title": f.get("title"), "name": f.get("title")}
                                          for f in files]}
        return {"ok": True}


def _handler(server: FakeSlack) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def do_GET(self) -> None:
            self.do_POST()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            split = urlsplit(self.path)
            args: dict[str, Any] = dict(parse_qsl(split.query))
            if split.path.startswith("/upload/"):  # raw file bytes, whatever the Content-Type says
                method = "upload"
                with server.lock:
                    server.uploads[split.path.removeprefix("/upload/")] = raw
            else:
                method = "respond" if split.path.startswith("/respond/") else split.path.removeprefix("/api/")
                content_type = self.headers.get("Content-Type") or ""
                if "json" in content_type and raw:
                    args.update(json.loads(raw))
                elif raw:
                    args.update(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
            call = SlackCall(method, self.path, dict(self.headers.items()), args, raw)
            status, headers, payload = server._answer(call)
            reply(self, status, payload, headers)

    return Handler


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    """A running fake Slack Web API; scripted per test, stopped afterwards."""
    server = FakeSlack().start()
    try:
        yield server
    finally:
        server.stop()
