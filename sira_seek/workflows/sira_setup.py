"""SIRA's per-request choices, defined once: its settings, where its phrases come from, and
the model that reranks.

Every front end used to build these itself (the facade, ``sira-seek search``, the HTTP API,
SEEK's retriever), with slightly different rules; now each calls these functions.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import field_validator, model_validator

from sira_seek.backend import SearchBackend
from sira_seek.corpus import ReadReport
from sira_seek.sira.expansions import QueryExpander
from sira_seek.sira.settings import DEFAULT_RERANK_TOP_N, SiraSettings, Task

from . import validation
from .errors import InvalidInput, validation_message
from .methods import RetrievalMethod, method_spec
from .request_base import WorkflowRequest

if TYPE_CHECKING:
    from sira_seek.sira.rerank import LLMReranker

logger = logging.getLogger(__name__)

SeekRetrieverName = Literal["bm25", "sira", "dense", "hybrid"]
"""How SEEK's sub-queries search (``ask --retriever``): a subset of ``RetrievalMethod``
(dense and hybrid: the index's vectors, as the SEEK paper retrieves with an embedding model)."""

#: Precomputed expansions: a JSONL file (``{"_id" or "text", "keywords": [...]}`` per line) or
#: a mapping from a query id or the exact query text to its candidate phrases.
Expansions = Path | str | Mapping[str, Sequence[str]]


BackendSource = SearchBackend | Callable[[], SearchBackend]
"""A backend, or a function that connects one: the command line connects only after its input
was checked, so a bad flag is refused without a cluster."""


def backend_of(source: BackendSource) -> SearchBackend:
    """The backend ``source`` is, or connects."""
    if hasattr(source, "index_exists"):
        return source  # type: ignore[return-value]
    return source()  # type: ignore[operator]


def sira_settings(
    *,
    tau: float | None = None,
    weight: float | None = None,
    task: Task | str | None = None,
    **extra: Any,
) -> SiraSettings:
    """``SiraSettings`` with only the knobs given; the rest keep their defaults and env vars.

    A value out of range is ``InvalidInput`` naming the knob (``weight: ...``).
    """
    from pydantic import ValidationError

    values = {"tau": tau, "weight": weight, "task": task, **extra}
    given = tuple(sorted((k, v) for k, v in values.items() if v is not None))
    try:
        hash(given)
    except TypeError:  # a knob given as a list or a mapping: not worth a cache entry
        given_key = None
    else:
        given_key = given
    try:
        if given_key is None:
            return SiraSettings.model_validate(dict(given))
        return _settings_for(given_key, _sira_environment()).model_copy()
    except ValidationError as exc:
        raise InvalidInput(validation_message(exc)) from None


_ENV_PREFIX = str(SiraSettings.model_config.get("env_prefix", "")).upper()


def _sira_environment() -> tuple[tuple[str, str], ...]:
    """The environment variables ``SiraSettings`` reads (its prefix, any case, as
    pydantic-settings matches them): the part of the cache key that can change at run time."""
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.upper().startswith(_ENV_PREFIX)))


@functools.lru_cache(maxsize=256)
def _settings_for(
    given: tuple[tuple[str, Any], ...], environment: tuple[tuple[str, str], ...]
) -> SiraSettings:
    """``SiraSettings`` for these knobs under this environment, built once: reading the
    environment into a settings model took ~0.8 ms, paid twice by every search (the request's
    check and the search itself). Callers get a copy (``sira_settings``)."""
    del environment  # part of the key only: the model reads os.environ itself
    return SiraSettings.model_validate(dict(given))


class SiraRequest(WorkflowRequest):
    """A request whose searches run SIRA: search, a queries file's searches, a retrieval
    evaluation. They share the index name check, one way to make their knobs into
    ``SiraSettings`` (`sira_settings`, with the request's ``k`` as the size when it has one) and
    the rule that a rerank needs an LLM. The fields are each request's own (their order and
    descriptions are part of its schema)."""

    if TYPE_CHECKING:
        index: str
        tau: float | None
        weight: float | None
        task: Task | None
        llm: str | None
        rerank: int | None

    @field_validator("index", check_fields=False)
    @classmethod
    def _index(cls, value: str) -> str:
        return validation.index_name(value)

    @model_validator(mode="after")
    def _rerank_needs_llm(self) -> SiraRequest:
        check_rerank(self.settings().rerank_top_n, self.llm)
        return self

    def settings(self) -> SiraSettings:
        """SIRA's settings for this request: the knobs given, the rest from the environment
        and the defaults; a method with its own expansion weight (``hyde``, ``cot``:
        ``methods.GENERATED_WEIGHT``) uses it unless the request gives one."""
        method = getattr(self, "method", None)
        weight = self.weight
        if weight is None and method is not None:
            weight = method_spec(method).default_weight
        return sira_settings(
            tau=self.tau,
            weight=weight,
            task=self.task,
            size=getattr(self, "k", None),
            rerank_top_n=rerank_depth(self.rerank, method, self.llm),
            num_candidates=getattr(self, "num_candidates", None),
            embedder=getattr(self, "embedder", None),
        )


