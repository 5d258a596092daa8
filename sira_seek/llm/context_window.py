"""The model's context window, known before the first call where the backend can tell.

Why: a prompt too long for the model is otherwise found only when the model refuses it,
after the searches and the calls before it were paid for. A backend that knows its window
offers ``context_window()`` (`WindowedLLM`): the in-process llama.cpp model its ``n_ctx``, an
OpenAI-compatible server the ``max_model_len`` vLLM lists in ``/v1/models`` (or a ``meta``
``n_ctx``), or ``SIRA_SEEK_LLM_CONTEXT_WINDOW`` for a server that says nothing. The wrappers
(the response cache, the ledger) keep their backend as ``inner``; `context_window_of` looks
through them. ``None`` means unknown: callers then behave as before.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class WindowedLLM(Protocol):
    """A client that can say how many tokens (prompt and reply together) its model takes."""

    async def context_window(self) -> int | None:
        """The window in tokens, or ``None`` when the backend cannot tell."""
        ...


async def context_window_of(llm: object) -> int | None:
    """The context window of ``llm`` or of the backend it wraps (``inner``); ``None`` when
    none of them can tell."""
    seen: object | None = llm
    while seen is not None:
        if isinstance(seen, WindowedLLM):
            return await seen.context_window()
        seen = getattr(seen, "inner", None)
    return None
