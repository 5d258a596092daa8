"""sira-sync under faults: killed, blocked by a flood-stage index block, raced by another
writer. Each scenario ends with an audit of every document (the kill scenario: a comparison
with an uninterrupted run); all counts must be zero."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from typing import Any

import pytest
from fault_kit import (
    FaultRow,
    FaultScenario,
    corpus_and_enrichments,
    run_sync,
    sync_cmd,
    wait_until_sync_writes,
)
from seeds import seeded_rng

from sira_seek.backend import PartialUpdate, SearchBackend
from sira_seek.esplugin.engines.base import RestBackend
from sira_seek.ingest import ingest_corpus

pytestmark = pytest.mark.integration

N = 300
# The SIGKILL scenario: its first two kills come after up to 120 more documents each, so both
# land mid-run on 300 documents too (the scenario had 500 before; 300 is the other scenarios' N).
N_KILL = 300


def _written(backend: SearchBackend, index: str) -> int:
    backend.refresh(index)
    return backend.count(index, {"exists": {"field": "sira_sync.status"}})


def _kill_after_more_writes(
    proc: subprocess.Popen[bytes], backend: SearchBackend, index: str, more: int
) -> bool:
    """SIGKILL ``proc`` once ``more`` more documents are written (0: at once, while it starts
    up); ``False`` when it finished first. The deadline only guards against a hang."""
    target = _written(backend, index) + more
    deadline = time.monotonic() + 300
    while more and _written(backend, index) < target:
        if proc.poll() is not None:
            return False
        assert time.monotonic() < deadline, "the sync stopped writing"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    return True


def _enrichment_state(backend: SearchBackend, index: str) -> dict[str, Any]:
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


def _damage(got: dict[str, Any], want: dict[str, Any]) -> tuple[int, int, int]:
    """(lost, duplicated, corrupted) of ``got`` against the uninterrupted run's ``want``: lost,
    missing or not enriched where that run enriched; duplicated, written more times; corrupted,
    any other difference, or a document that run does not have."""
    lost = duplicated = corrupted = 0
    for doc_id, w in want.items():
        g = got.get(doc_id)
        if g is None or (w["enrichment"] and not g["enrichment"]):
            lost += 1
        elif g["version"] > w["version"]:
            duplicated += 1
        elif g != w:
            corrupted += 1
    return lost, duplicated, corrupted + len(got.keys() - want.keys())


def test_sigkill_at_random_points_then_resume_equals_uninterrupted_run(
    fault_scenario: FaultScenario,
) -> None:
    """SIGKILLs at random points of a run's progress, each run resumed, until one is let finish:
    the index ends exactly as after an uninterrupted run on another index (same enrichment,
    metadata and write count per document), one malformed record recorded once. This one
    scenario holds what two did before (3 SIGKILLs on pages of 2 with an audit, 17 s on both
    engines here; and this comparison, then in tests/integration/test_sync_kill_resume.py,
    36 s): the comparison with the uninterrupted run is the stronger check of the two."""
    backend, index_name = fault_scenario.backend, fault_scenario.index
    tmp = fault_scenario.tmp
    corpus, jsonl, docs = corpus_and_enrichments(fault_scenario.wikimh_dir, tmp, N_KILL)
    records: list[dict[str, Any]] = [
        {
            "_id": doc_id,
            "keywords": [f"zq{doc_id}", doc["title"], "film", "the"],
            "categories": [f"bucket {number % 5}"],
        }
        for number, (doc_id, doc) in enumerate(docs.items())
    ]
    records[111]["keywords"] = "malformed on purpose"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    reference = f"{index_name}-ref"
    try:
        ingest_corpus(backend, index_name, corpus)
        ingest_corpus(backend, reference, corpus)
        done = run_sync(sync_cmd(backend, reference, jsonl, tmp / "ref-state", "--page-size", "5"))
        assert done.returncode == 0, done.stderr

        # Kill at random points of the run's progress (after a random number of documents
        # more were written, or while it starts up), resume each time, until a run is let
        # finish: all of it is one logical run. The points are counted in documents, never in
        # seconds, so a loaded machine moves them nowhere; the first two always land mid-run.
        rng = seeded_rng("kill moments")
        kills = runs = 0
        args = fault_scenario.sync_cmd(jsonl, "--page-size", "5")
        checkpoint = fault_scenario.state_dir / f"{index_name}.slice0of1.checkpoint.json"
        for attempt in range(10):
            more = rng.randint(20, 120) if attempt < 2 else rng.choice([0, rng.randint(1, 60)])
            proc = subprocess.Popen(
                [*args, *(["--resume"] if attempt else [])],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            runs += 1
            if _kill_after_more_writes(proc, backend, index_name, more):
                kills += 1
                # Killed after its last checkpoint said "finished": the run was complete, and
                # another one would rightly retry the failed document.
                if checkpoint.exists() and json.loads(checkpoint.read_text())["finished"]:
                    break
                continue
            assert proc.returncode == 0
            break
        else:
            final = run_sync([*args, "--resume"])
            runs += 1
            assert final.returncode == 0, final.stderr
        assert kills >= 2, f"only {kills} kills landed"

        got = _enrichment_state(backend, index_name)
        want = _enrichment_state(backend, reference)
        lost, dup, bad = _damage(got, want)
        wall_s = time.monotonic() - fault_scenario.started
        title = f"sync killed (SIGKILL x{kills}) at random points and resumed"
        row = fault_scenario.ledger.record(
            FaultRow(f"{title} [{fault_scenario.engine}]", runs, len(want), lost, dup, bad, wall_s)
        )
        assert row.damage == (0, 0, 0)
        assert got.keys() == want.keys() and len(got) == N_KILL
        diff = {i: (got[i], want[i]) for i in got if got[i] != want[i]}
        assert not diff, list(diff.items())[:3]
        assert got == want  # same enrichment, metadata and write counts as the reference
        malformed = sorted(got)[111]
        assert got[malformed]["enrichment"] is None
        assert got[malformed]["sync"]["status"] == "failed"
        enriched = [d for d in got.values() if d["sync"].get("status") == "enriched"]
        assert len(enriched) == N_KILL - 1
        # one ingest + exactly one enrichment (or failure) write per document: nothing twice
        assert {d["version"] for d in got.values()} == {2}
        failures = fault_scenario.state_dir / f"{index_name}.slice0of1.failures.jsonl"
        lines = failures.read_text().splitlines()
        assert {json.loads(f)["doc_id"] for f in lines if f.strip().endswith("}")} == {malformed}
    finally:
        backend.delete_index(reference)


def test_flood_stage_block_then_resume(fault_scenario: FaultScenario) -> None:
    """The cluster's disk-full block (read_only_allow_delete) makes the run stop with a clear
    error and write nothing half; after the block is lifted, --resume completes."""
    backend, index_name = fault_scenario.backend, fault_scenario.index
    assert isinstance(backend, RestBackend)
    jsonl, docs = fault_scenario.ingest(N)
    settings = f"/{index_name}/_settings"
    backend.request("PUT", settings, body={"index.blocks.read_only_allow_delete": True})
    try:
        blocked = run_sync(fault_scenario.sync_cmd(jsonl))
    finally:
        backend.request("PUT", settings, body={"index.blocks.read_only_allow_delete": None})
    # docs/testing.md ("Faults"): a flood-stage block makes the run exit 3, naming the
    # refused writes; not 1 (a crash or usage error) and not 0 (silently incomplete)
    assert blocked.returncode == 3, blocked.stderr[-1500:]
    assert "write refused:" in blocked.stderr, blocked.stderr[-1500:]
    message = (blocked.stdout + blocked.stderr).lower()
    assert "block" in message or "read-only" in message or "read_only" in message, message[-800:]
    assert "traceback" not in message
    assert _written(backend, index_name) == 0, "a refused run must leave every document as it was"
    resumed = run_sync(fault_scenario.sync_cmd(jsonl, "--resume"))
    assert resumed.returncode == 0, resumed.stderr[-1500:]
    row = fault_scenario.audit_and_record("sync hits a flood-stage index block", 2, docs)
    assert row.damage == (0, 0, 0)


def test_another_writer_during_sync_loses_nothing(fault_scenario: FaultScenario) -> None:
    """A second writer edits documents while sync runs: its edits survive (no lost update) and
    a follow-up run enriches the edited texts."""
    backend, index_name = fault_scenario.backend, fault_scenario.index
    jsonl, docs = fault_scenario.ingest(N)
    edited = seeded_rng("edited documents").sample(sorted(docs), 25)
    expected = {i: dict(d) for i, d in docs.items()}

    def writer() -> None:
        # start once the sync is writing, so edits land before, during and after its pages
        wait_until_sync_writes(backend, index_name)
        for doc_id in edited:
            text = f"{docs[doc_id]['text']} (edited by another writer)"
            expected[doc_id]["text"] = text
            result = backend.bulk_partial_update(
                index_name, [PartialUpdate(id=doc_id, doc={"text": text})]
            )
            assert result.succeeded == 1
            time.sleep(0.02)

    thread = threading.Thread(target=writer)
    proc = subprocess.Popen(
        fault_scenario.sync_cmd(jsonl, "--page-size", "5"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    thread.start()
    thread.join()
    assert proc.wait(timeout=300) == 0, proc.stderr.read()[-1500:] if proc.stderr else ""
    again = run_sync(fault_scenario.sync_cmd(jsonl))
    assert again.returncode == 0, again.stderr[-1500:]
    # edited docs: ingest + edit + enrichment (+ one re-enrichment if the edit came after it)
    row = fault_scenario.audit_and_record(
        "another writer edits 25 docs during sync", 2, expected, max_version=4
    )
    assert row.damage == (0, 0, 0)
