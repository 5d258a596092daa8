"""The Python entry point: ``sira_seek.connect()`` and the ``SiraSeek`` facade over one cluster.

The command line and this facade call the same library functions (``ingest_corpus``,
``SiraRetriever``, the SEEK session, ``SyncRunner``, the ir-measures evaluation), so a notebook
gets exactly the numbers ``sira-seek`` prints. The facade only chooses and wires those pieces:
it holds no algorithm of its own. Heavy modules are imported inside the methods that need
them, so ``import sira_seek`` and ``connect()`` stay quick.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings, NodeSettings

if TYPE_CHECKING:
    from types import TracebackType

    from sira_seek.corpus import Query
    from sira_seek.embed import Embedder
    from sira_seek.ingest import IngestReport
    from sira_seek.seek.results import SeekResult
    from sira_seek.seek.settings import SeekMethod, SeekVariant
    from sira_seek.sira.results import SiraResult
    from sira_seek.sira.settings import Task
    from sira_seek.sync.document_prompt import CorpusTask
    from sira_seek.sync.run_report import RunReport
    from sira_seek.workflows.request_base import OnLLMFailure
    from sira_seek.workflows.sira_setup import Expansions, RetrievalMethod, SeekRetrieverName

logger = logging.getLogger(__name__)

Engine = Literal["opensearch", "elasticsearch"]
AwsService = Literal["es", "aoss"]


def connect(
    url: str | None = None,
    *,
    api_key: str | None = None,
    username: str | None = None,
    password: str | None = None,
    ca_certs: Path | str | None = None,
    ssl_fingerprint: str | None = None,
    verify_certs: bool = True,
    engine: Engine | None = None,
    aws_region: str | None = None,
    aws_service: AwsService | None = None,
    cloud_id: str | None = None,
    profile_max_age: float = 0.0,
) -> SiraSeek:
    """Connect to a cluster and return a ``SiraSeek`` facade over it.

    Arguments left out are read from ``SIRA_SEEK_*`` environment variables, as on the command
    line (``SIRA_SEEK_URL``, ``SIRA_SEEK_API_KEY``, ``SIRA_SEEK_PASSWORD`` ...). With no URL at
    all the local node started by ``sira-seek node up`` is used (``engine`` picks one when both
    run); with neither, a ``SiraSeekEngineError`` says how to get one. The engine behind the URL
    is detected, not configured.

    Managed clusters: ``aws_region`` signs every request with AWS SigV4 (Amazon OpenSearch
    Service; ``aws_service="aoss"`` for a Serverless collection; the ``aws`` extra), and
    ``cloud_id`` names an Elastic Cloud deployment instead of ``url``. Arguments that cannot
    go together raise pydantic's ``ValidationError`` (a ``ValueError``) naming their flags.
    ``profile_max_age`` is ``SiraSeek``'s (index profiles kept between searches; 0: never).
    """
    from sira_seek.esplugin.engines.registry import connect as connect_backend
    from sira_seek.esplugin.local.resolve import resolve_url

    _profile_max_age(profile_max_age)  # before a connection is opened
    given = {
        "url": url,
        "api_key": api_key,
        "username": username,
        "password": password,
        "ca_certs": ca_certs,
        "ssl_fingerprint": ssl_fingerprint,
        "engine": engine,
        "aws_region": aws_region,
        "aws_service": aws_service,
        "cloud_id": cloud_id,
    }
    settings = ClusterSettings.model_validate(
        {**{k: v for k, v in given.items() if v is not None}, "verify_certs": verify_certs}
    )
    settings = resolve_url(settings, NodeSettings())
    backend = connect_backend(settings)
    logger.info("connected to %s", backend.info.url)
    return SiraSeek(backend, profile_max_age=profile_max_age)


def _profile_max_age(seconds: float) -> float:
    if not 0 <= seconds < float("inf"):
        raise ValueError(f"profile_max_age must be a finite number >= 0, got {seconds}")
    return seconds


class SiraSeek:
    """SIRA retrieval, SEEK answers, sira-sync enrichment and evaluation on one cluster.

    Build it with ``sira_seek.connect()`` (or around any ``SearchBackend``). Every method takes
    its options by keyword and returns the library's typed results; close it when done, or use
    it as a context manager.
    """

    def __init__(self, backend: SearchBackend, *, profile_max_age: float = 0.0) -> None:
        """``profile_max_age`` > 0 keeps each index's profile (mapping, enrichment counts)
        for that many seconds between searches, as ``sira-seek serve --profile-max-age`` does:
        a long-lived client searching the same index saves the three to five requests of
        reading it per search, and sees a newly enriched index that much later (a deleted or
        recreated index at once). 0, the default, reads it on every search."""
        from sira_seek.sira.index_profile import ProfileCache

        self._profiles = ProfileCache(_profile_max_age(profile_max_age))
        self._backend = backend

    @property
    def backend(self) -> SearchBackend:
        """The engine boundary itself, for anything the facade does not wrap."""
        return self._backend

    # -- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        """Close the cluster client (its connection pool)."""
        self._backend.close()

    def __enter__(self) -> SiraSeek:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SiraSeek({type(self._backend).__name__})"

    # -- corpus --------------------------------------------------------------------------------
    def ingest(
        self,
        path: Path | str,
        index: str,
        *,
        shards: int = 1,
        replicas: int = 0,
        recreate: bool = False,
        embed: bool = False,
        embedder: str | None = None,
    ) -> IngestReport:
        """Load a BEIR corpus (a folder with corpus.jsonl, or the file) into ``index``.

        Safe to re-run: records are upserted by ``_id``, unchanged ones are no-ops, and
        enrichment written by sira-sync survives. DF is exact on any number of shards.
        ``recreate`` deletes the index first, by its concrete name only: a wildcard, a list,
        ``_all`` or an alias raises ``InvalidInput`` before any request, and nothing changes.
        ``embed`` also gives every document its vector (for methods dense, hybrid,
        sira-hybrid) with ``embedder`` (a spec; None: the CPU default), recorded in the index.
        """
        from sira_seek.ingest import ingest_corpus
        from sira_seek.workflows.errors import InvalidInput

        if embedder is not None and not embed:
            raise InvalidInput("embedder applies with embed=True only", field="embedder")
        model = None
        if embed:
            from sira_seek.embed import make_embedder

            model = make_embedder(embedder)
        try:
            return ingest_corpus(
                self._backend,
                index,
                Path(path),
                shards=shards,
                replicas=replicas,
                recreate=recreate,
                embedder=model,
            )
        finally:
            if model is not None:
                model.close()

    # -- retrieval -----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        index: str,
        method: RetrievalMethod = "bm25",
        expansions: Expansions | None = None,
        llm: str | None = None,
        k: int = 10,
        tau: float | None = None,
        weight: float | None = None,
        task: Task | None = None,
        query_id: str | None = None,
        rerank: int | None = None,
        on_llm_failure: OnLLMFailure = "error",
        num_candidates: int | None = None,
        embedder: str | None = None,
    ) -> SiraResult:
        """Search ``index`` with BM25 or SIRA; the result holds hits, the exact request body
        (``result.explain()`` gives it in Dev Tools syntax), the candidate table and timings.

        ``method="sira"`` needs candidate phrases: ``expansions`` (precomputed) or ``llm`` (a
        spec such as ``openai:URL#MODEL`` or ``llamacpp:gemma3-270m``, as ``--llm``). ``tau``
        and ``weight`` default to ``SiraSettings`` (0.1 and 0.5). An LLM that is not there
        raises ``Unavailable`` naming it; with ``on_llm_failure="fallback"`` the query runs as
        plain BM25 instead, said so in ``result.fell_back_to_bm25`` and ``result.notes`` (as is
        any query the phrase source had nothing for). ``rerank`` N > 0 has ``llm`` rerank the
        top N hits by relevance to the query (SIRA §3.1); with ``expansions`` the LLM only
        reranks. Unset, ``method="sira"`` with ``llm`` reranks the top 10 (SIRA's pipeline;
        ``rerank=0`` turns it off); no other search reranks unless asked. ``method="dense"``,
        ``"hybrid"``, ``"sira-hybrid"`` need an index ingested with ``embed=True``;
        ``embedder`` (a spec, default the CPU model) must be its model, and
        ``num_candidates`` (default 100) is the kNN's candidates per shard.
        """
        from sira_seek.workflows import search as flow

        request = flow.SearchRequest.build(
            query=query,
            index=index,
            method=method,
            expansions=expansions,
            llm=llm,
            k=k,
            tau=tau,
            weight=weight,
            task=task,
            query_id=query_id,
            rerank=rerank,
            on_llm_failure=on_llm_failure,
            num_candidates=num_candidates,
            embedder=embedder,
        )
        return flow.search(self._backend, request, profiles=self._profiles)

    def evaluate(
        self,
        index: str,
        *,
        queries: Path | str | Sequence[Query],
        qrels: Path | str | Mapping[str, Mapping[str, int]],
        method: RetrievalMethod = "bm25",
        expansions: Expansions | None = None,
        llm: str | None = None,
        tau: float | None = None,
        weight: float | None = None,
        task: Task | None = None,
        rerank: int | None = None,
        measures: str | None = None,
        answers: Path | str | Mapping[str, Sequence[str]] | None = None,
        strict: bool = True,
        name: str | None = None,
        save_run: Path | str | None = None,
        run_file: Path | str | None = None,
        log_queries: bool = False,
        on_llm_failure: OnLLMFailure = "error",
        num_candidates: int | None = None,
        embedder: str | None = None,
    ) -> dict[str, float | int | None]:
        """Everything ``sira-seek eval retrieval`` does, through the same workflow.

        ``queries`` is a BEIR queries.jsonl (or ``Query`` objects), ``qrels`` a BEIR qrels TSV
        (or ``{query_id: {doc_id: grade}}``). Returns the metrics (default nDCG@10,
        Recall@10, Recall@100, or ``measures`` as ir_measures strings), ``coverage@5/@10``
        (null without ``answers``: a QA JSONL or ``{query_id: [gold answers]}``) and the
        number of judged ``queries``, ``fallbacks`` the SIRA queries that ran as plain BM25
        (an LLM that is not there raises ``Unavailable`` after one probe unless
        ``on_llm_failure="fallback"``, which counts them here). ``save_run`` writes the
        per-query record for ``sira-seek report``; ``run_file`` a TREC run; ``log_queries``
        logs every query.
        ``rerank`` N > 0 has ``llm`` rerank every query's top N by relevance before scoring;
        unset, ``method="sira"`` with ``llm`` reranks the top 10 (``rerank=0``: off).
        ``num_candidates`` and ``embedder``: as in ``search``, for the vector methods.
        """
        from sira_seek.workflows.evaluate import RetrievalEvaluationRequest, evaluate_retrieval

        request = RetrievalEvaluationRequest.build(
            index=index,
            queries=queries,
            qrels=qrels,
            method=method,
            expansions=expansions,
            llm=llm,
            tau=tau,
            weight=weight,
            task=task,
            rerank=rerank,
            measures=measures,
            answers=answers,
            strict=strict,
            name=name,
            save_run=save_run,
            run_file=run_file,
            log_prefix="sira-seek-log-" if log_queries else None,
            on_llm_failure=on_llm_failure,
            num_candidates=num_candidates,
            embedder=embedder,
        )
        return evaluate_retrieval(self._backend, request).metrics

    # -- answers -------------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        *,
        index: str | None,
        llm: str | None = None,
        retriever: SeekRetrieverName = "bm25",
        expansions: Path | str | None = None,
        method: SeekMethod = "seek",
        variant: SeekVariant = "sequential",
        top_k: int | None = None,
        use_cache: bool | None = None,
        thinking: bool | None = None,
        max_steps: int | None = None,
        embedder: str | Embedder | None = None,
    ) -> SeekResult:
        """Answer ``question`` with SEEK (or a baseline ``method``) over ``index``.

        The result carries the completed sketch, every sub-query with the ids it retrieved, the
        answer, LLM usage and timings. ``llm`` is a spec as for ``--llm`` (default: the
        ``SIRA_SEEK_LLM_BACKEND`` setting, else the embedded CPU model). ``thinking`` turns
        Qwen3-style thinking on (off by default); ``max_steps`` caps the retrieval steps of the
        Plan and w/o-Initialization variants (as ``--max-steps``). ``retriever`` ``dense`` or
        ``hybrid`` searches the index's vectors, sub-queries embedded by ``embedder`` (a spec
        as for ``--embedder``; default the ``SIRA_SEEK_SIRA_EMBEDDER`` setting, else ``cpu``; or
        an ``Embedder`` you own and reuse, its model loaded once, not closed here). Blocking;
        inside a running event loop (a notebook) use ``await aask(...)``.
        """
        return asyncio.run(
            self.aask(
                question,
                index=index,
                llm=llm,
                retriever=retriever,
                expansions=expansions,
                method=method,
                variant=variant,
                top_k=top_k,
                use_cache=use_cache,
                thinking=thinking,
                max_steps=max_steps,
                embedder=embedder,
            )
        )

    async def aask(
        self,
        question: str,
        *,
        index: str | None,
        llm: str | None = None,
        retriever: SeekRetrieverName = "bm25",
        expansions: Path | str | None = None,
        method: SeekMethod = "seek",
        variant: SeekVariant = "sequential",
        top_k: int | None = None,
        use_cache: bool | None = None,
        thinking: bool | None = None,
        max_steps: int | None = None,
        embedder: str | Embedder | None = None,
    ) -> SeekResult:
        """``ask`` for code already inside an event loop."""
        from sira_seek.workflows import ask as flow

        request = flow.AskRequest.build(
            question=question,
            index=index,
            llm=llm,
            retriever=retriever,
            expansions=expansions,
            method=method,
            variant=variant,
            top_k=top_k,
            use_cache=use_cache,
            thinking=thinking,
            max_steps=max_steps,
            embedder=embedder if isinstance(embedder, str) else None,
        )
        shared = None if embedder is None or isinstance(embedder, str) else embedder
        return await flow.ask(self._backend, request, embedder=shared)

    # -- enrichment ----------------------------------------------------------------------------
    def enrich(
        self,
        index: str,
        *,
        llm: str | None = None,
        from_jsonl: Path | str | None = None,
        fields: Sequence[str] = ("title", "text"),
        tau: float | None = None,
        categories: bool = False,
        corpus_task: CorpusTask = "generic",
        slice: str | None = None,
        resume: bool = False,
        dry_run: bool = False,
        state_dir: Path | str | None = None,
        use_cache: bool = True,
    ) -> RunReport:
        """One sira-sync run over ``index``: enrich the documents that are new or changed.

        Phrases come from exactly one of ``llm`` (a spec; ``"cpu"`` as ``sira-sync --llm cpu``,
        a vLLM server started for the run when one is needed) and ``from_jsonl`` (precomputed
        ``{"_id", "keywords", "categories"}`` lines); each is kept only when its DF in the raw
        corpus is at most ``tau * |C|``. ``corpus_task`` picks the corpus prompt (``generic``,
        ``claim``, ``argument``, ``duplicate``; ``--task`` of sira-sync). ``slice`` is worker
        ``"i/N"``; ``resume`` continues that slice's unfinished run. Safe to re-run and to
        kill, as the ``sira-sync`` command.
        """
        from sira_seek.workflows.enrich import EnrichRequest, enrich

        request = EnrichRequest.build(
            index=index,
            llm=llm,
            from_jsonl=from_jsonl,
            fields=tuple(fields),
            tau=tau,
            categories=categories,
            task=corpus_task,
            slice=slice,
            resume=resume,
            dry_run=dry_run,
            state_dir=state_dir,
            use_cache=use_cache,
        )
        return enrich(self._backend, request)
