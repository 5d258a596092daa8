"""Apply throughput of `sira-sync --from-jsonl` (LLM excluded) beside a plain bulk index of the
same documents, in the same run, against the same cluster.

    python benchmarks/sync_apply.py [--url URL] [--engine opensearch|elasticsearch] [--docs N]
    python benchmarks/sync_apply.py --llm-docs 8 --in-flight 1,4 [--llm-spec openai:URL#MODEL]

1. plain bulk: the final documents (source fields + the same enrichment phrases) bulk-written
   into a fresh index, as if enrichment had been done before indexing;
2. sync apply: the source documents ingested first (not timed), then the enrichment applied by
   ``SyncRunner`` from a JSONL file: PIT scan, hashing, DF filter, guarded partial updates,
   checkpoints;
3. no-op re-run: the same sync again, every document already current (scan + hash only).

The enrichment file is synthetic but shaped like an LLM's: ten phrases per document mixing new
vocabulary, the title, rare and common corpus words. Steps 1 and 2 run ``--rounds`` times (3 by
default) in alternating order, each on fresh indexes; prints each side's median docs/s, the ratio
sync / bulk of the medians (and per round), and where the apply's time went: wall time per
engine call (scan, DF bounds, live DF counts, bulk updates, refresh), the DF filter's own wall
time, and the client's rest (hashing, planning, JSON), per round.

With ``--llm-docs N`` it also measures the LLM-bound rate: a full sync (prompt, model, DF
filter, writes) over a slice of about N documents for each ``--in-flight`` setting, against
``--llm-spec`` or, by default, a local llama.cpp server with Gemma 3 270M (cpu extra). Each
setting gets its own slice and the response cache is off, so no answer is reused.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _cluster import add_cluster_args

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.corpus import Document, read_corpus
from sira_seek.esplugin.engines.registry import connect
from sira_seek.esplugin.local.node import LocalNode
from sira_seek.gc_settings import fewer_gc_passes
from sira_seek.ingest import ingest_corpus
from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.factory import create_llm_client
from sira_seek.llm.ledger import LLMUsageLedger
from sira_seek.sync import JsonlPhraseSource, LLMPhraseSource, SliceSpec, SyncRunner, SyncSettings
from sira_seek.sync.corpus_df_filter import CorpusDFFilter

DF_FILTER = "DF filter (wall)"
OVERLAPPED = {
    DF_FILTER,
    "scan",
    "term_doc_freq_bounds",
    "live_doc_freqs",
    "analyze_terms",
    "bulk_partial_update",
}


def synthetic_enrichment(docs: list[Document], seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    vocab = [w for d in docs[:2000] for w in re.findall(r"[A-Za-z]{4,}", d.text)]
    out = []
    for d in docs:
        words = [rng.choice(vocab) for _ in range(6)]
        phrases = [
            f"{d.title} alias",
            d.title,
            f"zq{d.id}",
            " ".join(words[:2]),
            " ".join(words[2:4]),
            *words[4:],
            "film",
            "american",
            "history",
        ]
        out.append({"_id": d.id, "keywords": phrases[:10], "categories": [f"c{len(d.title) % 9}"]})
    return out


def _final_docs(docs: list[Document], records: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for d, r in zip(docs, records, strict=True):
        yield {
            "_id": d.id,
            "title": d.title,
            "text": d.text,
            "sira_enrichment": {"phrases": r["keywords"], "categories": r["categories"]},
        }


class TimedBackend:
    """The real backend with wall time summed per protocol method (a scan's time is the time
    spent inside its pages), so a run can say where its seconds went."""

    def __init__(self, backend: SearchBackend) -> None:
        self._backend = backend
        self.spans: dict[str, list[float]] = {}

    def _add(self, name: str, seconds: float) -> None:
        span = self.spans.setdefault(name, [0.0, 0])
        span[0] += seconds
        span[1] += 1

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._backend, name)
        if not callable(attr):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            result = attr(*args, **kwargs)
            self._add(name, time.perf_counter() - start)
            if name == "scan":
                return self._timed_pages(result)
            return result

        return timed

    def _timed_pages(self, pages: Iterator[Any]) -> Iterator[Any]:
        while True:
            start = time.perf_counter()
            try:
                page = next(pages)
            except StopIteration:
                self._add("scan", time.perf_counter() - start)
                return
            self._add("scan", time.perf_counter() - start)
            yield page


def _timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def llm_bound(
    backend: SearchBackend,
    index: str,
    n_docs: int,
    in_flight: list[int],
    spec: str | None,
    work: Path,
) -> None:
    """Docs/s and tokens/s of a real LLM sync over ~n_docs documents per in-flight setting."""
    from contextlib import ExitStack

    with ExitStack() as stack:
        if spec is None:
            from sira_seek.llm.gemma_model import ensure_gemma_model
            from sira_seek.llm.llamacpp_server import LlamaCppServerProcess

            server = stack.enter_context(
                LlamaCppServerProcess(model_path=ensure_gemma_model(), model_alias="gemma3-270m")
            )
            spec = server.spec
        slices = max(len(in_flight), round(backend.count(index) / n_docs))
        for number, n in enumerate(in_flight):
            ledger = LLMUsageLedger()
            client = BlockingLLMClient(create_llm_client(spec, ledger=ledger, use_cache=False))
            source = LLMPhraseSource(
                client, style="completion", prompt_id=f"bench-{n}", concurrency=n, ledger=ledger
            )
            settings = SyncSettings(
                state_dir=work / f"llm-state-{n}",
                page_size=max(4 * n, 8),
                llm_concurrency=n,
                text_budget_chars=1500,
            )
            runner = SyncRunner(
                backend, index, source, settings, slice_spec=SliceSpec(index=number, count=slices)
            )
            try:
                seconds, report = _timed(runner.run)
            finally:
                source.close()
            c = report.counts
            done = c.enriched + c.failed
            tokens = c.prompt_tokens + c.completion_tokens
            print(
                f"  LLM-bound sync, {n:3d} in flight ({spec.split('#')[0]}): {done} docs in "
                f"{seconds:.1f}s = {done / seconds:.2f} docs/s, {tokens / seconds:.0f} tokens/s "
                f"({c.failed} failed)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    add_cluster_args(parser)
    parser.add_argument("--docs", type=int, default=None, help="first N documents (all: 9003)")
    parser.add_argument("--page-size", type=int, default=500)
    parser.add_argument(
        "--rounds", type=int, default=3, help="bulk/apply pairs; each side's median is printed"
    )
    parser.add_argument("--llm-docs", type=int, default=0, help="also measure an LLM run")
    parser.add_argument("--in-flight", default="1,4", help="LLM requests in flight, e.g. 1,4")
    parser.add_argument("--llm-spec", help="LLM spec (default: a local llama.cpp server)")
    args = parser.parse_args()
    url = args.url or LocalNode(NodeSettings(), args.engine).up().url
    backend: SearchBackend = connect(ClusterSettings(url=url))
    docs = list(read_corpus(args.data))[: args.docs]
    records = synthetic_enrichment(docs)
    bulk_index, sync_index = f"{args.index}-bulk", f"{args.index}-sync"
    work = Path(tempfile.mkdtemp(prefix="sira-bench-sync-"))
    corpus = work / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"_id": d.id, "title": d.title, "text": d.text}) + "\n" for d in docs)
    )
    jsonl = work / "enrich.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    timed = TimedBackend(backend)
    settings = SyncSettings(state_dir=work / "state", page_size=args.page_size)

    def plain_bulk() -> float:
        backend.delete_index(bulk_index)
        started = time.perf_counter()
        backend.ensure_corpus_index(bulk_index)
        # With the collector settings a sync run has (sira_seek/gc_settings.py), so that
        # the two sides differ only in what they do: the plain bulk is ~15-30% faster this way.
        with fewer_gc_passes():
            result = backend.bulk_upsert(bulk_index, _final_docs(docs, records))
        backend.refresh(bulk_index)
        seconds = time.perf_counter() - started
        assert not result.errors, result.errors[:3]
        return seconds

    def apply(on: Any = backend) -> Any:
        source = JsonlPhraseSource(jsonl)
        try:
            report = SyncRunner(on, sync_index, source, settings).run()
        finally:
            source.close()
        on.refresh(sync_index)
        return report

    def sync_round() -> tuple[float, float, Any]:
        """A fresh copy of the source documents (not timed), the timed apply with its engine
        calls recorded, then the untimed-by-the-backend no-op re-run."""
        backend.delete_index(sync_index)
        shutil.rmtree(work / "state", ignore_errors=True)
        ingest_corpus(backend, sync_index, corpus)
        verdicts = CorpusDFFilter.verdicts

        def timed_verdicts(self: CorpusDFFilter, phrases: Any) -> Any:
            start = time.perf_counter()
            try:
                return verdicts(self, phrases)
            finally:
                timed._add(DF_FILTER, time.perf_counter() - start)

        CorpusDFFilter.verdicts = timed_verdicts  # type: ignore[method-assign]
        try:
            sync_s, report = _timed(lambda: apply(timed))
        finally:
            CorpusDFFilter.verdicts = verdicts  # type: ignore[method-assign]
        assert report.counts.enriched == len(docs), report.counts
        noop_s, noop = _timed(apply)
        assert noop.counts.current == len(docs), noop.counts
        return sync_s, noop_s, report

    try:
        bulks: list[float] = []
        applies: list[float] = []
        noops: list[float] = []
        for r in range(args.rounds):
            # Alternating which side goes first: the node's caches and JIT favour the second.
            if r % 2 == 0:
                bulks.append(plain_bulk())
                sync_s, noop_s, report = sync_round()
            else:
                sync_s, noop_s, report = sync_round()
                bulks.append(plain_bulk())
            applies.append(sync_s)
            noops.append(noop_s)
            print(
                f"round {r + 1}: plain bulk {bulks[-1]:.2f}s, apply {sync_s:.2f}s, "
                f"ratio {bulks[-1] / sync_s:.2f}",
                file=sys.stderr,
            )
        bulk_s, sync_s, noop_s = (statistics.median(x) for x in (bulks, applies, noops))
        n = len(docs)
        rows = {
            "plain bulk index (final docs)": (bulk_s, n / bulk_s),
            "sira-sync --from-jsonl apply": (sync_s, n / sync_s),
            "sira-sync re-run (all current)": (noop_s, n / noop_s),
        }
        print(
            f"{backend.info.engine} {backend.info.version} at {url}: {n} wikimh documents, "
            f"median of {args.rounds} rounds (order alternating)"
        )
        for label, (seconds, rate) in rows.items():
            print(f"  {label:34s} {seconds:7.2f}s  {rate:8.0f} docs/s")
        print(
            f"  apply / bulk throughput ratio: {bulk_s / sync_s:.2f}  (per round: "
            f"{', '.join(f'{b / a:.2f}' for b, a in zip(bulks, applies, strict=True))}; "
            f"phrases kept {report.counts.phrases_kept}/{report.counts.phrases_proposed}, "
            f"{report.counts.phrases_too_common} too common; {report.df_round_trips} DF requests)"
        )
        print("  where an apply's time went (wall time per round, mean of the rounds; DF requests")
        print("  run 2 at a time, the scan reads a page ahead and a page's bulk updates run beside")
        print("  the next page's DF filter, so the lines overlap):")
        rounds = args.rounds
        for name, (seconds, calls) in sorted(timed.spans.items(), key=lambda kv: -kv[1][0]):
            print(f"    {name:24s} {seconds / rounds:7.2f}s  {calls / rounds:7.1f} calls")
        serial = sum(s for name, (s, _) in timed.spans.items() if name not in OVERLAPPED)
        rest = statistics.mean(applies) - (serial + timed.spans.get(DF_FILTER, [0.0])[0]) / rounds
        print(f"    {'rest (client, waits)':24s} {rest:7.2f}s  (apply minus DF filter, refresh)")
        if args.llm_docs:
            in_flight = [int(n) for n in args.in_flight.split(",") if n.strip()]
            llm_bound(backend, sync_index, args.llm_docs, in_flight, args.llm_spec, work)
    finally:
        for name in (bulk_index, sync_index):
            backend.delete_index(name)


if __name__ == "__main__":
    main()
