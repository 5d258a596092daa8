"""SIRA's knobs as one typed, side-effect-free settings model (``SIRA_SEEK_SIRA_*`` env vars).

The defaults of ``tau``, ``weight`` and ``ngram_tier`` were chosen on a dev split only (the first
50 wikimh/hotpotqa questions, both engines) with ``python -m sira_seek.cli.tuning``: among the
settings where the weak CPU model's expansions lose at most 0.01 nDCG@10 / Recall@10 against
BM25, the best strong-LLM nDCG@10. Reported numbers come from all 100 questions and the held-out
50 (tests/regression/sira_wikimh_hotpotqa.json).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from sira_seek.backend import MAX_NUM_CANDIDATES

Task = Literal["factoid", "multihop", "claim", "duplicate"]
KeepRule = Literal["any_window", "phrase_occurs"]

DEFAULT_TAU = 0.1
DEFAULT_WEIGHT = 0.5
MAX_WEIGHT = 1000.0
"""Largest expansion weight accepted: beyond it the original query no longer counts at all
(and the engines refuse an infinite boost with an error that looks like a cluster fault)."""


DEFAULT_DF_STATS_MAX_AGE = 1.0
"""Seconds the DF check reuses an index's |C| and deleted-document count (see the setting)."""


MAX_RERANK = 100
"""Deepest LLM rerank accepted: one LLM call per reranked document and query."""

DEFAULT_RERANK_TOP_N = 10
"""The rerank depth of ``method="sira"`` with a live LLM when the request names none. SIRA §3.1
ends with "top-k candidates are picked from the returned candidates based on relevance with the
query" without giving k; 10 is ours (the depth nDCG@10 reads and docs/benchmarks/rerank.md
measured)."""


class SiraSettings(BaseSettings):
    """How SIRA enriches, filters and weights a query."""

    model_config = SettingsConfigDict(env_prefix="SIRA_SEEK_SIRA_", extra="ignore")

    tau: float = Field(
        default=DEFAULT_TAU,
        gt=0.0,
        le=1.0,
        description="A phrase survives when some window of it has 0 < DF <= tau * |C|.",
    )
    weight: float = Field(
        default=DEFAULT_WEIGHT,
        ge=0.0,
        le=MAX_WEIGHT,
        allow_inf_nan=False,
        description="w in score = BM25(q_orig) + w * BM25(q_exp); the expansion clause's boost.",
    )
    task: Task = Field(default="multihop", description="Which enrichment prompt to use.")
    size: int = Field(default=10, ge=1, le=10_000, description="Hits returned by a search.")
    ngram_tier: bool = Field(
        default=True,
        description="Also score expansion phrases on the bigram (shingle) subfields, as the "
        "reference sums unigram and n-gram BM25.",
    )
    keep_rule: KeepRule = Field(
        default="any_window",
        description="any_window: some window of the phrase has 0 < DF <= tau*|C| (the reference); "
        "phrase_occurs: every window occurs and the rarest is rare enough.",
    )
    original_ngrams: bool = Field(
        default=False,
        description="Also score the original query on the bigram (shingle) subfields.",
    )
    drop_query_copies: bool = Field(
        default=True,
        description="Drop a phrase whose every term is already in the query (in_query).",
    )
    max_llm_phrases: int = Field(default=10, ge=1, description="Phrases taken from one answer.")
    max_candidates: int = Field(
        default=1000, ge=1, description="More candidate phrases than this is an error."
    )
    max_kept: int = Field(
        default=32,
        ge=1,
        description="Kept phrases beyond this are dropped (over_limit) so the compiled query "
        "stays under the engines' clause limits.",
    )
    max_phrase_words: int = Field(
        default=8, ge=1, description="Longer candidate phrases are dropped as too_long."
    )
    max_query_words: int = Field(
        default=256,
        ge=1,
        description="Longer queries are cut to this many words (engines cap query clauses).",
    )
    generation_max_tokens: int = Field(
        default=256,
        ge=1,
        le=4096,
        description="The longest text the hyde and cot baselines ask the LLM for (tokens); "
        "the query and the text are cut to max_query_words words together anyway.",
    )
    category_weight: float = Field(default=1.0, ge=0.0, description="Boost of category clauses.")
    use_close_categories: bool = Field(
        default=False,
        description="Use the closest existing category when a proposed one does not exist.",
    )
    rerank_top_n: int = Field(
        default=0,
        ge=0,
        le=MAX_RERANK,
        description="LLM-rerank the top N hits by relevance to the query (SIRA §3.1), the rest "
        "following in BM25 order; 0 = off. The front ends set it per request (`--rerank N`, "
        "`rerank`), as they set `size`.",
    )
    num_candidates: int = Field(
        default=100,
        ge=1,
        le=MAX_NUM_CANDIDATES,
        description="Methods dense, hybrid, sira-hybrid: the candidates each shard's approximate "
        "kNN looks at (more is slower and closer to exact); at least the kNN's k, raised to it.",
    )
    embedder: str | None = Field(
        default=None,
        description="Methods dense, hybrid, sira-hybrid: the embedder spec for the query "
        "(None: the embedded CPU default); it must be the model the index was embedded with.",
    )
    llm_concurrency: int = Field(default=16, ge=1)
    df_stats_max_age: float = Field(
        default=DEFAULT_DF_STATS_MAX_AGE,
        ge=0.0,
        allow_inf_nan=False,
        description="Seconds the DF check reuses an index's |C| and deleted-document count "
        "(then it is one round trip per query while no copy holds a deleted document): for up "
        "to this long after a write, tau * |C| may use the older |C|, and a deleted copy may "
        "still be counted in a DF. 0 = nothing reused: analysis and a live count, two round "
        "trips per query, always exact.",
    )
