"""Grounding and scores do not depend on the shard layout.

Real indexes have many shards. Lucene term statistics are per shard, so a DF taken from one shard
decides grounding wrongly and BM25 scores drift with the layout. sira-seek counts live documents
over every shard (``live_doc_freqs``) and searches with global statistics
(``dfs_query_then_fetch``): the same corpus in 1 and 5 shards must give the same candidate table
(every phrase, its DF, its decision, |C|) for all 100 HotpotQA questions, the same top-10 scores,
and the same metrics.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from shard_layout_kit import STRONG, candidate_rows, top_scores

from sira_seek.backend import SearchBackend
from sira_seek.bm25 import bm25_query
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.ingest import ingest_corpus
from sira_seek.sira import PrecomputedExpander, evaluate_sira
from sira_seek.sira.evaluation import evaluate_bm25, sira_results
from sira_seek.sira.results import SiraResult

pytestmark = pytest.mark.integration

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from cli_runner import run_cli  # noqa: E402
from cluster_kit import ClusterHandle  # noqa: E402


@pytest.fixture(scope="module")
def five_shard_indexes(
    backends: dict[str, SearchBackend], wikimh_dir: Path
) -> Iterator[dict[str, str]]:
    names: dict[str, str] = {}
    for eng, be in backends.items():
        name = f"test-wikimh5-{uuid.uuid4().hex[:8]}"
        report = ingest_corpus(be, name, wikimh_dir, shards=5)
        assert report.written == 9003 and not report.failed
        names[eng] = name
    yield names
    for eng, name in names.items():
        backends[eng].delete_index(name)


def _results(be: SearchBackend, index: str, wikimh_dir: Path) -> list[SiraResult]:
    queries = read_queries(wikimh_dir / "queries-hotpotqa.jsonl")
    return sira_results(
        be, index, queries, expander=PrecomputedExpander.from_file(wikimh_dir / STRONG)
    )


def test_five_shards_really_spread_the_corpus(
    backends: dict[str, SearchBackend], five_shard_indexes: dict[str, str], engine: str
) -> None:
    """Guard for the tests below: per-shard statistics differ from global ones here."""
    be, index = backends[engine], five_shard_indexes[engine]
    (settings,) = be.index_settings(index).values()
    assert int(settings["number_of_shards"]) == 5
    (one_shard,) = be.term_statistics(index, "text", ["american"])
    live = be.live_doc_freqs(index, [("text", t.term) for t in one_shard.terms])
    assert live.doc_count == 9003
    # one shard's DF and |C| are a fraction of the whole index's
    assert one_shard.field_statistics is not None
    assert one_shard.field_statistics.doc_count < 9003 * 0.5
    assert one_shard.terms[0].doc_freq < live.counts[0].doc_freq


def test_candidate_tables_equal_one_shard_for_all_100_questions(
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    five_shard_indexes: dict[str, str],
    wikimh_dir: Path,
    engine: str,
) -> None:
    be = backends[engine]
    one = _results(be, wikimh_indexes[engine], wikimh_dir)
    five = _results(be, five_shard_indexes[engine], wikimh_dir)
    assert len(one) == len(five) == 100
    rows_one, rows_five = candidate_rows(one), candidate_rows(five)
    assert sum(len(r) for r in rows_one) > 500  # every phrase of every question is compared
    assert rows_five == rows_one
    assert {r.candidates.doc_count for r in five} == {9003}
    # and the rankings: the same top-10 scores (global statistics), query by query
    assert top_scores(five) == pytest.approx(top_scores(one), rel=1e-5)


def test_metrics_equal_one_shard(
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    five_shard_indexes: dict[str, str],
    wikimh_dir: Path,
    engine: str,
) -> None:
    be = backends[engine]
    queries = read_queries(wikimh_dir / "queries-hotpotqa.jsonl")
    qrels = read_qrels(wikimh_dir / "qrels-hotpotqa.tsv")
    expander = PrecomputedExpander.from_file(wikimh_dir / STRONG)
    indexes = (wikimh_indexes[engine], five_shard_indexes[engine])
    bm25 = [evaluate_bm25(be, i, queries, qrels) for i in indexes]
    sira = [evaluate_sira(be, i, queries, qrels, expander=expander) for i in indexes]
    for one, five in (bm25, sira):
        for name in ("ndcg@10", "recall@10", "recall@100"):
            assert five[name] == pytest.approx(one[name], abs=0.002), name


def test_plain_query_then_fetch_would_differ(
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    five_shard_indexes: dict[str, str],
    wikimh_dir: Path,
    engine: str,
) -> None:
    """Why the default matters: per-shard scoring on 5 shards changes scores."""
    be = backends[engine]
    queries = read_queries(wikimh_dir / "queries-hotpotqa.jsonl")[:20]
    local = {"search_type": "query_then_fetch"}
    differ = 0
    for q in queries:
        body = {**bm25_query(q.text), "size": 10}
        one = [h.score for h in be.search(wikimh_indexes[engine], body).hits]
        five_local = [h.score for h in be.search(five_shard_indexes[engine], body, local).hits]
        five_global = [h.score for h in be.search(five_shard_indexes[engine], body).hits]
        assert five_global == pytest.approx(one, rel=1e-5)
        differ += five_local != pytest.approx(one, rel=1e-5)
    assert differ >= 15


def test_three_node_cluster_five_shards_one_replica_equals_one_shard(
    engine_cluster: ClusterHandle,
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    tmp_path: Path,
) -> None:
    """Acceptance, as a user runs it: wikimh on a real 3-node cluster (5 shards, 1 replica)
    gives the one-shard candidate tables and, through `sira-seek eval retrieval` with no extra
    flag, the one-shard metrics. Each engine's cluster is compared with that engine's single
    node (same version, so the same analysis)."""
    engine = engine_cluster.engine
    single = backends[engine]
    cluster = engine_cluster.backend()
    assert cluster.info.version == single.info.version  # same analysis on both sides
    index = f"test-wikimh-cluster-{uuid.uuid4().hex[:8]}"
    urls = ",".join(engine_cluster.urls)
    try:
        ingested = run_cli(
            ["ingest", str(wikimh_dir / "corpus.jsonl"), "--index", index, "--shards", "5",
             "--replicas", "1", "--json", "--url", urls]
        )  # fmt: skip
        assert ingested.returncode == 0, ingested.stderr[-2000:]
        engine_cluster.wait_for_health("green")
        shards = engine_cluster.get(f"/_cat/shards/{index}?format=json")
        assert len(shards) == 10 and {s["state"] for s in shards} == {"STARTED"}
        assert len({s["node"] for s in shards}) == 3
        rows_cluster = candidate_rows(_results(cluster, index, wikimh_dir))
        rows_single = candidate_rows(_results(single, wikimh_indexes[engine], wikimh_dir))
        assert rows_cluster == rows_single
        metrics = {}
        for url, name in ((urls, index), (single.info.url, wikimh_indexes[engine])):
            out = run_cli(
                ["eval", "retrieval", "--index", name, "--method", "sira",
                 "--queries", str(wikimh_dir / "queries-hotpotqa.jsonl"),
                 "--qrels", str(wikimh_dir / "qrels-hotpotqa.tsv"),
                 "--expansions", str(wikimh_dir / STRONG), "--json", "--url", url]
            )  # fmt: skip
            assert out.returncode == 0, out.stderr[-2000:]
            metrics[url] = json.loads(out.stdout)
        got, want = metrics[urls], metrics[single.info.url]
        for key in ("ndcg@10", "recall@10"):
            assert got[key] == pytest.approx(want[key], abs=0.002), key
    finally:
        cluster.delete_index(index)
