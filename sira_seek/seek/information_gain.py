"""DIG of a SEEK run: its answer prompts scored by the LLM, with and without the knowledge.

The measure and its arithmetic (Eq. 13-15 of the SEEK paper: `dig_confidence`,
`DigParameters`, `AnswerGain`, `InformationGains`) are `sira_seek.metrics.information_gain`.
This module builds the two prompts of each answered question and asks the LLM for the
log-probabilities of the gold answer after each (`sira_seek.llm.scoring`):

* **One prompt, differing only by the knowledge O.** Both sides use the few-shot answer
  template of this project (`FewShotSeekPrompts.information_gain_prompts`): the same
  demonstrations and question, with the knowledge block present or left out. It is used
  whatever prompt style the run used: a chat template cannot be scored as plain text
  portably, and the same prompt for every run keeps runs comparable.
* **One gold answer on both sides** (`scored_gold`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from sira_seek.llm.errors import LLMCallError
from sira_seek.llm.scoring import ScoringUnsupportedError, TextScorer, continuation_logprobs
from sira_seek.metrics.information_gain import (
    AnswerGain,
    DigParameters,
    InformationGains,
    dig_confidence,
)

from .prompts_fewshot import FewShotSeekPrompts
from .results import SeekResult
from .settings import SeekSettings

logger = logging.getLogger(__name__)


def scored_gold(golden_answers: Sequence[str]) -> str | None:
    """The gold answer DIG scores, on both sides: the first non-blank one (stripped).

    One answer, chosen without looking at any score. Taking each side's best (as Cover-EM does
    for a prediction) would compare two different answers; taking the alias the knowledge
    makes likeliest would pick on one side's scores and so bias DIG upwards. The first is the
    answer the dataset lists first (most multi-hop sets, HotpotQA among them, list only one),
    and it costs one scoring a side.
    """
    return next((g.strip() for g in golden_answers if g.strip()), None)


async def answer_gain(
    scorer: TextScorer,
    result: SeekResult,
    prompts: FewShotSeekPrompts,
    parameters: DigParameters | None = None,
) -> AnswerGain | None:
    """DIG of one answered question; None without gold answers or without knowledge (a
    closed-book answer had nothing to gain from)."""
    gold = scored_gold(result.golden_answers)
    if gold is None or result.answer_context is None or result.answer_context_kind is None:
        return None
    informed, closed = prompts.information_gain_prompts(
        result.question, result.answer_context, result.answer_context_kind
    )
    p = parameters or DigParameters()
    return AnswerGain(
        id=result.id,
        gold=gold,
        with_knowledge=dig_confidence(await continuation_logprobs(scorer, informed, gold), p),
        without_knowledge=dig_confidence(await continuation_logprobs(scorer, closed, gold), p),
    )


async def information_gains(
    scorer: TextScorer | None,
    results: Sequence[SeekResult],
    settings: SeekSettings | None = None,
    *,
    concurrency: int = 4,
    backend: str = "this LLM backend",
    parameters: DigParameters | None = None,
) -> InformationGains:
    """DIG for every answered question of a run (failed ones are left out).

    A backend that cannot score text makes the whole figure unavailable (the reason is kept);
    a question that cannot be scored (its prompt too long for the model, a server error) gets
    None and a warning, and the others go on: this runs after the answers, which it must
    never lose.
    """
    answered = [r for r in results if r.ok]
    p = parameters or DigParameters()
    if scorer is None:
        return InformationGains(
            by_id={r.id: None for r in answered},
            unavailable=f"{backend} gives no token log-probabilities of a given text",
            parameters=p,
        )
    prompts = FewShotSeekPrompts(settings or SeekSettings())
    gate = asyncio.Semaphore(concurrency)
    failures: list[str] = []

    async def one(result: SeekResult) -> AnswerGain | None:
        async with gate:
            try:
                return await answer_gain(scorer, result, prompts, p)
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
        return InformationGains(
            by_id={r.id: None for r in answered}, unavailable=str(exc), parameters=p
        )
    by_id = {r.id: g for r, g in zip(answered, gains, strict=True)}
    if failures and all(g is None for g in gains):
        # Every attempt failed (the server went away, say): the figure is missing, say why.
        return InformationGains(
            by_id=by_id,
            unavailable=f"scoring failed for all {len(failures)} questions tried; first: "
            f"{failures[0]}",
            parameters=p,
        )
    return InformationGains(by_id=by_id, parameters=p)
