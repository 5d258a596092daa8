"""Grounding LLM-proposed categories before they enter a query.

A category the index does not hold is a term that matches nothing, and a near-miss spelling
silently loses the feature. So each proposal is checked (exact keyword count) and its close
neighbours are looked up (match on the category words), all in one ``_msearch``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from sira_seek.backend import SearchBackend

CategoryDecisionKind = Literal["exists", "close_match", "absent"]


class CategoryDecision(BaseModel):
    category: str
    decision: CategoryDecisionKind
    doc_count: int = 0
    use: str | None = Field(default=None, description="The category value put in the query.")
    neighbours: list[str] = Field(default_factory=list)


def _words(text: str) -> set[str]:
    return {w for w in "".join(c if c.isalnum() else " " for c in text.casefold()).split()}


def rank_neighbours(category: str, found: list[str]) -> list[str]:
    """Existing categories sharing words with ``category``, most overlapping first."""
    target = _words(category)
    scored: dict[str, float] = {}
    for value in found:
        words = _words(value)
        if not words or not target:
            continue
        overlap = len(target & words) / len(target | words)
        if overlap > 0:
            scored[value] = max(scored.get(value, 0.0), overlap)
    return sorted(scored, key=lambda v: (-scored[v], v))


def _categories_of(source: dict[str, Any] | None, field: str) -> list[str]:
    node: Any = source or {}
    for part in field.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, str):
        return [node]
    return [v for v in node or [] if isinstance(v, str)]


class CategoryGrounder:
    """Checks proposed categories against a keyword field of one index."""

    def __init__(
        self, backend: SearchBackend, index: str, field: str, *, use_close: bool = False
    ) -> None:
        self.backend = backend
        self.index = index
        self.field = field
        self.use_close = use_close

    def ground(self, proposals: list[str]) -> list[CategoryDecision]:
        if not proposals:
            return []
        bodies: list[dict[str, Any]] = []
        for category in proposals:
            bodies.append(
                {"size": 0, "track_total_hits": True, "query": {"term": {self.field: category}}}
            )
            bodies.append(
                {
                    "size": 10,
                    "_source": [self.field],
                    "query": {"match": {f"{self.field}.words": category}},
                }
            )
        results = self.backend.msearch(self.index, bodies)
        out: list[CategoryDecision] = []
        for i, category in enumerate(proposals):
            exact, near = results[2 * i], results[2 * i + 1]
            found = [c for h in near.hits for c in _categories_of(h.source, self.field)]
            neighbours = [n for n in rank_neighbours(category, found) if n != category][:5]
            if exact.total > 0:
                out.append(
                    CategoryDecision(
                        category=category,
                        decision="exists",
                        doc_count=exact.total,
                        use=category,
                        neighbours=neighbours,
                    )
                )
            elif neighbours:
                out.append(
                    CategoryDecision(
                        category=category,
                        decision="close_match",
                        use=neighbours[0] if self.use_close else None,
                        neighbours=neighbours,
                    )
                )
            else:
                out.append(CategoryDecision(category=category, decision="absent"))
        return out
