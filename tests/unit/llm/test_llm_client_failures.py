"""``generate_many_bounded``: a failed LLM call is a record that keeps the batch going; a bug
is not an LLM failure and propagates (it would otherwise pass for an outage that SIRA answers
with plain BM25)."""

from __future__ import annotations

import asyncio

import pytest

from sira_seek.llm.client import generate_many_bounded
from sira_seek.llm.errors import MalformedOutputError, ServerUnreachableError
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse

REQUESTS = [LLMRequest(prompt=f"p{i}") for i in range(3)]


def test_llm_call_errors_become_records_in_order() -> None:
    async def generate(request: LLMRequest) -> LLMResponse:
        if request.prompt == "p1":
            raise ServerUnreachableError("connection refused")
        if request.prompt == "p2":
            raise MalformedOutputError("not JSON", raw_text="{")
        return LLMResponse(text="ok", backend="b", model="m")

    out = asyncio.run(generate_many_bounded(generate, REQUESTS, 2, backend="b", model="m"))
    assert isinstance(out[0], LLMResponse)
    assert isinstance(out[1], LLMError) and out[1].kind == "unreachable"
    assert out[1].request_index == 1
    assert isinstance(out[2], LLMError) and out[2].kind == "malformed_output"
    assert out[2].raw_text == "{"


@pytest.mark.parametrize(
    "bug", [TypeError("bad operand"), KeyError("choices"), AttributeError("no .text")]
)
def test_a_bug_propagates_instead_of_passing_for_an_llm_failure(bug: BaseException) -> None:
    async def generate(request: LLMRequest) -> LLMResponse:
        if request.prompt == "p1":
            raise bug
        return LLMResponse(text="ok", backend="b", model="m")

    with pytest.raises(type(bug)):
        asyncio.run(generate_many_bounded(generate, REQUESTS, 2))
