"""The HTTP backend against a scripted local server: retries, timeouts, errors, concurrency."""

import asyncio
import json
import threading

import pytest
from stub_openai_server import StubOpenAIServer, StubReply

from sira_seek.llm.errors import (
    ContextTooLongError,
    LLMTimeoutError,
    ModelNotFoundError,
    ServerError,
    ServerUnreachableError,
)
from sira_seek.llm.llamacpp_server import free_local_port
from sira_seek.llm.openai_http import HTTPClientSettings, OpenAICompatibleClient
from sira_seek.llm.request import ChatMessage, LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse
from sira_seek.llm.retry import RetryPolicy

FAST_RETRY = RetryPolicy(max_retries=3, backoff_base_s=0.01, backoff_max_s=0.05, jitter=False)
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def _client(
    *urls: str, model: str | None = "stub-model", **settings: object
) -> OpenAICompatibleClient:
    opts: dict[str, object] = {"retry": FAST_RETRY, **settings}
    return OpenAICompatibleClient(
        endpoints=list(urls),
        model=model,
        settings=HTTPClientSettings(**opts),  # type: ignore[arg-type]
    )


async def _generate(client: OpenAICompatibleClient, request: LLMRequest) -> LLMResponse:
    try:
        return await client.generate(request)
    finally:
        await client.aclose()


def test_500_twice_then_200_recovers() -> None:
    script = [StubReply(status=500, body={"error": {"message": "overloaded"}})] * 2
    with StubOpenAIServer(script, default=StubReply(text="recovered")) as stub:
        response = asyncio.run(_generate(_client(stub.base_url), LLMRequest(prompt="hi")))
    assert response.text == "recovered"
    assert [path for path, _ in stub.requests] == ["/v1/completions"] * 3
    assert response.usage.prompt_tokens == 3 and response.backend == "openai"


def test_429_retries_then_gives_up_with_a_server_error() -> None:
    with (
        StubOpenAIServer(default=StubReply(status=429, body={"error": "slow down"})) as stub,
        pytest.raises(ServerError, match="HTTP 429") as info,
    ):
        asyncio.run(_generate(_client(stub.base_url), LLMRequest(prompt="hi")))
    assert info.value.attempts == FAST_RETRY.max_retries + 1
    assert len(stub.requests) == FAST_RETRY.max_retries + 1


def test_a_server_that_never_answers_is_cut_by_the_read_timeout_on_every_attempt() -> None:
    # The server holds every reply until the test lets go: an answer can only be a timeout
    # of the client's own, once per attempt, never the server's late reply.
    never = threading.Event()
    try:
        with StubOpenAIServer(default=StubReply(hold=never)) as stub:
            client = _client(
                stub.base_url,
                read_timeout_s=0.3,
                retry=RetryPolicy(max_retries=1, backoff_base_s=0.01),
            )
            with pytest.raises(LLMTimeoutError, match="did not answer") as info:
                asyncio.run(_generate(client, LLMRequest(prompt="hi")))
            assert not never.is_set()  # nothing was answered: the client gave up by itself
            assert info.value.attempts == 2
            assert [path for path, _ in stub.requests] == ["/v1/completions"] * 2
    finally:
        never.set()


def test_total_timeout_bounds_each_attempt() -> None:
    never = threading.Event()
    try:
        with StubOpenAIServer(default=StubReply(hold=never)) as stub:
            # Long enough for the request to reach the stub on a loaded machine (the unit
            # tests run niced beside the rest of the suite: at 0.3 s one run timed out before
            # sending); the reply never comes, so only the client's budget can end the call.
            client = _client(stub.base_url, total_timeout_s=2.0, retry=RetryPolicy(max_retries=0))
            with pytest.raises(LLMTimeoutError):
                asyncio.run(_generate(client, LLMRequest(prompt="hi")))
            assert not never.is_set() and len(stub.requests) == 1
    finally:
        never.set()


