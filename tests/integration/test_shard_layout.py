"""Grounding and scores do not depend on the shard layout.

Real indexes have many shards. Lucene term statistics are per shard, so a DF taken from one shard
decides grounding wrongly and BM25 scores drift with the layout. sira-seek counts live documents
over every shard (``live_doc_freqs``) and searches with global statistics
(``dfs_query_then_fetch``): the same corpus in 1 and 5 shards must give the same candidate table
(every phrase, its DF, its decision, |C|) for all 100 HotpotQA questions, the same top-10 scores,
and the same metrics.

The 5-shard side is each engine's real 3-node session cluster with 1 replica (10 shard copies
over three members), ingested through `sira-seek ingest` as a user runs it; the one-shard side
is that engine's single session node (same version, so the same analysis). Each side's SIRA
results for the 100 questions are computed once per engine (``one_shard``, ``five_shards``) and
checked by every test below: the candidate tables, the top-10 scores and the metrics of one run.
A single-node 5-shard index is not built as well: the cluster's 5 shards hold the same
documents per shard (routing by _id) and add what only a cluster has (copies on other members,
a replica beside each primary, counted once).
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from shard_layout_kit import STRONG, candidate_rows, top_scores

from sira_seek.backend import SearchBackend
from sira_seek.bm25 import bm25_query
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.metrics.retrieval import evaluate_run
from sira_seek.sira import PrecomputedExpander
from sira_seek.sira.evaluation import evaluate_bm25, run_of, sira_results
from sira_seek.sira.results import SiraResult

pytestmark = pytest.mark.integration

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from cli_runner import run_cli  # noqa: E402
from cluster_kit import ClusterHandle  # noqa: E402

MEASURES = ("ndcg@10", "recall@10", "recall@100")


@dataclass
class Layout:
    """One side of the comparison: an index and what SIRA and BM25 give on it."""

    backend: SearchBackend
    index: str
    results: list[SiraResult]  # SIRA's top 100 with candidate tables, all 100 questions
    sira: dict[str, float]  # metrics of exactly those results
    bm25: dict[str, float]


def _layout(be: SearchBackend, index: str, wikimh_dir: Path) -> Layout:
    queries = read_queries(wikimh_dir / "queries-hotpotqa.jsonl")
    qrels = read_qrels(wikimh_dir / "qrels-hotpotqa.tsv")
    assert all(q.id in qrels for q in queries)  # every question judged: metrics cover all 100
    results = sira_results(
        be, index, queries, expander=PrecomputedExpander.from_file(wikimh_dir / STRONG)
    )
    metrics = evaluate_run(run_of(queries, results), qrels)
    return Layout(be, index, results, metrics, evaluate_bm25(be, index, queries, qrels))


@pytest.fixture(scope="module")
def one_shard(
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    engine: str,
) -> Layout:
    """The engine's single node, wikimh in one shard: computed once per engine."""
    return _layout(backends[engine], wikimh_indexes[engine], wikimh_dir)


@pytest.fixture(scope="module")
def cluster_index(
    request: pytest.FixtureRequest, wikimh_dir: Path, engine: str
) -> Iterator[tuple[ClusterHandle, str]]:
    """wikimh on the engine's 3-node session cluster, 5 shards and 1 replica, through
    `sira-seek ingest` with every member's URL; green, every copy started."""
    cluster: ClusterHandle = request.getfixturevalue(f"{engine}_cluster")
    index = f"test-wikimh-cluster-{uuid.uuid4().hex[:8]}"
    urls = ",".join(cluster.urls)
    try:
        ingested = run_cli(
            ["ingest", str(wikimh_dir / "corpus.jsonl"), "--index", index, "--shards", "5",
             "--replicas", "1", "--json", "--url", urls]
        )  # fmt: skip
        assert ingested.returncode == 0, ingested.stderr[-2000:]
        assert json.loads(ingested.stdout)["written"] == 9003
        cluster.wait_for_health("green")
        yield cluster, index
    finally:
        cluster.backend().delete_index(index)


@pytest.fixture(scope="module")
def five_shards(cluster_index: tuple[ClusterHandle, str], wikimh_dir: Path) -> Layout:
    cluster, index = cluster_index
    return _layout(cluster.backend(), index, wikimh_dir)


