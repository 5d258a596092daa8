"""testcontainers, used when a Docker daemon answers (never required)."""

from __future__ import annotations

from typing import Any

from .distributions import DEFAULT_VERSIONS

IMAGES = {
    "opensearch": "opensearchproject/opensearch:{version}",
    "elasticsearch": "docker.elastic.co/elasticsearch/elasticsearch:{version}",
}


def docker_available() -> bool:
    """True when a Docker daemon answers a ping; False on machines without one."""
    try:
        import docker

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
        from testcontainers.community.opensearch import OpenSearchContainer

        container: Any = OpenSearchContainer(image, security_enabled=False)
    else:
        from testcontainers.community.elasticsearch import ElasticSearchContainer

        container = ElasticSearchContainer(image, mem_limit="1g")
    container.start()
    host = container.get_container_host_ip()
    port = container.get_exposed_port(9200)
    return f"http://{host}:{port}", container
