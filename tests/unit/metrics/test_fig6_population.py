"""Fig. 6 as the SEEK paper reports it (A.7): over the questions that took four rounds of
iterative retrieval, with all questions as a second, labelled line (issue 42, item 2); in the
diagnostics, their text, their HTML report and ``eval qa --diagnostics --json``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sira_seek.cli import eval_qa_cmd
from sira_seek.cli.eval_diagnostics import format_diagnostics
from sira_seek.cli.main import cli
from sira_seek.metrics.seek_answer_analyses import AnalysisCost
from sira_seek.metrics.seek_diagnostics import (
    FIG6_ROUNDS,
    QuestionTrace,
    StepTrace,
    seek_diagnostics,
)
from sira_seek.reporting.html_report import render_seek_report
from sira_seek.seek import api

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "seek"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
from in_memory_backend import InMemoryBackend  # noqa: E402
from seek_llm_double import ScriptedSeekLLMDouble  # noqa: E402


def _trace(qid: str, steps: list[list[str]], answers: list[str]) -> QuestionTrace:
    return QuestionTrace(
        id=qid,
        golden_answers=["King"],
        answer=answers[-1],
        steps=[StepTrace(sub_query=f"q{i}", retrieved_ids=ids) for i, ids in enumerate(steps)],
        answers_by_iteration=answers,
    )


# Four rounds: new documents each step, right from iteration 3 on.
FOUR = _trace("four", [["a"], ["b"], ["c"], ["d"]], ["x", "x", "King", "King"])
# Two rounds: the same document twice, right at once.
TWO = _trace("two", [["a"], ["a"]], ["King", "King"])


def test_fig6_is_over_the_four_round_questions_with_all_beside() -> None:
    assert FIG6_ROUNDS == 4
    diag = seek_diagnostics([FOUR, TWO], per_iteration_cost=AnalysisCost())
    assert diag.fig6_questions == 1 and diag.fig6_rounds == 4
    # Fig. 6a: only the four-round question: 0, 0, 1, 1.
    fig6a = diag.performance_by_iteration_fig6
    assert fig6a is not None
    assert [(r.iteration, r.questions, r.cover_em) for r in fig6a] == [
        (1, 1, 0.0),
        (2, 1, 0.0),
        (3, 1, 1.0),
        (4, 1, 1.0),
    ]
    # All questions: the two-round one keeps its (right) answer: .5, .5, 1, 1.
    assert [r.cover_em for r in diag.performance_by_iteration or []] == [0.5, 0.5, 1.0, 1.0]
    # Fig. 6b: the four-round question never re-retrieves; both questions at step 2: 0 and 1.
    assert [(r.iteration, r.with_previous) for r in diag.document_overlap_by_iteration_fig6] == [
        (2, 0.0),
        (3, 0.0),
        (4, 0.0),
    ]
    step2 = diag.document_overlap_by_iteration[0]
    assert (step2.iteration, step2.questions, step2.with_previous) == (2, 2, 0.5)
    report = diag.as_report()
    assert report["fig6_questions"] == 1
    assert len(report["performance_by_iteration_fig6"]) == 4  # type: ignore[arg-type]


def test_fig6a_is_not_claimed_when_the_answers_were_not_asked_for() -> None:
    diag = seek_diagnostics([FOUR, TWO])
    assert diag.performance_by_iteration_fig6 is None
    assert diag.fig6_questions == 1 and len(diag.document_overlap_by_iteration_fig6) == 3


def test_text_and_html_label_both_populations() -> None:
    diag = seek_diagnostics([FOUR, TWO], per_iteration_cost=AnalysisCost())
    text = format_diagnostics(diag)
    paper = "questions with 4 rounds (1; the paper's)"
    assert f"Fig. 6b, {paper}:" in text and "Fig. 6b, all questions:" in text
    assert f"Fig. 6a, {paper}:" in text and "Fig. 6a, all questions:" in text
    # The paper's population comes first.
    assert text.index(f"Fig. 6a, {paper}") < text.index("Fig. 6a, all questions")
    page = render_seek_report({"seek": diag})
    assert "(Fig. 6a), questions with 4 rounds, 1: the paper&#x27;s population" in page
    assert "(Fig. 6b), all questions" in page
    none = format_diagnostics(seek_diagnostics([TWO], per_iteration_cost=AnalysisCost()))
    assert "Fig. 6a, questions with 4 rounds (0; the paper's): none" in none


@pytest.mark.parametrize(("method", "fig6"), [("iter-retgen", 1), ("seek", 0)])
def test_eval_qa_diagnostics_json_carries_the_four_round_population(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str, fig6: int
) -> None:
    llm = ScriptedSeekLLMDouble(
        {
            "sketch": "<OUTLINE>\n# Leland\n## Film shot in Leland\n## Its director\n</OUTLINE>",
            "subquery": "<query>Leland film director</query>",
            "evidence": "Maximum Overdrive (1986) was directed by Stephen King.",
            "answer": "<answer>Stephen King</answer>",
        }
    )
    monkeypatch.setattr(api, "create_llm_client", lambda *a, **k: llm)
    docs = {"mo": {"title": "Maximum Overdrive", "text": "A 1986 film by Stephen King."}}
    monkeypatch.setattr(eval_qa_cmd, "LazyBackend", lambda cluster: InMemoryBackend(docs))
    qa = tmp_path / "qa.jsonl"
    row = {"id": "q1", "question": "Who directed the Leland film?", "answer": "Stephen King"}
    qa.write_text(json.dumps(row) + "\n")
    args = ["eval", "qa", "--qa", str(qa), "--index", "idx", "--method", method, "--no-cache"]
    args += ["--llm", "openai:http://127.0.0.1:9/v1#m", "--per-iteration", "--json"]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    diag = json.loads(done.stdout)["diagnostics"]
    # Iter-RetGen runs its default 4 rounds: the paper's population; SEEK's 2 gists: not.
    assert diag["fig6_rounds"] == 4 and diag["fig6_questions"] == fig6
    assert len(diag["performance_by_iteration_fig6"]) == 4 * fig6
    assert len(diag["document_overlap_by_iteration_fig6"]) == 3 * fig6
    assert diag["performance_by_iteration"]  # all questions, beside it
