"""A ``SearchBackend`` held in Python dicts, for unit tests of the engine-agnostic core.

It sits ABOVE the protocol: core code calls the same typed methods it calls on a real cluster
(``analyze_terms``, ``live_doc_freqs``, ``scan``...), and nothing here imitates an engine's REST
JSON. What real engines do that the core must cope with is reproduced on purpose:

* every overwrite or delete leaves a deleted copy, which ``term_statistics`` still counts (as
  Lucene does until a merge) while ``live_doc_freqs`` and ``count`` never do;
* ``if_seq_no`` guards answer 409 on a mismatch, and every write bumps ``_seq_no``;
* ``scan`` reads a snapshot (a point in time) and can be told to lose it after N pages (or
  lose every open one, ``drop_scan_contexts``), which raises ``ScanContextLostError`` exactly
  where a real backend would;
* ``match`` (and ``term`` on a text field) score with Lucene's BM25 (k1 1.2, b 0.75) over
  index-wide statistics, as the backends' default ``dfs_query_then_fetch`` does; under
  ``search_type=query_then_fetch`` each document is scored with its own shard's statistics
  (documents go to shards by a hash of their id), and ``term_statistics`` on a multi-shard
  index counts the one shard its artificial document lands on, as Lucene's do;
* a failed request raises ``EngineError``, the protocol's cluster-failure type.

It passes the backend contract suite (tests/integration/contract, the ``in-memory`` target),
so it cannot drift from the engines on what that suite checks.

Analysis is the basic layout in miniature, in ONE place for every unit double: lowercase word
tokens minus a few stopwords, and bigram shingles for ``*.shingles`` subfields. Whether the core
behaves correctly on the real analyzers is the integration and contract suites' job.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sira_seek.backend import (
    POSITION_GAP,
    AnalysisRefusedError,
    AnalyzedToken,
    ArtificialDocument,
    BulkItemError,
    BulkResult,
    Capabilities,
    ClusterInfo,
    EngineError,
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
from sira_seek.esplugin.engines.base import check_knn_request, check_vector_field
from sira_seek.esplugin.engines.errors import VectorsUnavailableError
from sira_seek.fields import CONTENTS, SOURCE_FIELDS, SUBFIELD_PARENT

STOPWORDS = frozenset({"the", "a", "of", "and", "is", "in", "what"})
SHINGLE_SUFFIX = ".shingles"
K1, B = 1.2, 0.75
"""Lucene's BM25 parameters, the engines' defaults."""
ARTIFICIAL_DOC_SHARD = 0
"""The shard ``term_statistics``'s artificial documents land on in a multi-shard index."""
GLOBAL_STATS, SHARD_STATS = "dfs_query_then_fetch", "query_then_fetch"
ANALYZE_MAX_TOKENS = 10_000
"""The engines' default ``index.analyze.max_token_count``."""


def analyze(text: str) -> list[str]:
    """Unigram analysis: lowercase word tokens without stopwords, in order."""
    return [t for t in re.findall(r"\w+", text.lower()) if t not in STOPWORDS]


def bigrams(text: str) -> list[str]:
    """Shingle analysis: adjacent pairs of the unigram tokens (no unigrams, like sira_shingles)."""
    toks = analyze(text)
    return [f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False)]


def field_tokens(field_name: str, text: str) -> list[str]:
    """Every token ``field_name``'s analyzer makes of ``text``, repeats included, in order."""
    return bigrams(text) if field_name.endswith(SHINGLE_SUFFIX) else analyze(text)


def field_terms(field_name: str, text: str) -> list[str]:
    """The distinct terms ``field_name``'s analyzer makes of ``text``, in first-seen order."""
    return list(dict.fromkeys(field_tokens(field_name, text)))


def shard_of(doc_id: str, shards: int) -> int:
    """The shard a document lives on: a stable hash of its id (as engines route by ``_id``)."""
    return zlib.crc32(doc_id.encode()) % shards if shards > 1 else 0


def _values_at(source: Mapping[str, Any], path: str) -> list[Any]:
    """Every value at a dotted path; lists are flattened as engines index them."""
    nodes: list[Any] = [source]
    for part in path.split("."):
        nxt: list[Any] = []
        for node in nodes:
            items = node if isinstance(node, list) else [node]
            nxt += [i[part] for i in items if isinstance(i, Mapping) and part in i]
        nodes = nxt
    out: list[Any] = []
    for node in nodes:
        out += node if isinstance(node, list) else [node]
    return out


