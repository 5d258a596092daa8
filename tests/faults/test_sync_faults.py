"""sira-sync under faults: killed, blocked by a flood-stage index block, raced by another
writer. Each scenario ends with an audit of every document; all counts must be zero."""

from __future__ import annotations

import random
import signal
import subprocess
import threading
import time

import pytest
from fault_kit import FaultScenario, run_sync, wait_until_sync_writes

from sira_seek.backend import PartialUpdate
from sira_seek.esplugin.base import RestBackend

pytestmark = pytest.mark.integration

N = 300


def test_sigkill_repeatedly_then_resume(fault_scenario: FaultScenario) -> None:
    jsonl, docs = fault_scenario.ingest(N)
    cmd = fault_scenario.sync_cmd(jsonl, "--page-size", "2")
    rng = random.Random(7)
    runs = kills = 0
    for attempt in range(12):
        proc = subprocess.Popen(
            [*cmd, *(["--resume"] if attempt else [])],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        runs += 1
        try:
            proc.wait(timeout=rng.uniform(0.8, 2.0) if kills < 3 else 300)
            assert proc.returncode == 0
            break
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
            kills += 1
    row = fault_scenario.audit_and_record(f"sync killed (SIGKILL x{kills}) and resumed", runs, docs)
    assert kills >= 1 and row.damage == (0, 0, 0)


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
    assert blocked.returncode != 0
    message = (blocked.stdout + blocked.stderr).lower()
    assert "block" in message or "read-only" in message or "read_only" in message, message[-800:]
    assert "traceback" not in message
    resumed = run_sync(fault_scenario.sync_cmd(jsonl, "--resume"))
    assert resumed.returncode == 0, resumed.stderr[-1500:]
    row = fault_scenario.audit_and_record("sync hits a flood-stage index block", 2, docs)
    assert row.damage == (0, 0, 0)


def test_another_writer_during_sync_loses_nothing(fault_scenario: FaultScenario) -> None:
    """A second writer edits documents while sync runs: its edits survive (no lost update) and
    a follow-up run enriches the edited texts."""
    backend, index_name = fault_scenario.backend, fault_scenario.index
    jsonl, docs = fault_scenario.ingest(N)
    edited = random.Random(3).sample(sorted(docs), 25)
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
