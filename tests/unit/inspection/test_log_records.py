from __future__ import annotations

from sira_seek.inspection.from_results import record_from_seek
from sira_seek.seek.results import AnswerTimings, SeekResult, SubQueryStep
from sira_seek.seek.sketch import Gist, SteeringSketch


def test_seek_record_keeps_sketch_subqueries_and_unique_hits() -> None:
    result = SeekResult(
        id="q1",
        question="Who?",
        method="seek",
        variant="sequential",
        answer="Smith",
        sketch=SteeringSketch(title="T", gists=[Gist(heading="A", slot="evidence")]),
        steps=[
            SubQueryStep(gist_index=0, sub_query="a b", retrieved_ids=["d1", "d2"]),
            SubQueryStep(gist_index=1, sub_query="c", retrieved_ids=["d2", "d3"]),
        ],
        timings=AnswerTimings(total_s=2.0, llm_s=1.5, retrieval_s=0.1),
    )
    doc = record_from_seek(result, index="idx").to_document()
    assert doc["kind"] == "seek_question" and doc["method"] == "seek:sequential"
    assert doc["hit_ids"] == ["d1", "d2", "d3"]
    assert doc["seek"]["sub_queries"] == ["a b", "c"] and doc["seek"]["answer"] == "Smith"
    assert "evidence" in doc["seek"]["sketch"]
    assert doc["latency_ms"] == {"total": 2000.0, "llm": 1500.0, "engine": 100.0}
    assert doc["no_kept_expansion"] is False and doc["acceptance_rate"] is None
