"""sira-sync with the embedded CPU model (Gemma 3 270M through llama.cpp) on a slice of wikimh:
documents get enriched (or their malformed answers recorded), a re-run asks the model nothing,
editing 2 documents re-enriches exactly those, source fields stay byte-identical, and
--estimate measures a sample. Missing llama-cpp-python or the model fails, never skips.

Every document of the slice is one real model call (several seconds each on 2 cores), so the
slice is small: 4 of the first 40 paragraphs, 2 of them edited."""

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
from sira_seek.sync.slicing import SliceSpec

pytestmark = pytest.mark.integration


def sira_sync(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "sira-sync"
    found = str(exe) if exe.exists() else shutil.which("sira-sync")
    assert found, "the sira-sync console script is not installed (pip install -e .)"
    return subprocess.run(
        [found, *args], capture_output=True, text=True, timeout=900, check=False,
        env={**os.environ, **env},
    )  # fmt: skip


def sources(backend: SearchBackend, index: str) -> dict[str, dict[str, object]]:
    return {h.id: h.source or {} for page in backend.scan(index, page_size=500) for h in page}


def test_cpu_llm_enriches_a_slice_rerun_asks_nothing_and_edits_redo_exactly_those(
    backends: dict[str, SearchBackend], wikimh_dir: Path, tmp_path: Path
) -> None:
    if not llama_cpp_available():
        pytest.fail("llama-cpp-python is not installed: run sira-seek llm install cpu")
    backend = backends["opensearch"]
    index = f"test-sync-llm-{uuid.uuid4().hex[:8]}"
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    original = {json.loads(line)["_id"]: json.loads(line) for line in lines}
    in_slice = sorted(i for i in original if SliceSpec(index=0, count=8).owns(i))
    assert len(in_slice) == 4  # the slice is a stable hash of _id
    env = {"SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "llm-cache")}
    args = [
        "--index", index, "--llm", "llamacpp:gemma3-270m", "--slice", "0/8",
        "--text-budget", "600", "--url", backend.info.url, "--state-dir", str(tmp_path / "s"),
        "--no-progress", "--json",
    ]  # fmt: skip
    try:
        ingest_corpus(backend, index, corpus)
        first = sira_sync(*args, env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        report = json.loads(first.stdout)
        counts = report["counts"]
        print("first run:", {k: v for k, v in counts.items() if v})
        assert counts["seen"] == counts["new"] == len(in_slice)
        assert counts["enriched"] + counts["failed"] == counts["seen"]
        assert counts["enriched"] >= 1 and counts["completion_tokens"] > 0
        assert report["fingerprint"]["model"].startswith("llamacpp:")
        assert report["fingerprint"]["prompt_id"] == "sira-doc-v1-completion-600c"
        assert report["llm_usage"]["calls"] == counts["seen"]
        backend.refresh(index)
        after_first = sources(backend, index)
        touched = {i for i, src in after_first.items() if "sira_sync" in src}
        assert touched == set(in_slice)  # the slice, and only the slice
        for doc_id in in_slice:
            enrichment = after_first[doc_id].get("sira_enrichment") or {}
            assert len(enrichment.get("phrases") or []) <= 10

        again = sira_sync(*args, env=env)
        assert again.returncode == 0, again.stderr[-2000:]
        second = json.loads(again.stdout)
        assert second["counts"]["enriched"] == 0
        assert second["counts"]["current"] == counts["enriched"]
        # only documents whose answer failed are asked again
        assert (second["llm_usage"] or {}).get("calls", 0) == counts["failed"]
        backend.refresh(index)
        after_second = sources(backend, index)
        edited = in_slice[:2]
        still_failed = {
            i for i in in_slice[len(edited) :] if after_second[i]["sira_sync"]["status"] == "failed"
        }

        backend.bulk_upsert(
            index, ({"_id": i, "text": original[i]["text"] + " Edited."} for i in edited)
        )
        backend.refresh(index)
        third = json.loads(sira_sync(*args, env=env).stdout)
        assert third["counts"]["changed"] == len(edited)
        assert third["llm_usage"]["calls"] == len(edited) + len(still_failed)
        backend.refresh(index)
        final = sources(backend, index)
        redone = {i for i in in_slice if final[i]["sira_sync"] != after_second[i]["sira_sync"]}
        assert set(edited) <= redone <= set(edited) | still_failed
        # Source fields byte-identical over every document (the edits as the user made them).
        assert final.keys() == original.keys()
        for doc_id, doc in original.items():
            text = doc["text"] + (" Edited." if doc_id in edited else "")
            assert (final[doc_id]["title"], final[doc_id]["text"]) == (doc["title"], text)

        estimate = sira_sync(*args[:-1], "--slice", "1/10", "--estimate", "--sample", "1",
                             "--json", env=env)  # fmt: skip
        assert estimate.returncode == 0, estimate.stderr[-2000:]
        est = json.loads(estimate.stdout)
        assert est["sample_docs"] == 1 and est["docs_to_enrich"] >= 1
        assert est["expected_seconds"] > 0 and est["expected_completion_tokens"] > 0
    finally:
        backend.delete_index(index)
