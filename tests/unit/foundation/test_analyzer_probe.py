"""Analyzer detection: only the engine's "no such analyzer" answer means absent.

The probe is driven by scripted outcomes of one ``_analyze`` call (typed errors as the engine
backends raise them), no engine imitation: the real answers are checked against live nodes in
tests/integration/test_backend.py.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sira_seek.esplugin.engines.base import ANALYZE_ATTEMPTS, analyzer_available
from sira_seek.esplugin.engines.errors import EngineRequestError

ABSENT = EngineRequestError(
    "HTTP 400: illegal_argument_exception: failed to find global analyzer [english]",
    status=400,
    error_type="illegal_argument_exception",
)


def scripted(*outcomes: BaseException | None) -> tuple[Callable[[], object], list[int]]:
    """A probe that raises each outcome in turn (None = the analysis works)."""
    calls: list[int] = []

    def analyze() -> object:
        calls.append(1)
        outcome = outcomes[len(calls) - 1]
        if outcome is not None:
            raise outcome
        return {"tokens": []}

    return analyze, calls


def no_sleep(pauses: list[float]) -> Callable[[float], None]:
    return pauses.append


def test_a_working_analysis_is_available() -> None:
    analyze, calls = scripted(None)
    assert analyzer_available(analyze, sleep=no_sleep([])) is True
    assert len(calls) == 1


def test_the_engines_unknown_analyzer_answer_means_absent_at_once() -> None:
    analyze, calls = scripted(ABSENT)
    assert analyzer_available(analyze, sleep=no_sleep([])) is False
    assert len(calls) == 1


@pytest.mark.parametrize(
    "transient",
    [
        EngineRequestError("OpenSearch at http://x is unreachable (ConnectionTimeout)."),
        EngineRequestError("HTTP 429: too many requests", status=429, error_type="es_rejected"),
        EngineRequestError("HTTP 503: unavailable", status=503, error_type="master_not_discovered"),
        EngineRequestError("HTTP 408: timeout", status=408),
    ],
    ids=["no-answer", "429", "503", "408"],
)
def test_a_transient_error_is_retried_with_backoff_then_answers(
    transient: EngineRequestError,
) -> None:
    analyze, calls = scripted(transient, transient, None)
    pauses: list[float] = []
    assert analyzer_available(analyze, backoff_s=0.5, sleep=no_sleep(pauses)) is True
    assert len(calls) == 3
    assert pauses == [0.5, 1.0]


def test_a_transient_error_that_persists_is_raised_not_taken_as_absent() -> None:
    busy = EngineRequestError("HTTP 429: too many requests", status=429)
    analyze, calls = scripted(*[busy] * ANALYZE_ATTEMPTS)
    pauses: list[float] = []
    with pytest.raises(EngineRequestError) as caught:
        analyzer_available(analyze, sleep=no_sleep(pauses))
    assert caught.value is busy
    assert len(calls) == ANALYZE_ATTEMPTS  # bounded
    assert len(pauses) == ANALYZE_ATTEMPTS - 1


def test_bad_credentials_are_raised_at_once() -> None:
    denied = EngineRequestError(
        "HTTP 401, authentication failed: security_exception",
        status=401,
        error_type="security_exception",
    )
    analyze, calls = scripted(denied)
    pauses: list[float] = []
    with pytest.raises(EngineRequestError):
        analyzer_available(analyze, sleep=no_sleep(pauses))
    assert len(calls) == 1 and pauses == []


def test_read_only_credentials_search_with_a_warning_not_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 403 on _analyze (read-only credentials, which cannot create an index to choose an
    analyzer for) is answered once, as absent, and said in a warning; never retried."""
    denied = EngineRequestError(
        "HTTP 403, permission denied: action [cluster:admin/analyze] is unauthorized",
        status=403,
        error_type="security_exception",
    )
    analyze, calls = scripted(denied)
    pauses: list[float] = []
    assert analyzer_available(analyze, sleep=no_sleep(pauses)) is False
    assert len(calls) == 1 and pauses == []
    assert "cannot probe analyzers (HTTP 403" in caplog.text


def test_another_400_is_raised_not_taken_as_absent() -> None:
    """Only illegal_argument_exception is the engine's "unknown analysis component" answer."""
    bad = EngineRequestError("HTTP 400: parse_exception", status=400, error_type="parse_exception")
    analyze, calls = scripted(bad)
    with pytest.raises(EngineRequestError):
        analyzer_available(analyze, sleep=no_sleep([]))
    assert len(calls) == 1
