"""sira-sync with the embedded CPU model (Gemma 3 270M through llama.cpp) on a slice of wikimh:
documents get enriched (or their malformed answers recorded), a re-run asks the model nothing,
and --estimate measures a sample. Missing llama-cpp-python or the model fails, never skips."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.ingest import ingest_corpus
from sira_seek.llm.llamacpp_inprocess import llama_cpp_available

pytestmark = pytest.mark.integration


def sira_sync(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "sira-sync"
    found = str(exe) if exe.exists() else shutil.which("sira-sync")
    assert found, "the sira-sync console script is not installed (pip install -e .)"
    return subprocess.run(
        [found, *args], capture_output=True, text=True, timeout=900, check=False,
        env={**os.environ, **env},
    )  # fmt: skip


def test_cpu_llm_enriches_a_slice_and_rerun_asks_nothing(
    backends: dict[str, SearchBackend], wikimh_dir: Path, tmp_path: Path
) -> None:
    if not llama_cpp_available():
        pytest.fail("llama-cpp-python is not installed: run scripts/install_cpu_llm.sh")
    backend = backends["opensearch"]
    index = f"test-sync-llm-{uuid.uuid4().hex[:8]}"
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {"SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "llm-cache")}
    args = [
        "--index", index, "--llm", "llamacpp:gemma3-270m", "--slice", "0/10",
        "--text-budget", "600", "--url", backend.info.url, "--state-dir", str(tmp_path / "s"),
        "--no-progress", "--json",
    ]  # fmt: skip
    try:
        ingest_corpus(backend, index, corpus)
        first = sira_sync(*args, env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        report = json.loads(first.stdout)
        counts = report["counts"]
        assert counts["seen"] >= 2 and counts["new"] == counts["seen"]
        assert counts["enriched"] + counts["failed"] == counts["seen"]
        assert counts["enriched"] >= 1 and counts["completion_tokens"] > 0
        assert report["fingerprint"]["model"].startswith("llamacpp:")
        assert report["fingerprint"]["prompt_id"] == "sira-doc-v1-completion-600c"
        assert report["llm_usage"]["calls"] == counts["seen"]
        backend.refresh(index)
        enriched = backend.search(
            index, {"query": {"term": {"sira_sync.status": "enriched"}}, "size": 50}
        )
        for hit in enriched.hits:
            phrases = (hit.source or {})["sira_enrichment"]["phrases"]
            assert isinstance(phrases, list) and len(phrases) <= 10

        again = sira_sync(*args, env=env)
        assert again.returncode == 0, again.stderr[-2000:]
        second = json.loads(again.stdout)
        assert second["counts"]["enriched"] == 0
        assert second["counts"]["current"] == counts["enriched"]
        # only documents whose answer failed are asked again
        assert (second["llm_usage"] or {}).get("calls", 0) == counts["failed"]

        estimate = sira_sync(*args[:-1], "--slice", "1/10", "--estimate", "--sample", "1",
                             "--json", env=env)  # fmt: skip
        assert estimate.returncode == 0, estimate.stderr[-2000:]
        est = json.loads(estimate.stdout)
        assert est["sample_docs"] == 1 and est["docs_to_enrich"] >= 1
        assert est["expected_seconds"] > 0 and est["expected_completion_tokens"] > 0
    finally:
        backend.delete_index(index)
