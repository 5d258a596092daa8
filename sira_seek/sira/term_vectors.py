"""Term statistics of many texts over several fields in ONE round trip.

``SearchBackend.term_statistics`` covers one field per call; SIRA needs the unigram field, the
shingle subfield and the enrichment fields together, and one request per query keeps the DF check
cheap. ``_mtermvectors`` with artificial documents is the same REST call on Elasticsearch and
OpenSearch, so it is sent through the backend's generic ``request`` when it has one; otherwise
this falls back to one ``term_statistics`` call per field.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, Field

from sira_seek.backend import SearchBackend, TermStatistic
from sira_seek.fields import SUBFIELD_PARENT


class TextFieldTerms(BaseModel):
    """The analysed terms of one text, per field, with index-wide document frequencies."""

    text: str
    fields: dict[str, list[TermStatistic]] = Field(default_factory=dict)


class BatchTermStatistics(BaseModel):
    texts: list[TextFieldTerms]
    doc_count: int = Field(description="Documents in the index (|C|), from field statistics.")
    round_trips: int


class TermStatisticsError(RuntimeError):
    """The engine refused the term-statistics request."""


def _set_path(doc: dict[str, Any], path: str, value: str) -> None:
    *parents, leaf = path.split(".")
    node = doc
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def _artificial_doc(text: str, fields: list[str]) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for field in fields:
        _set_path(doc, SUBFIELD_PARENT.get(field, field), text)
    return doc


def _terms(raw_field: dict[str, Any]) -> list[TermStatistic]:
    return [
        TermStatistic(
            term=term,
            doc_freq=int(stats.get("doc_freq", 0)),  # absent from the index: no doc_freq key
            total_term_freq=int(stats.get("ttf", 0)),
        )
        for term, stats in raw_field.get("terms", {}).items()
    ]


def _error_reason(error: Any) -> str:
    if isinstance(error, dict):
        root = (error.get("root_cause") or [error])[0]
        return f"{root.get('type', 'error')}: {root.get('reason', error)}"
    return str(error)


def batch_term_statistics(
    backend: SearchBackend, index: str, fields: list[str], texts: list[str]
) -> BatchTermStatistics:
    """Analyse every text with every field's analyzer and return each term's DF."""
    if not texts or not fields:
        return BatchTermStatistics(
            texts=[TextFieldTerms(text=t) for t in texts], doc_count=0, round_trips=0
        )
    request = getattr(backend, "request", None)
    if not callable(request):
        return _per_field(backend, index, fields, texts)
    docs = [
        {
            "doc": _artificial_doc(text, fields),
            "fields": fields,
            "term_statistics": True,
            "field_statistics": True,
            "positions": False,
            "offsets": False,
            "payloads": False,
        }
        for text in texts
    ]
    raw = request("POST", f"/{quote(index)}/_mtermvectors", body={"docs": docs})
    out: list[TextFieldTerms] = []
    doc_count = 0
    for text, doc in zip(texts, raw.get("docs", []), strict=True):
        if "error" in doc:
            raise TermStatisticsError(f"term statistics failed: {_error_reason(doc['error'])}")
        vectors = doc.get("term_vectors", {})
        out.append(
            TextFieldTerms(text=text, fields={f: _terms(vectors.get(f, {})) for f in fields})
        )
        for field_stats in vectors.values():
            doc_count = max(
                doc_count, int(field_stats.get("field_statistics", {}).get("doc_count", 0))
            )
    return BatchTermStatistics(texts=out, doc_count=doc_count, round_trips=1)


def _per_field(
    backend: SearchBackend, index: str, fields: list[str], texts: list[str]
) -> BatchTermStatistics:
    """Fallback for backends without a generic ``request``: one round trip per field."""
    out = [TextFieldTerms(text=t) for t in texts]
    doc_count = 0
    for field in fields:
        stats = backend.term_statistics(index, field, texts)
        for entry, stat in zip(out, stats, strict=True):
            entry.fields[field] = stat.terms
            if stat.field_statistics:
                doc_count = max(doc_count, stat.field_statistics.doc_count)
    return BatchTermStatistics(texts=out, doc_count=doc_count, round_trips=len(fields))
