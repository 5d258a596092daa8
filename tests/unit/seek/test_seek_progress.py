"""``run_questions``'s progress callbacks: sized before the first question, one per question.

``eval qa`` sizes its bar from ``on_start`` (questions still to ask, questions resumed) and
moves it from ``on_result``; a bar sized with the resumed questions counted would show a false
rate and ETA.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import cast

from seek_llm_double import ScriptedSeekLLMDouble, StageScript
from test_seek_batch_checkpoint import QUESTIONS, answer_echo, pipeline_for
from test_seek_pipeline import default_stages

from sira_seek.seek.batch import run_questions
from sira_seek.seek.checkpoint import SeekCheckpoint
from sira_seek.seek.results import SeekResult


def _stages() -> dict[str, StageScript]:
    return cast("dict[str, StageScript]", default_stages(answer=answer_echo))


def test_on_start_then_one_result_per_question_failures_included() -> None:
    events: list[tuple[str, object]] = []
    llm = ScriptedSeekLLMDouble(_stages(), fail_questions=["number 4?"])
    report = asyncio.run(
        run_questions(
            pipeline_for(llm),
            QUESTIONS,
            concurrency=3,
            on_start=lambda todo, resumed: events.append(("start", (todo, resumed))),
            on_result=lambda r: events.append(("result", r)),
        )
    )
    assert events[0] == ("start", (6, 0))
    results = [r for kind, r in events[1:] if kind == "result"]
    assert len(results) == len(events) - 1 == 6
    assert sorted(r.id for r in results if isinstance(r, SeekResult)) == [q.id for q in QUESTIONS]
    assert [r.id for r in results if isinstance(r, SeekResult) and r.error] == ["q4"]
    assert report.failed == 1


def test_resumed_questions_are_counted_apart_and_not_reported_again(tmp_path: Path) -> None:
    checkpoint = SeekCheckpoint(tmp_path / "c.jsonl", method="seek", variant="sequential")
    first = ScriptedSeekLLMDouble(_stages())
    asyncio.run(run_questions(pipeline_for(first), QUESTIONS[:4], checkpoint=checkpoint))
    starts: list[tuple[int, int]] = []
    ids: list[str] = []
    second = ScriptedSeekLLMDouble(_stages())
    report = asyncio.run(
        run_questions(
            pipeline_for(second),
            QUESTIONS,
            checkpoint=checkpoint,
            on_start=lambda todo, resumed: starts.append((todo, resumed)),
            on_result=lambda r: ids.append(r.id),
        )
    )
    assert starts == [(2, 4)]
    assert sorted(ids) == ["q4", "q5"]
    assert report.resumed == 4 and report.answered == 2
