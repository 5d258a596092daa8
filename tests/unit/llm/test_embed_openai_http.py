"""``openai:`` embedders over the LLM's HTTP stack, against the scripted OpenAI-compatible
stub server (stub_openai_server.py): batching, order, prefixes, normalisation, errors."""

from __future__ import annotations

import math

import pytest
from stub_openai_server import StubOpenAIServer, StubReply

from sira_seek.embed import EmbedderError, EmbedderUnavailableError, make_embedder
from sira_seek.llm.settings import LLMSettings

FAST = LLMSettings(max_retries=1, connect_timeout_s=2.0, read_timeout_s=5.0)


def _served(model: str) -> list[dict[str, str]]:
    """What ``/v1/models`` lists (the client checks the spec's model against it)."""
    return [{"id": model, "owned_by": "stub"}]


def _lengths(vectors: list[list[float]]) -> list[float]:
    """The stub's vectors are [len(text), 2, 0] scaled to unit length: recover len(text)."""
    return [round(2.0 * v[0] / v[1], 6) for v in vectors]


def test_texts_go_in_batches_and_come_back_in_order_at_unit_length() -> None:
    texts = [f"text number {i}" + "x" * i for i in range(7)]
    with StubOpenAIServer(models=_served("all-MiniLM-L6-v2")) as stub:
        embedder = make_embedder(f"openai:{stub.base_url}#all-MiniLM-L6-v2", settings=FAST)
        embedder.batch_size = 3  # type: ignore[attr-defined]
        vectors = embedder.embed_documents(texts)
        embedder.close()
    assert _lengths(vectors) == [float(len(t)) for t in texts]
    assert all(math.isclose(math.hypot(*v), 1.0) for v in vectors)
    posts = [body for path, body in stub.requests if path == "/v1/embeddings"]
    assert sorted(len(b["input"]) for b in posts) == [1, 3, 3]
    assert {b["model"] for b in posts} == {"all-MiniLM-L6-v2"}
    assert embedder.dimensions == 3


def test_an_e5_model_gets_its_query_and_passage_prefixes() -> None:
    with StubOpenAIServer(models=_served("intfloat/e5-small-v2")) as stub:
        embedder = make_embedder(f"openai:{stub.base_url}#intfloat/e5-small-v2", settings=FAST)
        embedder.embed_queries(["who wrote it"])
        embedder.embed_documents(["It was written by her."])
        embedder.close()
    inputs = [body["input"] for _, body in stub.requests]
    assert inputs == [["query: who wrote it"], ["passage: It was written by her."]]


def test_the_model_is_read_from_the_server_when_the_spec_has_none() -> None:
    served = [{"id": "BAAI/bge-small-en-v1.5", "owned_by": "vllm"}]
    with StubOpenAIServer(models=served) as stub:
        embedder = make_embedder(f"openai:{stub.base_url}", settings=FAST)
        assert embedder.model == "BAAI/bge-small-en-v1.5"
        embedder.embed_queries(["q"])
        embedder.close()
    body = stub.requests[-1][1]
    assert body["model"] == "BAAI/bge-small-en-v1.5"
    assert body["input"][0].startswith("Represent this sentence")


def test_the_llms_api_key_setting_is_the_embedders(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIRA_SEEK_LLM_API_KEY (LLMSettings.api_key) goes to the shared HTTP client, which sends
    it as the bearer token (test_llm_openai_http covers the header)."""
    monkeypatch.setenv("SIRA_SEEK_LLM_API_KEY", "sk-embed-key-123")
    embedder = make_embedder("openai:http://127.0.0.1:9/v1#m")
    client = embedder._client  # type: ignore[attr-defined]
    assert client.settings.api_key.get_secret_value() == "sk-embed-key-123"
    embedder.close()


def test_empty_input_asks_nothing() -> None:
    with StubOpenAIServer(models=_served("m")) as stub:
        embedder = make_embedder(f"openai:{stub.base_url}#m", settings=FAST)
        assert embedder.embed_documents([]) == [] and embedder.embed_queries([]) == []
        embedder.close()
    assert stub.requests == []


def test_a_dead_server_is_unavailable_naming_the_spec_masked() -> None:
    spec = "openai:http://user:planted-pass-77@127.0.0.1:9/v1?api_key=sk-planted-99#m"
    embedder = make_embedder(spec, settings=FAST)
    with pytest.raises(EmbedderUnavailableError) as caught:
        embedder.embed_documents(["a passage"])
    embedder.close()
    message = str(caught.value)
    assert message.startswith("embedder openai:http://")
    assert "127.0.0.1:9" in message and "cannot reach" in message
    assert "planted-pass-77" not in message and "sk-planted-99" not in message


def test_a_server_refusing_the_model_is_an_embedder_error() -> None:
    refusal = StubReply(status=404, body={"error": {"message": "The model `m` does not exist."}})
    with StubOpenAIServer(default=refusal, models=_served("m")) as stub:
        embedder = make_embedder(f"openai:{stub.base_url}#m", settings=FAST)
        with pytest.raises(EmbedderError, match="does not exist") as caught:
            embedder.embed_queries(["q"])
        embedder.close()
    assert not isinstance(caught.value, EmbedderUnavailableError)
    assert str(caught.value).startswith(f"embedder openai:{stub.base_url}#m:")


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"data": [{"index": 0, "embedding": [1.0, 0.0]}]}, "asked for 2 vectors, got 1"),
        (
            {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]},
            "differing",
        ),
        ({"object": "list"}, "unexpected embeddings payload"),
    ],
)
def test_a_malformed_answer_is_an_embedder_error(body: dict[str, object], says: str) -> None:
    with StubOpenAIServer(default=StubReply(body=body), models=_served("m")) as stub:
        embedder = make_embedder(f"openai:{stub.base_url}#m", settings=FAST)
        with pytest.raises(EmbedderError, match=says):
            embedder.embed_documents(["a", "b"])
        embedder.close()


@pytest.mark.parametrize(("owner", "cut"), [("vllm", True), ("openai", False), ("stub", False)])
def test_vllm_alone_is_told_to_cut_long_inputs(owner: str, cut: bool) -> None:
    """vLLM refuses input past the model's context unless asked to cut it; OpenAI refuses an
    unknown field: the field goes to a server that lists the model as vLLM's only."""
    served = [{"id": "m", "owned_by": owner}]
    with StubOpenAIServer(models=served) as stub:
        embedder = make_embedder(f"openai:{stub.base_url}#m", settings=FAST)
        embedder.embed_documents(["a passage"])
        embedder.close()
    body = stub.requests[-1][1]
    assert ("truncate_prompt_tokens" in body) is cut
    assert body.get("truncate_prompt_tokens", -1) == -1
