"""Engine plugins, found through the ``sira_seek.engines`` entry-point group.

Like ir_measures' providers: each engine registers a backend class; a missing optional
engine never breaks import, and a third engine plugs in without touching the core.
"""

from __future__ import annotations

import logging
from importlib.metadata import entry_points
from typing import Any

from sira_seek.backend import SearchBackend
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
    backend_cls = load_backend_class(info.engine)
    backend: SearchBackend = backend_cls.connect(settings, info)
    return backend
