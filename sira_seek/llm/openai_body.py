"""The JSON body of one OpenAI-compatible request, apart from the HTTP client.

Built here once for the live client (``openai_http``), the offline batch files and
``sira-sync export-requests``; this module imports no HTTP stack, so commands that only write
request files do not load one.
"""

from __future__ import annotations

from typing import Any

from sira_seek.llm.request import LLMRequest
from sira_seek.llm.structured import StructuredOutputDialect, structured_output_fields

#: The ``backend`` name of answers from an OpenAI-compatible server.
OPENAI_BACKEND = "openai"


def openai_request_body(
    request: LLMRequest,
    *,
    model: str,
    dialect: StructuredOutputDialect,
    template_kwargs: bool = True,
) -> tuple[str, dict[str, Any]]:
    """(path under the base URL, JSON body) of one request: the single place a body is built,
    so an offline batch file (``sira-sync export-requests``) sends exactly what a live run does.
    ``template_kwargs=False`` leaves ``chat_template_kwargs`` out (for OpenAI's own API)."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    if request.messages is not None:
        path = "/chat/completions"
        body["messages"] = [m.model_dump() for m in request.messages]
        if request.chat_template_kwargs and template_kwargs:
            body["chat_template_kwargs"] = dict(request.chat_template_kwargs)
    else:
        path = "/completions"
        body["prompt"] = request.prompt
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.top_k is not None:
        body["top_k"] = request.top_k
    if request.seed is not None:
        body["seed"] = request.seed
    if request.stop:
        body["stop"] = list(request.stop)
    if request.json_schema is not None:
        body.update(
            structured_output_fields(request.json_schema, chat=request.is_chat, dialect=dialect)
        )
    return path, body
