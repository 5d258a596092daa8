"""Engine plugins, found through the ``sira_seek.engines`` entry-point group.

Like ir_measures' providers: each engine registers a backend class; a missing optional
engine never breaks import, and a third engine plugs in without touching the core.
"""

from __future__ import annotations

import logging
from importlib.metadata import entry_points
from typing import Any

from sira_seek.backend import ClusterInfo, SearchBackend
from sira_seek.config import ClusterSettings

from .detect import detect_cluster
from .errors import SiraSeekEngineError

ENTRY_POINT_GROUP = "sira_seek.engines"

logger = logging.getLogger(__name__)

_BUILTIN = {
    "elasticsearch": "sira_seek.esplugin.engines.elasticsearch_backend:ElasticsearchBackend",
    "opensearch": "sira_seek.esplugin.engines.opensearch_backend:OpenSearchBackend",
}


def available_engines() -> dict[str, str]:
    """Engine name -> ``module:Class`` of every registered backend."""
    found = dict(_BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found[ep.name] = ep.value
    return found


def load_backend_class(engine: str) -> Any:
    target = available_engines().get(engine)
    if target is None:
        raise SiraSeekEngineError(
            f"No sira-seek backend is registered for engine {engine!r} "
            f"(known: {', '.join(sorted(available_engines()))})."
        )
    module_name, _, attr = target.partition(":")
    try:
        module = __import__(module_name, fromlist=[attr])
    except ImportError as exc:
        raise SiraSeekEngineError(
            f"The {engine} backend needs a Python client that is not installed ({exc.name})."
        ) from None
    return getattr(module, attr)


def connect(settings: ClusterSettings) -> SearchBackend:
    """Detect the engine at ``settings.url`` and return its backend."""
    info = detect_cluster(settings)
    logger.info("%s %s at %s", info.engine, info.version, info.url)
    _check_managed(settings, info)
    backend_cls = load_backend_class(info.engine)
    backend: SearchBackend = backend_cls.connect(settings, info)
    return backend


def _check_managed(settings: ClusterSettings, info: ClusterInfo) -> None:
    """SigV4 is for OpenSearch, a cloud id for Elasticsearch: the settings refuse the wrong
    ``--engine``; this refuses the wrong engine answering."""
    if settings.aws_region is not None and info.engine != "opensearch":
        raise SiraSeekEngineError(
            f"--aws-region signs requests for Amazon OpenSearch Service, but {info.url} "
            f"answered as {info.engine} {info.version}: sira-seek signs OpenSearch only (an "
            "OpenSearch domain in compatibility mode reports 7.10.2 without its distribution: "
            "turn compatibility.override_main_response_version off)."
        )
    if settings.cloud_id is not None and info.engine != "elasticsearch":
        raise SiraSeekEngineError(
            f"--cloud-id names an Elastic Cloud deployment, but {info.url} answered as "
            f"{info.engine}."
        )
