"""A new user's path through the CLI against the session's real nodes."""

from __future__ import annotations

import base64
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cli_runner import run_cli

from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.registry import connect

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


@pytest.fixture
def tiny_beir(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    folder.mkdir()
    docs = [
        {"_id": "a", "title": "Apollo 11", "text": "First crewed Moon landing, July 1969."},
        {"_id": "b", "title": "Sputnik", "text": "First artificial Earth satellite, 1957."},
        {"_id": "c", "title": "Vostok 1", "text": "Yuri Gagarin, first human in space."},
    ]
    lines = [
        json.dumps(docs[0]),
        "{oops",
        json.dumps(docs[1]),
        json.dumps({"text": "no id"}),
        json.dumps(docs[2]),
    ]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "first human in space"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "moon landing 1969"})
        + "\n"
    )
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tc\t1\nq2\ta\t1\n")
    return folder


@pytest.mark.parametrize("engine", ["opensearch", "elasticsearch"])
def test_ingest_then_eval_as_a_user(
    node_urls: dict[str, str], tiny_beir: Path, engine: str
) -> None:
    url = node_urls[engine]
    index = f"e2e-{uuid.uuid4().hex[:8]}"
    try:
        first = run_cli(["ingest", str(tiny_beir), "--index", index, "--url", url])
        assert first.returncode == 0, first.stderr
        assert "3 written" in first.stdout and "2 bad records skipped" in first.stdout
        assert "corpus.jsonl, line 2: not JSON" in first.stderr
        assert "corpus.jsonl, line 4: missing _id" in first.stderr
        again = run_cli(["ingest", str(tiny_beir), "--index", index, "--url", url])
        assert "0 written, 3 unchanged" in again.stdout
        ev = run_cli(
            [
                "eval",
                "retrieval",
                "--index",
                index,
                "--queries",
                str(tiny_beir / "queries.jsonl"),
                "--qrels",
                str(tiny_beir / "qrels.tsv"),
                "--method",
                "bm25",
                "--json",
                "--url",
                url,
            ]
        )
        assert ev.returncode == 0, ev.stderr
        metrics = json.loads(ev.stdout)
        default = {"ndcg@10", "recall@10", "recall@100", "queries", "fallbacks", "rerank"}
        default |= {"coverage@5", "coverage@10"}
        assert set(metrics) == default  # default keys; coverage is null without --qa
        assert metrics["coverage@5"] is None and metrics["fallbacks"] == 0
        assert metrics["rerank"] == 0  # BM25: no rerank stage
        assert metrics["queries"] == 2 and metrics["recall@10"] == 1.0
    finally:
        connect(ClusterSettings(url=url)).delete_index(index)


def test_unreachable_cluster_is_one_clear_line(tiny_beir: Path) -> None:
    res = run_cli(["ingest", str(tiny_beir), "--index", "x", "--url", "http://127.0.0.1:9"])
    assert res.returncode == 1
    assert "No search cluster answers at http://127.0.0.1:9" in res.stderr
    assert "Traceback" not in res.stderr


def test_eval_on_missing_index_is_explained(node_urls: dict[str, str], tiny_beir: Path) -> None:
    res = run_cli(
        [
            "eval",
            "retrieval",
            "--index",
            "no-such-index-e2e",
            "--queries",
            str(tiny_beir / "queries.jsonl"),
            "--qrels",
            str(tiny_beir / "qrels.tsv"),
            "--url",
            node_urls["opensearch"],
        ]
    )
    assert res.returncode == 1 and "does not exist" in res.stderr and "Traceback" not in res.stderr


class CredentialRecorder:
    """A loopback HTTP listener that records the Authorization header of every request and
    refuses it (401, as a secured cluster refuses unknown credentials). It imitates no engine
    API: it only shows what the CLI put on the wire."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str | None]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return None

            def _refuse(self) -> None:
                recorder.seen.append((self.command, self.path, self.headers.get("Authorization")))
                data = b"credentials refused\n"
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="security"')
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_HEAD = _refuse

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


SECRET = "hunter2-secret"
API_KEY = "c2lyYS1zZWVrLXRlc3Q6aHVudGVyMi1hcGkta2V5"


@pytest.mark.parametrize(
    ("how", "flags", "env", "header", "secrets"),
    [
        (
            "--password",
            ["--username", "elastic", "--password", SECRET],
            {},
            "Basic " + base64.b64encode(f"elastic:{SECRET}".encode()).decode(),
            [SECRET],
        ),
        (
            "SIRA_SEEK_PASSWORD",
            ["--username", "elastic"],
            {"SIRA_SEEK_PASSWORD": SECRET},
            "Basic " + base64.b64encode(f"elastic:{SECRET}".encode()).decode(),
            [SECRET],
        ),
        ("--api-key", ["--api-key", API_KEY], {}, f"ApiKey {API_KEY}", [API_KEY]),
    ],
)
def test_credentials_are_sent_and_never_printed(
    tiny_beir: Path,
    how: str,
    flags: list[str],
    env: dict[str, str],
    header: str,
    secrets: list[str],
) -> None:
    """The credentials reach the cluster (exactly, on every request) and appear in nothing
    the CLI prints: neither the secret nor the header value that encodes it."""
    recorder = CredentialRecorder()
    try:
        res = run_cli(
            ["ingest", str(tiny_beir), "--index", "x", "--url", recorder.url, *flags], env=env
        )
    finally:
        recorder.close()
    assert recorder.seen, "the CLI never contacted the cluster"
    assert all(auth == header for _, _, auth in recorder.seen), (how, recorder.seen)
    assert res.returncode == 1
    assert "refused the credentials (HTTP 401)" in res.stderr, res.stderr
    printed = res.stdout + res.stderr
    for secret in [*secrets, header.split(" ", 1)[1]]:
        assert secret not in printed, how
    assert "Traceback" not in printed


def test_debug_output_does_not_leak_the_password_either(tiny_beir: Path) -> None:
    """--debug prints DEBUG logs and the traceback: still no secret, no Authorization value."""
    recorder = CredentialRecorder()
    try:
        res = run_cli(
            ["--debug", "ingest", str(tiny_beir), "--index", "x", "--url", recorder.url,
             "--username", "elastic", "--password", SECRET],
        )  # fmt: skip
    finally:
        recorder.close()
    encoded = base64.b64encode(f"elastic:{SECRET}".encode()).decode()
    assert [auth for _, _, auth in recorder.seen][:1] == [f"Basic {encoded}"]
    assert res.returncode == 1 and "refused the credentials" in res.stderr
    assert SECRET not in res.stdout + res.stderr and encoded not in res.stdout + res.stderr


def test_sira_sync_entry_point_exists() -> None:
    import subprocess

    from cli_runner import BIN

    res = subprocess.run(
        [str(BIN / "sira-sync"), "--help"], capture_output=True, text=True, check=False
    )
    assert res.returncode == 0 and "Enrich" in res.stdout
