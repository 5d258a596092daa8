"""SEEK §5.4 in ``eval qa --diagnostics``: Table 3's knowledge conflict / utilization split
(decided by a closed-book run, never by the method's own answers) and the judge's 0-5 ratings
of the knowledge context. The LLMs are scripted doubles above the LLM protocol
(`ScriptedSeekLLMDouble` for the run, `ScriptedLLMDouble` for the judge); the documents sit
in the in-memory backend."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from seek_llm_double import ScriptedSeekLLMDouble, target_in

from sira_seek.cli.eval_diagnostics import format_diagnostics
from sira_seek.cli.main import cli
from sira_seek.llm import factory
from sira_seek.metrics.qa import PredictionRecord
from sira_seek.metrics.seek_knowledge import (
    JudgeScores,
    closed_book_correct,
    judge_prompt,
    knowledge_split,
    parse_judge_scores,
)
from sira_seek.reporting.html_report import render_seek_report
from sira_seek.seek import api
from sira_seek.seek.results import SeekResult
from sira_seek.workflows.evaluate_qa import QAEvaluationRequest, evaluate_qa

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from batch_kit import (  # noqa: E402
    own_response_cache,  # noqa: F401  (autouse: this test's own LLM cache)
    request_lines,
    run_rounds,
)
from in_memory_backend import InMemoryBackend  # noqa: E402
from scripted_llm import ScriptedLLMDouble  # noqa: E402

FILM, DIRECTOR = "Film shot in Leland in 1986", "Director of that film"
DOCS = {
    "overdrive": {"title": "Maximum Overdrive", "text": "A 1986 film directed by Stephen King."},
    "leland": {"title": "Leland", "text": "Leland is a town where a film was shot in 1986."},
}
LLM = "openai:http://127.0.0.1:9/v1#m"


def _answer(text: str) -> str:
    """SEEK answers q1 right from its sketch and q2 wrong; closed-book (no sketch in the
    prompt) the model knows q2's answer and not q1's: the two disagree on every question."""
    if "Stephen King directed" in text:
        return "<answer>Stephen King</answer>"
    if "Maximum Overdrive" not in text and "other film" in text:
        return "<answer>Quilmont</answer>"
    return "<answer>?</answer>"


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> ScriptedSeekLLMDouble:
    double = ScriptedSeekLLMDouble(
        {
            "sketch": f"# Leland\n## {FILM}\n## {DIRECTOR}",
            "subquery": lambda text: f"<query>{target_in(text)} director film</query>",
            "evidence": lambda text: (
                "Stephen King directed Maximum Overdrive."
                if target_in(text) == DIRECTOR
                else "Maximum Overdrive was shot in Leland."
            ),
            "answer": _answer,
        }
    )
    monkeypatch.setattr(api, "create_llm_client", lambda *a, **k: double)
    return double


def _judge(monkeypatch: pytest.MonkeyPatch, replies: dict[str, str]) -> ScriptedLLMDouble:
    """The judge double: its reply chosen by the question in the prompt."""

    def reply(request: object) -> str:
        text = request.messages[0].content  # type: ignore[attr-defined]
        return next(r for q, r in replies.items() if q in text)

    double = ScriptedLLMDouble(default=reply)
    monkeypatch.setattr(factory, "create_llm_client", lambda *a, **k: double)
    return double


def _questions(tmp_path: Path) -> Path:
    rows = [
        {"id": "q1", "question": "Who directed the film shot in Leland in 1986?",
         "golden_answers": ["Stephen King"]},
        {"id": "q2", "question": "Who directed the other film shot in Leland?",
         "golden_answers": ["Quilmont"]},
        {"id": "q3", "question": "Who directed the third film shot in Leland?",
         "golden_answers": ["Nobody Known"]},
    ]  # fmt: skip
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _closed_book_file(tmp_path: Path) -> Path:
    """What ``eval qa --method vanilla-llm --predictions`` writes: q1 wrong, q2 right; q3
    absent (unmatched)."""
    rows = [
        SeekResult(id="q1", question="?", golden_answers=["Stephen King"], method="vanilla-llm",
                   answer="?", raw_answer="<answer>Steven Spielberg</answer>"),
        SeekResult(id="q2", question="?", golden_answers=["Quilmont"], method="vanilla-llm",
                   answer="Quilmont", raw_answer="<answer>Quilmont</answer>"),
    ]  # fmt: skip
    path = tmp_path / "closed.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in rows))
    return path


def test_the_split_follows_the_closed_book_answers_not_the_methods() -> None:
    closed = closed_book_correct(
        [
            PredictionRecord(id="a", golden_answers=["x"], prediction="x"),
            PredictionRecord(id="b", golden_answers=["y"], prediction="no"),
            PredictionRecord(id="c", golden_answers=["z"], prediction="z"),
        ]
    )
    assert closed == {"a": True, "b": False, "c": True}
    method = [  # right where closed-book was wrong and the reverse
        PredictionRecord(id="a", golden_answers=["x"], prediction="no"),
        PredictionRecord(id="b", golden_answers=["y"], prediction="y"),
        PredictionRecord(id="c", golden_answers=["z"], prediction="z"),
        PredictionRecord(id="d", golden_answers=["w"], prediction="w"),  # not closed-book run
    ]
    split = knowledge_split(method, closed, "closed.jsonl")
    assert (split.conflict_ids, split.utilization_ids, split.unmatched) == (["a", "c"], ["b"], 1)
    assert (split.conflict.questions, split.conflict.cover_em) == (2, 0.5)
    assert (split.utilization.questions, split.utilization.cover_em, split.utilization.f1) == (
        1,
        1.0,
        1.0,
    )


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"accuracy": 4, "logicality": 3, "structure": 5, "refinement": 0}', (4, 3, 5, 0)),
        ('Sure.\n```json\n{"accuracy": 2.5, "logicality": 1, "structure": 1, '
         '"refinement": 1}\n```', (2.5, 1, 1, 1)),
    ],
)  # fmt: skip
def test_the_judge_reply_is_read(reply: str, expected: tuple[float, ...]) -> None:
    found = parse_judge_scores(reply)
    assert isinstance(found, JudgeScores)
    assert (found.accuracy, found.logicality, found.structure, found.refinement) == expected


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ('{"accuracy": 7, "logicality": 3, "structure": 5, "refinement": 0}', "outside 0-5"),
        ('{"accuracy": -1, "logicality": 3, "structure": 5, "refinement": 0}', "outside 0-5"),
        ('{"accuracy": 4, "logicality": 3, "structure": 5}', "refinement: missing"),
        ('{"accuracy": "good", "logicality": 3, "structure": 5, "refinement": 1}', "accuracy"),
        ('{"accuracy": true, "logicality": 3, "structure": 5, "refinement": 1}', "accuracy"),
        ("I rate it highly.", "no JSON object"),
        ("{accuracy: 4}", "not JSON"),
    ],
)
def test_an_unreadable_or_out_of_range_reply_is_refused(reply: str, reason: str) -> None:
    found = parse_judge_scores(reply)
    assert isinstance(found, str) and reason in found


def test_the_judge_prompt_names_the_four_dimensions_and_the_scale() -> None:
    text = judge_prompt("Who?", "# Sketch\n## A\nfound")
    for word in ("accuracy", "logicality", "structure", "refinement", "0 (worst) to 5"):
        assert word in text
    assert "Question: Who?" in text and "# Sketch\n## A\nfound" in text


def test_table3_and_the_judge_over_a_seek_run(
    tmp_path: Path, llm: ScriptedSeekLLMDouble, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = _judge(
        monkeypatch,
        {
            "1986?": '{"accuracy": 5, "logicality": 4, "structure": 5, "refinement": 3}',
            "other film": '{"accuracy": 1, "logicality": 2, "structure": 3, "refinement": 9}',
            "third film": '{"accuracy": 3, "logicality": 2, "structure": 1, "refinement": 1}',
        },
    )
    request = QAEvaluationRequest.build(
        questions=_questions(tmp_path),
        index="idx",
        llm=LLM,
        closed_book_predictions=_closed_book_file(tmp_path),
        judge_llm="openai:http://127.0.0.1:8/v1#judge",
        report_html=tmp_path / "r.html",
        concurrency=1,
    )
    done = evaluate_qa(InMemoryBackend(DOCS), request)
    diag = done.diagnostics
    assert diag is not None and done.report.failed == 0
    # SEEK answers "Stephen King" from every sketch: right on q1 only.
    assert {r.id: r.scored_answer() for r in done.report.results} == dict.fromkeys(
        ("q1", "q2", "q3"), "Stephen King"
    )
    split = diag.knowledge_split
    assert split is not None and split.closed_book == "closed.jsonl"
    # closed-book right on q2 only: q2 is "conflict" although SEEK got it wrong.
    assert (split.conflict_ids, split.utilization_ids, split.unmatched) == (["q2"], ["q1"], 1)
    assert (split.conflict.questions, split.conflict.cover_em) == (1, 0.0)
    assert (split.utilization.questions, split.utilization.cover_em) == (1, 1.0)
    # The judge read each question's completed sketch; q2's 9 is refused and counted.
    judged = diag.knowledge_judge
    assert judged is not None and (judged.judged, judged.malformed, judged.failed) == (2, 1, 0)
    assert judged.means == {"accuracy": 4.0, "logicality": 3.0, "structure": 3.0, "refinement": 2.0}
    assert judged.context == "sketch"
    bad = next(v for v in judged.verdicts if v.malformed)
    assert bad.id == "q2" and "outside 0-5" in bad.malformed and "9" in (bad.reply or "")
    assert len(judge.calls) == 3
    assert judged.cost is not None and judged.cost.llm_calls == 3  # the malformed one cost too
    assert all("# Leland" in r.messages[0].content for r in judge.calls)  # type: ignore[index]
    out = diag.as_report()
    assert out["knowledge_split"]["conflict"]["questions"] == 1
    assert out["knowledge_judge"]["means"]["accuracy"] == 4.0
    html = (tmp_path / "r.html").read_text()
    assert "knowledge conflict questions" in html and "judge: logicality" in html
    assert render_seek_report({"seek": diag}).count('data-key="judge.structure">3.0000') == 1
    line = next(x for x in format_diagnostics(diag).splitlines() if "knowledge judge" in x)
    assert "accuracy 4.0000, logicality 3.0000, structure 3.0000, refinement 2.0000" in line
    assert "2 judged, 1 malformed, 0 failed" in line


def test_closed_book_answers_asked_on_the_spot(tmp_path: Path, llm: ScriptedSeekLLMDouble) -> None:
    args = ["eval", "qa", "--qa", str(_questions(tmp_path)), "--index", "idx", "--llm", LLM]
    args += ["--closed-book", "--json", "--concurrency", "1"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sira_seek.cli.eval_qa_cmd.LazyBackend", lambda *a: InMemoryBackend(DOCS))
        done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    diag = json.loads(done.stdout)["diagnostics"]
    split = diag["knowledge_split"]
    # The vanilla LLM with the same double: q2 right closed-book, q1 and q3 wrong.
    assert (split["conflict_ids"], split["utilization_ids"]) == (["q2"], ["q1", "q3"])
    assert split["conflict"]["cover_em"] == 0.0 and split["utilization"]["cover_em"] == 0.5
    assert "fig6_questions" in diag and "document_overlap_by_iteration_fig6" in diag
    assert diag["knowledge_judge"] is None
    closed_book_prompts = [t for t in llm.texts("answer") if "Maximum Overdrive" not in t]
    assert len(closed_book_prompts) >= 3  # one a question, beside SEEK's own answers
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sira_seek.cli.eval_qa_cmd.LazyBackend", lambda *a: InMemoryBackend(DOCS))
        text = CliRunner().invoke(cli, [a for a in args if a != "--json"])
    assert text.exit_code == 0, text.output
    assert "knowledge split (Table 3)  closed-book vanilla-llm run on the spot" in text.stdout
    assert "  conflict     1 questions: Cover-EM 0.0000" in text.stdout
    assert "  utilization  2 questions: Cover-EM 0.5000" in text.stdout


def test_a_closed_book_file_and_the_spot_run_together_are_refused(
    tmp_path: Path, llm: ScriptedSeekLLMDouble
) -> None:
    args = ["eval", "qa", "--qa", str(_questions(tmp_path)), "--method", "vanilla-llm"]
    args += ["--llm", LLM, "--closed-book", "--closed-book-predictions"]
    done = CliRunner().invoke(cli, [*args, str(_closed_book_file(tmp_path))])
    assert done.exit_code != 0 and "not both" in done.output
    assert llm.calls == []  # refused before any LLM call


def _batch_server(url: str, body: dict[str, Any]) -> str:
    """The batch "model": the judge's JSON; closed-book "Paris" (right on q2 only); vanilla
    RAG "Stephen King" (right on q1 only)."""
    opening = body["messages"][0]["content"]
    if "four dimensions" in opening:
        return '{"accuracy": 2, "logicality": 4, "structure": 3, "refinement": 1}'
    if "own knowledge" in opening:
        return "<answer>Paris</answer>"
    return "<answer>Stephen King</answer>"


def test_closed_book_and_judge_join_the_batch_rounds(tmp_path: Path) -> None:
    qa = tmp_path / "qa.jsonl"
    rows = [
        {"id": "q1", "question": "Who directed the film shot in Leland in 1986?",
         "golden_answers": ["Stephen King"]},
        {"id": "q2", "question": "What is the capital of France?", "golden_answers": ["Paris"]},
    ]  # fmt: skip
    qa.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rounds = tmp_path / "rounds"

    def run() -> Any:
        request = QAEvaluationRequest.build(
            questions=qa,
            index="idx",
            llm=f"batch:{rounds}#m",
            judge_llm=f"batch:{rounds}#judge",
            closed_book=True,
            use_cache=False,
            settings={"method": "vanilla-rag", "temperature": 0},
        )
        return evaluate_qa(InMemoryBackend(DOCS), request)

    done, waits = run_rounds(run, rounds, _batch_server)

    def kinds(number: int) -> list[str]:
        """Each request of a round by what it asks: closed-book, RAG or judge."""
        found = []
        for line in request_lines(rounds, number):
            opening = line["body"]["messages"][0]["content"]
            found.append(
                "judge" if "four dimensions" in opening
                else "closed" if "own knowledge" in opening
                else "rag"
            )  # fmt: skip
        return sorted(found)

    # Round 1 holds both runs' requests for both questions (the closed-book run is gathered
    # with the method's); the judge's requests all come in the next round.
    assert kinds(1) == ["closed", "closed", "rag", "rag"]
    assert [kinds(w.round) for w in waits[1:]] == [["judge", "judge"]]
    diag = done.diagnostics
    split = diag.knowledge_split
    assert (split.conflict_ids, split.utilization_ids) == (["q2"], ["q1"])
    assert (split.conflict.cover_em, split.utilization.cover_em) == (0.0, 1.0)
    judged = diag.knowledge_judge
    assert (judged.judged, judged.malformed, judged.context) == (2, 0, "documents")
    assert judged.means == {"accuracy": 2.0, "logicality": 4.0, "structure": 3.0, "refinement": 1.0}
