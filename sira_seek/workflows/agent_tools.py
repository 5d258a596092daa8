"""The agent tools over one index (grounded search, category look-up, fetch), as one workflow.

The same tools serve the agentic evaluation's loop (``workflows.agentic``, through the loop's
``agent.loop.AgentToolbox`` interface) and the MCP server (``sira_seek.mcp``, a front end): both
get them here, so neither builds a ``SiraRetriever`` or reads the index itself, and a tool
search ranks exactly as ``sira-seek search`` does (same settings, same retriever). The records
they return are the agent's (``sira_seek.agent.tools``), re-exported for the front ends.

Arguments are checked where they enter: the index name by the one index-name rule and ``tau``
/ ``weight`` by the search request's own fields (``workflows.fields``) when the tools are made,
so a server started with a bad value fails at start, not at the agent's first call.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from sira_seek.agent.tools import (
    MAX_K,
    CategoryDocuments,
    CategoryLookup,
    DocumentRef,
    FetchedDocument,
    GroundingDecision,
    Passage,
    SearchToolResult,
    ToolMethod,
)
from sira_seek.backend import SearchBackend, SearchHit
from sira_seek.documents import fetch_documents, field_text
from sira_seek.fields import CATEGORIES, CATEGORY_WORDS, PHRASES, TEXT, TITLE
from sira_seek.sira.categories import rank_neighbours
from sira_seek.sira.index_profile import IndexProfile, read_index_profile
from sira_seek.sira.retriever import SiraRetriever

from . import validation
from .errors import InvalidInput, NotFound, validation_message
from .fields import Tau, Weight
from .methods import method_spec
from .sira_setup import sira_settings

if TYPE_CHECKING:
    from sira_seek.embed import Embedder

__all__ = [
    "MAX_K",
    "AgentTools",
    "CategoryDocuments",
    "CategoryLookup",
    "DocumentRef",
    "FetchedDocument",
    "GroundingDecision",
    "Passage",
    "SearchToolResult",
    "ToolMethod",
    "open_agent_tools",
]

logger = logging.getLogger(__name__)


class ToolSettings(BaseModel):
    """The tools' SIRA settings, bounded by the search request's own field types."""

    model_config = ConfigDict(extra="forbid")

    tau: Tau | None = None
    weight: Weight | None = None


def tool_settings(tau: float | None, weight: float | None) -> ToolSettings:
    """``tau`` and ``weight`` checked as ``search`` checks them (same verdict, same words)."""
    try:
        return ToolSettings(tau=tau, weight=weight)
    except ValidationError as exc:
        raise InvalidInput(validation_message(exc)) from exc


def _at(source: dict[str, Any] | None, path: str) -> list[str]:
    """String values at a dotted path of ``_source`` (a single string counts as one)."""
    node: Any = source or {}
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, str):
        return [node]
    return [v for v in node or [] if isinstance(v, str)]


def _clean(values: Sequence[str] | None) -> list[str]:
    return [v.strip() for v in values or [] if v and v.strip()]


def _check_k(k: int, limit: int = MAX_K) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidInput(f"must be an integer, not {type(k).__name__}", field="k")
    if not 1 <= k <= limit:
        raise InvalidInput(f"must be between 1 and {limit}, not {k}", field="k")
    return k


class AgentTools:
    """Search, category look-up and fetch over one index, for an agent (or the MCP server).

    The index profile (which fields exist, whether categories do) is read once here; each call
    is then one DF check plus one search, as ``sira-seek search``. ``tau`` and ``weight`` default
    to ``SiraSettings`` (0.1 and 0.5), so a tool search ranks exactly as the command line does;
    they and the index name are checked here, before any engine call. The backend stays the
    caller's (``close`` leaves it open).
    """

    def __init__(
        self,
        backend: SearchBackend,
        index: str,
        *,
        tau: float | None = None,
        weight: float | None = None,
    ) -> None:
        checked = tool_settings(tau, weight)
        self.backend = backend
        self.index = validation.index_name(index)
        self._tau, self._weight = checked.tau, checked.weight
        self.profile: IndexProfile = read_index_profile(self.backend, self.index)
        # The vector methods' query embedder: one for the server's life, made on first use.
        self._embedder: Embedder | None = None
        self._embedder_lock = threading.Lock()

    def _query_embedder(self) -> Embedder:
        from sira_seek.embed import make_embedder

        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = make_embedder(sira_settings().embedder)
            return self._embedder

    def close(self) -> None:
        """Close the query embedder, if a vector search made one (not the backend)."""
        with self._embedder_lock:
            if self._embedder is not None:
                self._embedder.close()
                self._embedder = None

    # -- search ----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        expansions: list[str] | None = None,
        k: int = 10,
        *,
        categories: list[str] | None = None,
        method: ToolMethod | None = None,
    ) -> SearchToolResult:
        """BM25 for ``query`` alone; SIRA when expansions (or categories) are given; or the
        ``method`` named (``dense``, ``hybrid``: the index's vectors, no expansions;
        ``sira-hybrid``: SIRA's grounded expansions fused with the vectors).

        The expansions are grounded first: each is kept only when some window of it occurs in
        at most ``tau * |C|`` documents, and ``grounding`` says what happened to every one.
        """
        query = validation.query_text(query)
        size = _check_k(k, validation.MAX_K)
        settings = sira_settings(tau=self._tau, weight=self._weight, size=size)
        phrases = _clean(validation.phrases(expansions))
        cats = _clean(validation.phrases(categories, field="categories"))
        given = bool(phrases or cats)
        method = method or ("sira" if given else "bm25")
        spec = method_spec(method)
        if given and spec.additions == "none":
            raise InvalidInput(
                f"expansions and categories apply to sira and sira-hybrid, not {method!r}",
                field="expansions",
            )
        retriever = SiraRetriever(
            self.backend,
            self.index,
            settings=settings,
            profile=self.profile,
            source=[TITLE],
            method=method,
            embedder=self._query_embedder() if spec.vectors != "none" else None,
        )
        result = retriever.search(query, phrases=phrases if given else None, categories=cats)
        texts = self._texts([h.id for h in result.hits])
        grounding = [
            GroundingDecision(
                phrase=c.phrase, df=c.doc_freq, kept=c.kept, decision=c.decision, why=c.reason
            )
            for c in result.candidates.candidates
        ]
        grounding += [
            GroundingDecision(
                phrase=c.category,
                kind="category",
                df=c.doc_count,
                kept=c.use is not None,
                decision=c.decision,
                why=_category_reason(c.decision, c.doc_count, c.neighbours),
            )
            for c in result.categories
        ]
        notes = list(result.notes)
        if cats and self.profile.category_field is None:
            notes.append("the index holds no categories: the categories were ignored")
        return SearchToolResult(
            query=result.query,
            method=method,
            passages=[
                Passage(id=h.id, title=h.title, text=texts.get(h.id, ""), score=h.score)
                for h in result.hits
            ],
            total=result.total,
            grounding=grounding,
            doc_count=result.candidates.doc_count,
            max_doc_freq=result.candidates.max_doc_freq,
            plain_bm25=result.plain_bm25,
            notes=notes,
        )

    def _texts(self, ids: list[str]) -> dict[str, str]:
        """Passage texts of the hits in one round trip (the ranked search fetches titles only,
        exactly as ``search --json``, so its request stays the one Dev Tools shows)."""
        found = fetch_documents(self.backend, self.index, ids, (TEXT,))
        return {i: field_text(source, TEXT) for i, source in found.items()}

    # -- categories ------------------------------------------------------------------------
    def categories(self, name: str, k: int = 10) -> CategoryLookup:
        """Whether ``name`` is an existing category (exact keyword) and the ``k`` nearest ones.

        Nearest means sharing the most words (Jaccard over words), looked up on the category
        words subfield: the same neighbours SIRA's category grounding reports.
        """
        _check_k(k)
        name = validation.category_name(name)
        field = self.profile.category_field
        if field is None:
            # Read again: the index may have been enriched since, and an unreachable cluster
            # or a deleted index must be an error, not "no categories".
            self.profile = read_index_profile(self.backend, self.index)
            field = self.profile.category_field
        if field is None:
            return CategoryLookup(name=name, available=False)
        exact, near = self.backend.msearch(
            self.index,
            [
                {"size": 0, "track_total_hits": True, "query": {"term": {field: name}}},
                {
                    # neighbours come from documents, several per category: look well past k
                    "size": max(50, 10 * k),
                    "_source": [field],
                    "query": {"match": {CATEGORY_WORDS: name}},
                },
            ],
        )
        found = [c for h in near.hits for c in _at(h.source, field)]
        nearest = [c for c in rank_neighbours(name, found) if c != name][:k]
        return CategoryLookup(
            name=name,
            available=True,
            exists=exact.total > 0,
            doc_count=exact.total,
            nearest=nearest,
        )

    def documents(self, category: str, k: int = 10) -> CategoryDocuments:
        """The first ``k`` documents (in index order) filed under exactly ``category``."""
        _check_k(k)
        category = category.strip()
        field = self.profile.category_field
        if field is None or not category:
            return CategoryDocuments(category=category)
        found = self.backend.search(
            self.index,
            {
                "size": k,
                "track_total_hits": True,
                "_source": [TITLE],
                "query": {"term": {field: category}},
                # a filter scores every document alike: a stable order makes the list repeatable
                "sort": [{"_doc": "asc"}],
            },
        )
        return CategoryDocuments(
            category=category,
            total=found.total,
            documents=[_ref(h) for h in found.hits],
        )

    # -- fetch -----------------------------------------------------------------------------
    def fetch(self, doc_id: str) -> FetchedDocument | None:
        """The whole stored document, or None when the index has no such id."""
        doc_id = validation.doc_id(doc_id)
        hit = self.backend.get(self.index, doc_id)
        if hit is None:
            return None
        source = hit.source or {}
        return FetchedDocument(
            id=hit.id,
            title=_first(source, TITLE),
            text=_first(source, TEXT) or "",
            categories=_at(source, CATEGORIES),
            keywords=_at(source, PHRASES),
        )

    def fetch_document(self, doc_id: str) -> FetchedDocument:
        """``fetch``, with an absent document a ``NotFound`` saying whether the id or the whole
        index is missing (deleted since the tools were opened): what a tool caller acts on."""
        found = self.fetch(doc_id)
        if found is not None:
            return found
        if not self.backend.index_exists(self.index):
            raise NotFound(f"index {self.index!r} does not exist", field="index")
        raise NotFound(f"no document with id {doc_id!r} in index {self.index!r}")


def _first(source: dict[str, Any], path: str) -> str | None:
    values = _at(source, path)
    return values[0] if values else None


def _ref(hit: SearchHit) -> DocumentRef:
    return DocumentRef(id=hit.id, title=_first(hit.source or {}, TITLE))


def _category_reason(decision: str, doc_count: int, neighbours: list[str]) -> str:
    if decision == "exists":
        return f"category in {doc_count} documents"
    if decision == "close_match":
        return "not a category of the index; nearest: " + ", ".join(neighbours[:3])
    return "not a category of the index, and none shares its words"


def open_agent_tools(
    backend: SearchBackend, index: str, *, tau: float | None = None, weight: float | None = None
) -> AgentTools:
    """The tools on ``index``, refused at start when the index name is malformed, ``tau`` or
    ``weight`` is out of bounds (``InvalidInput``) or the index does not exist (``NotFound``):
    what a server or an evaluation would otherwise learn only at the first tool call."""
    name = validation.index_name(index)
    tool_settings(tau, weight)
    if not backend.index_exists(name):
        raise NotFound(
            f"index {name!r} does not exist: run `sira-seek ingest` first", field="index"
        )
    return AgentTools(backend, name, tau=tau, weight=weight)
