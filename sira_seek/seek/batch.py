"""Many questions at once: per-question pipelines with bounded concurrency.

Each question runs as its own asyncio task, so while one waits on the LLM another's searches
run in worker threads, and a server that batches (vLLM) always has requests queued. A question
that fails is recorded with its error (and, when the failure is a bug, its traceback) and
the others carry on; with a checkpoint, finished questions survive a kill and are not asked
again.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from sira_seek.input_errors import InputError
from sira_seek.llm.pending import PendingRequest

from .checkpoint import SeekCheckpoint
from .pipeline import SeekPipeline
from .results import QuestionInput, SeekResult
from .retrieval import RETRIEVAL_FAILURES, failure_text

logger = logging.getLogger(__name__)


class BatchReport(BaseModel):
    """Results in input order, and what the run itself did."""

    results: list[SeekResult]
    resumed: int = 0
    answered: int = 0
    failed: int = 0
    wall_s: float = 0.0
    waiting: list[str] = Field(
        default_factory=list,
        description="Questions stopped by an LLM request an offline batch round has not "
        "answered yet (``--llm batch:``): not in ``results``, not checkpointed; asked again "
        "from the start in the next round.",
    )

    @property
    def questions_per_s(self) -> float:
        return self.answered / self.wall_s if self.wall_s > 0 else 0.0


def _failure(question: QuestionInput, pipeline: SeekPipeline, exc: BaseException) -> SeekResult:
    """The failed question's record. The cluster or the LLM failing (`RETRIEVAL_FAILURES`:
    an LLM call that raised is one) is said in one line; anything else is a bug, so the record
    keeps its traceback and an error is logged."""
    s = pipeline.settings
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" (at {last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last else ""
    error = f"{failure_text(exc)}{where}"
    trace = None
    if not isinstance(exc, RETRIEVAL_FAILURES):
        trace = "".join(traceback.format_exception(exc))
        logger.error("question %s failed with a bug: %s", question.id, error)
    return SeekResult(
        id=question.id,
        question=question.question,
        golden_answers=list(question.golden_answers),
        method=s.method,
        variant=s.variant if s.method == "seek" else None,
        error=error,
        error_traceback=trace,
    )


async def run_questions(
    pipeline: SeekPipeline,
    questions: Sequence[QuestionInput],
    *,
    concurrency: int = 4,
    checkpoint: SeekCheckpoint | None = None,
    on_result: Callable[[SeekResult], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> BatchReport:
    """Answer every question; at most ``concurrency`` in flight.

    Questions finished in ``checkpoint`` are taken from it; every new result, success or
    failure, is appended to it as soon as it exists. A question whose LLM request waits for
    an offline batch round (``pending.PendingRequest``) is neither: it is listed in
    ``waiting`` and asked again, from its start, by the next run.

    For progress displays: ``on_start(to_ask, resumed)`` fires once before the first question
    runs (how many will be asked, how many came from the checkpoint), then ``on_result`` once
    per asked question as it finishes, so a bar can size itself and report failures.
    """
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1, not {concurrency}")
    done = checkpoint.finished() if checkpoint is not None else {}
    semaphore = asyncio.Semaphore(concurrency)
    started = time.perf_counter()
    failed = 0

    waiting: list[str] = []

    async def one(question: QuestionInput) -> SeekResult | None:
        nonlocal failed
        async with semaphore:
            try:
                result = await pipeline.answer(question)
            except PendingRequest:  # waits for a batch round: neither finished nor failed
                waiting.append(question.id)
                return None
            except Exception as exc:  # recorded; never stops the other questions
                result = _failure(question, pipeline, exc)
                failed += 1
            if checkpoint is not None:
                checkpoint.append(result)
            if on_result is not None:
                on_result(result)
            return result

    todo = [q for q in questions if q.id not in done]
    if on_start is not None:
        on_start(len(todo), len(questions) - len(todo))
    fresh = await asyncio.gather(*(one(q) for q in todo))
    by_id = {**done, **{r.id: r for r in fresh if r is not None}}
    stopped = set(waiting)
    return BatchReport(
        results=[by_id[q.id] for q in questions if q.id in by_id],
        resumed=len(questions) - len(todo),
        answered=len(todo) - len(waiting),
        failed=failed,
        wall_s=time.perf_counter() - started,
        waiting=[q.id for q in todo if q.id in stopped],
    )
