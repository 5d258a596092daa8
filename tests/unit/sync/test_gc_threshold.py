"""A sync run raises the collector's first threshold for its duration, and gives the process
back exactly the thresholds it had, whatever the order in which overlapping runs end."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from sira_seek.sync.gc_threshold import RUN_THRESHOLD0, fewer_gc_passes


@pytest.fixture(autouse=True)
def _process_thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_a_run_raises_the_first_threshold_and_restores_all_three() -> None:
    with fewer_gc_passes():
        assert gc.get_threshold() == (RUN_THRESHOLD0, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_an_error_inside_still_restores() -> None:
    with pytest.raises(RuntimeError), fewer_gc_passes():
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == (700, 10, 10)


def test_overlapping_runs_restore_only_when_the_last_one_ends() -> None:
    first, second = fewer_gc_passes(), fewer_gc_passes()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first to start ends first
    assert gc.get_threshold()[0] == RUN_THRESHOLD0  # the other run is still going
    second.__exit__(None, None, None)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_of_the_process_is_never_lowered() -> None:
    gc.set_threshold(50_000, 5, 5)
    with fewer_gc_passes():
        assert gc.get_threshold() == (50_000, 5, 5)
    assert gc.get_threshold() == (50_000, 5, 5)


def test_the_sync_runner_runs_inside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from sira_seek.sync import runner

    seen: list[int] = []
    monkeypatch.setattr(
        runner.SyncRunner, "_run", lambda self: seen.append(gc.get_threshold()[0]) or "report"
    )
    assert runner.SyncRunner.run(object.__new__(runner.SyncRunner)) == "report"
    assert seen == [RUN_THRESHOLD0]
    assert gc.get_threshold() == (700, 10, 10)
