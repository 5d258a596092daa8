"""The SEEK analyses on hand-built plain traces, every figure computed by hand."""

from __future__ import annotations

import pytest

from sira_seek.metrics.seek_diagnostics import (
    QuestionTrace,
    StepTrace,
    best_subquery_recall,
    new_document_share,
    seek_diagnostics,
    sub_queries,
    subquery_diversity,
    token_jaccard,
)


def _result(
    qid: str,
    steps: list[tuple[str, list[str]]],
    *,
    gists: int | None = None,
    seconds: float = 1.0,
    error: str | None = None,
) -> QuestionTrace:
    return QuestionTrace(
        id=qid,
        ok=error is None,
        steps=[StepTrace(sub_query=q, retrieved_ids=ids) for q, ids in steps],
        gists=gists,
        seconds=seconds,
    )


def test_token_jaccard_uses_the_qa_normaliser() -> None:
    # {arthur, s, magazine} vs {arthur, s, magazine, founded}: 3/4.
    assert token_jaccard("Arthur's Magazine", "arthur’s magazine founded") == 0.75
    # Articles and punctuation do not count as words.
    assert token_jaccard("The river!", "river") == 1.0
    assert token_jaccard("", "") == 1.0
    assert token_jaccard("a", "river") == 0.0  # "a" normalises away: {} vs {river}


def test_diversity_is_one_minus_the_mean_over_all_pairs() -> None:
    # Pairs: (x y, x y) = 1, (x y, z) = 0, (x y, z) = 0 -> mean 1/3 -> diversity 2/3.
    assert subquery_diversity(["x y", "x y", "z"]) == pytest.approx(2 / 3)
    # Identical sub-queries: no diversity; disjoint ones: full.
    assert subquery_diversity(["a b", "a b"]) == 0.0
    assert subquery_diversity(["alpha", "beta", "gamma"]) == 1.0


def test_diversity_of_fewer_than_two_queries_is_undefined() -> None:
    assert subquery_diversity([]) is None
    assert subquery_diversity(["only one"]) is None


def test_blank_sub_queries_are_dropped_before_diversity() -> None:
    result = _result("q", [("alpha", ["d1"]), ("   ", []), ("beta", ["d2"]), ("", [])])
    assert sub_queries(result) == ["alpha", "beta"]
    # Had the blanks stayed, the pair (blank, blank) would score similarity 1.
    report = seek_diagnostics([result])
    assert report.subquery_diversity == 1.0 and report.subqueries_per_question == 2.0


def test_new_document_share_is_distinct_over_total_retrieved() -> None:
    # Steps {1,2,3}, {3,4}, {1,2}: distinct 4 over 7 retrieved.
    assert new_document_share([["d1", "d2", "d3"], ["d3", "d4"], ["d1", "d2"]]) == 4 / 7
    # Every step the same 5 documents over 3 steps: 1/3; all new: 1.
    same = ["a", "b", "c", "d", "e"]
    assert new_document_share([same, same, same]) == pytest.approx(1 / 3)
    assert new_document_share([["a"], ["b"], ["c"]]) == 1.0
    # A duplicate inside one step counts once; empty steps count for nothing.
    assert new_document_share([["a", "a"], [], ["b"]]) == 1.0
    assert new_document_share([[], []]) is None
    assert new_document_share([]) is None


def test_best_subquery_recall_takes_the_best_step_at_depth_5() -> None:
    relevant = {"r1", "r2"}
    steps = [
        ["x1", "x2", "x3", "x4", "x5", "r1", "r2"],  # both relevant at ranks 6-7: 0 at depth 5
        ["r1", "x1", "x2", "x3", "x4"],  # 1/2
        ["x9"],
    ]
    assert best_subquery_recall(steps, relevant) == 0.5
    # Union over steps would be 1.0: the measure is per sub-query, not over the run.
    assert best_subquery_recall([["r1"], ["r2"]], relevant) == 0.5
    assert best_subquery_recall([["r1", "r2"]], relevant) == 1.0
    assert best_subquery_recall([], relevant) == 0.0
    assert best_subquery_recall([["r1"]], []) is None


def test_run_report_over_hand_made_results() -> None:
    results = [
        # 2 gists, 2 sub-queries sharing 1 of 3 tokens (jaccard 1/3), docs {a,b},{b,c}: share 3/4.
        _result("q1", [("x y", ["a", "b"]), ("y z", ["b", "c"])], gists=2, seconds=2.0),
        # 4 gists, 1 sub-query (diversity undefined), docs {a}: share 1.
        _result("q2", [("solo", ["a"])], gists=4, seconds=4.0),
        # No sketch (a baseline), 2 identical sub-queries (diversity 0), same docs: share 1/2.
        _result("q3", [("w", ["r1"]), ("w", ["r1"])], seconds=9.0),
        # Failed: left out of everything but `failed`.
        _result("q4", [("fail", ["zz"])], gists=3, seconds=100.0, error="boom"),
    ]
    qrels = {"q3": {"r1": 1, "r2": 1, "r3": 0}, "q1": {"nope": 1}, "q9": {"a": 1}}
    report = seek_diagnostics(results, qrels, wall_s=6.0, run_questions=3)
    assert (report.questions, report.failed) == (3, 1)
    assert report.subquery_diversity == pytest.approx(round(((1 - 1 / 3) + 0.0) / 2, 4))
    assert report.diversity_questions == 2
    assert report.new_document_share == pytest.approx(round((0.75 + 1.0 + 0.5) / 3, 4))
    # No gains passed: DIG is missing and says why, never 0.
    assert report.dig is None and report.dig_questions == 0
    assert report.dig_unavailable is not None and "not computed" in report.dig_unavailable
    # q3: best step holds r1 of {r1, r2} (r3 has grade 0): 1/2; q1: 0; q2 unjudged.
    assert report.best_subquery_recall_at_5 == 0.25
    assert report.recall_questions == 2
    assert report.gists_per_question == 3.0  # (2 + 4) / 2, q3 has no sketch
    assert report.gist_counts == {2: 1, 4: 1}
    assert report.subqueries_per_question == pytest.approx(round(5 / 3, 4))
    assert report.seconds_per_question == 5.0  # (2 + 4 + 9) / 3
    assert report.seconds_per_question_p50 == 4.0
    assert report.amortised_seconds_per_question == 2.0
    by_id = {row.id: row for row in report.per_question}
    assert by_id["q2"].best_subquery_recall_at_5 is None and by_id["q2"].diversity is None
    out = report.as_report()
    assert out["gist_counts"] == {"2": 1, "4": 1}
    assert isinstance(out["per_question"], list) and len(out["per_question"]) == 3


def test_no_qrels_and_no_results_give_nulls_not_errors() -> None:
    empty = seek_diagnostics([])
    assert empty.questions == 0 and empty.dig is None and empty.seconds_per_question is None
    assert empty.amortised_seconds_per_question is None
    one = seek_diagnostics([_result("q", [("a", ["d"])], gists=1)])
    assert one.best_subquery_recall_at_5 is None and one.recall_questions == 0
