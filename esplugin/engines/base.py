"""Behaviour shared by the Elasticsearch and OpenSearch backends.

Both engines speak the same REST dialect for what sira-seek needs; each subclass only says
how to send a request with its own client and where the two APIs differ (point in time).
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from sira_seek.backend import (
    MAX_NUM_CANDIDATES,
    VECTOR_SIMILARITIES,
    AnalysisRefusedError,
    AnalyzedToken,
    ArtificialDocument,
    BulkItemError,
    BulkResult,
    Capabilities,
    ClusterInfo,
    FieldStatistics,
    IndexDocCounts,
    LiveDocFrequencies,
    PartialUpdate,
    ScanContextLostError,
    SearchHit,
    SearchResult,
    ShardRoutings,
    TermCount,
    TermStatistic,
    TermVectors,
    TextTermStatistics,
    VectorSimilarity,
)
from sira_seek.fields import SUBFIELD_PARENT
from sira_seek.index_layout import corpus_index_body
from sira_seek.input_errors import InputError

from .errors import (
    EngineRequestError,
    NotConcreteNameError,
    SiraSeekEngineError,
    VectorsUnavailableError,
)

BULK_CHUNK = 500
# Scores from index-wide term statistics: a ranking must not depend on the shard layout. On a
# one-shard index both engines skip the extra DFS phase, so it costs nothing there.
GLOBAL_STATS = "dfs_query_then_fetch"
# Filters per counting search: well below both engines' default bucket limit
# (search.max_buckets, 65,535), so one search counts the windows of 1,000 phrases.
FILTERS_PER_SEARCH = 10_000
# How many routing values shard_routings tries to find one for every shard.
ROUTING_PROBES_PER_SHARD = 64
# How the engines say a point-in-time page cannot be served any more: the context expired or
# was freed ("search_context_missing"), or a node that held part of it left the cluster
# (OpenSearch's TransportSearchAction: HTTP 500 "no node found for id: <node>", seen in a
# rolling restart), or is back but not yet reconnected (HTTP 500 "node_not_connected_exception",
# the same rolling restart later on; a restarted node has no search contexts anyway). Either
# way the scan must start again from a new point in time.
_CONTEXT_LOST = (
    "search_context_missing",
    "No search context found",
    "SearchContextMissing",
    "no node found for id",
    "node_not_connected_exception",
)
ANALYZE_FILTER_PATH = "tokens.token,tokens.start_offset,tokens.end_offset"
"""What ``analyze`` reads of an ``_analyze`` answer (``filter_path``): without the token types
and positions a pack's answer is ~40% smaller and parses ~40% faster."""

BULK_FILTER_PATH = "items.*._id,items.*.status,items.*.result,items.*.error"
"""What ``_send_bulk`` reads of a bulk answer (``filter_path``): each item's shard counts,
index name, version and sequence numbers are left out, about two thirds of the answer."""

# Analyzer probes: tries of one probe on a transient error, and the first pause (then doubled).
ANALYZE_ATTEMPTS = 4
ANALYZE_BACKOFF_S = 0.5
# The engines' answer to an `_analyze` naming an analyzer, tokenizer or filter they lack:
# HTTP 400 with this root cause ("failed to find global analyzer [english]").
logger = logging.getLogger(__name__)

_ABSENT = (400, "illegal_argument_exception")


def path_segment(name: str) -> str:
    """``name`` percent-encoded as ONE path segment: a ``/`` in an index name can never
    reach another endpoint (``idx/_refresh``); the engines decode it after routing, so a
    wildcard or a list still means what it says."""
    return quote(name, safe="")


NOT_CONCRETE_CHARS = frozenset("*?,")
"""Characters that make an index expression name several indexes: wildcards and lists."""


def concrete_name(name: str, *, action: str) -> str:
    """``name`` when it can only mean one index or alias; else ``NotConcreteNameError``.

    The engine layer's own guard for destructive calls, whatever the caller checked: a
    wildcard or a list (``*``, ``?``, ``,``), ``_all`` or any name starting with ``_``, an
    exclusion (``-x``, ``+x``), or blanks. ``expand_wildcards=none`` is not a substitute:
    OpenSearch 2.19 then acknowledges ``DELETE /x*`` and ``DELETE /_all`` as no-ops but still
    deletes every index of ``a,b``, and an alias there becomes a silent no-op instead of its
    400 "matches an alias".
    """
    if not name or any(c in NOT_CONCRETE_CHARS or c.isspace() for c in name) or name[0] in "_-+":
        raise NotConcreteNameError(
            f"{action} takes one concrete index name, not {name!r}: wildcards, lists, "
            "'_all' and exclusions are refused"
        )
    return name


def check_vector_field(dims: int, similarity: str) -> None:
    """Refuse a vector field no engine could map: dimensions below 1, an unknown similarity."""
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise InputError(f"a vector field needs a positive number of dimensions, not {dims!r}")
    if similarity not in VECTOR_SIMILARITIES:
        raise InputError(
            f"unknown vector similarity {similarity!r}: one of {', '.join(VECTOR_SIMILARITIES)}"
        )


