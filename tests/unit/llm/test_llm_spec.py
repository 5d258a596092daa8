from pathlib import Path

import pytest

from sira_seek.llm.spec import (
    JsonlBackendSpec,
    LlamaCppBackendSpec,
    OpenAIBackendSpec,
    backend_spec_from_dict,
    parse_backend_spec,
)


def test_openai_single_endpoint_with_model() -> None:
    spec = parse_backend_spec("openai:http://host:8000/v1#Qwen/Qwen3-8B")
    assert spec == OpenAIBackendSpec(endpoints=("http://host:8000/v1",), model="Qwen/Qwen3-8B")


def test_openai_several_endpoints_round_robin_and_trailing_slash() -> None:
    spec = parse_backend_spec("openai:http://a:8000/v1/, http://b:8001/v1#m")
    assert isinstance(spec, OpenAIBackendSpec)
    assert spec.endpoints == ("http://a:8000/v1", "http://b:8001/v1")
    assert spec.to_spec() == "openai:http://a:8000/v1,http://b:8001/v1#m"


def test_openai_model_is_optional() -> None:
    spec = parse_backend_spec("openai:https://api.example.com/v1")
    assert isinstance(spec, OpenAIBackendSpec)
    assert spec.model is None


def test_llamacpp_alias_and_path() -> None:
    gemma = parse_backend_spec("llamacpp:gemma3-270m")
    assert isinstance(gemma, LlamaCppBackendSpec) and gemma.is_packaged_gemma
    path = parse_backend_spec("llamacpp:/models/x.gguf")
    assert isinstance(path, LlamaCppBackendSpec) and not path.is_packaged_gemma


def test_jsonl() -> None:
    assert parse_backend_spec("jsonl:/data/kw.jsonl") == JsonlBackendSpec(
        path=Path("/data/kw.jsonl")
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nonsense", "KIND:TARGET"),
        ("openai:", "KIND:TARGET"),
        ("openai:ftp://x#m", "http(s) URL"),
        ("foo:bar", "unknown LLM backend"),
        ("vllm:Qwen/Qwen3-8B", "vllm serve Qwen/Qwen3-8B"),
    ],
)
def test_bad_specs_say_what_is_accepted(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_backend_spec(spec)


def test_dict_round_trip() -> None:
    for text in ("openai:http://h:1/v1#m", "llamacpp:gemma3-270m", "jsonl:/x.jsonl"):
        spec = parse_backend_spec(text)
        assert backend_spec_from_dict(spec.model_dump()) == spec
        assert spec.to_spec() == text
