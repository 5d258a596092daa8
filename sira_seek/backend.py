"""The engine-agnostic view of a search cluster.

Algorithms in ``sira_seek`` talk to a ``SearchBackend``; only ``sira_seek.esplugin`` knows
Elasticsearch or OpenSearch. Records are pydantic models so results can be logged, compared
and serialised without engine types leaking out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

from pydantic import BaseModel, Field


class ClusterInfo(BaseModel):
    """Which engine answered, detected from the cluster itself."""

    engine: str  # "elasticsearch" | "opensearch" | a plugin's name
    version: str
    url: str
    cluster_name: str | None = None

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])


class Capabilities(BaseModel):
    """What the cluster can do; analyzers and queries adapt to it instead of failing."""

    english_analyzer: bool = False
    porter_stem: bool = False
    shingle: bool = True
    named_queries_score: bool = False
    point_in_time: bool = True
    combined_fields: bool = False
    modules: list[str] = Field(default_factory=list)
    vectors: bool = Field(
        default=False,
        description="Dense vector fields and kNN search: Elasticsearch 8.4+ (dense_vector, "
        "free on every licence); OpenSearch with the k-NN plugin (knn_vector).",
    )
    rrf: bool = Field(
        default=False,
        description="The engine's own reciprocal rank fusion is usable here: Elasticsearch's "
        "rank-rrf module under a platinum, enterprise or trial licence (not basic); "
        "OpenSearch's score-ranker-processor (neural-search plugin, 2.19+).",
    )
    score_normalization: bool = Field(
        default=False,
        description="OpenSearch's normalization-processor (neural-search plugin): hybrid "
        "queries with scores normalised and combined by the engine.",
    )


VectorSimilarity = Literal["cosine", "dot_product", "l2"]
"""What vectors are compared by: cosine, dot product (of unit vectors), Euclidean distance."""
VECTOR_SIMILARITIES: tuple[VectorSimilarity, ...] = ("cosine", "dot_product", "l2")
MAX_NUM_CANDIDATES = 10_000
"""The largest kNN candidate list: Elasticsearch refuses more ``num_candidates``."""


class SearchHit(BaseModel):
    id: str
    score: float
    source: dict[str, Any] | None = None
    matched_queries: dict[str, float] | list[str] | None = None
    seq_no: int | None = None
    primary_term: int | None = None
    sort: list[Any] | None = None


class SearchResult(BaseModel):
    hits: list[SearchHit]
    total: int
    took_ms: int


class TermStatistic(BaseModel):
    """Index-wide statistics of one analysed term (a unigram or a shingle)."""

    term: str
    doc_freq: int  # 0 when the index has never seen the term
    total_term_freq: int = 0


class FieldStatistics(BaseModel):
    doc_count: int
    sum_doc_freq: int = 0
    sum_ttf: int = 0


class TextTermStatistics(BaseModel):
    """Statistics of every term the field's analyzer produces for one candidate text."""

    text: str
    field: str
    terms: list[TermStatistic]
    field_statistics: FieldStatistics | None = None


class TermCount(BaseModel):
    """How many live documents hold one analysed term in one field."""

    field: str
    term: str
    doc_freq: int


class LiveDocFrequencies(BaseModel):
    """Exact document frequencies over LIVE documents of the whole index (every shard).

    Unlike Lucene term statistics these do not depend on the shard layout and never count
    deleted copies left behind by updates: the same corpus gives the same numbers on one shard
    or on twenty, before or after a merge.
    """

    doc_count: int = Field(description="Live documents in the index: |C|.")
    counts: list[TermCount] = Field(default_factory=list)
    round_trips: int = Field(default=1, description="Engine requests the counting took.")

    def get(self, field: str, term: str) -> int:
        for c in self.counts:
            if c.field == field and c.term == term:
                return c.doc_freq
        return 0

    def as_dict(self) -> dict[tuple[str, str], int]:
        return {(c.field, c.term): c.doc_freq for c in self.counts}


