"""The fault and bad-input suite: every scenario records what it checked and what it lost;
the session ends with one table (scenario, runs, documents checked, lost, duplicated,
corrupted, wall time). Run it alone with `python -m pytest tests/faults`."""

from __future__ import annotations

import pytest
from fault_kit import LEDGER


@pytest.fixture
def fault_ledger():  # type: ignore[no-untyped-def]
    return LEDGER


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if not LEDGER.rows:
        return
    tr = terminalreporter
    tr.section("fault and bad-input suite")
    tr.write_line(
        f"{'scenario':60s} {'runs':>5s} {'checked':>8s} {'lost':>5s} {'dup':>5s} "
        f"{'corrupt':>8s} {'wall s':>7s}"
    )
    for row in LEDGER.rows:
        tr.write_line(
            f"{row.scenario:60s} {row.runs:5d} {row.checked:8d} {row.lost:5d} "
            f"{row.duplicated:5d} {row.corrupted:8d} {row.wall_s:7.1f}"
        )
