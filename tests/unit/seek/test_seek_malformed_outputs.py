"""Odd model output never stops a question: sketches fall back, sub-queries are cleaned or
retried, answers are found without tags, failed searches leave a note on their step."""

from __future__ import annotations

import asyncio

import pytest
from seek_fakes import RecordingRetriever
from seek_llm_double import ScriptedSeekLLMDouble
from test_seek_pipeline import QUESTION, default_stages, run

from sira_seek.seek.output_parsing import (
    clean_evidence,
    clean_subquery,
    extract_answer,
    sketch_markdown,
)
from sira_seek.seek.pipeline import SeekPipeline
from sira_seek.seek.results import QuestionInput
from sira_seek.seek.settings import SeekSettings


def test_unparseable_sketch_falls_back_to_one_gist_named_after_the_question() -> None:
    llm = ScriptedSeekLLMDouble(default_stages(sketch="I cannot help with that."))
    result = run(llm, subquery_retries=0)
    assert result.sketch is not None
    assert result.sketch.headings == (QUESTION,)
    assert result.sketch.is_complete and len(result.steps) == 1
    assert any("one-gist fallback" in note for note in result.notes)


def test_gist_count_is_capped() -> None:
    many = "\n".join(f"## Section {i} about thing {i}" for i in range(12))
    llm = ScriptedSeekLLMDouble(default_stages(sketch=f"# T\n{many}"))
    result = run(llm, max_gists=4)
    assert result.sketch is not None and len(result.sketch.gists) == 4
    assert len(llm.by_stage["evidence"]) == 4


def test_one_gist_sketch_is_kept_when_fewer_than_min_gists_parse() -> None:
    llm = ScriptedSeekLLMDouble(default_stages(sketch="# T\n## Only section"))
    result = run(llm, min_gists=2)
    assert result.sketch is not None and result.sketch.headings == ("Only section",)
    assert any("fewer than 2 gists" in note for note in result.notes)


def test_rambling_subquery_is_retried_then_used() -> None:
    rambling = "Let me think.\nWe need the film.\nMaybe Leland films.\nOr the 1986 films."
    llm = ScriptedSeekLLMDouble(
        default_stages(
            sketch="# T\n## Film shot in Leland\n## Its director",
            subquery=[rambling, "<query>Leland 1986 film</query>", "<query>film director</query>"],
        )
    )
    retriever = RecordingRetriever()
    result = run(llm, retriever)
    first = result.steps[0]
    assert first.attempts == 2 and not first.malformed
    assert first.sub_query == "Leland 1986 film"
    assert "reply with only <query>" in llm.texts("subquery")[1]
    assert retriever.queries == ["Leland 1986 film", "film director"]


def test_subquery_still_malformed_after_retries_is_cleaned_to_one_line() -> None:
    long = "Query: " + " ".join(f"w{i}" for i in range(60))
    llm = ScriptedSeekLLMDouble(default_stages(sketch="# T\n## A gist\n## B gist", subquery=long))
    result = run(llm, max_subquery_words=10)
    step = result.steps[0]
    assert step.malformed and step.attempts == 2
    assert step.sub_query == " ".join(f"w{i}" for i in range(10))


def test_empty_subquery_searches_heading_and_question() -> None:
    llm = ScriptedSeekLLMDouble(default_stages(sketch="# T\n## A gist\n## B gist", subquery=""))
    retriever = RecordingRetriever()
    result = run(llm, retriever, subquery_retries=0)
    assert retriever.queries[0].startswith("A gist Who directed")
    assert any("empty sub-query" in note for note in result.notes)


def test_answer_without_tags_uses_the_last_line() -> None:
    llm = ScriptedSeekLLMDouble(
        default_stages(answer="<think>hmm</think>Reasoning.\nAnswer: Stephen King.")
    )
    assert run(llm).answer == "Stephen King"


def test_failed_search_is_recorded_on_its_step_and_the_question_goes_on() -> None:
    llm = ScriptedSeekLLMDouble(default_stages(sketch="# T\n## Broken gist\n## Fine gist"))
    retriever = RecordingRetriever(fail_on=["Broken"])
    result = run(llm, retriever)
    assert result.error is None and result.answer == "Stephen King"
    assert result.steps[0].error and "unreachable" in result.steps[0].error
    assert result.steps[0].retrieved_ids == [] and len(result.steps[1].retrieved_ids) == 5
    assert "(no documents found)" in llm.texts("evidence")[0]


