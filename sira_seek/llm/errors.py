"""Exceptions worded for the person running the tool, each tagged with a stable ``kind``.

``kind`` is what batch error records and the usage ledger group by; the message says what to
do about it.
"""

from __future__ import annotations


class LLMCallError(Exception):
    """Base class: a call to an LLM backend failed."""

    kind = "internal"

    def __init__(self, message: str, *, raw_text: str | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.raw_text = raw_text
        self.attempts = attempts


class ServerUnreachableError(LLMCallError):
    """No connection could be made (server down, wrong host or port)."""

    kind = "unreachable"


class LLMTimeoutError(LLMCallError):
    """The server accepted the request but did not answer in time."""

    kind = "timeout"


class ModelNotFoundError(LLMCallError):
    """The server does not serve the model named in the backend spec."""

    kind = "model_not_found"


class ContextTooLongError(LLMCallError):
    """Prompt plus ``max_tokens`` exceed the model's context window."""

    kind = "context_too_long"


class MalformedOutputError(LLMCallError):
    """The answer did not parse as the requested JSON, even after retries; ``raw_text`` keeps it."""

    kind = "malformed_output"


class ServerError(LLMCallError):
    """The server kept failing (HTTP 429 or 5xx) after all retries."""

    kind = "server_error"


class BadRequestError(LLMCallError):
    """The server rejected the request (HTTP 4xx) for a reason other than those above."""

    kind = "bad_request"


class PrecomputedMissingError(LLMCallError):
    """A precomputed outputs file has no entry for the requested id or text."""

    kind = "not_found"


class BackendUnavailableError(LLMCallError):
    """An optional backend's packages or model are not installed."""

    kind = "unavailable"
