"""An agentic search loop: the SIRA paper's BrowseComp-Wikipedia setting (§4.4) by default.

The LLM is handed the grounded search tool (it writes its own expansions; the index's DF
statistics still decide which reach the query) and the category tool, and picks one action
per step until it answers or its budget is spent. The budget counts, as in the paper, every
unique page a search returned: a page returned twice costs once, and the pages beyond the
budget are dropped, so the pages kept (``AgentRun.pages_read``, deduplicated, in retrieval
order) are the stream; after the episode ``agent/ranking.py`` ranks them (§4.4's "final
ranking") into the list Recall@B cuts (``AgentRun.ranked_page_ids``). Categories the
category tool confirmed enter later searches as category clauses; a proposed category never
does without that check.

Two protocols, named after the paper's wording:

* ``evidence-blind`` (the default, the paper's SIRA agent): "SIRA is not allowed to inspect
  retrieved snippets or pages and then reformulate the query using that retrieved context."
  After a search the LLM is told only what concerns its own query and the budget: how many
  new pages the search added, how many of the budget are used, and which of ITS expansions
  the index did not use (with the DF reason). The category tool's answers (exists, its page
  count, the nearest existing categories) are shown: the paper lets the agent validate
  categories against the category graph before searching. Never a title, a snippet, a
  document id or any document text; the pages' text is fetched for scoring only.
* ``snippets`` (the paper's Perplexity-style baseline: "inspect returned titles and snippets,
  reformulate its query"): each search's observation names up to ``PAGES_SHOWN`` new pages
  with their title and a ``SNIPPET_CHARS``-character snippet.

Nothing the LLM writes can crash a run: output that does not parse (or does not validate) is
recorded as a ``malformed`` step and the next step is asked for, and a tool refusing an
argument is recorded as a ``tool_error`` step. Only an LLM that cannot be reached ends a
question early (``stop_reason="llm_error"``); a cluster failure propagates, because every
later question would fail the same way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, Field, model_validator

from sira_seek.agent.prompts import AgentAction, AgentPrompt, SearchProtocol, TranscriptEntry
from sira_seek.agent.tools import CategoryLookup, SearchToolResult
from sira_seek.llm.errors import LLMCallError, MalformedOutputError
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse
from sira_seek.llm.structured import parse_json_output

logger = logging.getLogger(__name__)

StepKind = Literal["search", "category", "answer", "malformed", "tool_error", "llm_error"]
StopReason = Literal["answered", "budget", "max_steps", "llm_error"]
PROTOCOLS: tuple[SearchProtocol, ...] = ("evidence-blind", "snippets")

PROTOCOL_DEFAULTS: dict[str, dict[str, int]] = {
    # §4.4: one fixed 100-unique-page budget; searches of 20 pages (the Perplexity tool's "up to
    # 20 results per query") leave room for several angles before the budget is full.
    "evidence-blind": {"budget": 100, "max_steps": 10, "search_k": 20},
    # the loop as it was before the paper's protocol became the default
    "snippets": {"budget": 10, "max_steps": 6, "search_k": 5},
}
"""Per protocol, the bounds an episode gets when none is given."""

SNIPPET_CHARS = 100
"""Characters of each new page's text shown back to the LLM: enough to recognise a bridge
entity, few enough that a 2,048-token context holds several observations."""

PAGES_SHOWN = 3
"""New pages shown per search observation (all of them count as read)."""


class AgentToolbox(Protocol):
    """The two tools the loop calls; ``sira_seek.workflows.agent_tools.AgentTools`` is the real
    one (the workflow builds it and hands it in: the loop imports no workflow)."""

    def search(
        self,
        query: str,
        expansions: list[str] | None = None,
        k: int = 10,
        *,
        categories: list[str] | None = None,
    ) -> SearchToolResult: ...

    def categories(self, name: str, k: int = 10) -> CategoryLookup: ...


class ActionLLM(Protocol):
    """A blocking ``generate`` (``BlockingLLMClient`` over any ``LLMClient``)."""

    def generate(self, request: LLMRequest) -> LLMResponse: ...


class PageRead(BaseModel):
    """One unique page a tool returned, in the order the agent first saw it."""

    id: str
    title: str | None = None
    text: str = ""
    step: int = Field(description="The step whose tool call returned it first.")


class AgentStep(BaseModel):
    """One step of the trace: the LLM's choice, what the tool did, and what the LLM saw."""

    number: int
    kind: StepKind
    action: AgentAction | None = None
    raw_output: str | None = Field(default=None, description="The LLM's text (kept when unusable).")
    error: str | None = None
    new_pages: list[str] = Field(default_factory=list)
    kept_expansions: list[str] = Field(default_factory=list)
    categories_used: list[str] = Field(default_factory=list)
    observation: str = ""
    llm_seconds: float = 0.0
    completion_tokens: int = 0


