"""A question's evidence is sized to the model's context window before its first call.

`TokenWindowLLMDouble` is a test double above the `LLMClient` protocol that knows its window
(``context_window()``, as the llama.cpp and OpenAI-compatible clients do) and refuses, as a
model does, a prompt that leaves less than ``reply`` tokens of it, counting a token per three
characters (every document line of these tests is plain ASCII words, so a real tokenizer
would count fewer).

What could break: the schemathesis case (``/ask`` rewoo-sequential, top_k 48, answered 503
by the 2,048-token embedded model after three halvings) relying on the refusal again or
failing; a request that cannot fit reaching the retriever or the LLM before it is refused,
or refused without naming the field; a question whose prompts fit being changed; the window
lost behind the cache and ledger wrappers.
"""

from __future__ import annotations

import asyncio
import math

import pytest
from seek_fakes import LongDocsRetriever
from seek_llm_double import request_text  # puts tests/unit/llm on the path

from sira_seek.llm.cache import CachingLLMClient, ResponseCache
from sira_seek.llm.context_window import context_window_of
from sira_seek.llm.errors import ContextTooLongError
from sira_seek.llm.ledger import LLMUsageLedger, MeteredLLMClient
from sira_seek.llm.openai_http import listed_context_window
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse
from sira_seek.seek.context_budget import PromptBudgetError, fit_budget
from sira_seek.seek.pipeline import SeekPipeline
from sira_seek.seek.results import QuestionInput, SeekResult
from sira_seek.seek.settings import SeekSettings
from sira_seek.workflows.errors import InvalidInput, classify

from scripted_llm import ScriptedLLMDouble  # noqa: E402  # isort: skip

SCHEMATHESIS_CASE = {"method": "rewoo-sequential", "variant": "no-iter-retrieval", "top_k": 48}
PLAN = "".join(f"Plan: step {i}\n#E{i} = Search[topic {i} of 0000]\n" for i in range(1, 6))


class TokenWindowLLMDouble:
    """Knows its window; refuses a prompt that leaves fewer than ``reply`` tokens of it."""

    backend = "scripted"

    def __init__(
        self, inner: ScriptedLLMDouble, window: int, reply: int = 256, *, tells: bool = True
    ) -> None:
        self.inner = inner
        self.window = window
        self.tells = tells  # False: a server that does not say its window
        self.reply = reply
        self.tokens: list[int] = []
        self.refused = 0

    async def context_window(self) -> int | None:
        return self.window if self.tells else None

    async def model_name(self) -> str:
        return await self.inner.model_name()

    async def generate(self, request: LLMRequest) -> LLMResponse:
        system = "".join(m.content for m in request.messages or () if m.role == "system")
        tokens = math.ceil(len(system + request_text(request)) / 3)
        self.tokens.append(tokens)
        if tokens + self.reply > self.window:
            self.refused += 1
            raise ContextTooLongError(f"{tokens} tokens exceed the window of {self.window}")
        return await self.inner.generate(request)

    async def aclose(self) -> None:
        return None


def _rewoo_llm() -> ScriptedLLMDouble:
    def route(request: LLMRequest) -> str:
        text = request_text(request)
        if "make a plan that solves it" in text:
            return PLAN
        assert "Solve the question below" in text, text[-200:]
        return "<answer>zero</answer>"

    return ScriptedLLMDouble(default=route)


def _ask(
    llm: object, retriever: LongDocsRetriever, question: str, **settings: object
) -> SeekResult:
    pipeline = SeekPipeline(llm, retriever, settings=SeekSettings(**settings))  # type: ignore[arg-type]
    return asyncio.run(pipeline.answer(QuestionInput(id="q1", question=question)))


