"""The JSON keys the docs' "JSON output" page documents (docs/reference/json-output.md, its
"Keys per command" table), read from that page itself, so the documentation and the commands
cannot drift apart unnoticed.

A table cell is read as a small grammar: a backticked name is a key; ``[{...}]`` or ``{...}``
right after a key lists the keys of its items (or of its object); ``...`` means "and more"
(the listed keys are then a subset); a CamelCase name (``SeekResult``) means "every field of
that model"; the bare word ``measures`` means the default retrieval measures; flags
(``--explain``) and parenthesised words are prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from docs_pages import page
from pydantic import BaseModel

from sira_seek.metrics.retrieval import DEFAULT_MEASURES
from sira_seek.seek.results import SeekResult
from sira_seek.sync.run_report import RunReport

JSON_PAGE = "reference/json-output.md"
"""The docs page (under docs/) that documents every command's JSON keys."""

MODELS: dict[str, type[BaseModel]] = {"SeekResult": SeekResult, "RunReport": RunReport}
"""Models the table names for "every field of it"."""

_TOKEN = re.compile(r"`([^`]+)`|\"([^\"]+)\"|(\[\{|\{|\}\]|\})|(\.\.\.)|\b(measures)\b")


@dataclass
class KeySpec:
    """Documented keys of one JSON object (and of the objects nested under some of them)."""

    keys: set[str] = field(default_factory=set)
    open: bool = False  # "..." : the listed keys are a subset
    models: list[str] = field(default_factory=list)  # "every field of this model" too
    nested: dict[str, KeySpec] = field(default_factory=dict)


def parse_cell(text: str) -> KeySpec:
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]  # a JSON-like literal: {"engine", ..., "nodes": [{...}], ...}
    tokens = list(_TOKEN.finditer(text))
    spec, rest = _parse(tokens, 0)
    assert rest == len(tokens), f"unbalanced braces in docs table cell: {text}"
    return spec


def _parse(tokens: list[re.Match[str]], i: int) -> tuple[KeySpec, int]:
    spec = KeySpec()
    last: str | None = None
    while i < len(tokens):
        name = tokens[i].group(1) or tokens[i].group(2)
        brace, dots, measures = tokens[i].group(3), tokens[i].group(4), tokens[i].group(5)
        i += 1
        if brace in ("[{", "{"):
            assert last is not None, "a nested object must follow its key"
            spec.nested[last], i = _parse(tokens, i)
        elif brace:
            return spec, i
        elif dots:
            spec.open = True
        elif measures:
            spec.keys |= set(DEFAULT_MEASURES)
        elif name and name.startswith("-"):
            continue  # a flag mentioned in prose
        elif name and re.fullmatch(r"[A-Z][A-Za-z]+", name):
            spec.models.append(name)
        elif name:
            spec.keys.add(name)
            last = name
    return spec, i


@cache
def scripting_table() -> dict[str, str]:
    """``command -> JSON keys cell`` of the docs' "Keys per command" table."""
    text = page(JSON_PAGE)
    start = text.index("| command | JSON keys |")
    rows: dict[str, str] = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        command, cell = (part.strip() for part in line.strip().strip("|").split("|", 1))
        rows[command.strip("`")] = cell
    return rows


def documented(command: str) -> KeySpec:
    """The keys documented for ``command`` (``"eval retrieval"``, ``"sira-sync status"``...)."""
    table = scripting_table()
    if command.startswith("sira-sync"):
        # One row for sira-sync: "the `RunReport` (...); `status`: ...; `migrate`: ..."
        parts = table["sira-sync [run]"].split("; ")
        subcommands = {"sira-sync run": parts[0]}
        for part in parts[1:]:
            label, cell = part.split(":", 1)
            subcommands[f"sira-sync {label.strip().strip('`')}"] = cell
        return parse_cell(subcommands[command])
    if command.startswith("node "):
        # The node entry is spelled out in the page's "Local nodes" section.
        text = page(JSON_PAGE)
        found = re.search(r"`node status` take `--json`: `(\{.*?\})`", text, re.DOTALL)
        assert found, f"docs/{JSON_PAGE} no longer spells out the node JSON entry"
        return parse_cell(found.group(1))
    return parse_cell(table[command])


def check_keys(value: Any, spec: KeySpec, where: str, *, nonempty: set[str]) -> None:
    """``value`` has every documented key, and no other unless the docs say "...";
    documented nested objects are checked too (lists named in ``nonempty`` must have items)."""
    assert isinstance(value, dict), f"{where} is {type(value).__name__}, not an object"
    actual = set(value)
    model_keys = set().union(*(MODELS[m].model_fields for m in spec.models))
    assert spec.keys <= actual, f"{where}: documented but absent: {sorted(spec.keys - actual)}"
    if spec.models:
        assert actual == spec.keys | model_keys, (where, sorted(actual ^ (spec.keys | model_keys)))
    elif not spec.open:
        assert actual == spec.keys, f"{where}: undocumented keys {sorted(actual - spec.keys)}"
    for key, sub in spec.nested.items():
        # A documented object may be null ("null otherwise"): nothing in it to check, unless
        # the case names the key in ``nonempty``.
        found = value[key]
        items = found if isinstance(found, list) else [] if found is None else [found]
        if key in nonempty:
            assert items, f"{where}.{key} is empty: its documented keys went unchecked"
        for n, item in enumerate(items):
            check_keys(item, sub, f"{where}.{key}[{n}]", nonempty=nonempty)
