"""Greedy schema-constrained answers of llama.cpp in process: llama-cpp-python's own
grammar-first chain beside the argmax-first one sira-seek uses (``GreedyGrammarLlama``), on the
same requests in one run, with a check that both gave the same text.

    python benchmarks/llamacpp_grammar.py [--docs 4] [--queries 4]

The requests are the ones sira-seek sends: the document enrichment prompt of sira-sync
(completion form) over wikimh paragraphs and the query-expansion prompt of SIRA over HotpotQA
questions, greedy, with their JSON schemas. Both sides load the packaged Gemma 3 270M with 2
threads; requests alternate between them so both see the same machine state. Needs the cpu
extra (sira-seek llm install cpu).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from llama_cpp import Llama
from llama_cpp.llama_grammar import LlamaGrammar

from sira_seek.corpus import read_queries
from sira_seek.llm.gemma_model import ensure_gemma_model
from sira_seek.llm.llamacpp_greedy_grammar import GreedyGrammarLlama
from sira_seek.llm.request import LLMRequest
from sira_seek.sira.prompts import enrichment_request
from sira_seek.sync.document_prompt import document_request

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikimh"


def requests(data: Path, docs: int, queries: int) -> list[LLMRequest]:
    lines = (data / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[200 : 200 + docs]
    out = [
        document_request(json.loads(line)["text"][:1200], style="completion", doc_id=str(i))
        for i, line in enumerate(lines)
    ]
    for query in read_queries(data / "queries-hotpotqa.jsonl")[:queries]:
        out.append(enrichment_request(query.text, "multihop", chat=False))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--docs", type=int, default=4)
    parser.add_argument("--queries", type=int, default=4)
    args = parser.parse_args()
    path = ensure_gemma_model()
    sides = {
        "grammar first (llama-cpp-python)": Llama(
            model_path=str(path), n_ctx=2048, n_threads=2, verbose=False
        ),
        "argmax first (sira-seek)": GreedyGrammarLlama(
            model_path=str(path), n_ctx=2048, n_threads=2, verbose=False
        ),
    }
    seconds = dict.fromkeys(sides, 0.0)
    tokens = dict.fromkeys(sides, 0)
    same = 0
    work = requests(args.data, args.docs, args.queries)
    for request in work:
        assert request.prompt is not None and request.json_schema is not None
        grammar = LlamaGrammar.from_json_schema(
            json.dumps(request.json_schema, sort_keys=True), verbose=False
        )
        texts = []
        for name, llm in sides.items():
            started = time.perf_counter()
            out = llm.create_completion(
                prompt=request.prompt, max_tokens=request.max_tokens, temperature=0.0,
                grammar=grammar,
            )  # fmt: skip
            seconds[name] += time.perf_counter() - started
            tokens[name] += int(out["usage"]["completion_tokens"])
            texts.append(out["choices"][0]["text"])
        same += texts[0] == texts[1]
    print(f"{len(work)} requests, identical answers: {same}/{len(work)}")
    print(f"{'side':36s} {'seconds':>8s} {'tokens':>7s} {'tok/s':>6s}")
    for name in sides:
        print(
            f"{name:36s} {seconds[name]:8.1f} {tokens[name]:7d} {tokens[name] / seconds[name]:6.1f}"
        )
    base, new = seconds.values()
    print(f"speed-up: {base / new:.2f}x")


if __name__ == "__main__":
    main()
