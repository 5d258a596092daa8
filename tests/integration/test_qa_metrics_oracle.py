"""sira-seek's QA metrics against the SEEK/PAGER authors' scorer, used as an oracle.

The scorer is imported by path from ../shared/reference (`pager_oracle`), so this lives beside
the other tests that need ../shared. Three kinds of input: many generated predictions and golds
drawn from the characters that once made the two disagree (hypothesis, seeded and the seed
printed); one hand-made case per difference that was found; and the authors' own sample
predictions, on which their scorer gives EM = Cover-EM = 0.6 and F1 = 0.661.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from pager_oracle import (
    SEPARATORS,
    TRICKY_CHARS,
    TRICKY_WORDS,
    authors_extraction,
    load_reference,
    reference_file,
    reference_item,
    reference_rows,
)
from seeds import pick_seed

from sira_seek.metrics.qa import (
    NO_ANSWER,
    PredictionRecord,
    cover_em,
    exact_match,
    extract_tagged_answer,
    normalize_answer,
    read_predictions,
    record_from_mapping,
    score_predictions,
    token_f1,
)
from sira_seek.seek.output_parsing import extract_answer as lenient_extraction

pytestmark = pytest.mark.integration

_piece = st.one_of(
    st.sampled_from(TRICKY_WORDS), st.text(alphabet=TRICKY_CHARS, min_size=1, max_size=3)
)
tricky_text = st.lists(st.tuples(_piece, st.sampled_from(SEPARATORS)), max_size=6).map(
    lambda parts: "".join(p + s for p, s in parts)
)
gold_lists = st.lists(tricky_text, min_size=1, max_size=4)


@st.composite
def generations(draw: st.DrawFn) -> str:
    """Model output with any number of ``<answer>``/``</answer>`` tags in any order."""
    tags = st.sampled_from(["<answer>", "</answer>", "<answer> ", " </answer>", "<ANSWER>", ""])
    parts = draw(st.lists(st.tuples(tags, tricky_text), max_size=5))
    return "".join(tag + text for tag, text in parts)


@st.composite
def their_rows(draw: st.DrawFn) -> dict[str, Any]:
    """A row of their file format: ``answer`` as a string or a list, ``pred_ans`` text."""
    golds = draw(gold_lists)
    kind = draw(st.sampled_from(["text", "gold", "extracted"]))
    if kind == "gold":
        prediction = draw(st.sampled_from(golds))
    elif kind == "extracted":
        prediction = authors_extraction(draw(generations()))
    else:
        prediction = draw(tricky_text)
    answer: str | list[str] = golds[0] if draw(st.booleans()) and len(golds) == 1 else golds
    return {"answer": answer, "pred_ans": prediction}


def ours(prediction: str, golds: list[str]) -> dict[str, float]:
    return {
        "cover_em": cover_em(prediction, golds),
        "em": exact_match(prediction, golds),
        "f1": token_f1(prediction, golds),
    }


def _with_seed(label: str, max_examples: int) -> Any:
    """Hypothesis settings for an oracle run, seeded by the suite's printed seed."""
    drawn = pick_seed(label)

    def wrap(test: Any) -> Any:
        configured = settings(
            max_examples=max_examples,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        )(test)
        return seed(drawn)(configured)

    return wrap


# ------------------------------------------------------------------------------------------
# (a) generated inputs
# ------------------------------------------------------------------------------------------


def test_generated_items_score_as_the_authors() -> None:
    @_with_seed("QA oracle, per item", max_examples=1500)
    @given(prediction=tricky_text, golds=gold_lists)
    def check(prediction: str, golds: list[str]) -> None:
        ref = load_reference()
        for text in (prediction, *golds):
            assert normalize_answer(text) == ref.normalize_answer(ref.bool_mapping(text))
        assert ours(prediction, golds) == reference_item(prediction, golds)

    check()


def test_generated_files_score_as_the_authors() -> None:
    """Aggregates over whole files of their format, read by both readers from disk."""

    @_with_seed("QA oracle, per file", max_examples=200)
    @given(rows=st.lists(their_rows(), min_size=1, max_size=25))
    def check(rows: list[dict[str, Any]]) -> None:
        records = [record_from_mapping(row) for row in rows]
        for record, row in zip(records, rows, strict=True):
            assert ours(record.prediction, record.golden_answers) == reference_item(
                row["pred_ans"],
                row["answer"] if isinstance(row["answer"], list) else [row["answer"]],
            )
        expected = reference_rows(rows)
        scores = score_predictions(records)
        assert scores.questions == len(rows)
        # Same sums in the same order, divided once: equal to the last bit, not just close.
        assert {"cover_em": scores.cover_em, "em": scores.em, "f1": scores.f1} == expected

    check()


def test_generated_model_outputs_extract_as_the_authors() -> None:
    @_with_seed("QA oracle, extraction", max_examples=800)
    @given(generated=generations())
    def check(generated: str) -> None:
        assert extract_tagged_answer(generated) == authors_extraction(generated)

    check()


# ------------------------------------------------------------------------------------------
# (b) one hand-made case per difference found (ours before -> theirs, which we now give)
# ------------------------------------------------------------------------------------------

DIFFERENCES: list[tuple[str, str, list[str], dict[str, float]]] = [
    # label, prediction, golds, their scores
    ("curly ’", "Shaquille O’Neal", ["Shaquille O'Neal"], {"cover_em": 1, "em": 1, "f1": 1}),
    ("left curly quote", "‘Paris’", ["Paris"], {"cover_em": 1, "em": 1, "f1": 1}),
    ("acute accent", "O´Neal", ["O Neal"], {"cover_em": 1, "em": 1, "f1": 1}),
    ("curly double quotes stay", "“Paris”", ["Paris"], {"cover_em": 0, "em": 0, "f1": 0}),
    ("lowercase true", "true", ["yes"], {"cover_em": 0, "em": 0, "f1": 0}),
    ("uppercase FALSE", "FALSE", ["no"], {"cover_em": 0, "em": 0, "f1": 0}),
    ("padded True", " True", ["yes"], {"cover_em": 0, "em": 0, "f1": 0}),
    ("exact True", "True", ["yes"], {"cover_em": 1, "em": 1, "f1": 1}),
    ("exact False gold", "no", ["False"], {"cover_em": 1, "em": 1, "f1": 1}),
    ("empty vs The", "", ["The"], {"cover_em": 1, "em": 1, "f1": 0}),
    ("words vs The", "Paris", ["The"], {"cover_em": 0, "em": 0, "f1": 0}),
    ("no tag", NO_ANSWER, ["Paris"], {"cover_em": 0, "em": 0, "f1": 0}),
    ("None gold", NO_ANSWER, ["None"], {"cover_em": 1, "em": 1, "f1": 1}),
]


@pytest.mark.parametrize(
    ("prediction", "golds", "expected"),
    [case[1:] for case in DIFFERENCES],
    ids=[case[0] for case in DIFFERENCES],
)
def test_each_difference_found_now_scores_as_the_authors(
    prediction: str, golds: list[str], expected: dict[str, float]
) -> None:
    assert reference_item(prediction, golds) == expected  # the oracle says so
    assert ours(prediction, golds) == expected


@pytest.mark.parametrize(
    ("generated", "theirs", "lenient"),
    [
        ("The capital is Paris.", NO_ANSWER, "The capital is Paris"),
        ("Reasoning.\nAnswer: Paris", NO_ANSWER, "Paris"),
        ("<answer>Rome</answer> or rather <answer> Paris </answer>", "Paris", "Paris"),
        ("<answer> Paris", "Paris", "Paris"),
        ("<ANSWER>Paris</ANSWER>", NO_ANSWER, "Paris"),
    ],
)
def test_missing_tag_is_no_answer_and_lenient_stays_an_option(
    generated: str, theirs: str, lenient: str
) -> None:
    assert authors_extraction(generated) == theirs
    assert extract_tagged_answer(generated) == theirs
    assert lenient_extraction(generated) == lenient  # the named, non-default option


def test_a_question_without_gold_is_counted_not_scored() -> None:
    """Their scorer cannot score it (``max`` of nothing); ours reports it instead of letting
    an empty or failed answer "match" an empty gold."""
    with pytest.raises(ValueError):
        reference_item("", [])
    scores = score_predictions(
        [
            PredictionRecord(id="no-gold", golden_answers=[], prediction=""),
            PredictionRecord(id="wrong", golden_answers=["Paris"], prediction=NO_ANSWER),
        ]
    )
    assert (scores.questions, scores.no_gold, scores.em, scores.cover_em) == (1, 1, 0.0, 0.0)


# ------------------------------------------------------------------------------------------
# (c) the authors' sample predictions
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pager_infer_file(shared_data: Path) -> Path:
    path = shared_data / "pager_samples" / "infer" / "nq_test_shuffle_2k.jsonl"
    if not path.is_file():
        pytest.fail(f"PAGER sample predictions missing: {path}", pytrace=False)
    return path


def test_pager_samples_score_as_the_authors(pager_infer_file: Path) -> None:
    expected = reference_file(pager_infer_file)
    assert round(expected["em"], 3) == round(expected["cover_em"], 3) == 0.6
    assert round(expected["f1"], 3) == 0.661
    records = read_predictions(pager_infer_file)
    rows = [json.loads(line) for line in pager_infer_file.read_text(encoding="utf-8").splitlines()]
    for record, row in zip(records, rows, strict=True):
        assert ours(record.prediction, record.golden_answers) == reference_item(
            row["pred_ans"], row["answer"]
        ), row["id"]
    scores = score_predictions(records)
    assert {"cover_em": scores.cover_em, "em": scores.em, "f1": scores.f1} == expected


def test_pager_samples_answers_extract_as_the_authors(pager_infer_file: Path) -> None:
    """Their ``pred_ans`` was cut from ``gen_text`` by their inference code; ours agrees."""
    rows = [json.loads(line) for line in pager_infer_file.read_text(encoding="utf-8").splitlines()]
    assert [extract_tagged_answer(r["gen_text"]) for r in rows] == [r["pred_ans"] for r in rows]
