"""BM25 on wikimh/hotpotqa against pinned numbers (as Pyserini's 2CR files do)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.bm25 import bm25_query
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.sira.evaluation import evaluate_bm25

pytestmark = pytest.mark.integration

EXPECTED = json.loads(
    (Path(__file__).parents[1] / "regression" / "bm25_wikimh_hotpotqa.json").read_text()
)


def test_bm25_metrics_match_pinned(
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    engine: str,
) -> None:
    be = backends[engine]
    pinned = EXPECTED["engines"][engine]
    metrics = evaluate_bm25(
        be,
        wikimh_indexes[engine],
        read_queries(wikimh_dir / "queries-hotpotqa.jsonl"),
        read_qrels(wikimh_dir / "qrels-hotpotqa.tsv"),
    )
    assert metrics["queries"] == 100
    for name in ("ndcg@10", "recall@10", "recall@100"):
        assert metrics[name] == pytest.approx(pinned["metrics"][name], abs=EXPECTED["tolerance"]), (
            name
        )


def test_bm25_top_scores_match_pinned(
    backends: dict[str, SearchBackend], wikimh_indexes: dict[str, str], engine: str
) -> None:
    be = backends[engine]
    for case in EXPECTED["engines"][engine]["top_hits"]:
        result = be.search(wikimh_indexes[engine], {**bm25_query(case["query"]), "size": 3})
        got = [[h.id, round(h.score, 3)] for h in result.hits]
        assert [g[0] for g in got] == [e[0] for e in case["hits"]]
        for (_, score), (_, want) in zip(got, case["hits"], strict=True):
            assert score == pytest.approx(want, abs=1e-3)


def test_opensearch_bm25_is_within_peer_tolerance(
    backends: dict[str, SearchBackend], wikimh_indexes: dict[str, str], wikimh_dir: Path
) -> None:
    """Acceptance: OpenSearch (English analysis) within 0.03 of a peer BM25 (bm25s)."""
    peer = EXPECTED["peer_bm25s"]
    metrics = evaluate_bm25(
        backends["opensearch"],
        wikimh_indexes["opensearch"],
        read_queries(wikimh_dir / "queries-hotpotqa.jsonl"),
        read_qrels(wikimh_dir / "qrels-hotpotqa.tsv"),
    )
    assert abs(metrics["recall@10"] - peer["recall@10"]) <= 0.03
    assert abs(metrics["ndcg@10"] - peer["ndcg@10"]) <= 0.03
