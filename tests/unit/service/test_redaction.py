"""The secret mask of ``sira-seek serve``: secrets from the configuration and from URLs vanish
from messages and log lines, while the log lines themselves stay intact (uvicorn's access
formatter unpacks its arguments, so the filter must keep them a tuple)."""

from __future__ import annotations

import io
import logging

from uvicorn.logging import AccessFormatter

from sira_seek.service.redaction import MASK, RedactingFilter, Redactor

SECRET = "s3cr3t-p@ss"


def _handler(redact: Redactor, formatter: logging.Formatter) -> tuple[logging.Handler, io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    handler.addFilter(RedactingFilter(redact))
    return handler, out


def test_secrets_of_the_configuration_and_of_the_url_are_masked() -> None:
    redact = Redactor.for_cluster(
        url="https://admin:url%2Fpass@a:9200,https://b:9200", password=SECRET, api_key="KEY123"
    )
    text = f"refused {SECRET} and KEY123 at https://admin:url%2Fpass@a:9200 and url/pass"
    masked = redact(text)
    assert SECRET not in masked and "KEY123" not in masked and "url%2Fpass" not in masked
    assert "url/pass" not in masked  # the decoded spelling too
    assert f"https://{MASK}@a:9200" in masked
    assert redact("nothing secret here") == "nothing secret here"


def test_a_longer_secret_containing_a_shorter_one_is_masked_whole() -> None:
    redact = Redactor([SECRET, "p@ss"])
    assert redact(f"x {SECRET} y") == f"x {MASK} y"


def test_log_arguments_and_tracebacks_are_masked() -> None:
    handler, out = _handler(Redactor([SECRET]), logging.Formatter("%(message)s"))
    log = logging.getLogger("test.redaction.plain")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("cluster said %s (%d tries)", f"bad password {SECRET}", 3)
        try:
            raise RuntimeError(f"login with {SECRET} failed")
        except RuntimeError:
            log.exception("request failed")
    finally:
        log.removeHandler(handler)
    text = out.getvalue()
    assert SECRET not in text
    assert f"cluster said bad password {MASK} (3 tries)" in text
    assert "RuntimeError: login with *** failed" in text


def test_uvicorn_access_lines_survive_the_filter() -> None:
    handler, out = _handler(
        Redactor([SECRET]), AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s')
    )
    log = logging.getLogger("test.redaction.access")
    log.setLevel(logging.INFO)
    log.addHandler(handler)
    log.propagate = False
    try:
        args = ("127.0.0.1:5000", "POST", f"/search?token={SECRET}", "1.1", 200)
        log.info('%s - "%s %s HTTP/%s" %d', *args)
    finally:
        log.removeHandler(handler)
    line = out.getvalue().strip()
    assert line.startswith('127.0.0.1:5000 - "POST /search?token=*** HTTP/1.1" 200'), line
