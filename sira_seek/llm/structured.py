"""Structured (JSON-schema constrained) output: how each server dialect is asked for it, and
how an answer is checked.

Servers disagree on the request field: OpenAI and vLLM accept ``response_format`` with
``json_schema``; vLLM also has its own ``structured_outputs`` (and, before 0.10, ``guided_json``)
extra body; llama-cpp-python's server takes ``response_format`` ``json_object`` + ``schema`` on
chat, and only a GBNF ``grammar`` on raw completions.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Literal

from sira_seek.llm.errors import BackendUnavailableError

StructuredOutputDialect = Literal["openai", "vllm", "vllm-legacy", "llama-cpp-python"]


def structured_output_fields(
    schema: dict[str, Any], *, chat: bool, dialect: StructuredOutputDialect
) -> dict[str, Any]:
    """Request-body fields that make the server decode under ``schema``."""
    if dialect == "openai":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": schema, "strict": True},
            }
        }
    if dialect == "vllm":
        return {"structured_outputs": {"json": schema}}
    if dialect == "vllm-legacy":
        return {"guided_json": schema}
    if chat:
        return {"response_format": {"type": "json_object", "schema": schema}}
    return {"grammar": json_schema_to_gbnf(json.dumps(schema, sort_keys=True))}


@lru_cache(maxsize=64)
def json_schema_to_gbnf(schema_json: str) -> str:
    """GBNF grammar for a JSON schema, via llama-cpp-python's converter (needs the cpu extra)."""
    try:
        from llama_cpp.llama_grammar import json_schema_to_gbnf as convert
    except ImportError as exc:
        raise BackendUnavailableError(
            "constrained raw completions against llama-cpp-python's server need the llama_cpp "
            "package to build the grammar: run sira-seek llm install cpu, or send chat messages"
        ) from exc
    return str(convert(schema_json))


def parse_json_output(text: str, schema: dict[str, Any] | None = None) -> Any:
    """Decode ``text`` as JSON and check the schema's top-level shape; ``ValueError`` if not.

    Constrained decoding already guarantees the grammar; this catches answers cut off by
    ``max_tokens`` and servers that silently ignored the constraint.
    """
    value = json.loads(text.strip())
    if schema is None:
        return value
    expected = schema.get("type")
    if expected == "object":
        if not isinstance(value, dict):
            raise ValueError(f"expected a JSON object, got {type(value).__name__}")
        missing = [key for key in schema.get("required", []) if key not in value]
        if missing:
            raise ValueError(f"JSON object lacks required keys {missing}")
    elif expected == "array" and not isinstance(value, list):
        raise ValueError(f"expected a JSON array, got {type(value).__name__}")
    return value
