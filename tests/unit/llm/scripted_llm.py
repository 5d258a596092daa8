"""A scripted stand-in for an LLM, for unit tests only: answers are fixed in advance."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import TypeVar

import pytest

from sira_seek.llm.client import generate_many_bounded
from sira_seek.llm.errors import LLMCallError
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse, TokenUsage

Answer = str | LLMCallError | Callable[[LLMRequest], str]


class ScriptedLLMDouble:
    """Test double implementing ``LLMClient``.

    Answers come from ``by_prompt`` (keyed by prompt text or lookup_key) or else, in order, from
    ``sequence``; an ``LLMCallError`` in the script is raised instead of answered. ``calls``
    records every request received.
    """

    backend = "scripted"

    def __init__(
        self,
        *,
        by_prompt: Mapping[str, Answer] | None = None,
        sequence: Sequence[Answer] = (),
        default: Answer | None = None,
        model: str = "scripted-model",
        delay_s: float = 0.0,
    ) -> None:
        self.by_prompt = dict(by_prompt or {})
        self.sequence = list(sequence)
        self.default = default
        self.model = model
        self.delay_s = delay_s
        self.calls: list[LLMRequest] = []

    async def model_name(self) -> str:
        return self.model

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.calls.append(request)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        key = request.lookup_key or request.prompt or ""
        if key in self.by_prompt:
            answer = self.by_prompt[key]
        elif self.sequence:
            answer = self.sequence.pop(0)
        elif self.default is not None:
            answer = self.default
        else:
            raise AssertionError(f"ScriptedLLMDouble has no answer scripted for {key!r}")
        if isinstance(answer, LLMCallError):
            raise answer
        text = answer(request) if callable(answer) else answer
        parsed = json.loads(text) if request.json_schema is not None else None
        return LLMResponse(
            text=text,
            parsed=parsed,
            usage=TokenUsage(prompt_tokens=len(key.split()), completion_tokens=len(text.split())),
            latency_s=self.delay_s,
            backend=self.backend,
            model=self.model,
        )

    async def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        return await generate_many_bounded(
            self.generate, requests, concurrency or 8, backend=self.backend, model=self.model
        )

    async def aclose(self) -> None:
        return None


Double = TypeVar("Double", bound=ScriptedLLMDouble)


def use_llm_double(
    monkeypatch: pytest.MonkeyPatch,
    double: Double,
    where: str | ModuleType = "sira_seek.llm.factory",
) -> Double:
    """Make ``double`` the LLM every spec names: ``create_llm_client`` in ``where`` (the
    factory the workflows call, or a module that imported it by name) returns it."""
    module = importlib.import_module(where) if isinstance(where, str) else where
    monkeypatch.setattr(module, "create_llm_client", lambda *_a, **_k: double)
    return double
