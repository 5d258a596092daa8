"""Regenerate bm25_wikimh_hotpotqa.json from live nodes (run only after a deliberate change).

python tests/regression/regenerate.py --opensearch URL --elasticsearch URL

Or re-record the hyde / cot texts the pins of tests/integration/test_vector_regression.py replay
(generations-hotpotqa-{hyde,cot}.cpu-gemma3-270m.jsonl; no node needed, ~10 minutes on 2 cores):

python tests/regression/regenerate.py --generations
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path

from sira_seek.bm25 import bm25_query
from sira_seek.config import ClusterSettings
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.esplugin.engines.registry import connect
from sira_seek.ingest import ingest_corpus
from sira_seek.llm.client import LLMClient
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse
from sira_seek.sira.evaluation import evaluate_bm25
from sira_seek.sira.expansions import GenerativeExpander, QueryInput, client_for_spec

HERE = Path(__file__).parent
QUERIES = [
    "If Gallu is a demon Lilu is what?",
    "Are Christopher Nolan and Sathish Kalathil both film directors?",
    "Which magazine was started first Arthur's Magazine or First for Women?",
]
GENERATOR = "llamacpp:gemma3-270m"  # the embedded CPU model, in process (greedy, seed 0)
GENERATED_QUERIES = 30  # the first queries of the file: the subset the vector pins use


class RecordingClient:
    """An ``LLMClient`` passing requests to a live one and keeping each answer's text by the
    request's ``lookup_key`` (the query id): the expander runs exactly as live, and the file
    gets what the model wrote before the expander touched it."""

    def __init__(self, inner: LLMClient) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.texts: dict[str, str] = {}

    async def model_name(self) -> str:
        return await self.inner.model_name()

    async def generate(self, request: LLMRequest) -> LLMResponse:
        response = await self.inner.generate(request)
        self.texts[str(request.lookup_key)] = response.text
        return response

    async def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        answers = await self.inner.generate_many(requests, concurrency)
        for request, answer in zip(requests, answers, strict=True):
            if isinstance(answer, LLMResponse):
                self.texts[str(request.lookup_key)] = answer.text
        return answers

    async def aclose(self) -> None:
        await self.inner.aclose()


def record_generations(data: Path) -> None:
    """Each baseline's text for the first GENERATED_QUERIES queries, as GENERATOR writes it
    through ``GenerativeExpander`` (the request ``--method hyde|cot --llm GENERATOR`` sends)."""
    queries = read_queries(data / "queries-hotpotqa.jsonl")[:GENERATED_QUERIES]
    for method in ("hyde", "cot"):
        client, chat = client_for_spec(GENERATOR)
        recorder = RecordingClient(client)
        expander = GenerativeExpander(recorder, method=method, chat=chat)
        try:
            expander.expand_many([QueryInput(text=q.text, id=q.id) for q in queries])
        finally:
            expander.close()
        out = HERE / f"generations-hotpotqa-{method}.cpu-gemma3-270m.jsonl"
        lines = [
            {"_id": q.id, "text": q.text, "completion": recorder.texts[q.id]}
            for q in queries
            if q.id in recorder.texts
        ]
        out.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        print(f"{out.name}: {len(lines)} of {len(queries)} queries", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opensearch")
    parser.add_argument("--elasticsearch")
    parser.add_argument("--data", type=Path, default=HERE.parents[2] / "shared" / "data" / "wikimh")
    parser.add_argument("--generations", action="store_true", help="re-record hyde/cot texts")
    args = parser.parse_args()
    if args.generations:
        record_generations(args.data)
        return
    if not (args.opensearch and args.elasticsearch):
        parser.error("--opensearch and --elasticsearch are required")
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
