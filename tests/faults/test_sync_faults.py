"""sira-sync under faults: killed, blocked by a flood-stage index block, raced by another
writer. Each scenario ends with an audit of every document; all counts must be zero."""

from __future__ import annotations

import signal
import subprocess
import threading
import time

import pytest
from fault_kit import FaultScenario, run_sync, wait_until_sync_writes
from seeds import seeded_rng

from sira_seek.backend import PartialUpdate, SearchBackend
from sira_seek.esplugin.engines.base import RestBackend

pytestmark = pytest.mark.integration

N = 300


def _written(backend: SearchBackend, index: str) -> int:
    backend.refresh(index)
    return backend.count(index, {"exists": {"field": "sira_sync.status"}})


def _wait_for_more_writes(
    backend: SearchBackend, index: str, before: int, proc: subprocess.Popen[bytes]
) -> None:
    """Block until a resumed run has written past ``before`` documents: the kill must land on a
    sync that is working, not on an interpreter still importing its modules."""
    deadline = time.monotonic() + 60
    while _written(backend, index) <= before:
        assert time.monotonic() < deadline, "the resumed sync never wrote"
        assert proc.poll() is None, f"the resumed sync ended (exit {proc.returncode}) unkilled"
        time.sleep(0.02)


KILLS = 3


def test_sigkill_repeatedly_then_resume(fault_scenario: FaultScenario) -> None:
    """Three SIGKILLs, each once the run is writing (plus a seeded random delay, so it lands
    at a different point of a page each time); then --resume runs to completion."""
    backend, index_name = fault_scenario.backend, fault_scenario.index
    jsonl, docs = fault_scenario.ingest(N)
    cmd = fault_scenario.sync_cmd(jsonl, "--page-size", "2")
    rng = seeded_rng("SIGKILL delays")
    for attempt in range(KILLS):
        before = _written(backend, index_name)
        proc = subprocess.Popen(
            [*cmd, *(["--resume"] if attempt else [])],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            if attempt == 0:
                wait_until_sync_writes(backend, index_name, proc)  # type: ignore[arg-type]
            else:
                _wait_for_more_writes(backend, index_name, before, proc)
            time.sleep(rng.uniform(0.0, 0.3))
            assert proc.poll() is None, "the sync finished before it could be killed"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        assert _written(backend, index_name) < N, "the kill came after the last page"
    final = run_sync([*cmd, "--resume"])
    assert final.returncode == 0, final.stderr[-1500:]
    row = fault_scenario.audit_and_record(
        f"sync killed (SIGKILL x{KILLS}) mid-write and resumed", KILLS + 1, docs
    )
    assert row.damage == (0, 0, 0)


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
