"""SIRA in offline batch rounds (``--llm batch:DIR#MODEL``): ``eval retrieval --method sira``
(batched and recorded paths, with a rerank) and ``search --queries``, over the in-memory
``SearchBackend`` double. Every query's expansion goes in one round, every query's rerank in
the next; the metrics and results then equal a live ``openai:`` run of the same server.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from in_memory_backend import InMemoryBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from batch_kit import (  # noqa: E402
    BodyServer,
    own_response_cache,  # noqa: E402, F401  (autouse: this test's own LLM cache)
    request_lines,
    run_rounds,
)

from sira_seek.cli.main import cli  # noqa: E402
from sira_seek.corpus import Query  # noqa: E402
from sira_seek.workflows.evaluate import (  # noqa: E402
    RetrievalEvaluation,
    RetrievalEvaluationRequest,
    evaluate_retrieval,
)
from sira_seek.workflows.search import QueriesSearchRequest, search_queries  # noqa: E402

DOCS = {
    "d1": {"title": "Fritz Lang films", "text": "Fritz Lang film. Fritz Lang film."},
    "d2": {"title": "Metropolis", "text": "A Fritz Lang film about a city of machines."},
    "d3": {"title": "Cinema", "text": "A film industry of Berlin studios."},
    "d4": {"title": "Paris", "text": "Paris is the capital of France on the Seine."},
}
QUERIES = [
    Query(id="q1", text="Fritz Lang film"),
    Query(id="q2", text="capital of France"),
    Query(id="q3", text="Berlin studios"),
]
QRELS = {"q1": {"d2": 1}, "q2": {"d4": 1}, "q3": {"d3": 1}}


def server(url: str, body: dict[str, Any]) -> str:
    """Expansions: a phrase of the query's document; rerank: Metropolis and Paris relevant."""
    text = json.dumps(body["messages"])
    if '"score"' in json.dumps(body.get("response_format", {})):
        shown = text.rsplit("Document:", 1)[-1]
        return json.dumps({"score": 90 if ("Metropolis" in shown or "Paris" in shown) else 10})
    phrases = ["machines"] if "Fritz" in text else ["Seine"] if "France" in text else ["industry"]
    return json.dumps({"keywords": phrases})


def evaluate(llm: str, **values: Any) -> RetrievalEvaluation:
    request = RetrievalEvaluationRequest.build(
        index="idx", queries=QUERIES, qrels=QRELS, method="sira", llm=llm, **values
    )
    return evaluate_retrieval(InMemoryBackend(DOCS), request)


@pytest.mark.parametrize("recorded", [False, True], ids=["batched", "recorded"])
def test_eval_retrieval_expands_then_reranks_in_two_rounds_like_a_live_run(
    tmp_path: Path, recorded: bool
) -> None:
    extra: dict[str, Any] = {"rerank": 2}
    if recorded:
        extra["save_run"] = tmp_path / "run.json"
    with BodyServer(server) as live:
        expected = evaluate(f"openai:{live.base_url}#m", **extra)
        reranks = sum('"score"' in json.dumps(body) for _, body in live.requests)
    rounds = tmp_path / "rounds"
    done, waits = run_rounds(lambda: evaluate(f"batch:{rounds}#m", **extra), rounds, server)
    assert reranks >= 3 and [w.count for w in waits] == [3, reranks]  # expansions, reranks
    first = [json.dumps(line["body"]) for line in request_lines(rounds, 1)]
    assert all('"keywords"' in body for body in first)
    assert done.metrics == expected.metrics and done.notes == expected.notes
    assert done.metrics["ndcg@10"] == 1.0  # the reranked order


def test_search_queries_runs_in_rounds_with_the_live_results(tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"_id": q.id, "text": q.text}) + "\n" for q in QUERIES))

    def run(llm: str) -> list[dict[str, Any]]:
        request = QueriesSearchRequest.build(
            queries=queries, index="idx", method="sira", llm=llm, rerank=2, k=3
        )
        found = search_queries(InMemoryBackend(DOCS), request)
        return [
            {
                "id": r.query_id,
                "hits": [h.id for h in r.hits],
                "phrases": r.expansion.phrases,
                "decisions": [(c.phrase, c.decision) for c in r.candidates.candidates],
            }
            for r in found
        ]

    with BodyServer(server) as live:
        expected = run(f"openai:{live.base_url}#m")
        reranks = sum('"score"' in json.dumps(body) for _, body in live.requests)
    rounds = tmp_path / "rounds"
    done, waits = run_rounds(lambda: run(f"batch:{rounds}#m"), rounds, server)
    assert reranks >= 3 and [w.count for w in waits] == [3, reranks]
    assert done == expected
    assert [r["hits"][0] for r in done] == ["d2", "d4", "d3"]


def test_search_takes_text_or_queries_not_both(tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "x"}\n')
    both = CliRunner().invoke(cli, ["search", "x", "--index", "idx", "--queries", str(queries)])
    neither = CliRunner().invoke(cli, ["search", "--index", "idx"])
    assert both.exit_code == neither.exit_code == 2
    assert "give either TEXT or --queries FILE" in both.stderr + neither.stderr
