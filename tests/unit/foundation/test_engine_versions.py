"""The pure parts of the version matrix: which REST compatibility media type goes to which
Elasticsearch major, and the distribution specs (archive, module class, Java range) of the
matrix versions. That every request, bulk and msearch included, really carries it is shown on
real nodes: the contract suite runs on Elasticsearch 8.19.0, which refuses compatible-with=9
(tests/integration/contract), with no stand-in imitating an engine's answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from jdk_kit import fake_jdk

from sira_seek.config import NodeSettings
from sira_seek.esplugin.engines.elasticsearch_backend import (
    SUPPORTED_SERVER_MAJORS,
    compat_headers,
)
from sira_seek.esplugin.engines.errors import WrongClientError
from sira_seek.esplugin.local.distributions import distribution_spec
from sira_seek.esplugin.local.node import LocalNode, find_java


@pytest.mark.parametrize("major", [7, 8, 9])
def test_the_media_type_names_the_servers_own_major(major: int) -> None:
    json_headers, ndjson_headers = compat_headers(major)
    compat = f"application/vnd.elasticsearch+json; compatible-with={major}"
    assert json_headers == {"accept": compat, "content-type": compat}
    assert ndjson_headers == {
        "accept": compat,
        "content-type": f"application/vnd.elasticsearch+x-ndjson; compatible-with={major}",
    }


@pytest.mark.parametrize("major", [5, 6, 10])
def test_a_major_outside_the_matrix_is_refused_by_name(major: int) -> None:
    assert major not in SUPPORTED_SERVER_MAJORS
    with pytest.raises(WrongClientError, match=rf"Elasticsearch {major}\.x is not supported"):
        compat_headers(major)


def test_elasticsearch_8_19_spec() -> None:
    spec = distribution_spec("elasticsearch", "8.19.0")
    assert spec.artifact == "org.elasticsearch.distribution.integ-test-zip:elasticsearch:8.19.0:zip"
    assert (spec.major, spec.java_min, spec.java_max) == (8, 17, 24)
    assert spec.modules == []  # no analysis-common: basic analysis, as on 9.x
    seven = distribution_spec("elasticsearch", "7.17.29")
    assert (seven.java_min, seven.java_max) == (17, 24)  # 7.17 runs on Java 17 here
    nine = distribution_spec("elasticsearch", "9.2.4")
    assert (nine.java_min, nine.java_max) == (21, None)


def test_opensearch_3_3_spec() -> None:
    spec = distribution_spec("opensearch", "3.3.0")
    assert spec.artifact == "org.opensearch.distribution.integ-test-zip:opensearch:3.3.0:zip"
    assert (spec.major, spec.java_min, spec.java_max) == (3, 21, None)
    (module,) = spec.modules
    assert module.artifact == "org.opensearch.plugin:analysis-common"
    # The plugin class was renamed in OpenSearch 3; 2.x keeps the old name.
    assert module.classname == "org.opensearch.analysis.common.CommonAnalysisModulePlugin"
    (two,) = distribution_spec("opensearch", "2.19.6").modules
    assert two.classname == "org.opensearch.analysis.common.CommonAnalysisPlugin"


@pytest.mark.parametrize(
    ("engine", "version", "wanted"),
    [("elasticsearch", "8.19.0", "jdk17"), ("opensearch", "3.3.0", "jdk25")],
)
def test_find_java_picks_a_jdk_in_each_versions_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, version: str, wanted: str
) -> None:
    """With Java 25 named first and 17 second, Elasticsearch 8.19 (17..24) takes 17 and
    OpenSearch 3.3 (21+) takes 25."""
    jdk25, jdk17 = fake_jdk(tmp_path, "jdk25", "25.0.1"), fake_jdk(tmp_path, "jdk17", "17.0.9")
    for env in ("ES_JAVA_HOME", "OPENSEARCH_JAVA_HOME"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("SIRA_SEEK_JAVA_HOME", str(jdk25))
    monkeypatch.setenv("JAVA_HOME", str(jdk17))
    found = find_java(distribution_spec(engine, version))
    assert found == {"jdk17": jdk17, "jdk25": jdk25}[wanted]


def test_each_version_has_its_own_node_folder(tmp_path: Path) -> None:
    """`node up`/`node down --engine E --version V` address one node: its folder (state file,
    data, logs) is per engine and version, so versions run side by side."""
    settings = NodeSettings(home=tmp_path)
    dirs = {
        (engine, version): LocalNode(settings, engine, version).node_dir
        for engine, version in [
            ("elasticsearch", "8.19.0"),
            ("elasticsearch", "9.2.4"),
            ("opensearch", "2.19.6"),
            ("opensearch", "3.3.0"),
        ]
    }
    assert {d.name for d in dirs.values()} == {
        "elasticsearch-8.19.0",
        "elasticsearch-9.2.4",
        "opensearch-2.19.6",
        "opensearch-3.3.0",
    }
    assert LocalNode(settings, "elasticsearch").node_dir == dirs[("elasticsearch", "9.2.4")]
    by_settings = NodeSettings(home=tmp_path, engine="opensearch", version="3.3.0")
    assert LocalNode(by_settings).node_dir == dirs[("opensearch", "3.3.0")]
