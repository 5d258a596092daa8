"""SIRA's default pipeline as a user runs it with a live LLM (issue 42's acceptance line):
``eval retrieval --method sira --llm llamacpp:gemma3-270m`` (the embedded CPU model, a real
llama.cpp server's model) includes the §3.1 rerank stage without being asked, and its ``--json``
and notes say so; ``--rerank 0`` turns the stage off. The figures are not asserted (the 270M
model's phrases and scores are its own), the stage's presence and its calls are."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import ingested_collection, run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

DOCS = [
    {"_id": "a", "title": "Apollo 11", "text": "First crewed Moon landing, July 1969."},
    {"_id": "b", "title": "Sputnik", "text": "First artificial Earth satellite, 1957."},
    {"_id": "c", "title": "Vostok 1", "text": "Yuri Gagarin, first human in space."},
]
QUERIES = {"q1": "Soviet launch in 1957"}
QRELS = {"q1": "b"}


@pytest.fixture
def tiny(node_urls: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    url, index = node_urls["elasticsearch"], f"e2e-sira-rerank-{uuid.uuid4().hex[:8]}"
    with ingested_collection(url, index, tmp_path, DOCS, QUERIES, QRELS):
        yield url, index, tmp_path


def test_eval_retrieval_sira_with_a_live_llm_reranks_by_default(
    tiny: tuple[str, str, Path], tmp_path: Path
) -> None:
    url, index, folder = tiny
    command = [
        "eval", "retrieval", "--index", index, "--url", url, "--method", "sira",
        "--llm", "llamacpp:gemma3-270m", "--queries", str(folder / "queries.jsonl"),
        "--qrels", str(folder / "qrels.tsv"), "--json",
    ]  # fmt: skip
    env = {"SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "llm-cache")}
    default = run_cli(command, env=env)
    assert default.returncode == 0, default.stderr
    metrics = json.loads(default.stdout)
    assert metrics["rerank"] == 10 and metrics["queries"] == 1
    said = default.stderr + json.dumps(metrics.get("notes", []))
    assert "SIRA's default with an LLM (§3.1); --rerank 0 / rerank=0 turns it off" in said

    off = run_cli([*command, "--rerank", "0"], env=env)
    assert off.returncode == 0, off.stderr
    plain = json.loads(off.stdout)
    assert plain["rerank"] == 0
    assert "LLM rerank" not in off.stderr + json.dumps(plain.get("notes", []))
