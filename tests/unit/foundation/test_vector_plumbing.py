"""The pure parts of vector support: which local nodes get the k-NN plugin and how a plugin
Maven Central does not serve is left out, and the request bodies our backends build for each
engine version. That the bodies work is shown on real nodes by the contract suite
(tests/integration/contract/test_vector_contract.py); here only OUR output is checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from sira_seek.backend import ClusterInfo
from sira_seek.config import NodeSettings
from sira_seek.esplugin.engines.elasticsearch_backend import ElasticsearchBackend
from sira_seek.esplugin.engines.opensearch_backend import OpenSearchBackend
from sira_seek.esplugin.local.distributions import KNN_PLUGIN, distribution_spec
from sira_seek.esplugin.local.node import (
    LocalNode,
    NodeState,
    install_plugins,
    not_served_marker,
    pom_dependencies,
)


def test_opensearch_2_nodes_get_the_knn_plugin_and_the_module_it_extends() -> None:
    (plugin,) = distribution_spec("opensearch", "2.19.6").plugins
    assert plugin.coords("2.19.6") == "org.opensearch.plugin:opensearch-knn:2.19.6.0:zip"
    (painless,) = plugin.requires_modules
    assert painless.name == "lang-painless" and painless.with_dependencies
    assert 'RuntimePermission "createClassLoader"' in painless.security_policy
    # 3.x's k-NN extends transport-grpc too, which is not assembled: no plugin there.
    assert distribution_spec("opensearch", "3.3.0").plugins == []
    assert distribution_spec("elasticsearch", "9.2.4").plugins == []


POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <dependencies>
    <dependency><groupId>org.antlr</groupId><artifactId>antlr4-runtime</artifactId>
      <version>4.13.1</version><scope>compile</scope></dependency>
    <dependency><groupId>org.ow2.asm</groupId><artifactId>asm</artifactId>
      <version>9.7</version></dependency>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId>
      <version>4.13</version><scope>test</scope></dependency>
    <dependency><groupId>x</groupId><artifactId>rt</artifactId>
      <version>1</version><scope>runtime</scope></dependency>
  </dependencies>
</project>
"""


def test_a_modules_jars_are_read_from_its_pom(tmp_path: Path) -> None:
    pom = tmp_path / "m.pom"
    pom.write_text(POM)
    assert pom_dependencies(pom) == [
        "org.antlr:antlr4-runtime:4.13.1",
        "org.ow2.asm:asm:9.7",
        "x:rt:1",
    ]


def test_a_plugin_maven_does_not_serve_is_left_out_without_asking_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = distribution_spec("opensearch", "2.19.4")
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    not_served_marker(KNN_PLUGIN.coords("2.19.4"), downloads).write_text("mvn said so")
    base = tmp_path / "dist" / "opensearch-2.19.4"
    base.mkdir(parents=True)
    monkeypatch.setenv("PATH", str(tmp_path / "no-mvn-here"))  # asking Maven would fail
    assert install_plugins(base, spec, tmp_path, downloads) == (base, [])


def test_a_running_node_without_the_plugin_is_restarted_unless_maven_lacks_it(
    tmp_path: Path,
) -> None:
    node = LocalNode(NodeSettings(home=tmp_path), "opensearch", "2.19.6")
    state = NodeState(
        engine="opensearch", version="2.19.6", url="http://x", pid=1, node_dir=str(tmp_path)
    )
    assert node._lacks_plugins(state)  # started by a sira-seek without the plugin
    assert not node._lacks_plugins(state.model_copy(update={"plugins": ["opensearch-knn"]}))
    marker = not_served_marker(KNN_PLUGIN.coords("2.19.6"), tmp_path / "downloads")
    marker.parent.mkdir(parents=True)
    marker.write_text("mvn said so")
    assert not node._lacks_plugins(state)


def _backend(cls: type, engine: str, version: str) -> object:
    return cls(None, ClusterInfo(engine=engine, version=version, url="http://x"))


def test_opensearch_passes_num_candidates_as_ef_search_from_2_16() -> None:
    new = _backend(OpenSearchBackend, "opensearch", "2.19.6")
    old = _backend(OpenSearchBackend, "opensearch", "2.15.0")
    new_clause = new._knn_body("v", [1.0, 0.0], 3, 50)["query"]["knn"]["v"]  # type: ignore[attr-defined]
    old_clause = old._knn_body("v", [1.0, 0.0], 3, 50)["query"]["knn"]["v"]  # type: ignore[attr-defined]
    assert new_clause == {"vector": [1.0, 0.0], "k": 3, "method_parameters": {"ef_search": 50}}
    assert old_clause == {"vector": [1.0, 0.0], "k": 3}
    assert new.vector_index_settings() == {"knn": True}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("similarity", "elasticsearch", "opensearch"),
    [("cosine", "cosine", "cosinesimil"), ("dot_product", "dot_product", "innerproduct"),
     ("l2", "l2_norm", "l2")],
)  # fmt: skip
def test_each_similarity_maps_to_the_engines_own_name(
    similarity: str, elasticsearch: str, opensearch: str
) -> None:
    es = _backend(ElasticsearchBackend, "elasticsearch", "9.2.4")._vector_field(4, similarity)  # type: ignore[attr-defined]
    os_ = _backend(OpenSearchBackend, "opensearch", "2.19.6")._vector_field(4, similarity)  # type: ignore[attr-defined]
    assert es == {
        "type": "dense_vector",
        "dims": 4,
        "index": True,
        "similarity": elasticsearch,
        "index_options": {"type": "hnsw"},
    }
    assert os_ == {
        "type": "knn_vector",
        "dimension": 4,
        "method": {"name": "hnsw", "engine": "lucene", "space_type": opensearch},
    }
