"""SEEK's ``--retriever dense|hybrid`` and the §5.3 sub-query similarity by an embedder, over
the in-memory backend double and the bag-of-words embedder double (both above their
protocols): the vectors rank the sub-query's document first, the methods SEEK does not take
are refused, and the similarity is the embedder's cosine (token overlap when none is given)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import use_llm_double
from seek_llm_double import searching_double

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
from embedder_double import BagOfWordsEmbedderDouble, bag_vector, embedders_made  # noqa: E402
from in_memory_backend import InMemoryBackend  # noqa: E402

from sira_seek.metrics.seek_diagnostics import QuestionTrace, StepTrace  # noqa: E402
from sira_seek.seek import api  # noqa: E402
from sira_seek.sync.embed_runner import EmbedRunner  # noqa: E402
from sira_seek.sync.settings import SyncSettings  # noqa: E402
from sira_seek.workflows.ask import build_retriever  # noqa: E402
from sira_seek.workflows.errors import InvalidInput  # noqa: E402
from sira_seek.workflows.evaluate_qa import QAEvaluationRequest, evaluate_qa  # noqa: E402
from sira_seek.workflows.seek_analyses import subquery_similarity_measure  # noqa: E402

DOCS = {
    "paris": {"title": "Paris", "text": "capital city of France on the Seine"},
    "etna": {"title": "Etna", "text": "active volcano on the island of Sicily"},
    "piano": {"title": "Piano", "text": "keyboard instrument with hammers and strings"},
}


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[BagOfWordsEmbedderDouble]:
    """Every embedder ``make_embedder`` gives out: the double, whatever the spec."""
    return embedders_made(monkeypatch)


@pytest.fixture
def embedded(tmp_path: Path) -> InMemoryBackend:
    backend = InMemoryBackend(DOCS)
    settings = SyncSettings(state_dir=tmp_path)
    EmbedRunner(backend, "idx", BagOfWordsEmbedderDouble(), settings).run()
    return backend


@pytest.mark.parametrize("name", ["dense", "hybrid"])
def test_dense_and_hybrid_rank_the_sub_querys_document_first_with_its_text(
    name: str, embedded: InMemoryBackend, made: list[Any]
) -> None:
    retriever = build_retriever(embedded, "idx", name, embedder="cpu")  # type: ignore[arg-type]
    assert retriever.name == name
    (first, *_) = retriever.retrieve("volcano island Sicily", 2)
    assert first.id == "etna" and first.text == DOCS["etna"]["text"]
    assert made[0].queries == ["volcano island Sicily"]
    many = retriever.retrieve_many(["keyboard hammers", "Seine capital France"], 1)
    assert [docs[0].id for docs in many] == ["piano", "paris"]


@pytest.mark.parametrize("name", ["hyde", "cot", "sira-hybrid"])
def test_methods_seek_does_not_take_are_refused(name: str, embedded: InMemoryBackend) -> None:
    with pytest.raises(InvalidInput, match="dense, hybrid"):
        build_retriever(embedded, "idx", name)  # type: ignore[arg-type]


def _trace(*queries: str) -> QuestionTrace:
    return QuestionTrace(
        id="q",
        question="?",
        golden_answers=["x"],
        prediction="x",
        steps=[StepTrace(sub_query=q) for q in queries],
    )


def test_subquery_similarity_is_the_embedders_cosine_named_by_its_model(made: list[Any]) -> None:
    trace = _trace("volcano in Sicily", "Sicily volcano eruption", "piano hammers")
    measure = subquery_similarity_measure("cpu", [trace])
    assert measure.name == "embedding_cosine:bag-of-words-double"
    expected = sum(
        x * y
        for x, y in zip(bag_vector("volcano in Sicily"), bag_vector("piano hammers"), strict=True)
    )
    assert math.isclose(measure.similarity("volcano in Sicily", "piano hammers"), expected)
    # One batch for every sub-query of the run, and the embedder closed after.
    assert made[0].queries == ["volcano in Sicily", "Sicily volcano eruption", "piano hammers"]
    assert made[0].closed


def test_without_an_embedder_the_similarity_is_the_named_token_overlap(made: list[Any]) -> None:
    measure = subquery_similarity_measure(None, [_trace("red blue", "blue green")])
    assert measure.name == "token_jaccard" and made == []
    assert measure.similarity("red blue", "blue green") == pytest.approx(1 / 3)


def test_eval_qa_with_the_dense_retriever_and_the_embedders_similarity(
    tmp_path: Path, embedded: InMemoryBackend, made: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SEEK's sub-queries search the vectors, and the analyses measure them with the same
    embedder: what ``eval qa --retriever dense --embedder SPEC --diagnostics`` does."""
    gists = ("volcano island Sicily", "keyboard hammers strings")
    use_llm_double(monkeypatch, searching_double(*gists, answer="Etna"), api)
    questions = tmp_path / "qa.jsonl"
    questions.write_text('{"id": "q1", "question": "Which?", "golden_answers": ["Etna"]}\n')
    request = QAEvaluationRequest.build(
        questions=questions,
        index="idx",
        llm="openai:http://127.0.0.1:9/v1#m",
        retriever="dense",
        embedder="cpu",
        diagnostics=True,
        concurrency=1,
    )
    done = evaluate_qa(embedded, request)
    (result,) = done.report.results
    assert [s.retrieved_ids[0] for s in result.steps] == ["etna", "piano"]
    diag = done.diagnostics
    assert diag is not None
    assert diag.subquery_similarity_measure == "embedding_cosine:bag-of-words-double"
    cosine = sum(x * y for x, y in zip(*map(bag_vector, gists), strict=True))
    assert diag.subquery_similarity == pytest.approx(cosine, abs=1e-4)
    # The retriever's embedder embedded each sub-query; the analyses' own embedder every
    # sub-query of the run in one batch, closed after.
    assert [m.queries for m in made] == [list(gists), list(gists)] and made[1].closed


def test_the_library_asks_with_the_dense_retriever_and_its_embedder(
    embedded: InMemoryBackend, made: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sira_seek.client import SiraSeek

    use_llm_double(monkeypatch, searching_double("volcano island Sicily", answer="Etna"), api)
    result = SiraSeek(embedded).ask(
        "Which?", index="idx", llm="openai:http://127.0.0.1:9/v1#m", retriever="hybrid",
        embedder="cpu",
    )  # fmt: skip
    assert result.steps[0].retrieved_ids[0] == "etna"
    assert made[0].queries == ["volcano island Sicily"]
