"""Elasticsearch through elasticsearch-py 9, for Elasticsearch 7.17, 8.x and 9.x servers alike.

One client speaks to every supported server major through Elasticsearch's REST API
compatibility: each request names the server's own major in its media type
(``application/vnd.elasticsearch+json; compatible-with=N``), chosen at connect time from the
detected version. Left alone, elasticsearch-py 9 marks every request ``compatible-with=9``,
which an 8.x server refuses (it accepts 7 and 8; 7.17 takes any); a server major outside
``SUPPORTED_SERVER_MAJORS`` is refused at connect time with a clear error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import elasticsearch
import orjson
from elastic_transport import JsonSerializer, NdjsonSerializer
from elasticsearch import ApiError, Elasticsearch, TransportError

from sira_seek.backend import ClusterInfo, VectorSimilarity
from sira_seek.config import ClusterSettings

from .base import BULK_FILTER_PATH, RestBackend, path_segment
from .client_options import common_client_kwargs, retry_client_kwargs
from .errors import EngineRequestError, SiraSeekEngineError, WrongClientError

SUPPORTED_SERVER_MAJORS = (7, 8, 9)
"""Elasticsearch majors this backend is tested against (docs/tutorials/cluster.md, Engine
versions; tests/engine_matrix.py)."""


def _client_major() -> int:
    return int(elasticsearch.__versionstr__.split(".")[0])


def compat_headers(server_major: int) -> tuple[dict[str, str], dict[str, str]]:
    """The Accept/Content-Type headers of JSON and of NDJSON (bulk, msearch) requests to a
    server of this major: the REST compatibility media type naming the server's own major,
    which every Elasticsearch server accepts (7.x takes 7; 8.x takes 7 and 8; 9.x 8 and 9).

    Raises WrongClientError for a major outside SUPPORTED_SERVER_MAJORS."""
    if server_major not in SUPPORTED_SERVER_MAJORS:
        *first, last = (f"{m}.x" for m in SUPPORTED_SERVER_MAJORS)
        raise WrongClientError(
            f"Elasticsearch {server_major}.x is not supported: sira-seek talks to Elasticsearch "
            f"{', '.join(first)} and {last} (one elasticsearch-py "
            f"{_client_major()} client, REST API compatibility headers). Upgrade the cluster, or "
            "use OpenSearch."
        )
    json_type = f"application/vnd.elasticsearch+json; compatible-with={server_major}"
    ndjson_type = f"application/vnd.elasticsearch+x-ndjson; compatible-with={server_major}"
    return (
        {"accept": json_type, "content-type": json_type},
        {"accept": json_type, "content-type": ndjson_type},
    )


class OrjsonJsonSerializer(JsonSerializer):
    """elastic-transport's JSON serializer on orjson: the same JSON, several times faster to
    write and read (the DF filter's and the DF check's statistics answers are large). Not
    elastic-transport's own ``OrjsonSerializer``: it refuses non-string keys, which the json
    module these clients used before accepts; and the NDJSON one below reuses these two."""

    def json_dumps(self, data: Any) -> bytes:
        return orjson.dumps(data, default=self.default, option=orjson.OPT_NON_STR_KEYS)

    def json_loads(self, data: bytes) -> Any:
        return orjson.loads(data)


class OrjsonNdjsonSerializer(NdjsonSerializer):
    """The same for bulk and msearch bodies (elastic-transport ships no orjson NDJSON one)."""

    json_dumps = OrjsonJsonSerializer.json_dumps
    json_loads = OrjsonJsonSerializer.json_loads


SERIALIZERS = {
    "application/json": OrjsonJsonSerializer(),
    "application/x-ndjson": OrjsonNdjsonSerializer(),
}
"""Also used for the compatibility media types (``compat_headers``): the client maps them
from these."""


class ElasticsearchBackend(RestBackend):
    name = "elasticsearch"
    _urls: tuple[str, ...] = ()  # every host the client was given (messages name them all)
    _json: dict[str, str] = {}  # compat_headers(server major), set by connect
    _ndjson: dict[str, str] = {}

    @classmethod
    def connect(cls, settings: ClusterSettings, info: ClusterInfo) -> ElasticsearchBackend:
        json_headers, ndjson_headers = compat_headers(info.major)
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
            serializers=SERIALIZERS,
            **retry_client_kwargs(settings),
            **common_client_kwargs(settings, basic_auth_key="basic_auth"),
        )
        backend = cls(client, info)
        backend._urls = tuple(settings.urls() or [info.url])
        backend._json, backend._ndjson = json_headers, ndjson_headers
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
                method, path, params=dict(params or {}), headers=self._json, body=body
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
            # perform_request, not client.bulk: the API methods would mark the request
            # compatible-with=<client major> (see the module docstring).
            resp = self.client.perform_request(
                "PUT",
                "/_bulk",
                params={"filter_path": BULK_FILTER_PATH},
                headers=self._ndjson,
                body=lines,
            )
            return dict(resp.body)
        except (ApiError, TransportError) as exc:
            raise SiraSeekEngineError(f"bulk request failed: {_describe(exc)}") from None

    def _msearch(self, lines: list[dict[str, Any]], params: Mapping[str, Any] | None) -> Any:
        try:
            return self.client.perform_request(
                "POST", "/_msearch", params=dict(params or {}), headers=self._ndjson, body=lines
            ).body
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

    # -- vectors -------------------------------------------------------------------------
    def _vector_capabilities(
        self, modules: set[str], plugins: set[str], phase_processors: set[str]
    ) -> dict[str, bool]:
        """dense_vector with ``index: true`` is in every Elasticsearch 8+ (basic licence
        included), the top-level ``knn`` search option from 8.4. RRF (the ``rrf`` retriever)
        needs the rank-rrf module, which the minimal archive lacks, and a platinum or
        enterprise licence (or a trial): a basic licence answers 403."""
        major, minor = (int(p) for p in self.info.version.split(".")[:2])
        rrf = False
        if "rank-rrf" in modules:
            licence = self.request("GET", "/_license", ignore=(403, 404))
            kind = str((licence.get("license") or {}).get("type", ""))
            rrf = kind in ("platinum", "enterprise", "trial")
        return {"vectors": (major, minor) >= (8, 4), "rrf": rrf, "score_normalization": False}

    def _vectors_hint(self) -> str:
        return "kNN search needs Elasticsearch 8.4 or later"

    def _vector_field(self, dims: int, similarity: VectorSimilarity) -> dict[str, Any]:
        # Float HNSW, as OpenSearch's Lucene engine builds it: Elasticsearch's own default
        # quantises (int8 from 8.14, bbq for 384+ dimensions from 9.1), which saves memory but
        # moves scores and rankings, so the same embeddings would rank differently per engine.
        return {
            "type": "dense_vector",
            "dims": dims,
            "index": True,
            "similarity": {"l2": "l2_norm"}.get(similarity, similarity),
            "index_options": {"type": "hnsw"},
        }

    def _knn_body(
        self, field: str, vector: list[float], k: int, num_candidates: int
    ) -> dict[str, Any]:
        return {
            "knn": {
                "field": field,
                "query_vector": vector,
                "k": k,
                "num_candidates": num_candidates,
            }
        }


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
