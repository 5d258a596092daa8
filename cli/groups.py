"""The command groups: `--verbose`/`--debug`, tracebacks under `--debug`, and subcommands
imported only when named.

Why lazy: each command pulls in its own part of the library (the engine clients, the LLM
stack, SciPy for significance tests), about a second of imports in all. A command that loads
only its own module starts in half the time, which a shell user notices, and so does a test
suite that runs the command line a few hundred times. This module imports nothing of the
library for the same reason.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from .envvars import assign_envvars

F = TypeVar("F", bound=Callable[..., Any])

DEBUG_ENV = "SIRA_SEEK_DEBUG"
_DEBUG_META = "sira_seek.debug"
REDACTOR_META = "sira_seek.redactor"
"""Where a command's ``Redactor`` is kept (``ctx.meta``, shared by the whole context tree) for
the group to mask a traceback that leaves the command (``friendly_errors`` sets it)."""


def debug_requested(ctx: click.Context | None = None) -> bool:
    """``--debug`` on the command's group, or ``SIRA_SEEK_DEBUG`` set to a true value."""
    ctx = ctx or click.get_current_context(silent=True)
    if ctx is not None and ctx.meta.get(_DEBUG_META):
        return True
    return os.environ.get(DEBUG_ENV, "").strip().lower() in ("1", "true", "yes", "on")


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at emit time (click's test runner swaps it)."""

    def __init__(self) -> None:
        super().__init__()

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


_CLIENT_LOGGERS = ("elastic_transport", "opensearch")


def configure_cli_logging(*, verbose: bool, debug: bool) -> None:
    """The commands are the application, so they (never the library) set up logging.

    Default: warnings only, as bare lines (what Python shows with no configuration).
    ``--verbose``: sira-seek's INFO records; ``--debug``: its DEBUG records, plus the
    clients' request lines (``elastic_transport``, ``opensearch``), with times and logger names.
    Below ``--debug``, a warning the command prints itself as a ``note:`` (the library marks it
    ``REPORTED_IN_RESULT``: a SIRA fallback) is not shown twice.
    """
    from sira_seek.workflows.method_parts import REPORTED_IN_RESULT

    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(old)
    handler = _StderrHandler()
    fmt = "%(levelname)s: %(message)s" if verbose else "%(message)s"
    if debug:
        fmt = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    handler.setFormatter(logging.Formatter(fmt))
    if not debug:
        marks = tuple(REPORTED_IN_RESULT)
        handler.addFilter(lambda record: not any(getattr(record, m, False) for m in marks))
        # The clients log an expected 404 (an index-exists probe) as a warning: only --debug
        # shows their request lines.
        handler.addFilter(
            lambda record: (
                record.levelno >= logging.ERROR or not record.name.startswith(_CLIENT_LOGGERS)
            )
        )
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)
    if not (verbose or debug):
        handler.setLevel(logging.WARNING)  # what Python's last-resort handler shows
        return
    logging.getLogger("sira_seek").setLevel(logging.DEBUG if debug else logging.INFO)
    if debug:
        for client in _CLIENT_LOGGERS:
            logging.getLogger(client).setLevel(logging.INFO)


def logging_options(func: F) -> F:
    """--verbose / --debug for a command group (``sira-seek``, ``sira-sync``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, verbose: bool, debug: bool, **kwargs: Any) -> Any:
        debug = debug or debug_requested()
        if debug:
            click.get_current_context().meta[_DEBUG_META] = True
        configure_cli_logging(verbose=verbose, debug=debug)
        return func(*args, **kwargs)

    with_flags = click.option(
        "--debug",
        is_flag=True,
        help=f"DEBUG logs, and errors with their traceback (also {DEBUG_ENV}=1).",
    )(wrapper)
    with_flags = click.option(
        "--verbose", "-v", is_flag=True, help="Progress logs (INFO) on stderr."
    )(with_flags)
    return with_flags  # type: ignore[return-value]


class DebuggableGroup(click.Group):
    """A command group whose one-line errors show where they came from under ``--debug``.

    Commands turn known failures into ``click.ClickException(...) from None``; under
    ``--debug`` the exception they were made from is raised instead, with its traceback.
    Errors made from nothing (usage errors) stay one line.

    A traceback that leaves the command this way, or a bug's, is printed masked by the
    command's ``Redactor`` (else the configured one: ``SIRA_SEEK_*`` variables and shapes):
    the exception message may carry a cluster or LLM URL with its password.
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return self._invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # click's own: a masked one-line message or an exit code, no traceback
        except Exception:
            from sira_seek.redaction import Redactor, mask_uncaught

            mask_uncaught(ctx.meta.get(REDACTOR_META) or Redactor.configured())
            raise

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            cause = exc.__cause__ or exc.__context__
            if cause is None or isinstance(cause, click.ClickException):
                raise
            if not debug_requested(ctx):
                raise
            raise cause from None


class LazyGroup(DebuggableGroup):
    """A group whose subcommands are ``"module:attribute"`` references, imported when named.

    ``path`` is the group's place under the root (``("eval",)``) and ``prefix`` the root's
    environment-variable prefix: a command gets its variables (`envvars`) when it is loaded,
    as the eagerly built trees get them all at once. ``sira-seek --help`` still lists every
    command with its summary (it loads them all; that is the one slow listing).
    """

    def __init__(
        self,
        *args: Any,
        lazy: Mapping[str, str] | None = None,
        prefix: str = "",
        path: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})
        self.prefix = prefix
        self.path = path

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module_name, _, attribute = self.lazy[cmd_name].partition(":")
            command = getattr(importlib.import_module(module_name, __package__), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{self.lazy[cmd_name]} is not a click command")
            assign_envvars(command, self.prefix, (*self.path, cmd_name))
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)
