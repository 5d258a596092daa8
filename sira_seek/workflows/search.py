"""The search workflow: one BM25 or SIRA query, validated once for every front end.

``sira-seek search``, ``SiraSeek.search``, ``POST /search``, the MCP ``search`` tool and the
framework retrievers all build a ``SearchRequest`` and call ``search``; they differ only in
how they parse their input and render the ``SiraResult``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

from sira_seek.corpus import ReadReport
from sira_seek.sira.expansions import QueryExpander
from sira_seek.sira.results import SiraResult
from sira_seek.sira.settings import MAX_WEIGHT, Task

from . import validation
from .errors import InvalidInput, NotFound, classified, validation_message
from .sira_setup import BackendSource, RetrievalMethod, backend_of, choose_expander, sira_settings

logger = logging.getLogger(__name__)

FALLBACK_NOTE = "SIRA fell back to plain BM25"
"""How every front end says that a SIRA request ran as plain BM25 because its phrase source
had nothing for this query (a note in the result, a warning in the log)."""


class SearchRequest(BaseModel):
    """One search: the query, the index, and where SIRA's phrases come from (if anywhere).

    ``method="sira"`` takes exactly one phrase source: ``phrases`` (given with the request),
    ``expansions`` (a JSONL file, or a table keyed by query id or exact text), ``llm`` (a
    backend spec), or an expander the caller passes to ``search`` (a server's shared model).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    query: str
    index: str
    method: RetrievalMethod = "bm25"
    k: StrictInt = Field(default=10, ge=1, le=validation.MAX_K)
    tau: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)
    weight: float | None = Field(default=None, ge=0, le=MAX_WEIGHT, allow_inf_nan=False)
    task: Task | None = None
    phrases: list[str] | None = None
    expansions: Path | dict[str, list[str]] | None = None
    llm: str | None = None
    query_id: str | None = None
    rerank: StrictInt = Field(default=0, ge=0, le=100)
    source_fields: list[str] = Field(default_factory=lambda: ["title"])
    strict_expansions: bool = True

    @field_validator("query")
    @classmethod
    def _query(cls, value: str) -> str:
        return validation.query_text(value)

    @field_validator("index")
    @classmethod
    def _index(cls, value: str) -> str:
        return validation.index_name(value)

    @field_validator("phrases", mode="before")
    @classmethod
    def _phrases(cls, value: Sequence[object] | None) -> list[str] | None:
        return validation.phrases(value)

    @classmethod
    def build(cls, **values: Any) -> SearchRequest:
        """The request from keyword values, or ``InvalidInput`` naming each bad field.

        ``expansions`` may be a path (str or Path) or any mapping of sequences.
        """
        given = values.get("expansions")
        if isinstance(given, str):
            values["expansions"] = Path(given)
        elif isinstance(given, Mapping):
            values["expansions"] = {str(k): list(v) for k, v in given.items()}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise InvalidInput(validation_message(exc)) from None


def search(
    source: BackendSource,
    request: SearchRequest,
    *,
    expander: QueryExpander | None = None,
    report: ReadReport | None = None,
) -> SiraResult:
    """Run ``request`` on the backend ``source`` is (or connects, once the request passed its
    checks); the result holds hits, the exact body, the candidate table, timings, and a note
    when SIRA fell back to plain BM25.

    ``expander`` is a caller-owned phrase source (not closed here), e.g. a server's LLM.
    Library failures come out as the workflow error kinds (``errors.classify``).
    """
    from sira_seek.sira.retriever import SiraRetriever

    settings = sira_settings(
        tau=request.tau,
        weight=request.weight,
        task=request.task,
        size=request.k,
        rerank_top_n=request.rerank or None,
    )
    if request.rerank and not request.llm:
        raise InvalidInput("a rerank needs an LLM (the model that reads the passages)", field="llm")
    owned: QueryExpander | None = None
    if request.method == "sira" and (expander is not None or request.phrases is not None):
        if request.expansions is not None or (request.llm and not request.rerank):
            raise InvalidInput("give one source of phrases", field="expansions")
    elif expander is None:
        owned = choose_expander(
            request.method,
            expansions=request.expansions,
            llm=request.llm,
            task=settings.task,
            strict=request.strict_expansions,
            report=report,
            allow_both=bool(request.rerank),
        )
        expander = owned
    reranker = None
    try:
        with classified():
            backend = backend_of(source)
            if not backend.index_exists(request.index):
                raise NotFound(
                    f"index {request.index!r} does not exist: ingest a corpus into it first",
                    field="index",
                )
            if request.rerank:
                reranker = _reranker(request.llm, request.rerank)
            retriever = SiraRetriever(
                backend,
                request.index,
                settings=settings,
                expander=expander if request.method == "sira" else None,
                source=list(request.source_fields),
                reranker=reranker,
            )
            result = retriever.search(
                request.query,
                query_id=request.query_id,
                phrases=request.phrases if request.method == "sira" else None,
                phrase_source="precomputed",
            )
    finally:
        if owned is not None:
            owned.close()
    return _say_fallback(request, result)


def _reranker(llm: str | None, top_n: int) -> Any:
    from sira_seek.llm.errors import LLMCallError
    from sira_seek.sira.rerank import LLMReranker

    assert llm is not None
    try:
        return LLMReranker.from_spec(llm, top_n=top_n)
    except LLMCallError as exc:
        raise InvalidInput(f"LLM backend {llm!r} is unusable: {exc}", field="llm") from None


def fell_back_to_bm25(method: RetrievalMethod, result: SiraResult) -> bool:
    """Whether a SIRA request ran as plain BM25 because its phrase source had nothing for the
    query (not because grounding dropped every phrase: that is SIRA working as designed)."""
    return method == "sira" and result.expansion.source == "none"


def _say_fallback(request: SearchRequest, result: SiraResult) -> SiraResult:
    """A SIRA request whose phrase source had nothing for the query ran as plain BM25: say so
    (a note every front end shows, and a warning), instead of labelling BM25 hits SIRA."""
    if not fell_back_to_bm25(request.method, result):
        return result
    why = result.expansion.note or "the phrase source has no entry for this query"
    note = f"{FALLBACK_NOTE}: {why}"
    if request.query_id is None and request.expansions is not None:
        note += " (a table keyed by query id needs the query's id)"
    logger.warning("%s (query %r on %s)", note, request.query[:80], request.index)
    return result.model_copy(update={"notes": [*result.notes, note]})
