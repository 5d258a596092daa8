"""Paired significance in reports, on crafted per-query scores whose answer is known."""

from __future__ import annotations

import math
import re

import pytest

from sira_seek.metrics.run_record import RunRecord, build_run_record, measure_key
from sira_seek.reporting.html_report import pick_baseline, render_report
from sira_seek.reporting.significance import compare_with_baseline, paired_t_test

BASE = {"q1": 0.5, "q2": 0.5, "q3": 0.5, "q4": 0.5, "q5": 0.5}


def _record(name: str, method: str, scores: dict[str, float]) -> RunRecord:
    return RunRecord(
        name=name,
        method=method,
        metrics={"ndcg@10": sum(scores.values()) / len(scores)},
        per_query={q: {"ndcg@10": v} for q, v in scores.items()},
    )


def test_identical_runs_are_not_significant() -> None:
    n, delta, t, p = paired_t_test(BASE, dict(BASE))
    assert (n, delta, t, p) == (5, 0.0, 0.0, 1.0)


def test_better_on_every_query_matches_the_textbook_t_test() -> None:
    run = {"q1": 0.6, "q2": 0.7, "q3": 0.8, "q4": 0.9, "q5": 1.0}
    n, delta, t, p = paired_t_test(run, BASE)
    # differences .1 .. .5: mean .3, sd sqrt(.025), t = .3 / (sd / sqrt 5) = 3 * sqrt 2, df 4;
    # a t table gives the two-sided p for t = 4.243 at df 4 as 0.0132.
    assert n == 5 and delta == pytest.approx(0.3)
    assert t == pytest.approx(3 * math.sqrt(2), rel=1e-9)
    assert p == pytest.approx(0.0132, abs=1e-4)


def test_differences_that_cancel_out_are_not_significant() -> None:
    run = {"q1": 0.6, "q2": 0.4, "q3": 0.7, "q4": 0.3, "q5": 0.5}
    _, delta, t, p = paired_t_test(run, BASE)
    assert delta == pytest.approx(0.0, abs=1e-12)
    assert p is not None and p > 0.99 and t is not None and abs(t) < 1e-9


def test_only_shared_queries_are_paired() -> None:
    run = {"q1": 0.6, "q2": 0.7, "q3": 0.8, "extra": 0.0}
    n, delta, _, _ = paired_t_test(run, BASE)
    assert n == 3 and delta == pytest.approx(0.2)
    assert paired_t_test({"q1": 1.0}, BASE)[3] is None  # one pair: nothing to test


def test_compare_with_baseline_flags_better_and_worse_runs() -> None:
    base = _record("bm25", "bm25", BASE)
    better = _record("better", "sira", {"q1": 0.6, "q2": 0.7, "q3": 0.8, "q4": 0.9, "q5": 1.0})
    worse = _record("worse", "sira", {"q1": 0.4, "q2": 0.3, "q3": 0.2, "q4": 0.1, "q5": 0.0})
    same = _record("same", "sira", dict(BASE))
    tests = {t.run: t for t in compare_with_baseline([base, better, worse, same], base)}
    assert set(tests) == {"better", "worse", "same"}  # the baseline is not tested against itself
    assert tests["better"].significant and tests["better"].mean_delta > 0
    assert tests["worse"].significant and tests["worse"].mean_delta < 0
    assert not tests["same"].significant and tests["same"].p_value == 1.0


def test_report_shows_significance_against_the_bm25_run() -> None:
    sira = _record("sira", "sira", {"q1": 0.6, "q2": 0.7, "q3": 0.8, "q4": 0.9, "q5": 1.0})
    same = _record("sira-same", "sira", dict(BASE))
    bm25 = _record("bm25", "bm25", BASE)
    runs = [sira, bm25, same]
    assert pick_baseline(runs, None) is bm25  # BM25 is the baseline even when not first
    html = render_report(runs)
    assert "<h2>Paired significance vs bm25</h2>" in html
    row = re.search(r"<tr><td>sira</td><td class=\"sig\"[^>]*>([^<]*)</td></tr>", html)
    assert row is not None and row.group(1) == "+0.3000 (p 0.0132) *"
    same_row = re.search(r"<tr><td>sira-same</td><td class=\"\"[^>]*>([^<]*)</td></tr>", html)
    assert same_row is not None and same_row.group(1) == "+0.0000 (p 1.0000)"
    with pytest.raises(ValueError, match="no run named 'nope'"):
        render_report(runs, baseline="nope")


def test_single_run_report_has_no_significance_section() -> None:
    run = build_run_record("bm25", "bm25", {"q1": {"d1": 1.0}}, {"q1": {"d1": 1}})
    assert "Paired significance" not in render_report([run])


def test_default_keys_pair_with_measures_flag_keys() -> None:
    """A run saved with ``--measures nDCG@10`` pairs with a default run's ``ndcg@10``."""
    base = _record("bm25", "bm25", BASE)
    other = RunRecord(
        name="sira",
        method="sira",
        per_query={
            q: {"nDCG@10": v + 0.1 * i, "P@5": 0.2} for i, (q, v) in enumerate(BASE.items())
        },
    )
    (test,) = compare_with_baseline([base, other], base)
    assert test.measure == "ndcg@10" and test.queries == 5
    assert test.mean_delta == pytest.approx(0.2)
    html = render_report([base, other])
    # One column, and the win/loss count reads the same per-query values (4 wins, 1 tie).
    row = re.search(r"<tr><td>sira</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td></tr>", html)
    assert row is not None and row.groups() == ("4", "0", "1")


def test_measure_keys() -> None:
    assert [measure_key(k) for k in ("ndcg@10", "nDCG@10", "R@100", "P@5", "P_5", "custom")] == [
        "ndcg@10",
        "ndcg@10",
        "recall@100",
        "P@5",
        "P_5",  # not an ir-measures name: kept
        "custom",
    ]


def test_tiny_p_values_keep_the_markup_intact() -> None:
    from html.parser import HTMLParser

    base = _record("bm25", "bm25", {f"q{i}": 0.1 for i in range(40)})
    better = _record("sira", "sira", {f"q{i}": 0.5 + 0.01 * (i % 7) for i in range(40)})
    html = render_report([base, better])
    cell = re.search(r'data-p="([^"]+)">([^<]*)</td>', html)
    assert cell is not None and float(cell.group(1)) < 1e-10
    assert re.fullmatch(r"\+0\.\d{4} \(p \d\.\de-\d+\) \*", cell.group(2))

    class Texts(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.cells: list[str] = []

        def handle_data(self, data: str) -> None:
            self.cells.append(data)

    parser = Texts()
    parser.feed(html)
    assert cell.group(2) in parser.cells  # the whole cell is text, no stray "<" opened a tag
