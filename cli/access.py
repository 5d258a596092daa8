"""Who may call a server the command line starts (``serve``, ``mcp --transport http``):
the same API keys, the same refusal to expose an unauthenticated port."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any

import click

from sira_seek.api_keys import KEYS_ENV, read_api_keys
from sira_seek.input_errors import InputError

from .exit_codes import BadInput


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def api_keys_option(func: Any) -> Any:
    """``--api-keys-file`` and ``--open``, for every command that starts a server."""
    func = click.option(
        "--open",
        "run_open",
        is_flag=True,
        help="Serve a non-loopback --host without API keys (only behind your own authentication).",
    )(func)
    return click.option(
        "--api-keys-file",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        default=None,
        help=f"Bearer API keys, one per line (also {KEYS_ENV}, comma-separated): every "
        "request needs `Authorization: Bearer KEY`.",
    )(func)


def server_keys(api_keys_file: Path | None, host: str, run_open: bool) -> tuple[str, ...]:
    """The keys callers must present; exit 2 for a short key, or for a non-loopback host
    without keys unless ``--open``."""
    try:
        keys = read_api_keys(api_keys_file, os.environ.get(KEYS_ENV))
    except InputError as exc:
        raise BadInput(str(exc)) from None
    if not keys and not is_loopback(host) and not run_open:
        raise BadInput(
            f"refusing to serve {host} without API keys: give --api-keys-file (or {KEYS_ENV}), "
            "or --open when your own proxy authenticates callers"
        )
    if not keys and not is_loopback(host):
        click.echo(f"warning: listening on {host} without API keys (--open)", err=True)
    return keys
