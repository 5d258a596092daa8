"""The document-side DF filter: drop proposed phrases the raw corpus already has everywhere.

On this side DF 0 is allowed (enrichment exists to bring vocabulary the corpus lacks); a phrase
is dropped only when it is too common to discriminate: DF > tau * |C|. DF is measured on the raw
(source) fields only, never on enrichment, so the decision for a document does not depend on
which other documents were enriched first: a resumed run and an uninterrupted run agree.

A phrase's DF is bounded by its rarest window (analysed unigram, or bigram from the shingle
subfield); the phrase is dropped when even that window is too common. Exact for one- and
two-word phrases.

Two round trips per pack of phrases, whatever the index's size or shard count: the fields'
analyzers split every phrase into windows, then one search counts each window's LIVE
documents over every shard (``SearchBackend.live_doc_freqs``). Lucene term statistics are not
used: they are per shard and count the deleted copies every enrichment write leaves behind,
so they would drift while the run itself writes, and a resumed run would filter differently
from an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from sira_seek.backend import SearchBackend
from sira_seek.sira.term_vectors import batch_term_statistics

from .mapping import EnrichmentLayout

PHRASES_PER_PACK = 1000  # artificial documents per analysis request
MEMO_LIMIT = 200_000

DropReason = Literal["too_common", "no_terms", "too_long"]


class PhraseVerdict(BaseModel):
    phrase: str
    kept: bool
    doc_freq: int | None = Field(default=None, description="DF of the rarest window.")
    reason: DropReason | None = None


class CorpusDFFilter:
    """Keeps phrases whose rarest window has DF <= tau * |C| on the raw corpus."""

    def __init__(
        self,
        backend: SearchBackend,
        layout: EnrichmentLayout,
        *,
        tau: float,
        doc_count: int,
        max_phrase_words: int = 8,
    ) -> None:
        self.backend = backend
        self.layout = layout
        self.tau = tau
        self.doc_count = doc_count
        self.max_df = tau * doc_count
        self.max_phrase_words = max_phrase_words
        self.round_trips = 0
        self._memo: dict[str, PhraseVerdict] = {}

    def verdicts(self, phrases: Sequence[str]) -> dict[str, PhraseVerdict]:
        """A verdict for every distinct phrase; phrases seen earlier in the run are memoised
        (raw-corpus DF does not move while the run writes only enrichment fields)."""
        if len(self._memo) > MEMO_LIMIT:
            self._memo.clear()
        out: dict[str, PhraseVerdict] = {}
        fresh = self._check([p for p in dict.fromkeys(phrases) if p not in self._memo])
        self._memo.update(fresh)
        for phrase in phrases:
            out[phrase] = self._memo[phrase]
        return out

    def _check(self, unique: list[str]) -> dict[str, PhraseVerdict]:
        out: dict[str, PhraseVerdict] = {}
        to_check = []
        for phrase in unique:
            if len(phrase.split()) > self.max_phrase_words:
                out[phrase] = PhraseVerdict(phrase=phrase, kept=False, reason="too_long")
            else:
                to_check.append(phrase)
        if not to_check:
            return out
        unigram = self.layout.df_unigram_fields
        windows_of: dict[str, dict[tuple[str, str], int]] = {}
        for start in range(0, len(to_check), PHRASES_PER_PACK):
            chunk = to_check[start : start + PHRASES_PER_PACK]
            windows_of |= self._windows(chunk)

        def rarest(windows: dict[tuple[str, str], int]) -> int:
            # A window's DF summed over the fields of its tier (an upper bound of the union).
            tiers: dict[str, int] = {}
            for (field, term), df in windows.items():
                tier = f"{'u' if field in unigram else 'n'}:{term}"
                tiers[tier] = tiers.get(tier, 0) + df
            return min(tiers.values())

        for phrase, windows in windows_of.items():
            if not any(field in unigram for field, _ in windows):
                out[phrase] = PhraseVerdict(phrase=phrase, kept=False, reason="no_terms")
                continue
            df = rarest(windows)
            kept = df <= self.max_df
            out[phrase] = PhraseVerdict(
                phrase=phrase, kept=kept, doc_freq=df, reason=None if kept else "too_common"
            )
        return out

    def _windows(self, phrases: list[str]) -> dict[str, dict[tuple[str, str], int]]:
        """Every phrase's (field, term) windows with their live DF."""
        fields = [*self.layout.df_unigram_fields, *self.layout.df_shingle_fields]
        stats = batch_term_statistics(self.backend, self.layout.index, fields, phrases)
        self.round_trips += stats.round_trips
        return {
            entry.text: {
                (field, term.term): term.doc_freq
                for field in fields
                for term in entry.fields.get(field, [])
            }
            for entry in stats.texts
        }
