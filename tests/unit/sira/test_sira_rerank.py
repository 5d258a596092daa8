"""LLM rerank (SIRA §3.1): the top N by relevance to the query, ties in BM25 order, the rest
unchanged; an answer that cannot be used is recorded and its document keeps its BM25 place."""

from __future__ import annotations

import math

import pytest
from sira_doubles import DFTableBackend, ScriptedClient

from sira_seek.backend import SearchHit
from sira_seek.llm.request import LLMRequest
from sira_seek.sira.expansions import LLMDownError
from sira_seek.sira.prompts import MAX_RERANK_DOC_CHARS
from sira_seek.sira.rerank import (
    LLMReranker,
    order_by_scores,
    parse_score,
    rerank_request,
    run_scores,
)
from sira_seek.sira.results import SiraHit
from sira_seek.sira.retriever import SiraRetriever
from sira_seek.sira.settings import SiraSettings

QUERY = "Were Ivan Mosjoukine and Jean Renoir both film directors?"


def _hits(n: int) -> list[SiraHit]:
    return [SiraHit(id=f"d{i}", score=10.0 - i, bm25_rank=i) for i in range(1, n + 1)]


# -- the prompt ---------------------------------------------------------------------------------
@pytest.mark.parametrize("chat", [True, False])
def test_the_prompt_asks_relevance_to_the_query_not_whether_it_holds_an_answer(
    chat: bool,
) -> None:
    req = rerank_request(QUERY, "Jean Renoir", "Jean Renoir was a French film director.", chat=chat)
    text = "\n".join(m.content for m in req.messages or ()) + (req.prompt or "")
    if chat:
        assert req.messages is not None and req.prompt is None
        system, user = req.messages
        assert "relevant" in system.content and "query" in system.content
        assert QUERY in user.content and "Jean Renoir was a French film director." in user.content
    else:
        assert req.prompt is not None and req.prompt.endswith(
            f"Query: {QUERY}\nDocument: Jean Renoir\nJean Renoir was a French film director."
            "\nJSON: "
        )
    assert "how relevant the document is to the search query" in text
    assert "answer" not in text.lower()  # no "contains / states the answer" rubric
    assert req.json_schema is not None
    assert req.json_schema["properties"]["score"] == {
        "type": "integer",
        "minimum": 0,
        "maximum": 100,
    }
    assert req.temperature == 0.0 and req.max_tokens <= 16


def test_the_document_is_cut_and_flattened() -> None:
    req = rerank_request("q", "A\ntitle", "word\n\nword " + "x" * 10_000, chat=True)
    assert req.messages is not None
    doc = req.messages[-1].content.split("Document:\n", 1)[1]
    assert doc.startswith("A title\nword word x") and len(doc) == MAX_RERANK_DOC_CHARS


# -- parsing and ordering -------------------------------------------------------------------------
def test_parse_score_is_tolerant_and_clamped() -> None:
    assert parse_score({"score": 85}) == 85.0
    assert parse_score('text {"score": 140} more') == 100.0
    assert parse_score('{"score": -3}') == 0.0
    for bad in ('{"score": "high"}', "no idea", {"score": True}, {"score": math.nan}, None, ""):
        assert parse_score(bad) is None


def test_scored_hits_sort_by_score_ties_in_bm25_order_unscored_keep_their_place() -> None:
    scores = {"d1": 20.0, "d2": 90.0, "d3": None, "d4": 90.0, "d5": 50.0}
    ordered = order_by_scores(_hits(5), scores)
    # d3 (no score) stays third; d2 and d4 tie at 90 and keep their BM25 order
    assert [h.id for h in ordered] == ["d2", "d4", "d3", "d5", "d1"]
    assert [h.rerank_score for h in ordered] == [90.0, 90.0, None, 50.0, 20.0]
    assert [h.bm25_rank for h in ordered] == [2, 4, 3, 5, 1]


