"""The SEEK paper's analyses, computed from plain per-question traces (`QuestionTrace`).

The SEEK paper (arXiv 2601.09402) argues with more than answer scores: its sketches lead to
more diverse sub-queries, less redundant retrieval and more effective sub-queries, at a cost
in gists and time per question. These are those analyses, named as the paper names them, so a
run here can be compared with its claims:

* **sub-query similarity / diversity** (§5.3, Fig. 4a, "query-intent diversity"): the paper
  computes "the semantic similarity among sub-queries generated at different iterations" with
  Qwen3-Embedding-0.6B. Here: per question the mean similarity over every pair of its
  (non-empty) sub-queries (``subquery_similarity``, what Fig. 4a plots, lower is more diverse)
  and 1 minus it (``subquery_diversity``); the run's figures are means over questions with at
  least two sub-queries. The similarity is pluggable (`SubQuerySimilarity`: a ``name`` and
  ``similarity(a, b) -> float``); the offline default is `TokenJaccard`, the Jaccard
  similarity of the sub-queries' normalised token sets (`qa.normalize_answer`), because no
  embedding model ships with sira-seek; `EmbeddingCosine` over any embedding function gives
  the paper's reading. The report names the one used (``subquery_similarity_measure``).
* **document overlap** (§5.3, Fig. 4a, "retrieval redundancy"): "the Jaccard similarity
  between the documents retrieved at different retrieval steps". Per question the mean
  Jaccard |D_t ∩ D_{t-1}| / |D_t ∪ D_{t-1}| of consecutive steps' retrieved sets
  (``document_overlap``; the paper does not say whether its pairs are consecutive or all
  pairs: consecutive is the reading taken, the one Fig. 6b's iterations extend).
  **Document overlap across iteration rounds** (Appendix A.7, Fig. 6b): "the overlap between
  the documents retrieved in the current iteration and the cumulative set of documents
  retrieved in previous iterations", per iteration t >= 2: |D_t ∩ C_{t-1}| / |D_t ∪ C_{t-1}|
  with C_{t-1} = D_1 ∪ ... ∪ D_{t-1} (``with_cumulative``), beside the consecutive-step
  Jaccard (``with_previous``), each the mean over the questions that ran step t
  (``document_overlap_by_iteration``). Two empty sets have no Jaccard: such a pair is skipped.
  A.7 plots Fig. 6 over the questions "that require four rounds of iterative retrieval" only:
  ``document_overlap_by_iteration_fig6`` and ``performance_by_iteration_fig6`` are over the
  answered questions whose run took exactly `FIG6_ROUNDS` (4) retrieval steps
  (``fig6_questions``), as the paper reports it; the curves over all questions stay beside
  them as a second, labelled line (a question that stopped earlier, or went on longer, moves
  those).
* **new-document share** -- not the paper's: the share of retrieved documents that were new
  when retrieved (`new_document_share`), kept under its own name.
* **DIG** (Document Information Gain, A.6, Eq. 13-15) -- how much the knowledge O a method
  answered from raised the model's confidence in the gold answer, p(y | q, O) - p(y | q);
  defined in `sira_seek.metrics.information_gain`, scored by `sira_seek.seek.information_gain`
  (it needs the LLM's token log-probabilities, so the caller passes the gains in). The report
  echoes W, k, alpha and omega (``dig_parameters``).
* **maximum sub-query Recall@5** (A.5, Table 5): "for each question, we first calculate
  Recall@5 for each generated sub-query, and then select the highest score among all
  sub-queries", where "retrieved documents containing the ground-truth answer" stand for the
  gold evidence. A sub-query's Recall@5 is 1 when one of its top 5 documents contains a gold
  answer and 0 otherwise: the paper writes no formula, and this is the answer-string recall
  of FlashRAG (``retrieval_recall_top5``) that its iterative baselines are evaluated with; the
  paper's Table 5 values for RAT, Search-o1 and SEEK are all multiples of 0.05 on its
  2,000-question samples, as a per-question 0/1 gives. "Contains" is the one answer-matching
  rule of the project (`coverage.answer_in_passage`: an alias's normalised tokens as a
  contiguous run of the passage's "title text"). Questions without a gold answer are left
  out. The judged-document version (|top-5 ∩ relevant| / |relevant| from qrels) is kept as
  ``qrels_subquery_recall_at_5``.
* **performance across iteration rounds** (A.7, Fig. 6a) and the **slot ablation** (§5.3,
  Fig. 4b): answer quality after each iteration and with each filled slot removed, scored in
  `sira_seek.metrics.seek_answer_analyses` from answers the caller asked for (opt-in: they
  cost LLM calls).
* **step cap** -- questions where a variant that retrieves until the LLM says the evidence is
  enough (Plan, w/o Initialization) or revises its sketch (Update) stopped at its cap instead
  (``step_cap_reached``).
* **shorter evidence** -- questions answered with shorter evidence because one of their
  prompts did not fit the model's context (``evidence_shortened``, `sira_seek.seek.context_fit`):
  their scores are not those of full-length evidence.
* **gists per question** -- the sketch's gist count (methods without a sketch are left out),
  with its distribution (the paper plots how many gists each model chose, A.10).
* **seconds per question** -- each question's wall time (`AnswerTimings.total_s`). In a batch,
  questions overlap, so the amortised figure (run wall time / questions) is reported too.
* **knowledge conflict / utilization** (§5.4, Table 3) and the **judge's ratings of the
  knowledge context** (§5.4): `sira_seek.metrics.seek_knowledge` (``knowledge_split``,
  ``knowledge_judge``), set by the workflow when a closed-book run or a judge is given.
* **LLM cost** -- not an analysis of the paper's, the price beside its accuracy: LLM calls,
  prompt and completion tokens and rounds per question (`cost`, `sira_seek.metrics.llm_cost`),
  over every question run (a failed question cost too).

Failed questions (``ok`` false) are left out of every analysis and counted in ``failed``.

A trace is plain data: any method that records its sub-queries and what each retrieved can be
analysed. A SEEK run's results give theirs with `SeekResult.trace()`.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from .coverage import answer_in_passage, gold_aliases
from .information_gain import AnswerGain, DigParameters, InformationGains
from .llm_cost import LLMCost, QuestionCost, llm_cost
from .qa import cover_em, normalize_answer
from .seek_answer_analyses import (
    AnalysisCost,
    IterationPerformance,
    QuestionAnswers,
    SlotAblation,
    performance_by_iteration,
    slot_ablation,
)
from .seek_knowledge import KnowledgeJudgement, KnowledgeSplit

RECALL_DEPTH = 5
"""SEEK retrieves the top 5 per sub-query; the paper's sub-query Recall is at that depth."""


