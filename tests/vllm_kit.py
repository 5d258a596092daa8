"""A real vLLM OpenAI server for the test session: the production serving path, exercised.

``vllm_server`` yields a ``VllmEndpoint`` (its ``spec`` is what ``--llm`` takes). Order of
preference:

1. ``SIRA_SEEK_TEST_VLLM_URL=openai:http://host:port/v1#model`` reuses a server someone else
   runs (development against a shared server; never stopped by the suite);
2. a server already answering on ``SIRA_SEEK_TEST_VLLM_PORT`` (default 8021) with the default
   model: one an earlier session kept with ``SIRA_SEEK_TEST_KEEP_NODES=1``;
3. otherwise ONE server with the packaged Gemma 3 270M (converted once from its GGUF, cached),
   started on that port by ``sira-seek llm up`` as a user would and stopped at session end by
   ``sira-seek llm down`` unless ``SIRA_SEEK_TEST_KEEP_NODES=1``. The `llm up` fault test
   (tests/faults/test_vllm_faults.py, marked ``stops_session_vllm`` and so run last) checks
   that record and stops this server mid-sync, instead of paying for a second vLLM start.

vLLM missing (`sira-seek llm install vllm` not run) or a server that cannot start fails the suite:
these tests are the evidence that the vLLM path works, so they never skip.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from sira_seek.llm.errors import BackendUnavailableError
from sira_seek.llm.spec import OpenAIBackendSpec, parse_backend_spec
from sira_seek.llm.vllm_server import DEFAULT_SERVED_NAME

logger = logging.getLogger(__name__)

VLLM_URL_ENV = "SIRA_SEEK_TEST_VLLM_URL"
VLLM_PORT_ENV = "SIRA_SEEK_TEST_VLLM_PORT"
DEFAULT_TEST_PORT = 8021
#: The context the suite's own server is started with; the too-long fault row relies on it.
TEST_MAX_MODEL_LEN = 2048
#: Generous client timeouts: on a loaded 2-core machine vLLM answers a few tokens a second.
SLOW_SERVER_ENV = {
    "SIRA_SEEK_LLM_READ_TIMEOUT_S": "600",
    "SIRA_SEEK_LLM_TOTAL_TIMEOUT_S": "900",
}


@dataclass(frozen=True)
class VllmEndpoint:
    """One running vLLM OpenAI server, as the tests see it."""

    spec: str
    base_url: str
    model: str
    max_model_len: int
    owned: bool
    #: ``sira-seek llm up --json``'s record when this session started the server through the
    #: command; None for a server someone else runs (then no test may stop it).
    up_record: dict[str, Any] | None = None

    @property
    def spec_without_model(self) -> str:
        """The spec with no ``#MODEL``: the client must read the name from ``/v1/models``."""
        return f"openai:{self.base_url}"


def served_models(base_url: str, timeout_s: float = 5.0) -> list[dict[str, object]]:
    """``GET /v1/models``'s ``data`` list; empty when nothing answers there."""
    try:
        response = httpx.get(f"{base_url.rstrip('/')}/models", timeout=timeout_s)
    except httpx.HTTPError:
        return []
    if response.status_code != 200:
        return []
    data = response.json().get("data", [])
    return [m for m in data if isinstance(m, dict)]


def endpoint_from_spec(spec: str, *, owned: bool) -> VllmEndpoint:
    """Describe the server behind an ``openai:`` spec, checking that it is vLLM and answers."""
    parsed = parse_backend_spec(spec)
    if not isinstance(parsed, OpenAIBackendSpec) or len(parsed.endpoints) != 1:
        raise ValueError(f"{VLLM_URL_ENV} must be one openai:URL#MODEL endpoint, got {spec!r}")
    base_url = parsed.endpoints[0]
    models = served_models(base_url)
    if not models:
        raise BackendUnavailableError(f"no OpenAI server answers /models at {base_url}")
    model = parsed.model or str(models[0]["id"])
    listed = next((m for m in models if m.get("id") == model), None)
    if listed is None:
        raise BackendUnavailableError(f"{base_url} does not serve {model!r}: {models}")
    if listed.get("owned_by") != "vllm":
        raise BackendUnavailableError(
            f"{base_url} is not a vLLM server (owned_by={listed.get('owned_by')!r})"
        )
    max_len = int(str(listed.get("max_model_len") or TEST_MAX_MODEL_LEN))
    return VllmEndpoint(
        spec=f"openai:{base_url}#{model}",
        base_url=base_url,
        model=model,
        max_model_len=max_len,
        owned=owned,
    )


