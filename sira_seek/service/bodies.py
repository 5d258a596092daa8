"""The HTTP bodies of ``sira-seek serve``: what ``POST /search`` and ``POST /ask`` accept,
and the one error shape every route answers with.

Named by their role (``SearchBody``, ``AskBody``), not after the workflow requests they are
turned into (``sira_seek.workflows.search.SearchRequest``, ``...ask.AskRequest``): a class
name means one thing in sira_seek.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from sira_seek.backend import MAX_NUM_CANDIDATES
from sira_seek.seek.settings import SeekMethod
from sira_seek.workflows import validation
from sira_seek.workflows.fields import K, Rerank, Tau, Weight
from sira_seek.workflows.methods import METHODS, RetrievalMethod
from sira_seek.workflows.request_base import OnLLMFailure
from sira_seek.workflows.sira_setup import SeekRetrieverName
from sira_seek.workflows.validation import (
    MAX_EXPANSIONS,
    MAX_INDEX_NAME_BYTES,
    MAX_PHRASE_CHARS,
    MAX_QUERY_CHARS,
    NOT_BLANK_PATTERN,
)


def _json_integer(value: object) -> object:
    """An integer as JSON Schema means it: ``5`` or ``5.0``, never ``"5"`` or ``true``."""
    if isinstance(value, bool | str):
        raise ValueError("must be an integer")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _json_number(value: object) -> object:
    """A number as JSON means it: never ``"0.5"`` or ``false``."""
    if isinstance(value, bool | str):
        raise ValueError("must be a number")
    return value


Phrase = Annotated[str, Field(max_length=MAX_PHRASE_CHARS)]
# Bounded like every string of a body: pydantic then also refuses text that is not Unicode
# (a lone surrogate such as "\ud800", which JSON can carry) with a 422 naming the field,
# before it reaches a check or an encoder that would fail on it (a 500).
IndexName = Annotated[str, Field(max_length=MAX_INDEX_NAME_BYTES)]


class ErrorItem(BaseModel):
    """One problem with a request: where (``loc``) and what (``msg``)."""

    loc: list[str | int]
    msg: str


class ErrorBody(BaseModel):
    """Every error answer: one readable line, and the problems one by one (may be empty)."""

    detail: str
    errors: list[ErrorItem] = Field(default_factory=list)


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "Missing or wrong API key (when keys are set)."},
    403: {"model": ErrorBody, "description": "The index is not one this service serves."},
    404: {"model": ErrorBody, "description": "The index does not exist."},
    409: {"model": ErrorBody, "description": "The index lacks what the job needs."},
    413: {
        "model": ErrorBody,
        "description": "The request body is larger than the server's limit (counted while "
        "it streams when it has no Content-Length).",
    },
    422: {"model": ErrorBody, "description": "The request is invalid; `errors` says where."},
    429: {
        "model": ErrorBody,
        "description": "The service is busy: every worker thread is taken and the queue is "
        "full. Retry after the `Retry-After` seconds.",
        "headers": {
            "Retry-After": {
                "description": "Seconds to wait before retrying.",
                "schema": {"type": "integer", "minimum": 1},
            }
        },
    },
    503: {"model": ErrorBody, "description": "The cluster or the LLM is unavailable."},
}


class SearchBody(BaseModel):
    """``POST /search``: BM25 without expansions and without a configured LLM, SIRA
    otherwise (the body's phrases win over the LLM); or the ``method`` named (``hyde`` and
    ``cot`` write their text with the server's LLM)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "index": "wikimh",
                    "query": "Which magazine was started first, Arthur's Magazine or "
                    "First for Women?",
                    "expansions": ["literary periodical", "Bauer Media Group", "1844"],
                    "k": 10,
                }
            ]
        },
    )

    index: IndexName | None = Field(default=None, description="Index or alias (default: --index).")
    query: str = Field(
        max_length=MAX_QUERY_CHARS,
        # The schema states "not blank"; the validator enforces it with the workflow's reason
        # (no pydantic min_length, whose message would differ from the other front ends').
        json_schema_extra={"pattern": NOT_BLANK_PATTERN, "minLength": 1},
        description="The user's query, as typed (not blank).",
    )
    expansions: list[Phrase] | None = Field(
        default=None,
        max_length=MAX_EXPANSIONS,
        description="Precomputed candidate phrases; the index's DF decides which are kept.",
    )
    method: RetrievalMethod | None = Field(
        default=None,
        description="; ".join(f"{m.name}: {m.summary}" for m in METHODS.values())
        + ". hyde and cot use the server's LLM (`serve --llm`). Default: sira with "
        "`expansions` or a server LLM, else bm25.",
    )
    # k, tau, weight and rerank are the search workflow's own fields (workflows/fields.py):
    # the same bounds and messages as the CLI, the library and the MCP tool; only JSON's
    # reading of a number is added here.
    k: Annotated[K, BeforeValidator(_json_integer)] = 10
    tau: Annotated[Tau, BeforeValidator(_json_number)] | None = None
    weight: Annotated[Weight, BeforeValidator(_json_number)] | None = None
    rerank: Annotated[Rerank, BeforeValidator(_json_integer)] | None = Field(
        default=None,
        description="LLM-rerank the top N hits by relevance to the query (SIRA §3.1) with the "
        "server's LLM (`serve --llm`); the rest follow in BM25 order. 0 = off. Unset: method "
        "sira on a server with an LLM reranks the top 10 (SIRA's pipeline), else nothing.",
    )
    on_llm_failure: OnLLMFailure = Field(
        default="error",
        description="When the server's LLM is not there: error (503 naming it) or fallback "
        "(plain BM25, `fell_back_to_bm25` true and a note in the answer).",
    )
    num_candidates: (
        Annotated[int, Field(ge=1, le=MAX_NUM_CANDIDATES), BeforeValidator(_json_integer)] | None
    ) = Field(
        default=None,
        description="dense, hybrid, sira-hybrid: candidates per shard of the approximate kNN "
        "(default 100). The query embedder is the server's (`serve --embedder`, else "
        "SIRA_SEEK_SIRA_EMBEDDER, default cpu) and must be the index's model (else 422).",
    )

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        return validation.query_text(value)

    @field_validator("expansions", mode="before")
    @classmethod
    def _phrases(cls, value: Any) -> Any:
        # The workflow's check first, so a refusal reads as the CLI's and the MCP tool's
        # (``has 201 phrases; at most 200 are accepted``); the bounds above stay for the schema.
        return validation.phrases(value) if isinstance(value, list) else value


