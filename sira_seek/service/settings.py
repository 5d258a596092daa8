"""Everything ``sira-seek serve`` was started with, as one validated, serializable value.

The parent process validates the options once (``ServeSettings``); every worker builds its
app from that same value (``sira_seek.service.worker``). One worker gets the object itself;
several workers (separate processes, started by uvicorn with ``spawn``) read it back from a
file the parent wrote, readable by its owner only (``write_settings``), named by
``SETTINGS_ENV``. The file carries the secrets (cluster password and API key, the service's
own keys), which ``dump_settings`` writes on purpose and ``repr`` never shows.

Nothing here imports FastAPI or uvicorn: the parent can validate and refuse bad input before
any worker, or the web stack, starts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from sira_seek.redaction import Redactor

from .guards import DEFAULT_MAX_BODY_BYTES
from .logs import LogFormat, LogLevel
from .threads import DEFAULT_QUEUED, DEFAULT_THREADS

SETTINGS_ENV = "SIRA_SEEK_SERVE_WORKER_SETTINGS"
"""The settings file of a ``serve --workers N`` run, set by the parent for its workers."""

SETTINGS_FILE = "settings.json"

DEFAULT_SHUTDOWN_TIMEOUT_S = 30
"""How long a stopping server lets the requests in flight finish (Kubernetes' default grace
period is 30 s too)."""


DEFAULT_PROFILE_MAX_AGE_S = 10.0
"""How long ``serve`` reuses an index's profile: reading it is about half of a search's engine
requests, and it changes only when the index is recreated or first enriched (a deleted index
is still 404 at once: its existence is checked on every search)."""


class ServiceConfig(BaseModel):
    """What ``sira-seek serve`` was started with, minus the cluster (the ``connect`` given to
    ``create_app``) and the secrets (the ``Redactor``)."""

    model_config = ConfigDict(frozen=True)

    llm: str | None = Field(
        default=None,
        description="LLM spec for SIRA expansions (requests without `expansions`) and SEEK.",
    )
    embedder: str | None = Field(
        default=None,
        description="Query embedder spec for the vector methods (dense, hybrid, sira-hybrid "
        "on /search; retriever dense/hybrid on /ask); None: SIRA_SEEK_SIRA_EMBEDDER, else cpu. "
        "Loaded once per server process.",
    )
    indexes: tuple[str, ...] = Field(
        default=(),
        description="The indexes (or aliases) requests may name; the first is the default. "
        "Empty: any one index by name (never a wildcard or a list).",
    )
    api_keys: tuple[str, ...] = Field(
        default=(), repr=False, exclude=True, description="Bearer keys; empty: no auth."
    )
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=1024)
    allowed_hosts: tuple[str, ...] = Field(
        default=("*",), description="Host header values served (DNS-rebinding guard)."
    )
    profile_max_age: float = Field(
        default=DEFAULT_PROFILE_MAX_AGE_S,
        ge=0,
        allow_inf_nan=False,
        description="Seconds an index's profile (its fields, whether it is enriched) is reused "
        "between searches; 0: read on every search.",
    )

    max_running: int = Field(
        default=DEFAULT_THREADS,
        ge=1,
        description="/search and /ask calls that run at once (threads waiting on the cluster "
        "or the LLM).",
    )
    max_queued: int = Field(
        default=DEFAULT_QUEUED,
        ge=0,
        description="/search and /ask calls that may wait for a free thread; beyond that, 429 "
        "with Retry-After.",
    )

    def query_embedder(self) -> str | None:
        """The embedder spec the server's vector searches use: ``embedder``, else SIRA's
        setting (``SIRA_SEEK_SIRA_EMBEDDER``), else None (the CPU default)."""
        if self.embedder is not None:
            return self.embedder
        from sira_seek.workflows.sira_setup import sira_settings

        return sira_settings().embedder

    @property
    def index(self) -> str | None:
        """The index used when a request names none."""
        return self.indexes[0] if self.indexes else None


class ServeSettings(BaseModel):
    """One ``sira-seek serve``: where it listens, how many workers, how it stops and logs,
    the cluster, and what the service serves."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    workers: int = Field(default=1, ge=1, description="uvicorn worker processes.")
    shutdown_timeout: int = Field(
        default=DEFAULT_SHUTDOWN_TIMEOUT_S,
        ge=0,
        description="Seconds a stopping server waits for the requests in flight; then they "
        "are cancelled.",
    )
    access_log: bool = True
    log_format: LogFormat = "text"
    log_level: LogLevel = "warning"
    cluster: dict[str, str | bool | None] = Field(
        default_factory=dict,
        repr=False,
        description="The keyword arguments of `sira_seek.client.connect` each worker calls "
        "(url, auth, TLS, ...); left out, they come from SIRA_SEEK_* in the worker, whose "
        "environment is the parent's.",
    )
    service: ServiceConfig = Field(default_factory=ServiceConfig)

    def redactor(self) -> Redactor:
        """Masks every secret the server was configured with: the cluster's (also inside its
        URL), the LLM spec's, the service's API keys, and those of the ``SIRA_SEEK_*``
        variables a worker reads its cluster from."""
        text = {k: v if isinstance(v, str) else None for k, v in self.cluster.items()}
        return Redactor.configured(
            url=text.get("url"),
            password=text.get("password"),
            api_key=text.get("api_key"),
            cloud_id=text.get("cloud_id"),
            llm=self.service.llm,
            keys=self.service.api_keys,
        )


def dump_settings(settings: ServeSettings) -> str:
    """The settings as JSON, secrets included (``ServiceConfig`` leaves its keys out of every
    other dump)."""
    data = settings.model_dump(mode="json")
    data["service"]["api_keys"] = list(settings.service.api_keys)
    return json.dumps(data)


def load_settings(text: str) -> ServeSettings:
    """``dump_settings`` read back, validated again."""
    return ServeSettings.model_validate_json(text)


def write_settings(settings: ServeSettings, folder: Path) -> Path:
    """``folder/settings.json``, created new and readable by its owner only."""
    path = folder / SETTINGS_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(dump_settings(settings))
    return path


def read_settings(path: Path) -> ServeSettings:
    return load_settings(path.read_text(encoding="utf-8"))
