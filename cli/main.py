"""`sira-seek`: the command line is a thin layer over the library.

Each command lives in its own module and is imported only when it is run (`LazyGroup`), so
``sira-seek search`` does not pay for the imports of ``serve``, ``report`` or ``eval agentic``.
"""

from __future__ import annotations

from typing import Any

import click

from sira_seek import __version__

from .envvars import ROOT_PREFIX, assign_envvars
from .groups import LazyGroup, logging_options

COMMANDS = {
    "node": ".node_cmds:node",
    "ingest": ".ingest_cmd:ingest",
    "search": ".search_cmd:search",
    "explain": ".explain_cmd:explain",
    "ask": ".ask_cmd:ask",
    "report": ".report_cmd:report",
    "kibana": ".kibana_cmd:kibana",
    "demo": ".demo_cmd:demo",
    "mcp": ".mcp_cmd:mcp",
    "serve": ".serve_cmd:serve",
    "llm": ".llm_cmds:llm",
}
"""``sira-seek <name>`` -> where its command is defined (relative to this package)."""

EVAL_COMMANDS = {
    "retrieval": ".eval_cmds:eval_retrieval",
    "enrichment": ".eval_cmds:eval_enrichment",
    "qa": ".eval_qa_cmd:eval_qa",
    "qa-score": ".qa_score:qa_score",
    "agentic": ".agentic_cmd:eval_agentic",
}
"""``sira-seek eval <name>`` -> where its command is defined."""


@click.group(cls=LazyGroup, lazy=COMMANDS, prefix=ROOT_PREFIX)
@click.version_option(__version__, prog_name="sira-seek")
@logging_options
def cli() -> None:
    """SIRA retrieval and SEEK RAG on Elasticsearch / OpenSearch clusters."""


@cli.group("eval", cls=LazyGroup, lazy=EVAL_COMMANDS, prefix=ROOT_PREFIX, path=("eval",))
def eval_group() -> None:
    """Evaluate retrieval or answers."""


assign_envvars(cli, ROOT_PREFIX)


def __getattr__(name: str) -> Any:
    """``sira_seek.cli.main.search`` and the like: a command by its Python name, loaded and
    given its environment variables as when it runs (the docs' reference pages use this)."""
    for group, table in ((cli, COMMANDS), (eval_group, EVAL_COMMANDS)):
        for command_name, target in table.items():
            if target.rpartition(":")[2] == name:
                return group.get_command(click.Context(group), command_name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    cli()
