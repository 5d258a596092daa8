"""The SIRA paper's §4.4 protocol, the default of ``eval agentic``: evidence-blind, one page
budget, Recall@B as a hit indicator over the ranked stream cut at B = 1, 10, 100.

The no-leak test drives the real workflow (``workflows.agentic``) with the real tools over the
in-memory ``SearchBackend`` double and ``ScriptedLLMDouble`` (tests/unit/llm/scripted_llm.py)
above the ``LLMClient`` protocol, and reads EVERY request the LLM got. The budget test drives
the loop with a double of its own ``AgentToolbox`` protocol, so a search can return any pages.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from in_memory_backend import InMemoryBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from scripted_llm import ScriptedLLMDouble, use_llm_double  # noqa: E402

from sira_seek.agent.evaluation import evaluate_runs  # noqa: E402
from sira_seek.agent.loop import AgentLoop, AgentLoopSettings, AgentRun, PageRead  # noqa: E402
from sira_seek.agent.prompts import AgentPrompt  # noqa: E402
from sira_seek.agent.tools import CategoryLookup, Passage, SearchToolResult  # noqa: E402
from sira_seek.llm.blocking import BlockingLLMClient  # noqa: E402
from sira_seek.llm.request import LLMRequest  # noqa: E402
from sira_seek.workflows.agentic import (  # noqa: E402
    AgenticEvaluation,
    AgenticEvaluationRequest,
    evaluate_agentic,
)
from sira_seek.workflows.errors import InvalidInput  # noqa: E402

# Every title, id and text holds words no prompt, example or question of the test holds, so
# any of them in a prompt can only have come from a retrieved page.
DOCS = {
    "zq-101": {
        "title": "Vessendorp Quarterly",
        "text": "Vessendorp Quarterly was an atlas periodical that Ilmari Ferrand started "
        "in 1771 at Kestrova harbour.",
    },
    "zq-102": {
        "title": "Ilmari Ferrand",
        "text": "Ilmari Ferrand, copperplate engraver, was raised near Kestrova, printed sea "
        "charts and edited an atlas periodical.",
    },
    "zq-103": {
        "title": "Kestrova",
        "text": "Kestrova is the harbour town whose engraver guild printed sea charts.",
    },
    "zq-104": {
        "title": "Oskarine Thallweg",
        "text": "Oskarine Thallweg drew sea charts of the northern harbour towns.",
    },
}
QUESTION = "Which map magazine did a copperplate engraver found in a harbour town?"
MARKERS = ("vessendorp", "ilmari", "ferrand", "kestrova", "thallweg", "oskarine", "zq-")

SCRIPT = [
    {"action": "category", "text": "Map magazines", "expansions": []},
    {"action": "search", "text": "map magazine copperplate engraver",
     "expansions": ["atlas", "qqxv nowhere"]},
    {"action": "search", "text": "engraver harbour town", "expansions": ["sea charts"]},
    {"action": "search", "text": "magazine founded harbour town", "expansions": []},
    {"action": "answer", "text": "no idea", "expansions": []},
]  # fmt: skip


def _files(tmp_path: Path) -> dict[str, Path]:
    qa = tmp_path / "qa.jsonl"
    qa.write_text(
        json.dumps({"id": "q1", "question": QUESTION, "golden_answers": ["Vessendorp Quarterly"]})
        + "\n"
    )
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\tzq-101\t1\n")
    return {"questions": qa, "qrels": qrels}


def _prompt_text(request: LLMRequest) -> str:
    """Everything the LLM is shown: the prompt, or every chat message."""
    parts = [request.prompt or ""] + [m.content for m in request.messages or ()]
    return "\n".join(parts).lower()


def _retrieved_strings() -> list[str]:
    """The ids, titles, marker words and every 3-word run of every document's text."""
    found: list[str] = [*MARKERS]
    for doc_id, doc in DOCS.items():
        found += [doc_id, doc["title"].lower()]
        words = re.findall(r"[\w'-]+", doc["text"].lower())
        found += [" ".join(words[i : i + 3]) for i in range(len(words) - 2)]
    return found


