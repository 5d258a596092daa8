"""``workflows.evaluate.evaluate_enrichment`` (``eval enrichment``) on the in-memory backend
double: the request is refused before a connection, and the rows keep their counts as
integers in the documented JSON shape."""

from __future__ import annotations

import pytest
from in_memory_backend import InMemoryBackend

from sira_seek.backend import SearchBackend
from sira_seek.corpus import Query
from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.evaluate import RetrievalEvaluationRequest, evaluate_enrichment

DOCS = {"d1": {"title": "A", "text": "alpha beta"}, "d2": {"title": "B", "text": "gamma"}}
INPUTS = {"index": "idx", "queries": [Query(id="q1", text="alpha")], "qrels": {"q1": {"d1": 1}}}


def _never() -> SearchBackend:
    raise AssertionError("connected before the input was checked")


def test_bm25_and_sira_rows_before_and_after() -> None:
    request = RetrievalEvaluationRequest.build(method="sira", expansions={"q1": ["beta"]}, **INPUTS)
    done = evaluate_enrichment(InMemoryBackend(DOCS), request)
    out = done.to_json()
    assert (out["index"], out["enriched_docs"], out["deleted_docs"]) == ("idx", 0, 0)
    sides = [(row["method"], row["enrichment"]) for row in out["rows"]]
    assert sides == [("bm25", "before"), ("bm25", "after"), ("sira", "before"), ("sira", "after")]
    assert all(row["queries"] == 1 and isinstance(row["queries"], int) for row in out["rows"])
    assert all("enriched_docs" not in row for row in out["rows"])


def test_both_phrase_sources_are_refused_before_connecting() -> None:
    request = RetrievalEvaluationRequest.build(
        method="sira", expansions={"q1": ["beta"]}, llm="openai:http://x#m", **INPUTS
    )
    with pytest.raises(InvalidInput, match="not both"):
        evaluate_enrichment(_never, request)
