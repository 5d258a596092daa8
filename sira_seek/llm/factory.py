"""Build the ``LLMClient`` a spec string asks for, wrapped in the cache and the ledger."""

from __future__ import annotations

from sira_seek.llm.cache import CachingLLMClient, ResponseCache
from sira_seek.llm.client import LLMClient
from sira_seek.llm.ledger import LLMUsageLedger, MeteredLLMClient
from sira_seek.llm.openai_http import HTTPClientSettings, OpenAICompatibleClient
from sira_seek.llm.settings import LLMSettings
from sira_seek.llm.spec import (
    BackendSpec,
    BackendSpecError,
    BatchBackendSpec,
    JsonlBackendSpec,
    LlamaCppBackendSpec,
    OpenAIBackendSpec,
    parse_backend_spec,
)


def _parse(spec: str | BackendSpec) -> BackendSpec:
    return parse_backend_spec(spec) if isinstance(spec, str) else spec


def create_backend(spec: str | BackendSpec, settings: LLMSettings | None = None) -> LLMClient:
    """The bare backend for ``spec`` (no cache, no ledger). Heavy imports happen lazily."""
    settings = settings or LLMSettings()
    parsed = _parse(spec)
    if isinstance(parsed, OpenAIBackendSpec):
        return OpenAICompatibleClient(
            endpoints=parsed.endpoints,
            model=parsed.model,
            settings=HTTPClientSettings.from_llm_settings(settings),
        )
    if isinstance(parsed, LlamaCppBackendSpec):
        from sira_seek.llm.gemma_model import resolve_gguf
        from sira_seek.llm.llamacpp_inprocess import LlamaCppClient

        return LlamaCppClient(
            model_path=resolve_gguf(parsed.model, settings.model_dir),
            n_ctx=settings.n_ctx,
            n_threads=settings.n_threads,
            malformed_retries=settings.malformed_retries,
        )
    if isinstance(parsed, JsonlBackendSpec):
        from sira_seek.llm.precomputed import PrecomputedKeywords, PrecomputedLLMClient

        return PrecomputedLLMClient(PrecomputedKeywords.from_jsonl(parsed.path))
    if isinstance(parsed, BatchBackendSpec):
        return _batch_client(parsed, settings)
    raise TypeError(f"unsupported backend spec {parsed!r}")


def create_llm_client(
    spec: str | BackendSpec | None = None,
    *,
    settings: LLMSettings | None = None,
    ledger: LLMUsageLedger | None = None,
    use_cache: bool | None = None,
) -> LLMClient:
    """The client a run should use: backend, then the response cache (on by default, never for
    precomputed files), then the ledger when one is given."""
    settings = settings or LLMSettings()
    parsed = _parse(spec or settings.backend)
    client: LLMClient = create_backend(parsed, settings)
    cache_on = settings.cache if use_cache is None else use_cache
    if cache_on and not isinstance(parsed, JsonlBackendSpec):
        cap = settings.cache_max_bytes or None  # 0: no cap
        client = CachingLLMClient(client, ResponseCache(settings.cache_dir, cap))
    if ledger is not None:
        client = MeteredLLMClient(client, ledger)
    return client


BATCH_COMMANDS = "eval qa, eval retrieval, eval agentic and search --queries"


def _batch_client(spec: BatchBackendSpec, settings: LLMSettings) -> LLMClient:
    """The client of the batch rounds run in progress over the spec's folder; a ``batch:``
    spec anywhere else is refused (only runs that go in rounds can wait for a batch job)."""
    from sira_seek.llm.batch_client import BatchRoundClient
    from sira_seek.llm.batch_rounds import active_rounds

    rounds = active_rounds(spec.directory)
    if rounds is None:
        raise BackendSpecError(
            f"{spec.to_spec()}: offline batch rounds run only in {BATCH_COMMANDS} (a run that "
            "can stop and resume); use openai:URL#MODEL here"
        )
    dialect = settings.structured_output
    return BatchRoundClient(
        rounds,
        model=spec.model,
        malformed_retries=settings.malformed_retries,
        dialect="openai" if dialect == "auto" else dialect,
        template_kwargs=settings.batch_template_kwargs,
    )
