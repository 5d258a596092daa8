"""What one answered question records: enough to audit every step and to resume a run."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from sira_seek.llm.response import LLMResponse
from sira_seek.metrics.llm_cost import QuestionCost
from sira_seek.metrics.qa import (
    NO_ANSWER,
    AnswerExtraction,
    PredictionRecord,
    extract_tagged_answer,
)
from sira_seek.metrics.seek_diagnostics import QuestionTrace, StepTrace

from .prompts import ContextKind
from .sketch import SteeringSketch

Stage = Literal["sketch", "subquery", "evidence", "update", "answer"]


class QuestionInput(BaseModel):
    """A question to answer; gold answers ride along so results can be scored later."""

    model_config = ConfigDict(frozen=True)

    id: str
    question: str = Field(min_length=1)
    golden_answers: list[str] = Field(default_factory=list)


class StageUsage(BaseModel):
    """LLM cost of one stage (or of a whole question)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    llm_seconds: float = 0.0

    def add(self, response: LLMResponse) -> None:
        self.calls += 1
        self.prompt_tokens += response.usage.prompt_tokens
        self.completion_tokens += response.usage.completion_tokens
        self.cache_hits += int(response.cache_hit)
        self.llm_seconds += response.latency_s

    def include(self, other: StageUsage) -> None:
        """Add ``other``'s counts to these."""
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cache_hits += other.cache_hits
        self.llm_seconds += other.llm_seconds


class QuestionUsage(BaseModel):
    """Per-stage LLM cost; ``total`` is what run reports add up."""

    by_stage: dict[str, StageUsage] = Field(default_factory=dict)
    rounds: int = Field(
        default=0,
        description="LLM round trips on the question's path: a call started while another of "
        "the question's calls is in flight shares its round (sira_seek.metrics.llm_cost)",
    )
    _in_flight: int = PrivateAttr(default=0)

    def add(self, stage: str, response: LLMResponse) -> None:
        """Book one call under a SEEK stage (`Stage`) or a baseline's own (``plan``, ...)."""
        self.by_stage.setdefault(stage, StageUsage()).add(response)

    def call_started(self) -> None:
        """A call of this question is sent: a new round unless another is in flight."""
        if self._in_flight == 0:
            self.rounds += 1
        self._in_flight += 1

    def call_ended(self) -> None:
        self._in_flight -= 1

    def merge(self, other: QuestionUsage) -> None:
        """Add ``other``'s stages to these (an attempt that was asked again still cost)."""
        for stage, usage in other.by_stage.items():
            self.by_stage.setdefault(stage, StageUsage()).include(usage)
        self.rounds += other.rounds

    def cost(self) -> QuestionCost:
        """The question's LLM cost, as run reports add it up."""
        total = self.total
        return QuestionCost(
            calls=total.calls,
            prompt_tokens=total.prompt_tokens,
            completion_tokens=total.completion_tokens,
            rounds=self.rounds,
        )

    @property
    def total(self) -> StageUsage:
        out = StageUsage()
        for usage in self.by_stage.values():
            out.include(usage)
        return out


class SubQueryStep(BaseModel):
    """One retrieval: the gist it served, the query sent, and the ids that came back."""

    gist_index: int | None = Field(description="0-based gist; None for a question-level search")
    sub_query: str
    retrieved_ids: list[str]
    raw_output: str | None = None
    malformed: bool = False
    attempts: int = 1
    retrieval_ms: float = 0.0
    error: str | None = None


class SketchUpdate(BaseModel):
    """One revision of the Update variant (after a fill): what it changed, or why it was not
    applied (``malformed``: the sketch was kept as it stood, and the raw output is kept)."""

    after_fill: int = Field(description="1-based count of fills before this revision")
    malformed: str | None = Field(
        default=None, description="why the output was not applied; None: it was applied"
    )
    raw_output: str | None = Field(default=None, description="kept only when malformed")
    added: list[str] = Field(default_factory=list, description="new open gists")
    dropped: list[str] = Field(default_factory=list, description="open gists removed")
    dropped_filled: list[str] = Field(
        default_factory=list, description="filled gists removed with their evidence"
    )
    edited: list[str] = Field(default_factory=list, description="filled slots whose text changed")
    over_cap: list[str] = Field(
        default_factory=list, description="gists not added: the sketch was at max_gists"
    )


