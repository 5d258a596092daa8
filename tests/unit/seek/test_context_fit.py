"""A question whose prompt is too long for the model is asked again with shorter evidence.

`WindowedLLMDouble` is a test double above the `LLMClient` protocol: it refuses a prompt longer
than its window (in characters) with the `ContextTooLongError` a real client raises for a
model's context window, and otherwise hands the request to a scripted double.

What could break: the question failing instead (schemathesis over ``/ask`` found ReWOO's
Solver refused by the embedded 2,048-token model: 3,288 tokens), a prompt that fits being
changed (recorded runs would move), the retry showing evidence of two sizes, the discarded
attempt's cost disappearing from the record, a retry loop that never ends, prompts given by
the caller silently replaced.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest
from seek_fakes import LongDocsRetriever
from seek_llm_double import ScriptedSeekLLMDouble, request_text

from sira_seek.llm.errors import ContextTooLongError
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse
from sira_seek.seek.context_fit import FIT_ROUNDS, PromptOverflow, scaled_settings
from sira_seek.seek.pipeline import SeekPipeline
from sira_seek.seek.prompts import make_prompts
from sira_seek.seek.results import QuestionInput, SeekResult
from sira_seek.seek.settings import SeekSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from scripted_llm import ScriptedLLMDouble  # noqa: E402

QUESTION = "In which country was the director of the film Leland Story born?"
PLAN = "".join(f"Plan: step {i}\n#E{i} = Search[topic {i} of Leland Story]\n" for i in range(1, 6))
SOLVE = "The evidence says Cork. <answer>Ireland</answer>"


class WindowedLLMDouble:
    """Refuses prompts longer than ``window`` characters, as a model's context window does."""

    def __init__(self, inner: ScriptedLLMDouble, window: int) -> None:
        self.inner = inner
        self.window = window
        self.backend = inner.backend
        self.sizes: list[int] = []  # every prompt's length, refused or not
        self.refused = 0

    async def model_name(self) -> str:
        return await self.inner.model_name()

    async def generate(self, request: LLMRequest) -> LLMResponse:
        size = len(request_text(request))
        self.sizes.append(size)
        if size > self.window:
            self.refused += 1
            raise ContextTooLongError(f"{size} characters exceed the window of {self.window}")
        return await self.inner.generate(request)

    async def aclose(self) -> None:
        return None


def _rewoo_llm() -> ScriptedLLMDouble:
    def route(request: LLMRequest) -> str:
        text = request_text(request)
        if "make a plan that solves it" in text:
            return PLAN
        assert "Solve the question below" in text, text[-200:]
        return SOLVE

    return ScriptedLLMDouble(default=route)


def _ask(llm: WindowedLLMDouble, retriever: LongDocsRetriever, **settings: object) -> SeekResult:
    pipeline = SeekPipeline(llm, retriever, settings=SeekSettings(**settings))  # type: ignore[arg-type]
    return asyncio.run(pipeline.answer(QuestionInput(id="q1", question=QUESTION)))


def _doc_lines(text: str) -> list[str]:
    """Each numbered document line (the first of a step follows its ``Evidence:`` label)."""
    return re.findall(r"\[\d+\] [^\n]*", text)


def test_a_rewoo_solver_too_long_for_the_model_is_answered_with_shorter_evidence() -> None:
    retriever = LongDocsRetriever()
    full = _ask(WindowedLLMDouble(_rewoo_llm(), 10**9), LongDocsRetriever(), method="rewoo")
    full_solve = full.answer_context or ""
    assert len(full_solve) > 14_000  # five steps' documents at 3,000 characters each

    llm = WindowedLLMDouble(_rewoo_llm(), window=6_000)
    result = _ask(llm, retriever, method="rewoo")

    assert result.ok and result.answer == "Ireland"
    # 1/2 is still ~7,500 characters of documents; 1/4 fits
    assert result.evidence_scale == 0.25 and llm.refused == 2
    assert result.trace().evidence_scale == 0.25  # what eval qa --diagnostics counts
    assert "the answer prompt was too long" in result.notes[0] and "15842 char" in result.notes[0]
    assert "evidence_chars 750" in result.notes[0] and "doc_chars 150" in result.notes[0]
    # One size throughout the attempt that answered: each document at most 150 characters.
    context = result.answer_context or ""
    assert len(context) < 6_000 and len(_doc_lines(context)) == 25
    assert all(len(doc.split("] ", 1)[1]) <= 150 + 4 for doc in _doc_lines(context))
    # The discarded attempts still cost: three plans and three solves, 5 searches each.
    assert result.usage.by_stage["plan"].calls == 3
    assert result.usage.by_stage["answer"].calls == 1  # refused calls are not answered calls
    assert len(retriever.queries) == 15
    assert len(result.steps) == 5  # the record is the attempt that answered


