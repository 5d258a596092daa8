"""Answers the SEEK paper's answer-quality analyses need beyond a run's own.

Scoring them is `sira_seek.metrics.seek_answer_analyses`; asking for them is here, because it
takes the run's LLM and answer prompt. Both analyses are opt-in (``eval qa --per-iteration``,
``--slot-ablation``): they cost LLM calls, counted apart from the run's usage
(`AnalysisCost`), and a call that fails leaves its question out of the analysis, never costs
the run its answers.

* **After each iteration** (A.7, Fig. 6a), `iteration_answers`: the answer prompt the method
  answers with, over the knowledge as it stood after iteration t = 1 .. n-1
  (``SeekResult.iteration_contexts``, recorded when the pipeline runs with
  ``record_iterations``); iteration n is the run's own answer (the same prompt over the same
  knowledge: no call). Iter-RetGen needs no call: every round's generation is an answer, kept
  on the next round's step (``raw_output``). Other results (a non-iterative method, or results
  resumed from a checkpoint written without the contexts) have no answers by iteration.
* **Slot ablation** (§5.3, Fig. 4b), `slot_ablation_answers`: for each seed sketch (a
  completed SEEK sketch with the run's most common slot count, or ``seed_slots``), the answer
  with filled slot i emptied again (shown as ``<TO BE FILLED>``: the paper's "incomplete
  sketch"), for each i, and with every steering gist removed (the title and the filled
  knowledge only: "SEEK (w/o Sketch)"). "N/A", the completed sketch, is the run's answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from sira_seek.llm.client import LLMClient
from sira_seek.llm.errors import LLMCallError
from sira_seek.llm.pending import gather_settled
from sira_seek.metrics.qa import AnswerExtraction, extract_tagged_answer
from sira_seek.metrics.seek_answer_analyses import AnalysisCost, seed_slot_count

from .output_parsing import extract_answer
from .prompts import ContextKind, SeekPrompts
from .results import SeekResult
from .sketch import NO_EVIDENCE, SteeringSketch

logger = logging.getLogger(__name__)

T = TypeVar("T")

ABLATED_VARIANTS = ("sequential", "update", "parallel", "no-iter-retrieval")
"""SEEK variants whose answer is asked from the sketch's slots (`render_sketch`), so a slot
can be removed from what the model reads."""


def scored(raw: str | None, extraction: AnswerExtraction) -> str:
    """An answer as the run scores its own (`SeekResult.scored_answer`)."""
    return extract_tagged_answer(raw) if extraction == "tagged" else extract_answer(raw)


@dataclass
class _Asker:
    """The answer prompt over given knowledge, with its cost counted."""

    llm: LLMClient
    prompts: SeekPrompts
    concurrency: int
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    failed: int = 0
    started: float = field(default_factory=time.perf_counter)
    gate: asyncio.Semaphore = field(init=False)

    def __post_init__(self) -> None:
        self.gate = asyncio.Semaphore(self.concurrency)

    async def ask(self, question: str, context: str, kind: ContextKind) -> str:
        async with self.gate:
            response = await self.llm.generate(self.prompts.answer(question, context, kind))
        self.calls += 1
        self.prompt_tokens += response.usage.prompt_tokens
        self.completion_tokens += response.usage.completion_tokens
        self.llm_seconds += response.latency_s
        raw = response.text
        return "<answer>" + raw if self.prompts.style == "fewshot" else raw

    def cost(self) -> AnalysisCost:
        return AnalysisCost(
            llm_calls=self.calls,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            llm_seconds=round(self.llm_seconds, 3),
            wall_seconds=round(time.perf_counter() - self.started, 3),
            failed_questions=self.failed,
        )

    async def each(
        self, results: Sequence[SeekResult], job: Callable[[SeekResult], Awaitable[T | None]]
    ) -> list[T | None]:
        async def one(result: SeekResult) -> T | None:
            try:
                return await job(result)
            except LLMCallError as exc:
                self.failed += 1
                logger.warning("question %s: left out of the analysis: %s", result.id, exc)
                return None

        # Settled: every question's requests reach an offline batch round together.
        return await gather_settled(*(one(r) for r in results))


def _iter_retgen_answers(result: SeekResult, extraction: AnswerExtraction) -> list[str] | None:
    """Round t's generation is on step t+1 (the search it led to); the last is the answer."""
    earlier = [step.raw_output for step in result.steps[1:]]
    if any(raw is None for raw in earlier):
        return None
    return [scored(raw, extraction) for raw in earlier] + [result.scored_answer(extraction)]


