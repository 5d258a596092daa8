"""Connections under concurrency: a pool as large as the work in flight, and a hung cluster
that fails every concurrent request on its own (none waits behind another's connection).

Real nodes for the pool; for the hang, a TCP listener that accepts and never answers,
reached through the engine plugins' own client (the engine is given, as detection would
hang too)."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from sira_seek.backend import ClusterInfo, EngineError, SearchBackend
from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.registry import connect, load_backend_class

pytestmark = pytest.mark.integration


def test_sixteen_concurrent_searches_reuse_pooled_connections(
    node_urls: dict[str, str],
    engine: str,
    backend: SearchBackend,
    index_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    backend.ensure_corpus_index(index_name)
    client = connect(ClusterSettings(url=node_urls[engine]))
    body = {"query": {"match": {"contents": "magazine"}}, "size": 1}
    caplog.set_level(logging.WARNING, logger="urllib3")
    try:
        with ThreadPoolExecutor(16) as pool:
            results = list(pool.map(lambda _: client.search(index_name, body), range(64)))
    finally:
        client.close()
    assert len(results) == 64
    full = [r for r in caplog.records if "Connection pool is full" in r.getMessage()]
    assert full == [], f"{len(full)} pool-full warnings, e.g. {full[0].getMessage()}"


class HungCluster:
    """Accepts every connection and never answers; records how many were open at once."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        self.most_at_once = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.held.append(conn)
                self.most_at_once = max(self.most_at_once, len(self.held))

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def hung() -> Iterator[HungCluster]:
    server = HungCluster()
    yield server
    server.close()


def test_a_hung_cluster_fails_each_concurrent_request_on_its_own_connection(
    hung: HungCluster, engine: str
) -> None:
    settings = ClusterSettings(url=hung.url, request_timeout=2)
    info = ClusterInfo(engine=engine, version="9.0.0" if engine == "elasticsearch" else "2.19.0",
                       url=hung.url)  # fmt: skip
    client = load_backend_class(engine).connect(settings, info)
    errors: list[BaseException] = []

    def count(_: int) -> None:
        try:
            client.count("idx")
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    try:
        with ThreadPoolExecutor(3) as pool:
            list(pool.map(count, range(3)))
    finally:
        client.close()
    assert len(errors) == 3 and all(isinstance(e, EngineError) for e in errors), errors
    assert all("time" in str(e).lower() for e in errors), [str(e) for e in errors]
    # All three were in flight together: none queued behind another's connection.
    assert hung.most_at_once >= 3
