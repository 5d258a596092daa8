"""SEEK paper §5.4: a judge LLM rates each method's knowledge context 0-5 on accuracy,
logicality, structure and refinement (``eval qa --judge-llm SPEC``).

The rated context is what the method answered from, as its answer prompt showed it
(``SeekResult.answer_context``), so every method is judged on the knowledge it actually fed
the model:

* SEEK (every sketch variant): the completed steering sketch (kind ``sketch``); the plan and
  no-initialization variants their plan or notes;
* ReWOO: the solver's notes (the plan with each step's evidence, kind ``notes``);
* Iter-RetGen: the documents of its last round (kind ``documents``);
* vanilla RAG: the retrieved documents (kind ``documents``);
* vanilla LLM (closed-book): nothing -- counted in ``no_context``, not judged.

The prompt is `sira_seek.metrics.seek_knowledge.judge_prompt` (our wording: the paper's
template is an image). A reply that cannot be read is recorded with the reason and counted
(``malformed``); a judge call that fails is counted (``failed``) and logged; neither stops
the run. Requests go through gather_settled, so with a ``batch:`` judge every question's
request is in the same round.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from sira_seek.llm.client import LLMClient
from sira_seek.llm.errors import LLMCallError
from sira_seek.llm.pending import gather_settled
from sira_seek.llm.request import ChatMessage, LLMRequest
from sira_seek.metrics.seek_answer_analyses import AnalysisCost
from sira_seek.metrics.seek_knowledge import (
    JudgeVerdict,
    KnowledgeJudgement,
    judge_prompt,
    knowledge_judgement,
    parse_judge_scores,
)

from .results import SeekResult

logger = logging.getLogger(__name__)

JUDGE_MAX_TOKENS = 128
"""Room for one JSON object of four scores (and a short preamble some models add)."""


def judge_request(result: SeekResult) -> LLMRequest:
    """The judge's chat request for one result's knowledge context (greedy)."""
    prompt = judge_prompt(result.question, result.answer_context or "")
    return LLMRequest(
        messages=(ChatMessage(role="user", content=prompt),),
        max_tokens=JUDGE_MAX_TOKENS,
        temperature=0.0,
    )


def context_label(results: Sequence[SeekResult]) -> str:
    """What was rated, named from the results (e.g. ``sketch``, ``documents``)."""
    kinds = sorted({r.answer_context_kind for r in results if r.answer_context_kind})
    return ", ".join(kinds) if kinds else "none (closed-book)"


async def judge_contexts(
    judge: LLMClient, results: Sequence[SeekResult], *, spec: str, concurrency: int = 4
) -> KnowledgeJudgement:
    """The judge's ratings of every answered result's knowledge context, averaged."""
    gate = asyncio.Semaphore(concurrency)
    rated = [r for r in results if r.ok and r.answer_context]
    spent = {"calls": 0, "failed": 0, "prompt": 0, "completion": 0, "llm_s": 0.0}
    started = time.perf_counter()

    async def one(result: SeekResult) -> JudgeVerdict | None:
        try:
            async with gate:
                response = await judge.generate(judge_request(result))
        except LLMCallError as exc:
            spent["failed"] += 1
            logger.warning("question %s: judge call failed: %s", result.id, exc)
            return None
        spent["calls"] += 1
        spent["prompt"] += response.usage.prompt_tokens
        spent["completion"] += response.usage.completion_tokens
        spent["llm_s"] += response.latency_s
        found = parse_judge_scores(response.text)
        if isinstance(found, str):
            logger.warning("question %s: malformed judge reply: %s", result.id, found)
            return JudgeVerdict(id=result.id, malformed=found, reply=response.text[:500])
        return JudgeVerdict(id=result.id, scores=found)

    verdicts = [v for v in await gather_settled(*(one(r) for r in rated)) if v is not None]
    return knowledge_judgement(
        verdicts,
        judge=spec,
        context=context_label(results),
        no_context=sum(1 for r in results if r.ok and not r.answer_context),
        failed=int(spent["failed"]),
        cost=AnalysisCost(
            llm_calls=int(spent["calls"]),
            prompt_tokens=int(spent["prompt"]),
            completion_tokens=int(spent["completion"]),
            llm_seconds=round(spent["llm_s"], 3),
            wall_seconds=round(time.perf_counter() - started, 3),
            failed_questions=int(spent["failed"]),
        ),
    )


async def judge_run(
    spec: str, results: Sequence[SeekResult], *, concurrency: int, use_cache: bool | None
) -> KnowledgeJudgement:
    """`judge_contexts` with the judge ``spec`` names (any LLM spec, ``batch:`` included),
    closed afterwards."""
    from sira_seek.llm.factory import create_llm_client

    judge = create_llm_client(spec, use_cache=use_cache)
    try:
        return await judge_contexts(judge, results, spec=spec, concurrency=concurrency)
    finally:
        await judge.aclose()
