"""Rerank through every front end's workflow: ``search``, ``eval retrieval`` (batched and
recorded), the library, and the command line; one setting, validated once by the requests.

The in-memory backend ranks d1 above d2 for the query (BM25); the scripted LLM (above the LLM
protocol) scores the Metropolis page relevant and the others not, so a rerank of the top 2
flips ranks 1 and 2. Only d2 is judged relevant: nDCG@10 is 1/log2(3) without the rerank
(the relevant page at rank 2) and 1 with it (rank 1); Recall@10 is 1 either way.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from in_memory_backend import InMemoryBackend
from progress_recorder import ProgressRecorder

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from scripted_llm import ScriptedLLMDouble, use_llm_double  # noqa: E402

from sira_seek.client import SiraSeek  # noqa: E402
from sira_seek.corpus import Query  # noqa: E402
from sira_seek.llm.request import LLMRequest  # noqa: E402
from sira_seek.metrics.run_record import RunRecord  # noqa: E402
from sira_seek.sira.settings import DEFAULT_RERANK_TOP_N  # noqa: E402
from sira_seek.workflows.errors import InvalidInput  # noqa: E402
from sira_seek.workflows.evaluate import (  # noqa: E402
    RetrievalEvaluationRequest,
    evaluate_enrichment,
    evaluate_retrieval,
)
from sira_seek.workflows.search import SearchRequest, search  # noqa: E402

LLM = "llamacpp:gemma3-270m"
QUERY = "Fritz Lang film"
DOCS = {
    "d1": {"title": "Fritz Lang films", "text": "Fritz Lang film. Fritz Lang film."},
    "d2": {"title": "Metropolis", "text": "A Fritz Lang film."},
    "d3": {"title": "Cinema", "text": "A film."},
}
QUERIES = [Query(id="q1", text=QUERY)]
QRELS = {"q1": {"d2": 1}}
WITHOUT, WITH = 1 / math.log2(3), 1.0
"""nDCG@10 by hand (the metrics are rounded to 4 places)."""


def _close(value: object, expected: float) -> bool:
    return value == pytest.approx(expected, abs=5e-5)


def _relevance(request: LLMRequest) -> str:
    shown = (request.prompt or "").rsplit("Document: ", 1)[1]
    return json.dumps({"score": 90 if shown.startswith("Metropolis") else 10})


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> ScriptedLLMDouble:
    double = ScriptedLLMDouble(default=_relevance)
    use_llm_double(monkeypatch, double)
    return double


@pytest.fixture
def backend() -> InMemoryBackend:
    return InMemoryBackend(DOCS)


def _shown(llm: ScriptedLLMDouble) -> list[str]:
    return [(c.prompt or "").rsplit("Document: ", 1)[1].split("\n", 1)[0] for c in llm.calls]


# -- validation: once, in the requests ----------------------------------------------------------
@pytest.mark.parametrize(
    ("values", "says"),
    [
        ({"rerank": 3}, "rerank: needs an LLM"),
        ({"rerank": 101, "llm": LLM}, "rerank: Input should be less than or equal to 100"),
        ({"rerank": -1, "llm": LLM}, "rerank: Input should be greater than or equal to 0"),
        ({"rerank": "3", "llm": LLM}, "rerank: Input should be a valid integer"),
    ],
)
def test_both_requests_refuse_a_bad_rerank_naming_the_field(
    values: dict[str, Any], says: str
) -> None:
    with pytest.raises(InvalidInput, match=says):
        SearchRequest.build(query=QUERY, index="idx", **values)
    with pytest.raises(InvalidInput, match=says):
        RetrievalEvaluationRequest.build(index="idx", queries=QUERIES, qrels=QRELS, **values)


def test_the_request_carries_the_one_setting() -> None:
    request = SearchRequest.build(query=QUERY, index="idx", llm=LLM, rerank=7, k=3)
    assert request.settings().rerank_top_n == 7 and request.settings().size == 3
    evaluation = RetrievalEvaluationRequest.build(
        index="idx", queries=QUERIES, qrels=QRELS, llm=LLM, rerank=7
    )
    assert evaluation.settings().rerank_top_n == 7
    assert SearchRequest.build(query=QUERY, index="idx").settings().rerank_top_n == 0


# -- SIRA's default pipeline (§3.1): a rerank with a live LLM unless rerank=0 -------------------
@pytest.mark.parametrize(
    ("values", "depth"),
    [
        ({"method": "sira", "llm": LLM}, DEFAULT_RERANK_TOP_N),
        ({"method": "sira", "llm": "batch:rounds.json"}, DEFAULT_RERANK_TOP_N),
        ({"method": "sira", "llm": LLM, "expansions": {QUERY: ["x"]}}, DEFAULT_RERANK_TOP_N),
        ({"method": "sira", "llm": LLM, "rerank": 0}, 0),
        ({"method": "sira", "llm": LLM, "rerank": 3}, 3),
        ({"method": "sira", "expansions": {QUERY: ["x"]}}, 0),  # no LLM: today's behaviour
        ({"method": "sira", "llm": "jsonl:expansions.jsonl"}, 0),  # precomputed, no model
        ({"method": "bm25", "llm": LLM}, 0),
        ({"method": "hyde", "llm": LLM}, 0),
    ],
)
def test_the_default_depth_is_sira_s_pipeline_with_a_live_llm_only(
    values: dict[str, Any], depth: int
) -> None:
    assert SearchRequest.build(query=QUERY, index="idx", **values).settings().rerank_top_n == depth
    evaluation = RetrievalEvaluationRequest.build(
        index="idx", queries=QUERIES, qrels=QRELS, **values
    )
    assert evaluation.settings().rerank_top_n == depth


def test_eval_retrieval_sira_with_an_llm_reranks_by_default_and_says_so(
    backend: InMemoryBackend, llm: ScriptedLLMDouble
) -> None:
    base = {"index": "idx", "queries": QUERIES, "qrels": QRELS, "method": "sira", "llm": LLM}
    base["expansions"] = {"q1": ["cinema"]}  # the LLM only reads passages
    done = evaluate_retrieval(backend, RetrievalEvaluationRequest.build(**base))
    assert _close(done.metrics["ndcg@10"], WITH)
    assert done.metrics["rerank"] == DEFAULT_RERANK_TOP_N
    assert len(llm.calls) == 3  # every hit of the top 10 (the index holds 3)
    assert done.notes[0].endswith(
        "SIRA's default with an LLM (§3.1); --rerank 0 / rerank=0 turns it off"
    )
    llm.calls.clear()
    del base["llm"]  # with rerank=0 the LLM would have nothing to do beside the expansions
    off = evaluate_retrieval(backend, RetrievalEvaluationRequest.build(**base, rerank=0))
    assert _close(off.metrics["ndcg@10"], WITHOUT)
    assert off.metrics["rerank"] == 0 and off.notes == [] and llm.calls == []


def test_search_sira_with_an_llm_reranks_by_default(
    backend: InMemoryBackend, llm: ScriptedLLMDouble
) -> None:
    values = {"method": "sira", "expansions": {QUERY: ["cinema"]}, "llm": LLM}
    result = search(backend, SearchRequest.build(query=QUERY, index="idx", **values))
    assert [h.id for h in result.hits][:2] == ["d2", "d1"]
    assert any(n.startswith("LLM rerank of the top 10") for n in result.notes)
    llm.calls.clear()
    del values["llm"]
    off = search(backend, SearchRequest.build(query=QUERY, index="idx", rerank=0, **values))
    assert [h.id for h in off.hits][:2] == ["d1", "d2"] and llm.calls == []


# -- search ------------------------------------------------------------------------------------
def test_search_reranks_bm25_by_relevance_and_the_llm_only_reads(
    backend: InMemoryBackend, llm: ScriptedLLMDouble
) -> None:
    plain = search(backend, SearchRequest.build(query=QUERY, index="idx"))
    assert [h.id for h in plain.hits] == ["d1", "d2", "d3"]
    request = SearchRequest.build(query=QUERY, index="idx", llm=LLM, rerank=2)
    result = search(backend, request)
    assert [(h.id, h.bm25_rank) for h in result.hits] == [("d2", 2), ("d1", 1), ("d3", 3)]
    assert [h.rerank_score for h in result.hits] == [90.0, 10.0, None]
    assert _shown(llm) == ["Fritz Lang films", "Metropolis"]  # the top 2 only
    assert QUERY in (llm.calls[0].prompt or "")
    assert result.expansion.source == "none" and result.plain_bm25  # BM25: no expansion call


def test_search_with_expansions_uses_the_llm_for_the_rerank_only(
    backend: InMemoryBackend, llm: ScriptedLLMDouble
) -> None:
    request = SearchRequest.build(
        query=QUERY, index="idx", method="sira", expansions={QUERY: ["cinema"]}, llm=LLM, rerank=2
    )
    result = search(backend, request)
    assert result.expansion.source == "precomputed"
    assert [h.id for h in result.hits][:2] == ["d2", "d1"]
    assert len(llm.calls) == 2


def test_the_library_search_takes_rerank(backend: InMemoryBackend, llm: ScriptedLLMDouble) -> None:
    result = SiraSeek(backend).search(QUERY, index="idx", llm=LLM, rerank=2)
    assert [h.id for h in result.hits] == ["d2", "d1", "d3"]
    with pytest.raises(InvalidInput, match="rerank: needs an LLM"):
        SiraSeek(backend).search(QUERY, index="idx", rerank=2)


# -- eval retrieval -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "method_values",
    [{"method": "bm25"}, {"method": "sira", "expansions": {"q1": ["cinema"]}}],
    ids=["bm25", "sira"],
)
def test_eval_retrieval_scores_the_reranked_order(
    backend: InMemoryBackend, llm: ScriptedLLMDouble, method_values: dict[str, Any]
) -> None:
    base = {"index": "idx", "queries": QUERIES, "qrels": QRELS, **method_values}
    before = evaluate_retrieval(backend, RetrievalEvaluationRequest.build(**base))
    assert _close(before.metrics["ndcg@10"], WITHOUT)
    assert llm.calls == []
    after = evaluate_retrieval(backend, RetrievalEvaluationRequest.build(**base, llm=LLM, rerank=2))
    assert _close(after.metrics["ndcg@10"], WITH)
    assert after.metrics["recall@10"] == before.metrics["recall@10"] == 1.0
    assert _shown(llm) == ["Fritz Lang films", "Metropolis"]
    assert after.notes == [
        "LLM rerank of every query's top 2 by relevance to the query before scoring: asked "
        "(--rerank / rerank)"
    ]
    assert after.metrics["rerank"] == 2 and before.metrics["rerank"] == 0


def test_the_recorded_path_and_the_run_file_keep_the_reranked_order(
    backend: InMemoryBackend, llm: ScriptedLLMDouble, tmp_path: Path
) -> None:
    progress = ProgressRecorder()
    request = RetrievalEvaluationRequest.build(
        index="idx", queries=QUERIES, qrels=QRELS, llm=LLM, rerank=2,
        save_run=tmp_path / "run.json", run_file=tmp_path / "run.trec",
    )  # fmt: skip
    done = evaluate_retrieval(backend, request, progress=progress)
    assert _close(done.metrics["ndcg@10"], WITH)
    record = RunRecord.model_validate_json((tmp_path / "run.json").read_text())
    assert _close(record.metrics["ndcg@10"], WITH)
    assert record.llm_tokens[0] > 0 and record.latency_ms[0] > 0
    lines = (tmp_path / "run.trec").read_text().split("\n")
    assert [line.split()[2] for line in lines if line] == ["d2", "d1", "d3"]
    assert progress.starts == [(1, 0)] and progress.steps == [1]  # one reranked query


def test_unusable_rerank_answers_are_noted_and_keep_their_place(
    backend: InMemoryBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    double = ScriptedLLMDouble(default='{"relevance": "high"}')  # JSON, but no score
    use_llm_double(monkeypatch, double)
    request = RetrievalEvaluationRequest.build(
        index="idx", queries=QUERIES, qrels=QRELS, llm=LLM, rerank=2
    )
    done = evaluate_retrieval(backend, request)
    assert _close(done.metrics["ndcg@10"], WITHOUT)  # BM25 order kept
    assert len(done.notes) == 2 and done.notes[1].startswith("rerank: 2 of 2 answers unusable")


def test_the_library_evaluate_takes_rerank(
    backend: InMemoryBackend, llm: ScriptedLLMDouble
) -> None:
    metrics = SiraSeek(backend).evaluate("idx", queries=QUERIES, qrels=QRELS, llm=LLM, rerank=2)
    assert _close(metrics["ndcg@10"], WITH)


def test_eval_enrichment_refuses_a_rerank(backend: InMemoryBackend) -> None:
    request = RetrievalEvaluationRequest.build(
        index="idx", queries=QUERIES, qrels=QRELS, llm=LLM, rerank=2
    )
    with pytest.raises(InvalidInput, match="rerank: eval enrichment"):
        evaluate_enrichment(backend, request)


def test_eval_retrieval_cli_refuses_rerank_without_llm(tmp_path: Path) -> None:
    from sira_seek.cli.main import cli

    (tmp_path / "q.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td\t1\n")
    result = CliRunner().invoke(
        cli,
        ["eval", "retrieval", "--index", "i", "--queries", str(tmp_path / "q.jsonl"),
         "--qrels", str(tmp_path / "qrels.tsv"), "--rerank", "5", "--url", "http://127.0.0.1:9"],
    )  # fmt: skip
    assert result.exit_code == 2 and "rerank: needs an LLM" in result.output
