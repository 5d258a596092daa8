"""The latency histogram's log axis: milliseconds and a CPU model's seconds stay apart."""

from __future__ import annotations

import math
import re

from sira_seek.metrics.run_record import build_run_record
from sira_seek.reporting import svg_charts
from sira_seek.reporting.html_report import render_report

X_TICK = re.compile(
    rf'<text x="([\d.]+)" y="{svg_charts.H - svg_charts.PAD + 16}" font-size="10" '
    r'text-anchor="middle">([^<]+)</text>'
)
BASELINE = svg_charts.H - svg_charts.PAD


def _filled_x(svg: str, name: str) -> list[float]:
    """Mid x of every bin of ``name``'s step line that stands above the baseline."""
    match = re.search(rf'<polyline points="([^"]+)"[^>]*><title>{name}</title>', svg)
    assert match is not None, f"no line for {name}"
    pts = [tuple(map(float, p.split(","))) for p in match.group(1).split()]
    out = []
    for (x0, y0), (x1, _y1) in zip(pts[::2], pts[1::2], strict=True):
        if y0 < BASELINE - 0.5:
            out.append((x0 + x1) / 2)
    return out


def test_ms_and_seconds_land_far_apart_with_power_of_ten_ticks() -> None:
    svg = svg_charts.histogram(
        {"bm25": [5.0, 5.2, 4.8], "cpu": [5000.0, 5100.0]}, "Per-query latency", "ms"
    )
    (fast,) = set(_filled_x(svg, "bm25"))
    (slow,) = set(_filled_x(svg, "cpu"))
    width = svg_charts.W - svg_charts.PAD - 20
    assert slow - fast > width / 3, (fast, slow)
    ticks = [(float(x), label) for x, label in X_TICK.findall(svg)]
    assert len(ticks) >= 4
    for _x, label in ticks:
        exponent = math.log10(float(label))
        assert exponent == round(exponent), f"tick {label!r} is not a power of ten"
    # Ticks sit in order, one decade apart, and the samples sit between the right ones.
    xs = dict((label, x) for x, label in ticks)
    assert xs["1"] < fast < xs["10"] and xs["1000"] < slow < xs["10000"]
    assert "log scale" in svg


def test_a_narrow_spread_keeps_the_linear_axis() -> None:
    svg = svg_charts.histogram({"bm25": [10.0, 12.0, 30.0]}, "Per-query latency", "ms")
    labels = [label for _x, label in X_TICK.findall(svg)]
    assert "log scale" not in svg
    assert labels[0] == "10" and labels[-1] == "30"  # min to max, linear


def test_forced_log_axis_leaves_out_zero_and_says_so() -> None:
    svg = svg_charts.histogram({"t": [0.0, 3.0, 300.0]}, "tokens", "tokens", log_x=True)
    assert "1 samples of 0 or less left out" in svg
    assert len(_filled_x(svg, "t")) == 2


def test_report_latency_chart_uses_log_axis_for_cpu_model_runs() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    ranking = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
    runs = [
        build_run_record("bm25", "bm25", ranking, qrels, latency_ms=[4.0, 6.0]),
        build_run_record("sira (CPU)", "sira", ranking, qrels, latency_ms=[9000.0, 14000.0]),
    ]
    html = render_report(runs)
    latency = html[html.index("<h2>Latency</h2>") : html.index("<h2>LLM tokens")]
    assert "ms (log scale)" in latency
    assert {label for _x, label in X_TICK.findall(latency)} >= {"1", "10", "100", "1000"}
