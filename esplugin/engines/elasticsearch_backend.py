"""Elasticsearch through elasticsearch-py (8.13+ or 9.x, matched to the server's major)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import elasticsearch
from elasticsearch import ApiError, Elasticsearch, TransportError

from sira_seek.backend import ClusterInfo
from sira_seek.config import ClusterSettings

from .base import RestBackend, path_segment
from .client_options import common_client_kwargs, retry_client_kwargs
from .errors import EngineRequestError, SiraSeekEngineError, WrongClientError

_JSON = {"accept": "application/json", "content-type": "application/json"}


def _client_major() -> int:
    return int(elasticsearch.__versionstr__.split(".")[0])


class ElasticsearchBackend(RestBackend):
    name = "elasticsearch"
    _urls: tuple[str, ...] = ()  # every host the client was given (messages name them all)

    @classmethod
    def connect(cls, settings: ClusterSettings, info: ClusterInfo) -> ElasticsearchBackend:
        if info.major != _client_major():
            raise WrongClientError(
                f"The cluster runs Elasticsearch {info.version}, but the installed Python client "
                f"is elasticsearch-py {elasticsearch.__versionstr__}, which only talks to "
                f"Elasticsearch {_client_major()}.x. Fix: pip install "
                f"'elasticsearch>={info.major},<{info.major + 1}' in this environment."
            )
        # Elastic Cloud: the client resolves the id itself (no hosts then).
        where: dict[str, Any] = (
            {"cloud_id": settings.cloud_id}
            if settings.cloud_id is not None
            else {"hosts": settings.urls() or [info.url]}
        )
        client = Elasticsearch(
            **where,
            request_timeout=settings.request_timeout,
            connections_per_node=settings.max_connections,
            **retry_client_kwargs(settings),
            **common_client_kwargs(settings, basic_auth_key="basic_auth"),
        )
        backend = cls(client, info)
        backend._urls = tuple(settings.urls() or [info.url])
        return backend

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        ignore: tuple[int, ...] = (),
    ) -> Any:
        try:
            resp = self.client.perform_request(
                method, path, params=dict(params or {}), headers=_JSON, body=body
            )
            return resp.body
        except ApiError as exc:
            if exc.meta.status in ignore:
                return exc.body if isinstance(exc.body, dict) else {}
            raise EngineRequestError(
                _describe(exc), status=exc.meta.status, error_type=_root_type(exc.body)
            ) from None
        except TransportError as exc:
            raise EngineRequestError(
                f"Elasticsearch at {', '.join(self._urls or (self.info.url,))} is "
                f"unreachable ({type(exc).__name__})."
            ) from None

    def _bulk(self, lines: list[dict[str, Any]]) -> dict[str, Any]:
        try:
            return dict(self.client.bulk(operations=lines).body)
        except (ApiError, TransportError) as exc:
            raise SiraSeekEngineError(f"bulk request failed: {_describe(exc)}") from None

    def _msearch(self, lines: list[dict[str, Any]], params: Mapping[str, Any] | None) -> Any:
        try:
            return self.client.msearch(searches=lines, **dict(params or {})).body
        except (ApiError, TransportError) as exc:
            raise SiraSeekEngineError(f"msearch failed: {_describe(exc)}") from None

    def _open_pit(self, index: str, keep_alive: str) -> str:
        path = f"/{path_segment(index)}/_pit"
        return str(self.request("POST", path, params={"keep_alive": keep_alive})["id"])

    def _close_pit(self, pit_id: str) -> None:
        self.request("DELETE", "/_pit", body={"id": pit_id}, ignore=(404,))

    def _named_queries_score_supported(self) -> bool:
        return self.info.major > 8 or (
            self.info.major == 8 and int(self.info.version.split(".")[1]) >= 8
        )

    def _combined_fields_supported(self) -> bool:
        return True


def _root_type(body: Any) -> str | None:
    """The root cause's ``type`` of an error body (None when the body has none)."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return None
    root = (err.get("root_cause") or [err])[0]
    kind = root.get("type") if isinstance(root, dict) else None
    return str(kind) if kind else None


def _describe(exc: Exception) -> str:
    if isinstance(exc, ApiError):
        body = exc.body if isinstance(exc.body, dict) else {}
        err = body.get("error", exc.message)
        if isinstance(err, dict):
            root = (err.get("root_cause") or [err])[0]
            err = f"{root.get('type')}: {root.get('reason')}"
        if exc.meta.status in (401, 403):
            return f"HTTP {exc.meta.status}, permission denied: {err}"
        return f"HTTP {exc.meta.status}: {err}"
    return type(exc).__name__
