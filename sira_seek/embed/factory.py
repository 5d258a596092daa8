"""``make_embedder(spec)``: the one way front ends and workflows get an embedder."""

from __future__ import annotations

from sira_seek.embed.base import Embedder
from sira_seek.embed.batch import BatchEmbedderNotLiveError
from sira_seek.embed.spec import CpuEmbedderSpec, EmbedderSpec, parse_embedder_spec
from sira_seek.llm.settings import LLMSettings
from sira_seek.llm.spec import BatchBackendSpec, OpenAIBackendSpec


def live_embedder_spec(
    spec: str | EmbedderSpec | None,
) -> CpuEmbedderSpec | OpenAIBackendSpec:
    """``spec`` parsed, refused when it cannot embed a text now (``batch:``, with
    ``BatchEmbedderNotLiveError``): what a server checks at start, before any query needs it."""
    parsed = spec if spec is not None and not isinstance(spec, str) else parse_embedder_spec(spec)
    if isinstance(parsed, BatchBackendSpec):
        raise BatchEmbedderNotLiveError.for_spec(parsed)
    return parsed


def make_embedder(
    spec: str | EmbedderSpec | None = None, *, settings: LLMSettings | None = None
) -> Embedder:
    """The embedder ``spec`` names (``None``: the embedded CPU default).

    ``settings`` are the LLM's (API key, timeouts, retries: ``SIRA_SEEK_LLM_*``), used by
    ``openai:`` embedders; nothing is loaded or asked until the first texts are embedded.
    A ``batch:DIR#MODEL`` spec is refused (``BatchEmbedderNotLiveError``, naming the live
    spec of the same model): only ``sira-sync --embed`` takes it, without making an embedder.
    """
    parsed = live_embedder_spec(spec)
    if isinstance(parsed, CpuEmbedderSpec):
        from sira_seek.embed.cpu import CpuEmbedder

        return CpuEmbedder()
    from sira_seek.embed.openai import OpenAIEmbedder

    return OpenAIEmbedder(parsed, settings=settings)
