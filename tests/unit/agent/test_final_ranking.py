"""The final ranking of the gathered pages (SIRA §4.4, ``agent/ranking.py``) and Recall@B over it.

The LLM is ``ScriptedLLMDouble`` (tests/unit/llm/scripted_llm.py), a scripted double ABOVE the
``LLMClient`` protocol, through the real ``BlockingLLMClient``; ``PagesToolbox`` is a double of
the loop's own ``AgentToolbox`` protocol (Python objects, no REST) returning the real tool models.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from scripted_llm import ScriptedLLMDouble  # noqa: E402

from sira_seek.agent.evaluation import evaluate_runs  # noqa: E402
from sira_seek.agent.loop import AgentLoop, AgentLoopSettings, AgentRun, PageRead  # noqa: E402
from sira_seek.agent.prompts import AgentPrompt  # noqa: E402
from sira_seek.agent.ranking import RANK_SNIPPET_CHARS, order_pages, rank_run  # noqa: E402
from sira_seek.agent.tools import CategoryLookup, Passage, SearchToolResult  # noqa: E402
from sira_seek.cli.agentic_cmd import _render  # noqa: E402
from sira_seek.llm.blocking import BlockingLLMClient  # noqa: E402
from sira_seek.llm.request import LLMRequest  # noqa: E402
from sira_seek.workflows.agentic import AgenticEvaluation  # noqa: E402

QUESTION = "Where was the director of Metropolis born?"


def _document(request: LLMRequest) -> str:
    """The document part of a rank request (chat style: the user message)."""
    user = [m.content for m in request.messages or () if m.role == "user"]
    assert user, "a rank request without a user message"
    return user[-1].split("Document:\n", 1)[1]


def scores_by_title(scores: dict[str, int | str]) -> Any:
    """A scripted answer for rank requests: the score of the page whose title opens the document
    (a str is answered as it is, to script an unusable answer)."""

    def answer(request: LLMRequest) -> str:
        title = _document(request).split("\n", 1)[0]
        score = scores[title]
        return score if isinstance(score, str) else json.dumps({"score": score})

    return answer


def _run(ids: list[str], *, budget: int = 10) -> AgentRun:
    pages = [PageRead(id=i, title=f"T{i}", text=f"text of {i} " * 80, step=1) for i in ids]
    return AgentRun(question_id="q1", question=QUESTION, stop_reason="answered",
                    budget=budget, max_steps=5, search_k=5, pages_read=pages)  # fmt: skip


def test_order_pages_moves_scored_pages_and_keeps_unscored_ones_in_place() -> None:
    stream = ["a", "b", "c", "d", "e"]
    scores: dict[str, float | None] = {"a": 10, "b": None, "c": 90, "d": 10, "e": 50}
    # b keeps position 2; the others fill 1, 3, 4, 5 by score, ties (a, d) in stream order
    assert order_pages(stream, scores) == ["c", "b", "e", "a", "d"]


def test_recall_reads_the_ranked_list_and_the_stream_is_the_labelled_second_figure() -> None:
    llm = ScriptedLLMDouble(default=scores_by_title({"Tp1": 5, "Tp2": 20, "Tp3": 95}))
    ranked = rank_run(_run(["p1", "p2", "p3"]), BlockingLLMClient(llm), chat=True)
    assert ranked.ranked_ids == ["p3", "p2", "p1"] and ranked.page_ids == ["p1", "p2", "p3"]
    assert ranked.rank_calls == 3 and ranked.rank_failures == 0 and ranked.llm_calls == 3
    report = evaluate_runs([ranked], {"q1": {"p3": 1}}, {})
    assert report.final_ranking == "llm"
    (result,) = report.results
    assert (result.first_relevant_rank, result.stream_first_relevant_rank) == (1, 3)
    assert report.recall_at_1 == 1.0  # the ranked list: p3 first
    assert report.stream_recall["recall_at_1"] == 0.0  # the stream: p3 third
    assert report.stream_recall["recall_at_10"] == 1.0
    # each request reads the question, the title and only the snippet of the page
    request = llm.calls[0]
    assert QUESTION in request.messages[-1].content
    assert (
        _document(request)
        == f"Tp1\n{' '.join(('text of p1 ' * 80).split())}"[
            : len("Tp1\n") + RANK_SNIPPET_CHARS
        ].rstrip()
    )


def test_a_page_without_a_usable_score_keeps_its_stream_position_and_is_noted() -> None:
    llm = ScriptedLLMDouble(
        default=scores_by_title({"Tp1": 5, "Tp2": '{"relevance": "high"}', "Tp3": 95})
    )
    ranked = rank_run(_run(["p1", "p2", "p3"]), BlockingLLMClient(llm), chat=True)
    assert ranked.ranked_ids == ["p3", "p2", "p1"] and ranked.rank_failures == 1
    report = evaluate_runs([ranked], {"q1": {"p2": 1}}, {})
    assert report.results[0].first_relevant_rank == 2
    assert any("1 of 3 pages got no usable score" in note for note in report.notes)


def test_stream_and_ranked_runs_are_not_averaged_together() -> None:
    llm = ScriptedLLMDouble(default=scores_by_title({"Tp1": 5}))
    ranked = rank_run(_run(["p1"]), BlockingLLMClient(llm), chat=True)
    with pytest.raises(ValueError, match="ranked and unranked"):
        evaluate_runs([ranked, _run(["p1"])], {"q1": {"p1": 1}}, {})


class PagesToolbox:
    """Double of the loop's ``AgentToolbox``: every search returns the same pages."""

    def __init__(self, pages: list[Passage]) -> None:
        self.pages = pages

    def search(self, query: str, expansions: list[str] | None = None, k: int = 10,
               *, categories: list[str] | None = None) -> SearchToolResult:  # fmt: skip
        return SearchToolResult(query=query, method="bm25", passages=self.pages[:k],
                                grounding=[], plain_bm25=True)  # fmt: skip

    def categories(self, name: str, k: int = 10) -> CategoryLookup:
        return CategoryLookup(name=name, available=False)