def check_knn_request(vector: Sequence[float], *, k: int, num_candidates: int) -> None:
    """Refuse a kNN request no engine could answer sensibly, before any request: an empty or
    non-finite vector, ``k`` < 1, fewer candidates than ``k`` or more than
    ``MAX_NUM_CANDIDATES`` (Elasticsearch's own limits, kept on OpenSearch too so that one
    request means the same on both)."""
    if not vector:
        raise InputError("a kNN search needs a query vector with at least one dimension")
    if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in vector):
        raise InputError("a kNN query vector must hold finite numbers only")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive whole number, not {k!r}")
    if not isinstance(num_candidates, int) or not k <= num_candidates <= MAX_NUM_CANDIDATES:
        raise InputError(
            f"num_candidates must be between k ({k}) and {MAX_NUM_CANDIDATES}, "
            f"not {num_candidates!r}"
        )


def context_lost(message: str) -> bool:
    """Whether an engine error on a point-in-time page means the context is gone."""
    return any(marker in message for marker in _CONTEXT_LOST)


def _with_global_stats(params: Mapping[str, Any] | None) -> dict[str, Any]:
    out = dict(params or {})
    out.setdefault("search_type", GLOBAL_STATS)
    return out


def _set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    node = doc
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def _hit(raw: Mapping[str, Any]) -> SearchHit:
    return SearchHit(
        id=raw["_id"],
        score=float(raw.get("_score") or 0.0),
        source=raw.get("_source"),
        matched_queries=raw.get("matched_queries"),
        seq_no=raw.get("_seq_no"),
        primary_term=raw.get("_primary_term"),
        sort=raw.get("sort"),
    )


def _result(raw: Mapping[str, Any]) -> SearchResult:
    if "error" in raw:
        raise SiraSeekEngineError(f"search failed: {_reason(raw['error'])}")
    total = raw.get("hits", {}).get("total", 0)
    total_value = total.get("value", 0) if isinstance(total, dict) else int(total)
    return SearchResult(
        hits=[_hit(h) for h in raw.get("hits", {}).get("hits", [])],
        total=total_value,
        took_ms=int(raw.get("took", 0)),
    )


