"""What ``sira-seek node up`` left running on this machine, single nodes and multi-node
clusters alike, in one shape (``LocalDeployment``) for ``node status`` and ``--json``: a cluster
is one entry whose ``urls`` name every member.

This is the local package's public interface to the rest: ``local.resolve``
reads ``running_deployments`` to find a local cluster when no URL is configured.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from sira_seek.config import NodeSettings
from sira_seek.processes import pid_alive

from .cluster import ClusterState, LocalCluster
from .distributions import DEFAULT_VERSIONS
from .node import LocalNode, NodeState

__all__ = [
    "LocalDeployment",
    "LocalMember",
    "local_clusters",
    "running_deployments",
    "running_local_clusters",
    "running_local_nodes",
]


class LocalMember(BaseModel):
    """One node process of a local deployment."""

    name: str
    url: str
    pid: int | None
    alive: bool


class LocalDeployment(BaseModel):
    """A running local single node or cluster (the JSON of ``node up/status --json``)."""

    engine: str
    version: str
    url: str  # the first node's: the one for people (curl, Dashboards)
    urls: list[str]  # every node's: what sira-seek's own clients get
    nodes: list[LocalMember] = Field(default_factory=list)
    secure: bool = False
    kind: str = "node"  # "node" | "cluster"
    cluster_name: str | None = None

    @classmethod
    def from_node(cls, state: NodeState) -> LocalDeployment:
        name = f"{state.engine}-{state.version}" + ("-secure" if state.secure else "")
        member = LocalMember(name=name, url=state.url, pid=state.pid, alive=pid_alive(state.pid))
        return cls(
            engine=state.engine,
            version=state.version,
            url=state.url,
            urls=[state.url],
            nodes=[member],
            secure=state.secure,
        )

    @classmethod
    def from_cluster(cls, state: ClusterState) -> LocalDeployment:
        members = [
            LocalMember(name=n.name, url=n.url, pid=n.pid or n.launcher_pid, alive=n.alive())
            for n in state.nodes
        ]
        return cls(
            engine=state.engine,
            version=state.version,
            url=state.url,
            urls=state.urls,
            nodes=members,
            secure=state.secure,
            kind="cluster",
            cluster_name=state.cluster_name,
        )


def running_local_nodes(node_settings: NodeSettings) -> list[NodeState]:
    """Single nodes started by ``sira-seek node up`` on this machine that still answer."""
    nodes_dir = node_settings.home / "nodes"
    found: list[NodeState] = []
    if not nodes_dir.is_dir():
        return found
    for folder in sorted(nodes_dir.iterdir()):
        engine, _, version = folder.name.partition("-")
        secure = version.endswith("-secure")
        version = version.removesuffix("-secure")
        if engine not in DEFAULT_VERSIONS or not version:
            continue
        settings = node_settings.model_copy(update={"secure": secure})
        state = LocalNode(settings, engine, version).running()
        if state is not None:
            found.append(state)
    return found


def local_clusters(node_settings: NodeSettings) -> list[LocalCluster]:
    """Clusters started by ``sira-seek node up --nodes N`` (running or not) on this machine."""
    root = node_settings.home / "clusters"
    found: list[LocalCluster] = []
    if not root.is_dir():
        return found
    for folder in sorted(root.iterdir()):
        try:
            state = ClusterState.model_validate_json((folder / "state.json").read_text())
        except (OSError, ValueError):
            continue
        if state.engine in DEFAULT_VERSIONS:
            size = len(state.nodes)
            found.append(LocalCluster(node_settings, state.engine, state.version, size=size))
    return found


def running_local_clusters(node_settings: NodeSettings) -> list[ClusterState]:
    """Local clusters with at least one member that answers."""
    return [s for c in local_clusters(node_settings) if (s := c.running()) is not None]


def running_deployments(node_settings: NodeSettings) -> list[LocalDeployment]:
    """Everything local that answers: single nodes first, then clusters."""
    return [LocalDeployment.from_node(s) for s in running_local_nodes(node_settings)] + [
        LocalDeployment.from_cluster(s) for s in running_local_clusters(node_settings)
    ]
