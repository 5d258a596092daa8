"""Package exports imported on first use (PEP 562), so importing one module stays cheap.

Why: a package ``__init__`` that imports every submodule to re-export its names makes
``import sira_seek.seek.results`` (a few pydantic models) import the LLM stack, httpx and the
SEEK pipeline too. Every ``sira-seek`` command is a new process, and a user (or a test suite)
running a command pays those imports each time. With ``lazy_exports`` the package names stay
the same (``from sira_seek.seek import SeekPipeline`` works), each loaded when first asked for;
the packages keep their imports under ``TYPE_CHECKING`` for type checkers and readers.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a module (relative to
    the package, ``".api"``) to the names it gives the package."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