async def iteration_answers(
    llm: LLMClient,
    prompts: SeekPrompts,
    results: Sequence[SeekResult],
    *,
    concurrency: int = 4,
    extraction: AnswerExtraction = "tagged",
) -> tuple[dict[str, list[str]], AnalysisCost]:
    """qid -> the answer after iteration 1..n, for the answered results that can have them."""
    asker = _Asker(llm, prompts, concurrency)

    async def job(result: SeekResult) -> list[str] | None:
        if result.method == "iter-retgen":
            return _iter_retgen_answers(result, extraction)
        contexts, kind = result.iteration_contexts, result.answer_context_kind
        if not contexts or kind is None:
            return None
        last = contexts[-1] == result.answer_context
        asked = await gather_settled(
            *(asker.ask(result.question, c, kind) for c in (contexts[:-1] if last else contexts))
        )
        answers = [scored(raw, extraction) for raw in asked]
        return answers + [result.scored_answer(extraction)] if last else answers

    answered = [r for r in results if r.ok]
    found = await asker.each(answered, job)
    by_id = {r.id: a for r, a in zip(answered, found, strict=True) if a is not None}
    return by_id, asker.cost()


def without_gists(sketch: SteeringSketch, style: str) -> str:
    """The completed sketch with every steering gist removed: its filled knowledge only (and,
    for chat prompts, its title), in the sketch's order."""
    slots = [" ".join((g.slot or "").split()) or NO_EVIDENCE for g in sketch.gists]
    if style == "fewshot":
        return "\n".join(f"- {slot}" for slot in slots)
    return "\n\n".join([f"# {sketch.title}", *slots])


def _removed(sketch: SteeringSketch, index: int) -> SteeringSketch:
    gists = list(sketch.gists)
    gists[index] = gists[index].model_copy(update={"slot": None})
    return sketch.model_copy(update={"gists": tuple(gists)})


def ablation_seeds(
    results: Sequence[SeekResult], seed_slots: int | None = None
) -> list[SeekResult]:
    """The seed sketches: answered SEEK results answered from a completed sketch of
    ``seed_slots`` slots (default: the most common count among them)."""
    candidates = [
        r
        for r in results
        if r.ok
        and r.method == "seek"
        and r.variant in ABLATED_VARIANTS
        and r.answer_context_kind == "sketch"
        and r.sketch is not None
        and r.sketch.is_complete
    ]
    slots = seed_slots or seed_slot_count([len(r.sketch.gists) for r in candidates if r.sketch])
    return [r for r in candidates if r.sketch is not None and len(r.sketch.gists) == slots]


async def slot_ablation_answers(
    llm: LLMClient,
    prompts: SeekPrompts,
    results: Sequence[SeekResult],
    *,
    concurrency: int = 4,
    extraction: AnswerExtraction = "tagged",
    seed_slots: int | None = None,
) -> tuple[dict[str, tuple[list[str], str]], AnalysisCost]:
    """qid -> (the answer with slot i removed for each i, the answer without gists), for
    every seed sketch (`ablation_seeds`)."""
    asker = _Asker(llm, prompts, concurrency)

    async def job(result: SeekResult) -> tuple[list[str], str] | None:
        sketch = result.sketch
        assert sketch is not None
        contexts = [prompts.render_sketch(_removed(sketch, i)) for i in range(len(sketch.gists))]
        contexts.append(without_gists(sketch, prompts.style))
        asked = await gather_settled(*(asker.ask(result.question, c, "sketch") for c in contexts))
        answers = [scored(raw, extraction) for raw in asked]
        return answers[:-1], answers[-1]

    seeds = ablation_seeds(results, seed_slots)
    found = await asker.each(seeds, job)
    by_id = {r.id: a for r, a in zip(seeds, found, strict=True) if a is not None}
    return by_id, asker.cost()
