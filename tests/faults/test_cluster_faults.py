"""Node loss on real 3-node clusters (5 shards, 1 replica): a sync that loses a node
to SIGKILL, reads that keep answering with one node down, and a rolling restart under a sync.

The single-node scenarios (test_node_restart.py: a sync and a SEEK evaluation) can only show that
work resumes after an outage; here every shard has a second copy, so the questions are harder:
does a client given every member's URL carry on while a member (the first URL included) is
gone, does a point-in-time scan whose shard copies vanish restart instead of skipping
documents, and does a write retried across the loss land exactly once. Each scenario records
its row in the session fault table before asserting, and leaves three green members behind.

Each scenario runs on ONE engine, the engines taking turns (the node kill on Elasticsearch; the
reads with a member down and the rolling restart on OpenSearch): what is exercised is our
client's failover, the scan's restart and the retried writes, the same code on both engines,
while a 3-node scenario costs about a minute of the suite's 25-minute budget. Both engines'
clusters still prove exact grounding over five shards (tests/integration/test_shard_layout.py),
and both engines' clients skip a dead first host (tests/integration/test_cluster_client.py).
The reads scenario also checks the library client in its outage (the first member killed), so
that no other test pays a member's kill and restart for it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_kit import SIZE, ClusterHandle
from fault_kit import (
    FaultLedger,
    FaultRow,
    audit,
    corpus_and_enrichments,
    run_sync,
    sira_sync_exe,
    wait_until_sync_writes,
)

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.errors import SiraSeekEngineError
from sira_seek.esplugin.engines.registry import connect
from sira_seek.ingest import ingest_corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "llm"))
from stub_openai_server import StubOpenAIServer, StubReply  # noqa: E402

pytestmark = pytest.mark.integration

SEEK_REPLY = (
    "# Sketch\n## Evidence about the question\n<query>film director</query>\n"
    "The documents name a director.\n<answer>yes</answer>"
)
# The document-side answer LLMPhraseSource parses: a JSON object with a `keywords` list.
ROLLING_PHRASES = ["zqrolling", "rolling marker"]
KEYWORDS_REPLY = json.dumps({"keywords": ROLLING_PHRASES})
ENRICHED = {"term": {"sira_sync.status": "enriched"}}


@pytest.fixture(scope="module", autouse=True)
def file_wall_time() -> Iterator[None]:
    """The whole file must stay within a few minutes on a busy 2-core machine: print it."""
    started = time.monotonic()
    yield
    print(f"\n[cluster faults] file wall time {time.monotonic() - started:.1f}s")


def sira_seek_exe() -> str:
    exe = Path(sys.executable).parent / "sira-seek"
    assert exe.exists(), "the sira-seek console script is not installed (pip install -e .)"
    return str(exe)


def run_all(cmds: list[list[str]], timeout: float = 300) -> list[subprocess.CompletedProcess[str]]:
    """Run CLI invocations side by side (each pays ~2-5 s of interpreter start-up here), so
    every one of them runs inside the same outage window."""
    procs = [
        subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in cmds
    ]
    done = []
    for cmd, proc in zip(cmds, procs, strict=True):
        out, err = proc.communicate(timeout=timeout)
        done.append(subprocess.CompletedProcess(cmd, proc.returncode, out, err))
    return done


def primaries_per_node(cluster: ClusterHandle, index: str) -> Counter[str]:
    rows = cluster.get(f"/_cat/shards/{index}?format=json")
    return Counter(r["node"] for r in rows if r["prirep"] == "p" and r["state"] == "STARTED")


def urls_victim_first(cluster: ClusterHandle, victim: int) -> str:
    """All members' URLs with ``victim`` first: the host every fresh client tries first."""
    urls = cluster.urls
    return ",".join([urls[victim], *(u for i, u in enumerate(urls) if i != victim)])


