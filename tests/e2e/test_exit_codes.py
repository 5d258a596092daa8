"""The exit-code table (cli/exit_codes.py) as a user meets it: installed CLIs, real nodes."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import run_cli
from engine_matrix import ONE_ENGINE

from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.registry import connect

pytestmark = pytest.mark.e2e


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = [{"_id": f"d{i}", "title": f"Title {i}", "text": f"body {i} moon"} for i in range(4)]
    docs.append({"_id": "huge", "title": "x" * 40000, "text": "an immense keyword"})
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "queries.jsonl").write_text(json.dumps({"_id": "q", "text": "moon"}) + "\n")
    (tmp_path / "bad-qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq\td1\n")  # 2 columns
    return tmp_path


@pytest.fixture
def index(node_urls: dict[str, str], engine: str) -> Iterator[str]:
    name = f"test-exit-{uuid.uuid4().hex[:8]}"
    yield name
    connect(ClusterSettings(url=node_urls[engine])).delete_index(name)


def test_each_outcome_has_its_code(
    node_urls: dict[str, str], engine: str, corpus: Path, index: str
) -> None:
    env = {"SIRA_SEEK_URL": node_urls[engine], "SIRA_SEEK_DEBUG": "0"}
    # 3: the cluster refuses one document (a 40,000-byte keyword is an "immense term").
    backend = connect(ClusterSettings(url=node_urls[engine]))
    keyword = {"type": "text", "fields": {"raw": {"type": "keyword"}}}
    backend.create_index(
        index, {"mappings": {"properties": {"title": keyword, "text": {"type": "text"}}}}
    )
    partial = run_cli(["ingest", str(corpus), "--index", index, "--json"], env=env)
    assert partial.returncode == 3, partial.stderr[-1500:]
    report = json.loads(partial.stdout)
    assert report["written"] == 4 and [f["id"] for f in report["failed"]] == ["huge"]
    # 0: a corpus the cluster takes whole, into a new index.
    (corpus / "good").mkdir()
    lines = (corpus / "corpus.jsonl").read_text().splitlines()[:4]
    (corpus / "good" / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    good = f"{index}-ok"
    try:
        ok = run_cli(["ingest", str(corpus / "good"), "--index", good], env=env)
        assert ok.returncode == 0, ok.stderr[-1500:]
        _bad_input_and_missing_index(env, corpus, good)
    finally:
        backend.delete_index(good)


def _bad_input_and_missing_index(env: dict[str, str], corpus: Path, index: str) -> None:
    # 2: a malformed qrels file is bad input, named in one line.
    bad = run_cli(
        ["eval", "retrieval", "--index", index, "--queries", str(corpus / "queries.jsonl"),
         "--qrels", str(corpus / "bad-qrels.tsv")],
        env=env,
    )  # fmt: skip
    assert bad.returncode == 2, bad.stderr[-1500:]
    assert "bad-qrels.tsv" in bad.stderr and "Traceback" not in bad.stderr
    # 1: an index that does not exist.
    missing = run_cli(["search", "moon", "--index", f"{index}-missing"], env=env)
    assert missing.returncode == 1 and "does not exist" in missing.stderr


@ONE_ENGINE  # option parsing: the node only confirms the request got that far
def test_engine_and_insecure_are_read_from_the_environment(
    node_urls: dict[str, str], engine: str
) -> None:
    # SIRA_SEEK_ENGINE reaches --engine: a bad value is a usage error naming the option.
    bad = run_cli(["search", "x", "--index", "i"], env={"SIRA_SEEK_ENGINE": "solr"})
    assert bad.returncode == 2 and "--engine" in bad.stderr and "solr" in bad.stderr
    # SIRA_SEEK_INSECURE reaches --insecure: a true-or-false flag refuses other values.
    odd = run_cli(["search", "x", "--index", "i"], env={"SIRA_SEEK_INSECURE": "maybe"})
    assert odd.returncode == 2 and "--insecure" in odd.stderr
    ok = run_cli(
        ["search", "x", "--index", "i"],
        env={"SIRA_SEEK_URL": node_urls[engine], "SIRA_SEEK_INSECURE": "1"},
    )
    assert ok.returncode == 1 and "does not exist" in ok.stderr  # got as far as the cluster
