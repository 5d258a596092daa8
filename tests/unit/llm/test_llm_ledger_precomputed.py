import asyncio
import json
from pathlib import Path

import pytest
from scripted_llm import ScriptedLLMDouble

from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.cache import CachingLLMClient, ResponseCache
from sira_seek.llm.errors import ServerUnreachableError
from sira_seek.llm.factory import create_llm_client
from sira_seek.llm.ledger import LLMUsageLedger, MeteredLLMClient
from sira_seek.llm.precomputed import PrecomputedKeywords, PrecomputedLLMClient
from sira_seek.llm.prompts import KEYWORDS_SCHEMA, keyword_prompt, keyword_request
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse
from sira_seek.llm.settings import LLMSettings


def test_ledger_summarises_calls_hits_and_errors(tmp_path: Path) -> None:
    ledger = LLMUsageLedger()
    double = ScriptedLLMDouble(
        by_prompt={"boom": ServerUnreachableError("down")}, default="two words"
    )
    client = MeteredLLMClient(CachingLLMClient(double, ResponseCache(tmp_path)), ledger)
    requests = [LLMRequest(prompt="a b c"), LLMRequest(prompt="a b c"), LLMRequest(prompt="boom")]

    async def run() -> list[LLMResponse | LLMError]:
        first = await client.generate_many(requests[:1])
        return first + await client.generate_many(requests[1:])

    results = asyncio.run(run())
    assert [type(r).__name__ for r in results] == ["LLMResponse", "LLMResponse", "LLMError"]
    summary = ledger.summary()
    assert summary["calls"] == 3 and summary["succeeded"] == 2 and summary["errors"] == 1
    assert summary["errors_by_kind"] == {"unreachable": 1}
    assert summary["cache_hits"] == 1 and summary["cache_hit_rate"] == 0.5
    assert summary["prompt_tokens"] == 6 and summary["completion_tokens"] == 4
    assert set(summary["by_backend_model"]) == {"scripted:scripted-model"}
    json.dumps(summary)


def test_empty_ledger_summary() -> None:
    assert LLMUsageLedger().summary()["calls"] == 0


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    return path


def test_precomputed_keywords_by_id_and_text(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "kw.jsonl",
        [
            {"_id": "d1", "keywords": ["alpha", "beta"]},
            {"_id": 7, "keywords": []},
            {"text": "what is insulin", "keywords": ["insulin"]},
        ],
    )
    table = PrecomputedKeywords.from_jsonl(path)
    assert table.for_id("d1") == ("alpha", "beta")
    assert table.for_id(7) == ()
    assert table.for_text("what is insulin") == ("insulin",)
    assert table.lookup("what is insulin") == ("insulin",)
    assert table.lookup("missing") is None
    assert len(table) == 3 and "d1" in table and "x" not in table


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"_id": "a"}', "keywords"),
        ('{"keywords": ["x"]}', "neither"),
        ("[1, 2]", "JSON object"),
        ("{oops", "line 2: not JSON"),
    ],
)
def test_precomputed_bad_lines_are_reported_with_their_number(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"_id": "ok", "keywords": []}\n' + line + "\n")
    with pytest.raises(ValueError, match=message):
        PrecomputedKeywords.from_jsonl(path)


def test_jsonl_backend_stands_in_for_a_live_model(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "kw.jsonl", [{"_id": "q1", "keywords": ["k1", "k2"]}])
    ledger = LLMUsageLedger()
    settings = LLMSettings(cache_dir=tmp_path / "cache")
    client = create_llm_client(f"jsonl:{path}", settings=settings, ledger=ledger)
    requests = [
        keyword_request("some query", lookup_key="q1"),
        keyword_request("other", lookup_key="q2"),
    ]
    hit, miss = asyncio.run(client.generate_many(requests))
    assert isinstance(hit, LLMResponse) and hit.parsed == {"keywords": ["k1", "k2"]}
    assert hit.backend == "jsonl" and hit.model == "kw.jsonl"
    assert isinstance(miss, LLMError) and miss.kind == "not_found"
    assert not (tmp_path / "cache").exists()  # precomputed answers are never cached again
    assert ledger.summary()["errors_by_kind"] == {"not_found": 1}
    assert isinstance(client, MeteredLLMClient)
    assert isinstance(client.inner, PrecomputedLLMClient)


def test_factory_wraps_live_backends_in_the_cache(tmp_path: Path) -> None:
    settings = LLMSettings(cache_dir=tmp_path)
    client = create_llm_client("openai:http://127.0.0.1:9/v1#m", settings=settings)
    assert isinstance(client, CachingLLMClient)
    bare = create_llm_client("openai:http://127.0.0.1:9/v1#m", settings=settings, use_cache=False)
    assert not isinstance(bare, CachingLLMClient)


def test_settings_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIRA_SEEK_LLM_BACKEND", "openai:http://h:8000/v1#m")
    monkeypatch.setenv("SIRA_SEEK_LLM_CACHE", "false")
    settings = LLMSettings()
    assert settings.backend == "openai:http://h:8000/v1#m" and settings.cache is False


def test_keyword_prompt_is_few_shot_and_bounded() -> None:
    prompt = keyword_prompt("The  Nile\nflows north.")
    assert prompt.endswith("Text: The Nile flows north.\nKeywords: ")
    assert prompt.count("Keywords: {") == 2
    request = keyword_request("x")
    assert request.json_schema == KEYWORDS_SCHEMA
    assert KEYWORDS_SCHEMA["properties"]["keywords"]["maxItems"] <= 8


def test_sync_wrapper_works_inside_and_outside_an_event_loop() -> None:
    with BlockingLLMClient(ScriptedLLMDouble(default="hi")) as client:
        assert client.generate(LLMRequest(prompt="q")).text == "hi"
        assert client.model_name() == "scripted-model"

        async def inside_a_loop() -> list[LLMResponse | LLMError]:
            return client.generate_many([LLMRequest(prompt="a"), LLMRequest(prompt="b")])

        assert len(asyncio.run(inside_a_loop())) == 2
