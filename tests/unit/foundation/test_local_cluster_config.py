"""Multi-host URLs and the local cluster's files and settings, without starting a node."""

from __future__ import annotations

from pathlib import Path

import pytest

from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.esplugin.engines.errors import NodeStartError
from sira_seek.esplugin.local.cluster import LocalCluster
from sira_seek.esplugin.local.deployments import LocalDeployment, local_clusters


def test_urls_split_a_comma_separated_url_in_order() -> None:
    settings = ClusterSettings(url=" http://a:9200/ ,http://b:9200,, https://c:9200")
    assert settings.urls() == ["http://a:9200", "http://b:9200", "https://c:9200"]
    assert ClusterSettings(url="http://a:9200").urls() == ["http://a:9200"]
    assert ClusterSettings().urls() == []


def test_urls_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIRA_SEEK_URL", "http://a:9200,http://b:9200")
    assert ClusterSettings().urls() == ["http://a:9200", "http://b:9200"]


@pytest.mark.parametrize(
    ("engine", "bootstrap", "other"),
    [
        ("opensearch", "cluster.initial_cluster_manager_nodes", "cluster.initial_master_nodes"),
        ("elasticsearch", "cluster.initial_master_nodes", "cluster.initial_cluster_manager_nodes"),
    ],
)
def test_discovery_settings_name_every_member(
    tmp_path: Path, engine: str, bootstrap: str, other: str
) -> None:
    cluster = LocalCluster(NodeSettings(home=tmp_path), engine, size=3, base_port=19430)
    state = cluster._new_state()
    settings = cluster._discovery_settings(state)
    assert settings[bootstrap] == "node-0,node-1,node-2"
    assert other not in settings
    ports = [n.transport_port for n in state.nodes]
    assert len(set(ports)) == 3
    assert settings["discovery.seed_hosts"] == ",".join(f"127.0.0.1:{p}" for p in ports)
    assert [n.http_port + 100 for n in state.nodes] == ports
    assert len({n.node_dir for n in state.nodes}) == 3


def test_a_saved_cluster_is_listed_as_one_deployment(tmp_path: Path) -> None:
    settings = NodeSettings(home=tmp_path)
    cluster = LocalCluster(settings, "opensearch", size=3, base_port=19460)
    state = cluster._new_state()
    cluster._save(state)
    (found,) = local_clusters(settings)
    assert found.size == 3 and found.cluster_dir == cluster.cluster_dir
    deployment = LocalDeployment.from_cluster(state)
    assert deployment.kind == "cluster"
    assert deployment.url == deployment.urls[0] == state.nodes[0].url
    assert [m.name for m in deployment.nodes] == ["node-0", "node-1", "node-2"]
    assert not any(m.alive for m in deployment.nodes)  # nothing was started


def test_a_secured_cluster_is_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(NodeStartError, match="single node"):
        LocalCluster(NodeSettings(home=tmp_path, secure=True), "opensearch", size=3)
