"""A command whose optional extra is not installed says which extra, in one line."""

from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner

from sira_seek.cli.main import cli


@pytest.mark.parametrize(
    ("args", "hidden", "extra"),
    [
        (["serve", "--port", "0"], "fastapi", "serve"),
        (["mcp", "--index", "wikimh"], "mcp", "mcp"),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, args: list[str], hidden: str, extra: str
) -> None:
    real = importlib.util.find_spec

    def without(name: str, *rest: object) -> object:
        return None if name == hidden else real(name, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", without)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert f"pip install 'sira-seek[{extra}]'" in result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1