def test_equal_scores_keep_the_bm25_order() -> None:
    ordered = order_by_scores(_hits(4), {f"d{i}": 50.0 for i in range(1, 5)})
    assert [h.id for h in ordered] == ["d1", "d2", "d3", "d4"]


def test_run_scores_rank_the_reranked_head_above_the_unchanged_tail() -> None:
    hits = order_by_scores(_hits(3), {"d1": 1.0, "d2": 99.0, "d3": 50.0})
    hits += _hits(5)[3:]
    scores = run_scores(hits, 3)
    assert list(scores) == ["d2", "d3", "d1", "d4", "d5"]
    assert scores == {"d2": 9.0, "d3": 8.0, "d1": 7.0, "d4": 6.0, "d5": 5.0}
    assert sorted(scores, key=lambda d: -scores[d]) == list(scores)


# -- the reranker ---------------------------------------------------------------------------------
def _by_text(table: dict[str, str]) -> ScriptedClient:
    """An LLM double answering by the document it is shown (the prompt's last Document)."""

    def answer(request: LLMRequest) -> str:
        shown = (request.prompt or "").rsplit("Document: ", 1)[1]
        return next(out for key, out in table.items() if key in shown)

    return ScriptedClient(answer_fn=answer)


DOCS = {f"d{i}": (f"title {i}", f"text of document {i}") for i in range(1, 6)}


def test_only_the_top_n_are_reordered_and_the_rest_follow_unchanged() -> None:
    llm = _by_text({"document 1": '{"score": 10}', "document 2": '{"score": 30}',
                    "document 3": '{"score": 95}'})  # fmt: skip
    reranker = LLMReranker(llm, chat=False)
    try:
        done = reranker.rerank("q", _hits(5), DOCS, top_n=3)
    finally:
        reranker.close()
    assert [h.id for h in done.hits] == ["d3", "d2", "d1", "d4", "d5"]
    assert [h.rerank_score for h in done.hits][3:] == [None, None]
    assert len(llm.requests) == 3 and len(done.calls) == 3 and done.ms > 0
    assert all(c.error is None and c.prompt_tokens == 50 for c in done.calls)


def test_malformed_or_failed_answers_are_recorded_and_keep_their_bm25_position() -> None:
    llm = _by_text({"document 1": '{"score": 5}', "document 2": "I think it is relevant",
                    "document 3": '{"score": 80}', "document 4": "FAIL"})  # fmt: skip
    reranker = LLMReranker(llm, chat=False)
    try:
        # on_llm_failure="fallback": an unreachable call keeps its BM25 position
        done = reranker.rerank(
            "q", _hits(5), {**DOCS, "d4": ("FAIL", "")}, top_n=4, stop_when_down=False
        )
    finally:
        reranker.close()
    # d2 (malformed) stays 2nd, d4 (call failed) stays 4th; d3 and d1 swap around them
    assert [h.id for h in done.hits] == ["d3", "d2", "d1", "d4", "d5"]
    errors = [c.error for c in done.calls]
    assert errors[0] is None and errors[2] is None
    assert errors[1] is not None and errors[1].startswith("malformed: no 0-100 score")
    assert errors[3] is not None and errors[3].startswith("unreachable")
    assert len(done.hits) == 5  # nothing dropped


def test_an_llm_that_is_not_there_stops_the_rerank_naming_it() -> None:
    """The default policy (on_llm_failure="error"): a list left in BM25 order is not passed
    off as reranked; a malformed answer alone does not stop it."""
    llm = _by_text({"document 1": '{"score": 5}', "document 2": "no score here",
                    "document 3": "FAIL"})  # fmt: skip
    reranker = LLMReranker(llm, chat=False, llm="openai:http://u:s3cret@llm.test/v1#m")
    try:
        done = reranker.rerank("q", _hits(5), DOCS, top_n=2)
        assert done.calls[1].error is not None  # malformed: recorded, not raised
        with pytest.raises(LLMDownError) as caught:
            reranker.rerank("q", _hits(5), {**DOCS, "d3": ("FAIL", "")}, top_n=3)
    finally:
        reranker.close()
    assert caught.value.kind == "unreachable"
    assert "openai:http://***@llm.test/v1#m" in str(caught.value)
    assert "s3cret" not in str(caught.value)


