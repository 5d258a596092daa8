"""The imports a source file makes, read from its syntax tree, for the layering tests.

Every import counts: at module level, inside functions, under ``if TYPE_CHECKING:``,
relative ones, and ``importlib.import_module("...")`` / ``__import__("...")`` with a literal.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path) -> str:
    """The installed name of a source file (``esplugin/`` installs as ``sira_seek.esplugin``)."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] == "esplugin":
        parts = ["sira_seek", *parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path, package: str | None = None) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(line, absolute module, imported names) for every import anywhere in the file, plus
    ``importlib.import_module("...")`` / ``__import__("...")`` calls with a literal name.
    ``package`` (the file's package, for relative imports) defaults to where the file lives."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    if package is None:
        package = module_name(path)
        if path.name != "__init__.py":
            package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            yield node.lineno, module, tuple(a.name for a in node.names)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            literal = first.value if isinstance(first, ast.Constant) else None
            if name in ("import_module", "__import__") and isinstance(literal, str):
                yield node.lineno, literal, ()


def targets(module: str, names: tuple[str, ...]) -> list[str]:
    """What an import reaches: the module, and for ``from pkg import sub`` each submodule."""
    return [module, *(f"{module}.{n}" for n in names)] if names else [module]
