"""``POST /search``: BM25, SIRA or another retrieval method, answered with exactly the
document ``sira-seek search --json`` prints (both come from ``SiraResult.to_search_json``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.methods import METHODS, method_spec
from sira_seek.workflows.sira_setup import rerank_depth

from ..bodies import ERROR_RESPONSES, SearchBody
from ..errors import ServiceError, http_error
from ..state import ServiceState

if TYPE_CHECKING:
    from sira_seek.client import SiraSeek
    from sira_seek.sira.results import SiraResult


class SearchJSON(JSONResponse):
    """The search answer rendered with orjson: the same JSON as ``sira-seek search --json``
    (plain JSON types already), a few times faster to write than the json module, which was
    part of the per-request overhead benchmarks/http_load.py measures."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def router(state: ServiceState) -> APIRouter:
    """The ``/search`` route: the body checked, the search run on a worker thread."""
    routes = APIRouter()

    @routes.post(
        "/search",
        summary="BM25 or SIRA search; the same JSON as `sira-seek search --json`",
        response_description="`hits` [{`_id`, `score`, `title`, `matched_queries`, "
        "`rerank_score`}], `query` (the request body sent), `candidates` (the grounded "
        "candidate table), `categories`, `doc_count`, `max_doc_freq`, `plain_bm25`, "
        "`expansion_source`, `generated_text` (hyde/cot), `timings_ms`, `llm_calls`, `notes`, "
        "`explain` (Dev Tools).",
        responses=ERROR_RESPONSES,
        response_model=dict[str, Any],
    )
    async def search(request: SearchBody, http: Request) -> Response:
        return await state.offload("/search", http, search_here, request)

    def search_here(request: SearchBody) -> Response:
        index = state.index_for(request.index)
        if request.rerank and state.reranker is None:  # unset: no rerank without an LLM
            raise ServiceError(
                422, "body.rerank: this server has no LLM to rerank with (sira-seek serve --llm)"
            )
        try:
            result = _search(state.cluster.get(), index, request, state)
        except Exception as exc:
            raise http_error(exc, state.redact) from None
        state.metrics.engine.labels("/search").observe(result.timings.engine_ms / 1000)
        llm_s = (result.timings.expansion_ms + result.timings.rerank_ms) / 1000
        state.metrics.llm.labels("/search").observe(llm_s)
        # Rendered here, not through FastAPI's jsonable_encoder: the document is plain JSON
        # types already (the CLI prints the same dict with json.dumps), and walking it again
        # cost part of the per-request overhead benchmarks/http_load.py measures.
        return SearchJSON(result.to_search_json())

    return routes


def _search(
    sk: SiraSeek,
    index: str,
    request: SearchBody,
    state: ServiceState,
) -> SiraResult:
    """The search workflow: the body's phrases when it brings some, else the server's shared
    LLM expander when it has one, else plain BM25; a ``rerank`` reads with the server's LLM
    (the route refuses one on a server without an LLM). A ``method`` named in the body is
    that method, its LLM the server's (``hyde``/``cot`` on a server without one: 422). The
    vector methods embed the query with the server's one embedder (its model loaded once)."""
    from sira_seek.workflows import search as flow

    expander, reranker = state.expander, state.reranker

    method = request.method
    additions = METHODS[method].additions if method is not None else "phrases"
    if additions == "generated" and expander is None:
        raise InvalidInput(
            f"method {method!r} needs an LLM to write its text: this server has none "
            "(serve --llm SPEC)",
            field="method",
        )
    shared = None
    if expander is not None and additions != "none" and request.expansions is None:
        shared = expander.get(method or "sira")
    spec = next((x.spec for x in (expander, reranker) if x is not None), None)
    if method is None:
        method = "sira" if request.expansions is not None or shared is not None else "bm25"
    # Unset, SIRA with the server's LLM reranks as the paper's pipeline does (rerank_depth).
    depth = rerank_depth(request.rerank, method, spec if reranker is not None else None)
    reading = reranker.get() if reranker is not None and depth else None
    wanted = flow.SearchRequest.build(
        query=request.query,
        index=index,
        method=method,
        phrases=request.expansions,
        k=request.k,
        tau=request.tau,
        weight=request.weight,
        rerank=depth,
        # It names the LLM in an error (masked); it only reranks when phrases are given.
        llm=spec if shared is not None or reading is not None else None,
        on_llm_failure=request.on_llm_failure,
        num_candidates=request.num_candidates,
    )
    # Not closed after the request: the expander and the reranker (and their model) are the
    # server's. An LLM that is not there is the workflow's ``Unavailable`` (503) unless the
    # body asked for the fallback.
    embedder = state.embedder.get() if method_spec(method).vectors != "none" else None
    return flow.search(
        sk.backend,
        wanted,
        expander=shared,
        reranker=reading,
        profiles=state.profiles,
        embedder=embedder,
    )
