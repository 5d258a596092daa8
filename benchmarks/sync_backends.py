"""``sira-sync`` docs/s on the same wikimh documents: llama.cpp in-process against vLLM.

    python benchmarks/sync_backends.py                      # own vLLM server, local OpenSearch
    python benchmarks/sync_backends.py --vllm-url http://127.0.0.1:8011/v1 --url http://127.0.0.1:9410

Which backend should enrich on a machine without a GPU? llama.cpp runs the model in this
process, one request at a time; vLLM's CPU build batches requests in flight (continuous
batching) but runs float32 next to an API server. The answer is measured here the way users
run it: the real ``sira-sync`` command (a subprocess), on a fresh index holding the same
``--docs`` wikimh paragraphs (drawn with ``--seed``, printed), ``--concurrency 8``, the few-shot
completion prompt (both backends serve the same base model, Gemma 3 270M, which continues a
pattern rather than follows chat instructions), response cache off. Before each run
``sira-sync --estimate`` predicts the run's time from a sample, so the table also shows how far
that prediction is from the measured run.

The vLLM server (prefix caching on, the recommended setting) is started for its run and stopped
before the llama.cpp run, so the two never compete for the cores; its start-up time is reported
apart, since a long enrichment pays it once (``sira-seek llm up`` keeps one running).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.esplugin.engines.registry import connect
from sira_seek.esplugin.local.node import LocalNode
from sira_seek.ingest import ingest_corpus

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikimh" / "corpus.jsonl"
SIRA_SYNC = Path(sys.executable).with_name("sira-sync")


def _sample_corpus(corpus: Path, count: int, seed: int, folder: Path) -> Path:
    """A BEIR folder holding ``count`` wikimh paragraphs drawn with ``seed``."""
    with corpus.open(encoding="utf-8") as lines:
        rows = [line for line in lines if line.strip()]
    picked = random.Random(seed).sample(rows, count)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("".join(picked), encoding="utf-8")
    return folder


def _sira_sync(cluster_url: str, *args: str) -> tuple[dict[str, Any], float]:
    """Run the real command; its JSON report (or estimate) and the wall time."""
    cmd = [str(SIRA_SYNC), "run", "--url", cluster_url, *args, "--json", "--no-progress"]
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"sira-sync exited {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout), wall


def measure(
    label: str,
    spec: str,
    cluster_url: str,
    corpus_folder: Path,
    args: argparse.Namespace,
    work: Path,
) -> dict[str, Any]:
    """One fresh index, one ``--estimate``, one full run; the numbers of both."""
    backend = connect(ClusterSettings(url=cluster_url))
    index = f"sira-bench-sync-{uuid.uuid4().hex[:8]}"
    ingest_corpus(backend, index, corpus_folder)
    backend.refresh(index)
    common = [
        "--index", index, "--llm", spec, "--concurrency", str(args.concurrency),
        "--prompt-style", "fewshot", "--no-cache", "--state-dir", str(work / index),
    ]  # fmt: skip
    try:
        estimate: dict[str, Any] | None = None
        wanted = args.llamacpp_estimate_sample if spec.startswith("llamacpp:") else None
        wanted = args.estimate_sample if args.estimate_sample is not None else wanted
        if wanted != 0:
            sample = [] if wanted is None else ["--sample", str(wanted)]
            estimate, _ = _sira_sync(cluster_url, *common, "--estimate", *sample)
        report, wall = _sira_sync(cluster_url, *common)
    finally:
        if not args.keep_indexes:
            backend.delete_index(index)
    counts = report["counts"]
    row = {
        "backend": label,
        "spec": spec,
        "index": index,
        "docs": args.docs,
        "enriched": counts["enriched"],
        "failed": counts["failed"],
        "run_seconds": report["seconds"],
        "docs_per_s": round(counts["enriched"] / max(report["seconds"], 1e-9), 4),
        "command_wall_s": round(wall, 1),
        "completion_tokens": counts.get("completion_tokens"),
        "estimated_seconds": estimate["expected_seconds"] if estimate else None,
        "estimate_sample": estimate["sample_docs"] if estimate else None,
        "estimate_docs_per_s": estimate.get("docs_per_s") if estimate else None,
    }
    print(
        f"{label:<28} {row['enriched']:>3}/{args.docs} enriched, {row['failed']} failed, "
        f"{row['run_seconds']:.1f}s, {row['docs_per_s']:.3f} docs/s "
        f"(command {row['command_wall_s']}s; --estimate said "
        f"{row['estimated_seconds']}s)",
        flush=True,
    )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--url", help="cluster URL (default: the local OpenSearch node)")
    parser.add_argument("--vllm-url", help="a running vLLM server (default: start one)")
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=50, help="which documents (printed)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument(
        "--estimate-sample", type=int, help="--sample for --estimate [its default]; 0: none"
    )
    parser.add_argument(
        "--llamacpp-estimate-sample",
        type=int,
        default=3,
        help="--sample for llama.cpp's --estimate (in-process: the rate needs few docs)",
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--skip", choices=["vllm", "llamacpp"], help="measure one backend only")
    parser.add_argument("--keep-indexes", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    args = parser.parse_args()

    cluster_url = args.url or LocalNode(NodeSettings(), "opensearch").up().url
    print(f"seed {args.seed}: {args.docs} wikimh documents; cluster {cluster_url}", flush=True)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="sira-bench-sync-") as tmp:
        work = Path(tmp)
        corpus_folder = _sample_corpus(args.corpus, args.docs, args.seed, work / "corpus")
        if args.skip != "vllm":
            if args.vllm_url:
                spec = f"openai:{args.vllm_url}#gemma3-270m"
                rows.append(
                    measure("vLLM (--vllm-url)", spec, cluster_url, corpus_folder, args, work)
                )
            else:
                from sira_seek.llm.vllm_server import VllmServerProcess, resolve_model

                model_path, served = resolve_model("gemma3-270m")
                server = VllmServerProcess(
                    model=model_path, served_model_name=served, prefix_caching=True
                )
                print(f"starting {' '.join(server.command())}", file=sys.stderr, flush=True)
                started = time.perf_counter()
                with server:
                    ready_s = round(time.perf_counter() - started, 1)
                    print(f"vLLM ready in {ready_s}s", flush=True)
                    spec = f"openai:{server.base_url}#{served}"
                    row = measure("vLLM (own server)", spec, cluster_url, corpus_folder, args, work)
                    row["server_ready_s"] = ready_s
                    rows.append(row)
        if args.skip != "llamacpp":
            rows.append(
                measure(
                    "llama.cpp in-process",
                    "llamacpp:gemma3-270m",
                    cluster_url,
                    corpus_folder,
                    args,
                    work,
                )  # fmt: skip
            )
    if len(rows) == 2:
        faster = max(rows, key=lambda r: float(r["docs_per_s"]))
        slower = min(rows, key=lambda r: float(r["docs_per_s"]))
        ratio = float(faster["docs_per_s"]) / max(float(slower["docs_per_s"]), 1e-9)
        print(f"faster: {faster['backend']} ({ratio:.2f}x docs/s)", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"seed": args.seed, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
