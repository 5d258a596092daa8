"""`sira-seek node up|down|status`: a real local node from the official archives."""

from __future__ import annotations

import click

from sira_seek.config import NodeSettings
from sira_seek.esplugin.cluster import running_local_nodes
from sira_seek.esplugin.local_node import LocalNode

from .options import friendly_errors

ENGINES = click.Choice(["opensearch", "elasticsearch"])


@click.group()
def node() -> None:
    """Start and stop a local single-node cluster (cached download from Maven Central)."""


@node.command("up")
@click.option("--engine", type=ENGINES, default="opensearch", show_default=True)
@click.option("--version", "version", default=None, help="Engine version (default per engine).")
@click.option("--port", type=int, default=None, help="HTTP port (default: a free one).")
@click.option("--heap", default="512m", show_default=True)
@click.option(
    "--secure",
    is_flag=True,
    help="HTTPS with a private CA, an admin and a read-only user (OpenSearch: 2.19.4 with "
    "its security plugin).",
)
@friendly_errors
def node_up(engine: str, version: str | None, port: int | None, heap: str, secure: bool) -> None:
    """Start a node (or reuse the running one) and print its URL."""
    settings = NodeSettings(http_port=port, heap=heap, secure=secure)
    local = LocalNode(settings, engine, version)
    if local.running() is None:
        click.echo(f"starting {engine} {local.spec.version} (first run downloads it) ...", err=True)
    state = local.up()
    click.echo(state.url)
    creds = local.credentials()
    if creds is not None:
        click.echo(
            f"CA file: {creds.ca_certs}\nusers {creds.username} (superuser) and "
            f"{creds.reader_username} (read-only); passwords in "
            f"{local.node_dir / 'credentials.json'}",
            err=True,
        )


@node.command("down")
@click.option("--engine", type=ENGINES, default=None, help="Default: every running node.")
@click.option("--version", "version", default=None)
@click.option("--purge", is_flag=True, help="Also delete the node's data.")
@click.option("--secure", is_flag=True, help="The secured node started with --secure.")
@friendly_errors
def node_down(engine: str | None, version: str | None, purge: bool, secure: bool) -> None:
    """Stop local nodes started by `node up`."""
    settings = NodeSettings(secure=secure)
    targets = (
        [LocalNode(settings, engine, version)]
        if engine
        else [
            LocalNode(settings.model_copy(update={"secure": s.secure}), s.engine, s.version)
            for s in running_local_nodes(settings)
        ]
    )
    if not targets:
        click.echo("no local node is running")
    for local in targets:
        stopped = local.down(purge=purge)
        word = "stopped" if stopped else "not running:"
        click.echo(f"{word} {local.spec.engine} {local.spec.version}")


@node.command("status")
def node_status() -> None:
    """List running local nodes."""
    nodes = running_local_nodes(NodeSettings())
    if not nodes:
        click.echo("no local node is running")
    for state in nodes:
        click.echo(f"{state.engine} {state.version} {state.url} pid={state.pid}")
