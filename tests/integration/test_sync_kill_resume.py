"""A `sira-sync --from-jsonl` run SIGKILLed at random points of its progress, resumed each
time, ends in the same state as an uninterrupted run on another index: nothing lost, nothing
enriched twice."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from seeds import seeded_rng

from sira_seek.backend import SearchBackend
from sira_seek.ingest import ingest_corpus

pytestmark = pytest.mark.integration

N_DOCS = 500


def sira_sync_exe() -> str:
    exe = Path(sys.executable).parent / "sira-sync"
    found = str(exe) if exe.exists() else shutil.which("sira-sync")
    if not found:
        pytest.fail("the sira-sync console script is not installed (pip install -e .)")
    return found


def prepare(wikimh_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:N_DOCS]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    records = []
    for number, line in enumerate(lines):
        doc = json.loads(line)
        records.append(
            {
                "_id": doc["_id"],
                "keywords": [f"zq{doc['_id']}", doc["title"], "film", "the"],
                "categories": [f"bucket {number % 5}"],
            }
        )
    records[111]["keywords"] = "malformed on purpose"
    jsonl = tmp_path / "enrich.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return corpus, jsonl


def sync_args(backend: SearchBackend, index: str, jsonl: Path, state: Path) -> list[str]:
    return [
        sira_sync_exe(),
        "--index", index,
        "--fields", "title,text",
        "--from-jsonl", str(jsonl),
        "--url", backend.info.url,
        "--state-dir", str(state),
        "--page-size", "5",
        "--no-progress",
    ]  # fmt: skip


def written(backend: SearchBackend, index: str) -> int:
    """Documents the sync has written so far (enriched or recorded as failed)."""
    backend.refresh(index)
    return backend.count(index, {"exists": {"field": "sira_sync.status"}})


def kill_after_more_writes(
    proc: subprocess.Popen[bytes], backend: SearchBackend, index: str, more: int
) -> bool:
    """SIGKILL ``proc`` once ``more`` more documents are written (0: at once, while it starts
    up); ``False`` when it finished first. The deadline only guards against a hang."""
    target = written(backend, index) + more
    deadline = time.monotonic() + 300
    while more and written(backend, index) < target:
        if proc.poll() is not None:
            return False
        assert time.monotonic() < deadline, "the sync stopped writing"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    return True


def enrichment_state(backend: SearchBackend, index: str) -> dict[str, Any]:
    """Per doc: source, enrichment, sync metadata without the time, and the write count."""
    backend.refresh(index)
    body = {"size": 10000, "version": True, "query": {"match_all": {}}}
    raw = backend.request("POST", f"/{index}/_search", body=body)  # type: ignore[attr-defined]
    out = {}
    for hit in raw["hits"]["hits"]:
        src = hit["_source"]
        sync = {k: v for k, v in (src.get("sira_sync") or {}).items() if k != "enriched_at"}
        out[hit["_id"]] = {
            "title": src["title"],
            "text": src["text"],
            "enrichment": src.get("sira_enrichment"),
            "sync": sync,
            "version": hit["_version"],
        }
    return out


def test_sigkill_at_random_points_then_resume_equals_uninterrupted_run(
    backend: SearchBackend, index_name: str, wikimh_dir: Path, tmp_path: Path
) -> None:
    corpus, jsonl = prepare(wikimh_dir, tmp_path)
    reference = f"{index_name}-ref"
    try:
        ingest_corpus(backend, index_name, corpus)
        ingest_corpus(backend, reference, corpus)
        done = subprocess.run(
            sync_args(backend, reference, jsonl, tmp_path / "ref-state"),
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr

        # Kill at random points of the run's progress (after a random number of documents
        # more were written, or while it starts up), resume each time, until a run is let
        # finish: all of it is one logical run. The points are counted in documents, never in
        # seconds, so a loaded machine moves them nowhere; the first two always land mid-run.
        rng = seeded_rng("kill moments")
        kills = 0
        state = tmp_path / "state"
        args = sync_args(backend, index_name, jsonl, state)
        checkpoint = state / f"{index_name}.slice0of1.checkpoint.json"
        for attempt in range(10):
            more = rng.randint(20, 120) if attempt < 2 else rng.choice([0, rng.randint(1, 60)])
            proc = subprocess.Popen(
                [*args, *(["--resume"] if attempt else [])],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            if kill_after_more_writes(proc, backend, index_name, more):
                kills += 1
                # Killed after its last checkpoint said "finished": the run was complete, and
                # another one would rightly retry the failed document.
                if checkpoint.exists() and json.loads(checkpoint.read_text())["finished"]:
                    break
                continue
            assert proc.returncode == 0
            break
        else:
            final = subprocess.run(
                [*args, "--resume"], capture_output=True, text=True, timeout=300, check=False
            )
            assert final.returncode == 0, final.stderr
        assert kills >= 2, f"only {kills} kills landed"

        got, want = enrichment_state(backend, index_name), enrichment_state(backend, reference)
        assert got.keys() == want.keys() and len(got) == N_DOCS
        diff = {i: (got[i], want[i]) for i in got if got[i] != want[i]}
        assert not diff, list(diff.items())[:3]
        assert got == want  # same enrichment, metadata and write counts as the reference
        bad = sorted(got)[111]
        assert got[bad]["enrichment"] is None and got[bad]["sync"]["status"] == "failed"
        enriched = [d for d in got.values() if d["sync"].get("status") == "enriched"]
        assert len(enriched) == N_DOCS - 1
        # one ingest + exactly one enrichment (or failure) write per document: nothing twice
        assert {d["version"] for d in got.values()} == {2}
        failures = (state / f"{index_name}.slice0of1.failures.jsonl").read_text().splitlines()
        assert {json.loads(f)["doc_id"] for f in failures if f.strip().endswith("}")} == {bad}
    finally:
        backend.delete_index(reference)
