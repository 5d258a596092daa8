"""The search node itself goes down in the middle of work and comes back: a sira-sync run fails
(never reports success) and its ``--resume`` completes it; a SEEK evaluation redoes on resume
the questions whose searches failed and does not ask finished ones again.

Both workloads run at once on the session's OpenSearch node (``restart_node``: a node of
their own when the user named the session's) and share ONE outage
(``outage``): the node is stopped while the sync writes and the evaluation has answered a few
questions, and restarted once the sync has exited. What each scenario checks is unchanged; a
node restart (about ten seconds here) is paid once instead of twice.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fault_kit import (
    LEDGER,
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "llm"))
from stub_openai_server import StubOpenAIServer, StubReply  # noqa: E402

pytestmark = pytest.mark.integration

REPLY = (
    "# Sketch\n## Evidence about the question\n<query>film director</query>\n"
    "The documents name a director.\n<answer>yes</answer>"
)
N_QUESTIONS = 24
RUN = uuid.uuid4().hex[:8]
SYNC_INDEX, SEEK_INDEX = f"fault-restart-{RUN}", f"seek-restart-{RUN}"


@dataclass
class Outage:
    """What the two workloads left behind after the node's stop and restart."""

    sync_running_at_stop: bool
    sync_first: subprocess.CompletedProcess[str]
    sync_resumed: subprocess.CompletedProcess[str]
    sync_audit: tuple[int, int, int, int]  # checked, lost, duplicated, corrupted
    eval_running_at_stop: bool
    eval_first_err: str
    eval_rerun: subprocess.CompletedProcess[str]
    eval_audit: tuple[int, int, int, int]  # questions with a failed search, lost, dup, corrupted


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _checkpoint_audit(checkpoint: Path) -> tuple[int, int, int, int]:
    """(records with a failed search, questions lost, answered twice, unreadable lines)."""
    corrupted = 0
    finished: dict[str, int] = {}
    had_failed_search = 0
    for line in checkpoint.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            corrupted += 1
            continue
        failed_search = any(step.get("error") for step in rec.get("steps", []))
        had_failed_search += failed_search
        if rec.get("error") is None and not failed_search:
            finished[rec["id"]] = finished.get(rec["id"], 0) + 1
    lost = N_QUESTIONS - len(finished)
    duplicated = sum(n - 1 for n in finished.values())
    return had_failed_search, lost, duplicated, corrupted


