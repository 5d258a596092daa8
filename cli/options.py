"""Options shared by commands, and the one place errors become readable messages."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar, cast

import click
from pydantic import ValidationError

from sira_seek.backend import ScanContextLostError, SearchBackend
from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.corpus import ReadReport
from sira_seek.redaction import Redactor, redacted_output
from sira_seek.workflows.clusters import connect, resolve_url
from sira_seek.workflows.errors import (
    Conflict,
    InvalidInput,
    NotAllowed,
    NotFound,
    Unavailable,
    classify,
    validation_message,
)
from sira_seek.workflows.failures import (
    IngestTargetError,
    LLMCallError,
    LLMUnavailableError,
    MappingConflictError,
    SiraIndexError,
    SiraSeekEngineError,
    TermStatisticsError,
    WaitingForBatch,
)

from .exit_codes import BadInput, EngineFailure, ExitCode
from .groups import REDACTOR_META, debug_requested

F = TypeVar("F", bound=Callable[..., Any])


def cluster_options(func: F) -> F:
    """--url (or --cloud-id) and auth/TLS/SigV4 flags; each also reads its SIRA_SEEK_*
    environment variable. Which go together is decided by ``ClusterSettings``."""
    opts = [
        click.option("--url", envvar="SIRA_SEEK_URL", help="Cluster URL (wins over a local node)."),
        click.option("--api-key", envvar="SIRA_SEEK_API_KEY", help="API key (base64 id:key)."),
        click.option("--username", envvar="SIRA_SEEK_USERNAME"),
        click.option("--password", envvar="SIRA_SEEK_PASSWORD", help="Prefer the env variable."),
        click.option("--ca-certs", envvar="SIRA_SEEK_CA_CERTS", type=click.Path(exists=True)),
        click.option("--ssl-fingerprint", envvar="SIRA_SEEK_SSL_FINGERPRINT"),
        click.option(
            "--insecure",
            envvar="SIRA_SEEK_INSECURE",
            is_flag=True,
            help="Do not verify TLS certificates.",
        ),
        click.option(
            "--engine",
            envvar="SIRA_SEEK_ENGINE",
            type=click.Choice(["opensearch", "elasticsearch"]),
            default=None,
            help="Which local node to use when no --url is given.",
        ),
        click.option(
            "--aws-region",
            envvar="SIRA_SEEK_AWS_REGION",
            help="Sign requests with AWS SigV4 for this region (Amazon OpenSearch Service or "
            "Serverless; credentials from the AWS default chain; extra: aws).",
        ),
        click.option(
            "--aws-service",
            envvar="SIRA_SEEK_AWS_SERVICE",
            type=click.Choice(["es", "aoss"]),
            default=None,
            help="SigV4 service: es (a domain, the default) or aoss (a Serverless collection).",
        ),
        click.option(
            "--cloud-id",
            envvar="SIRA_SEEK_CLOUD_ID",
            help="Elastic Cloud deployment id, instead of --url (Elasticsearch).",
        ),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def cluster_settings(kwargs: dict[str, Any]) -> ClusterSettings:
    """Pop the cluster options from ``kwargs`` into validated settings (no network, no disk):
    options that cannot go together are ``InvalidInput`` (exit 2), in the settings' words."""
    values = {key: kwargs.pop(key, None) for key in CLUSTER_KEYS}
    insecure = values.pop("insecure")
    try:
        return ClusterSettings.model_validate(
            {**{k: v for k, v in values.items() if v is not None}, "verify_certs": not insecure}
        )
    except ValidationError as exc:
        raise InvalidInput(validation_message(exc)) from None


def backend_from_options(kwargs: dict[str, Any]) -> SearchBackend:
    """Pop the cluster options from ``kwargs`` and connect."""
    settings = resolve_url(cluster_settings(kwargs), NodeSettings())
    return connect(settings)


CLUSTER_KEYS = (
    "url", "api_key", "username", "password", "ca_certs", "ssl_fingerprint", "insecure", "engine",
    "aws_region", "aws_service", "cloud_id",
)  # fmt: skip
"""The parameters ``cluster_options`` adds to a command."""


class LazyBackend:
    """Connects on first call, once: a workflow calls it only after the input was checked,
    so a bad flag is refused without reaching for a cluster."""

    def __init__(self, options: dict[str, Any]) -> None:
        self._options = options
        self._backend: SearchBackend | None = None

    def __call__(self) -> SearchBackend:
        if self._backend is None:
            self._backend = backend_from_options(self._options)
        return self._backend


_ENGINE_ERRORS: tuple[type[BaseException], ...] = (
    SiraSeekEngineError,
    LLMCallError,
    LLMUnavailableError,
    TermStatisticsError,
    ScanContextLostError,
    SiraIndexError,  # the index is missing or lacks the sira-seek fields
    IngestTargetError,  # the index or alias cannot take writes
    MappingConflictError,  # the cluster's mapping refuses the enrichment fields
)
"""Failures of the cluster or LLM server, or of the index's state there: exit 1."""

