"""What every workflow request shares: one way to be built from a front end's keyword values.

A front end hands over what it parsed (strings for paths, plain mappings and sequences); the
request turns them into its field types (pydantic makes a string a ``Path``), validates once,
and names every bad field in one ``InvalidInput``, whichever front end asked. A request adds
only what is its own: other conversions (``coerce``) and the checks that span several fields
(``checked``).
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ValidationError

from .errors import InvalidInput, validation_message


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
