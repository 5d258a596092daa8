"""The test folders have no ``__init__.py`` (pytest's default "prepend" import mode), so two
test modules with one basename in different folders collide at collection, and the WHOLE suite
stops before running a test. Caught here, in a second, rather than by `make test` in CI."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]


def test_no_two_test_modules_share_a_basename() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        # conftest.py and __init__.py are meant to repeat; any other module is imported by
        # its basename (a test module, or a kit the tests put on sys.path).
        if "__pycache__" not in path.parts and path.name not in ("conftest.py", "__init__.py"):
            by_name[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert clashes == {}
