"""Where candidate phrases come from: a live LLM, or a precomputed expansions file.

Both produce the same ``Expansion`` records, so everything downstream (DF check, weighted
query, evaluation) is identical whether the phrases were generated now or by an earlier GPU
batch job. A failed or missing expansion is recorded: the query then runs as plain BM25 and the
result says why. An LLM that is not there at all (``LLM_DOWN_KINDS``) is another matter: behind
``FailurePolicy`` with ``stop_when_down`` (``on_llm_failure="error"``, the default of the
workflows) one probe finds it and the run stops with ``LLMDownError`` naming the LLM, instead of
passing BM25's figures off as SIRA's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from sira_seek.corpus import ReadReport
from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.client import LLMClient
from sira_seek.llm.errors import LLMCallError
from sira_seek.llm.pending import PendingRequest
from sira_seek.llm.precomputed import PrecomputedKeywords
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse
from sira_seek.llm.spec import BatchBackendSpec, OpenAIBackendSpec, parse_backend_spec

from .generation_prompts import GenerationMethod, generation_request
from .keyword_parsing import clean_phrases, parse_enrichment
from .prompts import enrichment_request
from .settings import SiraSettings, Task

logger = logging.getLogger(__name__)

LLM_DOWN_KINDS = frozenset({"unreachable", "timeout", "unavailable", "server_error"})
"""Failed-call kinds that mean the LLM is not there (down, hanging, not installed, failing
every request after its retries), as opposed to one bad answer (malformed, too long): under
``on_llm_failure="error"`` these stop a run (exit 1, HTTP 503)."""


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

    @property
    def error_kind(self) -> str | None:
        """The failure's kind (``unreachable``, ``malformed``, ...): ``error`` reads
        ``kind: message``."""
        return self.error.split(":", 1)[0] if self.error else None


class LLMDownError(LLMCallError):
    """The LLM a SIRA run depends on is not there: the run stops rather than answer with plain
    BM25 under SIRA's name. ``kind`` is the failed call's (``unreachable``, ``timeout``, ...)."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def llm_label(spec: str) -> str:
    """A backend spec as messages may show it: a ``user:password@`` in its URL masked."""
    from sira_seek.redaction import Redactor

    return Redactor()(spec)


def check_llm_up(calls: Iterable[LLMCall | None], llm: str | None) -> None:
    """``LLMDownError`` for the first of ``calls`` whose failure means the LLM is not there;
    ``llm`` (a spec, shown masked) names it in the message."""
    for call in calls:
        if call is not None and call.error_kind in LLM_DOWN_KINDS:
            name = llm_label(llm) if llm else f"{call.backend}:{call.model}".strip(":")
            raise LLMDownError(
                f"the LLM {name} is not answering ({llm_label(call.error or '')}): SIRA stopped "
                "rather than pass plain BM25 off as its own. Start it, give another LLM, or let "
                "such queries run as plain BM25, counted, with on_llm_failure fallback "
                "(--on-llm-failure fallback)",
                kind=str(call.error_kind),
            )


class GeneratedText(BaseModel):
    """What an LLM wrote for a query under a generation baseline (``hyde``: a hypothetical
    passage, ``cot``: a reasoning chain), as it wrote it: the query adds it ungrounded
    (``SiraRetriever.compile``), cut to the query's word budget."""

    method: GenerationMethod
    text: str


class Expansion(BaseModel):
    """Candidate phrases (and categories) for one query, with their provenance; or, for the
    generation baselines, the text the LLM wrote (``generated``)."""

    phrases: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    generated: GeneratedText | None = None
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


CIRCUIT_CHUNK = 64
"""Queries sent to the LLM together after the probe: the most a run spends on an LLM that
dies mid-run before ``FailurePolicy``'s circuit opens (a few waves of concurrent calls)."""

REPORTED_IN_RESULT = {"reported_in_result": True}
"""``extra`` of a warning whose fact the result also carries as a note (a fallback): a front
end that prints the notes (the CLI) drops the log record so the fact is said once; a library
user's logging still gets it."""