def test_unreachable_server_is_named() -> None:
    url = f"http://127.0.0.1:{free_local_port()}/v1"
    with pytest.raises(ServerUnreachableError, match="cannot reach the LLM server"):
        asyncio.run(_generate(_client(url), LLMRequest(prompt="hi")))


def test_wrong_model_name_from_the_model_list() -> None:
    with (
        StubOpenAIServer() as stub,
        pytest.raises(ModelNotFoundError, match="it serves: stub-model"),
    ):
        asyncio.run(_generate(_client(stub.base_url, model="nope"), LLMRequest(prompt="hi")))
    assert stub.requests == []


def test_wrong_model_name_from_a_404() -> None:
    body = {"error": {"message": "The model `nope` does not exist.", "code": 404}}
    with (
        StubOpenAIServer([StubReply(status=404, body=body)], models=[]) as stub,
        pytest.raises(ModelNotFoundError, match="does not exist"),
    ):
        asyncio.run(_generate(_client(stub.base_url, model="nope"), LLMRequest(prompt="hi")))


def test_context_too_long() -> None:
    body = {"error": {"message": "This model's maximum context length is 2048 tokens."}}
    with (
        StubOpenAIServer([StubReply(status=400, body=body)]) as stub,
        pytest.raises(ContextTooLongError, match="maximum context length"),
    ):
        asyncio.run(_generate(_client(stub.base_url), LLMRequest(prompt="long")))
    assert len(stub.requests) == 1  # a 400 is not retried


def test_model_discovered_when_spec_omits_it() -> None:
    with StubOpenAIServer() as stub:
        response = asyncio.run(
            _generate(_client(stub.base_url, model=None), LLMRequest(prompt="x"))
        )
    assert response.model == "stub-model"
    assert stub.requests[0][1]["model"] == "stub-model"


def test_malformed_output_retries_then_becomes_an_error_record_with_raw_text() -> None:
    script = [StubReply(text='{"a": 1}')] + [StubReply(text='{"a": ')] * 3
    with StubOpenAIServer(script) as stub:
        client = _client(stub.base_url, malformed_retries=2)
        good = LLMRequest(prompt="good", json_schema=SCHEMA, seed=7)
        bad = LLMRequest(prompt="bad", json_schema=SCHEMA, seed=7)

        async def run() -> list[LLMResponse | LLMError]:
            try:
                return await client.generate_many([good, bad], concurrency=1)
            finally:
                await client.aclose()

        ok, failed = asyncio.run(run())
    assert isinstance(ok, LLMResponse) and ok.parsed == {"a": 1}
    assert isinstance(failed, LLMError)
    assert failed.kind == "malformed_output" and failed.raw_text == '{"a": '
    assert failed.request_index == 1
    # the retries changed the seed instead of replaying the same sample
    assert [body["seed"] for _, body in stub.requests[1:]] == [7, 8, 9]


def test_request_bodies_completion_and_chat() -> None:
    chat = LLMRequest(
        messages=(ChatMessage(role="user", content="hi"),),
        json_schema=SCHEMA,
        chat_template_kwargs={"enable_thinking": False},
        stop=("\n",),
        top_p=0.9,
        top_k=20,
        seed=1,
        max_tokens=5,
    )
    with StubOpenAIServer(default=StubReply(text='{"a": 2}')) as stub:
        response = asyncio.run(_generate(_client(stub.base_url), chat))
        asyncio.run(
            _generate(_client(stub.base_url, structured_output="vllm"), LLMRequest(prompt="p"))
        )
    assert response.parsed == {"a": 2}
    path, body = stub.requests[0]
    assert path == "/v1/chat/completions"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert (body["stop"], body["top_p"], body["top_k"], body["seed"]) == (["\n"], 0.9, 20, 1)
    assert stub.requests[1][0] == "/v1/completions" and stub.requests[1][1]["prompt"] == "p"


