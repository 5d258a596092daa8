"""SIRA's and SEEK's names a front end shows or passes on: defaults for help texts
(``DEFAULT_TAU``, ``DEFAULT_WEIGHT``), the expander type, the tuning grid search, which SIRA
notes a result already reports, and SEEK's retriever type, methods and variants (flag choices).

Re-exported from ``sira_seek.sira`` and ``sira_seek.seek`` (loaded on first use, PEP 562: ``search``
loads no SEEK module) so the command line does not import the method packages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sira_seek.seek.retrieval import Retriever
    from sira_seek.seek.settings import METHODS, VARIANTS
    from sira_seek.sira.expansions import REPORTED_IN_RESULT, QueryExpander
    from sira_seek.sira.settings import DEFAULT_TAU, DEFAULT_WEIGHT
    from sira_seek.sira.tuning import tune

__all__ = [
    "DEFAULT_TAU",
    "DEFAULT_WEIGHT",
    "METHODS",
    "QueryExpander",
    "REPORTED_IN_RESULT",
    "Retriever",
    "VARIANTS",
    "tune",
]

_EXPORTS = {
    "sira_seek.sira.settings": (
        "DEFAULT_TAU",
        "DEFAULT_WEIGHT",
    ),
    "sira_seek.sira.expansions": (
        "REPORTED_IN_RESULT",
        "QueryExpander",
    ),
    "sira_seek.sira.tuning": ("tune",),
    "sira_seek.seek.retrieval": ("Retriever",),
    "sira_seek.seek.settings": (
        "METHODS",
        "VARIANTS",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