class AskBody(BaseModel):
    """``POST /ask``: one question answered with SEEK (or a baseline ``method``)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"index": "wikimh", "question": "Are Christopher Nolan and Sathish Kalathil "
                 "both film directors?"}
            ]
        },
    )  # fmt: skip

    index: IndexName | None = Field(
        default=None,
        description="Index or alias (default: --index); checked against the allow-list for "
        "every method, vanilla-llm included.",
    )
    question: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        json_schema_extra={"pattern": NOT_BLANK_PATTERN},
        description="Not blank.",
    )
    retriever: SeekRetrieverName = Field(
        default="bm25",
        description="How sub-queries search the index: bm25, sira (phrases from the LLM), "
        "dense (kNN over the index's vectors), hybrid (BM25 and kNN fused); dense and hybrid "
        "embed with the server's embedder (`serve --embedder`), the index's model.",
    )
    method: SeekMethod = Field(
        default="seek", description="SEEK or a baseline, as `sira-seek ask --method`."
    )
    variant: Literal["sequential", "parallel", "plan", "update", "no-iter-retrieval", "no-init"] = (
        "sequential"
    )
    top_k: Annotated[int, Field(ge=1, le=50), BeforeValidator(_json_integer)] | None = Field(
        default=None, description="Documents per sub-query."
    )

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if validation.is_blank(value):
            raise ValueError("the question is blank")
        return value
