"""Typed, side-effect-free settings.

Values come from (highest first) explicit arguments / CLI flags, ``SIRA_SEEK_*`` environment
variables, and defaults. Building a ``Settings`` never touches the disk or the network.
"""

from __future__ import annotations

import binascii
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_home() -> Path:
    """Where downloads, node data and caches live.

    Root's home is usually unreadable to other users, and search nodes must run as an
    unprivileged user, so root gets a system-wide folder instead of ``~/.cache``.
    """
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/var/lib/sira-seek")
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sira-seek"


class ClusterSettings(BaseSettings):
    """How to reach an existing cluster. A configured URL (or Elastic Cloud id) always wins
    over a local node. Amazon OpenSearch Service and Serverless: ``aws_region`` (SigV4);
    Elastic Cloud: ``cloud_id``. Options that cannot go together are refused when the
    settings are built, each reason naming its command-line flag."""

    # A refused value is never echoed in an error (a key or password may sit beside it).
    model_config = SettingsConfigDict(
        env_prefix="SIRA_SEEK_", extra="ignore", hide_input_in_errors=True
    )

    url: str | None = Field(
        default=None,
        description="Cluster URL, e.g. https://host:9200; several nodes comma-separated",
    )
    api_key: SecretStr | None = None
    username: str | None = None
    password: SecretStr | None = None
    ca_certs: Path | None = Field(default=None, description="CA bundle for TLS verification")
    ssl_fingerprint: str | None = None
    verify_certs: bool = True
    request_timeout: float = Field(
        default=60.0,
        gt=0,
        description="Seconds one request may take to answer (SIRA_SEEK_REQUEST_TIMEOUT); a "
        "cluster that accepts connections but never answers fails each request after this.",
    )
    max_connections: int = Field(
        default=32,
        ge=1,
        le=1024,
        description="Pooled connections per node (SIRA_SEEK_MAX_CONNECTIONS): at least the "
        "work in flight (HTTP API workers, sira-sync --concurrency, a framework batch), so "
        "concurrent requests neither queue nor reconnect.",
    )
    engine: Literal["opensearch", "elasticsearch"] | None = Field(
        default=None,
        description="The engine expected (--engine): without a URL, which local node; "
        "opensearch with aws_region, elasticsearch with cloud_id. The engine behind a URL is "
        "detected.",
    )
    aws_region: str | None = Field(
        default=None,
        description="Sign every request with AWS SigV4 for this region (--aws-region, e.g. "
        "us-east-1): Amazon OpenSearch Service or Serverless; credentials from botocore's "
        "default chain; needs the aws extra",
    )
    aws_service: Literal["es", "aoss"] = Field(
        default="es",
        description="The SigV4 service name (--aws-service): es for an OpenSearch Service "
        "domain, aoss for a Serverless collection (no engine detection: OpenSearch assumed)",
    )
    cloud_id: str | None = Field(
        default=None,
        description="Elastic Cloud deployment id (--cloud-id), instead of url: Elasticsearch only",
    )

    @model_validator(mode="after")
    def _one_way_to_the_cluster(self) -> ClusterSettings:
        """Options that cannot be used (together) are refused here, for every front end at
        once (the CLI, ``sira_seek.connect``, the HTTP API, the MCP server); each reason names
        its flags, all of them in one message."""
        problems = _problems(self)
        if problems:
            raise PydanticCustomError("cluster_options", "; ".join(problems))
        return self

    def has_auth(self) -> bool:
        return self.api_key is not None or self.username is not None or self.aws_region is not None

    def urls(self) -> list[str]:
        """Every host in ``url`` (comma-separated), in order, without trailing slashes.

        ``url`` stays one string so one environment variable or flag can name a whole
        cluster; the clients get every host, so losing any one node does not fail requests.
        """
        if not self.url:
            return []
        return [u.strip().rstrip("/") for u in self.url.split(",") if u.strip()]


_AWS_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-[0-9]+")
"""us-east-1, eu-central-2, us-gov-west-1, cn-north-1, ..."""


def _is_cloud_id(value: str) -> bool:
    """The shape of an Elastic Cloud id: ``NAME:BASE64`` decoding to ``host$es_id[$kibana_id]``
    (a cheap check of the form; the URL is resolved by the Elasticsearch client's own parser
    in ``esplugin``)."""
    _name, sep, encoded = value.partition(":")
    if not sep or not encoded:
        return False
    try:
        decoded = binascii.a2b_base64(encoded.encode("ascii")).decode("ascii")
    except (ValueError, UnicodeError):
        return False
    parts = decoded.split("$")
    return len(parts) >= 2 and bool(parts[0]) and bool(parts[1])


def _problems(settings: ClusterSettings) -> list[str]:
    """Every reason the cluster options cannot be used (together), flags named."""
    region, cloud = settings.aws_region, settings.cloud_id
    checks = [
        (
            region is not None and not _AWS_REGION.fullmatch(region),
            "--aws-region takes an AWS region name such as us-east-1",
        ),
        (
            cloud is not None and not _is_cloud_id(cloud),
            "--cloud-id is not an Elastic Cloud id (NAME:BASE64 as the Elastic Cloud console "
            "shows it, decoding to host$elasticsearch-id$kibana-id)",
        ),
        (
            cloud is not None and bool(settings.url),
            "--cloud-id names the cluster itself: give --cloud-id or --url, not both",
        ),
        (
            cloud is not None and settings.engine == "opensearch",
            "--cloud-id is an Elastic Cloud (Elasticsearch) deployment: it cannot be used with "
            "--engine opensearch",
        ),
        (
            region is not None and cloud is not None,
            "--aws-region signs for Amazon OpenSearch Service: it cannot be used with "
            "--cloud-id (Elastic Cloud)",
        ),
        (
            region is not None and settings.engine == "elasticsearch",
            "--aws-region signs requests with AWS SigV4 for Amazon OpenSearch Service: it "
            "cannot be used with --engine elasticsearch",
        ),
        (
            region is not None and (settings.api_key is not None or settings.username is not None),
            "--aws-region signs every request with SigV4: it cannot be combined with --api-key "
            "or --username (choose one way to authenticate)",
        ),
        (
            region is not None and not settings.url and cloud is None,
            "--aws-region needs --url: the domain or collection endpoint to sign for",
        ),
        (
            region is None and "aws_service" in settings.model_fields_set,
            "--aws-service needs --aws-region (the region requests are signed for)",
        ),
    ]
    return [message for failed, message in checks if failed]


class NodeSettings(BaseSettings):
    """Local development node started from the official Maven Central archives."""

    model_config = SettingsConfigDict(env_prefix="SIRA_SEEK_NODE_", extra="ignore")

    engine: str = "opensearch"
    version: str | None = None
    home: Path = Field(default_factory=default_home)
    heap: str = "512m"
    java_opts: str = Field(
        default="",
        description="More JVM options for the node, after the heap (e.g. -XX:TieredStopAtLevel=1: "
        "the test suite's choice, a faster start and less JIT work on 2 cores; slower steady "
        "state, so not the default)",
    )
    http_port: int | None = None
    startup_timeout: float = 180.0
    service_user: str = "sira-seek"
    secure: bool = Field(
        default=False,
        description="HTTPS with a private CA and users (OpenSearch: 2.19.4 + security plugin)",
    )


class IndexSettings(BaseSettings):
    """Shape of an index created by ``ingest``."""

    model_config = SettingsConfigDict(env_prefix="SIRA_SEEK_INDEX_", extra="ignore")

    shards: int = Field(default=1, ge=1, description="Primary shards (DF is exact on any layout)")
    replicas: int = Field(default=0, ge=0)