def test_llama_cpp_python_server_gets_its_own_dialect_for_chat() -> None:
    models = [{"id": "gemma", "owned_by": "me"}]
    chat = LLMRequest(messages=(ChatMessage(role="user", content="hi"),), json_schema=SCHEMA)
    with StubOpenAIServer(default=StubReply(text='{"a": 3}'), models=models) as stub:
        asyncio.run(_generate(_client(stub.base_url, model="gemma"), chat))
    assert stub.requests[0][1]["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_endpoints_round_robin_and_a_dead_one_is_retried_elsewhere() -> None:
    with StubOpenAIServer() as a, StubOpenAIServer() as b:
        client = _client(a.base_url, b.base_url)

        async def run() -> list[LLMResponse | LLMError]:
            try:
                return await client.generate_many([LLMRequest(prompt=str(i)) for i in range(10)])
            finally:
                await client.aclose()

        results = asyncio.run(run())
    assert all(isinstance(r, LLMResponse) for r in results)
    assert len(a.requests) == 5 and len(b.requests) == 5

    dead = f"http://127.0.0.1:{free_local_port()}/v1"
    with StubOpenAIServer() as alive:
        # the dead endpoint comes first: discovery and generation both move on to the live one
        client = _client(dead, alive.base_url)

        async def run_two() -> list[LLMResponse | LLMError]:
            try:
                return await client.generate_many([LLMRequest(prompt=str(i)) for i in range(4)])
            finally:
                await client.aclose()

        assert all(isinstance(r, LLMResponse) for r in asyncio.run(run_two()))


def test_in_flight_requests_are_bounded() -> None:
    # Each reply waits until four requests are at the server together: a client that kept
    # fewer in flight would never get an answer, and one that sent more would show it.
    with StubOpenAIServer(default=StubReply(gate=threading.Barrier(4))) as stub:
        client = _client(stub.base_url, max_in_flight=4)

        async def run() -> list[LLMResponse | LLMError]:
            try:
                return await client.generate_many([LLMRequest(prompt=str(i)) for i in range(16)])
            finally:
                await client.aclose()

        results = asyncio.run(run())
    assert all(isinstance(r, LLMResponse) for r in results), results
    assert len(stub.requests) == 16
    assert stub.max_in_flight == 4  # they really overlapped, and never more than four


def test_one_failure_never_aborts_a_batch() -> None:
    script = [StubReply(status=400, body={"error": "bad thing"})]
    with StubOpenAIServer(script) as stub:
        client = _client(stub.base_url)

        async def run() -> list[LLMResponse | LLMError]:
            try:
                return await client.generate_many([LLMRequest(prompt=str(i)) for i in range(5)], 1)
            finally:
                await client.aclose()

        results = asyncio.run(run())
    kinds = [r.kind if isinstance(r, LLMError) else "ok" for r in results]
    assert kinds == ["bad_request", "ok", "ok", "ok", "ok"]
    assert json.dumps([r.model_dump() for r in results])  # records serialise for reports


def test_tokens_spent_on_malformed_retries_are_counted() -> None:
    with StubOpenAIServer([StubReply(text="not json")], default=StubReply(text='{"a": 5}')) as stub:
        request = LLMRequest(prompt="p", json_schema=SCHEMA)
        response = asyncio.run(_generate(_client(stub.base_url), request))
    assert response.parsed == {"a": 5}
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (6, 4)


def test_sync_wrapper_over_the_http_backend_reuses_its_connections() -> None:
    from sira_seek.llm.blocking import BlockingLLMClient

    with StubOpenAIServer(default=StubReply(text="yes")) as stub:
        with BlockingLLMClient(_client(stub.base_url)) as client:
            assert client.generate(LLMRequest(prompt="a")).text == "yes"
            results = client.generate_many([LLMRequest(prompt=str(i)) for i in range(5)])
            assert all(isinstance(r, LLMResponse) for r in results)
        assert len(stub.requests) == 6
