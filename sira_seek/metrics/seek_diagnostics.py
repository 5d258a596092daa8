"""The SEEK paper's analyses, computed from plain per-question traces (`QuestionTrace`).

The SEEK paper (arXiv 2601.09402) argues with more than answer scores: its sketches lead to
more diverse sub-queries and less redundant retrieval, at a cost in gists and time per
question. These are those analyses, so a run here can be compared with its claims:

* **sub-query diversity** -- per question, 1 minus the mean similarity over every pair of its
  (non-empty) sub-queries; the run's figure is the mean over questions with at least two.
  Similarity is pluggable (`PairSimilarity`); the default is the Jaccard similarity of the
  sub-queries' normalised token sets (`qa.normalize_answer`), because no embedding
  model ships with sira-seek. The project notes (``../shared/design/llm.md``) suggest
  all-MiniLM-L6-v2 embeddings for this: pass a cosine similarity over them to get that
  reading. Neither the notes nor the reference code give the paper's exact formula.
* **DIG** (Document Information Gain) -- how much the knowledge O a method answered from
  raised the model's confidence in the gold answer, p(y | q, O) - p(y | q), each confidence
  by the SEEK paper's Eq. 14-15 (window smoothing, first-k weighting); defined in
  `sira_seek.metrics.information_gain` and scored for a SEEK run by
  `sira_seek.seek.information_gain` (it needs the LLM's token log-probabilities, so the
  caller passes the gains in). The report echoes W, k, alpha and omega (`dig_parameters`).
* **new-document share** -- the redundancy analysis the SEEK paper argues with ("reduces
  redundant retrieval"): the share of retrieved documents that were new when retrieved
  (`new_document_share`). Before DIG was computed this stood in for it under its name.
* **best sub-query Recall@5** -- per question with judgements, the best Recall@5 any single
  sub-query's retrieval reached (|top-5 ∩ relevant| / |relevant|); mean over those questions.
* **gists per question** -- the sketch's gist count (methods without a sketch are left out),
  with its distribution (the paper plots how many gists each model chose).
* **seconds per question** -- each question's wall time (`Timings.total_s`). In a batch,
  questions overlap, so the amortised figure (run wall time / questions) is reported too.

Failed questions (``ok`` false) are left out of every analysis and counted in ``failed``.

A trace is plain data: any method that records its sub-queries and what each retrieved can be
analysed. A SEEK run's results give theirs with `SeekResult.trace()`.
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from .information_gain import AnswerGain, DigParameters, InformationGains
from .qa import normalize_answer

RECALL_DEPTH = 5
"""SEEK retrieves the top 5 per sub-query; best sub-query Recall is taken at that depth."""


class PairSimilarity(Protocol):
    """Similarity of two sub-queries in [0, 1] (1 = the same intent)."""

    def __call__(self, first: str, second: str) -> float: ...


def token_jaccard(first: str, second: str) -> float:
    """|A ∩ B| / |A ∪ B| of the two texts' normalised token sets; two empty sets give 1.0."""
    a, b = set(normalize_answer(first).split()), set(normalize_answer(second).split())
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class StepTrace(BaseModel):
    """One retrieval step: the sub-query sent and the document ids it got, in rank order."""

    model_config = ConfigDict(frozen=True)

    sub_query: str
    retrieved_ids: list[str] = Field(default_factory=list)


class QuestionTrace(BaseModel):
    """What the analyses read of one question's run."""

    model_config = ConfigDict(frozen=True)

    id: str
    ok: bool = Field(default=True, description="False: the question failed (left out)")
    steps: list[StepTrace] = Field(default_factory=list)
    gists: int | None = Field(default=None, description="the sketch's gists; None: no sketch")
    seconds: float = Field(default=0.0, description="the question's wall time")


def sub_queries(trace: QuestionTrace) -> list[str]:
    """The question's sub-queries in step order, blanks dropped (a malformed step that left no
    text says nothing about intent)."""
    return [s.sub_query.strip() for s in trace.steps if s.sub_query.strip()]


def subquery_diversity(
    queries: Sequence[str], similarity: PairSimilarity = token_jaccard
) -> float | None:
    """1 - mean pairwise similarity over every unordered pair; None with fewer than two
    queries (diversity of one query is undefined, not 0 or 1)."""
    pairs = list(itertools.combinations(queries, 2))
    if not pairs:
        return None
    return 1.0 - statistics.fmean(similarity(a, b) for a, b in pairs)


