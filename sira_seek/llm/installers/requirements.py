"""The requirements of one extra of the installed sira-seek, one per line, without markers.

``install_cpu_llm.sh`` runs ``"$PYTHON" -m sira_seek.llm.installers.requirements cpu``: the
pins live in pyproject.toml alone, and the installed distribution's metadata carries them both
for an editable checkout and for a wheel install (which has no pyproject.toml).
"""

from __future__ import annotations

import importlib.metadata
import re
import sys

DISTRIBUTION = "sira-seek"

# How setuptools writes a requirement of one extra alone: `name>=1; extra == "cpu"`.
_ONLY_EXTRA = re.compile(r"""^extra\s*==\s*(["'])(?P<name>[^"']+)\1$""")


def normalize(extra: str) -> str:
    """An extra's name as metadata compares it (PEP 685)."""
    return re.sub(r"[-_.]+", "-", extra).lower()


def _in_extra(marker: str, extra: str) -> bool:
    if not marker:
        return False  # a base requirement
    only = _ONLY_EXTRA.match(marker)
    if only:
        return normalize(only["name"]) == extra
    if "extra" not in marker:
        return False  # an environment marker on a base requirement
    # A marker combining the extra with other conditions: required here only when it holds
    # for this environment with the extra, and not without it.
    try:
        from packaging.markers import Marker
    except ImportError:  # a venv with sira-seek's base install alone (make demo): pip's copy
        from pip._vendor.packaging.markers import Marker  # type: ignore[assignment]

    parsed = Marker(marker)
    return parsed.evaluate({"extra": extra}) and not parsed.evaluate({"extra": ""})


# `sira-seek[embed]` inside another extra: the distribution's own name, then its extras.
_SELF_REFERENCE = re.compile(r"^(?P<name>[A-Za-z0-9._-]+)\s*\[(?P<extras>[^\]]+)\]\s*$")


def extra_requirements(extra: str, distribution: str = DISTRIBUTION) -> list[str]:
    """The requirements ``distribution``'s ``extra`` adds, as metadata lists them, markers cut.

    An extra that includes others of the same distribution (``cpu`` lists ``sira-seek[embed]``)
    is expanded into theirs: the installer must never ask an index for sira-seek itself."""
    wanted = normalize(extra)
    found: list[str] = []
    for line in importlib.metadata.requires(distribution) or []:
        spec, _, marker = line.partition(";")
        if not _in_extra(marker.strip(), wanted):
            continue
        own = _SELF_REFERENCE.match(spec.strip())
        if own and normalize(own["name"]) == normalize(distribution):
            for included in own["extras"].split(","):
                if normalize(included.strip()) != wanted:
                    found += extra_requirements(included.strip(), distribution)
            continue
        found.append(spec.strip())
    return list(dict.fromkeys(found))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m sira_seek.llm.installers.requirements EXTRA", file=sys.stderr)
        return 2
    for requirement in extra_requirements(args[0]):
        print(requirement)
    return 0


if __name__ == "__main__":
    sys.exit(main())
