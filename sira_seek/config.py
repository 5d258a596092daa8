"""Typed, side-effect-free settings.

Values come from (highest first) explicit arguments / CLI flags, ``SIRA_SEEK_*`` environment
variables, and defaults. Building a ``Settings`` never touches the disk or the network.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, SecretStr
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
    """How to reach an existing cluster. A configured URL always wins over a local node."""

    model_config = SettingsConfigDict(env_prefix="SIRA_SEEK_", extra="ignore")

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

    def has_auth(self) -> bool:
        return self.api_key is not None or self.username is not None

    def urls(self) -> list[str]:
        """Every host in ``url`` (comma-separated), in order, without trailing slashes.

        ``url`` stays one string so one environment variable or flag can name a whole
        cluster; the clients get every host, so losing any one node does not fail requests.
        """
        if not self.url:
            return []
        return [u.strip().rstrip("/") for u in self.url.split(",") if u.strip()]


class NodeSettings(BaseSettings):
    """Local development node started from the official Maven Central archives."""

    model_config = SettingsConfigDict(env_prefix="SIRA_SEEK_NODE_", extra="ignore")

    engine: str = "opensearch"
    version: str | None = None
    home: Path = Field(default_factory=default_home)
    heap: str = "512m"
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
