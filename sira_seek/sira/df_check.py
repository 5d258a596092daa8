"""The corpus decides which predicted phrases survive: document-frequency grounding.

A phrase the index has never seen cannot match anything, and one that is in most documents
cannot discriminate; both only add noise to the weighted query. A phrase is kept when some
window of it (an analysed unigram, or a bigram from the shingle subfield) has
0 < DF <= tau * |C|. DF of a window is summed over the source and enrichment fields: an upper
bound of the union, exact when enrichment is empty.

That is the reference's rule (``any_window``): "Danube bridges" survives on a rare "danube"
even when the two words never stand together anywhere. ``phrase_occurs`` is the stricter reading
(the phrase itself must occur): every window, each word and each adjacent pair (the shingle
tier), must occur in the index, and the rarest must be rare enough. Pairs stand in for the phrase,
exact for phrases of one or two words; for longer ones each pair must occur, not necessarily in
one document (a per-phrase ``match_phrase`` count would cost a round trip per phrase).
benchmarks/sira_query_variants.py compares the two; the default is the measured winner.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field

from sira_seek.backend import SearchBackend
from sira_seek.input_errors import InputError

from .index_profile import IndexProfile
from .settings import DEFAULT_DF_STATS_MAX_AGE, KeepRule
from .term_vectors import DfRoute, TextFieldTerms, grounding_term_statistics

Tier = Literal["unigram", "ngram"]
Decision = Literal["kept", "absent", "too_common", "no_terms", "too_long", "in_query", "over_limit"]


class TooManyCandidatesError(InputError):
    """More candidate phrases than ``max_candidates`` for one query."""


class WindowStat(BaseModel):
    """One analysed window of a phrase and its document frequency."""

    window: str
    tier: Tier
    doc_freq: int


class CandidateDecision(BaseModel):
    """Why one candidate phrase was kept or dropped."""

    phrase: str
    decision: Decision
    reason: str
    doc_freq: int | None = Field(
        default=None, description="DF of the deciding window (rarest seen, else the most common)."
    )
    windows: list[WindowStat] = Field(default_factory=list)

    @property
    def kept(self) -> bool:
        return self.decision == "kept"

    def has_known_ngrams(self) -> bool:
        """Some bigram of the phrase occurs in the index, so the shingle tier can score it."""
        return any(w.tier == "ngram" and w.doc_freq > 0 for w in self.windows)


class CandidateTable(BaseModel):
    """Every candidate of one query with its DF and decision."""

    candidates: list[CandidateDecision] = Field(default_factory=list)
    doc_count: int = 0
    tau: float
    max_doc_freq: float = Field(description="tau * |C|: the highest DF a kept window may have.")
    round_trips: int = 0
    df_route: DfRoute = Field(
        default="live_counts",
        description="How the DFs were read: term_statistics (one request: analysis and every "
        "shard's docFreq, the index holding no deleted document), "
        "term_statistics+live_counts (deleted documents: the terms left open counted live), "
        "live_counts (analysis, then a live count).",
    )
    took_ms: float = 0.0

    @property
    def kept(self) -> list[CandidateDecision]:
        return [c for c in self.candidates if c.kept]

    def kept_phrases(self) -> list[str]:
        return [c.phrase for c in self.kept]


def _windows(entry: TextFieldTerms, profile: IndexProfile) -> list[WindowStat]:
    """Windows with DF summed over the fields of the same tier."""
    tiers: tuple[tuple[Tier, list[str]], ...] = (
        ("unigram", profile.unigram_fields()),
        ("ngram", profile.shingle_fields()),
    )
    out: list[WindowStat] = []
    for tier, fields in tiers:
        df: dict[str, int] = {}
        for field in fields:
            for stat in entry.fields.get(field, []):
                df[stat.term] = df.get(stat.term, 0) + stat.doc_freq
        # Validated construction: with pydantic 2.14, 1.2 us a window against 2.6 us for
        # model_construct (which this used to be), ~100 windows per query
        out += [WindowStat(window=t, tier=tier, doc_freq=d) for t, d in df.items()]
    return out


def decide(
    phrase: str,
    windows: list[WindowStat],
    max_doc_freq: float,
    doc_count: int,
    *,
    rule: KeepRule = "any_window",
) -> CandidateDecision:
    """Apply the keep rule to one phrase's windows."""
    if not windows:
        return CandidateDecision(
            phrase=phrase, decision="no_terms", reason="the analyzer keeps no term (stopwords?)"
        )
    seen = [w for w in windows if w.doc_freq > 0]
    if not seen:
        return CandidateDecision(
            phrase=phrase,
            decision="absent",
            reason="no window occurs in the index",
            doc_freq=0,
            windows=windows,
        )
    missing = [w for w in windows if w.doc_freq == 0]
    if rule == "phrase_occurs" and missing:
        return CandidateDecision(
            phrase=phrase,
            decision="absent",
            reason=f"{missing[0].tier} {missing[0].window!r} never occurs: the phrase is not "
            "in the index (keep rule phrase_occurs)",
            doc_freq=0,
            windows=windows,
        )
    rarest = min(seen, key=lambda w: w.doc_freq)
    if rarest.doc_freq <= max_doc_freq:
        return CandidateDecision(
            phrase=phrase,
            decision="kept",
            doc_freq=rarest.doc_freq,
            windows=windows,
            reason=f"{rarest.tier} {rarest.window!r} in {rarest.doc_freq} of {doc_count} docs "
            f"(<= {max_doc_freq:g})",
        )
    return CandidateDecision(
        phrase=phrase,
        decision="too_common",
        doc_freq=rarest.doc_freq,
        windows=windows,
        reason=f"rarest window {rarest.window!r} in {rarest.doc_freq} of {doc_count} docs "
        f"(> {max_doc_freq:g})",
    )


