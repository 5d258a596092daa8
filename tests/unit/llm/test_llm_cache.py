import asyncio
import json
import multiprocessing
import os
import threading
from pathlib import Path

import pytest
from scripted_llm import ScriptedLLMDouble

from sira_seek.llm.cache import CachingLLMClient, ResponseCache, cache_key
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse, TokenUsage


def _response(text: str) -> LLMResponse:
    return LLMResponse(
        text=text, usage=TokenUsage(prompt_tokens=1, completion_tokens=2), backend="b", model="m"
    )


def test_key_covers_what_determines_the_answer() -> None:
    base = LLMRequest(prompt="p", max_tokens=10)
    key = cache_key(backend="openai", model="m", request=base)
    assert key == cache_key(
        backend="openai", model="m", request=LLMRequest(prompt="p", max_tokens=10)
    )
    variants = [
        cache_key(backend="llamacpp", model="m", request=base),
        cache_key(backend="openai", model="m2", request=base),
        cache_key(backend="openai", model="m", request=base.model_copy(update={"prompt": "q"})),
        cache_key(
            backend="openai", model="m", request=base.model_copy(update={"temperature": 0.5})
        ),
        cache_key(backend="openai", model="m", request=base.model_copy(update={"seed": 3})),
        cache_key(backend="openai", model="m", request=base.model_copy(update={"stop": ("\n",)})),
        cache_key(
            backend="openai", model="m", request=base.model_copy(update={"json_schema": {"a": 1}})
        ),
    ]
    assert len({key, *variants}) == len(variants) + 1
    # The precomputed-lookup id is routing, not content: it must not split the cache.
    with_id = base.model_copy(update={"lookup_key": "doc-1"})
    assert cache_key(backend="openai", model="m", request=with_id) == key


def test_put_get_round_trip_and_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    assert cache.get("ab" * 32) is None
    cache.put("ab" * 32, _response("hello"))
    assert cache.get("ab" * 32) == _response("hello")
    assert len(cache) == 1
    cache.path_for("ab" * 32).write_text("{not json")
    assert cache.get("ab" * 32) is None
    assert not list(tmp_path.rglob("*.tmp"))


