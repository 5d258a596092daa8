"""The thinking switch reaches the HTTP request body, and is off unless asked for.

Against the stub OpenAI-compatible server (a real HTTP server on 127.0.0.1 that records each
body), through the real request builder of `OpenAICompatibleClient` and through the commands
(``vanilla-llm`` needs no cluster). vLLM reads ``chat_template_kwargs.enable_thinking``; a
Qwen3 model there thinks unless it is ``false``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))

from stub_openai_server import StubOpenAIServer, StubReply  # noqa: E402

from sira_seek.cli.main import cli  # noqa: E402
from sira_seek.llm.openai_http import (  # noqa: E402
    OpenAICompatibleClient,
    takes_template_kwargs,
)
from sira_seek.seek.baselines.vanilla_prompts import VanillaPrompts  # noqa: E402
from sira_seek.seek.prompts_fewshot import FewShotSeekPrompts  # noqa: E402
from sira_seek.seek.settings import SeekSettings  # noqa: E402

ANSWER = StubReply(text="<answer>Paris</answer>")


def _bodies(stub: StubOpenAIServer) -> list[dict[str, Any]]:
    return [body for path, body in stub.requests if path == "/v1/chat/completions"]


def _send(settings: SeekSettings, owned_by: str = "stub") -> dict[str, Any]:
    request = VanillaPrompts(settings, "chat").answer("Capital of France?", None)
    models = [{"id": "stub-model", "owned_by": owned_by}]

    async def go() -> None:
        client = OpenAICompatibleClient(endpoints=[stub.base_url], model="stub-model")
        try:
            await client.generate(request)
        finally:
            await client.aclose()

    with StubOpenAIServer(default=ANSWER, models=models) as stub:
        asyncio.run(go())
    (body,) = _bodies(stub)
    return body


def test_request_body_says_enable_thinking_false_by_default() -> None:
    assert _send(SeekSettings())["chat_template_kwargs"] == {"enable_thinking": False}


def test_request_body_with_thinking_on_keeps_other_template_variables() -> None:
    body = _send(SeekSettings(thinking=True, chat_template_kwargs={"custom": "x"}))
    assert body["chat_template_kwargs"] == {"custom": "x", "enable_thinking": True}


def test_openais_own_api_never_gets_template_variables() -> None:
    """OpenAI's API refuses unknown body fields: a server whose /models says the model is owned
    by OpenAI gets no chat_template_kwargs; vLLM (owned_by "vllm") still gets the switch."""
    assert "chat_template_kwargs" not in _send(SeekSettings(), owned_by="openai")
    assert "chat_template_kwargs" not in _send(SeekSettings(), owned_by="system")
    vllm = _send(SeekSettings(), owned_by="vllm")
    assert vllm["chat_template_kwargs"] == {"enable_thinking": False}


def test_openai_hosts_are_recognised_by_name() -> None:
    assert not takes_template_kwargs("https://api.openai.com/v1", set())
    assert not takes_template_kwargs("https://x.openai.azure.com/openai/v1", {"vllm"})
    assert takes_template_kwargs("http://gpu:8000/v1", {"vllm"})
    assert takes_template_kwargs("http://gpu:8000/v1", set())  # unknown servers: send it


def test_completion_prompts_carry_no_template_variables() -> None:
    # Few-shot prompts are raw completions for base models: no chat template to switch.
    request = FewShotSeekPrompts(SeekSettings()).answer("q?", "- a: b", "documents")
    assert request.prompt is not None and request.chat_template_kwargs is None


def _run(stub: StubOpenAIServer, command: list[str], env: dict[str, str] | None = None) -> None:
    llm = ["--method", "vanilla-llm", "--llm", f"openai:{stub.base_url}#stub-model"]
    result = CliRunner().invoke(cli, [*command, *llm, "--no-cache", "--json"], env=env)
    assert result.exit_code == 0, result.output


@pytest.fixture
def qa_file(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    row = {"id": "q0", "question": "Capital of France?", "golden_answers": ["Paris"]}
    path.write_text(json.dumps(row) + "\n")
    return path


@pytest.mark.parametrize(
    ("extra", "env", "expected"),
    [
        ([], {}, False),
        (["--thinking"], {}, True),
        (["--no-thinking"], {"SIRA_SEEK_THINKING": "1"}, False),  # the flag wins
        ([], {"SIRA_SEEK_THINKING": "1"}, True),
    ],
    ids=["default", "flag", "flag-over-env", "env"],
)
@pytest.mark.parametrize("command", ["ask", "eval qa"])
def test_commands_switch_thinking(
    command: str, extra: list[str], env: dict[str, str], expected: bool, qa_file: Path
) -> None:
    question = ["ask", "Capital of France?"]
    args = question if command == "ask" else ["eval", "qa", "--qa", str(qa_file)]
    with StubOpenAIServer(default=ANSWER) as stub:
        _run(stub, [*args, *extra], env=env)
    bodies = _bodies(stub)
    assert len(bodies) == 1
    assert bodies[0]["chat_template_kwargs"] == {"enable_thinking": expected}


def test_the_python_facade_takes_the_switch() -> None:
    """`SiraSeek.ask(thinking=...)` reaches the request body like --thinking (vanilla-llm: no
    cluster is searched; the in-memory double stands in for the backend)."""
    from in_memory_backend import InMemoryBackend

    from sira_seek.client import SiraSeek

    with StubOpenAIServer(default=ANSWER) as stub:
        client = SiraSeek(InMemoryBackend())
        spec = f"openai:{stub.base_url}#stub-model"
        off = client.ask("Capital?", index=None, llm=spec, method="vanilla-llm", use_cache=False)
        client.ask(
            "Capital?", index=None, llm=spec, method="vanilla-llm", use_cache=False, thinking=True
        )
    first, second = _bodies(stub)
    assert off.answer == "Paris"
    assert first["chat_template_kwargs"] == {"enable_thinking": False}
    assert second["chat_template_kwargs"] == {"enable_thinking": True}
