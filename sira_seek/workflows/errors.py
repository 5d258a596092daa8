"""The one error hierarchy of the workflows, and where each library failure belongs in it.

Every front end maps these four kinds to its own convention exactly once (the CLI to exit
codes, the HTTP API to statuses, the MCP server to tool errors, Python callers get the
exceptions), so the same bad input gets the same reason everywhere:

===============  ======  ======  =========================================================
kind             exit    HTTP    when
===============  ======  ======  =========================================================
InvalidInput     2       422     a value or file the caller gave cannot be used (names the
                                 field)
NotAllowed       2       403     a well-formed request for something this deployment does
                                 not serve (an index outside the allow-list)
NotFound         1       404     the index (or document) named does not exist
Conflict         1       409     the index exists but its state does not allow the job (no
                                 sira-seek fields, a mapping that refuses them, read-only)
Unavailable      1       503     the cluster or the LLM refused or cannot be reached
===============  ======  ======  =========================================================

``InvalidInput`` is a ``ValueError`` so that code written against the facade before the
workflows existed (``except ValueError``) keeps working.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar


class WorkflowError(Exception):
    """A failure a caller can act on; ``field`` names the request field when there is one."""

    kind: ClassVar[str] = "error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        # "index 'x' does not exist" already names its field; "k: must be ..." needs it.
        if not self.field or self.message.startswith(self.field):
            return self.message
        return f"{self.field}: {self.message}"


class InvalidInput(WorkflowError, ValueError):
    """The request itself is wrong: a bad value, name, size or file."""

    kind = "invalid_input"


class NotAllowed(WorkflowError):
    """Well-formed, but outside what this deployment serves (an index not on the allow-list)."""

    kind = "not_allowed"


class NotFound(WorkflowError):
    """What the request names does not exist (an index, a document)."""

    kind = "not_found"


class Conflict(WorkflowError):
    """The index exists, but its state does not allow the job (missing fields, a conflicting
    mapping, a write block); the message says what to do."""

    kind = "conflict"


class Unavailable(WorkflowError):
    """The cluster or the LLM server refused or cannot be reached; retrying may help."""

    kind = "unavailable"


def classify(exc: BaseException) -> WorkflowError | None:
    """``exc`` as one of the four kinds, or ``None`` for a failure that is a bug.

    The library's own errors keep their messages; only their kind is decided here, once.
    """
    from pydantic import ValidationError

    from sira_seek.backend import EngineError, ScanContextLostError
    from sira_seek.embed import EmbedderError
    from sira_seek.ingest import IngestTargetError
    from sira_seek.input_errors import InputError
    from sira_seek.llm.errors import LLMCallError
    from sira_seek.sira.df_check import TooManyCandidatesError
    from sira_seek.sira.index_profile import SiraIndexError
    from sira_seek.sira.retriever import EmptyQueryError
    from sira_seek.sira.term_vectors import TermStatisticsError
    from sira_seek.sync.checkpoint import ResumeMismatchError
    from sira_seek.sync.mapping import MappingConflictError
    from sira_seek.sync.phrase_sources import LLMUnavailableError

    if isinstance(exc, WorkflowError):
        return exc
    if isinstance(exc, SiraIndexError):
        if "does not exist" in str(exc):
            return NotFound(str(exc), field="index")
        return Conflict(str(exc), field="index")
    if isinstance(exc, MappingConflictError | IngestTargetError):
        return Conflict(str(exc), field="index")
    if isinstance(exc, ResumeMismatchError):
        return InvalidInput(str(exc), field="resume")
    if isinstance(exc, EmptyQueryError):
        return InvalidInput(str(exc), field="query")
    if isinstance(exc, TooManyCandidatesError):
        return InvalidInput(str(exc), field="expansions")
    if isinstance(exc, ValidationError):
        return InvalidInput(validation_message(exc))
    if isinstance(exc, InputError):  # the library's own (BadInputLineError, QAFileError, ...)
        return InvalidInput(str(exc))
    if isinstance(exc, EngineError):
        # The engine said no to this request (a 400 or 404 it explains), not "cannot answer".
        status = getattr(exc, "status", None)
        if status == 400:
            return InvalidInput(f"the cluster refused the request: {exc}")
        if status == 404:
            return NotFound(str(exc))
    unavailable = (
        EngineError,
        LLMCallError,
        LLMUnavailableError,
        EmbedderError,
        TermStatisticsError,
        ScanContextLostError,
    )
    if isinstance(exc, unavailable):
        return Unavailable(str(exc))
    return None


def validation_message(exc: object) -> str:
    """A pydantic ``ValidationError`` as ``field: reason; field: reason`` (no input echoed)."""
    errors = getattr(exc, "errors", None)
    if errors is None:
        return str(exc)
    parts = []
    for err in errors(include_input=False, include_url=False):
        where = ".".join(str(p) for p in err.get("loc", ()))
        msg = str(err.get("msg", "invalid"))
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, WorkflowError):
            # A validator raised one of ours: its own words, not pydantic's "Value error, ...".
            msg, where = cause.message, cause.field or where
        parts.append(f"{where}: {msg}" if where else msg)
    return "; ".join(parts) or "invalid request"


@contextmanager
def classified() -> Iterator[None]:
    """Inside the block, a library failure leaves as its workflow kind (the original chained
    as ``__cause__``); a bug leaves as it is, with its traceback."""
    try:
        yield
    except Exception as exc:
        known = classify(exc)
        if known is None or known is exc:
            raise
        raise known from exc
