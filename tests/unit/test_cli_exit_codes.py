"""Only genuine input errors exit 2 (cli/options.py ``friendly_errors``).

Bad input is said by its type: the workflows' ``InvalidInput``/``NotAllowed``, the library's
``InputError`` family, pydantic's ``ValidationError``, and file errors about a path the
command was given. A plain ``ValueError`` (or a file error about anything else) is a bug:
it keeps its traceback and Python's exit 1, never "bad input".
"""

from __future__ import annotations

import ast
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from sira_seek.backend import EngineError
from sira_seek.cli.options import friendly_errors
from sira_seek.corpus import BadInputLineError, BadRecord
from sira_seek.ingest import IngestTargetError
from sira_seek.input_errors import InputError, MissingInputFile
from sira_seek.llm.spec import BackendSpecError, parse_backend_spec
from sira_seek.metrics.qa import PredictionFileError
from sira_seek.seek.checkpoint import CheckpointMismatchError
from sira_seek.seek.pipeline import RetrieverRequiredError
from sira_seek.seek.questions import QAFileError
from sira_seek.sira.df_check import TooManyCandidatesError
from sira_seek.sira.retriever import EmptyQueryError
from sira_seek.sync.batch_output import BatchOutputError
from sira_seek.sync.checkpoint import ResumeMismatchError
from sira_seek.sync.mapping import MappingConflictError
from sira_seek.workflows.errors import Conflict, InvalidInput, NotAllowed, classify

ROOT = Path(__file__).resolve().parents[2]


def command_raising(make: object) -> click.Command:
    """A command with a path argument and a path option that raises ``make(source, out)``."""

    @click.command()
    @click.argument("source", type=click.Path(path_type=Path))
    @click.option("--out", type=click.Path(path_type=Path), default=None)
    @friendly_errors
    def run(source: Path, out: Path | None) -> None:
        raise make(source, out)  # type: ignore[operator]

    return run


def invoke(make: object, *args: str) -> click.testing.Result:
    return CliRunner().invoke(command_raising(make), list(args) or ["given.jsonl"])


class Strict(BaseModel):
    k: int


def _validation_error() -> Exception:
    try:
        Strict.model_validate({"k": "many"})
    except Exception as exc:
        return exc
    raise AssertionError("no ValidationError")


BAD_INPUT = [
    pytest.param(lambda s, o: InvalidInput("k must be positive", field="k"), id="InvalidInput"),
    pytest.param(lambda s, o: NotAllowed("index outside the allow-list"), id="NotAllowed"),
    pytest.param(lambda s, o: InputError("a value the caller gave"), id="InputError"),
    pytest.param(lambda s, o: MissingInputFile(f"no corpus at {s}"), id="MissingInputFile"),
    pytest.param(lambda s, o: _validation_error(), id="ValidationError"),
    pytest.param(lambda s, o: FileNotFoundError(2, "No such file", str(s)), id="given-missing"),
    pytest.param(lambda s, o: IsADirectoryError(21, "Is a directory", str(s)), id="given-dir"),
    pytest.param(
        lambda s, o: PermissionError(13, "Permission denied", str(o / "run.json")),
        id="inside-given-folder",
    ),
]


@pytest.mark.parametrize("make", BAD_INPUT)
def test_genuine_input_errors_exit_2_in_one_line(make: object, tmp_path: Path) -> None:
    result = invoke(make, "given.jsonl", "--out", str(tmp_path))
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Error: ") and "Traceback" not in result.output


BUGS = [
    pytest.param(
        lambda s, o: ValueError("invalid literal for int() with base 10: 'x'"), id="ValueError"
    ),
    pytest.param(lambda s, o: KeyError("missing"), id="KeyError"),
    pytest.param(lambda s, o: UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"), id="decode"),
    pytest.param(
        lambda s, o: FileNotFoundError(2, "No such file", "/opt/sira/internal/cache.json"),
        id="file-not-given",
    ),
    pytest.param(lambda s, o: PermissionError(13, "Permission denied"), id="no-filename"),
]


@pytest.mark.parametrize("make", BUGS)
def test_anything_else_is_a_bug_with_its_traceback_not_bad_input(make: object) -> None:
    result = invoke(make)
    assert result.exit_code == 1
    assert result.exception is not None and not isinstance(result.exception, SystemExit)
    assert "Error: " not in result.output  # no one-line "bad input" message


def test_cluster_failures_exit_1_in_one_line() -> None:
    result = invoke(lambda s, o: EngineError("the cluster cannot be reached"))
    assert result.exit_code == 1 and result.output == "Error: the cluster cannot be reached\n"


@pytest.mark.parametrize(
    "error",
    [
        BadInputLineError([BadRecord(path="q.jsonl", line=2, reason="missing `text`")]),
        QAFileError([BadRecord(path="qa.jsonl", line=1, reason="missing `question`")]),
        PredictionFileError("p.jsonl", 3, "no prediction"),
        CheckpointMismatchError("checkpoint of another method"),
        ResumeMismatchError("checkpoint of another run"),
        BatchOutputError("no usable line"),
        BackendSpecError("not a spec"),
        EmptyQueryError("the query is empty"),
        TooManyCandidatesError("too many phrases"),
        RetrieverRequiredError("give a retriever"),
        MissingInputFile("no such file"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_the_librarys_input_errors_are_one_family_every_front_end_calls_invalid_input(
    error: Exception,
) -> None:
    assert isinstance(error, InputError) and isinstance(error, ValueError)
    assert isinstance(classify(error), InvalidInput)


@pytest.mark.parametrize(
    "error", [IngestTargetError("read-only index"), MappingConflictError("mapping refuses it")]
)
def test_an_index_in_the_wrong_state_is_not_bad_input(error: Exception) -> None:
    assert isinstance(classify(error), Conflict)


def test_a_malformed_llm_spec_is_bad_input() -> None:
    for spec in ("gpt4", "vllm:model", "nope:x"):
        with pytest.raises(BackendSpecError):
            parse_backend_spec(spec)


def test_the_command_line_never_raises_a_bare_value_error() -> None:
    """cli/ raises the kinds above (or click's own errors); a bare ValueError would be
    reported as a bug."""
    found = []
    for path in sorted((ROOT / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                call = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(call, ast.Name) and call.id == "ValueError":
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []
