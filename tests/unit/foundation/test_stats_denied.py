"""Credentials that may search but not read index stats (a role with ``read`` but not
``monitor``): ``index_doc_counts`` answers None, with one warning per index, so SIRA's DF
check takes the live route (``read`` allows it) instead of failing where it used to work.

Scripted outcomes of the stats request (typed errors as the engine backends raise them), no
engine imitation: the stats answers themselves are checked against live nodes in the contract
suite (tests/integration/contract)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pytest

from sira_seek.backend import ClusterInfo
from sira_seek.esplugin.engines.base import RestBackend
from sira_seek.esplugin.engines.errors import EngineRequestError


class ScriptedRest(RestBackend):
    """Every request raises ``error``; records the paths asked for."""

    def __init__(self, error: EngineRequestError) -> None:
        super().__init__(None, ClusterInfo(engine="opensearch", version="2.19.6", url="x"))
        self.error = error
        self.paths: list[str] = []

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        ignore: tuple[int, ...] = (),
    ) -> Any:
        self.paths.append(path)
        raise self.error

    def _bulk(self, lines: list[dict[str, Any]]) -> dict[str, Any]:
        raise NotImplementedError

    def _open_pit(self, index: str, keep_alive: str) -> str:
        raise NotImplementedError

    def _close_pit(self, pit_id: str) -> None:
        raise NotImplementedError

    def _msearch(self, lines: list[dict[str, Any]], params: Mapping[str, Any] | None) -> Any:
        raise NotImplementedError


DENIED = EngineRequestError(
    "HTTP 403: security_exception: no permissions for [indices:monitor/stats]",
    status=403,
    error_type="security_exception",
)


def test_stats_denied_is_none_with_one_warning_per_index(
    caplog: pytest.LogCaptureFixture,
) -> None:
    be = ScriptedRest(DENIED)
    with caplog.at_level(logging.WARNING):
        assert be.index_doc_counts("corpus") is None
        assert be.index_doc_counts("corpus") is None
    assert be.paths == ["/corpus/_stats/docs"] * 2
    warnings = [r for r in caplog.records if "cannot read the index stats" in r.message]
    assert len(warnings) == 1 and "monitor" in warnings[0].message


@pytest.mark.parametrize("status", [401, 404, 500, None])
def test_other_failures_are_raised(status: int | None) -> None:
    error = EngineRequestError(f"HTTP {status}", status=status)
    with pytest.raises(EngineRequestError):
        ScriptedRest(error).index_doc_counts("corpus")