class AgentRun(BaseModel):
    """One question's episode: the answer (if any), the pages read and the whole trace."""

    question_id: str
    question: str
    answer: str | None = None
    stop_reason: StopReason
    protocol: SearchProtocol = "evidence-blind"
    budget: int
    max_steps: int
    search_k: int
    pages_read: list[PageRead] = Field(default_factory=list)
    steps: list[AgentStep] = Field(default_factory=list)
    grounded_categories: list[str] = Field(default_factory=list)
    ranked_ids: list[str] | None = Field(
        default=None,
        description="The gathered pages after the final ranking (agent/ranking.py); None: "
        "not ranked, the stream order stands.",
    )
    rank_scores: dict[str, float | None] = Field(default_factory=dict)
    rank_failures: int = Field(default=0, description="Pages the ranking LLM gave no score.")
    rank_calls: int = 0
    rank_completion_tokens: int = 0

    @property
    def page_ids(self) -> list[str]:
        """The stream: the pages inside the budget, unique, in retrieval order."""
        return [page.id for page in self.pages_read]

    @property
    def ranked_page_ids(self) -> list[str]:
        """The final ranked list Recall@B reads: ``ranked_ids``, else the stream."""
        return self.page_ids if self.ranked_ids is None else list(self.ranked_ids)

    @property
    def tool_calls(self) -> int:
        return sum(step.kind in ("search", "category") for step in self.steps)

    @property
    def malformed_steps(self) -> int:
        return sum(step.kind == "malformed" for step in self.steps)

    @property
    def llm_calls(self) -> int:
        """Every LLM call of the question: the agent's steps and the final ranking's."""
        return len(self.steps) + self.rank_calls

    @property
    def completion_tokens(self) -> int:
        return sum(step.completion_tokens for step in self.steps) + self.rank_completion_tokens


class AgentLoopSettings(BaseModel):
    """Bounds of one episode. ``budget`` is the page budget: unique pages, not calls.

    ``budget``, ``max_steps`` and ``search_k`` left out (or None) take ``protocol``'s defaults
    (``PROTOCOL_DEFAULTS``).
    """

    protocol: SearchProtocol = "evidence-blind"
    budget: int = Field(ge=1)
    max_steps: int = Field(ge=1, description="LLM calls per question, malformed included.")
    search_k: int = Field(ge=1, le=100, description="Passages asked of each search.")
    category_k: int = Field(default=5, ge=1, le=100)

    @model_validator(mode="before")
    @classmethod
    def _protocol_defaults(cls, values: object) -> object:
        return with_protocol_defaults(values)

    @classmethod
    def for_protocol(
        cls, protocol: SearchProtocol = "evidence-blind", **bounds: int | None
    ) -> AgentLoopSettings:
        """``protocol``'s settings, with the bounds given (None: the protocol's default)."""
        return cls.model_validate({"protocol": protocol, **bounds})


def with_protocol_defaults(values: object) -> object:
    """``values`` (a mapping) with every missing or None bound set to its protocol's default;
    anything else is returned as it is, for pydantic to refuse."""
    if not isinstance(values, dict):
        return values
    protocol = values.get("protocol")
    # an unknown protocol takes the default's bounds: pydantic then names only the protocol
    defaults = PROTOCOL_DEFAULTS.get(
        protocol if isinstance(protocol, str) else "", PROTOCOL_DEFAULTS["evidence-blind"]
    )
    given = {key: value for key, value in values.items() if value is not None}
    return {**defaults, **given}


def _decode(response: LLMResponse) -> AgentAction:
    """The action in ``response``; ``ValueError`` (incl. pydantic's) when it is not one."""
    value = response.parsed if response.parsed is not None else parse_json_output(response.text)
    return AgentAction.model_validate(value)


def blind_observation(new: int, used: int, budget: int) -> str:
    """What an evidence-blind search shows: budget accounting, nothing of the pages."""
    return f"{new} new pages, {used} of {budget} used"


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 3].rstrip() + "..."


