"""What a caller asks an LLM: one typed request for every backend.

A request is plain data so it can be hashed into a cache key, logged, and replayed against
another backend without translation by the caller.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ChatMessage(BaseModel):
    """One turn of a chat conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


class LLMRequest(BaseModel):
    """A completion (``prompt``) or chat (``messages``) request with its sampling settings.

    Exactly one of ``prompt`` and ``messages`` is set. Raw prompts suit base models driven by
    few-shot examples; messages suit instruction-tuned models behind a chat template.
    ``json_schema`` asks the backend for constrained decoding so the answer always parses.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: str | None = None
    messages: tuple[ChatMessage, ...] | None = None
    json_schema: dict[str, Any] | None = None
    max_tokens: int = Field(default=256, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    top_k: int | None = Field(default=None, ge=0)
    seed: int | None = None
    stop: tuple[str, ...] = ()
    chat_template_kwargs: dict[str, Any] | None = None
    lookup_key: str | None = Field(
        default=None,
        description="Document or query id for precomputed backends; not part of the cache key.",
    )

    @model_validator(mode="after")
    def _prompt_xor_messages(self) -> LLMRequest:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("an LLMRequest needs exactly one of `prompt` or `messages`")
        if self.messages is not None and not self.messages:
            raise ValueError("`messages` must not be empty")
        return self

    @property
    def is_chat(self) -> bool:
        return self.messages is not None

    def with_seed(self, seed: int | None) -> LLMRequest:
        """A copy with another seed: a retry after malformed output should not replay it."""
        return self.model_copy(update={"seed": seed})
