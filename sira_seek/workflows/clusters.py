"""Connecting to a cluster: the engine registry's ``connect`` (detects Elasticsearch or
OpenSearch) and ``resolve_url`` (a URL given, else ``SIRA_SEEK_URL``, else the local node).

Re-exported from ``sira_seek.esplugin`` (loaded on first use, PEP 562; the engine client itself
is imported when a cluster answers) so a front end opens a ``SearchBackend`` without knowing
the engine plugins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sira_seek.esplugin.engines.registry import connect
    from sira_seek.esplugin.local.resolve import resolve_url

__all__ = ["connect", "resolve_url"]

_EXPORTS = {
    "sira_seek.esplugin.engines.registry": ("connect",),
    "sira_seek.esplugin.local.resolve": ("resolve_url",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
