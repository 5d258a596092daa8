"""The one prompt of the agentic search loop: "given the question and your steps so far,
choose the next action", answered as a small JSON object under a schema.

Per protocol (``sira_seek.agent.loop``): under ``evidence-blind`` (the default) the
instruction and the solved examples show only the agent's own actions and what the tools said
about them (pages added to the budget, expansions not used, category checks); under
``snippets`` they show the pages found, as titles and snippets. The prompt renders whatever
observation the loop recorded; it is the loop that keeps retrieved text out of it.

Two renderings of the same transcript, because the models differ in what they can follow: an
instruction model reads a chat instruction; a 270M base model (the CPU default) only continues
a pattern, so it sees two solved episodes first and the new one ends at ``Step N:``. The action
schema is flat and length-bounded (one ``text`` field whose meaning depends on ``action``)
so llama.cpp's grammar always closes the object well inside ``max_tokens`` and a small model
has one shape to copy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sira_seek.llm.request import ChatMessage, LLMRequest

PromptStyle = Literal["chat", "fewshot"]
SearchProtocol = Literal["evidence-blind", "snippets"]

ActionKind = Literal["search", "category", "answer"]

MAX_TEXT_CHARS = 60
MAX_EXPANSIONS = 3
MAX_EXPANSION_CHARS = 24

ACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["search", "category", "answer"]},
        "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS},
        "expansions": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_EXPANSION_CHARS},
            "maxItems": MAX_EXPANSIONS,
        },
    },
    "required": ["action", "text", "expansions"],
    "additionalProperties": False,
}
"""What the LLM answers each step: search ``text`` (the query) with ``expansions`` (words a
relevant page would contain), look up the category ``text``, or ``answer`` with ``text``."""


class AgentAction(BaseModel):
    """One decoded action; validated again here because a server may ignore the schema."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    action: ActionKind
    expansions: list[str] = Field(default_factory=list)
    text: str = Field(min_length=1)

    def to_prompt_json(self) -> str:
        """Keys in alphabetical order: llama.cpp's schema grammar emits them so, and a small
        model copies the examples best when they look exactly like what it must write."""
        return json.dumps(self.model_dump(), ensure_ascii=False)


class TranscriptEntry(BaseModel):
    """One earlier step as the LLM is shown it: what it did and what came back."""

    model_config = ConfigDict(frozen=True)

    action: AgentAction | None
    """None for a step whose output was unusable (shown as such, so the model moves on)."""
    observation: str


_INSTRUCTION = (
    "You answer a question by searching an encyclopedia. Each step is one JSON action: "
    '"search" with a query in "text" and up to 3 "expansions" (words or short phrases a '
    "relevant page would contain but the query lacks; never the answer itself), "
    '"category" with a category name in "text" (says whether it exists and its nearest '
    'categories), or "answer" with the final answer in "text" once the pages found hold it.'
)

_BLIND_INSTRUCTION = (
    "You find the encyclopedia pages that answer a question by writing searches, without "
    "reading the pages: after each search you are told only how many new pages it added to a "
    "fixed page budget and which of your expansions the index did not use. Each step is one "
    'JSON action: "search" with a query in "text" and up to 3 "expansions" (words or short '
    "phrases the answer's page would contain but the query lacks; never the answer itself), "
    "each search from another clue or candidate than the last; "
    '"category" with a category name in "text" (says whether it exists and its nearest '
    "categories; one that exists narrows the later searches), or "
    '"answer" with your best answer in "text" when more searches would not help.'
)

Episode = tuple[str, tuple[tuple[AgentAction, str], ...]]

_BLIND_EXAMPLES: tuple[Episode, ...] = (
    (
        "Which magazine was started first, Arthur's Magazine or First for Women?",
        (
            (
                AgentAction(
                    action="search",
                    text="Arthur's Magazine",
                    expansions=["literary periodical", "founded"],
                ),
                "20 new pages, 20 of 100 used",
            ),
            (
                AgentAction(
                    action="search",
                    text="First for Women magazine",
                    expansions=["women's magazine", "started"],
                ),
                "20 new pages, 40 of 100 used",
            ),
            (AgentAction(action="answer", text="Arthur's Magazine"), ""),
        ),
    ),
    (
        "The director of the romantic comedy Big Stone Gap is based in what New York city?",
        (
            (
                AgentAction(action="category", text="American romantic comedy films"),
                'category "American romantic comedy films": absent; nearest: Romantic comedy films',
            ),
            (
                AgentAction(action="category", text="Romantic comedy films"),
                'category "Romantic comedy films": exists, 212 pages',
            ),
            (
                AgentAction(
                    action="search",
                    text="Big Stone Gap film director",
                    expansions=["directed by", "screenwriter"],
                ),
                "20 new pages, 20 of 100 used",
            ),
            (
                AgentAction(
                    action="search",
                    text="novelist who directed Big Stone Gap",
                    expansions=["best-selling author", "based in"],
                ),
                "17 new pages, 37 of 100 used; expansions not used: based in (too_common)",
            ),
            (AgentAction(action="answer", text="Greenwich Village, New York City"), ""),
        ),
    ),
)
"""Solved episodes as the evidence-blind agent sees them: its actions and the budget, no page."""

_EXAMPLES: tuple[Episode, ...] = (
    (
        "Which magazine was started first, Arthur's Magazine or First for Women?",
        (
            (
                AgentAction(
                    action="search",
                    text="Arthur's Magazine",
                    expansions=["literary periodical", "founded"],
                ),
                "Arthur's Magazine: Arthur's Magazine (1844-1846) was an American literary "
                "periodical published in Philadelphia.",
            ),
            (
                AgentAction(
                    action="search",
                    text="First for Women magazine",
                    expansions=["women's magazine", "started"],
                ),
                "First for Women: First for Women is a woman's magazine published by Bauer "
                "Media Group. The magazine was started in 1989.",
            ),
            (AgentAction(action="answer", text="Arthur's Magazine"), ""),
        ),
    ),
    (
        "The director of the romantic comedy Big Stone Gap is based in what New York city?",
        (
            (
                AgentAction(
                    action="category",
                    text="American romantic comedy films",
                ),
                'category "American romantic comedy films": absent; nearest: Romantic comedy films',
            ),
            (
                AgentAction(
                    action="search",
                    text="Big Stone Gap film director",
                    expansions=["directed by", "screenwriter"],
                ),
                "Big Stone Gap (film): Big Stone Gap is a 2014 American romantic comedy film "
                "written and directed by Adriana Trigiani.",
            ),
            (
                AgentAction(
                    action="search",
                    text="Adriana Trigiani",
                    expansions=["novelist", "based in"],
                ),
                "Adriana Trigiani: Adriana Trigiani is an American best-selling author, "
                "television writer and film director based in Greenwich Village, New York City.",
            ),
            (AgentAction(action="answer", text="Greenwich Village, New York City"), ""),
        ),
    ),
)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _episode(
    question: str, steps: Sequence[tuple[AgentAction | None, str]], label: str = "Found"
) -> str:
    lines = [f"Question: {_flat(question)}"]
    for number, (action, observation) in enumerate(steps, start=1):
        shown = action.to_prompt_json() if action is not None else "(unusable output)"
        lines.append(f"Step {number}: {shown}")
        if observation:
            lines.append(f"{label}: {_flat(observation)}")
    return "\n".join(lines)


HISTORY: dict[str, int] = {"evidence-blind": 12, "snippets": 4}
"""Earlier steps shown per protocol: an evidence-blind observation is one short line, so a
whole default episode (10 steps) fits; snippets are long, so only the latest 4."""


class AgentPrompt:
    """Builds the next-action request for one style and protocol; the loop never knows which
    style is used.

    ``history`` caps how many earlier steps are shown (the latest ones; default ``HISTORY`` of
    the protocol): a 2,048-token context holds the examples plus a few observations, not a
    whole episode of page snippets.
    """

    def __init__(
        self,
        style: PromptStyle,
        *,
        protocol: SearchProtocol = "evidence-blind",
        max_tokens: int = 96,
        temperature: float = 0.0,
        seed: int | None = 0,
        history: int | None = None,
    ) -> None:
        self.style = style
        self.protocol = protocol
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self.history = HISTORY[protocol] if history is None else history
        blind = protocol == "evidence-blind"
        self._instruction = _BLIND_INSTRUCTION if blind else _INSTRUCTION
        self._examples = _BLIND_EXAMPLES if blind else _EXAMPLES
        self._label = "Result" if blind else "Found"

    def next_action(self, question: str, transcript: Sequence[TranscriptEntry]) -> LLMRequest:
        shown = list(transcript)[-self.history :] if self.history else []
        first = len(transcript) - len(shown) + 1
        steps = [(entry.action, entry.observation) for entry in shown]
        current = _episode(question, steps, self._label).splitlines()
        if first > 1:  # renumber: the step labels must match what the loop counts
            current = [_renumber(line, first - 1) for line in current]
        next_label = f"Step {len(transcript) + 1}:"
        sampling: dict[str, Any] = {
            "json_schema": ACTION_SCHEMA,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
        }
        if self.style == "chat":
            user = (
                "\n".join(current)
                + f"\n\nReply with {next_label[:-1].lower()}: one JSON object with keys "
                '"action", "text", "expansions".'
            )
            return LLMRequest(
                messages=(
                    ChatMessage(role="system", content=self._instruction),
                    ChatMessage(role="user", content=user),
                ),
                **sampling,
            )
        shots = "\n\n".join(_episode(q, steps_, self._label) for q, steps_ in self._examples)
        prompt = f"{self._instruction}\n\n{shots}\n\n" + "\n".join(current) + f"\n{next_label} "
        return LLMRequest(prompt=prompt, **sampling)


def _renumber(line: str, offset: int) -> str:
    if not line.startswith("Step "):
        return line
    number, rest = line[len("Step ") :].split(":", 1)
    return f"Step {int(number) + offset}:{rest}"
