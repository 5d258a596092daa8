"""The SEEK paper's analyses of answer quality: after each iteration, and with slots removed.

Both need answers the run itself never gave: the model asked again from part of what a method
gathered. Asking is the caller's (`sira_seek.seek.analysis_answers`, opt-in through
``eval qa --per-iteration`` / ``--slot-ablation``, since it costs LLM calls); this module only
scores the answers it is given, with the scorer's own Cover-EM and token F1 (`qa.cover_em`,
`qa.token_f1`), so every figure here is on the scale of the run's own scores.

* **Performance across iteration rounds** (Appendix A.7, Fig. 6a, "The Performance of Models
  Evolution across Iteration Rounds"): the answer quality a method reaches when it answers
  after iteration 1, 2, ..., n. The paper states the figure, not its procedure; the reading
  taken here: answer iteration t is the model's answer from the knowledge as it stood after t
  iterations (SEEK: the sketch with t slots filled; Iter-RetGen: round t's own generation),
  the last iteration's answer is the run's own. A question that stopped after n_q < t
  iterations keeps its last answer at t (it would answer the same), so every row is over the
  same questions and the curve moves only by what later iterations changed; ``iterating``
  says how many questions were still retrieving at t. The paper plots questions "that require
  four rounds of iterative retrieval" only; ``per_question`` rows let a reader select those.
* **Slot ablation** (§5.3, Fig. 4b, "Slot Ablation Studies on the Completed Sketch"): the
  paper collects completed sketches with four slots (its model's usual count, A.10), removes
  the first, second, third or fourth filled slot, and answers from each incomplete sketch;
  "N/A" is the completed sketch (the run's own answer) and "SEEK (w/o Sketch)" the completed
  sketch with every steering gist removed (only the filled knowledge left). The seed sketches
  here are the completed sketches with the run's most common slot count (``seed_slots``,
  4 when the model behaves like the paper's), or a count the caller chooses.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from .qa import cover_em, token_f1

ORDINALS: tuple[str, ...] = (
    "First",
    "Second",
    "Third",
    "Fourth",
    "Fifth",
    "Sixth",
    "Seventh",
    "Eighth",
    "Ninth",
    "Tenth",
    "Eleventh",
    "Twelfth",
)
"""Fig. 4b's row names for the removed slot ("First" ... "Fourth"), extended."""

COMPLETE = "N/A"
"""Fig. 4b's name for the completed sketch, no slot removed."""

WITHOUT_SKETCH = "w/o Sketch"
"""Fig. 4b's "SEEK (w/o Sketch)": every steering gist removed from the completed sketch."""


def ordinal(position: int) -> str:
    """The row name of removing slot ``position`` (1-based): ``First``, ``Second``, ..."""
    if 1 <= position <= len(ORDINALS):
        return ORDINALS[position - 1]
    return f"Slot {position}"


class AnalysisCost(BaseModel):
    """What an opt-in analysis cost in LLM calls beyond the run (not in the run's usage)."""

    model_config = ConfigDict(frozen=True)

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = Field(default=0.0, description="summed call latency")
    wall_seconds: float = Field(default=0.0, description="the analysis's wall time")
    failed_questions: int = Field(default=0, description="questions left out because a call failed")


class QuestionAnswers(BaseModel):
    """One question's answers for these analyses, already extracted as the run scores them
    (`seek_diagnostics.QuestionTrace` is one, with the run's retrievals besides)."""

    model_config = ConfigDict(frozen=True)

    id: str
    golden_answers: list[str] = Field(default_factory=list)
    answer: str = Field(default="", description="the run's own scored answer")
    answers_by_iteration: list[str] | None = Field(
        default=None,
        description="the answer after iteration 1..n (the n-th is the run's); None: not asked",
    )
    slot_ablation_answers: list[str] | None = Field(
        default=None, description="answer i: the completed sketch with filled slot i+1 removed"
    )
    answer_without_sketch: str | None = Field(
        default=None, description="the completed sketch with every steering gist removed"
    )


