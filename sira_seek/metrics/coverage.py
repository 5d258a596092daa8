"""Answer coverage@k: how often the gold answer is in what a reader would be shown.

The SIRA paper (arXiv 2605.06647, Fig. 3) reports answer coverage at 5 and 10 passages beside
the relevance metrics, because multi-hop QA data judge only a few "supporting" paragraphs while
the answer is often stated elsewhere too; coverage measures what a QA reader actually receives.

Definition used here (the paper gives the idea, not a string-matching rule, so these are our
choices, each stated):

* a question is *covered at k* when some gold answer (any alias) occurs in one of its top-k
  passages; coverage@k is the fraction of covered questions;
* "occurs" means the alias's normalised tokens appear as one contiguous run of the passage's
  normalised tokens, both normalised by `qa.normalize_answer`, the SAME normaliser as
  Cover-EM/EM/F1 (so "O’Neal" in a passage covers the alias "O'Neal", and "The Beatles" is
  found in "... the beatles' ..."). Whole tokens only: "1989" is not found in "19890";
* a passage is its title and text joined ("title text"), what SEEK's prompts show a reader;
* an alias that normalises to nothing ("The", "?") never counts as found: the empty token
  run would occur in every passage (Cover-EM's quirk of matching it to an empty prediction
  has no meaning for a passage);
* questions without any gold answer are left out of the denominator and counted apart
  (``no_gold``), as `qa.score_predictions` does; so are questions the run does not
  hold;
* yes/no questions (HotpotQA comparisons, gold ``yes`` or ``no``) are counted like any other:
  the paper's coverage is "the fraction of queries for which its retrieved documents contain
  verifiable answer evidence", with "the gold answer string" appearing in the retrieved text,
  and it names no exception. Such a gold is matched as the whole token ``yes`` / ``no``, which
  a passage rarely holds as the answer and sometimes holds by chance ("no" more often, and
  the more passages the likelier): read coverage on a set with many comparison questions with
  that in mind.

One definition for every caller: ``eval retrieval --qa`` (``sira_seek.workflows.evaluate``
fetches a run's top-k texts from the index and passes them here) and ``eval agentic``
(``sira_seek.agent.evaluation``, over the pages of the agent's stream) both decide with
``gold_aliases`` and ``first_covering_rank``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from sira_seek.fields import TEXT, TITLE

from .qa import normalize_answer

logger = logging.getLogger(__name__)

COVERAGE_CUTOFFS: tuple[int, ...] = (5, 10)
"""The cut-offs the SIRA paper plots (Fig. 3)."""


def coverage_key(k: int) -> str:
    """The report key of one cut-off, spelled like the retrieval measures (``coverage@5``)."""
    return f"coverage@{k}"


def _padded(text: str) -> str:
    # Spaces on both sides turn "contains this token run" into a substring test.
    return f" {normalize_answer(text)} "


def gold_aliases(golden_answers: Iterable[str | None]) -> list[str]:
    """The aliases a question is scored on: every given one, yes/no included (None dropped).
    Empty means the question has no gold answer and is left out of coverage."""
    return [alias for alias in golden_answers if alias is not None]


def answer_in_passage(golden_answers: Sequence[str], passage: str) -> bool:
    """True when some alias's normalised tokens occur contiguously in the passage's."""
    haystack = _padded(passage)
    for alias in golden_answers:
        needle = normalize_answer(alias)
        if needle and f" {needle} " in haystack:
            return True
    return False


def first_covering_rank(golden_answers: Sequence[str], passages: Sequence[str]) -> int | None:
    """1-based rank of the first passage holding an answer, or None when none does.

    Covered at k  <=>  the rank is <= k; one scan serves every cut-off.
    """
    for rank, passage in enumerate(passages, start=1):
        if answer_in_passage(golden_answers, passage):
            return rank
    return None


class AnswerCoverage(BaseModel):
    """Coverage at each cut-off over the scored questions, and the rank behind each verdict."""

    model_config = ConfigDict(frozen=True)

    coverage: dict[int, float]
    questions: int
    no_gold: int = 0
    first_rank: dict[str, int | None]
    """qid -> 1-based rank of the first answer-bearing passage (None: not in the passages)."""

    def as_metrics(self, ndigits: int = 4) -> dict[str, float]:
        """``{"coverage@5": ..., "coverage@10": ...}``, rounded like the retrieval metrics."""
        return {coverage_key(k): round(v, ndigits) for k, v in self.coverage.items()}


def answer_coverage(
    ranked_passages: Mapping[str, Sequence[str]],
    answers: Mapping[str, Sequence[str]],
    ks: Sequence[int] = COVERAGE_CUTOFFS,
) -> AnswerCoverage:
    """Coverage@k for every k over the questions that are in ``ranked_passages`` (qid ->
    passages in rank order) and have gold answers in ``answers`` (qid -> aliases).

    Zero questions gives 0.0 at every k (and ``questions == 0``), never NaN.
    """
    if any(k < 1 for k in ks):
        raise ValueError(f"coverage cut-offs must be >= 1, got {list(ks)}")
    first_rank: dict[str, int | None] = {}
    no_gold = 0
    for qid, passages in ranked_passages.items():
        golds = gold_aliases(answers.get(qid, ()))
        if not golds:
            no_gold += 1
            continue
        first_rank[qid] = first_covering_rank(golds, passages[: max(ks, default=0)])
    n = len(first_rank)
    coverage = {
        k: (sum(1 for r in first_rank.values() if r is not None and r <= k) / n if n else 0.0)
        for k in ks
    }
    if no_gold:
        logger.warning("%d question(s) without a gold answer left out of coverage", no_gold)
    return AnswerCoverage(coverage=coverage, questions=n, no_gold=no_gold, first_rank=first_rank)


def passage_text(source: Mapping[str, object] | None) -> str:
    """The passage a reader sees: title and text joined (either may be missing)."""
    source = source or {}
    parts = [str(source.get(f) or "") for f in (TITLE, TEXT)]
    return " ".join(p for p in parts if p)
