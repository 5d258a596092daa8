"""`sira-seek kibana export`: saved objects for Kibana and OpenSearch Dashboards."""

from __future__ import annotations

from pathlib import Path

import click

from sira_seek.inspection.saved_objects import saved_objects, to_ndjson


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
def kibana_export(product: str, prefix: str, out: Path | None) -> None:
    """Write an index pattern, a saved search and a dashboard as importable NDJSON."""
    text = to_ndjson(saved_objects(product, prefix=prefix))  # type: ignore[arg-type]
    if out is None:
        click.echo(text, nl=False)
        return
    out.write_text(text)
    click.echo(
        f"wrote {text.count(chr(10))} saved objects to {out}; import them in Stack Management "
        "(Dashboards Management) > Saved objects > Import",
        err=True,
    )
