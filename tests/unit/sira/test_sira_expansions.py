"""Candidate sources: a precomputed file (by id, then text) and a live LLM client."""

from __future__ import annotations

import json
from pathlib import Path

from sira_doubles import ScriptedClient

from sira_seek.sira.expansions import LLMExpander, PrecomputedExpander, QueryInput


def test_precomputed_by_id_then_by_text(tmp_path: Path) -> None:
    path = tmp_path / "exp.jsonl"
    path.write_text(
        json.dumps({"_id": "q1", "keywords": ["Kerala", "kerala ", "Malayalam"]})
        + "\n"
        + json.dumps({"text": "free text query", "keywords": ["x y"]})
        + "\n"
    )
    exp = PrecomputedExpander.from_file(path)
    by_id, by_text, missing = exp.expand_many(
        [
            QueryInput(text="anything", id="q1"),
            QueryInput(text="free text query", id="unknown-id"),
            QueryInput(text="nothing here"),
        ]
    )
    assert by_id.phrases == ["Kerala", "Malayalam"] and by_id.source == "precomputed"
    assert by_text.phrases == ["x y"]
    assert missing.phrases == [] and missing.source == "none" and "no entry" in missing.note


def test_llm_expander_parses_records_usage_and_survives_failures() -> None:
    client = ScriptedClient(
        {
            "q1": '```json\n{"keywords": ["Kerala", "Malayalam cinema"]}\n```',
            "free text": '{"keywords": ["a", "b", "c", "d"]}',
        }
    )
    expander = LLMExpander(client, chat=True, task="factoid", max_phrases=3)
    try:
        ok, by_text, failed = expander.expand_many(
            [
                QueryInput(text="q one", id="q1"),
                QueryInput(text="free text"),
                QueryInput(text="boom", id="FAIL"),
            ]
        )
    finally:
        expander.close()
    assert ok.phrases == ["Kerala", "Malayalam cinema"] and ok.source == "llm"
    assert ok.llm_call is not None and ok.llm_call.prompt_tokens == 50
    assert by_text.phrases == ["a", "b", "c"]  # capped at max_phrases
    assert failed.phrases == [] and failed.source == "none"
    assert failed.llm_call is not None and "unreachable" in (failed.llm_call.error or "")
    assert all(r.messages is not None for r in client.requests)  # chat form
