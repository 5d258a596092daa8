"""A test-only analysis plugin so the secured local Elasticsearch node can mint API keys.

The only Elasticsearch that runs here without Docker is the official integ-test-zip archive,
which lacks the analysis-common module. Creating an API key makes Elasticsearch create its
``.security`` index, whose ``email`` analyzer needs three analysis-common components
(``uax_url_email``, ``pattern_capture``, ``unique``), so the index -- and every API key --
fails. Real clusters ship analysis-common; this shim exists only for the minimal archive.

The shim is ``AnalysisShimPlugin.java`` beside this file: those three components as thin
wrappers over Lucene's own classes. It is compiled with the JDK's ``javac`` against the
distribution's own jars and placed in a copy of the distribution (hard links, beside the
original, cached) whose ``plugins/`` holds only the shim, so the open node never loads it.
It is test code, not part of the installed package: the test fixtures hand
``distribution_with_shim`` to ``LocalNode(..., prepare_distribution=...)``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from sira_seek.esplugin.engines.errors import NodeStartError

SHIM_NAME = "sira-seek-analysis-shim"
SHIM_CLASS = "org.siraseek.analysisshim.AnalysisShimPlugin"
SHIM_SOURCE = Path(__file__).parent / "AnalysisShimPlugin.java"
_MARKER = ".analysis-shim-source.sha256"


def _javac(java_home: Path) -> Path:
    javac = java_home / "bin" / "javac"
    if not javac.exists():
        raise NodeStartError(
            f"a secured local Elasticsearch node compiles a small test-only analysis plugin (so "
            f"it can mint API keys), but {java_home} has no javac: install a JDK (not a JRE) "
            "or point SIRA_SEEK_JAVA_HOME at one"
        )
    return javac


def _descriptor(version: str) -> str:
    return "\n".join(
        [
            "description=TEST-ONLY: the analysis-common pieces the .security index needs "
            "(sira-seek, minimal archive only)",
            "version=1.0.0",
            f"name={SHIM_NAME}",
            f"classname={SHIM_CLASS}",
            "java.version=21",
            f"elasticsearch.version={version}",
            "",
        ]
    )


def build_shim_plugin(dist: Path, version: str, java_home: Path, dest: Path) -> None:
    """Compile the shim against ``dist/lib`` into the plugin folder ``dest`` (jar + descriptor)."""
    if not SHIM_SOURCE.exists():
        raise NodeStartError(f"the analysis shim's source is missing: {SHIM_SOURCE}")
    with tempfile.TemporaryDirectory() as tmp:
        classes = Path(tmp) / "classes"
        proc = subprocess.run(
            [
                str(_javac(java_home)),
                "--release",
                "21",
                "-proc:none",
                "-cp",
                str(dist / "lib" / "*"),
                "-d",
                str(classes),
                str(SHIM_SOURCE),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise NodeStartError(
                f"could not compile the test-only analysis shim:\n{proc.stderr.strip()[-1500:]}"
            )
        dest.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(dest / f"{SHIM_NAME}.jar", "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            for cls in sorted(classes.rglob("*.class")):
                jar.write(cls, cls.relative_to(classes).as_posix())
    (dest / "plugin-descriptor.properties").write_text(_descriptor(version))


def _link_tree(src: Path, dst: Path) -> None:
    """Mirror ``src`` with hard links (same filesystem), falling back to copies."""

    def link(s: str, d: str) -> None:
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)

    shutil.copytree(src, dst, symlinks=True, copy_function=link)


def distribution_with_shim(dist: Path, version: str, java_home: Path) -> Path:
    """``dist`` plus the shim in its ``plugins/``: a sibling folder, rebuilt when the source
    changes. The open node keeps using ``dist`` untouched."""
    digest = hashlib.sha256(SHIM_SOURCE.read_bytes()).hexdigest() if SHIM_SOURCE.exists() else ""
    final = dist.with_name(f"{dist.name}-with-analysis-shim")
    marker = final / _MARKER
    if marker.exists() and marker.read_text().strip() == digest:
        return final
    with tempfile.TemporaryDirectory(dir=dist.parent) as tmp:
        staged = Path(tmp) / final.name
        _link_tree(dist, staged)
        plugins = staged / "plugins"
        shutil.rmtree(plugins, ignore_errors=True)
        plugins.mkdir()
        build_shim_plugin(dist, version, java_home, staged / "plugins" / SHIM_NAME)
        (staged / _MARKER).write_text(digest + "\n")
        for p in [staged, *staged.rglob("*")]:
            if not p.is_symlink():
                os.chmod(p, p.stat().st_mode | (0o755 if p.is_dir() else 0o444))
        if final.exists():
            shutil.rmtree(final)
        staged.rename(final)
    return final
