"""Turn a SIRA result into a query-log record (what Kibana / Dashboards will show)."""

from __future__ import annotations

from sira_seek.sira.results import SiraResult

from .query_log import LatencyMs, LoggedCandidate, LoggedHit, LoggedLLMUsage, QueryLogRecord


def record_from_sira(result: SiraResult, *, weight: float, tau: float) -> QueryLogRecord:
    calls = result.llm_calls
    return QueryLogRecord(
        kind="bm25_search"
        if result.plain_bm25 and not result.candidates.candidates
        else "sira_search",
        index=result.index,
        query=result.query,
        method="sira",
        expansion_weight=weight,
        max_df_ratio=tau,
        candidates=[
            LoggedCandidate(
                phrase=c.phrase, doc_freq=c.doc_freq, decision=c.decision, reason=c.reason
            )
            for c in result.candidates.candidates
        ],
        dsl=result.body,
        hits=[
            LoggedHit(
                id=h.id,
                rank=i + 1,
                score=h.score,
                matched_queries=sorted(h.matched_queries or []),
            )
            for i, h in enumerate(result.hits)
        ],
        latency_ms=LatencyMs(
            total=result.timings.total_ms,
            llm=result.timings.expansion_ms + result.timings.rerank_ms,
            engine=result.timings.engine_ms,
        ),
        llm=LoggedLLMUsage(
            calls=len(calls),
            tokens_in=sum(c.prompt_tokens for c in calls),
            tokens_out=sum(c.completion_tokens for c in calls),
            model=calls[0].model if calls else None,
        ),
    )
