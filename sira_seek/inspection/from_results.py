"""Turn a SIRA result into a query-log record (what Kibana / Dashboards will show)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .query_log import (
    LatencyMs,
    LoggedCandidate,
    LoggedHit,
    LoggedLLMUsage,
    LoggedSeek,
    QueryLogRecord,
)

if TYPE_CHECKING:  # annotations only: a SIRA search does not load SEEK's modules
    from sira_seek.seek.results import SeekResult
    from sira_seek.sira.results import SiraResult


def record_from_sira(
    result: SiraResult, *, weight: float, tau: float, method: str = "sira"
) -> QueryLogRecord:
    """``method`` is the request's (``sira``, or ``hyde``/``cot``, whose searches run through
    the same retriever)."""
    calls = result.llm_calls
    return QueryLogRecord(
        kind="bm25_search"
        if result.plain_bm25 and not result.candidates.candidates
        else "sira_search",
        index=result.index,
        query=result.query,
        method=method,
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


def record_from_seek(result: SeekResult, *, index: str) -> QueryLogRecord:
    """A SEEK question: the completed sketch, every sub-query, the retrieved ids, the answer."""
    seen: list[str] = []
    for step in result.steps:
        seen += [d for d in step.retrieved_ids if d not in seen]
    total = result.usage.total
    return QueryLogRecord(
        kind="seek_question",
        index=index,
        query=result.question,
        method=result.method if result.variant is None else f"{result.method}:{result.variant}",
        hits=[LoggedHit(id=d, rank=i + 1, score=0.0) for i, d in enumerate(seen)],
        latency_ms=LatencyMs(
            total=result.timings.total_s * 1000,
            llm=result.timings.llm_s * 1000,
            engine=result.timings.retrieval_s * 1000,
        ),
        llm=LoggedLLMUsage(
            calls=total.calls,
            tokens_in=total.prompt_tokens,
            tokens_out=total.completion_tokens,
        ),
        seek=LoggedSeek(
            sketch=result.sketch.render() if result.sketch is not None else "",
            sub_queries=[s.sub_query for s in result.steps],
            answer=result.answer or result.error,
        ),
    )
