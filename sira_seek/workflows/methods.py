"""The retrieval methods a front end may choose, in one table.

Every place that takes a method (``sira-seek search`` / ``eval retrieval``, ``SiraSeek.search``
/ ``evaluate``, ``POST /search``, the framework retrievers) takes ``RetrievalMethod`` and asks
this table what the method needs, instead of comparing names: a method added here (and to the
``Literal``) reaches them all. ``tests/unit/test_methods.py`` checks the two agree.

- ``bm25``: the query as typed, one BM25 query.
- ``sira``: SIRA (candidate phrases from an LLM or a table, grounded by document frequency,
  one weighted BM25 query).
- ``hyde`` and ``cot``: the SIRA paper's LLM query-expansion baselines (its "Baselines" paragraph:
  "HyDE generates a hypothetical document as a BM25 query expansion; CoT uses
  chain-of-thought prompting to expand the query with reasoning-derived terms"). The LLM's
  text is added to the query ungrounded, as ``BM25(q) + w * BM25(text)`` with w = 0.2 by
  default: query2doc's recipe (the query repeated five times before the generated text, one
  BM25 query), which ranks the same. Prompts: ``sira.generation_prompts``.
- ``dense``: the engine's approximate kNN over the index's vector field (``ingest --embed``),
  the query embedded by the embedder the index was embedded with (``sira.dense``).
- ``hybrid``: BM25 and ``dense`` fused by reciprocal rank fusion (ours, k = 60, the standard
  constant of Cormack et al. 2009; no local engine offers its own fusion for free).
- ``sira-hybrid``: SIRA's weighted query fused with ``dense`` the same way.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

RetrievalMethod = Literal["bm25", "sira", "hyde", "cot", "dense", "hybrid", "sira-hybrid"]

#: Where a method's query additions come from: nothing, candidate phrases (an LLM or a table,
#: then grounded), or a text an LLM writes for the query (added as it is).
Additions = Literal["none", "phrases", "generated"]

#: What a method does with the index's vectors: nothing, kNN alone (no BM25 query), or kNN
#: fused with the BM25 / SIRA query by reciprocal rank fusion.
Vectors = Literal["none", "only", "fused"]

GENERATED_WEIGHT = 0.2
"""w of a generated text: query2doc (Wang et al. 2023) and Jagerman et al. (2023) put the
query five times before the LLM's text in one BM25 query; repeated query terms add up in a
Lucene match query, so that ranks as ``BM25(q) + BM25(text) / 5``."""


class MethodSpec(BaseModel):
    """What one retrieval method needs from a request."""

    model_config = ConfigDict(frozen=True)

    name: RetrievalMethod
    summary: str
    additions: Additions
    default_weight: float | None = None
    """The expansion weight when the request gives none (None: SIRA's setting)."""
    vectors: Vectors = "none"

    @property
    def calls_llm(self) -> bool:
        """Whether the method may ask an LLM per query (a batch round, a progress bar)."""
        return self.additions != "none"

    @property
    def through_retriever(self) -> bool:
        """Whether the method runs through SIRA's retriever (query additions or vectors);
        plain BM25 alone is batched without it."""
        return self.additions != "none" or self.vectors != "none"


METHODS: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in (
        MethodSpec(name="bm25", summary="the query as typed, one BM25 query", additions="none"),
        MethodSpec(
            name="sira",
            summary="SIRA: LLM or precomputed phrases grounded by document frequency, one "
            "weighted BM25 query",
            additions="phrases",
        ),
        MethodSpec(
            name="hyde",
            summary="HyDE baseline: a passage the LLM writes to answer the query, added to "
            "the BM25 query",
            additions="generated",
            default_weight=GENERATED_WEIGHT,
        ),
        MethodSpec(
            name="cot",
            summary="CoT baseline: the LLM's reasoning chain for the query, added to the BM25 "
            "query",
            additions="generated",
            default_weight=GENERATED_WEIGHT,
        ),
        MethodSpec(
            name="dense",
            summary="the engine's kNN over the index's vectors (ingest --embed)",
            additions="none",
            vectors="only",
        ),
        MethodSpec(
            name="hybrid",
            summary="BM25 and dense fused by reciprocal rank fusion (k = 60)",
            additions="none",
            vectors="fused",
        ),
        MethodSpec(
            name="sira-hybrid",
            summary="SIRA's weighted query and dense fused by reciprocal rank fusion (k = 60)",
            additions="phrases",
            vectors="fused",
        ),
    )
}

METHOD_NAMES: tuple[str, ...] = get_args(RetrievalMethod)
"""The methods' names in their documented order (``click.Choice``, help texts)."""


def method_spec(name: str) -> MethodSpec:
    """The table's entry for ``name``; an unknown name is ``InvalidInput`` naming them all."""
    from .errors import InvalidInput

    spec = METHODS.get(name)
    if spec is None:
        names = ", ".join(repr(n) for n in METHOD_NAMES)
        raise InvalidInput(f"must be one of {names}, not {name!r}", field="method")
    return spec