def test_five_shards_really_spread_the_corpus(
    cluster_index: tuple[ClusterHandle, str], one_shard: Layout
) -> None:
    """Guard for the tests below: 5 primaries and 5 replicas over the three members, and
    per-shard statistics that differ from global ones."""
    cluster, index = cluster_index
    be = cluster.backend()
    assert be.info.version == one_shard.backend.info.version  # same analysis on both sides
    (settings,) = be.index_settings(index).values()
    assert int(settings["number_of_shards"]) == 5 and int(settings["number_of_replicas"]) == 1
    shards = cluster.get(f"/_cat/shards/{index}?format=json")
    assert len(shards) == 10 and {s["state"] for s in shards} == {"STARTED"}
    assert len({s["node"] for s in shards}) == 3
    for shard in {s["shard"] for s in shards}:  # a primary and its replica never share a member
        assert len({s["node"] for s in shards if s["shard"] == shard}) == 2
    (one_copy,) = be.term_statistics(index, "text", ["american"])
    live = be.live_doc_freqs(index, [("text", t.term) for t in one_copy.terms])
    assert live.doc_count == 9003  # each document once, not once per copy
    # one shard's DF and |C| are a fraction of the whole index's
    assert one_copy.field_statistics is not None
    assert one_copy.field_statistics.doc_count < 9003 * 0.5
    assert one_copy.terms[0].doc_freq < live.counts[0].doc_freq


def test_candidate_tables_equal_one_shard_for_all_100_questions(
    one_shard: Layout, five_shards: Layout
) -> None:
    assert len(one_shard.results) == len(five_shards.results) == 100
    rows_one, rows_five = candidate_rows(one_shard.results), candidate_rows(five_shards.results)
    assert sum(len(r) for r in rows_one) > 500  # every phrase of every question is compared
    assert rows_five == rows_one
    assert {r.candidates.doc_count for r in five_shards.results} == {9003}
    # and the rankings: the same top-10 scores (global statistics), query by query
    assert top_scores(five_shards.results) == pytest.approx(top_scores(one_shard.results), rel=1e-5)


def test_metrics_equal_one_shard(
    one_shard: Layout,
    five_shards: Layout,
    cluster_index: tuple[ClusterHandle, str],
    wikimh_dir: Path,
) -> None:
    """BM25 and SIRA metrics agree; and `sira-seek eval retrieval` as a user runs it against
    the cluster (every member's URL, no extra flag) gives the one-shard SIRA metrics."""
    for one, five in ((one_shard.bm25, five_shards.bm25), (one_shard.sira, five_shards.sira)):
        for name in MEASURES:
            assert five[name] == pytest.approx(one[name], abs=0.002), name
    cluster, index = cluster_index
    out = run_cli(
        ["eval", "retrieval", "--index", index, "--method", "sira",
         "--queries", str(wikimh_dir / "queries-hotpotqa.jsonl"),
         "--qrels", str(wikimh_dir / "qrels-hotpotqa.tsv"),
         "--expansions", str(wikimh_dir / STRONG), "--json", "--url", ",".join(cluster.urls)]
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    cli = json.loads(out.stdout)
    assert cli["queries"] == 100
    for name in MEASURES:
        assert cli[name] == pytest.approx(one_shard.sira[name], abs=0.002), name


def test_plain_query_then_fetch_would_differ(
    one_shard: Layout, five_shards: Layout, wikimh_dir: Path
) -> None:
    """Why the default matters: per-shard scoring on 5 shards changes scores."""
    queries = read_queries(wikimh_dir / "queries-hotpotqa.jsonl")[:20]
    local = {"search_type": "query_then_fetch"}
    one_be, five_be = one_shard.backend, five_shards.backend
    differ = 0
    for q in queries:
        body = {**bm25_query(q.text), "size": 10}
        one = [h.score for h in one_be.search(one_shard.index, body).hits]
        five_local = [h.score for h in five_be.search(five_shards.index, body, local).hits]
        five_global = [h.score for h in five_be.search(five_shards.index, body).hits]
        assert five_global == pytest.approx(one, rel=1e-5)
        differ += five_local != pytest.approx(one, rel=1e-5)
    assert differ >= 15