def member_answers(cluster: ClusterHandle, i: int) -> bool:
    """Member ``i`` itself answers HTTP (not just some member of the cluster): its own node
    info names it (GET / would not do: the minimal Elasticsearch archive answers it 405)."""
    url = cluster.node_url(i) + "/_nodes/_local?filter_path=nodes.*.name"
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:  # noqa: S310
            nodes = json.loads(resp.read()).get("nodes", {})
            return [n.get("name") for n in nodes.values()] == [cluster.node_names()[i]]
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def new_index() -> str:
    return f"fault-cluster-{uuid.uuid4().hex[:10]}"


def enriched_count(backend: SearchBackend, index: str) -> int:
    backend.refresh(index)
    return backend.count(index, ENRICHED)


def cluster_sync_cmd(
    index: str, url: str, state: Path, source: list[str], *extra: str
) -> list[str]:
    return [
        sira_sync_exe(), "--index", index, "--fields", "title,text", *source, "--url", url,
        "--state-dir", str(state), "--no-progress", *extra,
    ]  # fmt: skip


def finish_with_resume(proc: subprocess.Popen[str], cmd: list[str]) -> tuple[int, int]:
    """Wait for the run; if it failed, ``--resume`` it once. (runs, first exit code)."""
    _, err = proc.communicate(timeout=400)
    assert "Traceback" not in err, err[-2000:]
    if proc.returncode == 0:
        return 1, 0
    print(f"  first run exited {proc.returncode}: {err.strip().splitlines()[-3:]}")
    resumed = run_sync([*cmd, "--resume"], timeout=400)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    return 2, proc.returncode


def report_counts(path: Path) -> dict[str, int]:
    """The run report's tallies that show how the fault was absorbed (0s left out)."""
    counts = json.loads(path.read_text(encoding="utf-8"))["counts"]
    keys = ("enriched", "failed", "conflicts", "write_errors", "scan_restarts")
    return {k: counts[k] for k in keys if counts.get(k)}


def _audit_and_record(
    ledger: FaultLedger,
    title: str,
    backend: SearchBackend,
    index: str,
    docs: dict[str, dict[str, Any]],
    *,
    runs: int,
    first_rc: int,
    started: float,
    report: Path,
    allowed: set[str] | None = None,
) -> tuple[int, int, int]:
    """Audit a sync scenario's index, add its row to the fault table (before the test asserts,
    so a failing scenario still shows its numbers) and print the run report's counts."""
    checked, lost, dup, bad = audit(backend, index, docs, allowed=allowed)
    wall_s = time.monotonic() - started
    ledger.record(FaultRow(title, runs, checked, lost, dup, bad, wall_s))
    counts = report_counts(report)
    print(f"  runs {runs} (first exit {first_rc}), counts {counts}; wall {wall_s:.1f}s")
    return lost, dup, bad


