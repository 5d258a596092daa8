"""Local-node bookkeeping that needs no running node: versions, folders, file modes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sira_seek.config import NodeSettings
from sira_seek.esplugin.engines.errors import NodeStartError
from sira_seek.esplugin.local import security_opensearch as os_security
from sira_seek.esplugin.local.distributions import DEFAULT_VERSIONS
from sira_seek.esplugin.local.node import LocalNode, _make_traversable


def test_secured_opensearch_defaults_to_the_version_whose_plugin_maven_serves(
    tmp_path: Path,
) -> None:
    secured = LocalNode(NodeSettings(home=tmp_path, secure=True), "opensearch")
    assert secured.spec.version == os_security.SECURED_OPENSEARCH_VERSION == "2.19.4"
    assert secured.node_dir == tmp_path / "nodes" / "opensearch-2.19.4-secure"
    plain = LocalNode(NodeSettings(home=tmp_path), "opensearch")
    assert plain.spec.version == DEFAULT_VERSIONS["opensearch"]
    pinned = LocalNode(NodeSettings(home=tmp_path, secure=True), "opensearch", "2.19.6")
    assert pinned.spec.version == "2.19.6"
    assert os_security.security_plugin_coords("2.19.4") == (
        "org.opensearch.plugin:opensearch-security:2.19.4.0:zip"
    )


def test_a_missing_security_plugin_is_explained(tmp_path: Path) -> None:
    def fetch(coords: str) -> Path:
        raise NodeStartError(f"Could not fetch {coords} from Maven")

    base = tmp_path / "dist" / "opensearch-2.19.6"
    base.mkdir(parents=True)
    with pytest.raises(NodeStartError, match="must match the engine exactly.*2.19.4") as err:
        os_security.install_security_plugin(base, "2.19.6", tmp_path, fetch=fetch)
    assert "opensearch-security:2.19.6.0:zip" in str(err.value)


def test_making_the_home_traversable_keeps_private_files_private(tmp_path: Path) -> None:
    node = tmp_path / "nodes" / "n"
    node.mkdir(parents=True)
    secret, public = node / "credentials.json", node / "state.json"
    secret.write_text("{}")
    public.write_text("{}")
    secret.chmod(0o600)
    public.chmod(0o640)
    node.chmod(0o750)
    _make_traversable(tmp_path)
    assert secret.stat().st_mode & 0o777 == 0o600
    assert public.stat().st_mode & 0o777 == 0o644
    assert node.stat().st_mode & 0o777 == 0o755
    assert os.access(node, os.X_OK)


def test_secured_elasticsearch_private_keys_are_owner_only(tmp_path: Path) -> None:
    from sira_seek.esplugin.local.security import make_certificates

    certs = tmp_path / "certs"
    make_certificates(certs)
    for key in ("ca.key", "node.key"):
        assert (certs / key).stat().st_mode & 0o777 == 0o600, key
    assert (certs / "ca.crt").stat().st_mode & 0o044  # the CA certificate is for everyone
    (certs / "node.key").chmod(0o644)  # a node made before the fix is repaired on next start
    make_certificates(certs)
    assert (certs / "node.key").stat().st_mode & 0o777 == 0o600


def test_java_opts_reach_the_node_after_the_heap_and_nothing_else_leaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sira_seek.esplugin.local.distributions import distribution_spec
    from sira_seek.esplugin.local.node import node_env

    monkeypatch.setenv("SIRA_SEEK_NODE_JAVA_OPTS", "-XX:TieredStopAtLevel=1")
    monkeypatch.setenv("ES_JAVA_OPTS", "-Xmx64g")  # the caller's own must not leak in
    settings = NodeSettings()
    assert settings.java_opts == "-XX:TieredStopAtLevel=1"
    spec = distribution_spec("elasticsearch", None)
    env = node_env(spec, tmp_path / "jdk", tmp_path, tmp_path / "conf", "384m", settings.java_opts)
    assert env["ES_JAVA_OPTS"] == "-Xms384m -Xmx384m -XX:TieredStopAtLevel=1"
    plain = node_env(spec, tmp_path / "jdk", tmp_path, tmp_path / "conf", "384m")
    assert plain["ES_JAVA_OPTS"] == "-Xms384m -Xmx384m"
