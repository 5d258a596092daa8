"""The SEEK analyses on hand-built plain traces, every figure computed by hand."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sira_seek.metrics.seek_answer_analyses import (
    AnalysisCost,
    QuestionAnswers,
    performance_by_iteration,
    seed_slot_count,
    slot_ablation,
)
from sira_seek.metrics.seek_diagnostics import (
    TOKEN_JACCARD,
    EmbeddingCosine,
    QuestionTrace,
    StepTrace,
    document_overlap,
    jaccard,
    max_subquery_recall,
    new_document_share,
    overlap_by_iteration,
    qrels_subquery_recall,
    seek_diagnostics,
    sub_queries,
    subquery_diversity,
    subquery_similarity,
    token_jaccard,
)


def _result(
    qid: str,
    steps: list[tuple[str, list[str]]],
    *,
    gists: int | None = None,
    seconds: float = 1.0,
    error: str | None = None,
    golds: Sequence[str] = (),
    **answers: object,
) -> QuestionTrace:
    return QuestionTrace.model_validate(
        {
            "id": qid,
            "ok": error is None,
            "steps": [StepTrace(sub_query=q, retrieved_ids=ids) for q, ids in steps],
            "gists": gists,
            "seconds": seconds,
            "golden_answers": list(golds),
            **answers,
        }
    )


# -- sub-query similarity and diversity (Fig. 4a) ---------------------------------------------


def test_token_jaccard_uses_the_qa_normaliser() -> None:
    # {arthur, s, magazine} vs {arthur, s, magazine, founded}: 3/4.
    assert token_jaccard("Arthur's Magazine", "arthur’s magazine founded") == 0.75
    # Articles and punctuation do not count as words.
    assert token_jaccard("The river!", "river") == 1.0
    assert token_jaccard("", "") == 1.0
    assert token_jaccard("a", "river") == 0.0  # "a" normalises away: {} vs {river}


def test_diversity_is_one_minus_the_mean_similarity_over_all_pairs() -> None:
    # Pairs: (x y, x y) = 1, (x y, z) = 0, (x y, z) = 0 -> similarity 1/3, diversity 2/3.
    assert subquery_similarity(["x y", "x y", "z"]) == pytest.approx(1 / 3)
    assert subquery_diversity(["x y", "x y", "z"]) == pytest.approx(2 / 3)
    # Identical sub-queries: no diversity; disjoint ones: full.
    assert subquery_diversity(["a b", "a b"]) == 0.0
    assert subquery_diversity(["alpha", "beta", "gamma"]) == 1.0


def test_diversity_of_fewer_than_two_queries_is_undefined() -> None:
    assert subquery_diversity([]) is None
    assert subquery_diversity(["only one"]) is None
    assert subquery_similarity(["only one"]) is None


class HalfSimilar:
    """A custom similarity: every pair is half alike."""

    name = "always_half"

    def similarity(self, first: str, second: str) -> float:
        return 0.5


def test_the_similarity_is_pluggable_and_the_report_names_it() -> None:
    trace = _result("q", [("alpha", ["d1"]), ("beta", ["d2"])])
    default = seek_diagnostics([trace])
    # Token Jaccard: disjoint tokens, similarity 0, diversity 1.
    assert (default.subquery_similarity, default.subquery_diversity) == (0.0, 1.0)
    assert default.subquery_similarity_measure == "token_jaccard" == TOKEN_JACCARD.name
    custom = seek_diagnostics([trace], similarity=HalfSimilar())
    assert (custom.subquery_similarity, custom.subquery_diversity) == (0.5, 0.5)
    assert custom.subquery_similarity_measure == "always_half"
    assert custom.as_report()["subquery_similarity_measure"] == "always_half"


def test_embedding_cosine_embeds_each_text_once() -> None:
    calls: list[str] = []
    vectors = {"alpha": (1.0, 0.0), "beta": (1.0, 1.0), "gamma": (0.0, 0.0)}

    def embed(text: str) -> tuple[float, float]:
        calls.append(text)
        return vectors[text]

    cosine = EmbeddingCosine(embed, name="toy-embedding")
    # cos((1,0), (1,1)) = 1/sqrt(2); a zero vector is similar to nothing.
    assert cosine.similarity("alpha", "beta") == pytest.approx(2**-0.5)
    assert cosine.similarity("alpha", "gamma") == 0.0
    assert subquery_similarity(["alpha", "beta", "gamma"], cosine) == pytest.approx(
        (2**-0.5 + 0 + 0) / 3
    )
    assert sorted(calls) == ["alpha", "beta", "gamma"]


def test_blank_sub_queries_are_dropped_before_diversity() -> None:
    result = _result("q", [("alpha", ["d1"]), ("   ", []), ("beta", ["d2"]), ("", [])])
    assert sub_queries(result) == ["alpha", "beta"]
    # Had the blanks stayed, the pair (blank, blank) would score similarity 1.
    report = seek_diagnostics([result])
    assert report.subquery_diversity == 1.0 and report.subqueries_per_question == 2.0


# -- document overlap (Fig. 4a, Fig. 6b) and the new-document share --------------------------


def test_document_overlap_of_a_three_step_trace_by_hand() -> None:
    steps = [["a", "b", "c"], ["b", "c", "d"], ["a", "d", "e"]]
    # Consecutive steps: J(D2, D1) = |{b,c}| / |{a,b,c,d}| = 2/4; J(D3, D2) = |{d}| / 5 = 1/5.
    # Against the cumulative set: step 2 as above; step 3 vs {a,b,c,d}: |{a,d}| / 5 = 2/5.
    rows = overlap_by_iteration(steps)
    assert [(r.iteration, r.with_previous, r.with_cumulative) for r in rows] == [
        (2, 0.5, 0.5),
        (3, 0.2, 0.4),
    ]
    assert document_overlap(steps) == pytest.approx((0.5 + 0.2) / 2)
    # Over a run: a second question whose two steps retrieved the same document.
    report = seek_diagnostics(
        [
            _result("q1", [("s1", steps[0]), ("s2", steps[1]), ("s3", steps[2])]),
            _result("q2", [("t1", ["x"]), ("t2", ["x"])]),
            _result("q3", [("u1", ["y"])]),  # one step: no overlap
        ]
    )
    assert report.document_overlap == pytest.approx(round((0.35 + 1.0) / 2, 4))
    assert report.document_overlap_questions == 2
    assert [r.model_dump() for r in report.document_overlap_by_iteration] == [
        {"iteration": 2, "questions": 2, "with_previous": 0.75, "with_cumulative": 0.75},
        {"iteration": 3, "questions": 1, "with_previous": 0.2, "with_cumulative": 0.4},
    ]
    by_id = {row.id: row for row in report.per_question}
    assert by_id["q1"].document_overlap == pytest.approx(0.35)
    assert by_id["q3"].document_overlap is None and by_id["q3"].document_overlap_by_iteration == []


def test_overlap_of_empty_steps() -> None:
    assert jaccard([], []) is None  # nothing to compare
    assert jaccard(["a"], []) == 0.0
    assert document_overlap([[], []]) is None
    assert document_overlap([["a"], []]) == 0.0
    assert document_overlap([["a"]]) is None and document_overlap([]) is None
    # A duplicate inside a step counts once.
    assert document_overlap([["a", "a"], ["a"]]) == 1.0


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


# -- maximum sub-query Recall@5 (A.5) ---------------------------------------------------------

PASSAGES = {
    "overdrive": "Maximum Overdrive Maximum Overdrive is a 1986 film directed by Stephen King.",
    "leland": "Leland, North Carolina Leland is a town in Brunswick County.",
    "x1": "filler one",
    "x2": "filler two",
    "x3": "filler three",
    "x4": "filler four",
}


def test_recall_counts_answer_containing_documents_not_judged_ones() -> None:
    golds = ["Stephen King"]
    # The judged "leland" does not contain the answer: no hit; "overdrive" (not judged) does.
    assert max_subquery_recall([["leland", "x1"]], PASSAGES, golds) == 0.0
    assert qrels_subquery_recall([["leland", "x1"]], {"leland"}) == 1.0
    assert max_subquery_recall([["leland", "x1"], ["x2", "overdrive"]], PASSAGES, golds) == 1.0
    assert qrels_subquery_recall([["x2", "overdrive"]], {"leland"}) == 0.0
    # Only the top 5 of a sub-query count: the answer at rank 6 is no hit.
    late = ["x1", "x2", "x3", "x4", "leland", "overdrive"]
    assert max_subquery_recall([late], PASSAGES, golds) == 0.0
    assert max_subquery_recall([late[1:]], PASSAGES, golds) == 1.0
    # A document missing from the passages contains nothing; no steps: 0; no gold: None.
    assert max_subquery_recall([["gone"]], PASSAGES, golds) == 0.0
    assert max_subquery_recall([], PASSAGES, golds) == 0.0
    assert max_subquery_recall([["overdrive"]], PASSAGES, []) is None


def test_recall_over_a_run_by_hand() -> None:
    traces = [
        # Step 2 retrieves the answer-bearing page, which the qrels do not judge (they judge
        # a page never retrieved): 1 vs 0.
        _result("q1", [("a", ["leland"]), ("b", ["overdrive"])], golds=["Stephen King"]),
        # Retrieves only the judged page, which lacks the answer: 0 vs 1.
        _result("q2", [("c", ["leland", "x1"])], golds=["Stephen King"]),
        # A whole-token match after normalisation: "brunswick county" in the Leland page.
        _result("q3", [("d", ["x1"]), ("e", ["leland"])], golds=["Brunswick County"]),
        _result("q4", [("f", ["overdrive"])]),  # no gold: left out
    ]
    qrels = {"q1": {"x3": 1}, "q2": {"leland": 1}}
    report = seek_diagnostics(traces, qrels, passages=PASSAGES)
    assert report.max_subquery_recall_at_5 == pytest.approx(round(2 / 3, 4))
    assert report.max_subquery_recall_questions == 3
    assert report.max_subquery_recall_unavailable is None
    assert report.qrels_subquery_recall_at_5 == 0.5 and report.qrels_recall_questions == 2
    by_id = {row.id: row for row in report.per_question}
    assert (by_id["q1"].max_subquery_recall_at_5, by_id["q1"].qrels_subquery_recall_at_5) == (
        1.0,
        0.0,
    )
    assert (by_id["q2"].max_subquery_recall_at_5, by_id["q2"].qrels_subquery_recall_at_5) == (
        0.0,
        1.0,
    )
    # Without the passages' texts the figure is missing and says why.
    bare = seek_diagnostics(traces)
    assert bare.max_subquery_recall_at_5 is None and bare.max_subquery_recall_questions == 0
    assert "not computed" in (bare.max_subquery_recall_unavailable or "")


def test_qrels_recall_takes_the_best_step_at_depth_5() -> None:
    relevant = {"r1", "r2"}
    steps = [
        ["x1", "x2", "x3", "x4", "x5", "r1", "r2"],  # both relevant at ranks 6-7: 0 at depth 5
        ["r1", "x1", "x2", "x3", "x4"],  # 1/2
        ["x9"],
    ]
    assert qrels_subquery_recall(steps, relevant) == 0.5
    # Union over steps would be 1.0: the measure is per sub-query, not over the run.
    assert qrels_subquery_recall([["r1"], ["r2"]], relevant) == 0.5
    assert qrels_subquery_recall([["r1", "r2"]], relevant) == 1.0
    assert qrels_subquery_recall([], relevant) == 0.0
    assert qrels_subquery_recall([["r1"]], []) is None


# -- performance across iterations (Fig. 6a) and the slot ablation (Fig. 4b) -----------------


def test_performance_by_iteration_by_hand() -> None:
    answers = [
        QuestionAnswers(
            id="q1", golden_answers=["Paris"], answers_by_iteration=["Lyon"] + 2 * ["Paris"]
        ),
        # One iteration only: its answer stands at every later iteration.
        QuestionAnswers(id="q2", golden_answers=["Rome"], answers_by_iteration=["Rome"]),
        QuestionAnswers(id="q3", golden_answers=["Oslo"]),  # not asked: left out
        QuestionAnswers(id="q4", answers_by_iteration=["x"]),  # no gold: left out
    ]
    rows = performance_by_iteration(answers)
    assert [(r.iteration, r.questions, r.iterating, r.cover_em, r.f1) for r in rows] == [
        (1, 2, 2, 0.5, 0.5),  # Lyon 0, Rome 1
        (2, 2, 1, 1.0, 1.0),
        (3, 2, 1, 1.0, 1.0),
    ]
    assert performance_by_iteration(answers[2:]) == []


def test_slot_ablation_by_hand() -> None:
    def seed(qid: str, gold: str, answer: str, removed: list[str], without: str) -> QuestionAnswers:
        return QuestionAnswers(
            id=qid,
            golden_answers=[gold],
            answer=answer,
            slot_ablation_answers=removed,
            answer_without_sketch=without,
        )

    answers = [
        seed("q1", "Paris", "Paris", ["Paris", "Lyon"], "Nice"),
        seed("q2", "Rome", "Rome", ["Milan", "Milan"], "Rome"),
        seed("q3", "Oslo", "Oslo", ["Oslo", "Oslo", "Oslo"], "Oslo"),  # 3 slots: not a seed
        QuestionAnswers(id="q4", golden_answers=["Bern"], answer="Bern"),  # not asked
    ]
    assert seed_slot_count([2, 2, 3]) == 2 and seed_slot_count([2, 3]) == 3
    found = slot_ablation(answers)
    assert found is not None and (found.seed_slots, found.questions) == (2, 2)
    assert [(r.removed, r.cover_em) for r in found.rows] == [
        ("N/A", 1.0),
        ("First", 0.5),
        ("Second", 0.0),
        ("w/o Sketch", 0.5),
    ]
    three = slot_ablation(answers, seed_slots=3)
    assert three is not None and [r.removed for r in three.rows] == [
        "N/A",
        "First",
        "Second",
        "Third",
        "w/o Sketch",
    ]
    assert slot_ablation(answers[3:]) is None


def test_answer_analyses_in_the_run_report_and_when_not_computed() -> None:
    traces = [
        _result(
            "q1",
            [("a", ["d1"])],
            golds=["Paris"],
            answer="Paris",
            answers_by_iteration=["Lyon", "Paris"],
            slot_ablation_answers=["Lyon"],
            answer_without_sketch="Paris",
        )
    ]
    cost = AnalysisCost(llm_calls=2, completion_tokens=10)
    report = seek_diagnostics(traces, per_iteration_cost=cost, slot_ablation_cost=cost)
    assert report.performance_by_iteration is not None
    assert [r.cover_em for r in report.performance_by_iteration] == [0.0, 1.0]
    assert report.performance_by_iteration_cost == cost
    assert report.per_question[0].cover_em_by_iteration == [0.0, 1.0]
    assert report.slot_ablation is not None and report.slot_ablation.cost == cost
    assert [r.cover_em for r in report.slot_ablation.rows] == [1.0, 0.0, 1.0]
    out = report.as_report()
    assert out["performance_by_iteration"][1] == {  # type: ignore[index]
        "iteration": 2,
        "questions": 1,
        "iterating": 1,
        "cover_em": 1.0,
        "f1": 1.0,
    }
    plain = seek_diagnostics(traces)
    assert plain.performance_by_iteration is None and plain.slot_ablation is None
    assert "not computed" in (plain.performance_by_iteration_unavailable or "")
    assert "not computed" in (plain.slot_ablation_unavailable or "")


# -- the run report ---------------------------------------------------------------------------


def test_run_report_over_hand_made_results() -> None:
    results = [
        # 2 gists, 2 sub-queries sharing 1 of 3 tokens (jaccard 1/3), docs {a,b},{b,c}: share 3/4.
        _result("q1", [("x y", ["a", "b"]), ("y z", ["b", "c"])], gists=2, seconds=2.0),
        # 4 gists, 1 sub-query (diversity undefined), docs {a}: share 1.
        _result("q2", [("solo", ["a"])], gists=4, seconds=4.0, step_cap_reached=True),
        # No sketch (a baseline), 2 identical sub-queries (diversity 0), same docs: share 1/2.
        # Answered with half-length evidence (a prompt too long for the model).
        _result("q3", [("w", ["r1"]), ("w", ["r1"])], seconds=9.0, evidence_scale=0.5),
        # Failed: left out of everything but `failed`.
        _result(
            "q4", [("fail", ["zz"])], gists=3, seconds=100.0, error="boom", evidence_scale=0.25
        ),
    ]
    qrels = {"q3": {"r1": 1, "r2": 1, "r3": 0}, "q1": {"nope": 1}, "q9": {"a": 1}}
    report = seek_diagnostics(results, qrels, wall_s=6.0, run_questions=3)
    assert (report.questions, report.failed) == (3, 1)
    assert report.subquery_diversity == pytest.approx(round(((1 - 1 / 3) + 0.0) / 2, 4))
    assert report.diversity_questions == 2
    assert report.new_document_share == pytest.approx(round((0.75 + 1.0 + 0.5) / 3, 4))
    # q1: J({a,b},{b,c}) = 1/3; q3: 1.
    assert report.document_overlap == pytest.approx(round((1 / 3 + 1.0) / 2, 4))
    # No gains passed: DIG is missing and says why, never 0.
    assert report.dig is None and report.dig_questions == 0
    assert report.dig_unavailable is not None and "not computed" in report.dig_unavailable
    # q3: best step holds r1 of {r1, r2} (r3 has grade 0): 1/2; q1: 0; q2 unjudged.
    assert report.qrels_subquery_recall_at_5 == 0.25
    assert report.qrels_recall_questions == 2
    assert report.step_cap_reached == 1  # q2; the failed q4 is left out
    assert report.evidence_shortened == 1  # q3; the failed q4 is left out
    assert report.gists_per_question == 3.0  # (2 + 4) / 2, q3 has no sketch
    assert report.gist_counts == {2: 1, 4: 1}
    assert report.subqueries_per_question == pytest.approx(round(5 / 3, 4))
    assert report.seconds_per_question == 5.0  # (2 + 4 + 9) / 3
    assert report.seconds_per_question_p50 == 4.0
    assert report.amortised_seconds_per_question == 2.0
    by_id = {row.id: row for row in report.per_question}
    assert by_id["q2"].qrels_subquery_recall_at_5 is None and by_id["q2"].diversity is None
    assert by_id["q2"].step_cap_reached and not by_id["q1"].step_cap_reached
    assert by_id["q3"].evidence_scale == 0.5 and by_id["q1"].evidence_scale == 1.0
    out = report.as_report()
    assert out["gist_counts"] == {"2": 1, "4": 1}
    assert isinstance(out["per_question"], list) and len(out["per_question"]) == 3


def test_no_qrels_and_no_results_give_nulls_not_errors() -> None:
    empty = seek_diagnostics([])
    assert empty.questions == 0 and empty.dig is None and empty.seconds_per_question is None
    assert empty.amortised_seconds_per_question is None
    assert empty.document_overlap is None and empty.document_overlap_by_iteration == []
    one = seek_diagnostics([_result("q", [("a", ["d"])], gists=1)])
    assert one.qrels_subquery_recall_at_5 is None and one.qrels_recall_questions == 0
