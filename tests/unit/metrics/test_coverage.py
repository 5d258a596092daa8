"""Answer coverage@k on hand-computed cases: cut-offs, aliases, normalisation, denominators."""

from __future__ import annotations

import pytest

from sira_seek.metrics.coverage import (
    answer_coverage,
    answer_in_passage,
    coverage_key,
    first_covering_rank,
    passage_text,
)


def test_an_answer_at_rank_5_counts_at_5_and_one_at_rank_6_only_at_10() -> None:
    filler = ["nothing here"] * 10
    at5 = filler[:4] + ["Paris is the capital"] + filler[5:]
    at6 = filler[:5] + ["Paris is the capital"] + filler[6:]
    found = answer_coverage(
        {"q5": at5, "q6": at6, "qx": filler}, {q: ["Paris"] for q in ["q5", "q6", "qx"]}
    )
    assert found.first_rank == {"q5": 5, "q6": 6, "qx": None}
    # q5 covered at 5 and 10; q6 only at 10; qx never: 1/3 and 2/3.
    assert found.coverage == {5: pytest.approx(1 / 3), 10: pytest.approx(2 / 3)}
    assert found.as_metrics() == {"coverage@5": 0.3333, "coverage@10": 0.6667}


def test_an_answer_at_rank_11_is_not_covered_at_10() -> None:
    passages = ["x"] * 10 + ["Paris"]
    assert answer_coverage({"q": passages}, {"q": ["Paris"]}).coverage[10] == 0.0


def test_any_alias_counts() -> None:
    passages = ["The Big Apple never sleeps."]
    assert answer_in_passage(["New York City", "Big Apple"], passages[0])
    assert (
        answer_coverage({"q": passages}, {"q": ["New York City", "Big Apple"]}).coverage[5] == 1.0
    )


def test_normalisation_is_the_qa_metrics_one() -> None:
    # Curly apostrophe in the passage, straight one in the gold (both become a space there).
    assert answer_in_passage(["Shaquille O'Neal"], "shaquille o’neal signed in 1992")
    # Articles dropped on both sides, punctuation to spaces, underscores to spaces, case folded.
    assert answer_in_passage(["The Beatles"], "a record by the BEATLES, released")
    assert answer_in_passage(["New_York"], "born in New York.")
    # Exactly "True" maps to yes, as in the QA scorer: the passage must say "yes".
    assert answer_in_passage(["True"], "the answer is yes")
    assert not answer_in_passage(["True"], "this is true")


def test_whole_tokens_in_a_contiguous_run_only() -> None:
    assert not answer_in_passage(["1989"], "founded in 19890 BC")
    assert not answer_in_passage(["Arthur"], "Arthurian legend")
    # Cover-EM would accept these tokens in any order; coverage asks for the phrase.
    assert not answer_in_passage(["Bauer Media"], "media of Bauer")
    assert answer_in_passage(["Bauer Media"], "by Bauer Media Group")


def test_an_alias_that_normalises_to_nothing_never_matches() -> None:
    assert not answer_in_passage(["The", "?"], "any text at all")
    assert not answer_in_passage(["The"], "")
    assert answer_coverage({"q": ["anything"]}, {"q": ["the"]}).coverage == {5: 0.0, 10: 0.0}


def test_questions_without_gold_leave_the_denominator() -> None:
    found = answer_coverage(
        {"a": ["Paris"], "b": ["Rome"], "c": ["Oslo"]},
        {"a": ["Paris"], "b": []},  # b: empty list; c: not in the QA file at all
    )
    assert (found.questions, found.no_gold) == (1, 2)
    assert found.coverage[5] == 1.0


def test_nothing_to_score_gives_zero_not_nan() -> None:
    found = answer_coverage({}, {"q": ["Paris"]})
    assert found.questions == 0 and found.coverage == {5: 0.0, 10: 0.0}


def test_a_missing_passage_keeps_its_rank() -> None:
    # An empty passage (document gone from the index) still occupies rank 1.
    assert first_covering_rank(["Paris"], ["", "Paris"]) == 2


def test_the_passage_is_title_and_text() -> None:
    assert passage_text({"title": "Danube", "text": "A river."}) == "Danube A river."
    assert passage_text({"text": "only text"}) == "only text"
    assert passage_text(None) == ""
    # The answer named only in the title is covered.
    assert answer_in_passage(["Danube"], passage_text({"title": "Danube", "text": "A river."}))


def test_cutoffs_must_be_positive_and_keys_are_spelled_like_measures() -> None:
    with pytest.raises(ValueError, match="cut-offs"):
        answer_coverage({"q": ["x"]}, {"q": ["x"]}, ks=(0, 5))
    assert coverage_key(5) == "coverage@5"
    assert answer_coverage({"q": ["x", "Paris"]}, {"q": ["Paris"]}, ks=(1, 2)).coverage == {
        1: 0.0,
        2: 1.0,
    }
