"""Regenerate bm25_wikimh_hotpotqa.json from live nodes (run only after a deliberate change).

python tests/regression/regenerate.py --opensearch URL --elasticsearch URL
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path

from sira_seek.bm25 import bm25_query
from sira_seek.config import ClusterSettings
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.esplugin.engines.registry import connect
from sira_seek.ingest import ingest_corpus
from sira_seek.sira.evaluation import evaluate_bm25

HERE = Path(__file__).parent
QUERIES = [
    "If Gallu is a demon Lilu is what?",
    "Are Christopher Nolan and Sathish Kalathil both film directors?",
    "Which magazine was started first Arthur's Magazine or First for Women?",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opensearch", required=True)
    parser.add_argument("--elasticsearch", required=True)
    parser.add_argument("--data", type=Path, default=HERE.parents[2] / "shared" / "data" / "wikimh")
    args = parser.parse_args()
    out = json.loads((HERE / "bm25_wikimh_hotpotqa.json").read_text())
    for engine, url in (("opensearch", args.opensearch), ("elasticsearch", args.elasticsearch)):
        be = connect(ClusterSettings(url=url))
        index = f"pin-{uuid.uuid4().hex[:8]}"
        ingest_corpus(be, index, args.data)
        try:
            metrics = evaluate_bm25(
                be,
                index,
                read_queries(args.data / "queries-hotpotqa.jsonl"),
                read_qrels(args.data / "qrels-hotpotqa.tsv"),
            )
            metrics.pop("queries")
            top = []
            for q in QUERIES:
                hits = be.search(index, {**bm25_query(q), "size": 3}).hits
                top.append({"query": q, "hits": [[h.id, round(h.score, 3)] for h in hits]})
            out["engines"][engine] = {
                "version": be.info.version,
                "analysis": "english" if be.capabilities().english_analyzer else "basic",
                "metrics": metrics,
                "top_hits": top,
            }
        finally:
            be.delete_index(index)
    (HERE / "bm25_wikimh_hotpotqa.json").write_text(json.dumps(out, indent=2) + "\n")
    json.dump(out, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
