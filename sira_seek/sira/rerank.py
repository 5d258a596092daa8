"""Optional LLM rerank of SIRA's top hits by answer presence.

BM25 ranks by vocabulary; a reader model can tell whether a passage actually states the
answer. One call per (query, document) returns 0..100; documents are sorted by that score,
ties keep their BM25 order, and documents whose call failed go last in BM25 order, so a flaky
model can only demote what it could not read, never scramble the list.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.client import LLMClient
from sira_seek.llm.request import ChatMessage, LLMRequest
from sira_seek.llm.response import LLMError

from .expansions import LLMCall, call_record, client_for_spec
from .keyword_parsing import json_candidates
from .results import SiraHit

MAX_DOC_CHARS = 2000

RERANK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 100}},
    "required": ["score"],
    "additionalProperties": False,
}

_RUBRIC = (
    "Rate from 0 to 100 whether the document contains the answer to the question. "
    "0-40: unrelated or only shares words; 41-80: the article about the question's main entity "
    "or a needed bridge entity; 81-100: the document states the answer. "
    'Answer with JSON: {"score": N}.'
)


def rerank_request(question: str, title: str, text: str, *, chat: bool) -> LLMRequest:
    doc = f"{title}\n{text}".strip()[:MAX_DOC_CHARS]
    user = f"Question: {' '.join(question.split())}\n\nDocument:\n{doc}"
    common: dict[str, Any] = {
        "json_schema": RERANK_SCHEMA,
        "max_tokens": 16,
        "temperature": 0.0,
        "seed": 0,
    }
    if chat:
        return LLMRequest(
            messages=(
                ChatMessage(role="system", content=_RUBRIC),
                ChatMessage(role="user", content=user),
            ),
            **common,
        )
    return LLMRequest(prompt=f"{_RUBRIC}\n\n{user}\n\nJSON: ", **common)


def parse_score(answer: Any) -> float | None:
    """The 0..100 score from a decoded object or text; None when there is none."""
    import json

    values: list[Any] = [answer]
    if isinstance(answer, str):
        for candidate in json_candidates(answer.strip()):
            try:
                values.append(json.loads(candidate))
            except json.JSONDecodeError:
                continue
    for value in values:
        score = value.get("score") if isinstance(value, dict) else None
        if isinstance(score, int | float) and not isinstance(score, bool):
            return float(min(100, max(0, score)))
    return None


def order_by_scores(hits: Sequence[SiraHit], scores: dict[str, float | None]) -> list[SiraHit]:
    """Scored hits by score (ties: BM25 rank), then unscored hits in BM25 order."""
    scored = [
        h.model_copy(update={"rerank_score": scores[h.id]})
        for h in hits
        if scores.get(h.id) is not None
    ]
    unscored = [h for h in hits if scores.get(h.id) is None]
    scored.sort(key=lambda h: (-(h.rerank_score or 0.0), h.bm25_rank))
    return [*scored, *sorted(unscored, key=lambda h: h.bm25_rank)]


class LLMReranker:
    """Reranks the top ``top_n`` hits; the rest keep their BM25 order below them."""

    def __init__(
        self, client: LLMClient, *, chat: bool, top_n: int = 20, concurrency: int = 16
    ) -> None:
        self.blocking = BlockingLLMClient(client)
        self.chat = chat
        self.top_n = top_n
        self.concurrency = concurrency

    @classmethod
    def from_spec(cls, spec: str, *, top_n: int = 20) -> LLMReranker:
        client, chat = client_for_spec(spec)
        return cls(client, chat=chat, top_n=top_n)

    def rerank(
        self, question: str, hits: Sequence[SiraHit], docs: dict[str, tuple[str, str]]
    ) -> tuple[list[SiraHit], list[LLMCall], float]:
        """(new order, one usage record per call, milliseconds)."""
        started = time.perf_counter()
        head, tail = list(hits[: self.top_n]), list(hits[self.top_n :])
        requests = [
            rerank_request(question, *docs.get(h.id, ("", "")), chat=self.chat) for h in head
        ]
        outcomes = self.blocking.generate_many(requests, self.concurrency)
        scores: dict[str, float | None] = {}
        calls: list[LLMCall] = []
        for hit, outcome in zip(head, outcomes, strict=True):
            calls.append(call_record(outcome))
            if isinstance(outcome, LLMError):
                scores[hit.id] = None
                continue
            answer = outcome.parsed if outcome.parsed is not None else outcome.text
            scores[hit.id] = parse_score(answer)
        ordered = [*order_by_scores(head, scores), *tail]
        return ordered, calls, (time.perf_counter() - started) * 1000

    def close(self) -> None:
        self.blocking.close()
