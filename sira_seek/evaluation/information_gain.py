"""Document Information Gain (DIG): how much a method's gathered knowledge raised the model's
confidence in the gold answer.

The SEEK paper reports DIG among its analyses without the formula reaching this project (its
text was not available here, and the authors' code has no analysis scripts). The measure of
that name in RAG is InfoGain-RAG's (Wang et al., 2025, arXiv 2509.12765):

    DIG(d | x) = p(y | x, d) - p(y | x)

the generator's confidence in the gold answer y with the knowledge d in its context minus
without it. It fits what SEEK's analysis claims to show (external knowledge used, conflict with
the model's own knowledge kept low): a positive DIG means the knowledge helped the model towards
the answer, a negative one that it pulled the model away. Here d is everything the method
answered from (SEEK: the completed sketch; Iter-RetGen: the last round's documents; ReWOO: the
plan's evidence), which `SeekResult.answer_context` records.

What is ours, not theirs:

* **Prompt.** Both probabilities use the few-shot answer prompt of this project (the same
  two worked examples, with and without their notes), whatever prompt style the run used: a
  chat template cannot be scored as plain text portably, and the same prompt for every run
  keeps runs comparable.
* **Confidence.** InfoGain-RAG smooths token probabilities over a sliding window and weights
  the first tokens more; the window and the weights it used were not available. Here p(y | .)
  is the geometric mean of window-smoothed token probabilities (`answer_confidence`, window
  `DIG_WINDOW`), with no head weighting: length-normalised, so a long gold answer is not
  penalised for its length.
* **Several gold answers.** Each side takes its best gold answer (as Cover-EM does).

Scoring needs the LLM's log-probabilities of given text (`sira_seek.llm.scoring`); vLLM,
llama.cpp's server and the in-process llama.cpp model have them; a chat-only hosted API does
not, and then DIG is reported as unavailable with the reason, never as 0.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from sira_seek.llm.errors import LLMCallError
from sira_seek.llm.scoring import ScoringUnsupportedError, TextScorer, continuation_logprobs
from sira_seek.seek.prompts_fewshot import FewShotSeekPrompts
from sira_seek.seek.results import SeekResult
from sira_seek.seek.settings import SeekSettings

logger = logging.getLogger(__name__)

DIG_WINDOW = 3
"""Tokens in the smoothing window of `answer_confidence` (centred; cut at the answer's ends)."""


def answer_confidence(logprobs: Sequence[float], window: int = DIG_WINDOW) -> float:
    """p(y | context): the geometric mean of the answer's window-smoothed token probabilities.

    Token i's probability is replaced by the mean probability of the tokens within
    ``window // 2`` of it (InfoGain-RAG's smoothing: one unlikely sub-word token does not
    zero a correct answer), then the geometric mean is taken (length normalisation).
    """
    if not logprobs:
        raise ValueError("an answer with no tokens has no confidence")
    if window < 1:
        raise ValueError("window must be at least 1")
    probs = [math.exp(v) for v in logprobs]
    half = window // 2
    smoothed = []
    for i in range(len(probs)):
        near = probs[max(0, i - half) : i + half + 1]
        smoothed.append(sum(near) / len(near))
    return math.exp(sum(math.log(p) for p in smoothed) / len(smoothed))


class AnswerGain(BaseModel):
    """One question's DIG and the two confidences it is the difference of."""

    model_config = ConfigDict(frozen=True)

    id: str
    with_knowledge: float
    without_knowledge: float

    @property
    def dig(self) -> float:
        return self.with_knowledge - self.without_knowledge


class InformationGains(BaseModel):
    """DIG over a run: per question (None where it does not apply) and why it is missing."""

    model_config = ConfigDict(frozen=True)

    by_id: dict[str, AnswerGain | None]
    unavailable: str | None = None


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
