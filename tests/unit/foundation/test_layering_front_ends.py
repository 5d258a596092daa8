"""The front ends sit above the workflows, and the methods below them (issue 40 item 2).

Checked on the source's syntax trees (function-level, ``TYPE_CHECKING`` and relative imports
included, ``tests/source_imports.py``):

- no module of ``sira_seek/workflows`` imports a front end: the ``SiraSeek`` facade
  (``sira_seek.client``, or ``SiraSeek`` / ``connect`` from ``sira_seek``), the HTTP service,
  the CLI, the framework adapters or the MCP server. A workflow calling the layer above would
  make every front end depend on every other (``workflows/agentic.py`` used to build a facade);
- no module that imports the MCP SDK (``mcp``) imports ``sira_seek.sira`` or ``sira_seek.seek``:
  the MCP server reaches the methods only through the workflows, as the HTTP API does (it used
  to sit in ``sira_seek/agent`` beside tools that built a ``SiraRetriever`` themselves);
- the agent package (the agentic loop, a method) imports no front end, and no workflow either,
  so ``agent -> workflows -> agent`` is no cycle: the workflow hands the loop its tools;
- the MCP server does not import the HTTP service, nor the service the MCP server: what both
  need (the bearer API keys) is in ``sira_seek.api_keys``.

Each rule is also run on probes holding the imports the old layout had, so a walker that stopped
seeing them would fail here rather than pass everything.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from source_imports import ROOT, imports, targets

FRONT_ENDS = (
    "sira_seek.client",
    "sira_seek.service",
    "sira_seek.cli",
    "cli",
    "sira_seek.integrations",
    "sira_seek.mcp",
)
"""Every front end: the facade, the HTTP service, the command line (installed as
``sira_seek.cli``, in the repository as ``cli``), the framework adapters, the MCP server."""

FACADE_NAMES = ("SiraSeek", "connect")
"""What ``sira_seek`` itself exports that is the facade (``connect`` returns a ``SiraSeek``)."""

METHODS = ("sira_seek.sira", "sira_seek.seek")

MCP_SDK = "mcp"


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def reached(module: str, names: tuple[str, ...]) -> list[str]:
    """Absolute modules an import reaches; ``from sira_seek import SiraSeek`` reaches the facade."""
    found = targets(module, names)
    if module == "sira_seek":
        found += ["sira_seek.client" for n in names if n in FACADE_NAMES]
    return found


def offending(path: Path, forbidden: tuple[str, ...], package: str | None = None) -> list[str]:
    """``file:line imports module`` for each import of ``path`` reaching ``forbidden``."""
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    return [
        f"{where}:{line} imports {module} {list(names)}"
        for line, module, names in imports(path, package)
        if any(_under(t, forbidden) for t in reached(module, names))
    ]


def imports_mcp_sdk(path: Path, package: str | None = None) -> bool:
    return any(_under(module, (MCP_SDK,)) for _, module, _ in imports(path, package))


def sources(*folders: str) -> list[Path]:
    files = [p for folder in folders for p in sorted((ROOT / folder).rglob("*.py"))]
    assert files, f"no modules under {folders}: the walk looks in the wrong place"
    return files


def test_workflows_import_no_front_end() -> None:
    files = sources("sira_seek/workflows")
    assert len(files) >= 20
    found = [line for path in files for line in offending(path, FRONT_ENDS)]
    assert found == [], "a workflow may not call the layer above it:\n" + "\n".join(found)


def test_modules_importing_the_mcp_sdk_reach_no_method() -> None:
    files = [p for p in sources("sira_seek", "esplugin", "cli") if imports_mcp_sdk(p)]
    assert any(p.parent.name == "mcp" for p in files), f"the MCP server not found in {files}"
    found = [line for path in files for line in offending(path, METHODS)]
    assert found == [], "the MCP server goes through the workflows:\n" + "\n".join(found)


def test_agent_package_imports_no_front_end_nor_workflow() -> None:
    files = sources("sira_seek/agent")
    assert {p.name for p in files} >= {"loop.py", "tools.py", "evaluation.py"}
    forbidden = (*FRONT_ENDS, "sira_seek.workflows")
    found = [line for path in files for line in offending(path, forbidden)]
    assert found == [], "the agentic loop is a method:\n" + "\n".join(found)


def test_the_mcp_server_and_the_http_service_import_each_other_not() -> None:
    """Two front ends side by side: what both need (the API keys check) lives in
    ``sira_seek.api_keys``; the MCP server used to import ``service.guards``."""
    mcp, service = sources("sira_seek/mcp"), sources("sira_seek/service")
    assert any(p.name == "server.py" for p in mcp) and any(p.name == "app.py" for p in service)
    found = [line for path in mcp for line in offending(path, ("sira_seek.service",))]
    found += [line for path in service for line in offending(path, ("sira_seek.mcp",))]
    assert found == [], "share a neutral module instead:\n" + "\n".join(found)


OLD_AGENTIC = """
def _run_agent():
    from sira_seek.agent.tools import AgentTools
    from sira_seek.client import SiraSeek
