"""The SIRA paper's HyDE baseline in offline batch rounds, as a user runs it (issue 41's
acceptance line): ``eval retrieval --method hyde --llm batch:DIR#M`` against a real node
waits on one request per query (exit 75 naming the round's file); once a batch job wrote the
round's output, the same command finishes with the metrics, and the TREC run is tagged hyde.

The batch job is played by writing OpenAI Batch output lines for the round's own request
bodies (the LLM's file format, not an engine's): each answer is a passage with the judged
document's words, so the figures show the generated text reached the BM25 query.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import ingested_collection, run_cli

from sira_seek.llm.batch_rounds import output_path, requests_path

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

DOCS = [
    {"_id": "a", "title": "Apollo 11", "text": "First crewed Moon landing, July 1969."},
    {"_id": "b", "title": "Sputnik", "text": "First artificial Earth satellite, 1957."},
    {"_id": "c", "title": "Vostok 1", "text": "Yuri Gagarin, first human in space."},
]
QUERIES = {"q1": "who went up first", "q2": "Armstrong's mission", "q3": "Soviet launch in 1957"}
QRELS = {"q1": "c", "q2": "a", "q3": "b"}
PASSAGES = {  # the batch job's answers: words of the judged document the query lacks
    "who went up first": "Yuri Gagarin flew Vostok 1 into space.",
    "Armstrong's mission": "Apollo 11 made the crewed Moon landing.",
    "Soviet launch in 1957": "Sputnik was the artificial Earth satellite.",
}


@pytest.fixture
def tiny(node_urls: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """(url, index, folder): three documents in a fresh index on the shared node, its queries
    and qrels in ``folder``."""
    url, index = node_urls["opensearch"], f"e2e-hyde-{uuid.uuid4().hex[:8]}"
    with ingested_collection(url, index, tmp_path, DOCS, QUERIES, QRELS):
        yield url, index, tmp_path


def _answer(rounds: Path, number: int) -> None:
    """Write the round's output file as a batch job would: one chat completion per line."""
    lines = []
    for raw in requests_path(rounds, number).read_text("utf-8").splitlines():
        request = json.loads(raw)
        asked = request["body"]["messages"][-1]["content"]
        text = next(p for q, p in PASSAGES.items() if q in asked)
        body = {
            "id": "c",
            "object": "chat.completion",
            "model": request["body"]["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29},
        }
        line = {
            "id": f"out-{len(lines)}",
            "custom_id": request["custom_id"],
            "response": {"status_code": 200, "request_id": "r", "body": body},
            "error": None,
        }
        lines.append(json.dumps(line))
    output_path(rounds, number).write_text("".join(x + "\n" for x in lines), encoding="utf-8")


def test_eval_retrieval_hyde_waits_on_one_request_per_query_then_scores(
    tiny: tuple[str, str, Path], tmp_path: Path
) -> None:
    url, index, folder = tiny
    rounds, run_file = tmp_path / "rounds", tmp_path / "hyde.trec"
    command = [
        "eval", "retrieval", "--index", index, "--url", url, "--method", "hyde",
        "--llm", f"batch:{rounds}#m", "--queries", str(folder / "queries.jsonl"),
        "--qrels", str(folder / "qrels.tsv"), "--run-file", str(run_file), "--json",
    ]  # fmt: skip
    env = {"SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "llm-cache")}
    waiting = run_cli(command, env=env)
    assert waiting.returncode == 75, waiting.stderr
    said = json.loads(waiting.stdout)
    assert said["round"] == 1 and said["waiting_for"] == str(requests_path(rounds, 1))
    asked = [json.loads(x) for x in requests_path(rounds, 1).read_text().splitlines()]
    assert len(asked) == len(QUERIES)  # one request per query: no probe, no second call
    prompts = sorted(r["body"]["messages"][-1]["content"] for r in asked)
    assert prompts == sorted(
        f"Please write a passage to answer the question.\nQuestion: {q}\nPassage:"
        for q in QUERIES.values()
    )
    assert not run_file.exists()

    _answer(rounds, 1)
    done = run_cli(command, env=env)
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)
    assert metrics["queries"] == 3 and metrics["fallbacks"] == 0
    assert metrics["ndcg@10"] == 1.0  # every judged document first: the passages were used
    assert {line.split()[-1] for line in run_file.read_text().splitlines()} == {"hyde"}

    plain = run_cli([*command[:6], *command[10:14], "--json"], env=env)
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout)["ndcg@10"] < 1.0  # BM25 alone misses some
