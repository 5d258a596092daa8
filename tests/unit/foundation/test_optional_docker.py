"""testcontainers and the Docker SDK are optional (the ``docker`` / ``test`` extras)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from sira_seek.esplugin.engines.errors import SiraSeekEngineError
from sira_seek.esplugin.local import containers

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def without_docker_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a plain install: importing these fails (None in sys.modules blocks the import)."""
    for name in [m for m in sys.modules if m.split(".")[0] in ("testcontainers", "docker")]:
        monkeypatch.delitem(sys.modules, name)
    for name in ("testcontainers", "docker"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.usefixtures("without_docker_packages")
@pytest.mark.parametrize("engine", ["opensearch", "elasticsearch"])
def test_starting_a_container_without_testcontainers_names_the_extra(engine: str) -> None:
    with pytest.raises(SiraSeekEngineError, match=r"needs testcontainers.*sira-seek\[docker\]"):
        containers.start_container(engine)


@pytest.mark.usefixtures("without_docker_packages")
def test_without_the_docker_sdk_no_daemon_is_looked_for() -> None:
    assert containers.docker_available() is False


def test_pyproject_keeps_testcontainers_out_of_a_plain_install() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [d for d in project["dependencies"] if d.startswith(("testcontainers", "docker"))]
    extras = project["optional-dependencies"]
    for extra in ("docker", "test"):  # the Makefile installs .[test,dev]
        assert any(d.startswith("testcontainers") for d in extras[extra])
