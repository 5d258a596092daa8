"""What a failed search does to a question, decided by what failed.

The cluster (or an LLM) failing is expected: the step goes on without documents, says why,
and a warning is logged. Anything else a retriever raises (a ``TypeError``, say) is a bug: it
fails the question, and a batch records it with its traceback while the other questions go on.
The retriever is a scripted double above the ``Retriever`` protocol (tests/unit/seek/seek_fakes).
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Sequence

import pytest
from seek_fakes import RecordingRetriever
from seek_llm_double import ScriptedSeekLLMDouble
from test_seek_batch_checkpoint import QUESTIONS, answer_echo
from test_seek_pipeline import default_stages, run

from sira_seek.llm.errors import LLMCallError
from sira_seek.seek.batch import run_questions
from sira_seek.seek.pipeline import SeekPipeline
from sira_seek.seek.results import QuestionInput, SeekResult
from sira_seek.seek.retrieval import RetrievedDoc
from sira_seek.seek.settings import SeekSettings


def buggy(query: str) -> Exception:
    """What a retriever's bug looks like: a wrong call deep inside it."""
    return TypeError(f"unsupported operand type(s) for +: 'int' and 'str' ({query[:20]})")


def subquery_naming_the_question(text: str) -> str:
    """A sub-query that carries its question's text, so a test can fail one question's
    searches and no other's."""
    question = re.findall(r"Question: (.+)", text)[-1]
    return f"<query>{question}</query>"


def batch_stages() -> dict[str, object]:
    return default_stages(answer=answer_echo, subquery=subquery_naming_the_question)


# -- a bug fails its question ----------------------------------------------------------------
@pytest.mark.parametrize("variant", ["sequential", "parallel"])
def test_a_retriever_type_error_fails_the_question_with_its_traceback_and_the_batch_goes_on(
    variant: str, caplog: pytest.LogCaptureFixture
) -> None:
    retriever = RecordingRetriever(fail_on=["number 2?"], failure=buggy)
    pipeline = SeekPipeline(
        ScriptedSeekLLMDouble(batch_stages()),
        retriever,
        settings=SeekSettings(variant=variant),  # type: ignore[arg-type]
    )
    with caplog.at_level(logging.WARNING, logger="sira_seek"):
        report = asyncio.run(run_questions(pipeline, QUESTIONS, concurrency=3))
    failed = [r for r in report.results if not r.ok]
    assert [r.id for r in failed] == ["q2"] and report.failed == 1
    record = failed[0]
    assert record.error is not None and record.error.startswith("TypeError: unsupported operand")
    assert record.answer == "" and record.steps == []
    trace = record.error_traceback or ""
    assert trace.startswith("Traceback (most recent call last):")
    assert "in retrieve" in trace and "seek_fakes.py" in trace  # where the bug is
    assert trace.rstrip().endswith(record.error.split(" (at ")[0])
    # The other questions were answered from their documents, as if nothing happened.
    assert [r.answer for r in report.results if r.ok] == ["a0", "a1", "a3", "a4", "a5"]
    assert all(s.retrieved_ids and s.error is None for r in report.results if r.ok for s in r.steps)
    # The bug is said once, as an error; it is never mistaken for a failed search.
    bugs = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(bugs) == 1 and "q2" in bugs[0].getMessage()
    assert not any("search for" in r.getMessage() for r in caplog.records)


def test_a_single_question_raises_the_bug_to_its_caller() -> None:
    retriever = RecordingRetriever(fail_on=["Director"], failure=buggy)
    with pytest.raises(TypeError, match="unsupported operand"):
        run(ScriptedSeekLLMDouble(default_stages()), retriever)


@pytest.mark.parametrize("method", ["iter-retgen", "vanilla-rag"])
def test_baselines_fail_the_question_on_a_retriever_bug_too(method: str) -> None:
    retriever = RecordingRetriever(fail_on=["number"], failure=buggy)
    stages = default_stages(answer=answer_echo)
    pipeline = SeekPipeline(
        _BaselineAnswers(stages),
        retriever,
        settings=SeekSettings(method=method),  # type: ignore[arg-type]
    )
    report = asyncio.run(run_questions(pipeline, QUESTIONS[:2]))
    assert report.failed == 2
    for record in report.results:
        assert (record.error or "").startswith("TypeError")
        assert "in retrieve" in (record.error_traceback or "")


