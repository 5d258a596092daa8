"""Clients built from every member's URL survive losing a node, even the first one.

Killing a session cluster's first member under the library client (the backend built before
the loss keeps counting and searching, a fresh one detects through the next host, the dead
URL alone is refused, the member comes back as a new process) is checked inside the outage
of tests/faults/test_cluster_faults.py::test_reads_keep_answering_with_one_node_down, which
kills that very member: one kill and restart (about ten seconds) instead of two."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from cluster_kit import ClusterHandle

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.errors import SiraSeekEngineError
from sira_seek.esplugin.engines.registry import connect

pytestmark = pytest.mark.integration


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
