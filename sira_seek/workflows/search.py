"""The search workflow: one BM25, SIRA, HyDE or CoT query, validated once for every front end.

``sira-seek search``, ``SiraSeek.search``, ``POST /search``, the MCP ``search`` tool and the
framework retrievers all build a ``SearchRequest`` and call ``search``; they differ only in
how they parse their input and render the ``SiraResult``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import (
    ConfigDict,
    Field,
    field_validator,
)

from sira_seek.corpus import ReadReport
from sira_seek.llm.batch_rounds import batch_round
from sira_seek.sira.expansions import REPORTED_IN_RESULT, FailurePolicy, QueryExpander
from sira_seek.sira.results import SiraResult
from sira_seek.sira.settings import Task

from . import validation
from .errors import InvalidInput, NotFound, classified
from .fields import EMBEDDER_HELP, NUM_CANDIDATES_HELP, K, NumCandidates, Rerank, Tau, Weight
from .methods import method_spec
from .request_base import ON_LLM_FAILURE_HELP, OnLLMFailure
from .sira_setup import (
    BackendSource,
    RetrievalMethod,
    SiraRequest,
    backend_of,
    choose_expander,
    choose_reranker,
)

if TYPE_CHECKING:
    from sira_seek.backend import SearchBackend
    from sira_seek.embed import Embedder
    from sira_seek.sira.index_profile import ProfileCache
    from sira_seek.sira.rerank import LLMReranker
    from sira_seek.sira.settings import SiraSettings

logger = logging.getLogger(__name__)

FALLBACK_NOTE = "SIRA fell back to plain BM25"
"""How every front end says that a SIRA request ran as plain BM25 because its phrase source
had nothing for this query (a note in the result, ``fell_back_to_bm25``, a warning in the
log)."""


def fallback_note(method: RetrievalMethod) -> str:
    """``FALLBACK_NOTE`` under the method's own name (``hyde``, ``cot``: their LLM wrote
    nothing usable for the query)."""
    if method == "sira":
        return FALLBACK_NOTE
    return FALLBACK_NOTE.replace("SIRA", method, 1)


def failure_policy(
    expander: QueryExpander | None, on_llm_failure: OnLLMFailure, llm: str | None
) -> FailurePolicy | None:
    """``expander`` under the request's policy for a failing LLM (``request_base.OnLLMFailure``):
    stopping at a probe with ``error``, counting the queries that fell back either way."""
    if expander is None:
        return None
    return FailurePolicy(expander, stop_when_down=on_llm_failure == "error", llm=llm)


class SearchRequest(SiraRequest):
    """One search: the query, the index, and where SIRA's phrases come from (if anywhere).

    ``method="sira"`` takes exactly one phrase source: ``phrases`` (given with the request),
    ``expansions`` (a JSONL file, or a table keyed by query id or exact text), ``llm`` (a
    backend spec), or an expander the caller passes to ``search`` (a server's shared model).
    ``hyde`` and ``cot`` take ``llm`` (or a caller's expander of that method), which writes a
    text added to the query (``methods``).

    ``rerank`` N > 0 reranks the top N hits by their relevance to the query (SIRA §3.1) with
    ``llm``, which then only reads passages when ``phrases``, ``expansions`` or a caller's
    expander gives the phrases; 0 is off. Unset (None), ``method="sira"`` with an ``llm``
    reranks the top ``DEFAULT_RERANK_TOP_N`` (SIRA's own pipeline, ``rerank_depth``); any other
    request reranks nothing.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    query: str
    index: str
    method: RetrievalMethod = "bm25"
    k: K = 10
    tau: Tau | None = None
    weight: Weight | None = None
    task: Task | None = None
    phrases: list[str] | None = None
    expansions: Path | dict[str, list[str]] | None = None
    llm: str | None = None
    query_id: str | None = None
    rerank: Rerank | None = None
    source_fields: list[str] = Field(default_factory=lambda: ["title"])
    strict_expansions: bool = True
    on_llm_failure: OnLLMFailure = Field(default="error", description=ON_LLM_FAILURE_HELP)
    num_candidates: NumCandidates | None = Field(default=None, description=NUM_CANDIDATES_HELP)
    embedder: str | None = Field(default=None, description=EMBEDDER_HELP)

    @field_validator("query")
    @classmethod
    def _query(cls, value: str) -> str:
        return validation.query_text(value)

    @field_validator("phrases", mode="before")
    @classmethod
    def _phrases(cls, value: Sequence[object] | None) -> list[str] | None:
        return validation.phrases(value)

    @classmethod
    def coerce(cls, values: dict[str, Any]) -> dict[str, Any]:
        """``expansions`` may be a path (str or Path) or any mapping of sequences."""
        given = values.get("expansions")
        if isinstance(given, Mapping):
            values["expansions"] = {str(k): list(v) for k, v in given.items()}
        return values


def search(
    source: BackendSource,
    request: SearchRequest,
    *,
    expander: QueryExpander | None = None,
    reranker: LLMReranker | None = None,
    report: ReadReport | None = None,
    profiles: ProfileCache | None = None,
    embedder: Embedder | None = None,
) -> SiraResult:
    """Run ``request`` on the backend ``source`` is (or connects, once the request passed its
    checks); the result holds hits, the exact body, the candidate table, timings, and a note
    when SIRA fell back to plain BM25.

    ``expander`` is a caller-owned phrase source and ``reranker`` a caller-owned reranking
    model (neither closed here), e.g. a server's LLM; ``request.llm`` then only names it.
    ``profiles`` is a long-lived caller's cache of index profiles (a server's): the index's
    existence is still checked first, and its profile forgotten when it is missing or the
    search fails. Without it the profile is read for this search alone.
    ``embedder`` is a caller-owned query embedder for the vector methods (a server's, its
    model loaded once; not closed here); without it one is made from ``request.embedder``.
    Library failures come out as the workflow error kinds (``errors.classify``); an LLM that
    is not there is ``Unavailable`` naming it unless ``request.on_llm_failure`` is
    ``fallback``, which runs the query as plain BM25, said so in the result.
    """
    settings = request.settings()
    depth = settings.rerank_top_n
    additions = method_spec(request.method).additions
    if request.phrases is not None and additions == "generated":
        raise InvalidInput(
            f"phrases apply to method 'sira' only: {request.method!r} adds a text the LLM writes",
            field="phrases",
        )
    owned: QueryExpander | None = None
    if additions != "none" and (expander is not None or request.phrases is not None):
        # The phrases given win; ``llm`` is then only the reranking model.
        if request.expansions is not None:
            raise InvalidInput("give one source of phrases", field="expansions")
    elif expander is None:
        owned = choose_expander(
            request.method,
            expansions=request.expansions,
            llm=request.llm,
            task=settings.task,
            strict=request.strict_expansions,
            report=report,
            allow_both=depth > 0,
        )
        expander = owned
    owned_reranker: LLMReranker | None = None
    try:
        with classified():
            backend = backend_of(source)
            if not backend.index_exists(request.index):
                if profiles is not None:
                    profiles.forget(request.index)
                raise NotFound(
                    f"index {request.index!r} does not exist: ingest a corpus into it first",
                    field="index",
                )
            if reranker is None and depth:
                reranker = owned_reranker = choose_reranker(request.llm, depth)
            try:
                result = _search_one(
                    backend, request, settings, expander, reranker, profiles, embedder
                )
            except Exception:
                if profiles is not None:
                    # A mapping changed under a cached profile fails the search: read it anew.
                    profiles.forget(request.index)
                raise
    finally:
        if owned is not None:
            owned.close()
        if owned_reranker is not None:
            owned_reranker.close()
    return _say_fallback(request, result)


def _search_one(
    backend: SearchBackend,
    request: SearchRequest,
    settings: SiraSettings,
    expander: QueryExpander | None,
    reranker: LLMReranker | None,
    profiles: ProfileCache | None,
    embedder: Embedder | None = None,
) -> SiraResult:
    """``request``'s one query through SIRA's retriever (the caller's expander and reranker
    stay open; the retriever's own embedder, for dense and hybrid methods, is closed)."""
    from sira_seek.sira.retriever import SiraRetriever

    additions = method_spec(request.method).additions
    retriever = SiraRetriever(
        backend,
        request.index,
        settings=settings,
        expander=failure_policy(
            expander if additions != "none" else None, request.on_llm_failure, request.llm
        ),
        # dense needs no SIRA profile (the retriever makes none for it): none is read
        profile=(
            profiles.get(backend, request.index)
            if profiles is not None and method_spec(request.method).vectors != "only"
            else None
        ),
        source=list(request.source_fields),
        reranker=reranker,
        stop_when_llm_down=request.on_llm_failure == "error",
        method=request.method,
        embedder=embedder,
    )
    try:
        return retriever.search(
            request.query,
            query_id=request.query_id,
            phrases=request.phrases if additions == "phrases" else None,
            phrase_source="precomputed",
        )
    finally:
        if retriever.vectors is not None:
            retriever.vectors.close()


def fell_back_to_bm25(method: str, result: SiraResult) -> bool:
    """Whether a SIRA (``hyde``, ``cot``) request ran as plain BM25 because its phrase source
    (its LLM) had nothing for the query (not because grounding dropped every phrase: that is
    SIRA working as designed)."""
    return method_spec(method).additions != "none" and result.expansion.source == "none"


def _say_fallback(request: SearchRequest, result: SiraResult) -> SiraResult:
    """A SIRA request whose phrase source had nothing for the query ran as plain BM25: say so
    (``fell_back_to_bm25``, a note every front end shows, and a warning), instead of labelling
    BM25 hits SIRA."""
    if not fell_back_to_bm25(request.method, result):
        return result
    why = result.expansion.note or "the phrase source has no entry for this query"
    note = f"{fallback_note(request.method)}: {why}"
    if request.query_id is None and request.expansions is not None:
        note += " (a table keyed by query id needs the query's id)"
    logger.warning(
        "%s (query %r on %s)", note, request.query[:80], request.index, extra=REPORTED_IN_RESULT
    )
    return result.model_copy(update={"notes": [*result.notes, note], "fell_back_to_bm25": True})


class QueriesSearchRequest(SiraRequest):
    """Every query of a BEIR queries file (``{"_id", "text"}`` per line) searched as
    ``SearchRequest`` searches one: the same method, phrase sources, rerank and knobs. SIRA's
    LLM calls go out together (all expansions, then all reranks), which is what an offline
    batch round (``llm="batch:DIR#MODEL"``) needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    queries: Path
    index: str
    method: RetrievalMethod = "bm25"
    k: K = 10
    tau: Tau | None = None
    weight: Weight | None = None
    task: Task | None = None
    expansions: Path | None = None
    llm: str | None = None
    rerank: Rerank | None = None
    source_fields: list[str] = Field(default_factory=lambda: ["title"])
    strict: bool = True
    on_llm_failure: OnLLMFailure = Field(default="error", description=ON_LLM_FAILURE_HELP)
    num_candidates: NumCandidates | None = Field(default=None, description=NUM_CANDIDATES_HELP)
    embedder: str | None = Field(default=None, description=EMBEDDER_HELP)


def search_queries(
    source: BackendSource,
    request: QueriesSearchRequest,
    *,
    report: ReadReport | None = None,
) -> list[SiraResult]:
    """One result per query of ``request.queries``, in file order (bad lines stop the run,
    or with ``strict=False`` are skipped into ``report``), each with the note ``search``
    gives a SIRA query that fell back to plain BM25 (``fell_back_to_bm25``; a warning counts
    them). An LLM that is not there stops the run after one probe unless
    ``request.on_llm_failure`` is ``fallback``.

    With ``llm="batch:DIR#MODEL"`` the LLM calls go in offline rounds (``llm.batch_rounds``):
    ``WaitingForBatch`` names each round's file; the same call once its output is there goes
    on (expansions in one round, reranks in the next).
    """
    with batch_round(request.llm):
        return _search_queries(source, request, report or ReadReport())


def _search_queries(
    source: BackendSource, request: QueriesSearchRequest, report: ReadReport
) -> list[SiraResult]:
    from sira_seek.corpus import read_queries
    from sira_seek.sira.expansions import QueryInput
    from sira_seek.sira.retriever import SiraRetriever

    with classified():
        queries = read_queries(request.queries, report, strict=request.strict)
    if not queries:
        raise InvalidInput("no usable query (a JSON object with `_id` and `text`)", field="queries")
    settings = request.settings()
    expander = choose_expander(
        request.method,
        expansions=request.expansions,
        llm=request.llm,
        task=settings.task,
        strict=request.strict,
        report=report,
        allow_both=settings.rerank_top_n > 0,
    )
    reranker: LLMReranker | None = None
    try:
        with classified():
            backend = backend_of(source)
            if not backend.index_exists(request.index):
                raise NotFound(
                    f"index {request.index!r} does not exist: ingest a corpus into it first",
                    field="index",
                )
            reranker = choose_reranker(request.llm, settings.rerank_top_n)
            retriever = SiraRetriever(
                backend,
                request.index,
                settings=settings,
                expander=failure_policy(expander, request.on_llm_failure, request.llm),
                source=list(request.source_fields),
                reranker=reranker,
                stop_when_llm_down=request.on_llm_failure == "error",
                method=request.method,
            )
            try:
                results = retriever.search_many([QueryInput(text=q.text, id=q.id) for q in queries])
            finally:
                if retriever.vectors is not None:
                    retriever.vectors.close()
    finally:
        if expander is not None:
            expander.close()
        if reranker is not None:
            reranker.close()
    noted = [_fallback_noted(request.method, result) for result in results]
    fallbacks = sum(1 for r in noted if r.fell_back_to_bm25)
    if fallbacks:
        logger.warning(
            "%s for %d of %d queries (%s)",
            fallback_note(request.method),
            fallbacks,
            len(noted),
            request.index,
            extra=REPORTED_IN_RESULT,
        )
    return noted


def _fallback_noted(method: RetrievalMethod, result: SiraResult) -> SiraResult:
    if not fell_back_to_bm25(method, result):
        return result
    why = result.expansion.note or "the phrase source has no entry for this query"
    note = f"{fallback_note(method)}: {why}"
    return result.model_copy(update={"notes": [*result.notes, note], "fell_back_to_bm25": True})