class SubQuerySimilarity(Protocol):
    """How alike two sub-queries are, in [0, 1] (1 = the same intent), and its name."""

    name: str

    def similarity(self, first: str, second: str) -> float: ...


def token_jaccard(first: str, second: str) -> float:
    """|A ∩ B| / |A ∪ B| of the two texts' normalised token sets; two empty sets give 1.0."""
    a, b = set(normalize_answer(first).split()), set(normalize_answer(second).split())
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class TokenJaccard:
    """The offline default: `token_jaccard` (no embedding model ships with sira-seek)."""

    name = "token_jaccard"

    def similarity(self, first: str, second: str) -> float:
        return token_jaccard(first, second)


TOKEN_JACCARD = TokenJaccard()


class EmbeddingCosine:
    """Cosine similarity of embeddings, the paper's reading (it embeds with
    Qwen3-Embedding-0.6B): ``embed`` is any text -> vector function, called once per text."""

    def __init__(
        self, embed: Callable[[str], Sequence[float]], name: str = "embedding_cosine"
    ) -> None:
        self.name = name
        self._embed = embed
        self._vectors: dict[str, Sequence[float]] = {}

    def _vector(self, text: str) -> Sequence[float]:
        if text not in self._vectors:
            self._vectors[text] = self._embed(text)
        return self._vectors[text]

    def similarity(self, first: str, second: str) -> float:
        a, b = self._vector(first), self._vector(second)
        norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        return 0.0 if norms == 0 else sum(x * y for x, y in zip(a, b, strict=True)) / norms


