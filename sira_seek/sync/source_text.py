"""What sira-sync reads from a document: the source fields' values, their hash, and the text
the LLM sees.

The hash covers field names and values exactly as stored in ``_source`` (canonical JSON), so any
edit to a source field — and only such an edit — makes the document's enrichment stale.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any


def field_value(source: Mapping[str, Any] | None, path: str) -> Any:
    """The value at a dotted ``path`` in ``source`` (None when absent)."""
    if source is None:
        return None
    if path in source:
        return source[path]
    node: Any = source
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def source_hash(source: Mapping[str, Any] | None, fields: Sequence[str]) -> str:
    """``sha256:`` + hex digest of the source fields as canonical JSON."""
    values = {f: field_value(source, f) for f in fields}
    canonical = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(_as_text(v) for v in value)
    return str(value)


def document_text(source: Mapping[str, Any] | None, fields: Sequence[str], budget: int) -> str:
    """Source fields joined (title first when it is listed first), whitespace collapsed, cut to
    ``budget`` characters at a word boundary: the reference reads ~4,000 chars per document."""
    parts = [" ".join(_as_text(field_value(source, f)).split()) for f in fields]
    text = "\n".join(p for p in parts if p)
    if len(text) <= budget:
        return text
    cut = text[:budget]
    space = cut.rfind(" ")
    return cut[:space] if space > budget * 0.8 else cut
