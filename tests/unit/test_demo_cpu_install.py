"""The demo's wait for a background CPU-model install (`make demo`), on real log files."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from sira_seek.cli.cpu_install import wait_for_cpu_install


def test_no_log_means_no_install_to_wait_for(tmp_path: Path) -> None:
    assert wait_for_cpu_install(tmp_path / "missing.log", poll_s=0.01) is None


def test_the_exit_line_ends_the_wait_with_its_code_and_the_tail(tmp_path: Path) -> None:
    log = tmp_path / "install.log"
    log.write_text("".join(f"line {i}\n" for i in range(30)) + "install_cpu_llm: exit 2\n")
    outcome = wait_for_cpu_install(log, poll_s=0.01)
    assert outcome is not None and not outcome.ok and outcome.exit_code == 2
    assert outcome.tail == [f"line {i}" for i in range(15, 30)]


def test_waits_while_the_install_runs_and_reports_its_last_line(tmp_path: Path) -> None:
    log = tmp_path / "install.log"
    log.write_text("install_cpu_llm: compiling llama-cpp-python once\n")
    statuses: list[str] = []
    polled_thrice = threading.Event()

    def heard(status: str) -> None:
        statuses.append(status)
        if len(statuses) == 3:
            polled_thrice.set()

    def finish() -> None:
        # The install ends only after the wait has polled three times, whatever the clock.
        polled_thrice.wait(60)
        with log.open("a") as handle:
            handle.write("installed\ninstall_cpu_llm: exit 0\n")

    writer = threading.Thread(target=finish)
    writer.start()
    outcome = wait_for_cpu_install(log, on_status=heard, poll_s=0.02, timeout_s=60)
    writer.join()
    assert outcome is not None and outcome.ok  # it waited for the exit line the writer added
    assert outcome.tail == ["install_cpu_llm: compiling llama-cpp-python once", "installed"]
    assert len(statuses) >= 3  # redrawn at every poll while waiting
    assert all(s.endswith("compiling llama-cpp-python once") for s in statuses)


def test_a_log_that_never_ends_times_out(tmp_path: Path) -> None:
    log = tmp_path / "install.log"
    log.write_text("install_cpu_llm: exit soon\n")  # not the exit line: no number
    with pytest.raises(TimeoutError):
        wait_for_cpu_install(log, poll_s=0.01, timeout_s=0.05)
