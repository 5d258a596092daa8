"""The command line imports the workflows and the public library only (issue 40 item 5).

A command parses flags, calls a workflow and renders what it returns; what it needs from the
layers below (result and record types it renders, the errors it maps to exit codes, the local
node and LLM-server machinery of the ops commands) reaches it through a workflow module, which
re-exports it. So a method module can be reorganised without touching ``cli/``, and the
question "what does a front end depend on" has one answer: the modules below.

``PUBLIC_MODULES`` is THE list of the public library besides the workflows: what
``sira_seek/__init__.py`` exports (from the module that defines each name, those names only)
plus the modules a user of the library is expected to import directly. It is written here
once; docs/architecture.md points to it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sira_seek

ROOT = Path(__file__).resolve().parents[3]

PUBLIC_MODULES: dict[str, str] = {
    "sira_seek": "the package: connect(), the facade and result types (lazy exports)",
    "sira_seek.client": "the SiraSeek facade and connect()",
    "sira_seek.config": "ClusterSettings / NodeSettings: how to reach a cluster",
    "sira_seek.backend": "the SearchBackend protocol and its records (SiraSeek.backend)",
    "sira_seek.corpus": "the BEIR input format: read_corpus, read_queries, read_qrels, Query",
    "sira_seek.input_errors": "InputError, the user's-input failure every reader raises",
    "sira_seek.redaction": "masking secrets in what is printed or written",
    "sira_seek.documents": "fetching stored documents by id",
}
"""Public modules, each importable whole, with why a user reads it."""

ALLOWED_PREFIXES = ("sira_seek.workflows", "sira_seek.cli")

FRONT_END_STARTERS: dict[str, tuple[str, ...]] = {
    "serve_cmd.py": ("sira_seek.service",),
    "access.py": ("sira_seek.api_keys",),  # the keys both servers take
    "mcp_cmd.py": ("sira_seek.mcp",),
}
"""A command that runs another front end (the HTTP service, the MCP server) imports that front
end: both sit on the same layer, above the workflows, and the command only parses its flags.
``access.py`` reads the API keys both servers take from their shared ``sira_seek.api_keys``."""

PENDING: dict[str, dict[str, tuple[str, ...]]] = {}
"""Imports not moved yet, each named (file -> module -> names); only these exact names would be
let through. None now: the MCP server left the agent package for ``sira_seek.mcp`` and
``PROTOCOLS`` reaches ``agentic_cmd.py`` through ``workflows.agentic`` (issue 40 item 2)."""


def exported_names() -> dict[str, set[str]]:
    """module -> the names ``sira_seek`` exports from it (``sira_seek._EXPORTS``)."""
    return {module: set(names) for module, names in sira_seek._EXPORTS.items()}


def cli_files() -> list[Path]:
    return sorted((ROOT / "cli").glob("*.py"))


def imports_of(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, names) of every ``sira_seek`` import in ``path``, including
    those inside functions and ``TYPE_CHECKING`` blocks (an annotation is a dependency too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names]
    return [f for f in found if f[1] == "sira_seek" or f[1].startswith("sira_seek.")]


def outside(
    module: str, names: list[str], exports: dict[str, set[str]], file: str = ""
) -> list[str]:
    """What of one import in ``file`` is outside the allowed set ([] when all of it is)."""
    starts = FRONT_END_STARTERS.get(file, ())
    if module in PUBLIC_MODULES or module.startswith(ALLOWED_PREFIXES):
        return []
    if any(module == s or module.startswith(s + ".") for s in starts):
        return []
    allowed = exports.get(module, set()) | set(PENDING.get(file, {}).get(module, ()))
    return [n for n in names if n not in allowed] or ([] if names else [module])


@pytest.mark.parametrize("path", cli_files(), ids=lambda p: p.name)
def test_a_cli_module_imports_the_workflows_and_the_public_library_only(path: Path) -> None:
    exports = exported_names()
    bad = [
        f"{path.name}:{line}: {module} {wrong}"
        for line, module, names in imports_of(path)
        if (wrong := outside(module, names, exports, path.name))
    ]
    assert bad == []


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The checker itself: an internal module, or a non-exported name of an exporting module,
    is reported; a workflow, a public module and an exported name are not."""
    source = tmp_path / "cmd.py"
    source.write_text(
        "from sira_seek.sync.settings import SyncSettings\n"
        "from sira_seek.ingest import IngestReport, ingest_corpus\n"
        "import sira_seek.metrics.qa\n"
        "from sira_seek.workflows.search import search\n"
        "from sira_seek.config import ClusterSettings\n"
        "def f():\n    from sira_seek.seek.results import SeekResult\n"
    )
    exports = exported_names()
    verdicts = {m: outside(m, n, exports) for _, m, n in imports_of(source)}
    assert verdicts == {
        "sira_seek.sync.settings": ["SyncSettings"],
        "sira_seek.ingest": ["ingest_corpus"],
        "sira_seek.metrics.qa": ["sira_seek.metrics.qa"],
        "sira_seek.workflows.search": [],
        "sira_seek.config": [],
        "sira_seek.seek.results": [],
    }


def test_the_architecture_page_names_every_public_module() -> None:
    """docs/architecture/index.md points here and names the list: the two stay one list."""
    page = (ROOT / "docs" / "architecture" / "index.md").read_text()
    section = page.split("## What the command line imports", 1)[1].split("\n## ", 1)[0]
    short = [m.removeprefix("sira_seek.") for m in PUBLIC_MODULES if m != "sira_seek"]
    assert [m for m in short if f"`{m}`" not in section] == []
    assert "test_cli_imports.py" in section
