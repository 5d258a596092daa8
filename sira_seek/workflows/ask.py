"""The ask workflow: one question answered with SEEK (or a baseline), validated once.

``sira-seek ask``, ``SiraSeek.ask``/``aask``, ``POST /ask`` and ``eval qa`` build their
sub-query retriever here, so SEEK's searches use exactly the phrase sources ``search`` does.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
)

from sira_seek.backend import SearchBackend
from sira_seek.seek.results import SeekResult
from sira_seek.seek.retrieval import BM25Retriever, Retriever, SiraDocumentRetriever
from sira_seek.seek.settings import SeekMethod, SeekSettings, SeekVariant

from . import validation

if TYPE_CHECKING:
    from sira_seek.embed import Embedder
from .errors import InvalidInput, NotFound, classified, validation_message
from .sira_setup import (
    BackendSource,
    RetrievalMethod,
    SeekRetrieverName,
    backend_of,
    choose_expander,
    sira_settings,
)

logger = logging.getLogger(__name__)


class AskRequest(BaseModel):
    """One question, the index its sub-queries search, and how SEEK runs (``settings``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str
    index: str | None = None
    llm: str | None = None
    retriever: SeekRetrieverName = "bm25"
    expansions: Path | None = None
    embedder: str | None = None
    """--retriever dense/hybrid: the query embedder (None: SIRA's setting, else the CPU
    default); it must be the model the index was embedded with."""
    settings: SeekSettings = Field(default_factory=SeekSettings)
    use_cache: StrictBool | None = None

    @field_validator("question")
    @classmethod
    def _question(cls, value: str) -> str:
        return validation.query_text(value, field="question")

    @field_validator("index")
    @classmethod
    def _index(cls, value: str | None) -> str | None:
        return None if value is None else validation.index_name(value)

    @classmethod
    def build(
        cls,
        *,
        method: SeekMethod = "seek",
        variant: SeekVariant = "sequential",
        top_k: int | None = None,
        thinking: bool | None = None,
        max_steps: int | None = None,
        **values: object,
    ) -> AskRequest:
        """The request from keyword values (SEEK's knobs among them, over the defaults and
        env vars unless ``settings`` is given whole), or ``InvalidInput`` naming each bad
        field."""
        try:
            if values.get("settings") is None:
                knobs: dict[str, object] = {"method": method, "variant": variant}
                given = {"top_k": top_k, "thinking": thinking, "max_steps": max_steps}
                knobs.update({k: v for k, v in given.items() if v is not None})
                values["settings"] = SeekSettings.model_validate(knobs)
            return cls.model_validate(values)
        except ValidationError as exc:
            raise InvalidInput(validation_message(exc)) from None


def build_retriever(
    backend: SearchBackend,
    index: str,
    name: RetrievalMethod = "bm25",
    *,
    llm: str | None = None,
    expansions: Path | None = None,
    embedder: str | Embedder | None = None,
) -> Retriever:
    """SEEK's sub-query retriever: BM25, SIRA with phrases from a file or an LLM (the file
    wins when both are given: SEEK's own LLM is always there), or the index's vectors
    (``dense``: kNN; ``hybrid``: BM25 and kNN fused; ``embedder`` embeds the sub-queries, by
    the index's model; a spec, or a caller-owned ``Embedder`` such as a server's, not closed
    here). The search methods SEEK does not take (``hyde``, ``cot``,
    ``sira-hybrid``) are ``InvalidInput``, not another method under their name."""
    if name not in get_args(SeekRetrieverName):
        choices = ", ".join(get_args(SeekRetrieverName))
        raise InvalidInput(
            f"SEEK's sub-queries search with {choices}, not {name!r}", field="retriever"
        )
    if name == "bm25":
        return BM25Retriever(backend, index)
    from sira_seek.sira.retriever import SiraRetriever

    if name in ("dense", "hybrid"):
        shared = None if embedder is None or isinstance(embedder, str) else embedder
        settings = sira_settings(embedder=embedder if shared is None else None)
        sira = SiraRetriever(backend, index, settings=settings, method=name, embedder=shared)
        return SiraDocumentRetriever(sira, name=name)

    expander = choose_expander(
        "sira", expansions=expansions, llm=None if expansions is not None else llm
    )
    return SiraDocumentRetriever(SiraRetriever(backend, index, expander=expander))


def retriever_for(
    source: BackendSource | None,
    *,
    method: SeekMethod,
    index: str | None,
    retriever: RetrievalMethod = "bm25",
    llm: str | None = None,
    expansions: Path | None = None,
    embedder: str | Embedder | None = None,
) -> Retriever | None:
    """The retriever ``method`` needs (none for closed-book answers, which never connect),
    after checking the index name and that the index exists."""
    if method == "vanilla-llm":
        return None
    if not index:
        raise InvalidInput(f"method {method!r} retrieves: give an index", field="index")
    validation.index_name(index)
    if source is None:
        raise InvalidInput(f"method {method!r} retrieves: give a cluster", field="index")
    backend = backend_of(source)
    if not backend.index_exists(index):
        raise NotFound(
            f"index {index!r} does not exist: ingest a corpus into it first", field="index"
        )
    from sira_seek.llm.settings import LLMSettings

    # SIRA's phrases come from SEEK's own LLM unless a file is given.
    return build_retriever(
        backend,
        index,
        retriever,
        llm=llm or LLMSettings().backend,
        expansions=expansions,
        embedder=embedder,
    )


async def ask(
    source: BackendSource | None,
    request: AskRequest,
    *,
    retriever: Retriever | None = None,
    embedder: Embedder | None = None,
) -> SeekResult:
    """Answer ``request.question``: the completed sketch, every sub-query with the ids it
    retrieved, the answer, LLM usage and timings. A question the pipeline could not answer
    comes back with ``error`` set (batches go on); invalid requests raise.

    ``retriever`` is one ``retriever_for`` built already (the CLI keeps it for ``--explain``).
    ``embedder`` is a caller-owned query embedder for retriever ``dense``/``hybrid`` (a
    server's, its model loaded once), used instead of ``request.embedder``'s spec.
    """
    from sira_seek.seek.api import open_session

    settings = request.settings
    with classified():
        found = retriever or retriever_for(
            source,
            method=settings.method,
            index=request.index,
            retriever=request.retriever,
            llm=request.llm,
            expansions=request.expansions,
            embedder=embedder if embedder is not None else request.embedder,
        )
    session = open_session(
        retriever=found, llm_spec=request.llm, settings=settings, use_cache=request.use_cache
    )
    logger.debug("asking %r with %s over %s", request.question[:80], settings.method, found)
    try:
        return await session.answer(request.question)
    finally:
        await session.aclose()
