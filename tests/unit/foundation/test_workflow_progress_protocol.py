"""One way a workflow reports progress (issue 40 item 3): ``progress: Progress | None``.

Checked on the syntax trees of ``sira_seek/workflows``, ``sira_seek/ingest.py`` and
``sira_seek/sync/migrate.py`` (the ingest and migrate jobs the CLI calls): no function,
public or private, declares one of the old callback parameters (``on_start(total,
one_by_one)``, ``on_start(questions)``, ``on_start(to_ask, resumed)``, ``on_progress(n)``,
``on_result(result)``, ``on_skipped(lines)``, ``on_page(n, counts)``, ``on_copied(n)``,
``notice(message)``): each front end needed its own adapter per job. A parameter named
``progress`` is annotated ``Progress | None`` (``Progress`` in the adapters that need one).
The layers below (``sira.evaluation``, ``seek.batch``, ``sync``'s runners) keep their plain
callables; ``workflows/progress.py`` adapts to them.

A probe holding the old shapes checks that the walk still sees them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from source_imports import ROOT

OLD_CALLBACKS = frozenset(
    {
        "on_start",
        "on_progress",
        "on_result",
        "on_skipped",
        "on_page",
        "on_copied",
        "on_done",
        "notice",
    }
)


def _files() -> list[Path]:
    files = sorted((ROOT / "sira_seek" / "workflows").rglob("*.py"))
    assert len(files) >= 20, "the walk looks in the wrong place"
    return [*files, ROOT / "sira_seek" / "ingest.py", ROOT / "sira_seek" / "sync" / "migrate.py"]


def violations(path: Path) -> list[str]:
    """``file:line function(param)`` for each old callback parameter, and for a ``progress``
    parameter annotated otherwise than ``Progress | None`` (or ``Progress``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = node.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
            annotation = ast.unparse(arg.annotation) if arg.annotation else ""
            if arg.arg in OLD_CALLBACKS:
                found.append(f"{where}:{arg.lineno} {node.name}({arg.arg})")
            elif arg.arg == "progress" and annotation not in ("Progress | None", "Progress"):
                found.append(f"{where}:{arg.lineno} {node.name}(progress: {annotation})")
    return found


def test_workflows_take_the_one_progress_protocol() -> None:
    found = [line for path in _files() for line in violations(path)]
    assert found == [], "take `progress: Progress | None` instead:\n" + "\n".join(found)


def test_the_long_workflows_do_take_it() -> None:
    """The jobs that run long report through it (a rename would otherwise pass the check)."""
    from inspect import signature

    from sira_seek.ingest import ingest_corpus
    from sira_seek.sync.migrate import migrate_index
    from sira_seek.workflows.agentic import evaluate_agentic
    from sira_seek.workflows.enrich import enrich, estimate
    from sira_seek.workflows.evaluate import evaluate_enrichment, evaluate_retrieval
    from sira_seek.workflows.evaluate_qa import evaluate_qa
    from sira_seek.workflows.recorded import recorded_run

    for job in (
        ingest_corpus,
        evaluate_agentic,
        enrich,
        estimate,
        evaluate_enrichment,
        evaluate_retrieval,
        evaluate_qa,
        recorded_run,
        migrate_index,
    ):
        assert "progress" in signature(job).parameters, job.__name__


OLD_SHAPES = """
def evaluate_retrieval(source, request, *, on_start=None, on_progress=None):
    ...
async def _answer(request, *, on_result: object, progress: int):
    ...
def enrich(source, request, notice=None, progress: Progress | None = None):
    ...
"""


@pytest.mark.parametrize("source", [OLD_SHAPES])
def test_the_check_sees_the_old_shapes(tmp_path: Path, source: str) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(source)
    found = [line.split(" ", 1)[1] for line in violations(probe)]
    assert found == [
        "evaluate_retrieval(on_start)",
        "evaluate_retrieval(on_progress)",
        "_answer(on_result)",
        "_answer(progress: int)",
        "enrich(notice)",
    ]
