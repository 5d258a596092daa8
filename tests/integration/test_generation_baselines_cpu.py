"""The SIRA paper's LLM baselines (``hyde``, ``cot``) with the embedded CPU model (Gemma 3 270M
through llama.cpp, a base model: the completion form of the prompts) on a real node: the
model's text reaches the compiled BM25 query as its named, weighted group, within the word
budget, and an evaluation counts no fallback. Missing llama-cpp-python fails, never skips.

Each query is one real generation (seconds per token on 2 busy cores), so the index holds
three documents, the texts are capped at 48 tokens (SIRA_SEEK_SIRA_GENERATION_MAX_TOKENS) and
the evaluation replays the searches' answers from the response cache."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.corpus import Query
from sira_seek.ingest import ingest_corpus
from sira_seek.llm.llamacpp_inprocess import llama_cpp_available
from sira_seek.sira.weighted_query import GENERATED_NAME
from sira_seek.workflows.evaluate import RetrievalEvaluationRequest, evaluate_retrieval
from sira_seek.workflows.search import SearchRequest, search

pytestmark = pytest.mark.integration

CPU = "llamacpp:gemma3-270m"
DOCS = [
    {"_id": "a", "title": "Apollo 11", "text": "First crewed Moon landing, July 1969."},
    {"_id": "b", "title": "Sputnik", "text": "First artificial Earth satellite, 1957."},
    {"_id": "c", "title": "Vostok 1", "text": "Yuri Gagarin, first human in space."},
]
QUERIES = [Query(id="q1", text="Who was the first human in space?"),
           Query(id="q2", text="When did Apollo 11 land on the Moon?")]  # fmt: skip
QRELS = {"q1": {"c": 1}, "q2": {"a": 1}}


@pytest.fixture
def tiny(
    backends: dict[str, SearchBackend], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[SearchBackend, str]]:
    if not llama_cpp_available():
        pytest.fail("llama-cpp-python is not installed: run sira-seek llm install cpu")
    monkeypatch.setenv("SIRA_SEEK_LLM_CACHE_DIR", str(tmp_path / "llm-cache"))
    monkeypatch.setenv("SIRA_SEEK_SIRA_GENERATION_MAX_TOKENS", "48")
    backend, index = backends["opensearch"], f"test-hyde-cpu-{uuid.uuid4().hex[:8]}"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    assert ingest_corpus(backend, index, corpus).written == 3
    try:
        yield backend, index
    finally:
        backend.delete_index(index)


def _used_text(group: dict[str, object]) -> str:
    """The text of the generated clause inside its group, whatever the field layout."""
    clause = json.dumps(group)
    return str(json.loads(clause.split('"query": ', 1)[1].split(', "', 1)[0]))


@pytest.mark.parametrize("method", ["hyde", "cot"])
def test_cpu_model_writes_the_text_that_the_bm25_query_adds(
    tiny: tuple[SearchBackend, str], method: str
) -> None:
    backend, index = tiny
    request = SearchRequest.build(query=QUERIES[0].text, index=index, method=method, llm=CPU)
    found = search(backend, request)
    generated = found.expansion.generated
    assert generated is not None and generated.method == method and generated.text.strip()
    assert found.llm_calls and found.llm_calls[0].error is None
    assert found.llm_calls[0].completion_tokens <= 48
    group = found.body["query"]["bool"]["should"][1]
    assert f"{GENERATED_NAME}:{method}" in json.dumps(group) and group["bool"]["boost"] == 0.2
    used = _used_text(group)
    assert used.split() == generated.text.split()  # the model's own words, under the budget
    assert found.hits and not found.fell_back_to_bm25
    if method == "hyde":
        # The same request from an evaluation: answered from the response cache, scored.
        evaluation = RetrievalEvaluationRequest.build(
            index=index, queries=QUERIES[:1], qrels=QRELS, method="hyde", llm=CPU
        )
        done = evaluate_retrieval(backend, evaluation)
        assert done.metrics["queries"] == 1 and done.metrics["fallbacks"] == 0
        assert done.metrics["recall@100"] == 1.0  # three documents: the judged one is found
