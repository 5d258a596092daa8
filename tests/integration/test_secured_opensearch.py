"""A real OpenSearch node with the official security plugin: HTTPS with a private CA, basic
auth, an admin user and a read-only user (roles in the plugin's security index).

OpenSearch 2.19.4: the newest release whose security plugin Maven Central serves (the plugin
must match the engine exactly). One node per session (``secured_opensearch`` in conftest).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from secured_kit import (
    assert_no_secret,
    cli_env,
    cluster_settings,
    node_fingerprint,
    run_installed,
    run_installed_side_by_side,
)

from sira_seek.esplugin.engines.errors import SiraSeekEngineError
from sira_seek.esplugin.engines.opensearch_backend import OpenSearchBackend
from sira_seek.esplugin.engines.registry import connect
from sira_seek.esplugin.local.node import NodeState
from sira_seek.esplugin.local.security import LocalCredentials

pytestmark = pytest.mark.integration

Secured = tuple[NodeState, LocalCredentials]


@pytest.fixture
def corpus_index(secured_opensearch: Secured) -> Iterator[str]:
    """A unique index holding two documents, written by the admin user."""
    state, creds = secured_opensearch
    admin = connect(cluster_settings(state, creds))
    index = f"sec-os-{uuid.uuid4().hex[:10]}"
    admin.ensure_corpus_index(index)
    docs = [
        {"_id": "1", "title": "Moon", "text": "The lunar landing of Apollo 11"},
        {"_id": "2", "title": "Sea", "text": "Tides follow the moon"},
    ]
    assert admin.bulk_upsert(index, docs).succeeded == 2
    admin.refresh(index)
    yield index
    admin.delete_index(index)


def test_node_runs_the_security_plugin_over_https(secured_opensearch: Secured) -> None:
    state, creds = secured_opensearch
    assert state.url.startswith("https://") and state.secure and state.version == "2.19.4"
    assert Path(state.node_dir).name == "opensearch-2.19.4-secure"
    cred_file = Path(state.node_dir) / "credentials.json"
    assert cred_file.stat().st_mode & 0o077 == 0  # readable by its owner only
    backend = connect(cluster_settings(state, creds))
    assert (backend.info.engine, backend.info.version) == ("opensearch", "2.19.4")
    whoami = backend.request("GET", "/_plugins/_security/authinfo")
    assert whoami["user_name"] == creds.username and "all_access" in whoami["roles"]
    # analysis-common 2.19.4 is assembled as on the plain node: full English analysis
    assert backend.capabilities().english_analyzer
    assert "analysis-common" in backend.capabilities().modules
    # plain HTTP is refused on the TLS port
    with pytest.raises(SiraSeekEngineError):
        connect(cluster_settings(state, creds, url=state.url.replace("https://", "http://")))


def test_tls_with_ca_file_and_basic_auth_writes_and_reads(
    secured_opensearch: Secured, corpus_index: str
) -> None:
    state, creds = secured_opensearch
    admin = connect(cluster_settings(state, creds))
    assert admin.count(corpus_index) == 2
    hits = admin.search(corpus_index, {"query": {"match": {"contents": "lunar"}}})
    assert [h.id for h in hits.hits] == ["1"]


def test_certificate_fingerprint_pinning(secured_opensearch: Secured, corpus_index: str) -> None:
    """opensearch-py accepts a pin (chain check replaced by the pin); a wrong pin is refused."""
    state, creds = secured_opensearch
    pinned = cluster_settings(state, creds, ca_certs=None, ssl_fingerprint=node_fingerprint(creds))
    backend = connect(pinned)
    assert backend.wait_for_health("yellow", 10) in ("green", "yellow")
    assert [h.id for h in backend.search(corpus_index, {"query": {"match_all": {}}}).hits]
    wrong = pinned.model_copy(update={"ssl_fingerprint": "AA:" * 31 + "AA"})
    with pytest.raises(SiraSeekEngineError, match="TLS verification failed"):
        connect(wrong)
    # the client itself (not only detection) enforces the pin
    with pytest.raises(SiraSeekEngineError, match="SSLError"):
        OpenSearchBackend.connect(wrong, backend.info).wait_for_health("yellow", 5)


def test_bad_password_wrong_ca_wrong_host_are_clear(
    secured_opensearch: Secured, tmp_path: Path
) -> None:
    state, creds = secured_opensearch
    with pytest.raises(SiraSeekEngineError, match="refused the credentials") as bad:
        connect(cluster_settings(state, creds, password="not-the-password-123"))
    assert "not-the-password-123" not in str(bad.value)
    with pytest.raises(SiraSeekEngineError, match="refused the credentials"):
        connect(cluster_settings(state, creds, username="nobody"))
    with pytest.raises(SiraSeekEngineError, match="TLS verification failed"):
        connect(
            cluster_settings(state, creds, ca_certs=None)
        )  # system CAs do not know the private CA
    other_ca = tmp_path / "other-ca.crt"  # a CA, but not the one that signed the node
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "/dev/null",
         "-out", str(other_ca), "-days", "1", "-subj", "/CN=some other CA"],
        check=True, capture_output=True,
    )  # fmt: skip
    with pytest.raises(SiraSeekEngineError, match="TLS verification failed"):
        connect(cluster_settings(state, creds, ca_certs=str(other_ca)))
    port = int(state.url.rsplit(":", 1)[1])
    # the node's own address under a name its certificate does not carry
    with pytest.raises(SiraSeekEngineError, match="TLS verification failed"):
        connect(cluster_settings(state, creds, url=f"https://[::ffff:127.0.0.1]:{port}"))
    with pytest.raises(SiraSeekEngineError, match="No search cluster answers"):
        connect(cluster_settings(state, creds, url=f"https://127.0.0.1:{port + 7}"))
    with pytest.raises(SiraSeekEngineError, match="No search cluster answers"):
        connect(cluster_settings(state, creds, url=f"https://no-such-host.invalid:{port}"))


def test_read_only_user_searches_and_reads_df_but_cannot_write(
    secured_opensearch: Secured, corpus_index: str
) -> None:
    state, creds = secured_opensearch
    admin = connect(cluster_settings(state, creds))
    reader = connect(cluster_settings(state, creds, reader=True))
    hits = reader.search(corpus_index, {"query": {"match": {"contents": "lunar"}}})
    assert [h.id for h in hits.hits] == ["1"]
    stats = reader.term_statistics(corpus_index, "contents", ["moon"])  # _mtermvectors
    assert stats[0].terms[0].doc_freq == 2
    assert "properties" in json.dumps(reader.get_mapping(corpus_index))
    pages = list(reader.scan(corpus_index))  # point in time + search_after
    assert sorted(h.id for page in pages for h in page) == ["1", "2"]
    before = admin.count(corpus_index)
    with pytest.raises(SiraSeekEngineError, match="permission denied"):
        reader.bulk_upsert(corpus_index, [{"_id": "3", "title": "x", "text": "y"}])
    with pytest.raises(SiraSeekEngineError, match="permission denied"):
        reader.ensure_corpus_index(f"{corpus_index}-new")
    with pytest.raises(SiraSeekEngineError, match="permission denied"):
        reader.delete_index(corpus_index)
    admin.refresh(corpus_index)
    assert admin.count(corpus_index) == before
    assert not admin.index_exists(f"{corpus_index}-new")


def test_cli_as_admin_ingests_searches_and_syncs(
    secured_opensearch: Secured, tmp_path: Path
) -> None:
    state, creds = secured_opensearch
    index = f"sec-os-{uuid.uuid4().hex[:10]}"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps({"_id": "a", "title": "Apollo", "text": "the lunar module landed"})
        + "\n"
        + json.dumps({"_id": "b", "title": "Ocean", "text": "tides and waves"})
        + "\n"
    )
    enrich = tmp_path / "e.jsonl"
    enrich.write_text(json.dumps({"_id": "b", "keywords": ["moon gravity"]}) + "\n")
    env = cli_env(state, creds, tmp_path, reader=False)
    admin = connect(cluster_settings(state, creds))
    try:
        ingest = run_installed("sira-seek", ["ingest", str(corpus), "--index", index], env)
        assert ingest.returncode == 0, ingest.stderr[-800:]
        search = run_installed("sira-seek", ["search", "lunar", "--index", index, "--json"], env)
        assert search.returncode == 0, search.stderr[-800:]
        assert '"a"' in search.stdout and '"b"' not in search.stdout
        sync = run_installed(
            "sira-sync",
            ["run", "--index", index, "--from-jsonl", str(enrich)]
            + ["--state-dir", str(tmp_path / "s"), "--no-progress"],
            env,
        )
        assert sync.returncode == 0, sync.stderr[-800:]
        doc = admin.get(index, "b")
        assert doc is not None and doc.source is not None
        assert "moon gravity" in json.dumps(doc.source.get("sira_enrichment"))
        after = run_installed("sira-seek", ["search", "gravity", "--index", index, "--json"], env)
        assert after.returncode == 0 and '"b"' in after.stdout, after.stderr[-800:]
        printed = "".join(r.stdout + r.stderr for r in (ingest, search, sync, after))
        assert_no_secret(printed, creds.password, creds.reader_password)
    finally:
        admin.delete_index(index)


def test_cli_as_reader_searches_but_ingest_and_sync_are_refused(
    secured_opensearch: Secured, corpus_index: str, tmp_path: Path
) -> None:
    state, creds = secured_opensearch
    admin = connect(cluster_settings(state, creds))
    env = cli_env(state, creds, tmp_path, reader=True)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": "9", "title": "t", "text": "written"}) + "\n")
    enrich = tmp_path / "e.jsonl"
    enrich.write_text(json.dumps({"_id": "1", "keywords": ["apollo program"]}) + "\n")
    new_index = f"{corpus_index}-denied"
    before = admin.count(corpus_index)

    search, denied_new, denied_old, sync = run_installed_side_by_side(
        [
            ("sira-seek", ["search", "lunar", "--index", corpus_index, "--explain"], env),
            ("sira-seek", ["ingest", str(corpus), "--index", new_index], env),
            ("sira-seek", ["ingest", str(corpus), "--index", corpus_index], env),
            (
                "sira-sync",
                ["run", "--index", corpus_index, "--from-jsonl", str(enrich)]
                + ["--state-dir", str(tmp_path / "s"), "--no-progress"],
                env,
            ),
        ]
    )
    assert search.returncode == 0 and "GET " in search.stdout, search.stderr[-800:]
    for res in (denied_new, denied_old, sync):
        assert res.returncode != 0
        assert "Traceback" not in res.stderr
        assert "permission denied" in (res.stdout + res.stderr).lower(), res.stderr[-800:]

    admin.refresh(corpus_index)
    assert admin.count(corpus_index) == before  # nothing written
    assert not admin.index_exists(new_index)
    doc = admin.get(corpus_index, "1")
    assert doc is not None and doc.source is not None and "sira_enrichment" not in doc.source
    printed = "".join(r.stdout + r.stderr for r in (search, denied_new, denied_old, sync))
    assert_no_secret(printed, creds.password, creds.reader_password)


def test_cli_with_a_wrong_password_fails_clearly_and_prints_no_secret(
    secured_opensearch: Secured, corpus_index: str, tmp_path: Path
) -> None:
    state, creds = secured_opensearch
    env = {**cli_env(state, creds, tmp_path, reader=False), "SIRA_SEEK_PASSWORD": "Wr0ng-s3cret-os"}
    res, flag = run_installed_side_by_side(
        [
            ("sira-seek", ["search", "lunar", "--index", corpus_index], env),
            (
                "sira-seek",
                ["search", "lunar", "--index", corpus_index, "--password", "Wr0ng-s3cret-flag"],
                cli_env(state, creds, tmp_path, reader=True),
            ),
        ]
    )
    assert res.returncode == 1 and "refused the credentials" in res.stderr
    assert "Traceback" not in res.stderr
    assert flag.returncode == 1 and "refused the credentials" in flag.stderr
    printed = res.stdout + res.stderr + flag.stdout + flag.stderr
    assert_no_secret(
        printed, creds.password, creds.reader_password, "Wr0ng-s3cret-os", "Wr0ng-s3cret-flag"
    )


def test_node_cli_reuses_and_lists_the_secured_node(secured_opensearch: Secured) -> None:
    state, creds = secured_opensearch
    # No credentials from the environment; the node home (CI sets its own) carries over.
    home = {k: v for k, v in os.environ.items() if k.startswith("SIRA_SEEK_NODE_")}
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", **home}
    up = run_installed("sira-seek", ["node", "up", "--engine", "opensearch", "--secure"], env)
    assert up.returncode == 0, up.stderr[-800:]
    assert up.stdout.strip() == state.url
    assert creds.ca_certs in up.stderr and "credentials.json" in up.stderr
    status = run_installed("sira-seek", ["node", "status"], env)
    assert f"opensearch 2.19.4 {state.url}" in status.stdout
    assert_no_secret(up.stdout + up.stderr + status.stdout, creds.password, creds.reader_password)
