"""SEEK: sketch-guided iterative RAG over the user's own cluster.

A steering sketch (title + ordered gists) is drafted from the question, each gist's slot is
filled with evidence retrieved for a sub-query, and the answer is written from the completed
sketch. Engine-agnostic: retrieval goes through the small `Retriever` protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .api import SeekSession, open_session
    from .batch import BatchReport, run_questions
    from .checkpoint import CheckpointMismatchError, SeekCheckpoint
    from .output_parsing import clean_evidence, clean_subquery, extract_answer
    from .pipeline import RetrieverRequiredError, SeekPipeline
    from .questions import QAFileError, read_questions
    from .results import (
        AnswerTimings,
        QuestionInput,
        QuestionUsage,
        SeekResult,
        StageUsage,
        SubQueryStep,
    )
    from .retrieval import BM25Retriever, RetrievedDoc, Retriever, SiraDocumentRetriever
    from .settings import METHODS, VARIANTS, SeekSettings, resolve_prompt_style
    from .sketch import Gist, SteeringSketch, fallback_sketch, parse_sketch, try_parse_sketch

__all__ = [
    "METHODS",
    "VARIANTS",
    "BM25Retriever",
    "BatchReport",
    "CheckpointMismatchError",
    "Gist",
    "QAFileError",
    "QuestionInput",
    "QuestionUsage",
    "RetrievedDoc",
    "Retriever",
    "RetrieverRequiredError",
    "SeekCheckpoint",
    "SeekPipeline",
    "SeekResult",
    "SeekSession",
    "SeekSettings",
    "SiraDocumentRetriever",
    "StageUsage",
    "SteeringSketch",
    "SubQueryStep",
    "AnswerTimings",
    "clean_evidence",
    "clean_subquery",
    "extract_answer",
    "fallback_sketch",
    "open_session",
    "parse_sketch",
    "read_questions",
    "resolve_prompt_style",
    "run_questions",
    "try_parse_sketch",
]

_EXPORTS = {
    ".api": (
        "SeekSession",
        "open_session",
    ),
    ".batch": (
        "BatchReport",
        "run_questions",
    ),
    ".checkpoint": (
        "CheckpointMismatchError",
        "SeekCheckpoint",
    ),
    ".output_parsing": (
        "clean_evidence",
        "clean_subquery",
        "extract_answer",
    ),
    ".pipeline": (
        "RetrieverRequiredError",
        "SeekPipeline",
    ),
    ".questions": (
        "QAFileError",
        "read_questions",
    ),
    ".results": (
        "QuestionInput",
        "QuestionUsage",
        "SeekResult",
        "StageUsage",
        "SubQueryStep",
        "AnswerTimings",
    ),
    ".retrieval": (
        "BM25Retriever",
        "RetrievedDoc",
        "Retriever",
        "SiraDocumentRetriever",
    ),
    ".settings": (
        "METHODS",
        "VARIANTS",
        "SeekSettings",
        "resolve_prompt_style",
    ),
    ".sketch": (
        "Gist",
        "SteeringSketch",
        "fallback_sketch",
        "parse_sketch",
        "try_parse_sketch",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
