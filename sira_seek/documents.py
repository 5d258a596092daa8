"""Fetching stored documents by id: the one way every layer reads texts after a ranking.

Rankings are scored without ``_source`` (or with titles only), so the request stays the one Dev
Tools shows and the scoring round trip stays small; the texts are read afterwards by id. That
read was written five times (the MCP tools, the framework retrievers, the QA coverage, the
retrieval evaluation's retrievers, the LLM rerank of a run); it lives here, below ``seek``,
``sira`` and ``workflows``, because all three need it and methods must not import workflows.

Both functions are one ``ids`` query over ``SearchBackend.search``/``msearch`` (a search, not a
realtime get: what a search found, a search can read back). A document the index no longer
holds (deleted between the ranking and the read) is simply absent from the answer; callers
decide what an absent id means (an empty passage keeping its rank, a warning, a left-out row).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from sira_seek.backend import SearchBackend
from sira_seek.fields import TEXT, TITLE

logger = logging.getLogger(__name__)

PASSAGE_FIELDS: tuple[str, ...] = (TITLE, TEXT)
"""What a reader of a passage needs; the default of both functions."""

Source = dict[str, Any]


def _body(ids: Sequence[str], fields: Sequence[str] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"query": {"ids": {"values": list(ids)}}, "size": len(ids)}
    if fields is not None:
        body["_source"] = list(fields)
    return body


def fetch_documents(
    backend: SearchBackend,
    index: str,
    ids: Sequence[str],
    fields: Sequence[str] | None = PASSAGE_FIELDS,
) -> dict[str, Source]:
    """id -> the stored ``_source`` (only ``fields``; ``None`` reads the whole document) of each
    id the index holds, in one request. No ids, no request."""
    if not ids:
        return {}
    found = backend.search(index, _body(ids, fields))
    return {hit.id: hit.source or {} for hit in found.hits}


def fetch_documents_many(
    backend: SearchBackend,
    index: str,
    ids_per_key: Mapping[str, Sequence[str]],
    fields: Sequence[str] | None = PASSAGE_FIELDS,
    *,
    batch: int = 50,
) -> dict[str, dict[str, Source]]:
    """key -> ``fetch_documents`` of its ids, for many keys (one per query of a run): one
    ``ids`` query per key, ``batch`` keys per ``_msearch`` round trip. A key without ids maps
    to ``{}`` without a query."""
    out: dict[str, dict[str, Source]] = {key: {} for key in ids_per_key}
    keys = [key for key, ids in ids_per_key.items() if ids]
    for start in range(0, len(keys), batch):
        part = keys[start : start + batch]
        bodies = [_body(ids_per_key[key], fields) for key in part]
        for key, found in zip(part, backend.msearch(index, bodies), strict=True):
            out[key] = {hit.id: hit.source or {} for hit in found.hits}
    return out


def missing_ids(ids: Sequence[str], found: Mapping[str, Source]) -> list[str]:
    """The ids a fetch did not return (deleted since the ranking), in their order."""
    return [doc_id for doc_id in ids if doc_id not in found]


def field_text(source: Mapping[str, Any], field: str) -> str:
    """One stored field as text ('' when absent or null)."""
    value = source.get(field)
    return "" if value is None else str(value)