def test_the_retriever_reranks_and_keeps_the_engine_rank(fake_backend: DFTableBackend) -> None:
    fake_backend.hits = [
        SearchHit(id="d1", score=3.0, source={"title": "one", "text": "nothing"}),
        SearchHit(id="d2", score=2.0, source={"title": "two", "text": "RELEVANT"}),
    ]
    llm = _by_text({"nothing": '{"score": 10}', "RELEVANT": '{"score": 95}'})
    reranker = LLMReranker(llm, chat=False)
    settings = SiraSettings(rerank_top_n=2)
    retriever = SiraRetriever(fake_backend, "idx", settings=settings, reranker=reranker)
    res = retriever.search("q")
    retriever.close()
    ranked = [(h.id, h.bm25_rank, h.rerank_score) for h in res.hits]
    assert ranked == [("d2", 2, 95.0), ("d1", 1, 10.0)]
    assert res.body["_source"] == ["title", "text"]
    assert len(res.llm_calls) == 2 and res.timings.rerank_ms > 0
    assert any("by relevance to the query" in n for n in res.notes)


def test_the_retriever_notes_unusable_answers(fake_backend: DFTableBackend) -> None:
    fake_backend.hits = [
        SearchHit(id="d1", score=3.0, source={"title": "one", "text": "nothing"}),
        SearchHit(id="d2", score=2.0, source={"title": "two", "text": "RELEVANT"}),
    ]
    llm = _by_text({"nothing": "???", "RELEVANT": '{"score": 95}'})
    reranker = LLMReranker(llm, chat=False)
    settings = SiraSettings(rerank_top_n=2)
    retriever = SiraRetriever(fake_backend, "idx", settings=settings, reranker=reranker)
    res = retriever.search("q")
    retriever.close()
    assert [h.id for h in res.hits] == ["d1", "d2"]  # d1 unscored keeps first place
    assert any(n.startswith("rerank: 1 of 2 answers unusable") for n in res.notes)


def test_rerank_deeper_than_size_fetches_top_n_then_cuts_to_size(
    fake_backend: DFTableBackend,
) -> None:
    """`--rerank 2 --size 1`: the engine is asked for 2 hits, so the reader can promote the
    second one; the answer keeps 1 hit (the promoted one)."""
    fake_backend.hits = [
        SearchHit(id="d1", score=3.0, source={"title": "one", "text": "nothing"}),
        SearchHit(id="d2", score=2.0, source={"title": "two", "text": "RELEVANT"}),
    ]
    llm = _by_text({"nothing": '{"score": 10}', "RELEVANT": '{"score": 95}'})
    retriever = SiraRetriever(
        fake_backend,
        "idx",
        settings=SiraSettings(size=1, rerank_top_n=2),
        reranker=LLMReranker(llm, chat=False),
    )
    res = retriever.search("q")
    retriever.close()
    assert res.body["size"] == 2
    assert [(h.id, h.bm25_rank) for h in res.hits] == [("d2", 2)]
    assert len(res.llm_calls) == 2


def test_without_a_depth_the_engine_is_asked_for_size_and_nothing_reranks(
    fake_backend: DFTableBackend,
) -> None:
    llm = ScriptedClient(answer_fn=lambda _r: '{"score": 1}')
    retriever = SiraRetriever(
        fake_backend, "idx", settings=SiraSettings(size=7), reranker=LLMReranker(llm, chat=False)
    )
    res = retriever.search("q")
    retriever.close()
    assert res.body["size"] == 7 and res.body["_source"] is False
    assert llm.requests == []
