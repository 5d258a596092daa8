"""A real Elasticsearch node with security on: HTTPS with a private CA, users, roles, API keys.

Least privilege is shown twice: with a file-realm read-only user and with a read-only API key.
API keys need the .security index, which the minimal archive can create only with the
test-only analysis shim the fixture installs through ``LocalNode(prepare_distribution=...)``
(tests/support/analysis_shim).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from secured_kit import (
    assert_no_secret,
    cli_env,
    cluster_settings,
    node_fingerprint,
    run_installed,
    run_installed_side_by_side,
)
from support.analysis_shim import SHIM_NAME, distribution_with_shim

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.esplugin.engines.elasticsearch_backend import ElasticsearchBackend
from sira_seek.esplugin.engines.errors import SiraSeekEngineError
from sira_seek.esplugin.engines.registry import connect
from sira_seek.esplugin.local.node import LocalNode, NodeState
from sira_seek.esplugin.local.security import LocalCredentials

pytestmark = pytest.mark.integration

SIRA_SEEK = str(Path(sys.executable).parent / "sira-seek")
SIRA_SYNC = str(Path(sys.executable).parent / "sira-sync")
# The read-only API key may read only indexes with this prefix.
KEY_PREFIX = "seckey-"


@pytest.fixture(scope="module")
def secured() -> Iterator[tuple[NodeState, LocalCredentials]]:
    # API keys need the .security index, which the minimal archive can create only with the
    # test-only analysis shim: handed to the node through its public distribution hook.
    node = LocalNode(
        NodeSettings(secure=True), "elasticsearch", prepare_distribution=distribution_with_shim
    )
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


def test_tls_with_ca_file_and_basic_auth(secured: tuple[NodeState, LocalCredentials]) -> None:
    state, creds = secured
    assert state.url.startswith("https://")
    backend = connect(cluster_settings(state, creds))
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
    pinned = cluster_settings(state, creds, ca_certs=None, ssl_fingerprint=node_fingerprint(creds))
    assert connect(pinned).wait_for_health("yellow", 10) in ("green", "yellow")
    wrong = cluster_settings(state, creds, ca_certs=None, ssl_fingerprint="AA:" * 31 + "AA")
    with pytest.raises(SiraSeekEngineError, match="TLS verification failed"):
        connect(wrong)


def test_bad_credentials_wrong_ca_wrong_host_are_clear(
    secured: tuple[NodeState, LocalCredentials],
) -> None:
    state, creds = secured
    with pytest.raises(SiraSeekEngineError, match="refused the credentials") as bad:
        connect(cluster_settings(state, creds, password="not-the-password-123"))
    assert "not-the-password-123" not in str(bad.value)
    with pytest.raises(SiraSeekEngineError, match="TLS verification failed"):
        connect(
            cluster_settings(state, creds, ca_certs=None)
        )  # system CAs do not know the private CA
    port = int(state.url.rsplit(":", 1)[1])
    with pytest.raises(SiraSeekEngineError, match="No search cluster answers"):
        connect(cluster_settings(state, creds, url=f"https://127.0.0.1:{port + 7}"))


def test_read_only_user_can_search_but_not_write(
    secured: tuple[NodeState, LocalCredentials],
) -> None:
    state, creds = secured
    admin = connect(cluster_settings(state, creds))
    index = f"sec-{uuid.uuid4().hex[:8]}"
    admin.ensure_corpus_index(index)
    admin.bulk_upsert(index, [{"_id": "1", "title": "Moon", "text": "lunar landing"}])
    admin.refresh(index)
    try:
        reader = connect(cluster_settings(state, creds, reader=True))
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
    env_ro = cli_env(state, creds, tmp_path, reader=True)
    denied, wrong = run_installed_side_by_side(
        [
            ("sira-seek", ["ingest", str(corpus), "--index", "sec-denied"], env_ro),
            (
                "sira-seek",
                ["ingest", str(corpus), "--index", "x", "--password", "Wr0ng-s3cret"],
                env_ro,
            ),
        ]
    )
    assert denied.returncode == 1
    assert "permission denied" in denied.stderr and "Traceback" not in denied.stderr
    assert wrong.returncode == 1 and "refused the credentials" in wrong.stderr
    printed = denied.stdout + denied.stderr + wrong.stdout + wrong.stderr
    assert_no_secret(printed, creds.password, creds.reader_password, "Wr0ng-s3cret")


def _moon_index(admin: SearchBackend, doc_id: str) -> str:
    """A unique index holding one document, written by the admin."""
    index = f"sec-{uuid.uuid4().hex[:8]}"
    admin.ensure_corpus_index(index)
    admin.bulk_upsert(index, [{"_id": doc_id, "title": "Moon", "text": "lunar landing"}])
    admin.refresh(index)
    return index


def test_sync_without_write_rights_refuses_clearly(
    secured: tuple[NodeState, LocalCredentials], tmp_path: Path
) -> None:
    state, creds = secured
    admin = connect(cluster_settings(state, creds))
    index = _moon_index(admin, "1")
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text(json.dumps({"_id": "1", "keywords": ["apollo"]}) + "\n")
    env = cli_env(state, creds, tmp_path, reader=True)
    try:
        res = run_installed(
            "sira-sync",
            ["--index", index, "--from-jsonl", str(jsonl)]
            + ["--state-dir", str(tmp_path / "s"), "--no-progress"],
            env,
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
    admin = connect(cluster_settings(state, creds))
    index = _moon_index(admin, "q1doc")
    (tmp_path / "q.jsonl").write_text(json.dumps({"_id": "q1", "text": "lunar"}) + "\n")
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tq1doc\t1\n")
    env = cli_env(state, creds, tmp_path, reader=True)
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
        ["search", "lunar", "--index", "no-such-index"],
        ["report", run, "--out", str(tmp_path / "r.html")],
    ]
    try:
        printed = ""
        # the report reads the eval's run file: it runs after the others, which run together
        reads = run_installed_side_by_side([("sira-seek", args, env) for args in commands[:5]])
        last = run_installed_side_by_side([("sira-seek", args, env) for args in commands[5:]])
        for args, res in zip(commands, reads + last, strict=True):
            printed += res.stdout + res.stderr
            assert "Traceback" not in res.stderr, (args, res.stderr[-800:])
        written = Path(run).read_text() + (tmp_path / "r.html").read_text()
        assert "GET " in printed and "q1doc" in printed  # the commands really ran
        assert_no_secret([printed, written], creds.password, creds.reader_password)
    finally:
        admin.delete_index(index)


# -- API keys (minted live; possible on the minimal archive thanks to the analysis shim) --------


class ApiKey(NamedTuple):
    id: str
    encoded: str  # what a user passes: base64("id:api_key")
    api_key: str

    @property
    def secrets(self) -> list[str]:
        return [self.encoded, self.api_key]


READ_ONLY_KEY_ROLE = {
    "sira_read_only": {
        "cluster": ["monitor"],  # detection asks the node info API on the minimal archive
        "indices": [{"names": [f"{KEY_PREFIX}*"], "privileges": ["read", "view_index_metadata"]}],
    }
}


def _admin_es(state: NodeState, creds: LocalCredentials) -> ElasticsearchBackend:
    backend = connect(cluster_settings(state, creds))
    assert isinstance(backend, ElasticsearchBackend)
    return backend


def _mint_key(
    admin: ElasticsearchBackend, name: str, roles: dict[str, object] | None = None
) -> ApiKey:
    body: dict[str, object] = {"name": f"sira-test-{name}", "expiration": "2h"}
    if roles is not None:
        body["role_descriptors"] = roles
    resp = admin.request("POST", "/_security/api_key", body=body)
    return ApiKey(id=resp["id"], encoded=resp["encoded"], api_key=resp["api_key"])


@pytest.fixture(scope="module")
def api_keys(secured: tuple[NodeState, LocalCredentials]) -> Iterator[dict[str, ApiKey]]:
    """One full-access key and one read-only key, minted by the admin, invalidated after."""
    state, creds = secured
    admin = _admin_es(state, creds)
    try:
        keys = {
            "full": _mint_key(admin, "full"),
            "read_only": _mint_key(admin, "read-only", READ_ONLY_KEY_ROLE),
        }
    except SiraSeekEngineError as exc:
        pytest.fail(f"could not mint an API key on the secured node: {exc}", pytrace=False)
    yield keys
    admin.request("DELETE", "/_security/api_key", body={"ids": [k.id for k in keys.values()]})


def _key_env(state: NodeState, creds: LocalCredentials, key: str | None, home: Path) -> dict:
    """The CLI's environment as a user sets it: URL, CA file and the key, no user/password."""
    env = {
        "SIRA_SEEK_URL": state.url,
        "SIRA_SEEK_CA_CERTS": creds.ca_certs,
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
    }
    if key is not None:
        env["SIRA_SEEK_API_KEY"] = key
    return env