def choose_expander(
    method: RetrievalMethod,
    *,
    expansions: Expansions | None = None,
    llm: str | None = None,
    task: Task = "multihop",
    strict: bool = True,
    report: ReadReport | None = None,
    allow_both: bool = False,
) -> QueryExpander | None:
    """Where ``method``'s query additions come from (``methods.METHODS``): BM25 takes none,
    SIRA exactly one source of phrases, ``hyde`` and ``cot`` an LLM that writes a text.

    ``expansions`` is a JSONL file (a bad line stops here when ``strict``, else it is skipped
    into ``report``) or a mapping keyed by query id or exact text; ``llm`` a backend spec.
    ``allow_both`` is for a rerank, where the file expands and the LLM only reads passages.
    """
    additions = method_spec(method).additions
    if additions == "none":
        if expansions is not None:
            raise InvalidInput("expansions apply to method 'sira' only", field="expansions")
        if llm is not None and not allow_both:
            raise InvalidInput(
                f"an LLM for expansions does not apply to method {method!r}", field="llm"
            )
        return None
    if additions == "generated":
        return _generative_expander(method, expansions=expansions, llm=llm, task=task)
    return _phrase_expander(
        expansions=expansions, llm=llm, task=task, strict=strict, report=report,
        allow_both=allow_both,
    )  # fmt: skip


def _phrase_expander(
    *,
    expansions: Expansions | None,
    llm: str | None,
    task: Task,
    strict: bool,
    report: ReadReport | None,
    allow_both: bool,
) -> QueryExpander:
    """SIRA's phrase source: a file, a table or an LLM, exactly one."""
    from sira_seek.llm.precomputed import PrecomputedKeywords
    from sira_seek.sira.expansions import LLMExpander, PrecomputedExpander

    if expansions is not None and llm is not None and not allow_both:
        raise InvalidInput("give either expansions or an LLM, not both", field="expansions")
    if expansions is None and llm is None:
        raise InvalidInput(
            "method 'sira' needs candidate phrases: expansions (a file or a table) or an LLM",
            field="expansions",
        )
    if isinstance(expansions, str | Path):
        return PrecomputedExpander.from_file(expansions, strict=strict, report=report)
    if expansions is not None:
        # A key may be a query id or the query's exact text: both tables look it up.
        table = {key: list(phrases) for key, phrases in expansions.items()}
        return PrecomputedExpander(PrecomputedKeywords(by_id=table, by_text=table))
    assert llm is not None
    return _from_llm(llm, lambda: LLMExpander.from_spec(llm, task=task))


def _generative_expander(
    method: RetrievalMethod, *, expansions: Expansions | None, llm: str | None, task: Task
) -> QueryExpander:
    """``hyde`` / ``cot``: the LLM writes a text per query; precomputed phrases do not apply
    (the baselines add the LLM's own text, ungrounded)."""
    from sira_seek.sira.expansions import GenerativeExpander

    if expansions is not None:
        raise InvalidInput(
            f"method {method!r} adds a text the LLM writes: expansions apply to method 'sira' "
            "only",
            field="expansions",
        )
    if llm is None:
        raise InvalidInput(
            f"method {method!r} needs an LLM to write its text (llm / --llm SPEC)", field="llm"
        )
    assert method in ("hyde", "cot")
    return _from_llm(llm, lambda: GenerativeExpander.from_spec(llm, method=method, task=task))


def _from_llm(llm: str, build: Callable[[], QueryExpander]) -> QueryExpander:
    """``build()``, or ``InvalidInput`` naming the spec when its backend cannot be made."""
    from sira_seek.llm.errors import LLMCallError

    try:
        return build()
    except LLMCallError as exc:
        raise InvalidInput(f"LLM backend {llm!r} is unusable: {exc}", field="llm") from None


RERANK_NEEDS_LLM = (
    "needs an LLM to read the passages (llm / --llm; with expansions the LLM only reranks)"
)


def rerank_depth(rerank: int | None, method: str | None, llm: str | None) -> int:
    """The rerank depth a request runs: the one it names, else SIRA's default pipeline.

    SIRA §3.1 ends with an LLM relevance ranking of the top candidates, so ``method="sira"``
    with a live LLM (``llm``, any spec, batch rounds included: the rerank is their second round)
    reranks the top ``DEFAULT_RERANK_TOP_N`` unless the request says ``rerank=0``. Without an LLM
    (precomputed expansions) there is no model to read passages, so nothing is reranked; other
    methods are not SIRA and rerank only when asked. A ``jsonl:`` spec is precomputed outputs,
    not a model that can read a passage: no default rerank with it either.
    """
    if rerank is not None:
        return rerank
    live = bool(llm) and str(llm).strip().partition(":")[0].lower() != "jsonl"
    return DEFAULT_RERANK_TOP_N if method == "sira" and live else 0


def check_rerank(depth: int, llm: str | None) -> None:
    """The one rule of every request with a rerank: a depth above 0 needs an LLM spec."""
    if depth > 0 and not llm:
        raise InvalidInput(RERANK_NEEDS_LLM, field="rerank")


def choose_reranker(llm: str | None, depth: int) -> LLMReranker | None:
    """The model that reranks the top ``depth`` hits by relevance to the query (``llm``, a
    backend spec), or None when ``depth`` is 0."""
    from sira_seek.llm.errors import LLMCallError
    from sira_seek.sira.rerank import LLMReranker

    check_rerank(depth, llm)
    if depth <= 0 or llm is None:
        return None
    try:
        return LLMReranker.from_spec(llm)
    except LLMCallError as exc:
        raise InvalidInput(f"LLM backend {llm!r} is unusable: {exc}", field="llm") from None
