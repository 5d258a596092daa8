"""The tools an agent calls on one index: grounded search, category look-up, fetch a document.

These are the three actions of the SIRA paper's agentic setting (BrowseComp-Wikipedia): the agent
writes its own expansions, and the index's statistics still decide which of them reach the
query, so a tool call can never smuggle an unseen or stopword-like phrase into the ranking. Every
tool returns a pydantic model, so the same object is a Python result, an MCP tool's structured
output and a JSON line in an agent's trace. Engine-agnostic: everything goes through the
``SearchBackend`` of a ``SiraSeek`` facade.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from sira_seek.backend import SearchHit
from sira_seek.client import SiraSeek
from sira_seek.fields import CATEGORIES, CATEGORY_WORDS, PHRASES, TEXT, TITLE
from sira_seek.sira.categories import rank_neighbours
from sira_seek.sira.index_profile import IndexProfile, read_index_profile
from sira_seek.sira.retriever import SiraRetriever
from sira_seek.workflows import validation
from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.methods import method_spec
from sira_seek.workflows.sira_setup import sira_settings

if TYPE_CHECKING:
    from sira_seek.embed import Embedder

logger = logging.getLogger(__name__)

#: The search tool's methods: those of the one table (``workflows.methods``) that need no LLM
#: of ours; ``sira``'s and ``sira-hybrid``'s phrases are the calling agent's ``expansions``.
#: ``tests/unit/agent`` checks it against the table.
ToolMethod = Literal["bm25", "sira", "dense", "hybrid", "sira-hybrid"]

#: Largest ``k`` of the category tools (nearest categories, documents of one category). The
#: search tool's ``k`` is the search workflow's own (``sira_seek.workflows.fields.K``), so an
#: agent gets the verdict the command line, the library and the HTTP API give.
MAX_K = 100


class Passage(BaseModel):
    """One retrieved passage, titled, with the id ``fetch`` and evaluation use."""

    id: str
    title: str | None = None
    text: str = ""
    score: float


class GroundingDecision(BaseModel):
    """What the index said about one proposed expansion (or category)."""

    phrase: str
    kind: Literal["phrase", "category"] = "phrase"
    df: int | None = Field(default=None, description="Document frequency of the deciding window.")
    kept: bool
    decision: str = Field(description="kept, absent, too_common, ... (the candidate table's).")
    why: str


class SearchToolResult(BaseModel):
    """One search: the passages and why each expansion was or was not used."""

    query: str
    method: ToolMethod
    passages: list[Passage] = Field(default_factory=list)
    total: int = 0
    grounding: list[GroundingDecision] = Field(default_factory=list)
    doc_count: int = Field(default=0, description="|C|: live documents in the index.")
    max_doc_freq: float = Field(
        default=0.0, description="tau * |C|: highest DF a kept phrase may have."
    )
    plain_bm25: bool = Field(description="True when no expansion survived grounding.")
    notes: list[str] = Field(default_factory=list)


class CategoryLookup(BaseModel):
    """Is ``name`` one of the index's grounded categories, and which existing ones are near it."""

    name: str
    available: bool = Field(description="False when the index holds no categories at all.")
    exists: bool = False
    doc_count: int = 0
    nearest: list[str] = Field(
        default_factory=list, description="Existing categories sharing words, closest first."
    )


class DocumentRef(BaseModel):
    id: str
    title: str | None = None


class CategoryDocuments(BaseModel):
    """Documents filed under one exact category."""

    category: str
    total: int = 0
    documents: list[DocumentRef] = Field(default_factory=list)


class FetchedDocument(BaseModel):
    """A whole document as stored, with its enrichment when sira-sync wrote any."""

    id: str
    title: str | None = None
    text: str = ""
    categories: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)


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
    to ``SiraSettings`` (0.1 and 0.5), so a tool search ranks exactly as the command line does.
    """

    def __init__(
        self,
        client: SiraSeek,
        index: str,
        *,
        tau: float | None = None,
        weight: float | None = None,
    ) -> None:
        self.client = client
        self.backend = client.backend
        self.index = index
        self._tau, self._weight = tau, weight
        self.profile: IndexProfile = read_index_profile(self.backend, index)
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
        """Close the query embedder, if a vector search made one (not the client)."""
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
        if not ids:
            return {}
        found = self.backend.search(
            self.index,
            {"size": len(ids), "_source": [TEXT], "query": {"ids": {"values": ids}}},
        )
        return {h.id: str((h.source or {}).get(TEXT, "")) for h in found.hits}

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
