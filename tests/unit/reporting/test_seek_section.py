"""The SEEK analyses section of the HTML report: the figures of `SeekDiagnostics`, in place."""

from __future__ import annotations

import pytest

from sira_seek.cli.eval_diagnostics import format_diagnostics
from sira_seek.metrics.information_gain import AnswerGain, DigParameters, InformationGains
from sira_seek.metrics.run_record import RunRecord
from sira_seek.metrics.seek_diagnostics import QuestionTrace, SeekDiagnostics, seek_diagnostics
from sira_seek.reporting.html_report import render_report, render_seek_report
from sira_seek.seek.results import AnswerTimings, SeekResult, SubQueryStep
from sira_seek.seek.sketch import SteeringSketch


def _diagnostics() -> SeekDiagnostics:
    result = SeekResult(
        id="q1",
        question="q?",
        method="seek",
        sketch=SteeringSketch.from_headings("T", ["one", "two", "three"]),
        steps=[
            SubQueryStep(gist_index=0, sub_query="alpha beta", retrieved_ids=["a", "b"]),
            SubQueryStep(gist_index=1, sub_query="beta gamma", retrieved_ids=["b", "c"]),
        ],
        timings=AnswerTimings(total_s=2.5),
    )
    return seek_diagnostics([result.trace()], {"q1": {"c": 1}}, passages={"a": "x", "b": "y"})


def test_seek_report_shows_each_figure_of_its_run() -> None:
    diag = _diagnostics()
    page = render_seek_report({"seek <sequential>": diag})
    assert "<h2>SEEK analyses</h2>" in page
    assert "seek &lt;sequential&gt;" in page  # run names are escaped
    assert '<td data-key="new_document_share">0.7500</td>' in page  # {a,b,c} / 4 retrieved
    assert '<td data-key="dig">–</td>' in page  # no gains were scored
    assert "DIG unavailable: not computed" in page
    assert '<td data-key="subquery_diversity">0.6667</td>' in page  # 1 - 1/3
    assert '<td data-key="qrels_subquery_recall_at_5">1.0000</td>' in page
    assert '<td data-key="max_subquery_recall_at_5">–</td>' in page  # no gold answer
    assert '<td data-key="document_overlap">0.3333</td>' in page  # {a,b} vs {b,c}
    assert '<td data-key="subquery_similarity_measure">token_jaccard</td>' in page
    assert "document overlap across iterations (Fig. 6b)" in page
    assert '<td data-key="with_cumulative">0.3333</td>' in page
    assert '<td data-key="questions">1</td>' in page
    assert "3 gists: 1" in page
    assert "<script" not in page


def test_retrieval_report_gains_the_section_only_when_given() -> None:
    run = RunRecord(name="bm25", method="bm25", metrics={"ndcg@10": 0.5})
    assert "SEEK analyses" not in render_report([run])
    with_seek = render_report([run], seek={"seek": _diagnostics()})
    assert with_seek.count("<h2>SEEK analyses</h2>") == 1
    with pytest.raises(ValueError):
        render_seek_report({})


def test_dig_parameters_are_named_in_the_html_and_text_reports() -> None:
    parameters = DigParameters(W=5, k=2, alpha=0.5, omega=(1.0, 0.5), edges="clip")
    gain = AnswerGain(id="q1", gold="g", with_knowledge=0.5, without_knowledge=0.25)
    gains = InformationGains(by_id={"q1": gain}, parameters=parameters)
    diag = seek_diagnostics([QuestionTrace(id="q1")], gains=gains)
    page = render_seek_report({"seek": diag})
    assert '<td data-key="dig">0.2500</td>' in page
    named = "W=5, k=2, alpha=0.5, omega=(1, 0.5), edges=clip"  # the edge reading too
    assert f'<td data-key="dig_parameters">{named}</td>' in page
    assert "Eq. 13-15" in page
    text = format_diagnostics(diag)
    assert "DIG                        0.2500 (1 questions)" in text
    assert f"DIG parameters (Eq. 14-15) {named}" in text
    # Without DIG computed, no parameters are claimed.
    assert '<td data-key="dig_parameters">–</td>' in render_seek_report({"s": _diagnostics()})
    assert "DIG parameters (Eq. 14-15) n/a" in format_diagnostics(_diagnostics())
