"""The LLM layer: one typed interface over vLLM/OpenAI-compatible servers, the embedded CPU
model, and precomputed outputs, with an on-disk response cache and per-call accounting.

Optional backends (llama.cpp, the packaged Gemma model) are imported only when used, so this
package imports without them.
"""

from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.cache import CachingLLMClient, ResponseCache, cache_key
from sira_seek.llm.client import LLMClient, generate_many_bounded
from sira_seek.llm.errors import (
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
from sira_seek.llm.factory import create_backend, create_llm_client
from sira_seek.llm.ledger import LLMCallRecord, LLMUsageLedger, MeteredLLMClient
from sira_seek.llm.openai_http import HTTPClientSettings, OpenAICompatibleClient
from sira_seek.llm.precomputed import PrecomputedKeywords, PrecomputedLLMClient
from sira_seek.llm.prompts import KEYWORDS_SCHEMA, keyword_prompt, keyword_request
from sira_seek.llm.request import ChatMessage, LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse, TokenUsage
from sira_seek.llm.retry import RetryPolicy
from sira_seek.llm.settings import LLMSettings
from sira_seek.llm.spec import (
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
