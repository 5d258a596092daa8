"""Task-aware query-enrichment prompts.

The model is asked for the vocabulary a relevant *document* would contain that the query lacks,
never for the answer: an answer guess that is wrong pulls in wrong documents, while evidence
vocabulary only narrows the topic. Two forms: chat messages for instruction-tuned servers, and a
few-shot completion prompt for small base models that continue patterns instead of following
instructions.
"""

from __future__ import annotations

import json
from typing import Any

from sira_seek.llm.request import ChatMessage, LLMRequest

from .settings import Task

PROMPT_VERSION = "sira-query-v1"

_COMMON = (
    "You help a keyword search engine (BM25) find the documents that answer a query. Predict "
    "words and short phrases (1-3 words) that a relevant document would contain but the query "
    "lacks. Do NOT guess the answer: no names for who-questions, no dates for when-questions, no "
    "yes/no. Never use broad topic words. Give at most 10 phrases."
)

_TASK_RULES: dict[str, str] = {
    "factoid": (
        "Factoid question: give domain, genre, format and era words, diverse facets of the "
        "topic, and terms that narrow it down."
    ),
    "multihop": (
        "Multi-hop question: spread the phrases over every entity and every hop; for a "
        "comparison give terms for both sides. A bridge entity may be named, the final answer "
        "may not."
    ),
    "claim": (
        "Claim to verify: list the claim's entities and predict each one's defining vocabulary "
        "(aliases, type words, related proper nouns)."
    ),
    "duplicate": (
        "Question whose duplicates are wanted (Quora, CQADupStack): give the words another "
        "asker would use for the same need: synonyms, the product or error names, the "
        "technical and the everyday phrasing; nothing that answers it."
    ),
}

_CATEGORY_RULE = (
    " Also propose up to 5 index categories the documents may belong to, as `categories`."
)

_EXAMPLES: dict[str, tuple[tuple[str, list[str]], ...]] = {
    "duplicate": (
        (
            "How do I stop my laptop from overheating when gaming?",
            # Another asker's words for the same need; no fix (no "cooling pad", "undervolt").
            [
                "notebook",
                "gets too hot",
                "thermal throttling",
                "high temperature",
                "games",
                "fan noise",
            ],
        ),
    ),
    "factoid": (
        (
            "what instrument did the composer of the brandenburg concertos play",
            # Not "organist" or "harpsichord": those are the answer, which the rules forbid.
            ["Johann Sebastian Bach", "Baroque", "Leipzig", "Kapellmeister", "musician biography"],
        ),
    ),
    "multihop": (
        (
            "Which river flows through the capital of the country where Tokaji wine is made?",
            # Bridge entities (Hungary, Budapest) may be named; the answer (Danube) may not.
            ["Tokaj", "Hungary", "Hungarian wine", "Budapest", "river", "Budapest geography"],
        ),
        (
            "Were Sergei Eisenstein and Fritz Lang from the same country?",
            [
                "Soviet film director",
                "Battleship Potemkin",
                "Metropolis",
                "German Expressionism",
                "Austrian-born",
                "nationality",
            ],
        ),
    ),
    "claim": (
        (
            "The Great Wall of China is visible from the Moon with the naked eye.",
            [
                "Great Wall",
                "Ming dynasty",
                "fortification",
                "lunar orbit",
                "astronaut",
                "naked eye visibility",
            ],
        ),
    ),
}


def keywords_schema(
    *, max_phrases: int, max_categories: int = 0, category_max_length: int = 80
) -> dict[str, Any]:
    """JSON schema for a keywords (+ categories) answer, query side and document side alike;
    bounded lengths let constrained decoding always close it."""
    props: dict[str, Any] = {
        "keywords": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 60},
            "minItems": 1,
            "maxItems": max_phrases,
        }
    }
    if max_categories:
        props["categories"] = {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": category_max_length},
            "maxItems": max_categories,
        }
    return {
        "type": "object",
        "properties": props,
        "required": ["keywords"],
        "additionalProperties": False,
    }


def enrichment_schema(*, categories: bool = False, max_phrases: int = 10) -> dict[str, Any]:
    """The query-side answer: keywords, and up to 5 categories when asked for."""
    return keywords_schema(max_phrases=max_phrases, max_categories=5 if categories else 0)


def instructions(task: Task, *, categories: bool = False) -> str:
    rule = _TASK_RULES[task]
    extra = _CATEGORY_RULE if categories else ""
    return f'{_COMMON} {rule}{extra} Answer with JSON: {{"keywords": [...]}}.'


def chat_messages(query: str, task: Task, *, categories: bool = False) -> tuple[ChatMessage, ...]:
    """System rules + one example per task + the query, for instruction-tuned models."""
    turns: list[ChatMessage] = [
        ChatMessage(role="system", content=instructions(task, categories=categories))
    ]
    for example, phrases in _EXAMPLES[task][:1]:
        turns.append(ChatMessage(role="user", content=example))
        turns.append(ChatMessage(role="assistant", content=json.dumps({"keywords": phrases})))
    turns.append(ChatMessage(role="user", content=" ".join(query.split())))
    return tuple(turns)


