"""The prompts of the SIRA paper's LLM query-expansion baselines, ``hyde`` and ``cot``: one
builder (``generation_request``) for both, beside SIRA's own query prompts (``prompts``).

The SIRA paper names the baselines but prints no prompt for them (its "Baselines" paragraph:
"HyDE generates a hypothetical document as a BM25 query expansion; CoT uses chain-of-thought
prompting to expand the query with reasoning-derived terms"), so the wording is their
sources':

- HyDE (Gao et al. 2023, "Precise Zero-Shot Dense Retrieval without Relevance Labels"): its
  instructions per task, e.g. web search "Please write a passage to answer the question.
  Question: ... Passage:"; its SciFact instruction for claims, without "scientific paper"
  (claims here are not only scientific).
- CoT: the chain-of-thought query-expansion prompt of Jagerman et al. 2023 ("Query Expansion
  by Prompting Large Language Models"), "Answer the following query: ... Give the rationale
  before answering", which the SIRA paper's CoT row follows (Wei et al. 2022 prompting used
  to expand the query).

One greedy generation per query (temperature 0, seed 0), not HyDE's eight samples averaged in
an embedding space: a BM25 query takes one text, and a fixed request makes batch rounds and
the response cache replay it. The same words go to chat models (one user turn) and to base
models (a completion whose continuation is the text).
"""

from __future__ import annotations

from typing import Any, Literal

from sira_seek.llm.request import ChatMessage, LLMRequest

from .settings import Task

GenerationMethod = Literal["hyde", "cot"]

PROMPT_VERSION = "sira-generation-v1"

GENERATION_MAX_TOKENS = 256
"""The longest text asked for by default (about 190 words; ``SiraSettings.generation_max_tokens``,
SIRA_SEEK_SIRA_GENERATION_MAX_TOKENS): the query and the text together are cut to
``SiraSettings.max_query_words`` (256) words anyway, and query2doc asks for 128 tokens."""

_HYDE: dict[str, tuple[str, str]] = {
    # task -> (instruction, the label of the query line); HyDE's wording (see the docstring).
    "factoid": ("Please write a passage to answer the question.", "Question"),
    "multihop": ("Please write a passage to answer the question.", "Question"),
    "duplicate": ("Please write a passage to answer the question.", "Question"),
    "claim": ("Please write a passage to support/refute the claim.", "Claim"),
}

_COT = "Answer the following query:\n{query}\nGive the rationale before answering."

_STOPS = ("\nQuestion:", "\nClaim:", "\nQuery:")
"""Where a base model starts another example instead of ending its text."""


def generation_prompt(method: GenerationMethod, query: str, task: Task) -> str:
    """The prompt's words for one query (the same for chat and completion)."""
    flat = " ".join(query.split())
    if method == "hyde":
        instruction, label = _HYDE[task]
        return f"{instruction}\n{label}: {flat}\nPassage:"
    if method == "cot":
        return _COT.format(query=flat)
    raise ValueError(f"no generation prompt for {method!r}")


def generation_request(
    method: GenerationMethod,
    query: str,
    task: Task,
    *,
    chat: bool,
    lookup_key: str | None = None,
    max_tokens: int = GENERATION_MAX_TOKENS,
) -> LLMRequest:
    """The one request of ``hyde`` or ``cot`` for ``query``: a user turn for instruction-tuned
    servers (``openai:``, ``batch:``), a completion prompt for in-process base models."""
    text = generation_prompt(method, query, task)
    common: dict[str, Any] = {
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "seed": 0,
        "lookup_key": lookup_key,
    }
    if chat:
        return LLMRequest(messages=(ChatMessage(role="user", content=text),), **common)
    return LLMRequest(prompt=f"{text}\n" if method == "cot" else f"{text} ", stop=_STOPS, **common)
