"""SEEK paper §5.4: the knowledge conflict / utilization split (Table 3) and the judge's
ratings of the knowledge context (Fig. 4c's "GPT" panel), as pure functions.

**Table 3** -- "For the knowledge conflict scenario, we select samples from the evaluation
dataset where the LLM can generate correct answers solely based on its parametric knowledge
[...]. For the knowledge utilization scenario, we construct the evaluation set by selecting
samples where the LLM must rely on external knowledge to generate the answer." The populations
are decided by a *closed-book* run of the same model (``eval qa --method vanilla-llm``), never
by the evaluated method's own answers (that would make every method perfect on "conflict"):
a question is a conflict question when the closed-book answer scores Cover-EM 1 (the papers'
headline metric, the one ``eval qa`` reports first), a utilization question otherwise. The
evaluated method's Cover-EM, EM and F1 are then averaged over each population
(`knowledge_split`). A question the closed-book run did not answer (absent, failed, or
without gold) is in neither and counted (``unmatched``).

**The judge** (§5.4: GPT-5.1 rates "the knowledge context along four dimensions: accuracy,
logicality, structure, and degree of knowledge refinement, with each dimension rated on a
scale from 0 to 5", "using the prompt templates provided in Appendix A.12"). A.12's judge
template is Figure 11, an image: its wording is NOT in the paper's text, so the prompt here
(`judge_prompt`, the one builder of the family) is OUR wording, written to the four named
dimensions and the 0-5 scale. The judge answers one JSON object; `parse_judge_scores` reads
it, refusing (never clamping silently) a score outside 0-5 or a missing dimension: such an
output is recorded as malformed, counted, and left out of the means.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from .qa import PredictionRecord, cover_em, exact_match, token_f1
from .seek_answer_analyses import AnalysisCost

SPLIT_METRIC = "cover_em"
"""What decides a closed-book answer is correct (Cover-EM, the reported headline metric)."""

JUDGE_DIMENSIONS = ("accuracy", "logicality", "structure", "refinement")
"""§5.4's four dimensions, in the paper's order ("degree of knowledge refinement" is
``refinement``)."""

JUDGE_SCALE = (0, 5)

JUDGE_TEMPLATE_PROVENANCE = (
    "our wording: the SEEK paper's judge template (A.12, Figure 11) is an image whose text "
    "the paper does not give; the four dimensions and the 0-5 scale are the paper's (§5.4)"
)


class SplitScores(BaseModel):
    """The method's means over one population (zeros when the population is empty)."""

    model_config = ConfigDict(frozen=True)

    questions: int
    cover_em: float
    em: float
    f1: float


class KnowledgeSplit(BaseModel):
    """Table 3 for one method: its scores on the conflict and utilization populations."""

    model_config = ConfigDict(frozen=True)

    metric: str = Field(default=SPLIT_METRIC, description="closed-book correctness metric")
    closed_book: str = Field(description="where the closed-book answers came from")
    conflict: SplitScores = Field(description="questions the closed-book run answers correctly")
    utilization: SplitScores = Field(description="questions the closed-book run gets wrong")
    unmatched: int = Field(
        description="questions of this run the closed-book run did not answer or without gold"
    )
    conflict_ids: list[str] = Field(default_factory=list)
    utilization_ids: list[str] = Field(default_factory=list)


def closed_book_correct(records: Iterable[PredictionRecord]) -> dict[str, bool]:
    """question id -> whether the closed-book answer is correct (Cover-EM 1); records without
    an id or gold answers decide nothing and are left out."""
    return {
        r.id: cover_em(r.prediction, r.golden_answers) == 1.0
        for r in records
        if r.id is not None and r.golden_answers
    }


def _scores(records: Sequence[PredictionRecord]) -> SplitScores:
    n = len(records)
    if not n:
        return SplitScores(questions=0, cover_em=0.0, em=0.0, f1=0.0)

    def mean(metric: Callable[[str, list[str]], float]) -> float:
        return round(statistics.fmean(metric(r.prediction, r.golden_answers) for r in records), 4)

    return SplitScores(
        questions=n, cover_em=mean(cover_em), em=mean(exact_match), f1=mean(token_f1)
    )


def knowledge_split(
    records: Iterable[PredictionRecord], closed_book: Mapping[str, bool], source: str
) -> KnowledgeSplit:
    """Table 3: the method's ``records`` scored over the populations ``closed_book`` (qid ->
    closed-book correct, `closed_book_correct`) decides; the method's own correctness plays
    no part in which population a question is in."""
    conflict: list[PredictionRecord] = []
    utilization: list[PredictionRecord] = []
    unmatched = 0
    for record in records:
        decided = None if record.id is None else closed_book.get(record.id)
        if decided is None or not record.golden_answers:
            unmatched += 1
        else:
            (conflict if decided else utilization).append(record)
    return KnowledgeSplit(
        closed_book=source,
        conflict=_scores(conflict),
        utilization=_scores(utilization),
        unmatched=unmatched,
        conflict_ids=[str(r.id) for r in conflict],
        utilization_ids=[str(r.id) for r in utilization],
    )


