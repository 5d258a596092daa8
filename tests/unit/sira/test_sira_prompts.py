"""Enrichment prompts: task-aware, answer-free, bounded JSON."""

from __future__ import annotations

import json

import pytest

from sira_seek.sira.prompts import completion_prompt, enrichment_request, instructions


@pytest.mark.parametrize("task", ["factoid", "multihop", "claim", "duplicate"])
def test_every_task_forbids_the_answer_and_asks_for_json(task: str) -> None:
    text = instructions(task)  # type: ignore[arg-type]
    assert "Do NOT guess the answer" in text
    assert '{"keywords": [...]}' in text
    assert "at most 10" in text


def test_tasks_differ_where_the_method_says_they_should() -> None:
    assert "every entity and every hop" in instructions("multihop")
    assert "both sides" in instructions("multihop")
    assert "claim's entities" in instructions("claim")
    assert "era words" in instructions("factoid")
    assert "another asker would use for the same need" in instructions("duplicate")
    assert "How do I stop my laptop" in completion_prompt("q", "duplicate")


def test_completion_prompt_ends_where_the_json_starts() -> None:
    prompt = completion_prompt("Who  wrote\nHamlet?", "factoid")
    assert prompt.endswith("Query: Who wrote Hamlet?\nJSON: ")
    # every few-shot answer is valid JSON with at most 10 phrases
    for line in prompt.splitlines():
        if line.startswith("JSON: {"):
            assert len(json.loads(line[6:])["keywords"]) <= 10


def test_request_forms_and_schema() -> None:
    chat = enrichment_request("q?", "multihop", chat=True, lookup_key="q1")
    assert chat.messages is not None and chat.messages[-1].content == "q?"
    assert chat.lookup_key == "q1"
    assert chat.json_schema["properties"]["keywords"]["maxItems"] == 10
    plain = enrichment_request("q?", "claim", chat=False, categories=True)
    assert plain.prompt is not None and "categories" in plain.json_schema["properties"]


# The answers of the worked examples; an example expansion that names its own answer teaches
# the model to break the rule the instructions state ("Do NOT guess the answer").
_EXAMPLE_ANSWERS = {
    "brandenburg": {"organ", "organist", "harpsichord", "violin", "viola", "keyboard"},
    "Tokaji": {"danube"},
    "Eisenstein": {"yes", "no"},
    "Great Wall": {"yes", "no", "true", "false", "myth"},
    "laptop": {"cooling", "pad", "undervolt", "undervolting", "clean", "dust", "repaste"},
}


def test_no_worked_example_names_its_answer() -> None:
    from sira_seek.sira.prompts import _EXAMPLES

    checked = 0
    for examples in _EXAMPLES.values():
        for query, phrases in examples:
            answers = next(a for key, a in _EXAMPLE_ANSWERS.items() if key in query)
            words = {w.lower().strip(".,") for p in phrases for w in p.split()}
            assert not words & answers, f"{query!r}: {sorted(words & answers)}"
            checked += 1
    assert checked == sum(len(e) for e in _EXAMPLES.values()) >= 5
