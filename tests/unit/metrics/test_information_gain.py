"""The DIG arithmetic (`sira_seek.metrics.information_gain`): token log-probabilities in,
confidences and gains out, each expected number worked out by hand. Scoring a SEEK run is
tested in ``tests/unit/seek/test_seek_information_gain.py``."""

from __future__ import annotations

import math

import pytest

from sira_seek.metrics.information_gain import AnswerGain, InformationGains, answer_confidence
from sira_seek.metrics.seek_diagnostics import QuestionTrace, seek_diagnostics


def test_confidence_is_the_geometric_mean_of_smoothed_probabilities() -> None:
    assert answer_confidence([math.log(0.5)], window=1) == pytest.approx(0.5)
    assert answer_confidence([math.log(0.5), math.log(0.125)], window=1) == pytest.approx(0.25)
    # One very unlikely middle token: window 3 averages it with its neighbours.
    tiny = math.exp(-20)
    smoothed = [(1 + tiny) / 2, (2 + tiny) / 3, (1 + tiny) / 2]
    expected = math.prod(smoothed) ** (1 / 3)
    assert answer_confidence([0.0, -20.0, 0.0], window=3) == pytest.approx(expected)
    assert answer_confidence([0.0, -20.0, 0.0], window=1) == pytest.approx(math.exp(-20 / 3))
    # Length-normalised: the same per-token probability gives the same confidence at any length.
    assert answer_confidence([math.log(0.8)] * 7) == pytest.approx(0.8)
    with pytest.raises(ValueError):
        answer_confidence([])


def test_dig_is_with_minus_without_and_the_run_mean_skips_missing_gains() -> None:
    up = AnswerGain(id="up", with_knowledge=0.75, without_knowledge=0.25)
    down = AnswerGain(id="down", with_knowledge=0.25, without_knowledge=0.5)
    assert up.dig == 0.5 and down.dig == -0.25
    gains = InformationGains(by_id={"up": up, "down": down, "closed": None})
    traces = [QuestionTrace(id=q) for q in ("up", "down", "closed")]
    report = seek_diagnostics(traces, gains=gains)
    assert report.dig == pytest.approx(0.125) and report.dig_questions == 2
    assert report.dig_unavailable is None
    rows = {r.id: r for r in report.per_question}
    assert rows["down"].answer_confidence_without_knowledge == 0.5 and rows["closed"].dig is None
