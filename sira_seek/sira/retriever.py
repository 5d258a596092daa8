"""SIRA end to end: expand, ground in the index's own statistics, run one weighted BM25 query.

The engine sees exactly two kinds of request per query: the DF check (one batched
term-statistics request while the index holds no deleted document, with the index's counts
reused for ``df_stats_max_age`` seconds; a live count beside it otherwise) and one search (plus
one ``_msearch`` for categories when the LLM proposed some).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from sira_seek.backend import SearchBackend, SearchResult
from sira_seek.fields import TEXT, TITLE
from sira_seek.input_errors import InputError
from sira_seek.llm.pending import PendingRequests
from sira_seek.workflows.methods import method_spec

from .categories import CategoryDecision, CategoryGrounder
from .df_check import CandidateTable, DocFrequencyChecker
from .expansions import Expansion, GeneratedText, QueryExpander, QueryInput
from .index_profile import IndexProfile, read_index_profile
from .keyword_parsing import clean_phrases
from .rerank import LLMReranker, unusable_note
from .results import SearchTimings, SiraHit, SiraResult
from .settings import SiraSettings
from .weighted_query import (
    GENERATED_NAME,
    ORIGINAL_NAME,
    CategoryClause,
    DerivedParts,
    WeightedQuery,
)

if TYPE_CHECKING:
    from sira_seek.embed import Embedder

    from .dense import VectorStage

logger = logging.getLogger(__name__)


class _Staged(NamedTuple):
    """One query between grounding and the batched search."""

    input: QueryInput
    text: str
    notes: list[str]
    expansion: Expansion
    table: CandidateTable
    categories: list[CategoryDecision]
    query: WeightedQuery
    timings: SearchTimings


class EmptyQueryError(InputError):
    """The query has no text to search for."""


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


class SiraRetriever:
    """Search one index with SIRA. Build once, search many times (the profile is read once)."""

    def __init__(
        self,
        backend: SearchBackend,
        index: str,
        *,
        settings: SiraSettings | None = None,
        expander: QueryExpander | None = None,
        profile: IndexProfile | None = None,
        source: list[str] | bool = False,
        reranker: LLMReranker | None = None,
        stop_when_llm_down: bool = True,
        method: str | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        # ``embedder``: a caller-owned query embedder for the vector methods (a server's, loaded
        # once), never closed here; None: the retriever makes (and closes) its own from
        # ``settings.embedder``.
        # ``stop_when_llm_down`` is the rerank's side of the policy for a failing LLM (the
        # expander's is ``expansions.FailurePolicy``): False keeps the BM25 order instead.
        self.stop_when_llm_down = stop_when_llm_down
        self.backend = backend
        self.index = index
        self.settings = settings or SiraSettings()
        self.expander = expander
        mode = method_spec(method).vectors if method is not None else "none"
        # dense sends no BM25 query, so it needs none of SIRA's layout (an index made by
        # sira-sync migrate or any other tool, given vectors by sira-sync --embed): a bare
        # profile stands in, never compiled into a request.
        self.profile = profile or (
            IndexProfile(index=index, shingle_field=None)
            if mode == "only"
            else read_index_profile(backend, index)
        )
        # The rerank depth is the setting's; a reranker with depth 0 is not used.
        self.reranker = reranker if self.settings.rerank_top_n > 0 else None
        if self.reranker is not None:
            # the reader needs the passages; ranking is unaffected by what _source returns
            source = [TITLE, TEXT]
        self.source = source
        # dense, hybrid, sira-hybrid (``methods``): the kNN side, checked against the index's
        # recorded embedder here, before any query runs.
        self.vectors: VectorStage | None = None
        if mode != "none":
            from .dense import VectorStage

            self.vectors = VectorStage(
                backend,
                index,
                mode=mode,
                num_candidates=self.settings.num_candidates,
                spec=self.settings.embedder,
                embedder=embedder,
            )
        # Index-wide term statistics, so the ranking does not depend on the shard layout (and the
        # Dev Tools request says so: pasted into Kibana it scores as here); per-clause scores in
        # `matched_queries` where the engine can (a URL parameter on both).
        caps = backend.capabilities()
        self.params = {"search_type": "dfs_query_then_fetch"}
        if caps.named_queries_score:
            self.params["include_named_queries_score"] = "true"
        self.checker = DocFrequencyChecker(
            backend,
            self.profile,
            tau=self.settings.tau,
            max_candidates=self.settings.max_candidates,
            max_kept=self.settings.max_kept,
            max_phrase_words=self.settings.max_phrase_words,
            drop_query_copies=self.settings.drop_query_copies,
            keep_rule=self.settings.keep_rule,
            stats_max_age_s=self.settings.df_stats_max_age,
        )

    # -- compile ---------------------------------------------------------------------------
    def _prepare(self, text: str) -> tuple[str, list[str]]:
        flat = " ".join(text.split())
        if not flat:
            raise EmptyQueryError("the query is empty: give some words to search for")
        words = flat.split(" ")
        if len(words) > self.settings.max_query_words:
            return " ".join(words[: self.settings.max_query_words]), [
                f"query cut from {len(words)} to {self.settings.max_query_words} words "
                "(SIRA_SEEK_SIRA_MAX_QUERY_WORDS)"
            ]
        return flat, []

    def generated_words(self, text: str, generated: GeneratedText) -> tuple[str, list[str]]:
        """A generation baseline's text cut so that the query and it stay within
        ``max_query_words`` together (the budget a typed query has, which keeps the compiled
        query under the engines' clause limits), and a note when it was cut."""
        budget = self.settings.max_query_words - len(text.split())
        words = generated.text.split()
        if len(words) <= budget:
            return " ".join(words), []
        kept = " ".join(words[: max(budget, 0)])
        return kept, [
            f"{generated.method} text cut from {len(words)} to {max(budget, 0)} words: the "
            f"query and it stay within {self.settings.max_query_words} words "
            "(SIRA_SEEK_SIRA_MAX_QUERY_WORDS)"
        ]

    def compile(
        self,
        text: str,
        table: CandidateTable,
        categories: Sequence[CategoryDecision] = (),
        generated: GeneratedText | None = None,
    ) -> WeightedQuery:
        """The weighted query for an already-prepared text and its candidate table, and a
        generation baseline's text (already cut by ``generated_words``) when there is one."""
        p = self.profile
        original = p.text_clause(ORIGINAL_NAME, text, ngrams=self.settings.original_ngrams)
        expansion = [
            p.text_clause(
                f"sira_expansion:{cand.phrase}",
                cand.phrase,
                ngrams=self.settings.ngram_tier and cand.has_known_ngrams(),
            )
            for cand in table.kept
        ]
        cats = [
            CategoryClause(name=f"sira_category:{c.use}", field=p.category_field, value=c.use)
            for c in categories
            if c.use is not None and p.category_field is not None
        ]
        extra = (
            p.text_clause(f"{GENERATED_NAME}:{generated.method}", generated.text)
            if generated is not None and generated.text
            else None
        )
        return WeightedQuery(
            original=original,
            expansion=expansion,
            generated=extra,
            weight=self.settings.weight,
            categories=cats,
            category_weight=self.settings.category_weight,
            size=self._lexical_size(),
            source=self.source,
            # Where the engine reports named-query scores, the original query's and the
            # groups' parts are derived from the clauses' (``DerivedParts``): cheaper to run.
            group_names="include_named_queries_score" not in self.params,
        )

    def _fetch_size(self) -> int:
        """How many hits the engine returns: the rerank depth when it is deeper than ``size``.

        ``--rerank 20 --size 10`` must let the reader model see 20 candidates (it can promote the
        11th to 20th); only then is the list cut back to ``size``.
        """
        if self.reranker is None:
            return self.settings.size
        return max(self.settings.size, self.settings.rerank_top_n)

    def _lexical_size(self) -> int:
        """How deep the BM25 / SIRA ranking goes: a fused one as deep as ``FUSION_DEPTH``."""
        if self.vectors is not None and self.vectors.mode == "fused":
            from .dense import FUSION_DEPTH

            return max(self._fetch_size(), FUSION_DEPTH)
        return self._fetch_size()

    def _with_vectors(
        self,
        texts: Sequence[str],
        lexical: Sequence[SearchResult | None],
        wqs: Sequence[WeightedQuery],
    ) -> tuple[list[SearchResult], list[dict[str, Any]], float]:
        """The kNN side of ``dense`` / ``hybrid`` / ``sira-hybrid``: kNN alone, or fused with
        the lexical results by RRF; the bodies to report and the kNN's ms per query."""
        from .dense import fused_body, rrf, source_fields

        assert self.vectors is not None
        size = self._fetch_size()
        depth = self._lexical_size()
        knn, ms = self.vectors.knn(texts, k=depth, source=source_fields(self.source))
        if self.vectors.mode == "only":
            return knn, [self.vectors.body(depth) for _ in texts], ms
        found: list[SearchResult] = []
        for lex, dense in zip(lexical, knn, strict=True):
            assert lex is not None
            hits = rrf([lex.hits, dense.hits], size=size)
            total = max(lex.total, len(dense.hits))
            found.append(SearchResult(hits=hits, total=total, took_ms=lex.took_ms + dense.took_ms))
        bodies = [fused_body(wq.to_dict(), self.vectors.body(depth), depth) for wq in wqs]
        return found, bodies, ms

    def _vector_result(self, result: SiraResult, body: dict[str, Any]) -> SiraResult:
        """A dense or fused result: the body that ran, no per-clause BM25 parts (a fused or
        kNN score is not a sum of them)."""
        hits = [h.model_copy(update={"matched_queries": None}) for h in result.hits]
        fused = self.vectors is not None and self.vectors.mode == "fused"
        params = dict(self.params) if fused else {}
        # dense sends no BM25 query: the expansion stage's "plain BM25" says nothing here
        notes = result.notes if fused else [n for n in result.notes if "plain BM25" not in n]
        update = {"hits": hits, "body": body, "params": params, "notes": notes}
        return result.model_copy(update=update)

    # -- stages ----------------------------------------------------------------------------
    def _expand(
        self, queries: list[QueryInput], on_progress: Callable[[int], None] | None = None
    ) -> tuple[list[Expansion], float]:
        started = time.perf_counter()
        if self.expander is None:
            if on_progress is not None and queries:
                on_progress(len(queries))
            return [
                Expansion(source="none", note="no LLM or expansions given: plain BM25")
                for _ in queries
            ], 0.0
        wants_categories = self.profile.category_field is not None
        found = self.expander.expand_many(
            queries, categories=wants_categories, on_progress=on_progress
        )
        return found, _ms(started) / max(1, len(queries))

    def _generated(
        self, text: str, expansion: Expansion, notes: list[str]
    ) -> GeneratedText | None:
        """The expansion's generated text as the query will use it (cut to the word budget,
        the cut noted in ``notes``); None for phrase expansions."""
        if expansion.generated is None:
            return None
        kept, cut = self.generated_words(text, expansion.generated)
        notes.extend(cut)
        return GeneratedText(method=expansion.generated.method, text=kept)

    def _ground(
        self, text: str, expansion: Expansion, timings: SearchTimings
    ) -> tuple[CandidateTable, list[CategoryDecision]]:
        phrases = clean_phrases(expansion.phrases)
        table = self.checker.check(phrases, query=text)
        timings.df_check_ms = table.took_ms
        decisions: list[CategoryDecision] = []
        if expansion.categories and self.profile.category_field is not None:
            started = time.perf_counter()
            grounder = CategoryGrounder(
                self.backend,
                self.index,
                self.profile.category_field,
                use_close=self.settings.use_close_categories,
            )
            decisions = grounder.ground(clean_phrases(expansion.categories))
            timings.categories_ms = _ms(started)
        return table, decisions

    def _result(
        self,
        query: QueryInput,
        text: str,
        notes: list[str],
        expansion: Expansion,
        table: CandidateTable,
        categories: list[CategoryDecision],
        wq: WeightedQuery,
        found: SearchResult,
        timings: SearchTimings,
    ) -> SiraResult:
        body = wq.to_dict()
        derived = None if wq.group_names else DerivedParts.of(body["query"])
        hits = [
            SiraHit(
                id=h.id,
                score=h.score,
                bm25_rank=rank,
                title=(h.source or {}).get("title") if h.source else None,
                matched_queries=(
                    h.matched_queries
                    if derived is None
                    else derived.complete(h.matched_queries, h.score)
                ),
            )
            for rank, h in enumerate(found.hits, start=1)
        ]
        all_notes = [*notes, *([expansion.note] if expansion.note else [])]
        llm_calls = [expansion.llm_call] if expansion.llm_call else []
        if self.reranker is not None and hits:
            docs = {
                h.id: (str((h.source or {}).get(TITLE, "")), str((h.source or {}).get(TEXT, "")))
                for h in found.hits
            }
            depth = self.settings.rerank_top_n
            hits, calls, timings.rerank_ms = self.reranker.rerank(
                text, hits, docs, top_n=depth, stop_when_down=self.stop_when_llm_down
            )
            hits = hits[: self.settings.size]
            llm_calls += calls
            all_notes.append(
                f"LLM rerank of the top {depth} by relevance to the query: the engine order "
                f"(bm25_rank) differs from the returned order, cut back to {self.settings.size} "
                "hits"
            )
            unusable = unusable_note(calls)
            if unusable is not None:
                all_notes.append(unusable)
        return SiraResult(
            index=self.index,
            query=text,
            query_id=query.id,
            hits=hits,
            total=found.total,
            body=body,
            plain_bm25=wq.is_plain_bm25,
            expansion=expansion,
            candidates=table,
            categories=categories,
            timings=timings,
            llm_calls=llm_calls,
            notes=all_notes,
        )

    # -- public ----------------------------------------------------------------------------
    def search(
        self,
        text: str,
        *,
        query_id: str | None = None,
        phrases: Sequence[str] | None = None,
        categories: Sequence[str] = (),
        phrase_source: Literal["given", "precomputed"] = "given",
    ) -> SiraResult:
        """Search one query; ``phrases`` (and ``categories``) bypass the expander.

        ``phrase_source`` labels them: ``given`` by an agent at search time, ``precomputed``
        when the caller brings phrases computed beforehand (the HTTP API's ``expansions``).
        """
        prepared, notes = self._prepare(text)
        query = QueryInput(text=prepared, id=query_id)
        timings = SearchTimings()
        if phrases is not None or categories:
            expansion = Expansion(
                phrases=list(phrases or []), categories=list(categories), source=phrase_source
            )
        else:
            (expansion,), timings.expansion_ms = self._expand([query])
        table, decisions = self._ground(prepared, expansion, timings)
        wq = self.compile(prepared, table, decisions, self._generated(prepared, expansion, notes))
        started = time.perf_counter()
        lexical: SearchResult | None = None
        if self.vectors is None or self.vectors.mode == "fused":
            lexical = self.backend.search(self.index, wq.to_dict(), params=self.params or None)
        body: dict[str, Any] | None = None
        if self.vectors is not None:
            (found,), (body,), _ = self._with_vectors([prepared], [lexical], [wq])
        else:
            assert lexical is not None
            found = lexical
        timings.search_ms = _ms(started)
        result = self._result(
            query, prepared, notes, expansion, table, decisions, wq, found, timings
        )
        if body is not None:
            return self._vector_result(result, body)
        logger.debug(
            "SIRA %r on %s: %d of %d candidate phrases kept (%s), %d hits, engine %.1f ms",
            prepared,
            self.index,
            len(table.kept),
            len(table.candidates),
            ", ".join(c.phrase for c in table.kept) or "plain BM25",
            len(result.hits),
            timings.engine_ms,
        )
        return result.model_copy(update={"params": dict(self.params)})

    def search_many(
        self,
        queries: Sequence[QueryInput],
        *,
        batch: int = 50,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[SiraResult]:
        """Many queries: LLM calls batched, one DF check per query, searches via ``_msearch``.

        ``search_ms`` is the batch's wall time shared equally by its queries.
        ``on_progress(n)`` reports ``n`` more queries expanded, once per query in total: the
        LLM calls are what takes minutes (seconds each on a CPU model); grounding and search
        that follow take milliseconds per query.
        """
        prepared = [self._prepare(q.text) for q in queries]
        inputs = [QueryInput(text=t, id=q.id) for (t, _), q in zip(prepared, queries, strict=True)]
        expansions, per_query_llm_ms = self._expand(inputs, on_progress)
        staged: list[_Staged] = []
        for query, (text, notes), expansion in zip(inputs, prepared, expansions, strict=True):
            timings = SearchTimings(expansion_ms=per_query_llm_ms)
            table, decisions = self._ground(text, expansion, timings)
            wq = self.compile(text, table, decisions, self._generated(text, expansion, notes))
            staged.append(_Staged(query, text, notes, expansion, table, decisions, wq, timings))
        results: list[SiraResult] = []
        waiting = PendingRequests()  # offline batch rounds: every query's rerank in one round
        for start in range(0, len(staged), batch):
            part = staged[start : start + batch]
            started = time.perf_counter()
            found: list[SearchResult] = []
            if self.vectors is None or self.vectors.mode == "fused":
                found = self.backend.msearch(self.index, [s.query.to_dict() for s in part])
            bodies: list[dict[str, Any]] | None = None
            if self.vectors is not None:
                lexical: list[SearchResult | None] = list(found) or [None] * len(part)
                found, bodies, _ = self._with_vectors(
                    [s.text for s in part], lexical, [s.query for s in part]
                )
            share = _ms(started) / len(part)
            for i, (s, res) in enumerate(zip(part, found, strict=True)):
                s.timings.search_ms = share
                with waiting.collect():
                    results.append(
                        self._result(
                            s.input,
                            s.text,
                            s.notes,
                            s.expansion,
                            s.table,
                            s.categories,
                            s.query,
                            res,
                            s.timings,
                        )
                    )
                    if bodies is not None:
                        results[-1] = self._vector_result(results[-1], bodies[i])
        waiting.raise_if_any()
        return results

    def close(self) -> None:
        if self.vectors is not None:
            self.vectors.close()
        if self.expander is not None:
            self.expander.close()
        if self.reranker is not None:
            self.reranker.close()
