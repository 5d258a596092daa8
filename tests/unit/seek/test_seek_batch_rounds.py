"""SEEK, its variants and the baselines in offline batch rounds (``--llm batch:DIR#MODEL``),
through the ``eval qa`` workflow over the in-memory ``SearchBackend`` double: each round writes
the requests of every question that waits, questions that finish are checkpointed, and the run
ends with exactly the predictions of a live ``openai:`` run answered by the same server.

The "server" answers a request from its body alone (the stage read from the prompt, as
``seek_llm_double`` does), like a model at temperature 0. ``batch_kit.answer_round`` plays the
batch job from the request file; ``batch_kit.BodyServer`` serves the same function over HTTP
for the live run.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from seek_llm_double import question_of, request_text, stage_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
from batch_kit import (  # noqa: E402
    BodyServer,
    answer_round,
    own_response_cache,  # noqa: E402, F401  (autouse: this test's own LLM cache)
    request_lines,
    requests_path,
    run_rounds,
)
from in_memory_backend import InMemoryBackend  # noqa: E402

from sira_seek.cli.main import cli  # noqa: E402
from sira_seek.llm.batch_files import body_custom_id  # noqa: E402
from sira_seek.llm.batch_rounds import WaitingForBatch  # noqa: E402
from sira_seek.llm.request import ChatMessage, LLMRequest  # noqa: E402
from sira_seek.seek.results import SeekResult  # noqa: E402
from sira_seek.workflows.evaluate_qa import (  # noqa: E402
    QAEvaluation,
    QAEvaluationRequest,
    evaluate_qa,
)

DOCS = {
    "d1": {"title": "Leland", "text": "A film was shot in Leland, Michigan in 1986."},
    "d2": {"title": "Stephen King", "text": "Stephen King directed Maximum Overdrive in 1986."},
    "d3": {"title": "Paris", "text": "Paris is the capital of France."},
}
QUESTIONS = [
    {"id": "q1", "question": "Who directed the film shot in Leland in 1986?",
     "golden_answers": ["Stephen King"]},
    {"id": "q2", "question": "What is the capital of France?", "golden_answers": ["Paris"]},
]  # fmt: skip


def _sketch(question: str) -> str:
    words = re.findall(r"\w+", question)
    return (
        "Two facts are needed.\n<OUTLINE>\n# Page\n"
        f"## {' '.join(words[:3])}\n## {' '.join(words[-3:])}\n</OUTLINE>"
    )


def seek_server(url: str, body: dict[str, Any]) -> str:
    """A deterministic model for every SEEK and baseline prompt (chat form)."""
    request = LLMRequest(messages=tuple(ChatMessage(**m) for m in body["messages"]))
    text = request_text(request)
    question = question_of(request)
    if "vanilla" in text or "own knowledge" in text:
        return f"<answer>{question.split()[-1]}</answer>"
    stage = stage_of(request)
    if stage == "sketch":
        return _sketch(question)
    if stage == "subquery":
        target = re.findall(r'Next to fill: "([^"]+)"', text)[-1]
        return f"Looking for {target}.\n<query>{target}</query>"
    if stage == "evidence":
        target = re.findall(r'Write the evidence for "([^"]+)"', text)[-1]
        return f"EVIDENCE about {target} ({len(text)} chars read)"
    if stage == "fill":
        sections = re.findall(r"### Section (\d+): (.+)", text)
        return "\n".join(f"## {n}. {heading}\nFILLED[{heading}]" for n, heading in sections)
    if stage == "answer":
        return f"From the sketch.\n<answer>{question.split()[-1]} {len(text)}</answer>"
    return f"{stage}: {len(text)}"


def baseline_server(url: str, body: dict[str, Any]) -> str:
    """Any prompt: an answer tag, a ReWOO plan line and an Iter-RetGen sentence at once."""
    text = json.dumps(body["messages"])
    return (
        f"Plan: search it. #E1 = Search[{text[-40:-20]}]\n"
        f"The answer follows. <answer>A{len(text) % 97}</answer>"
    )


@pytest.fixture
def qa_file(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return path


def evaluate(qa: Path, llm: str, **values: Any) -> QAEvaluation:
    settings = {"temperature": 0, **values.pop("settings", {})}
    request = QAEvaluationRequest.build(
        questions=qa, index="idx", llm=llm, use_cache=False, settings=settings, **values
    )
    return evaluate_qa(InMemoryBackend(DOCS), request)


def comparable(result: SeekResult) -> dict[str, Any]:
    """A result without its clocks (times differ run to run, nothing else may)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: strip(v)
                for k, v in value.items()
                if not (k.endswith(("_s", "_ms", "seconds")) or k in {"timings", "latency"})
            }
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    data = result.model_dump(mode="json")
    for stage in (data.get("usage") or {}).get("by_stage", {}).values():
        stage.pop("llm_seconds", None)
    return strip(data)