def test_fewshot_style_parses_one_line_outputs() -> None:
    llm = ScriptedSeekLLMDouble(
        {
            "sketch": " Film shot in Leland | Director of that film\nQuestion: junk",
            "subquery": " Leland 1986 film",
            "evidence": " [1] Maximum Overdrive was shot in Leland.",
            "answer": "Stephen King",
        }
    )
    pipeline = SeekPipeline(
        llm, RecordingRetriever(), settings=SeekSettings(), prompt_style="fewshot"
    )
    result = asyncio.run(pipeline.answer(QuestionInput(id="f", question=QUESTION)))
    assert result.sketch is not None
    assert result.sketch.headings == ("Film shot in Leland", "Director of that film")
    assert result.sketch.gists[0].slot == "[1] Maximum Overdrive was shot in Leland."
    assert result.answer == "Stephen King"
    second = llm.texts("subquery")[1]
    assert "- Film shot in Leland: [1] Maximum Overdrive" in second
    assert "- Director of that film: <TO BE FILLED>" in second
    assert all(r.stop for r in llm.calls)  # every few-shot call is cut at a stop string


@pytest.mark.parametrize(
    ("raw", "expected", "malformed"),
    [
        ("<query>Leland film 1986</query>", "Leland film 1986", False),
        ("I need the film first.\n<query>Leland film 1986", "Leland film 1986", False),
        ('Search query: "Leland film 1986"', "Leland film 1986", False),
        ("<think>long thoughts</think>\nLeland film 1986", "Leland film 1986", False),
        ("Step one.\nLeland film 1986", "Leland film 1986", True),
        ("", "", True),
        ("**Query:** Stephen King<|im_end|>", "Stephen King", False),
    ],
)
def test_clean_subquery(raw: str, expected: str, malformed: bool) -> None:
    cleaned = clean_subquery(raw)
    assert (cleaned.text, cleaned.malformed) == (expected, malformed)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Because X.\n<answer>Paris</answer>", "Paris"),
        ("<answer>first</answer> then <answer>second</answer>", "second"),
        ("<answer>cut off answer", "cut off answer"),
        ("Final answer: yes", "yes"),
        ("<think>x</think>\nNo idea\nLondon.", "London"),
        (None, ""),
    ],
)
def test_extract_answer(raw: str | None, expected: str) -> None:
    assert extract_answer(raw) == expected


def test_clean_evidence_drops_labels_headings_and_cuts_long_text() -> None:
    assert clean_evidence("Evidence: Paris is in France.") == "Paris is in France."
    assert clean_evidence("## New section\nSome text") == "New section Some text"
    first = "A first sentence that is long enough to be worth keeping whole."
    assert clean_evidence(f"{first} " + "word " * 300, max_chars=100) == first
    assert clean_evidence("word " * 300, max_chars=100) == " ".join(["word"] * 20)


def test_sketch_markdown_reads_pipe_lists_only_when_asked_or_piped() -> None:
    assert sketch_markdown("A | B; C", "T") == "# T\n## A\n## B\n## C"
    assert sketch_markdown("Just one", "T") == "Just one"
    assert sketch_markdown("Just one\nmore", "T", one_line=True) == "# T\n## Just one"
    assert sketch_markdown("# Title\n## A", "T", one_line=True) == "# Title\n## A"


def test_fewshot_rewrite_page_takes_the_slot_from_the_written_page() -> None:
    llm = ScriptedSeekLLMDouble(
        {
            "sketch": " Film shot in Leland | Director of that film",
            "subquery": " Leland film",
            "rewrite": [
                "- Film shot in Leland: Maximum Overdrive.\n"
                "- Director of that film: <TO BE FILLED>",
                "- Film shot in Leland: Maximum Overdrive.\n- Director of that film: Stephen King."
                "\n- An extra section the model made up: more text",
            ],
            "answer": "Stephen King",
        }
    )
    pipeline = SeekPipeline(
        llm,
        RecordingRetriever(),
        settings=SeekSettings(variant="rewrite-page"),
        prompt_style="fewshot",
    )
    result = asyncio.run(pipeline.answer(QUESTION))
    assert result.sketch is not None
    assert [g.slot for g in result.sketch.gists] == ["Maximum Overdrive.", "Stephen King."]
    assert "An extra section" in llm.texts("answer")[0]  # the page, growth included


@pytest.mark.parametrize(
    ("style", "spec", "expected"),
    [
        ("auto", "llamacpp:gemma3-270m", "fewshot"),
        ("auto", "openai:http://h:8000/v1#Qwen/Qwen3-8B", "chat"),
        ("auto", None, "chat"),
        ("chat", "llamacpp:gemma3-270m", "chat"),
    ],
)
def test_prompt_style_follows_the_backend_unless_given(
    style: str, spec: str | None, expected: str
) -> None:
    from sira_seek.seek.settings import resolve_prompt_style

    assert resolve_prompt_style(style, spec) == expected  # type: ignore[arg-type]
