"""A real llama.cpp OpenAI-compatible server with the packaged Gemma 3 270M model
(``gemma_gguf``, tests/conftest.py), started once per session. Missing llama-cpp-python or the
model is a failure, not a skip: these tests are the evidence that the CPU path works."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The scripted stub server (used here as a fault-injecting proxy) lives with the unit tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "llm"))

from sira_seek.llm.errors import BackendUnavailableError  # noqa: E402
from sira_seek.llm.llamacpp_server import LlamaCppServerProcess  # noqa: E402


@pytest.fixture(scope="session")
def llama_server(
    gemma_gguf: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LlamaCppServerProcess]:
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    server = LlamaCppServerProcess(
        model_path=gemma_gguf, model_alias="gemma3-270m", n_ctx=2048, log_path=log
    )
    try:
        server.start()
    except BackendUnavailableError as exc:
        pytest.fail(f"could not start llama_cpp.server: {exc}", pytrace=False)
    yield server
    server.stop()