class AgentLoop:
    """Runs episodes: ask the LLM for an action, call the tool, show the result, repeat."""

    def __init__(
        self,
        llm: ActionLLM,
        tools: AgentToolbox,
        prompt: AgentPrompt,
        settings: AgentLoopSettings | None = None,
    ) -> None:
        self.llm = llm
        self.tools = tools
        self.prompt = prompt
        self.settings = settings or AgentLoopSettings.for_protocol(prompt.protocol)
        if prompt.protocol != self.settings.protocol:
            raise ValueError(
                f"the prompt is for the {prompt.protocol} protocol, the settings for "
                f"{self.settings.protocol}"
            )

    def run(
        self,
        question: str,
        *,
        question_id: str = "",
        on_step: Callable[[AgentStep], None] | None = None,
    ) -> AgentRun:
        """One episode; stops at an answer, a full budget, ``max_steps`` or a dead LLM."""
        s = self.settings
        pages: dict[str, PageRead] = {}
        steps: list[AgentStep] = []
        transcript: list[TranscriptEntry] = []
        grounded: list[str] = []
        answer: str | None = None
        stop: StopReason = "max_steps"
        for number in range(1, s.max_steps + 1):
            step = self._step(number, question, transcript, pages, grounded)
            steps.append(step)
            transcript.append(TranscriptEntry(action=step.action, observation=step.observation))
            if on_step is not None:
                on_step(step)
            if step.kind == "llm_error":
                stop = "llm_error"
                break
            if step.kind == "answer":
                answer = step.action.text if step.action else None
                stop = "answered"
                break
            if len(pages) >= s.budget:
                stop = "budget"
                break
        logger.info(
            "agent %s: %s after %d steps, %d pages", question_id, stop, len(steps), len(pages)
        )
        return AgentRun(
            question_id=question_id,
            question=question,
            answer=answer,
            stop_reason=stop,
            protocol=s.protocol,
            budget=s.budget,
            max_steps=s.max_steps,
            search_k=s.search_k,
            pages_read=list(pages.values()),
            steps=steps,
            grounded_categories=grounded,
        )

    def _step(
        self,
        number: int,
        question: str,
        transcript: Sequence[TranscriptEntry],
        pages: dict[str, PageRead],
        grounded: list[str],
    ) -> AgentStep:
        request = self.prompt.next_action(question, transcript)
        started = time.perf_counter()
        try:
            response = self.llm.generate(request)
        except MalformedOutputError as exc:
            return AgentStep(
                number=number,
                kind="malformed",
                raw_output=exc.raw_text,
                error=str(exc),
                observation="(that output was not a valid action; choose again)",
                llm_seconds=time.perf_counter() - started,
            )
        except LLMCallError as exc:
            logger.warning("agent step %d: the LLM failed: %s", number, exc)
            return AgentStep(number=number, kind="llm_error", error=f"{exc.kind}: {exc}")
        step = self._act(number, response, pages, grounded)
        step.llm_seconds = response.latency_s
        step.completion_tokens = response.usage.completion_tokens
        return step

    def _act(
        self, number: int, response: LLMResponse, pages: dict[str, PageRead], grounded: list[str]
    ) -> AgentStep:
        """Decode the LLM's action and carry it out (or record why it could not be)."""
        try:
            action = _decode(response)
        except ValueError as exc:  # json and pydantic validation errors are ValueErrors
            logger.info("agent step %d: unusable output %r", number, response.text[:200])
            return AgentStep(
                number=number,
                kind="malformed",
                raw_output=response.text,
                error=" ".join(f"{type(exc).__name__}: {exc}".split())[:300],
                observation="(that output was not a valid action; choose again)",
            )
        if action.action == "answer":
            return AgentStep(number=number, kind="answer", action=action)
        try:
            if action.action == "search":
                return self._search(number, action, pages, grounded)
            return self._category(number, action, grounded)
        except ValueError as exc:  # a tool refusing an argument (an empty name, a bad k)
            return AgentStep(
                number=number,
                kind="tool_error",
                action=action,
                raw_output=response.text,
                error=str(exc),
                observation=f"(the tool refused: {exc})",
            )

    def _search(
        self,
        number: int,
        action: AgentAction,
        pages: dict[str, PageRead],
        grounded: list[str],
    ) -> AgentStep:
        result = self.tools.search(
            action.text,
            expansions=list(action.expansions) or None,
            k=self.settings.search_k,
            categories=list(grounded) or None,
        )
        new: list[PageRead] = []
        for passage in result.passages:
            if len(pages) >= self.settings.budget:
                break  # past the budget: never shown, never counted
            if passage.id in pages:
                continue
            page = PageRead(id=passage.id, title=passage.title, text=passage.text, step=number)
            pages[passage.id] = page
            new.append(page)
        kept = [g.phrase for g in result.grounding if g.kind == "phrase" and g.kept]
        dropped = [
            f"{g.phrase} ({g.decision})"
            for g in result.grounding
            if g.kind == "phrase" and not g.kept
        ]
        if self.settings.protocol == "evidence-blind":
            observation = blind_observation(len(new), len(pages), self.settings.budget)
        elif new:
            shown = " | ".join(f"{p.title or p.id}: {_snippet(p.text)}" for p in new[:PAGES_SHOWN])
            more = len(new) - PAGES_SHOWN
            observation = shown + (f" (+{more} more)" if more > 0 else "")
        else:
            observation = "no new pages"
        if dropped:
            observation += "; expansions not used: " + ", ".join(dropped)
        return AgentStep(
            number=number,
            kind="search",
            action=action,
            new_pages=[p.id for p in new],
            kept_expansions=kept,
            categories_used=list(grounded),
            observation=observation,
        )

    def _category(
        self,
        number: int,
        action: AgentAction,
        grounded: list[str],
    ) -> AgentStep:
        found = self.tools.categories(action.text, k=self.settings.category_k)
        if not found.available:
            observation = "this index has no categories"
        elif found.exists:
            observation = f'category "{found.name}": exists, {found.doc_count} pages'
            if found.name not in grounded:
                grounded.append(found.name)
        else:
            nearest = ", ".join(found.nearest) or "none"
            observation = f'category "{found.name}": absent; nearest: {nearest}'
        return AgentStep(
            number=number,
            kind="category",
            action=action,
            observation=observation,
        )
