"""sira-sync while its LLM server misbehaves: 429s, 500s, garbage, truncated JSON, answers
slower than the read timeout. The server is a scripted OpenAI-compatible stub (the faults
must be exact); the cluster is real. Nothing malformed is ever written; a follow-up run
enriches whatever the faults left out. The faults are the LLM's; the writes they lead to are
the same ones tests/faults/test_sync_faults.py puts through both engines, so these run on one
(tests/engine_matrix.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_matrix import ONE_ENGINE
from fault_kit import FaultScenario, run_sync, sira_sync_exe, wait_until_sync_writes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "llm"))
from stub_openai_server import StubOpenAIServer, StubReply  # noqa: E402

pytestmark = [pytest.mark.integration, ONE_ENGINE]

GOOD = json.dumps({"keywords": ["alpha beta", "gamma"]})
GOOD_PHRASES = {"alpha beta", "gamma"}


def llm_sync_cmd(scenario: FaultScenario, llm_url: str, *extra: str) -> list[str]:
    """sira-sync with its phrases from the stub LLM server at ``llm_url``."""
    return [
        sira_sync_exe(), "--index", scenario.index, "--llm", f"openai:{llm_url}#stub-model",
        "--url", scenario.backend.info.url, "--state-dir", str(scenario.state_dir), *extra,
    ]  # fmt: skip


def test_llm_429_500_garbage_and_hangs(fault_scenario: FaultScenario) -> None:
    _, docs = fault_scenario.ingest(40)
    script = [
        StubReply(
            status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "0"}
        ),
        StubReply(status=500, body={"error": {"message": "boom"}}),
        StubReply(text="this is not JSON at all"),
        StubReply(text='{"keywords": ["unfinished'),
        StubReply(text=GOOD, delay_s=3.0),  # slower than the read timeout below
        StubReply(status=503, body={"error": {"message": "overloaded"}}),
    ] * 4
    env = {
        **os.environ,
        "SIRA_SEEK_LLM_READ_TIMEOUT_S": "1.5",
        "SIRA_SEEK_LLM_MAX_RETRIES": "2",
        "SIRA_SEEK_LLM_CACHE_DIR": str(fault_scenario.tmp / "cache"),
    }
    with StubOpenAIServer(script, default=StubReply(text=GOOD)) as stub:
        cmd = llm_sync_cmd(
            fault_scenario, stub.base_url, "--concurrency", "4", "--no-progress", "--json"
        )
        first = run_sync(cmd, timeout=600, env=env)
        assert "Traceback" not in first.stderr, first.stderr[-1500:]
        assert first.returncode == 0, first.stderr[-1500:]
        counts = json.loads(first.stdout)["counts"]
        # every document either got enriched or was recorded as failed; none half-written
        assert counts["enriched"] + counts["failed"] == counts["seen"] == 40
        assert not stub.script, "every scripted fault was served"
        second = run_sync(cmd, timeout=600, env=env)
        assert second.returncode == 0, second.stderr[-1500:]
    row = fault_scenario.audit_and_record(
        "LLM 429/500/503, garbage, hangs during sync", 2, docs, allowed=GOOD_PHRASES, max_version=3
    )
    assert row.damage == (0, 0, 0)


def test_llm_server_dies_mid_run(fault_scenario: FaultScenario) -> None:
    """The LLM server disappears while sync runs; the run ends without writing anything
    half, and a later run against a live server completes the index."""
    backend, index_name = fault_scenario.backend, fault_scenario.index
    _, docs = fault_scenario.ingest(60)
    env = {
        **os.environ,
        "SIRA_SEEK_LLM_MAX_RETRIES": "1",
        "SIRA_SEEK_LLM_CONNECT_TIMEOUT_S": "1",
        "SIRA_SEEK_LLM_CACHE_DIR": str(fault_scenario.tmp / "cache"),
    }

    def cmd(url: str) -> list[str]:
        return llm_sync_cmd(
            fault_scenario, url, "--concurrency", "2", "--page-size", "4", "--no-progress"
        )

    stub = StubOpenAIServer(default=StubReply(text=GOOD, delay_s=0.05)).start()
    proc = subprocess.Popen(
        cmd(stub.base_url), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    wait_until_sync_writes(backend, index_name, proc)
    stub.stop()  # the LLM server dies
    out, err = proc.communicate(timeout=300)
    assert "Traceback" not in err, err[-1500:]
    # An unreachable LLM stops the run (LLMUnavailableError: resumable later) with exit 1 and
    # one line naming the server; it must not carry on marking every document as failed and
    # exit 0, nor exit 3, which the docs (exit codes) reserve for writes the cluster refused.
    assert proc.returncode == 1, (out[-800:], err[-1500:])
    assert "the LLM cannot answer (unreachable)" in err, err[-1500:]
    assert stub.base_url.split("/v1")[0] in err, err[-1500:]
    backend.refresh(index_name)
    enriched = backend.count(index_name, {"term": {"sira_sync.status": "enriched"}})
    assert enriched < len(docs), "the server died before the run could finish"
    with StubOpenAIServer(default=StubReply(text=GOOD)) as revived:
        again = run_sync(cmd(revived.base_url), env=env)
        assert again.returncode == 0, again.stderr[-1500:]
    row = fault_scenario.audit_and_record(
        "LLM server dies mid-sync, later run completes",
        2,
        docs,
        allowed=GOOD_PHRASES,
        max_version=3,
    )
    assert row.damage == (0, 0, 0)
