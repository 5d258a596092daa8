"""Where candidate phrases come from: a live LLM, or a precomputed expansions file.

Both produce the same ``Expansion`` records, so everything downstream (DF check, weighted
query, evaluation) is identical whether the phrases were generated now or by an earlier GPU
batch job. A failed or missing expansion is recorded, never raised: the query then runs as
plain BM25 and the result says why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from sira_seek.corpus import ReadReport
from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.client import LLMClient
from sira_seek.llm.precomputed import PrecomputedKeywords
from sira_seek.llm.response import LLMError, LLMResponse
from sira_seek.llm.spec import BatchBackendSpec, OpenAIBackendSpec, parse_backend_spec

from .keyword_parsing import clean_phrases, parse_enrichment
from .prompts import enrichment_request
from .settings import Task


class QueryInput(BaseModel):
    """A query to expand: its text, and its id when it comes from a query set."""

    text: str
    id: str | None = None


class LLMCall(BaseModel):
    """What one enrichment call cost."""

    backend: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cache_hit: bool = False
    error: str | None = None


class Expansion(BaseModel):
    """Candidate phrases (and categories) for one query, with their provenance."""

    phrases: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    source: Literal["llm", "precomputed", "given", "none"] = "none"
    note: str | None = None
    llm_call: LLMCall | None = None


class QueryExpander(Protocol):
    """Anything that turns queries into candidate phrases."""

    def expand_many(
        self,
        queries: list[QueryInput],
        *,
        categories: bool = False,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[Expansion]:
        """One expansion per query, in order; ``on_progress(n)`` reports ``n`` more queries
        expanded (in total once per query), for a progress display over slow LLM calls."""
        ...

    def close(self) -> None: ...


class PrecomputedExpander:
    """Expansions from a JSONL file keyed by query ``_id`` (first) or by the query ``text``."""

    def __init__(self, table: PrecomputedKeywords) -> None:
        self.table = table

    @classmethod
    def from_file(
        cls, path: Path | str, *, strict: bool = True, report: ReadReport | None = None
    ) -> PrecomputedExpander:
        """Read an expansions JSONL; a bad line stops here (strict) or is skipped into
        ``report``, before any query runs."""
        return cls(PrecomputedKeywords.from_jsonl(path, strict=strict, report=report))

    def expand(self, query: QueryInput) -> Expansion:
        found = self.table.for_id(query.id) if query.id is not None else None
        if found is None:
            found = self.table.for_text(query.text)
        if found is None:
            return Expansion(source="none", note=f"{self.table.source} has no entry for this query")
        return Expansion(phrases=clean_phrases(found), source="precomputed")

    def expand_many(
        self,
        queries: list[QueryInput],
        *,
        categories: bool = False,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[Expansion]:
        found = [self.expand(q) for q in queries]
        if on_progress is not None and found:
            on_progress(len(found))  # a table lookup: all at once
        return found

    def close(self) -> None:
        return None


def client_for_spec(spec: str) -> tuple[LLMClient, bool]:
    """The cached client for a spec, and whether it wants chat messages (instruction-tuned
    servers, and batch rounds for them) rather than a completion prompt (in-process base
    models, precomputed files)."""
    from sira_seek.llm.factory import create_llm_client

    parsed = parse_backend_spec(spec)
    return create_llm_client(parsed), isinstance(parsed, OpenAIBackendSpec | BatchBackendSpec)


def call_record(outcome: LLMResponse | LLMError) -> LLMCall:
    if isinstance(outcome, LLMResponse):
        return LLMCall(
            backend=outcome.backend,
            model=outcome.model,
            prompt_tokens=outcome.usage.prompt_tokens,
            completion_tokens=outcome.usage.completion_tokens,
            latency_s=outcome.latency_s,
            cache_hit=outcome.cache_hit,
        )
    return LLMCall(
        backend=outcome.backend,
        model=outcome.model,
        latency_s=outcome.latency_s,
        error=f"{outcome.kind}: {outcome.message}",
    )


class LLMExpander:
    """Asks an LLM (any ``sira_seek.llm`` backend) for evidence vocabulary, many queries at once.

    Instruction-tuned servers (``openai:``) get chat messages; in-process base models get the
    few-shot completion prompt they can continue.
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        chat: bool,
        task: Task = "multihop",
        max_phrases: int = 10,
        concurrency: int = 16,
    ) -> None:
        self.blocking = BlockingLLMClient(client)
        self.chat = chat
        self.task = task
        self.max_phrases = max_phrases
        self.concurrency = concurrency

    @classmethod
    def from_spec(
        cls, spec: str, *, task: Task = "multihop", max_phrases: int = 10, concurrency: int = 16
    ) -> LLMExpander:
        """Build from a backend spec string (``openai:URL#model``, ``llamacpp:...``, ``jsonl:``)."""
        client, chat = client_for_spec(spec)
        return cls(client, chat=chat, task=task, max_phrases=max_phrases, concurrency=concurrency)

    def expand_many(
        self,
        queries: list[QueryInput],
        *,
        categories: bool = False,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[Expansion]:
        """``on_progress(1)`` as each query's LLM call finishes (answered or failed)."""
        requests = [
            enrichment_request(
                q.text,
                self.task,
                chat=self.chat,
                lookup_key=q.id if q.id is not None else q.text,
                categories=categories,
                max_phrases=self.max_phrases,
            )
            for q in queries
        ]
        outcomes = self.blocking.generate_many(requests, self.concurrency, on_done=on_progress)
        out: list[Expansion] = []
        for outcome in outcomes:
            call = call_record(outcome)
            if isinstance(outcome, LLMError):
                out.append(
                    Expansion(source="none", note=f"LLM call failed ({call.error})", llm_call=call)
                )
                continue
            answer = outcome.parsed if outcome.parsed is not None else outcome.text
            parsed = parse_enrichment(answer, limit=self.max_phrases)
            note = "answer was not clean JSON; phrases recovered" if parsed.recovered else None
            out.append(
                Expansion(
                    phrases=parsed.phrases,
                    categories=parsed.categories,
                    source="llm",
                    note=note,
                    llm_call=call,
                )
            )
        return out

    def close(self) -> None:
        self.blocking.close()
