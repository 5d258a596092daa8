"""The HTML report of recorded runs and its screenshot (``sira-seek report``, the demo).

Re-exported from ``sira_seek.reporting`` (loaded on first use, PEP 562: the report pulls in
SciPy for its significance tests, so only a command that renders one pays for it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sira_seek.reporting.browser import BrowserUnavailableError, screenshot
    from sira_seek.reporting.html_report import pick_baseline, render_report

__all__ = ["BrowserUnavailableError", "pick_baseline", "render_report", "screenshot"]

_EXPORTS = {
    "sira_seek.reporting.html_report": (
        "pick_baseline",
        "render_report",
    ),
    "sira_seek.reporting.browser": (
        "BrowserUnavailableError",
        "screenshot",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