"""
OLD_MCP_SERVER = """
from mcp.server.mcpserver import MCPServer
from sira_seek.sira.retriever import SiraRetriever
from .tools import AgentTools
def run_server():
    from sira_seek.service.guards import ApiKeys
"""
OLD_AGENT_TOOLS = """
from sira_seek.client import SiraSeek
from sira_seek.workflows import validation
"""


@pytest.mark.parametrize(
    ("source", "package", "forbidden", "expected"),
    [
        (OLD_AGENTIC, "sira_seek.workflows", FRONT_ENDS, ["sira_seek.client"]),
        ("from sira_seek import SiraSeek\n", "sira_seek.workflows", FRONT_ENDS, ["sira_seek"]),
        ("from .. import connect\n", "sira_seek.workflows", FRONT_ENDS, ["sira_seek"]),
        ("from ..mcp import server\n", "sira_seek.workflows", FRONT_ENDS, ["sira_seek.mcp"]),
        ("import cli.search_cmd\n", "sira_seek.workflows", FRONT_ENDS, ["cli.search_cmd"]),
        (OLD_MCP_SERVER, "sira_seek.agent", METHODS, ["sira_seek.sira.retriever"]),
        (
            OLD_MCP_SERVER,
            "sira_seek.agent",
            FRONT_ENDS,
            ["sira_seek.service.guards"],
        ),
        (OLD_AGENT_TOOLS, "sira_seek.agent", (*FRONT_ENDS, "sira_seek.workflows"), None),
        (OLD_MCP_SERVER, "sira_seek.mcp", ("sira_seek.service",), ["sira_seek.service.guards"]),
        ("from ..mcp import server\n", "sira_seek.service", ("sira_seek.mcp",), ["sira_seek.mcp"]),
    ],
)
def test_the_checks_see_the_old_layout(
    tmp_path: Path,
    source: str,
    package: str,
    forbidden: tuple[str, ...],
    expected: list[str] | None,
) -> None:
    """The rules flag what the layout before the move had (a facade built in a workflow, the
    MCP server importing a retriever and the service, the agent tools importing the facade and
    the workflows), through plain, relative, function-level and re-exported imports."""
    probe = tmp_path / "probe.py"
    probe.write_text(source)
    found = [
        line.split(" imports ")[1].split(" ")[0] for line in offending(probe, forbidden, package)
    ]
    if expected is None:
        expected = ["sira_seek.client", "sira_seek.workflows"]
    assert found == expected


def test_the_mcp_sdk_is_told_from_the_mcp_package(tmp_path: Path) -> None:
    """``import mcp`` is the SDK; ``from . import server`` inside ``sira_seek.mcp`` is not."""
    sdk, ours = tmp_path / "sdk.py", tmp_path / "ours.py"
    sdk.write_text("from mcp.types import ToolAnnotations\n")
    ours.write_text("from .server import build_server\nfrom sira_seek.mcp import server\n")
    assert imports_mcp_sdk(sdk, "sira_seek.mcp")
    assert not imports_mcp_sdk(ours, "sira_seek.mcp")
