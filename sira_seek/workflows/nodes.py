"""Local Elasticsearch/OpenSearch nodes and clusters (``sira-seek node up|down|status``, the
demo's node): dev/ops machinery, not a job over an index.

Routed through this workflow module rather than listed as public, because the local
deployments live in the engine plugin (``sira_seek.esplugin.local``), the one place that knows
an engine: the command line starts, lists and stops them through the names below (loaded on
first use, PEP 562) and never imports the plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sira_seek.esplugin.local.cluster import DEFAULT_CLUSTER_HEAP, LocalCluster
    from sira_seek.esplugin.local.deployments import (
        LocalDeployment,
        local_clusters,
        running_deployments,
        running_local_nodes,
    )
    from sira_seek.esplugin.local.distributions import DEFAULT_VERSIONS, TESTED_VERSIONS
    from sira_seek.esplugin.local.node import LocalNode

__all__ = [
    "DEFAULT_CLUSTER_HEAP",
    "DEFAULT_VERSIONS",
    "LocalCluster",
    "LocalDeployment",
    "LocalNode",
    "TESTED_VERSIONS",
    "local_clusters",
    "running_deployments",
    "running_local_nodes",
]

_EXPORTS = {
    "sira_seek.esplugin.local.cluster": (
        "DEFAULT_CLUSTER_HEAP",
        "LocalCluster",
    ),
    "sira_seek.esplugin.local.deployments": (
        "LocalDeployment",
        "local_clusters",
        "running_deployments",
        "running_local_nodes",
    ),
    "sira_seek.esplugin.local.distributions": (
        "DEFAULT_VERSIONS",
        "TESTED_VERSIONS",
    ),
    "sira_seek.esplugin.local.node": ("LocalNode",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
