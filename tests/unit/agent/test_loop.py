"""The agentic search loop, driven by a scripted LLM double ABOVE the ``LLMClient`` protocol.

``ScriptedLLMDouble`` (tests/unit/llm/scripted_llm.py) answers each next-action request from a
fixed script, through the real ``BlockingLLMClient``; ``ScriptedToolbox`` is a double of the loop's
own ``AgentToolbox`` protocol (Python objects, no REST) returning the real tool result models,
and recording every call so the tests can see what the loop asked. One test runs the real
``AgentTools`` over the in-memory ``SearchBackend`` double for the category path.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from in_memory_backend import InMemoryBackend, default_properties

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from scripted_llm import Answer, ScriptedLLMDouble  # noqa: E402

from sira_seek.agent.evaluation import (  # noqa: E402
    answer_in_pages,
    evaluate_runs,
    first_relevant_rank,
    hit_at,
    recall_cutoffs,
)
from sira_seek.agent.loop import AgentLoop, AgentLoopSettings, AgentRun, PageRead  # noqa: E402
from sira_seek.agent.prompts import (  # noqa: E402
    ACTION_SCHEMA,
    AgentAction,
    AgentPrompt,
    SearchProtocol,
    TranscriptEntry,
)
from sira_seek.agent.tools import (  # noqa: E402
    CategoryLookup,
    GroundingDecision,
    Passage,
    SearchToolResult,
)
from sira_seek.llm.blocking import BlockingLLMClient  # noqa: E402
from sira_seek.llm.errors import MalformedOutputError, ServerUnreachableError  # noqa: E402
from sira_seek.llm.request import LLMRequest  # noqa: E402
from sira_seek.workflows.agent_tools import AgentTools  # noqa: E402

QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"


def _act(action: str, text: str, expansions: Sequence[str] = ()) -> str:
    return json.dumps({"action": action, "text": text, "expansions": list(expansions)})


def _page(doc_id: str, text: str = "") -> Passage:
    return Passage(id=doc_id, title=f"Title {doc_id}", text=text or f"text of {doc_id}", score=1.0)


class ScriptedToolbox:
    """Double of the loop's ``AgentToolbox`` protocol: canned results per query, and a log."""

    def __init__(
        self,
        pages: dict[str, list[Passage]],
        *,
        categories: dict[str, CategoryLookup] | None = None,
        refuse: str | None = None,
    ) -> None:
        self.pages = pages
        self.known = categories or {}
        self.refuse = refuse
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def search(
        self,
        query: str,
        expansions: list[str] | None = None,
        k: int = 10,
        *,
        categories: list[str] | None = None,
    ) -> SearchToolResult:
        self.calls.append(("search", {"query": query, "expansions": expansions, "k": k,
                                      "categories": categories}))  # fmt: skip
        if query == self.refuse:
            raise ValueError("k must be between 1 and 100")
        grounding = [
            GroundingDecision(
                phrase=p,
                kept=not p.startswith("the"),
                decision="kept" if not p.startswith("the") else "too_common",
                why="",
            )
            for p in expansions or []
        ]
        return SearchToolResult(
            query=query,
            method="sira" if expansions else "bm25",
            passages=self.pages.get(query, [])[:k],
            grounding=grounding,
            plain_bm25=not expansions,
        )

    def categories(self, name: str, k: int = 10) -> CategoryLookup:
        self.calls.append(("category", {"name": name, "k": k}))
        return self.known.get(name, CategoryLookup(name=name, available=True, nearest=["X"]))


def _loop(
    script: Sequence[Answer],
    tools: Any,
    protocol: SearchProtocol = "snippets",
    **settings: Any,
) -> tuple[AgentLoop, ScriptedLLMDouble]:
    """The loop under ``protocol``; the tests of this module default to ``snippets``, whose
    observations show what a search found (test_evidence_blind.py covers the default one)."""
    llm = ScriptedLLMDouble(sequence=script)
    loop = AgentLoop(
        BlockingLLMClient(llm),
        tools,
        AgentPrompt("fewshot", protocol=protocol),
        AgentLoopSettings.for_protocol(protocol, **settings),
    )
    return loop, llm


@pytest.fixture
def magazine_tools() -> Iterator[ScriptedToolbox]:
    yield ScriptedToolbox(
        {
            "Arthur's Magazine": [_page("d1", "Arthur's Magazine (1844-1846)"), _page("d3")],
            "First for Women": [_page("d2", "started in 1989"), _page("d1"), _page("d4")],
        },
        categories={
            "Women's magazines": CategoryLookup(
                name="Women's magazines", available=True, exists=True, doc_count=2
            )
        },
    )


