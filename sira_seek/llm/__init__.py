"""The LLM layer: one typed interface over vLLM/OpenAI-compatible servers, the embedded CPU
model, and precomputed outputs, with an on-disk response cache and per-call accounting.

Optional backends (llama.cpp, the packaged Gemma model) are imported only when used, so this
package imports without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .blocking import BlockingLLMClient
    from .cache import CachingLLMClient, ResponseCache, cache_key
    from .client import LLMClient, generate_many_bounded
    from .errors import (
        BackendUnavailableError,
        BadRequestError,
        ContextTooLongError,
        LLMCallError,
        LLMTimeoutError,
        MalformedOutputError,
        ModelNotFoundError,
        PrecomputedMissingError,
        ServerError,
        ServerUnreachableError,
    )
    from .factory import create_backend, create_llm_client
    from .ledger import LLMCallRecord, LLMUsageLedger, MeteredLLMClient
    from .openai_http import HTTPClientSettings, OpenAICompatibleClient
    from .precomputed import PrecomputedKeywords, PrecomputedLLMClient
    from .prompts import KEYWORDS_SCHEMA, keyword_prompt, keyword_request
    from .request import ChatMessage, LLMRequest
    from .response import LLMError, LLMResponse, TokenUsage
    from .retry import RetryPolicy
    from .settings import LLMSettings
    from .spec import (
        JsonlBackendSpec,
        LlamaCppBackendSpec,
        OpenAIBackendSpec,
        parse_backend_spec,
    )

__all__ = [
    "KEYWORDS_SCHEMA",
    "BackendUnavailableError",
    "BadRequestError",
    "CachingLLMClient",
    "ChatMessage",
    "ContextTooLongError",
    "HTTPClientSettings",
    "JsonlBackendSpec",
    "LLMCallError",
    "LLMCallRecord",
    "LLMClient",
    "LLMError",
    "LLMRequest",
    "LLMResponse",
    "LLMSettings",
    "LLMTimeoutError",
    "LLMUsageLedger",
    "LlamaCppBackendSpec",
    "MalformedOutputError",
    "MeteredLLMClient",
    "ModelNotFoundError",
    "OpenAIBackendSpec",
    "OpenAICompatibleClient",
    "PrecomputedKeywords",
    "PrecomputedLLMClient",
    "PrecomputedMissingError",
    "ResponseCache",
    "RetryPolicy",
    "ServerError",
    "ServerUnreachableError",
    "BlockingLLMClient",
    "TokenUsage",
    "cache_key",
    "create_backend",
    "create_llm_client",
    "generate_many_bounded",
    "keyword_prompt",
    "keyword_request",
    "parse_backend_spec",
]

_EXPORTS = {
    ".blocking": ("BlockingLLMClient",),
    ".cache": (
        "CachingLLMClient",
        "ResponseCache",
        "cache_key",
    ),
    ".client": (
        "LLMClient",
        "generate_many_bounded",
    ),
    ".errors": (
        "BackendUnavailableError",
        "BadRequestError",
        "ContextTooLongError",
        "LLMCallError",
        "LLMTimeoutError",
        "MalformedOutputError",
        "ModelNotFoundError",
        "PrecomputedMissingError",
        "ServerError",
        "ServerUnreachableError",
    ),
    ".factory": (
        "create_backend",
        "create_llm_client",
    ),
    ".ledger": (
        "LLMCallRecord",
        "LLMUsageLedger",
        "MeteredLLMClient",
    ),
    ".openai_http": (
        "HTTPClientSettings",
        "OpenAICompatibleClient",
    ),
    ".precomputed": (
        "PrecomputedKeywords",
        "PrecomputedLLMClient",
    ),
    ".prompts": (
        "KEYWORDS_SCHEMA",
        "keyword_prompt",
        "keyword_request",
    ),
    ".request": (
        "ChatMessage",
        "LLMRequest",
    ),
    ".response": (
        "LLMError",
        "LLMResponse",
        "TokenUsage",
    ),
    ".retry": ("RetryPolicy",),
    ".settings": ("LLMSettings",),
    ".spec": (
        "JsonlBackendSpec",
        "LlamaCppBackendSpec",
        "OpenAIBackendSpec",
        "parse_backend_spec",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
