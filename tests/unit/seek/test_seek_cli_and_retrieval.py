"""``sira-seek eval qa`` / ``ask`` wiring (scripted LLM, no cluster) and the BM25 retriever's
requests (a fake backend): the command line and the engine boundary, without servers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from seek_llm_double import ScriptedSeekLLMDouble

from sira_seek.backend import SearchHit, SearchResult
from sira_seek.cli.main import cli
from sira_seek.seek import api
from sira_seek.seek.retrieval import BM25Retriever, RetrievedDoc
from sira_seek.workflows.ask import AskRequest, ask


@pytest.fixture
def scripted_llm(monkeypatch: pytest.MonkeyPatch) -> ScriptedSeekLLMDouble:
    llm = ScriptedSeekLLMDouble({"answer": lambda text: "<answer>Paris</answer>"})
    monkeypatch.setattr(api, "create_llm_client", lambda *a, **k: llm)
    return llm


def write_qa(path: Path) -> Path:
    rows = [
        {"id": "a", "question": "Capital of France?", "golden_answers": ["Paris"]},
        {"id": "b", "question": "Capital of Italy?", "answer": ["Rome"]},
        {"id": "c", "question": "Capital of Spain?", "golden_answers": ["Madrid"]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_eval_qa_prints_the_four_keys_and_resumes_from_its_checkpoint(
    tmp_path: Path, scripted_llm: ScriptedSeekLLMDouble
) -> None:
    qa = write_qa(tmp_path / "qa.jsonl")
    ckpt = tmp_path / "ckpt.jsonl"
    args = [
        "eval",
        "qa",
        "--qa",
        str(qa),
        "--method",
        "vanilla-llm",
        "--llm",
        "openai:http://127.0.0.1:9/v1#m",
    ]
    first = CliRunner().invoke(cli, [*args, "--limit", "2", "--checkpoint", str(ckpt), "--json"])
    assert first.exit_code == 0, first.output
    first_json = json.loads(first.stdout)
    cost = first_json.pop("cost")  # one closed-book call, one round, per question
    assert (cost["questions"], cost["llm_calls"], cost["rounds_per_question"]) == (2, 2, 1.0)
    assert first_json == {
        "cover_em": 0.5,
        "em": 0.5,
        "f1": 0.5,
        "questions": 2,
        "no_gold": 0,
        "answered": 2,
        "failed": 0,
        "resumed": 0,
        "diagnostics": None,  # only with --diagnostics
    }
    assert len(scripted_llm.by_stage["answer"]) == 2

    preds = tmp_path / "preds.jsonl"
    second = CliRunner().invoke(
        cli, [*args, "--checkpoint", str(ckpt), "--predictions", str(preds), "--json"]
    )
    assert second.exit_code == 0, second.output
    report = json.loads(second.stdout)
    assert report["questions"] == 3 and report["cover_em"] == pytest.approx(1 / 3, abs=1e-4)
    assert len(scripted_llm.by_stage["answer"]) == 3  # only question c was asked again
    assert "2 resumed from checkpoint" in second.stderr
    assert [json.loads(x)["id"] for x in preds.read_text().splitlines()] == ["a", "b", "c"]


def test_eval_qa_retrieving_method_needs_an_index(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", "qa", "--qa", str(write_qa(tmp_path / "q.jsonl"))])
    assert result.exit_code == 2 and "index: method 'seek' retrieves" in result.output


def test_ask_closed_book_prints_a_readable_result_and_json(
    scripted_llm: ScriptedSeekLLMDouble,
) -> None:
    base = [
        "ask",
        "Capital of France?",
        "--method",
        "vanilla-llm",
        "--llm",
        "openai:http://127.0.0.1:9/v1#m",
    ]
    text = CliRunner().invoke(cli, base)
    assert text.exit_code == 0, text.output
    assert "Answer: Paris" in text.output and "1 LLM calls" in text.output
    as_json = CliRunner().invoke(cli, [*base, "--json"])
    assert json.loads(as_json.stdout)["answer"] == "Paris"


class FakeSearchBackend:
    """Only the two calls the BM25 retriever makes; records the bodies."""

    name = "fake"

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def _result(self, body: dict[str, Any]) -> SearchResult:
        self.bodies.append(body)
        hits = [
            SearchHit(id=f"d{i}", score=1.0 / (i + 1), source={"title": f"T{i}", "text": "body"})
            for i in range(body["size"])
        ]
        return SearchResult(hits=hits, total=len(hits), took_ms=1)

    def search(self, index: str, body: dict[str, Any], params: Any = None) -> SearchResult:
        return self._result(body)

    def index_exists(self, index: str) -> bool:
        return index == "idx"

    def msearch(
        self, index: str, bodies: list[dict[str, Any]], params: Any = None
    ) -> list[SearchResult]:
        return [self._result(b) for b in bodies]


def test_bm25_retriever_asks_for_top_k_with_title_and_text() -> None:
    backend = FakeSearchBackend()
    retriever = BM25Retriever(backend, "idx")  # type: ignore[arg-type]
    docs = retriever.retrieve("Leland film", 5)
    assert [d.id for d in docs] == ["d0", "d1", "d2", "d3", "d4"]
    assert docs[0] == RetrievedDoc(id="d0", title="T0", text="body", score=1.0)
    body = backend.bodies[0]
    assert body["size"] == 5 and body["_source"] == ["title", "text"]
    assert body["query"]["match"]["contents"]["query"] == "Leland film"
    many = retriever.retrieve_many(["a", "  ", "b"], 2)
    assert [len(x) for x in many] == [2, 0, 2] and len(backend.bodies) == 3
    assert retriever.retrieve("   ", 5) == []


def test_document_snippet_is_cut_at_a_word_boundary() -> None:
    doc = RetrievedDoc(id="x", title="Title", text="one two three four five six")
    assert doc.snippet(200) == "Title: one two three four five six"
    assert doc.snippet(16) == "Title: one two ..."


def test_python_api_ask_returns_sketch_subqueries_usage_and_timings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llm = ScriptedSeekLLMDouble(
        {
            "sketch": "# Capitals\n## Country in question\n## Its capital",
            "subquery": lambda text: "<query>capital city</query>",
            "evidence": "The capital is Paris.",
            "answer": "<answer>Paris</answer>",
        }
    )
    monkeypatch.setattr(api, "create_llm_client", lambda *a, **k: llm)
    request = AskRequest.build(
        question="Capital of France?", index="idx", llm="openai:http://127.0.0.1:9/v1#m"
    )
    result = asyncio.run(ask(FakeSearchBackend(), request))  # type: ignore[arg-type]
    assert result.answer == "Paris"
    assert result.sketch is not None and result.sketch.is_complete
    assert [(s.sub_query, s.retrieved_ids) for s in result.steps] == [
        ("capital city", [f"d{i}" for i in range(5)])
    ] * 2
    assert result.usage.total.calls == 6 and result.usage.total.completion_tokens > 0
    assert result.timings.total_s >= result.timings.retrieval_s >= 0
