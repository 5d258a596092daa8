"""The per-query path behind reports and the batched path behind the JSON agree on a real run."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.metrics.retrieval import score_run
from sira_seek.metrics.run_record import build_run_record
from sira_seek.sira.evaluation import bm25_run, evaluate_bm25
from sira_seek.workflows.recorded import recorded_run

pytestmark = pytest.mark.integration

MEASURES = ("ndcg@10", "recall@10", "recall@100")


def test_recorded_and_batched_evaluation_agree(
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    engine: str,
) -> None:
    be, index = backends[engine], wikimh_indexes[engine]
    queries = read_queries(wikimh_dir / "queries-hotpotqa.jsonl")
    qrels = read_qrels(wikimh_dir / "qrels-hotpotqa.tsv")
    # What `eval retrieval --save-run` and `report` use: one search request per query.
    record = recorded_run(be, index, queries, qrels, method="bm25")
    # What `eval retrieval --json` uses: batched _msearch, then evaluate_run.
    batched_run = bm25_run(be, index, [q for q in queries if q.id in qrels])
    batched = score_run(batched_run, qrels).means
    assert len(record.per_query) == 100
    assert {q: list(h) for q, h in record.ranking.items()} == {
        q: list(h) for q, h in batched_run.items()
    }
    for name in MEASURES:
        report_mean = statistics.fmean(v[name] for v in record.per_query.values())
        assert report_mean == pytest.approx(batched[name], abs=1e-9), name
        assert record.metrics[name] == round(batched[name], 4)
    json_metrics = evaluate_bm25(be, index, queries, qrels)
    assert {n: json_metrics[n] for n in MEASURES} == record.metrics

    # A deliberately different run: each query loses its top hit and is read bottom-up.
    worse_run = {
        q: {d: float(i) for i, d in enumerate(list(hits)[1:])} for q, hits in batched_run.items()
    }
    worse = build_run_record("worse", "bm25", worse_run, qrels)
    for name in MEASURES:
        worse_mean = statistics.fmean(v[name] for v in worse.per_query.values())
        assert worse_mean == pytest.approx(score_run(worse_run, qrels).means[name], abs=1e-9)
        assert abs(worse_mean - batched[name]) > 1e-3, name
