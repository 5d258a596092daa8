"""Layering, checked on the source's syntax trees (function-level imports included).

- The algorithms (``sira_seek/sira``, ``sira_seek/seek``, ``sira_seek/sync``) and the metrics
  (``sira_seek/metrics``) never import ``sira_seek.esplugin``: they talk to a
  ``sira_seek.backend.SearchBackend`` a front end (CLI, ``SiraSeek``, the HTTP API) connected.
  (What else the metrics may not import: ``test_metrics_leaf.py``.)
- ``esplugin`` holds two subpackages that depend in ONE direction: ``esplugin/local`` (the
  dev-node machinery, and choosing a running local node when no URL is given:
  ``local.resolve``) may use the engine plugins, only through
  ``sira_seek.esplugin.engines.errors``; ``esplugin/engines`` never imports ``esplugin/local``,
  so an engine plugin works, and is tested, without the local-node toolkit.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from source_imports import ROOT, imports, targets

ALGORITHMS = ("sira", "seek", "sync", "metrics")
ESPLUGIN = "sira_seek.esplugin"
LOCAL = f"{ESPLUGIN}.local"
ENGINES = f"{ESPLUGIN}.engines"
ENGINES_INTERFACE = f"{ENGINES}.errors"


def reaches(module: str, names: tuple[str, ...], prefix: str) -> bool:
    return any(t == prefix or t.startswith(prefix + ".") for t in targets(module, names))


def sources(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


@pytest.mark.parametrize("package", ALGORITHMS)
def test_algorithms_never_import_esplugin(package: str) -> None:
    files = sources(ROOT / "sira_seek" / package)
    assert files, f"sira_seek/{package} has no modules: the walk looks in the wrong place"
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in files
        for line, module, names in imports(path)
        if reaches(module, names, ESPLUGIN)
    ]
    assert found == [], "algorithms take a SearchBackend instead:\n" + "\n".join(found)


def test_engines_never_import_local() -> None:
    files = sources(ROOT / "esplugin" / "engines")
    assert len(files) >= 8
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module} {list(names)}"
        for path in files
        for line, module, names in imports(path)
        if reaches(module, names, LOCAL)
    ]
    assert found == [], "esplugin/engines may not import esplugin/local:\n" + "\n".join(found)


def test_local_uses_only_the_engine_errors() -> None:
    files = sources(ROOT / "esplugin" / "local")
    assert len(files) >= 7
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module} {list(names)}"
        for path in files
        for line, module, names in imports(path)
        if reaches(module, names, ENGINES)
        and module != ENGINES_INTERFACE
        and not (module == ENGINES and names == ("errors",))
    ]
    assert found == [], f"esplugin/local may use only {ENGINES_INTERFACE}:\n" + "\n".join(found)


def test_the_check_sees_function_level_relative_and_dynamic_imports(tmp_path: Path) -> None:
    """The walker itself: an import hidden in a function, a relative one and a dynamic one."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import importlib\n"
        "def f():\n"
        "    from ..local.node import LocalNode\n"
        "    from sira_seek.esplugin.local import cluster\n"
        "    importlib.import_module('sira_seek.esplugin.local.containers')\n"
    )
    found = [(m, n) for _, m, n in imports(probe, ENGINES) if reaches(m, n, LOCAL)]
    assert found == [
        (f"{LOCAL}.node", ("LocalNode",)),
        (LOCAL, ("cluster",)),
        (f"{LOCAL}.containers", ()),
    ]
