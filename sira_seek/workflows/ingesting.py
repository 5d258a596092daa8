"""Ingesting a BEIR corpus into an index, optionally with passage vectors (``sira-seek
ingest``, the demo): the ingest function, the recreate step and the embedder a command builds
from its ``--embed`` spec.

Re-exported from ``sira_seek.ingest`` and ``sira_seek.embed`` (loaded on first use, PEP 562:
onnxruntime and NumPy only when an embedder is asked for).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sira_seek.embed import Embedder, make_embedder
    from sira_seek.embed.factory import live_embedder_spec
    from sira_seek.embed.spec import parse_embedder_spec
    from sira_seek.ingest import delete_for_recreate, ingest_corpus

__all__ = [
    "Embedder",
    "delete_for_recreate",
    "ingest_corpus",
    "live_embedder_spec",
    "make_embedder",
    "parse_embedder_spec",
]

_EXPORTS = {
    "sira_seek.ingest": (
        "delete_for_recreate",
        "ingest_corpus",
    ),
    "sira_seek.embed": (
        "Embedder",
        "make_embedder",
    ),
    "sira_seek.embed.spec": ("parse_embedder_spec",),
    "sira_seek.embed.factory": ("live_embedder_spec",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
