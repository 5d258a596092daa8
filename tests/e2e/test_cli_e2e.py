"""A new user's path through the CLI against the session's real nodes."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from cli_runner import run_cli

from sira_seek.config import ClusterSettings
from sira_seek.esplugin.registry import connect

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
        assert "corpus.jsonl:2: not JSON" in first.stderr
        assert "corpus.jsonl:4: missing _id" in first.stderr
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
        assert set(metrics) == {"ndcg@10", "recall@10", "recall@100", "queries"}
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


def test_password_never_printed(tiny_beir: Path) -> None:
    res = run_cli(
        [
            "ingest",
            str(tiny_beir),
            "--index",
            "x",
            "--url",
            "http://127.0.0.1:9",
            "--username",
            "elastic",
            "--password",
            "hunter2-secret",
        ]
    )
    assert res.returncode == 1
    assert "hunter2-secret" not in res.stdout + res.stderr


def test_sira_sync_entry_point_exists() -> None:
    import subprocess

    from cli_runner import BIN

    res = subprocess.run(
        [str(BIN / "sira-sync"), "--help"], capture_output=True, text=True, check=False
    )
    assert res.returncode == 0 and "Enrich" in res.stdout
