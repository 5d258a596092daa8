"""A real Elasticsearch node with security on: HTTPS with a private CA, users, roles.

API keys cannot be created on the minimal archive (the .security index mapping needs
analysis-common), so least privilege is shown with a file-realm read-only role instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.esplugin.errors import SiraSeekEngineError
from sira_seek.esplugin.local_node import LocalNode, NodeState
from sira_seek.esplugin.local_security import LocalCredentials
from sira_seek.esplugin.registry import connect

pytestmark = pytest.mark.integration

SIRA_SEEK = str(Path(sys.executable).parent / "sira-seek")


@pytest.fixture(scope="module")
def secured() -> Iterator[tuple[NodeState, LocalCredentials]]:
    node = LocalNode(NodeSettings(secure=True), "elasticsearch")
    started_here = node.running() is None
    try:
        state = node.up()
    except Exception as exc:
        pytest.fail(f"could not start a secured Elasticsearch node: {exc}", pytrace=False)
    creds = node.credentials()
    assert creds is not None
    yield state, creds
    if started_here:
        node.down()


def _admin(state: NodeState, creds: LocalCredentials, **extra: object) -> ClusterSettings:
    values: dict[str, object] = {
        "url": state.url,
        "username": creds.username,
        "password": creds.password,
        "ca_certs": creds.ca_certs,
    }
    values.update(extra)
    return ClusterSettings(**values)  # type: ignore[arg-type]


def _reader_env(state: NodeState, creds: LocalCredentials, home: Path) -> dict[str, str]:
    """A minimal environment for the CLI as the read-only user (secrets via env, not argv)."""
    return {
        "SIRA_SEEK_URL": state.url,
        "SIRA_SEEK_USERNAME": creds.reader_username,
        "SIRA_SEEK_PASSWORD": creds.reader_password,
        "SIRA_SEEK_CA_CERTS": creds.ca_certs,
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
    }


def _fingerprint(creds: LocalCredentials) -> str:
    node_crt = creds.ca_certs.replace("ca.crt", "node.crt")
    out = subprocess.run(
        ["openssl", "x509", "-in", node_crt, "-noout", "-fingerprint", "-sha256"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split("=", 1)[1].strip()


def test_tls_with_ca_file_and_basic_auth(secured: tuple[NodeState, LocalCredentials]) -> None:
    state, creds = secured
    assert state.url.startswith("https://")
    backend = connect(_admin(state, creds))
    assert backend.info.engine == "elasticsearch"
    index = f"sec-{uuid.uuid4().hex[:8]}"
    try:
        assert backend.ensure_corpus_index(index)
        result = backend.bulk_upsert(index, [{"_id": "1", "title": "TLS", "text": "secured"}])
        assert result.succeeded == 1
    finally:
        backend.delete_index(index)


def test_certificate_fingerprint_pinning(secured: tuple[NodeState, LocalCredentials]) -> None:
    state, creds = secured
    pinned = _admin(state, creds, ca_certs=None, ssl_fingerprint=_fingerprint(creds))
    assert connect(pinned).wait_for_health("yellow", 10) in ("green", "yellow")
    wrong = _admin(state, creds, ca_certs=None, ssl_fingerprint="AA:" * 31 + "AA")
    with pytest.raises(SiraSeekEngineError, match="TLS verification failed"):
        connect(wrong)


def test_bad_credentials_wrong_ca_wrong_host_are_clear(
    secured: tuple[NodeState, LocalCredentials],
) -> None:
    state, creds = secured
    with pytest.raises(SiraSeekEngineError, match="refused the credentials") as bad:
        connect(_admin(state, creds, password="not-the-password-123"))
    assert "not-the-password-123" not in str(bad.value)
    with pytest.raises(SiraSeekEngineError, match="TLS verification failed"):
        connect(_admin(state, creds, ca_certs=None))  # system CAs do not know the private CA
    port = int(state.url.rsplit(":", 1)[1])
    with pytest.raises(SiraSeekEngineError, match="No search cluster answers"):
        connect(_admin(state, creds, url=f"https://127.0.0.1:{port + 7}"))


def test_read_only_user_can_search_but_not_write(
    secured: tuple[NodeState, LocalCredentials],
) -> None:
    state, creds = secured
    admin = connect(_admin(state, creds))
    index = f"sec-{uuid.uuid4().hex[:8]}"
    admin.ensure_corpus_index(index)
    admin.bulk_upsert(index, [{"_id": "1", "title": "Moon", "text": "lunar landing"}])
    admin.refresh(index)
    try:
        reader = connect(
            _admin(state, creds, username=creds.reader_username, password=creds.reader_password)
        )
        hits = reader.search(index, {"query": {"match": {"contents": "lunar"}}})
        assert [h.id for h in hits.hits] == ["1"]
        stats = reader.term_statistics(index, "contents", ["lunar"])
        assert stats[0].terms[0].doc_freq == 1
        with pytest.raises(SiraSeekEngineError, match="permission denied"):
            reader.bulk_upsert(index, [{"_id": "2", "title": "x", "text": "y"}])
        with pytest.raises(SiraSeekEngineError, match="permission denied"):
            reader.ensure_corpus_index(f"{index}-new")
    finally:
        admin.delete_index(index)


def test_cli_never_prints_secrets(
    secured: tuple[NodeState, LocalCredentials], tmp_path: Path
) -> None:
    state, creds = secured
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": "a", "title": "t", "text": "x"}) + "\n")
    env_ro = _reader_env(state, creds, tmp_path)
    denied = subprocess.run(
        [SIRA_SEEK, "ingest", str(corpus), "--index", "sec-denied"],
        capture_output=True,
        text=True,
        env=env_ro,
        check=False,
    )
    assert denied.returncode == 1
    assert "permission denied" in denied.stderr and "Traceback" not in denied.stderr
    wrong = subprocess.run(
        [SIRA_SEEK, "ingest", str(corpus), "--index", "x", "--password", "Wr0ng-s3cret"],
        capture_output=True,
        text=True,
        env=env_ro,
        check=False,
    )
    assert wrong.returncode == 1 and "refused the credentials" in wrong.stderr
    printed = denied.stdout + denied.stderr + wrong.stdout + wrong.stderr
    for secret in (creds.password, creds.reader_password, "Wr0ng-s3cret"):
        assert secret not in printed


def test_sync_without_write_rights_refuses_clearly(
    secured: tuple[NodeState, LocalCredentials], tmp_path: Path
) -> None:
    state, creds = secured
    admin = connect(_admin(state, creds))
    index = f"sec-{uuid.uuid4().hex[:8]}"
    admin.ensure_corpus_index(index)
    admin.bulk_upsert(index, [{"_id": "1", "title": "Moon", "text": "lunar landing"}])
    admin.refresh(index)
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text(json.dumps({"_id": "1", "keywords": ["apollo"]}) + "\n")
    env = _reader_env(state, creds, tmp_path)
    try:
        res = subprocess.run(
            [
                str(Path(sys.executable).parent / "sira-sync"),
                "--index",
                index,
                "--from-jsonl",
                str(jsonl),
                "--state-dir",
                str(tmp_path / "s"),
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=120,
        )
        assert res.returncode != 0
        printed = res.stdout + res.stderr
        assert "Traceback" not in printed and creds.reader_password not in printed
        assert "permission" in printed.lower() or "unauthorized" in printed.lower(), printed[-800:]
        doc = admin.get(index, "1")
        assert doc is not None and doc.source is not None and "sira_enrichment" not in doc.source
    finally:
        admin.delete_index(index)


def test_explain_json_reports_and_run_files_carry_no_secret(
    secured: tuple[NodeState, LocalCredentials], tmp_path: Path
) -> None:
    """Everything the read path prints or writes, scanned for the password."""
    state, creds = secured
    admin = connect(_admin(state, creds))
    index = f"sec-{uuid.uuid4().hex[:8]}"
    admin.ensure_corpus_index(index)
    admin.bulk_upsert(index, [{"_id": "q1doc", "title": "Moon", "text": "lunar landing"}])
    admin.refresh(index)
    (tmp_path / "q.jsonl").write_text(json.dumps({"_id": "q1", "text": "lunar"}) + "\n")
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tq1doc\t1\n")
    env = _reader_env(state, creds, tmp_path)
    run = str(tmp_path / "run.json")
    commands = [
        ["search", "lunar", "--index", index, "--explain"],
        ["search", "lunar", "--index", index, "--json"],
        ["explain", "q1doc", "--query", "lunar", "--index", index],
        [
            "eval",
            "retrieval",
            "--index",
            index,
            "--queries",
            str(tmp_path / "q.jsonl"),
            "--qrels",
            str(tmp_path / "qrels.tsv"),
            "--save-run",
            run,
            "--json",
        ],
        ["report", run, "--out", str(tmp_path / "r.html")],
        ["search", "lunar", "--index", "no-such-index"],
    ]
    try:
        printed = ""
        for args in commands:
            res = subprocess.run(
                [SIRA_SEEK, *args],
                capture_output=True,
                text=True,
                env=env,
                check=False,
                timeout=120,
            )
            printed += res.stdout + res.stderr
            assert "Traceback" not in res.stderr, (args, res.stderr[-800:])
        written = Path(run).read_text() + (tmp_path / "r.html").read_text()
        assert "GET " in printed and "q1doc" in printed  # the commands really ran
        for secret in (creds.password, creds.reader_password):
            assert secret not in printed and secret not in written
    finally:
        admin.delete_index(index)