def analyzer_available(
    analyze: Callable[[], object],
    *,
    attempts: int = ANALYZE_ATTEMPTS,
    backoff_s: float = ANALYZE_BACKOFF_S,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Run one ``_analyze`` probe: True when it works, False only when the engine answers that
    the analyzer (or tokenizer, or filter) does not exist.

    A transient failure (no answer, a timeout, 429, a 5xx) is tried again, ``attempts`` tries
    in all with a doubling pause from ``backoff_s``, then raised; any other error (401 and 403
    but 403) is raised at once. Guessing "absent" would build the index with the basic
    analyzer and cache that guess for the backend's lifetime. A 403 (read-only credentials) is
    taken as absent with a warning: such credentials cannot create an index to choose for.
    """
    for attempt in range(attempts):
        try:
            analyze()
            return True
        except EngineRequestError as exc:
            if (exc.status, exc.error_type) == _ABSENT:
                return False
            if exc.status == 403:
                # Read-only credentials may search but not run _analyze: they cannot create an
                # index either, so no analyzer is chosen from this answer; say so, once.
                logger.warning(
                    "cannot probe analyzers (HTTP 403: %s); treated as absent. These "
                    "credentials can search; create indexes with ones that may run _analyze",
                    exc,
                )
                return False
            if not exc.transient or attempt == attempts - 1:
                raise
        sleep(backoff_s * 2**attempt)
    raise ValueError("attempts must be at least 1")


def _reason(error: Any) -> str:
    if isinstance(error, dict):
        root = (error.get("root_cause") or [error])[0]
        return f"{root.get('type', 'error')}: {root.get('reason', error)}"
    return str(error)


def _vector_flags(*, terms: bool, fields: bool, positions: bool = False) -> dict[str, bool]:
    """The ``_mtermvectors`` switches of one artificial document: statistics as asked;
    positions only where a caller maps terms back to values by them; never offsets or
    payloads (no caller reads them, and they cost on every shard)."""
    return {
        "term_statistics": terms,
        "field_statistics": fields,
        "positions": positions,
        "offsets": False,
        "payloads": False,
    }


class RestBackend(ABC):
    """A ``SearchBackend`` implemented over raw REST calls."""

    name: str = "abstract"

    def __init__(self, client: Any, info: ClusterInfo) -> None:
        self.client = client
        self.info = info
        self._caps: Capabilities | None = None
        # index -> (its concrete index, one routing value per shard, in shard order)
        self._shard_routings: dict[str, tuple[str, list[str]]] = {}
        self._stats_denied: set[str] = set()  # indexes whose stats these credentials may not read

    # -- transport -----------------------------------------------------------------------
    @abstractmethod
    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        ignore: tuple[int, ...] = (),
    ) -> Any:
        """Send one request; return the decoded body, raising ``SiraSeekEngineError``."""

    @abstractmethod
    def _bulk(self, lines: list[dict[str, Any]]) -> dict[str, Any]:
        """Send NDJSON bulk lines with the engine's client."""

    @abstractmethod
    def _open_pit(self, index: str, keep_alive: str) -> str: ...

    @abstractmethod
    def _close_pit(self, pit_id: str) -> None: ...

    def _pit_sort(self) -> list[dict[str, str]]:
        """A total order for search_after inside a point in time."""
        return [{"_shard_doc": "asc"}]

    # -- cluster -------------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        if self._caps is None:
            self._caps = self._probe_capabilities()
        return self._caps

    def _analyzes(self, body: Mapping[str, Any]) -> bool:
        """Whether the cluster can run this analysis (see ``analyzer_available``)."""
        return analyzer_available(lambda: self.request("POST", "/_analyze", body=dict(body)))

    def _probe_capabilities(self) -> Capabilities:
        nodes = self.request(
            "GET",
            "/_nodes/_local",
            params={
                "filter_path": "nodes.*.modules.name,nodes.*.plugins.name,"
                "nodes.*.search_pipelines.phase_results_processors.type"
            },
        )
        node_list = list((nodes.get("nodes") or {}).values())
        modules = sorted({m["name"] for n in node_list for m in n.get("modules", [])})
        plugins = {p["name"] for n in node_list for p in n.get("plugins", [])}
        processors = {
            p["type"]
            for n in node_list
            for p in (n.get("search_pipelines") or {}).get("phase_results_processors", [])
        }
        return Capabilities(
            english_analyzer=self._analyzes({"analyzer": "english", "text": "running"}),
            porter_stem=self._analyzes(
                {"tokenizer": "standard", "filter": ["porter_stem"], "text": "running"}
            ),
            shingle=self._analyzes(
                {"tokenizer": "standard", "filter": [{"type": "shingle"}], "text": "a b"}
            ),
            named_queries_score=self._named_queries_score_supported(),
            point_in_time=True,
            combined_fields=self._combined_fields_supported(),
            modules=modules,
            **self._vector_capabilities(set(modules), plugins, processors),
        )

    def _named_queries_score_supported(self) -> bool:
        return False

    def _vector_capabilities(
        self, modules: set[str], plugins: set[str], phase_processors: set[str]
    ) -> dict[str, bool]:
        """``vectors``, ``rrf`` and ``score_normalization`` (see ``Capabilities``) from the
        local node's modules, plugins and search-pipeline phase processors. None here: an
        engine with vectors overrides this and the ``_vector_field`` / ``_knn_body`` hooks."""
        return {"vectors": False, "rrf": False, "score_normalization": False}

    def _combined_fields_supported(self) -> bool:
        return False

    def wait_for_health(self, status: str = "yellow", timeout_s: float = 60.0) -> str:
        # `timeout` goes in the path: opensearch-py would take a `timeout` param as its own.
        body = self.request(
            "GET",
            f"/_cluster/health?wait_for_status={status}&timeout={int(timeout_s)}s",
            ignore=(408,),
        )
        return str(body.get("status"))

    # -- indexes -------------------------------------------------------------------------
    def index_exists(self, index: str) -> bool:
        body = self.request("GET", f"/{path_segment(index)}", ignore=(404,))
        return bool(body) and "error" not in body and "status" not in body

    def create_index(self, index: str, body: Mapping[str, Any]) -> None:
        self.request("PUT", f"/{path_segment(index)}", body=dict(body))

    def ensure_corpus_index(self, index: str, *, shards: int = 1, replicas: int = 0) -> bool:
        """Create ``index`` with the sira-seek corpus layout unless it exists; True if created.

        On a cluster with vectors the index is made ready for a vector field
        (``vector_index_settings``), so ``sira-sync --embed`` can add one later in place: on
        OpenSearch ``index.knn`` is static, and an open index without it refuses a
        ``knn_vector`` field. It changes nothing for BM25."""
        if self.index_exists(index):
            return False
        body = corpus_index_body(self.capabilities(), shards=shards, replicas=replicas)
        if self.capabilities().vectors:
            body["settings"]["index"].update(self.vector_index_settings())
        self.create_index(index, body)
        return True

    # -- vectors -------------------------------------------------------------------------
    def _require_vectors(self) -> None:
        if not self.capabilities().vectors:
            raise VectorsUnavailableError(
                f"{self.info.engine} {self.info.version} at {self.info.url} has no vector "
                f"search: {self._vectors_hint()}"
            )

    def _vectors_hint(self) -> str:
        """What gives this engine vector search (for the error when it has none)."""
        return "this engine's backend has no vector support in sira-seek"

    def vector_mapping(self, dims: int, similarity: VectorSimilarity) -> dict[str, Any]:
        check_vector_field(dims, similarity)
        self._require_vectors()
        return self._vector_field(dims, similarity)

    def _vector_field(self, dims: int, similarity: VectorSimilarity) -> dict[str, Any]:
        """The engine's vector field mapping (called only when ``vectors`` is true)."""
        raise VectorsUnavailableError(self._vectors_hint())

    def vector_index_settings(self) -> dict[str, Any]:
        return {}

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
        """One kNN search (no DFS phase: vector scores need no term statistics)."""
        check_knn_request(vector, k=k, num_candidates=num_candidates)
        self._require_vectors()
        # ``[]`` is "no fields": sent as false, since an empty _source list returns them all.
        shown: list[str] | dict[str, list[str]] | bool = (
            {"excludes": [field]} if source is None else (list(source) or False)
        )
        body = self._knn_body(field, [float(x) for x in vector], k, num_candidates)
        raw = self.request(
            "POST", f"/{path_segment(index)}/_search", body={**body, "size": k, "_source": shown}
        )
        return _result(raw)

    def _knn_body(
        self, field: str, vector: list[float], k: int, num_candidates: int
    ) -> dict[str, Any]:
        """The engine's kNN part of a search body (the size and _source are added to it;
        called only when ``vectors`` is true)."""
        raise VectorsUnavailableError(self._vectors_hint())

    def resolve_name(self, name: str) -> tuple[list[str], str | None]:
        """Concrete indexes behind ``name`` (an index or an alias) and its write index."""
        body = self.request("GET", f"/_alias/{path_segment(name)}", ignore=(404,))
        if not body or "error" in body or body.get("status") == 404:
            return ([name], name) if self.index_exists(name) else ([], None)
        indexes = sorted(body)
        write = [i for i in indexes if body[i]["aliases"][name].get("is_write_index")]
        if write:
            return indexes, write[0]
        return indexes, indexes[0] if len(indexes) == 1 else None

    def delete_index(self, index: str) -> None:
        """Delete one index by its concrete name (an absent one is not an error).

        A pattern, list or ``_all`` is refused here (``concrete_name``) before any request:
        OpenSearch's ``action.destructive_requires_name`` is false by default, so the engine
        itself would expand ``DELETE /x*`` to every matching index. An alias is refused by both
        engines (400 "matches an alias")."""
        name = concrete_name(index, action="deleting an index")
        self.request("DELETE", f"/{path_segment(name)}", ignore=(404,))

    def refresh(self, index: str) -> None:
        self.request("POST", f"/{path_segment(index)}/_refresh")

    def count(self, index: str, query: Mapping[str, Any] | None = None) -> int:
        body = {"query": dict(query)} if query else None
        return int(self.request("POST", f"/{path_segment(index)}/_count", body=body)["count"])

    def deleted_docs(self, index: str) -> int:
        """Deleted documents still in segments: term statistics count them until a merge."""
        stats = self.request("GET", f"/{path_segment(index)}/_stats/docs")
        return int(stats["_all"]["primaries"].get("docs", {}).get("deleted", 0))

    def expunge_deletes(self, index: str, *, timeout_s: float = 3600.0) -> int:
        """Merge away deleted documents (``only_expunge_deletes``); return how many remain.

        Deletes are soft: a shard keeps them until its retention leases move past them (the
        engines sync leases every 30 s), so a merge right after a sync may drop nothing; it is
        retried until the deletes are gone or a minute passes. Each merge runs as a task and is
        polled, so a large index that outlasts one request timeout still finishes.
        """
        concrete_name(index, action="expunging deletes")
        settle_until = time.monotonic() + 60.0
        while True:
            self._force_merge_expunge(index, timeout_s)
            self.refresh(index)
            left = self.deleted_docs(index)
            if not left or time.monotonic() > settle_until:
                return left
            time.sleep(5.0)

    def _force_merge_expunge(self, index: str, timeout_s: float) -> None:
        task = self.request(
            "POST",
            f"/{path_segment(index)}/_forcemerge",
            params={"only_expunge_deletes": "true", "wait_for_completion": "false"},
        )["task"]
        # `timeout` goes in the path: opensearch-py would take a `timeout` param as its own.
        path = f"/_tasks/{quote(str(task), safe=':')}?wait_for_completion=true&timeout=30s"
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.request("GET", path, ignore=(408,))
            if status.get("completed"):
                break
            if time.monotonic() > deadline:
                raise SiraSeekEngineError(
                    f"the merge of {index} (task {task}) is still running after {timeout_s:.0f}s; "
                    f"it goes on in the cluster: GET _tasks/{task}"
                )
        if status.get("error"):
            raise SiraSeekEngineError(f"the merge of {index} failed: {status['error']}")

    def get_mapping(self, index: str) -> dict[str, Any]:
        return dict(self.request("GET", f"/{path_segment(index)}/_mapping"))

    def put_mapping(
        self, index: str, properties: Mapping[str, Any], meta: Mapping[str, Any] | None = None
    ) -> None:
        body: dict[str, Any] = {"properties": dict(properties)}
        if meta is not None:
            body["_meta"] = dict(meta)
        self.request("PUT", f"/{path_segment(index)}/_mapping", body=body)

    def get(self, index: str, doc_id: str) -> SearchHit | None:
        path = f"/{path_segment(index)}/_doc/{path_segment(doc_id)}"
        body = self.request("GET", path, ignore=(404,))
        if not body.get("found"):
            return None
        return _hit({**body, "_score": 0.0})

    # -- writes --------------------------------------------------------------------------
    def _send_bulk(self, lines: list[dict[str, Any]]) -> BulkResult:
        if not lines:
            return BulkResult()
        resp = self._bulk(lines)
        result = BulkResult()
        for item in resp.get("items", []):
            (op,) = item.values()
            status = int(op.get("status", 500))
            if status >= 300:
                result.errors.append(
                    BulkItemError(id=op.get("_id"), status=status, reason=_reason(op.get("error")))
                )
            elif op.get("result") == "noop":
                result.noop += 1
            else:
                result.succeeded += 1
        return result

    def bulk_upsert(self, index: str, docs: Iterable[Mapping[str, Any]]) -> BulkResult:
        """Create or merge documents by ``_id``; fields not given (enrichment) are kept."""
        updates = (
            PartialUpdate(
                id=str(d["_id"]), doc={k: v for k, v in d.items() if k != "_id"}, upsert=True
            )
            for d in docs
        )
        return self.bulk_partial_update(index, updates)

    def bulk_index(self, index: str, docs: Iterable[Mapping[str, Any]]) -> BulkResult:
        """Append documents with engine-generated ids (logs, reports)."""
        result = BulkResult()
        lines: list[dict[str, Any]] = []
        for doc in docs:
            lines += [{"index": {"_index": index}}, dict(doc)]
            if len(lines) >= 2 * BULK_CHUNK:
                result = result.merge(self._send_bulk(lines))
                lines = []
        return result.merge(self._send_bulk(lines))

    def bulk_partial_update(self, index: str, updates: Iterable[PartialUpdate]) -> BulkResult:
        result = BulkResult()
        lines: list[dict[str, Any]] = []
        for upd in updates:
            meta: dict[str, Any] = {"_index": index, "_id": upd.id}
            if upd.if_seq_no is not None:
                meta["if_seq_no"] = upd.if_seq_no
                meta["if_primary_term"] = upd.if_primary_term
            action: dict[str, Any] = {"doc": upd.doc, "detect_noop": True}
            if upd.upsert:
                action["doc_as_upsert"] = True
            lines += [{"update": meta}, action]
            if len(lines) >= 2 * BULK_CHUNK:
                result = result.merge(self._send_bulk(lines))
                lines = []
        return result.merge(self._send_bulk(lines))

    # -- reads ---------------------------------------------------------------------------
    def search(
        self, index: str, body: Mapping[str, Any], params: Mapping[str, Any] | None = None
    ) -> SearchResult:
        raw = self.request(
            "POST",
            f"/{path_segment(index)}/_search",
            params=_with_global_stats(params),
            body=dict(body),
        )
        return _result(raw)

    def msearch(
        self,
        index: str,
        bodies: Sequence[Mapping[str, Any]],
        params: Mapping[str, Any] | None = None,
    ) -> list[SearchResult]:
        lines: list[dict[str, Any]] = []
        for body in bodies:
            lines += [{"index": index}, dict(body)]
        raw = self._msearch(lines, _with_global_stats(params))
        return [_result(r) for r in raw.get("responses", [])]

    @abstractmethod
    def _msearch(self, lines: list[dict[str, Any]], params: Mapping[str, Any] | None) -> Any: ...

    def term_statistics(
        self, index: str, field: str, texts: list[str], *, source_field: str | None = None
    ) -> list[TextTermStatistics]:
        """Analyse each text with ``field``'s analyzer and return index-wide term stats.

        One ``_mtermvectors`` round trip with artificial documents, whatever the number of
        texts. Terms the index has never seen come back without ``doc_freq`` (= 0).
        Statistics are per shard: exact on a one-shard index (the default for ``ingest``).
        """
        if not texts:
            return []
        doc_field = source_field or SUBFIELD_PARENT.get(field, field)
        docs = [
            {
                "_index": index,
                "doc": {doc_field: text},
                "fields": [field],
                **_vector_flags(terms=True, fields=True),
            }
            for text in texts
        ]
        raw = self.request("POST", f"/{path_segment(index)}/_mtermvectors", body={"docs": docs})
        out: list[TextTermStatistics] = []
        for text, doc in zip(texts, raw.get("docs", []), strict=False):
            if "error" in doc:
                raise SiraSeekEngineError(f"term statistics failed: {_reason(doc['error'])}")
            fstats = doc.get("term_vectors", {}).get(field, {})
            terms = [
                TermStatistic(
                    term=term,
                    doc_freq=int(stats.get("doc_freq", 0)),
                    total_term_freq=int(stats.get("ttf", 0)),
                )
                for term, stats in fstats.get("terms", {}).items()
            ]
            fs = fstats.get("field_statistics")
            out.append(
                TextTermStatistics(
                    text=text,
                    field=field,
                    terms=terms,
                    field_statistics=FieldStatistics(
                        doc_count=fs.get("doc_count", 0),
                        sum_doc_freq=fs.get("sum_doc_freq", 0),
                        sum_ttf=fs.get("sum_ttf", 0),
                    )
                    if fs
                    else None,
                )
            )
        return out

    def analyze_terms(
        self, index: str, fields: Sequence[str], texts: Sequence[str]
    ) -> list[dict[str, list[str]]]:
        """Each text as an artificial document of ``_mtermvectors`` without statistics: the
        field's own analyzer (stemming, stopwords, shingles) in one round trip, no stats cost.
        A subfield (``text.shingles``) is analysed from its parent's value."""
        if not texts or not fields:
            return [{f: [] for f in fields} for _ in texts]
        docs = []
        for text in texts:
            doc: dict[str, Any] = {}
            for field in fields:
                _set_path(doc, SUBFIELD_PARENT.get(field, field), text)
            docs.append(
                {
                    "doc": doc,
                    "fields": list(fields),
                    **_vector_flags(terms=False, fields=False),
                }
            )
        raw = self.request("POST", f"/{path_segment(index)}/_mtermvectors", body={"docs": docs})
        out: list[dict[str, list[str]]] = []
        for doc in raw.get("docs", []):
            if "error" in doc:
                raise SiraSeekEngineError(f"analysis failed: {_reason(doc['error'])}")
            vectors = doc.get("term_vectors", {})
            out.append({f: list(vectors.get(f, {}).get("terms", {})) for f in fields})
        if len(out) != len(texts):
            raise SiraSeekEngineError(
                f"analysis answered {len(out)} documents for {len(texts)} texts"
            )
        return out

    def live_doc_freqs(self, index: str, terms: Sequence[tuple[str, str]]) -> LiveDocFrequencies:
        """A size-0 search whose ``filters`` aggregation counts each term's live documents on
        every shard, and whose exact total is |C|. Refuses partial answers: a count missing a
        shard would silently make a common phrase look rare."""
        ordered = list(dict.fromkeys((str(f), str(t)) for f, t in terms))
        counts: list[TermCount] = []
        doc_count = 0
        chunks = [
            ordered[i : i + FILTERS_PER_SEARCH] for i in range(0, len(ordered), FILTERS_PER_SEARCH)
        ] or [[]]
        for n, chunk in enumerate(chunks):
            body: dict[str, Any] = {"size": 0, "track_total_hits": n == 0}
            if chunk:
                filters = {f"t{i}": {"term": {f: t}} for i, (f, t) in enumerate(chunk)}
                body["aggs"] = {"df": {"filters": {"filters": filters}}}
            raw = self.request(
                "POST",
                f"/{path_segment(index)}/_search",
                params={"allow_partial_search_results": "false"},
                body=body,
            )
            shards = raw.get("_shards", {})
            if shards.get("failed"):
                raise SiraSeekEngineError(
                    f"counting terms in {index} reached {shards.get('successful')} of "
                    f"{shards.get('total')} shards; exact document frequencies need them all"
                )
            if n == 0:
                doc_count = _result(raw).total
            buckets = raw.get("aggregations", {}).get("df", {}).get("buckets", {})
            counts += [
                TermCount(
                    field=f, term=t, doc_freq=int(buckets.get(f"t{i}", {}).get("doc_count", 0))
                )
                for i, (f, t) in enumerate(chunk)
            ]
        return LiveDocFrequencies(doc_count=doc_count, counts=counts, round_trips=len(chunks))

    def _search_shards(self, index: str, routing: str | None = None) -> list[tuple[str, int]]:
        """(index, shard) of every shard group a search on ``index`` (with ``routing``) hits."""
        params = {"routing": routing} if routing is not None else None
        raw = self.request("GET", f"/{path_segment(index)}/_search_shards", params=params)
        return sorted(
            {(str(group[0]["index"]), int(group[0]["shard"])) for group in raw["shards"] if group}
        )

    def shard_routings(self, index: str) -> ShardRoutings | None:
        """One routing value that lands on each shard of ``index``, in shard order, found with
        the engine's own routing (``_search_shards?routing=``) and kept while the index has the
        same shards (one ``_search_shards`` request then). None for several indexes or a
        routing value that spans shards."""
        shards = self._search_shards(index)
        trips = 1
        names = {name for name, _ in shards}
        if len(names) != 1:
            return None
        (name,) = names
        cached = self._shard_routings.get(index)
        if cached and cached[0] == name and len(cached[1]) == len(shards):
            return ShardRoutings(index=name, routings=cached[1], round_trips=trips)
        found: dict[int, str] = {}
        for probe in range(ROUTING_PROBES_PER_SHARD * len(shards)):
            hit = self._search_shards(index, routing=str(probe))
            trips += 1
            if len(hit) != 1:
                return None  # routing_partition_size > 1: a value spans several shards
            found.setdefault(hit[0][1], str(probe))
            if len(found) == len(shards):
                break
        if sorted(found) != [shard for _, shard in shards]:
            return None
        routings = [found[shard] for shard in sorted(found)]
        self._shard_routings[index] = (name, routings)
        return ShardRoutings(index=name, routings=routings, round_trips=trips)

    def term_vectors(self, index: str, docs: Sequence[ArtificialDocument]) -> list[TermVectors]:
        """One ``_mtermvectors`` request of artificial documents with term statistics (never
        field statistics, offsets or payloads: no caller reads them, and they cost on every
        shard); ``as_given`` is the ``keyword`` analyzer per field. A term the shard lacks
        comes back without ``doc_freq``: 0."""
        if not docs:
            return []
        body = []
        for spec in docs:
            doc: dict[str, Any] = {}
            for path, value in spec.values.items():
                _set_path(doc, path, value)
            entry: dict[str, Any] = {
                "doc": doc,
                "fields": list(spec.fields),
                **_vector_flags(terms=True, fields=False, positions=spec.positions),
            }
            if spec.routing is not None:
                entry["routing"] = spec.routing
            if spec.as_given:
                entry["per_field_analyzer"] = {f: "keyword" for f in spec.fields}
            body.append(entry)
        raw = self.request("POST", f"/{path_segment(index)}/_mtermvectors", body={"docs": body})
        answers: list[dict[str, Any]] = raw.get("docs", [])
        if len(answers) != len(docs):
            raise SiraSeekEngineError(
                f"term statistics answered {len(answers)} documents for {len(docs)}"
            )
        out: list[TermVectors] = []
        for spec, answer in zip(docs, answers, strict=True):
            if "error" in answer:
                raise SiraSeekEngineError(f"term statistics failed: {_reason(answer['error'])}")
            fields = {n: v.get("terms", {}) for n, v in answer.get("term_vectors", {}).items()}
            # The engines' JSON holds ints here already: no int() per term (SIRA's hot path).
            doc_freqs = {
                n: {t: s.get("doc_freq", 0) for t, s in terms.items()}
                for n, terms in fields.items()
            }
            positions = (
                {
                    n: {
                        t: tuple([p.get("position", -1) for p in s.get("tokens", ())])
                        for t, s in terms.items()
                    }
                    for n, terms in fields.items()
                }
                if spec.positions
                else {}
            )
            out.append(TermVectors(doc_freqs, positions))
        return out

    def analyze(self, index: str, field: str, values: Sequence[str]) -> list[AnalyzedToken]:
        """One ``_analyze`` request (``field``'s index analyzer, as artificial documents use)
        reading only each token and its offsets (``ANALYZE_FILTER_PATH``). Over the token cap
        Elasticsearch answers 400, OpenSearch 500 (both name the setting): either is
        ``AnalysisRefusedError(too_many_tokens=True)``; another 400 is the analysis's own
        refusal; anything else the cluster's failure (raised as is)."""
        try:
            raw = self.request(
                "POST",
                f"/{path_segment(index)}/_analyze",
                params={"filter_path": ANALYZE_FILTER_PATH},
                body={"field": field, "text": list(values)},
            )
        except EngineRequestError as exc:
            if "max_token_count" in str(exc):
                raise AnalysisRefusedError(str(exc), too_many_tokens=True) from exc
            if exc.status == 400:
                raise AnalysisRefusedError(str(exc)) from exc
            raise
        return [
            AnalyzedToken(
                str(t["token"]), int(t.get("start_offset", -1)), int(t.get("end_offset", -1))
            )
            for t in raw.get("tokens", [])
        ]

    def index_doc_counts(self, index: str) -> IndexDocCounts | None:
        """Two requests: the index stats (concrete name, uuid, deleted documents over every
        started copy) and a size-0 search whose exact total is |C| (the stats' ``docs.count``
        would also count nested documents, and is read from a view that can run ahead of what
        searches see until the next refresh). None, with one warning per index, when the
        credentials may not read index stats (HTTP 403: a role with ``read`` but not
        ``monitor``): the DF check then takes the live route, which ``read`` allows."""
        try:
            stats = self.request(
                "GET",
                f"/{path_segment(index)}/_stats/docs",
                params={"filter_path": "indices.*.uuid,indices.*.total.docs"},
            )
        except EngineRequestError as exc:
            if exc.status != 403:
                raise
            if index not in self._stats_denied:
                self._stats_denied.add(index)
                logger.warning(
                    "cannot read the index stats of %s (HTTP 403: %s); the DF check counts "
                    "live documents instead (two requests per query). Grant 'monitor' on the "
                    "index for the one-request check",
                    index,
                    exc,
                )
            return None
        indices = stats.get("indices") or {}
        if len(indices) != 1:
            return None
        ((name, body),) = indices.items()
        raw = self.request(
            "POST",
            f"/{path_segment(name)}/_search",
            params={"allow_partial_search_results": "false"},
            body={"size": 0, "track_total_hits": True},
        )
        shards = raw.get("_shards", {})
        if shards.get("failed"):
            raise SiraSeekEngineError(
                f"counting the documents of {name} reached {shards.get('successful')} of "
                f"{shards.get('total')} shards"
            )
        docs = (body.get("total") or {}).get("docs") or {}
        uuid = body.get("uuid")
        if uuid is None:  # index stats without the uuid (older servers): the settings have it
            settings = self.request("GET", f"/{path_segment(name)}/_settings/index.uuid")
            uuid = settings.get(name, {}).get("settings", {}).get("index", {}).get("uuid")
        return IndexDocCounts(
            index=str(name),
            uuid=uuid,
            doc_count=_result(raw).total,
            deleted_docs=int(docs.get("deleted", 0)),
            round_trips=2 if body.get("uuid") else 3,
        )

    def index_settings(self, index: str) -> dict[str, dict[str, Any]]:
        raw = self.request("GET", f"/{path_segment(index)}/_settings")
        return {name: dict(body.get("settings", {}).get("index", {})) for name, body in raw.items()}

    def aliases(self, name: str) -> dict[str, list[str]]:
        raw = self.request("GET", f"/{path_segment(name)}/_alias", ignore=(404,))
        if not raw or "error" in raw or raw.get("status") == 404:
            return {}
        return {index: sorted(body.get("aliases", {})) for index, body in raw.items()}

    def update_aliases(self, actions: Sequence[Mapping[str, Any]]) -> None:
        """Apply alias actions in one atomic request; every index and alias they name must be
        concrete (``concrete_name``): a pattern there would move or drop an alias on (or,
        with ``remove_index``, delete) every index it matches."""
        for action in actions:
            for spec in action.values():
                for key in ("index", "alias", "indices", "aliases"):
                    names = spec.get(key, []) if isinstance(spec, Mapping) else []
                    for name in [names] if isinstance(names, str) else names:
                        concrete_name(name, action="changing an alias")
        self.request("POST", "/_aliases", body={"actions": [dict(a) for a in actions]})

    def explain(self, index: str, doc_id: str, query: Mapping[str, Any]) -> dict[str, Any] | None:
        """A search restricted to the document with ``explain``: the same global statistics as
        ``search`` (``_explain`` would use one shard's and disagree on a multi-shard index)."""
        body = {
            "size": 1,
            "explain": True,
            "_source": False,
            "query": {"bool": {"must": [dict(query)], "filter": [{"ids": {"values": [doc_id]}}]}},
        }
        raw = self.request(
            "POST", f"/{path_segment(index)}/_search", params=_with_global_stats(None), body=body
        )
        hits = raw.get("hits", {}).get("hits", [])
        return dict(hits[0].get("_explanation") or {}) if hits else None

    def _scan_page(self, body: Mapping[str, Any]) -> Any:
        """One point-in-time page; a lost context or a missing shard is ``ScanContextLostError``
        (a partial page would silently skip documents)."""
        try:
            raw = self.request("POST", "/_search", body=dict(body))
        except SiraSeekEngineError as exc:
            if context_lost(str(exc)):
                raise ScanContextLostError(f"the point in time was lost: {exc}") from None
            raise
        shards = raw.get("_shards", {})
        if shards.get("failed"):
            failures = shards.get("failures") or [{}]
            raise ScanContextLostError(
                f"a scan page reached {shards.get('successful')} of {shards.get('total')} "
                f"shards ({_reason(failures[0].get('reason', 'unknown'))})"
            )
        return raw

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
        """Yield pages of a consistent point-in-time view, optionally one slice of N."""
        keep_alive = "5m"
        pit_id = self._open_pit(index, keep_alive)
        try:
            search_after: list[Any] | None = None
            while True:
                body: dict[str, Any] = {
                    "size": page_size,
                    "query": dict(query) if query else {"match_all": {}},
                    "pit": {"id": pit_id, "keep_alive": keep_alive},
                    "sort": self._pit_sort(),
                    "seq_no_primary_term": True,
                    "_source": source,
                    "track_total_hits": False,
                }
                if max_slices is not None and max_slices > 1:
                    body["slice"] = {"id": slice_id or 0, "max": max_slices}
                if search_after is not None:
                    body["search_after"] = search_after
                raw = self._scan_page(body)
                pit_id = raw.get("pit_id", pit_id)
                page = [_hit(h) for h in raw.get("hits", {}).get("hits", [])]
                if not page:
                    return
                yield page
                search_after = page[-1].sort
        finally:
            # Best effort: an unreachable cluster must not turn the real error into a second
            # one, and an unclosed point in time expires by itself after keep_alive. A scan
            # left unfinished until interpreter exit is not closed then: an HTTP call during
            # shutdown can hang the process.
            if not sys.is_finalizing():
                with contextlib.suppress(SiraSeekEngineError):
                    self._close_pit(pit_id)

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if close:
            close()


def wait_until(predicate: Any, timeout_s: float, interval_s: float = 0.5) -> bool:
    """Poll ``predicate`` until it returns truthy or the time is up."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return bool(predicate())
