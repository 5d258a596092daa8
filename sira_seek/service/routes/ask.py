"""``POST /ask``: one question answered with SEEK (or a baseline), the ``SeekResult`` of
``sira-seek ask``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ..bodies import ERROR_RESPONSES, AskBody
from ..errors import ServiceError, http_error
from ..state import ServiceState


def router(state: ServiceState) -> APIRouter:
    """The ``/ask`` route: the body checked, the question answered on a worker thread."""
    routes = APIRouter()
    config, redact, metrics = state.config, state.redact, state.metrics

    @routes.post(
        "/ask",
        summary="Answer a question with SEEK: the completed sketch, sub-queries, answer",
        response_description="The `SeekResult`, as `sira-seek ask --json` without `explain`.",
        responses=ERROR_RESPONSES,
        response_model=dict[str, Any],
    )
    async def ask(request: AskBody, http: Request) -> Any:
        return await state.offload("/ask", http, ask_here, request)

    def ask_here(request: AskBody) -> dict[str, Any]:
        # vanilla-llm reads no index, but one named is still checked (an index outside the
        # allow-list is 403 for every method); without one it runs without any.
        vanilla = request.method == "vanilla-llm" and request.index is None
        index = None if vanilla else state.index_for(request.index)
        vectors = request.retriever in ("dense", "hybrid")
        try:
            result = state.cluster.get().ask(
                request.question,
                index=index,
                llm=config.llm,
                retriever=request.retriever,
                method=request.method,
                variant=request.variant,
                top_k=request.top_k,
                # The server's one embedder (its model loaded once), not one per request.
                embedder=state.embedder.get() if vectors else None,
            )
        except Exception as exc:
            raise http_error(exc, redact) from None
        if result.error:
            # The pipeline records a failed question instead of raising (batches go on);
            # for one question over HTTP that is the LLM or the cluster failing.
            raise ServiceError(503, redact(f"the question failed: {result.error}"))
        metrics.engine.labels("/ask").observe(result.timings.retrieval_s)
        metrics.llm.labels("/ask").observe(result.timings.llm_s)
        return result.model_dump(mode="json")

    return routes
