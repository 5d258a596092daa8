"""SEEK's stages and variants with a scripted LLM and an in-memory retriever."""

from __future__ import annotations

import asyncio
import re

import pytest
from seek_fakes import RecordingRetriever
from seek_llm_double import ScriptedSeekLLMDouble

from sira_seek.seek.pipeline import RetrieverRequiredError, SeekPipeline
from sira_seek.seek.results import QuestionInput, SeekResult
from sira_seek.seek.settings import SeekSettings
from sira_seek.seek.sketch import EMPTY_SLOT

QUESTION = "Who directed the film shot in Leland in 1986?"
SKETCH = (
    "The question needs two facts.\n<OUTLINE>\n# The Leland film\n"
    "## Film shot in Leland in 1986\n## Director of that film\n## Other films of that director\n"
    "</OUTLINE>"
)


def subquery_for(text: str) -> str:
    """A sub-query with reasoning first, naming the gist it serves."""
    target = re.findall(r'Next to fill: "([^"]+)"', text)[-1]
    return f"Reasoning about {target} REASONING-MARK.\n<query>search {target}</query>"


def evidence_for(text: str) -> str:
    target = re.findall(r'Write the evidence for "([^"]+)"', text)[-1]
    return f"EVIDENCE[{target}]"


def fill_all_for(text: str) -> str:
    """A one-context fill: one ``## N. heading`` section per section the prompt lists."""
    sections = re.findall(r"### Section (\d+): (.+)", text)
    return "\n".join(f"## {n}. {heading}\nFILLED[{heading}]" for n, heading in sections)


def default_stages(**overrides: object) -> dict[str, object]:
    stages: dict[str, object] = {
        "sketch": SKETCH,
        "subquery": subquery_for,
        "evidence": evidence_for,
        "fill": fill_all_for,
        "answer": "It is clear from the sketch.\n<answer>Stephen King</answer>",
    }
    stages.update(overrides)
    return stages


def run(
    llm: ScriptedSeekLLMDouble,
    retriever: RecordingRetriever | None = None,
    question: str = QUESTION,
    **settings: object,
) -> SeekResult:
    pipeline = SeekPipeline(
        llm,
        retriever if retriever is not None else RecordingRetriever(),
        settings=SeekSettings(**settings),  # type: ignore[arg-type]
    )
    return asyncio.run(pipeline.answer(QuestionInput(id="q1", question=question)))


def test_sequential_fills_slots_in_gist_order_and_answers_from_the_completed_sketch() -> None:
    llm = ScriptedSeekLLMDouble(default_stages())
    retriever = RecordingRetriever()
    result = run(llm, retriever)

    headings = [
        "Film shot in Leland in 1986",
        "Director of that film",
        "Other films of that director",
    ]
    assert result.answer == "Stephen King"
    assert result.sketch is not None and result.sketch.is_complete
    assert [g.heading for g in result.sketch.gists] == headings
    assert [g.slot for g in result.sketch.gists] == [f"EVIDENCE[{h}]" for h in headings]
    assert [s.gist_index for s in result.steps] == [0, 1, 2]
    assert retriever.queries == [f"search {h}" for h in headings]
    assert all(len(s.retrieved_ids) == 5 for s in result.steps)  # top-5 by default
    # the t-th sub-query prompt sees slots 1..t-1 filled and slot t still empty
    for t, text in enumerate(llm.texts("subquery")):
        for earlier in headings[:t]:
            assert f"EVIDENCE[{earlier}]" in text
        assert f"## {headings[t]}\n{EMPTY_SLOT}" in text
    answer_prompt = llm.texts("answer")[0]
    assert all(f"EVIDENCE[{h}]" in answer_prompt for h in headings)
    assert result.usage.by_stage["subquery"].calls == 3
    assert result.usage.by_stage["evidence"].calls == 3
    assert result.usage.total.calls == 8
    assert result.timings.total_s > 0


def test_subqueries_and_their_reasoning_are_not_carried_forward() -> None:
    llm = ScriptedSeekLLMDouble(default_stages())
    run(llm)
    later_prompts = llm.texts("subquery")[1:] + llm.texts("evidence")[1:] + llm.texts("answer")
    for text in later_prompts:
        assert "REASONING-MARK" not in text
        assert "search Film shot in Leland in 1986" not in text
    # the evidence prompt of gist t names its own sub-query only
    evidence_prompts = llm.texts("evidence")
    assert "Search query: search Director of that film" in evidence_prompts[1]
    assert "search Film shot" not in evidence_prompts[1]


def test_parallel_variant_writes_every_subquery_from_the_initial_sketch() -> None:
    llm = ScriptedSeekLLMDouble(default_stages())
    result = run(llm, variant="parallel")
    assert result.sketch is not None and result.sketch.is_complete
    for text in llm.texts("subquery") + llm.texts("fill"):
        assert "FILLED[" not in text  # no step saw another step's evidence
    assert [s.gist_index for s in result.steps] == [0, 1, 2]
    assert all(len(s.retrieved_ids) == 5 for s in result.steps)
    assert [g.slot for g in result.sketch.gists] == [f"FILLED[{h}]" for h in result.sketch.headings]
    assert result.answer == "Stephen King"


