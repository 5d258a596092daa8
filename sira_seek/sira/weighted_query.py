"""SIRA's single weighted BM25 query, as typed clauses that compile to plain query DSL.

score(d) = BM25(q_orig, d) + w * BM25(q_exp, d) (+ category evidence): a bool query whose
``should`` clauses are summed, the expansion group carrying boost w. Every phrase and category
clause is named so ``matched_queries`` shows which phrase matched and what it scored, and the
compiled body is plain DSL a user can paste into Kibana or Dashboards Dev Tools.

The original query and the two groups are named too only where the engine cannot report
named-query scores (``group_names``); elsewhere their parts are derived from the per-clause
scores (``complete_matched``), since each named query is scored again for every returned hit:
the two groups and the original cost ~0.35x a BM25 query's time on top of the per-phrase
names (benchmarks/sira_latency.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

ORIGINAL_NAME = "sira_original"
EXPANSION_NAME = "sira_expansion"
CATEGORIES_NAME = "sira_categories"
GENERATED_NAME = "generated_text"
"""The group of a generation baseline's text (``hyde``, ``cot``); its clause is named
``generated_text:<method>``."""


class TextClause(BaseModel):
    """BM25 of one text over one or more fields.

    Summed across fields (``most_fields``: each field has its own IDF, length norm and
    saturation) unless ``combined``: then ``fields`` are scored as ONE field (BM25F,
    ``combined_fields``: term frequencies and lengths add up before saturation) and
    ``ngram_fields`` (another analyzer, so another group) likewise, the two groups summed.
    """

    name: str
    text: str
    fields: list[str] = Field(min_length=1)
    ngram_fields: list[str] = Field(default_factory=list)
    combined: bool = False
    boost: float = 1.0

    def _opts(self, named: bool) -> dict[str, Any]:
        opts: dict[str, Any] = {"query": self.text}
        if named:
            opts["_name"] = self.name
        if self.boost != 1.0:
            opts["boost"] = self.boost
        return opts

    def to_dict(self, *, named: bool = True) -> dict[str, Any]:
        opts = self._opts(named)
        if self.combined:
            return self._combined_dict(opts)
        fields = [*self.fields, *self.ngram_fields]
        if len(fields) == 1:
            return {"match": {fields[0]: opts}}
        return {"multi_match": {**opts, "fields": fields, "type": "most_fields"}}

    def _combined_dict(self, opts: dict[str, Any]) -> dict[str, Any]:
        groups = [g for g in (self.fields, self.ngram_fields) if g]

        def part(group: list[str], extra: dict[str, Any]) -> dict[str, Any]:
            if len(group) == 1:
                return {"match": {group[0]: {"query": self.text, **extra}}}
            return {"combined_fields": {"query": self.text, "fields": list(group), **extra}}

        if len(groups) == 1:
            return part(groups[0], {k: v for k, v in opts.items() if k != "query"})
        bool_body: dict[str, Any] = {"should": [part(g, {}) for g in groups]}
        if "_name" in opts:
            bool_body["_name"] = self.name
        if self.boost != 1.0:
            bool_body["boost"] = self.boost
        return {"bool": bool_body}


class CategoryClause(BaseModel):
    """One grounded category as an atomic keyword feature."""

    name: str
    field: str
    value: str

    def to_dict(self) -> dict[str, Any]:
        return {"term": {self.field: {"value": self.value, "_name": self.name}}}


def _group(clauses: list[dict[str, Any]], boost: float, name: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"should": clauses, "boost": boost}
    if name is not None:
        body["_name"] = name
    return {"bool": body}


class WeightedQuery(BaseModel):
    """The compiled SIRA query; with no expansion and no category it is plain BM25."""

    original: TextClause
    expansion: list[TextClause] = Field(default_factory=list)
    weight: float = Field(ge=0.0)
    categories: list[CategoryClause] = Field(default_factory=list)
    category_weight: float = Field(default=1.0, ge=0.0)
    generated: TextClause | None = Field(
        default=None,
        description="A generation baseline's text (hyde, cot), in its own group boosted by "
        "``weight``: BM25(q) + w * BM25(text).",
    )
    size: int = Field(default=10, ge=0)
    source: list[str] | bool = False
    group_names: bool = Field(
        default=True,
        description="Name the original query and the groups too (engines that report no "
        "named-query scores); else ``complete_matched`` derives their scores.",
    )

    @property
    def is_plain_bm25(self) -> bool:
        return not self.expansion and not self.categories and self.generated is None

    def query_dict(self) -> dict[str, Any]:
        named = self.group_names
        if self.is_plain_bm25:
            return self.original.to_dict(named=named)
        should = [self.original.to_dict(named=named)]
        if self.expansion and self.weight > 0:
            should.append(
                _group(
                    [c.to_dict() for c in self.expansion],
                    self.weight,
                    EXPANSION_NAME if named else None,
                )
            )
        if self.generated is not None and self.weight > 0:
            should.append(
                _group(
                    [self.generated.to_dict()],
                    self.weight,
                    GENERATED_NAME if named else None,
                )
            )
        if self.categories and self.category_weight > 0:
            should.append(
                _group(
                    [c.to_dict() for c in self.categories],
                    self.category_weight,
                    CATEGORIES_NAME if named else None,
                )
            )
        if len(should) == 1:
            return should[0]
        return {"bool": {"should": should}}

    def to_dict(self) -> dict[str, Any]:
        """The full ``_search`` body."""
        return {"size": self.size, "_source": self.source, "query": self.query_dict()}


SCORE_TOLERANCE = 1e-5
"""Relative to the hit's score: what the engine's float sums may leave of the original
query's part when it did not match. A smaller derived part is taken as no match; only query
terms found in (nearly) every document score that little (their IDF is ~0.5 / |C|)."""


class DerivedParts:
    """The original query's and the groups' parts of a hit's score, for a query that names
    only its phrase and category clauses (``WeightedQuery.group_names`` off).

    A group's part is its boost times the sum of its matched clauses' own scores (a bool
    query's ``should`` clauses add up; a named clause is scored without the boost around it),
    and the original query's is what the hit's score leaves. Read once per compiled query
    (``of``), applied to each hit (``complete``)."""

    def __init__(self, groups: list[tuple[str, float, tuple[str, ...]]]) -> None:
        self.groups = groups

    @classmethod
    def of(cls, query: Mapping[str, Any]) -> DerivedParts | None:
        """None when ``query`` names its original clause itself (nothing to derive)."""
        if _has_name(query, ORIGINAL_NAME):
            return None
        groups: list[tuple[str, float, tuple[str, ...]]] = []
        for clause in query.get("bool", {}).get("should", []):
            group = clause.get("bool", {}) if isinstance(clause, Mapping) else {}
            # In clause order, so the sums add up in the same order on every run
            names = [_clause_name(c) for c in group.get("should", []) if isinstance(c, Mapping)]
            for name, prefix in (
                (EXPANSION_NAME, "sira_expansion:"),
                (CATEGORIES_NAME, "sira_category:"),
                (GENERATED_NAME, f"{GENERATED_NAME}:"),
            ):
                members = tuple(dict.fromkeys(n for n in names if n and n.startswith(prefix)))
                if members:
                    groups.append((name, float(group.get("boost", 1.0)), members))
        return cls(groups)

    def complete(
        self, named: Mapping[str, float] | Sequence[str] | None, score: float
    ) -> dict[str, float] | list[str] | None:
        """A hit's ``matched_queries`` as if the original query and the groups were named
        too (their keys first); names without scores come back unchanged."""
        if named is not None and not isinstance(named, Mapping):
            return list(named)
        scores = dict(named or {})
        parts: dict[str, float] = {}
        for name, boost, members in self.groups:
            found = [scores[n] for n in members if n in scores]
            if found:
                parts[name] = boost * sum(found)
        original = score - sum(parts.values())
        if original > SCORE_TOLERANCE * max(1.0, abs(score)):
            parts = {ORIGINAL_NAME: original, **parts}
        return {**parts, **scores} or None


def _clause_name(clause: Mapping[str, Any]) -> str | None:
    """The ``_name`` of a compiled phrase or category clause (any of the shapes above)."""
    for kind, body in clause.items():
        if not isinstance(body, Mapping):
            continue
        if "_name" in body:
            return str(body["_name"])
        if kind in ("match", "term"):
            for opts in body.values():
                if isinstance(opts, Mapping) and "_name" in opts:
                    return str(opts["_name"])
    return None


def _has_name(node: Any, name: str) -> bool:
    if isinstance(node, Mapping):
        return node.get("_name") == name or any(_has_name(v, name) for v in node.values())
    if isinstance(node, list):
        return any(_has_name(v, name) for v in node)
    return False
