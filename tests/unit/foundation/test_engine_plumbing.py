from __future__ import annotations

from pathlib import Path

import pytest
from jdk_kit import fake_jdk

from sira_seek.backend import ClusterInfo
from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.detect import detect_cluster
from sira_seek.esplugin.engines.elasticsearch_backend import ElasticsearchBackend
from sira_seek.esplugin.engines.errors import NodeStartError, SiraSeekEngineError, WrongClientError
from sira_seek.esplugin.engines.registry import available_engines, load_backend_class
from sira_seek.esplugin.local.distributions import distribution_spec
from sira_seek.esplugin.local.node import find_java


def test_both_engines_are_registered_plugins() -> None:
    engines = available_engines()
    assert {"elasticsearch", "opensearch"} <= set(engines)
    assert load_backend_class("opensearch").name == "opensearch"
    with pytest.raises(SiraSeekEngineError, match="No sira-seek backend"):
        load_backend_class("solr")


def test_an_unsupported_server_major_names_the_supported_ones() -> None:
    """One elasticsearch-py speaks to 7.x, 8.x and 9.x servers (compatibility headers); a major
    outside that range is refused at connect time, naming what is supported."""
    info = ClusterInfo(engine="elasticsearch", version="6.8.23", url="http://x:9200")
    with pytest.raises(WrongClientError, match=r"6\.x is not supported.*7\.x, 8\.x and 9"):
        ElasticsearchBackend.connect(ClusterSettings(url=info.url), info)


def test_find_java_respects_engine_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = fake_jdk(tmp_path, "jdk8", "1.8.0_292")
    new = fake_jdk(tmp_path, "jdk25", "25.0.1")
    monkeypatch.setenv("SIRA_SEEK_JAVA_HOME", str(old))
    monkeypatch.setenv("JAVA_HOME", str(new))
    monkeypatch.delenv("ES_JAVA_HOME", raising=False)
    assert find_java(distribution_spec("elasticsearch", "9.2.4")) == new
    spec = distribution_spec("opensearch", "2.19.6")
    assert spec.java_max == 23
    monkeypatch.setenv("SIRA_SEEK_JAVA_HOME", str(new))
    monkeypatch.setenv("JAVA_HOME", str(old))
    monkeypatch.setenv("OPENSEARCH_JAVA_HOME", str(old))
    try:
        found = find_java(spec)
    except NodeStartError as exc:
        assert "needs Java 11..23" in str(exc)
    else:  # a suitable system JDK under /usr/lib/jvm
        assert found not in (old, new)


def test_unknown_engine_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown engine"):
        distribution_spec("solr")


# Detection itself (OpenSearch from ``GET /``, the minimal Elasticsearch archive through the node
# info API, refused credentials named without the secret) runs against the real nodes: every
# session connect, tests/integration/test_secured_*.py. No stand-in server imitates an engine.


def test_unreachable_url_is_explained() -> None:
    with pytest.raises(SiraSeekEngineError, match="No search cluster answers"):
        detect_cluster(ClusterSettings(url="http://127.0.0.1:9"))
