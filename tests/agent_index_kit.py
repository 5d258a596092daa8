"""A small enriched wikimh index for the agent-tool tests (integration and MCP end to end).

The first ``SLICE`` hp* paragraphs of ../shared/data/wikimh, ingested and enriched by a real
sira-sync run from the shared strong-LLM enrichment pool (``--from-jsonl``, categories on), so
the tools see phrases and categories exactly as sira-sync writes them. The facts the tests
check against (texts, categories per document) are read from the same files, independently
of the tools.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from sira_seek.backend import SearchBackend
from sira_seek.client import SiraSeek
from sira_seek.corpus import read_queries
from sira_seek.sira.keyword_parsing import clean_phrases

SLICE = 200
POOL = "enrichments-hotpotqa-pool.strong-llm.jsonl"
EXPANSIONS = "expansions-hotpotqa.strong-llm.jsonl"
#: "Are Christopher Nolan and Sathish Kalathil both film directors?": both gold pages in the slice.
QUERY_ID = "hotpotqa-5ae40c465542996836b02c25"
MAX_CATEGORIES = 5  # sira-sync's default: it keeps the first five cleaned categories


@dataclass(frozen=True)
class EnrichedSlice:
    index: str
    docs: dict[str, dict[str, str]]  # id -> {"title", "text"}
    categories: dict[str, list[str]]  # id -> categories as sira-sync stores them
    query: str
    expansions: list[str]

    def category_counts(self) -> Counter[str]:
        return Counter(c for cats in self.categories.values() for c in cats)

    def docs_in(self, category: str) -> set[str]:
        return {i for i, cats in self.categories.items() if category in cats}


def build_enriched_slice(
    backend: SearchBackend, index: str, wikimh: Path, work: Path
) -> EnrichedSlice:
    """Ingest the slice into ``index`` and run sira-sync from the pool; return the facts."""
    docs: dict[str, dict[str, str]] = {}
    with open(wikimh / "corpus.jsonl", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record["_id"].startswith("hp"):
                docs[record["_id"]] = {"title": record["title"], "text": record["text"]}
            if len(docs) == SLICE:
                break
    folder = work / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as out:
        for doc_id, doc in docs.items():
            out.write(json.dumps({"_id": doc_id, **doc}) + "\n")
    pool: list[dict[str, object]] = []
    with open(wikimh / POOL, encoding="utf-8") as lines:
        pool = [r for r in map(json.loads, lines) if r["_id"] in docs]
    pool_file = work / "pool.jsonl"
    pool_file.write_text("".join(json.dumps(r) + "\n" for r in pool), encoding="utf-8")
    categories = {
        str(r["_id"]): clean_phrases(list(r.get("categories") or []), MAX_CATEGORIES)  # type: ignore[call-overload]
        for r in pool
    }
    client = SiraSeek(backend)
    report = client.ingest(folder, index)
    assert report.written == SLICE, report
    run = client.enrich(index, from_jsonl=pool_file, categories=True, state_dir=work / "sync-state")
    assert run.counts.enriched == len(pool) and run.counts.failed == 0, run.counts
    backend.refresh(index)
    (query,) = [q for q in read_queries(wikimh / "queries-hotpotqa.jsonl") if q.id == QUERY_ID]
    with open(wikimh / EXPANSIONS, encoding="utf-8") as lines:
        (expansions,) = [r["keywords"] for r in map(json.loads, lines) if r["_id"] == QUERY_ID]
    return EnrichedSlice(index, docs, categories, query.text, list(expansions))
