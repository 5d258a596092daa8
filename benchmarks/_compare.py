"""Before and after, side by side: run one benchmark script against another checkout's code and
against this one's, alternating, and report the median of each number over the runs.

The script is THIS checkout's (so both sides are measured the same way); only the library it
imports differs: ``--compare-with PATH`` names the other checkout (``git worktree add
/tmp/before HEAD`` gives the code before uncommitted changes), made importable as the installed
package is (``esplugin``, ``cli`` and ``mappings`` inside ``sira_seek``, as pyproject's
``package-dir`` maps them) from a temporary folder put first on ``PYTHONPATH``. Alternating
runs share the machine's load; the median over ``pairs`` runs of each side evens out a noisy
neighbour.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def importable_site(checkout: Path, into: Path) -> Path:
    """A folder from which ``import sira_seek`` reads ``checkout``'s code."""
    if not (checkout / "sira_seek" / "__init__.py").is_file():
        raise SystemExit(f"--compare-with: {checkout} is not a sira-seek checkout")
    package = into / "sira_seek"
    package.mkdir()
    for entry in (checkout / "sira_seek").iterdir():
        (package / entry.name).symlink_to(entry)
    for name in ("esplugin", "cli", "mappings"):
        (package / name).symlink_to(checkout / name)
    return into


def forwarded_args(argv: list[str] | None = None) -> list[str]:
    """This run's own arguments (``sys.argv[1:]``) for each side's run, without the comparison's
    (``--compare-with PATH``, ``--pairs N``) and ``--json``, which ``run_pairs`` adds: every
    other option reaches both sides as it was given, none is rebuilt by hand."""
    own = [*(sys.argv[1:] if argv is None else argv)]
    kept: list[str] = []
    skip = False
    for arg in own:
        name = arg.split("=", 1)[0]
        if skip:
            skip = False
        elif name in ("--compare-with", "--pairs"):
            skip = "=" not in arg
        elif arg != "--json":
            kept.append(arg)
    return kept


def run_pairs(
    script: Path, argv: list[str], checkout: Path, pairs: int
) -> tuple[list[Any], list[Any]]:
    """``pairs`` runs of ``script argv --json`` on each side (before first), parsed."""
    before: list[Any] = []
    after: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        site = importable_site(checkout.resolve(), Path(tmp))
        for n in range(pairs):
            for side, out in (("before", before), ("after", after)):
                env = dict(os.environ)
                if side == "before":
                    env["PYTHONPATH"] = os.pathsep.join(
                        p for p in (str(site), env.get("PYTHONPATH", "")) if p
                    )
                print(f"run {n + 1}/{pairs}, {side} ...", file=sys.stderr)
                done = subprocess.run(
                    [sys.executable, str(script), *argv, "--json"],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode:
                    raise SystemExit(f"{side} run failed:\n{done.stderr[-2000:]}")
                out.append(json.loads(done.stdout))
    return before, after


def median_of(runs: list[Any], pick: Callable[[Any], float]) -> float:
    return statistics.median(pick(run) for run in runs)


def side_by_side(
    rows: list[tuple[str, Callable[[Any], float]]],
    before: list[Any],
    after: list[Any],
    *,
    unit: str = "ms",
) -> list[str]:
    """One line per row: the median over the runs before, after, and after / before."""
    head = f"{'':44s} {'before':>9s} {'after':>9s} {'after/before':>13s}"
    lines = [f"{head}  (median of {len(before)} runs each, {unit})"]
    for name, pick in rows:
        b, a = median_of(before, pick), median_of(after, pick)
        ratio = f"{a / b:.2f}" if b else "-"
        lines.append(f"{name:44s} {b:9.2f} {a:9.2f} {ratio:>13s}")
    return lines