def _evaluate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_spec: str, **values: Any
) -> tuple[AgenticEvaluation, ScriptedLLMDouble]:
    # after the episode, the final ranking (SIRA §4.4) asks one score per gathered page
    llm = ScriptedLLMDouble(
        sequence=[json.dumps(step) for step in SCRIPT], default=json.dumps({"score": 50})
    )
    use_llm_double(monkeypatch, llm)
    request = AgenticEvaluationRequest.build(
        index="idx", llm=llm_spec, **_files(tmp_path), **values
    )
    return evaluate_agentic(lambda: InMemoryBackend(DOCS), request), llm


@pytest.mark.parametrize("llm_spec", ["scripted:chat", "llamacpp:fewshot"])
def test_no_retrieved_text_reaches_any_prompt_in_a_default_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_spec: str
) -> None:
    done, llm = _evaluate(tmp_path, monkeypatch, llm_spec)
    report = done.report
    assert (report.protocol, report.budget, report.max_steps, report.search_k) == (
        "evidence-blind", 100, 10, 20
    )  # fmt: skip
    (result,) = report.results
    # the searches did retrieve the documents (their text is fetched, for scoring only) ...
    assert set(result.pages_read) == set(DOCS) and result.answer_covered is True
    assert result.first_relevant_rank is not None
    # ... and not one request of the episode holds an id, a title or a run of their text
    steps, ranking = llm.calls[: len(SCRIPT)], llm.calls[len(SCRIPT) :]
    leaks = [
        (n, s) for n, req in enumerate(steps) for s in _retrieved_strings()
        if s in _prompt_text(req)
    ]  # fmt: skip
    assert leaks == [], sorted({s for _, s in leaks})
    # only after the last step, the final ranking reads each page's title once ("fetched
    # content is used only for final ranking, not for formulating subsequent BM25 queries")
    assert len(ranking) == len(DOCS) and result.ranked != []
    assert sorted(
        next(d["title"] for d in DOCS.values() if d["title"].lower() in _prompt_text(req))
        for req in ranking
    ) == sorted(d["title"] for d in DOCS.values())
    # what it does see: the question, its own earlier actions and what concerns them
    last = _prompt_text(steps[-1])
    assert QUESTION.lower() in last
    assert "this index has no categories" in last
    assert '"text": "engraver harbour town"' in last
    assert "qqxv nowhere (absent)" in last
    assert re.search(r"\d+ new pages, \d+ of 100 used", last)


def test_the_snippets_protocol_still_feeds_titles_and_snippets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done, llm = _evaluate(tmp_path, monkeypatch, "scripted:chat", protocol="snippets")
    report = done.report
    assert (report.protocol, report.budget, report.max_steps, report.search_k) == (
        "snippets", 10, 6, 5
    )  # fmt: skip
    assert report.cutoffs == [1, 10] and report.recall_at_100 is None
    shown = _prompt_text(llm.calls[2])  # after the first search
    titles = [doc["title"].lower() for doc in DOCS.values()]
    assert any(f"{title}: {title}" in shown for title in titles)  # "Title: text..." snippets
    # the same check as the default run's finds them: it can see a leak
    assert any(s in _prompt_text(req) for req in llm.calls for s in _retrieved_strings())
    out = done.to_json()
    assert (out["protocol"], out["budget"], out["cutoffs"]) == ("snippets", 10, [1, 10])


def test_a_request_takes_its_protocols_bounds_once() -> None:
    files = {"questions": Path("qa.jsonl"), "qrels": Path("qrels.tsv")}
    blind = AgenticEvaluationRequest.build(index="idx", **files)
    assert (blind.protocol, blind.budget, blind.max_steps, blind.search_k) == (
        "evidence-blind", 100, 10, 20
    )  # fmt: skip
    snippets = AgenticEvaluationRequest.build(index="idx", protocol="snippets", **files)
    assert (snippets.budget, snippets.max_steps, snippets.search_k) == (10, 6, 5)
    given = AgenticEvaluationRequest.build(index="idx", budget=50, max_steps=None, **files)
    assert (given.budget, given.max_steps) == (50, 10)
    assert given.loop_settings() == AgentLoopSettings.for_protocol("evidence-blind", budget=50)
    with pytest.raises(InvalidInput, match="protocol") as refused:
        AgenticEvaluationRequest.build(index="idx", protocol="peek", **files)
    assert "budget" not in str(refused.value)


