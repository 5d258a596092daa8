"""Managed clusters: Elastic Cloud ids, and AWS SigV4 for Amazon OpenSearch Service.

- ``--cloud-id``: the Elasticsearch client takes the id itself (``cloud_id=``); detection,
  which runs before any client, needs the URL, resolved here with the client's own parser
  (``elastic_transport``): ``NAME:BASE64("host[:port]$es_id$kibana_id")`` ->
  ``https://es_id.host:port``.
- ``--aws-region``: every request is signed with SigV4 (opensearch-py's signer, credentials
  from botocore's default chain: ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/
  ``AWS_SESSION_TOKEN``, ``AWS_PROFILE`` and the shared files, SSO, container and instance
  roles). botocore is the optional ``aws`` extra. Serverless collections (``aoss``) have no
  ``GET /``: they are not detected, OpenSearch is assumed (``serverless_info``).

Which options go together is decided once, in ``sira_seek.config.ClusterSettings``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sira_seek.backend import ClusterInfo
from sira_seek.config import ClusterSettings

from .errors import MissingExtraError, SiraSeekEngineError

AWS_EXTRA = "aws"

Signer = Callable[[str, str, Mapping[str, str]], dict[str, str]]
"""``(method, url, headers) -> headers`` with the SigV4 headers added."""

SERVERLESS_VERSION = "2.0.0"
"""What an OpenSearch Serverless collection is taken for: it reports no version (and has no
``GET /``), so the oldest OpenSearch 2 feature set is assumed and version-gated features
(named-query scores from 2.13, ``combined_fields`` from 3.2) stay off."""


def cloud_url(cloud_id: str) -> str:
    """The Elasticsearch URL an Elastic Cloud id names (``https://<es id>.<host>:<port>``)."""
    from elastic_transport.client_utils import parse_cloud_id

    try:
        parsed = parse_cloud_id(cloud_id)
    except ValueError:
        parsed = None
    if parsed is None or parsed.es_address is None:
        raise SiraSeekEngineError(
            "--cloud-id is not an Elastic Cloud id with an Elasticsearch endpoint: copy it "
            "from the deployment's page in the Elastic Cloud console."
        )
    host, port = parsed.es_address
    return f"https://{host}:{port}"


def endpoint_urls(settings: ClusterSettings) -> list[str]:
    """Every URL requests go to: the configured hosts, or the one an Elastic Cloud id names."""
    if settings.cloud_id is not None:
        return [cloud_url(settings.cloud_id)]
    return settings.urls()


def is_serverless(settings: ClusterSettings) -> bool:
    """An OpenSearch Serverless collection: SigV4 for the ``aoss`` service."""
    return settings.aws_region is not None and settings.aws_service == "aoss"


def serverless_info(settings: ClusterSettings) -> ClusterInfo:
    """What detection would have said of a Serverless collection, which cannot be asked."""
    return ClusterInfo(engine="opensearch", version=SERVERLESS_VERSION, url=settings.urls()[0])


def aws_credentials() -> Any:
    """botocore's credentials from its default chain; a clear error when there are none or
    botocore is not installed."""
    try:
        import botocore.session
    except ImportError:
        raise MissingExtraError(
            "--aws-region (SigV4 signing) needs botocore, which is not installed: "
            f"pip install 'sira-seek[{AWS_EXTRA}]'",
            package="botocore",
            extra=AWS_EXTRA,
        ) from None
    credentials = botocore.session.get_session().get_credentials()
    if credentials is None:
        raise SiraSeekEngineError(
            "--aws-region: no AWS credentials found (set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run where an instance or task role "
            "applies)."
        )
    return credentials


def sigv4_auth(settings: ClusterSettings) -> Callable[..., dict[str, str]]:
    """opensearch-py's SigV4 signer for its default (urllib3) connection class: an
    ``http_auth`` callable that returns the signed headers of each request."""
    assert settings.aws_region is not None
    credentials = aws_credentials()
    from opensearchpy import Urllib3AWSV4SignerAuth

    signer: Callable[..., dict[str, str]] = Urllib3AWSV4SignerAuth(
        credentials, settings.aws_region, settings.aws_service
    )
    return signer


def request_signer(settings: ClusterSettings) -> Signer | None:
    """For detection's plain requests: a ``Signer``, or None when requests are not signed."""
    if settings.aws_region is None:
        return None
    credentials = aws_credentials()
    from opensearchpy.helpers.signer import AWSV4Signer

    signer = AWSV4Signer(credentials, settings.aws_region, settings.aws_service)

    def sign(method: str, url: str, headers: Mapping[str, str]) -> dict[str, str]:
        return {**headers, **signer.sign(method, url, None, dict(headers))}

    return sign
