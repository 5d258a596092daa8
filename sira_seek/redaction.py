"""The one secret mask of every front end: what the CLI prints, what the HTTP service and the
MCP server answer, what reports and logs keep.

Engine and LLM errors are written never to carry credentials, but an answer goes to a stranger
(an HTTP caller, an agent's context and transcripts) and a log outlives the process, so no
front end relies on that alone: each passes its output through one ``Redactor``. It masks,
with ``***``,

- by their shape, in any text: the user-info of a URL (``scheme://user:pass@``), an
  ``Authorization`` value (``Bearer X``, ``ApiKey X``, ``Basic X``) and the value of a secret
  query parameter (``?api_key=X``, ``&token=X``, AWS signatures);
- by value, what was configured (``Redactor.configured``): the cluster's password, API key and
  Elastic Cloud id, the password and secret parameters spelled inside the cluster URL or an LLM
  spec (``openai:http://u:p@host/v1#m``), the LLM API key, the service's own API keys, from
  the arguments given and from the ``SIRA_SEEK_*`` variables the settings read - each also
  URL-encoded, URL-decoded, JSON-escaped and HTML-escaped.

The files the library writes (predictions, traces, checkpoints, run records, HTML reports,
``sira-sync --report``) go through ``write_masked_text`` or ``output_redactor``: under a
command, the command's own ``Redactor`` (``redacted_output`` makes it the active one); from
the library alone, ``Redactor.configured()`` (the ``SIRA_SEEK_*`` variables and every secret
by its shape: a password passed in code is not known there). A traceback the command line
lets through (a bug, or ``--debug``) is printed masked too (``mask_uncaught``).

Only the standard library: every layer may import it (the CLI at start-up included).
"""

from __future__ import annotations

import html
import io
import json
import logging
import os
import re
import sys
import traceback
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

MASK = "***"

MIN_SECRET_CHARS = 3
"""Shorter configured values are not masked by value: masking every ``ab`` in a message would
hide the message, not the secret (their URL or header spelling is still masked by shape)."""

SECRET_PARAMS = (
    "api_key",
    "api-key",
    "apikey",
    "key",
    "token",
    "access_token",
    "auth",
    "password",
    "passwd",
    "pwd",
    "secret",
    "client_secret",
    "signature",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
)
"""Query parameters whose value is a credential."""

SECRET_ENV = (
    "SIRA_SEEK_URL",
    "SIRA_SEEK_PASSWORD",
    "SIRA_SEEK_API_KEY",
    "SIRA_SEEK_CLOUD_ID",
    "SIRA_SEEK_LLM",
    "SIRA_SEEK_LLM_BACKEND",
    "SIRA_SEEK_LLM_API_KEY",
    "SIRA_SEEK_SERVE_API_KEYS",
)
"""The variables that may hold a credential or a URL carrying one: the cluster's
(``ClusterSettings``), the LLM's (``--llm``, ``LLMSettings``), the service's keys."""

_SCHEME = r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)"
_USERINFO = re.compile(_SCHEME + r"[^/?#\s,'\"<>]+@")
_AUTH_HEADER = re.compile(r"(?P<kind>\b(?:Bearer|ApiKey|Basic)\s+)[A-Za-z0-9._~+/=:-]+", re.I)
_PARAM = re.compile(
    r"(?P<name>[?&;](?:" + "|".join(re.escape(p) for p in SECRET_PARAMS) + r")=)[^&#\s'\"<>]+",
    re.I,
)
_URL = re.compile(_SCHEME + r"[^\s'\"<>]+")


def _spellings(secret: str) -> set[str]:
    """A secret as it may appear in a message: itself, URL-encoded, URL-decoded, JSON-escaped,
    HTML-escaped (a report)."""
    forms = {secret, quote(secret, safe=""), quote_plus(secret, safe=""), unquote(secret)}
    forms |= {html.escape(f) for f in list(forms)}
    forms |= {json.dumps(f, ensure_ascii=True)[1:-1] for f in list(forms)}
    forms |= {json.dumps(f, ensure_ascii=False)[1:-1] for f in list(forms)}
    return {f for f in forms if len(f) >= MIN_SECRET_CHARS}


def secrets_in(text: str | None) -> list[str]:
    """The credentials spelled inside the URLs of ``text`` (a cluster URL list, an LLM spec):
    each user-info password and each secret query parameter's value."""
    found: list[str] = []
    for match in _URL.finditer(text or ""):
        for url in match.group(0).split(","):
            try:
                parsed = urlsplit(url.strip())
                password = parsed.password
            except ValueError:
                continue
            if password:
                found.append(password)
            for name, value in parse_qsl(parsed.query, keep_blank_values=False):
                if name.lower() in SECRET_PARAMS:
                    found.append(value)
    return found


def _text(value: object) -> str | None:
    """A configured value as text: a pydantic ``SecretStr`` unwrapped, anything else by str."""
    if value is None or isinstance(value, bool):
        return None
    reveal = getattr(value, "get_secret_value", None)
    return str(reveal() if callable(reveal) else value)


class Redactor:
    """Masks the secrets it was given, and any secret spelled by its shape, with ``***``.

    ``Redactor()`` masks by shape only: what any code may use without knowing the
    configuration (reports, the library's messages)."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        found = {
            form for s in secrets if s and len(s) >= MIN_SECRET_CHARS for form in _spellings(s)
        }
        # The longest first, so a secret containing another is masked whole.
        self._secrets = sorted(found, key=len, reverse=True)

    @property
    def secrets(self) -> tuple[str, ...]:
        """The values masked (each spelling), longest first."""
        return tuple(self._secrets)

    @classmethod
    def for_cluster(
        cls,
        *,
        url: str | None,
        password: object = None,
        api_key: object = None,
        cloud_id: str | None = None,
    ) -> Redactor:
        """The secrets of one cluster configuration, including those spelled inside the URL."""
        return cls.configured(
            url=url, password=password, api_key=api_key, cloud_id=cloud_id, environ={}
        )

    @classmethod
    def configured(
        cls,
        *,
        url: str | None = None,
        password: object = None,
        api_key: object = None,
        cloud_id: str | None = None,
        llm: str | None = None,
        llm_api_key: object = None,
        keys: Iterable[str] = (),
        environ: Mapping[str, str] | None = None,
    ) -> Redactor:
        """Every secret a front end was configured with: the cluster's (URL, password, API key,
        Elastic Cloud id), the LLM's (its spec, its API key), the service's keys, and the same
        read from the ``SIRA_SEEK_*`` variables (``SECRET_ENV``; ``environ`` defaults to the
        process's, ``{}`` for none)."""
        env = os.environ if environ is None else environ
        values = [password, api_key, cloud_id, llm_api_key, *keys]
        values += [env.get(n) for n in ("SIRA_SEEK_PASSWORD", "SIRA_SEEK_API_KEY")]
        values += [env.get("SIRA_SEEK_CLOUD_ID"), env.get("SIRA_SEEK_LLM_API_KEY")]
        values += env.get("SIRA_SEEK_SERVE_API_KEYS", "").split(",")
        secrets = [text.strip() for v in values if (text := _text(v))]
        for cloud in (cloud_id, env.get("SIRA_SEEK_CLOUD_ID")):
            # The id's encoded part alone (NAME:BASE64), as a client may quote it.
            secrets.append(cloud.partition(":")[2] if cloud else "")
        for text in (url, llm, *(env.get(name) for name in SECRET_ENV)):
            secrets += secrets_in(text)
        return cls(secrets)

    def merged(self, other: Redactor) -> Redactor:
        """One redactor masking the secrets of both."""
        merged = Redactor()
        merged._secrets = sorted(set(self._secrets) | set(other._secrets), key=len, reverse=True)
        return merged

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        text = _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
        text = _AUTH_HEADER.sub(lambda m: f"{m.group('kind')}{MASK}", text)
        return _PARAM.sub(lambda m: f"{m.group('name')}{MASK}", text)

    def json(self, value: Any) -> Any:
        """A JSON-like value (dicts, lists, strings) with every string masked."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {k: self.json(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.json(v) for v in value]
        return value


class RedactingFilter(logging.Filter):
    """A handler filter that masks secrets in the formatted message (arguments included) and
    in the traceback text, so no handler ever writes them."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self.redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        # Each piece is masked in place, keeping ``args`` a tuple: formatters such as
        # uvicorn's access formatter unpack the arguments themselves.
        if isinstance(record.msg, str):
            record.msg = self.redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(self._mask(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: self._mask(v) for k, v in record.args.items()}
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True

    def _mask(self, value: object) -> object:
        """A string argument masked; anything else as its masked text if that differs (an
        exception or URL object carrying a secret), else unchanged (``%d`` still works)."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, int | float) or value is None:
            return value
        text = str(value)
        masked = self.redact(text)
        return masked if masked != text else value


def redact_log_handlers(redact: Redactor) -> None:
    """Every handler in the process masks the secrets, whatever logger a record comes from
    (Python's last-resort handler included, which writes a warning when nothing is
    configured). A handler already masking gets the secrets added: called again with more
    secrets (a second command in one process), it masks both."""
    known = logging.Logger.manager.loggerDict.values()
    loggers = [logging.getLogger(), *(x for x in known if isinstance(x, logging.Logger))]
    handlers = {h for logger in loggers for h in logger.handlers}
    if logging.lastResort is not None:
        handlers.add(logging.lastResort)
    for handler in handlers:
        present = [f for f in handler.filters if isinstance(f, RedactingFilter)]
        if present:
            for existing in present:
                existing.redact = existing.redact.merged(redact)
        else:
            handler.addFilter(RedactingFilter(redact))


class RedactingStream(io.TextIOBase):
    """A text stream that writes everything masked to the stream it wraps (a command's
    stdout or stderr); everything else (``fileno``, ``isatty``, ``buffer``) is the wrapped
    stream's."""

    def __init__(self, stream: TextIO, redact: Redactor) -> None:
        super().__init__()
        self._stream = stream
        self._redact = redact

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            # click tells a binary stream from a text one by writing b"" to it.
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._stream.write(self._redact(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "errors", None) or "strict"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


_ACTIVE: list[Redactor] = []
"""The redactors of the ``redacted_output`` blocks running (innermost last): process-wide, as
the streams they replace are, so a writer on a worker thread masks as its command does."""


@contextmanager
def redacted_output(redact: Redactor) -> Iterator[None]:
    """While it lasts, whatever the process writes to ``sys.stdout`` and ``sys.stderr`` (the
    log lines of handlers writing there included) is masked, every log handler masks too,
    and ``redact`` is what the files written meanwhile are masked with (``output_redactor``)."""
    redact_log_handlers(redact)
    out, err = sys.stdout, sys.stderr
    sys.stdout = RedactingStream(out, redact)  # type: ignore[assignment]
    sys.stderr = RedactingStream(err, redact)  # type: ignore[assignment]
    _ACTIVE.append(redact)
    try:
        yield
    finally:
        _ACTIVE.remove(redact)
        sys.stdout, sys.stderr = out, err


def output_redactor() -> Redactor:
    """What a file the library writes is masked with: the running command's ``Redactor``
    (built from its configured sources, ``redacted_output``), else ``Redactor.configured()``
    (the ``SIRA_SEEK_*`` variables, and every secret by its shape).

    Files carry engine and LLM error text (a failed question's ``error``, a step's error, a
    failed document's raw answer) and settings (an LLM spec), which may name a URL with its
    password; they outlive the run and get shared, as logs do."""
    return _ACTIVE[-1] if _ACTIVE else Redactor.configured()


def write_masked_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8) masked by ``output_redactor``: the one way the
    library writes a whole output file."""
    Path(path).write_text(output_redactor()(text), encoding="utf-8")


def mask_uncaught(redact: Redactor) -> None:
    """The traceback of an exception no one catches (a bug, or a known failure under
    ``--debug``) is printed masked by ``redact``, as everything else the command wrote: the
    command line calls this as such an exception leaves a command, so Python's last handler
    (``sys.excepthook``) prints it after the command's masked streams are gone."""
    previous = sys.excepthook
    if isinstance(previous, _MaskedExcepthook):
        redact = previous.redact.merged(redact)
        previous = previous.previous
    sys.excepthook = _MaskedExcepthook(redact, previous)


class _MaskedExcepthook:
    """``sys.excepthook`` printing the traceback masked (what Python's default prints)."""

    def __init__(self, redact: Redactor, previous: Any) -> None:
        self.redact = redact
        self.previous = previous

    def __call__(
        self, kind: type[BaseException], value: BaseException, tb: TracebackType | None
    ) -> None:
        text = "".join(traceback.format_exception(kind, value, tb))
        sys.stderr.write(self.redact(text))
        sys.stderr.flush()
