"""A tiny scripted OpenAI-compatible HTTP server on 127.0.0.1, for tests of the HTTP client's
retry, timeout and error handling (and, with ``upstream``, a fault-injecting proxy)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import httpx

HANG_GUARD_S = 60.0
"""How long a held or gated reply waits at most: only so that a client bug fails the test
instead of hanging it; no test measures it."""


@dataclass
class StubReply:
    """One scripted answer: an HTTP status, a JSON body (or completion text), a delay.

    ``hold``: the reply is not sent before the test sets this event (a hung server, for as
    long as the test wants). ``gate``: the reply waits until the barrier's other parties (other
    requests) arrive too, so a test can require that many requests in flight at once.
    """

    status: int = 200
    text: str | None = "ok"
    body: dict[str, Any] | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    forward: bool = False
    hold: threading.Event | None = None
    gate: threading.Barrier | None = None


def completion_body(text: str, *, chat: bool) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
    if chat:
        choice["message"] = {"role": "assistant", "content": text}
    else:
        choice["text"] = text
    return {
        "id": "stub",
        "object": "chat.completion" if chat else "text_completion",
        "choices": [choice],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


def embeddings_body(texts: list[str]) -> dict[str, Any]:
    """``/v1/embeddings``' answer with a vector per text that says which text it was: [its
    length, 2, 0], listed in reverse order (the ``index`` field gives the input order)."""
    data = [
        {"object": "embedding", "index": i, "embedding": [float(len(t)), 2.0, 0.0]}
        for i, t in enumerate(texts)
    ]
    return {"object": "list", "data": data[::-1], "usage": {"prompt_tokens": len(texts)}}


class StubOpenAIServer:
    """Scripted replies are consumed in order by POSTs; then ``default`` answers.

    ``upstream`` makes ``forward`` replies (and the default) pass the request through to a real
    server, which turns the stub into a fault-injecting proxy.
    """

    def __init__(
        self,
        script: list[StubReply] | None = None,
        *,
        default: StubReply | None = None,
        models: list[dict[str, Any]] | None = None,
        upstream: str | None = None,
    ) -> None:
        self.script = list(script or [])
        self.upstream = upstream.rstrip("/") if upstream else None
        self.default = default or (StubReply(forward=True) if upstream else StubReply())
        self.models = models if models is not None else [{"id": "stub-model", "owned_by": "stub"}]
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def next_reply(self, path: str, body: dict[str, Any]) -> StubReply:
        with self._lock:
            self.requests.append((path, body))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self.script.pop(0) if self.script else self.default

    def done(self) -> None:
        """The reply is about to be written: the request stops counting as in flight before
        the client can see its answer (and send the next one)."""
        with self._lock:
            self.in_flight -= 1

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                if stub.upstream and self.path.startswith("/v1/"):
                    upstream = httpx.get(stub.upstream + self.path[3:], timeout=30)
                    self._send(upstream.status_code, upstream.json())
                elif self.path == "/v1/models":
                    self._send(200, {"object": "list", "data": stub.models})
                else:
                    self._send(404, {"detail": "Not Found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = stub.next_reply(self.path, body)
                counted = True
                try:
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    if reply.hold is not None:
                        reply.hold.wait(HANG_GUARD_S)
                    if reply.gate is not None:
                        reply.gate.wait(HANG_GUARD_S)
                    if reply.forward and stub.upstream:
                        upstream = httpx.post(stub.upstream + self.path[3:], json=body, timeout=300)
                        status, answer, headers = upstream.status_code, upstream.json(), {}
                    elif reply.body is not None or reply.status != 200:
                        status, answer, headers = reply.status, reply.body or {}, reply.headers
                    elif self.path.endswith("/embeddings"):
                        status, answer, headers = 200, embeddings_body(body["input"]), {}
                    else:
                        chat = self.path.endswith("/chat/completions")
                        status, answer, headers = (
                            200,
                            completion_body(reply.text or "", chat=chat),
                            {},
                        )
                    stub.done()
                    counted = False
                    self._send(status, answer, headers)
                finally:
                    if counted:
                        stub.done()

        return Handler

    def start(self) -> StubOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StubOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
