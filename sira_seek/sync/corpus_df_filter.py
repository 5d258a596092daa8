"""The document-side DF filter: drop proposed phrases the raw corpus already has everywhere.

On this side DF 0 is allowed (enrichment exists to bring vocabulary the corpus lacks); a phrase
is dropped only when it is too common to discriminate: DF > tau * |C|. DF is measured on the raw
(source) fields only, never on enrichment, so the decision for a document does not depend on
which other documents were enriched first: a resumed run and an uninterrupted run agree.

A phrase's DF is bounded by its rarest window (analysed unigram, or bigram from the shingle
subfield); the phrase is dropped when even that window is too common. Exact for one- and
two-word phrases.

At most two round trips per page, whatever its size: ``_mtermvectors`` analyses every phrase
into its windows with their term-statistics DF; then one search counts live documents (a
``filters`` aggregation) for the windows of phrases that still look too common. Term statistics
alone are not enough: they count deleted documents until segments merge, and every enrichment
write leaves a deleted copy behind, so they drift upward while the run itself writes, and a
resumed run would filter differently from an uninterrupted one. They are an upper bound of the
live DF on a one-shard index, though, so a phrase whose rarest window is already rare enough by
term statistics is kept without the second call; the decision is the live-DF decision either
way. Backends without a generic ``request`` fall back to term statistics alone.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, Field

from sira_seek.backend import SearchBackend
from sira_seek.fields import SUBFIELD_PARENT
from sira_seek.sira.term_vectors import batch_term_statistics

from .mapping import EnrichmentLayout


def _set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    node = doc
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


WINDOWS_PER_SEARCH = 2000
PHRASES_PER_PACK = 1000  # keeps one _analyze under index.analyze.max_token_count (10,000)
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
            windows_of |= self._packed_windows(chunk) or self._windows_one_doc_each(chunk)

        def rarest(windows: dict[tuple[str, str], int]) -> int:
            # A window's DF summed over the fields of its tier (an upper bound of the union).
            tiers: dict[str, int] = {}
            for (field, term), df in windows.items():
                tier = f"{'u' if field in unigram else 'n'}:{term}"
                tiers[tier] = tiers.get(tier, 0) + df
            return min(tiers.values())

        doubtful = {
            p: ws
            for p, ws in windows_of.items()
            if any(f in unigram for f, _ in ws) and rarest(ws) > self.max_df
        }
        live = self._live_doc_freqs({w for ws in doubtful.values() for w in ws})
        for phrase, windows in windows_of.items():
            if not any(field in unigram for field, _ in windows):
                out[phrase] = PhraseVerdict(phrase=phrase, kept=False, reason="no_terms")
                continue
            if phrase in doubtful and live:
                windows = {w: live.get(w, df) for w, df in windows.items()}
            df = rarest(windows)
            kept = df <= self.max_df
            out[phrase] = PhraseVerdict(
                phrase=phrase, kept=kept, doc_freq=df, reason=None if kept else "too_common"
            )
        return out

    def _windows_one_doc_each(self, phrases: list[str]) -> dict[str, dict[tuple[str, str], int]]:
        """Each phrase as its own artificial document: one ``_mtermvectors`` round trip."""
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

    def _packed_windows(self, phrases: list[str]) -> dict[str, dict[tuple[str, str], int]] | None:
        """The same answer for less engine work: ``_analyze`` splits every phrase into windows
        (one call per field, tokens attributed to phrases by offset), and ONE artificial
        document holding all phrases as array values gives every window's DF. None when the
        backend or the offsets do not allow it; the caller then sends one document each."""
        request = getattr(self.backend, "request", None)
        if not callable(request) or not phrases:
            return None
        fields = [*self.layout.df_unigram_fields, *self.layout.df_shingle_fields]
        index = quote(self.layout.index)
        spans: list[tuple[int, int]] = []
        offset = 0
        for phrase in phrases:  # engines count offsets in UTF-16 units, one unit between values
            length = len(phrase.encode("utf-16-le")) // 2
            spans.append((offset, offset + length))
            offset += length + 1
        starts = [a for a, _ in spans]
        windows_of: dict[str, dict[tuple[str, str], int]] = {p: {} for p in phrases}
        try:
            for field in fields:
                raw = request("POST", f"/{index}/_analyze", body={"field": field, "text": phrases})
                for token in raw.get("tokens", []):
                    i = bisect_right(starts, int(token["start_offset"])) - 1
                    if i < 0 or int(token["end_offset"]) > spans[i][1]:
                        return None
                    windows_of[phrases[i]][(field, token["token"])] = 0
            doc: dict[str, Any] = {}
            for field in fields:
                _set_path(doc, SUBFIELD_PARENT.get(field, field), phrases)
            body = {
                "doc": doc,
                "fields": fields,
                "term_statistics": True,
                "field_statistics": False,
                "positions": False,
                "offsets": False,
                "payloads": False,
            }
            vectors = request("POST", f"/{index}/_termvectors", body=body).get("term_vectors", {})
        except Exception:
            return None  # e.g. a token limit on _analyze: the one-doc-each path still works
        self.round_trips += len(fields) + 1
        for windows in windows_of.values():
            for field, term in windows:
                stats = vectors.get(field, {}).get("terms", {}).get(term)
                if stats is None:
                    return None  # analysis disagreed: do not guess
                windows[(field, term)] = int(stats.get("doc_freq", 0))
        return windows_of

    def _live_doc_freqs(self, windows: set[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """Live-document DF of each (field, term) window; {} when only term stats are there."""
        request = getattr(self.backend, "request", None)
        if not callable(request) or not windows:
            return {}
        ordered = sorted(windows)
        out: dict[tuple[str, str], int] = {}
        for start in range(0, len(ordered), WINDOWS_PER_SEARCH):
            chunk = ordered[start : start + WINDOWS_PER_SEARCH]
            filters = {f"w{i}": {"term": {field: term}} for i, (field, term) in enumerate(chunk)}
            body: dict[str, Any] = {
                "size": 0,
                "track_total_hits": False,
                "aggs": {"df": {"filters": {"filters": filters}}},
            }
            raw = request("POST", f"/{quote(self.layout.index)}/_search", body=body)
            self.round_trips += 1
            buckets = raw.get("aggregations", {}).get("df", {}).get("buckets", {})
            for i, window in enumerate(chunk):
                out[window] = int(buckets.get(f"w{i}", {}).get("doc_count", 0))
        return out
