"""The Python API: build a SEEK pipeline from a cluster, an index and an LLM spec, and ask.

Everything the CLI does goes through here, so a notebook gets the same results as
``sira-seek ask`` and ``sira-seek eval qa``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sira_seek.backend import SearchBackend
from sira_seek.llm.client import LLMClient
from sira_seek.llm.factory import create_llm_client
from sira_seek.llm.ledger import LLMUsageLedger
from sira_seek.llm.settings import LLMSettings

from .batch import BatchReport, run_questions
from .checkpoint import SeekCheckpoint
from .pipeline import SeekPipeline
from .results import QuestionInput, SeekResult
from .retrieval import BM25Retriever, Retriever, SiraDocumentRetriever
from .settings import SeekSettings, resolve_prompt_style

RetrieverName = Literal["bm25", "sira"]


def build_retriever(
    backend: SearchBackend,
    index: str,
    name: RetrieverName = "bm25",
    *,
    sira_llm_spec: str | None = None,
    sira_expansions: Path | None = None,
) -> Retriever:
    """BM25, or SIRA with phrases from an LLM spec or a precomputed expansions file."""
    if name == "bm25":
        return BM25Retriever(backend, index)
    from sira_seek.sira.expansions import LLMExpander, PrecomputedExpander, QueryExpander
    from sira_seek.sira.retriever import SiraRetriever

    expander: QueryExpander | None = None
    if sira_expansions is not None:
        expander = PrecomputedExpander.from_file(sira_expansions)
    elif sira_llm_spec is not None:
        expander = LLMExpander.from_spec(sira_llm_spec)
    return SiraDocumentRetriever(SiraRetriever(backend, index, expander=expander))


@dataclass
class SeekSession:
    """A pipeline with the LLM client and usage ledger it owns; close it when done."""

    pipeline: SeekPipeline
    llm: LLMClient
    ledger: LLMUsageLedger = field(default_factory=LLMUsageLedger)

    async def answer(self, question: str | QuestionInput) -> SeekResult:
        return await self.pipeline.answer(question)

    async def answer_many(
        self,
        questions: Sequence[QuestionInput],
        *,
        concurrency: int = 4,
        checkpoint: Path | str | None = None,
        on_result: Callable[[SeekResult], None] | None = None,
        on_start: Callable[[int, int], None] | None = None,
    ) -> BatchReport:
        """``run_questions`` on this session's pipeline (see there for the two callbacks)."""
        s = self.pipeline.settings
        ckpt = (
            SeekCheckpoint(
                checkpoint, method=s.method, variant=s.variant if s.method == "seek" else None
            )
            if checkpoint is not None
            else None
        )
        return await run_questions(
            self.pipeline,
            questions,
            concurrency=concurrency,
            checkpoint=ckpt,
            on_result=on_result,
            on_start=on_start,
        )

    async def aclose(self) -> None:
        await self.llm.aclose()


def open_session(
    *,
    retriever: Retriever | None,
    llm_spec: str | None = None,
    settings: SeekSettings | None = None,
    llm_settings: LLMSettings | None = None,
    llm: LLMClient | None = None,
    use_cache: bool | None = None,
) -> SeekSession:
    """A session over ``retriever`` with the LLM ``llm_spec`` names (or a client given)."""
    settings = settings or SeekSettings()
    llm_settings = llm_settings or LLMSettings()
    spec = llm_spec or llm_settings.backend
    ledger = LLMUsageLedger()
    client = llm or create_llm_client(
        spec, settings=llm_settings, ledger=ledger, use_cache=use_cache
    )
    style = resolve_prompt_style(settings.prompt_style, spec if llm is None else llm_spec)
    pipeline = SeekPipeline(client, retriever, settings=settings, prompt_style=style)
    return SeekSession(pipeline=pipeline, llm=client, ledger=ledger)


def ask(
    question: str,
    *,
    backend: SearchBackend,
    index: str,
    llm_spec: str | None = None,
    retriever: RetrieverName = "bm25",
    settings: SeekSettings | None = None,
) -> SeekResult:
    """Blocking one-question SEEK: the answer, the completed sketch, every sub-query with
    its retrieved ids, LLM usage and timings."""

    async def run() -> SeekResult:
        session = open_session(
            retriever=build_retriever(backend, index, retriever, sira_llm_spec=llm_spec),
            llm_spec=llm_spec,
            settings=settings,
        )
        try:
            return await session.answer(question)
        finally:
            await session.aclose()

    return asyncio.run(run())