def test_parallel_variant_records_a_failed_batch_search_on_every_step() -> None:
    llm = ScriptedSeekLLMDouble(default_stages())
    result = run(llm, RecordingRetriever(fail_on=["Director"]), variant="parallel")
    assert result.error is None and all(s.error for s in result.steps)
    assert result.sketch is not None and result.sketch.is_complete


def test_plan_variant_shows_a_plan_and_concatenated_evidence() -> None:
    llm = ScriptedSeekLLMDouble(
        default_stages(
            subquery=["<query>Leland 1986 film</query>", "<query>Overdrive director</query>"],
            evidence=["Maximum Overdrive was shot in Leland.", "Stephen King directed it."],
        )
    )
    result = run(llm, variant="plan", max_steps=2)
    second = llm.texts("subquery")[1]
    assert "Plan:\n1. Film shot in Leland in 1986\n2. Director of that film" in second
    assert "Evidence so far: Maximum Overdrive was shot in Leland." in second
    assert "## " not in second  # no markdown page: the sketch is only a plan here
    assert (
        "Maximum Overdrive was shot in Leland. Stephen King directed it."
        in (llm.texts("answer")[0])
    )
    assert result.variant == "plan"


def test_without_iterative_retrieval_searches_once_with_the_question() -> None:
    llm = ScriptedSeekLLMDouble(default_stages())
    retriever = RecordingRetriever()
    result = run(llm, retriever, variant="no-iter-retrieval")
    assert retriever.queries == [QUESTION]
    assert "subquery" not in llm.by_stage
    assert len(llm.by_stage["evidence"]) == 3
    assert [s.gist_index for s in result.steps] == [None]
    assert result.sketch is not None and result.sketch.is_complete


def test_without_initialisation_runs_summary_steps_without_a_sketch() -> None:
    llm = ScriptedSeekLLMDouble(
        default_stages(
            subquery=lambda text: "<query>step query</query>",
            evidence=["first summary", "second summary"],
        )
    )
    retriever = RecordingRetriever()
    result = run(llm, retriever, variant="no-init", max_steps=2)
    assert "sketch" not in llm.by_stage
    assert retriever.queries == ["step query", "step query"]
    assert "first summary" in llm.texts("subquery")[1]
    assert "first summary" in llm.texts("answer")[0] and "second summary" in llm.texts("answer")[0]
    assert result.sketch is not None
    assert [g.slot for g in result.sketch.gists] == ["first summary", "second summary"]


def test_rewrite_page_variant_carries_the_rewritten_page_forward() -> None:
    pages = [
        "# The Leland film\n## Film shot in Leland in 1986\nMaximum Overdrive.\n"
        "## Director of that film\n<TO BE FILLED>\n## Other films of that director\n<TO BE FILLED>",
        "# The Leland film\n## Film shot in Leland in 1986\nMaximum Overdrive.\n"
        "## Director of that film\nStephen King.\n## Other films of that director\n<TO BE FILLED>",
        "# whole page again\n## Other films of that director\nNone.",
    ]
    llm = ScriptedSeekLLMDouble(default_stages(rewrite=pages))
    result = run(llm, variant="rewrite-page")
    assert result.sketch is not None
    assert [g.slot for g in result.sketch.gists] == ["Maximum Overdrive.", "Stephen King.", "None."]
    assert "Stephen King." in llm.texts("rewrite")[2]  # the page written, not a rendering
    assert "# whole page again" in llm.texts("answer")[0]


def test_vanilla_rag_answers_from_documents_retrieved_with_the_question() -> None:
    llm = ScriptedSeekLLMDouble(default_stages())
    retriever = RecordingRetriever()
    result = run(llm, retriever, method="vanilla-rag")
    assert retriever.queries == [QUESTION]
    assert set(llm.by_stage) == {"answer"}
    assert "Doc 0 for" in llm.texts("answer")[0]
    assert result.answer == "Stephen King" and result.sketch is None and result.variant is None


def test_vanilla_llm_answers_closed_book() -> None:
    llm = ScriptedSeekLLMDouble(default_stages())
    pipeline = SeekPipeline(llm, None, settings=SeekSettings(method="vanilla-llm"))
    result = asyncio.run(pipeline.answer(QUESTION))
    assert set(llm.by_stage) == {"answer"} and not result.steps
    assert "Retrieved documents" not in llm.texts("answer")[0]
    assert result.answer == "Stephen King"


def test_a_retrieving_method_without_a_retriever_is_refused() -> None:
    with pytest.raises(RetrieverRequiredError):
        SeekPipeline(ScriptedSeekLLMDouble({}), None, settings=SeekSettings())
