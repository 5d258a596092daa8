"""LLM settings: typed, validated, side-effect free, overridable by ``SIRA_SEEK_LLM_*`` env vars."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from sira_seek.config import default_home
from sira_seek.llm.structured import StructuredOutputDialect

DEFAULT_CACHE_MAX_BYTES = 1024**3
"""1 GiB: a few hundred thousand answers (one is a few KB), far below a full disk."""


class LLMSettings(BaseSettings):
    """Which LLM to use and how to talk to it."""

    model_config = SettingsConfigDict(env_prefix="SIRA_SEEK_LLM_", extra="ignore")

    backend: str = Field(
        default="llamacpp:gemma3-270m",
        description="Backend spec: openai:URL[,URL...][#MODEL], llamacpp:GGUF|gemma3-270m, "
        "jsonl:FILE, batch:DIR#MODEL",
    )
    cache: bool = Field(default=True, description="Use the on-disk response cache")
    cache_dir: Path = Field(default_factory=lambda: default_home() / "llm-cache")
    cache_max_bytes: int = Field(
        default=DEFAULT_CACHE_MAX_BYTES,
        ge=0,
        description="Size cap of the response cache in bytes: past it, the least recently "
        "used answers are removed (down to 90%); 0: no cap",
    )
    model_dir: Path = Field(
        default_factory=lambda: default_home() / "models",
        description="Where packaged models (Gemma 3 270M) are assembled on first use",
    )
    max_in_flight: int = Field(
        default=64,
        ge=1,
        description="Requests one client keeps in flight to a server; more wait their turn",
    )
    connect_timeout_s: float = Field(default=10.0, gt=0)
    read_timeout_s: float = Field(default=60.0, gt=0)
    total_timeout_s: float = Field(default=300.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    malformed_retries: int = Field(default=2, ge=0)
    structured_output: Literal["auto"] | StructuredOutputDialect = "auto"
    api_key: SecretStr | None = None
    batch_retries: int = Field(
        default=2,
        ge=0,
        description="Offline batch rounds (batch:DIR#MODEL): rounds a failed or missing answer "
        "is asked again before its question fails",
    )
    batch_template_kwargs: bool = Field(
        default=True,
        description="Offline batch rounds: send chat_template_kwargs (Qwen3's enable_thinking) "
        "as a live run against vLLM, SGLang or llama.cpp does; false for OpenAI's Batch API, "
        "which refuses the field",
    )
    n_ctx: int = Field(default=2048, ge=256, description="Context size for in-process llama.cpp")
    context_window: int | None = Field(
        default=None,
        ge=1,
        description="The context window (tokens) of an OpenAI-compatible server's model, for "
        "servers whose /v1/models does not list it (vLLM lists max_model_len): SEEK sizes its "
        "evidence to it before the first call; unset and unlisted, prompts too long are found "
        "when the model refuses them",
    )
    n_threads: int | None = Field(default=None, ge=1)

    def in_flight_cap(self, requested: int, *, what: str = "--concurrency") -> str | None:
        """A warning when ``requested`` concurrent calls exceed what one client sends at once
        (``max_in_flight``): the extra calls would queue in the client, unseen."""
        if requested <= self.max_in_flight:
            return None
        return (
            f"{what} {requested} is capped at {self.max_in_flight} LLM requests in flight "
            f"(SIRA_SEEK_LLM_MAX_IN_FLIGHT={self.max_in_flight}); raise it to send more"
        )