def test_search_category_malformed_and_answer_make_one_trace(
    magazine_tools: ScriptedToolbox,
) -> None:
    loop, llm = _loop(
        [
            _act("search", "Arthur's Magazine", ["literary periodical", "the magazine"]),
            _act("category", "Women's magazines"),
            MalformedOutputError("cut off", raw_text='{"action": "sea'),
            '{"action": "dance", "text": "x", "expansions": []}',  # parses, is no action
            _act("search", "First for Women", ["Bauer Media"]),
            _act("answer", "Arthur's Magazine"),
        ],
        magazine_tools,
        budget=10,
        max_steps=8,
    )
    run = loop.run(QUESTION, question_id="q1")

    assert [s.kind for s in run.steps] == [
        "search", "category", "malformed", "malformed", "search", "answer"
    ]  # fmt: skip
    assert run.stop_reason == "answered" and run.answer == "Arthur's Magazine"
    # a page returned twice counts once, in first-seen order, tagged with its first step
    assert run.page_ids == ["d1", "d3", "d2", "d4"]
    assert [p.step for p in run.pages_read] == [1, 1, 5, 5]
    assert run.steps[4].new_pages == ["d2", "d4"]
    # the agent's expansions reach the tool; grounding decides, and the trace says which
    first_search = magazine_tools.calls[0][1]
    assert first_search["expansions"] == ["literary periodical", "the magazine"]
    assert run.steps[0].kept_expansions == ["literary periodical"]
    assert "the magazine (too_common)" in run.steps[0].observation
    # a category confirmed by the category tool enters the later search; not before
    assert first_search["categories"] is None
    assert magazine_tools.calls[2][1]["categories"] == ["Women's magazines"]
    assert run.grounded_categories == ["Women's magazines"]
    # malformed output is kept for the record and the next step is asked for
    assert run.steps[2].raw_output == '{"action": "sea' and run.steps[2].action is None
    assert run.steps[3].raw_output is not None and "action" in (run.steps[3].error or "")
    assert run.malformed_steps == 2 and run.tool_calls == 3 and run.llm_calls == 6
    # every request is the action schema, and the last one shows what earlier steps found
    assert all(r.json_schema == ACTION_SCHEMA for r in llm.calls)
    last_prompt = llm.calls[-1].prompt or ""
    assert last_prompt.endswith("Step 6: ")
    assert "Title d2: started in 1989" in last_prompt
    assert "(unusable output)" in last_prompt


def test_the_budget_caps_the_pages_read_and_stops_the_episode() -> None:
    tools = ScriptedToolbox({"q": [_page(f"d{i}") for i in range(1, 8)]})
    loop, llm = _loop([_act("search", "q"), _act("answer", "never asked")], tools, budget=3)
    run = loop.run(QUESTION)
    assert run.stop_reason == "budget" and run.answer is None
    assert run.page_ids == ["d1", "d2", "d3"]
    assert tools.calls[0][1]["k"] == 5  # search_k, not the budget, sets the request size
    assert len(llm.calls) == 1
    assert "d4" not in run.steps[0].observation and "(+" not in run.steps[0].observation


def test_pages_past_the_budget_in_a_later_search_are_never_shown() -> None:
    tools = ScriptedToolbox(
        {"a": [_page("d1"), _page("d2")], "b": [_page("d2"), _page("d3"), _page("d4")]}
    )
    loop, _ = _loop([_act("search", "a"), _act("search", "b")], tools, budget=3)
    run = loop.run(QUESTION)
    assert run.page_ids == ["d1", "d2", "d3"] and run.stop_reason == "budget"
    assert run.steps[1].new_pages == ["d3"]
    assert "Title d4" not in run.steps[1].observation


def test_max_steps_bounds_an_agent_that_never_answers() -> None:
    tools = ScriptedToolbox({"same": [_page("d1")]})
    loop, llm = _loop([_act("search", "same")] * 5, tools, budget=10, max_steps=3)
    run = loop.run(QUESTION)
    assert run.stop_reason == "max_steps" and len(run.steps) == 3 and len(llm.calls) == 3
    assert run.page_ids == ["d1"]
    assert [s.observation for s in run.steps[1:]] == ["no new pages", "no new pages"]


def test_an_unreachable_llm_ends_the_question_without_raising() -> None:
    tools = ScriptedToolbox({"a": [_page("d1")]})
    loop, _ = _loop([_act("search", "a"), ServerUnreachableError("connection refused")], tools)
    run = loop.run(QUESTION)
    assert run.stop_reason == "llm_error" and run.page_ids == ["d1"]
    assert run.steps[-1].kind == "llm_error" and "unreachable" in (run.steps[-1].error or "")


def test_a_tool_refusing_an_argument_is_a_recorded_step() -> None:
    tools = ScriptedToolbox({"ok": [_page("d1")]}, refuse="bad")
    loop, _ = _loop([_act("search", "bad"), _act("search", "ok"), _act("answer", "A")], tools)
    run = loop.run(QUESTION)
    assert [s.kind for s in run.steps] == ["tool_error", "search", "answer"]
    assert "between 1 and 100" in (run.steps[0].error or "")
    assert run.page_ids == ["d1"] and run.answer == "A"


