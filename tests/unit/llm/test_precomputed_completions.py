"""Recorded completions (``{"_id" or "text", "completion": "..."}`` lines) replayed by the
``jsonl:`` backend: what the ``hyde`` / ``cot`` pins of tests/regression rest on. The replayed
text must reach the same expander a live model's answer reaches, and a bad line must be named
(strict) or recorded and skipped (lenient), as for expansions files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from sira_seek.corpus import BadInputLineError, ReadReport
from sira_seek.llm.factory import create_llm_client
from sira_seek.llm.precomputed import PrecomputedKeywords
from sira_seek.llm.prompts import keyword_request
from sira_seek.llm.response import LLMError, LLMResponse
from sira_seek.llm.settings import LLMSettings
from sira_seek.sira.expansions import QueryInput
from sira_seek.sira.generation_prompts import generation_request
from sira_seek.workflows.sira_setup import choose_expander

PASSAGE = "Lilu is a  Mesopotamian\nwind spirit."
GALLU = "If Gallu is a demon Lilu is what?"


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _recorded(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "gen.jsonl",
        [
            json.dumps({"_id": "q1", "text": GALLU, "completion": PASSAGE}),
            json.dumps({"text": "who  wrote\nDune", "completion": "Frank Herbert wrote Dune."}),
            json.dumps({"_id": "q3", "completion": ""}),
        ],
    )  # fmt: skip


def test_completions_are_found_by_id_then_by_whitespace_collapsed_text(tmp_path: Path) -> None:
    table = PrecomputedKeywords.from_jsonl(_recorded(tmp_path))
    assert table.completion("q1") == PASSAGE  # as recorded: whitespace kept
    assert table.completion(GALLU) == PASSAGE
    assert table.completion("who wrote Dune") == "Frank Herbert wrote Dune."
    assert table.completion("q3") == ""
    assert table.completion("q9") is None
    assert table.for_id("q1") is None  # a completion is not a keyword list


def test_jsonl_backend_answers_a_free_text_request_with_the_recorded_text(tmp_path: Path) -> None:
    client = create_llm_client(f"jsonl:{_recorded(tmp_path)}", settings=LLMSettings())
    requests = [
        generation_request("hyde", GALLU, "multihop", chat=False, lookup_key="q1"),
        keyword_request("some query", lookup_key="q1"),  # asks for JSON: no keywords recorded
    ]  # fmt: skip
    text, keywords = asyncio.run(client.generate_many(requests))
    assert isinstance(text, LLMResponse) and text.text == PASSAGE and text.parsed is None
    assert text.backend == "jsonl" and text.model == "gen.jsonl"
    assert isinstance(keywords, LLMError) and keywords.kind == "not_found"


def test_hyde_replays_through_the_live_expander(tmp_path: Path) -> None:
    expander = choose_expander("hyde", llm=f"jsonl:{_recorded(tmp_path)}")
    assert expander is not None
    try:
        by_id, by_text, empty = expander.expand_many(
            [
                QueryInput(id="q1", text=GALLU),
                QueryInput(text="who wrote   Dune"),
                QueryInput(id="q3", text="anything"),
            ]
        )
    finally:
        expander.close()
    assert by_id.source == "llm" and by_id.generated is not None
    assert by_id.generated.method == "hyde"
    assert by_id.generated.text == "Lilu is a Mesopotamian wind spirit."  # the live path's collapse
    assert by_text.generated is not None and by_text.generated.text == "Frank Herbert wrote Dune."
    assert empty.source == "none" and empty.note == "the LLM wrote nothing"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"_id": "q2", "completion": 5}', "needs `completion` as a string"),
        ('{"_id": "q2"}', "needs `keywords` as a list of strings (or `completion` as a string)"),
        ('{"completion": "text without a key"}', "has neither `_id` nor `text`"),
    ],
)
def test_a_bad_line_is_named_or_recorded_and_skipped(
    tmp_path: Path, line: str, reason: str
) -> None:
    path = _write(
        tmp_path / "gen.jsonl",
        [json.dumps({"_id": "q1", "completion": "one"}), line,
         json.dumps({"_id": "q3", "completion": "three"})],
    )  # fmt: skip
    with pytest.raises(BadInputLineError, match=r"gen\.jsonl, line 2: "):
        PrecomputedKeywords.from_jsonl(path)
    report = ReadReport()
    table = PrecomputedKeywords.from_jsonl(path, strict=False, report=report)
    assert [(b.line, b.reason) for b in report.bad] == [(2, reason)]
    assert (table.completion("q1"), table.completion("q2"), table.completion("q3")) == (
        "one",
        None,
        "three",
    )
