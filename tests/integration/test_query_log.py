"""Query log documents land in the daily log index with the fields the dashboard reads."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.esplugin.engines.base import RestBackend
from sira_seek.inspection.query_log import (
    LatencyMs,
    LoggedCandidate,
    LoggedHit,
    LoggedSeek,
    QueryLogger,
    QueryLogRecord,
)
from sira_seek.inspection.saved_objects import REFERENCED_FIELDS

pytestmark = pytest.mark.integration


@pytest.fixture
def log_prefix(backend: SearchBackend) -> Iterator[str]:
    prefix = f"test-log-{uuid.uuid4().hex[:8]}-"
    yield prefix
    assert isinstance(backend, RestBackend)
    for name in backend.request("GET", f"/{prefix}*", ignore=(404,)) or {}:
        backend.delete_index(name)  # wildcard deletes are refused by default


def test_logged_searches_are_searchable_with_dashboard_fields(
    backend: SearchBackend, log_prefix: str
) -> None:
    with QueryLogger(backend, prefix=log_prefix) as qlog:
        qlog.log(
            QueryLogRecord(
                kind="sira_search",
                index="wikimh",
                query="Who founded the Mets?",
                expansion_weight=0.5,
                max_df_ratio=0.05,
                candidates=[
                    LoggedCandidate(phrase="baseball", doc_freq=40, decision="kept", reason="ok"),
                    LoggedCandidate(
                        phrase="team", doc_freq=900, decision="dropped", reason="too common"
                    ),
                ],
                dsl={"query": {"bool": {"should": []}}},
                hits=[LoggedHit(id="d1", rank=1, score=12.5, matched_queries=["bm25_original"])],
                latency_ms=LatencyMs(total=120, llm=100, engine=20),
            )
        )
        qlog.log(
            QueryLogRecord(
                kind="seek_question",
                index="wikimh",
                query="q2",
                method="seek",
                candidates=[
                    LoggedCandidate(phrase="x", doc_freq=0, decision="dropped", reason="absent")
                ],
                seek=LoggedSeek(sketch="# T\n## A\n...", sub_queries=["a"], answer="yes"),
            )
        )
    index = qlog.index_for(QueryLogRecord(kind="k", index="i", query="q").timestamp)
    backend.refresh(index)
    assert backend.count(index) == 2
    hits = backend.search(index, {"query": {"term": {"no_kept_expansion": True}}}).hits
    assert len(hits) == 1 and hits[0].source is not None
    assert hits[0].source["dropped_terms"] == ["x"] and hits[0].source["seek"]["answer"] == "yes"
    first = backend.search(index, {"query": {"term": {"kept_terms": "baseball"}}}).hits[0].source
    assert first is not None and first["acceptance_rate"] == 0.5
    assert first["dsl_text"].startswith('{"query"')
    assert isinstance(backend, RestBackend)
    caps = backend.request(
        "GET", f"/{index}/_field_caps", params={"fields": ",".join(REFERENCED_FIELDS)}
    )
    missing = [f for f in REFERENCED_FIELDS if f not in caps["fields"]]
    assert not missing, f"dashboard reads fields the log lacks: {missing}"
