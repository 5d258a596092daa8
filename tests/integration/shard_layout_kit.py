"""What the shard-layout tests compare: candidate tables and top scores, as plain data."""

from __future__ import annotations

from sira_seek.sira.results import SiraResult

STRONG = "expansions-hotpotqa.strong-llm.jsonl"

CandidateRow = tuple[str, str, int | None, tuple[tuple[str, str, int], ...]]


def candidate_rows(results: list[SiraResult]) -> list[list[CandidateRow]]:
    """Per question: every phrase, its decision, its deciding DF and every window's DF."""
    return [
        [
            (
                c.phrase,
                c.decision,
                c.doc_freq,
                tuple(sorted((w.tier, w.window, w.doc_freq) for w in c.windows)),
            )
            for c in r.candidates.candidates
        ]
        for r in results
    ]


def top_scores(results: list[SiraResult], k: int = 10) -> list[float]:
    """Top-k scores of every question, flattened (ties may swap ids, never scores)."""
    return [h.score for r in results for h in r.hits[:k]]
