"""LLM rerank: sort by answer-presence score, ties by BM25 rank, failures last in BM25 order."""

from __future__ import annotations

from sira_doubles import DFTableBackend, ScriptedClient

from sira_seek.backend import SearchHit
from sira_seek.llm.request import LLMRequest
from sira_seek.sira.rerank import LLMReranker, order_by_scores, parse_score, rerank_request
from sira_seek.sira.results import SiraHit
from sira_seek.sira.retriever import SiraRetriever
from sira_seek.sira.settings import SiraSettings


def _hits(n: int) -> list[SiraHit]:
    return [SiraHit(id=f"d{i}", score=10.0 - i, bm25_rank=i) for i in range(1, n + 1)]


def test_order_ties_and_unscored() -> None:
    scores = {"d1": 20.0, "d2": 90.0, "d3": None, "d4": 90.0, "d5": 50.0}
    ordered = order_by_scores(_hits(5), scores)
    assert [h.id for h in ordered] == ["d2", "d4", "d5", "d1", "d3"]
    assert ordered[0].rerank_score == 90.0 and ordered[-1].rerank_score is None


def test_parse_score_is_tolerant_and_clamped() -> None:
    assert parse_score({"score": 85}) == 85.0
    assert parse_score('text {"score": 140} more') == 100.0
    assert parse_score('{"score": "high"}') is None
    assert parse_score("no idea") is None


def test_request_states_the_rubric_and_cuts_long_documents() -> None:
    req = rerank_request("Who?", "Title", "x" * 10_000, chat=False)
    assert req.prompt is not None and "41-80" in req.prompt
    assert "81-100: the document states the answer" in req.prompt
    assert len(req.prompt) < 3000


def _score_by_title(request: LLMRequest) -> str:
    text = request.prompt or ""
    return '{"score": 95}' if "ANSWER" in text else '{"score": 10}'


def test_reranker_top_n_only_and_usage_recorded() -> None:
    reranker = LLMReranker(ScriptedClient(answer_fn=_score_by_title), chat=False, top_n=3)
    docs = {"d1": ("a", "x"), "d2": ("b", "x"), "d3": ("c", "ANSWER here"), "d4": ("d", "ANSWER")}
    try:
        ordered, calls, ms = reranker.rerank("q", _hits(4), docs)
    finally:
        reranker.close()
    assert [h.id for h in ordered] == ["d3", "d1", "d2", "d4"]  # d4 is below top_n: untouched
    assert len(calls) == 3 and ms > 0


def test_retriever_reranks_and_keeps_the_engine_rank(fake_backend: DFTableBackend) -> None:
    fake_backend.hits = [
        SearchHit(id="d1", score=3.0, source={"title": "one", "text": "nothing"}),
        SearchHit(id="d2", score=2.0, source={"title": "two", "text": "ANSWER"}),
    ]
    reranker = LLMReranker(ScriptedClient(answer_fn=_score_by_title), chat=False)
    retriever = SiraRetriever(
        fake_backend, "idx", settings=SiraSettings(rerank_top_n=2), reranker=reranker
    )
    res = retriever.search("q")
    retriever.close()
    assert [(h.id, h.bm25_rank) for h in res.hits] == [("d2", 2), ("d1", 1)]
    assert res.body["_source"] == ["title", "text"]
    assert len(res.llm_calls) == 2 and res.timings.rerank_ms > 0


def test_rerank_deeper_than_size_fetches_top_n_then_cuts_to_size(
    fake_backend: DFTableBackend,
) -> None:
    """`--rerank 2 --size 1`: the engine is asked for 2 hits, so the reader can promote the
    second one; the answer keeps 1 hit (the promoted one)."""
    fake_backend.hits = [
        SearchHit(id="d1", score=3.0, source={"title": "one", "text": "nothing"}),
        SearchHit(id="d2", score=2.0, source={"title": "two", "text": "ANSWER"}),
    ]
    reranker = LLMReranker(ScriptedClient(answer_fn=_score_by_title), chat=False)
    retriever = SiraRetriever(
        fake_backend, "idx", settings=SiraSettings(size=1, rerank_top_n=2), reranker=reranker
    )
    res = retriever.search("q")
    retriever.close()
    assert res.body["size"] == 2
    assert [(h.id, h.bm25_rank) for h in res.hits] == [("d2", 2)]
    assert len(res.llm_calls) == 2


def test_without_rerank_the_engine_is_asked_for_size(fake_backend: DFTableBackend) -> None:
    retriever = SiraRetriever(fake_backend, "idx", settings=SiraSettings(size=7))
    res = retriever.search("q")
    retriever.close()
    assert res.body["size"] == 7