def _merge(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def _vector_score(similarity: str, a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    if similarity == "l2":
        return 1.0 / (1.0 + sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))
    if similarity == "cosine":
        norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        dot = dot / norms if norms else 0.0
    return (1.0 + dot) / 2.0


def _pick(source: Mapping[str, Any], includes: list[str] | bool) -> dict[str, Any]:
    if includes is True:
        return copy.deepcopy(dict(source))
    if not includes:
        return {}
    # Dotted includes ("sira_enrichment.categories") keep just that branch, as engines do.
    out: dict[str, Any] = {}
    for key, value in source.items():
        if key in includes:
            out[key] = copy.deepcopy(value)
        elif isinstance(value, Mapping):
            inner = [i[len(key) + 1 :] for i in includes if i.startswith(f"{key}.")]
            if inner and (picked := _pick(value, inner)):
                out[key] = picked
    return out


def default_properties() -> dict[str, Any]:
    """The corpus layout's source fields: title and text copied into contents (+ shingles)."""
    return {
        "title": {"type": "text", "analyzer": "sira_text", "copy_to": CONTENTS},
        "text": {"type": "text", "analyzer": "sira_text", "copy_to": CONTENTS},
        CONTENTS: {
            "type": "text",
            "analyzer": "sira_text",
            "fields": {"shingles": {"type": "text", "analyzer": "sira_shingles"}},
        },
    }


_UUIDS = itertools.count(1)


@dataclass
class StoredDoc:
    source: dict[str, Any]
    seq_no: int
    version: int


@dataclass
class MemoryIndex:
    """One index: live documents, the deleted copies term statistics still see (with the id
    that routed them to their shard), its settings."""

    properties: dict[str, Any]
    analyzers: tuple[str, ...]
    shards: int = 1
    docs: dict[str, StoredDoc] = field(default_factory=dict)
    deleted_copies: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    generated_ids: int = 0
    uuid: str = field(default_factory=lambda: f"mem-{next(_UUIDS)}")  # a new one per index
    meta: dict[str, Any] | None = None  # the mapping's _meta, as put_mapping last replaced it


@dataclass
class FieldStats:
    """What BM25 needs of one field over some documents (the index, or one shard of it)."""

    doc_count: int = 0
    total_length: int = 0
    doc_freq: dict[str, int] = field(default_factory=dict)

    def idf(self, term: str) -> float:
        n = self.doc_freq.get(term, 0)
        return math.log(1 + (self.doc_count - n + 0.5) / (n + 0.5))

    def bm25(self, tf: int, length: int, term: str) -> float:
        avg = self.total_length / self.doc_count if self.doc_count else 1.0
        return self.idf(term) * tf / (tf + K1 * (1 - B + B * length / avg))


class InMemoryBackend:
    """A complete ``SearchBackend`` over in-memory indexes (one named ``idx`` by default).

    Searching evaluates the query subset the core sends (match_all, bool, term, terms, range,
    exists, ids, match) exactly. ``match`` and ``term`` on a text field score with BM25; the
    others are constant (their ``boost``, 1.0 by default), and a ``bool`` scores the sum of its
    scoring clauses. Hits come best first, ties by id. A test may script ``hits`` instead.
    """

    name = "in-memory"

    def __init__(
        self,
        docs: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        index: str = "idx",
        properties: dict[str, Any] | None = None,
        analyzers: tuple[str, ...] = ("sira_text", "sira_shingles"),
        capabilities: Capabilities | None = None,
    ) -> None:
        self.index = index
        self.info = ClusterInfo(engine="in-memory", version="1.0", url="memory://")
        self.caps = capabilities or Capabilities(shingle=True, vectors=True)
        self.seq = 0
        self.indexes: dict[str, MemoryIndex] = {
            index: MemoryIndex(
                properties=properties if properties is not None else default_properties(),
                analyzers=analyzers,
            )
        }
        self.alias_map: dict[str, dict[str, bool]] = {}  # alias -> {index: is_write_index}
        for doc_id, source in (docs or {}).items():
            self._store(index, doc_id, copy.deepcopy(dict(source)))
        # What tests inspect or script.
        self.calls: list[tuple[str, Any]] = []  # analysis and DF calls, one entry per round trip
        self.searches: list[dict[str, Any]] = []
        self.search_params: list[Any] = []
        self.hits: list[SearchHit] | None = None  # scripted search hits
        self.scan_queries: list[Any] = []
        self.lose_scan_context_after: int | None = None  # pages, for the next scan only
        self.scan_contexts_dropped = 0  # bumped by drop_scan_contexts: open scans are lost
        self.put_mappings: list[dict[str, Any]] = []
        self.bulk_calls = 0
        self.before_bulk: Any = None  # hook(backend, updates), run once before the next bulk
        self.bounds_unavailable = False  # shard_routings answers None (see there)

    # -- helpers tests use ---------------------------------------------------------------
    @property
    def docs(self) -> dict[str, StoredDoc]:
        """The default index's live documents."""
        return self.indexes[self.index].docs

    def edit(self, doc_id: str, **fields: Any) -> None:
        """What a user's own write does: change source fields, bump ``_seq_no``."""
        source = copy.deepcopy(self.docs[doc_id].source)
        source.update(fields)
        self._store(self.index, doc_id, source)

    def drop_scan_contexts(self) -> None:
        """What a cluster losing every point in time does: each open scan fails on its next
        page with ``ScanContextLostError`` (not in the protocol; the contract suite's hook)."""
        self.scan_contexts_dropped += 1

    def _idx(self, index: str) -> MemoryIndex:
        names, _ = self.resolve_name(index)
        if len(names) != 1:
            raise EngineError(f"{index!r} names {len(names)} indexes in the in-memory backend")
        return self.indexes[names[0]]

    def _store(self, index: str, doc_id: str, source: dict[str, Any]) -> None:
        idx = self.indexes[index]
        old = idx.docs.get(doc_id)
        if old is not None:
            idx.deleted_copies.append((doc_id, old.source))
        idx.docs[doc_id] = StoredDoc(
            source=source, seq_no=self.seq, version=(old.version + 1) if old else 1
        )
        self.seq += 1

    def _field_values(self, idx: MemoryIndex, source: Mapping[str, Any], name: str) -> list[Any]:
        parent = name[: -len(SHINGLE_SUFFIX)] if name.endswith(SHINGLE_SUFFIX) else name
        if parent.endswith(".words"):
            parent = parent[: -len(".words")]
        values = _values_at(source, parent)
        if parent == CONTENTS:  # copy_to from the source fields
            values += [v for f in SOURCE_FIELDS for v in _values_at(source, f)]
        return values

    def _is_text(self, idx: MemoryIndex, name: str) -> bool:
        if name.endswith((SHINGLE_SUFFIX, ".words")) or name == CONTENTS:
            return True
        spec: Any = {"properties": idx.properties}
        for part in name.split("."):
            spec = (spec.get("properties") or {}).get(part)
            if spec is None:
                return False
        return bool(spec.get("type") == "text")

    def _tokens_of(self, idx: MemoryIndex, source: Mapping[str, Any], name: str) -> list[str]:
        """The field's tokens in ``source``, repeats included (a keyword value is one token);
        each value of a multi-valued field is analysed alone, so no shingle spans two."""
        values = self._field_values(idx, source, name)
        if not self._is_text(idx, name):
            return [str(v) for v in values]
        return [t for v in values for t in field_tokens(name, str(v))]

    def _terms_of(self, idx: MemoryIndex, source: Mapping[str, Any], name: str) -> set[str]:
        return set(self._tokens_of(idx, source, name))

    def _field_stats(
        self, idx: MemoryIndex, name: str, sources: Iterable[Mapping[str, Any]]
    ) -> FieldStats:
        stats = FieldStats()
        for source in sources:
            tokens = self._tokens_of(idx, source, name)
            if not tokens:
                continue
            stats.doc_count += 1
            stats.total_length += len(tokens)
            for term in set(tokens):
                stats.doc_freq[term] = stats.doc_freq.get(term, 0) + 1
        return stats

    def _score(
        self,
        idx: MemoryIndex,
        doc_id: str,
        src: Mapping[str, Any],
        q: Any,
        stats: Callable[[str], FieldStats],
        details: list[dict[str, Any]] | None = None,
    ) -> float | None:
        """``q``'s score for the document, ``None`` when it does not match. ``stats(field)``
        gives the statistics BM25 reads (the index's, or the document's shard's)."""
        if not self._matches(idx, doc_id, src, q):
            return None
        if not q or "match_all" in q:
            return float((q or {}).get("match_all", {}).get("boost", 1.0))
        ((kind, spec),) = q.items()
        if kind == "bool":
            total = 0.0
            for clause in [*spec.get("must", []), *spec.get("should", [])]:
                score = self._score(idx, doc_id, src, clause, stats, details)
                total += score or 0.0
            return total * float(spec.get("boost", 1.0))
        if kind in ("ids", "exists", "range", "terms"):
            return float(spec.get("boost", 1.0)) if isinstance(spec, Mapping) else 1.0
        ((name, cond),) = spec.items()
        boost = float(cond.get("boost", 1.0)) if isinstance(cond, Mapping) else 1.0
        if kind == "term" and not self._is_text(idx, name):
            return boost
        if kind == "term":
            wanted = [str(cond["value"] if isinstance(cond, Mapping) else cond)]
        else:  # match
            text = cond["query"] if isinstance(cond, Mapping) else cond
            wanted = field_terms(name, str(text))
        tokens = self._tokens_of(idx, src, name)
        field_stats = stats(name)
        total = 0.0
        for term in wanted:
            tf = tokens.count(term)
            if tf:
                part = boost * field_stats.bm25(tf, len(tokens), term)
                total += part
                if details is not None:
                    details.append(
                        {
                            "value": part,
                            "description": f"weight({name}:{term}), BM25",
                            "details": [],
                        }
                    )
        return total

    def _matches(self, idx: MemoryIndex, doc_id: str, src: Mapping[str, Any], q: Any) -> bool:
        if not q or "match_all" in q:
            return True
        ((kind, spec),) = q.items()
        if kind == "bool":
            must = [*spec.get("must", []), *spec.get("filter", [])]
            should = spec.get("should", [])
            return (
                all(self._matches(idx, doc_id, src, c) for c in must)
                and not any(self._matches(idx, doc_id, src, c) for c in spec.get("must_not", []))
                and (
                    not should
                    or bool(must)
                    or any(self._matches(idx, doc_id, src, c) for c in should)
                )
            )
        if kind == "ids":
            return doc_id in spec["values"]
        if kind == "exists":
            return bool(self._field_values(idx, src, spec["field"]))
        ((name, cond),) = spec.items()
        if kind in ("term", "terms"):
            if kind == "term" and isinstance(cond, Mapping):
                cond = cond["value"]
            wanted = cond if isinstance(cond, list) else [cond]
            raw = {str(v) for v in _values_at(src, name)}
            terms = self._terms_of(idx, src, name) | raw
            return any(str(w) in terms for w in wanted)
        if kind == "range":
            bounds = {"gte": "__ge__", "gt": "__gt__", "lte": "__le__", "lt": "__lt__"}
            values = _values_at(src, name)
            return any(
                all(getattr(v, bounds[op])(cond[op]) is True for op in bounds if op in cond)
                for v in values
            )
        if kind == "match":
            text = cond["query"] if isinstance(cond, Mapping) else cond
            return bool(set(field_terms(name, str(text))) & self._terms_of(idx, src, name))
        raise AssertionError(f"the in-memory backend does not evaluate {kind!r} queries")

    def _hit(self, doc_id: str, doc: StoredDoc, source: list[str] | bool = True) -> SearchHit:
        return SearchHit(
            id=doc_id,
            score=1.0,
            source=_pick(doc.source, source),
            seq_no=doc.seq_no,
            primary_term=1,
            sort=[doc_id],
        )

    # -- cluster -------------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        return self.caps

    def wait_for_health(self, status: str = "yellow", timeout_s: float = 60.0) -> str:
        return "green"

    # -- indexes -------------------------------------------------------------------------
    def index_exists(self, index: str) -> bool:
        return index in self.indexes

    def create_index(self, index: str, body: Mapping[str, Any]) -> None:
        if index in self.indexes:
            raise EngineError(f"index {index!r} already exists")
        analysis = (body.get("settings", {}).get("analysis", {}) or {}).get("analyzer", {})
        shards = int(body.get("settings", {}).get("number_of_shards", 1))
        props = copy.deepcopy(dict(body.get("mappings", {}).get("properties", {})))
        self.indexes[index] = MemoryIndex(
            properties=props, analyzers=tuple(analysis), shards=shards
        )

    def ensure_corpus_index(self, index: str, *, shards: int = 1, replicas: int = 0) -> bool:
        if index in self.indexes:
            return False
        self.indexes[index] = MemoryIndex(
            properties=default_properties(), analyzers=("sira_text", "sira_shingles"), shards=shards
        )
        return True

    def resolve_name(self, name: str) -> tuple[list[str], str | None]:
        if name in self.alias_map:
            members = self.alias_map[name]
            indexes = sorted(members)
            write = [i for i, w in members.items() if w]
            return indexes, write[0] if write else (indexes[0] if len(indexes) == 1 else None)
        return ([name], name) if name in self.indexes else ([], None)

    def delete_index(self, index: str) -> None:
        self.indexes.pop(index, None)
        for members in self.alias_map.values():
            members.pop(index, None)

    def refresh(self, index: str) -> None:
        return None

    def count(self, index: str, query: Mapping[str, Any] | None = None) -> int:
        idx = self._idx(index)
        return sum(self._matches(idx, i, d.source, query) for i, d in idx.docs.items())

    def deleted_docs(self, index: str) -> int:
        return len(self._idx(index).deleted_copies)

    def expunge_deletes(self, index: str, *, timeout_s: float = 3600.0) -> int:
        self._idx(index).deleted_copies.clear()
        return 0

    def get_mapping(self, index: str) -> dict[str, Any]:
        names, _ = self.resolve_name(index)
        out: dict[str, Any] = {}
        for n in names:
            body: dict[str, Any] = {"properties": copy.deepcopy(self.indexes[n].properties)}
            if self.indexes[n].meta is not None:
                body["_meta"] = copy.deepcopy(self.indexes[n].meta)
            out[n] = {"mappings": body}
        return out

    def put_mapping(
        self, index: str, properties: Mapping[str, Any], meta: Mapping[str, Any] | None = None
    ) -> None:
        """Adds ``properties``; ``meta`` replaces the whole ``_meta``, as the engines do."""
        self.put_mappings.append(copy.deepcopy(dict(properties)))
        _merge(self._idx(index).properties, properties)
        if meta is not None:
            self._idx(index).meta = copy.deepcopy(dict(meta))

    # -- writes --------------------------------------------------------------------------
    def bulk_upsert(self, index: str, docs: Iterable[Mapping[str, Any]]) -> BulkResult:
        updates = [
            PartialUpdate(
                id=str(d["_id"]), doc={k: v for k, v in d.items() if k != "_id"}, upsert=True
            )
            for d in docs
        ]
        return self.bulk_partial_update(index, updates)

    def bulk_index(self, index: str, docs: Iterable[Mapping[str, Any]]) -> BulkResult:
        _, write = self.resolve_name(index)
        target = write or index
        if target not in self.indexes:
            self.ensure_corpus_index(target)
        result = BulkResult()
        for doc in docs:
            idx = self.indexes[target]
            idx.generated_ids += 1
            self._store(target, f"gen-{idx.generated_ids}", copy.deepcopy(dict(doc)))
            result.succeeded += 1
        return result

    def bulk_partial_update(self, index: str, updates: Iterable[PartialUpdate]) -> BulkResult:
        batch = list(updates)
        self.bulk_calls += 1
        if self.before_bulk is not None:
            hook, self.before_bulk = self.before_bulk, None
            hook(self, batch)
        _, write = self.resolve_name(index)
        target = write or index
        result = BulkResult()
        for upd in batch:
            doc = self.indexes[target].docs.get(upd.id)
            if doc is None and not upd.upsert:
                result.errors.append(BulkItemError(id=upd.id, status=404, reason="missing"))
                continue
            if upd.if_seq_no is not None and (doc is None or upd.if_seq_no != doc.seq_no):
                result.errors.append(BulkItemError(id=upd.id, status=409, reason="conflict"))
                continue
            source = copy.deepcopy(doc.source) if doc else {}
            _merge(source, upd.doc)
            if doc is not None and source == doc.source:
                result.noop += 1
                continue
            self._store(target, upd.id, source)
            result.succeeded += 1
        return result

    def delete_doc(self, index: str, doc_id: str) -> None:
        """Not in the protocol (the core never deletes documents); tests use it."""
        idx = self._idx(index)
        idx.deleted_copies.append((doc_id, idx.docs.pop(doc_id).source))

    # -- reads ---------------------------------------------------------------------------
    def get(self, index: str, doc_id: str) -> SearchHit | None:
        doc = self._idx(index).docs.get(doc_id)
        return None if doc is None else self._hit(doc_id, doc)

    def search(
        self, index: str, body: Mapping[str, Any], params: Mapping[str, Any] | None = None
    ) -> SearchResult:
        self.searches.append(dict(body))
        self.search_params.append(params)
        if self.hits is not None:
            return SearchResult(hits=list(self.hits), total=len(self.hits), took_ms=1)
        idx = self._idx(index)
        search_type = (params or {}).get("search_type", GLOBAL_STATS)
        if search_type not in (GLOBAL_STATS, SHARD_STATS):
            raise EngineError(f"the in-memory backend has no search_type {search_type!r}")
        scored = []
        for doc_id, doc in idx.docs.items():
            shard = shard_of(doc_id, idx.shards) if search_type == SHARD_STATS else None
            score = self._score(
                idx, doc_id, doc.source, body.get("query"), self._stats_for(idx, shard)
            )
            if score is not None:
                scored.append((score, doc_id, doc))
        scored.sort(key=lambda found: (-found[0], found[1]))
        hits = [
            self._hit(i, d, body.get("_source", True)).model_copy(update={"score": score})
            for score, i, d in scored[: int(body.get("size", 10))]
        ]
        return SearchResult(hits=hits, total=len(scored), took_ms=1)

    def _stats_for(self, idx: MemoryIndex, shard: int | None) -> Callable[[str], FieldStats]:
        """Per-field statistics over the live documents, of the index or of one shard."""
        sources = [
            d.source
            for i, d in idx.docs.items()
            if shard is None or shard_of(i, idx.shards) == shard
        ]
        cache: dict[str, FieldStats] = {}

        def stats(name: str) -> FieldStats:
            if name not in cache:
                cache[name] = self._field_stats(idx, name, sources)
            return cache[name]

        return stats

    def msearch(
        self,
        index: str,
        bodies: Sequence[Mapping[str, Any]],
        params: Mapping[str, Any] | None = None,
    ) -> list[SearchResult]:
        return [self.search(index, b, params) for b in bodies]

    def term_statistics(
        self, index: str, field: str, texts: list[str], *, source_field: str | None = None
    ) -> list[TextTermStatistics]:
        """Like Lucene's: deleted copies count until ``expunge_deletes``, and on a multi-shard
        index only the shard the artificial document lands on is counted."""
        if not texts:
            return []
        self.calls.append(("term_statistics", (field, list(texts))))
        idx = self._idx(index)
        copies = [(i, d.source) for i, d in idx.docs.items()] + idx.deleted_copies
        sources = [
            source
            for doc_id, source in copies
            if shard_of(doc_id, idx.shards) == ARTIFICIAL_DOC_SHARD
        ]
        out = []
        for text in texts:
            terms = [
                TermStatistic(
                    term=t, doc_freq=sum(t in self._terms_of(idx, s, field) for s in sources)
                )
                for t in field_terms(field, text)
            ]
            out.append(
                TextTermStatistics(
                    text=text,
                    field=field,
                    terms=terms,
                    field_statistics=FieldStatistics(doc_count=len(sources)),
                )
            )
        return out

    def analyze_terms(
        self, index: str, fields: Sequence[str], texts: Sequence[str]
    ) -> list[dict[str, list[str]]]:
        if not texts:
            return []
        self.calls.append(("analyze_terms", (list(fields), list(texts))))
        return [{f: sorted(field_terms(f, text)) for f in fields} for text in texts]

    def shard_routings(self, index: str) -> ShardRoutings | None:
        """One routing value per shard: the double reads a routing value as the shard number.
        None for several indexes, and when ``bounds_unavailable`` (a target with no per-shard
        statistics, such as partitioned routing)."""
        self.calls.append(("shard_routings", index))
        names, _ = self.resolve_name(index)
        if self.bounds_unavailable or len(names) != 1:
            return None
        shards = self.indexes[names[0]].shards
        return ShardRoutings(index=names[0], routings=[str(n) for n in range(shards)])

    def term_vectors(self, index: str, docs: Sequence[ArtificialDocument]) -> list[TermVectors]:
        """Like the engines': each field's terms of each document (its own analysis, or each
        value as given), sorted, with the ``docFreq`` of the shard its routing names (deleted
        copies included); positions as Lucene lays out a multi-valued field: each value's
        first token ``POSITION_GAP`` + 1 after the previous value's last one, and a value
        without tokens moves on by the gap too, once an earlier value had some."""
        self.calls.append(("term_vectors", list(docs)))
        idx = self._idx(index)
        memo: dict[tuple[str, str, int], int] = {}  # packs repeat terms: count each once
        out: list[TermVectors] = []
        for doc in docs:
            shard = int(doc.routing) if doc.routing is not None else ARTIFICIAL_DOC_SHARD
            answer = TermVectors({}, {})
            for name in doc.fields:
                value = doc.values.get(SUBFIELD_PARENT.get(name, name), [])
                positions: dict[str, list[int]] = {}
                last = -1
                for one in value if isinstance(value, list) else [value]:
                    if last >= 0:
                        last += POSITION_GAP
                    for token in [one] if doc.as_given else field_tokens(name, one):
                        last += 1
                        positions.setdefault(token, []).append(last)
                for term in positions:
                    if (name, term, shard) not in memo:
                        memo[(name, term, shard)] = self._shard_doc_freq(idx, name, term, shard)
                ordered = sorted(positions.items())
                answer.doc_freqs[name] = {t: memo[(name, t, shard)] for t, _ in ordered}
                if doc.positions:
                    answer.positions[name] = {t: tuple(p) for t, p in ordered}
            out.append(answer)
        return out

    def _shard_doc_freq(self, idx: MemoryIndex, name: str, term: str, shard: int) -> int:
        """Lucene's ``docFreq`` on one shard: live documents and deleted copies holding it."""
        copies = [(i, d.source) for i, d in idx.docs.items()] + idx.deleted_copies
        return sum(
            term in self._terms_of(idx, source, name)
            for doc_id, source in copies
            if shard_of(doc_id, idx.shards) == shard
        )

    def analyze(self, index: str, field: str, values: Sequence[str]) -> list[AnalyzedToken]:
        """The double's analysis of each value, every token given its value's whole span as
        offsets (UTF-16 units, one between values, as the engines count them); more than the
        engines' default token cap is refused as theirs is."""
        self.calls.append(("analyze", (field, list(values))))
        out: list[AnalyzedToken] = []
        at = 0
        for value in values:
            end = at + len(value.encode("utf-16-le", "surrogatepass")) // 2
            out += [AnalyzedToken(t, at, end) for t in field_tokens(field, value)]
            at = end + 1
        if len(out) > ANALYZE_MAX_TOKENS:
            raise AnalysisRefusedError(
                f"{len(out)} tokens, over index.analyze.max_token_count", too_many_tokens=True
            )
        return out

    def index_doc_counts(self, index: str) -> IndexDocCounts | None:
        """Like the engines': live documents and the deleted copies not yet expunged."""
        self.calls.append(("index_doc_counts", index))
        names, _ = self.resolve_name(index)
        if len(names) != 1:
            return None
        idx = self.indexes[names[0]]
        return IndexDocCounts(
            index=names[0],
            uuid=idx.uuid,
            doc_count=len(idx.docs),
            deleted_docs=len(idx.deleted_copies),
            round_trips=2,
        )

    def live_doc_freqs(self, index: str, terms: Sequence[tuple[str, str]]) -> LiveDocFrequencies:
        self.calls.append(("live_doc_freqs", list(terms)))
        idx = self._idx(index)
        ordered = list(dict.fromkeys((str(f), str(t)) for f, t in terms))
        return LiveDocFrequencies(
            doc_count=len(idx.docs),
            counts=[
                TermCount(
                    field=f,
                    term=t,
                    doc_freq=sum(t in self._terms_of(idx, d.source, f) for d in idx.docs.values()),
                )
                for f, t in ordered
            ],
        )

    def index_settings(self, index: str) -> dict[str, dict[str, Any]]:
        names, _ = self.resolve_name(index)
        return {
            n: {
                "number_of_shards": str(self.indexes[n].shards),
                "analysis": {"analyzer": {a: {} for a in self.indexes[n].analyzers}},
            }
            for n in names
        }

    def aliases(self, name: str) -> dict[str, list[str]]:
        names, _ = self.resolve_name(name)
        return {
            n: sorted(a for a, members in self.alias_map.items() if n in members) for n in names
        }

    def update_aliases(self, actions: Sequence[Mapping[str, Any]]) -> None:
        staged = copy.deepcopy(self.alias_map)  # all or nothing, as the engines apply them
        for action in actions:
            ((kind, spec),) = action.items()
            if spec["index"] not in self.indexes:
                raise EngineError(f"no such index {spec['index']!r}")
            members = staged.setdefault(spec["alias"], {})
            if kind == "add":
                members[spec["index"]] = bool(spec.get("is_write_index", False))
            elif kind == "remove":
                if spec["index"] not in members:
                    raise EngineError(f"{spec['index']!r} has no alias {spec['alias']!r}")
                del members[spec["index"]]
            else:
                raise AssertionError(f"unknown alias action {kind!r}")
        self.alias_map = {a: m for a, m in staged.items() if m}

    def explain(self, index: str, doc_id: str, query: Mapping[str, Any]) -> dict[str, Any] | None:
        """The document's score under ``search``'s (index-wide) statistics, with one detail
        per scoring term; ``None`` when it does not match."""
        idx = self._idx(index)
        doc = idx.docs.get(doc_id)
        if doc is None:
            return None
        details: list[dict[str, Any]] = []
        score = self._score(idx, doc_id, doc.source, query, self._stats_for(idx, None), details)
        if score is None:
            return None
        details = details or [{"value": score, "description": "constant score", "details": []}]
        return {"value": score, "description": "sum of:", "details": details}

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
        self.scan_queries.append(query)
        idx = self._idx(index)
        snapshot = copy.deepcopy(idx.docs)  # a point in time
        ids = [i for i in sorted(snapshot) if self._matches(idx, i, snapshot[i].source, query)]
        if max_slices and max_slices > 1:
            ids = [i for n, i in enumerate(ids) if n % max_slices == (slice_id or 0)]
        lose_after, self.lose_scan_context_after = self.lose_scan_context_after, None
        opened = self.scan_contexts_dropped
        for n, start in enumerate(range(0, len(ids), page_size)):
            lost = self.scan_contexts_dropped != opened
            if lost or (lose_after is not None and n >= lose_after):
                raise ScanContextLostError("the in-memory point in time was dropped by the test")
            yield [self._hit(i, snapshot[i], source) for i in ids[start : start + page_size]]

    # -- vectors -------------------------------------------------------------------------
    def vector_mapping(self, dims: int, similarity: VectorSimilarity) -> dict[str, Any]:
        check_vector_field(dims, similarity)
        if not self.caps.vectors:
            raise VectorsUnavailableError("the in-memory backend was built without vectors")
        return {"type": "dense_vector", "dims": dims, "similarity": similarity}

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
        """EXACT nearest neighbours (the engines' HNSW is approximate, and exact on a few
        documents), scored as both engines score: cosine and dot product (1 + s) / 2,
        l2 1 / (1 + d^2); nearest first, ties by id."""
        check_knn_request(vector, k=k, num_candidates=num_candidates)
        if not self.caps.vectors:
            raise VectorsUnavailableError("the in-memory backend was built without vectors")
        idx = self._idx(index)
        spec = idx.properties.get(field) or {}
        if spec.get("type") != "dense_vector":
            raise EngineError(f"{field!r} is not a vector field of {index!r}")
        if len(vector) != spec["dims"]:
            raise EngineError(f"the query vector has {len(vector)} dimensions, not {spec['dims']}")
        scored = []
        for doc_id, doc in idx.docs.items():
            stored = doc.source.get(field)
            if stored is None:
                continue
            scored.append((_vector_score(spec["similarity"], vector, stored), doc_id, doc))
        scored.sort(key=lambda found: (-found[0], found[1]))
        shown: list[str] | bool = list(source) if source is not None else True
        hits = []
        for score, doc_id, doc in scored[:k]:
            hit = self._hit(doc_id, doc, shown).model_copy(update={"score": score})
            if source is None and hit.source is not None:
                hit.source.pop(field, None)
            hits.append(hit)
        return SearchResult(hits=hits, total=len(hits), took_ms=1)

    def close(self) -> None:
        return None
