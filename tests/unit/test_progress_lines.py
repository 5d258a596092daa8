"""The one progress convention (cli/progress.py): bars on a terminal, a few plain lines
otherwise. A log file or a pipe gets a start line, at most one line per tenth of the total or
per 30 seconds, and an end line, whatever the number of updates or statuses; a terminal
gets tqdm's redraws. The clock is a plain counter the test moves (no sleeping, no timing)."""

from __future__ import annotations

import io

from sira_seek.cli.progress import (
    PLAIN_EVERY_S,
    PlainProgress,
    StatusLine,
    WorkflowProgress,
    progress_bar,
)
from sira_seek.workflows.progress import note_skipped


class Clock:
    """Seconds the test sets by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_counted_bar_writes_a_line_per_tenth_not_per_update() -> None:
    out, clock = io.StringIO(), Clock()
    with PlainProgress(desc="ingest idx", total=1000, unit="doc", stream=out, clock=clock) as bar:
        for _ in range(1000):
            bar.update(1)
            clock.now += 0.001
    lines = out.getvalue().splitlines()
    assert len(lines) == 12, lines  # started, 10%, ..., 100%, done
    assert lines[0] == "ingest idx: started of 1000 doc"
    assert lines[1].startswith("ingest idx: 100/1000 doc (10%) [")
    assert lines[10].startswith("ingest idx: 1000/1000 doc (100%) [")
    assert lines[11].startswith("ingest idx: done, 1000 doc [")


def test_big_steps_write_one_line_each_and_a_slow_tenth_one_per_30_seconds() -> None:
    out, clock = io.StringIO(), Clock()
    bar = PlainProgress(desc="copy", total=100, unit="doc", stream=out, clock=clock)
    bar.update(55)  # past five tenths at once: one line
    for _ in range(20):  # then 100 s without reaching the next tenth
        clock.now += 5
        bar.update(0)
    bar.close()
    bar.close()  # closing twice writes the end once
    lines = out.getvalue().splitlines()
    # started, 55%, then every 30 s (30, 60, 90 after the last line), done.
    assert len(lines) == 2 + int(100 // PLAIN_EVERY_S) + 1, lines
    assert "55/100 doc (55%)" in lines[1] and lines[-1].startswith("copy: done, 55 doc [")


def test_an_unknown_total_writes_by_time_only() -> None:
    out, clock = io.StringIO(), Clock()
    with PlainProgress(desc="eval", total=None, unit="query", stream=out, clock=clock) as bar:
        for _ in range(600):
            clock.now += 0.1  # 60 s of quick updates
            bar.update(1)
    lines = out.getvalue().splitlines()
    assert len(lines) == 4, lines  # started, at 30 s, at 60 s, done
    assert lines[1].startswith("eval: 300 query [")


def test_a_status_writes_its_phases_and_the_end_not_each_redraw() -> None:
    out, clock = io.StringIO(), Clock()
    with StatusLine(enabled=True, stream=out, clock=clock) as status:
        status("downloading the distribution")
        for i in range(70):  # 70 s of "waited Ns", one a second
            status(f"starting elasticsearch 9.2.4 node, waited {i}s")
            clock.now += 1
    lines = out.getvalue().splitlines()
    assert lines[:2] == [
        "downloading the distribution",
        "starting elasticsearch 9.2.4 node, waited 0s",
    ]
    assert lines[2:4] == [
        "starting elasticsearch 9.2.4 node, waited 30s",
        "starting elasticsearch 9.2.4 node, waited 60s",
    ]
    assert lines[4] == "starting elasticsearch 9.2.4 node, waited 69s [01:10]"
    assert len(lines) == 5


def test_a_status_with_no_message_writes_nothing() -> None:
    out = io.StringIO()
    with StatusLine(enabled=True, stream=out):
        pass
    assert out.getvalue() == ""


def test_disabled_displays_write_nothing_anywhere() -> None:
    for stream in (io.StringIO(), Terminal()):
        with progress_bar(desc="x", total=10, unit="doc", enabled=False, stream=stream) as bar:
            bar.update(10)
        with StatusLine(enabled=False, stream=stream) as status:
            status("starting")
        assert stream.getvalue() == ""


def test_a_terminal_gets_a_bar_drawn_in_place() -> None:
    term = Terminal()
    with progress_bar(desc="ingest idx", total=10, unit="doc", enabled=True, stream=term) as bar:
        assert not isinstance(bar, PlainProgress)
        bar.update(10)
    assert "\r" in term.getvalue() and "10/10" in term.getvalue()
    assert isinstance(
        progress_bar(desc="x", total=1, unit="doc", enabled=True, stream=io.StringIO()),
        PlainProgress,
    )


def test_a_workflow_progress_piped_writes_a_handful_of_lines_for_1000_advances() -> None:
    """The one renderer of a workflow's ``Progress``, not on a terminal: 1000 advances give
    the start, a line per tenth and the end; a failure adds its own line and is counted."""
    out = io.StringIO()
    with WorkflowProgress(desc="eval qa", unit="question", enabled=True, stream=out) as shown:
        shown.note("skipped line 3: not JSON")
        shown.start(1000)
        for i in range(1000):
            shown.advance(failure="[q7] FAILED: LLM down" if i == 7 else None)
    lines = out.getvalue().splitlines()
    assert len(lines) <= 14, lines
    assert lines[:3] == [
        "skipped line 3: not JSON",
        "eval qa: started of 1000 question",
        "[q7] FAILED: LLM down",
    ]
    assert lines[3].startswith("eval qa: 100/1000 question (10%) [") and "failed=1" in lines[3]
    assert lines[-1].startswith("eval qa: done, 1000 question [") and "failed=1" in lines[-1]
    assert len(lines) == 3 + 10 + 1


def test_a_resumed_bar_rates_this_runs_items_only() -> None:
    out, clock = io.StringIO(), Clock()
    with PlainProgress(
        desc="sync", total=10, unit="doc", stream=out, clock=clock, initial=4
    ) as bar:
        clock.now = 2.0
        bar.update(6)
    # this run's 6 documents in 2 s, not the 10 with the 4 a killed run did
    assert out.getvalue().splitlines()[-1] == "sync: done, 10 doc [00:02, 3.0 doc/s]"


def test_a_resumed_start_and_running_figures() -> None:
    out = io.StringIO()
    with WorkflowProgress(desc="sira-sync idx 0/1", unit="doc", enabled=True, stream=out) as shown:
        shown.start(10, resumed=4)
        shown.advance(6, figures={"enriched": 5, "failed": 1, "tok_s": "12"})
    lines = out.getvalue().splitlines()
    assert lines[0] == "sira-sync idx 0/1: started of 10 doc, 4 done before"
    assert lines[1].startswith("sira-sync idx 0/1: 10/10 doc (100%) [")
    assert lines[1].endswith("resumed=4, enriched=5, failed=1, tok_s=12"), lines
    assert lines[-1].startswith("sira-sync idx 0/1: done, 10 doc [")


def test_a_provisional_total_is_corrected_in_the_same_display() -> None:
    """The demo sizes its SEEK bar to --seek-questions; the workflow's ``start`` resizes it
    without a second start line."""
    out = io.StringIO()
    with WorkflowProgress(desc="SEEK", unit="question", enabled=True, total=5, stream=out) as bar:
        bar.start(3)
        for _ in range(3):
            bar.advance()
    lines = out.getvalue().splitlines()
    assert [line for line in lines if "started" in line] == ["SEEK: started of 5 question"]
    assert lines[-2].startswith("SEEK: 3/3 question (100%)") and "done, 3" in lines[-1]


def test_off_the_display_keeps_the_notes_only() -> None:
    """--no-progress / --json: no bar, no failure lines (the summary reports them); the
    skipped input lines are about the input and still show."""
    out = io.StringIO()
    with WorkflowProgress(desc="eval", unit="query", enabled=False, stream=out) as shown:
        shown.note("skipped line 9")
        shown.start(50)
        for _ in range(50):
            shown.advance(failure="[q1] FAILED: x")
    assert out.getvalue() == "skipped line 9\n"


def test_note_skipped_shows_fifty_then_counts() -> None:
    out = io.StringIO()
    shown = WorkflowProgress(desc="eval", unit="query", enabled=False, stream=out)
    note_skipped(shown, [f"line {i}" for i in range(60)])
    note_skipped(shown, [])
    note_skipped(None, ["line 1"])  # no Progress: nothing to tell, nothing fails
    lines = out.getvalue().splitlines()
    assert len(lines) == 51 and lines[0] == "skipped line 0" and lines[49] == "skipped line 49"
    assert lines[50] == "... and 10 more bad lines skipped"


def test_every_progress_display_goes_through_the_one_module() -> None:
    """tqdm is imported by cli/progress.py alone: a command drawing its own bar would redraw
    into log files again."""
    from source_imports import ROOT, imports

    drawing = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in ("cli", "sira_seek", "esplugin")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.relative_to(ROOT).as_posix() != "cli/progress.py"
        for line, module, _names in imports(path)
        if module == "tqdm" or module.startswith("tqdm.")
    ]
    assert drawing == []
