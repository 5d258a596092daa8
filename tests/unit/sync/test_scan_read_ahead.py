"""The scan's read-ahead: the next page is fetched while the run works on the current one, in
order, with a fetch's error raised where its page would have been and the scan closed once."""

from __future__ import annotations

import threading
from collections.abc import Generator

import pytest

from sira_seek.backend import ScanContextLostError
from sira_seek.sync.resumable_scan import read_ahead

WAIT_S = 10.0  # only a deadlock waits this long: every event below is set at once otherwise


class Pages:
    """A scan as a generator: records each fetch's thread and whether it was closed."""

    def __init__(self, n: int, fail_at: int | None = None) -> None:
        self.n = n
        self.fail_at = fail_at
        self.fetched: list[int] = []
        self.threads: set[str] = set()
        self.closed_on: list[str] = []
        self.fetching = {i: threading.Event() for i in range(n + 1)}

    def __iter__(self) -> Generator[int, None, None]:
        try:
            for i in range(self.n):
                self.threads.add(threading.current_thread().name)
                self.fetching[i].set()
                if i == self.fail_at:
                    raise ScanContextLostError("the point in time expired")
                self.fetched.append(i)
                yield i
        finally:
            self.closed_on.append(threading.current_thread().name)


def test_the_next_page_is_fetched_while_the_caller_holds_the_current_one() -> None:
    pages = Pages(3)
    got = []
    for page in read_ahead(iter(pages)):
        got.append(page)
        if page < 2:
            # Without read-ahead page+1 is fetched only when this loop asks for it: a deadlock.
            assert pages.fetching[page + 1].wait(WAIT_S), f"page {page + 1} was not read ahead"
    assert got == [0, 1, 2]
    assert pages.threads == {"sira-sync-scan_0"}
    assert pages.closed_on == ["sira-sync-scan_0"]  # exhausted by the fetch that found the end


def test_a_fetch_error_comes_after_every_page_before_it() -> None:
    pages = Pages(5, fail_at=2)
    got = []
    with pytest.raises(ScanContextLostError, match="expired"):
        for page in read_ahead(iter(pages)):
            got.append(page)
    assert got == [0, 1]
    assert len(pages.closed_on) == 1


def test_leaving_early_waits_for_the_fetch_in_flight_and_closes_the_scan_once() -> None:
    release = threading.Event()
    closed: list[str] = []

    def slow() -> Generator[int, None, None]:
        try:
            yield 0
            assert release.wait(WAIT_S)
            yield 1
            yield 2
        finally:
            closed.append(threading.current_thread().name)

    ahead = read_ahead(slow())
    assert next(ahead) == 0
    # The fetch of page 1 is now blocked; closing must wait for it (a running generator
    # cannot be closed) and then close the scan on this thread, where its point in time is.
    timer = threading.Timer(0.05, release.set)
    timer.start()
    ahead.close()
    timer.join()
    assert closed == [threading.current_thread().name]
