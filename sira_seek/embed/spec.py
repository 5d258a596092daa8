"""Embedder spec strings: one string on the command line or in config picks the embedder.

Forms::

    cpu                                          the embedded CPU default (PyPI packages alone)
    openai:http://host:8000/v1#MODEL             any OpenAI-compatible /v1/embeddings: vLLM,
                                                 TEI, OpenAI; several URLs (a,b) round-robin
    batch:DIR#MODEL                              offline: ``sira-sync --embed`` writes the
                                                 requests as an OpenAI Batch file in DIR and
                                                 imports the batch job's output (``batch``)

The model after ``#`` may be left out for ``openai:``; it is then read from ``/v1/models`` (as
for an LLM spec: the endpoint part is parsed by ``sira_seek.llm.spec``, one grammar for both).
``batch:`` is parsed here but ``make_embedder`` refuses it: it embeds nothing live, so a query
or an ingest cannot use it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from sira_seek.input_errors import InputError
from sira_seek.llm.spec import BatchBackendSpec, OpenAIBackendSpec, parse_backend_spec
from sira_seek.redaction import Redactor

CPU_ALIASES = frozenset({"cpu", "default", "all-minilm-l6-v2", "cpu:all-minilm-l6-v2"})
FORMS = (
    "cpu (the embedded default), openai:http://host:8000/v1#MODEL or batch:DIR#MODEL "
    "(sira-sync --embed only)"
)


class EmbedderSpecError(InputError):
    """An embedder spec (``--embedder``) that names no embedder this build can use."""


class CpuEmbedderSpec(BaseModel):
    """The embedded CPU model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["cpu"] = "cpu"

    def to_spec(self) -> str:
        return "cpu"


EmbedderSpec = CpuEmbedderSpec | OpenAIBackendSpec | BatchBackendSpec


def parse_embedder_spec(spec: str | None) -> EmbedderSpec:
    """Parse ``spec`` (``None`` or empty: the CPU default); a wrong one raises
    ``EmbedderSpecError`` naming the accepted forms, with any credential in it masked."""
    text = (spec or "").strip()
    if not text or text.lower() in CPU_ALIASES:
        return CpuEmbedderSpec()
    scheme = text.partition(":")[0].lower()
    shown = Redactor.configured(llm=text, environ={})(text)
    if scheme not in ("openai", "batch"):
        raise EmbedderSpecError(f"unknown embedder {shown!r}; use {FORMS}")
    try:
        parsed = parse_backend_spec(text)
    except (InputError, ValidationError) as exc:
        message = (
            "; ".join(str(e["msg"]) for e in exc.errors())
            if isinstance(exc, ValidationError)
            else str(exc)
        )
        detail = Redactor.configured(llm=text, environ={})(message)
        raise EmbedderSpecError(f"embedder {shown!r} is not {FORMS}: {detail}") from exc
    assert isinstance(parsed, OpenAIBackendSpec | BatchBackendSpec)
    return parsed
