"""What the ``sira-sync`` command line drives besides the enrich workflow: run settings,
the checkpoint store, slicing, the index's sync status, migrations, batch-request export and
the run reports it renders.

Re-exported from ``sira_seek.sync`` (loaded on first use, PEP 562) so the command line depends
on the workflows, not on the sync package's layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sira_seek.sync.batch_requests import export_requests
    from sira_seek.sync.checkpoint import RunStateStore
    from sira_seek.sync.document_prompt import CORPUS_TASKS, PromptStyle
    from sira_seek.sync.embed_runner import EmbedReport
    from sira_seek.sync.index_status import index_sync_status
    from sira_seek.sync.migrate import check_migration_names, migrate_index
    from sira_seek.sync.resumable_scan import processed_by_run_query
    from sira_seek.sync.run_report import RunCounts
    from sira_seek.sync.settings import SyncSettings
    from sira_seek.sync.slicing import SliceSpec

__all__ = [
    "CORPUS_TASKS",
    "EmbedReport",
    "PromptStyle",
    "RunCounts",
    "RunStateStore",
    "SliceSpec",
    "SyncSettings",
    "check_migration_names",
    "export_requests",
    "index_sync_status",
    "migrate_index",
    "processed_by_run_query",
]

_EXPORTS = {
    "sira_seek.sync.batch_requests": ("export_requests",),
    "sira_seek.sync.checkpoint": ("RunStateStore",),
    "sira_seek.sync.document_prompt": (
        "CORPUS_TASKS",
        "PromptStyle",
    ),
    "sira_seek.sync.embed_runner": ("EmbedReport",),
    "sira_seek.sync.index_status": ("index_sync_status",),
    "sira_seek.sync.migrate": (
        "check_migration_names",
        "migrate_index",
    ),
    "sira_seek.sync.resumable_scan": ("processed_by_run_query",),
    "sira_seek.sync.run_report": ("RunCounts",),
    "sira_seek.sync.settings": ("SyncSettings",),
    "sira_seek.sync.slicing": ("SliceSpec",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