def judge_prompt(question: str, context: str) -> str:
    """The judge's one prompt (our wording, see `JUDGE_TEMPLATE_PROVENANCE`): the question,
    the knowledge context a method answered from, and the four 0-5 ratings as one JSON object.
    The gold answer is not shown: the paper rates the context, not the answer."""
    keys = ", ".join(f'"{d}": <0-5>' for d in JUDGE_DIMENSIONS)
    return (
        "You are evaluating the knowledge context a question-answering system gathered "
        "before answering a question. Rate the context on four dimensions, each an integer "
        "from 0 (worst) to 5 (best):\n"
        "- accuracy: the facts it states are correct and relevant to the question;\n"
        "- logicality: its reasoning steps follow from one another and lead toward the answer;\n"
        "- structure: it is organised clearly (aspects separated, nothing scattered);\n"
        "- refinement: it keeps the needed knowledge and leaves out noise and repetition.\n\n"
        f"Question: {question}\n\nKnowledge context:\n{context}\n\n"
        f"Reply with one JSON object and nothing else: {{{keys}}}"
    )


class JudgeScores(BaseModel):
    """One context's four ratings, each in 0-5."""

    model_config = ConfigDict(frozen=True)

    accuracy: float = Field(ge=0, le=5)
    logicality: float = Field(ge=0, le=5)
    structure: float = Field(ge=0, le=5)
    refinement: float = Field(ge=0, le=5)


_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_judge_scores(text: str) -> JudgeScores | str:
    """The ratings in the judge's reply (the last ``{...}`` span, so a preamble or a code
    fence is tolerated), or why they cannot be read: not JSON, a dimension missing or not a
    number, or a score outside 0-5 (refused, not clamped: a judge that says 7 did not use the
    paper's scale)."""
    found = _OBJECT.search(text or "")
    if found is None:
        return "no JSON object in the judge's reply"
    try:
        data = json.loads(found.group(0))
    except ValueError as err:
        return f"not JSON: {err}"
    if not isinstance(data, dict):
        return "not a JSON object"
    scores: dict[str, float] = {}
    for key in JUDGE_DIMENSIONS:
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{key}: missing or not a number ({value!r})"
        if not JUDGE_SCALE[0] <= value <= JUDGE_SCALE[1]:
            return f"{key}: {value} is outside 0-5"
        scores[key] = float(value)
    return JudgeScores(**scores)


class JudgeVerdict(BaseModel):
    """One question's judgement: the scores, or the malformed reply and why."""

    model_config = ConfigDict(frozen=True)

    id: str
    scores: JudgeScores | None = None
    malformed: str | None = None
    reply: str | None = Field(default=None, description="the judge's reply when malformed")


class KnowledgeJudgement(BaseModel):
    """§5.4 for one method: the mean rating per dimension over the contexts judged."""

    model_config = ConfigDict(frozen=True)

    judge: str = Field(description="the judge's LLM spec")
    template: str = JUDGE_TEMPLATE_PROVENANCE
    context: str = Field(description="what was rated for this method")
    judged: int
    malformed: int
    no_context: int = Field(description="answered questions without a knowledge context")
    failed: int = Field(default=0, description="judge calls that failed (LLM errors)")
    means: dict[str, float | None]
    cost: AnalysisCost | None = Field(
        default=None, description="the judge's calls and tokens (not in the run's usage)"
    )
    verdicts: list[JudgeVerdict] = Field(default_factory=list)


def knowledge_judgement(
    verdicts: Sequence[JudgeVerdict],
    *,
    judge: str,
    context: str,
    no_context: int,
    failed: int = 0,
    cost: AnalysisCost | None = None,
) -> KnowledgeJudgement:
    """The means per dimension over the well-formed verdicts (None when there is none)."""
    good = [v.scores for v in verdicts if v.scores is not None]
    means: dict[str, float | None] = {
        d: round(statistics.fmean(getattr(s, d) for s in good), 4) if good else None
        for d in JUDGE_DIMENSIONS
    }
    return KnowledgeJudgement(
        judge=judge,
        context=context,
        judged=len(good),
        malformed=sum(1 for v in verdicts if v.malformed is not None),
        no_context=no_context,
        failed=failed,
        means=means,
        cost=cost,
        verdicts=list(verdicts),
    )
