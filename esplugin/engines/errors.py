"""Errors a user can act on; every message says what to do next."""

from sira_seek.backend import EngineError
from sira_seek.input_errors import InputError


class SiraSeekEngineError(EngineError):
    """A cluster problem explained in plain words (never carries credentials)."""


class EngineRequestError(SiraSeekEngineError):
    """One request failed: the cluster answered with an error, or no answer came back.

    ``status`` is the HTTP status (None when nothing came back: connection refused, timeout)
    and ``error_type`` the engine's root-cause type (``illegal_argument_exception``, ...), so a
    caller can tell "the engine said no" from "the engine could not answer right now".
    """

    def __init__(
        self, message: str, *, status: int | None = None, error_type: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type

    @property
    def transient(self) -> bool:
        """Worth retrying: no answer, a timeout (408), too many requests (429) or a 5xx."""
        return self.status is None or self.status in (408, 429) or self.status >= 500


class WrongClientError(SiraSeekEngineError):
    """The installed Python client cannot talk to this server's major version."""


class NodeStartError(SiraSeekEngineError):
    """A local node did not come up; the message carries the tail of its log."""


class MissingExtraError(SiraSeekEngineError):
    """An option needs an optional package that is not installed; the message names the
    extra that installs it (``package`` and ``extra`` say which, for a front end's own words).
    """

    def __init__(self, message: str, *, package: str, extra: str) -> None:
        super().__init__(message)
        self.package = package
        self.extra = extra


class VectorsUnavailableError(SiraSeekEngineError, InputError):
    """A vector field or kNN search was asked of a cluster without vector search
    (Elasticsearch before 8.4, OpenSearch without the k-NN plugin); the message says what
    gives it. Bad input for this cluster (exit 2 / 422), refused before any request: the
    cluster is fine, it just cannot do what was asked."""


class NotConcreteNameError(InputError):
    """A destructive call (delete, merge, alias change) was given a name that can mean more
    than one index: a wildcard, a list, ``_all`` or an exclusion. Refused before any request,
    so no caller can empty a cluster by passing a pattern; bad input on every front end.
    """
