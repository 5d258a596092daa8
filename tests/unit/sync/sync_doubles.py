"""An in-memory index standing in for a cluster in sira-sync's unit tests.

It keeps per-document ``_seq_no`` and ``_version`` and enforces ``if_seq_no`` guards like an
engine (409 on a mismatch), analyses ``contents`` as lowercase words minus a few stopwords (plus
bigram shingles), and answers the few REST calls sira-sync sends through ``request``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from sira_seek.backend import (
    BulkItemError,
    BulkResult,
    ClusterInfo,
    PartialUpdate,
    SearchHit,
)

STOP = {"the", "a", "of", "and", "is", "in"}


def analyze(text: str) -> list[str]:
    return [t for t in re.findall(r"\w+", text.lower()) if t not in STOP]


def bigrams(text: str) -> list[str]:
    toks = analyze(text)
    return [f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False)]


def layout_mapping(*, enrichment: bool = True) -> dict[str, Any]:
    props: dict[str, Any] = {
        "title": {"type": "text", "analyzer": "sira_text", "copy_to": "contents"},
        "text": {"type": "text", "analyzer": "sira_text", "copy_to": "contents"},
        "contents": {
            "type": "text",
            "analyzer": "sira_text",
            "fields": {"shingles": {"type": "text", "analyzer": "sira_shingles"}},
        },
    }
    if enrichment:
        from sira_seek.sync.mapping import enrichment_properties

        props |= enrichment_properties()
    return {"properties": props}


def _merge(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def _pick(source: dict[str, Any], includes: list[str] | bool) -> dict[str, Any]:
    if includes is True:
        return copy.deepcopy(source)
    if not includes:
        return {}
    return {k: copy.deepcopy(v) for k, v in source.items() if k in includes}


class InMemoryIndex:
    """A one-index ``SearchBackend`` (plus ``request``) with engine-like write guards."""

    name = "memory"

    def __init__(
        self,
        docs: Mapping[str, Mapping[str, Any]],
        *,
        index: str = "idx",
        mapping: dict[str, Any] | None = None,
        analyzers: tuple[str, ...] = ("sira_text", "sira_shingles"),
    ) -> None:
        self.index = index
        self.info = ClusterInfo(engine="memory", version="1.0", url="memory://")
        self.mapping = mapping if mapping is not None else layout_mapping()
        self.analyzers = analyzers
        self.seq = 0
        self.docs: dict[str, dict[str, Any]] = {}
        for doc_id, source in docs.items():
            self._store(doc_id, dict(source))
        self.put_mappings: list[dict[str, Any]] = []
        self.scan_queries: list[Any] = []
        self.before_bulk: Callable[[InMemoryIndex, list[PartialUpdate]], None] | None = None
        self.bulk_calls = 0

    def _store(self, doc_id: str, source: dict[str, Any]) -> None:
        version = self.docs.get(doc_id, {}).get("version", 0) + 1
        self.docs[doc_id] = {"source": source, "seq_no": self.seq, "version": version}
        self.seq += 1

    def edit(self, doc_id: str, **fields: Any) -> None:
        """What a user's own write does: change source fields, bump seq_no."""
        source = copy.deepcopy(self.docs[doc_id]["source"])
        source.update(fields)
        self._store(doc_id, source)

    # -- SearchBackend -----------------------------------------------------------------------
    def index_exists(self, index: str) -> bool:
        return index == self.index

    def get_mapping(self, index: str) -> dict[str, Any]:
        return {self.index: {"mappings": copy.deepcopy(self.mapping)}}

    def put_mapping(self, index: str, properties: Mapping[str, Any]) -> None:
        self.put_mappings.append(dict(properties))
        _merge(self.mapping["properties"], properties)

    def count(self, index: str, query: Mapping[str, Any] | None = None) -> int:
        return len(self.docs)

    def get(self, index: str, doc_id: str) -> SearchHit | None:
        doc = self.docs.get(doc_id)
        if doc is None:
            return None
        return SearchHit(
            id=doc_id,
            score=0.0,
            source=copy.deepcopy(doc["source"]),
            seq_no=doc["seq_no"],
            primary_term=1,
        )

    def _matches(self, source: dict[str, Any], query: Mapping[str, Any] | None) -> bool:
        """Understands the one query sira-sync sends: must_not(filter[range, terms])."""
        if not query:
            return True
        sync = source.get("sira_sync") or {}
        for clause in query["bool"]["must_not"]:
            hit = True
            for f in clause["bool"]["filter"]:
                if "range" in f:
                    ((field, cond),) = f["range"].items()
                    value = sync.get(field.split(".", 1)[1])
                    hit &= value is not None and value >= cond["gte"]
                else:
                    ((field, want),) = f["term"].items()
                    hit &= sync.get(field.split(".", 1)[1]) == want
            if hit:
                return False
        return True

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
        snapshot = copy.deepcopy(self.docs)  # a point in time
        ids = [i for i in sorted(snapshot) if self._matches(snapshot[i]["source"], query)]
        for start in range(0, len(ids), page_size):
            yield [
                SearchHit(
                    id=i,
                    score=0.0,
                    source=_pick(snapshot[i]["source"], source),
                    seq_no=snapshot[i]["seq_no"],
                    primary_term=1,
                )
                for i in ids[start : start + page_size]
            ]

    def bulk_partial_update(self, index: str, updates: Any) -> BulkResult:
        updates = list(updates)
        self.bulk_calls += 1
        if self.before_bulk is not None:
            hook, self.before_bulk = self.before_bulk, None
            hook(self, updates)
        result = BulkResult()
        for upd in updates:
            doc = self.docs.get(upd.id)
            if doc is None:
                result.errors.append(BulkItemError(id=upd.id, status=404, reason="missing"))
                continue
            if upd.if_seq_no is not None and upd.if_seq_no != doc["seq_no"]:
                result.errors.append(BulkItemError(id=upd.id, status=409, reason="conflict"))
                continue
            source = copy.deepcopy(doc["source"])
            _merge(source, upd.doc)
            self._store(upd.id, source)
            result.succeeded += 1
        return result

    # -- REST that sira-sync sends -----------------------------------------------------------
    def tv_df(self, field: str, term: str) -> int:
        """Term-statistics DF: counts deleted copies too, so here it always over-counts."""
        return 10**6

    def _df(self, field: str, term: str) -> int:
        def contents(src: dict[str, Any]) -> str:
            return f"{src.get('title', '')} {src.get('text', '')}"

        split = bigrams if field.endswith("shingles") else analyze
        return sum(term in split(contents(d["source"])) for d in self.docs.values())

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Any = None,
        body: Any = None,
        ignore: tuple[int, ...] = (),
    ) -> Any:
        if path.endswith("/_settings"):
            analyzer = {name: {} for name in self.analyzers}
            return {self.index: {"settings": {"index": {"analysis": {"analyzer": analyzer}}}}}
        if path.endswith("/_analyze"):
            split = bigrams if body["field"].endswith("shingles") else analyze
            tokens, base = [], 0
            for value in body["text"]:
                spans = [
                    (m.group().lower(), m.start(), m.end()) for m in re.finditer(r"\w+", value)
                ]
                for term in split(value):
                    first = term.split()[0]
                    start = next(a for t, a, _ in spans if t == first)
                    end = start + len(term)
                    tokens.append(
                        {
                            "token": term,
                            "start_offset": base + start,
                            "end_offset": base + min(end, len(value)),
                        }
                    )
                base += len(value) + 1
            self.analyze_calls = getattr(self, "analyze_calls", 0) + 1
            return {"tokens": tokens}
        if path.endswith("/_termvectors"):
            vectors = {}
            for field in body["fields"]:
                split = bigrams if field.endswith("shingles") else analyze
                terms = {t for value in body["doc"]["contents"] for t in split(value)}
                vectors[field] = {"terms": {t: {"doc_freq": self.tv_df(field, t)} for t in terms}}
            return {"term_vectors": vectors}
        if path.endswith("/_mtermvectors"):
            out = []
            for doc in body["docs"]:
                text = doc["doc"]["contents"]
                vectors = {}
                for field in doc["fields"]:
                    split = bigrams if field.endswith("shingles") else analyze
                    vectors[field] = {
                        "field_statistics": {"doc_count": len(self.docs)},
                        # term statistics over-count (deleted copies): sira-sync must not use them
                        "terms": {t: {"doc_freq": self.tv_df(field, t)} for t in split(text)},
                    }
                out.append({"term_vectors": vectors})
            return {"docs": out}
        if path.endswith("/_search"):
            filters = body["aggs"]["df"]["filters"]["filters"]
            buckets = {}
            for key, f in filters.items():
                ((field, term),) = f["term"].items()
                buckets[key] = {"doc_count": self._df(field, term)}
            return {"aggregations": {"df": {"buckets": buckets}}}
        raise AssertionError(f"unexpected request {method} {path}")

    def refresh(self, index: str) -> None:
        return None

    def close(self) -> None:
        return None