class AnswerTimings(BaseModel):
    """Wall-clock seconds; stages overlap with other questions' work when run in a batch."""

    total_s: float = 0.0
    llm_s: float = 0.0
    retrieval_s: float = 0.0


class SeekResult(BaseModel):
    """The outcome for one question. ``error`` set means it failed and ``answer`` is empty."""

    id: str
    question: str
    golden_answers: list[str] = Field(default_factory=list)
    method: str
    variant: str | None = None
    answer: str = ""
    raw_answer: str | None = None
    sketch: SteeringSketch | None = None
    initial_sketch_raw: str | None = None
    answer_context: str | None = Field(
        default=None,
        description="the knowledge the final answer was asked from (sketch, plan, notes or "
        "documents) as the answer prompt showed it; None when answered closed-book",
    )
    answer_context_kind: ContextKind | None = None
    steps: list[SubQueryStep] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    step_cap_reached: bool = Field(
        default=False,
        description="a variant that stops by itself (plan, no-init) or revises its sketch "
        "(update) stopped at its step cap instead",
    )
    updates: list[SketchUpdate] = Field(
        default_factory=list, description="the Update variant's revisions, in order"
    )
    iteration_contexts: list[str] | None = Field(
        default=None,
        description="the knowledge after each retrieval iteration, as the answer prompt shows "
        "it (recorded only when asked: the per-iteration analysis answers from them)",
    )
    evidence_scale: float = Field(
        default=1.0,
        gt=0,
        le=1,
        description="the share of doc_chars, evidence_chars and slot_chars the answer was made "
        "with: 1 unless a prompt was too long for the model's context and the question was "
        "asked again with shorter evidence (sira_seek.seek.context_fit)",
    )
    usage: QuestionUsage = Field(default_factory=QuestionUsage)
    timings: AnswerTimings = Field(default_factory=AnswerTimings)
    error: str | None = None
    error_traceback: str | None = Field(
        default=None,
        description="the traceback of a failure that is a bug (not the cluster or the LLM "
        "failing), so a batch's output shows where it came from",
    )

    @property
    def ok(self) -> bool:
        return self.error is None

    def scored_answer(self, extraction: AnswerExtraction = "tagged") -> str:
        """The answer the metrics see.

        ``tagged`` (default) re-reads ``raw_answer`` with the SEEK authors' rule, so a model
        that forgot the ``<answer>`` tag, or a failed question, scores as their ``<None>``;
        ``lenient`` is ``answer``, the text shown to people (tag, else an ``Answer:`` line,
        else the last line; empty on failure).
        """
        if extraction == "lenient":
            return self.answer
        if self.error is not None:
            return NO_ANSWER
        return extract_tagged_answer(self.raw_answer)

    def prediction_record(self, extraction: AnswerExtraction = "tagged") -> PredictionRecord:
        """What `metrics.qa.score_predictions` reads. A question without gold answers keeps
        its empty list, so it is counted as ``no_gold`` rather than scored against ``""``
        (which any empty or failed answer would "match")."""
        return PredictionRecord(
            id=self.id,
            question=self.question,
            golden_answers=list(self.golden_answers),
            prediction=self.scored_answer(extraction),
        )

    def trace(self, extraction: AnswerExtraction = "tagged") -> QuestionTrace:
        """What the SEEK analyses read (`sira_seek.metrics.seek_diagnostics`): each step's
        sub-query and retrieved ids, the gold and scored answers, the sketch's gist count, the
        wall time, whether a step cap stopped it or shorter evidence answered it, failed or
        not."""
        return QuestionTrace(
            id=self.id,
            golden_answers=list(self.golden_answers),
            answer=self.scored_answer(extraction),
            ok=self.ok,
            steps=[
                StepTrace(sub_query=s.sub_query, retrieved_ids=s.retrieved_ids) for s in self.steps
            ],
            gists=None if self.sketch is None else len(self.sketch.gists),
            seconds=self.timings.total_s,
            step_cap_reached=self.step_cap_reached,
            evidence_scale=self.evidence_scale,
            cost=self.usage.cost(),
        )
