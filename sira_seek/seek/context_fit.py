"""Asking a question again with shorter evidence when one of its prompts does not fit the model.

Why: the documents and slots a prompt shows are sized by ``doc_chars``, ``evidence_chars`` and
``slot_chars``, which suit the default top-5 and the context windows SEEK was run with. A
small model (the embedded CPU model has 2,048 tokens) or a method whose one prompt shows many
searches at once (ReWOO's Solver sees every step's documents, Parallel Filling every gist's, an
Update sketch eight filled slots) can outgrow the window, and the model then refuses the
prompt. Failing the question would make the answer depend on how many steps a plan happened
to have; cutting the one prompt that overflowed would show the model evidence of two sizes.
So the question is asked again from the start with every evidence budget halved (at most
`FIT_ROUNDS` times), each prompt of the new attempt built with the same, shorter budget.

A question whose prompts fit is never touched, so the paper's prompts, recorded runs and
pinned figures are unchanged. One that was asked again says so: ``SeekResult.evidence_scale``
(1 when it fit), a note naming the stage that overflowed, a warning in the log; its usage and
total time include the discarded attempts. A prompt still too long at the smallest budget
raises the model's error, as before.
"""

from __future__ import annotations

import asyncio

from sira_seek.llm.client import LLMClient
from sira_seek.llm.errors import ContextTooLongError
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse

from .results import QuestionUsage
from .settings import SeekSettings

FIT_ROUNDS = 3
"""Attempts after the first, each with half the budgets of the one before (1/2, 1/4, 1/8)."""

MIN_BUDGET_CHARS = 50
"""The smallest value of each budget (the settings' own lower bound): a title and a few words."""


class PromptOverflow(ContextTooLongError):
    """A question's attempt stopped at a prompt the model refused as too long.

    Raised by the pipeline's and the baselines' LLM calls in place of the client's error, so
    `SeekPipeline.answer` can ask again; it carries the stage and what the attempt had spent.
    It is a `ContextTooLongError` (kind ``context_too_long``), so a caller that does not ask
    again records it as the model's error."""

    def __init__(self, cause: ContextTooLongError, *, stage: str, usage: QuestionUsage) -> None:
        super().__init__(str(cause), raw_text=cause.raw_text, attempts=cause.attempts)
        self.stage = stage
        self.usage = usage


async def generate_booked(
    llm: LLMClient, request: LLMRequest, *, stage: str, usage: QuestionUsage
) -> LLMResponse:
    """One LLM call of a question, its cost booked on ``usage`` under ``stage``; a prompt the
    model refuses as too long raises `PromptOverflow` with what the question had spent. Every
    LLM call of SEEK and of the baselines goes through here, so each can be asked again."""
    usage.call_started()
    try:
        response = await llm.generate(request)
        # One turn of the event loop before the call counts as ended: calls gathered with it
        # start in this round even when this one returned at once (a cache hit).
        await asyncio.sleep(0)
    except ContextTooLongError as exc:
        raise PromptOverflow(exc, stage=stage, usage=usage) from exc
    finally:
        usage.call_ended()
    usage.add(stage, response)
    return response


def scaled_settings(settings: SeekSettings, scale: float) -> SeekSettings:
    """``settings`` with the document, evidence and slot budgets multiplied by ``scale``."""
    return settings.model_copy(
        update={
            name: max(MIN_BUDGET_CHARS, int(getattr(settings, name) * scale))
            for name in ("doc_chars", "evidence_chars", "slot_chars")
        }
    )


def refit_note(overflow: PromptOverflow, settings: SeekSettings, scale: float) -> str:
    """What a record says when it was answered with shorter evidence."""
    return (
        f"the {overflow.stage} prompt was too long for the model's context window "
        f"({overflow}); asked again from the start with evidence at {scale:g} of its length "
        f"(doc_chars {settings.doc_chars}, evidence_chars {settings.evidence_chars}, "
        f"slot_chars {settings.slot_chars}); usage includes the discarded attempts"
    )
