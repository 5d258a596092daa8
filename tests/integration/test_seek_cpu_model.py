"""SEEK end to end with the real CPU model (Gemma 3 270M base, in-process llama.cpp) on two
wikimh questions. A missing model is a failure, not a skip: this is the evidence that SEEK runs
on a laptop. Quality is not asserted: a 270M base model only proves the pipeline."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.llm.llamacpp_inprocess import llama_cpp_available
from sira_seek.llm.settings import LLMSettings
from sira_seek.seek.api import open_session
from sira_seek.seek.batch import BatchReport
from sira_seek.seek.questions import read_questions
from sira_seek.seek.retrieval import BM25Retriever
from sira_seek.seek.settings import SeekSettings

pytestmark = pytest.mark.integration

# Small caps keep two questions within about a minute on 2 cores.
CPU_SETTINGS = SeekSettings(
    max_gists=2,
    temperature=0.0,
    doc_chars=120,
    slot_chars=200,
    sketch_max_tokens=32,
    subquery_max_tokens=20,
    slot_max_tokens=32,
    answer_max_tokens=12,
)


def test_two_questions_with_the_cpu_model(
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    tmp_path: Path,
) -> None:
    if not llama_cpp_available():
        pytest.fail("llama-cpp-python is not installed: run scripts/install_cpu_llm.sh")
    questions = read_questions(wikimh_dir / "qa-hotpotqa.jsonl", limit=2)
    retriever = BM25Retriever(backends["opensearch"], wikimh_indexes["opensearch"])

    async def run() -> BatchReport:
        session = open_session(
            retriever=retriever,
            llm_spec="llamacpp:gemma3-270m",
            settings=CPU_SETTINGS,
            llm_settings=LLMSettings(cache_dir=tmp_path / "cache"),
        )
        try:
            return await session.answer_many(
                questions, concurrency=2, checkpoint=tmp_path / "ckpt.jsonl"
            )
        finally:
            await session.aclose()

    report = asyncio.run(run())
    assert report.failed == 0, [r.error for r in report.results]
    for result in report.results:
        assert result.sketch is not None and result.sketch.is_complete
        assert 1 <= len(result.sketch.gists) <= 2
        assert all(len(step.retrieved_ids) == 5 for step in result.steps)
        assert result.raw_answer is not None and result.raw_answer.startswith("<answer>")
        assert result.usage.total.completion_tokens > 0
        assert result.usage.by_stage["sketch"].calls == 1
    assert len((tmp_path / "ckpt.jsonl").read_text().splitlines()) == 2
