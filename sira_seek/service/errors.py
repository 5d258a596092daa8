"""Where a failure goes in ``sira-seek serve``: one status and one readable line per failure,
mapped once here (bad bodies ``422``, an unknown index ``404``, the cluster or LLM
unreachable ``503``), every message redacted before it leaves."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from sira_seek.backend import EngineError, ScanContextLostError
from sira_seek.llm.errors import LLMCallError
from sira_seek.redaction import Redactor
from sira_seek.sira.term_vectors import TermStatisticsError
from sira_seek.workflows.errors import (
    Conflict,
    InvalidInput,
    NotAllowed,
    NotFound,
    Unavailable,
    WorkflowError,
    classify,
)

UNAVAILABLE_ERRORS: tuple[type[BaseException], ...] = (
    EngineError,
    TermStatisticsError,
    ScanContextLostError,
    LLMCallError,
)
"""The cluster or the LLM refused or cannot be reached: ``503`` with the reason."""


class ServiceError(Exception):
    """A failure with its HTTP status and a message for the caller (already redacted)."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers


_STATUS = {InvalidInput: 422, NotAllowed: 403, NotFound: 404, Conflict: 409, Unavailable: 503}
"""The workflows' error kinds as HTTP statuses (the same table as the CLI's exit codes)."""


def http_error(exc: BaseException, redact: Redactor) -> ServiceError:
    """Where a library failure goes, by the workflows' one classification: 422 for a bad
    request, 403 for what this service does not serve, 404 for a missing index, 503 for the
    cluster or LLM. Unknown failures are not mapped (500, logged)."""
    if isinstance(exc, ServiceError):
        return ServiceError(exc.status, redact(exc.detail))  # made deeper, maybe unmasked
    known = classify(exc)
    if known is None:
        raise exc
    status = next(code for kind, code in _STATUS.items() if isinstance(known, kind))
    return ServiceError(status, redact(str(known)))


def _reason(error: Any) -> str:
    """pydantic's reason for one problem, plainer where its words mislead."""
    if error.get("type") == "string_unicode":
        return "not valid Unicode text (a lone surrogate such as \\ud800)"
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, WorkflowError):
        # A workflow check raised it (a blank query): its own words, as every front end says
        # them, not pydantic's "Value error, ...".
        return cause.message
    return str(error.get("msg", ""))


def _validation_message(errors: list[Any]) -> str:
    """``body.query: Field required; body.k: Input should be greater than or equal to 1``."""
    parts = []
    for err in errors:
        where = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{where}: {_reason(err) or 'invalid'}")
    return "; ".join(parts) or "invalid request"


def install_error_handlers(app: FastAPI, redact: Redactor) -> None:
    """Every error answer in the one shape (``ErrorBody``), redacted: FastAPI's own (a body
    it cannot decode, a route it does not have), a ``ServiceError``, a body that fails
    validation."""

    @app.exception_handler(StarletteHTTPException)
    async def _http_exception(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # FastAPI answers a body it cannot decode (not UTF-8, not JSON) with a bare 400; it
        # is a body that fails validation like any other: 422, in the one error shape.
        status = 422 if exc.status_code == 400 else exc.status_code
        detail = "body: not valid JSON" if exc.status_code == 400 else redact(str(exc.detail))
        headers = getattr(exc, "headers", None)
        return JSONResponse(
            status_code=status, content={"detail": detail, "errors": []}, headers=headers
        )

    @app.exception_handler(ServiceError)
    async def _service_error(_request: Request, exc: ServiceError) -> JSONResponse:
        return JSONResponse(
            status_code=exc.status,
            content={"detail": exc.detail, "errors": []},
            headers=exc.headers,
        )

    @app.exception_handler(RequestValidationError)
    async def _bad_body(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's default echoes the rejected input back; a clear line per problem is
        # enough, and never repeats what the caller sent.
        errors = [{"loc": list(e.get("loc", ())), "msg": _reason(e)} for e in exc.errors()]
        message = redact(_validation_message(errors))
        return JSONResponse(status_code=422, content={"detail": message, "errors": errors})
