"""TREC run files other tools read, --measures parsing, and the one scoring path."""

from __future__ import annotations

import json
from pathlib import Path

import ir_measures
import pytest
from click.testing import CliRunner
from seeds import seeded_rng

from sira_seek.cli.main import cli
from sira_seek.metrics.retrieval import (
    DEFAULT_MEASURES,
    evaluate_run,
    parse_measures,
    score_run,
)
from sira_seek.metrics.run_record import build_run_record
from sira_seek.metrics.trec_run import trec_run_lines, write_trec_run

QRELS = {"q1": {"d1": 1, "d3": 2}, "q2": {"d2": 1}, "q3": {"d9": 1}}
# Engine order, with a score tie in q1 (d2 and d1) that must keep this order in the ranks.
RUN = {
    "q1": {"d2": 3.5, "d1": 3.5, "d3": 0.1 + 0.2},
    "q2": {"d4": 2.0, "d2": 1.25},
    "q3": {},
}


def test_trec_lines_rank_from_one_in_engine_order_with_exact_scores() -> None:
    lines = trec_run_lines(RUN, "bm25")
    assert lines[:3] == [
        "q1 Q0 d2 1 3.5 bm25",
        "q1 Q0 d1 2 3.5 bm25",
        "q1 Q0 d3 3 0.30000000000000004 bm25",  # repr: the engine's float, not a rounding
    ]
    assert lines[3:] == ["q2 Q0 d4 1 2.0 bm25", "q2 Q0 d2 2 1.25 bm25"]  # q3: no hits, no lines


def test_written_run_reads_back_with_ir_measures(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    assert write_trec_run(RUN, path, tag="sira") == 5
    back: dict[str, dict[str, float]] = {}
    for doc in ir_measures.read_trec_run(str(path)):
        back.setdefault(doc.query_id, {})[doc.doc_id] = doc.score
    assert back == {q: hits for q, hits in RUN.items() if hits}
    assert all(line.split()[5] == "sira" for line in path.read_text().splitlines())


@pytest.mark.parametrize(
    ("qid", "doc", "tag"), [("q 1", "d1", "t"), ("q1", "d 1", "t"), ("q1", "d1", "my run")]
)
def test_whitespace_cannot_go_into_a_run_file(qid: str, doc: str, tag: str) -> None:
    with pytest.raises(ValueError, match="TREC run file"):
        trec_run_lines({qid: {doc: 1.0}}, tag)


def test_parse_measures_keys_by_canonical_name() -> None:
    parsed = parse_measures(" nDCG@10, R@100 ,P@5,AP,nDCG(dcg='exp-log2')@10")
    assert list(parsed) == ["nDCG@10", "R@100", "P@5", "AP", "nDCG(dcg='exp-log2')@10"]
    assert parsed["P@5"] == ir_measures.P @ 5
    for bad in ("nDCG@10,Prec@5", "P@", "nDCG@x", " , "):
        with pytest.raises(ValueError) as err:
            parse_measures(bad)
        assert repr(bad.split(",")[-1].strip()) in str(err.value) or "no measure" in str(err.value)


def test_means_are_the_means_of_the_per_query_values() -> None:
    rng = seeded_rng("runs and qrels")
    docs = [f"d{i}" for i in range(30)]
    qrels = {f"q{i}": {d: rng.randint(1, 2) for d in rng.sample(docs, 3)} for i in range(20)}
    run = {q: {d: rng.random() for d in rng.sample(docs, 15)} for q in qrels}
    run["q0"] = {}  # judged, nothing retrieved: counts as zero
    scores = score_run(run, qrels)
    assert set(scores.means) == set(DEFAULT_MEASURES) and len(scores.per_query) == 20
    for name, mean in scores.means.items():
        values = [v[name] for v in scores.per_query.values()]
        assert mean == pytest.approx(sum(values) / len(values), abs=1e-12)
    assert scores.per_query["q0"] == dict.fromkeys(DEFAULT_MEASURES, 0.0)
    record = build_run_record("r", "bm25", run, qrels)
    assert record.per_query == scores.per_query
    assert record.metrics == evaluate_run(run, qrels)
    assert "ranking" not in json.loads(record.model_dump_json())


def test_bad_measure_fails_before_connecting(tmp_path: Path) -> None:
    queries, qrels = tmp_path / "q.jsonl", tmp_path / "qrels.tsv"
    queries.write_text('{"_id": "q1", "text": "x"}\n')
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            "retrieval",
            "--index",
            "nowhere",
            "--queries",
            str(queries),
            "--qrels",
            str(qrels),
            "--measures",
            "nDCG@10,Prec@5",
            "--url",
            "http://127.0.0.1:9",  # nothing listens: a connection attempt would fail differently
        ],
    )
    assert res.exit_code == 2, res.output
    assert "Invalid value for '--measures'" in res.output and "'Prec@5'" in res.output