_FILE_ERRORS: tuple[type[OSError], ...] = (
    FileNotFoundError,
    IsADirectoryError,
    NotADirectoryError,
    PermissionError,
)
"""Bad input (exit 2) when the file they name is a path the command line gave, or lies under
one; from anywhere else they are the machine's problem or a bug, left as a traceback.

Everything else that is bad input is said so by its type: the workflows' ``InvalidInput`` and
``NotAllowed``, and the library's ``sira_seek.input_errors.InputError`` family (a bad line or
record of an input file, JSON or encoding errors included, a missing input file, a malformed
``--llm`` spec, a checkpoint of another run, ...) and pydantic's ``ValidationError``, which
``workflows.errors.classify`` makes ``InvalidInput``. A plain ``ValueError`` is none of these:
it is a bug, and surfaces as one."""


def given_paths(ctx: click.Context | None = None) -> list[Path]:
    """The paths the running command was given: every value of its ``click.Path`` arguments
    and options (from the command line or their environment variables)."""
    ctx = ctx or click.get_current_context(silent=True)
    if ctx is None:
        return []
    found: list[Path] = []
    for param in ctx.command.params:
        if not isinstance(param.type, click.Path) or param.name is None:
            continue
        value = ctx.params.get(param.name)
        values = value if isinstance(value, list | tuple) else [value]
        found += [Path(v) for v in values if isinstance(v, str | Path) and str(v)]
    return found


def names_a_given_path(exc: BaseException, given: Sequence[Path]) -> bool:
    """Whether ``exc`` is a file error about one of ``given`` or something inside it."""
    filename = getattr(exc, "filename", None)
    if not isinstance(exc, _FILE_ERRORS) or not isinstance(filename, str | bytes | Path):
        return False
    target = Path(os.fsdecode(filename)).absolute()
    for path in given:
        base = path.absolute()
        if target == base or base in target.parents:
            return True
    return False


def exit_code_for(exc: BaseException, given: Sequence[Path] = ()) -> ExitCode | None:
    """Where ``exc`` goes in the exit-code table; ``None`` for an unknown failure (a bug,
    left as a traceback). The workflows' error kinds map first, as in every front end;
    ``given`` are the command's paths (``given_paths``), for file errors."""
    known = classify(exc)
    if isinstance(known, InvalidInput | NotAllowed):
        return ExitCode.BAD_INPUT
    if isinstance(known, NotFound | Conflict | Unavailable):
        return ExitCode.ENGINE_ERROR
    if isinstance(exc, _ENGINE_ERRORS):
        return ExitCode.ENGINE_ERROR
    if names_a_given_path(exc, given):
        return ExitCode.BAD_INPUT
    return None


def as_click_error(exc: BaseException, given: Sequence[Path] = ()) -> click.ClickException:
    """``exc`` as a one-line error carrying its exit code (1 unless it is bad input)."""
    if exit_code_for(exc, given) == ExitCode.BAD_INPUT:
        return BadInput(str(exc))
    return EngineFailure(str(exc))


def command_redactor(params: dict[str, Any]) -> Redactor:
    """The secrets of one command: its cluster and LLM options (given as flags or read from
    their variables) and every other ``SIRA_SEEK_*`` variable that holds one. The LLM spec is
    ``llm`` or ``llm_spec``; several cluster URLs (``urls``) count as one list."""
    text = {k: v for k, v in params.items() if isinstance(v, str)}
    for grouped in params.values():  # options gathered in one value (``SeekChoices``)
        if dataclasses.is_dataclass(grouped):
            for k, v in vars(grouped).items():
                if isinstance(v, str):
                    text.setdefault(k, v)
    urls = [text.get("url"), *(u for u in params.get("urls") or () if isinstance(u, str))]
    return Redactor.configured(
        url=",".join(u for u in urls if u),
        password=text.get("password"),
        api_key=text.get("api_key"),
        cloud_id=text.get("cloud_id"),
        llm=text.get("llm") or text.get("llm_spec"),
    )


def friendly_errors(func: F) -> F:
    """Known failures print one clear message and exit with their code from `exit_codes`,
    never a stack trace; an unknown one (a bug) is raised as it is, with its traceback.

    Everything the command writes (stdout, stderr, log lines, the error message) passes
    through the command's ``Redactor`` (``command_redactor``): no password, key or
    credential-carrying URL leaves in its output; a traceback that leaves the command (a bug,
    or ``--debug``) is printed masked by it too (``DebuggableGroup``).

    Under ``--debug`` (or ``SIRA_SEEK_DEBUG=1``) known failures are re-raised as they are
    too, so the traceback shows where they came from.
    """

    @functools.wraps(func)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except click.ClickException:
            raise
        except WaitingForBatch as waiting:
            report_waiting(waiting)
        except Exception as exc:
            given = given_paths()
            if exit_code_for(exc, given) is None or debug_requested():
                raise
            raise as_click_error(exc, given) from None

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        redact = command_redactor(kwargs)
        ctx = click.get_current_context(silent=True)
        if ctx is not None:
            ctx.meta[REDACTOR_META] = redact  # for the group, should a traceback leave
        try:
            with redacted_output(redact):
                return mapped(*args, **kwargs)
        except click.ClickException as exc:
            # click prints the message once the command returned, past the masked streams.
            # (``message`` is typed final; the exception keeps its class, code and context.)
            cast(Any, exc).message = redact(exc.message)
            raise

    wrapper.masks_output = True  # type: ignore[attr-defined]  # checked for every command
    return wrapper  # type: ignore[return-value]


