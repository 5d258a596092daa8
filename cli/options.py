"""Options shared by commands, and the one place errors become readable messages."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.esplugin.cluster import resolve_url
from sira_seek.esplugin.errors import SiraSeekEngineError
from sira_seek.esplugin.registry import connect

F = TypeVar("F", bound=Callable[..., Any])


def cluster_options(func: F) -> F:
    """--url and auth/TLS flags; each also reads its SIRA_SEEK_* environment variable."""
    opts = [
        click.option("--url", envvar="SIRA_SEEK_URL", help="Cluster URL (wins over a local node)."),
        click.option("--api-key", envvar="SIRA_SEEK_API_KEY", help="API key (base64 id:key)."),
        click.option("--username", envvar="SIRA_SEEK_USERNAME"),
        click.option("--password", envvar="SIRA_SEEK_PASSWORD", help="Prefer the env variable."),
        click.option("--ca-certs", envvar="SIRA_SEEK_CA_CERTS", type=click.Path(exists=True)),
        click.option("--ssl-fingerprint", envvar="SIRA_SEEK_SSL_FINGERPRINT"),
        click.option("--insecure", is_flag=True, help="Do not verify TLS certificates."),
        click.option(
            "--engine",
            type=click.Choice(["opensearch", "elasticsearch"]),
            default=None,
            help="Which local node to use when no --url is given.",
        ),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def backend_from_options(kwargs: dict[str, Any]) -> SearchBackend:
    """Pop the cluster options from ``kwargs`` and connect."""
    values = {
        "url": kwargs.pop("url", None),
        "api_key": kwargs.pop("api_key", None),
        "username": kwargs.pop("username", None),
        "password": kwargs.pop("password", None),
        "ca_certs": kwargs.pop("ca_certs", None),
        "ssl_fingerprint": kwargs.pop("ssl_fingerprint", None),
    }
    insecure = kwargs.pop("insecure", False)
    engine = kwargs.pop("engine", None)
    settings = ClusterSettings(
        **{k: v for k, v in values.items() if v is not None}, verify_certs=not insecure
    )
    settings = resolve_url(settings, NodeSettings(), engine=engine)
    return connect(settings)


def friendly_errors(func: F) -> F:
    """Known failures print one clear message and exit 1, never a stack trace."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (SiraSeekEngineError, FileNotFoundError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None

    return wrapper  # type: ignore[return-value]


def default_data_dir() -> Path:
    """The shared evaluation data: $SIRA_SEEK_DATA, else ../shared/data from the repo root."""
    if os.environ.get("SIRA_SEEK_DATA"):
        return Path(os.environ["SIRA_SEEK_DATA"])
    for base in (Path.cwd(), *Path.cwd().parents):
        candidate = base.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return Path.cwd().parent / "shared" / "data"
