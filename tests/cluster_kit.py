"""Real 3-node clusters for tests that need node loss: the ``opensearch_cluster`` and
``elasticsearch_cluster`` session fixtures (tests/conftest.py) each hand out one ``ClusterHandle``.

One cluster per engine and test session, started lazily (only when a test asks for its
fixture), in its own folder (``<node home>/test-clusters`` for OpenSearch,
``<node home>/test-clusters-elasticsearch`` for Elasticsearch; never listed by ``sira-seek node
status`` and never touching the single session nodes), on its own ports (from 9460 and 9470),
stopped at session end unless SIRA_SEEK_TEST_KEEP_NODES=1 (then the next session reuses it,
restarting members found dead).

SIRA_SEEK_TEST_CLUSTER_NAME=<name> gives a session clusters of its own
(``<node home>/test-clusters[-elasticsearch]-<name>``, on the next free ports): for running two
test sessions side by side on one machine, where one session's faults would hit the other's tests.

Fault tests may ``kill``/``stop`` members freely, but must leave the cluster whole: call
``start(i)`` (or ``ensure_whole()``) before returning, in a ``finally``, so the next test gets
three green members. Use a unique index per test with ``number_of_replicas: 1`` if it must
survive a node loss.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.esplugin.engines.registry import connect
from sira_seek.esplugin.local.cluster import ClusterState, LocalCluster

SIZE = 3
ENGINES = ("opensearch", "elasticsearch")
# HTTP base port per engine (transport +100); away from the single nodes (9410/9420), from
# `node up` (9430/9440) and from each other, so both clusters can run at once.
BASE_PORTS = {"opensearch": 9460, "elasticsearch": 9470}


class ClusterHandle:
    """Control over one session 3-node cluster; members are numbered 0..2 (``node-0``...).

    ``url`` is node 0's (which may be the dead one after ``kill(0)``); ``urls`` are all of
    them, and ``backend()`` connects with all, as sira-seek does for a multi-host --url.
    """

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.engine = cluster.spec.engine

    @property
    def tag(self) -> str:
        """How fault-table rows name this cluster, e.g. ``[elasticsearch 3-node]``."""
        return f"[{self.engine} {SIZE}-node]"

    @classmethod
    def start_session_cluster(
        cls, settings: NodeSettings | None = None, engine: str = "opensearch"
    ) -> ClusterHandle:
        """Start (or reuse, completing it) the session cluster of ``engine`` and wait for green.

        The OpenSearch folder and name keep their historical spelling (no engine suffix), so
        a cluster kept up by an earlier session is reused rather than orphaned.
        """
        if engine not in BASE_PORTS:
            raise ValueError(f"no test cluster for engine {engine!r}; one of {ENGINES}")
        settings = settings or NodeSettings()
        own = os.environ.get("SIRA_SEEK_TEST_CLUSTER_NAME")
        folder = "test-clusters" if engine == "opensearch" else f"test-clusters-{engine}"
        name = f"sira-seek-test-{engine}"
        cluster = LocalCluster(
            settings,
            engine,
            size=SIZE,
            root=settings.home / (f"{folder}-{own}" if own else folder),
            cluster_name=f"{name}-{own}" if own else name,
            base_port=BASE_PORTS[engine],
        )
        handle = cls(cluster)
        cluster.up()
        handle.wait_for_health("green")
        return handle

    # -- what tests read ----------------------------------------------------------------------

    @property
    def state(self) -> ClusterState:
        state = self.cluster.state()
        if state is None:
            raise RuntimeError("the test cluster has no state file: it was stopped")
        return state

    @property
    def url(self) -> str:
        return self.state.url

    @property
    def urls(self) -> list[str]:
        return self.state.urls

    def node_names(self) -> list[str]:
        """Member names in index order (``node-0``, ``node-1``, ``node-2``)."""
        return [n.name for n in self.state.nodes]

    def node_url(self, i: int) -> str:
        return self.state.nodes[i].url

    def pid(self, i: int) -> int | None:
        """The server JVM's pid of member ``i``."""
        return self.state.nodes[i].pid

    def alive(self, i: int) -> bool:
        return self.state.nodes[i].alive()

    def backend(self) -> SearchBackend:
        """A fresh backend with every member's URL (detection skips dead members)."""
        return connect(ClusterSettings(url=",".join(self.urls)))

    def health(self, **params: str | int) -> dict[str, Any]:
        """``_cluster/health`` from the first live member."""
        body = self.cluster.health(**params)
        if body is None:
            raise RuntimeError("no member of the test cluster answers")
        return body

    def get(self, path: str) -> Any:
        """GET ``path`` as JSON from the first live member (for _cat and _cluster APIs)."""
        for node in self.state.nodes:
            if not node.alive():
                continue
            try:
                with urllib.request.urlopen(node.url + path, timeout=30) as resp:  # noqa: S310
                    return json.loads(resp.read() or b"null")
            except (urllib.error.URLError, ConnectionError):
                continue
        raise RuntimeError(f"no member of the test cluster answered GET {path}")

    def wait_for_health(self, status: str = "green", timeout_s: float = 120.0) -> dict[str, Any]:
        """Until all members are in the cluster and health is ``status`` (or better)."""
        deadline = time.monotonic() + timeout_s
        body: dict[str, Any] = {}
        while time.monotonic() < deadline:
            body = (
                self.cluster.health(wait_for_nodes=SIZE, wait_for_status=status, timeout="5s") or {}
            )
            if body and not body.get("timed_out", True):
                return body
            time.sleep(0.5)
        raise TimeoutError(f"test cluster not {status} with {SIZE} nodes: {body}")

    # -- faults -------------------------------------------------------------------------------

    def kill(self, i: int) -> None:
        """SIGKILL member ``i`` (as a crash or an OOM kill would); returns once it is dead."""
        self.cluster.kill_node(i)

    def stop(self, i: int) -> None:
        """Graceful stop of member ``i`` (SIGTERM: it leaves the cluster cleanly)."""
        self.cluster.stop_node(i)

    def start(self, i: int) -> None:
        """Restart member ``i`` on its old ports and data, and wait until it has rejoined and
        health is green again (its replicas recovered)."""
        self.cluster.start_node(i, status="green")
        self.wait_for_health("green")

    def ensure_whole(self) -> None:
        """Restart every dead member and wait for green: call it in a ``finally``."""
        for i in range(SIZE):
            if not self.alive(i):
                self.cluster.start_node(i, status="yellow")
        self.wait_for_health("green")

    def down(self) -> None:
        self.cluster.down()
