from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
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


class _Handler(BaseHTTPRequestHandler):
    routes: dict[str, tuple[int, dict[str, str], dict]] = {}

    def do_GET(self) -> None:  # noqa: N802
        status, headers, body = self.routes.get(self.path.split("?")[0], (404, {}, {}))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(json.dumps(body).encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_stub() -> Iterator[tuple[str, dict]]:
    """A local HTTP stub to exercise response parsing (not a cluster)."""
    routes: dict = {}
    handler = type("H", (_Handler,), {"routes": routes})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", routes
    server.shutdown()


def test_detect_opensearch_from_root(http_stub: tuple[str, dict]) -> None:
    url, routes = http_stub
    routes["/"] = (
        200,
        {},
        {"cluster_name": "c", "version": {"distribution": "opensearch", "number": "2.19.6"}},
    )
    info = detect_cluster(ClusterSettings(url=url))
    assert (info.engine, info.version, info.major) == ("opensearch", "2.19.6", 2)


def test_detect_minimal_elasticsearch_via_node_info(http_stub: tuple[str, dict]) -> None:
    url, routes = http_stub
    product = {"X-elastic-product": "Elasticsearch"}
    routes["/"] = (405, product, {"error": "Incorrect HTTP method"})
    routes["/_nodes/_local"] = (200, product, {"nodes": {"n1": {"version": "9.2.4"}}})
    info = detect_cluster(ClusterSettings(url=url))
    assert (info.engine, info.version) == ("elasticsearch", "9.2.4")


def test_bad_credentials_message_has_no_secret(http_stub: tuple[str, dict]) -> None:
    url, routes = http_stub
    routes["/"] = (401, {}, {"error": "unauthorized"})
    settings = ClusterSettings(url=url, username="elastic", password="s3cr3t-value")
    with pytest.raises(SiraSeekEngineError) as err:
        detect_cluster(settings)
    assert "refused the credentials" in str(err.value)
    assert "s3cr3t-value" not in str(err.value) and "s3cr3t-value" not in repr(settings)


def test_unreachable_url_is_explained() -> None:
    with pytest.raises(SiraSeekEngineError, match="No search cluster answers"):
        detect_cluster(ClusterSettings(url="http://127.0.0.1:9"))
