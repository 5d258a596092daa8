"""Scoring agentic episodes: Recall@B over the ranked page stream, and answer coverage.

Recall@B is the SIRA paper's gold-page recall (§4.4, BrowseComp-Wikipedia):

    Recall@B = 1/|Q| * sum over q of 1[G_q ∩ R_B(q) ≠ ∅]

a hit indicator per question (1 when some relevant page, judgement > 0, is among the first B
pages of the question's ranked list, else 0) averaged over the judged questions. The list is
the pages inside the budget after the final ranking (``AgentRun.ranked_page_ids``;
``agent/ranking.py``: "fetched content is used only for final ranking", and Table 3's
Recall@1 "measures whether the system ranks the answer-bearing page first"). The raw stream
(the pages in retrieval order with repeats removed, ``AgentRun.pages_read``, as the paper
truncates the Perplexity baseline's "ordered stream of unique ... URLs") is scored too, as the
second, labelled figures ``stream_recall``; with ``final_ranking="stream"`` both are one. The
list is cut at the paper's B in ``RECALL_CUTOFFS`` (1, 10, 100) up to the episode's page
budget, and at the budget itself (``recall_at_budget``); a cut-off above the budget is not
scored (None), since no stream can be longer than its budget. A question without any
relevant page is not scored (None) rather than scored 0.

Answer coverage asks whether a gold answer occurs in the pages of the stream (title and text),
with the one definition of ``sira_seek.metrics.coverage`` (the paper's Fig. 3, as
``eval retrieval --qa`` reports it): whole-token runs after the SEEK/PAGER normalisation, every
question with a gold answer counted (yes/no golds included, matched like any other string),
questions without one left out. It measures what the search found, not what a (small) model
wrote; the model's own answer is scored separately with Cover-EM.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean

from pydantic import BaseModel, Field

from sira_seek.agent.loop import AgentRun, AgentStep, SearchProtocol, StopReason
from sira_seek.fields import TEXT, TITLE
from sira_seek.metrics.coverage import first_covering_rank, gold_aliases, passage_text
from sira_seek.metrics.qa import cover_em

RECALL_CUTOFFS: tuple[int, ...] = (1, 10, 100)
"""The page budgets B of the paper's Table 3 (Recall@1, @10, @100)."""


def recall_cutoffs(budget: int) -> list[int]:
    """The B scored for an episode budget: the paper's cut-offs up to it, and the budget."""
    return sorted({b for b in RECALL_CUTOFFS if b <= budget} | {budget})


def first_relevant_rank(stream: Sequence[str], relevant: Mapping[str, int]) -> int | None:
    """1-based rank of the first relevant page (judgement > 0) in ``stream``, or None."""
    wanted = {doc for doc, grade in relevant.items() if grade > 0}
    return next((rank for rank, doc in enumerate(stream, start=1) if doc in wanted), None)


def hit_at(rank: int | None, cutoff: int) -> int:
    """The hit indicator 1[G_q ∩ R_B(q) ≠ ∅] from the first relevant rank: 1 or 0."""
    return int(rank is not None and rank <= cutoff)


class AgentQuestionScore(BaseModel):
    """One question: its run summarised and scored (``steps`` is the run's whole trace)."""

    id: str
    question: str
    answer: str | None
    stop_reason: StopReason
    pages_read: list[str] = Field(description="The stream: unique, in retrieval order.")
    ranked: list[str] = Field(description="The same pages after the final ranking.")
    relevant: list[str]
    first_relevant_rank: int | None = Field(
        description="Rank of the first relevant page in the ranked list (None: none, or unjudged)."
    )
    stream_first_relevant_rank: int | None = Field(
        description="Rank of the first relevant page in the stream, before the final ranking."
    )
    rank_failures: int = Field(default=0, description="Pages the ranking LLM gave no score.")
    answer_covered: bool | None
    cover_em: float | None
    tool_calls: int
    malformed_steps: int
    steps: list[AgentStep]


class AgenticReport(BaseModel):
    """Means over the questions, plus each question's scored run.

    Means skip the questions a measure cannot score (no judgement; no gold answer), and the
    counts beside them (``judged``, ``coverage_questions``) say how many were scored.
    """

    protocol: SearchProtocol
    budget: int
    max_steps: int
    search_k: int
    final_ranking: str = Field(description="llm (ranked by the LLM) or stream (not ranked).")
    cutoffs: list[int] = Field(description="The B scored: 1, 10, 100 up to the budget, and it.")
    questions: int
    judged: int
    recall_at_1: float | None
    recall_at_10: float | None = Field(description="None when the budget is below 10.")
    recall_at_100: float | None = Field(description="None when the budget is below 100.")
    recall_at_budget: float | None
    stream_recall: dict[str, float | None] = Field(
        default_factory=dict,
        description="Recall@B of the stream before the final ranking, keyed recall_at_B.",
    )
    coverage_questions: int
    answer_coverage: float | None
    cover_em: float | None
    answered: int
    mean_pages_read: float
    mean_tool_calls: float
    malformed_steps: int
    llm_errors: int
    stop_reasons: dict[str, int] = Field(default_factory=dict)
    notes: list[str] = Field(
        default_factory=list,
        description="E.g. how many questions the step cap stopped before their page budget.",
    )
    results: list[AgentQuestionScore] = Field(default_factory=list)


