"""What every baseline does per question: timed searches and LLM calls recorded on a result.

The same bookkeeping as SEEK's own loop (a search the cluster failed is recorded on its step
and the question goes on without documents; a failed LLM call, or a retriever's bug, raises,
and the batch records the question as failed), kept apart so a baseline never reaches into
the SEEK pipeline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import ClassVar, Generic, Literal, Protocol, TypeVar

from sira_seek.llm.client import LLMClient
from sira_seek.llm.pending import gather_settled
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse

from ..context_fit import generate_booked
from ..prompts import ContextKind
from ..results import QuestionInput, SeekResult, SubQueryStep
from ..retrieval import RETRIEVAL_FAILURES, RetrievedDoc, Retriever, note_failed_search
from ..settings import SeekSettings

logger = logging.getLogger(__name__)


class _BaselinePrompts(Protocol):
    def __init__(self, settings: SeekSettings, style: Literal["chat", "fewshot"]) -> None: ...


P = TypeVar("P", bound=_BaselinePrompts)


class Baseline(Generic[P]):
    """What every baseline holds (the LLM, the retriever, the settings and its own prompts)
    and how it starts a question; a subclass names its method and prompts and writes
    ``answer``."""

    method: ClassVar[str]
    prompts_class: type[P]

    def __init__(
        self,
        llm: LLMClient,
        retriever: Retriever,
        *,
        settings: SeekSettings,
        style: Literal["chat", "fewshot"],
    ) -> None:
        self.llm = llm
        self.retriever = retriever
        self.settings = settings
        self.prompts: P = self.prompts_class(settings, style)

    def start(self, question: QuestionInput) -> BaselineRun:
        """A fresh record for ``question``, its clock started."""
        return BaselineRun(
            question,
            method=self.method,
            llm=self.llm,
            retriever=self.retriever,
            settings=self.settings,
        )


class BaselineRun:
    """One question's mutable state while a baseline runs; `finish` returns its record."""

    def __init__(
        self,
        question: QuestionInput,
        *,
        method: str,
        llm: LLMClient,
        retriever: Retriever,
        settings: SeekSettings,
    ) -> None:
        self.q = question
        self.llm = llm
        self.retriever = retriever
        self.settings = settings
        self.started = time.perf_counter()
        self.result = SeekResult(
            id=question.id,
            question=question.question,
            golden_answers=list(question.golden_answers),
            method=method,
        )

    async def generate(self, stage: str, request: LLMRequest) -> LLMResponse:
        """One LLM call, its cost booked under ``stage`` (`context_fit.generate_booked`).

        Baseline stages (``generate``, ``plan``, ``tool``) are not SEEK's and are booked under
        their own names; the final answer call is always ``answer``, as in SEEK, so reports
        compare answer costs across methods.
        """
        return await generate_booked(self.llm, request, stage=stage, usage=self.result.usage)

    async def search(
        self, query: str, *, gist_index: int | None, raw_output: str | None = None
    ) -> tuple[SubQueryStep, list[RetrievedDoc]]:
        """Top-k documents for ``query``, recorded as a step (errors kept on the step)."""
        step, docs = await self._retrieve(query, gist_index, raw_output)
        self.result.steps.append(step)
        self.result.timings.retrieval_s += step.retrieval_ms / 1000
        return step, docs

    async def search_all(
        self, queries: Sequence[str], *, raw_outputs: Sequence[str | None]
    ) -> list[tuple[SubQueryStep, list[RetrievedDoc]]]:
        """Every query searched at once (``gist_index`` = its position), recorded in the
        order given; each step keeps its own time, ``retrieval_s`` grows by the wall time."""
        started = time.perf_counter()
        found = await gather_settled(
            *(
                self._retrieve(query, i, raw)
                for i, (query, raw) in enumerate(zip(queries, raw_outputs, strict=True))
            )
        )
        self.result.steps.extend(step for step, _ in found)
        self.result.timings.retrieval_s += time.perf_counter() - started
        return list(found)

    async def _retrieve(
        self, query: str, gist_index: int | None, raw_output: str | None
    ) -> tuple[SubQueryStep, list[RetrievedDoc]]:
        """One search in a worker thread, not yet recorded on the result."""
        s = self.settings
        step = SubQueryStep(
            gist_index=gist_index, sub_query=query, retrieved_ids=[], raw_output=raw_output
        )
        started = time.perf_counter()
        try:
            docs = await asyncio.wait_for(
                asyncio.to_thread(self.retriever.retrieve, query, s.top_k),
                timeout=s.retrieval_timeout_s,
            )
        except RETRIEVAL_FAILURES as exc:  # costs this step's evidence; a bug raises
            step.error = note_failed_search(exc, [query], self.q.id)
            docs = []
        step.retrieval_ms = (time.perf_counter() - started) * 1000
        step.retrieved_ids = [doc.id for doc in docs]
        return step, docs

    def answered_from(self, context: str, kind: ContextKind) -> None:
        """Record the knowledge the final answer was asked from, as SEEK does (for DIG)."""
        self.result.answer_context = context
        self.result.answer_context_kind = kind

    def note(self, text: str) -> None:
        """A remark a reader of the record needs (a fallback taken, something dropped)."""
        logger.info("question %s: %s", self.q.id, text)
        self.result.notes.append(text)

    def finish(self) -> SeekResult:
        self.result.timings.total_s = time.perf_counter() - self.started
        self.result.timings.llm_s = self.result.usage.total.llm_seconds
        return self.result
