"""Bad input files fail clearly (issue 16, item 3), through the installed CLI on a real node.

The acceptance line: `eval retrieval` with a queries file holding one line without `text`
and one non-JSON line exits non-zero and names both lines (with --no-strict: both reported,
the rest evaluated); `ingest` of a file with no valid record exits non-zero. Input checks are
engine-agnostic and happen before any search, so one engine (OpenSearch) is enough here.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_runner import run_cli

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.registry import connect

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

DOCS = [
    {"_id": "moon", "title": "Apollo 11", "text": "The crew walked on the moon in 1969."},
    {"_id": "mars", "title": "Viking 1", "text": "The lander touched down on Mars in 1976."},
    {"_id": "sun", "title": "Parker probe", "text": "It flew closer to the sun than any craft."},
]


@dataclass
class Setup:
    backend: SearchBackend
    url: str
    index: str
    folder: Path

    def args(self) -> list[str]:
        return ["--index", self.index, "--url", self.url]


@pytest.fixture(scope="module")
def setup(node_urls: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    folder = tmp_path_factory.mktemp("bad-input")
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    (folder / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "moon landing crew"}) + "\n"
        + json.dumps({"_id": "q2", "title": "a query without text"}) + "\n"
        + "this line is not JSON\n"
        + json.dumps({"_id": "q3", "text": "lander on Mars"}) + "\n"
    )  # fmt: skip
    (folder / "good-queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "moon landing crew"}) + "\n"
    )
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tmoon\t1\nq3\tmars\t1\n")
    backend = connect(ClusterSettings(url=node_urls["opensearch"]))
    found = Setup(backend, node_urls["opensearch"], f"test-badin-{uuid.uuid4().hex[:8]}", folder)
    ingest = run_cli(["ingest", str(folder / "corpus.jsonl"), *found.args()])
    assert ingest.returncode == 0, ingest.stderr[-1500:]
    yield found
    backend.delete_index(found.index)


def _eval(
    setup: Setup, *extra: str, queries: str = "queries.jsonl", qrels: str = "qrels.tsv"
) -> subprocess.CompletedProcess[str]:
    return run_cli(
        ["eval", "retrieval", *setup.args(), "--json",
         "--queries", str(setup.folder / queries), "--qrels", str(setup.folder / qrels), *extra]
    )  # fmt: skip


def test_strict_eval_names_both_bad_query_lines_and_prints_no_result(setup: Setup) -> None:
    res = _eval(setup)
    path = setup.folder / "queries.jsonl"
    assert res.returncode == 2, res.stderr
    assert res.stdout == ""  # no JSON, and above all no NaN metrics
    assert f"{path}, line 2: missing `text`" in res.stderr
    assert f"{path}, line 3: not JSON" in res.stderr
    assert "--no-strict" in res.stderr and "Traceback" not in res.stderr


def test_no_strict_reports_both_lines_and_evaluates_the_rest(setup: Setup) -> None:
    res = _eval(setup, "--no-strict")
    path = setup.folder / "queries.jsonl"
    assert res.returncode == 0, res.stderr
    assert f"skipped {path}, line 2: missing `text`" in res.stderr
    assert f"skipped {path}, line 3: not JSON" in res.stderr
    metrics = json.loads(res.stdout, parse_constant=_refuse)
    assert metrics["queries"] == 2 and metrics["recall@10"] == 1.0


def test_a_qrels_file_whose_only_judgement_is_malformed_exits_2(setup: Setup) -> None:
    (setup.folder / "one-bad.tsv").write_text("q1\tmoon\trelevant\n")
    strict = _eval(setup, queries="good-queries.jsonl", qrels="one-bad.tsv")
    assert strict.returncode == 2 and strict.stdout == ""
    assert "one-bad.tsv, line 1: relevance 'relevant' is not an integer" in strict.stderr
    lenient = _eval(setup, "--no-strict", queries="good-queries.jsonl", qrels="one-bad.tsv")
    assert lenient.returncode == 2 and lenient.stdout == ""
    assert "no usable judgement" in lenient.stderr


def test_queries_without_any_judgement_exit_2_instead_of_nan(setup: Setup) -> None:
    (setup.folder / "other-qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq9\tsun\t1\n")
    res = _eval(setup, queries="good-queries.jsonl", qrels="other-qrels.tsv")
    assert res.returncode == 2 and res.stdout == ""
    assert "has a judgement" in res.stderr


def test_a_bad_expansions_line_stops_sira_unless_no_strict(setup: Setup) -> None:
    expansions = setup.folder / "expansions.jsonl"
    expansions.write_text(
        json.dumps({"_id": "q1", "keywords": ["lunar landing"]}) + "\n"
        + json.dumps({"_id": "q3", "keywords": "red planet"}) + "\n"
    )  # fmt: skip
    sira = ["--method", "sira", "--expansions", str(expansions)]
    strict = _eval(setup, *sira, queries="good-queries.jsonl")
    assert strict.returncode == 2 and strict.stdout == ""
    assert f"{expansions}, line 2: needs `keywords` as a list of strings" in strict.stderr
    lenient = _eval(setup, *sira, "--no-strict", queries="good-queries.jsonl")
    assert lenient.returncode == 0, lenient.stderr
    assert f"skipped {expansions}, line 2" in lenient.stderr
    assert json.loads(lenient.stdout)["queries"] == 1


def test_a_bad_qa_line_stops_eval_qa_before_any_llm_call(setup: Setup) -> None:
    qa = setup.folder / "qa.jsonl"
    qa.write_text(
        json.dumps({"id": "a1", "question": "Who walked on the moon?", "answer": "crew"}) + "\n"
        + json.dumps({"id": "a2", "answer": "no question here"}) + "\n"
    )  # fmt: skip
    # Nothing listens on port 9: reaching the LLM would be exit 1, not 2.
    res = run_cli(
        ["eval", "qa", *setup.args(), "--qa", str(qa), "--llm",
         "openai:http://127.0.0.1:9/v1#none", "--no-cache", "--json"]
    )  # fmt: skip
    assert res.returncode == 2, res.stderr
    assert f"{qa}, line 2: missing `question`" in res.stderr and res.stdout == ""


def test_ingest_of_a_file_with_no_valid_record_exits_2_and_creates_nothing(setup: Setup) -> None:
    no_valid = setup.folder / "no-valid.jsonl"
    no_valid.write_text(
        json.dumps({"title": "no id"}) + "\n" + "garbage\n"
        + json.dumps({"_id": "x", "text": "   "}) + "\n"
    )  # fmt: skip
    junk = f"{setup.index}-junk"
    try:
        for source in ("/etc/passwd", str(no_valid)):
            res = run_cli(["ingest", source, "--index", junk, "--url", setup.url, "--json"])
            assert res.returncode == 2, (source, res.stderr)
            assert "nothing written" in res.stderr and f"{source}, line 1" in res.stderr
            assert res.stdout == "" and not setup.backend.index_exists(junk)
        assert f"{no_valid}, line 3: empty text" in res.stderr
    finally:
        setup.backend.delete_index(junk)


def test_ingest_with_some_bad_records_writes_the_good_ones_and_lists_the_bad(
    setup: Setup,
) -> None:
    mixed = setup.folder / "mixed.jsonl"
    mixed.write_text(json.dumps(DOCS[0]) + "\n{not json\n" + json.dumps({"title": "no id"}) + "\n")
    index = f"{setup.index}-mixed"
    try:
        res = run_cli(["ingest", str(mixed), "--index", index, "--url", setup.url, "--json"])
        assert res.returncode == 0, res.stderr
        report = json.loads(res.stdout)
        assert report["written"] == 1
        assert [(b["line"], b["reason"]) for b in report["bad_records"]] == [
            (2, "not JSON (Expecting property name enclosed in double quotes)"),
            (3, "missing _id"),
        ]
    finally:
        setup.backend.delete_index(index)


def _refuse(constant: str) -> object:
    raise AssertionError(f"{constant} is not JSON")