def report_waiting(waiting: WaitingForBatch) -> NoReturn:
    """An offline batch round waits for its answers: say which file (``{"waiting_for": ...}``
    on stdout under ``--json``), and exit 75, neither success nor failure."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.params.get("as_json"):
        click.echo(json.dumps(waiting.to_json()))
    click.echo(f"waiting: {waiting}", err=True)
    raise click.exceptions.Exit(ExitCode.WAITING_FOR_BATCH)


def require_extra(extra: str, *modules: str) -> None:
    """One line naming the extra to install when an optional package is missing, never an
    ImportError traceback: the command cannot run without it."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        command = click.get_current_context().command_path
        raise click.ClickException(
            f"{command} needs {', '.join(missing)}, which is not installed: "
            f"pip install 'sira-seek[{extra}]'"
        )


def json_option(help_text: str = "Print the result as one JSON document on stdout.") -> Any:
    """``--json``: one parseable document on stdout, keys documented in the README."""
    return click.option("--json", "as_json", envvar="SIRA_SEEK_JSON", is_flag=True, help=help_text)


def no_progress_option(func: F) -> F:
    """``--no-progress`` (also ``SIRA_SEEK_NO_PROGRESS=1``) on every command that shows
    progress; ``--json`` implies it."""
    return click.option(
        "--no-progress",
        envvar="SIRA_SEEK_NO_PROGRESS",
        is_flag=True,
        help="No progress bars or per-item lines on stderr (implied by --json).",
    )(func)


def show_progress(*, no_progress: bool, as_json: bool = False) -> bool:
    """Whether a command draws progress: never under ``--no-progress`` or ``--json``."""
    return not (no_progress or as_json)


def strict_option(func: F) -> F:
    """``--strict/--no-strict`` for the commands that read evaluation inputs (queries, qrels,
    QA, expansions): a file with a bad line stops the command before any query runs (exit 2,
    every bad line named) unless ``--no-strict``, which skips bad lines and lists them."""
    return click.option(
        "--strict/--no-strict",
        default=True,
        show_default=True,
        help="Stop (exit 2) when an input file has a bad line, naming each; --no-strict "
        "skips bad lines and lists them on stderr.",
    )(func)


def echo_skipped(report: ReadReport, *, limit: int = 50) -> None:
    """List the lines a lenient read skipped, on stderr (stdout stays the result)."""
    echo_lines([str(bad) for bad in report.bad], limit=limit)


def echo_lines(bad: Sequence[str], *, limit: int = 50) -> None:
    """``echo_skipped`` for lines a workflow reports as text."""
    for line in bad[:limit]:
        click.echo(f"skipped {line}", err=True)
    if len(bad) > limit:
        click.echo(f"... and {len(bad) - limit} more bad lines skipped", err=True)


class AliasedChoice(click.Choice):  # type: ignore[type-arg]
    """A choice that also accepts old spellings (not listed in ``--help``) for old scripts."""

    def __init__(self, choices: list[str], aliases: dict[str, str]) -> None:
        super().__init__(choices)
        self.aliases = aliases

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value in self.aliases:
            value = self.aliases[value]
        return super().convert(value, param, ctx)


PROMPT_STYLES = ["auto", "chat", "fewshot"]
"""``fewshot`` for base models (solved examples to continue), ``chat`` for instruction models;
``completion`` (sira-sync's old spelling) is accepted as ``fewshot``."""


def prompt_style_option(func: F) -> F:
    """``--prompt-style`` with one set of values for ``ask``, ``eval qa`` and ``sira-sync``."""
    return click.option(
        "--prompt-style",
        type=AliasedChoice(PROMPT_STYLES, {"completion": "fewshot"}),
        default="auto",
        show_default=True,
        help="chat for instruction models, fewshot for base models (auto: by --llm).",
    )(func)


def default_data_dir() -> Path:
    """The shared evaluation data: $SIRA_SEEK_DATA, else ../shared/data from the repo root."""
    if os.environ.get("SIRA_SEEK_DATA"):
        return Path(os.environ["SIRA_SEEK_DATA"])
    for base in (Path.cwd(), *Path.cwd().parents):
        candidate = base.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return Path.cwd().parent / "shared" / "data"
