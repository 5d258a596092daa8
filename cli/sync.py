"""`sira-sync`: corpus-side SIRA enrichment of existing indexes."""

from __future__ import annotations

import click


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
def main() -> None:
    """Enrich an existing index with LLM-proposed, DF-filtered vocabulary (not yet built)."""
    raise click.ClickException(
        "sira-sync enrichment is not implemented in this release yet; the index layout it "
        "writes (sira_enrichment.*, sira_sync.*) is already created by `sira-seek ingest`."
    )
