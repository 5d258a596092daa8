"""The bounded fields of a search, declared once for every front end.

``SearchRequest`` (the workflow's schema) is built from these types, and so are the HTTP body
(``sira_seek.service.bodies.SearchBody``), the MCP search tool's arguments and the framework
retrievers' options: the same ``k``, ``tau``, ``weight`` or ``rerank`` gets the same verdict
and the same reason (pydantic's message, naming the field) wherever it is sent. A front end
that must be stricter would say so here, as a named override; none is today (a public HTTP
cap on ``k`` below the engines' window would make the HTTP API refuse what the command line
answers).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt

from sira_seek.backend import MAX_NUM_CANDIDATES
from sira_seek.sira.settings import MAX_RERANK, MAX_WEIGHT

from .validation import MAX_K

MIN_TAU = 1e-6
"""Smallest DF cap accepted. A bound that is a ``minimum`` rather than ``exclusiveMinimum: 0``,
which some OpenAPI clients read as 0 allowed; no corpus has a million documents per unit of
1e-6 to tell the two apart."""

K = Annotated[StrictInt, Field(ge=1, le=MAX_K, description="Number of hits.")]
"""Hits of one search: 1 to ``MAX_K`` (the engines' default ``index.max_result_window``)."""

Tau = Annotated[
    float, Field(ge=MIN_TAU, le=1, allow_inf_nan=False, description="DF cap (default 0.1).")
]
"""SIRA's DF cap: a phrase is kept when some window of it has 0 < DF <= tau * |C|."""

Weight = Annotated[
    float,
    Field(
        ge=0, le=MAX_WEIGHT, allow_inf_nan=False, description="Expansion weight w (default 0.5)."
    ),
]
"""SIRA's expansion weight w."""

Rerank = Annotated[
    StrictInt,
    Field(ge=0, le=MAX_RERANK, description="LLM-rerank the top N hits by relevance; 0 = off."),
]
"""How many top hits the LLM reranks (SIRA §3.1); 0 is off."""

NumCandidates = Annotated[StrictInt, Field(ge=1, le=MAX_NUM_CANDIDATES)]
"""Candidates per shard of an approximate kNN (dense, hybrid, sira-hybrid)."""

NUM_CANDIDATES_HELP = (
    "dense, hybrid, sira-hybrid: candidates per shard of the approximate kNN "
    "(default 100, setting SIRA_SEEK_SIRA_NUM_CANDIDATES)."
)
"""The requests' description of ``num_candidates`` (search, a queries file, an evaluation)."""

EMBEDDER_HELP = (
    "dense, hybrid, sira-hybrid: the query embedder spec (default: the CPU "
    "model, setting SIRA_SEEK_SIRA_EMBEDDER); must be the index's model."
)
"""The requests' description of ``embedder``; the HTTP body has none (the server's is used)."""
