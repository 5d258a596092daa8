"""DIG of a SEEK run: its answer prompts scored by the LLM, with and without the knowledge.

The measure and its arithmetic (`answer_confidence`, `AnswerGain`, `InformationGains`) are
`sira_seek.metrics.information_gain`, where what is our reading of it is stated. This module
builds the two prompts of each answered question with the few-shot answer prompt of this
project, whatever prompt style the run used (a chat template cannot be scored as plain text
portably, and the same prompt for every run keeps runs comparable), and asks the LLM for the
log-probabilities of each gold answer after them (`sira_seek.llm.scoring`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from sira_seek.llm.errors import LLMCallError
from sira_seek.llm.scoring import ScoringUnsupportedError, TextScorer, continuation_logprobs
from sira_seek.metrics.information_gain import AnswerGain, InformationGains, answer_confidence

from .prompts_fewshot import FewShotSeekPrompts
from .results import SeekResult
from .settings import SeekSettings

logger = logging.getLogger(__name__)


async def _best_confidence(scorer: TextScorer, prompt: str, golds: Sequence[str]) -> float:
    return max(
        [answer_confidence(await continuation_logprobs(scorer, prompt, gold)) for gold in golds]
    )


async def answer_gain(
    scorer: TextScorer, result: SeekResult, prompts: FewShotSeekPrompts
) -> AnswerGain | None:
    """DIG of one answered question; None without gold answers or without knowledge (a
    closed-book answer had nothing to gain from)."""
    golds = [g.strip() for g in result.golden_answers if g.strip()]
    if not golds or result.answer_context is None or result.answer_context_kind is None:
        return None
    kind = result.answer_context_kind
    informed = prompts.answer(result.question, result.answer_context, kind).prompt
    closed = prompts.answer(result.question, None, kind).prompt
    assert informed is not None and closed is not None  # few-shot requests are plain prompts
    return AnswerGain(
        id=result.id,
        with_knowledge=await _best_confidence(scorer, informed, golds),
        without_knowledge=await _best_confidence(scorer, closed, golds),
    )


async def information_gains(
    scorer: TextScorer | None,
    results: Sequence[SeekResult],
    settings: SeekSettings | None = None,
    *,
    concurrency: int = 4,
    backend: str = "this LLM backend",
) -> InformationGains:
    """DIG for every answered question of a run (failed ones are left out).

    A backend that cannot score text makes the whole figure unavailable (the reason is kept);
    a question that cannot be scored (its prompt too long for the model, a server error) gets
    None and a warning, and the others go on: this runs after the answers, which it must
    never lose.
    """
    answered = [r for r in results if r.ok]
    if scorer is None:
        return InformationGains(
            by_id={r.id: None for r in answered},
            unavailable=f"{backend} gives no token log-probabilities of a given text",
        )
    prompts = FewShotSeekPrompts(settings or SeekSettings())
    gate = asyncio.Semaphore(concurrency)
    failures: list[str] = []

    async def one(result: SeekResult) -> AnswerGain | None:
        async with gate:
            try:
                return await answer_gain(scorer, result, prompts)
            except ScoringUnsupportedError:
                raise
            except Exception as exc:  # an analysis never costs a finished run its answers
                kind = "" if isinstance(exc, LLMCallError) else f"{type(exc).__name__}: "
                failures.append(f"{kind}{exc}")
                logger.warning("question %s: DIG not scored: %s", result.id, failures[-1])
                return None

    try:
        gains = await asyncio.gather(*(one(r) for r in answered))
    except ScoringUnsupportedError as exc:
        return InformationGains(by_id={r.id: None for r in answered}, unavailable=str(exc))
    by_id = {r.id: g for r, g in zip(answered, gains, strict=True)}
    if failures and all(g is None for g in gains):
        # Every attempt failed (the server went away, say): the figure is missing, say why.
        return InformationGains(
            by_id=by_id,
            unavailable=f"scoring failed for all {len(failures)} questions tried; first: "
            f"{failures[0]}",
        )
    return InformationGains(by_id=by_id)
