"""The part every local fake HTTP API in the tests shares: a threaded server on 127.0.0.1 and a JSON reply."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class LocalServer:
    """A threaded HTTP server on an ephemeral port of 127.0.0.1, started and stopped by the test."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def reply(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any] | str, headers: dict[str, str]) -> None:
    """Answer with a JSON object (or plain text); a client that already gave up (a timeout) is not an error."""
    data = (payload if isinstance(payload, str) else json.dumps(payload)).encode("utf-8")
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "text/plain" if isinstance(payload, str) else "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
