"""The source's shape, checked on its syntax trees: names that mean one thing, functions a
reader can hold in view.

- No class name is defined twice in sira_seek (``esplugin`` included): a name found in a
  traceback, a log line or the docs leads to one class (the HTTP body of ``POST /search`` is
  ``SearchBody``, the workflow's ``SearchRequest``).
- No function outside tests and benchmarks is longer than ``MAX_LINES``; the ones that were
  when the rule came are listed in ``long_functions.txt`` with their length as a ceiling, and
  that list may only shrink: no new entry, no listed function longer than listed, and an entry
  whose function is now short enough (or gone) is removed.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from source_imports import ROOT

MAX_LINES = 80
SOURCES = ("sira_seek", "esplugin", "cli")
"""The project's code outside tests and benchmarks (``esplugin`` installs as sira_seek.esplugin)."""
ALLOWED = Path(__file__).with_name("long_functions.txt")


def _files(*roots: str) -> Iterator[tuple[str, ast.Module]]:
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            yield rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)


def class_names(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """Every class defined anywhere in the module (nested ones included), with its line."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            yield node.name, node.lineno


def function_lengths(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    """(qualified name, lines from ``def`` to the last line) of every function and method,
    nested ones included (they count inside their parent too)."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = prefix + child.name
            yield name, (child.end_lineno or child.lineno) - child.lineno + 1
            yield from function_lengths(child, name + ".")
        elif isinstance(child, ast.ClassDef):
            yield from function_lengths(child, prefix + child.name + ".")
        else:
            yield from function_lengths(child, prefix)


def read_allowed() -> dict[str, int]:
    allowed = {}
    for line in ALLOWED.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            lines, where = line.split()
            allowed[where] = int(lines)
    return allowed


def test_no_class_name_is_defined_twice_in_sira_seek() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for rel, tree in _files("sira_seek", "esplugin"):
        for name, line in class_names(tree):
            where[name].append(f"{rel}:{line}")
    twice = {name: places for name, places in where.items() if len(places) > 1}
    assert not twice, f"class names defined more than once (rename by role): {twice}"


def test_no_function_outside_tests_and_benchmarks_is_longer_than_80_lines() -> None:
    allowed = read_allowed()
    long = {
        f"{rel}::{name}": lines
        for rel, tree in _files(*SOURCES)
        for name, lines in function_lengths(tree)
        if lines > MAX_LINES
    }
    grew = {f: (allowed[f], n) for f, n in long.items() if f in allowed and n > allowed[f]}
    new = {f: n for f, n in long.items() if f not in allowed}
    stale = sorted(set(allowed) - set(long))
    assert not new, f"functions over {MAX_LINES} lines (split them): {new}"
    assert not grew, f"listed long functions grew (listed, now): {grew}"
    assert not stale, (
        f"now {MAX_LINES} lines or fewer (or gone): remove from {ALLOWED.name}: {stale}"
    )


def test_the_scans_see_what_they_check() -> None:
    """A probe: the scans find a nested class and a nested long function (a scan that saw
    nothing would pass the two tests above)."""
    inner = "".join(f"                x{i} = {i}\n" for i in range(MAX_LINES))
    source = "class A:\n    class B:\n        def f(self):\n            def g():\n" + inner
    tree = ast.parse(source)
    assert [n for n, _ in class_names(tree)] == ["A", "B"]
    lengths = dict(function_lengths(tree))
    assert lengths["A.B.f.g"] == MAX_LINES + 1 and lengths["A.B.f"] == MAX_LINES + 2
