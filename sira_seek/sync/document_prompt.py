"""The corpus-side prompt: vocabulary a searcher would use that the document itself lacks.

Per the SIRA method: aliases, abbreviations and alternate names first, then facts one could ask
about, type words and related proper nouns; never broad topic words; at most 10 phrases, as
``{"keywords": [...]}``. Two forms: chat messages for instruction-tuned servers, and a few-shot
completion for small base models (which continue patterns rather than follow instructions).
The prompt id is stored with every enriched document: changing the prompt changes the id, and
documents enriched with an older prompt become stale.

The SIRA paper adapts the corpus prompt to the task the index serves (its claim-verification,
argument-retrieval and duplicate-question variants): the vocabulary a searcher lacks depends on
what the searcher types. A claim states a finding in lay words, a counterargument attacks the
same topic from the other side, a duplicate question rephrases the same need. ``CorpusTask``
picks one rule set and one worked example per task; ``generic`` is the original prompt, and its
prompt ids are unchanged, so documents enriched before tasks existed stay current.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from sira_seek.llm.request import ChatMessage, LLMRequest
from sira_seek.sira.prompts import keywords_schema

PromptStyle = Literal["chat", "completion"]
CorpusTask = Literal["generic", "claim", "argument", "duplicate"]
CORPUS_TASKS: tuple[CorpusTask, ...] = ("generic", "claim", "argument", "duplicate")
PROMPT_VERSION = "sira-doc-v1"

_RULES = (
    "You enrich documents for a keyword search engine (BM25). Given a document, list words and "
    "short phrases (1-4 words) that a person searching for this document would type but that "
    "the document does not contain: first aliases, abbreviations and alternate names of its "
    "subject, then facts one could ask about it, type words (what kind of thing it is), and "
    "related proper nouns. Never give broad topic words. At most {n} phrases."
)
_TASK_RULES: dict[CorpusTask, str] = {
    "generic": _RULES,
    "claim": (
        "You enrich evidence documents for a keyword search engine (BM25) that verifies claims. "
        "Given a document, list words and short phrases (1-4 words) that a claim this document "
        "supports or refutes would use but the document does not contain: lay words and synonyms "
        "for its technical terms, alternate names and abbreviations of its entities, and the "
        "effects, outcomes or quantities such a claim states. Never give verdict words (true, "
        "false, supports, refutes) or broad topic words. At most {n} phrases."
    ),
    "argument": (
        "You enrich arguments for a keyword search engine (BM25) that finds the best "
        "counterargument. Given an argument, list words and short phrases (1-4 words) that an "
        "argument on the same debate topic, from either side, would use but this one does not "
        "contain: the debate topic in other words, the opposing stance's key terms, and the "
        "premises, values and consequences the debate turns on. Never give broad topic words. "
        "At most {n} phrases."
    ),
    "duplicate": (
        "You enrich questions for a keyword search engine (BM25) that finds duplicate questions. "
        "Given a question, list words and short phrases (1-4 words) that another person asking "
        "the same question would use but this one does not contain: paraphrases, synonyms, "
        "other spellings and abbreviations, and more general or more specific names of what is "
        "asked about. Never give words that would change what is asked. At most {n} phrases."
    ),
}
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


_TASK_EXAMPLES: dict[CorpusTask, tuple[str, dict[str, list[str]]]] = {
    "claim": (
        "Vitamin D and fractures\nIn a trial of 25,871 adults, daily vitamin D3 supplements did "
        "not lower the incidence of total, hip or non-vertebral fractures compared with placebo.",
        {
            "keywords": [
                "cholecalciferol",
                "broken bones",
                "bone health",
                "older people",
                "randomized controlled trial",
                "osteoporosis",
            ]
        },
    ),
    "argument": (
        "School uniforms\nUniforms remove visible differences in wealth between pupils, so "
        "children are judged less by their clothes and bullying over brands declines.",
        {
            "keywords": [
                "dress code",
                "freedom of expression",
                "individuality",
                "cost to parents",
                "peer pressure",
                "discipline",
            ]
        },
    ),
    "duplicate": (
        "How do I improve my English speaking skills quickly?",
        {
            "keywords": [
                "spoken English",
                "fluency",
                "learn to speak English",
                "pronunciation",
                "ESL",
                "conversation practice",
            ]
        },
    ),
}


def _examples(task: CorpusTask) -> tuple[tuple[str, dict[str, list[str]]], ...]:
    return _EXAMPLES if task == "generic" else (_TASK_EXAMPLES[task],)


def prompt_id(
    style: PromptStyle,
    *,
    categories: bool = False,
    text_budget: int = 4000,
    task: CorpusTask = "generic",
) -> str:
    """Identifies what the model was shown: template, task, form, categories asked, text budget.
    Changing any of them makes documents enriched under the old id stale (``generic`` adds no
    task part, so ids from before task prompts existed are still current)."""
    task_part = "" if task == "generic" else f"-{task}"
    asked = "+categories" if categories else ""
    return f"{PROMPT_VERSION}{task_part}-{style}{asked}-{text_budget}c"


def document_schema(*, max_phrases: int = 10, max_categories: int = 0) -> dict[str, Any]:
    """The document-side answer (categories up to 60 characters)."""
    return keywords_schema(
        max_phrases=max_phrases, max_categories=max_categories, category_max_length=60
    )


def _instructions(max_phrases: int, max_categories: int, task: CorpusTask = "generic") -> str:
    rules = _TASK_RULES[task].format(n=max_phrases)
    if max_categories:
        rules += _CATEGORY_RULE.format(k=max_categories)
    return rules + ' Answer with JSON: {"keywords": [...]}.'


def chat_messages(
    text: str, *, max_phrases: int, max_categories: int, task: CorpusTask = "generic"
) -> tuple[ChatMessage, ...]:
    example, answer = _examples(task)[0]
    return (
        ChatMessage(role="system", content=_instructions(max_phrases, max_categories, task)),
        ChatMessage(role="user", content=example),
        ChatMessage(role="assistant", content=json.dumps(answer)),
        ChatMessage(role="user", content=text),
    )


def completion_prompt(
    text: str, *, max_phrases: int, max_categories: int, task: CorpusTask = "generic"
) -> str:
    shots = "".join(
        f"Document: {' '.join(example.split())}\nJSON: {json.dumps(answer)}\n\n"
        for example, answer in _examples(task)
    )
    flat = " ".join(text.split())
    rules = _instructions(max_phrases, max_categories, task)
    return f"{rules}\n\n{shots}Document: {flat}\nJSON: "


def document_request(
    text: str,
    *,
    style: PromptStyle,
    doc_id: str,
    max_phrases: int = 10,
    max_categories: int = 0,
    max_tokens: int = 200,
    task: CorpusTask = "generic",
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
            messages=chat_messages(
                text, max_phrases=max_phrases, max_categories=max_categories, task=task
            ),
            **common,
        )
    return LLMRequest(
        prompt=completion_prompt(
            text, max_phrases=max_phrases, max_categories=max_categories, task=task
        ),
        **common,
    )
