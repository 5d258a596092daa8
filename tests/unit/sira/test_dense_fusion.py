"""The vector methods' own logic, above the engine: reciprocal rank fusion, the embedder check
against the index's recorded model, the methods table's entries and what a passage's vector is
made from."""

from __future__ import annotations

import pytest

from sira_seek.backend import SearchHit
from sira_seek.input_errors import InputError
from sira_seek.sira.dense import (
    RRF_K,
    EmbedderMismatchError,
    IndexEmbedding,
    check_embedder,
    passage_text,
    rrf,
)
from sira_seek.workflows.methods import METHOD_NAMES, method_spec
from sira_seek.workflows.search import SearchRequest


def _hits(*ids: str) -> list[SearchHit]:
    return [SearchHit(id=i, score=10.0 - n) for n, i in enumerate(ids)]


def test_rrf_sums_reciprocal_ranks_with_k_60() -> None:
    fused = rrf([_hits("a", "b", "c"), _hits("c", "a", "d")], size=10)
    scores = {h.id: h.score for h in fused}
    assert RRF_K == 60
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["d"] == pytest.approx(1 / 63)
    # a (1+2) beats c (3+1) beats b (2) beats d (3): in both lists outranks one list
    assert [h.id for h in fused] == ["a", "c", "b", "d"]


def test_rrf_cuts_to_size_and_keeps_first_seen_order_on_ties() -> None:
    fused = rrf([_hits("x", "y"), _hits("y", "x")], size=1)
    assert [h.id for h in fused] == ["x"]  # equal fused scores: the first list's order
    assert rrf([_hits("p"), []], size=5)[0].score == pytest.approx(1 / 61)


class _Embedder:
    spec = "cpu"
    model = "sentence-transformers/all-MiniLM-L6-v2"
    dimensions = 384
    similarity = "cosine"


def test_an_embedder_of_another_model_is_refused_naming_the_index_model() -> None:
    recorded = IndexEmbedding(
        model="BAAI/bge-small-en-v1.5",
        spec="openai:http://h:8000/v1#BAAI/bge-small-en-v1.5",
        dimensions=384,
        similarity="cosine",
    )
    with pytest.raises(EmbedderMismatchError) as err:
        check_embedder(recorded, _Embedder(), "docs")  # type: ignore[arg-type]
    assert isinstance(err.value, InputError)
    assert "BAAI/bge-small-en-v1.5" in str(err.value) and "--embedder" in str(err.value)
    same = recorded.model_copy(update={"model": _Embedder.model})
    check_embedder(same, _Embedder(), "docs")  # type: ignore[arg-type]


def test_passage_text_is_title_dot_text() -> None:
    assert passage_text("Paris", "The capital.") == "Paris. The capital."
    assert passage_text("", "Only text") == "Only text"
    assert passage_text("Only title", "") == "Only title"


def test_methods_table_has_the_vector_methods() -> None:
    assert {"dense", "hybrid", "sira-hybrid"} <= set(METHOD_NAMES)
    assert method_spec("dense").vectors == "only" and not method_spec("dense").calls_llm
    assert method_spec("hybrid").vectors == "fused" and method_spec("hybrid").additions == "none"
    assert method_spec("sira-hybrid").additions == "phrases"
    assert all(method_spec(m).through_retriever for m in ("dense", "hybrid", "sira", "hyde"))
    assert not method_spec("bm25").through_retriever


def test_vector_knobs_reach_the_settings_and_are_checked() -> None:
    request = SearchRequest(
        query="q", index="docs", method="dense", num_candidates=500, embedder="cpu"
    )
    settings = request.settings()
    assert settings.num_candidates == 500 and settings.embedder == "cpu"
    with pytest.raises(ValueError):
        SearchRequest(query="q", index="docs", method="dense", num_candidates=0)
