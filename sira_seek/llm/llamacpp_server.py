"""Run llama-cpp-python's OpenAI-compatible server as a child process.

Lets tests and benchmarks exercise the HTTP backend against a real server on this machine:
start on a free 127.0.0.1 port, wait until ``/v1/models`` answers, stop on exit (the lifecycle
is ``LocalOpenAIServer``'s, shared with the vLLM server).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sira_seek.llm.errors import BackendUnavailableError
from sira_seek.llm.local_server import LocalOpenAIServer, free_local_port

__all__ = ["LlamaCppServerProcess", "free_local_port"]


class LlamaCppServerProcess(LocalOpenAIServer):
    """``python -m llama_cpp.server`` for one GGUF model; use as a context manager."""

    server_name = "llama_cpp.server"

    def __init__(
        self,
        *,
        model_path: Path | str,
        model_alias: str | None = None,
        port: int | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        python: str = sys.executable,
        startup_timeout_s: float = 120.0,
        log_path: Path | str | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.model_path = Path(model_path)
        super().__init__(
            served_model_name=model_alias or self.model_path.name,
            port=port,
            python=python,
            startup_timeout_s=startup_timeout_s,
            log_path=log_path,
            extra_args=extra_args,
        )
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, os.cpu_count() or 1)

    def check(self) -> None:
        super().check()
        if not self.model_path.is_file():
            raise BackendUnavailableError(f"GGUF model {self.model_path} does not exist")

    def command(self) -> list[str]:
        return [
            self.python, "-m", "llama_cpp.server",
            "--model", str(self.model_path),
            "--model_alias", self.model_alias,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads),
            *self.extra_args,
        ]  # fmt: skip
