"""QA metrics with the papers' normalisation, on hand-made cases (no ../shared needed).

That the PAGER scorer's published numbers (Cover-EM = EM = 0.6, F1 = 0.661 on its 10 NQ sample
predictions) are reproduced, which makes ours comparable to the paper, is checked in
tests/integration/test_pager_reference_samples.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sira_seek.metrics.qa import (
    METRIC_NAMES,
    NO_ANSWER,
    PredictionFileError,
    PredictionRecord,
    QAScores,
    cover_em,
    exact_match,
    extract_tagged_answer,
    normalize_answer,
    read_predictions,
    record_from_mapping,
    score_predictions,
    token_f1,
)

# --------------------------------------------------------------------------------------------
# Acceptance: five hand-made predictions scored by hand (tests/unit/fixtures). The authors'
# own samples and their published scores are checked in tests/integration (they need
# ../shared/data): test_pager_reference_samples.py.
# --------------------------------------------------------------------------------------------

PREDICTIONS = Path(__file__).resolve().parents[1] / "fixtures" / "qa_predictions.jsonl"


def test_hand_made_predictions_score_as_worked_out_by_hand() -> None:
    """Worked out by hand: "the Missouri" vs "Missouri River" is 1 of 1 predicted and 1 of 2
    gold tokens (F1 2/3, not covered); "It happened in July 1969." covers "1969" with 1 of 5
    tokens (F1 1/3); "Hamburg, Germany" covers "Hamburg" (F1 2/3)."""
    records = read_predictions(PREDICTIONS)
    assert [r.id for r in records] == ["p1", "p2", "p3", "p4", "p5"]
    assert [cover_em(r.prediction, r.golden_answers) for r in records] == [1, 0, 1, 0, 1]
    assert [exact_match(r.prediction, r.golden_answers) for r in records] == [1, 0, 0, 0, 0]
    f1 = [token_f1(r.prediction, r.golden_answers) for r in records]
    assert f1 == pytest.approx([1.0, 2 / 3, 1 / 3, 0.0, 2 / 3])
    scores = score_predictions(records)
    assert scores.questions == 5
    assert (scores.cover_em, scores.em) == (pytest.approx(0.6), pytest.approx(0.2))
    assert scores.f1 == pytest.approx(8 / 15)


# --------------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("True", "yes"),
        ("False", "no"),
        # Only the exact strings map, as in the authors' scorer.
        (" False ", "false"),
        ("true", "true"),
        ("FALSE", "false"),
        (True, "yes"),
        (False, "no"),
        ("It is true", "it is true"),
        ("New_York_City", "new york city"),
        ("The Missouri River", "missouri river"),
        ("an apple a day", "apple day"),
        ("That's So Raven", "that s so raven"),
        ("Shaquille O’Neal", "shaquille o neal"),  # their set holds ‘ ’ ´ `
        ("‘Rock´n`Roll’", "rock n roll"),
        ("“Quoted”", "“quoted”"),  # curly double quotes are not in their set
        ("December\xa029,\xa02017", "december 29 2017"),
        ("  lots \t of\n space ", "lots of space"),
        ("U.S.A.", "u s"),  # "a" is an article once punctuation is gone, as in the papers
        ("theatre", "theatre"),
        (42, "42"),
    ],
)
def test_normalize_answer(raw: object, normalised: str) -> None:
    assert normalize_answer(raw) == normalised  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------------------------


def test_cover_em_needs_every_gold_token_in_any_order() -> None:
    assert cover_em("It was Andy Warhol who said it", ["Andy Warhol"]) == 1.0
    assert cover_em("Warhol, Andy", ["Andy Warhol"]) == 1.0
    assert cover_em("Warhol", ["Andy Warhol"]) == 0.0
    assert cover_em("Andy Warhol", "Andy Warhol") == 1.0  # a bare string is one gold answer


def test_cover_em_gold_that_normalises_to_nothing_matches_only_an_empty_prediction() -> None:
    """The authors' scorer compares [""] with [""]: kept, so figures stay comparable."""
    assert cover_em("anything", ["The", "?"]) == 0.0
    assert cover_em("", ["The"]) == cover_em("an", ["?"]) == 1.0
    assert exact_match("", ["The"]) == 1.0
    assert token_f1("", ["The"]) == 0.0


def test_exact_match_is_strict_after_normalisation() -> None:
    assert exact_match("Six points", ["six", "six points"]) == 1.0
    assert exact_match("the Missouri River.", ["Missouri River"]) == 1.0
    assert exact_match("Missouri", ["Missouri River"]) == 0.0
    assert exact_match("True", ["yes"]) == 1.0
    assert exact_match("true", ["yes"]) == 0.0
    assert exact_match("Shaquille O’Neal", ["Shaquille O'Neal"]) == 1.0


def test_token_f1_best_over_golds() -> None:
    assert token_f1("Missouri", ["Missouri River", "Mississippi"]) == pytest.approx(2 / 3)
    assert token_f1("Mississippi River", ["Missouri River"]) == pytest.approx(0.5)
    assert token_f1("", ["x"]) == 0.0


def test_token_f1_gives_no_partial_credit_on_yes_no() -> None:
    assert token_f1("no", ["no"]) == 1.0
    assert token_f1("yes it is", ["yes"]) == 0.0
    assert token_f1("no", ["yes"]) == 0.0


def test_no_gold_answers_scores_zero() -> None:
    assert cover_em("x", []) == exact_match("x", []) == token_f1("x", []) == 0.0


