"""Processes sira-seek starts and stops later by pid: local nodes and local LLM servers.

One liveness test and one stop sequence for both, so a node and a vLLM server are stopped the
same way: SIGTERM, a grace period, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """The process exists and is not a zombie (a dead child nobody reaped yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat_file = Path(f"/proc/{pid}/stat")
    try:
        return ") Z " not in stat_file.read_text()
    except OSError:
        return True


def terminate(pid: int, timeout_s: float = 30.0, *, group: bool = False) -> bool:
    """SIGTERM ``pid`` (its whole process group with ``group``: vLLM's engine runs in child
    processes that must not outlive its API server), SIGKILL after ``timeout_s``.

    Returns whether something was running.
    """
    if not pid_alive(pid):
        return False

    def send(sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            if group:
                try:
                    os.killpg(pid, sig)
                    return
                except PermissionError:
                    pass
            os.kill(pid, sig)

    send(signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap our own child, so it stops looking alive
        if not pid_alive(pid):
            return True
        time.sleep(0.2)
    send(signal.SIGKILL)
    return True
