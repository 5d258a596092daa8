from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from sira_seek.cli.main import cli
from sira_seek.metrics.run_record import RunRecord, build_run_record
from sira_seek.reporting.html_report import render_report

QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}


def _runs() -> list[RunRecord]:
    bm25 = build_run_record(
        "bm25",
        "bm25",
        {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"x": 2.0, "d2": 1.0}, "q3": {"x": 1.0}},
        QRELS,
        latency_ms=[10.0, 12.0, 30.0],
    )
    sira = build_run_record(
        "sira",
        "sira",
        {"q1": {"d1": 2.0}, "q2": {"d2": 3.0, "x": 1.0}, "q3": {"x": 2.0, "y": 1.0}},
        QRELS,
        latency_ms=[14.0, 15.0, 40.0],
        llm_tokens=[120, 80, 95],
    )
    return [bm25, sira]


def test_run_record_has_per_query_values_and_curve() -> None:
    bm25, sira = _runs()
    assert bm25.per_query["q2"]["ndcg@10"] < sira.per_query["q2"]["ndcg@10"] == 1.0
    assert bm25.recall_curve[1] == pytest.approx(1 / 3, abs=1e-4)
    assert sira.recall_curve[1] == pytest.approx(2 / 3, abs=1e-4)
    assert sira.metrics["recall@10"] == pytest.approx(2 / 3, abs=1e-4)


def test_report_is_self_contained_and_compares_runs() -> None:
    html = render_report(_runs(), title="t")
    assert "<script" not in html  # nothing to fail in a console, nothing fetched
    assert not re.search(r'(src|href)="https?://', html)
    assert html.count("<svg") == 5  # metrics, win/loss, recall@k, latency, tokens
    row = re.search(r"<tr><td>sira</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td></tr>", html)
    assert row is not None and row.groups() == ("1", "0", "2")  # wins, losses, ties vs bm25


def test_report_cli_and_bad_run_file(tmp_path: Path) -> None:
    paths = []
    for run in _runs():
        path = tmp_path / f"{run.name}.json"
        run.save(path)
        paths.append(str(path))
    out = tmp_path / "r.html"
    ok = CliRunner().invoke(cli, ["report", *paths, "--out", str(out)])
    assert ok.exit_code == 0, ok.output
    assert out.read_text().startswith("<!DOCTYPE html>")
    bad = tmp_path / "bad.json"
    bad.write_text('{"nope": 1}')
    res = CliRunner().invoke(cli, ["report", str(bad), "--out", str(out)])
    assert res.exit_code == 2 and "not a sira-seek run file" in res.output


def test_report_json_names_the_baseline_the_html_compares_against(tmp_path: Path) -> None:
    """Without --baseline the report picks the BM25 run; --json must name that run, not
    print null while the HTML compares against bm25."""
    paths = []
    for run in reversed(_runs()):  # sira first: the pick is by method, not by order
        path = tmp_path / f"{run.name}.json"
        run.save(path)
        paths.append(str(path))
    out = tmp_path / "r.html"
    res = CliRunner().invoke(cli, ["report", *paths, "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["baseline"] == "bm25"
    named = CliRunner().invoke(cli, ["report", *paths, "--out", str(out), "--json",
                                     "--baseline", "sira"])  # fmt: skip
    assert json.loads(named.stdout)["baseline"] == "sira"
