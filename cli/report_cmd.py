"""`sira-seek report RUN.json [...] --out report.html`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from sira_seek.redaction import write_masked_text
from sira_seek.workflows.reports import (
    BrowserUnavailableError,
    pick_baseline,
    render_report,
    screenshot,
)
from sira_seek.workflows.scores import RunRecord

from .options import friendly_errors, json_option


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out", type=click.Path(path_type=Path), default=Path("report.html"), show_default=True
)
@click.option(
    "--baseline",
    default=None,
    help="Run name to compare against, per query and with a paired t-test "
    "(default: the first BM25 run, else the first run).",
)
@click.option("--title", default="", help="Report title.")
@click.option(
    "--screenshot",
    "png",
    type=click.Path(path_type=Path),
    default=None,
    help="Also render the report to this PNG with headless Chromium.",
)
@json_option("Print the written files, the runs and the browser check as JSON.")
@friendly_errors
def report(
    runs: tuple[Path, ...],
    out: Path,
    baseline: str | None,
    title: str,
    png: Path | None,
    as_json: bool,
) -> None:
    """Compare saved runs (`eval retrieval --save-run`) in one self-contained HTML file.

    Shows means, paired significance against the baseline, per-query wins and losses, recall@k,
    latency and LLM token distributions.
    """
    records = [RunRecord.load(p) for p in runs]
    # The run compared against, named once: the HTML and --json say the same one.
    base = pick_baseline(records, baseline).name
    write_masked_text(out, render_report(records, baseline=base, title=title))
    console_errors: list[str] = []
    if png is not None:
        try:
            console_errors = list(screenshot(out, png).console_errors)
        except BrowserUnavailableError as exc:  # a missing tool: exit 1, not bad input
            raise click.ClickException(str(exc)) from None
    if as_json:
        payload = {
            "out": str(out),
            "screenshot": None if png is None else str(png),
            "runs": [r.name for r in records],
            "baseline": base,
            "console_errors": console_errors,
        }
        click.echo(json.dumps(payload, indent=2))
        return
    click.echo(str(out))
    for line in console_errors:
        click.echo(f"browser console: {line}", err=True)
    if png is not None:
        click.echo(str(png))
