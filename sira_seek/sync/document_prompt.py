"""The corpus-side prompt: vocabulary a searcher would use that the document itself lacks.

Per the SIRA method: aliases, abbreviations and alternate names first, then facts one could ask
about, type words and related proper nouns; never broad topic words; at most 10 phrases, as
``{"keywords": [...]}``. Two forms: chat messages for instruction-tuned servers, and a few-shot
completion for small base models (which continue patterns rather than follow instructions).
The prompt id is stored with every enriched document: changing the prompt changes the id, and
documents enriched with an older prompt become stale.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from sira_seek.llm.request import ChatMessage, LLMRequest
from sira_seek.sira.prompts import keywords_schema

PromptStyle = Literal["chat", "completion"]
PROMPT_VERSION = "sira-doc-v1"

_RULES = (
    "You enrich documents for a keyword search engine (BM25). Given a document, list words and "
    "short phrases (1-4 words) that a person searching for this document would type but that "
    "the document does not contain: first aliases, abbreviations and alternate names of its "
    "subject, then facts one could ask about it, type words (what kind of thing it is), and "
    "related proper nouns. Never give broad topic words. At most {n} phrases."
)
_CATEGORY_RULE = " Also give up to {k} short categories the document belongs to, as `categories`."

_EXAMPLES: tuple[tuple[str, dict[str, list[str]]], ...] = (
    (
        "Eiffel Tower\nThe tower on the Champ de Mars was completed in 1889 as the entrance "
        "arch to the World's Fair and was designed by Gustave Eiffel's company.",
        {
            "keywords": [
                "La Tour Eiffel",
                "Iron Lady",
                "Paris landmark",
                "wrought-iron lattice",
                "Exposition Universelle",
                "France",
                "tallest structure",
            ]
        },
    ),
    (
        "Insulin\nA peptide hormone produced by beta cells of the pancreatic islets; it "
        "regulates the metabolism of carbohydrates by promoting glucose absorption.",
        {
            "keywords": [
                "INS gene",
                "diabetes mellitus",
                "blood sugar",
                "Banting and Best",
                "Islets of Langerhans",
                "hypoglycemia",
            ]
        },
    ),
)


def prompt_id(style: PromptStyle, *, categories: bool = False, text_budget: int = 4000) -> str:
    """Identifies what the model was shown: template, form, categories asked, text budget.
    Changing any of them makes documents enriched under the old id stale."""
    return f"{PROMPT_VERSION}-{style}{'+categories' if categories else ''}-{text_budget}c"


def document_schema(*, max_phrases: int = 10, max_categories: int = 0) -> dict[str, Any]:
    """The document-side answer (categories up to 60 characters)."""
    return keywords_schema(
        max_phrases=max_phrases, max_categories=max_categories, category_max_length=60
    )


def _instructions(max_phrases: int, max_categories: int) -> str:
    rules = _RULES.format(n=max_phrases)
    if max_categories:
        rules += _CATEGORY_RULE.format(k=max_categories)
    return rules + ' Answer with JSON: {"keywords": [...]}.'


def chat_messages(text: str, *, max_phrases: int, max_categories: int) -> tuple[ChatMessage, ...]:
    example, answer = _EXAMPLES[0]
    return (
        ChatMessage(role="system", content=_instructions(max_phrases, max_categories)),
        ChatMessage(role="user", content=example),
        ChatMessage(role="assistant", content=json.dumps(answer)),
        ChatMessage(role="user", content=text),
    )


def completion_prompt(text: str, *, max_phrases: int, max_categories: int) -> str:
    shots = "".join(
        f"Document: {' '.join(example.split())}\nJSON: {json.dumps(answer)}\n\n"
        for example, answer in _EXAMPLES
    )
    flat = " ".join(text.split())
    return f"{_instructions(max_phrases, max_categories)}\n\n{shots}Document: {flat}\nJSON: "


def document_request(
    text: str,
    *,
    style: PromptStyle,
    doc_id: str,
    max_phrases: int = 10,
    max_categories: int = 0,
    max_tokens: int = 200,
) -> LLMRequest:
    """One enrichment request; ``doc_id`` lets a precomputed backend answer by id."""
    common: dict[str, Any] = {
        "json_schema": document_schema(max_phrases=max_phrases, max_categories=max_categories),
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "seed": 0,
        "lookup_key": doc_id,
    }
    if style == "chat":
        return LLMRequest(
            messages=chat_messages(text, max_phrases=max_phrases, max_categories=max_categories),
            **common,
        )
    return LLMRequest(
        prompt=completion_prompt(text, max_phrases=max_phrases, max_categories=max_categories),
        **common,
    )
