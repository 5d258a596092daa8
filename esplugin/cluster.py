"""Choose the cluster a command talks to: a configured URL always wins."""

from __future__ import annotations

from sira_seek.config import ClusterSettings, NodeSettings

from .distributions import DEFAULT_VERSIONS
from .errors import SiraSeekEngineError
from .local_node import LocalNode, NodeState


def running_local_nodes(node_settings: NodeSettings) -> list[NodeState]:
    """Nodes started by ``sira-seek node up`` on this machine that still answer."""
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


def resolve_url(
    cluster: ClusterSettings, node_settings: NodeSettings, *, engine: str | None = None
) -> ClusterSettings:
    """URL given > a running local node (preferring ``engine``) > a clear error."""
    if cluster.url:
        return cluster
    nodes = [n for n in running_local_nodes(node_settings) if not n.secure]
    if engine:
        nodes = [n for n in nodes if n.engine == engine] or nodes
    if not nodes:
        raise SiraSeekEngineError(
            "No cluster configured and no local node running. Pass --url (or set "
            "SIRA_SEEK_URL), or start one with `sira-seek node up`."
        )
    return cluster.model_copy(update={"url": nodes[0].url})
