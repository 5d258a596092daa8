"""The failures of a cluster, an LLM server or an index's state that a front end maps to its
own convention (exit 1 on the command line), and the batch round still running (exit 75).

Each is raised below the workflows (engines, LLM clients, sira-sync, SIRA's index profile);
re-exported here (loaded on first use, PEP 562) so a front end names them without importing
the layers that raise them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sira_seek.esplugin.engines.errors import SiraSeekEngineError
    from sira_seek.ingest import IngestTargetError
    from sira_seek.llm.batch_rounds import WaitingForBatch
    from sira_seek.llm.errors import LLMCallError
    from sira_seek.sira.index_profile import SiraIndexError
    from sira_seek.sira.term_vectors import TermStatisticsError
    from sira_seek.sync.mapping import MappingConflictError
    from sira_seek.sync.phrase_sources import LLMUnavailableError

__all__ = [
    "IngestTargetError",
    "LLMCallError",
    "LLMUnavailableError",
    "MappingConflictError",
    "SiraIndexError",
    "SiraSeekEngineError",
    "TermStatisticsError",
    "WaitingForBatch",
]

_EXPORTS = {
    "sira_seek.esplugin.engines.errors": ("SiraSeekEngineError",),
    "sira_seek.llm.errors": ("LLMCallError",),
    "sira_seek.llm.batch_rounds": ("WaitingForBatch",),
    "sira_seek.sync.phrase_sources": ("LLMUnavailableError",),
    "sira_seek.sira.term_vectors": ("TermStatisticsError",),
    "sira_seek.sira.index_profile": ("SiraIndexError",),
    "sira_seek.ingest": ("IngestTargetError",),
    "sira_seek.sync.mapping": ("MappingConflictError",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