def test_a_question_whose_prompts_fit_is_asked_once_and_unchanged() -> None:
    generous = WindowedLLMDouble(_rewoo_llm(), window=10**9)
    result = _ask(generous, LongDocsRetriever(), method="rewoo")
    unbounded = WindowedLLMDouble(_rewoo_llm(), window=max(generous.sizes))
    again = _ask(unbounded, LongDocsRetriever(), method="rewoo")

    assert result.evidence_scale == 1.0 and again.evidence_scale == 1.0
    assert not any("too long" in note for note in result.notes + again.notes)
    assert unbounded.refused == 0 and unbounded.sizes == generous.sizes
    assert again.answer_context == result.answer_context


def test_still_too_long_at_the_smallest_evidence_is_the_models_error() -> None:
    llm = WindowedLLMDouble(_rewoo_llm(), window=200)  # not even the plan prompt fits
    with pytest.raises(ContextTooLongError) as caught:
        _ask(llm, LongDocsRetriever(), method="rewoo")
    assert caught.value.kind == "context_too_long"
    assert "still too long" in str(caught.value) and "longer context" in str(caught.value)
    assert llm.refused == 1 + FIT_ROUNDS  # the first attempt and each shorter one, no more


def test_a_seek_parallel_fill_too_long_is_asked_again_with_every_slot_shorter() -> None:
    sketch = "<OUTLINE>\n# Leland\n" + "".join(f"## Part {i}\n" for i in range(1, 7)) + "</OUTLINE>"

    def fill(text: str) -> str:
        sections = re.findall(r"### Section (\d+): (.+)", text)
        return "\n".join(f"## {n}. {h}\n" + "x " * 400 for n, h in sections)

    stages = {
        "sketch": sketch,
        "subquery": "<query>leland part</query>",
        "fill": fill,
        "answer": "<answer>Ireland</answer>",
    }
    llm = WindowedLLMDouble(ScriptedSeekLLMDouble(stages), window=12_000)
    result = _ask(llm, LongDocsRetriever(), method="seek", variant="parallel")

    assert result.ok and result.answer == "Ireland"
    assert result.evidence_scale == 0.5 and llm.refused == 1
    assert "the evidence prompt was too long" in result.notes[0]
    assert result.sketch is not None
    # Slots cut to the halved slot_chars (350), not the default 700.
    assert all(len(g.slot or "") <= 350 for g in result.sketch.gists)
    assert max(len(g.slot or "") for g in result.sketch.gists) > 300
    assert result.usage.by_stage["sketch"].calls == 2


def test_prompts_given_by_the_caller_are_not_replaced() -> None:
    settings = SeekSettings(method="rewoo")
    llm = WindowedLLMDouble(_rewoo_llm(), window=6_000)
    pipeline = SeekPipeline(
        llm, LongDocsRetriever(), settings=settings, prompts=make_prompts("chat", settings)
    )
    with pytest.raises(PromptOverflow):
        asyncio.run(pipeline.answer(QuestionInput(id="q1", question=QUESTION)))
    assert llm.refused == 1


def test_scaled_settings_halve_the_three_budgets_and_keep_the_floor() -> None:
    s = scaled_settings(SeekSettings(), 0.5)
    assert (s.doc_chars, s.evidence_chars, s.slot_chars) == (300, 1500, 350)
    tiny = scaled_settings(SeekSettings(doc_chars=60), 0.125)
    assert tiny.doc_chars == 50 and tiny.top_k == 5 and tiny.method == "seek"
