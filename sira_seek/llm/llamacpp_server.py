"""Run llama-cpp-python's OpenAI-compatible server as a child process.

Lets tests and benchmarks exercise the HTTP backend against a real server on this machine:
start on a free 127.0.0.1 port, wait until ``/v1/models`` answers, stop on exit.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

import httpx

from sira_seek.llm.errors import BackendUnavailableError


def free_local_port() -> int:
    """A port that was free a moment ago on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaCppServerProcess:
    """``python -m llama_cpp.server`` for one GGUF model; use as a context manager."""

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
        self.model_alias = model_alias or self.model_path.name
        self.port = port or free_local_port()
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, os.cpu_count() or 1)
        self.python = python
        self.startup_timeout_s = startup_timeout_s
        # A log we created ourselves is removed on stop; a caller-chosen one is kept.
        self._own_log = log_path is None
        if log_path is None:
            fd, log_path = tempfile.mkstemp(prefix="llama-cpp-server-", suffix=".log")
            os.close(fd)
        self.log_path = Path(log_path)
        self.extra_args = extra_args
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """OpenAI base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def spec(self) -> str:
        return f"openai:{self.base_url}#{self.model_alias}"

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

    def start(self) -> LlamaCppServerProcess:
        if self._process is not None:
            return self
        if not self.model_path.is_file():
            raise BackendUnavailableError(f"GGUF model {self.model_path} does not exist")
        log = self.log_path.open("wb")
        try:
            self._process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        finally:
            log.close()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise BackendUnavailableError(
                    f"llama_cpp.server exited with code {self._process.returncode} before it was "
                    f"ready (is llama-cpp-python[server] installed?); log tail:\n{self.log_tail()}"
                )
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise BackendUnavailableError(
            f"llama_cpp.server did not answer on {self.base_url} within "
            f"{self.startup_timeout_s:g} s; log tail:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, timeout_s: float = 10.0) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=timeout_s)
        if self._own_log:
            self.log_path.unlink(missing_ok=True)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def __enter__(self) -> LlamaCppServerProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