class _BaselineAnswers(ScriptedSeekLLMDouble):
    """Iter-RetGen's generation prompt is not one of SEEK's stages: answer every prompt with
    its question's echo."""

    def _route(self, request):  # type: ignore[no-untyped-def]
        from seek_llm_double import request_text

        return answer_echo(request_text(request))


# -- the cluster failing is logged, and the question goes on ---------------------------------
def test_an_engine_error_is_logged_and_costs_only_that_steps_documents(
    caplog: pytest.LogCaptureFixture,
) -> None:
    retriever = RecordingRetriever(fail_on=["Director"])  # an EngineError, as a backend raises
    with caplog.at_level(logging.WARNING, logger="sira_seek"):
        result = run(ScriptedSeekLLMDouble(default_stages()), retriever)
    assert result.ok and result.answer == "Stephen King" and result.error_traceback is None
    failed = [s for s in result.steps if s.error]
    assert len(failed) == 1 and failed[0].error.startswith("EngineError: cluster unreachable")
    assert failed[0].retrieved_ids == [] and all(
        s.retrieved_ids for s in result.steps if not s.error
    )
    (warning,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning.levelno == logging.WARNING and warning.name == "sira_seek.seek.retrieval"
    said = warning.getMessage()
    assert "question q1" in said and "EngineError: cluster unreachable" in said
    assert "search Director of that film" in said


def test_a_failed_batched_search_is_logged_once_for_its_steps(
    caplog: pytest.LogCaptureFixture,
) -> None:
    retriever = RecordingRetriever(fail_on=["Director"])
    with caplog.at_level(logging.WARNING, logger="sira_seek"):
        result = run(ScriptedSeekLLMDouble(default_stages()), retriever, variant="parallel")
    assert result.ok and all((s.error or "").startswith("EngineError") for s in result.steps)
    (warning,) = caplog.records
    assert "3 sub-queries" in warning.getMessage()


def test_an_llm_failure_inside_a_retriever_is_a_failed_search_too() -> None:
    def llm_down(query: str) -> Exception:
        return LLMCallError("the reranking model is not answering")

    retriever = RecordingRetriever(fail_on=["Director"], failure=llm_down)
    result = run(ScriptedSeekLLMDouble(default_stages()), retriever)
    assert result.ok and any((s.error or "").startswith("LLMCallError") for s in result.steps)


class _NeverAnswers:
    """A retriever whose cluster never answers (until the test lets it go)."""

    name = "never"

    def __init__(self) -> None:
        self.release = threading.Event()

    def retrieve(self, query: str, k: int) -> list[RetrievedDoc]:
        self.release.wait(30)
        return []

    def retrieve_many(self, queries: Sequence[str], k: int) -> list[list[RetrievedDoc]]:
        return [self.retrieve(q, k) for q in queries]


def test_the_retrieval_timeout_is_a_failed_search_not_a_failed_question() -> None:
    retriever = _NeverAnswers()
    pipeline = SeekPipeline(
        ScriptedSeekLLMDouble(default_stages()),
        retriever,
        settings=SeekSettings(method="vanilla-rag", retrieval_timeout_s=0.01),
    )

    async def answer_then_release() -> SeekResult:
        try:
            return await pipeline.answer(QuestionInput(id="q1", question="Who?"))
        finally:
            retriever.release.set()  # before asyncio.run waits for the worker thread

    result = asyncio.run(answer_then_release())
    assert result.ok and result.steps[0].error == "TimeoutError"
    assert result.steps[0].retrieved_ids == []


def test_an_llm_failure_fails_its_question_without_a_traceback() -> None:
    """The LLM failing is not a bug: the record says why in one line."""
    llm = ScriptedSeekLLMDouble(batch_stages(), fail_questions=["number 4?"])
    pipeline = SeekPipeline(llm, RecordingRetriever())
    report = asyncio.run(run_questions(pipeline, QUESTIONS))
    (failed,) = [r for r in report.results if not r.ok]
    assert failed.id == "q4" and (failed.error or "").startswith("LLMCallError")
    assert failed.error_traceback is None
