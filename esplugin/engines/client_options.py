"""Translate ``ClusterSettings`` into keyword arguments both Python clients accept."""

from __future__ import annotations

from typing import Any

from sira_seek.config import ClusterSettings

from .managed import endpoint_urls, sigv4_auth


def common_client_kwargs(settings: ClusterSettings, *, basic_auth_key: str) -> dict[str, Any]:
    """Auth and TLS options; ``basic_auth_key`` is ``basic_auth`` (ES) or ``http_auth`` (OS).

    With ``aws_region`` (OpenSearch only, checked by the settings and after detection) the
    auth is opensearch-py's SigV4 signer, given as ``http_auth``."""
    kwargs: dict[str, Any] = {}
    if settings.aws_region is not None:
        kwargs["http_auth"] = sigv4_auth(settings)
    elif settings.api_key is not None:
        kwargs["api_key"] = settings.api_key.get_secret_value()
    elif settings.username is not None:
        pw = settings.password.get_secret_value() if settings.password else ""
        kwargs[basic_auth_key] = (settings.username, pw)
    if any(u.startswith("https") for u in endpoint_urls(settings)):
        kwargs["verify_certs"] = settings.verify_certs
        if settings.ca_certs:
            kwargs["ca_certs"] = str(settings.ca_certs)
        if settings.ssl_fingerprint:
            kwargs["ssl_assert_fingerprint"] = settings.ssl_fingerprint
    return kwargs


# Each request is tried on up to this many more nodes after a connection error or timeout:
# with N hosts, a request survives N-1 dead nodes.
MAX_RETRIES = 3


def retry_client_kwargs(settings: ClusterSettings) -> dict[str, Any]:
    """Retries on connection errors, across every configured host.

    Both clients mark a host that refused a connection as dead for a while and send the
    retry to the next one, so a request succeeds while any node answers. Timeouts are not
    retried: a slow search would only be sent again to a node as busy.
    """
    return {"max_retries": max(MAX_RETRIES, len(settings.urls())), "retry_on_timeout": False}
