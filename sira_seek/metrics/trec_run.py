"""Runs as standard six-column TREC run files, the format trec_eval, ir_measures and ranx read.

ir-measures (0.4.3, the version pinned here) reads run files (``read_trec_run``) but has no
writer, so the few lines of writing live here; the tests read the result back with
``ir_measures.read_trec_run``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from sira_seek.input_errors import InputError

from .retrieval import Run

logger = logging.getLogger(__name__)


def _check_token(kind: str, value: str) -> str:
    if not value or any(ch.isspace() for ch in value):
        raise InputError(f"{kind} {value!r} cannot go into a TREC run file (empty or whitespace)")
    return value


def trec_run_lines(run: Run, tag: str) -> list[str]:
    """``qid Q0 docid rank score tag`` lines, ranks from 1 in the order the engine returned hits.

    Ties keep the engine's order in the rank column. trec_eval and ir-measures re-sort by score
    (ties by docid) whatever the ranks say, so scores are written exactly (``repr``) to make them
    see the same ranking the engine produced. A query with no hits has no lines: the format
    cannot say "nothing retrieved".
    """
    _check_token("run tag", tag)
    lines: list[str] = []
    for qid, hits in run.items():
        _check_token("query id", qid)
        for rank, (doc_id, score) in enumerate(hits.items(), start=1):
            lines.append(f"{qid} Q0 {_check_token('doc id', doc_id)} {rank} {score!r} {tag}")
    return lines


def write_trec_run(run: Run, path: Path, tag: str) -> int:
    """Write ``run`` to ``path``; returns the number of lines written."""
    lines = trec_run_lines(run, tag)
    Path(path).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    logger.info("wrote %d lines for %d queries to %s", len(lines), len(run), path)
    return len(lines)