class StepTrace(BaseModel):
    """One retrieval step: the sub-query sent and the document ids it got, in rank order."""

    model_config = ConfigDict(frozen=True)

    sub_query: str
    retrieved_ids: list[str] = Field(default_factory=list)


class QuestionTrace(QuestionAnswers):
    """What the analyses read of one question's run (its answers, from `QuestionAnswers`)."""

    ok: bool = Field(default=True, description="False: the question failed (left out)")
    steps: list[StepTrace] = Field(default_factory=list)
    gists: int | None = Field(default=None, description="the sketch's gists; None: no sketch")
    seconds: float = Field(default=0.0, description="the question's wall time")
    step_cap_reached: bool = Field(
        default=False, description="the variant stopped at its step cap, not by its own choice"
    )
    evidence_scale: float = Field(
        default=1.0,
        description="1, or the shorter evidence it was answered with after a prompt did not "
        "fit the model's context (sira_seek.seek.context_fit)",
    )
    cost: QuestionCost = Field(
        default_factory=QuestionCost, description="the method's LLM cost for this question"
    )


def sub_queries(trace: QuestionTrace) -> list[str]:
    """The question's sub-queries in step order, blanks dropped (a malformed step that left no
    text says nothing about intent)."""
    return [s.sub_query.strip() for s in trace.steps if s.sub_query.strip()]


def subquery_similarity(
    queries: Sequence[str], similarity: SubQuerySimilarity = TOKEN_JACCARD
) -> float | None:
    """Mean pairwise similarity over every unordered pair; None with fewer than two queries."""
    pairs = list(itertools.combinations(queries, 2))
    if not pairs:
        return None
    return statistics.fmean(similarity.similarity(a, b) for a, b in pairs)


def subquery_diversity(
    queries: Sequence[str], similarity: SubQuerySimilarity = TOKEN_JACCARD
) -> float | None:
    """1 - `subquery_similarity`; None with fewer than two queries (diversity of one query is
    undefined, not 0 or 1)."""
    mean = subquery_similarity(queries, similarity)
    return None if mean is None else 1.0 - mean


def jaccard(first: Iterable[str], second: Iterable[str]) -> float | None:
    """|A ∩ B| / |A ∪ B|; None for two empty sets (nothing to compare)."""
    a, b = set(first), set(second)
    if not a and not b:
        return None
    return len(a & b) / len(a | b)


class StepOverlap(BaseModel):
    """Step ``iteration``'s documents against the previous step's and against all earlier
    steps' together (None: both sets empty)."""

    model_config = ConfigDict(frozen=True)

    iteration: int
    with_previous: float | None
    with_cumulative: float | None


def overlap_by_iteration(retrieved: Sequence[Sequence[str]]) -> list[StepOverlap]:
    """For t = 2..n: J(D_t, D_{t-1}) and J(D_t, D_1 ∪ ... ∪ D_{t-1}) (A.7, Fig. 6b)."""
    rows = []
    cumulative: set[str] = set(retrieved[0]) if retrieved else set()
    for t in range(1, len(retrieved)):
        rows.append(
            StepOverlap(
                iteration=t + 1,
                with_previous=jaccard(retrieved[t], retrieved[t - 1]),
                with_cumulative=jaccard(retrieved[t], cumulative),
            )
        )
        cumulative |= set(retrieved[t])
    return rows


def document_overlap(retrieved: Sequence[Sequence[str]]) -> float | None:
    """Mean Jaccard of consecutive steps' retrieved sets (§5.3, Fig. 4a); None with fewer than
    two steps or when every pair was of two empty sets."""
    values = [r.with_previous for r in overlap_by_iteration(retrieved)]
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def new_document_share(retrieved: Sequence[Sequence[str]]) -> float | None:
    """The share of retrieved documents that were new when retrieved (not the paper's).

    With D_t the documents step t retrieved (duplicates within a step counted once),
    share = |D_1 ∪ ... ∪ D_n| / (|D_1| + ... + |D_n|), which equals the mean over all retrieved
    documents of "was not retrieved by an earlier step". 1.0: every step brought only new
    documents; 1/n: all n steps retrieved the same ones. None when nothing was retrieved.
    Steps that retrieved nothing add nothing to either side.
    """
    steps = [set(ids) for ids in retrieved]
    total = sum(len(s) for s in steps)
    if total == 0:
        return None
    return len(set().union(*steps)) / total


