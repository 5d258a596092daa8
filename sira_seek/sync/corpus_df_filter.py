"""The document-side DF filter: drop proposed phrases the raw corpus already has everywhere.

On this side DF 0 is allowed (enrichment exists to bring vocabulary the corpus lacks); a phrase
is dropped only when it is too common to discriminate: DF > tau * |C|. DF is measured on the raw
(source) fields only, never on enrichment, so the decision for a document does not depend on
which other documents were enriched first: a resumed run and an uninterrupted run agree.

A phrase's DF is bounded by its rarest window (analysed unigram, or bigram from the shingle
subfield); the phrase is dropped when even that window is too common. Exact for one- and
two-word phrases.

Every decision is the one exact live counts give (DF over LIVE documents of every shard;
deleted copies never count), at the cost of counting only what needs counting:

1. per pack of phrases, the fields' analyzers make every phrase's windows and one
   ``_mtermvectors`` request reads each window's Lucene ``docFreq`` on every shard
   (``sira.df_bounds.term_doc_freq_bounds``).
   That sum counts the deleted copies every enrichment write leaves behind, so it is an UPPER
   bound of the live DF: a phrase whose rarest window is within tau * |C| even by the bounds
   is kept, exactly as the live count would keep it;
2. only the remaining phrases (a bound above tau * |C|: common words) get their windows counted
   over live documents (``SearchBackend.live_doc_freqs``, one size-0 search), and are kept or
   dropped on those exact counts.

A phrase kept on the bound reports ``doc_freq_at_most`` (the bound), not a ``doc_freq``: only
counted numbers are reported as DF. Where the engine cannot give per-shard bounds (an alias over
several indexes, partitioned routing), every window is counted, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import BaseModel, Field

from sira_seek.backend import SearchBackend, TermDocFreqBounds
from sira_seek.sira.df_bounds import term_doc_freq_bounds
from sira_seek.sira.term_vectors import batch_term_statistics

from .mapping import EnrichmentLayout

PHRASES_PER_PACK = 1000  # phrases per analysis and statistics request (per shard)
# Packs of one page in flight at once: an engine answers one request on one search thread per
# shard, so a second request in flight uses a second core (measured: benchmarks/sync_apply.py).
PACKS_IN_FLIGHT = 2
MEMO_LIMIT = 200_000

DropReason = Literal["too_common", "no_terms", "too_long"]
PerField = dict[str, dict[str, int]]
"""One phrase's windows: field -> analysed term -> its DF (a bound, or a live count)."""


class PhraseVerdict(BaseModel):
    phrase: str
    kept: bool
    doc_freq: int | None = Field(
        default=None, description="Live DF of the rarest window, when it was counted."
    )
    doc_freq_at_most: int | None = Field(
        default=None,
        description="When the phrase was kept on an upper bound instead: that bound of the "
        "rarest window's live DF (Lucene docFreq with deleted copies, over every shard).",
    )
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
        self._unigram = frozenset(layout.df_unigram_fields)

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

    def _rarest(self, windows: PerField) -> int:
        """A window's DF summed over the fields of its tier (an upper bound of the union), and
        the smallest of those sums."""
        unigram = self._unigram
        tiers: dict[tuple[bool, str], int] = {}
        for field, terms in windows.items():
            is_unigram = field in unigram
            for term, df in terms.items():
                tier = (is_unigram, term)
                tiers[tier] = tiers.get(tier, 0) + df
        return min(tiers.values())

    def _has_terms(self, windows: PerField) -> bool:
        """Whether the analysers left the phrase any unigram window (else: ``no_terms``)."""
        return any(map(windows.get, self._unigram))

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
        bounds_of: dict[str, PerField] = {}
        counted: dict[str, PerField] = {}
        packs = [
            to_check[start : start + PHRASES_PER_PACK]
            for start in range(0, len(to_check), PHRASES_PER_PACK)
        ]
        for pack, bounds in zip(packs, self._bounds_of_packs(packs), strict=True):
            if bounds is None:
                counted |= self._windows(pack)
            else:
                bounds_of |= bounds
        undecided: dict[str, PerField] = {}
        for phrase, windows in bounds_of.items():
            if not self._has_terms(windows):
                out[phrase] = PhraseVerdict(phrase=phrase, kept=False, reason="no_terms")
                continue
            at_most = self._rarest(windows)
            if at_most <= self.max_df:
                out[phrase] = PhraseVerdict(phrase=phrase, kept=True, doc_freq_at_most=at_most)
            else:
                undecided[phrase] = windows
        live = self._live_counts(undecided)
        for phrase, windows in undecided.items():
            # A window bounded by 0 is in no document at all: it needs no count.
            counted[phrase] = {
                field: {term: live[(field, term)] if bound else 0 for term, bound in terms.items()}
                for field, terms in windows.items()
            }
        for phrase, windows in counted.items():
            if not self._has_terms(windows):
                out[phrase] = PhraseVerdict(phrase=phrase, kept=False, reason="no_terms")
                continue
            df = self._rarest(windows)
            kept = df <= self.max_df
            out[phrase] = PhraseVerdict(
                phrase=phrase, kept=kept, doc_freq=df, reason=None if kept else "too_common"
            )
        return out

    def _fields(self) -> list[str]:
        return [*self.layout.df_unigram_fields, *self.layout.df_shingle_fields]

    def _bounds_of_packs(self, packs: list[list[str]]) -> list[dict[str, PerField] | None]:
        """Every pack's phrases with their windows (field -> term) and an upper bound of each
        window's live DF (None for a pack the engine gives no bounds for), up to
        ``PACKS_IN_FLIGHT`` requests at once."""
        fields = self._fields()

        def request(pack: list[str]) -> TermDocFreqBounds | None:
            return term_doc_freq_bounds(self.backend, self.layout.index, fields, pack)

        if len(packs) > 1 and PACKS_IN_FLIGHT > 1:
            with ThreadPoolExecutor(min(PACKS_IN_FLIGHT, len(packs))) as pool:
                answers = list(pool.map(request, packs))
        else:
            answers = [request(pack) for pack in packs]
        out: list[dict[str, PerField] | None] = []
        for pack, bounds in zip(packs, answers, strict=True):
            if bounds is None:
                out.append(None)
                continue
            self.round_trips += bounds.round_trips
            out.append(dict(zip(pack, bounds.texts, strict=True)))
        return out

    def _live_counts(self, undecided: dict[str, PerField]) -> dict[tuple[str, str], int]:
        """Live DF of every window the bounds left open, in one counting search."""
        wanted = list(
            dict.fromkeys(
                (field, term)
                for windows in undecided.values()
                for field, terms in windows.items()
                for term, bound in terms.items()
                if bound
            )
        )
        if not wanted:
            return {}
        live = self.backend.live_doc_freqs(self.layout.index, wanted)
        self.round_trips += live.round_trips
        return live.as_dict()

    def _windows(self, phrases: list[str]) -> dict[str, PerField]:
        """Every phrase's windows (field -> term) with their live DF."""
        fields = self._fields()
        stats = batch_term_statistics(self.backend, self.layout.index, fields, phrases)
        self.round_trips += stats.round_trips
        return {
            entry.text: {
                field: {term.term: term.doc_freq for term in entry.fields.get(field, [])}
                for field in fields
            }
            for entry in stats.texts
        }
