"""Embeddings: texts to vectors, for kNN fields, dense and hybrid retrieval and SEEK's
sub-query similarity.

``make_embedder(spec)`` gives an ``Embedder``: ``cpu`` (the default: all-MiniLM-L6-v2 from
PyPI packages, on onnxruntime in this process) or ``openai:URL#MODEL`` (any OpenAI-compatible
``/v1/embeddings``). ``batch:DIR#MODEL`` (a provider's batch job, ``embed.batch``) is taken by
``sira-sync --embed`` alone and refused here. See docs/tutorials/embeddings.md.
"""

from sira_seek.embed.base import (
    Embedder,
    EmbedderError,
    EmbedderUnavailableError,
    Similarity,
)
from sira_seek.embed.factory import make_embedder
from sira_seek.embed.spec import EmbedderSpecError, parse_embedder_spec

__all__ = [
    "Embedder",
    "EmbedderError",
    "EmbedderSpecError",
    "EmbedderUnavailableError",
    "Similarity",
    "make_embedder",
    "parse_embedder_spec",
]
