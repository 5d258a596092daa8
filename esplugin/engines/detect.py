"""Find out which engine and version answer at a URL, before choosing a client.

Uses plain urllib3 so detection works whichever client is (or is not) compatible with
the server; the minimal Elasticsearch archive has no ``GET /`` handler, so the node info
API is the fallback. With several hosts (``--url a,b,c``) they are tried in order until one
answers, so a cluster whose first node is down is still detected. Managed clusters
(``managed``): an Elastic Cloud id is resolved to its URL first, requests under
``--aws-region`` are signed with SigV4, and a Serverless collection (``--aws-service aoss``,
which has no ``GET /``) is not asked at all: OpenSearch is assumed.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import urllib3

from sira_seek.backend import ClusterInfo
from sira_seek.config import ClusterSettings

from .errors import SiraSeekEngineError
from .managed import Signer, endpoint_urls, is_serverless, request_signer, serverless_info

log = logging.getLogger(__name__)


def _pool(settings: ClusterSettings, urls: list[str]) -> urllib3.PoolManager:
    kwargs: dict[str, Any] = {"timeout": urllib3.Timeout(connect=5.0, read=30.0), "retries": False}
    if any(u.startswith("https") for u in urls):
        if settings.ssl_fingerprint:
            kwargs["assert_fingerprint"] = settings.ssl_fingerprint.replace(":", "").lower()
            kwargs["cert_reqs"] = "CERT_NONE"
        elif not settings.verify_certs:
            kwargs["cert_reqs"] = "CERT_NONE"
        else:
            kwargs["cert_reqs"] = "CERT_REQUIRED"
            if settings.ca_certs:
                kwargs["ca_certs"] = str(settings.ca_certs)
    return urllib3.PoolManager(**kwargs)


def _headers(settings: ClusterSettings) -> dict[str, str]:
    headers = {"accept": "application/json"}
    if settings.api_key is not None:
        headers["authorization"] = f"ApiKey {settings.api_key.get_secret_value()}"
    elif settings.username is not None:
        pw = settings.password.get_secret_value() if settings.password else ""
        headers.update(urllib3.make_headers(basic_auth=f"{settings.username}:{pw}"))
    return headers


class _Unreachable(SiraSeekEngineError):
    """No connection to one host (another of the configured hosts may answer)."""


def _get(
    pool: urllib3.PoolManager, url: str, headers: dict[str, str], sign: Signer | None = None
) -> urllib3.BaseHTTPResponse:
    try:
        # A SigV4 signature covers the method, URL and time: one per request.
        signed = sign("GET", url, headers) if sign is not None else headers
        return pool.request("GET", url, headers=signed)
    except urllib3.exceptions.SSLError:
        raise SiraSeekEngineError(
            f"TLS verification failed for {url.split('?')[0]}: check --ca-certs / "
            "--ssl-fingerprint, or the host name."
        ) from None
    except urllib3.exceptions.HTTPError as exc:
        raise _Unreachable(
            f"No search cluster answers at {url.split('?')[0]} ({type(exc).__name__}). "
            "Start one with `sira-seek node up` or pass --url / SIRA_SEEK_URL."
        ) from None


def detect_cluster(settings: ClusterSettings) -> ClusterInfo:
    """Engine name and version of the cluster at ``settings.url`` (or ``cloud_id``);
    ``info.url`` is the first host (in the configured order) that answered."""
    urls = endpoint_urls(settings)
    if not urls:
        raise SiraSeekEngineError("No cluster URL configured (use --url or SIRA_SEEK_URL).")
    if is_serverless(settings):
        return serverless_info(settings)
    pool = _pool(settings, urls)
    headers = _headers(settings)
    sign = request_signer(settings)
    unreachable: list[str] = []
    for base in urls:
        try:
            return _detect_one(pool, base, headers, sign)
        except _Unreachable as exc:
            if len(urls) == 1:
                raise SiraSeekEngineError(str(exc)) from None
            log.info("detection: %s", exc)
            unreachable.append(base)
    raise SiraSeekEngineError(
        f"No search cluster answers at any of {', '.join(unreachable)}. "
        "Start one with `sira-seek node up` or pass --url / SIRA_SEEK_URL."
    )


def _detect_one(
    pool: urllib3.PoolManager, base: str, headers: dict[str, str], sign: Signer | None = None
) -> ClusterInfo:
    resp = _get(pool, base + "/", headers, sign)
    if resp.status in (401, 403):
        what = (
            "check the AWS credentials, --aws-region and --aws-service, and that the domain's "
            "access policy allows them"
            if sign is not None
            else "check the API key or user name and password"
        )
        raise SiraSeekEngineError(
            f"The cluster at {base} refused the credentials (HTTP {resp.status}): {what}."
        )
    product = resp.headers.get("X-elastic-product", "")
    if resp.status == 200:
        body = json.loads(resp.data or b"{}")
        version = body.get("version", {})
        engine = "opensearch" if version.get("distribution") == "opensearch" else "elasticsearch"
        if engine == "elasticsearch" and product != "Elasticsearch" and "number" not in version:
            raise SiraSeekEngineError(f"{base} answered, but not as Elasticsearch or OpenSearch.")
        return ClusterInfo(
            engine=engine,
            version=str(version.get("number", "0.0.0")),
            url=base,
            cluster_name=body.get("cluster_name"),
        )
    # Minimal archives (integ-test-zip) may lack the root handler: ask the node info API.
    resp = _get(
        pool, base + "/_nodes/_local?filter_path=nodes.*.version,cluster_name", headers, sign
    )
    if resp.status != 200:
        raise SiraSeekEngineError(f"{base} answered HTTP {resp.status}; is it a search cluster?")
    body = json.loads(resp.data or b"{}")
    nodes = body.get("nodes") or {}
    if not nodes:
        raise SiraSeekEngineError(f"{base} reported no nodes.")
    version = next(iter(nodes.values()))["version"]
    engine = "elasticsearch" if product == "Elasticsearch" else "opensearch"
    return ClusterInfo(
        engine=engine, version=version, url=base, cluster_name=body.get("cluster_name")
    )
