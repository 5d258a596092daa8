"""The documentation site (mkdocs.yml, docs/) builds with `mkdocs build --strict`, README.md
stays a front page, and every command of both CLIs has its generated reference.

The build runs once per module, into a temporary folder, with the same Python as the tests
(the `docs` extra, part of the `test` extra, installs MkDocs and its plugins).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from markdown.extensions.toc import slugify

from sira_seek.cli.main import cli
from sira_seek.cli.sync import main as sync_main

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 250


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # Material's banner about MkDocs 2.0
        check=False,
    )
    return done, out


def test_the_docs_site_builds_with_strict(
    site: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, out = site
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    assert (out / "index.html").is_file()


def command_paths(command: click.Command, path: str) -> list[str]:
    """``path`` and the full path of every visible command under it, depth first."""
    paths = [path]
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=path)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                paths += command_paths(sub, f"{path} {name}")
    return paths


def _anchor(path: str) -> str:
    """The id mkdocs-click gives the heading of ``path`` (with attr_list on)."""
    return f'id="{slugify(path, "-")}"'


def test_readme_is_a_front_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    text = "\n".join(lines)
    # The two commands stay exactly as .ci/run and the Makefile know them.
    assert "make demo   # the main job" in text
    assert "make test   # the whole test suite" in text


def test_every_command_has_a_generated_reference_page(
    site: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    """Each top-level `sira-seek` command has its page (reference/cli/<name>.md), sira-sync
    one page with its subcommands; every command path, subcommands included, is a heading
    there (mkdocs-click's id is the slug of the full path), and the index page lists them."""
    done, out = site
    assert done.returncode == 0, done.stderr[-6000:]
    reference = out / "reference" / "cli"
    pages: dict[str, list[str]] = {"index": ["sira-seek"], "sira-sync": []}
    ctx = click.Context(cli, info_name="sira-seek")
    for name in cli.list_commands(ctx):
        sub = cli.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            pages[name] = command_paths(sub, f"sira-seek {name}")
    pages["sira-sync"] = command_paths(sync_main, "sira-sync")
    assert len(pages) > 10, sorted(pages)

    missing = []
    for page, paths in pages.items():
        html_file = reference / ("index.html" if page == "index" else f"{page}/index.html")
        html = html_file.read_text(encoding="utf-8") if html_file.is_file() else ""
        missing += [f"{path} ({page})" for path in paths if _anchor(path) not in html]
    assert not missing, f"commands without a generated reference: {missing}"

    index = (reference / "index.html").read_text(encoding="utf-8")
    for name in pages:
        if name not in ("index", "sira-sync"):
            assert f'href="{name}/"' in index, f"the command index does not link `{name}`"


def test_the_reference_is_generated_from_the_code(
    site: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    """The MCP tools page lists every tool the server lists, with each argument's bound from
    its input schema; the Python API page documents the workflows' request models field by
    field (griffe-pydantic), the framework retrievers and the MCP result models."""
    import asyncio
    import types

    from sira_seek.mcp.server import build_server

    done, out = site
    assert done.returncode == 0, done.stderr[-6000:]
    tools = (out / "reference" / "mcp-tools" / "index.html").read_text(encoding="utf-8")
    listed = asyncio.run(build_server(types.SimpleNamespace(index="x")).list_tools())  # type: ignore[arg-type]
    assert {t.name for t in listed} >= {"search", "categories", "fetch_document"}
    for tool in listed:
        assert f"<code>{tool.name}</code>" in tools, tool.name
    assert "&lt;= 100" in tools and "length &lt;= 512" in tools  # k's and doc_id's bounds
    api = (out / "reference" / "python-api" / "index.html").read_text(encoding="utf-8")
    for name in (
        "SearchRequest",
        "AskRequest",
        "RetrievalEvaluationRequest",
        "SiraResult",
        "SeekResult",
        "SiraSeekLangChainRetriever",
        "SiraSeekHaystackRetriever",
        "SearchToolResult",
    ):
        assert re.search(rf'id="sira_seek\.[\w.]+\.{name}"', api), name
    assert "pydantic-field" in api  # fields rendered one by one, not just the class docstring