def live_run(qa: Path, server: Any, **values: Any) -> tuple[QAEvaluation, set[str]]:
    """The live run, and the ids of the bodies its server received."""
    with BodyServer(server) as live:
        done = evaluate(qa, f"openai:{live.base_url}#m", **values)
        return done, {body_custom_id(path, body) for path, body in live.requests}


@pytest.mark.parametrize(
    ("settings", "server"),
    [
        ({"method": "seek"}, seek_server),
        ({"method": "seek", "variant": "parallel"}, seek_server),
        ({"method": "vanilla-rag"}, seek_server),
        ({"method": "iter-retgen", "iter_retgen_rounds": 2}, baseline_server),
        ({"method": "rewoo"}, baseline_server),
    ],
    ids=["seek", "seek-parallel", "vanilla-rag", "iter-retgen", "rewoo"],
)
def test_rounds_end_with_the_predictions_of_a_live_run(
    qa_file: Path, tmp_path: Path, settings: dict[str, Any], server: Any
) -> None:
    rounds = tmp_path / "rounds"
    live, posted = live_run(qa_file, server, settings=settings)
    done, waits = run_rounds(
        lambda: evaluate(qa_file, f"batch:{rounds}#m", settings=settings), rounds, server
    )
    assert done.report.failed == live.report.failed == 0
    assert [comparable(r) for r in done.report.results] == [
        comparable(r) for r in live.report.results
    ]
    assert done.scores == live.scores
    assert len(waits) >= 1 and [w.round for w in waits] == list(range(1, len(waits) + 1))
    # every request the live run sent went in exactly one round (answers are keyed by body)
    sent = [line["custom_id"] for w in waits for line in request_lines(rounds, w.round)]
    assert len(sent) == len(set(sent)) and set(sent) == posted
    assert done.usage["calls"] == live.usage["calls"]


def test_each_round_advances_every_question_one_step(qa_file: Path, tmp_path: Path) -> None:
    """Sequential SEEK: the sketches of both questions in round 1, then one sub-query each,
    ...; the parallel variant's sub-queries of one question go in the same round."""
    rounds = tmp_path / "rounds"
    _, waits = run_rounds(lambda: evaluate(qa_file, f"batch:{rounds}#m"), rounds, seek_server)
    stages = [
        sorted(stage_of(_request(line)) for line in request_lines(rounds, w.round)) for w in waits
    ]
    assert stages[0] == ["sketch", "sketch"]
    assert stages[1] == ["subquery", "subquery"]
    assert stages[-1] == ["answer", "answer"]
    parallel = tmp_path / "parallel"
    _, waits = run_rounds(
        lambda: evaluate(qa_file, f"batch:{parallel}#m", settings={"variant": "parallel"}),
        parallel,
        seek_server,
    )
    assert [w.count for w in waits][:2] == [2, 4]  # 2 sketches, then 2 gists x 2 questions
    assert len(waits) == 4  # sketch, sub-queries, one-context fill, answer


def _request(line: dict[str, Any]) -> LLMRequest:
    return LLMRequest(messages=tuple(ChatMessage(**m) for m in line["body"]["messages"]))


