"""What sira-sync's unit tests add to the shared in-memory backend: the enriched layout.

The backend itself (``InMemoryBackend`` in ``tests/unit/doubles``) implements ``SearchBackend``
with engine-like write guards, deleted copies and a losable point in time; this module only
says which fields a corpus index holds before and after sira-sync adds its own.
"""

from __future__ import annotations

from typing import Any

from in_memory_backend import default_properties

from sira_seek.sync.mapping import enrichment_properties


def layout_properties(*, enrichment: bool = True) -> dict[str, Any]:
    """The corpus layout's properties, with the enrichment fields unless ``enrichment=False``."""
    props = default_properties()
    if enrichment:
        props |= enrichment_properties()
    return props