class TermDocFreqBounds(BaseModel):
    """Analysed terms with an UPPER BOUND of each one's live document frequency.

    A bound is Lucene's ``docFreq`` summed over one copy of every shard: it still counts the
    deleted copies updates leave behind until a merge, so it can exceed the live count but never
    fall below it (each copy's reader holds every live document of its shard). A bound of 0 is
    therefore an exact 0. Cheap (term dictionary look-ups, no document is visited), but only a
    bound: a decision it cannot settle needs ``live_doc_freqs``.
    """

    texts: list[dict[str, dict[str, int]]] = Field(
        description="One entry per text, in order: field -> {term: DF upper bound}."
    )
    round_trips: int = Field(default=1, description="Engine requests the bounds took.")


class ShardRoutings(BaseModel):
    """One routing value per shard of ONE concrete index, in shard order: an artificial
    document sent with ``routings[i]`` is analysed and looked up on shard ``i``."""

    index: str = Field(description="The concrete index the routing values are for.")
    routings: list[str]
    round_trips: int = Field(default=1, description="Engine requests finding them took.")


@dataclass(frozen=True, slots=True)
class ArtificialDocument:
    """A document that is analysed and looked up, never stored (``term_vectors``).

    ``values`` maps a source field (dotted path) to its value, a list for a multi-valued field;
    ``fields`` names the indexed fields to read (a subfield such as ``text.shingles`` is made
    from its parent's value). ``routing`` picks the shard whose statistics answer.
    ``positions``: each term's positions too (a multi-valued field's values lie
    ``POSITION_GAP`` positions apart, as Lucene indexes them). ``as_given``: every value is ONE
    term exactly as given (the ``keyword`` analyzer), to look terms up without analysing them.
    """

    values: Mapping[str, str | list[str]]
    fields: Sequence[str]
    routing: str | None = None
    positions: bool = False
    as_given: bool = False


class TermVectors(NamedTuple):
    """One artificial document's answer. ``doc_freqs``: field -> {term: its Lucene ``docFreq``
    on the shard that answered} (0 when the shard lacks it; deleted copies counted until a
    merge), terms in Lucene's (sorted) order; ``positions``: field -> {term: its positions},
    only for a document that asked for them. Plain dicts, not models: SIRA reads one per query
    and a pack's hold thousands of terms."""

    doc_freqs: dict[str, dict[str, int]]
    positions: dict[str, dict[str, tuple[int, ...]]]


class AnalyzedToken(NamedTuple):
    """One token of ``analyze``: its term and where it lies in the values, in UTF-16 code units
    (Java strings), the values joined with one unit between them (the offset gap)."""

    term: str
    start_offset: int
    end_offset: int


POSITION_GAP = 100
"""The position gap between the values of a multi-valued text field: the engines' default
``position_increment_gap``, and what this project's mappings set."""


class IndexDocCounts(BaseModel):
    """One concrete index's document counts, read at one moment: what SIRA's one-round-trip DF
    check needs beside Lucene's per-shard ``docFreq`` (see ``sira.df_bounds``).

    With ``deleted_docs == 0`` no copy of any shard holds a deleted document, so a ``docFreq``
    summed over the shards IS the live document frequency; otherwise it is only an upper bound.
    """

    index: str = Field(description="The one concrete index behind the name asked for.")
    uuid: str | None = Field(
        default=None, description="The index's uuid: a new index under the same name has another."
    )
    doc_count: int = Field(description="Live documents, as a search counts them: |C|.")
    deleted_docs: int = Field(
        description="Deleted documents still in segments, over every copy (primaries and "
        "replicas): Lucene term statistics count them until a merge."
    )
    round_trips: int = Field(default=1, description="Engine requests the counts took.")


class EngineError(RuntimeError):
    """The cluster refused a request or cannot be reached, explained in plain words.

    Every engine plugin raises this (or a subclass) for cluster failures, so code above the
    protocol never needs to know which engine, or which client library, failed."""


class AnalysisRefusedError(EngineError):
    """The engine refused to analyse values with a field's analyzer (HTTP 400).
    ``too_many_tokens``: the values make more tokens than one request may
    (``index.analyze.max_token_count``); fewer values at a time may pass."""

    def __init__(self, message: str, *, too_many_tokens: bool = False) -> None:
        super().__init__(message)
        self.too_many_tokens = too_many_tokens


