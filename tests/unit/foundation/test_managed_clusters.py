"""Managed clusters (issue #23): AWS SigV4 for Amazon OpenSearch Service / Serverless and
Elastic Cloud ids, without an engine.

- The options are checked once, in ``ClusterSettings``: every conflict is refused there,
  naming its flags, and the command line says so in one line (exit 2).
- Signing is checked on the wire: a local HTTP server (no engine, no engine JSON: it answers
  401 with an empty body) records what arrives, and the signature is recomputed from the
  request as received, as AWS would.
- An Elastic Cloud id resolves to the URL the Elasticsearch client itself connects to.
"""

from __future__ import annotations

import base64
import hashlib
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

import sira_seek
from sira_seek.backend import ClusterInfo
from sira_seek.cli.main import cli
from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines import detect, registry
from sira_seek.esplugin.engines.detect import detect_cluster
from sira_seek.esplugin.engines.errors import (
    EngineRequestError,
    MissingExtraError,
    SiraSeekEngineError,
)
from sira_seek.esplugin.engines.managed import (
    SERVERLESS_VERSION,
    aws_credentials,
    cloud_url,
    endpoint_urls,
)
from sira_seek.esplugin.engines.opensearch_backend import OpenSearchBackend
from sira_seek.workflows.errors import classify

KEY_ID = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "session-token-example"
REGION = "eu-west-1"


def cloud_id(decoded: str, name: str = "my-deployment") -> str:
    return f"{name}:{base64.b64encode(decoded.encode()).decode()}"


CLOUD_ID = cloud_id("us-central1.gcp.cloud.es.io$abc123$def456")


# -- the settings: one place decides which options go together -------------------------------


@pytest.mark.parametrize(
    ("values", "flags"),
    [
        ({"url": "https://x:9200", "cloud_id": CLOUD_ID}, ["--cloud-id", "--url"]),
        ({"cloud_id": CLOUD_ID, "engine": "opensearch"}, ["--cloud-id", "--engine opensearch"]),
        (
            {"url": "https://x", "aws_region": REGION, "engine": "elasticsearch"},
            ["--aws-region", "--engine elasticsearch"],
        ),
        ({"cloud_id": CLOUD_ID, "aws_region": REGION}, ["--aws-region", "--cloud-id"]),
        ({"url": "https://x", "aws_region": REGION, "api_key": "k"}, ["--aws-region", "--api-key"]),
        (
            {"url": "https://x", "aws_region": REGION, "username": "u"},
            ["--aws-region", "--username"],
        ),
        ({"aws_region": REGION}, ["--aws-region needs --url"]),
        ({"url": "https://x", "aws_service": "aoss"}, ["--aws-service needs --aws-region"]),
        ({"url": "https://x", "aws_region": "useast1"}, ["--aws-region takes an AWS region"]),
        ({"cloud_id": "not-a-cloud-id"}, ["--cloud-id is not an Elastic Cloud id"]),
        ({"cloud_id": cloud_id("host-only")}, ["--cloud-id is not an Elastic Cloud id"]),
    ],
)
def test_conflicting_options_are_refused_naming_their_flags(
    values: dict[str, str], flags: list[str]
) -> None:
    with pytest.raises(ValidationError) as err:
        ClusterSettings.model_validate(values)
    message = str(classify(err.value))
    for flag in flags:
        assert flag in message
    assert "\n" not in message


def test_every_problem_is_named_at_once_and_no_input_is_echoed() -> None:
    values = {"url": "https://x", "aws_region": REGION, "engine": "elasticsearch"}
    with pytest.raises(ValidationError) as err:
        ClusterSettings.model_validate({**values, "api_key": "s3cr3t-api-key"})
    assert "--engine elasticsearch" in str(err.value) and "--api-key" in str(err.value)
    assert "s3cr3t-api-key" not in str(err.value)


