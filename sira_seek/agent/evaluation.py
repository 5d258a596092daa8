"""Scoring agentic episodes: Recall@B of the pages read, and whether they hold the answer.

Recall@B is taken over the pages the agent read, which the loop caps at the budget B, so it is
the paper's "recall within the page budget", comparable to Recall@k of a single search with
k = B. Answer coverage asks whether the gold answer string occurs in the read pages (title or
text), after the SEEK/PAGER normalisation (``metrics.qa.normalize_answer``) on both sides and
on whole tokens, so "1989" does not match inside "19890". It measures what the search found,
not what a (small) model wrote; the model's own answer is scored separately with Cover-EM.

Questions whose gold answers are only ``yes``/``no`` (HotpotQA comparisons) get no coverage
(``None``): those words occur in pages by chance and say nothing about retrieval.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean

from pydantic import BaseModel, Field

from sira_seek.agent.loop import AgentRun, AgentStep, StopReason
from sira_seek.metrics.qa import cover_em, normalize_answer

YES_NO = frozenset({"yes", "no"})


def recall_at_budget(pages_read: Sequence[str], relevant: Mapping[str, int]) -> float | None:
    """Share of the relevant pages (judgement > 0) among ``pages_read``; None when none is
    relevant (the question cannot be scored, rather than scoring 0)."""
    wanted = {doc for doc, grade in relevant.items() if grade > 0}
    if not wanted:
        return None
    return len(wanted & set(pages_read)) / len(wanted)


def scorable_answers(golden_answers: Iterable[str]) -> list[str]:
    """The normalised gold answers a page can be searched for (not yes/no, not empty)."""
    found = (normalize_answer(g) for g in golden_answers)
    return [g for g in found if g and g not in YES_NO]


def answer_in_pages(page_texts: Iterable[str], golden_answers: Iterable[str]) -> bool | None:
    """Whether some gold answer occurs, on whole tokens, in some page; None when no gold
    answer can be looked for (see ``scorable_answers``)."""
    golds = scorable_answers(golden_answers)
    if not golds:
        return None
    padded = [f" {normalize_answer(text)} " for text in page_texts]
    return any(f" {gold} " in page for gold in golds for page in padded)


class AgentQuestionScore(BaseModel):
    """One question: its run summarised and scored (``steps`` is the run's whole trace)."""

    id: str
    question: str
    answer: str | None
    stop_reason: StopReason
    pages_read: list[str]
    relevant: list[str]
    recall: float | None
    answer_covered: bool | None
    cover_em: float | None
    tool_calls: int
    malformed_steps: int
    steps: list[AgentStep]


class AgenticReport(BaseModel):
    """Means over the questions, plus each question's scored run.

    Means skip the questions a measure cannot score (no judgement; a yes/no gold), and the
    counts beside them (``judged``, ``coverage_questions``) say how many were scored.
    """

    budget: int
    max_steps: int
    questions: int
    judged: int
    recall_at_budget: float | None
    coverage_questions: int
    answer_coverage: float | None
    cover_em: float | None
    answered: int
    mean_pages_read: float
    mean_tool_calls: float
    malformed_steps: int
    llm_errors: int
    stop_reasons: dict[str, int] = Field(default_factory=dict)
    results: list[AgentQuestionScore] = Field(default_factory=list)


def _mean(values: Iterable[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return fmean(present) if present else None


def score_run(
    run: AgentRun, relevant: Mapping[str, int], golden_answers: Sequence[str]
) -> AgentQuestionScore:
    """Score one episode against its judgements and gold answers."""
    texts = [f"{page.title or ''} {page.text}" for page in run.pages_read]
    return AgentQuestionScore(
        id=run.question_id,
        question=run.question,
        answer=run.answer,
        stop_reason=run.stop_reason,
        pages_read=run.page_ids,
        relevant=sorted(doc for doc, grade in relevant.items() if grade > 0),
        recall=recall_at_budget(run.page_ids, relevant),
        answer_covered=answer_in_pages(texts, golden_answers),
        cover_em=(cover_em(run.answer or "", golden_answers) if golden_answers else None),
        tool_calls=run.tool_calls,
        malformed_steps=run.malformed_steps,
        steps=list(run.steps),
    )


def evaluate_runs(
    runs: Sequence[AgentRun],
    qrels: Mapping[str, Mapping[str, int]],
    golden: Mapping[str, Sequence[str]],
) -> AgenticReport:
    """The report of a whole evaluation; every run must share one budget and step cap."""
    if not runs:
        raise ValueError("no agent runs to evaluate")
    budgets = {(run.budget, run.max_steps) for run in runs}
    if len(budgets) != 1:
        raise ValueError(f"runs with different budgets cannot be averaged: {sorted(budgets)}")
    ((budget, max_steps),) = budgets
    scores = [
        score_run(run, qrels.get(run.question_id, {}), golden.get(run.question_id, []))
        for run in runs
    ]
    reasons: dict[str, int] = {}
    for score in scores:
        reasons[score.stop_reason] = reasons.get(score.stop_reason, 0) + 1
    covered = [s.answer_covered for s in scores if s.answer_covered is not None]
    return AgenticReport(
        budget=budget,
        max_steps=max_steps,
        questions=len(scores),
        judged=sum(s.recall is not None for s in scores),
        recall_at_budget=_mean(s.recall for s in scores),
        coverage_questions=len(covered),
        answer_coverage=_mean(float(c) for c in covered),
        cover_em=_mean(s.cover_em for s in scores),
        answered=sum(s.answer is not None for s in scores),
        mean_pages_read=fmean(len(s.pages_read) for s in scores),
        mean_tool_calls=fmean(s.tool_calls for s in scores),
        malformed_steps=sum(s.malformed_steps for s in scores),
        llm_errors=sum(s.stop_reason == "llm_error" for s in scores),
        stop_reasons=reasons,
        results=scores,
    )