def sira_seek_command(*args: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """The installed ``sira-seek`` command, as a user runs it."""
    exe = Path(sys.executable).parent / "sira-seek"
    return subprocess.run(
        [str(exe), *args], capture_output=True, text=True, timeout=timeout_s, check=False
    )


def _up_command(port: int) -> list[str]:
    return [
        str(Path(sys.executable).parent / "sira-seek"), "llm", "up", "--port", str(port),
        "--max-model-len", str(TEST_MAX_MODEL_LEN),
        # 1 GiB holds ~29k tokens of this model's KV cache, plenty for the suite's 8 in flight;
        # the default 2 GiB would only add to the peak memory of a suite that runs nodes too.
        "--kv-cache-gib", "1", "--startup-timeout", "1200", "--json",
    ]  # fmt: skip


def _spawn_up(port: int) -> subprocess.Popen[str]:
    logger.warning("starting vLLM for the test session on port %d (sira-seek llm up)", port)
    return subprocess.Popen(
        _up_command(port), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


#: The session's `sira-seek llm up`, begun in the background as soon as collection shows that a
#: test will need the server (``begin_session_server``); the fixture waits for it.
_starting: subprocess.Popen[str] | None = None


def session_port() -> int:
    return int(os.environ.get(VLLM_PORT_ENV, DEFAULT_TEST_PORT))


def begin_session_server(items: list[pytest.Item]) -> None:
    """Start `sira-seek llm up` in the background when a collected test uses ``vllm_server``
    and the fixture will start one (no server given or already answering). vLLM takes about a
    minute to start on 2 cores, much of it one interpreter importing and loading on one core:
    the tests before the first vLLM test run meanwhile instead of waiting for it."""
    global _starting
    if _starting is not None or os.environ.get(VLLM_URL_ENV):
        return
    if not any("vllm_server" in getattr(item, "fixturenames", ()) for item in items):
        return
    port = session_port()
    if served_models(f"http://127.0.0.1:{port}/v1", timeout_s=2.0):
        return
    _starting = _spawn_up(port)


def start_session_server(port: int) -> dict[str, Any]:
    """ONE vLLM server with the packaged Gemma 3 270M, started as a user starts one:
    ``sira-seek llm up --json`` (detached; about a minute on 2 cores, ~8 GB RAM), or the one
    ``begin_session_server`` began. Its record (pid, port, spec, status) is what the `llm up`
    fault test checks."""
    global _starting
    proc, _starting = _starting, None
    if proc is None:
        proc = _spawn_up(port)
    try:
        out, err = proc.communicate(timeout=1500)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise BackendUnavailableError("sira-seek llm up did not finish in 1500 s") from None
    if proc.returncode != 0:  # e.g. "run sira-seek llm install vllm"
        raise BackendUnavailableError(f"sira-seek llm up exited {proc.returncode}: {err}")
    record: dict[str, Any] = json.loads(out)
    return record


def abandon_session_server() -> None:
    """At session end: a server begun in the background that no test asked for (the session
    stopped early, or every vLLM test was deselected) is waited for and stopped."""
    global _starting
    proc, _starting = _starting, None
    if proc is None:
        return
    try:
        proc.communicate(timeout=1500)
    finally:
        stop_session_server(session_port())


def stop_session_server(port: int) -> None:
    """``sira-seek llm down --port``: a no-op when a test already stopped it."""
    done = sira_seek_command("llm", "down", "--port", str(port), timeout_s=120)
    if done.returncode != 0:
        logger.warning("sira-seek llm down --port %d exited %d: %s", port, done.returncode,
                       done.stderr[-2000:])  # fmt: skip


@pytest.fixture(scope="session")
def vllm_server() -> Iterator[VllmEndpoint]:
    """The session's real vLLM server (see the module docstring for where it comes from)."""
    reuse = os.environ.get(VLLM_URL_ENV)
    if reuse:
        try:
            endpoint = endpoint_from_spec(reuse, owned=False)
        except (BackendUnavailableError, ValueError) as exc:
            pytest.fail(f"{VLLM_URL_ENV}={reuse}: {exc}", pytrace=False)
        yield endpoint
        return
    port = session_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    if _starting is None and any(
        m.get("id") == DEFAULT_SERVED_NAME for m in served_models(base_url)
    ):
        yield endpoint_from_spec(f"openai:{base_url}#{DEFAULT_SERVED_NAME}", owned=False)
        return
    try:
        record = start_session_server(port)
    except BackendUnavailableError as exc:  # the suite must fail loudly, never skip
        pytest.fail(f"could not start a real vLLM server: {exc}", pytrace=False)
    try:
        yield replace(endpoint_from_spec(str(record["spec"]), owned=True), up_record=record)
    finally:
        if os.environ.get("SIRA_SEEK_TEST_KEEP_NODES") == "1":
            print(f"\nvLLM kept running for later sessions: {record['spec']}")
        else:
            stop_session_server(port)
