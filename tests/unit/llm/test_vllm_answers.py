"""The HTTP client on answers vLLM 0.32.0 really gives (bodies recorded from the CPU build here):
its ``/v1/models`` listing names the model and picks the structured-output dialect, and its
400s for requests that do not fit ``--max-model-len`` become ``context_too_long``, not retried.
The real server is exercised in tests/integration/vllm_serving and
tests/faults/test_vllm_faults.py."""

import asyncio

import pytest
from stub_openai_server import StubOpenAIServer, StubReply

from sira_seek.llm.errors import ContextTooLongError, ModelNotFoundError
from sira_seek.llm.openai_http import HTTPClientSettings, OpenAICompatibleClient
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse
from sira_seek.llm.retry import RetryPolicy

VLLM_MODELS = [
    {
        "id": "gemma3-270m",
        "object": "model",
        "owned_by": "vllm",
        "root": "/root/.cache/sira-seek/vllm/models/gemma3-270m-f32",
        "parent": None,
        "max_model_len": 2048,
    }
]
PROMPT_TOO_LONG = {
    "error": {
        "message": "This model's maximum context length is 2048 tokens. However, your prompt "
        "contains at least 2049 input tokens, which exceeds this limit even without any output "
        "tokens. Please reduce the length of the input prompt. (parameter=input_tokens, "
        "value=2049)",
        "type": "BadRequestError",
        "param": "input_tokens",
        "code": 400,
    }
}
MAX_TOKENS_TOO_LARGE = {
    "error": {
        "message": "max_tokens=5000 cannot be greater than max_model_len=2048. Please request "
        "fewer output tokens. (parameter=max_tokens, value=5000)",
        "type": "BadRequestError",
        "param": "max_tokens",
        "code": 400,
    }
}
MODEL_MISSING = {
    "error": {
        "message": "The model `nope` does not exist. Valid aliases: gemma3-270m.",
        "type": "NotFoundError",
        "param": "model",
        "code": 404,
    }
}
SCHEMA = {"type": "object", "properties": {"keywords": {"type": "array"}}, "required": ["keywords"]}


def _client(url: str, model: str | None = None) -> OpenAICompatibleClient:
    settings = HTTPClientSettings(retry=RetryPolicy(max_retries=2, backoff_base_s=0.01))
    return OpenAICompatibleClient(endpoints=[url], model=model, settings=settings)


async def _generate(client: OpenAICompatibleClient, request: LLMRequest) -> LLMResponse:
    try:
        return await client.generate(request)
    finally:
        await client.aclose()


def test_model_name_and_dialect_come_from_vllms_model_list() -> None:
    request = LLMRequest(prompt="Keywords: ", json_schema=SCHEMA, max_tokens=16)
    with StubOpenAIServer(
        default=StubReply(text='{"keywords": ["a"]}'), models=VLLM_MODELS
    ) as stub:
        response = asyncio.run(_generate(_client(stub.base_url), request))
    assert response.model == "gemma3-270m" and response.parsed == {"keywords": ["a"]}
    ((path, body),) = stub.requests
    assert path == "/v1/completions" and body["model"] == "gemma3-270m"
    # vLLM honours response_format json_schema; its old guided_json is silently ignored.
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert "guided_json" not in body and "structured_outputs" not in body


@pytest.mark.parametrize("answer", [PROMPT_TOO_LONG, MAX_TOKENS_TOO_LARGE], ids=["prompt", "max"])
def test_requests_that_do_not_fit_max_model_len_are_context_too_long(
    answer: dict[str, object],
) -> None:
    with (
        StubOpenAIServer([StubReply(status=400, body=answer)], models=VLLM_MODELS) as stub,
        pytest.raises(ContextTooLongError) as caught,
    ):
        asyncio.run(_generate(_client(stub.base_url), LLMRequest(prompt="long")))
    assert len(stub.requests) == 1  # a 400 is final: no retry
    assert caught.value.kind == "context_too_long"
    message = str(caught.value)
    assert "too long for the model's context window" in message and "2048" in message


def test_a_model_vllm_does_not_serve_is_named_with_what_it_serves() -> None:
    with (
        StubOpenAIServer([StubReply(status=404, body=MODEL_MISSING)], models=VLLM_MODELS) as stub,
        pytest.raises(ModelNotFoundError, match="it serves: gemma3-270m"),
    ):
        asyncio.run(_generate(_client(stub.base_url, model="nope"), LLMRequest(prompt="hi")))
    assert stub.requests == []  # refused from /v1/models, before any completion was sent