@pytest.mark.parametrize(
    "values",
    [
        {"url": "https://search-d.eu-west-1.es.amazonaws.com", "aws_region": REGION},
        {
            "url": "https://c.eu-west-1.aoss.amazonaws.com",
            "aws_region": REGION,
            "aws_service": "aoss",
            "engine": "opensearch",
        },
        {"url": "https://x", "aws_region": "us-gov-west-1"},
        {"cloud_id": CLOUD_ID, "api_key": "k", "engine": "elasticsearch"},
        {"cloud_id": cloud_id("host.example:9243$abc")},  # no Kibana id: still Elasticsearch
    ],
)
def test_managed_options_that_go_together_are_accepted(values: dict[str, str]) -> None:
    ClusterSettings.model_validate(values)


def test_the_options_read_their_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIRA_SEEK_URL", "https://x")
    monkeypatch.setenv("SIRA_SEEK_AWS_REGION", REGION)
    monkeypatch.setenv("SIRA_SEEK_AWS_SERVICE", "aoss")
    settings = ClusterSettings()
    assert (settings.aws_region, settings.aws_service) == (REGION, "aoss")
    monkeypatch.delenv("SIRA_SEEK_URL")
    monkeypatch.delenv("SIRA_SEEK_AWS_REGION")
    monkeypatch.delenv("SIRA_SEEK_AWS_SERVICE")
    monkeypatch.setenv("SIRA_SEEK_CLOUD_ID", CLOUD_ID)
    assert ClusterSettings().cloud_id == CLOUD_ID


def test_the_facade_refuses_conflicts_before_reaching_for_a_cluster() -> None:
    with pytest.raises(ValueError, match="--cloud-id"):
        sira_seek.connect("http://127.0.0.1:9", cloud_id=CLOUD_ID)
    with pytest.raises(ValueError, match="--engine elasticsearch"):
        sira_seek.connect("http://127.0.0.1:9", aws_region=REGION, engine="elasticsearch")


# -- the command line: one line, exit 2 ------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (["--aws-region", REGION, "--engine", "elasticsearch"], "--engine elasticsearch"),
        (["--cloud-id", CLOUD_ID], "--cloud-id"),
        (["--aws-service", "aoss"], "--aws-service needs --aws-region"),
    ],
)
def test_the_cli_refuses_conflicts_in_one_line_with_exit_2(extra: list[str], flag: str) -> None:
    args = ["search", "a question", "--index", "i", "--url", "http://127.0.0.1:9", *extra]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert flag in result.output and result.output.count("\n") == 1
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", ["mcp", "ingest"])
def test_other_front_end_commands_refuse_them_too(tmp_path: Path, command: str) -> None:
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "title": "t", "text": "x"}\n')
    first = {
        "mcp": ["mcp", "--index", "i"],
        "ingest": ["ingest", str(tmp_path), "--index", "i"],
    }[command]
    args = [*first, "--url", "http://127.0.0.1:9", "--cloud-id", CLOUD_ID]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "--cloud-id" in result.output and result.output.count("\n") == 1


def test_the_cli_flags_read_shared_variables() -> None:
    result = CliRunner().invoke(
        cli,
        ["search", "q", "--index", "i", "--url", "http://127.0.0.1:9"],
        env={"SIRA_SEEK_AWS_REGION": REGION, "SIRA_SEEK_ENGINE": "elasticsearch"},
    )
    assert result.exit_code == 2 and "--aws-region" in result.output, result.output


# -- Elastic Cloud ids -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decoded", "url"),
    [
        ("us-central1.gcp.cloud.es.io$abc123$def456", "https://abc123.us-central1.gcp.cloud.es.io:443"),
        ("host.example:9243$abc$kib", "https://abc.host.example:9243"),
        ("host.example$abc", "https://abc.host.example:443"),
    ],
)  # fmt: skip
def test_a_cloud_id_resolves_to_the_url_the_elasticsearch_client_uses(
    decoded: str, url: str
) -> None:
    from elasticsearch import Elasticsearch

    cid = cloud_id(decoded)
    assert cloud_url(cid) == url
    assert endpoint_urls(ClusterSettings(cloud_id=cid)) == [url]
    client = Elasticsearch(cloud_id=cid)
    assert [node.base_url for node in client.transport.node_pool.all()] == [url]


