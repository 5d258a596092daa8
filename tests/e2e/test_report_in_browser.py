"""The HTML report opens in a real headless Chromium without console errors."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sira_seek.metrics.run_record import build_run_record
from sira_seek.reporting.browser import FLAGS, BrowserUnavailableError, find_chromium, screenshot
from sira_seek.reporting.html_report import render_report

pytestmark = pytest.mark.e2e


def test_report_renders_in_chromium(tmp_path: Path) -> None:
    try:
        chromium = find_chromium()
    except BrowserUnavailableError as exc:
        pytest.fail(f"{exc} (make test installs it: scripts/bootstrap_system.sh --browser)")
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    runs = [
        build_run_record(
            "bm25", "bm25", {"q1": {"a": 1.0}, "q2": {"c": 1.0}}, qrels, latency_ms=[5.0, 7.0]
        ),
        build_run_record(
            "sira",
            "sira",
            {"q1": {"a": 1.0}, "q2": {"b": 1.0}},
            qrels,
            latency_ms=[6.0, 9.0],
            llm_tokens=[50, 60],
        ),
    ]
    page = tmp_path / "report.html"
    page.write_text(render_report(runs, title="browser check"))
    shot = tmp_path / "report.png"
    profile = tmp_path / "profile"
    res = subprocess.run(
        [
            chromium,
            *FLAGS,
            f"--user-data-dir={profile}",
            "--window-size=1320,1600",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-1500:]
    assert shot.exists() and shot.stat().st_size > 20_000  # a real picture, not a blank page
    console = [line for line in res.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console
    dom = subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    assert "Per-query wins and losses" in dom and dom.count("<svg") == 5


def test_console_errors_are_caught(tmp_path: Path) -> None:
    """The check above can fail: a page with a broken script is reported."""
    page = tmp_path / "broken.html"
    page.write_text("<html><body>x<script>notDefinedAnywhere()</script></body></html>")
    check = screenshot(page, tmp_path / "broken.png", height=400)
    assert any("notDefinedAnywhere" in line for line in check.console_errors)
