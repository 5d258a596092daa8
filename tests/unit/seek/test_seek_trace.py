"""`SeekResult.trace()`: the plain record the SEEK analyses (`sira_seek.metrics`) read."""

from __future__ import annotations

from sira_seek.metrics.seek_diagnostics import QuestionTrace, StepTrace, seek_diagnostics
from sira_seek.seek.results import AnswerTimings, SeekResult, SubQueryStep
from sira_seek.seek.sketch import SteeringSketch


def test_a_result_traces_its_steps_gists_time_and_failure() -> None:
    result = SeekResult(
        id="q1",
        question="q?",
        golden_answers=["Paris"],
        method="seek",
        raw_answer="so <answer>Paris</answer>",
        answer="Paris",
        step_cap_reached=True,
        sketch=SteeringSketch.from_headings("T", ["one", "two"]),
        steps=[
            SubQueryStep(gist_index=0, sub_query="alpha", retrieved_ids=["a", "b"]),
            SubQueryStep(gist_index=1, sub_query="  ", retrieved_ids=[], malformed=True),
        ],
        timings=AnswerTimings(total_s=2.5, llm_s=2.0),
    )
    assert result.trace() == QuestionTrace(
        id="q1",
        golden_answers=["Paris"],
        answer="Paris",
        ok=True,
        steps=[
            StepTrace(sub_query="alpha", retrieved_ids=["a", "b"]),
            StepTrace(sub_query="  ", retrieved_ids=[]),
        ],
        gists=2,
        seconds=2.5,
        step_cap_reached=True,
    )
    baseline = SeekResult(id="q2", question="q?", method="bm25", error="boom")
    assert baseline.trace() == QuestionTrace(
        id="q2", answer="<None>", ok=False, gists=None, seconds=0.0
    )
    # The scored answer follows the run's extraction.
    untagged = result.model_copy(update={"raw_answer": "Answer: Paris"})
    assert untagged.trace().answer == "<None>" and untagged.trace("lenient").answer == "Paris"
    report = seek_diagnostics([result.trace(), baseline.trace()])
    assert (report.questions, report.failed, report.subqueries_per_question) == (1, 1, 1.0)
