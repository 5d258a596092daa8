"""The service's guards in process: keys, the index allow-list, body and Host limits.

No cluster: ``connect`` is a scripted double that records whether the service reached for
the cluster at all, which is the point of the allow-list (a refused index costs the cluster
nothing)."""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sira_seek.api_keys import key_matches, read_api_keys
from sira_seek.service.app import ServiceConfig, create_app
from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.validation import NOT_BLANK_PATTERN, is_blank, query_text

KEY = "k-" + "x" * 30


class ClusterReachDouble:
    """Stands in for ``connect``: counts the calls, and fails them (no cluster here)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> object:
        self.calls += 1
        raise AssertionError("the service reached for the cluster")


@pytest.fixture
def reach() -> ClusterReachDouble:
    return ClusterReachDouble()


@pytest.fixture
def client(reach: ClusterReachDouble) -> TestClient:
    config = ServiceConfig(
        indexes=("wikimh", "docs"),
        api_keys=(KEY,),
        max_body_bytes=64 * 1024,
        allowed_hosts=("127.0.0.1", "testserver"),
    )
    return TestClient(create_app(reach, config))


AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong-key-wrong-key-wrong"}, {"Authorization": KEY}],
)
def test_a_missing_or_wrong_key_is_401_and_never_echoed(
    client: TestClient, reach: ClusterReachDouble, headers: dict[str, str]
) -> None:
    res = client.post("/search", json={"query": "x"}, headers=headers)
    assert res.status_code == 401 and res.headers["www-authenticate"].startswith("Bearer")
    assert KEY not in res.text and "wrong-key" not in res.text
    assert reach.calls == 0


def test_the_openapi_document_needs_no_key(client: TestClient) -> None:
    assert client.get("/openapi.json").status_code == 200


@pytest.mark.parametrize(
    ("index", "status", "says"),
    [
        ("other", 403, "does not serve 'other'"),
        (".kibana", 403, "does not serve"),  # no hint whether a system index exists
        ("wikimh/_refresh", 422, "not an index name"),
        ("_cluster/state", 422, "not an index name"),
        ("wiki*", 422, "not an index name"),
        ("a,b", 422, "not an index name"),
        ("WikiMH", 422, "lowercase"),
    ],
)
def test_indexes_outside_the_list_or_malformed_never_reach_the_cluster(
    client: TestClient, reach: ClusterReachDouble, index: str, status: int, says: str
) -> None:
    for route, body in (("/search", {"query": "x"}), ("/ask", {"question": "x"})):
        res = client.post(route, json={**body, "index": index}, headers=AUTH)
        assert res.status_code == status, (route, res.text)
        assert says in res.json()["detail"] and res.json()["errors"] == []
    assert reach.calls == 0


def test_a_body_over_the_limit_is_413_before_it_is_read(
    client: TestClient, reach: ClusterReachDouble
) -> None:
    big = b'{"query": "' + b"x" * (65 * 1024) + b'"}'
    res = client.post("/search", content=big, headers={**AUTH, "content-type": "application/json"})
    assert res.status_code == 413 and "larger than 65,536 bytes" in res.json()["detail"]
    assert reach.calls == 0


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("/search", b'{"query": "x", "index": "a\\ud800"}', "body.index"),
        ("/ask", b'{"question": "x", "index": "a\\ud800"}', "body.index"),
        ("/search", b'{"query": "x\\udfff"}', "body.query"),
        ("/search", b'{"query": "x", "expansions": ["ok", "b\\ud800"]}', "body.expansions.1"),
        ("/ask", b'{"question": "\\ud800?"}', "body.question"),
    ],
)
def test_a_lone_surrogate_is_422_naming_its_field(
    client: TestClient, reach: ClusterReachDouble, route: str, body: bytes, field: str
) -> None:
    headers = {**AUTH, "content-type": "application/json"}
    res = client.post(route, content=body, headers=headers)
    assert res.status_code == 422, res.text
    assert (
        res.json()["detail"]
        == f"{field}: not valid Unicode text (a lone surrogate such as \\ud800)"
    )
    assert reach.calls == 0


def test_vanilla_llm_checks_the_allow_list_too(
    client: TestClient, reach: ClusterReachDouble
) -> None:
    body = {"question": "x", "method": "vanilla-llm", "index": "other"}
    res = client.post("/ask", json=body, headers=AUTH)
    assert res.status_code == 403 and "does not serve 'other'" in res.json()["detail"]
    assert reach.calls == 0


def test_a_foreign_host_header_is_refused(client: TestClient) -> None:
    res = client.get("/openapi.json", headers={"host": "rebound.attacker.example"})
    assert res.status_code == 400


def test_keys_file_and_environment_are_merged_and_short_keys_refused(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text(f"# service keys\n{KEY}\n\n", encoding="utf-8")
    other = "y" * 24
    assert read_api_keys(keys, f" {other} ,{KEY}") == (KEY, other)
    with pytest.raises(ValueError, match="shorter than 16"):
        read_api_keys(None, "short")
    assert key_matches(other, (KEY, other)) and not key_matches(other[:-1], (KEY, other))


@pytest.mark.parametrize("text", ["", "\n\n", "# keys go here\n  \n# none yet\n"])
def test_a_keys_file_without_a_key_is_refused_naming_the_file(tmp_path: Path, text: str) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=f"{re.escape(str(keys))} holds no API key"):
        read_api_keys(keys, None)


@pytest.mark.parametrize("value", ["", " , ,"])
def test_a_keys_variable_set_without_a_key_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="SIRA_SEEK_SERVE_API_KEYS is set but holds no API key"):
        read_api_keys(None, value)


def test_a_keys_file_others_may_read_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text(KEY + "\n", encoding="utf-8")
    keys.chmod(0o600)
    with caplog.at_level("WARNING", logger="sira_seek.api_keys"):
        assert read_api_keys(keys, None) == (KEY,)
    assert caplog.records == []
    keys.chmod(0o640)
    with caplog.at_level("WARNING", logger="sira_seek.api_keys"):
        assert read_api_keys(keys, None) == (KEY,)
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert f"{keys} may be read by group or others (mode 0640)" in caplog.text
    assert KEY not in caplog.text


def test_serve_with_an_empty_keys_file_exits_2_naming_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sira_seek.cli.main import cli

    keys = tmp_path / "keys.txt"
    keys.write_text("# nothing\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["serve", "--port", "0", "--api-keys-file", str(keys)])
    assert result.exit_code == 2, result.output
    assert f"{keys} holds no API key" in result.output


def test_a_chunked_body_over_the_limit_is_413_counted_while_streaming(
    client: TestClient, reach: ClusterReachDouble
) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"query": "'
        for _ in range(40):  # 40 x 4 KiB = 160 KiB against a 64 KiB limit
            yield b"x" * 4096
        yield b'"}'

    headers = {**AUTH, "content-type": "application/json"}
    res = client.post("/search", content=chunks(), headers=headers)
    assert res.status_code == 413, res.text
    assert "larger than 65,536 bytes" in res.json()["detail"]
    assert reach.calls == 0
    # Under the limit, the same streamed body is read and judged as JSON (403: index).
    small = iter([b'{"query": "x", ', b'"index": "other"}'])
    assert client.post("/search", content=small, headers=headers).status_code == 403


def test_metrics_count_requests_by_route_and_status_behind_the_key(client: TestClient) -> None:
    client.post("/search", json={"query": "x", "index": "other"}, headers=AUTH)  # 403
    client.post("/search", json={"query": "x"})  # 401
    client.get("/no/such/path", headers=AUTH)  # 404, counted as "other"
    assert client.get("/metrics").status_code == 401
    text = client.get("/metrics", headers=AUTH).text
    assert 'sira_seek_http_requests_total{method="POST",route="/search",status="403"} 1.0' in text
    assert 'sira_seek_http_requests_total{method="POST",route="/search",status="401"} 1.0' in text
    assert 'sira_seek_http_requests_total{method="GET",route="other",status="404"} 1.0' in text
    assert "sira_seek_http_request_seconds_bucket" in text and "/no/such/path" not in text


def test_the_docs_pages_load_their_assets_from_the_service_not_a_cdn(client: TestClient) -> None:
    for page in ("/docs", "/redoc"):
        html = client.get(page).text
        assert "cdn." not in html and "googleapis" not in html and "unpkg" not in html
    html = client.get("/docs").text
    script = html.split('src="', 1)[1].split('"', 1)[0]
    assert script.startswith("/static-offline-docs/")
    asset = client.get(script)
    assert asset.status_code == 200 and len(asset.content) > 100_000  # the bundle itself


def test_every_answer_carries_a_request_id_the_caller_may_choose(client: TestClient) -> None:
    mine = client.get("/openapi.json", headers={"X-Request-ID": "trace-42.a_b"})
    assert mine.headers["x-request-id"] == "trace-42.a_b"
    refused = client.post("/search", json={"query": "x"})  # 401, still tagged
    fresh = refused.headers["x-request-id"]
    assert len(fresh) == 32 and fresh != "trace-42.a_b"
    odd = client.get("/openapi.json", headers={"X-Request-ID": "no spaces\nor newlines"})
    assert odd.headers["x-request-id"] != "no spaces\nor newlines"


def test_json_log_lines_carry_the_access_fields_and_the_request_id() -> None:
    import json
    import logging

    from sira_seek.service.logs import JsonFormatter

    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "POST", "/search", "1.1", 403), None,
    )  # fmt: skip
    record.request_id = "r-1"
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == "r-1" and line["status"] == 403
    assert (line["method"], line["path"], line["client"]) == ("POST", "/search", "127.0.0.1:5000")
    error = logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, "boom %s", ("x",), None)
    assert json.loads(JsonFormatter().format(error))["message"] == "boom x"


def _blank_characters() -> list[str]:
    """Python's whitespace and ECMA-262's ``\\s`` (WhiteSpace: TAB VT FF SP NBSP ZWNBSP and
    every Zs; LineTerminator: LF CR LS PS), from their definitions, not from our pattern."""
    python = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    ecma = {"\t", "\v", "\f", " ", "\xa0", "\ufeff", "\n", "\r", "\u2028", "\u2029"}
    ecma |= {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Zs"}
    return sorted(python | ecma)


def test_blank_means_the_same_to_the_schema_the_service_and_every_front_end(
    client: TestClient, reach: ClusterReachDouble
) -> None:
    """schemathesis found ``"\\x1e\\x1e\\x1e"``: valid for the old pattern ``\\S``, blank to
    ``str.strip``, so a schema-valid request was refused. Now one pattern decides."""
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    assert schema["SearchBody"]["properties"]["query"]["pattern"] == NOT_BLANK_PATTERN
    assert schema["AskBody"]["properties"]["question"]["pattern"] == NOT_BLANK_PATTERN
    blanks = _blank_characters()
    assert "\x1e" in blanks and "\ufeff" in blanks and "\x85" in blanks
    for char in blanks:
        assert is_blank(char * 3) and re.search(NOT_BLANK_PATTERN, char) is None, hex(ord(char))
        with pytest.raises(InvalidInput, match="is blank"):
            query_text(char * 3)
    for route, field in (("/search", "query"), ("/ask", "question")):
        for text in ("\x1e\x1e\x1e", "\ufeff", " \x85\u3000"):
            res = client.post(route, json={field: text}, headers=AUTH)
            assert res.status_code == 422 and "blank" in res.json()["detail"], (route, text)
    # Not blank: a zero-width space and other format characters are neither Python's nor
    # ECMA's whitespace; a word with blanks around it is a query.
    for text in ("\u200b", "\x00", "\x1e magazine \x1e"):
        assert not is_blank(text) and query_text(text) == text
    assert reach.calls == 0