def _mean(values: Iterable[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return fmean(present) if present else None


def _passages(run: AgentRun) -> list[str]:
    return [passage_text({TITLE: page.title, TEXT: page.text}) for page in run.pages_read]


def answer_in_pages(passages: Sequence[str], golden_answers: Iterable[str | None]) -> bool | None:
    """Whether some gold answer occurs in some passage (``metrics.coverage``'s rule); None when
    the question has no gold answer and is left out of coverage."""
    golds = gold_aliases(golden_answers)
    if not golds:
        return None
    return first_covering_rank(golds, passages) is not None


def score_run(
    run: AgentRun, relevant: Mapping[str, int], golden_answers: Sequence[str]
) -> AgentQuestionScore:
    """Score one episode against its judgements and gold answers."""
    return AgentQuestionScore(
        id=run.question_id,
        question=run.question,
        answer=run.answer,
        stop_reason=run.stop_reason,
        pages_read=run.page_ids,
        ranked=run.ranked_page_ids,
        relevant=sorted(doc for doc, grade in relevant.items() if grade > 0),
        first_relevant_rank=first_relevant_rank(run.ranked_page_ids, relevant),
        stream_first_relevant_rank=first_relevant_rank(run.page_ids, relevant),
        rank_failures=run.rank_failures,
        answer_covered=answer_in_pages(_passages(run), golden_answers),
        cover_em=(cover_em(run.answer or "", golden_answers) if golden_answers else None),
        tool_calls=run.tool_calls,
        malformed_steps=run.malformed_steps,
        steps=list(run.steps),
    )


def step_cap_note(
    capped: Sequence[AgentQuestionScore], max_steps: int, budget: int, questions: int
) -> str:
    """The note for questions the step cap stopped before their page budget: §4.4 has no step
    cap (its stream runs to the budget), so a capped stream is shorter than the paper's and the
    reader must know which ones (each also says ``stop_reason: max_steps``)."""
    pages = ", ".join(f"{s.id} ({len(s.pages_read)})" for s in capped)
    return (
        f"the step cap (max_steps {max_steps}) stopped {len(capped)} of {questions} questions "
        f"before their {budget}-page budget: {pages} pages; raise it with --max-steps / max_steps"
    )


def evaluate_runs(
    runs: Sequence[AgentRun],
    qrels: Mapping[str, Mapping[str, int]],
    golden: Mapping[str, Sequence[str]],
) -> AgenticReport:
    """The report of a whole evaluation; every run must share one protocol and its bounds."""
    if not runs:
        raise ValueError("no agent runs to evaluate")
    bounds = {(run.protocol, run.budget, run.max_steps, run.search_k) for run in runs}
    if len(bounds) != 1:
        raise ValueError(f"runs with different budgets cannot be averaged: {sorted(bounds)}")
    ((protocol, budget, max_steps, search_k),) = bounds
    ranked = {run.ranked_ids is not None for run in runs}
    if len(ranked) != 1:
        raise ValueError("ranked and unranked runs cannot be averaged together")
    scores = [
        score_run(run, qrels.get(run.question_id, {}), golden.get(run.question_id, []))
        for run in runs
    ]
    judged = [s for s in scores if s.relevant]
    covered = [s.answer_covered for s in scores if s.answer_covered is not None]
    cutoffs = recall_cutoffs(budget)

    def recall(cutoff: int, *, stream: bool = False) -> float | None:
        if cutoff not in cutoffs:
            return None
        return _mean(
            hit_at(s.stream_first_relevant_rank if stream else s.first_relevant_rank, cutoff)
            for s in judged
        )

    reasons: dict[str, int] = {}
    for score in scores:
        reasons[score.stop_reason] = reasons.get(score.stop_reason, 0) + 1
    capped = [s for s in scores if s.stop_reason == "max_steps"]
    notes = [step_cap_note(capped, max_steps, budget, len(scores))] if capped else []
    failed = sum(s.rank_failures for s in scores)
    if failed:
        notes.append(
            f"final ranking: {failed} of {sum(len(s.ranked) for s in scores)} pages got no "
            "usable score from the LLM and kept their stream position"
        )
    return AgenticReport(
        protocol=protocol,
        budget=budget,
        max_steps=max_steps,
        search_k=search_k,
        final_ranking="llm" if ranked == {True} else "stream",
        cutoffs=cutoffs,
        questions=len(scores),
        judged=len(judged),
        recall_at_1=recall(1),
        recall_at_10=recall(10),
        recall_at_100=recall(100),
        recall_at_budget=recall(budget),
        stream_recall={f"recall_at_{b}": recall(b, stream=True) for b in cutoffs},
        coverage_questions=len(covered),
        answer_coverage=_mean(float(c) for c in covered),
        cover_em=_mean(s.cover_em for s in scores),
        answered=sum(s.answer is not None for s in scores),
        mean_pages_read=fmean(len(s.pages_read) for s in scores),
        mean_tool_calls=fmean(s.tool_calls for s in scores),
        malformed_steps=sum(s.malformed_steps for s in scores),
        llm_errors=sum(s.stop_reason == "llm_error" for s in scores),
        stop_reasons=reasons,
        notes=notes,
        results=scores,
    )
