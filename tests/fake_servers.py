"""A local stand-in for the Anthropic and OpenAI HTTP APIs, for driving the real SDKs in tests.

One threaded `http.server` on 127.0.0.1 (an ephemeral port) answers

* `POST /v1/messages` in the Anthropic Messages format (the output as a `tool_use` block),
* `POST /v1/chat/completions` in the Chat Completions format (the output as the message content),
* `POST /v1/responses` in the Responses format (the output as an `output_text` part),

from a queue of scripted replies, and records every request (path, headers, JSON body). When the queue is empty it
answers 500 with `x-should-retry: false`, so a test that asks more than it scripted fails loudly.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.local_http import LocalServer, reply


@dataclass
class Reply:
    """One scripted reply.

    Attributes:
        output: the model's structured output: a dict (the tool input / the JSON) or raw text (chat, responses).
        status: HTTP status; non-200 replies send `error` as the body.
        error: the error body for non-200 replies.
        headers: extra response headers (e.g. Retry-After).
        delay: seconds to wait before answering (to trip the client's timeout).
        stop_reason: Anthropic stop_reason / OpenAI finish_reason override.
        usage: the reply's `usage` object, instead of the default token counts (e.g. with prompt-cache fields).
    """

    output: dict[str, Any] | str | None = None
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    stop_reason: str | None = None
    usage: dict[str, Any] | None = None


@dataclass
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: str

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)


class FakeLLMServer(LocalServer):
    """The server, its reply queue and the requests it received."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        super().__init__(_handler(self))

    def stop(self) -> None:
        self.stopping.set()  # wakes delayed replies
        super().stop()

    # scripting -------------------------------------------------------------------------------------------------
    def push(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def output(self, output: dict[str, Any] | str, **kwargs: Any) -> None:
        """Queue a 200 reply carrying `output`."""
        self.push(Reply(output=output, **kwargs))

    def rate_limited(self, retry_after: str = "0") -> None:
        """Queue a 429. `retry-after-ms: 1` rides along so the SDKs wait 1 ms (both treat Retry-After: 0 as unset
        and fall back to their half-second backoff)."""
        self.push(Reply(status=429, headers={"Retry-After": retry_after, "retry-after-ms": "1"},
                        error={"type": "rate_limit_error", "message": "Rate limited; slow down"}))

    def slow(self, output: dict[str, Any] | str, delay: float) -> None:
        """Queue a reply that arrives only after `delay` seconds."""
        self.push(Reply(output=output, delay=delay))

    def fail(self, status: int, message: str, kind: str = "api_error", **headers: str) -> None:
        self.push(Reply(status=status, error={"type": kind, "message": message}, headers=dict(headers)))

    def _next(self) -> Reply | None:
        with self.lock:
            return self.replies.popleft() if self.replies else None

    # assertions ------------------------------------------------------------------------------------------------
    def bodies(self) -> list[str]:
        return [r.raw for r in self.requests]


def _handler(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8") if length else ""
            try:
                body = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                body = {}
            with server.lock:
                server.requests.append(Recorded("POST", self.path, dict(self.headers.items()), body, raw))
            reply = server._next()
            if reply is None:
                self._send(500, {"type": "error", "error": {"type": "api_error", "message": "no scripted reply"}},
                           {"x-should-retry": "false"})
                return
            if reply.delay and server.stopping.wait(reply.delay):
                return
            if reply.status != 200:
                error = reply.error or {"type": "api_error", "message": f"error {reply.status}"}
                self._send(reply.status, _error_body(self.path, error), reply.headers)
                return
            assert reply.output is not None
            payload = _success_body(self.path, body, reply)
            if payload is None:
                self._send(404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}}, {})
                return
            self._send(200, payload, reply.headers)

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
            reply(self, status, payload, headers)

    return Handler


def _error_body(path: str, error: dict[str, Any]) -> dict[str, Any]:
    if path.endswith("/messages"):
        return {"type": "error", "error": error, "request_id": "req_fake"}
    return {"error": {"message": error.get("message"), "type": error.get("type"), "param": None, "code": None}}


def _text(output: dict[str, Any] | str) -> str:
    return output if isinstance(output, str) else json.dumps(output)


def _success_body(path: str, request: dict[str, Any], reply: Reply) -> dict[str, Any] | None:
    output = reply.output
    assert output is not None
    model = request.get("model", "unknown")
    now = int(time.time())
    if path.endswith("/v1/messages"):
        if isinstance(output, dict):
            tool = (request.get("tool_choice") or {}).get("name", "report_verdict")
            content: list[dict[str, Any]] = [{"type": "tool_use", "id": "toolu_fake", "name": tool, "input": output}]
            stop = reply.stop_reason or "tool_use"
        else:
            content = [{"type": "text", "text": output}]
            stop = reply.stop_reason or "end_turn"
        return {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": content,
                "stop_reason": stop, "stop_sequence": None,
                "usage": reply.usage or {"input_tokens": 1200, "output_tokens": 300}}
    if path.endswith("/chat/completions"):
        return {"id": "chatcmpl-fake", "object": "chat.completion", "created": now, "model": model,
                "choices": [{"index": 0, "finish_reason": reply.stop_reason or "stop", "logprobs": None,
                             "message": {"role": "assistant", "content": _text(output), "refusal": None}}],
                "usage": reply.usage or {"prompt_tokens": 1100, "completion_tokens": 250, "total_tokens": 1350}}
    if path.endswith("/responses"):
        return {"id": "resp_fake", "object": "response", "created_at": now, "model": model,
                "status": reply.stop_reason or "completed", "incomplete_details": None, "error": None,
                "instructions": request.get("instructions"), "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": [], "metadata": {},
                "output": [{"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
                            "content": [{"type": "output_text", "text": _text(output), "annotations": []}]}],
                "usage": reply.usage or {"input_tokens": 1000, "output_tokens": 200, "total_tokens": 1200,
                                         "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                                         "output_tokens_details": {"reasoning_tokens": 0}}}
    return None


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """A running fake API server; scripted per test, stopped afterwards."""
    server = FakeLLMServer().start()
    try:
        yield server
    finally:
        server.stop()
