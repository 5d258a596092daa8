from __future__ import annotations

import json
from pathlib import Path

import pytest

from sira_seek.corpus import ReadReport, read_corpus, read_qrels, read_queries


def test_bad_records_are_reported_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                json.dumps({"_id": "a", "title": "T", "text": "x"}).encode(),
                b"{broken",
                json.dumps({"title": "no id"}).encode(),
                b"\xff\xfe not utf8",
                json.dumps({"_id": "b", "title": "", "text": "   "}).encode(),
                json.dumps(["not", "an", "object"]).encode(),
                json.dumps({"_id": "c", "title": 5, "text": "x"}).encode(),
                b"",
                json.dumps({"_id": 7, "text": "numeric ids become strings"}).encode(),
            ]
        )
    )
    report = ReadReport()
    docs = list(read_corpus(tmp_path, report))
    assert [d.id for d in docs] == ["a", "7"]
    assert [(b.line, b.reason) for b in report.bad] == [
        (2, "not JSON (Expecting property name enclosed in double quotes)"),
        (3, "missing _id"),
        (4, "not valid UTF-8"),
        (5, "empty text"),
        (6, "not a JSON object"),
        (7, "title/text must be strings"),
    ]


def test_missing_corpus_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="No corpus"):
        list(read_corpus(tmp_path / "nope"))


def test_qrels_beir_and_trec(tmp_path: Path) -> None:
    beir = tmp_path / "q.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\nq2\td3\t0\n")
    assert read_qrels(beir) == {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 0}}
    trec = tmp_path / "q.trec"
    trec.write_text("q1 0 d1 1\n")
    assert read_qrels(trec) == {"q1": {"d1": 1}}
    bad = tmp_path / "bad.tsv"
    bad.write_text("query-id\tcorpus-id\tscore\nq1 d1\n")
    with pytest.raises(ValueError, match="bad.tsv, line 2: expected 3 columns"):
        read_qrels(bad)


def test_queries_skip_records_without_text(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text('{"_id": "q1", "text": "who?"}\n{"_id": "q2"}\n')
    report = ReadReport()
    assert [q.id for q in read_queries(path, report, strict=False)] == ["q1"]
    assert report.bad[0].line == 2