def max_subquery_recall(
    retrieved: Sequence[Sequence[str]],
    passages: Mapping[str, str],
    golden_answers: Sequence[str],
    depth: int = RECALL_DEPTH,
) -> float | None:
    """A.5's maximum sub-query Recall@``depth``: 1.0 when some sub-query's top ``depth``
    documents include one containing a gold answer, else 0.0 (each sub-query's Recall@k is that
    hit, the max is over sub-queries). ``passages``: doc id -> "title text"; a document it
    lacks counts as containing nothing. None without a gold answer."""
    golds = gold_aliases(golden_answers)
    if not golds:
        return None
    return max(
        (
            1.0 if any(answer_in_passage(golds, passages.get(d, "")) for d in ids[:depth]) else 0.0
            for ids in retrieved
        ),
        default=0.0,
    )


def qrels_subquery_recall(
    retrieved: Sequence[Sequence[str]], relevant: Iterable[str], depth: int = RECALL_DEPTH
) -> float | None:
    """max over steps of |top-``depth`` ∩ relevant| / |relevant| with judged documents (not
    the paper's A.5, which counts answer-containing documents); None without judgements.

    A question whose steps retrieved nothing scores 0.0 (it had judgements and found none).
    """
    relevant_set = set(relevant)
    if not relevant_set:
        return None
    return max(
        (len(set(ids[:depth]) & relevant_set) / len(relevant_set) for ids in retrieved),
        default=0.0,
    )


class QuestionDiagnostics(BaseModel):
    """One question's analyses; None where the analysis does not apply to it."""

    model_config = ConfigDict(frozen=True)

    id: str
    sub_queries: int
    subquery_similarity: float | None
    diversity: float | None
    document_overlap: float | None
    document_overlap_by_iteration: list[StepOverlap]
    new_document_share: float | None
    dig: float | None
    answer_confidence_with_knowledge: float | None
    answer_confidence_without_knowledge: float | None
    max_subquery_recall_at_5: float | None
    qrels_subquery_recall_at_5: float | None
    cover_em_by_iteration: list[float] | None
    step_cap_reached: bool
    evidence_scale: float
    gists: int | None
    seconds: float


FIG6_ROUNDS = 4
"""A.7 plots Fig. 6 over "questions that require four rounds of iterative retrieval": the
questions whose run took exactly this many retrieval steps (SEEK: one a gist; Iter-RetGen:
one a round)."""


class DocumentOverlapRow(BaseModel):
    """One point of Fig. 6b: the mean overlaps at step ``iteration`` (means over the
    ``questions`` that ran it, each over those where it is defined)."""

    model_config = ConfigDict(frozen=True)

    iteration: int
    questions: int
    with_previous: float | None
    with_cumulative: float | None


