"""JSON-schema-constrained answers from a real vLLM server: every one parses on the first try.

The requests are the ones sira-seek really sends (document enrichment for sira-sync, query
expansion for SIRA search), chat and completion forms, sampled at temperature 0.8 with distinct
seeds so the constraint, not luck, keeps them well formed, 8 in flight as a sync would. Malformed
retries are off: one unparseable answer fails the test. The bodies on the wire are recorded to
check that the client asked vLLM through ``response_format`` ``json_schema`` (vLLM silently
ignores the old ``guided_json`` field, so a client sending that would get free text).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest
from vllm_kit import VllmEndpoint

from sira_seek.llm.openai_http import HTTPClientSettings, OpenAICompatibleClient
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse
from sira_seek.sira.prompts import enrichment_request as query_request
from sira_seek.sync.document_prompt import PromptStyle, document_request

pytestmark = pytest.mark.integration

QUERIES = (
    "Which magazine was started first, Arthur's Magazine or First for Women?",
    "Were Scott Derrickson and Ed Wood of the same nationality?",
    "What government position was held by the woman who portrayed Corliss Archer?",
    "Who was born first, Pablo Trapero or Aleksander Ford?",
)


class RecordingTransport(httpx.AsyncBaseTransport):
    """Passes every request to the real server and keeps the JSON bodies that went out."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.bodies: list[dict[str, object]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.bodies.append(json.loads(request.content))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


#: Room for the longest answer the schemas allow (10 phrases of up to 60 characters, a token or
#: more each), so a cut-off answer cannot pass for a constraint failure, nor hide one.
SCHEMA_BOUND_TOKENS = 1024


def sampled(request: LLMRequest, seed: int) -> LLMRequest:
    update = {"temperature": 0.8, "seed": seed, "max_tokens": SCHEMA_BOUND_TOKENS}
    return request.model_copy(update=update)


def requests_sira_sends(docs: list[str]) -> list[LLMRequest]:
    out: list[LLMRequest] = []
    for i, text in enumerate(docs):
        style: PromptStyle = "chat" if i % 2 == 0 else "completion"
        out.append(sampled(document_request(text, style=style, doc_id=f"d{i}"), seed=i))
    for i, query in enumerate(QUERIES):
        out.append(sampled(query_request(query, "multihop", chat=i % 2 == 0), seed=100 + i))
    return out


def test_every_constrained_answer_parses_first_try(
    vllm_server: VllmEndpoint, wikimh_dir: Path
) -> None:
    # 6 documents (3 chat, 3 completion) and 4 queries: 10 requests, 8 of them in flight at once.
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[100:106]
    docs = [f"{d['title']}. {d['text']}"[:1500] for d in map(json.loads, lines)]
    requests = requests_sira_sends(docs)
    transport = RecordingTransport()
    client = OpenAICompatibleClient(
        endpoints=[vllm_server.base_url],
        model=None,  # read from /v1/models
        settings=HTTPClientSettings(
            malformed_retries=0, max_in_flight=8, read_timeout_s=600, total_timeout_s=900
        ),
        transport=transport,
    )

    async def run() -> list[LLMResponse | LLMError]:
        try:
            return await client.generate_many(requests, concurrency=8)
        finally:
            await client.aclose()

    started = time.perf_counter()
    results = asyncio.run(run())
    elapsed = time.perf_counter() - started
    errors = [r for r in results if isinstance(r, LLMError)]
    print(
        f"{len(results) - len(errors)} of {len(results)} constrained answers parsed in "
        f"{elapsed:.1f} s (8 in flight); completion tokens "
        f"{[r.usage.completion_tokens for r in results if isinstance(r, LLMResponse)]}"
    )
    assert not errors, errors[:3]
    for request, result in zip(requests, results, strict=True):
        assert isinstance(result, LLMResponse) and result.model == vllm_server.model
        assert result.finish_reason == "stop"  # the grammar closed the object, no cap did
        keywords = result.parsed["keywords"]
        assert isinstance(keywords, list) and all(isinstance(k, str) for k in keywords)
        schema_max = request.json_schema["properties"]["keywords"].get("maxItems")  # type: ignore[index]
        assert schema_max is None or len(keywords) <= schema_max
    posts = [b for b in transport.bodies if "max_tokens" in b]
    assert len(posts) == len(requests)  # no retries were needed, or allowed
    for body in posts:
        response_format = body.get("response_format")
        assert isinstance(response_format, dict) and response_format["type"] == "json_schema"
        assert "guided_json" not in body
