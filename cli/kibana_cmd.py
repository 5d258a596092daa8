"""`sira-seek kibana export`: saved objects for Kibana and OpenSearch Dashboards."""

from __future__ import annotations

import json
from pathlib import Path

import click

from sira_seek.workflows.inspection import saved_objects, to_ndjson

from .options import friendly_errors, json_option


@click.group()
def kibana() -> None:
    """Kibana / OpenSearch Dashboards helpers for the query log."""


@kibana.command("export")
@click.option(
    "--product",
    type=click.Choice(["kibana", "opensearch-dashboards"]),
    default="kibana",
    show_default=True,
)
@click.option("--prefix", default="sira-seek-log-", show_default=True, help="Log index prefix.")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Default: stdout.")
@json_option("Print what was exported, the objects included, as JSON.")
@friendly_errors
def kibana_export(product: str, prefix: str, out: Path | None, as_json: bool) -> None:
    """Write an index pattern, a saved search and a dashboard as importable NDJSON."""
    objects = saved_objects(product, prefix=prefix)  # type: ignore[arg-type]
    text = to_ndjson(objects)
    if out is not None:
        out.write_text(text)
    if as_json:
        payload = {
            "product": product,
            "prefix": prefix,
            "out": None if out is None else str(out),
            "count": text.count(chr(10)),
            "objects": objects,
        }
        click.echo(json.dumps(payload, indent=2))
        return
    if out is None:
        click.echo(text, nl=False)
        return
    click.echo(
        f"wrote {text.count(chr(10))} saved objects to {out}; import them in Stack Management "
        "(Dashboards Management) > Saved objects > Import",
        err=True,
    )
