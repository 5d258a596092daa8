"""The search node itself goes down in the middle of a sync, comes back, and the run resumes."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from fault_kit import (
    FaultLedger,
    FaultRow,
    audit,
    corpus_and_enrichments,
    run_sync,
    sync_cmd,
    wait_until_sync_writes,
)

from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.registry import connect
from sira_seek.esplugin.local.node import LocalNode
from sira_seek.ingest import ingest_corpus

pytestmark = pytest.mark.integration


def test_node_stopped_and_restarted_during_sync(
    own_node: LocalNode, wikimh_dir: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    started = time.monotonic()
    state = own_node.state()
    assert state is not None
    backend = connect(ClusterSettings(url=state.url))
    index = "fault-restart"
    corpus, jsonl, docs = corpus_and_enrichments(wikimh_dir, tmp_path, 300)
    ingest_corpus(backend, index, corpus)
    cmd = sync_cmd(backend, index, jsonl, tmp_path / "state", "--page-size", "2")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until_sync_writes(backend, index, proc)
    assert own_node.down()  # the node goes away mid-run
    out, err = proc.communicate(timeout=300)
    assert proc.returncode != 0, "a sync whose cluster vanished must not report success"
    assert "Traceback" not in err, err[-1500:]
    own_node.up()  # same data folder, same port
    resumed = run_sync([*cmd, "--resume"])
    assert resumed.returncode == 0, resumed.stderr[-1500:]
    checked, lost, dup, bad = audit(backend, index, docs)
    fault_ledger.record(
        FaultRow(
            "search node stopped and restarted during sync [opensearch]",
            2,
            checked,
            lost,
            dup,
            bad,
            time.monotonic() - started,
        )
    )
    assert (lost, dup, bad) == (0, 0, 0)
