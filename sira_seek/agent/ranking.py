"""The final ranking of an agentic episode's gathered pages (SIRA §4.4).

The paper's sentence this implements: "SIRA may fetch titles/snippets only for pages already
inside the fixed page budget, and fetched content is used only for final ranking, not for
formulating subsequent BM25 queries." So once the episode is over, the pages inside the
budget (``AgentRun.pages_read``) are ranked, and Recall@B reads the ranked list ("Recall@1
measures whether the system ranks the answer-bearing page first").

The paper does not say how the final ranking is done. Ours (``final_ranking="llm"``, the
default): the same LLM rates each gathered page's title and snippet (the first
``RANK_SNIPPET_CHARS`` characters of its text) 0..100 for relevance to the question, with the
one relevance prompt of SIRA's §3.1 rerank (``sira.prompts.rerank_request``); pages are sorted
by score, highest first, ties in stream order; a page whose answer held no usable score keeps
its stream position (``sira.rerank.order_by_scores``' rule), so a flaky model can neither drop
a page nor scramble the list. ``final_ranking="stream"`` leaves the pages in retrieval order
(the Perplexity baseline's "ordered stream", and this project's behaviour before).

Ranking happens after the episode and its observations never reach the agent: it cannot
change a later query, as the paper requires. All the pages' requests go at once
(``generate_many``), so an offline batch round holds them together.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Literal, Protocol

from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse
from sira_seek.sira.prompts import rerank_request
from sira_seek.sira.rerank import parse_score

from .loop import AgentRun, PageRead

logger = logging.getLogger(__name__)

FinalRanking = Literal["llm", "stream"]
FINAL_RANKINGS: tuple[FinalRanking, ...] = ("llm", "stream")

RANK_SNIPPET_CHARS = 300
"""Characters of a page's text the ranking LLM reads beside its title: the paper fetches
"titles/snippets", not whole pages; 300 keeps 100 pages' requests small for a CPU model."""


class RankingLLM(Protocol):
    """A blocking ``generate_many`` (``BlockingLLMClient``): answers in input order, failures
    as ``LLMError`` records."""

    def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]: ...


def page_request(question: str, page: PageRead, *, chat: bool) -> LLMRequest:
    """The relevance request for one gathered page: its title and snippet against the question."""
    return rerank_request(question, page.title or "", page.text[:RANK_SNIPPET_CHARS], chat=chat)


def _score(outcome: LLMResponse | LLMError) -> float | None:
    if isinstance(outcome, LLMError):
        return None
    return parse_score(outcome.parsed if outcome.parsed is not None else outcome.text)


def order_pages(stream: Sequence[str], scores: dict[str, float | None]) -> list[str]:
    """``stream`` reordered: an unscored page stays at its position; the scored ones fill the
    other positions by score, highest first, ties in stream order."""
    position = {doc: i for i, doc in enumerate(stream)}
    scored = sorted(
        (doc for doc in stream if scores.get(doc) is not None),
        key=lambda doc: (-(scores[doc] or 0.0), position[doc]),
    )
    queue = iter(scored)
    return [doc if scores.get(doc) is None else next(queue) for doc in stream]


def rank_run(run: AgentRun, llm: RankingLLM, *, chat: bool, concurrency: int = 8) -> AgentRun:
    """``run`` with its gathered pages ranked by the LLM (``ranked_ids``, ``rank_scores``,
    ``rank_failures`` set); a run without pages is returned as it is."""
    if not run.pages_read:
        return run.model_copy(update={"ranked_ids": []})
    requests = [page_request(run.question, page, chat=chat) for page in run.pages_read]
    outcomes = llm.generate_many(requests, concurrency)
    scores = {
        page.id: _score(outcome) for page, outcome in zip(run.pages_read, outcomes, strict=True)
    }
    failures = sum(score is None for score in scores.values())
    if failures:
        logger.info(
            "final ranking %s: %d of %d pages without a usable score keep their stream position",
            run.question_id, failures, len(scores),
        )  # fmt: skip
    return run.model_copy(
        update={
            "ranked_ids": order_pages(run.page_ids, scores),
            "rank_scores": scores,
            "rank_failures": failures,
            "rank_calls": len(requests),
            "rank_completion_tokens": sum(
                o.usage.completion_tokens for o in outcomes if isinstance(o, LLMResponse)
            ),
        }
    )
