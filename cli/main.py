"""`sira-seek`: the command line is a thin layer over the library."""

from __future__ import annotations

import click

from sira_seek import __version__

from .agentic_cmd import eval_agentic
from .ask_cmd import ask
from .demo_cmd import demo
from .envvars import ROOT_PREFIX, assign_envvars
from .eval_cmds import eval_group
from .eval_qa_cmd import eval_qa
from .explain_cmd import explain
from .ingest_cmd import ingest
from .kibana_cmd import kibana
from .llm_cmds import llm
from .mcp_cmd import mcp
from .node_cmds import node
from .options import DebuggableGroup, logging_options
from .qa_score import qa_score
from .report_cmd import report
from .search_cmd import search
from .serve_cmd import serve


@click.group(cls=DebuggableGroup)
@click.version_option(__version__, prog_name="sira-seek")
@logging_options
def cli() -> None:
    """SIRA retrieval and SEEK RAG on Elasticsearch / OpenSearch clusters."""


for command in (node, ingest, search, explain, ask, eval_group, report, kibana, demo, mcp, serve):
    cli.add_command(command)
cli.add_command(llm)
eval_group.add_command(qa_score, "qa-score")
eval_group.add_command(eval_qa, "qa")
eval_group.add_command(eval_agentic, "agentic")
assign_envvars(cli, ROOT_PREFIX)


def main() -> None:
    cli()