def test_pages_past_the_budget_are_neither_ranked_nor_scored() -> None:
    # one search returns five pages; the budget is three, so p4 and p5 never enter the stream:
    # the ranking LLM would put p5 (the relevant page) first if it were asked about it
    pages = [Passage(id=f"p{i}", title=f"Tp{i}", text=f"text {i}", score=1.0) for i in range(1, 6)]
    search = json.dumps({"action": "search", "text": "Metropolis", "expansions": []})
    llm = ScriptedLLMDouble(
        sequence=[search],
        default=scores_by_title({"Tp1": 10, "Tp2": 20, "Tp3": 30, "Tp4": 90, "Tp5": 99}),
    )
    client = BlockingLLMClient(llm)
    loop = AgentLoop(client, PagesToolbox(pages), AgentPrompt("chat"),
                     AgentLoopSettings.for_protocol(budget=3, search_k=5))  # fmt: skip
    run = loop.run(QUESTION, question_id="q1")
    assert run.stop_reason == "budget" and run.page_ids == ["p1", "p2", "p3"]
    ranked = rank_run(run, client, chat=True)
    assert ranked.ranked_ids == ["p3", "p2", "p1"] and ranked.rank_calls == 3
    asked = [_document(r).split("\n", 1)[0] for r in llm.calls[1:]]
    assert sorted(asked) == ["Tp1", "Tp2", "Tp3"]
    report = evaluate_runs([ranked], {"q1": {"p5": 1}}, {})
    assert report.recall_at_budget == 0.0 and report.stream_recall["recall_at_3"] == 0.0


def test_text_and_json_say_when_the_step_cap_stopped_a_question(
    capsys: pytest.CaptureFixture[str],
) -> None:
    capped = _run(["p1"], budget=100).model_copy(update={"stop_reason": "max_steps"})
    llm = ScriptedLLMDouble(default=scores_by_title({"Tp1": 50}))
    ranked = rank_run(capped, BlockingLLMClient(llm), chat=True)
    report = evaluate_runs([ranked], {"q1": {"p1": 1}}, {})
    done = AgenticEvaluation(index="idx", llm="scripted:x", report=report, llm_calls=1,
                             completion_tokens=0, seconds=0.0)  # fmt: skip
    _render(done, as_json=False)
    out, err = capsys.readouterr()
    assert "[q1] stopped by the step cap (max_steps 5), 1 pages" in out
    assert "stream before the final ranking: recall_at_1 1.0" in out
    assert "step cap (max_steps 5) stopped 1 of 1 questions" in err
    _render(done, as_json=True)
    out, _ = capsys.readouterr()
    found = json.loads(out)
    assert found["results"][0]["stop_reason"] == "max_steps"
    assert found["final_ranking"] == "llm" and found["stream_recall"]["recall_at_100"] == 1.0