def test_node_with_most_primaries_killed_mid_sync(
    elasticsearch_cluster: ClusterHandle,
    wikimh_dir: Path,
    tmp_path: Path,
    fault_ledger: FaultLedger,
) -> None:
    """SIGKILL of the member holding the most primaries of the index while sira-sync writes.

    That member, because it is the worst case for writes: the most primaries to promote, and
    the most of the scan's point-in-time shard copies to lose. Its URL is put FIRST in --url,
    so the same kill also takes away the host the client talks to first (the node-0 case).
    """
    started = time.monotonic()
    cluster = elasticsearch_cluster
    backend = cluster.backend()
    index = new_index()
    corpus, jsonl, docs = corpus_and_enrichments(wikimh_dir, tmp_path, 400)
    try:
        report = ingest_corpus(backend, index, corpus, shards=5, replicas=1)
        assert report.written == len(docs) and not report.failed
        cluster.wait_for_health("green")
        primaries = primaries_per_node(cluster, index)
        names = cluster.node_names()
        victim = max(range(SIZE), key=lambda i: (primaries[names[i]], -i))
        print(f"\n  primaries per node {dict(primaries)}; killing {names[victim]}")
        cmd = cluster_sync_cmd(
            index,
            urls_victim_first(cluster, victim),
            tmp_path / "state",
            ["--from-jsonl", str(jsonl)],
            "--page-size",
            "4",
            "--report",
            str(tmp_path / "report.json"),
        )
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_until_sync_writes(backend, index, proc)
        written_at_kill = enriched_count(backend, index)
        cluster.kill(victim)
        running_after_kill = proc.poll() is None
        print(f"  killed with {written_at_kill}/{len(docs)} enriched; running={running_after_kill}")
        killed_at = time.monotonic()
        cluster.start(victim)  # rejoins (and recovers its copies) while the sync still writes
        back_at = time.monotonic()
        running_when_back = proc.poll() is None
        answers_when_back = member_answers(cluster, victim)
        runs, first_rc = finish_with_resume(proc, cmd)
        print(
            f"  node back (green) {back_at - killed_at:.1f}s after the kill; sync done "
            f"{time.monotonic() - killed_at:.1f}s after it (running when back: {running_when_back})"
        )
        lost, dup, bad = _audit_and_record(
            fault_ledger,
            f"node with most primaries SIGKILLed mid-sync, restarted {cluster.tag}",
            backend, index, docs, runs=runs, first_rc=first_rc, started=started,
            report=tmp_path / "report.json",
        )  # fmt: skip
        assert running_after_kill, "the sync had ended before the kill: the scenario proved nothing"
        assert answers_when_back, "start() returned before the restarted member answered"
        assert written_at_kill < len(docs) - 20, "the kill landed after the sync had written all"
        assert (lost, dup, bad) == (0, 0, 0)
    finally:
        cluster.ensure_whole()
        cluster.backend().delete_index(index)


