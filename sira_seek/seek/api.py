"""A SEEK session: the pipeline with the LLM client and usage ledger it owns.

The ask workflow (``sira_seek.workflows.ask``) and ``eval qa`` open sessions here, so a
notebook gets the same results as ``sira-seek ask`` and ``sira-seek eval qa``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sira_seek.llm.client import LLMClient
from sira_seek.llm.factory import create_llm_client
from sira_seek.llm.ledger import LLMUsageLedger
from sira_seek.llm.settings import LLMSettings

from .batch import BatchReport, run_questions
from .checkpoint import SeekCheckpoint
from .pipeline import SeekPipeline
from .results import QuestionInput, SeekResult
from .retrieval import Retriever
from .settings import SeekSettings, resolve_prompt_style


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
    record_iterations: bool = False,
) -> SeekSession:
    """A session over ``retriever`` with the LLM ``llm_spec`` names (or a client given);
    ``record_iterations`` keeps the knowledge after each iteration on every result (for the
    per-iteration analysis, `sira_seek.seek.analysis_answers`)."""
    settings = settings or SeekSettings()
    llm_settings = llm_settings or LLMSettings()
    spec = llm_spec or llm_settings.backend
    ledger = LLMUsageLedger()
    client = llm or create_llm_client(
        spec, settings=llm_settings, ledger=ledger, use_cache=use_cache
    )
    style = resolve_prompt_style(settings.prompt_style, spec if llm is None else llm_spec)
    pipeline = SeekPipeline(
        client,
        retriever,
        settings=settings,
        prompt_style=style,
        record_iterations=record_iterations,
    )
    return SeekSession(pipeline=pipeline, llm=client, ledger=ledger)
