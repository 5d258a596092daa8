"""The agentic evaluation workflow (``workflows.agentic``) on the in-memory backend double and
a scripted LLM: inputs are refused before a connection, a missing index before a model load,
and a run is scored and traced as ``eval agentic`` prints it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from in_memory_backend import InMemoryBackend
from progress_recorder import ProgressRecorder

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from scripted_llm import ScriptedLLMDouble, use_llm_double  # noqa: E402

from sira_seek.backend import SearchBackend  # noqa: E402
from sira_seek.workflows.agentic import (  # noqa: E402
    AgenticEvaluationRequest,
    evaluate_agentic,
)
from sira_seek.workflows.errors import InvalidInput, NotFound  # noqa: E402

DOCS = {
    "d1": {"title": "Arthur's Magazine", "text": "A literary periodical founded in 1844."},
    "d2": {"title": "First for Women", "text": "A woman's magazine founded in 1989."},
}


def _files(tmp_path: Path, judged: str = "q1") -> dict[str, Path]:
    qa = tmp_path / "qa.jsonl"
    qa.write_text(
        json.dumps({"id": "q1", "question": "When was Arthur's Magazine founded?",
                    "golden_answers": ["1844"]}) + "\n"
    )  # fmt: skip
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(f"query-id\tcorpus-id\tscore\n{judged}\td1\t1\n")
    return {"questions": qa, "qrels": qrels}


def _never() -> SearchBackend:
    raise AssertionError("the workflow connected before refusing its input")


def test_unjudged_questions_and_bad_knobs_are_refused_before_connecting(tmp_path: Path) -> None:
    request = AgenticEvaluationRequest.build(index="idx", **_files(tmp_path, judged="other"))
    with pytest.raises(InvalidInput, match="none of the 1 questions"):
        evaluate_agentic(_never, request)
    bads = ({"index": "a*"}, {"tau": 5.0}, {"budget": 0}, {"search_k": 101}, {"protocol": "x"})
    for bad in bads:
        with pytest.raises(InvalidInput):
            AgenticEvaluationRequest.build(**{"index": "idx", **_files(tmp_path), **bad})


def test_a_missing_index_is_not_found_before_a_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_model(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("a model was loaded for an index that does not exist")

    monkeypatch.setattr("sira_seek.llm.factory.create_llm_client", no_model)
    request = AgenticEvaluationRequest.build(index="absent", **_files(tmp_path))
    with pytest.raises(NotFound, match="'absent' does not exist"):
        evaluate_agentic(InMemoryBackend(DOCS), request)


def _rank_scores(scores: dict[str, int]) -> Any:
    """Answers a rank request with the score of the page whose title opens its document."""

    def answer(request: Any) -> str:
        document = request.messages[-1].content.split("Document:\n", 1)[1]
        return json.dumps({"score": scores.get(document.split("\n", 1)[0], 10)})

    return answer


def test_final_ranking_stream_asks_no_ranking_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [json.dumps({"action": "search", "text": "Arthur's Magazine", "expansions": []}),
              json.dumps({"action": "answer", "text": "1844", "expansions": []})]  # fmt: skip
    llm = use_llm_double(monkeypatch, ScriptedLLMDouble(sequence=script))
    request = AgenticEvaluationRequest.build(
        index="idx", llm="scripted:x", budget=3, search_k=2, final_ranking="stream",
        **_files(tmp_path),
    )  # fmt: skip
    done = evaluate_agentic(lambda: InMemoryBackend(DOCS), request)
    assert len(llm.calls) == 2 and done.llm_calls == 2
    (result,) = done.report.results
    assert result.ranked == result.pages_read == ["d1", "d2"]
    assert done.report.final_ranking == "stream" and done.report.recall_at_1 == 1.0


def test_a_run_is_scored_traced_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [
        json.dumps({"action": "search", "text": "Arthur's Magazine", "expansions": []}),
        json.dumps({"action": "answer", "text": "1844", "expansions": []}),
    ]
    # after the episode, the final ranking (SIRA §4.4) rates each gathered page: d2 above d1
    llm = ScriptedLLMDouble(sequence=script, default=_rank_scores({"First for Women": 90}))
    use_llm_double(monkeypatch, llm)
    trace = tmp_path / "out" / "trace.jsonl"
    request = AgenticEvaluationRequest.build(
        index="idx", llm="scripted:x", budget=3, search_k=2, trace=trace, **_files(tmp_path)
    )
    progress = ProgressRecorder()
    done = evaluate_agentic(lambda: InMemoryBackend(DOCS), request, progress=progress)
    assert progress.starts == [(1, 0)] and progress.steps == [1]
    assert done.report.questions == 1 and done.report.llm_errors == 0
    (result,) = done.report.results
    assert result.answer == "1844" and result.stop_reason == "answered"
    assert result.pages_read == ["d1", "d2"] and result.ranked == ["d2", "d1"]
    assert (result.stream_first_relevant_rank, result.first_relevant_rank) == (1, 2)
    assert result.answer_covered is True
    assert done.llm_calls == 4  # two steps, two pages ranked
    out = done.to_json()
    assert list(out)[:2] == ["index", "llm"] and out["llm"] == "scripted:x"
    assert (out["protocol"], out["budget"], out["cutoffs"]) == ("evidence-blind", 3, [1, 3])
    assert (out["recall_at_1"], out["recall_at_budget"]) == (0.0, 1.0)
    assert out["final_ranking"] == "llm" and out["stream_recall"]["recall_at_1"] == 1.0
    assert out["recall_at_10"] is None and out["recall_at_100"] is None  # above the budget
    assert list(out)[-3:] == ["llm_calls", "completion_tokens", "seconds"]
    (line,) = trace.read_text().splitlines()
    assert json.loads(line)["question_id"] == "q1"
