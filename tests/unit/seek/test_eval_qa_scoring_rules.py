"""How ``eval qa`` turns SEEK results into scores: the authors' answer extraction by default
(no ``<answer>`` tag, or a failure, is their ``<None>``), ``--extraction lenient`` as the named
alternative, and a question without gold reported as ``no_gold`` instead of scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from seek_llm_double import ScriptedSeekLLMDouble

from sira_seek.cli.main import cli
from sira_seek.metrics.qa import NO_ANSWER, PredictionRecord
from sira_seek.seek import api
from sira_seek.seek.results import SeekResult


def _answer(text: str) -> str:
    if "France" in text:
        return "Reasoning first.\n\n<answer> Paris </answer>"
    if "Italy" in text:
        return "The capital is Rome."  # the model forgot the tag
    raise AssertionError(f"unexpected question in {text[-120:]!r}")


@pytest.fixture
def scripted_llm(monkeypatch: pytest.MonkeyPatch) -> ScriptedSeekLLMDouble:
    # Spain (no gold answer) and Peru fail: a failed answer must not "match" a missing gold.
    llm = ScriptedSeekLLMDouble({"answer": _answer}, fail_questions=("Spain", "Peru"))
    monkeypatch.setattr(api, "create_llm_client", lambda *a, **k: llm)
    return llm


def _qa_file(path: Path) -> Path:
    rows = [
        {"id": "fr", "question": "Capital of France?", "golden_answers": ["Paris"]},
        {"id": "it", "question": "Capital of Italy?", "answer": ["Rome"]},
        {"id": "es", "question": "Capital of Spain?"},
        {"id": "pe", "question": "Capital of Peru?", "answer": "Lima"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _eval_qa(qa: Path, *extra: str) -> dict[str, float]:
    args = ["eval", "qa", "--qa", str(qa), "--method", "vanilla-llm", "--quiet", "--json"]
    result = CliRunner().invoke(cli, [*args, "--llm", "openai:http://127.0.0.1:9/v1#m", *extra])
    # Peru's question fails: the scores are printed, and the exit code says "partial failure".
    assert result.exit_code == 3, result.output
    report: dict[str, float] = json.loads(result.stdout)
    assert {k: report.pop(k) for k in ("answered", "failed", "resumed", "diagnostics")} == {
        "answered": 4,
        "failed": 2,
        "resumed": 0,
        "diagnostics": None,  # only with --diagnostics
    }
    # The price beside the scores, without --diagnostics too: one closed-book call for each
    # answered question, in one round; the failed ones booked nothing.
    cost = report.pop("cost")
    assert isinstance(cost, dict)
    assert cost["questions"] == 4 and cost["llm_calls"] == 2
    assert cost["llm_calls_per_question"] == 0.5 and cost["max_rounds"] == 1
    return report


def test_eval_qa_scores_as_the_authors_by_default(
    tmp_path: Path, scripted_llm: ScriptedSeekLLMDouble
) -> None:
    report = _eval_qa(_qa_file(tmp_path / "qa.jsonl"))
    # France right; Italy untagged -> <None>; Peru failed -> <None>; Spain has no gold.
    third = round(1 / 3, 4)
    assert report == {"cover_em": third, "em": third, "f1": third, "questions": 3, "no_gold": 1}
    assert len(scripted_llm.by_stage["answer"]) == 4


def test_eval_qa_lenient_extraction_is_a_named_option(
    tmp_path: Path, scripted_llm: ScriptedSeekLLMDouble
) -> None:
    report = _eval_qa(_qa_file(tmp_path / "qa.jsonl"), "--extraction", "lenient")
    # Italy's last line "The capital is Rome" now covers "Rome" (F1 0.5); Peru's failure is "".
    assert report == {
        "cover_em": round(2 / 3, 4),
        "em": round(1 / 3, 4),
        "f1": round(1.5 / 3, 4),
        "questions": 3,
        "no_gold": 1,
    }


def test_eval_qa_refuses_an_unknown_extraction(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["eval", "qa", "--qa", str(_qa_file(tmp_path / "q.jsonl")), "--extraction", "x"]
    )
    assert result.exit_code == 2 and "--extraction" in result.output


def _result(**kwargs: object) -> SeekResult:
    base: dict[str, object] = {"id": "q", "question": "Q?", "method": "seek"}
    return SeekResult.model_validate({**base, **kwargs})


@pytest.mark.parametrize(
    ("result", "tagged", "lenient"),
    [
        (_result(answer="Paris", raw_answer="x <answer> Paris </answer>"), "Paris", "Paris"),
        (_result(answer="Paris", raw_answer="Answer: Paris"), NO_ANSWER, "Paris"),
        (_result(answer="", raw_answer=None, error="LLM down"), NO_ANSWER, ""),
        (_result(answer="", raw_answer="<answer></answer>"), "", ""),
    ],
)
def test_scored_answer_per_extraction(result: SeekResult, tagged: str, lenient: str) -> None:
    assert result.scored_answer() == result.scored_answer("tagged") == tagged
    assert result.scored_answer("lenient") == lenient


def test_prediction_record_keeps_an_empty_gold_list() -> None:
    record = _result(error="boom").prediction_record()
    assert record == PredictionRecord(id="q", question="Q?", golden_answers=[], prediction="<None>")