def _search_view(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """What must not change when a member is gone: the hits with their scores, |C|, and each
    candidate phrase's DF and decision (exact live counts over every shard)."""
    body = json.loads(result.stdout)
    return {
        "hits": [(h["_id"], round(float(h["score"]), 4)) for h in body["hits"]],
        "doc_count": body["doc_count"],
        "candidates": [(c["phrase"], c["doc_freq"], c["decision"]) for c in body["candidates"]],
        "plain_bm25": body["plain_bm25"],
    }


def _answered(checkpoint: Path) -> dict[str, list[list[str]]]:
    """Questions answered with every search succeeding, and the ids each search returned."""
    out: dict[str, list[list[str]]] = {}
    for line in checkpoint.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        steps = rec.get("steps", [])
        if rec.get("error") is None and not any(s.get("error") for s in steps):
            out[rec["id"]] = [s["retrieved_ids"] for s in steps]
    return out


def _client_checks_with_member_down(
    cluster: ClusterHandle, victim: int, backend: SearchBackend, index: str, n_docs: int
) -> None:
    """The library's side of the same outage: the backend built before the loss (its first
    host the dead member) keeps answering, several requests in a row so that round-robin
    returns to the dead host; a backend connected now detects the cluster through the next
    host; the dead member's URL alone is refused with a clear message; the survivors see two
    nodes once their fault detection has noticed the SIGKILL."""
    query = {"match": {"text": "film"}}
    expected = backend.count(index, query)
    assert expected > 0
    for _ in range(6):
        assert backend.count(index) == n_docs
        assert backend.count(index, query) == expected
    fresh = cluster.backend()
    assert fresh.info.url == cluster.node_url(1 if victim == 0 else 0)
    assert fresh.count(index) == n_docs
    with pytest.raises(SiraSeekEngineError, match="No search cluster answers"):
        connect(ClusterSettings(url=cluster.node_url(victim)))
    health = cluster.health(wait_for_nodes="2", timeout="60s")
    assert health["number_of_nodes"] == 2


def test_reads_keep_answering_with_one_node_down(
    opensearch_cluster: ClusterHandle, wikimh_dir: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    """search (BM25 and SIRA), ask and eval qa with node 0 killed give what they gave with all
    three up. Node 0 because its URL is first in every client's list: the failover case.

    The same outage also checks the library client directly (``_client_checks_with_member_down``,
    once tests/integration/test_cluster_client.py's own kill of node 0): the backend built
    before the loss, a fresh one, the dead URL alone; and the restarted member's new process."""
    started = time.monotonic()
    cluster = opensearch_cluster
    backend = cluster.backend()
    index = new_index()
    victim = 0
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(x for x in lines if '"_id": "hp' in x) + "\n", encoding="utf-8")
    queries = [
        json.loads(x) for x in (wikimh_dir / "queries-hotpotqa.jsonl").read_text().splitlines()[:1]
    ]
    expansions = wikimh_dir / "expansions-hotpotqa.strong-llm.jsonl"
    n_questions = 6
    url = ",".join(cluster.urls)
    exe = sira_seek_exe()
    try:
        report = ingest_corpus(backend, index, corpus, shards=5, replicas=1)
        assert report.written == 994 and not report.failed
        cluster.wait_for_health("green")
        with StubOpenAIServer(default=StubReply(text=SEEK_REPLY)) as stub:
            llm = f"openai:{stub.base_url}#stub-model"

            def reads(tag: str) -> list[list[str]]:
                searches = [
                    [exe, "search", q["text"], "--index", index, "--url", url, "--json", *extra]
                    for q in queries
                    for extra in ([], ["--expansions", str(expansions), "--id", q["_id"]])
                ]
                question = queries[0]["text"]
                ask = [exe, "ask", question, "--index", index, "--llm", llm, "--url", url,
                       "--json", "--no-cache"]  # fmt: skip
                qa = [
                    exe, "eval", "qa", "--index", index, "--qa",
                    str(wikimh_dir / "qa-hotpotqa.jsonl"), "--limit", str(n_questions),
                    "--method", "seek", "--llm", llm,
                    "--checkpoint", str(tmp_path / f"{tag}.jsonl"),
                    "--concurrency", "2", "--url", url, "--json", "--quiet", "--no-cache",
                ]  # fmt: skip
                return [*searches, ask, qa]

            up_started = time.monotonic()
            up = run_all(reads("up"))
            up_s = time.monotonic() - up_started
            for r in up:
                assert r.returncode == 0, (r.args[1], r.stderr[-1500:])
            first_pid = cluster.pid(victim)
            cluster.kill(victim)
            killed_at = time.monotonic()
            assert not cluster.alive(victim)
            assert first_pid is not None and not Path(f"/proc/{first_pid}").exists()
            down = run_all(reads("down"))
            down_s = time.monotonic() - killed_at
            assert not cluster.alive(victim), "the node came back before the reads were done"
            _client_checks_with_member_down(cluster, victim, backend, index, 994)
        restart_started = time.monotonic()
        cluster.start(victim)
        restart_s = time.monotonic() - restart_started
        health = cluster.health()
        assert health["status"] == "green" and health["number_of_nodes"] == SIZE
        assert cluster.alive(victim) and cluster.pid(victim) != first_pid
        assert backend.count(index) == 994  # the backend from before the loss, still
        failed = [r for r in down if r.returncode != 0 or "Traceback" in r.stderr]
        for r in failed:
            print(f"  FAILED with node {victim} down: {r.args[1]} {r.stderr[-800:]}")
        n_search = len(queries) * 2
        answered_up = _answered(tmp_path / "up.jsonl")
        down_ckpt = tmp_path / "down.jsonl"
        answered_down = _answered(down_ckpt) if down_ckpt.exists() else {}
        lost_questions = n_questions - len(answered_down)
        fault_ledger.record(
            FaultRow(
                f"search, ask and eval qa with one node SIGKILLed {cluster.tag}",
                2,
                n_search + 1 + n_questions,
                len([r for r in failed if r.args[1] != "eval"]) + lost_questions,
                0,
                0,
                time.monotonic() - started,
            )
        )
        print(
            f"  {len(down)} CLI runs: {up_s:.1f}s all up, {down_s:.1f}s with node {victim} down; "
            f"restart to green {restart_s:.1f}s"
        )
        assert not failed
        for before, after in zip(up[:n_search], down[:n_search], strict=True):
            assert _search_view(after) == _search_view(before), before.args[2:]
            assert _search_view(before)["hits"], "a search with no hits compares nothing"
        sira_views = [_search_view(r) for r in up[1:n_search:2]]
        assert not any(v["plain_bm25"] for v in sira_views), "SIRA kept no phrase: BM25 twice"
        ask_up, ask_down = json.loads(up[n_search].stdout), json.loads(down[n_search].stdout)
        assert ask_down["error"] is None and ask_down["answer"] == ask_up["answer"] == "yes"
        ids_up = [s["retrieved_ids"] for s in ask_up["steps"]]
        assert [s["retrieved_ids"] for s in ask_down["steps"]] == ids_up and any(ids_up)
        assert json.loads(down[-1].stdout)["questions"] == n_questions
        assert len(answered_up) == n_questions
        assert answered_down == answered_up
    finally:
        cluster.ensure_whole()
        cluster.backend().delete_index(index)


def test_rolling_restart_during_sync(
    opensearch_cluster: ClusterHandle, wikimh_dir: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    """stop(i) then start(i) for every member in turn while an LLM sync writes.

    The LLM is the stub server answering a fixed keywords JSON after a delay, so the run is
    slow enough to span the whole rolling restart; once the last member is back, the delay is
    dropped and the run finishes quickly.

    On OpenSearch only: what a member leaving and rejoining does to a running sync (connection
    errors, unavailable shard copies, a restarted scan, retried writes) is what the node-kill
    scenario above checks on both engines; restarting three members in turn costs over a
    minute per engine and adds no engine-specific path to that.
    """
    started = time.monotonic()
    cluster = opensearch_cluster
    backend = cluster.backend()
    index = new_index()
    corpus, _, docs = corpus_and_enrichments(wikimh_dir, tmp_path, 400)
    try:
        report = ingest_corpus(backend, index, corpus, shards=5, replicas=1)
        assert report.written == len(docs) and not report.failed
        cluster.wait_for_health("green")
        with StubOpenAIServer(default=StubReply(text=KEYWORDS_REPLY, delay_s=3.0)) as stub:
            cmd = cluster_sync_cmd(
                index,
                ",".join(cluster.urls),
                tmp_path / "state",
                ["--llm", f"openai:{stub.base_url}#stub-model", "--no-cache"],
                "--page-size",
                "8",
                "--concurrency",
                "4",
                "--report",
                str(tmp_path / "report.json"),
            )
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_until_sync_writes(backend, index, proc)
            progress: list[tuple[str, int, bool]] = []
            for i in range(SIZE):
                progress.append((f"stop {i}", enriched_count(backend, index), proc.poll() is None))
                cluster.stop(i)
                cluster.start(i)
            progress.append(("all back", enriched_count(backend, index), proc.poll() is None))
            print(f"\n  (step, enriched, sync running): {progress}")
            stub.default = StubReply(text=KEYWORDS_REPLY)  # let the rest of the run go fast
            runs, first_rc = finish_with_resume(proc, cmd)
        lost, dup, bad = _audit_and_record(
            fault_ledger,
            f"rolling restart of all 3 nodes during an LLM sync {cluster.tag}",
            backend, index, docs, runs=runs, first_rc=first_rc, started=started,
            report=tmp_path / "report.json", allowed=set(ROLLING_PHRASES),
        )  # fmt: skip
        assert progress[0][2], "the sync had ended before the first stop: it proved nothing"
        assert all(running for _, _, running in progress), "the sync ended mid-way: slow it down"
        assert progress[0][1] < len(docs) - 20
        assert (lost, dup, bad) == (0, 0, 0)
    finally:
        cluster.ensure_whole()
        cluster.backend().delete_index(index)