def new_document_share(retrieved: Sequence[Sequence[str]]) -> float | None:
    """The share of retrieved documents that were new when retrieved (retrieval redundancy).

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


def best_subquery_recall(
    retrieved: Sequence[Sequence[str]], relevant: Iterable[str], depth: int = RECALL_DEPTH
) -> float | None:
    """max over steps of |top-``depth`` ∩ relevant| / |relevant|; None without judgements.

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
    diversity: float | None
    new_document_share: float | None
    dig: float | None
    answer_confidence_with_knowledge: float | None
    answer_confidence_without_knowledge: float | None
    best_subquery_recall_at_5: float | None
    gists: int | None
    seconds: float


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
    subquery_diversity: float | None
    diversity_questions: int
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
    best_subquery_recall_at_5: float | None
    recall_questions: int
    subqueries_per_question: float | None
    gists_per_question: float | None
    gist_counts: dict[int, int] = Field(description="gist count -> questions with that many")
    seconds_per_question: float | None
    seconds_per_question_p50: float | None
    amortised_seconds_per_question: float | None
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
    similarity: PairSimilarity = token_jaccard,
    gain: AnswerGain | None = None,
) -> QuestionDiagnostics:
    """Every analysis for one answered question (``relevant``: its judged document ids;
    ``gain``: its scored DIG, see `InformationGains`)."""
    retrieved = [s.retrieved_ids for s in trace.steps]
    queries = sub_queries(trace)
    return QuestionDiagnostics(
        id=trace.id,
        sub_queries=len(queries),
        diversity=subquery_diversity(queries, similarity),
        new_document_share=new_document_share(retrieved),
        dig=None if gain is None else gain.dig,
        answer_confidence_with_knowledge=None if gain is None else gain.with_knowledge,
        answer_confidence_without_knowledge=None if gain is None else gain.without_knowledge,
        best_subquery_recall_at_5=(
            None if relevant is None else best_subquery_recall(retrieved, relevant)
        ),
        gists=trace.gists,
        seconds=trace.seconds,
    )


def seek_diagnostics(
    traces: Sequence[QuestionTrace],
    qrels: Mapping[str, Mapping[str, int]] | None = None,
    *,
    wall_s: float | None = None,
    run_questions: int | None = None,
    similarity: PairSimilarity = token_jaccard,
    gains: InformationGains | None = None,
) -> SeekDiagnostics:
    """The analyses over a run's questions (one trace each).

    ``gains`` (the DIG of the same questions) supplies it; without it DIG is None
    and ``dig_unavailable`` says it was not computed.

    ``qrels`` (qid -> doc id -> grade; grade > 0 is relevant) enables best sub-query Recall@5
    for the questions it judges; ``wall_s``, the wall time of a batch that ran
    ``run_questions`` questions (default: all traces; questions resumed from a checkpoint
    took no time in it), gives the amortised seconds per question.
    """
    answered = [t for t in traces if t.ok]
    rows: list[QuestionDiagnostics] = []
    for trace in answered:
        judged = None if qrels is None else qrels.get(trace.id)
        relevant = None if judged is None else [d for d, g in judged.items() if g > 0]
        gain = None if gains is None else gains.by_id.get(trace.id)
        rows.append(diagnose_question(trace, relevant or None, similarity, gain))
    seconds = [r.seconds for r in rows]
    ran = len(traces) if run_questions is None else run_questions
    gist_counts = Counter(r.gists for r in rows if r.gists is not None)
    return SeekDiagnostics(
        questions=len(rows),
        failed=len(traces) - len(answered),
        subquery_diversity=_round(_mean(r.diversity for r in rows)),
        diversity_questions=sum(1 for r in rows if r.diversity is not None),
        new_document_share=_round(_mean(r.new_document_share for r in rows)),
        dig=_round(_mean(r.dig for r in rows)),
        dig_questions=sum(1 for r in rows if r.dig is not None),
        dig_unavailable=(
            "not computed (pass the run's information_gains)"
            if gains is None
            else gains.unavailable
        ),
        dig_parameters=None if gains is None else gains.parameters,
        best_subquery_recall_at_5=_round(_mean(r.best_subquery_recall_at_5 for r in rows)),
        recall_questions=sum(1 for r in rows if r.best_subquery_recall_at_5 is not None),
        subqueries_per_question=_round(_mean(r.sub_queries for r in rows)),
        gists_per_question=_round(_mean(r.gists for r in rows)),
        gist_counts=dict(sorted(gist_counts.items())),
        seconds_per_question=_round(_mean(seconds)),
        seconds_per_question_p50=_round(statistics.median(seconds) if seconds else None),
        amortised_seconds_per_question=_round(wall_s / ran if wall_s is not None and ran else None),
        per_question=rows,
    )