class LLMCircuit(BaseModel):
    """Where a run found its LLM not there (``FailurePolicy`` under ``fallback``): the
    1-based position of the query whose call failed so, why, and how many later queries ran
    as plain BM25 without a call."""

    at_query: int
    error: str
    skipped: int = 0
    later: str = "ran as BM25"
    """What the later queries did instead (the rerank's: ``kept their order``)."""

    def describe(self) -> str:
        return (
            f"the LLM was not there at query {self.at_query} ({self.error}); the remaining "
            f"{self.skipped} queries {self.later} without calling it"
        )


class FailurePolicy:
    """A ``QueryExpander`` that applies a run's policy for a failing LLM to another expander,
    and counts the queries left without phrases (each then runs as plain BM25).

    A batch first sends its first query alone, then the rest ``CIRCUIT_CHUNK`` at a time:
    a dead LLM costs one call's retries, not one per query. With ``stop_when_down``
    ``LLMDownError`` (naming ``llm``) then stops the run, as does any later call that finds
    the LLM gone. Without it the circuit opens (``circuit``, a warning): every later query of
    the run falls back at once, without calling the LLM again; all those that got nothing are
    counted in ``fallbacks``. An offline batch round skips the probe and the chunks (its first
    query has no answer yet), so the round still holds every query. Closing it closes nothing:
    the wrapped expander belongs to whoever built it.
    """

    def __init__(
        self, inner: QueryExpander, *, stop_when_down: bool, llm: str | None = None
    ) -> None:
        self.inner = inner
        self.stop_when_down = stop_when_down
        self.llm = llm
        self.fallbacks = 0
        self.asked = 0  # queries of the run handed to the inner expander so far
        self.circuit: LLMCircuit | None = None

    def expand_many(
        self,
        queries: list[QueryInput],
        *,
        categories: bool = False,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[Expansion]:
        found: list[Expansion] = []
        rest, step = queries, 1  # the probe first
        while rest and self.circuit is None:
            part = rest[:step]
            try:
                found += self._expand(part, categories, on_progress)
            except PendingRequest:
                if len(part) == len(rest):
                    raise
                step = len(rest)  # an offline round: every query goes into it at once
                continue
            rest, step = rest[len(part) :], CIRCUIT_CHUNK
        if rest and self.circuit is not None:
            found += self._skip(self.circuit, rest, on_progress)
        self.fallbacks += sum(1 for e in found if e.source == "none")
        return found

    def _expand(
        self,
        queries: list[QueryInput],
        categories: bool,
        on_progress: Callable[[int], None] | None,
    ) -> list[Expansion]:
        found = self.inner.expand_many(queries, categories=categories, on_progress=on_progress)
        if self.stop_when_down:
            check_llm_up((e.llm_call for e in found), self.llm)
        for position, expansion in enumerate(found, start=self.asked + 1):
            call = expansion.llm_call
            if call is not None and call.error_kind in LLM_DOWN_KINDS:
                self.circuit = LLMCircuit(at_query=position, error=llm_label(call.error or ""))
                break
        self.asked += len(found)
        return found

    @staticmethod
    def _skip(
        circuit: LLMCircuit,
        queries: list[QueryInput],
        on_progress: Callable[[int], None] | None,
    ) -> list[Expansion]:
        """``queries`` as fallbacks without a call: the circuit is open."""
        circuit.skipped += len(queries)
        note = f"LLM not called: it was not there at query {circuit.at_query} ({circuit.error})"
        logger.warning("%s", circuit.describe(), extra=REPORTED_IN_RESULT)
        if on_progress is not None:
            on_progress(len(queries))
        return [Expansion(source="none", note=note) for _ in queries]

    def close(self) -> None:
        return None


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


def expand_with_llm(
    blocking: BlockingLLMClient,
    requests: list[LLMRequest],
    concurrency: int,
    answered: Callable[[LLMResponse, LLMCall], Expansion],
    *,
    on_progress: Callable[[int], None] | None = None,
) -> list[Expansion]:
    """Send every request at once and make one ``Expansion`` per query, in input order.

    The expanders differ only in how an answer becomes an expansion (``answered``); a failed
    call is recorded the same way for all of them (``source="none"``, the call's error in the
    note), so ``FailurePolicy`` counts and judges their failures alike.
    """
    outcomes = blocking.generate_many(requests, concurrency, on_done=on_progress)
    out: list[Expansion] = []
    for outcome in outcomes:
        call = call_record(outcome)
        if isinstance(outcome, LLMError):
            out.append(
                Expansion(source="none", note=f"LLM call failed ({call.error})", llm_call=call)
            )
        else:
            out.append(answered(outcome, call))
    return out


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
        return expand_with_llm(
            self.blocking, requests, self.concurrency, self._expansion, on_progress=on_progress
        )

    def _expansion(self, response: LLMResponse, call: LLMCall) -> Expansion:
        """The phrases (and categories) of one answer, recovered from loose JSON if need be."""
        answer = response.parsed if response.parsed is not None else response.text
        parsed = parse_enrichment(answer, limit=self.max_phrases)
        note = "answer was not clean JSON; phrases recovered" if parsed.recovered else None
        return Expansion(
            phrases=parsed.phrases,
            categories=parsed.categories,
            source="llm",
            note=note,
            llm_call=call,
        )

    def close(self) -> None:
        self.blocking.close()


class GenerativeExpander:
    """The SIRA paper's LLM query-expansion baselines: asks an LLM to write a text for each
    query (``hyde``: a passage answering it, ``cot``: its reasoning before the answer; prompts
    in ``generation_prompts``), many queries at once. The text comes back as
    ``Expansion.generated``, which the retriever adds to the BM25 query as it is: no
    grounding, that is what the baselines measure against SIRA.

    A failed call or an empty text leaves the query without an addition (``source="none"``,
    plain BM25, counted by ``FailurePolicy`` like SIRA's); an LLM that is not there stops the
    run under ``on_llm_failure="error"`` as SIRA's does.
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        method: GenerationMethod,
        chat: bool,
        task: Task = "multihop",
        concurrency: int = 16,
        max_tokens: int | None = None,
    ) -> None:
        self.blocking = BlockingLLMClient(client)
        self.method = method
        self.chat = chat
        self.task = task
        self.concurrency = concurrency
        # The environment's (SIRA_SEEK_SIRA_GENERATION_MAX_TOKENS) unless given.
        self.max_tokens = max_tokens or SiraSettings().generation_max_tokens

    @classmethod
    def from_spec(
        cls, spec: str, *, method: GenerationMethod, task: Task = "multihop", concurrency: int = 16
    ) -> GenerativeExpander:
        """Build from a backend spec string (``openai:URL#model``, ``llamacpp:...``,
        ``batch:DIR#model``)."""
        client, chat = client_for_spec(spec)
        return cls(client, method=method, chat=chat, task=task, concurrency=concurrency)

    def expand_many(
        self,
        queries: list[QueryInput],
        *,
        categories: bool = False,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[Expansion]:
        """One generated text per query (``categories`` does not apply: the baselines add
        text only); ``on_progress(1)`` as each call finishes."""
        requests = [
            generation_request(
                self.method,
                q.text,
                self.task,
                chat=self.chat,
                lookup_key=q.id if q.id is not None else q.text,
                max_tokens=self.max_tokens,
            )
            for q in queries
        ]
        return expand_with_llm(
            self.blocking, requests, self.concurrency, self._expansion, on_progress=on_progress
        )

    def _expansion(self, response: LLMResponse, call: LLMCall) -> Expansion:
        """The generated text of one answer, whitespace collapsed; none if it is empty."""
        text = " ".join(response.text.split())
        if not text:
            return Expansion(source="none", note="the LLM wrote nothing", llm_call=call)
        return Expansion(
            source="llm", generated=GeneratedText(method=self.method, text=text), llm_call=call
        )

    def close(self) -> None:
        self.blocking.close()
