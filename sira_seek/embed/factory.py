"""``make_embedder(spec)``: the one way front ends and workflows get an embedder."""

from __future__ import annotations

from sira_seek.embed.base import Embedder
from sira_seek.embed.spec import CpuEmbedderSpec, EmbedderSpec, parse_embedder_spec
from sira_seek.llm.settings import LLMSettings


def make_embedder(
    spec: str | EmbedderSpec | None = None, *, settings: LLMSettings | None = None
) -> Embedder:
    """The embedder ``spec`` names (``None``: the embedded CPU default).

    ``settings`` are the LLM's (API key, timeouts, retries: ``SIRA_SEEK_LLM_*``), used by
    ``openai:`` embedders; nothing is loaded or asked until the first texts are embedded.
    """
    parsed = spec if spec is not None and not isinstance(spec, str) else parse_embedder_spec(spec)
    if isinstance(parsed, CpuEmbedderSpec):
        from sira_seek.embed.cpu import CpuEmbedder

        return CpuEmbedder()
    from sira_seek.embed.openai import OpenAIEmbedder

    return OpenAIEmbedder(parsed, settings=settings)
