"""OpenSearch through opensearch-py (1.x-3.x servers)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import orjson
from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConnectionError as OSConnectionError
from opensearchpy.exceptions import SerializationError, TransportError
from opensearchpy.serializer import JSONSerializer

from sira_seek.backend import ClusterInfo, VectorSimilarity
from sira_seek.config import ClusterSettings

from .base import BULK_FILTER_PATH, RestBackend, path_segment
from .client_options import common_client_kwargs, retry_client_kwargs
from .errors import EngineRequestError, SiraSeekEngineError


class OrjsonSerializer(JSONSerializer):
    """opensearch-py's JSON serializer on orjson: the same JSON (UTF-8, compact, its
    ``default`` for dates, UUIDs, numpy), several times faster to write and read; the DF
    filter's and the DF check's statistics answers are large."""

    def loads(self, s: str) -> Any:
        try:
            return orjson.loads(s)
        except orjson.JSONDecodeError as exc:
            raise SerializationError(s, exc) from None

    def dumps(self, data: Any) -> Any:
        if isinstance(data, str):  # as opensearch-py: a string is sent as it is
            return data
        try:
            return orjson.dumps(data, default=self.default, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError as exc:
            raise SerializationError(data, exc) from None


class OpenSearchBackend(RestBackend):
    name = "opensearch"
    _urls: tuple[str, ...] = ()  # every host the client was given (messages name them all)

    @classmethod
    def connect(cls, settings: ClusterSettings, info: ClusterInfo) -> OpenSearchBackend:
        kwargs = common_client_kwargs(settings, basic_auth_key="http_auth")
        if "api_key" in kwargs:
            kwargs["headers"] = {"authorization": f"ApiKey {kwargs.pop('api_key')}"}
        if "ssl_assert_fingerprint" in kwargs:
            kwargs["ssl_assert_fingerprint"] = kwargs["ssl_assert_fingerprint"].replace(":", "")
            # The pin replaces the chain check (as in detection and elastic-transport):
            # opensearch-py would otherwise check the chain against certifi first, and a
            # private CA's certificate would fail before its fingerprint is compared.
            kwargs["verify_certs"] = False
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Connecting to .* verify_certs=False")
            client = OpenSearch(
                settings.urls() or [info.url],
                timeout=settings.request_timeout,
                pool_maxsize=settings.max_connections,
                use_ssl=info.url.startswith("https"),
                serializer=OrjsonSerializer(),
                **retry_client_kwargs(settings),
                **kwargs,
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
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Loading the fielddata on the _id field")
                return self.client.transport.perform_request(
                    method, path, params=dict(params or {}), body=body
                )
        except OSConnectionError as exc:
            raise EngineRequestError(
                f"OpenSearch at {', '.join(self._urls or (self.info.url,))} is "
                f"unreachable ({type(exc).__name__})."
            ) from None
        except TransportError as exc:
            status = exc.status_code if isinstance(exc.status_code, int) else None
            if status is not None and status in ignore:
                return exc.info if isinstance(exc.info, dict) else {}
            raise EngineRequestError(
                _describe(exc), status=status, error_type=_root_type(exc)
            ) from None

    def _bulk(self, lines: list[dict[str, Any]]) -> dict[str, Any]:
        try:
            return dict(self.client.bulk(body=lines, params={"filter_path": BULK_FILTER_PATH}))
        except TransportError as exc:
            raise SiraSeekEngineError(f"bulk request failed: {_describe(exc)}") from None

    def _msearch(self, lines: list[dict[str, Any]], params: Mapping[str, Any] | None) -> Any:
        try:
            return self.client.msearch(body=lines, params=dict(params or {}))
        except TransportError as exc:
            raise SiraSeekEngineError(f"msearch failed: {_describe(exc)}") from None

    def _open_pit(self, index: str, keep_alive: str) -> str:
        body = self.request(
            "POST",
            f"/{path_segment(index)}/_search/point_in_time",
            params={"keep_alive": keep_alive},
        )
        return str(body["pit_id"])

    def _close_pit(self, pit_id: str) -> None:
        self.request("DELETE", "/_search/point_in_time", body={"pit_id": [pit_id]}, ignore=(404,))

    def _pit_sort(self) -> list[dict[str, str]]:
        # OpenSearch has no `_shard_doc` tiebreaker; `_id` is unique across shards. Sorting on
        # it makes OpenSearch 2.x warn about _id fielddata: silenced in `request`.
        return [{"_id": "asc"}]

    def _named_queries_score_supported(self) -> bool:
        return self.info.major >= 3 or (
            self.info.major == 2 and int(self.info.version.split(".")[1]) >= 13
        )

    def _combined_fields_supported(self) -> bool:
        return self.info.major > 3 or (
            self.info.major == 3 and int(self.info.version.split(".")[1]) >= 2
        )

    # -- vectors -------------------------------------------------------------------------
    def _vector_capabilities(
        self, modules: set[str], plugins: set[str], phase_processors: set[str]
    ) -> dict[str, bool]:
        """knn_vector comes with the k-NN plugin (in the full distribution, not in the
        minimal one; ``sira-seek node up`` installs it on 2.x). Fusion in the engine comes
        with the neural-search plugin's search-pipeline processors: score normalisation
        (2.10+) and RRF (score-ranker-processor, 2.19+); Apache-2.0, free wherever present."""
        return {
            "vectors": "opensearch-knn" in plugins,
            "rrf": "score-ranker-processor" in phase_processors,
            "score_normalization": "normalization-processor" in phase_processors,
        }

    def _vectors_hint(self) -> str:
        return (
            "knn_vector fields need the k-NN plugin (opensearch-knn, part of the full "
            "distribution; `sira-seek node up` installs it on OpenSearch 2.19.6)"
        )

    def vector_index_settings(self) -> dict[str, Any]:
        return {"knn": True}

    def _vector_field(self, dims: int, similarity: VectorSimilarity) -> dict[str, Any]:
        # HNSW on the Lucene engine: pure Java, no native library (faiss and nmslib need the
        # plugin's native libraries, which its Maven zip does not ship) and the same graph
        # Elasticsearch builds.
        space = {"cosine": "cosinesimil", "dot_product": "innerproduct", "l2": "l2"}[similarity]
        return {
            "type": "knn_vector",
            "dimension": dims,
            "method": {"name": "hnsw", "engine": "lucene", "space_type": space},
        }

    def _knn_body(
        self, field: str, vector: list[float], k: int, num_candidates: int
    ) -> dict[str, Any]:
        clause: dict[str, Any] = {"vector": vector, "k": k}
        if (self.info.major, int(self.info.version.split(".")[1])) >= (2, 16):
            # The HNSW candidate list (Elasticsearch's num_candidates): a query-time
            # parameter from 2.16; before, the index's ef_search applies.
            clause["method_parameters"] = {"ef_search": num_candidates}
        return {"query": {"knn": {field: clause}}}


def _root_type(exc: TransportError) -> str | None:
    """The root cause's ``type`` of the error (opensearch-py puts the top one in ``error``)."""
    info = exc.info if isinstance(exc.info, dict) else {}
    err = info.get("error")
    if isinstance(err, dict):
        root = (err.get("root_cause") or [err])[0]
        kind = root.get("type") if isinstance(root, dict) else None
        return str(kind) if kind else None
    return exc.error if isinstance(exc.error, str) and exc.error else None


def _describe(exc: TransportError) -> str:
    info = exc.info if isinstance(exc.info, dict) else {}
    err: Any = info.get("error", exc.error)
    if isinstance(err, dict):
        root = (err.get("root_cause") or [err])[0]
        err = f"{root.get('type')}: {root.get('reason')}"
    if exc.status_code in (401, 403):
        return f"HTTP {exc.status_code}, permission denied: {err}"
    return f"HTTP {exc.status_code}: {err}"
