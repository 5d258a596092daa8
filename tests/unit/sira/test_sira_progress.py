"""Progress callbacks over SIRA's slow part, the LLM calls: once per query, as each finishes.

The CLI draws its bars from these callbacks (the library never prints), so a callback that
fired only at the end, twice for a query, or not for a failed call would show a wrong rate
and ETA.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from progress_recorder import ProgressRecorder
from sira_doubles import DF, DFTableBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from scripted_llm import ScriptedLLMDouble  # noqa: E402

from sira_seek.corpus import Query  # noqa: E402
from sira_seek.llm.blocking import BlockingLLMClient  # noqa: E402
from sira_seek.llm.errors import ServerUnreachableError  # noqa: E402
from sira_seek.llm.request import LLMRequest  # noqa: E402
from sira_seek.llm.response import LLMError, LLMResponse  # noqa: E402
from sira_seek.sira.expansions import LLMExpander, QueryInput  # noqa: E402
from sira_seek.sira.retriever import SiraRetriever  # noqa: E402
from sira_seek.workflows.recorded import recorded_run  # noqa: E402


def _keywords(*phrases: str) -> str:
    return json.dumps({"keywords": list(phrases)})


def test_generate_many_reports_each_request_as_it_finishes_in_input_order() -> None:
    llm = ScriptedLLMDouble(
        by_prompt={"p3": ServerUnreachableError("connection refused")}, default="ok"
    )
    seen_at_callback: list[int] = []
    sync = BlockingLLMClient(llm)
    try:
        outcomes = sync.generate_many(
            [LLMRequest(prompt=f"p{i}", lookup_key=f"p{i}") for i in range(6)],
            1,
            on_done=lambda n: seen_at_callback.extend([len(llm.calls)] * n),
        )
    finally:
        sync.close()
    # One call per request, each reported before the next request was sent (concurrency 1):
    # progress moves during the batch, not all at its end.
    assert seen_at_callback == [1, 2, 3, 4, 5, 6]
    assert [type(o) for o in outcomes] == [LLMResponse] * 3 + [LLMError] + [LLMResponse] * 2
    failed = outcomes[3]
    assert isinstance(failed, LLMError) and failed.request_index == 3
    assert "connection refused" in failed.message


def test_generate_many_without_callback_is_one_batch() -> None:
    llm = ScriptedLLMDouble(default="ok")
    with BlockingLLMClient(llm) as sync:
        outcomes = sync.generate_many([LLMRequest(prompt=f"p{i}") for i in range(3)], 2)
    assert [o.text for o in outcomes if isinstance(o, LLMResponse)] == ["ok"] * 3


def test_llm_expander_reports_every_query_including_failed_calls() -> None:
    llm = ScriptedLLMDouble(
        by_prompt={"q2": ServerUnreachableError("down")},
        default=lambda r: _keywords(f"phrase {r.lookup_key}"),
    )
    steps: list[int] = []
    expander = LLMExpander(llm, chat=True, concurrency=3)
    try:
        found = expander.expand_many(
            [QueryInput(text=f"question {i}", id=f"q{i}") for i in range(5)],
            on_progress=steps.append,
        )
    finally:
        expander.close()
    assert steps == [1] * 5
    assert [e.source for e in found] == ["llm", "llm", "none", "llm", "llm"]
    assert found[4].phrases == ["phrase q4"]


def test_search_many_progress_totals_the_queries_once_each() -> None:
    llm = ScriptedLLMDouble(default=_keywords("Christopher Nolan", "Kerala"))
    retriever = SiraRetriever(
        DFTableBackend(DF, doc_count=1000), "idx", expander=LLMExpander(llm, chat=True)
    )
    steps: list[int] = []
    queries = [QueryInput(text=f"films number {i}", id=str(i)) for i in range(7)]
    try:
        results = retriever.search_many(queries, batch=3, on_progress=steps.append)
    finally:
        retriever.close()
    assert sum(steps) == 7 and all(s == 1 for s in steps)
    assert len(llm.calls) == 7 and len(results) == 7
    # No expander: nothing slow to wait for, still reported (in one step) so a bar completes.
    plain: list[int] = []
    SiraRetriever(DFTableBackend(DF, doc_count=1000), "idx").search_many(
        queries[:4], on_progress=plain.append
    )
    assert plain == [4]


def test_recorded_run_reports_only_judged_queries() -> None:
    backend = DFTableBackend(DF, doc_count=1000)
    queries = [Query(id=f"q{i}", text=f"nolan films {i}") for i in range(5)]
    qrels = {"q0": {"d1": 1}, "q2": {"d2": 1}, "q4": {"d1": 1}}
    for method in ("bm25", "sira"):
        progress = ProgressRecorder()
        llm = ScriptedLLMDouble(default=_keywords("Christopher Nolan"))
        expander = LLMExpander(llm, chat=True) if method == "sira" else None
        try:
            record = recorded_run(
                backend,
                "idx",
                queries,
                qrels,
                method=method,
                expander=expander,
                progress=progress,
            )
        finally:
            if expander is not None:
                expander.close()
        # the 2 unjudged queries are never run; the caller sizes the display
        assert sum(progress.steps) == 3 and progress.starts == [], (method, progress.events)
        assert len(record.per_query) == 3
        assert len(llm.calls) == (3 if method == "sira" else 0)
