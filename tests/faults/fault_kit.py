"""Shared pieces of the fault suite: a corpus, its enrichment file, the sync command, and an
audit that counts lost, duplicated and corrupted documents against what must be there."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sira_seek.backend import SearchBackend
from sira_seek.ingest import ingest_corpus


@dataclass
class FaultRow:
    scenario: str
    runs: int
    checked: int
    lost: int
    duplicated: int
    corrupted: int
    wall_s: float

    @property
    def damage(self) -> tuple[int, int, int]:
        """(lost, duplicated, corrupted): every scenario passes only when all three are zero."""
        return self.lost, self.duplicated, self.corrupted


@dataclass
class FaultLedger:
    rows: list[FaultRow] = field(default_factory=list)

    def record(self, row: FaultRow) -> FaultRow:
        self.rows.append(row)
        return row


LEDGER = FaultLedger()


def sira_sync_exe() -> str:
    exe = Path(sys.executable).parent / "sira-sync"
    found = str(exe) if exe.exists() else shutil.which("sira-sync")
    assert found, "the sira-sync console script is not installed (pip install -e .)"
    return found


def corpus_and_enrichments(
    wikimh_dir: Path, tmp: Path, n: int
) -> tuple[Path, Path, dict[str, dict[str, Any]]]:
    """The first ``n`` wikimh docs and one JSONL enrichment record per doc."""
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    corpus = tmp / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    docs = {d["_id"]: d for d in (json.loads(line) for line in lines)}
    records = [{"_id": i, "keywords": [f"zq{i}", f"marker {i}"]} for i in docs]
    jsonl = tmp / "enrich.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return corpus, jsonl, docs


def sync_cmd(
    backend: SearchBackend, index: str, jsonl: Path, state: Path, *extra: str
) -> list[str]:
    return [
        sira_sync_exe(), "--index", index, "--fields", "title,text", "--from-jsonl", str(jsonl),
        "--url", backend.info.url, "--state-dir", str(state), "--page-size", "10",
        "--no-progress", *extra,
    ]  # fmt: skip


def run_sync(
    cmd: list[str], timeout: float = 300, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False
    )


def audit(
    backend: SearchBackend,
    index: str,
    expected_source: dict[str, dict[str, Any]],
    *,
    max_version: int = 2,
    allowed: set[str] | None = None,
) -> tuple[int, int, int, int]:
    """(checked, lost, duplicated, corrupted) over every expected document.

    lost: missing, or not enriched for its current text; duplicated: written more times than
    one ingest + one enrichment (per ``max_version``) or a phrase stored twice; corrupted: a
    source field differs from what must be there, or a phrase not from the enrichment source
    (``allowed``, default: the per-document phrases of ``corpus_and_enrichments``).
    """
    backend.refresh(index)
    body = {"size": 10_000, "version": True, "query": {"match_all": {}}}
    raw = backend.request("POST", f"/{index}/_search", body=body)  # type: ignore[attr-defined]
    hits = {h["_id"]: h for h in raw["hits"]["hits"]}
    lost = duplicated = corrupted = 0
    for doc_id, want in expected_source.items():
        hit = hits.get(doc_id)
        if hit is None:
            lost += 1
            continue
        src = hit["_source"]
        if src.get("title") != want.get("title") or src.get("text") != want.get("text"):
            corrupted += 1
        phrases = (src.get("sira_enrichment") or {}).get("phrases") or []
        sync = src.get("sira_sync") or {}
        if sync.get("status") != "enriched" or not phrases:
            lost += 1
        elif not set(phrases) <= (allowed or {f"zq{doc_id}", f"marker {doc_id}"}):
            corrupted += 1
        if len(phrases) != len(set(phrases)) or hit["_version"] > max_version:
            duplicated += 1
    corrupted += len(set(hits) - set(expected_source))  # documents nobody asked for
    return len(expected_source), lost, duplicated, corrupted


def wait_until_sync_writes(
    backend: SearchBackend, index: str, proc: subprocess.Popen[str] | None = None
) -> None:
    """Block until the running sync has written its first page (faults land mid-run)."""
    deadline = time.monotonic() + 60
    while backend.count(index, {"exists": {"field": "sira_sync.status"}}) == 0:
        assert time.monotonic() < deadline, "sync never started writing"
        assert proc is None or proc.poll() is None, "sync ended before writing"
        backend.refresh(index)
        time.sleep(0.02)


@dataclass
class FaultScenario:
    """One scenario against one engine: its index, its scratch folder, the session table its
    row goes to, and the clock its wall time is read from. Bundled so that a test spells out
    the fault it injects, not the setup and bookkeeping every scenario shares."""

    backend: SearchBackend
    engine: str
    index: str
    wikimh_dir: Path
    tmp: Path
    ledger: FaultLedger
    started: float = field(default_factory=time.monotonic)

    @property
    def state_dir(self) -> Path:
        return self.tmp / "state"

    def ingest(self, n: int) -> tuple[Path, dict[str, dict[str, Any]]]:
        """Index the first ``n`` wikimh docs; their enrichment JSONL and the docs by id."""
        corpus, jsonl, docs = corpus_and_enrichments(self.wikimh_dir, self.tmp, n)
        ingest_corpus(self.backend, self.index, corpus)
        return jsonl, docs

    def sync_cmd(self, jsonl: Path, *extra: str) -> list[str]:
        return sync_cmd(self.backend, self.index, jsonl, self.state_dir, *extra)

    def audit_and_record(
        self,
        title: str,
        runs: int,
        expected_source: dict[str, dict[str, Any]],
        *,
        max_version: int = 2,
        allowed: set[str] | None = None,
    ) -> FaultRow:
        """Audit every expected document and add the scenario's row to the session table
        before the test asserts on it, so a failing scenario still shows its numbers."""
        checked, lost, dup, bad = audit(
            self.backend, self.index, expected_source, max_version=max_version, allowed=allowed
        )
        wall_s = time.monotonic() - self.started
        row = FaultRow(f"{title} [{self.engine}]", runs, checked, lost, dup, bad, wall_s)
        return self.ledger.record(row)
