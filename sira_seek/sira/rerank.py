"""LLM rerank of SIRA's top hits by relevance to the query (SIRA §3.1).

"After the BM25 retrieval top-k candidates are picked from the returned candidates based on
relevance with the query." One call per (query, document) of the top ``top_n`` returns a
0..100 relevance score (the prompt is ``prompts.rerank_request``); those documents are sorted by
it, ties keep their BM25 order, and the hits below ``top_n`` follow unchanged. A call that
failed, or whose output holds no usable score, is recorded (its ``LLMCall.error``) and that
document keeps its BM25 position: a flaky model can neither drop a hit nor scramble the list.
An LLM that is not there at all stops the rerank (``LLMDownError``) unless the caller's policy
is to fall back (``stop_when_down=False``): a list in BM25 order is not a reranked one.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.client import LLMClient
from sira_seek.llm.response import LLMError

from .expansions import LLMCall, call_record, check_llm_up, client_for_spec
from .keyword_parsing import json_candidates
from .prompts import MAX_RERANK_DOC_CHARS, RERANK_SCHEMA, rerank_request
from .results import SiraHit

__all__ = [
    "MAX_RERANK_DOC_CHARS",
    "RERANK_SCHEMA",
    "LLMReranker",
    "Reranked",
    "order_by_scores",
    "parse_score",
    "rerank_request",
    "run_scores",
    "unusable_note",
]

MALFORMED = "malformed"
"""The ``LLMCall.error`` kind of an answer without a usable score."""


def parse_score(answer: Any) -> float | None:
    """The 0..100 score (clamped) from a decoded object or text; None when there is none."""
    values: list[Any] = [answer]
    if isinstance(answer, str):
        for candidate in json_candidates(answer.strip()):
            try:
                values.append(json.loads(candidate))
            except json.JSONDecodeError:
                continue
    for value in values:
        score = value.get("score") if isinstance(value, dict) else None
        if isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score):
            return float(min(100, max(0, score)))
    return None


def order_by_scores(hits: Sequence[SiraHit], scores: dict[str, float | None]) -> list[SiraHit]:
    """``hits`` reordered: an unscored hit (None or absent) stays at its position; the scored
    ones fill the other positions by score, highest first, ties in BM25 order."""
    scored = sorted(
        (
            h.model_copy(update={"rerank_score": scores[h.id]})
            for h in hits
            if scores.get(h.id) is not None
        ),
        key=lambda h: (-(h.rerank_score or 0.0), h.bm25_rank),
    )
    queue = iter(scored)
    return [h if scores.get(h.id) is None else next(queue) for h in hits]


def run_scores(hits: Sequence[SiraHit], top_n: int) -> dict[str, float]:
    """doc id -> a score whose order is the list's, for scoring a reranked list.

    ir_measures and trec_eval rank by score, not by position, so the reranked head must score
    above the tail: the head's i-th hit (0-based) scores (the tail's first score) + (head - i);
    the tail keeps its engine scores.
    """
    head, tail = list(hits[:top_n]), list(hits[top_n:])
    base = tail[0].score if tail else 0.0
    out = {h.id: base + (len(head) - i) for i, h in enumerate(head)}
    out.update({h.id: h.score for h in tail})
    return out


def unusable_note(calls: Sequence[LLMCall]) -> str | None:
    """One line saying how many rerank answers could not be used, or None when all could."""
    bad = [c.error for c in calls if c.error]
    if not bad:
        return None
    return (
        f"rerank: {len(bad)} of {len(calls)} answers unusable (first: {bad[0]}); those "
        "documents kept their BM25 position"
    )


class Reranked(NamedTuple):
    """A reranked list, one usage record per call (errors included), and the milliseconds."""

    hits: list[SiraHit]
    calls: list[LLMCall]
    ms: float


class LLMReranker:
    """Reranks the top ``top_n`` hits of a list by relevance; the rest follow in BM25 order."""

    def __init__(
        self, client: LLMClient, *, chat: bool, concurrency: int = 16, llm: str | None = None
    ) -> None:
        self.blocking = BlockingLLMClient(client)
        self.chat = chat
        self.concurrency = concurrency
        self.llm = llm  # the spec, to name the model when it is not there

    @classmethod
    def from_spec(cls, spec: str, *, concurrency: int = 16) -> LLMReranker:
        client, chat = client_for_spec(spec)
        return cls(client, chat=chat, concurrency=concurrency, llm=spec)

    def rerank(
        self,
        query: str,
        hits: Sequence[SiraHit],
        docs: dict[str, tuple[str, str]],
        *,
        top_n: int,
        on_done: Callable[[int], None] | None = None,
        stop_when_down: bool = True,
    ) -> Reranked:
        """``hits`` with the top ``top_n`` reordered; ``docs`` maps an id to (title, text)
        (a missing one is read as empty). ``on_done(1)`` fires as each call finishes.
        ``stop_when_down``: ``LLMDownError`` when a call finds the LLM not there (else those
        documents keep their BM25 position, as after any failed call)."""
        started = time.perf_counter()
        head, tail = list(hits[:top_n]), list(hits[top_n:])
        requests = [rerank_request(query, *docs.get(h.id, ("", "")), chat=self.chat) for h in head]
        outcomes = self.blocking.generate_many(requests, self.concurrency, on_done=on_done)
        scores: dict[str, float | None] = {}
        calls: list[LLMCall] = []
        for hit, outcome in zip(head, outcomes, strict=True):
            call = call_record(outcome)
            score = None
            if not isinstance(outcome, LLMError):
                answer = outcome.parsed if outcome.parsed is not None else outcome.text
                score = parse_score(answer)
                if score is None:
                    shown = outcome.text.strip()[:80]
                    call.error = f"{MALFORMED}: no 0-100 score in the output {shown!r}"
            scores[hit.id] = score
            calls.append(call)
        if stop_when_down:
            check_llm_up(calls, self.llm)
        ordered = [*order_by_scores(head, scores), *tail]
        return Reranked(ordered, calls, (time.perf_counter() - started) * 1000)

    def close(self) -> None:
        self.blocking.close()