class ScanContextLostError(RuntimeError):
    """A point-in-time scan cannot go on: its context expired (a page outlasted the keep-alive)
    or the node holding part of it left the cluster. Starting a new scan is safe."""


class PartialUpdate(BaseModel):
    """A bulk partial ``update``; ``seq_no``/``primary_term`` guard against lost updates."""

    id: str
    doc: dict[str, Any]
    if_seq_no: int | None = None
    if_primary_term: int | None = None
    upsert: bool = False


class BulkItemError(BaseModel):
    id: str | None
    status: int
    reason: str


class BulkResult(BaseModel):
    succeeded: int = 0
    noop: int = 0
    errors: list[BulkItemError] = Field(default_factory=list)

    def merge(self, other: BulkResult) -> BulkResult:
        return BulkResult(
            succeeded=self.succeeded + other.succeeded,
            noop=self.noop + other.noop,
            errors=[*self.errors, *other.errors],
        )


@runtime_checkable
class SearchBackend(Protocol):
    """What SIRA, sira-sync, SEEK and evaluation need from a cluster."""

    name: str
    info: ClusterInfo

    def capabilities(self) -> Capabilities: ...

    def wait_for_health(self, status: str = "yellow", timeout_s: float = 60.0) -> str: ...

    def index_exists(self, index: str) -> bool: ...

    def create_index(self, index: str, body: Mapping[str, Any]) -> None: ...

    def ensure_corpus_index(self, index: str, *, shards: int = 1, replicas: int = 0) -> bool: ...

    def resolve_name(self, name: str) -> tuple[list[str], str | None]: ...

    def delete_index(self, index: str) -> None: ...

    def refresh(self, index: str) -> None: ...

    def count(self, index: str, query: Mapping[str, Any] | None = None) -> int: ...

    def deleted_docs(self, index: str) -> int: ...

    def expunge_deletes(self, index: str, *, timeout_s: float = 3600.0) -> int: ...

    def get_mapping(self, index: str) -> dict[str, Any]: ...

    def put_mapping(
        self, index: str, properties: Mapping[str, Any], meta: Mapping[str, Any] | None = None
    ) -> None:
        """Add ``properties``; ``meta`` replaces the mapping's whole ``_meta`` when given."""
        ...

    def bulk_upsert(self, index: str, docs: Iterable[Mapping[str, Any]]) -> BulkResult: ...

    def bulk_index(self, index: str, docs: Iterable[Mapping[str, Any]]) -> BulkResult: ...

    def bulk_partial_update(self, index: str, updates: Iterable[PartialUpdate]) -> BulkResult: ...

    def get(self, index: str, doc_id: str) -> SearchHit | None: ...

    def search(
        self, index: str, body: Mapping[str, Any], params: Mapping[str, Any] | None = None
    ) -> SearchResult:
        """Run one search. Scores use index-wide term statistics (``search_type`` is
        ``dfs_query_then_fetch`` unless ``params`` names another), so a ranking does not
        depend on how many shards the index has."""
        ...

    def msearch(
        self,
        index: str,
        bodies: Sequence[Mapping[str, Any]],
        params: Mapping[str, Any] | None = None,
    ) -> list[SearchResult]:
        """Several searches in one round trip, scored as ``search`` scores them."""
        ...

    def term_statistics(
        self, index: str, field: str, texts: list[str], *, source_field: str | None = None
    ) -> list[TextTermStatistics]:
        """Lucene term statistics of ONE shard (the one an artificial document lands on).

        Exact only on a one-shard index without deleted copies; kept for comparison and for
        ``ttf``. Grounding uses ``sira.df_bounds`` (``docFreq`` summed over every shard,
        trusted only without deleted documents) and ``live_doc_freqs`` instead.
        """
        ...

    def analyze_terms(
        self, index: str, fields: Sequence[str], texts: Sequence[str]
    ) -> list[dict[str, list[str]]]:
        """The distinct terms each field's analyzer makes of each text, in ONE round trip.

        One entry per text, in order; each maps every field in ``fields`` to its terms.
        """
        ...

    def live_doc_freqs(self, index: str, terms: Sequence[tuple[str, str]]) -> LiveDocFrequencies:
        """Live-document DF of each ``(field, term)`` over every shard, plus |C|, in ONE round
        trip (batched internally only beyond engine limits on the number of clauses)."""
        ...

    def index_doc_counts(self, index: str) -> IndexDocCounts | None:
        """|C| and the deleted-document count of the one index behind ``index`` (a name or an
        alias), with its concrete name and uuid; None when ``index`` names several indexes or
        the credentials may not read index stats (then DFs are counted live)."""
        ...

    def shard_routings(self, index: str) -> ShardRoutings | None:
        """One routing value per shard of the one concrete index behind ``index``, found with
        the engine's own routing and kept while the index has the same shards. None when
        ``index`` names several indexes or a routing value spans several shards (partitioned
        routing): no per-shard statistics then."""
        ...

    def term_vectors(self, index: str, docs: Sequence[ArtificialDocument]) -> list[TermVectors]:
        """ONE request: each artificial document analysed by its fields' own analyzers (or
        taken as given), with each term's ``docFreq`` on the shard its routing names (and its
        positions when asked). One answer per document, in order. Raises ``EngineError`` when
        any document fails."""
        ...

    def analyze(self, index: str, field: str, values: Sequence[str]) -> list[AnalyzedToken]:
        """ONE request: ``field``'s index analyzer over ``values`` as one multi-valued input,
        every token with its offsets (which run on from value to value: each value's length
        in UTF-16 units plus one). ``AnalysisRefusedError`` when the engine refuses the
        analysis (``too_many_tokens`` when over its token cap)."""
        ...

    def index_settings(self, index: str) -> dict[str, dict[str, Any]]:
        """The ``index`` settings block of each concrete index behind ``index`` (or alias)."""
        ...

    def aliases(self, name: str) -> dict[str, list[str]]:
        """Concrete index -> its aliases, for the indexes ``name`` resolves to ({} if none)."""
        ...

    def update_aliases(self, actions: Sequence[Mapping[str, Any]]) -> None:
        """Apply ``add`` / ``remove`` alias actions atomically."""
        ...

    def explain(self, index: str, doc_id: str, query: Mapping[str, Any]) -> dict[str, Any] | None:
        """The engine's score explanation of one document for ``query`` (None if no match)."""
        ...

    def scan(
        self,
        index: str,
        *,
        query: Mapping[str, Any] | None = None,
        page_size: int = 500,
        slice_id: int | None = None,
        max_slices: int | None = None,
        source: list[str] | bool = True,
    ) -> Iterator[list[SearchHit]]:
        """Pages of a consistent point-in-time view; raises ``ScanContextLostError`` when the
        view is gone (expired, or a node holding it left) rather than returning a partial page."""
        ...

    def vector_mapping(self, dims: int, similarity: VectorSimilarity) -> dict[str, Any]:
        """The mapping of a dense vector field of ``dims`` dimensions compared by
        ``similarity``, indexed for approximate kNN. An index that will hold one also needs
        ``vector_index_settings()`` at creation (``ensure_corpus_index`` adds them)."""
        ...

    def vector_index_settings(self) -> dict[str, Any]:
        """The ``index`` settings a vector field needs at index creation ({} if none):
        OpenSearch's static ``knn: true``, which an open index cannot take later."""
        ...

    def knn_search(
        self,
        index: str,
        field: str,
        vector: Sequence[float],
        *,
        k: int,
        num_candidates: int,
        source: Sequence[str] | None = None,
    ) -> SearchResult:
        """The ``k`` nearest documents to ``vector`` in ``field``, nearest first (approximate:
        each shard looks at ``num_candidates`` candidates; more is slower and closer to
        exact). ``source``: the fields to return; None returns every field but the vector.
        Scores are the engine's own (they differ between engines for the same vectors):
        only their order within one result is comparable."""
        ...

    def close(self) -> None: ...