def test_blank_action_text_is_malformed_not_a_tool_call() -> None:
    tools = ScriptedToolbox({})
    loop, _ = _loop([_act("search", "   "), _act("answer", "B")], tools)
    run = loop.run(QUESTION)
    assert [s.kind for s in run.steps] == ["malformed", "answer"] and tools.calls == []


def test_real_tools_over_the_memory_backend_ground_a_category_before_using_it() -> None:
    enrichment = {
        "sira_enrichment": {
            "properties": {
                "phrases": {"type": "text", "fields": {"shingles": {"type": "text"}}},
                "categories": {"type": "keyword", "fields": {"words": {"type": "text"}}},
            }
        }
    }
    docs = {
        "d1": {"title": "Arthur's Magazine", "text": "A literary periodical.",
               "sira_enrichment": {"categories": ["Defunct magazines"]}},
        "d2": {"title": "First for Women", "text": "A woman's magazine.",
               "sira_enrichment": {"categories": ["Women's magazines"]}},
    }  # fmt: skip
    backend = InMemoryBackend(docs, properties={**default_properties(), **enrichment})
    tools = AgentTools(backend, "idx")
    loop, _ = _loop(
        [
            _act("category", "Womens magazines"),  # absent: neighbours, not grounded
            _act("category", "Women's magazines"),
            _act("search", "magazine for women"),
            _act("answer", "First for Women"),
        ],
        tools,
    )
    run = loop.run(QUESTION)
    assert run.steps[0].observation.startswith('category "Womens magazines": absent; nearest: ')
    assert "Women's magazines" in run.steps[0].observation
    assert run.steps[1].observation == 'category "Women\'s magazines": exists, 1 pages'
    assert run.grounded_categories == ["Women's magazines"]
    assert run.steps[2].categories_used == ["Women's magazines"]
    # the double scores every match 1.0: both pages, with the titles and texts of the index
    assert {(p.id, p.title, p.text) for p in run.pages_read} == {
        ("d1", "Arthur's Magazine", "A literary periodical."),
        ("d2", "First for Women", "A woman's magazine."),
    }
    assert "Women's magazines" in json.dumps(backend.searches[-2])  # the ranked request


def test_fewshot_prompt_shows_the_latest_steps_with_their_true_numbers() -> None:
    prompt = AgentPrompt("fewshot", protocol="snippets", history=2)
    transcript = [
        TranscriptEntry(action=AgentAction(action="search", text=f"q{i}"), observation=f"o{i}")
        for i in range(1, 5)
    ]
    request: LLMRequest = prompt.next_action(QUESTION, transcript)
    text = request.prompt or ""
    tail = text[text.rindex(f"Question: {QUESTION}") :]
    assert "q1" not in tail and "q2" not in tail
    assert '\nStep 3: {"action": "search", "expansions": [], "text": "q3"}' in tail
    assert tail.endswith("Found: o4\nStep 5: ")


def test_chat_prompt_instructs_and_asks_for_the_next_step() -> None:
    request = AgentPrompt("chat", protocol="snippets").next_action(QUESTION, [])
    assert request.messages is not None and request.messages[0].role == "system"
    assert '"category"' in request.messages[0].content
    assert request.messages[1].content.startswith(f"Question: {QUESTION}")
    assert "step 1" in request.messages[1].content


def test_a_prompt_and_settings_of_different_protocols_are_refused() -> None:
    with pytest.raises(ValueError, match="evidence-blind protocol, the settings for snippets"):
        AgentLoop(
            BlockingLLMClient(ScriptedLLMDouble()),
            ScriptedToolbox({}),
            AgentPrompt("chat"),
            AgentLoopSettings.for_protocol("snippets"),
        )


def test_settings_take_their_protocols_defaults() -> None:
    blind = AgentLoopSettings()
    assert (blind.protocol, blind.budget, blind.max_steps, blind.search_k) == (
        "evidence-blind", 100, 10, 20
    )  # fmt: skip
    snippets = AgentLoopSettings.for_protocol("snippets", budget=None)
    assert (snippets.budget, snippets.max_steps, snippets.search_k) == (10, 6, 5)
    assert AgentLoopSettings.for_protocol("snippets", budget=30).budget == 30


def _run(
    pages: list[tuple[str, str]], answer: str | None, qid: str = "q", budget: int = 4
) -> AgentRun:
    return AgentRun(
        question_id=qid,
        question="?",
        answer=answer,
        stop_reason="answered" if answer else "budget",
        budget=budget,
        max_steps=6,
        search_k=5,
        pages_read=[PageRead(id=i, title="", text=t, step=1) for i, t in pages],
    )


