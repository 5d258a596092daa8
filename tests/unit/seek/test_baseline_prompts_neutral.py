"""A baseline is not told about the method it is compared with (issue 42, item 1).

Every request each baseline sends (vanilla LLM, vanilla RAG, Iter-RetGen, ReWOO in both forms),
in both prompt styles, is read through `ScriptedLLMDouble` (a double above the `LLMClient`
protocol) and searched for SEEK's wording: its system message and the words of its method. SEEK's
own chat requests are read too, to show the check would see that wording where it is.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from seek_fakes import RecordingRetriever

from sira_seek.llm.request import LLMRequest
from sira_seek.seek.baselines import BASELINE_METHODS
from sira_seek.seek.baselines.vanilla_prompts import SYSTEM_CLOSED_BOOK, SYSTEM_DOCUMENTS
from sira_seek.seek.pipeline import SeekPipeline
from sira_seek.seek.prompts_chat import SYSTEM as SEEK_SYSTEM
from sira_seek.seek.results import QuestionInput
from sira_seek.seek.settings import SeekSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from scripted_llm import ScriptedLLMDouble  # noqa: E402

BASELINES = ("vanilla-llm", "vanilla-rag", *BASELINE_METHODS)
SEEK_WORDS = (
    SEEK_SYSTEM,
    "planning a short page",
    "page of evidence",
    "sketch",
    "steering",
    "gist",
    "<TO BE FILLED>",
    "Notes:",
)
"""SEEK's system message and the words only its method uses (a baseline's few-shot prompt
showing SEEK's ``Notes:`` lines would be told its format too)."""

REPLY = "Plan: find the director.\n#E1 = Search[Leland Story director]\n<answer>Ireland</answer>"


def _requests(method: str, style: str) -> list[LLMRequest]:
    llm = ScriptedLLMDouble(default=REPLY)
    pipeline = SeekPipeline(
        llm,
        RecordingRetriever(),
        settings=SeekSettings(method=method, max_steps=2),  # type: ignore[arg-type]
        prompt_style=style,  # type: ignore[arg-type]
    )
    question = QuestionInput(id="q1", question="Where was the director of Leland Story born?")
    result = asyncio.run(pipeline.answer(question))
    assert result.ok and llm.calls
    return llm.calls


def _system(request: LLMRequest) -> list[str]:
    return [m.content for m in request.messages or () if m.role == "system"]


@pytest.mark.parametrize("method", BASELINES)
def test_no_baseline_chat_request_carries_seek_wording(method: str) -> None:
    for request in _requests(method, "chat"):
        systems = _system(request)
        assert len(systems) == 1, systems
        found = [w for w in SEEK_WORDS if w.lower() in systems[0].lower()]
        assert not found, (method, systems[0])
        user = " ".join(m.content for m in request.messages or () if m.role == "user")
        assert not [w for w in SEEK_WORDS if w.lower() in user.lower()], (method, user)


@pytest.mark.parametrize("method", BASELINES)
def test_no_baseline_fewshot_request_carries_seek_wording(method: str) -> None:
    for request in _requests(method, "fewshot"):
        # A completion has no system message: the whole prompt is what the model is told.
        assert request.messages is None and request.prompt is not None
        found = [w for w in SEEK_WORDS if w.lower() in request.prompt.lower()]
        assert not found, (method, found, request.prompt)


def test_each_one_shot_baseline_has_its_own_system_message() -> None:
    (closed,) = _requests("vanilla-llm", "chat")
    assert _system(closed) == [SYSTEM_CLOSED_BOOK]
    rag = _requests("vanilla-rag", "chat")
    assert [_system(r) for r in rag] == [[SYSTEM_DOCUMENTS]]
    assert "based on your own knowledge" in SYSTEM_CLOSED_BOOK
    assert "based on the given documents" in SYSTEM_DOCUMENTS


def test_seek_requests_do_carry_seek_wording() -> None:
    """The control: the check above finds SEEK's wording in SEEK's own requests."""
    requests = _requests("seek", "chat")
    assert requests and all(_system(r) == [SEEK_SYSTEM] for r in requests)
    fewshot = _requests("seek", "fewshot")
    assert any("Notes:" in (r.prompt or "") for r in fewshot)
