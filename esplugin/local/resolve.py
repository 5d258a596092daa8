"""Choose the cluster a command talks to: a configured URL always wins, then a local
deployment (``deployments``). Here, not in ``engines``: the local machinery may import the
engine plugins, never the reverse (tests/unit/test_esplugin_layers.py)."""

from __future__ import annotations

from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.esplugin.engines.errors import SiraSeekEngineError

from .deployments import running_deployments


def resolve_url(
    cluster: ClusterSettings, node_settings: NodeSettings, *, engine: str | None = None
) -> ClusterSettings:
    """URL (or Elastic Cloud id) given > a running local node or cluster (preferring
    ``engine``, else ``cluster.engine``) > a clear error.

    A local cluster gives every member's URL (comma-separated), so the clients keep working
    when one member, even the first, goes down.
    """
    if cluster.url or cluster.cloud_id:
        return cluster
    engine = engine or cluster.engine
    found = [d for d in running_deployments(node_settings) if not d.secure]
    if engine:
        found = [d for d in found if d.engine == engine] or found
    if not found:
        raise SiraSeekEngineError(
            "No cluster configured and no local node running. Pass --url (or set "
            "SIRA_SEEK_URL), or start one with `sira-seek node up`."
        )
    return cluster.model_copy(update={"url": ",".join(found[0].urls)})
