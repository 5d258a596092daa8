"""The embedded CPU model's context window, known before the first call, sizes the
schemathesis case that it used to refuse.

Real: Gemma 3 270M in-process (llama.cpp, ``n_ctx`` 2,048, few-shot prompts, as ``serve``
runs it) and 60 wikimh documents in an index of the session's OpenSearch node. schemathesis
found ``/ask`` ``{"method": "rewoo-sequential", "variant": "no-iter-retrieval", "top_k": 48,
"question": "0000"}`` answered 503: the Solver's prompt (2,636 tokens at the smallest evidence)
refused by the model. One question: the loop is the same for every question.

What could break: the window not reported through the client the factory builds (cache,
ledger), or the budget's estimate falling short of the real tokenizer's count.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from pathlib import Path

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.ingest import ingest_corpus
from sira_seek.llm.context_window import context_window_of
from sira_seek.llm.factory import create_llm_client
from sira_seek.llm.ledger import LLMUsageLedger
from sira_seek.seek.pipeline import SeekPipeline
from sira_seek.seek.retrieval import BM25Retriever
from sira_seek.seek.settings import SeekSettings

pytestmark = pytest.mark.integration


def test_the_embedded_model_answers_the_schemathesis_case_sized_to_its_window(
    gemma_gguf: Path, backends: dict[str, SearchBackend], wikimh_dir: Path, tmp_path: Path
) -> None:
    backend = backends["opensearch"]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    with (wikimh_dir / "corpus.jsonl").open(encoding="utf-8") as source:
        (corpus / "corpus.jsonl").write_text("".join(itertools.islice(source, 60)))
    index = f"test-window-{uuid.uuid4().hex[:8]}"
    assert ingest_corpus(backend, index, corpus).written == 60
    try:
        llm = create_llm_client(f"llamacpp:{gemma_gguf}", ledger=LLMUsageLedger(), use_cache=False)
        settings = SeekSettings(
            method="rewoo-sequential", variant="no-iter-retrieval", top_k=48, temperature=0.0
        )
        pipeline = SeekPipeline(
            llm, BM25Retriever(backend, index), settings=settings, prompt_style="fewshot"
        )

        async def run() -> tuple[int | None, object]:
            try:
                window = await context_window_of(llm)
                return window, await pipeline.answer("0000")
            finally:
                await llm.aclose()

        window, result = asyncio.run(run())
    finally:
        backend.delete_index(index)

    assert window == 2048
    assert result.ok and result.error is None  # type: ignore[attr-defined]
    assert result.evidence_scale == 0.125  # type: ignore[attr-defined]
    notes = result.notes  # type: ignore[attr-defined]
    assert "sized up front to the model's context window of 2048 tokens" in notes[0]
    # Sized, not refused: no note of a prompt the model turned down.
    assert not any("too long" in note for note in notes)
