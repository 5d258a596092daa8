"""``eval qa --diagnostics`` end to end without servers: SEEK over the in-memory backend with
the scripted LLM double, the passages of A.5's Recall@5 fetched from the index, the opt-in
answers of the per-iteration analysis (Fig. 6a) and the slot ablation (Fig. 4b) asked of the
same double, every figure worked out by hand; and the analyses' flags on the command line."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from seek_llm_double import ScriptedSeekLLMDouble, target_in

from sira_seek.cli.eval_diagnostics import format_diagnostics
from sira_seek.cli.main import cli
from sira_seek.metrics.seek_diagnostics import jaccard
from sira_seek.reporting.html_report import render_seek_report
from sira_seek.seek import api
from sira_seek.seek.analysis_answers import iteration_answers, without_gists
from sira_seek.seek.prompts import make_prompts
from sira_seek.seek.results import SeekResult, SubQueryStep
from sira_seek.seek.settings import SeekSettings
from sira_seek.seek.sketch import SteeringSketch
from sira_seek.workflows.evaluate_qa import QAEvaluationRequest, evaluate_qa

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
from in_memory_backend import InMemoryBackend  # noqa: E402

FILM, DIRECTOR = "Film shot in Leland in 1986", "Director of that film"
DOCS = {
    # contains the answer; the qrels do not judge it
    "overdrive": {"title": "Maximum Overdrive", "text": "A 1986 film directed by Stephen King."},
    # judged relevant, without the answer
    "leland": {"title": "Leland", "text": "Leland is a town where a film was shot in 1986."},
    "other": {"title": "Wilmington", "text": "A city near Leland with film studios."},
}


def _evidence(text: str) -> str:
    if target_in(text) == DIRECTOR:
        return "Stephen King directed Maximum Overdrive."
    return "Maximum Overdrive was shot in Leland."


def _answer(text: str) -> str:
    return (
        "<answer>Stephen King</answer>" if "Stephen King directed" in text else "<answer>?</answer>"
    )


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> ScriptedSeekLLMDouble:
    double = ScriptedSeekLLMDouble(
        {
            "sketch": f"# Leland\n## {FILM}\n## {DIRECTOR}",
            "subquery": lambda text: f"<query>{target_in(text)} director film</query>",
            "evidence": _evidence,
            "answer": _answer,
        }
    )
    monkeypatch.setattr(api, "create_llm_client", lambda *a, **k: double)
    return double


def _questions(tmp_path: Path) -> Path:
    rows = [
        {"id": "q1", "question": "Who directed the film shot in Leland in 1986?",
         "golden_answers": ["Stephen King"]},
        {"id": "q2", "question": "Who directed the other film shot in Leland?",
         "golden_answers": ["Quilmont"]},
    ]  # fmt: skip
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_analyses_of_a_seek_run_by_hand(tmp_path: Path, llm: ScriptedSeekLLMDouble) -> None:
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\tleland\t1\nq2\tleland\t1\n")
    predictions = tmp_path / "preds.jsonl"
    request = QAEvaluationRequest.build(
        questions=_questions(tmp_path),
        index="idx",
        llm="openai:http://127.0.0.1:9/v1#m",
        settings={"temperature": 0.0},
        per_iteration=True,
        slot_ablation=True,
        qrels=qrels,
        predictions=predictions,
        concurrency=1,
    )
    assert request.diagnostics  # the analyses' options ask for the analyses
    done = evaluate_qa(InMemoryBackend(DOCS), request)
    diag = done.diagnostics
    assert diag is not None and done.report.failed == 0
    results = done.report.results
    # Each question: 2 steps; the per-iteration knowledge was recorded on the results.
    assert all(len(r.steps) == 2 and len(r.iteration_contexts or ()) == 2 for r in results)
    # A.5: q1's answer is in "overdrive" (unjudged), which its searches retrieve: 1; nothing
    # holds "Quilmont": 0. The judged "leland" lacks the answer yet counts for the qrels form.
    assert {r.id: r.max_subquery_recall_at_5 for r in diag.per_question} == {"q1": 1.0, "q2": 0.0}
    assert (diag.max_subquery_recall_at_5, diag.max_subquery_recall_questions) == (0.5, 2)
    assert diag.qrels_subquery_recall_at_5 == 1.0
    # Fig. 6a: after iteration 1 the sketch holds only the film: q1 not yet answered; after
    # iteration 2 (the run's own answer) q1 is right; q2 never is.
    assert diag.performance_by_iteration is not None
    assert [(r.iteration, r.cover_em) for r in diag.performance_by_iteration] == [
        (1, 0.0),
        (2, 0.5),
    ]
    cost = diag.performance_by_iteration_cost
    assert cost is not None and cost.llm_calls == 2  # one per question: iteration 1 only
    # Fig. 4b: removing the first slot keeps the director, removing the second loses it;
    # without gists the knowledge is all there.
    ablation = diag.slot_ablation
    assert ablation is not None and (ablation.seed_slots, ablation.questions) == (2, 2)
    assert [(r.removed, r.cover_em) for r in ablation.rows] == [
        ("N/A", 0.5),
        ("First", 0.5),
        ("Second", 0.0),
        ("w/o Sketch", 0.5),
    ]
    assert ablation.cost is not None and ablation.cost.llm_calls == 2 * 3
    # Not in the run's own usage (sketch, 2 sub-queries, 2 evidence, answer per question);
    # the double saw the run's 2 answers, 2 after iteration 1 and 6 with a slot removed.
    assert sum(r.usage.total.calls for r in results) == 2 * 6
    assert len(llm.by_stage["answer"]) == 2 + 2 + 6
    # Fig. 6b: the overlap of step 2 with step 1, recomputed from the records.
    expected = [jaccard(r.steps[1].retrieved_ids, r.steps[0].retrieved_ids) for r in results]
    row = diag.document_overlap_by_iteration[0]
    assert row.iteration == 2 and row.questions == 2
    assert (
        row.with_previous
        == row.with_cumulative
        == pytest.approx(round(sum(v or 0.0 for v in expected) / 2, 4))
    )
    out = diag.as_report()
    for key in (
        "subquery_similarity",
        "subquery_similarity_measure",
        "document_overlap",
        "document_overlap_by_iteration",
        "max_subquery_recall_at_5",
        "qrels_subquery_recall_at_5",
        "performance_by_iteration",
        "performance_by_iteration_cost",
        "slot_ablation",
        "step_cap_reached",
    ):
        assert key in out, key
    json.dumps(out)
    # The text and HTML reports show them.
    text = format_diagnostics(diag)
    assert "  after 2: Cover-EM 0.5000" in text and "  Second     Cover-EM 0.0000" in text
    assert "max sub-query Recall@5     0.5000" in text
    page = render_seek_report({"seek": diag})
    assert "performance across iterations (Fig. 6a)" in page
    assert "slot ablation (Fig. 4b), 2 sketches of 2 slots" in page
    assert "<td>w/o Sketch</td>" in page
    # The predictions keep the knowledge by iteration (a re-scored run can be analysed again).
    saved = [SeekResult.model_validate_json(x) for x in predictions.read_text().splitlines()]
    assert saved[0].iteration_contexts == results[0].iteration_contexts


def test_without_the_options_no_extra_answer_is_asked(
    tmp_path: Path, llm: ScriptedSeekLLMDouble
) -> None:
    request = QAEvaluationRequest.build(
        questions=_questions(tmp_path),
        index="idx",
        llm="openai:http://127.0.0.1:9/v1#m",
        diagnostics=True,
        concurrency=1,
    )
    done = evaluate_qa(InMemoryBackend(DOCS), request)
    diag = done.diagnostics
    assert diag is not None and len(llm.by_stage["answer"]) == 2
    assert all(r.iteration_contexts is None for r in done.report.results)
    assert diag.performance_by_iteration is None and diag.slot_ablation is None
    assert diag.max_subquery_recall_at_5 == 0.5  # the passages are fetched whenever analysed


def test_iter_retgen_answers_by_round_need_no_call() -> None:
    # Round t's generation rides on step t+1 (the search it led to); the last is the answer.
    result = SeekResult(
        id="q",
        question="Q?",
        method="iter-retgen",
        golden_answers=["x"],
        raw_answer="<answer>x</answer>",
        steps=[
            SubQueryStep(gist_index=None, sub_query="Q?", retrieved_ids=[]),
            SubQueryStep(gist_index=None, sub_query="a", retrieved_ids=[], raw_output="<answer>a"),
            SubQueryStep(gist_index=None, sub_query="b", retrieved_ids=[], raw_output="<answer>b"),
        ],
    )
    llm = ScriptedSeekLLMDouble({})
    prompts = make_prompts("chat", SeekSettings())
    found, cost = asyncio.run(iteration_answers(llm, prompts, [result]))
    assert found == {"q": ["a", "b", "x"]} and cost.llm_calls == 0


def test_without_gists_keeps_only_the_filled_knowledge() -> None:
    sketch = SteeringSketch.from_headings("T", ["A", "B"]).fill(0, "found A").fill(1, "")
    assert without_gists(sketch, "chat") == "# T\n\nfound A\n\n(no evidence found)"
    assert without_gists(sketch, "fewshot") == "- found A\n- (no evidence found)"


def test_the_options_on_the_command_line(tmp_path: Path, llm: ScriptedSeekLLMDouble) -> None:
    args = ["eval", "qa", "--qa", str(_questions(tmp_path)), "--method", "vanilla-llm"]
    args += ["--llm", "openai:http://127.0.0.1:9/v1#m", "--per-iteration", "--slot-ablation"]
    done = CliRunner().invoke(cli, [*args, "--json", "--dig-edges", "clip"])
    assert done.exit_code == 0, done.output
    diag = json.loads(done.stdout)["diagnostics"]
    assert diag["dig_parameters"]["edges"] == "clip"  # the reading asked for reaches DIG
    # A closed-book run has no iterations, no sketch and no retrieved passages.
    assert diag["performance_by_iteration"] == []
    assert "no question has answers by iteration" in diag["performance_by_iteration_unavailable"]
    assert diag["performance_by_iteration_cost"]["llm_calls"] == 0
    assert (
        diag["slot_ablation"] is None and "no completed sketch" in diag["slot_ablation_unavailable"]
    )
    assert diag["max_subquery_recall_at_5"] is None
    text = CliRunner().invoke(cli, args)
    assert text.exit_code == 0, text.output
    assert "omega=(0.8, 0.8, 0.8), edges=zero" in text.stdout  # the default, named
    assert "performance by iteration   n/a" in text.stdout
    assert "slot ablation              n/a" in text.stdout