class DocFrequencyChecker:
    """Grounds candidate phrases in one index with one batched term-statistics request.

    The DFs are exact: read in one request while the index's counts (at most
    ``stats_max_age_s`` old) say no copy holds a deleted document, with a live count of the
    terms left open otherwise (``grounding_term_statistics``, where the staleness is stated).
    """

    def __init__(
        self,
        backend: SearchBackend,
        profile: IndexProfile,
        *,
        tau: float,
        max_candidates: int = 1000,
        max_kept: int = 32,
        max_phrase_words: int = 8,
        drop_query_copies: bool = True,
        keep_rule: KeepRule = "any_window",
        stats_max_age_s: float = DEFAULT_DF_STATS_MAX_AGE,
    ) -> None:
        self.backend = backend
        self.profile = profile
        self.tau = tau
        self.max_candidates = max_candidates
        self.max_kept = max_kept
        self.max_phrase_words = max_phrase_words
        self.drop_query_copies = drop_query_copies
        self.keep_rule: KeepRule = keep_rule
        self.stats_max_age_s = stats_max_age_s

    def check(self, phrases: list[str], query: str | None = None) -> CandidateTable:
        """The candidate table for ``phrases`` (already de-duplicated, in model order).

        With ``query`` (analysed in the same request), a phrase whose every term is already in
        the query is dropped as ``in_query``: it adds no evidence vocabulary, it only re-weights
        the query, which is how a weak model's copied entities hurt the ranking.
        """
        if len(phrases) > self.max_candidates:
            raise TooManyCandidatesError(
                f"{len(phrases)} candidate phrases exceed max_candidates={self.max_candidates}; "
                "pass fewer phrases or raise SIRA_SEEK_SIRA_MAX_CANDIDATES"
            )
        started = time.perf_counter()
        too_long = {p for p in phrases if len(p.split()) > self.max_phrase_words}
        to_check = [p for p in phrases if p not in too_long]
        with_query = query is not None and self.drop_query_copies and bool(to_check)
        texts = [*to_check, query] if with_query and query is not None else to_check
        stats = grounding_term_statistics(
            self.backend,
            self.profile.index,
            self.profile.df_fields(),
            texts,
            max_age_s=self.stats_max_age_s,
        )
        by_phrase = {e.text: e for e in stats.texts}
        query_terms = (
            {w.window for w in _windows(stats.texts[-1], self.profile) if w.tier == "unigram"}
            if with_query
            else set()
        )
        max_df = self.tau * stats.doc_count
        decisions: list[CandidateDecision] = []
        kept = 0
        for phrase in phrases:
            if phrase in too_long:
                decisions.append(
                    CandidateDecision(
                        phrase=phrase,
                        decision="too_long",
                        reason=f"more than {self.max_phrase_words} words",
                    )
                )
                continue
            windows = _windows(by_phrase[phrase], self.profile)
            decision = decide(phrase, windows, max_df, stats.doc_count, rule=self.keep_rule)
            unigrams = {w.window for w in windows if w.tier == "unigram"}
            if decision.kept and query_terms and unigrams <= query_terms:
                decision = decision.model_copy(
                    update={"decision": "in_query", "reason": "adds no term the query lacks"}
                )
            if decision.kept:
                kept += 1
                if kept > self.max_kept:
                    decision = decision.model_copy(
                        update={
                            "decision": "over_limit",
                            "reason": f"already {self.max_kept} kept phrases ({decision.reason})",
                        }
                    )
            decisions.append(decision)
        return CandidateTable(
            candidates=decisions,
            doc_count=stats.doc_count,
            tau=self.tau,
            max_doc_freq=max_df,
            round_trips=stats.round_trips,
            df_route=stats.route,
            took_ms=(time.perf_counter() - started) * 1000,
        )