@pytest.fixture(scope="module")
def outage(
    restart_node: LocalNode, wikimh_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Outage]:
    tmp = tmp_path_factory.mktemp("node-restart")
    try:
        restart_node.up()
    except Exception as exc:
        pytest.fail(f"could not start the OpenSearch node to restart: {exc}", pytrace=False)
    state = restart_node.state()
    assert state is not None
    backend = connect(ClusterSettings(url=state.url))
    corpus, jsonl, docs = corpus_and_enrichments(wikimh_dir, tmp, 300)
    ingest_corpus(backend, SYNC_INDEX, corpus)
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    seek_corpus = tmp / "seek-corpus.jsonl"
    seek_corpus.write_text("\n".join(x for x in lines if '"_id": "hp' in x) + "\n", "utf-8")
    ingest_corpus(backend, SEEK_INDEX, seek_corpus)
    checkpoint = tmp / "ckpt.jsonl"
    sync = sync_cmd(backend, SYNC_INDEX, jsonl, tmp / "state", "--page-size", "2")
    started = time.monotonic()
    marks: list[tuple[str, float]] = []

    def mark(what: str) -> None:
        marks.append((what, round(time.monotonic() - started, 1)))

    # 0.5 s per answer until the node is back: the 24 questions (2 at a time) outlast the wait
    # for the sync's first write, so the stop still lands mid-evaluation.
    with StubOpenAIServer(default=StubReply(text=REPLY, delay_s=0.5)) as stub:
        evaluation = [
            str(Path(sys.executable).parent / "sira-seek"), "eval", "qa",
            "--index", SEEK_INDEX, "--qa", str(wikimh_dir / "qa-hotpotqa.jsonl"),
            "--limit", str(N_QUESTIONS), "--method", "seek",
            "--llm", f"openai:{stub.base_url}#stub-model", "--checkpoint", str(checkpoint),
            "--concurrency", "2", "--url", state.url, "--json", "--quiet", "--no-cache",
        ]  # fmt: skip
        # The evaluation first (slow answers), the sync once 4 questions are done: the stop
        # follows the sync's first write, while both still run (the 300-document sync alone
        # takes about 5 s here).
        procs = [
            subprocess.Popen(evaluation, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ]
        eval_proc = procs[0]
        try:
            deadline = time.monotonic() + 120
            while _lines(checkpoint) < 4:
                assert time.monotonic() < deadline, "no question finished"
                assert eval_proc.poll() is None, eval_proc.communicate()[1][-1500:]
                time.sleep(0.05)
            sync_started = time.monotonic()
            mark("sync start")
            procs.append(
                subprocess.Popen(sync, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            )
            sync_proc = procs[1]
            wait_until_sync_writes(backend, SYNC_INDEX, sync_proc)
            running = (sync_proc.poll() is None, eval_proc.poll() is None)
            print(f"\n  stopping the node with {_lines(checkpoint)} questions done")
            mark("stop")
            assert restart_node.down()  # the node goes away mid-run
            mark("stopped")
            out, err = sync_proc.communicate(timeout=300)
            sync_first = subprocess.CompletedProcess(sync, sync_proc.returncode, out, err)
            mark("sync exited")
            restart_node.up()  # same data folder, same port
            mark("node up")
            stub.default = StubReply(text=REPLY)  # the rest of the run need not be slow
            _, eval_err = eval_proc.communicate(timeout=300)
            mark("eval exited")
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
        sync_resumed = run_sync([*sync, "--resume"])
        sync_audit = audit(backend, SYNC_INDEX, docs)
        mark("sync resumed")
        LEDGER.record(
            FaultRow(
                "search node stopped and restarted during sync [opensearch]",
                2,
                *sync_audit,
                time.monotonic() - sync_started,
            )
        )
        eval_rerun = subprocess.run(
            evaluation, capture_output=True, text=True, timeout=300, check=False
        )
    mark("eval rerun")
    print(f"  seconds since the evaluation started: {marks}")
    eval_audit = _checkpoint_audit(checkpoint)
    # The wall time covers both workloads (they shared the outage).
    LEDGER.record(
        FaultRow(
            "search node restarted during a SEEK evaluation",
            2,
            N_QUESTIONS,
            *eval_audit[1:],
            time.monotonic() - started,
        )
    )
    yield Outage(
        running[0], sync_first, sync_resumed, sync_audit, running[1], eval_err, eval_rerun,
        eval_audit,
    )  # fmt: skip
    for index in (SYNC_INDEX, SEEK_INDEX):
        backend.delete_index(index)


def test_node_stopped_and_restarted_during_sync(outage: Outage) -> None:
    assert outage.sync_running_at_stop, "the sync had ended before the stop: it proved nothing"
    first = outage.sync_first
    assert first.returncode != 0, "a sync whose cluster vanished must not report success"
    assert "Traceback" not in first.stderr, first.stderr[-1500:]
    assert outage.sync_resumed.returncode == 0, outage.sync_resumed.stderr[-1500:]
    _, lost, dup, bad = outage.sync_audit
    assert (lost, dup, bad) == (0, 0, 0)


def test_seek_eval_survives_a_node_restart(outage: Outage) -> None:
    assert outage.eval_running_at_stop, "the evaluation had ended before the stop"
    assert "Traceback" not in outage.eval_first_err, outage.eval_first_err[-1500:]
    rerun = outage.eval_rerun
    assert rerun.returncode == 0, rerun.stderr[-1500:]
    assert json.loads(rerun.stdout)["questions"] == N_QUESTIONS
    had_failed_search, lost, duplicated, corrupted = outage.eval_audit
    assert had_failed_search >= 1, "the restart hit no search: the scenario proved nothing"
    assert (lost, duplicated, corrupted) == (0, 0, 0)
