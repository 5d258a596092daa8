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
