"""Many questions at once: failures are recorded without stopping the rest, and a run killed
midway resumes from its checkpoint without asking finished questions again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from seek_fakes import RecordingRetriever
from seek_llm_double import ScriptedSeekLLMDouble, question_of
from test_seek_pipeline import default_stages

from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse
from sira_seek.seek.batch import run_questions
from sira_seek.seek.checkpoint import CheckpointMismatchError, SeekCheckpoint
from sira_seek.seek.pipeline import SeekPipeline
from sira_seek.seek.questions import QAFileError, read_questions
from sira_seek.seek.results import QuestionInput, SeekResult
from sira_seek.seek.settings import SeekSettings

QUESTIONS = [
    QuestionInput(id=f"q{i}", question=f"Question number {i}?", golden_answers=[f"a{i}"])
    for i in range(6)
]


class SimulatedKill(BaseException):
    """Stands for SIGKILL/Ctrl-C: not an ``Exception``, so nothing may swallow it."""


def pipeline_for(llm: ScriptedSeekLLMDouble, **settings: object) -> SeekPipeline:
    return SeekPipeline(
        llm,
        RecordingRetriever(),
        settings=SeekSettings(**settings),  # type: ignore[arg-type]
    )


def answer_echo(text: str) -> str:
    number = text.rsplit("Question number ", 1)[1].split("?")[0]
    return f"<answer>a{number}</answer>"


def test_a_failing_question_is_recorded_and_the_others_finish() -> None:
    llm = ScriptedSeekLLMDouble(default_stages(answer=answer_echo), fail_questions=["number 2?"])
    report = asyncio.run(run_questions(pipeline_for(llm), QUESTIONS, concurrency=3))
    assert [r.id for r in report.results] == [q.id for q in QUESTIONS]  # input order
    failed = [r for r in report.results if not r.ok]
    assert [r.id for r in failed] == ["q2"]
    assert "scripted failure" in (failed[0].error or "") and failed[0].answer == ""
    assert [r.answer for r in report.results if r.ok] == ["a0", "a1", "a3", "a4", "a5"]
    assert report.failed == 1 and report.answered == 6


class InFlightLLM(ScriptedSeekLLMDouble):
    """Counts the questions waiting on it at once. With ``gate`` its calls are held until that
    many are in flight together, so a batch that cannot run that many at once never gets past
    its first call (the wait is a hang guard, never a measurement)."""

    def __init__(self, *, gate: int = 1) -> None:
        super().__init__(default_stages(answer=answer_echo))
        self.gate = gate
        self.all_in = asyncio.Event()
        self.in_flight = 0
        self.most_in_flight = 0

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.in_flight >= self.gate:
                self.all_in.set()
            await asyncio.wait_for(self.all_in.wait(), timeout=60)
            await asyncio.sleep(0)  # let any other question in that the batch would allow
            return await super().generate(request)
        finally:
            self.in_flight -= 1


@pytest.mark.parametrize("concurrency", [1, 2, 4])
def test_questions_overlap_up_to_the_concurrency_and_no_further(concurrency: int) -> None:
    llm = InFlightLLM(gate=concurrency)
    report = asyncio.run(run_questions(pipeline_for(llm), QUESTIONS, concurrency=concurrency))
    assert report.failed == 0 and [r.answer for r in report.results] == [
        f"a{i}" for i in range(len(QUESTIONS))
    ]
    # SEEK's sequential variant has one LLM call open per question: calls in flight are
    # questions in flight.
    assert llm.most_in_flight == concurrency


def test_killed_run_resumes_without_redoing_finished_questions(tmp_path: Path) -> None:
    path = tmp_path / "ckpt.jsonl"
    checkpoint = SeekCheckpoint(path, method="seek", variant="sequential")

    def kill_on_q3(text: str) -> str:
        if "Question number 3?" in text:
            raise SimulatedKill
        return answer_echo(text)

    first = ScriptedSeekLLMDouble(default_stages(answer=kill_on_q3))
    with pytest.raises(SimulatedKill):
        asyncio.run(
            run_questions(pipeline_for(first), QUESTIONS, concurrency=1, checkpoint=checkpoint)
        )
    assert sorted(checkpoint.finished()) == ["q0", "q1", "q2"]
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "q3", "question": "torn')  # the kill landed mid-write

    second = ScriptedSeekLLMDouble(default_stages(answer=answer_echo))
    report = asyncio.run(
        run_questions(pipeline_for(second), QUESTIONS, concurrency=2, checkpoint=checkpoint)
    )
    asked = {question_of(r) for r in second.by_stage["sketch"]}
    assert asked == {"Question number 3?", "Question number 4?", "Question number 5?"}
    assert report.resumed == 3 and report.answered == 3
    assert [r.answer for r in report.results] == [f"a{i}" for i in range(6)]
    assert checkpoint.torn_lines == 1
    lines = path.read_text().splitlines()
    assert lines.count('{"id": "q3", "question": "torn') == 1  # kept apart, not glued to
    assert len([json.loads(x) for x in lines if "torn" not in x]) == 6
    assert len(SeekCheckpoint(path, method="seek", variant="sequential").load()) == 6


def test_failed_questions_are_retried_on_resume(tmp_path: Path) -> None:
    checkpoint = SeekCheckpoint(tmp_path / "c.jsonl", method="seek", variant="sequential")
    flaky = ScriptedSeekLLMDouble(default_stages(answer=answer_echo), fail_questions=["number 1?"])
    asyncio.run(run_questions(pipeline_for(flaky), QUESTIONS[:3], checkpoint=checkpoint))
    assert set(checkpoint.load()) == {"q0", "q1", "q2"} and set(checkpoint.finished()) == {
        "q0",
        "q2",
    }
    healthy = ScriptedSeekLLMDouble(default_stages(answer=answer_echo))
    report = asyncio.run(run_questions(pipeline_for(healthy), QUESTIONS[:3], checkpoint=checkpoint))
    assert [question_of(r) for r in healthy.by_stage["sketch"]] == ["Question number 1?"]
    assert all(r.ok for r in report.results)


def test_checkpoint_of_another_variant_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    SeekCheckpoint(path, method="seek", variant="parallel").append(
        SeekResult(id="q0", question="x?", method="seek", variant="parallel")
    )
    with pytest.raises(CheckpointMismatchError):
        SeekCheckpoint(path, method="seek", variant="sequential").load()


def test_read_questions_accepts_both_gold_keys_and_refuses_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text(
        '{"id": "a", "question": "Q1?", "golden_answers": ["x"]}\n\n'
        '{"id": "b", "question": "Q2?", "answer": "y"}\n'
    )
    questions = read_questions(path)
    assert [(q.id, q.golden_answers) for q in questions] == [("a", ["x"]), ("b", ["y"])]
    assert len(read_questions(path, limit=1)) == 1
    path.write_text('{"id": "a", "question": "Q1?"}\n{"id": "a", "question": "Q2?"}\n')
    with pytest.raises(QAFileError, match="duplicate"):
        read_questions(path)
