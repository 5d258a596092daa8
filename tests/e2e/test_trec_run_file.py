"""`eval retrieval --run-file` writes a TREC run that ir_measures reads with the same scores."""

from __future__ import annotations

import json
from pathlib import Path

import ir_measures
import pytest
from cli_runner import run_cli

from sira_seek.corpus import read_qrels

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def _eval(url: str, index: str, wikimh_dir: Path, *extra: str) -> dict[str, float]:
    res = run_cli(
        [
            "eval",
            "retrieval",
            "--index",
            index,
            "--url",
            url,
            "--json",
            "--queries",
            str(wikimh_dir / "queries-hotpotqa.jsonl"),
            "--qrels",
            str(wikimh_dir / "qrels-hotpotqa.tsv"),
            *extra,
        ]
    )
    assert res.returncode == 0, res.stderr
    return dict(json.loads(res.stdout))


def _read_run(path: Path, tag: str) -> dict[str, dict[str, float]]:
    """The file through ir_measures' own reader, plus the format checks trec_eval relies on."""
    lines = [line.split() for line in path.read_text().splitlines()]
    assert lines and all(len(f) == 6 and f[1] == "Q0" and f[5] == tag for f in lines)
    ranks: dict[str, list[int]] = {}
    for f in lines:
        ranks.setdefault(f[0], []).append(int(f[3]))
    assert all(r == list(range(1, len(r) + 1)) for r in ranks.values())
    run: dict[str, dict[str, float]] = {}
    for doc in ir_measures.read_trec_run(str(path)):
        run.setdefault(doc.query_id, {})[doc.doc_id] = doc.score
    return run


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("bm25", ()),
        ("sira", ("--expansions", "expansions-hotpotqa.strong-llm.jsonl")),
    ],
)
def test_run_file_scores_like_the_json_output(
    node_urls: dict[str, str],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    tmp_path: Path,
    method: str,
    extra: tuple[str, ...],
) -> None:
    args = [a if not a.endswith(".jsonl") else str(wikimh_dir / a) for a in extra]
    run_file = tmp_path / "run.trec"
    out = _eval(
        node_urls["opensearch"],
        wikimh_indexes["opensearch"],
        wikimh_dir,
        "--method",
        method,
        "--run-file",
        str(run_file),
        *args,
    )
    default = {"ndcg@10", "recall@10", "recall@100", "queries", "fallbacks", "rerank"}
    default |= {"coverage@5", "coverage@10"}
    assert set(out) == default  # default keys; coverage is null without --qa
    assert out["coverage@5"] is None
    run = _read_run(run_file, tag=method)
    qrels = read_qrels(wikimh_dir / "qrels-hotpotqa.tsv")
    assert len(run) == 100 == out["queries"] and set(run) == set(qrels)
    assert all(1 <= len(hits) <= 100 for hits in run.values())
    from_file = ir_measures.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.R @ 100], qrels, run)
    print(f"{method}: json {out}, from run file {from_file}")
    assert from_file[ir_measures.nDCG @ 10] == pytest.approx(out["ndcg@10"], abs=1e-4)
    assert from_file[ir_measures.R @ 100] == pytest.approx(out["recall@100"], abs=1e-4)


def test_measures_flag_and_named_tag(
    node_urls: dict[str, str],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    tmp_path: Path,
) -> None:
    url, index = node_urls["opensearch"], wikimh_indexes["opensearch"]
    run_file = tmp_path / "run.trec"
    out = _eval(
        url,
        index,
        wikimh_dir,
        "--measures",
        "nDCG@10,R@100,P@5,AP",
        "--run-file",
        str(run_file),
        "--name",
        "bm25-os",
        "--save-run",
        str(tmp_path / "bm25.json"),  # the per-query (recorded) path writes the file too
    )
    assert list(out) == [
        "nDCG@10", "R@100", "P@5", "AP", "queries", "fallbacks", "rerank", "coverage@5",
        "coverage@10",
    ]  # fmt: skip
    default = _eval(url, index, wikimh_dir)
    assert out["nDCG@10"] == default["ndcg@10"] and out["R@100"] == default["recall@100"]
    qrels = read_qrels(wikimh_dir / "qrels-hotpotqa.tsv")
    from_file = ir_measures.calc_aggregate(
        [ir_measures.P @ 5, ir_measures.AP], qrels, _read_run(run_file, tag="bm25-os")
    )
    assert from_file[ir_measures.P @ 5] == pytest.approx(out["P@5"], abs=1e-4)
    assert from_file[ir_measures.AP] == pytest.approx(out["AP"], abs=1e-4)
    assert 0 < out["P@5"] < out["R@100"]  # HotpotQA: two relevant paragraphs per question
    bad = run_cli(["eval", "retrieval", "--index", index, "--url", url, "--measures", "nDCG@10,P@",
                   "--queries", str(wikimh_dir / "queries-hotpotqa.jsonl"),
                   "--qrels", str(wikimh_dir / "qrels-hotpotqa.tsv")])  # fmt: skip
    assert bad.returncode == 2 and "'P@'" in bad.stderr, bad.stderr