def _cli(exe: str, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(
        [exe, *args], capture_output=True, text=True, env=env, check=False, timeout=180
    )
    assert "Traceback" not in res.stderr, (args, res.stderr[-800:])
    return res


def _clis_side_by_side(
    calls: list[tuple[str, list[str]]], env: dict[str, str]
) -> list[subprocess.CompletedProcess[str]]:
    """Like ``_cli`` for independent runs, started together (``run_installed_side_by_side``)."""
    results = run_installed_side_by_side([(Path(exe).name, args, env) for exe, args in calls])
    for (_, args), res in zip(calls, results, strict=True):
        assert "Traceback" not in res.stderr, (args, res.stderr[-800:])
    return results


def _key_corpus(tmp_path: Path) -> Path:
    """Ten documents: 'apollo' in one (DF 1 = tau*|C| at tau 0.1, so SIRA keeps it)."""
    docs = [{"_id": "1", "title": "Moon", "text": "lunar landing apollo"}]
    docs += [{"_id": str(i), "title": f"Sun {i}", "text": f"solar note {i}"} for i in range(2, 11)]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return corpus


def test_api_keys_are_minted_thanks_to_the_test_only_analysis_shim(
    secured: tuple[NodeState, LocalCredentials], api_keys: dict[str, ApiKey]
) -> None:
    state, creds = secured
    admin = _admin_es(state, creds)
    plugins = admin.request("GET", "/_cat/plugins", params={"format": "json"})
    assert [p["component"] for p in plugins] == [SHIM_NAME]
    # the open node's distribution stays as shipped: the shim lives in a sibling copy only
    dist = LocalNode(NodeSettings(), "elasticsearch").settings.home / "dist"
    assert not list((dist / "elasticsearch-9.2.4" / "plugins").iterdir())
    assert (dist / "elasticsearch-9.2.4-with-analysis-shim" / "plugins" / SHIM_NAME).is_dir()
    # the key authenticates as an API key of the admin
    as_key = connect(
        ClusterSettings(url=state.url, api_key=api_keys["full"].encoded, ca_certs=creds.ca_certs)
    )
    assert isinstance(as_key, ElasticsearchBackend)
    who = as_key.request("GET", "/_security/_authenticate")
    assert who["authentication_type"] == "api_key" and who["api_key"]["id"] == api_keys["full"].id
    # the shim's components behave like analysis-common's: the .security `email` analyzer
    email = {
        "tokenizer": "uax_url_email",
        "filter": [
            {
                "type": "pattern_capture",
                "preserve_original": True,
                "patterns": ["([^@]+)", "(\\p{L}+)", "(\\d+)", "@(.+)"],
            },
            "lowercase",
        ],
        "text": "Ann42@ann.org and ANN",
    }
    raw = [t["token"] for t in admin.request("POST", "/_analyze", body=email)["tokens"]]
    email["filter"] = [*email["filter"], "unique"]  # type: ignore[list-item]
    unique = [t["token"] for t in admin.request("POST", "/_analyze", body=email)["tokens"]]
    assert raw[0] == "ann42@ann.org" and len(raw) > len(set(raw))
    assert set(unique) == {"ann42@ann.org", "ann42", "ann", "42", "ann.org", "org", "and"}
    assert unique == list(dict.fromkeys(raw))  # first occurrences, in order


def test_cli_with_full_access_api_key_over_https(
    secured: tuple[NodeState, LocalCredentials],
    api_keys: dict[str, ApiKey],
    tmp_path: Path,
) -> None:
    state, creds = secured
    key = api_keys["full"]
    admin = _admin_es(state, creds)
    index = f"{KEY_PREFIX}{uuid.uuid4().hex[:8]}"
    env = _key_env(state, creds, key.encoded, tmp_path)
    (tmp_path / "e.jsonl").write_text(json.dumps({"_id": "1", "keywords": ["apollo"]}) + "\n")
    try:
        ingest = _cli(SIRA_SEEK, ["ingest", str(_key_corpus(tmp_path)), "--index", index], env)
        assert ingest.returncode == 0, ingest.stderr[-800:]
        admin.refresh(index)
        assert admin.count(index) == 10
        # the key as a flag instead of the environment variable
        flag_env = _key_env(state, creds, None, tmp_path)
        search = _cli(
            SIRA_SEEK,
            ["search", "lunar landing", "--index", index, "--json", "--api-key", key.encoded],
            flag_env,
        )
        assert search.returncode == 0, search.stderr[-800:]
        assert [h["_id"] for h in json.loads(search.stdout)["hits"]] == ["1"]
        sync = _cli(
            SIRA_SYNC,
            [
                "run",
                "--index",
                index,
                "--from-jsonl",
                str(tmp_path / "e.jsonl"),
                "--state-dir",
                str(tmp_path / "s"),
                "--no-progress",
            ],
            env,
        )
        assert sync.returncode == 0, sync.stderr[-800:]
        doc = admin.get(index, "1")
        assert doc is not None and doc.source is not None and "sira_enrichment" in doc.source
        printed = [r.stdout + r.stderr for r in (ingest, search, sync)]
        assert_no_secret(printed, *key.secrets, creds.password)
    finally:
        admin.delete_index(index)


def test_read_only_api_key_searches_and_reads_df_but_writes_nothing(
    secured: tuple[NodeState, LocalCredentials],
    api_keys: dict[str, ApiKey],
    tmp_path: Path,
) -> None:
    state, creds = secured
    key = api_keys["read_only"]
    admin = _admin_es(state, creds)
    index = f"{KEY_PREFIX}{uuid.uuid4().hex[:8]}"
    outside = f"sec-{uuid.uuid4().hex[:8]}"  # not matched by the key's index pattern
    corpus = _key_corpus(tmp_path)
    admin.ensure_corpus_index(index)
    admin.bulk_upsert(index, [json.loads(line) for line in corpus.read_text().splitlines()])
    admin.refresh(index)
    admin.ensure_corpus_index(outside)
    (tmp_path / "x.jsonl").write_text(
        json.dumps({"text": "lunar landing", "keywords": ["apollo", "zzzq"]}) + "\n"
    )
    (tmp_path / "q.jsonl").write_text(json.dumps({"_id": "q1", "text": "lunar"}) + "\n")
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\t1\t1\n")
    (tmp_path / "e.jsonl").write_text(json.dumps({"_id": "1", "keywords": ["apollo"]}) + "\n")
    env = _key_env(state, creds, key.encoded, tmp_path)
    run_file = tmp_path / "run.json"
    try:
        # reads: search with the DF check of the candidate phrases, explain, eval
        search, explain, evaluation = _clis_side_by_side(
            [
                (
                    SIRA_SEEK,
                    ["search", "lunar landing", "--index", index, "--json"]
                    + ["--expansions", str(tmp_path / "x.jsonl")],
                ),
                (SIRA_SEEK, ["explain", "1", "--query", "lunar", "--index", index]),
                (
                    SIRA_SEEK,
                    ["eval", "retrieval", "--index", index, "--json", "--save-run", str(run_file)]
                    + ["--queries", str(tmp_path / "q.jsonl")]
                    + ["--qrels", str(tmp_path / "qrels.tsv")],
                ),
            ],
            env,
        )
        assert search.returncode == 0, search.stderr[-800:]
        out = json.loads(search.stdout)
        assert out["hits"][0]["_id"] == "1" and out["doc_count"] == 10
        found = {c["phrase"]: (c["decision"], c["doc_freq"]) for c in out["candidates"]}
        assert found["apollo"] == ("kept", 1) and found["zzzq"][0] == "absent"
        assert explain.returncode == 0 and "1" in explain.stdout, explain.stderr[-800:]
        assert evaluation.returncode == 0 and run_file.exists(), evaluation.stderr[-800:]
        reader = connect(
            ClusterSettings(url=state.url, api_key=key.encoded, ca_certs=creds.ca_certs)
        )
        assert reader.term_statistics(index, "contents", ["apollo"])[0].terms[0].doc_freq == 1
        with pytest.raises(SiraSeekEngineError, match="permission denied"):
            reader.search(outside, {"query": {"match_all": {}}})

        # writes: refused clearly, nothing written
        before = admin.count(index)
        changed = tmp_path / "changed.jsonl"  # one new and one changed document
        changed.write_text(
            json.dumps({"_id": "11", "title": "New", "text": "fresh"})
            + "\n"
            + json.dumps({"_id": "1", "title": "Moon", "text": "rewritten"})
            + "\n"
        )
        ingest, new_index, sync = _clis_side_by_side(
            [
                (SIRA_SEEK, ["ingest", str(changed), "--index", index]),
                (SIRA_SEEK, ["ingest", str(corpus), "--index", f"{index}-new"]),
                (
                    SIRA_SYNC,
                    ["run", "--index", index, "--from-jsonl", str(tmp_path / "e.jsonl")]
                    + ["--state-dir", str(tmp_path / "s"), "--no-progress"],
                ),
            ],
            env,
        )
        for refused in (ingest, new_index, sync):
            assert refused.returncode == 1, refused.stdout[-400:] + refused.stderr[-400:]
            assert "permission denied" in refused.stderr, refused.stderr[-800:]
        admin.refresh(index)
        assert admin.count(index) == before == 10
        assert not admin.index_exists(f"{index}-new")
        doc = admin.get(index, "1")
        assert doc is not None and doc.source is not None and "sira_enrichment" not in doc.source
        assert admin.search(index, {"query": {"match": {"contents": "rewritten"}}}).hits == []

        runs = (search, explain, evaluation, ingest, new_index, sync)
        printed = [r.stdout + r.stderr for r in runs]
        assert_no_secret(printed + [run_file.read_text()], *key.secrets, creds.password)
    finally:
        admin.delete_index(index)
        admin.delete_index(outside)
        admin.delete_index(f"{index}-new")


def test_wrong_and_invalidated_api_keys_are_refused_clearly(
    secured: tuple[NodeState, LocalCredentials], tmp_path: Path
) -> None:
    state, creds = secured
    admin = _admin_es(state, creds)
    key = _mint_key(admin, "short-lived")
    wrong = base64.b64encode(f"{key.id}:not-the-key-0123456789".encode()).decode()
    args = ["search", "lunar", "--index", f"{KEY_PREFIX}{uuid.uuid4().hex[:8]}-absent"]
    try:
        works, bad = run_installed_side_by_side(
            [
                ("sira-seek", args, _key_env(state, creds, key.encoded, tmp_path)),
                ("sira-seek", args, _key_env(state, creds, wrong, tmp_path)),
            ]
        )
        for res in (works, bad):
            assert "Traceback" not in res.stderr, res.stderr[-800:]
        assert "does not exist" in works.stderr, works.stderr[-800:]  # past authentication
        invalidated = admin.request("DELETE", "/_security/api_key", body={"ids": [key.id]})
        assert invalidated["invalidated_api_keys"] == [key.id]
        gone = _cli(SIRA_SEEK, args, _key_env(state, creds, key.encoded, tmp_path))
    finally:
        admin.request("DELETE", "/_security/api_key", body={"ids": [key.id]})
    for refused in (bad, gone):
        assert refused.returncode == 1
        assert "refused the credentials (HTTP 401)" in refused.stderr, refused.stderr[-800:]
        assert "check the API key" in refused.stderr
    with pytest.raises(SiraSeekEngineError, match="refused the credentials") as err:
        connect(ClusterSettings(url=state.url, api_key=key.encoded, ca_certs=creds.ca_certs))
    printed = [r.stdout + r.stderr for r in (works, bad, gone)] + [str(err.value)]
    assert_no_secret(printed, *key.secrets, wrong, "not-the-key-0123456789")