def test_the_first_relevant_rank_counts_relevant_pages_only() -> None:
    assert first_relevant_rank(["a", "b", "c"], {"c": 1, "z": 1}) == 3
    assert first_relevant_rank(["a"], {"a": 0, "b": 1}) is None  # grade 0 is not relevant
    assert first_relevant_rank(["a"], {}) is None
    assert [hit_at(7, b) for b in (1, 10, 100)] == [0, 1, 1]
    assert hit_at(None, 100) == 0


def test_cutoffs_are_the_papers_up_to_the_budget_and_the_budget() -> None:
    assert recall_cutoffs(100) == [1, 10, 100]
    assert recall_cutoffs(10) == [1, 10]
    assert recall_cutoffs(5) == [1, 5]
    assert recall_cutoffs(250) == [1, 10, 100, 250]
    assert recall_cutoffs(1) == [1]


def test_answer_coverage_is_the_metrics_definition() -> None:
    assert answer_in_pages(["It started in 1989."], ["1989"]) is True
    assert answer_in_pages(["Serial 19890 was issued."], ["1989"]) is False
    assert answer_in_pages(["the O’Neal family"], ["O'Neal"]) is True  # PAGER normalisation
    # yes/no golds count like any other string, as in eval retrieval's coverage
    assert answer_in_pages(["Yes, it is."], ["yes"]) is True
    assert answer_in_pages(["It is."], ["no"]) is False
    assert answer_in_pages([], ["Paris"]) is False
    assert answer_in_pages(["Paris"], []) is None


def test_the_yes_no_rule_is_the_same_in_both_coverages() -> None:
    from sira_seek.metrics.coverage import answer_coverage

    pages = {"yes": ["Yes, both are magazines."], "no": ["nothing to see"], "none": ["x"]}
    golds = {"yes": ["yes"], "no": ["no"], "none": []}
    retrieval = answer_coverage(pages, golds, ks=(10,))
    agent = {qid: answer_in_pages(texts, golds[qid]) for qid, texts in pages.items()}
    assert agent == {"yes": True, "no": False, "none": None}
    assert {q: r is not None for q, r in retrieval.first_rank.items()} == {
        q: c for q, c in agent.items() if c is not None
    }
    assert retrieval.questions == 2 and retrieval.no_gold == 1


def test_evaluate_runs_means_skip_what_cannot_be_scored() -> None:
    runs = [
        _run([("a", "Greenwich Village"), ("b", "x")], "Greenwich Village", "q1"),
        _run([("c", "nothing")], None, "q2"),
        _run([("d", "x")], "no", "q3"),
    ]
    qrels = {"q1": {"b": 1, "z": 1}, "q2": {"c": 1}}
    golden = {"q1": ["Greenwich Village"], "q2": ["Paris"], "q3": ["yes"]}
    report = evaluate_runs(runs, qrels, golden)
    assert (report.protocol, report.budget, report.search_k) == ("evidence-blind", 4, 5)
    assert report.cutoffs == [1, 4]
    assert report.judged == 2 and report.recall_at_1 == 0.5 and report.recall_at_budget == 1.0
    assert report.recall_at_10 is None and report.recall_at_100 is None  # above the budget
    assert report.coverage_questions == 3 and report.answer_coverage == pytest.approx(1 / 3)
    assert report.cover_em == pytest.approx(1 / 3)
    assert report.answered == 2 and report.mean_pages_read == pytest.approx(4 / 3)
    assert report.stop_reasons == {"answered": 2, "budget": 1}
    assert report.notes == []  # no question stopped by the step cap
    assert [r.first_relevant_rank for r in report.results] == [2, 1, None]
    assert [r.answer_covered for r in report.results] == [True, False, False]
    with pytest.raises(ValueError, match="different budgets"):
        evaluate_runs([*runs, runs[0].model_copy(update={"budget": 9})], qrels, golden)
    with pytest.raises(ValueError, match="different budgets"):
        evaluate_runs([*runs, runs[0].model_copy(update={"protocol": "snippets"})], qrels, golden)


def test_a_question_the_step_cap_stopped_is_noted_with_its_pages() -> None:
    capped = _run([("a", "x"), ("b", "y")], None, "q2").model_copy(
        update={"stop_reason": "max_steps"}
    )
    report = evaluate_runs([_run([("c", "z")], "z", "q1"), capped], {"q1": {"c": 1}}, {})
    assert report.stop_reasons == {"answered": 1, "max_steps": 1}
    assert [r.stop_reason for r in report.results] == ["answered", "max_steps"]
    assert report.notes == [
        "the step cap (max_steps 6) stopped 1 of 2 questions before their 4-page budget: "
        "q2 (2) pages; raise it with --max-steps / max_steps"
    ]
