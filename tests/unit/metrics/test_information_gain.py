"""The DIG arithmetic (`sira_seek.metrics.information_gain`): the SEEK paper's Eq. 13-15, token
log-probabilities in, confidences and gains out. Every expected number is written out by hand
from the equations (literal probabilities, windows and exponents), not with the module's
helpers. Scoring a SEEK run is tested in ``tests/unit/seek/test_seek_information_gain.py``."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from sira_seek.metrics.information_gain import (
    AnswerGain,
    DigParameters,
    InformationGains,
    dig_confidence,
    smoothed_geometric_confidence,
    smoothed_probabilities,
)
from sira_seek.metrics.seek_diagnostics import QuestionTrace, seek_diagnostics

# A 5-token answer: p(t_1) .. p(t_5).
FIVE = [math.log(0.9), math.log(0.6), math.log(0.8), math.log(0.5), math.log(0.7)]


def test_eq15_by_hand_for_a_five_token_answer_with_the_defaults() -> None:
    # Eq. 14, W = 3 (one neighbour each side, divided by 3 even at the ends):
    #   p_s = (0.9+0.6)/3, (0.9+0.6+0.8)/3, (0.6+0.8+0.5)/3, (0.8+0.5+0.7)/3, (0.5+0.7)/3
    #       = 0.5,         2.3/3,           1.9/3,           2.0/3,           0.4
    # Eq. 15, k = 3, alpha = 0.6, omega = 0.8 each: the first three to 0.8 * 0.6 = 0.48, the
    # last two to 1 - 0.6 = 0.4.
    expected = 0.5**0.48 * (2.3 / 3) ** 0.48 * (1.9 / 3) ** 0.48 * (2.0 / 3) ** 0.4 * 0.4**0.4
    assert dig_confidence(FIVE) == pytest.approx(expected, rel=1e-12)
    assert dig_confidence(FIVE, DigParameters()) == pytest.approx(expected, rel=1e-12)


def test_eq15_by_hand_for_a_five_token_answer_with_other_parameters() -> None:
    # Eq. 14, W = 5 (two neighbours each side, divided by 5):
    #   p_s = (0.9+0.6+0.8)/5, (0.9+0.6+0.8+0.5)/5, (0.9+0.6+0.8+0.5+0.7)/5,
    #         (0.6+0.8+0.5+0.7)/5, (0.8+0.5+0.7)/5
    #       = 0.46, 0.56, 0.7, 0.52, 0.4
    # Eq. 15, k = 2, alpha = 0.75, omega = (1.0, 0.5): exponents 0.75, 0.375, then 0.25 each.
    parameters = DigParameters(W=5, k=2, alpha=0.75, omega=(1.0, 0.5))
    expected = 0.46**0.75 * 0.56**0.375 * 0.7**0.25 * 0.52**0.25 * 0.4**0.25
    assert dig_confidence(FIVE, parameters) == pytest.approx(expected, rel=1e-12)


def test_eq14_divides_by_w_at_the_edges() -> None:
    # Every token certain (p = 1): the edges hold fewer answer tokens, and still divide by W.
    assert smoothed_probabilities([0.0, 0.0, 0.0, 0.0], 3) == pytest.approx(
        [2 / 3, 1.0, 1.0, 2 / 3]
    )
    assert smoothed_probabilities([0.0, 0.0, 0.0], 5) == pytest.approx([3 / 5, 3 / 5, 3 / 5])
    # A one-token answer: 1/W of its probability.
    assert smoothed_probabilities([math.log(0.9)], 3) == pytest.approx([0.3])
    assert smoothed_probabilities([math.log(0.9)], 5) == pytest.approx([0.18])
    # W = 1 leaves the probabilities as they are.
    assert smoothed_probabilities([math.log(0.25), math.log(0.5)], 1) == pytest.approx([0.25, 0.5])
    with pytest.raises(ValueError):
        smoothed_probabilities([], 3)
    with pytest.raises(ValueError):
        smoothed_probabilities([0.0], 4)


def test_eq14_clipped_edges_divide_by_the_positions_inside_the_answer() -> None:
    # The other reading of the edges: a certain answer is certain at every position.
    assert DigParameters().edges == "zero"  # the default: today's reading
    assert smoothed_probabilities([0.0, 0.0, 0.0, 0.0], 3, "clip") == pytest.approx([1.0] * 4)
    # p = 0.9, 0.6, 0.8 with W = 3: (0.9+0.6)/2, (0.9+0.6+0.8)/3, (0.6+0.8)/2.
    three = [math.log(0.9), math.log(0.6), math.log(0.8)]
    assert smoothed_probabilities(three, 3, "clip") == pytest.approx([0.75, 2.3 / 3, 0.7])
    assert smoothed_probabilities(three, 3, "zero") == pytest.approx([0.5, 2.3 / 3, 1.4 / 3])
    # A one-token answer: the window holds only it, so p_s = p (not p / W).
    assert smoothed_probabilities([math.log(0.9)], 5, "clip") == pytest.approx([0.9])
    clip = DigParameters(edges="clip")
    # One certain token: capped at (1/3) ** 0.48 = 0.59 under "zero", 1 under "clip".
    assert dig_confidence([0.0]) == pytest.approx((1 / 3) ** 0.48)
    assert dig_confidence([0.0], clip) == pytest.approx(1.0)
    assert dig_confidence(three, clip) == pytest.approx(0.75**0.48 * (2.3 / 3) ** 0.48 * 0.7**0.48)
    assert clip.describe().endswith("edges=clip")
    with pytest.raises(ValidationError):
        DigParameters(edges="shrink")  # type: ignore[arg-type]


def test_k_longer_than_the_answer_weights_only_the_tokens_it_has() -> None:
    # Two tokens, k = 3: both are in the first product (omega_1, omega_2), none in the second;
    # omega_3 is never used. W = 1: p_s = p.
    parameters = DigParameters(W=1, k=3, alpha=0.6, omega=(1.0, 0.5, 0.25))
    expected = 0.8 ** (1.0 * 0.6) * 0.4 ** (0.5 * 0.6)
    assert dig_confidence([math.log(0.8), math.log(0.4)], parameters) == pytest.approx(expected)
    # One token with the defaults: (0.9 / 3) ** (0.8 * 0.6).
    assert dig_confidence([math.log(0.9)]) == pytest.approx(0.3**0.48)
    # k = 0: every token gets 1 - alpha.
    plain = DigParameters(W=1, k=0, alpha=0.6, omega=())
    assert dig_confidence([math.log(0.8), math.log(0.4)], plain) == pytest.approx(
        0.8**0.4 * 0.4**0.4
    )
    with pytest.raises(ValueError):
        dig_confidence([])


def test_parameters_have_documented_defaults_and_are_validated() -> None:
    p = DigParameters()
    assert (p.W, p.k, p.alpha, p.omega) == (3, 3, 0.6, (0.8, 0.8, 0.8))
    assert p.describe() == "W=3, k=3, alpha=0.6, omega=(0.8, 0.8, 0.8), edges=zero"
    assert p.model_dump(mode="json") == {
        "W": 3,
        "k": 3,
        "alpha": 0.6,
        "omega": [0.8, 0.8, 0.8],
        "edges": "zero",
    }
    bad: list[dict[str, object]] = [
        {"W": 2},  # even: Eq. 14 would sum W + 1 positions
        {"W": 0},
        {"W": 3.0},  # not an integer
        {"k": -1, "omega": ()},
        {"k": 2},  # omega still holds 3 weights
        {"k": 2, "omega": (0.8, 0.8, 0.8)},
        {"omega": (0.8, -0.1, 0.8)},
        {"omega": (0.8, math.nan, 0.8)},
        {"omega": (0.8, math.inf, 0.8)},
        {"alpha": 1.5},
        {"alpha": -0.1},
        {"alpha": math.nan},
        {"window": 3},  # unknown field
    ]
    for values in bad:
        with pytest.raises(ValidationError):
            DigParameters.model_validate(values)
    with pytest.raises(ValidationError):
        p.W = 5  # type: ignore[misc]  # frozen


def test_the_old_confidence_is_kept_under_its_own_name() -> None:
    # Geometric mean of smoothed probabilities, each window averaged over the tokens it holds.
    assert smoothed_geometric_confidence([math.log(0.5)], window=1) == pytest.approx(0.5)
    assert smoothed_geometric_confidence(
        [math.log(0.5), math.log(0.125)], window=1
    ) == pytest.approx(0.25)
    tiny = math.exp(-20)
    smoothed = [(1 + tiny) / 2, (2 + tiny) / 3, (1 + tiny) / 2]
    expected = math.prod(smoothed) ** (1 / 3)
    assert smoothed_geometric_confidence([0.0, -20.0, 0.0], window=3) == pytest.approx(expected)
    assert smoothed_geometric_confidence([math.log(0.8)] * 7) == pytest.approx(0.8)
    with pytest.raises(ValueError):
        smoothed_geometric_confidence([])


def test_dig_is_with_minus_without_and_the_run_mean_skips_missing_gains() -> None:
    up = AnswerGain(id="up", gold="x", with_knowledge=0.75, without_knowledge=0.25)
    down = AnswerGain(id="down", gold="x", with_knowledge=0.25, without_knowledge=0.5)
    assert up.dig == 0.5 and down.dig == -0.25
    parameters = DigParameters(W=5, k=1, alpha=0.5, omega=(1.0,), edges="clip")
    gains = InformationGains(by_id={"up": up, "down": down, "closed": None}, parameters=parameters)
    traces = [QuestionTrace(id=q) for q in ("up", "down", "closed")]
    report = seek_diagnostics(traces, gains=gains)
    assert report.dig == pytest.approx(0.125) and report.dig_questions == 2
    assert report.dig_unavailable is None
    assert report.dig_parameters == parameters
    assert report.as_report()["dig_parameters"] == {
        "W": 5,
        "k": 1,
        "alpha": 0.5,
        "omega": [1.0],
        "edges": "clip",
    }
    rows = {r.id: r for r in report.per_question}
    assert rows["down"].answer_confidence_without_knowledge == 0.5 and rows["closed"].dig is None
    # Not computed: no parameters to echo either.
    assert seek_diagnostics(traces).as_report()["dig_parameters"] is None
