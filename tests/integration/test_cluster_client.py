"""Clients built from every member's URL survive losing a node, even the first one."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_kit import ClusterHandle

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.errors import SiraSeekEngineError
from sira_seek.esplugin.engines.registry import connect
from sira_seek.ingest import ingest_corpus

pytestmark = pytest.mark.integration


N_DOCS = 1000  # a few dozen mention a magazine; each shard and its replica hold about 330


@pytest.fixture
def replicated_index(
    opensearch_cluster: ClusterHandle, wikimh_dir: Path, tmp_path: Path
) -> Iterator[tuple[SearchBackend, str]]:
    """The first N_DOCS wikimh paragraphs on 3 shards with 1 replica: every shard has a copy
    on two members (what a node loss tests; the corpus size is not)."""
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:N_DOCS]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    backend = opensearch_cluster.backend()
    name = f"test-cluster-{uuid.uuid4().hex[:10]}"
    report = ingest_corpus(backend, name, corpus, shards=3, replicas=1)
    assert report.written == N_DOCS and not report.failed
    opensearch_cluster.wait_for_health("green")
    try:
        yield backend, name
    finally:
        opensearch_cluster.ensure_whole()
        opensearch_cluster.backend().delete_index(name)


def test_search_and_count_survive_killing_the_first_node(
    opensearch_cluster: ClusterHandle, replicated_index: tuple[SearchBackend, str]
) -> None:
    backend, index = replicated_index
    query = {"match": {"text": "magazine"}}
    body = {"query": query, "size": 10}
    before = backend.search(index, body)
    expected_count = backend.count(index, query)
    assert expected_count > 0
    first_pid = opensearch_cluster.pid(0)

    opensearch_cluster.kill(0)
    assert not opensearch_cluster.alive(0)
    assert first_pid is not None and not Path(f"/proc/{first_pid}").exists()

    # The backend built before the loss, whose first host is the dead node, keeps working:
    # several requests in a row, so round-robin hits the dead host more than once.
    for _ in range(6):
        assert backend.count(index) == N_DOCS
        assert backend.count(index, query) == expected_count
    after = backend.search(index, body)
    # Same ranking from the surviving copies (ties may order differently between copies).
    assert after.total == before.total == expected_count
    assert [round(h.score, 4) for h in after.hits] == [round(h.score, 4) for h in before.hits]
    # A backend connected now detects the cluster through the second host.
    fresh = opensearch_cluster.backend()
    assert fresh.info.url == opensearch_cluster.node_url(1)
    assert fresh.count(index) == N_DOCS
    # Only the dead node's URL: nothing answers, and the message says so.
    with pytest.raises(SiraSeekEngineError, match="No search cluster answers"):
        connect(ClusterSettings(url=opensearch_cluster.node_url(0)))
    # The survivors notice the SIGKILL within their fault-detection interval, not at once.
    health = opensearch_cluster.health(wait_for_nodes="2", timeout="60s")
    assert health["number_of_nodes"] == 2

    opensearch_cluster.start(0)
    health = opensearch_cluster.health()
    assert health["status"] == "green" and health["number_of_nodes"] == 3
    assert opensearch_cluster.alive(0) and opensearch_cluster.pid(0) != first_pid
    assert backend.count(index) == N_DOCS


def test_node_names_are_distinct_and_one_cluster_manager(engine_cluster: ClusterHandle) -> None:
    """Each engine's session cluster formed: three named members, one elected manager, green.
    (tests/e2e/test_cluster_lifecycle.py starts one through `node up --nodes 3` as a user does;
    the command is the same for both engines, the cluster forming is not.)"""
    names = engine_cluster.node_names()
    assert names == ["node-0", "node-1", "node-2"]
    column = "cluster_manager" if engine_cluster.engine == "opensearch" else "master"
    rows = engine_cluster.get(f"/_cat/nodes?format=json&h=name,{column}")
    assert sorted(r["name"] for r in rows) == names
    assert sum(r[column] == "*" for r in rows) == 1
    health = engine_cluster.wait_for_health("green")  # raises if not green in time
    assert health["number_of_nodes"] == 3 and health["status"] == "green"


def _dead_url() -> str:
    """A loopback URL where nothing listens (a port bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _client_ports(backend: SearchBackend) -> set[int]:
    """Ports of the hosts the Python client itself was given (not just the detected one)."""
    client: Any = backend.client  # type: ignore[attr-defined]
    transport = client.transport
    if hasattr(transport, "node_pool"):  # elasticsearch-py (elastic-transport)
        return {int(node.config.port) for node in transport.node_pool.all()}
    return {int(host["port"]) for host in transport.hosts}  # opensearch-py


def test_both_clients_skip_a_dead_first_host(
    node_urls: dict[str, str], engine: str, index_name: str
) -> None:
    """Both Python clients get every host and retry connection errors on the others: with a
    dead host listed FIRST, detection and every request still succeed."""
    dead, live = _dead_url(), node_urls[engine].rstrip("/")
    backend = connect(ClusterSettings(url=f"{dead},{live}"))
    assert backend.info.engine == engine
    assert backend.info.url == node_urls[engine].rstrip("/")
    assert _client_ports(backend) == {int(dead.rsplit(":", 1)[1]), int(live.rsplit(":", 1)[1])}
    backend.ensure_corpus_index(index_name)
    backend.bulk_upsert(index_name, [{"_id": "1", "title": "t", "text": "a magazine"}])
    backend.refresh(index_name)
    for _ in range(8):  # round-robin returns to the dead host; each time it is retried
        assert backend.count(index_name) == 1
    with pytest.raises(SiraSeekEngineError, match="unreachable|No search cluster answers"):
        connect(ClusterSettings(url=f"{dead},{_dead_url()}"))
