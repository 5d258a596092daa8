"""The pieces of the contract suite that are not fixtures: a request counter on the wire (and
its in-memory stand-in) and the engine hooks the protocol deliberately lacks. A third engine
adds its ``EngineHooks`` here."""

from __future__ import annotations

import http.client
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sira_seek.backend import SearchBackend
from sira_seek.esplugin.engines.base import RestBackend

# The unit tests' SearchBackend double, which must keep this contract too.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "doubles"))

from in_memory_backend import InMemoryBackend  # noqa: E402

IN_MEMORY = "in-memory"
"""The target that runs the suite against the in-memory double: no node, no wire."""


class CountingProxy:
    """A plain HTTP reverse proxy that records every request it forwards.

    "One round trip" is a contract of ``analyze_terms`` and ``live_doc_freqs``; counting at the
    wire checks it for any engine and any Python client, without touching the backend's code.
    """

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http":
            raise ValueError(f"the counting proxy speaks plain HTTP only, not {upstream}")
        self.requests: list[tuple[str, str]] = []
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                proxy.requests.append((self.command, self.path))
                upstream_conn = http.client.HTTPConnection(host, port, timeout=120)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                upstream_conn.request(self.command, self.path, body=body, headers=headers)
                resp = upstream_conn.getresponse()
                payload = resp.read()
                self.send_response(resp.status)
                for key, value in resp.getheaders():
                    if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                upstream_conn.close()

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def reset(self) -> None:
        self.requests.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class RoundTripLog:
    """``CountingProxy``'s stand-in for the in-memory double, which has no wire: its requests
    are the round trips the double records (``InMemoryBackend.calls``) since the last reset."""

    def __init__(self, backend: InMemoryBackend) -> None:
        self.backend = backend
        self.mark = len(backend.calls)

    @property
    def requests(self) -> list[tuple[str, Any]]:
        return self.backend.calls[self.mark :]

    def reset(self) -> None:
        self.mark = len(self.backend.calls)

    def close(self) -> None:
        return None


@dataclass(frozen=True)
class EngineHooks:
    """What the suite must do to a cluster that the ``SearchBackend`` protocol does not offer
    (the core never needs it): delete one document, and drop every open scan context.

    A third engine adds one entry to ``ENGINE_HOOKS``; both use the engine's own client.
    """

    delete_document: Callable[[SearchBackend, str, str], None]
    drop_scan_contexts: Callable[[SearchBackend, str], None]


def _rest(backend: SearchBackend) -> RestBackend:
    assert isinstance(backend, RestBackend), type(backend)
    return backend


def _delete_document(backend: SearchBackend, index: str, doc_id: str) -> None:
    _rest(backend).request("DELETE", f"/{index}/_doc/{doc_id}", params={"refresh": "true"})


def _drop_opensearch_pits(backend: SearchBackend, index: str) -> None:
    _rest(backend).request("DELETE", "/_search/point_in_time/_all")


def _drop_elasticsearch_contexts(backend: SearchBackend, index: str) -> None:
    """Elasticsearch has no "delete every point in time" call; closing the index frees every
    reader context on its shards, which is what an expired or lost PIT amounts to."""
    rest = _rest(backend)
    rest.request("POST", f"/{index}/_close")
    rest.request("POST", f"/{index}/_open")
    rest.wait_for_health("yellow", 60)


def _memory(backend: SearchBackend) -> InMemoryBackend:
    assert isinstance(backend, InMemoryBackend), type(backend)
    return backend


ENGINE_HOOKS: dict[str, EngineHooks] = {
    "opensearch": EngineHooks(_delete_document, _drop_opensearch_pits),
    "elasticsearch": EngineHooks(_delete_document, _drop_elasticsearch_contexts),
    IN_MEMORY: EngineHooks(
        lambda be, index, doc_id: _memory(be).delete_doc(index, doc_id),
        lambda be, index: _memory(be).drop_scan_contexts(),
    ),
}


@dataclass
class ContractTarget:
    engine: str
    url: str | None  # None for the in-memory double
    backend: SearchBackend
    hooks: EngineHooks
