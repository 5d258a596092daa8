"""What every workflow request shares: one way to be built from a front end's keyword values.

A front end hands over what it parsed (strings for paths, plain mappings and sequences); the
request turns them into its field types (pydantic makes a string a ``Path``), validates once,
and names every bad field in one ``InvalidInput``, whichever front end asked. A request adds
only what is its own: other conversions (``coerce``) and the checks that span several fields
(``checked``).
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ValidationError

from .errors import InvalidInput, validation_message

OnLLMFailure = Literal["error", "fallback"]
"""What a SIRA run does when its LLM is not there (unreachable, timing out, not installed,
failing after its retries), one policy for every front end (``--on-llm-failure``, the
``on_llm_failure`` argument and request field, the retrievers' option):

- ``error`` (the default everywhere): one probe finds it (a batch sends its first query
  alone) and the run stops naming the LLM: exit 1, HTTP 503, an exception in the library.
  Plain BM25 never passes for SIRA.
- ``fallback``: every query is tried; those the LLM could not expand run as plain BM25 and
  are counted and shown (``fell_back_to_bm25`` on a result, ``fallbacks`` in an evaluation,
  a note and a log warning).

Under either, a query whose phrase source had nothing for it (one malformed answer, a table
without the query) runs as plain BM25 and is counted the same way."""

ON_LLM_FAILURE_HELP = (
    "When the LLM is not there: error (default) stops after one probe naming the LLM; "
    "fallback runs such queries as plain BM25 and counts them."
)
"""The one description of the policy a front end shows (CLI help, HTTP schema, retrievers)."""


class WorkflowRequest(BaseModel):
    """Base of the workflows' requests; see the module docstring."""

    @classmethod
    def build(cls, **values: Any) -> Self:
        """The request from keyword values, or ``InvalidInput`` naming each bad field."""
        try:
            request = cls.model_validate(cls.coerce(values))
        except ValidationError as exc:
            raise InvalidInput(validation_message(exc)) from None
        return request.checked()

    @classmethod
    def coerce(cls, values: dict[str, Any]) -> dict[str, Any]:
        """Turn caller-friendly values (any mapping, any sequence) into the field types."""
        return values

    def checked(self) -> Self:
        """Checks across fields, after validation (they raise ``InvalidInput``)."""
        return self
