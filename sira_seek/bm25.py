"""Plain BM25 over the corpus layout: the baseline every SIRA run is compared with."""

from __future__ import annotations

from typing import Any

from .fields import CONTENTS


def bm25_query(text: str, *, field: str = CONTENTS, name: str = "bm25_original") -> dict[str, Any]:
    """Lucene BM25 (k1 1.2, b 0.75, from the index settings) over title + text."""
    return {"query": {"match": {field: {"query": text, "_name": name}}}}
