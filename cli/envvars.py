"""Every option of both commands reads an environment variable, named by one rule.

Why not click's ``auto_envvar_prefix``: it builds names from the Python parameter name
(``--json`` would read ``..._AS_JSON``, ``--llm`` ``..._LLM_SPEC``) and always prefixes the
command path, so ``--url`` would be ``SIRA_SEEK_SEARCH_URL`` instead of the promised
``SIRA_SEEK_URL``. The rule here, applied once to the finished command tree:

- a flag that means the same thing in every command (``SHARED_FLAGS``: cluster, auth and
  TLS, ``--index``, ``--llm``, ``--json``, ``--no-progress``, ...) reads ``SIRA_SEEK_<FLAG>``;
- any other flag reads ``<PREFIX>_<COMMAND PATH>_<FLAG>``, e.g. ``--measures`` of
  ``sira-seek eval retrieval`` reads ``SIRA_SEEK_EVAL_RETRIEVAL_MEASURES`` and ``--tau`` of
  ``sira-sync run`` reads ``SIRA_SEEK_SYNC_RUN_TAU``;

where ``<FLAG>`` is the long flag upper-cased with ``-`` as ``_`` (``--no-progress`` ->
``NO_PROGRESS``). A flag given on the command line wins over its variable.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

ROOT_PREFIX = "SIRA_SEEK"
SYNC_PREFIX = "SIRA_SEEK_SYNC"

SHARED_FLAGS = frozenset(
    {
        "url",
        "api-key",
        "username",
        "password",
        "ca-certs",
        "ssl-fingerprint",
        "insecure",
        "engine",
        "aws-region",
        "aws-service",
        "cloud-id",
        "index",
        "llm",
        "expansions",
        "on-llm-failure",
        "prompt-style",
        "thinking",
        "no-cache",
        "json",
        "no-progress",
        "verbose",
        "debug",
        "data",
    }
)
"""Flags with one meaning in every command that has them, hence one short variable."""

COMMAND_SCOPED = frozenset({("demo", "index")})
"""Shared flags that keep a command-path variable: the demo ingests wikimh into its
``--index``, so a ``SIRA_SEEK_INDEX`` naming your own index must not reach it."""


def _env_part(text: str) -> str:
    return text.upper().replace("-", "_")


def long_flag(option: click.Option) -> str:
    """The option's first ``--long`` spelling without its dashes: ``no-progress``."""
    for opt in option.opts:
        if opt.startswith("--"):
            return opt[2:]
    return option.opts[0].lstrip("-")


def expected_envvar(prefix: str, path: tuple[str, ...], option: click.Option) -> str:
    """The variable ``option`` reads under the rule in the module docstring."""
    flag = long_flag(option)
    if flag in SHARED_FLAGS and (" ".join(path), flag) not in COMMAND_SCOPED:
        return f"{ROOT_PREFIX}_{_env_part(flag)}"
    return "_".join([prefix, *(_env_part(p) for p in path), _env_part(flag)])


def _subcommands(command: click.Command, *, load: bool) -> dict[str, click.Command]:
    """A group's subcommands: every one (``load``: lazy ones are imported), or those loaded."""
    if not isinstance(command, click.Group):
        return {}
    if not load:
        return dict(command.commands)
    ctx = click.Context(command)
    found = {name: command.get_command(ctx, name) for name in command.list_commands(ctx)}
    return {name: sub for name, sub in found.items() if sub is not None}


def walk_options(
    command: click.Command, path: tuple[str, ...] = (), *, load: bool = True
) -> Iterator[tuple[tuple[str, ...], click.Command, click.Option]]:
    """Every user-facing option of ``command`` and its subcommands, with its command path
    (``load=False``: only the subcommands already imported)."""
    for param in command.params:
        # --help and the group's --version are eager actions, not settings.
        if isinstance(param, click.Option) and param.expose_value:
            yield path, command, param
    for name, sub in _subcommands(command, load=load).items():
        yield from walk_options(sub, (*path, name), load=load)


def assign_envvars(root: click.Command, prefix: str, path: tuple[str, ...] = ()) -> None:
    """Give every option of ``root`` (at ``path`` under the top command) its variable, and
    show it in ``--help``. Subcommands not imported yet get theirs when they are
    (`groups.LazyGroup`)."""
    for option_path, _command, option in walk_options(root, path, load=False):
        option.envvar = expected_envvar(prefix, option_path, option)
        option.show_envvar = True