def _mean(values: Iterable[float | int | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return statistics.fmean(present) if present else None


def _round(value: float | None, ndigits: int = 4) -> float | None:
    return None if value is None else round(value, ndigits)


class SeekDiagnostics(BaseModel):
    """The run's analyses: means over the questions each applies to (None when none does)."""

    model_config = ConfigDict(frozen=True)

    questions: int = Field(description="answered questions analysed (failed ones excluded)")
    failed: int
    subquery_similarity: float | None
    subquery_diversity: float | None
    subquery_similarity_measure: str = Field(description="the `SubQuerySimilarity` used")
    diversity_questions: int
    document_overlap: float | None
    document_overlap_questions: int
    document_overlap_by_iteration: list[DocumentOverlapRow] = Field(
        description="Fig. 6b over all answered questions (the second, labelled line)"
    )
    fig6_rounds: int = Field(
        default=FIG6_ROUNDS, description="the rounds of A.7's population (the paper's 4)"
    )
    fig6_questions: int = Field(
        default=0, description="answered questions that took exactly fig6_rounds retrieval steps"
    )
    document_overlap_by_iteration_fig6: list[DocumentOverlapRow] = Field(
        default_factory=list,
        description="Fig. 6b as the paper reports it: over the fig6_questions only",
    )
    new_document_share: float | None
    dig: float | None
    dig_questions: int = Field(description="questions with gold answers and knowledge scored")
    dig_unavailable: str | None = Field(
        default=None, description="why DIG is None for the whole run (the LLM cannot score text)"
    )
    dig_parameters: DigParameters | None = Field(
        default=None,
        description="W, k, alpha, omega of Eq. 14-15 DIG was computed with (None: not computed)",
    )
    max_subquery_recall_at_5: float | None
    max_subquery_recall_questions: int
    max_subquery_recall_unavailable: str | None = None
    qrels_subquery_recall_at_5: float | None
    qrels_recall_questions: int
    performance_by_iteration: list[IterationPerformance] | None = Field(
        default=None,
        description="Fig. 6a over all answered questions (the second, labelled line); None: "
        "not computed (it costs LLM calls)",
    )
    performance_by_iteration_fig6: list[IterationPerformance] | None = Field(
        default=None,
        description="Fig. 6a as the paper reports it: over the fig6_questions only; None: not "
        "computed",
    )
    performance_by_iteration_cost: AnalysisCost | None = None
    performance_by_iteration_unavailable: str | None = None
    slot_ablation: SlotAblation | None = Field(
        default=None, description="Fig. 4b; None: not computed or no seed sketch"
    )
    slot_ablation_unavailable: str | None = None
    step_cap_reached: int = Field(description="questions stopped at their variant's step cap")
    evidence_shortened: int = Field(
        default=0,
        description="questions answered with shorter evidence because a prompt did not fit the "
        "model's context (evidence_scale < 1): not comparable with full-length runs",
    )
    subqueries_per_question: float | None
    gists_per_question: float | None
    gist_counts: dict[int, int] = Field(description="gist count -> questions with that many")
    seconds_per_question: float | None
    seconds_per_question_p50: float | None
    amortised_seconds_per_question: float | None
    cost: LLMCost | None = Field(
        default=None,
        description="the method's LLM calls, prompt and completion tokens and rounds, per "
        "question over every question run, failed ones included (sira_seek.metrics.llm_cost)",
    )
    knowledge_split: KnowledgeSplit | None = Field(
        default=None,
        description="SEEK Table 3: the method's scores on the knowledge conflict (closed-book "
        "correct) and utilization (closed-book wrong) questions; None: no closed-book answers",
    )
    knowledge_judge: KnowledgeJudgement | None = Field(
        default=None,
        description="SEEK §5.4: the judge's mean 0-5 ratings of the knowledge context; None: "
        "no --judge-llm",
    )
    per_question: list[QuestionDiagnostics]

    def as_report(self) -> dict[str, object]:
        """The ``diagnostics`` object of ``eval qa --json``: figures rounded to 4 digits,
        counts exact, per-question rows included."""
        data = self.model_dump(mode="json")
        for key, value in data.items():
            if isinstance(value, float):
                data[key] = round(value, 4)
        data["gist_counts"] = {str(k): v for k, v in sorted(self.gist_counts.items())}
        return data


def diagnose_question(
    trace: QuestionTrace,
    relevant: Iterable[str] | None = None,
    similarity: SubQuerySimilarity = TOKEN_JACCARD,
    gain: AnswerGain | None = None,
    passages: Mapping[str, str] | None = None,
) -> QuestionDiagnostics:
    """Every analysis for one answered question (``relevant``: its judged document ids;
    ``gain``: its scored DIG, see `InformationGains`; ``passages``: doc id -> text of what it
    retrieved, for A.5's Recall)."""
    retrieved = [s.retrieved_ids for s in trace.steps]
    queries = sub_queries(trace)
    similar = subquery_similarity(queries, similarity)
    by_iteration = trace.answers_by_iteration
    return QuestionDiagnostics(
        id=trace.id,
        sub_queries=len(queries),
        subquery_similarity=similar,
        diversity=None if similar is None else 1.0 - similar,
        document_overlap=document_overlap(retrieved),
        document_overlap_by_iteration=overlap_by_iteration(retrieved),
        new_document_share=new_document_share(retrieved),
        dig=None if gain is None else gain.dig,
        answer_confidence_with_knowledge=None if gain is None else gain.with_knowledge,
        answer_confidence_without_knowledge=None if gain is None else gain.without_knowledge,
        max_subquery_recall_at_5=(
            None
            if passages is None
            else max_subquery_recall(retrieved, passages, trace.golden_answers)
        ),
        qrels_subquery_recall_at_5=(
            None if relevant is None else qrels_subquery_recall(retrieved, relevant)
        ),
        cover_em_by_iteration=(
            [cover_em(a, trace.golden_answers) for a in by_iteration]
            if by_iteration and trace.golden_answers
            else None
        ),
        step_cap_reached=trace.step_cap_reached,
        evidence_scale=trace.evidence_scale,
        gists=trace.gists,
        seconds=trace.seconds,
    )


def _overlap_rows(rows: Sequence[QuestionDiagnostics]) -> list[DocumentOverlapRow]:
    by_step: dict[int, list[StepOverlap]] = {}
    for row in rows:
        for point in row.document_overlap_by_iteration:
            by_step.setdefault(point.iteration, []).append(point)
    return [
        DocumentOverlapRow(
            iteration=t,
            questions=len(points),
            with_previous=_round(_mean(p.with_previous for p in points)),
            with_cumulative=_round(_mean(p.with_cumulative for p in points)),
        )
        for t, points in sorted(by_step.items())
    ]


def _per_iteration(
    answered: Sequence[QuestionTrace], cost: AnalysisCost | None
) -> tuple[list[IterationPerformance] | None, str | None]:
    if cost is None:
        return None, "not computed (the answers after each iteration were not asked for)"
    rows = performance_by_iteration(answered)
    if not rows:
        return rows, (
            "no question has answers by iteration with a gold answer (a method that does not "
            "iterate, or results resumed from a checkpoint written without them)"
        )
    return rows, None


def _slot_ablation(
    answered: Sequence[QuestionTrace], cost: AnalysisCost | None, seed_slots: int | None
) -> tuple[SlotAblation | None, str | None]:
    if cost is None:
        return None, "not computed (the answers with slots removed were not asked for)"
    found = slot_ablation(answered, seed_slots=seed_slots)
    if found is None:
        return None, "no completed sketch with a gold answer to ablate"
    return found.model_copy(update={"cost": cost}), None


def _diagnose_answered(
    answered: Sequence[QuestionTrace],
    qrels: Mapping[str, Mapping[str, int]] | None,
    similarity: SubQuerySimilarity,
    gains: InformationGains | None,
    passages: Mapping[str, str] | None,
) -> list[QuestionDiagnostics]:
    """One row per answered question, each given only its own judgements and DIG, so a
    question the qrels or gains do not cover reports None rather than a borrowed figure."""
    rows: list[QuestionDiagnostics] = []
    for trace in answered:
        judged = None if qrels is None else qrels.get(trace.id)
        relevant = None if judged is None else [d for d, g in judged.items() if g > 0]
        gain = None if gains is None else gains.by_id.get(trace.id)
        rows.append(diagnose_question(trace, relevant or None, similarity, gain, passages))
    return rows


def _fig6(
    answered: Sequence[QuestionTrace],
    rows: Sequence[QuestionDiagnostics],
    cost: AnalysisCost | None,
) -> tuple[int, list[DocumentOverlapRow], list[IterationPerformance] | None]:
    """Fig. 6's subset (questions that ran exactly ``FIG6_ROUNDS`` rounds): its size, overlap
    by iteration and performance curve (None when the per-iteration answers were not asked
    for), since a curve over mixed round counts is not the paper's figure."""
    fig6 = [t for t in answered if len(t.steps) == FIG6_ROUNDS]
    fig6_ids = {t.id for t in fig6}
    curve = None if cost is None else performance_by_iteration(fig6)
    return len(fig6), _overlap_rows([r for r in rows if r.id in fig6_ids]), curve


def seek_diagnostics(
    traces: Sequence[QuestionTrace],
    qrels: Mapping[str, Mapping[str, int]] | None = None,
    *,
    passages: Mapping[str, str] | None = None,
    wall_s: float | None = None,
    run_questions: int | None = None,
    similarity: SubQuerySimilarity = TOKEN_JACCARD,
    gains: InformationGains | None = None,
    per_iteration_cost: AnalysisCost | None = None,
    slot_ablation_cost: AnalysisCost | None = None,
    seed_slots: int | None = None,
) -> SeekDiagnostics:
    """The analyses over a run's questions (one trace each).

    ``passages`` (doc id -> "title text" of the retrieved documents) enables A.5's maximum
    sub-query Recall@5; ``qrels`` (qid -> doc id -> grade; grade > 0 is relevant) the judged
    version for the questions it judges. ``gains`` (the DIG of the same questions) supplies
    DIG. ``per_iteration_cost`` / ``slot_ablation_cost``: the cost of the answers the traces
    carry for those analyses (None: not computed, reported as such); ``seed_slots`` picks the slot
    ablation's seed sketches (default: the most common slot count). ``wall_s``, the wall time
    of a batch that ran ``run_questions`` questions (default: all traces; questions resumed
    from a checkpoint took no time in it), gives the amortised seconds per question.
    """
    answered = [t for t in traces if t.ok]
    rows = _diagnose_answered(answered, qrels, similarity, gains, passages)
    seconds = [r.seconds for r in rows]
    ran = len(traces) if run_questions is None else run_questions
    gist_counts = Counter(r.gists for r in rows if r.gists is not None)
    curve, curve_missing = _per_iteration(answered, per_iteration_cost)
    fig6, fig6_overlap, fig6_curve = _fig6(answered, rows, per_iteration_cost)
    ablation, ablation_missing = _slot_ablation(answered, slot_ablation_cost, seed_slots)
    return SeekDiagnostics(
        questions=len(rows),
        failed=len(traces) - len(answered),
        subquery_similarity=_round(_mean(r.subquery_similarity for r in rows)),
        subquery_diversity=_round(_mean(r.diversity for r in rows)),
        subquery_similarity_measure=similarity.name,
        diversity_questions=sum(1 for r in rows if r.diversity is not None),
        document_overlap=_round(_mean(r.document_overlap for r in rows)),
        document_overlap_questions=sum(1 for r in rows if r.document_overlap is not None),
        document_overlap_by_iteration=_overlap_rows(rows),
        fig6_questions=fig6,
        document_overlap_by_iteration_fig6=fig6_overlap,
        new_document_share=_round(_mean(r.new_document_share for r in rows)),
        dig=_round(_mean(r.dig for r in rows)),
        dig_questions=sum(1 for r in rows if r.dig is not None),
        dig_unavailable=(
            "not computed (pass the run's information_gains)"
            if gains is None
            else gains.unavailable
        ),
        dig_parameters=None if gains is None else gains.parameters,
        max_subquery_recall_at_5=_round(_mean(r.max_subquery_recall_at_5 for r in rows)),
        max_subquery_recall_questions=sum(
            1 for r in rows if r.max_subquery_recall_at_5 is not None
        ),
        max_subquery_recall_unavailable=(
            "not computed (pass the retrieved passages' texts)" if passages is None else None
        ),
        qrels_subquery_recall_at_5=_round(_mean(r.qrels_subquery_recall_at_5 for r in rows)),
        qrels_recall_questions=sum(1 for r in rows if r.qrels_subquery_recall_at_5 is not None),
        performance_by_iteration=curve,
        performance_by_iteration_fig6=fig6_curve,
        performance_by_iteration_cost=per_iteration_cost,
        performance_by_iteration_unavailable=curve_missing,
        slot_ablation=ablation,
        slot_ablation_unavailable=ablation_missing,
        step_cap_reached=sum(1 for r in rows if r.step_cap_reached),
        evidence_shortened=sum(1 for r in rows if r.evidence_scale < 1),
        subqueries_per_question=_round(_mean(r.sub_queries for r in rows)),
        gists_per_question=_round(_mean(r.gists for r in rows)),
        gist_counts=dict(sorted(gist_counts.items())),
        seconds_per_question=_round(_mean(seconds)),
        seconds_per_question_p50=_round(statistics.median(seconds) if seconds else None),
        amortised_seconds_per_question=_round(wall_s / ran if wall_s is not None and ran else None),
        cost=llm_cost(t.cost for t in traces),
        per_question=rows,
    )
