"""`sira-seek`: the command line is a thin layer over the library."""

from __future__ import annotations

import click

from sira_seek import __version__

from .demo_cmd import demo
from .eval_cmds import eval_group
from .explain_cmd import explain
from .ingest_cmd import ingest
from .kibana_cmd import kibana
from .node_cmds import node
from .report_cmd import report
from .search_cmd import search


@click.group()
@click.version_option(__version__, prog_name="sira-seek")
def cli() -> None:
    """SIRA retrieval and SEEK RAG on Elasticsearch / OpenSearch clusters."""


cli.add_command(node)
cli.add_command(ingest)
cli.add_command(eval_group)
cli.add_command(demo)
cli.add_command(kibana)
cli.add_command(report)
cli.add_command(search)
cli.add_command(explain)


def _register_optional() -> None:
    try:
        from .qa_score import qa_score
    except ImportError:
        return
    eval_group.add_command(qa_score, "qa-score")


_register_optional()


def main() -> None:
    cli()
