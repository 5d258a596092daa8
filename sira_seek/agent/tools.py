"""The records of the tools an agent calls on one index: grounded search, category look-up, fetch.

These are the three actions of the SIRA paper's agentic setting (BrowseComp-Wikipedia): the agent
writes its own expansions, and the index's statistics still decide which of them reach the
query, so a tool call can never smuggle an unseen or stopword-like phrase into the ranking. Every
tool returns one of these pydantic models, so the same object is a Python result, an MCP tool's
structured output and a JSON line in an agent's trace.

Only the records live here, beside the loop that reads them (``agent.loop.AgentToolbox`` is the
interface it calls): the implementation over an index is a workflow
(``sira_seek.workflows.agent_tools.AgentTools``), so this method package imports no workflow and
no front end.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

#: The search tool's methods: those of the one table (``workflows.methods``) that need no LLM
#: of ours; ``sira``'s and ``sira-hybrid``'s phrases are the calling agent's ``expansions``.
#: ``tests/unit/agent`` checks it against the table.
ToolMethod = Literal["bm25", "sira", "dense", "hybrid", "sira-hybrid"]

#: Largest ``k`` of the category tools (nearest categories, documents of one category). The
#: search tool's ``k`` is the search workflow's own (``sira_seek.workflows.fields.K``), so an
#: agent gets the verdict the command line, the library and the HTTP API give.
MAX_K = 100


class Passage(BaseModel):
    """One retrieved passage, titled, with the id ``fetch`` and evaluation use."""

    id: str
    title: str | None = None
    text: str = ""
    score: float


class GroundingDecision(BaseModel):
    """What the index said about one proposed expansion (or category)."""

    phrase: str
    kind: Literal["phrase", "category"] = "phrase"
    df: int | None = Field(default=None, description="Document frequency of the deciding window.")
    kept: bool
    decision: str = Field(description="kept, absent, too_common, ... (the candidate table's).")
    why: str


class SearchToolResult(BaseModel):
    """One search: the passages and why each expansion was or was not used."""

    query: str
    method: ToolMethod
    passages: list[Passage] = Field(default_factory=list)
    total: int = 0
    grounding: list[GroundingDecision] = Field(default_factory=list)
    doc_count: int = Field(default=0, description="|C|: live documents in the index.")
    max_doc_freq: float = Field(
        default=0.0, description="tau * |C|: highest DF a kept phrase may have."
    )
    plain_bm25: bool = Field(description="True when no expansion survived grounding.")
    notes: list[str] = Field(default_factory=list)


class CategoryLookup(BaseModel):
    """Is ``name`` one of the index's grounded categories, and which existing ones are near it."""

    name: str
    available: bool = Field(description="False when the index holds no categories at all.")
    exists: bool = False
    doc_count: int = 0
    nearest: list[str] = Field(
        default_factory=list, description="Existing categories sharing words, closest first."
    )


class DocumentRef(BaseModel):
    id: str
    title: str | None = None


class CategoryDocuments(BaseModel):
    """Documents filed under one exact category."""

    category: str
    total: int = 0
    documents: list[DocumentRef] = Field(default_factory=list)


class FetchedDocument(BaseModel):
    """A whole document as stored, with its enrichment when sira-sync wrote any."""

    id: str
    title: str | None = None
    text: str = ""
    categories: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
