"""What a method's answers cost in LLM work, per question: the price beside the accuracy.

The SEEK paper reports accuracy; its method makes more LLM calls than its baselines (a sketch,
then a sub-query and an evidence call per gist, then the answer), and its calls depend on one
another, so they cannot all be sent at once. `eval qa` therefore prints, for every method,
the mean per question of:

* **LLM calls** and **prompt / completion tokens** (the model's own counts, summed over every
  call the question made, attempts asked again with shorter evidence included);
* **rounds**: the LLM round trips on the question's path. Calls the method makes together
  (ReWOO's one-pass searches are not LLM calls; Parallel Filling's one call; anything it
  gathers) count as one round; each call that waits for the one before counts as its own.
  In an offline batch run (``--llm batch:``) a question advances one batch round per round,
  so the run needs at least as many batch rounds as its slowest question has rounds.

The counts come from each result's `QuestionUsage` (`sira_seek.seek.results`); analyses asked
for afterwards (DIG, per-iteration answers, slot ablation) are not the method's cost and are
counted apart.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field


class QuestionCost(BaseModel):
    """One question's LLM cost."""

    model_config = ConfigDict(frozen=True)

    calls: int = Field(default=0, ge=0, description="LLM calls")
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    rounds: int = Field(
        default=0, ge=0, description="LLM round trips on the question's path (see the module)"
    )


class LLMCost(BaseModel):
    """A run's LLM cost: totals and means per question, over every question it ran."""

    model_config = ConfigDict(frozen=True)

    questions: int = Field(description="questions counted (answered and failed alike)")
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    llm_calls_per_question: float | None
    prompt_tokens_per_question: float | None
    completion_tokens_per_question: float | None
    rounds_per_question: float | None
    max_rounds: int = Field(description="the most rounds any one question took")

    def describe(self) -> str:
        """One line for people: the means per question."""
        if not self.questions:
            return "no questions"

        def mean(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.1f}"

        return (
            f"{mean(self.llm_calls_per_question)} LLM calls, "
            f"{mean(self.prompt_tokens_per_question)} prompt and "
            f"{mean(self.completion_tokens_per_question)} completion tokens, "
            f"{mean(self.rounds_per_question)} rounds (max {self.max_rounds}) per question "
            f"({self.questions} questions)"
        )


def llm_cost(costs: Iterable[QuestionCost]) -> LLMCost:
    """Totals and per-question means of ``costs`` (means are None without questions)."""
    rows = list(costs)

    def mean(values: list[int]) -> float | None:
        return round(statistics.fmean(values), 4) if values else None

    calls = [c.calls for c in rows]
    prompt = [c.prompt_tokens for c in rows]
    completion = [c.completion_tokens for c in rows]
    rounds = [c.rounds for c in rows]
    return LLMCost(
        questions=len(rows),
        llm_calls=sum(calls),
        prompt_tokens=sum(prompt),
        completion_tokens=sum(completion),
        llm_calls_per_question=mean(calls),
        prompt_tokens_per_question=mean(prompt),
        completion_tokens_per_question=mean(completion),
        rounds_per_question=mean(rounds),
        max_rounds=max(rounds, default=0),
    )
