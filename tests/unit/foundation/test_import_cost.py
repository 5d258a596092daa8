"""What a command pulls in when it starts: every ``sira-seek`` command is a new process, so
an import made eagerly anywhere on its path is paid on every run (by a shell user, and by a
test suite that runs the command line a few hundred times). The command line imports only the
command it runs (`cli.groups.LazyGroup`), and the packages load their exports on first use
(`sira_seek.lazy_exports`); these checks fail when an eager import creeps back in, e.g. a
package ``__init__`` re-exporting its modules again or ``cli/main.py`` importing a command.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "scipy",
    "elasticsearch",
    "opensearchpy",
    "fastapi",
    "mcp",
    "httpx",
    "sira_seek.agent",
    "sira_seek.service",
    "sira_seek.llm.factory",
    "sira_seek.seek.pipeline",
)


def modules_after(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``statement``."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY))


def test_the_version_loads_no_command() -> None:
    loaded = modules_after(
        "from click.testing import CliRunner\n"
        "from sira_seek.cli.main import cli\n"
        "assert CliRunner().invoke(cli, ['--version']).exit_code == 0"
    )
    assert not {m for m in loaded if m.startswith("sira_seek.cli.") and m.endswith("_cmd")}
    assert heavy_in(loaded) == []


@pytest.mark.parametrize("path", [("search",), ("eval", "retrieval"), ("ingest",)])
def test_a_cluster_command_loads_no_engine_client_llm_stack_or_service(
    path: tuple[str, ...],
) -> None:
    """The engine client is imported when a cluster answers (one of the two, ~0.5-0.8 s), the
    LLM stack when ``--llm`` is given, SciPy only for ``report``'s significance tests."""
    loaded = modules_after(
        "import click\n"
        "from sira_seek.cli.main import cli\n"
        f"group = cli\nfor name in {list(path)!r}:\n"
        "    group = group.get_command(click.Context(group), name)\n"
        "assert group is not None"
    )
    assert heavy_in(loaded) == []


def test_search_loads_no_seek_module() -> None:
    """``sira-seek search`` (BM25 or SIRA) needs none of SEEK's modules; the query log's
    SEEK record type is an annotation only (about 0.1 s of every search's start here)."""
    loaded = modules_after(
        "import click\n"
        "from sira_seek.cli.main import cli\n"
        "assert cli.get_command(click.Context(cli), 'search') is not None"
    )
    assert "sira_seek.cli.search_cmd" in loaded
    assert sorted(m for m in loaded if m.startswith("sira_seek.seek")) == []


def test_sira_sync_starts_without_an_http_client_or_engine_client() -> None:
    """``sira-sync`` builds LLM request bodies (``export-requests``) without the live client's
    HTTP stack: httpx (with rich through its CLI) cost about 0.3 s of every start here."""
    loaded = modules_after("from sira_seek.cli.sync import main")
    assert "sira_seek.llm.openai_body" in loaded
    assert heavy_in(loaded) == []


def test_a_record_module_does_not_load_its_package() -> None:
    """``sira_seek.seek.results`` (pydantic records) must not run the SEEK pipeline's imports:
    the package's names load when asked for, and still resolve."""
    loaded = modules_after(
        "import sira_seek.seek.results\n"
        "from sira_seek.seek import SeekPipeline, SeekResult\n"
        "assert SeekResult is sira_seek.seek.results.SeekResult"
    )
    assert "sira_seek.seek.pipeline" in loaded  # asked for, so loaded
    assert "sira_seek.seek.api" not in loaded


@pytest.mark.parametrize(
    "package", ["sira_seek.llm", "sira_seek.seek", "sira_seek.sira", "sira_seek.sync"]
)
def test_every_exported_name_resolves(package: str) -> None:
    module = __import__(package, fromlist=["__all__"])
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert missing == []
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018
