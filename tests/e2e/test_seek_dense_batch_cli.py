"""SEEK's baselines with ``--retriever dense`` in offline batch rounds, as a user runs it
(issue 41's acceptance line "eval qa --retriever dense --llm batch:... waits on its first
round"): on the shared Elasticsearch node, an index ingested with ``--embed`` (the real CPU
embedder), ``eval qa --method vanilla-rag --retriever dense`` exits 75 with one request whose
prompt holds the document kNN found for a question sharing no word with it; an index without
vectors is refused (exit 2) before any round is written."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import run_cli

from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.registry import connect
from sira_seek.llm.batch_rounds import requests_path

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

DOCS = [
    {"_id": "etna", "title": "Etna", "text": "Mount Etna is an active volcano on Sicily."},
    {"_id": "piano", "title": "Piano", "text": "A keyboard instrument with hammers."},
    {"_id": "lagos", "title": "Lagos", "text": "The largest city of Nigeria."},
]
QUESTION = "Which Italian peak erupts?"


@pytest.fixture
def indexes(node_urls: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    """(url, embedded index, plain index) on the shared Elasticsearch node."""
    url = node_urls["elasticsearch"]
    names = [f"e2e-dense-{uuid.uuid4().hex[:8]}", f"e2e-plain-{uuid.uuid4().hex[:8]}"]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    for name, extra in zip(names, (["--embed"], []), strict=True):
        made = run_cli(["ingest", str(corpus), "--index", name, "--url", url, *extra])
        assert made.returncode == 0, made.stderr
    try:
        yield url, names[0], names[1]
    finally:
        backend = connect(ClusterSettings(url=url))
        for name in names:
            backend.delete_index(name)


def test_eval_qa_with_the_dense_retriever_waits_on_its_first_round(
    indexes: tuple[str, str, str], tmp_path: Path
) -> None:
    url, embedded, plain = indexes
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"id": "q1", "question": QUESTION, "golden_answers": ["Etna"]}))
    rounds = tmp_path / "rounds"
    command = [
        "eval", "qa", "--qa", str(qa), "--url", url, "--method", "vanilla-rag",
        "--retriever", "dense", "--top-k", "1", "--llm", f"batch:{rounds}#m",
    ]  # fmt: skip
    env = {"SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "llm-cache")}
    refused = run_cli([*command, "--index", plain], env=env)
    assert refused.returncode == 2 and "--embed" in refused.stderr
    assert not rounds.exists()

    waiting = run_cli([*command, "--index", embedded], env=env)
    assert waiting.returncode == 75, waiting.stderr
    (asked,) = [json.loads(x) for x in requests_path(rounds, 1).read_text().splitlines()]
    prompt = json.dumps(asked["body"])
    assert "Mount Etna is an active volcano" in prompt
    assert "keyboard" not in prompt and "Nigeria" not in prompt
