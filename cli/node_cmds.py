"""`sira-seek node up|down|status`: real local nodes and clusters from the official archives."""

from __future__ import annotations

import json

import click

from sira_seek.config import NodeSettings
from sira_seek.workflows.nodes import (
    DEFAULT_CLUSTER_HEAP,
    DEFAULT_VERSIONS,
    TESTED_VERSIONS,
    LocalCluster,
    LocalDeployment,
    LocalNode,
    local_clusters,
    running_deployments,
    running_local_nodes,
)

from .options import friendly_errors, no_progress_option, show_progress
from .progress import StatusLine

ENGINES = click.Choice(["opensearch", "elasticsearch"])


def _echo_json(value: object) -> None:
    click.echo(json.dumps(value, indent=2))


@click.group()
def node() -> None:
    """Start and stop a local node or cluster (cached download from Maven Central)."""


@node.command("up")
@click.option("--engine", type=ENGINES, default="opensearch", show_default=True)
@click.option(
    "--version",
    "version",
    default=None,
    help="Engine version (default per engine: "
    + ", ".join(f"{e} {v}" for e, v in DEFAULT_VERSIONS.items())
    + "; tested: "
    + "; ".join(f"{e} {', '.join(vs)}" for e, vs in TESTED_VERSIONS.items())
    + ").",
)
@click.option(
    "--nodes",
    "size",
    type=click.IntRange(1, 9),
    default=1,
    show_default=True,
    help="Nodes forming one cluster (2+: real discovery, replicas get assigned).",
)
@click.option("--port", type=int, default=None, help="HTTP port of the (first) node.")
@click.option(
    "--heap",
    default=None,
    help=f"JVM heap per node (default 512m; {DEFAULT_CLUSTER_HEAP} per node of a cluster).",
)
@click.option(
    "--secure",
    is_flag=True,
    help="HTTPS with a private CA, an admin and a read-only user (OpenSearch: 2.19.4 with "
    "its security plugin). Single node only.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the node(s) as JSON.")
@no_progress_option
@friendly_errors
def node_up(
    engine: str,
    version: str | None,
    size: int,
    port: int | None,
    heap: str | None,
    secure: bool,
    as_json: bool,
    no_progress: bool,
) -> None:
    """Start a node or cluster (or reuse the running one) and print ONE URL (the first
    node's; sira-seek itself uses every node's)."""
    progress = show_progress(no_progress=no_progress, as_json=as_json)
    if size > 1:
        cluster = LocalCluster(
            NodeSettings(secure=secure), engine, version, size=size, heap=heap, base_port=port
        )
        if cluster.running() is None:
            click.echo(
                f"starting a {size}-node {engine} {cluster.spec.version} cluster "
                "(first run downloads it) ...",
                err=True,
            )
        with StatusLine(enabled=progress) as status:
            started = cluster.up(on_status=status)
        deployment = LocalDeployment.from_cluster(started)
        click.echo(deployment.model_dump_json(indent=2) if as_json else deployment.url)
        return
    settings = NodeSettings(http_port=port, heap=heap or "512m", secure=secure)
    local = LocalNode(settings, engine, version)
    if local.running() is None:
        click.echo(f"starting {engine} {local.spec.version} (first run downloads it) ...", err=True)
    with StatusLine(enabled=progress) as status:
        state = local.up(on_status=status)
    click.echo(LocalDeployment.from_node(state).model_dump_json(indent=2) if as_json else state.url)
    creds = local.credentials()
    if creds is not None:
        click.echo(
            f"CA file: {creds.ca_certs}\nusers {creds.username} (superuser) and "
            f"{creds.reader_username} (read-only); passwords in "
            f"{local.node_dir / 'credentials.json'}",
            err=True,
        )


def _stopped_entry(
    entry: dict[str, object], engine: str, version: str, stopped: bool
) -> dict[str, object]:
    """A deployment as it was before ``down`` (its pids, for checking they are gone), plus
    whether anything was stopped; members are no longer alive."""
    members = entry.get("nodes")
    for member in members if isinstance(members, list) else []:
        member["alive"] = False
    return {"kind": "node", **entry, "engine": engine, "version": version, "stopped": stopped}


@node.command("down")
@click.option("--engine", type=ENGINES, default=None, help="Default: every running node.")
@click.option("--version", "version", default=None)
@click.option("--purge", is_flag=True, help="Also delete the node's data.")
@click.option("--secure", is_flag=True, help="The secured node started with --secure.")
@click.option(
    "--nodes",
    type=click.IntRange(min=1),
    default=None,
    help="Only the single node (1) or only the clusters of this many nodes; default: both.",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was stopped as JSON.")
@friendly_errors
def node_down(
    engine: str | None,
    version: str | None,
    purge: bool,
    secure: bool,
    nodes: int | None,
    as_json: bool,
) -> None:
    """Stop local nodes and clusters started by `node up` (a cluster stops as one)."""
    settings = NodeSettings(secure=secure)
    singles = (
        []
        if nodes is not None and nodes > 1
        else [LocalNode(settings, engine, version)]
        if engine
        else [
            LocalNode(settings.model_copy(update={"secure": s.secure}), s.engine, s.version)
            for s in running_local_nodes(settings)
        ]
    )
    clusters = [
        c
        for c in local_clusters(NodeSettings())
        if (engine is None or c.spec.engine == engine)
        and (version is None or c.spec.version == version)
        and (nodes is None or c.size == nodes)
        and not secure
    ]
    report: list[dict[str, object]] = []
    for local in singles:
        state = local.state()
        stopped = local.down(purge=purge)
        entry = LocalDeployment.from_node(state).model_dump() if state else {}
        report.append(_stopped_entry(entry, local.spec.engine, local.spec.version, stopped))
        if not as_json:
            word = "stopped" if stopped else "not running:"
            click.echo(f"{word} {local.spec.engine} {local.spec.version}")
    for cluster in clusters:
        cstate = cluster.state()
        stopped = cluster.down(purge=purge)
        entry = LocalDeployment.from_cluster(cstate).model_dump() if cstate else {}
        report.append(_stopped_entry(entry, cluster.spec.engine, cluster.spec.version, stopped))
        if not as_json:
            word = "stopped" if stopped else "not running:"
            click.echo(
                f"{word} {cluster.spec.engine} {cluster.spec.version} ({cluster.size}-node cluster)"
            )
    if as_json:
        _echo_json(report)
    elif not report:
        click.echo("no local node is running")


@node.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the running nodes as JSON.")
@friendly_errors
def node_status(as_json: bool) -> None:
    """List running local nodes; a cluster is one entry listing its members."""
    found = running_deployments(NodeSettings())
    if as_json:
        _echo_json([d.model_dump() for d in found])
        return
    if not found:
        click.echo("no local node is running")
    for dep in found:
        if dep.kind == "node":
            click.echo(f"{dep.engine} {dep.version} {dep.url} pid={dep.nodes[0].pid}")
            continue
        click.echo(f"{dep.engine} {dep.version} {dep.url} ({len(dep.nodes)}-node cluster)")
        for member in dep.nodes:
            state = "" if member.alive else " (down)"
            click.echo(f"  {member.name} {member.url} pid={member.pid}{state}")
