"""Keep the secrets the server was started with out of every response and log line.

The engine errors are written never to carry credentials, but a server answers strangers and
writes logs that outlive it, so it does not rely on that alone: every error detail it sends
and every log record it emits passes through one ``Redactor`` that knows the configured
password, API key and any ``user:password@`` part of the cluster URL.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

MASK = "***"

_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")


class Redactor:
    """Replaces each known secret (and any ``scheme://user:pass@`` part) with ``***``."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        found = {s for s in secrets if s and len(s) >= 3}
        # The longest first, so a secret containing another is masked whole.
        self._secrets = sorted(found, key=len, reverse=True)

    @property
    def secrets(self) -> tuple[str, ...]:
        """The secrets masked, longest first."""
        return tuple(self._secrets)

    @classmethod
    def for_cluster(
        cls, *, url: str | None, password: str | None, api_key: str | None
    ) -> Redactor:
        """The secrets of one cluster configuration, including those spelled inside the URL."""
        secrets: list[str | None] = [password, api_key]
        for part in (url or "").split(","):
            parsed = urlsplit(part.strip())
            if parsed.password:
                secrets += [parsed.password, unquote(parsed.password)]
        return cls(secrets)

    def __call__(self, text: str) -> str:
        text = _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text


class RedactingFilter(logging.Filter):
    """A handler filter that masks secrets in the formatted message (arguments included) and
    in the traceback text, so no handler ever writes them."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self._redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        # Each piece is masked in place, keeping ``args`` a tuple: formatters such as
        # uvicorn's access formatter unpack the arguments themselves.
        if isinstance(record.msg, str):
            record.msg = self._redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(self._mask(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: self._mask(v) for k, v in record.args.items()}
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._redact(record.exc_text)
        return True

    def _mask(self, value: object) -> object:
        """A string argument masked; anything else as its masked text if that differs (an
        exception or URL object carrying a secret), else unchanged (``%d`` still works)."""
        if isinstance(value, str):
            return self._redact(value)
        if isinstance(value, int | float) or value is None:
            return value
        text = str(value)
        masked = self._redact(text)
        return masked if masked != text else value
