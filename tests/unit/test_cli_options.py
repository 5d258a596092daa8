"""Every option of both commands reads the environment variable the docs document
(docs/reference/configuration.md, "Command-line options").

Walks the real command trees (click introspection), so a new option cannot ship without
one, and checks the variable actually feeds the option, not just that a name is set.
"""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from sira_seek.cli.envvars import SHARED_FLAGS, long_flag, walk_options
from sira_seek.cli.main import cli
from sira_seek.cli.sync import main as sync_main

TREES = [("SIRA_SEEK", cli), ("SIRA_SEEK_SYNC", sync_main)]
OPTIONS = [
    (prefix, path, option) for prefix, root in TREES for path, _cmd, option in walk_options(root)
]


def _documented(prefix: str, path: tuple[str, ...], option: click.Option) -> str:
    """The documented rule, written out again independently of cli/envvars.py."""
    flag = long_flag(option).upper().replace("-", "_")
    if long_flag(option) in SHARED_FLAGS and (path, long_flag(option)) != (("demo",), "index"):
        return f"SIRA_SEEK_{flag}"
    return "_".join([prefix, *(p.upper().replace("-", "_") for p in path), flag])


def test_the_walk_sees_every_command() -> None:
    paths = {" ".join(path) for _prefix, path, _opt in OPTIONS}
    assert {"search", "eval retrieval", "eval qa", "node up", "kibana export"} <= paths
    assert {"run", "status", "migrate"} <= paths
    assert len(OPTIONS) > 150


@pytest.mark.parametrize(
    ("prefix", "path", "option"),
    OPTIONS,
    ids=[f"{'-'.join(p) or 'root'}:{long_flag(o)}" for _x, p, o in OPTIONS],
)
def test_each_option_reads_its_documented_variable(
    prefix: str, path: tuple[str, ...], option: click.Option, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _documented(prefix, path, option)
    assert option.envvar == name
    monkeypatch.setenv(name, "1" if option.is_flag else "from-env")
    ctx = click.Context(click.Command("x"))
    assert option.resolve_envvar_value(ctx) == ("1" if option.is_flag else "from-env")


def test_one_command_never_has_two_options_on_one_variable() -> None:
    seen: dict[tuple[str, ...], set[str]] = {}
    for prefix, path, option in OPTIONS:
        names = seen.setdefault((prefix, *path), set())
        assert option.envvar not in names, (path, option.envvar)
        names.add(str(option.envvar))


def test_a_flag_on_the_command_line_wins_over_its_variable(tmp_path: object) -> None:
    runner = CliRunner()
    env = {"SIRA_SEEK_KIBANA_EXPORT_PRODUCT": "opensearch-dashboards", "SIRA_SEEK_JSON": "1"}
    from_env = runner.invoke(cli, ["kibana", "export"], env=env)
    assert from_env.exit_code == 0, from_env.output
    assert '"product": "opensearch-dashboards"' in from_env.stdout  # both variables applied
    flag = runner.invoke(cli, ["kibana", "export", "--product", "kibana"], env=env)
    assert '"product": "kibana"' in flag.stdout


def test_prompt_style_has_one_set_of_values_and_keeps_the_old_spelling() -> None:
    styles = {
        " ".join(path): option.type
        for _prefix, path, option in OPTIONS
        if long_flag(option) == "prompt-style"
    }
    assert set(styles) == {"ask", "eval qa", "run", "export-requests"}
    for kind in styles.values():
        assert isinstance(kind, click.Choice) and list(kind.choices) == ["auto", "chat", "fewshot"]
        assert kind.convert("completion", None, None) == "fewshot"  # sira-sync's old value
        with pytest.raises(click.BadParameter):
            kind.convert("base", None, None)


def test_every_command_has_json_and_progress_commands_have_no_progress() -> None:
    commands = {
        " ".join(path): {long_flag(o) for _p, pth, o in OPTIONS if pth == path}
        for _prefix, path, _o in OPTIONS
    }
    leaves = {name: flags for name, flags in commands.items() if name}
    without_json = sorted(name for name, flags in leaves.items() if "json" not in flags)
    assert without_json == []
    for name in ("ingest", "eval qa", "eval retrieval", "demo", "node up", "run", "migrate"):
        assert "no-progress" in leaves[name], name
