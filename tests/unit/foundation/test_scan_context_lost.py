"""Which engine errors on a point-in-time page mean "scan again from a new point in time".

The messages are the engines' own (as the backend's error text carries them); a rolling restart
on OpenSearch 2.19 answered the third one while a member was away, and the sync then exited
instead of restarting its scan (tests/faults/test_cluster_faults.py, rolling restart).
"""

from __future__ import annotations

import pytest

from sira_seek.esplugin.engines.base import context_lost


@pytest.mark.parametrize(
    "message",
    [
        "HTTP 404: search_phase_execution_exception: all shards failed "
        "(search_context_missing_exception: No search context found for id [12])",
        "HTTP 404: SearchContextMissingException[No search context found for id [7]]",
        "HTTP 500: illegal_state_exception: no node found for id: NIcHQXbmQp-bJ-0D4mrxoQ",
        "HTTP 500: node_not_connected_exception: [node-1][127.0.0.1:9561] Node not connected",
    ],
)
def test_a_lost_or_unreachable_context_restarts_the_scan(message: str) -> None:
    assert context_lost(message)


@pytest.mark.parametrize(
    "message",
    [
        "HTTP 400: parsing_exception: unknown query [mach]",
        "HTTP 429: es_rejected_execution_exception: rejected execution",
        "HTTP 403: security_exception: action [indices:data/read/search] is unauthorized",
        "HTTP 500: illegal_state_exception: something else broke",
    ],
)
def test_other_errors_are_not_taken_for_a_lost_context(message: str) -> None:
    assert not context_lost(message)
