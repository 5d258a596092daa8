"""``sira-seek llm down``'s stop of a recorded vLLM server (``stop_deployment``), on real
processes: a server that does not exit on SIGTERM (vLLM's HTTP server while a client waits on
an aborted request) is killed with its whole process group after the grace period, and its
record is removed."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from sira_seek.llm import vllm_server
from sira_seek.processes import pid_alive

#: A "server" that ignores SIGTERM, and a child of it in the same process group (vLLM's engine).
STUBBORN = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print(child.pid, flush=True)
time.sleep(600)
"""


@pytest.fixture
def records(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(vllm_server, "deployments_dir", lambda: tmp_path / "llm")
    return tmp_path / "llm"


def test_a_server_that_ignores_sigterm_is_killed_with_its_group_after_the_grace(
    records: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vllm_server, "STOP_GRACE_S", 0.5)  # the default path, made short
    server = subprocess.Popen(
        [sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, text=True,
        start_new_session=True,  # as `llm up` detaches it: its own process group
    )  # fmt: skip
    assert server.stdout is not None
    engine_pid = int(server.stdout.readline())
    deployment = vllm_server.VllmDeployment(
        pid=server.pid, port=8123, url="http://127.0.0.1:8123/v1",
        spec="openai:http://127.0.0.1:8123/v1#gemma3-270m", model="gemma3-270m",
        served_model_name="gemma3-270m", log="/dev/null", gpu=False,
    )  # fmt: skip
    record = vllm_server.save_deployment(deployment)
    try:
        assert vllm_server.stop_deployment(deployment) is True
        assert server.wait(timeout=10) == -9  # SIGTERM ignored: killed once the grace ended
        assert not record.exists()
        assert _ends(engine_pid), "the engine process outlived its server"
    finally:
        if server.poll() is None:
            server.kill()


def _ends(pid: int, within_s: float = 10.0) -> bool:
    """Whether ``pid`` is gone or a zombie (killed; its parent is gone, so init reaps it)
    within ``within_s``: a SIGKILLed process takes a moment to exit."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].startswith("Z"):
                return True
        except (OSError, IndexError):
            return True
        time.sleep(0.05)
    return False
