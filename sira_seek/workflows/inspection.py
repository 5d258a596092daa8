"""What a front end writes for inspection: the query log's records, Kibana saved objects,
the Dev Tools request of a SIRA search and the explanation of one hit.

Re-exported from ``sira_seek.inspection`` and ``sira_seek.sira`` (loaded on first use, PEP
562): ``search`` and ``ask`` log what the search / ask workflows returned, without the command
line reaching into the method packages. Importing this module loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sira_seek.inspection.from_results import record_from_seek, record_from_sira
    from sira_seek.inspection.query_log import QueryLogger
    from sira_seek.inspection.saved_objects import saved_objects, to_ndjson
    from sira_seek.sira.hit_explanation import explain_hit
    from sira_seek.sira.results import dev_tools_request

__all__ = [
    "QueryLogger",
    "dev_tools_request",
    "explain_hit",
    "record_from_seek",
    "record_from_sira",
    "saved_objects",
    "to_ndjson",
]

_EXPORTS = {
    "sira_seek.inspection.from_results": (
        "record_from_seek",
        "record_from_sira",
    ),
    "sira_seek.inspection.query_log": ("QueryLogger",),
    "sira_seek.inspection.saved_objects": (
        "saved_objects",
        "to_ndjson",
    ),
    "sira_seek.sira.results": ("dev_tools_request",),
    "sira_seek.sira.hit_explanation": ("explain_hit",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
