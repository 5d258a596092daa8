"""Every input reader (queries, qrels, QA questions, expansions, corpus) treats a bad line the
same way: strict reading raises one ``BadInputLineError`` naming the file and every bad line
with its problem; lenient reading skips them into a ``ReadReport`` and keeps the good ones."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sira_seek.corpus import (
    BadInputLineError,
    ReadReport,
    read_corpus,
    read_qrels,
    read_queries,
)
from sira_seek.llm.precomputed import PrecomputedKeywords
from sira_seek.seek.questions import QAFileError, read_questions
from sira_seek.sira.expansions import PrecomputedExpander, QueryInput


def _write(path: Path, lines: list[str | bytes]) -> Path:
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return path


def _ids(reader: str, out: Any) -> list[str]:
    if reader == "queries":
        return [q.id for q in out]
    if reader == "qrels":
        return sorted(out)
    if reader == "qa":
        return [q.id for q in out]
    if reader == "expansions":
        return [k for k in ("e1", "e3") if out.for_id(k) is not None]
    return [d.id for d in out]


# reader name -> (file lines: good, bad, bad, good; read function; problems of lines 2 and 3)
READERS: dict[str, tuple[list[str | bytes], Callable[..., Any], list[str]]] = {
    "queries": (
        [json.dumps({"_id": "q1", "text": "moon"}), json.dumps({"_id": "q2"}), "not json",
         json.dumps({"_id": "q3", "text": "mars"})],
        lambda p, **kw: read_queries(p, kw.pop("report", None), **kw),
        ["missing `text`", "not JSON"],
    ),
    "qrels": (
        ["q1\td1\t1", "q2\td2", "q3\td3\tyes", "q4 0 d4 2"],  # BEIR and TREC rows
        lambda p, **kw: read_qrels(p, kw.pop("report", None), **kw),
        ["expected 3 columns", "relevance 'yes' is not an integer"],
    ),
    "qa": (
        [json.dumps({"id": "a1", "question": "who?", "answer": "x"}), json.dumps({"id": "a2"}),
         b"\xff\xfe", json.dumps({"id": "a3", "question": "what?", "golden_answers": ["y"]})],
        read_questions,
        ["missing `question`", "not valid UTF-8"],
    ),
    "expansions": (
        [json.dumps({"_id": "e1", "keywords": ["a"]}), json.dumps({"_id": "e2"}), "[1, 2]",
         json.dumps({"_id": "e3", "keywords": []})],
        PrecomputedKeywords.from_jsonl,
        ["needs `keywords`", "not a JSON object"],
    ),
    "corpus": (
        [json.dumps({"_id": "d1", "text": "x"}), json.dumps({"title": "no id"}), "{broken",
         json.dumps({"_id": "d3", "title": "T"})],
        lambda p, **kw: list(read_corpus(p, kw.pop("report", None), **kw)),
        ["missing _id", "not JSON"],
    ),
}  # fmt: skip
GOOD = {
    "queries": ["q1", "q3"],
    "qrels": ["q1", "q4"],
    "qa": ["a1", "a3"],
    "expansions": ["e1", "e3"],
    "corpus": ["d1", "d3"],
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_strict_reading_names_the_file_and_every_bad_line(reader: str, tmp_path: Path) -> None:
    lines, read, problems = READERS[reader]
    path = _write(tmp_path / f"{reader}.in", lines)
    with pytest.raises(BadInputLineError) as caught:
        read(path, strict=True)
    err = caught.value
    assert [(r.path, r.line) for r in err.records] == [(str(path), 2), (str(path), 3)]
    for record, problem in zip(err.records, problems, strict=True):
        assert record.reason.startswith(problem), record.reason
    message = str(err)
    assert f"{path}, line 2: {problems[0]}" in message
    assert f"{path}, line 3: {problems[1]}" in message
    assert isinstance(err, ValueError)  # the CLI maps ValueError to exit 2


@pytest.mark.parametrize("reader", sorted(READERS))
def test_lenient_reading_keeps_the_good_lines_and_reports_the_bad(
    reader: str, tmp_path: Path
) -> None:
    lines, read, problems = READERS[reader]
    path = _write(tmp_path / f"{reader}.in", lines)
    report = ReadReport(bad=[])
    out = read(path, strict=False, report=report)
    assert _ids(reader, out) == GOOD[reader]
    assert [b.line for b in report.bad] == [2, 3]
    assert [b.reason.startswith(p) for b, p in zip(report.bad, problems, strict=True)] == [
        True,
        True,
    ]


def test_one_bad_line_is_one_plain_line_and_the_error_carries_it(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "q.jsonl", ['{"_id": "q1", "text": "a"}', '{"_id": "q1", "text": "b"}']
    )
    with pytest.raises(BadInputLineError) as caught:
        read_queries(path)
    assert str(caught.value) == f"{path}, line 2: duplicate query id 'q1'"
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    assert caught.value.problem == "duplicate query id 'q1'"


def test_a_file_of_only_bad_lines_lists_them_all_up_to_a_cap(tmp_path: Path) -> None:
    path = _write(tmp_path / "q.jsonl", [f"garbage {i}" for i in range(25)])
    with pytest.raises(BadInputLineError) as caught:
        read_queries(path)
    assert len(caught.value.records) == 25
    message = str(caught.value).splitlines()
    assert message[0] == "25 bad input lines:" and message[-1] == "  ... and 5 more"
    assert len(message) == 22


def test_qrels_header_is_recognised_but_a_bad_first_data_line_is_not_taken_for_one(
    tmp_path: Path,
) -> None:
    # The old reader skipped any first line whose score was not a number: a file whose only
    # judgement was malformed then read as empty and printed NaN metrics.
    only_bad = _write(tmp_path / "only.tsv", ["q1\td1\tyes"])
    with pytest.raises(BadInputLineError, match="line 1: relevance 'yes'"):
        read_qrels(only_bad)
    for header in ("query-id\tcorpus-id\tscore", "qid docid rel", "\ufeffquery_id\tdoc\tscore"):
        path = _write(tmp_path / "h.tsv", [header, "q1\td1\t1"])
        assert read_qrels(path) == {"q1": {"d1": 1}}, header


def test_byte_order_mark_and_blank_lines_are_not_bad(tmp_path: Path) -> None:
    path = _write(tmp_path / "q.jsonl", [b'\xef\xbb\xbf{"_id": "q1", "text": "a"}', b"", b"   "])
    assert [q.id for q in read_queries(path)] == ["q1"]


def test_qa_reader_keeps_its_old_name_and_checks_gold_types(tmp_path: Path) -> None:
    assert QAFileError is BadInputLineError
    path = _write(
        tmp_path / "qa.jsonl",
        [
            json.dumps({"question": "no gold is fine"}),
            json.dumps({"question": "numbers are", "answer": 1969}),
            json.dumps({"question": "objects are not", "golden_answers": [{"a": 1}]}),
        ],
    )
    with pytest.raises(QAFileError, match="line 3: `golden_answers`/`answer` must be"):
        read_questions(path)
    kept = read_questions(path, strict=False)
    assert [(q.id, q.golden_answers) for q in kept] == [("1", []), ("2", ["1969"])]


def test_expansions_reader_reports_skips_before_any_lookup(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "e.jsonl",
        [json.dumps({"text": "moon", "keywords": ["apollo"]}), json.dumps({"keywords": ["x"]})],
    )
    with pytest.raises(BadInputLineError, match=r"e\.jsonl, line 2: has neither `_id` nor"):
        PrecomputedExpander.from_file(path)
    report = ReadReport()
    expander = PrecomputedExpander.from_file(path, strict=False, report=report)
    assert expander.expand(QueryInput(text="moon")).phrases == ["apollo"]
    assert [(b.line, b.reason) for b in report.bad] == [(2, "has neither `_id` nor `text`")]


def test_strict_corpus_reading_raises_after_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "corpus.jsonl", ['{"_id": "d1", "text": "x"}', '{"_id": ""}'])
    assert [d.id for d in read_corpus(path)] == ["d1"]  # lenient by default, as ingest reads
    with pytest.raises(BadInputLineError, match="line 2: missing _id"):
        list(read_corpus(path, strict=True))