class PagesToolbox:
    """Double of the loop's ``AgentToolbox``: each query returns its pages (k ignored)."""

    def __init__(self, pages: dict[str, list[str]]) -> None:
        self.pages = pages
        self.queries: list[str] = []

    def search(
        self,
        query: str,
        expansions: list[str] | None = None,
        k: int = 10,
        *,
        categories: list[str] | None = None,
    ) -> SearchToolResult:
        self.queries.append(query)
        found = self.pages[query]
        passages = [Passage(id=d, title=f"T{d}", text=f"x{d}", score=1.0) for d in found]
        return SearchToolResult(query=query, method="bm25", passages=passages, plain_bm25=True)

    def categories(self, name: str, k: int = 10) -> CategoryLookup:
        return CategoryLookup(name=name, available=False)


def _search(query: str) -> str:
    return json.dumps({"action": "search", "text": query, "expansions": []})


def test_the_budget_stops_the_stream_at_100_unique_pages() -> None:
    pages = {f"s{n}": [f"p{n}-{i}" for i in range(20)] for n in range(1, 7)}
    pages["s2"] = pages["s1"][:5] + pages["s2"][:15]  # 5 pages seen before: not charged twice
    tools = PagesToolbox(pages)
    llm = ScriptedLLMDouble(sequence=[_search(f"s{n}") for n in range(1, 8)])
    loop = AgentLoop(BlockingLLMClient(llm), tools, AgentPrompt("chat"))
    run = loop.run("?", question_id="q")

    assert run.protocol == "evidence-blind" and run.budget == 100
    assert run.stop_reason == "budget" and len(run.page_ids) == len(set(run.page_ids)) == 100
    assert tools.queries == ["s1", "s2", "s3", "s4", "s5", "s6"]  # no 7th search
    assert [len(step.new_pages) for step in run.steps] == [20, 15, 20, 20, 20, 5]
    assert run.steps[-1].new_pages == pages["s6"][:5]  # its pages past the budget are dropped
    assert run.steps[-1].observation == "5 new pages, 100 of 100 used"
    # the stream is in retrieval order: s1's pages first, then s2's new ones, ...
    assert run.page_ids[:25] == pages["s1"] + pages["s2"][5:10]
    report = evaluate_runs([run], {"q": {pages["s6"][5]: 1}}, {})
    assert report.recall_at_100 == 0.0  # a relevant page past the budget never counts


def _stream_run(qid: str, size: int = 100) -> AgentRun:
    return AgentRun(
        question_id=qid, question="?", stop_reason="budget", budget=100, max_steps=10,
        search_k=20, pages_read=[PageRead(id=f"{qid}-{r}", step=1) for r in range(1, size + 1)],
    )  # fmt: skip


def test_recall_at_b_is_a_hit_indicator_over_the_stream() -> None:
    runs = [_stream_run(q) for q in ("r7", "r1", "r50", "none", "two", "unjudged")]
    qrels = {
        "r7": {"r7-7": 1},  # rank 7: 0 at B=1, 1 at B=10 and B=100
        "r1": {"r1-1": 1},
        "r50": {"r50-50": 1},
        "none": {"elsewhere": 1},
        "two": {"two-3": 1, "elsewhere": 2},  # one of two golds found: 1, not 0.5
    }
    report = evaluate_runs(runs, qrels, {})
    by_id = {r.id: r.first_relevant_rank for r in report.results}
    assert by_id == {"r7": 7, "r1": 1, "r50": 50, "none": None, "two": 3, "unjudged": None}
    assert report.cutoffs == [1, 10, 100] and report.judged == 5
    assert report.recall_at_1 == pytest.approx(1 / 5)
    assert report.recall_at_10 == pytest.approx(3 / 5)
    assert report.recall_at_100 == pytest.approx(4 / 5)
    assert report.recall_at_budget == report.recall_at_100
    alone = evaluate_runs([runs[0]], {"r7": qrels["r7"]}, {})
    assert (alone.recall_at_1, alone.recall_at_10, alone.recall_at_100) == (0.0, 1.0, 1.0)


def test_the_blind_prompt_shows_no_page_even_in_its_examples() -> None:
    blind = AgentPrompt("fewshot").next_action(QUESTION, []).prompt or ""
    snippets = AgentPrompt("fewshot", protocol="snippets").next_action(QUESTION, []).prompt or ""
    snippet = "Arthur's Magazine (1844-1846) was an American literary periodical"
    assert snippet in snippets and snippet not in blind
    assert "Found:" not in blind and "new pages" in blind and "without reading the pages" in blind