def completion_prompt(query: str, task: Task, *, categories: bool = False) -> str:
    """Few-shot completion prompt whose continuation is the JSON answer, for base models."""
    shots = "".join(
        f"Query: {example}\nJSON: {json.dumps({'keywords': phrases})}\n\n"
        for example, phrases in _EXAMPLES[task]
    )
    flat = " ".join(query.split())
    return f"{instructions(task, categories=categories)}\n\n{shots}Query: {flat}\nJSON: "


def enrichment_request(
    query: str,
    task: Task,
    *,
    chat: bool,
    lookup_key: str | None = None,
    categories: bool = False,
    max_phrases: int = 10,
    max_tokens: int = 256,
) -> LLMRequest:
    """The request for one query; ``lookup_key`` lets precomputed backends answer by id."""
    schema = enrichment_schema(categories=categories, max_phrases=max_phrases)
    common: dict[str, Any] = {
        "json_schema": schema,
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "seed": 0,
        "lookup_key": lookup_key,
    }
    if chat:
        return LLMRequest(messages=chat_messages(query, task, categories=categories), **common)
    return LLMRequest(prompt=completion_prompt(query, task, categories=categories), **common)


# -- rerank: relevance of a retrieved document to the query (SIRA §3.1) ---------------------

MAX_RERANK_DOC_CHARS = 2000
"""A document is cut to this many characters (title and text) before the model reads it."""

RERANK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 100}},
    "required": ["score"],
    "additionalProperties": False,
}

_RELEVANCE_RUBRIC = (
    "Rate from 0 to 100 how relevant the document is to the search query: how closely it is "
    "about what the query looks for, the topic and the entities the query names. "
    "90-100: about exactly what the query asks; 60-80: about an entity or topic the query "
    "names or needs; 20-40: the same field, or shared words only; 0-10: unrelated. "
    'Reply with JSON: {"score": N}.'
)

# (query, title, text, score): a worked scale for base models that continue patterns. No
# example is taken from an evaluation set.
_RELEVANCE_EXAMPLES: tuple[tuple[str, str, str, int], ...] = (
    (
        "Which river flows through the capital of the country where Tokaji wine is made?",
        "Tokaj wine region",
        "The Tokaj wine region is a historical wine region in northeastern Hungary, known for "
        "its sweet Tokaji wines.",
        85,
    ),
    (
        "Were Sergei Eisenstein and Fritz Lang from the same country?",
        "Metropolis (1927 film)",
        "Metropolis is a German expressionist science-fiction silent film directed by Fritz "
        "Lang and written by Thea von Harbou.",
        60,
    ),
    (
        "Which river flows through the capital of the country where Tokaji wine is made?",
        "Wine tasting",
        "Wine tasting is the sensory examination and evaluation of wine: its colour, aroma "
        "and taste.",
        20,
    ),
    (
        "Were Sergei Eisenstein and Fritz Lang from the same country?",
        "Insulin",
        "Insulin is a peptide hormone produced by beta cells of the pancreatic islets.",
        0,
    ),
    (
        "Were Sergei Eisenstein and Fritz Lang from the same country?",
        "Fritz Lang",
        "Friedrich Christian Anton Lang was an Austrian-born film director, screenwriter and "
        "producer who worked in Germany and later the United States.",
        95,
    ),
)


def rerank_request(query: str, title: str, text: str, *, chat: bool) -> LLMRequest:
    """The one rerank prompt: how relevant the document (title + text, cut to
    ``MAX_RERANK_DOC_CHARS``) is to ``query``, as ``{"score": 0..100}`` under a JSON schema.

    SIRA §3.1 picks the top-k "based on relevance with the query"; the paper gives no scale,
    so the rubric above is this project's (documented in docs/tutorials/sira-search.md).
    Chat messages for instruction-tuned servers, a few-shot completion for base models.
    """
    flat = " ".join(query.split())
    doc = f"{' '.join(title.split())}\n{' '.join(text.split())}".strip()[:MAX_RERANK_DOC_CHARS]
    common: dict[str, Any] = {
        "json_schema": RERANK_SCHEMA,
        "max_tokens": 16,
        "temperature": 0.0,
        "seed": 0,
    }
    if chat:
        return LLMRequest(
            messages=(
                ChatMessage(role="system", content=_RELEVANCE_RUBRIC),
                ChatMessage(role="user", content=f"Query: {flat}\n\nDocument:\n{doc}"),
            ),
            **common,
        )
    shots = "".join(
        f"Query: {q}\nDocument: {t}\n{x}\nJSON: {json.dumps({'score': s})}\n\n"
        for q, t, x, s in _RELEVANCE_EXAMPLES
    )
    prompt = f"{_RELEVANCE_RUBRIC}\n\n{shots}Query: {flat}\nDocument: {doc}\nJSON: "
    return LLMRequest(prompt=prompt, **common)
