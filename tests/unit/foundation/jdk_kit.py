"""A stand-in JDK folder for the tests of ``find_java`` (esplugin/local/node.py), which reads
only ``bin/java``'s presence and the ``release`` file's JAVA_VERSION."""

from __future__ import annotations

from pathlib import Path


def fake_jdk(root: Path, name: str, version: str) -> Path:
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("")
    (home / "release").write_text(f'JAVA_VERSION="{version}"\n')
    return home
