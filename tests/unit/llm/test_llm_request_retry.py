import pytest
from pydantic import ValidationError
from seeds import seeded_rng

from sira_seek.llm.request import ChatMessage, LLMRequest
from sira_seek.llm.retry import RetryPolicy, is_retryable_status, parse_retry_after
from sira_seek.llm.structured import parse_json_output, structured_output_fields


def test_request_needs_exactly_one_of_prompt_and_messages() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        LLMRequest()
    with pytest.raises(ValidationError, match="exactly one"):
        LLMRequest(prompt="a", messages=(ChatMessage(role="user", content="b"),))
    assert LLMRequest(messages=(ChatMessage(role="user", content="b"),)).is_chat
    assert not LLMRequest(prompt="a").is_chat


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(backoff_base_s=0.5, backoff_max_s=4.0, jitter=False)
    assert [policy.delay_s(a) for a in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]


def test_jitter_keeps_at_least_half_the_delay() -> None:
    policy = RetryPolicy(backoff_base_s=1.0, backoff_max_s=100.0)
    rng = seeded_rng("jitter")
    for attempt in range(5):
        delay = policy.delay_s(attempt, rng=rng)
        assert 2**attempt / 2 <= delay <= 2**attempt


def test_retry_after_is_honoured_up_to_the_cap() -> None:
    policy = RetryPolicy(backoff_base_s=0.1, backoff_max_s=3.0, jitter=False)
    assert policy.delay_s(0, retry_after_s=2.0) == 2.0
    assert policy.delay_s(0, retry_after_s=60.0) == 3.0
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") is None


def test_retryable_statuses() -> None:
    assert all(is_retryable_status(s) for s in (429, 500, 502, 503, 504, 599))
    assert not any(is_retryable_status(s) for s in (400, 401, 404, 422))


def test_structured_output_dialects() -> None:
    schema = {"type": "object"}
    openai = structured_output_fields(schema, chat=False, dialect="openai")
    assert openai["response_format"]["type"] == "json_schema"
    assert openai["response_format"]["json_schema"]["schema"] == schema
    assert structured_output_fields(schema, chat=True, dialect="vllm") == {
        "structured_outputs": {"json": schema}
    }
    assert structured_output_fields(schema, chat=True, dialect="vllm-legacy") == {
        "guided_json": schema
    }
    assert structured_output_fields(schema, chat=True, dialect="llama-cpp-python") == {
        "response_format": {"type": "json_object", "schema": schema}
    }


def test_parse_json_output_checks_required_keys() -> None:
    schema = {"type": "object", "required": ["keywords"]}
    assert parse_json_output(' {"keywords": []}\n', schema) == {"keywords": []}
    with pytest.raises(ValueError):
        parse_json_output('{"keywords": ["a"', schema)
    with pytest.raises(ValueError, match="required"):
        parse_json_output('{"other": 1}', schema)
    with pytest.raises(ValueError, match="object"):
        parse_json_output("[1]", schema)
