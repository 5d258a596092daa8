"""Tolerant parsing of an enrichment answer into phrases and categories.

Models wrap JSON in prose or code fences, stop mid-list, or answer with a bare list; a
recoverable answer must still yield its phrases, because losing them silently degrades SIRA to
plain BM25.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


class ParsedEnrichment(BaseModel):
    """Phrases (and categories) recovered from one answer."""

    phrases: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    recovered: bool = Field(default=False, description="True when strict JSON parsing failed.")


def clean_phrases(items: Iterable[Any], limit: int | None = None) -> list[str]:
    """Strip, collapse whitespace, drop empties and case-insensitive duplicates, keep order."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            continue
        phrase = " ".join(str(item).split()).strip(" \t,;.-*•")
        key = phrase.casefold()
        if not phrase or key in seen:
            continue
        seen.add(key)
        out.append(phrase)
        if limit is not None and len(out) >= limit:
            break
    return out


def _from_value(value: Any, limit: int) -> ParsedEnrichment | None:
    if isinstance(value, dict):
        raw = value.get("keywords", value.get("phrases", value.get("terms")))
        if not isinstance(raw, list):
            return None
        cats = value.get("categories")
        return ParsedEnrichment(
            phrases=clean_phrases(raw, limit),
            categories=clean_phrases(cats if isinstance(cats, list) else [], limit),
        )
    if isinstance(value, list):
        return ParsedEnrichment(phrases=clean_phrases(value, limit))
    return None


def json_candidates(text: str) -> Iterable[str]:
    yield text
    yield from (m.group(1) for m in _FENCE.finditer(text))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        yield text[start : end + 1]
    start, end = text.find("["), text.rfind("]")
    if 0 <= start < end:
        yield text[start : end + 1]


def _unescape(raw: str) -> str:
    """A JSON string body as the model meant it (``\\u00e9`` is é, ``\\"`` is a quote);
    recovered phrases must equal what strict parsing of the complete answer would give."""
    try:
        value = json.loads(f'"{raw}"', strict=False)
    except ValueError:
        return raw
    return value if isinstance(value, str) else raw


def parse_enrichment(answer: Any, *, limit: int = 10) -> ParsedEnrichment:
    """Phrases from an already-decoded object, a JSON string, or JSON buried in prose.

    Last resort for a truncated answer: the quoted strings after ``"keywords"``, else one
    phrase per line or comma.
    """
    if not isinstance(answer, str):
        return _from_value(answer, limit) or ParsedEnrichment()
    text = answer.strip()
    for candidate in json_candidates(text):
        try:
            parsed = _from_value(json.loads(candidate), limit)
        except (json.JSONDecodeError, ValueError):
            continue
        if parsed is not None:
            return parsed
    tail = text.split('"keywords"', 1)[1] if '"keywords"' in text else ""
    quoted = [_unescape(m.group(1)) for m in _QUOTED.finditer(tail)] if tail else []
    if quoted:
        return ParsedEnrichment(phrases=clean_phrases(quoted, limit), recovered=True)
    if not text or text.startswith(("{", "[")):
        return ParsedEnrichment(recovered=True)
    pieces = re.split(r"[\n,;]", text)
    return ParsedEnrichment(phrases=clean_phrases(pieces, limit), recovered=True)
