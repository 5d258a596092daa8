"""An OpenAI-compatible LLM server run as a child process on this machine.

Both local servers sira-seek starts (llama.cpp's and vLLM's) share one lifecycle: start on a
127.0.0.1 port, wait until ``/v1/models`` answers (or the process dies: then its log tail is the
error), stop with SIGTERM then SIGKILL to its whole process group (vLLM runs its engine in child
processes). Every server gets its own session, so the group is its own and a detached server
(``sira-seek llm up``) outlives the command that started it; ``stop_pid`` stops such a server
later from its recorded pid.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from abc import ABC, abstractmethod
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx

from sira_seek.llm.errors import BackendUnavailableError
from sira_seek.processes import pid_alive, terminate

__all__ = ["LocalOpenAIServer", "free_local_port", "pid_alive", "stop_pid"]


def free_local_port() -> int:
    """A port that was free a moment ago on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_pid(pid: int, timeout_s: float = 20.0) -> bool:
    """Stop a server's whole process group (its engine processes too); see ``terminate``."""
    return terminate(pid, timeout_s, group=True)


class LocalOpenAIServer(ABC):
    """One OpenAI-compatible server process; use as a context manager or start/stop."""

    #: Shown in errors ("vllm exited with code 1 ...").
    server_name = "server"

    def __init__(
        self,
        *,
        served_model_name: str,
        port: int | None = None,
        python: str = sys.executable,
        startup_timeout_s: float = 120.0,
        log_path: Path | str | None = None,
        extra_args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        self.model_alias = served_model_name
        self.port = port or free_local_port()
        self.python = python
        self.startup_timeout_s = startup_timeout_s
        # A log we created ourselves is removed on stop; a caller-chosen one is kept.
        self._own_log = log_path is None
        if log_path is None:
            fd, log_path = tempfile.mkstemp(prefix=f"{self.server_name}-", suffix=".log")
            os.close(fd)
        self.log_path = Path(log_path)
        self.extra_args = extra_args
        self.env = env or {}
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """OpenAI base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def spec(self) -> str:
        """The ``--llm`` spec that reaches this server."""
        return f"openai:{self.base_url}#{self.model_alias}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @abstractmethod
    def command(self) -> list[str]:
        """The server's command line."""

    def check(self) -> None:
        """Raise ``BackendUnavailableError`` before starting when something is missing."""
        if shutil.which(self.python) is None:
            raise BackendUnavailableError(
                f"{self.server_name}: the Python {self.python} to run it does not exist"
            )

    def start(self) -> Self:
        if self._process is not None:
            return self
        self.check()
        log = self.log_path.open("wb")
        try:
            self._process = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **self.env},
                start_new_session=True,
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
                    f"{self.server_name} exited with code {self._process.returncode} before it "
                    f"was ready; log tail:\n{self.log_tail()}"
                )
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise BackendUnavailableError(
            f"{self.server_name} did not answer on {self.base_url} within "
            f"{self.startup_timeout_s:g} s; log tail:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def detach(self) -> int:
        """Forget the process without stopping it (it keeps serving); returns its pid."""
        process, self._process = self._process, None
        if process is None:
            raise RuntimeError(f"{self.server_name} was not started")
        self._own_log = False
        return process.pid

    def stop(self, timeout_s: float = 20.0) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            stop_pid(process.pid, timeout_s)
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

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
