"""SIRA's single weighted BM25 query, as typed clauses that compile to plain query DSL.

score(d) = BM25(q_orig, d) + w * BM25(q_exp, d) (+ category evidence): a bool query whose
``should`` clauses are summed, the expansion group carrying boost w. Every clause is named so
``matched_queries`` shows which part (and which phrase) matched, and the compiled body is plain
DSL a user can paste into Kibana or Dashboards Dev Tools.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

ORIGINAL_NAME = "sira_original"
EXPANSION_NAME = "sira_expansion"
CATEGORIES_NAME = "sira_categories"


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

    def _opts(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"query": self.text, "_name": self.name}
        if self.boost != 1.0:
            opts["boost"] = self.boost
        return opts

    def to_dict(self) -> dict[str, Any]:
        opts = self._opts()
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
        bool_body: dict[str, Any] = {"should": [part(g, {}) for g in groups], "_name": self.name}
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


def _group(clauses: list[dict[str, Any]], boost: float, name: str) -> dict[str, Any]:
    return {"bool": {"should": clauses, "boost": boost, "_name": name}}


class WeightedQuery(BaseModel):
    """The compiled SIRA query; with no expansion and no category it is plain BM25."""

    original: TextClause
    expansion: list[TextClause] = Field(default_factory=list)
    weight: float = Field(ge=0.0)
    categories: list[CategoryClause] = Field(default_factory=list)
    category_weight: float = Field(default=1.0, ge=0.0)
    size: int = Field(default=10, ge=0)
    source: list[str] | bool = False

    @property
    def is_plain_bm25(self) -> bool:
        return not self.expansion and not self.categories

    def query_dict(self) -> dict[str, Any]:
        if self.is_plain_bm25:
            return self.original.to_dict()
        should = [self.original.to_dict()]
        if self.expansion and self.weight > 0:
            should.append(
                _group([c.to_dict() for c in self.expansion], self.weight, EXPANSION_NAME)
            )
        if self.categories and self.category_weight > 0:
            should.append(
                _group(
                    [c.to_dict() for c in self.categories], self.category_weight, CATEGORIES_NAME
                )
            )
        if len(should) == 1:
            return should[0]
        return {"bool": {"should": should}}

    def to_dict(self) -> dict[str, Any]:
        """The full ``_search`` body."""
        return {"size": self.size, "_source": self.source, "query": self.query_dict()}
