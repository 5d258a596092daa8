"""Playing the batch job of offline batch rounds (``--llm batch:DIR#MODEL``) in unit tests.

A "server" here is a function of a request's ``url`` and ``body`` that returns the completion
text, ``(status, body)`` for a failed line, ``ERROR`` for a line with a batch-level error, or
``None`` for no line at all. ``answer_round`` reads the waiting round's request file and writes
its output file from the bodies; ``BodyServer`` is the same function behind a real local HTTP
server, for the live ``openai:`` path of the same answers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stub_openai_server import StubOpenAIServer, StubReply, completion_body  # noqa: E402

from sira_seek.llm.batch_rounds import (  # noqa: E402
    WaitingForBatch,
    output_path,
    requests_path,
    waiting_round,
)

ERROR = object()
"""A server's answer meaning "the batch job failed this request" (an ``error`` object)."""

Answer = str | tuple[int, dict[str, Any]] | object | None
Server = Callable[[str, dict[str, Any]], Answer]
T = TypeVar("T")


@pytest.fixture(autouse=True)
def own_response_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The live runs read and write a response cache: this test's own, never the user's.
    (Autouse in every module that imports it.)"""
    monkeypatch.setenv("SIRA_SEEK_LLM_CACHE_DIR", str(tmp_path / "llm-cache"))


def output_line(custom_id: str, url: str, body: dict[str, Any], answer: Answer) -> str | None:
    """One OpenAI Batch output line (as vLLM's run_batch writes them), or None for no line."""
    if answer is None:
        return None
    if answer is ERROR:
        line: dict[str, Any] = {
            "id": f"out-{custom_id[-8:]}",
            "custom_id": custom_id,
            "response": None,
            "error": {"code": "batch_expired", "message": "scripted batch error"},
        }
    elif isinstance(answer, tuple):
        status, error_body = answer
        line = {
            "id": f"out-{custom_id[-8:]}",
            "custom_id": custom_id,
            "response": {"status_code": status, "request_id": "r", "body": error_body},
            "error": None,
        }
    else:
        reply = completion_body(str(answer), chat=url.endswith("/chat/completions"))
        line = {
            "id": f"out-{custom_id[-8:]}",
            "custom_id": custom_id,
            "response": {
                "status_code": 200,
                "request_id": "r",
                "body": {**reply, "model": body["model"]},
            },
            "error": None,
        }
    return json.dumps(line)


def request_lines(directory: Path, number: int) -> list[dict[str, Any]]:
    text = requests_path(directory, number).read_text("utf-8")
    return [json.loads(raw) for raw in text.splitlines() if raw.strip()]


def answer_round(directory: Path, server: Server) -> Path:
    """Answer the waiting round of ``directory`` with ``server``; the output file written."""
    number = waiting_round(directory)
    assert number is not None, f"no round waits in {directory}"
    lines = []
    for request in request_lines(directory, number):
        assert request["method"] == "POST" and request["url"].startswith("/v1/")
        line = output_line(
            request["custom_id"],
            request["url"],
            request["body"],
            server(request["url"], request["body"]),
        )
        if line is not None:
            lines.append(line)
    out = output_path(directory, number)
    out.write_text("".join(line + "\n" for line in reversed(lines)), encoding="utf-8")  # any order
    return out


def run_rounds(
    call: Callable[[], T], directory: Path, server: Server, *, max_rounds: int = 30
) -> tuple[T, list[WaitingForBatch]]:
    """``call()`` until it returns, answering each round it waits for; (result, the waits)."""
    waits: list[WaitingForBatch] = []
    for _ in range(max_rounds):
        try:
            return call(), waits
        except WaitingForBatch as waiting:
            waits.append(waiting)
            assert waiting.requests == requests_path(directory, waiting.round)
            answer_round(directory, server)
    raise AssertionError(f"still waiting after {max_rounds} rounds")


class BodyServer(StubOpenAIServer):
    """A live OpenAI-compatible server on 127.0.0.1 answering each POST with ``server``."""

    def __init__(self, server: Server, *, model: str = "m") -> None:
        super().__init__(models=[{"id": model, "owned_by": "vllm"}])
        self.server = server

    def next_reply(self, path: str, body: dict[str, Any]) -> StubReply:
        super().next_reply(path, body)  # recorded and counted in flight
        answer = self.server("/v1" + path.removeprefix("/v1"), body)
        if isinstance(answer, tuple):
            return StubReply(status=answer[0], body=answer[1])
        assert isinstance(answer, str), "a live server answers every request"
        return StubReply(text=answer)
