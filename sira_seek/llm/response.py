"""What comes back from an LLM: a response, or an error record that keeps a batch going."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sira_seek.llm.errors import LLMCallError

ErrorKind = Literal[
    "unreachable",
    "timeout",
    "model_not_found",
    "context_too_long",
    "malformed_output",
    "server_error",
    "bad_request",
    "not_found",
    "unavailable",
    "internal",
]


class TokenUsage(BaseModel):
    """Tokens the backend reports (zero when served from a cache or a precomputed file)."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class LLMResponse(BaseModel):
    """One answer, with what it cost so run reports can account for it."""

    model_config = ConfigDict(frozen=True)

    text: str
    parsed: Any = Field(default=None, description="Decoded JSON when a schema was given")
    usage: TokenUsage = Field(default_factory=TokenUsage)
    latency_s: float = 0.0
    backend: str
    model: str
    cache_hit: bool = False
    finish_reason: str | None = None


class LLMError(BaseModel):
    """A failed call inside a batch: recorded, never raised, so one failure cannot abort a run."""

    model_config = ConfigDict(frozen=True)

    kind: ErrorKind
    message: str
    raw_text: str | None = None
    backend: str = ""
    model: str = ""
    latency_s: float = 0.0
    attempts: int = 1
    request_index: int | None = None

    @classmethod
    def from_exception(
        cls,
        exc: BaseException,
        *,
        backend: str = "",
        model: str = "",
        latency_s: float = 0.0,
        request_index: int | None = None,
    ) -> LLMError:
        if isinstance(exc, LLMCallError):
            return cls(
                kind=exc.kind,  # type: ignore[arg-type]
                message=str(exc),
                raw_text=exc.raw_text,
                backend=backend,
                model=model,
                latency_s=latency_s,
                attempts=exc.attempts,
                request_index=request_index,
            )
        return cls(
            kind="internal",
            message=f"{type(exc).__name__}: {exc}",
            backend=backend,
            model=model,
            latency_s=latency_s,
            request_index=request_index,
        )
