"""``sira_seek.metrics`` is a leaf: pure functions over plain records, importing nothing above.

Checked on every module's syntax tree, so an import hidden in a function, a relative import,
an ``importlib.import_module("...")`` call and an import under ``if TYPE_CHECKING:`` all count.
The algorithms, the workflows and the front ends import metrics, never the other way round;
what needs a cluster or an LLM to produce the records lives beside its method or in
``sira_seek.workflows``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from source_imports import ROOT, imports, targets

METRICS = ROOT / "sira_seek" / "metrics"
FORBIDDEN = tuple(
    f"sira_seek.{name}"
    for name in (
        "sira",
        "seek",
        "sync",
        "agent",
        "service",
        "integrations",
        "workflows",
        "client",
        "cli",
        "esplugin",
    )
)
# The top-level (unprefixed) names of the same code, in case a module reached it that way.
FORBIDDEN_TOP = ("cli", "esplugin")


def reached(path: Path, package: str | None = None) -> Iterator[tuple[int, str]]:
    """(line, absolute name) for every module an import in the file can reach: the module
    itself, and for ``from pkg import name`` also ``pkg.name`` (it may be a module)."""
    for line, module, names in imports(path, package):
        for target in targets(module, names):
            yield line, target


def forbidden(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FORBIDDEN) or any(
        module == f or module.startswith(f + ".") for f in FORBIDDEN_TOP
    )


def test_metrics_imports_no_algorithm_workflow_or_front_end() -> None:
    files = sorted(METRICS.rglob("*.py"))
    assert len(files) >= 8, "sira_seek/metrics has too few modules: the walk looks elsewhere"
    found = sorted(
        {
            f"{path.relative_to(ROOT)}:{line} imports {module}"
            for path in files
            for line, module in reached(path)
            if forbidden(module)
        }
    )
    assert found == [], "sira_seek.metrics must stay a leaf:\n" + "\n".join(found)


def test_there_is_no_evaluation_package_beside_metrics() -> None:
    """One way to do one thing: the old ``sira_seek.evaluation`` is gone, not re-exported."""
    assert not (ROOT / "sira_seek" / "evaluation").exists()


def test_the_check_sees_hidden_relative_and_dynamic_imports(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import importlib\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from sira_seek.client import SiraSeek\n"
        "def f():\n"
        "    from ..seek.results import SeekResult\n"
        "    from .. import workflows\n"
        "    from . import qa\n"
        "    importlib.import_module('sira_seek.sira.evaluation')\n"
        "    import sira_seek.service.app\n"
    )
    found = sorted({m for _, m in reached(probe, "sira_seek.metrics") if forbidden(m)})
    assert found == [
        "sira_seek.client",
        "sira_seek.client.SiraSeek",
        "sira_seek.seek.results",
        "sira_seek.seek.results.SeekResult",
        "sira_seek.service.app",
        "sira_seek.sira.evaluation",
        "sira_seek.workflows",
    ]
    assert not forbidden("sira_seek.metrics.qa") and not forbidden("sira_seek.seeks")