class IterationPerformance(BaseModel):
    """One point of Fig. 6a: answer quality when answering after iteration ``iteration``."""

    model_config = ConfigDict(frozen=True)

    iteration: int
    questions: int
    iterating: int = Field(description="questions that ran at least this many iterations")
    cover_em: float
    f1: float


class SlotAblationRow(BaseModel):
    """One bar of Fig. 4b: which slot was removed (or none, or the gists), and the scores."""

    model_config = ConfigDict(frozen=True)

    removed: str
    cover_em: float
    f1: float


class SlotAblation(BaseModel):
    """Fig. 4b over the seed sketches: ``N/A``, each removed slot, ``w/o Sketch``."""

    model_config = ConfigDict(frozen=True)

    seed_slots: int = Field(description="filled slots of every seed sketch")
    questions: int = Field(description="seed sketches (questions) scored")
    rows: list[SlotAblationRow]
    cost: AnalysisCost | None = None


def _scores(pairs: Sequence[tuple[str, list[str]]]) -> tuple[float, float]:
    return (
        round(statistics.fmean(cover_em(p, g) for p, g in pairs), 4),
        round(statistics.fmean(token_f1(p, g) for p, g in pairs), 4),
    )


def performance_by_iteration(answers: Sequence[QuestionAnswers]) -> list[IterationPerformance]:
    """Cover-EM and F1 after each iteration over the questions with gold answers and answers
    by iteration; a question that stopped earlier keeps its last answer. Empty: none had any."""
    scored = [a for a in answers if a.golden_answers and a.answers_by_iteration]
    if not scored:
        return []
    rounds = max(len(a.answers_by_iteration or ()) for a in scored)
    rows = []
    for t in range(1, rounds + 1):
        pairs = []
        for a in scored:
            by_t = a.answers_by_iteration or []
            pairs.append((by_t[min(t, len(by_t)) - 1], a.golden_answers))
        em, f1 = _scores(pairs)
        iterating = sum(1 for a in scored if len(a.answers_by_iteration or ()) >= t)
        rows.append(
            IterationPerformance(
                iteration=t, questions=len(pairs), iterating=iterating, cover_em=em, f1=f1
            )
        )
    return rows


def seed_slot_count(slot_counts: Sequence[int]) -> int | None:
    """The most common filled-slot count (ties: the larger count); None without sketches."""
    counts = Counter(n for n in slot_counts if n > 0)
    if not counts:
        return None
    return max(counts, key=lambda n: (counts[n], n))


def slot_ablation(
    answers: Sequence[QuestionAnswers], *, seed_slots: int | None = None
) -> SlotAblation | None:
    """Fig. 4b over the seed sketches: those with gold answers, slot-ablation answers and
    ``seed_slots`` filled slots (default: the most common count among them). None: no seed."""
    candidates = [
        a
        for a in answers
        if a.golden_answers
        and a.slot_ablation_answers is not None
        and a.answer_without_sketch is not None
    ]
    slots = seed_slots or seed_slot_count([len(a.slot_ablation_answers or ()) for a in candidates])
    seeds = [a for a in candidates if len(a.slot_ablation_answers or ()) == slots]
    if slots is None or not seeds:
        return None
    labelled: list[tuple[str, list[tuple[str, list[str]]]]] = [
        (COMPLETE, [(a.answer, a.golden_answers) for a in seeds])
    ]
    for i in range(slots):
        pairs = [((a.slot_ablation_answers or [])[i], a.golden_answers) for a in seeds]
        labelled.append((ordinal(i + 1), pairs))
    labelled.append(
        (WITHOUT_SKETCH, [(a.answer_without_sketch or "", a.golden_answers) for a in seeds])
    )
    rows = []
    for name, pairs in labelled:
        em, f1 = _scores(pairs)
        rows.append(SlotAblationRow(removed=name, cover_em=em, f1=f1))
    return SlotAblation(seed_slots=slots, questions=len(seeds), rows=rows)
