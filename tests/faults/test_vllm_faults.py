"""Faults of the production serving path, with a real vLLM server (not a stub) and a real node.

1. ``sira-seek llm up`` / ``llm status`` / ``search --llm <printed spec>`` as a user runs them,
   then the server is stopped with ``llm down`` while ``sira-sync`` is enriching through it: the
   run must stop cleanly naming the unreachable LLM (exit 1, no traceback), leave every document
   either untouched or fully enriched, and ``--resume`` against another live OpenAI server
   serving the same model (llama.cpp's, from the GGUF the vLLM model was converted from) must
   finish the index. The server is the session's own, which ``sira-seek llm up`` started
   (tests/vllm_kit.py): the stop is of a real vLLM process group, and the test is marked
   ``stops_session_vllm`` so that it runs after every other test (a second vLLM start cost
   about two minutes). Only against a server someone else runs does it start its own.
2. A document whose prompt is longer than the server's ``--max-model-len``: vLLM answers 400,
   the document is recorded as failed (kind ``context_too_long``, a message saying what to do),
   and the run goes on to enrich the others.

Rows go to the fault table printed at the end of the session (tests/faults/conftest.py). Both
run on OpenSearch only: the engine is not what they exercise, the LLM server is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from fault_kit import LEDGER, FaultRow, FaultScenario, run_sync, sira_sync_exe
from vllm_kit import SLOW_SERVER_ENV, TEST_MAX_MODEL_LEN, VllmEndpoint

from sira_seek.backend import SearchBackend
from sira_seek.ingest import ingest_corpus
from sira_seek.llm.llamacpp_server import LlamaCppServerProcess
from sira_seek.llm.local_server import free_local_port, pid_alive

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from cli_runner import run_cli  # noqa: E402

pytestmark = pytest.mark.integration

QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"


def scenario(backends: dict[str, SearchBackend], wikimh_dir: Path, tmp_path: Path) -> FaultScenario:
    index = f"test-vllm-fault-{uuid.uuid4().hex[:8]}"
    return FaultScenario(backends["opensearch"], "opensearch", index, wikimh_dir, tmp_path, LEDGER)


def llm_sync_cmd(s: FaultScenario, spec: str, *extra: str) -> list[str]:
    return [
        sira_sync_exe(), "--index", s.index, "--llm", spec, "--url", s.backend.info.url,
        "--state-dir", str(s.state_dir), "--no-progress", *extra,
    ]  # fmt: skip


def sources(backend: SearchBackend, index: str) -> dict[str, dict[str, Any]]:
    backend.refresh(index)
    return {h.id: h.source or {} for page in backend.scan(index, page_size=500) for h in page}


def half_applied(src: dict[str, Any], original: dict[str, Any]) -> str | None:
    """Why a document is not in one of the whole states (untouched, enriched, recorded failed)."""
    if (src.get("title"), src.get("text")) != (original["title"], original["text"]):
        return "source fields changed"
    sync = src.get("sira_sync")
    phrases = (src.get("sira_enrichment") or {}).get("phrases")
    if sync is None:
        return None if not phrases else "phrases without sync metadata"
    if sync.get("status") == "enriched":
        return None if phrases else "enriched without phrases"
    if sync.get("status") == "failed":
        return None if not phrases else "failed but phrases written"
    return f"unknown status {sync.get('status')!r}"


def wait_for_writes(
    backend: SearchBackend, index: str, proc: subprocess.Popen[str], n: int, timeout_s: float
) -> None:
    """Block until the sync has written ``n`` documents (a vLLM page takes tens of seconds on
    2 cores, longer than fault_kit's 60 s wait allows)."""
    deadline = time.monotonic() + timeout_s
    while backend.count(index, {"exists": {"field": "sira_sync.status"}}) < n:
        assert time.monotonic() < deadline, f"sync never wrote {n} documents"
        assert proc.poll() is None, (
            f"sync ended before writing: {proc.stderr and proc.stderr.read()}"
        )
        time.sleep(0.5)
        backend.refresh(index)


def audit_llm(
    backend: SearchBackend,
    index: str,
    expected: dict[str, dict[str, Any]],
    *,
    max_version: int,
    failed_ids: frozenset[str] = frozenset(),
) -> tuple[int, int, int, int]:
    """(checked, lost, duplicated, corrupted), as fault_kit.audit counts them, for phrases a real
    model proposed: fault_kit's audit expects known phrases and at least one per document, but
    the DF filter may rightly keep none of the model's phrases for a document (on a 5-document
    index almost every phrase is "too common"). So: lost = not enriched (or, for
    ``failed_ids``, not recorded as failed); duplicated = a phrase twice or more writes than
    ``max_version`` allows; corrupted = source fields changed, phrases on a failed document, or
    a document nobody asked for."""
    backend.refresh(index)
    body = {"size": 10_000, "version": True, "query": {"match_all": {}}}
    raw = backend.request("POST", f"/{index}/_search", body=body)  # type: ignore[attr-defined]
    hits = {h["_id"]: h for h in raw["hits"]["hits"]}
    lost = duplicated = corrupted = 0
    for doc_id, want in expected.items():
        hit = hits.get(doc_id)
        if hit is None:
            lost += 1
            continue
        src = hit["_source"]
        if (src.get("title"), src.get("text")) != (want["title"], want["text"]):
            corrupted += 1
        phrases = (src.get("sira_enrichment") or {}).get("phrases") or []
        status = (src.get("sira_sync") or {}).get("status")
        if status != ("failed" if doc_id in failed_ids else "enriched"):
            lost += 1
        if doc_id in failed_ids and phrases:
            corrupted += 1
        if len(phrases) != len(set(phrases)) or hit["_version"] > max_version:
            duplicated += 1
    corrupted += len(set(hits) - set(expected))
    return len(expected), lost, duplicated, corrupted


def failures(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The failure records of a run's report (its failures file, appended over runs)."""
    path = report.get("failures_file")
    return [json.loads(line) for line in Path(path).read_text().splitlines()] if path else []


class PhaseClock:
    """Prints the seconds each phase of a long scenario took (where the time goes)."""

    def __init__(self) -> None:
        self.last = time.monotonic()

    def __call__(self, phase: str) -> None:
        now = time.monotonic()
        print(f"[{now - self.last:6.1f} s] {phase}")
        self.last = now


def record(s: FaultScenario, title: str, runs: int, counts: tuple[int, int, int, int]) -> FaultRow:
    wall_s = time.monotonic() - s.started
    return s.ledger.record(FaultRow(f"{title} [{s.engine}]", runs, *counts, wall_s))


@pytest.mark.stops_session_vllm
def test_llm_up_search_then_down_mid_sync_and_resume(
    vllm_server: VllmEndpoint,
    gemma_gguf: Path,
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    tmp_path: Path,
) -> None:
    if vllm_server.up_record is not None:  # the session's server, started by `sira-seek llm up`
        record = vllm_server.up_record
        port = int(record["port"])
        print(f"the session's `llm up --json` record: {record}")
    else:  # a server someone else runs must not be stopped: start one of our own to stop
        port = free_local_port()
        up = run_cli(
            ["llm", "up", "--port", str(port), "--kv-cache-gib", "1", "--json"], timeout=1800
        )
        assert up.returncode == 0, up.stderr[-3000:]
        record = json.loads(up.stdout)
    spec = record["spec"]
    clock = PhaseClock()
    try:
        print(f"llm up: {spec} pid {record['pid']} in the output of `llm up --json`")
        assert record["status"] == "started" and record["port"] == port
        assert spec == f"openai:http://127.0.0.1:{port}/v1#gemma3-270m"
        assert pid_alive(record["pid"])
        status = run_cli(["llm", "status", "--json"])
        assert status.returncode == 0, status.stderr[-2000:]
        listed = [d for d in json.loads(status.stdout) if d["port"] == port]
        assert [d["pid"] for d in listed] == [record["pid"]]
        clock("llm up record and llm status checked")

        env = {**SLOW_SERVER_ENV, "SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "search-cache")}
        search = run_cli(
            ["search", QUESTION, "--index", wikimh_indexes["opensearch"],
             "--url", backends["opensearch"].info.url, "--llm", spec, "--json",
             "--rerank", "0"],  # the expansion's call only: the default rerank is tested elsewhere
            env=env, timeout=900,
        )  # fmt: skip
        assert search.returncode == 0, search.stderr[-2000:]
        found = json.loads(search.stdout)
        assert found["hits"] and found["candidates"] and found["expansion_source"] == "llm"
        (call,) = found["llm_calls"]
        assert (call["backend"], call["model"], call["error"]) == ("openai", "gemma3-270m", None)
        print("candidate table:", [(c["phrase"], c["decision"]) for c in found["candidates"]])
        clock("search --llm through the printed spec")

        s = scenario(backends, wikimh_dir, tmp_path)
        _server_stopped_mid_sync(s, spec, port, gemma_gguf, clock)
    finally:
        run_cli(["llm", "down", "--port", str(port)])
    assert not pid_alive(record["pid"])
    after = run_cli(["llm", "status", "--json"])
    assert all(d["port"] != port for d in json.loads(after.stdout))


#: The stop scenario's documents and pages: vLLM answers the first page of 10 as one batch (on
#: 2 cores a batch of 10 costs about what one request costs: each decoding step reads the
#: whole model either way), is stopped while the last page of 2 is in flight, and llama.cpp's
#: server finishes those 2 one at a time (~7 s each with its grammar sampling). With pages of 2
#: stopped after the first, llama.cpp resumed 10 documents: ~90 s of a 146 s test; now 57 s
#: here (vLLM's page 21 s, `llm down` 6 s: vLLM's HTTP server waits for the open connections
#: until its grace, ``STOP_GRACE_S``, ends; resume 14 s). 12 documents: with 8, the DF filter
#: kept no phrase for one enriched document, which the audit counts as half-applied.
STOP_DOCS, STOP_PAGE = 12, 10


def _server_stopped_mid_sync(
    s: FaultScenario, spec: str, port: int, gguf: Path, clock: PhaseClock
) -> None:
    """sira-sync through ``spec``; ``llm down`` once the first page is written, the second in
    flight; then resume through another OpenAI server serving the same model under the same
    name: llama.cpp's, with the GGUF the vLLM model was converted from (seconds to start,
    where a second vLLM would take two minutes and 8 GB; the run's fingerprint,
    ``openai:gemma3-270m``, is the same, so ``--resume`` accepts it)."""
    try:
        _, docs = s.ingest(STOP_DOCS)
        env = {
            **os.environ,
            **SLOW_SERVER_ENV,
            "SIRA_SEEK_LLM_MAX_RETRIES": "1",
            "SIRA_SEEK_LLM_CONNECT_TIMEOUT_S": "2",
            "SIRA_SEEK_LLM_CACHE_DIR": str(s.tmp / "sync-cache"),
        }
        args = ("--concurrency", str(STOP_PAGE), "--page-size", str(STOP_PAGE))
        proc = subprocess.Popen(
            llm_sync_cmd(s, spec, *args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        wait_for_writes(s.backend, s.index, proc, STOP_PAGE, timeout_s=900)
        clock(f"sira-sync through vLLM until its first page ({STOP_PAGE} documents) is written")
        down = run_cli(["llm", "down", "--port", str(port), "--json"])
        assert down.returncode == 0, down.stderr[-2000:]
        assert [d["port"] for d in json.loads(down.stdout)] == [port]
        clock("llm down")
        out, err = proc.communicate(timeout=600)
        clock("sira-sync exits")
        print("sync after llm down:", proc.returncode, err.strip().splitlines()[-1:])
        assert "Traceback" not in err, err[-2000:]
        assert proc.returncode == 1, (out[-800:], err[-2000:])
        assert "the LLM cannot answer (unreachable)" in err, err[-2000:]
        assert f"127.0.0.1:{port}" in err, err[-2000:]
        now = sources(s.backend, s.index)
        problems = {i: half_applied(now[i], docs[i]) for i in docs}
        assert not {i: p for i, p in problems.items() if p}, problems
        enriched = sum(now[i].get("sira_sync", {}).get("status") == "enriched" for i in docs)
        assert 1 <= enriched < len(docs), "the stop must land mid-run"

        with LlamaCppServerProcess(
            model_path=gguf, model_alias="gemma3-270m", n_ctx=TEST_MAX_MODEL_LEN,
            log_path=s.tmp / "llama-server.log",
        ) as other:  # fmt: skip
            clock("llama.cpp's server started")
            resumed = run_sync(
                llm_sync_cmd(s, other.spec, *args, "--resume", "--json"), timeout=1200, env=env
            )
            clock("sira-sync --resume through llama.cpp's server")
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        report = json.loads(resumed.stdout)
        assert report["resumed"] is True
        state = run_sync([sira_sync_exe(), "status", "--index", s.index,
                          "--url", s.backend.info.url, "--json"])  # fmt: skip
        assert state.returncode == 0, state.stderr[-2000:]
        counts = json.loads(state.stdout)
        print("after --resume:", report["counts"], "| status:", counts)
        # The model itself may fail a document: Gemma 270M loops inside a string on some
        # (greedy, so every retry too) and max_tokens cuts the JSON. Such a document is recorded
        # as malformed_output, a whole state; a failure the stop caused would be another kind.
        malformed = {f["doc_id"] for f in failures(report) if f["kind"] == "malformed_output"}
        final = sources(s.backend, s.index)
        failed_now = frozenset(i for i in docs if final[i]["sira_sync"]["status"] == "failed")
        assert failed_now <= malformed, "a failure that is not the model's own"
        assert counts["never_enriched"] == counts["stale"] == 0
        assert counts["enriched"] + counts["failed"] == len(docs)
        row = record(
            s,
            "vLLM stopped (llm down) mid-sync, --resume completes",
            2,
            audit_llm(s.backend, s.index, docs, max_version=3, failed_ids=failed_now),
        )
        assert row.damage == (0, 0, 0)
        clock("status and audit")
    finally:
        s.backend.delete_index(s.index)


def test_prompt_longer_than_max_model_len_is_recorded_and_the_run_goes_on(
    vllm_server: VllmEndpoint,
    backends: dict[str, SearchBackend],
    wikimh_dir: Path,
    tmp_path: Path,
) -> None:
    s = scenario(backends, wikimh_dir, tmp_path)
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    docs = {d["_id"]: d for d in map(json.loads, lines[:4])}
    # Paragraphs of other documents, about 4 characters a token: well past 2048 tokens.
    long_text = " ".join(json.loads(line)["text"] for line in lines[4:80])[:16000]
    docs["long-doc"] = {"_id": "long-doc", "title": "A very long document", "text": long_text}
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs.values()), encoding="utf-8")
    env = {**os.environ, **SLOW_SERVER_ENV, "SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "cache")}
    try:
        ingest_corpus(s.backend, s.index, corpus)
        cmd = llm_sync_cmd(
            s, vllm_server.spec, "--text-budget", "16000", "--concurrency", "5", "--json"
        )
        done = run_sync(cmd, timeout=1200, env=env)
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        assert done.returncode == 0, done.stderr[-2000:]
        report = json.loads(done.stdout)
        counts = report["counts"]
        print("counts:", {k: counts[k] for k in ("seen", "enriched", "failed")})
        assert (counts["seen"], counts["enriched"], counts["failed"]) == (5, 4, 1)
        assert report["llm_usage"]["errors_by_kind"] == {"context_too_long": 1}
        (failure,) = [
            json.loads(line) for line in Path(report["failures_file"]).read_text().splitlines()
        ]
        print("recorded failure:", failure["kind"], failure["message"][:200])
        assert failure["doc_id"] == "long-doc" and failure["kind"] == "context_too_long"
        assert "too long for the model's context window" in failure["message"]
        assert str(vllm_server.max_model_len) in failure["message"]  # vLLM's own detail kept
        now = sources(s.backend, s.index)
        assert now["long-doc"]["sira_sync"]["status"] == "failed"
        assert not (now["long-doc"].get("sira_enrichment") or {}).get("phrases")
        row = record(
            s,
            "vLLM: prompt longer than --max-model-len, recorded, run goes on",
            1,
            audit_llm(s.backend, s.index, docs, max_version=2, failed_ids=frozenset({"long-doc"})),
        )
        assert row.damage == (0, 0, 0)
    finally:
        s.backend.delete_index(s.index)
