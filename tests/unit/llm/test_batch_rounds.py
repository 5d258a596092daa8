"""Offline batch rounds (``--llm batch:DIR#MODEL``, ``sira_seek.llm.batch_rounds``) at the LLM
layer: the request file holds exactly the bodies the live ``openai:`` client POSTs, the answers
are read as the live client reads a server's reply, ids are stable across processes, failed
and missing lines are asked again a bounded number of times, an unanswered round is waited on
(never a new one), and the signal passes every ``except Exception`` while batches collect it.

The batch job is played by ``batch_kit.answer_round`` from the bodies; the live path by
``batch_kit.BodyServer``, a real HTTP server on 127.0.0.1 answering with the same function.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from batch_kit import (
    ERROR,
    BodyServer,
    answer_round,
    output_path,
    own_response_cache,  # noqa: E402, F401  (autouse: this test's own LLM cache)
    request_lines,
    run_rounds,
)
from click.testing import CliRunner

from sira_seek.cli.main import cli
from sira_seek.llm.batch_files import body_custom_id
from sira_seek.llm.batch_rounds import (
    BatchRoundsError,
    WaitingForBatch,
    batch_round,
    requests_path,
)
from sira_seek.llm.errors import BadRequestError, LLMCallError, ServerError
from sira_seek.llm.factory import create_llm_client
from sira_seek.llm.ledger import LLMUsageLedger
from sira_seek.llm.openai_http import openai_request_body
from sira_seek.llm.pending import PendingRequest, gather_settled
from sira_seek.llm.request import ChatMessage, LLMRequest
from sira_seek.llm.response import LLMResponse
from sira_seek.llm.spec import BackendSpecError, BatchBackendSpec, parse_backend_spec

SCHEMA = {
    "type": "object",
    "properties": {"keywords": {"type": "array", "items": {"type": "string"}}},
    "required": ["keywords"],
}


def chat(text: str, **extra: Any) -> LLMRequest:
    return LLMRequest(
        messages=(
            ChatMessage(role="system", content="Be brief."),
            ChatMessage(role="user", content=text),
        ),
        max_tokens=64,
        temperature=0.0,
        **extra,
    )


REQUESTS = [
    chat("plain question"),
    chat("json please", json_schema=SCHEMA, seed=7, stop=("\n\n",)),
    chat("thinking off", chat_template_kwargs={"enable_thinking": False}, top_p=0.9, top_k=20),
    LLMRequest(prompt="Question: few-shot\nAnswer:", max_tokens=16, temperature=0.0),
]


def server(url: str, body: dict[str, Any]) -> str:
    """Deterministic answers from the body alone, as temperature 0 would be."""
    shown = json.dumps(body.get("messages") or body.get("prompt"))
    if "response_format" in body:
        return json.dumps({"keywords": [f"kw{len(shown)}"]})
    return f"answer to {len(shown)} characters at {url}"


def spec(directory: Path) -> str:
    return f"batch:{directory}#m"


def ask(directory: Path, requests: list[LLMRequest], **client: Any) -> list[LLMResponse]:
    """One run over ``requests`` (all at once), inside a batch round."""
    with batch_round(spec(directory)):
        llm = create_llm_client(spec(directory), use_cache=False, **client)
        return asyncio.run(_all(llm, requests))


async def _all(llm: Any, requests: list[LLMRequest]) -> list[LLMResponse]:
    return list(await gather_settled(*(llm.generate(r) for r in requests)))


# -- the spec ----------------------------------------------------------------------------------
def test_the_spec_names_a_folder_and_the_model(tmp_path: Path) -> None:
    parsed = parse_backend_spec(f"batch:{tmp_path}/rounds#Qwen/Qwen3-8B")
    assert parsed == BatchBackendSpec(directory=tmp_path / "rounds", model="Qwen/Qwen3-8B")
    assert parsed.to_spec() == f"batch:{tmp_path}/rounds#Qwen/Qwen3-8B"
    with pytest.raises(BackendSpecError, match="batch:DIR#MODEL"):
        parse_backend_spec(f"batch:{tmp_path}")


def test_a_batch_spec_outside_a_run_in_rounds_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BackendSpecError, match="eval qa"):
        create_llm_client(spec(tmp_path))
    result = CliRunner().invoke(
        cli, ["ask", "Why?", "--method", "vanilla-llm", "--llm", spec(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert "offline batch rounds run only in" in result.stderr


# -- bodies and answers: exactly the live client's ----------------------------------------------
def test_the_request_file_holds_the_bodies_the_live_client_posts(tmp_path: Path) -> None:
    with BodyServer(server) as live:
        client = create_llm_client(f"openai:{live.base_url}#m", use_cache=False)
        answers = asyncio.run(_all(client, REQUESTS))
        posted = list(live.requests)
    with pytest.raises(WaitingForBatch) as waiting:
        ask(tmp_path, REQUESTS)
    assert waiting.value.round == 1 and waiting.value.count == len(REQUESTS)
    lines = request_lines(tmp_path, 1)
    by_body = {json.dumps(line["body"], sort_keys=True): line for line in lines}
    assert len(by_body) == len(posted) == len(REQUESTS)
    for path, body in posted:
        line = by_body[json.dumps(body, sort_keys=True)]  # the very body the server received
        assert line["url"] == path and line["method"] == "POST"
        assert line["custom_id"] == body_custom_id(path, body)
    for request in REQUESTS:  # and the body builder's output, field for field
        path, body = openai_request_body(request, model="m", dialect="openai")
        assert by_body[json.dumps(body, sort_keys=True)]["url"] == "/v1" + path

    answer_round(tmp_path, server)
    batch = ask(tmp_path, REQUESTS)
    keep = ("text", "parsed", "usage", "finish_reason", "model")
    assert [a.model_dump(include=set(keep)) for a in batch] == [
        a.model_dump(include=set(keep)) for a in answers
    ]
    assert batch[1].parsed == {"keywords": [batch[1].parsed["keywords"][0]]}
    assert {a.backend for a in batch} == {"batch"}


def test_custom_ids_are_the_same_in_another_process(tmp_path: Path) -> None:
    with pytest.raises(WaitingForBatch):
        ask(tmp_path, REQUESTS[:2])
    lines = request_lines(tmp_path, 1)
    code = textwrap.dedent(
        """
        import json, sys
        from sira_seek.llm.batch_files import body_custom_id
        for raw in sys.stdin:
            line = json.loads(raw)
            print(body_custom_id(line["url"], line["body"]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input="".join(json.dumps({"url": x["url"], "body": x["body"]}) + "\n" for x in lines),
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    assert done.stdout.split() == [line["custom_id"] for line in lines]


def test_a_malformed_json_answer_is_asked_again_with_the_next_seed_as_live(tmp_path: Path) -> None:
    request = chat("json please", json_schema=SCHEMA, seed=7)

    def sloppy(url: str, body: dict[str, Any]) -> str:
        return "not json" if body["seed"] == 7 else json.dumps({"keywords": ["fine"]})

    with BodyServer(sloppy) as live:
        client = create_llm_client(f"openai:{live.base_url}#m", use_cache=False)
        (expected,) = asyncio.run(_all(client, [request]))
    (found,), waits = run_rounds(lambda: ask(tmp_path, [request]), tmp_path, sloppy)
    assert len(waits) == 2  # seed 7's answer did not parse: seed 8 went in round 2
    assert request_lines(tmp_path, 2)[0]["body"]["seed"] == 8
    assert found.parsed == expected.parsed == {"keywords": ["fine"]}
    assert found.usage == expected.usage  # both answers' tokens, as live


# -- failures, missing lines and the rounds ------------------------------------------------------
def test_a_failed_line_is_asked_again_then_fails_with_its_reason(tmp_path: Path) -> None:
    def failing(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 500, {"error": {"message": "scripted overload"}}

    with pytest.raises(ServerError) as failed:
        run_rounds(lambda: ask(tmp_path, REQUESTS[:1]), tmp_path, failing)
    assert "HTTP 500: scripted overload" in str(failed.value)
    assert "asked in rounds 1, 2, 3" in str(failed.value)  # once, then the 2 retries
    assert not requests_path(tmp_path, 4).exists()


def test_a_refusal_a_retry_cannot_change_fails_at_once_as_live(tmp_path: Path) -> None:
    def refusing(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 400, {"error": {"message": "maximum context length is 2048 tokens"}}

    with pytest.raises(LLMCallError) as failed:
        run_rounds(lambda: ask(tmp_path, REQUESTS[:1]), tmp_path, refusing)
    assert failed.value.kind == "context_too_long"  # the live client's classification
    assert not requests_path(tmp_path, 2).exists()

    def other(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 422, {"error": {"message": "bad field"}}

    with pytest.raises(BadRequestError, match="HTTP 422: bad field"):
        run_rounds(lambda: ask(tmp_path / "b", REQUESTS[:1]), tmp_path / "b", other)


def test_missing_lines_and_batch_errors_are_asked_again(tmp_path: Path) -> None:
    seen: dict[str, int] = {}

    def flaky(url: str, body: dict[str, Any]) -> object:
        key = json.dumps(body, sort_keys=True)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 1:
            return None if "plain" in key else ERROR  # no line / a batch-level error
        return server(url, body)

    answers, waits = run_rounds(lambda: ask(tmp_path, REQUESTS[:2]), tmp_path, flaky)
    assert [w.count for w in waits] == [2, 2]  # both asked again in round 2
    assert [a.text for a in answers][0].startswith("answer to")


def test_an_unanswered_round_is_waited_on_not_replaced(tmp_path: Path) -> None:
    with pytest.raises(WaitingForBatch) as first:
        ask(tmp_path, REQUESTS)
    written = requests_path(tmp_path, 1).read_bytes()
    with pytest.raises(WaitingForBatch) as again:
        ask(tmp_path, REQUESTS)
    assert again.value.requests == first.value.requests and again.value.round == 1
    assert again.value.to_json() == {
        "waiting_for": str(requests_path(tmp_path, 1)),
        "output": str(output_path(tmp_path, 1)),
        "round": 1,
        "requests": len(REQUESTS),
    }
    assert requests_path(tmp_path, 1).read_bytes() == written
    assert not requests_path(tmp_path, 2).exists()
    with pytest.raises(BatchRoundsError, match="not answered yet"):
        ask(tmp_path, [chat("a request round 1 does not hold")])


def test_pending_passes_except_exception_and_batches_collect_every_request(
    tmp_path: Path,
) -> None:
    ledger = LLMUsageLedger()

    async def swallowing(llm: Any) -> None:
        try:
            await llm.generate(REQUESTS[0])
        except Exception:  # what a step recording a failed call does
            raise AssertionError("a pending request is not a failure") from None

    with pytest.raises(WaitingForBatch) as waiting, batch_round(spec(tmp_path)):
        llm = create_llm_client(spec(tmp_path), ledger=ledger, use_cache=True)
        with pytest.raises(PendingRequest) as signal:
            asyncio.run(llm.generate_many(REQUESTS, concurrency=2))
        assert len(signal.value.custom_ids) == len(REQUESTS)  # all, not the first
        asyncio.run(swallowing(llm))
    assert waiting.value.count == len(REQUESTS)
    assert ledger.summary()["calls"] == 0  # nothing was called


def test_llm_batch_runs_the_waiting_round_through_run_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sira-seek llm batch DIR`: vLLM's run_batch command line, the output renamed into place
    (a fake vLLM Python plays run_batch; the real one is in the integration suite's reach)."""
    plain = [REQUESTS[0], REQUESTS[2]]  # text answers ("ok" is no JSON)
    with pytest.raises(WaitingForBatch):
        ask(tmp_path, plain)
    weights = tmp_path / "weights"
    weights.mkdir()
    fake = tmp_path / "fake-python"
    fake.write_text(
        textwrap.dedent(
            f"""\
            #!{sys.executable}
            import json, sys
            args = sys.argv[1:]
            assert args[:2] == ["-m", "vllm.entrypoints.openai.run_batch"], args
            pairs = range(2, len(args) - 1)
            opt = {{args[i]: args[i + 1] for i in pairs if args[i].startswith("-")}}
            assert opt["--served-model-name"] == "m" and opt["--model"] == {str(weights)!r}
            assert "--structured-outputs-config" in opt
            with open(opt["-i"]) as src, open(opt["-o"], "w") as out:
                for raw in src:
                    line = json.loads(raw)
                    body = {{"model": "m", "choices": [{{"index": 0, "finish_reason": "stop",
                             "message": {{"role": "assistant", "content": "ok"}}}}], "usage": {{}}}}
                    out.write(json.dumps({{"id": "x", "custom_id": line["custom_id"], "error": None,
                              "response": {{"status_code": 200, "body": body}}}}) + "\\n")
            """
        )
    )
    fake.chmod(0o755)
    monkeypatch.setenv("SIRA_SEEK_VLLM_PYTHON", str(fake))
    done = CliRunner().invoke(
        cli, ["llm", "batch", str(tmp_path), "--model", str(weights), "--json"]
    )
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["round"] == 1 and report["answered"] == 2 and report["failed"] == 0
    assert report["output"] == str(output_path(tmp_path, 1))
    assert [a.text for a in ask(tmp_path, plain)] == ["ok", "ok"]
    again = CliRunner().invoke(cli, ["llm", "batch", str(tmp_path), "--model", str(weights)])
    assert again.exit_code == 2 and "no round" in again.stderr