def test_the_schemathesis_case_fits_a_2048_window_without_a_refusal() -> None:
    llm = TokenWindowLLMDouble(_rewoo_llm(), window=2048)
    retriever = LongDocsRetriever()
    result = _ask(llm, retriever, "0000", **SCHEMATHESIS_CASE)

    assert result.ok and result.answer == "zero"
    assert llm.refused == 0 and max(llm.tokens) + 256 <= 2048
    # Sized before the first call: the smallest budgets, then fewer documents per search.
    assert result.evidence_scale == 0.125
    assert "sized up front to the model's context window of 2048 tokens" in result.notes[0]
    assert "instead of top_k 48" in result.notes[0]
    assert len(result.steps) == 5 and len(retriever.queries) == 5
    shown = len(result.steps[0].retrieved_ids)
    assert 1 <= shown < 48 and all(len(s.retrieved_ids) == shown for s in result.steps)
    assert f"{shown} documents per search" in result.notes[0]
    # Without the budget, this run refused its Solver at every size (the 503 found).
    unsized = TokenWindowLLMDouble(_rewoo_llm(), window=2048, tells=False)
    with pytest.raises(ContextTooLongError, match="still too long"):
        _ask(unsized, LongDocsRetriever(), "0000", **SCHEMATHESIS_CASE)


@pytest.mark.parametrize(
    ("window", "question", "field"),
    [(256, "0000", "llm"), (2048, "where was it " * 700, "question")],
)
def test_a_request_that_cannot_fit_is_refused_before_any_search_or_call(
    window: int, question: str, field: str
) -> None:
    llm = TokenWindowLLMDouble(_rewoo_llm(), window=window)
    retriever = LongDocsRetriever()
    with pytest.raises(PromptBudgetError) as caught:
        _ask(llm, retriever, question, **SCHEMATHESIS_CASE)

    assert caught.value.field == field and str(caught.value).startswith(f"{field}: ")
    assert f"context window of {window:,} tokens" in str(caught.value)
    assert llm.inner.calls == [] and llm.tokens == [] and retriever.queries == []
    # Every front end reports it as bad input: HTTP 422, CLI exit 2, naming the field.
    kind = classify(caught.value)
    assert isinstance(kind, InvalidInput) and str(kind).startswith(f"{field}: ")


def test_a_question_whose_largest_prompt_fits_is_asked_unchanged() -> None:
    """A window large enough for the worst case changes nothing: the same prompts, byte for
    byte, as a client that cannot tell its window."""
    known = TokenWindowLLMDouble(_rewoo_llm(), window=20_000)
    result = _ask(known, LongDocsRetriever(), "0000", method="rewoo")
    unknown = TokenWindowLLMDouble(_rewoo_llm(), window=20_000, tells=False)
    again = _ask(unknown, LongDocsRetriever(), "0000", method="rewoo")

    assert result.evidence_scale == 1.0 and not any("sized" in n for n in result.notes)
    assert known.inner.calls == unknown.inner.calls
    assert result.answer_context == again.answer_context


def test_default_seek_on_the_embedded_models_window_is_not_resized() -> None:
    """The default top-5 SEEK prompts fit 2,048 tokens: recorded runs do not move."""
    for style in ("chat", "fewshot"):
        for top_k in (5, 50):
            budget = fit_budget(SeekSettings(top_k=top_k), style, "Who?", 2048)  # type: ignore[arg-type]
            assert budget == (1.0, top_k)


def test_the_window_is_found_behind_the_cache_and_the_ledger(tmp_path: object) -> None:
    llm = TokenWindowLLMDouble(_rewoo_llm(), window=4096)
    cached = CachingLLMClient(llm, ResponseCache(str(tmp_path)))  # type: ignore[arg-type]
    wrapped = MeteredLLMClient(cached, LLMUsageLedger())
    assert asyncio.run(context_window_of(wrapped)) == 4096
    assert asyncio.run(context_window_of(_rewoo_llm())) is None


def test_a_models_listing_states_its_window() -> None:
    assert listed_context_window({"id": "m", "max_model_len": 32768}) == 32768  # vLLM
    assert listed_context_window({"id": "m", "meta": {"n_ctx": 4096}}) == 4096
    assert listed_context_window({"id": "m", "owned_by": "me"}) is None  # llama-cpp-python
    assert listed_context_window({"id": "m", "max_model_len": True}) is None