def test_finished_questions_are_checkpointed_waiting_ones_are_not(
    qa_file: Path, tmp_path: Path
) -> None:
    rounds, checkpoint = tmp_path / "rounds", tmp_path / "ckpt.jsonl"
    spec = f"batch:{rounds}#m"
    with pytest.raises(WaitingForBatch):
        evaluate(qa_file, spec, checkpoint=checkpoint, settings={"method": "vanilla-llm"})
    assert not checkpoint.exists() or checkpoint.read_text() == ""
    answer_round(rounds, seek_server)
    first = evaluate(qa_file, spec, checkpoint=checkpoint, settings={"method": "vanilla-llm"})
    assert first.report.answered == 2 and len(checkpoint.read_text().splitlines()) == 2
    again = evaluate(qa_file, spec, checkpoint=checkpoint, settings={"method": "vanilla-llm"})
    assert again.report.resumed == 2 and again.usage["calls"] == 0


def test_a_question_whose_answers_keep_failing_fails_with_the_reason(
    qa_file: Path, tmp_path: Path
) -> None:
    """q2's requests fail in every round: it fails after the retries, with the batch job's
    reason; q1 finishes; the run ends (partial failure, as a live run's)."""

    def half_broken(url: str, body: dict[str, Any]) -> object:
        if "France" in json.dumps(body):
            return 503, {"error": {"message": "scripted: no capacity"}}
        return seek_server(url, body)

    rounds = tmp_path / "rounds"
    done, waits = run_rounds(
        lambda: evaluate(qa_file, f"batch:{rounds}#m", settings={"method": "vanilla-llm"}),
        rounds,
        half_broken,
    )
    assert len(waits) == 3  # q1 answered in round 1; q2 asked in rounds 1-3
    by_id = {r.id: r for r in done.report.results}
    assert by_id["q1"].ok and done.report.failed == 1
    assert "HTTP 503: scripted: no capacity" in (by_id["q2"].error or "")
    assert "asked in rounds 1, 2, 3" in (by_id["q2"].error or "")


def test_eval_qa_exits_75_naming_the_file_then_0(qa_file: Path, tmp_path: Path) -> None:
    rounds = tmp_path / "rounds"
    args = ["eval", "qa", "--qa", str(qa_file), "--method", "vanilla-llm", "--no-cache"]
    args += ["--temperature", "0", "--llm", f"batch:{rounds}#m"]
    waiting = CliRunner().invoke(cli, [*args, "--json"])
    assert waiting.exit_code == 75, waiting.output
    assert json.loads(waiting.stdout) == {
        "waiting_for": str(requests_path(rounds, 1)),
        "output": str(rounds / "round-001.output.jsonl"),
        "round": 1,
        "requests": 2,
    }
    assert "round-001.requests.jsonl" in waiting.stderr
    plain = CliRunner().invoke(cli, args)  # no output yet: the same round, no new file
    assert plain.exit_code == 75 and plain.stdout == ""
    assert "round 1: 2 LLM request(s) wait in" in plain.stderr
    answer_round(rounds, seek_server)
    done = CliRunner().invoke(cli, [*args, "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["answered"] == 2


def test_seek_and_its_sira_retriever_share_the_rounds(qa_file: Path, tmp_path: Path) -> None:
    """``--retriever sira`` without expansions: SIRA's phrases come from SEEK's own LLM, whose
    requests go in the same rounds as SEEK's (one folder, one file per round)."""

    def both(url: str, body: dict[str, Any]) -> str:
        if "response_format" in body:  # SIRA's expansion (JSON schema)
            return json.dumps({"keywords": ["Stephen King"]})
        return seek_server(url, body)

    settings = {"method": "vanilla-rag"}
    with BodyServer(both) as live:
        expected = evaluate(
            qa_file, f"openai:{live.base_url}#m", settings=settings, retriever="sira"
        )
    rounds = tmp_path / "rounds"
    done, waits = run_rounds(
        lambda: evaluate(qa_file, f"batch:{rounds}#m", settings=settings, retriever="sira"),
        rounds,
        both,
    )
    assert [w.count for w in waits] == [2, 2]  # the 2 expansions, then the 2 answers
    assert [comparable(r) for r in done.report.results] == [
        comparable(r) for r in expected.report.results
    ]
