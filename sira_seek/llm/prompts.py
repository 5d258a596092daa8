"""Few-shot prompts for small base models.

A base model such as Gemma 3 270M does not follow instructions; it continues patterns. So each
task is a few solved examples followed by the new input, decoded under a JSON schema whose
lengths are bounded: the grammar then closes the object well within ``max_tokens`` and every
answer parses.
"""

from __future__ import annotations

import json
from typing import Any

from sira_seek.llm.request import LLMRequest

KEYWORDS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "keywords": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 24},
            "minItems": 1,
            "maxItems": 4,
        }
    },
    "required": ["keywords"],
    "additionalProperties": False,
}

_KEYWORD_EXAMPLES: tuple[tuple[str, list[str]], ...] = (
    (
        "The Eiffel Tower in Paris was completed in 1889 for the World's Fair.",
        ["Eiffel Tower", "Paris", "1889", "World's Fair"],
    ),
    (
        "Insulin is a hormone made by the pancreas that lowers blood sugar.",
        ["insulin", "hormone", "pancreas", "blood sugar"],
    ),
)


def keyword_prompt(text: str) -> str:
    """Few-shot completion prompt whose continuation is a ``{"keywords": [...]}`` object."""
    shots = "".join(
        f"Text: {example}\nKeywords: {json.dumps({'keywords': kws})}\n\n"
        for example, kws in _KEYWORD_EXAMPLES
    )
    flat = " ".join(text.split())
    return f"Extract search keywords from each text.\n\n{shots}Text: {flat}\nKeywords: "


def keyword_request(
    text: str,
    *,
    max_tokens: int = 128,
    temperature: float = 0.0,
    seed: int | None = 0,
    lookup_key: str | None = None,
) -> LLMRequest:
    """A keyword-extraction request that parses on any backend honouring the schema."""
    return LLMRequest(
        prompt=keyword_prompt(text),
        json_schema=KEYWORDS_SCHEMA,
        max_tokens=max_tokens,
        temperature=temperature,
        seed=seed,
        lookup_key=lookup_key,
    )
