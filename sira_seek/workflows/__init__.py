"""One workflow per job, validated once; every front end only parses input and renders output.

``search`` (BM25 or SIRA), ``evaluate`` (retrieval metrics, coverage, TREC runs, before and
after enrichment), ``evaluate_qa``, ``ask`` (SEEK and its baselines), ``agentic`` (an LLM agent
under a page budget, scored) and ``enrich`` (a sira-sync run) each take a typed request and
return a typed result. The command line, the ``SiraSeek`` facade, the HTTP API, the MCP
server and the framework adapters call them, and map the one error hierarchy
(``workflows.errors``) to their own conventions.
"""

from .errors import (
    Conflict,
    InvalidInput,
    NotAllowed,
    NotFound,
    Unavailable,
    WorkflowError,
    classify,
)

__all__ = [
    "Conflict",
    "InvalidInput",
    "NotAllowed",
    "NotFound",
    "Unavailable",
    "WorkflowError",
    "classify",
]
