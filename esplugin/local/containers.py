"""Throwaway nodes in Docker through testcontainers, when a Docker daemon answers.

Test-suite machinery, never required: testcontainers and the Docker SDK are the optional
``docker`` extra (also in ``test``), imported only here and only when used, so a plain
``pip install sira-seek`` neither needs nor imports them.
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType
from typing import Any

from sira_seek.esplugin.engines.errors import SiraSeekEngineError

from .distributions import DEFAULT_VERSIONS

logger = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'sira-seek[docker]' (or the test extra: pip install -e '.[test]')"


def _testcontainers_module(name: str) -> ModuleType:
    """``testcontainers.<name>``, or an error that says which extra provides it."""
    try:
        return importlib.import_module(f"testcontainers.{name}")
    except ImportError as exc:
        raise SiraSeekEngineError(
            f"starting a node in Docker needs testcontainers ({exc.name} is missing): "
            f"{INSTALL_HINT}"
        ) from exc


IMAGES = {
    "opensearch": "opensearchproject/opensearch:{version}",
    "elasticsearch": "docker.elastic.co/elasticsearch/elasticsearch:{version}",
}


def docker_available() -> bool:
    """True when a Docker daemon answers a ping; False on machines without one (or without
    the Docker SDK, which comes with the ``docker`` extra)."""
    try:
        import docker
    except ImportError:
        logger.debug("no Docker SDK installed (%s): not looking for a daemon", INSTALL_HINT)
        return False
    try:
        client = docker.from_env(timeout=3)
        client.ping()
        return True
    except Exception:
        return False


def start_container(engine: str, version: str | None = None) -> tuple[str, Any]:
    """Start a throwaway single-node container; returns (url, container) — stop it when done."""
    version = version or DEFAULT_VERSIONS[engine]
    image = IMAGES[engine].format(version=version)
    if engine == "opensearch":
        opensearch = _testcontainers_module("community.opensearch")
        container: Any = opensearch.OpenSearchContainer(image, security_enabled=False)
    else:
        elasticsearch = _testcontainers_module("community.elasticsearch")
        container = elasticsearch.ElasticSearchContainer(image, mem_limit="1g")
    container.start()
    host = container.get_container_host_ip()
    port = container.get_exposed_port(9200)
    return f"http://{host}:{port}", container