def test_concurrent_thread_writers_never_leave_torn_files(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = "cd" * 32
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        try:
            for i in range(50):
                cache.put(key, _response(f"w{worker}-{i}" * 200))
                got = cache.get(key)
                assert got is not None and got.text.startswith("w")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    json.loads(cache.path_for(key).read_text())
    assert not list(tmp_path.rglob("*.tmp"))


def _process_writer(directory: str, worker: int) -> None:
    cache = ResponseCache(directory)
    for i in range(30):
        cache.put("ef" * 32, _response(f"p{worker}-{i}" * 300))
        cache.put(f"{worker:02d}" + "0" * 62, _response(f"own-{worker}"))


def test_concurrent_process_writers(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process_writer, args=(str(tmp_path), w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    cache = ResponseCache(tmp_path)
    shared = cache.get("ef" * 32)
    assert shared is not None and shared.text.startswith("p")
    for w in range(4):
        own = cache.get(f"{w:02d}" + "0" * 62)
        assert own is not None and own.text == f"own-{w}"
    assert not list(tmp_path.rglob("*.tmp"))


def test_caching_client_answers_repeats_from_disk(tmp_path: Path) -> None:
    double = ScriptedLLMDouble(default="answer")
    client = CachingLLMClient(double, ResponseCache(tmp_path))
    request = LLMRequest(prompt="question")

    first = asyncio.run(client.generate(request))
    second = asyncio.run(client.generate(request))
    assert not first.cache_hit and second.cache_hit
    assert second.text == "answer" and second.usage == first.usage
    assert len(double.calls) == 1

    # A fresh client over the same folder (e.g. a re-run) also hits.
    again = CachingLLMClient(ScriptedLLMDouble(), ResponseCache(tmp_path))
    assert asyncio.run(again.generate(request)).cache_hit


def test_cache_bypass_reads_and_writes_nothing(tmp_path: Path) -> None:
    double = ScriptedLLMDouble(default="answer")
    client = CachingLLMClient(double, ResponseCache(tmp_path), read=False, write=False)
    for _ in range(2):
        assert not asyncio.run(client.generate(LLMRequest(prompt="q"))).cache_hit
    assert len(double.calls) == 2
    assert len(ResponseCache(tmp_path)) == 0


def test_errors_are_not_cached(tmp_path: Path) -> None:
    from sira_seek.llm.errors import ServerError

    double = ScriptedLLMDouble(sequence=[ServerError("boom"), "fine"])
    client = CachingLLMClient(double, ResponseCache(tmp_path))
    results = asyncio.run(client.generate_many([LLMRequest(prompt="q")]))
    assert results[0].kind == "server_error"  # type: ignore[union-attr]
    assert asyncio.run(client.generate(LLMRequest(prompt="q"))).text == "fine"


def test_cached_answers_need_no_server(tmp_path: Path) -> None:
    from stub_openai_server import StubOpenAIServer, StubReply

    from sira_seek.llm.llamacpp_server import free_local_port
    from sira_seek.llm.openai_http import OpenAICompatibleClient

    request = LLMRequest(prompt="q")

    async def ask(url: str) -> LLMResponse:
        client = CachingLLMClient(
            OpenAICompatibleClient(endpoints=[url], model="stub-model"), ResponseCache(tmp_path)
        )
        try:
            return await client.generate(request)
        finally:
            await client.aclose()

    with StubOpenAIServer(default=StubReply(text="from the server")) as stub:
        assert not asyncio.run(ask(stub.base_url)).cache_hit
    # The server is gone (a re-run on a laptop): the answer still comes, from the cache.
    replay = asyncio.run(ask(f"http://127.0.0.1:{free_local_port()}/v1"))
    assert replay.cache_hit and replay.text == "from the server"


def _aged(cache: ResponseCache, key: str, when: float) -> None:
    """The entry last used at ``when`` (seconds since the epoch)."""
    os.utime(cache.path_for(key), (when, when))


def test_past_its_cap_the_cache_evicts_the_least_recently_used_first(tmp_path: Path) -> None:
    keys = [f"{i:02d}" * 32 for i in range(5)]
    size = len(_response("x" * 100).model_dump_json().encode())
    cache = ResponseCache(tmp_path, max_bytes=4 * size)  # room for four
    for i, key in enumerate(keys[:4]):
        cache.put(key, _response("x" * 100))
        _aged(cache, key, 1_000_000 + i)  # written in order 0, 1, 2, 3
    assert cache.get(keys[0]) is not None  # 0 used again: now the most recent
    cache.put(keys[4], _response("x" * 100))  # a fifth: over the cap, down to 90% (3 entries)
    kept = [key for key in keys if cache.path_for(key).exists()]
    assert kept == [keys[0], keys[3], keys[4]]  # 1 and 2, least recently used, are gone
    assert cache.size_bytes() <= 4 * size * 0.9


def test_the_cap_counts_what_was_on_disk_before_and_none_means_no_cap(tmp_path: Path) -> None:
    size = len(_response("y" * 100).model_dump_json().encode())
    first = ResponseCache(tmp_path, max_bytes=None)
    for i in range(6):
        first.put(f"{i:02d}" * 32, _response("y" * 100))
        _aged(first, f"{i:02d}" * 32, 1_000_000 + i)
    assert len(first) == 6  # no cap: everything stays
    later = ResponseCache(tmp_path, max_bytes=5 * size)  # a new process, a smaller cap
    later.put("aa" * 32, _response("y" * 100))
    # Seven entries against a cap of five: down to 90% (four), the oldest three gone.
    assert len(later) == 4 and later.size_bytes() <= 5 * size * 0.9
    kept = [i for i in range(6) if later.path_for(f"{i:02d}" * 32).exists()]
    assert kept == [3, 4, 5] and later.path_for("aa" * 32).exists()


def test_the_cap_is_a_setting_the_factory_passes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sira_seek.llm.factory import create_llm_client
    from sira_seek.llm.settings import DEFAULT_CACHE_MAX_BYTES, LLMSettings

    assert LLMSettings().cache_max_bytes == DEFAULT_CACHE_MAX_BYTES
    monkeypatch.setenv("SIRA_SEEK_LLM_CACHE_MAX_BYTES", "123456")
    monkeypatch.setenv("SIRA_SEEK_LLM_CACHE_DIR", str(tmp_path))
    client = create_llm_client("openai:http://127.0.0.1:9/v1#m")
    assert isinstance(client, CachingLLMClient) and client.cache.max_bytes == 123456
    monkeypatch.setenv("SIRA_SEEK_LLM_CACHE_MAX_BYTES", "0")
    client = create_llm_client("openai:http://127.0.0.1:9/v1#m")
    assert isinstance(client, CachingLLMClient) and client.cache.max_bytes is None