@given(prediction=st.text(max_size=40), golds=st.lists(st.text(max_size=20), max_size=4))
def test_metrics_are_bounded_and_ordered(prediction: str, golds: list[str]) -> None:
    em, cem, f1 = (m(prediction, golds) for m in (exact_match, cover_em, token_f1))
    assert 0.0 <= f1 <= 1.0
    assert em in (0.0, 1.0) and cem in (0.0, 1.0)
    # A non-empty exact match is also a cover match and a perfect F1.
    if em and normalize_answer(prediction):
        assert cem == 1.0 and f1 == pytest.approx(1.0)


# --------------------------------------------------------------------------------------------
# Records, aggregate and file reader
# --------------------------------------------------------------------------------------------


def test_record_accepts_both_gold_and_prediction_keys() -> None:
    pager = record_from_mapping({"id": 7, "answer": ["a1"], "pred_ans": "p"})
    flashrag = record_from_mapping({"golden_answers": "a1", "prediction": "p"})
    assert pager.golden_answers == flashrag.golden_answers == ["a1"]
    assert pager.prediction == flashrag.prediction == "p"
    assert pager.id == "7"


def test_record_prefers_golden_answers_and_pred_ans() -> None:
    record = record_from_mapping(
        {"golden_answers": ["g"], "answer": ["a"], "pred_ans": "p", "prediction": "q"}
    )
    assert (record.golden_answers, record.prediction) == (["g"], "p")


def test_question_without_gold_is_counted_not_scored() -> None:
    scores = score_predictions(
        [
            PredictionRecord(id="q1", golden_answers=[], prediction=""),
            PredictionRecord(id="q2", golden_answers=["y"], prediction="y"),
            PredictionRecord(id="q3", golden_answers=["z"], prediction="<None>"),
        ]
    )
    assert scores == QAScores(cover_em=0.5, em=0.5, f1=0.5, questions=2, no_gold=1)
    assert scores.as_report()["no_gold"] == 1
    assert "no_gold" not in QAScores(cover_em=1, em=1, f1=1, questions=1).as_report()


@pytest.mark.parametrize(
    ("raw", "extracted"),
    [
        ("Reasoning.\n\n<answer> Andy Warhol </answer>", "Andy Warhol"),
        ("<answer>first</answer> then <answer> last </answer> tail", "last"),
        ("<answer> cut off at the stop", "cut off at the stop"),
        ("<answer></answer>", ""),
        ("The answer is Paris.", NO_ANSWER),
        ("<ANSWER>Paris</ANSWER>", NO_ANSWER),  # their tag test is case-sensitive
        ("", NO_ANSWER),
        (None, NO_ANSWER),
    ],
)
def test_tagged_extraction_is_the_authors_rule(raw: str | None, extracted: str) -> None:
    assert extract_tagged_answer(raw) == extracted


def test_null_prediction_counts_as_wrong_not_missing() -> None:
    scores = score_predictions(
        [{"answer": ["x"], "pred_ans": None}, {"answer": ["y"], "pred_ans": "y"}]
    )
    assert scores == QAScores(cover_em=0.5, em=0.5, f1=0.5, questions=2)


def test_boolean_gold_maps_to_yes_no() -> None:
    assert record_from_mapping({"answer": [True], "pred_ans": "Yes"}).golden_answers == ["True"]
    assert score_predictions([{"answer": True, "pred_ans": "yes"}]).em == 1.0


@pytest.mark.parametrize(
    ("obj", "reason"),
    [
        ({"pred_ans": "p"}, "no gold answers"),
        ({"answer": ["a"]}, "no prediction"),
        ({"answer": [], "pred_ans": "p"}, "empty"),
        ({"answer": [{"text": "a"}], "pred_ans": "p"}, "must be text"),
        ({"answer": ["a"], "pred_ans": ["p"]}, "must be text"),
    ],
)
def test_unusable_records_say_why(obj: dict, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        record_from_mapping(obj)


def test_score_of_nothing_is_zero() -> None:
    assert score_predictions([]) == QAScores(cover_em=0.0, em=0.0, f1=0.0, questions=0)


def test_report_uses_the_metric_names() -> None:
    report = QAScores(cover_em=2 / 3, em=0.5, f1=0.123456, questions=3).as_report()
    assert list(report) == [*METRIC_NAMES, "questions"] == ["cover_em", "em", "f1", "questions"]
    assert report == {"cover_em": 0.6667, "em": 0.5, "f1": 0.1235, "questions": 3}
    assert QAScores(cover_em=2 / 3, em=0, f1=0, questions=3).as_report(None)["cover_em"] == 2 / 3


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reader_skips_blank_lines(tmp_path: Path) -> None:
    good = json.dumps({"answer": ["a"], "pred_ans": "a"})
    records = read_predictions(_write_lines(tmp_path / "p.jsonl", [good, "", "  ", good]))
    assert records == [PredictionRecord(golden_answers=["a"], prediction="a")] * 2


@pytest.mark.parametrize(
    ("bad_line", "reason"),
    [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"question": "q", "pred_ans": "p"}', "no gold answers"),
    ],
)
def test_reader_names_the_bad_line(tmp_path: Path, bad_line: str, reason: str) -> None:
    good = json.dumps({"answer": ["a"], "pred_ans": "a"})
    path = _write_lines(tmp_path / "p.jsonl", [good, "", bad_line, good])
    with pytest.raises(PredictionFileError, match=reason) as caught:
        read_predictions(path)
    assert caught.value.line_number == 3
    assert str(caught.value).startswith(f"{path}, line 3: ")
