"""sira-sync while its LLM server misbehaves: 429s, 500s, garbage, truncated JSON, answers
slower than the read timeout. The server is a scripted OpenAI-compatible stub (the faults
must be exact); the cluster is real. Nothing malformed is ever written; a follow-up run
enriches whatever the faults left out."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from fault_kit import (
    FaultLedger,
    FaultRow,
    audit,
    corpus_and_enrichments,
    sira_sync_exe,
    wait_until_sync_writes,
)

from sira_seek.backend import SearchBackend
from sira_seek.ingest import ingest_corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "llm"))
from stub_openai_server import StubOpenAIServer, StubReply  # noqa: E402

pytestmark = pytest.mark.integration

GOOD = json.dumps({"keywords": ["alpha beta", "gamma"]})


def test_llm_429_500_garbage_and_hangs(
    backend: SearchBackend,
    engine: str,
    index_name: str,
    wikimh_dir: Path,
    tmp_path: Path,
    fault_ledger: FaultLedger,
) -> None:
    import subprocess

    started = time.monotonic()
    corpus, _, docs = corpus_and_enrichments(wikimh_dir, tmp_path, 40)
    ingest_corpus(backend, index_name, corpus)
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
        "SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "cache"),
    }
    with StubOpenAIServer(script, default=StubReply(text=GOOD)) as stub:
        cmd = [
            sira_sync_exe(),
            "--index",
            index_name,
            "--llm",
            f"openai:{stub.base_url}#stub-model",
            "--url",
            backend.info.url,
            "--state-dir",
            str(tmp_path / "state"),
            "--concurrency",
            "4",
            "--no-progress",
            "--json",
        ]
        first = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=600, check=False
        )
        assert "Traceback" not in first.stderr, first.stderr[-1500:]
        assert first.returncode == 0, first.stderr[-1500:]
        counts = json.loads(first.stdout)["counts"]
        # every document either got enriched or was recorded as failed; none half-written
        assert counts["enriched"] + counts["failed"] == counts["seen"] == 40
        assert not stub.script, "every scripted fault was served"
        second = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=600, check=False
        )
        assert second.returncode == 0, second.stderr[-1500:]
    checked, lost, dup, bad = audit(
        backend, index_name, docs, allowed={"alpha beta", "gamma"}, max_version=3
    )
    fault_ledger.record(
        FaultRow(
            f"LLM 429/500/503, garbage, hangs during sync [{engine}]",
            2,
            checked,
            lost,
            dup,
            bad,
            time.monotonic() - started,
        )
    )
    assert (lost, dup, bad) == (0, 0, 0)


def test_llm_server_dies_mid_run(
    backend: SearchBackend,
    engine: str,
    index_name: str,
    wikimh_dir: Path,
    tmp_path: Path,
    fault_ledger: FaultLedger,
) -> None:
    """The LLM server disappears while sync runs; the run ends without writing anything
    half, and a later run against a live server completes the index."""
    import subprocess

    started = time.monotonic()
    corpus, _, docs = corpus_and_enrichments(wikimh_dir, tmp_path, 60)
    ingest_corpus(backend, index_name, corpus)
    env = {
        **os.environ,
        "SIRA_SEEK_LLM_MAX_RETRIES": "1",
        "SIRA_SEEK_LLM_CONNECT_TIMEOUT_S": "1",
        "SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "cache"),
    }

    def cmd(url: str, *extra: str) -> list[str]:
        return [
            sira_sync_exe(),
            "--index",
            index_name,
            "--llm",
            f"openai:{url}#stub-model",
            "--url",
            backend.info.url,
            "--state-dir",
            str(tmp_path / "state"),
            "--concurrency",
            "2",
            "--page-size",
            "4",
            "--no-progress",
            *extra,
        ]

    stub = StubOpenAIServer(default=StubReply(text=GOOD, delay_s=0.05)).start()
    proc = subprocess.Popen(
        cmd(stub.base_url), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    wait_until_sync_writes(backend, index_name, proc)
    stub.stop()  # the LLM server dies
    out, err = proc.communicate(timeout=300)
    assert "Traceback" not in err, err[-1500:]
    backend.refresh(index_name)
    enriched = backend.count(index_name, {"term": {"sira_sync.status": "enriched"}})
    assert enriched < len(docs), "the server died before the run could finish"
    with StubOpenAIServer(default=StubReply(text=GOOD)) as revived:
        again = subprocess.run(
            cmd(revived.base_url), capture_output=True, text=True, env=env, timeout=300, check=False
        )
        assert again.returncode == 0, again.stderr[-1500:]
    checked, lost, dup, bad = audit(
        backend, index_name, docs, allowed={"alpha beta", "gamma"}, max_version=3
    )
    fault_ledger.record(
        FaultRow(
            f"LLM server dies mid-sync, later run completes [{engine}]",
            2,
            checked,
            lost,
            dup,
            bad,
            time.monotonic() - started,
        )
    )
    assert (lost, dup, bad) == (0, 0, 0)
