"""A credential planted in each place one can come from never leaves in any output: the
command line's stdout, stderr and ``--json`` (in process, click's runner), the HTTP service's
bodies (``/health`` included) and log records, with the cluster or the LLM unreachable.

No node is needed: the cluster and the LLM are real clients pointed at a closed port
(127.0.0.1:9), so their real error messages, which name the URL they tried, are what is
masked. Where a cluster must answer, it is the in-memory double (above the engine protocol).
The MCP server's tool errors with a cluster gone are tests/e2e/test_mcp_server.py.
"""

from __future__ import annotations

import base64
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

UNIT = Path(__file__).resolve().parent
sys.path.insert(0, str(UNIT / "doubles"))
from in_memory_backend import InMemoryBackend  # noqa: E402

from sira_seek.cli.main import cli  # noqa: E402
from sira_seek.client import SiraSeek  # noqa: E402
from sira_seek.redaction import redact_log_handlers  # noqa: E402
from sira_seek.service.app import ServiceConfig, create_app  # noqa: E402
from sira_seek.service.settings import ServeSettings  # noqa: E402
from sira_seek.service.worker import build_app  # noqa: E402

CLOSED = "127.0.0.1:9"
URL_PW = "UrlPw-51ee7"
FLAG_PW = "FlagPw-8c1d2"
ENV_PW = "EnvPw-77a0f"
API_KEY = "QXBpS2V5LXNlY3JldC0zOTk="
LLM_PW = "LlmPw-0b6e1"
LLM_QKEY = "LlmQKey-c4d21"
LLM_KEY = "sk-LlmKey-9f3a"
CLOUD = "planted:" + base64.b64encode(b"localhost$CloudEs9d8e7$CloudKb1a2b3").decode()
SECRETS = (URL_PW, FLAG_PW, ENV_PW, API_KEY, LLM_PW, LLM_QKEY, LLM_KEY, CLOUD.split(":")[1])
LLM = f"openai:http://u:{LLM_PW}@{CLOSED}/v1?api_key={LLM_QKEY}#m"


def assert_clean(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} leaked in: {text[:600]}"


@pytest.fixture(autouse=True)
def _no_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """One attempt per LLM call (nothing listens); the LLM key from its variable."""
    monkeypatch.setenv("SIRA_SEEK_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("SIRA_SEEK_LLM_API_KEY", LLM_KEY)
    monkeypatch.setenv("SIRA_SEEK_LLM_CACHE", "false")


CLUSTERS = {
    "url": ["--url", f"http://elastic:{URL_PW}@{CLOSED}"],
    "password flag": ["--url", f"http://{CLOSED}", "--username", "u", "--password", FLAG_PW],
    "password variable": ["--url", f"http://{CLOSED}", "--username", "u"],
    "api key": ["--url", f"http://{CLOSED}", "--api-key", API_KEY],
    "cloud id": ["--cloud-id", CLOUD],
}


@pytest.mark.parametrize("where", CLUSTERS)
@pytest.mark.parametrize("as_json", [False, True])
def test_the_command_line_masks_every_planted_credential(
    where: str, as_json: bool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SIRA_SEEK_PASSWORD", ENV_PW)
    if where != "password variable":
        monkeypatch.delenv("SIRA_SEEK_PASSWORD")
    args = ["-v", "search", "who wrote it", "--index", "x", "--llm", LLM]
    args += CLUSTERS[where] + (["--json"] if as_json else [])
    with caplog.at_level(logging.DEBUG):
        result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert "Error: No search cluster answers" in result.stderr, result.stderr  # masked
    records = [r.getMessage() + (r.exc_text or "") for r in caplog.records]
    assert_clean(result.stdout, result.stderr, *records)


def test_the_masked_message_still_names_where_it_failed() -> None:
    url = f"http://elastic:{URL_PW}@{CLOSED}"
    result = CliRunner().invoke(cli, ["search", "q", "--index", "x", "--url", url])
    assert result.exit_code == 1
    assert f"http://***@{CLOSED}" in result.stderr


def _bodies(client: TestClient) -> list[str]:
    answers = [
        client.get("/health"),
        client.post("/search", json={"query": "Fritz Lang", "index": "idx"}),
        client.post("/ask", json={"question": "Who?", "index": "idx"}),
        client.post("/search", json={"query": "x", "index": "idx", "k": 0}),
    ]
    return [f"{a.status_code} {a.text}" for a in answers]


def test_http_bodies_and_logs_mask_the_llm_spec_with_the_llm_down(
    caplog: pytest.LogCaptureFixture,
) -> None:
    backend = InMemoryBackend({"d1": {"title": "Metropolis", "text": "A Fritz Lang film."}})
    app = create_app(lambda: SiraSeek(backend), ServiceConfig(llm=LLM, indexes=("idx",)))
    with caplog.at_level(logging.DEBUG), TestClient(app) as client:
        bodies = _bodies(client)
    health, search, ask, _ = bodies
    assert health.startswith("200") and '"llm":"openai:http://***@' in health
    assert search.startswith("503") and ask.startswith("503"), (search, ask)
    records = [r.getMessage() + (r.exc_text or "") for r in caplog.records]
    assert_clean(*bodies, *records)


@pytest.mark.parametrize("where", ["url", "password", "api key"])
def test_http_bodies_and_logs_mask_the_clusters_credentials_with_the_cluster_down(
    where: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cluster: dict[str, Any] = {
        "url": {"url": f"http://elastic:{URL_PW}@{CLOSED}"},
        "password": {"url": f"http://{CLOSED}", "username": "u", "password": FLAG_PW},
        "api key": {"url": f"http://{CLOSED}", "api_key": API_KEY},
    }[where]
    monkeypatch.setenv("SIRA_SEEK_PASSWORD", ENV_PW)
    settings = ServeSettings(cluster=cluster, service=ServiceConfig(llm=LLM, indexes=("idx",)))
    with caplog.at_level(logging.DEBUG):
        redact_log_handlers(settings.redactor())  # as the serve process does (runner, worker)
        with TestClient(build_app(settings)) as client:
            bodies = _bodies(client)
    assert all(b.startswith(("503", "422")) for b in bodies), bodies
    records = [r.getMessage() + (r.exc_text or "") for r in caplog.records]
    assert_clean(*bodies, *records)