def test_detection_goes_to_the_cloud_url(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def unreachable(_pool: object, url: str, *_: object) -> object:
        asked.append(url)
        raise detect._Unreachable(f"nothing at {url}")

    monkeypatch.setattr(detect, "_get", unreachable)
    with pytest.raises(SiraSeekEngineError, match="abc123.us-central1"):
        detect_cluster(ClusterSettings(cloud_id=CLOUD_ID))
    assert asked == ["https://abc123.us-central1.gcp.cloud.es.io:443/"]


def test_the_elasticsearch_backend_is_given_the_cloud_id(monkeypatch: pytest.MonkeyPatch) -> None:
    from sira_seek.esplugin.engines import elasticsearch_backend as es

    made: dict[str, object] = {}

    class Recorder:
        def __init__(self, **kwargs: object) -> None:
            made.update(kwargs)

    monkeypatch.setattr(es, "Elasticsearch", Recorder)
    major = es._client_major()
    info = ClusterInfo(engine="elasticsearch", version=f"{major}.1.0", url=cloud_url(CLOUD_ID))
    backend = es.ElasticsearchBackend.connect(ClusterSettings(cloud_id=CLOUD_ID), info)
    assert made["cloud_id"] == CLOUD_ID and "hosts" not in made
    assert made["verify_certs"] is True  # TLS options apply: the cloud URL is https
    assert backend._urls == (info.url,)


# -- SigV4 on the wire -----------------------------------------------------------------------


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes = b""


@dataclass
class Recorder:
    url: str
    requests: list[Seen] = field(default_factory=list)


class _Refuse(BaseHTTPRequestHandler):
    """Records each request and answers 401 with an empty body: a transport peer, not an
    engine (nothing here imitates an engine's REST JSON)."""

    recorder: Recorder

    def _record(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.recorder.requests.append(Seen(self.command, self.path, headers, body))
        self.send_response(401)
        self.send_header("content-length", "0")
        self.end_headers()

    do_GET = do_POST = do_HEAD = _record  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing_server() -> Iterator[Recorder]:
    recorder = Recorder(url="")
    handler = type("H", (_Refuse,), {"recorder": recorder})
    server = HTTPServer(("127.0.0.1", 0), handler)
    recorder.url = f"http://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield recorder
    server.shutdown()
    server.server_close()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """Static credentials in the environment, and nothing else botocore could find."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    return monkeypatch


def recomputed_signature(seen: Seen, *, service: str, token: str | None) -> str:
    """The signature AWS would compute for the request as it arrived (its signed headers,
    path, query and time), with the known secret."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    signed = seen.headers["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
    request = AWSRequest(
        method=seen.method,
        url=f"http://{seen.headers['host']}{seen.path}",
        data=seen.body,
        headers={name: seen.headers[name] for name in signed},
    )
    request.context["timestamp"] = seen.headers["x-amz-date"]
    auth = SigV4Auth(Credentials(KEY_ID, SECRET, token), service, REGION)
    return auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)


def assert_signed(seen: Seen, *, service: str = "es", token: str | None = None) -> None:
    authorization = seen.headers["authorization"]
    date = seen.headers["x-amz-date"]
    assert authorization.startswith(
        f"AWS4-HMAC-SHA256 Credential={KEY_ID}/{date[:8]}/{REGION}/{service}/aws4_request, "
    )
    assert seen.headers["x-amz-content-sha256"] == hashlib.sha256(seen.body).hexdigest()
    assert seen.headers.get("x-amz-security-token") == token
    signed = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
    assert {"host", "x-amz-date", "x-amz-content-sha256"} <= set(signed)
    assert ("x-amz-security-token" in signed) == (token is not None)
    signature = authorization.split("Signature=")[1]
    assert signature == recomputed_signature(seen, service=service, token=token)
    assert SECRET not in str(seen.headers)


def opensearch_backend(settings: ClusterSettings) -> OpenSearchBackend:
    info = ClusterInfo(engine="opensearch", version="2.19.6", url=settings.urls()[0])
    return OpenSearchBackend.connect(settings, info)


@pytest.mark.parametrize("token", [None, TOKEN])
def test_the_opensearch_client_signs_every_request(
    refusing_server: Recorder, aws_env: pytest.MonkeyPatch, token: str | None
) -> None:
    if token is not None:
        aws_env.setenv("AWS_SESSION_TOKEN", token)
    settings = ClusterSettings(url=refusing_server.url, aws_region=REGION)
    backend = opensearch_backend(settings)
    with pytest.raises(EngineRequestError) as err:
        backend.request("GET", "/_cat/indices", params={"format": "json", "h": "index,health"})
    assert err.value.status == 401
    with pytest.raises(EngineRequestError):
        backend.request("POST", "/corpus/_search", body={"query": {"match_all": {}}})
    get, post = refusing_server.requests
    assert (get.method, post.method) == ("GET", "POST") and post.body
    assert get.path.startswith("/_cat/indices?")
    assert_signed(get, token=token)
    assert_signed(post, token=token)


def test_a_serverless_collection_is_signed_for_aoss_and_never_detected(
    refusing_server: Recorder, aws_env: pytest.MonkeyPatch
) -> None:
    settings = ClusterSettings(url=refusing_server.url, aws_region=REGION, aws_service="aoss")
    info = detect_cluster(settings)
    assert (info.engine, info.version, info.url) == (
        "opensearch", SERVERLESS_VERSION, refusing_server.url,
    )  # fmt: skip
    assert refusing_server.requests == []  # Serverless has no GET /: nothing was asked
    backend = opensearch_backend(settings)
    with pytest.raises(EngineRequestError):
        backend.request("GET", "/corpus/_count")
    assert_signed(refusing_server.requests[0], service="aoss")


def test_detection_signs_its_request_and_names_the_aws_settings_when_refused(
    refusing_server: Recorder, aws_env: pytest.MonkeyPatch
) -> None:
    aws_env.setenv("AWS_SESSION_TOKEN", TOKEN)
    with pytest.raises(SiraSeekEngineError, match="refused the credentials.*AWS credentials"):
        detect_cluster(ClusterSettings(url=refusing_server.url, aws_region=REGION))
    (seen,) = refusing_server.requests
    assert (seen.method, seen.path) == ("GET", "/")
    assert_signed(seen, token=TOKEN)


def test_sigv4_is_refused_when_elasticsearch_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    info = ClusterInfo(engine="elasticsearch", version="7.10.2", url="https://x")
    monkeypatch.setattr(registry, "detect_cluster", lambda settings: info)
    with pytest.raises(SiraSeekEngineError, match="--aws-region.*answered as elasticsearch"):
        registry.connect(ClusterSettings(url="https://x", aws_region=REGION))


# -- credentials and the optional botocore ---------------------------------------------------


def test_missing_botocore_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "botocore", None)
    monkeypatch.setitem(sys.modules, "botocore.session", None)
    with pytest.raises(MissingExtraError) as err:
        aws_credentials()
    assert "pip install 'sira-seek[aws]'" in str(err.value)
    assert (err.value.package, err.value.extra) == ("botocore", "aws")


def test_missing_botocore_is_one_line_on_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "botocore", None)
    monkeypatch.setitem(sys.modules, "botocore.session", None)
    args = ["search", "q", "--index", "i", "--url", "http://127.0.0.1:9", "--aws-region", REGION]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert "pip install 'sira-seek[aws]'" in result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1


def test_no_credentials_is_explained(aws_env: pytest.MonkeyPatch) -> None:
    aws_env.delenv("AWS_ACCESS_KEY_ID")
    aws_env.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(SiraSeekEngineError, match="no AWS credentials found"):
        aws_credentials()
