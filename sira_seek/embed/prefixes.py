"""The text each retrieval model expects before a query or a passage.

Asymmetric retrieval models are trained with fixed prefixes and lose accuracy without them;
symmetric sentence models (all-MiniLM-L6-v2) take none. The prefixes are those of each model's
own model card, matched on the model name, so ``openai:URL#intfloat/e5-small-v2`` embeds as its
authors intended without any extra setting.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Prefixes(BaseModel):
    """What goes before a query and before a document."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str = ""
    document: str = ""


_QWEN3_QUERY = (
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
)

_BGE_QUERY = "Represent this sentence for searching relevant passages: "

# (substring of the lower-cased model name, prefixes); the first match wins.
_KNOWN: tuple[tuple[str, Prefixes], ...] = (
    ("bge-m3", Prefixes()),  # BGE-M3 takes no instruction
    ("qwen3-embedding", Prefixes(query=_QWEN3_QUERY)),
    ("e5-", Prefixes(query="query: ", document="passage: ")),
    ("bge-", Prefixes(query=_BGE_QUERY)),
    ("nomic-embed", Prefixes(query="search_query: ", document="search_document: ")),
    ("arctic-embed", Prefixes(query=_BGE_QUERY)),
)


def prefixes_for(model: str) -> Prefixes:
    """The prefixes ``model``'s card asks for; none for a model this table does not know."""
    name = model.lower()
    for key, prefixes in _KNOWN:
        if key in name:
            return prefixes
    return Prefixes()
