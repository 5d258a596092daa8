"""The collector settings of bulk work and of a server process.

A sync run raises the collector's first threshold for its duration and gives the process back
exactly the thresholds it had, whatever the order in which overlapping runs end; a server
process freezes its startup heap once the app is up, before its first request."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from sira_seek.gc_settings import RUN_THRESHOLD0, fewer_gc_passes, settle_server_heap


@pytest.fixture(autouse=True)
def _process_thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)
    gc.unfreeze()


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


def test_a_server_freezes_what_exists_and_raises_the_threshold_for_good() -> None:
    kept = [object()]  # noqa: F841 (alive at the freeze)
    assert gc.get_freeze_count() == 0
    settle_server_heap()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (RUN_THRESHOLD0, 10, 10)


def test_the_server_settles_its_heap_once_started_before_the_first_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fastapi.testclient import TestClient

    from sira_seek.backend import EngineError
    from sira_seek.service import worker
    from sira_seek.service.app import ServiceConfig, create_app

    events: list[str] = []

    def unreachable() -> object:
        events.append("connect")
        raise EngineError("connection refused")

    monkeypatch.setattr(worker, "settle_server_heap", lambda: events.append("settled"))
    app = create_app(unreachable, ServiceConfig(), on_ready=worker.ready_to_serve)
    with TestClient(app) as client:
        assert events == ["connect", "settled"]  # a cluster still down does not stop it
        client.get("/openapi.json")
    assert events == ["connect", "settled"]
