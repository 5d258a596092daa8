"""Every Python package of the repository is listed in pyproject.toml's ``packages``.

The list is explicit (the top-level folders install under ``sira_seek``), so a subpackage left
out is missing from every non-editable install while the editable one the developers use
imports it from the work tree: a fresh-clone ``make test`` found ``sira_seek.embed`` and
``sira_seek.service.routes`` absent from the installed copy the normal-user tests run
(``ModuleNotFoundError`` inside ``sira-seek``), after both had passed every editable test."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _installed_name(folder: Path, package_dir: dict[str, str]) -> str:
    relative = folder.relative_to(ROOT).as_posix()
    for name, where in sorted(package_dir.items(), key=lambda kv: -len(kv[1])):
        if relative == where or relative.startswith(where + "/"):
            return name + relative[len(where) :].replace("/", ".")
    raise AssertionError(f"{relative} lies under no package-dir entry")


def test_every_package_folder_is_listed_and_every_listed_package_exists() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    package_dir: dict[str, str] = setuptools["package-dir"]
    listed = set(setuptools["packages"])
    found = {
        _installed_name(init.parent, package_dir)
        for where in package_dir.values()
        for init in (ROOT / where).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    # mappings/ is data with no __init__.py; it is a package by the list alone.
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - found - {"sira_seek.mappings"} == set(), "listed but not in the tree"
