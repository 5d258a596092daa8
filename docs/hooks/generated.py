"""MkDocs hook: tables generated from the code, so the reference cannot drift from it.

Two markers, each alone on a line of a page:

``<!-- settings: sira_seek.sira.settings.SiraSettings -->``
    a table of the pydantic-settings model's fields: environment variable, type, default and
    description (the ``Field(description=...)``).
``<!-- click-group: sira_seek.cli.main:cli sira-seek -->``
    the group's own usage and options (what ``--help`` prints above its commands) and a table
    of its commands with their one-line help, each linked to ``cli/<name>.md``. mkdocs-click
    documents the commands themselves; it cannot show a group without all its subcommands.
``<!-- mcp-tools: sira_seek.mcp.server:build_server -->``
    each tool the MCP server lists (``list_tools``, as a client sees it): its description and
    a table of its arguments (type, default, bounds, description) from its input schema.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import types
import typing
from typing import Any

import click
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

_MARKER = re.compile(r"^<!-- (settings|click-group|mcp-tools): (\S+)(?: (\S+))? -->$", re.M)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return _MARKER.sub(_render, markdown)


def _render(match: re.Match[str]) -> str:
    kind, target, extra = match.group(1), match.group(2), match.group(3)
    if kind == "settings":
        module, _, name = target.rpartition(".")
        return _settings_table(getattr(importlib.import_module(module), name))
    module, _, name = target.partition(":")
    found = getattr(importlib.import_module(module), name)
    if kind == "mcp-tools":
        return _mcp_tools(found)
    return _group_summary(found, extra or found.name)


def _settings_table(model: Any) -> str:
    prefix = model.model_config.get("env_prefix", "")
    rows = ["| variable | type | default | meaning |", "|---|---|---|---|"]
    for name, info in model.model_fields.items():
        rows.append(
            f"| `{(prefix + name).upper()}` | {_type(info.annotation)} | {_default(info)} "
            f"| {_cell(info.description or '')} |"
        )
    doc = (model.__doc__ or "").strip().splitlines()
    return "\n".join(([_cell(doc[0]), ""] if doc else []) + rows) + "\n"


def _type(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " / ".join(f"`{arg}`" for arg in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type(arg) for arg in args if arg is not type(None)) + " (or unset)"
    if origin in (tuple, list, dict):
        return f"`{origin.__name__}`"
    name = getattr(annotation, "__name__", str(annotation))
    return {"SecretStr": "secret", "Path": "path", "str": "text"}.get(name, f"`{name}`")


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        return "computed (see meaning)" if info.description else "computed"
    if info.default is PydanticUndefined:
        return "required"
    value = info.default
    if value is None:
        return "unset"
    if isinstance(value, tuple):
        value = ",".join(str(item) for item in value)
    return f"`{value}`"


def _cell(text: str) -> str:
    """One table cell: one line, pipes and brackets escaped (``[#MODEL]`` is no link)."""
    text = " ".join(text.split())
    for char in "|[]":
        text = text.replace(char, "\\" + char)
    return text


def _group_summary(group: click.Group, prog_name: str) -> str:
    ctx = click.Context(group, info_name=prog_name)
    formatter = ctx.make_formatter()
    click.Command.format_options(group, ctx, formatter)
    options = formatter.getvalue().splitlines()[1:]
    lines = [
        f"## {prog_name}",
        "",
        _cell(group.help or ""),
        "",
        "**Usage:**",
        "",
        "```text",
        " ".join(group.collect_usage_pieces(ctx)).join([f"{prog_name} ", ""]),
        "```",
        "",
        "**Options:**",
        "",
        "```text",
        *options,
        "```",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        summary = _cell(command.get_short_help_str(limit=200))
        lines.append(f"| [`{prog_name} {name}`]({name}.md) | {summary} |")
    return "\n".join(lines) + "\n"


def _mcp_tools(build_server: Any) -> str:
    """The tools of the server ``build_server`` makes. Listing them reads only the tool
    functions' signatures, so a stand-in with the index name serves as ``AgentTools``."""
    server = build_server(types.SimpleNamespace(index="INDEX"))
    lines: list[str] = []
    for tool in asyncio.run(server.list_tools()):
        lines += [f"### `{tool.name}`", "", " ".join((tool.description or "").split()), ""]
        schema = tool.input_schema if hasattr(tool, "input_schema") else tool.inputSchema
        required = set(schema.get("required", ()))
        lines += ["| argument | type | default | bounds | meaning |", "|---|---|---|---|---|"]
        for arg, spec in schema.get("properties", {}).items():
            default = "required" if arg in required else f"`{spec.get('default')}`"
            if default == "`None`":
                default = "unset"
            lines.append(
                f"| `{arg}` | {_schema_type(spec)} | {default} | {_bounds(spec)} "
                f"| {_cell(spec.get('description', ''))} |"
            )
        lines.append("")
    return "\n".join(lines)


def _schema_type(spec: dict[str, Any]) -> str:
    options = spec.get("anyOf", [spec])
    names = []
    for option in options:
        kind = option.get("type")
        if kind == "null":
            continue
        if kind == "array":
            kind = f"list of {option.get('items', {}).get('type', 'any')}"
        names.append(f"`{kind}`")
    return " or ".join(names)


def _bounds(spec: dict[str, Any]) -> str:
    parts = []
    for key, word in (
        ("minimum", ">="),
        ("maximum", "<="),
        ("minLength", "length >="),
        ("maxLength", "length <="),
    ):
        if key in spec:
            parts.append(f"{word} {spec[key]}")
    return ", ".join(parts) or "-"
