"""The one secret mask of every front end (sira_seek.redaction): secrets of the configuration,
of URLs and LLM specs, headers and query parameters vanish from text, log lines and output
streams, while the log lines themselves stay intact (uvicorn's access formatter unpacks its
arguments, so the filter must keep them a tuple)."""

from __future__ import annotations

import io
import logging

import pytest
from uvicorn.logging import AccessFormatter

from sira_seek.redaction import MASK, RedactingFilter, Redactor, redacted_output

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


def test_every_kind_of_secret_is_masked_by_its_shape_without_configuration() -> None:
    redact = Redactor()
    text = (
        "at http://elastic:pw1@a:9200/x, openai:https://u:pw2@llm/v1#m, "
        "headers Authorization: Bearer tok3n.abc, ApiKey aWQ6a2V5, basic dXNlcjpwdw==, "
        "url https://h/v1?api_key=pw4&model=m and https://h/?x=1&token=pw5#frag"
    )
    masked = redact(text)
    for leaked in ("pw1", "pw2", "tok3n.abc", "aWQ6a2V5", "dXNlcjpwdw==", "pw4", "pw5"):
        assert leaked not in masked, (leaked, masked)
    assert f"http://{MASK}@a:9200/x" in masked
    assert f"openai:https://{MASK}@llm/v1#m" in masked
    assert f"Bearer {MASK}" in masked and f"ApiKey {MASK}" in masked
    assert "?api_key=***&model=m" in masked  # other parameters stay readable
    assert redact("the elasticsearch cluster is yellow") == "the elasticsearch cluster is yellow"


def test_several_urls_in_one_text_each_lose_their_user_info() -> None:
    masked = Redactor()("nodes http://a:x1@h1:9200,http://b:x2@h2:9200 and 'https://c:x3@h3'")
    assert "x1" not in masked and "x2" not in masked and "x3" not in masked
    assert masked.count(f"://{MASK}@") == 3
    assert "h1:9200" in masked and "h2:9200" in masked  # the hosts stay: they help diagnose


def test_configured_secrets_from_every_source_in_every_spelling() -> None:
    cloud = "prod:" + "ZXhhbXBsZS5jb20kYWJjZGVmJGdoaWprbA=="
    redact = Redactor.configured(
        url="http://admin:p%40ss%2Fw0rd@a:9200",
        password='pass w0rd"q',
        api_key="bXlrZXk6c2VjcmV0",
        cloud_id=cloud,
        llm="openai:http://h/v1?api_key=llmk3y#m",
        llm_api_key="sk-llm-abcdef",
        keys=("service-key-123456",),
        environ={"SIRA_SEEK_PASSWORD": "envpw", "SIRA_SEEK_LLM_API_KEY": "sk-env-key"},
    )
    text = (
        'p@ss/w0rd p%40ss%2Fw0rd pass w0rd"q pass%20w0rd%22q pass w0rd\\"q '
        f"bXlrZXk6c2VjcmV0 {cloud} {cloud.partition(':')[2]} llmk3y sk-llm-abcdef "
        "service-key-123456 envpw sk-env-key"
    )
    masked = redact(text)
    assert set(masked.split(" ")) <= {MASK}, masked


def test_the_variables_the_settings_read_are_sources_too() -> None:
    environ = {
        "SIRA_SEEK_URL": "https://u:urlpw99@a:9200",
        "SIRA_SEEK_API_KEY": "envapikey",
        "SIRA_SEEK_CLOUD_ID": "c:Y2xvdWQkaWQ=",
        "SIRA_SEEK_LLM": "openai:http://u:llmpw77@h/v1#m",
        "SIRA_SEEK_SERVE_API_KEYS": "k1k1k1,k2k2k2",
    }
    masked = Redactor.configured(environ=environ)(
        "urlpw99 envapikey c:Y2xvdWQkaWQ= llmpw77 k1k1k1 k2k2k2"
    )
    assert masked == " ".join([MASK] * 6)


def test_output_streams_are_masked_while_the_context_lasts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import sys

    with redacted_output(Redactor([SECRET])):
        print(f"result {SECRET}")
        sys.stderr.write(f"error http://u:{SECRET}@h\n")
        logging.getLogger("test.redaction.stream").warning("saw %s", SECRET)
    print(f"after {SECRET}")  # the streams are the process's own again
    out, err = capsys.readouterr()
    assert out == f"result {MASK}\nafter {SECRET}\n"
    assert SECRET not in err and f"http://{MASK}@h" in err
