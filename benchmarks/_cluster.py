"""Shared set-up for benchmarks: a cluster (URL or local node) with wikimh ingested."""

from __future__ import annotations

import argparse
from pathlib import Path

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.esplugin.engines.registry import connect
from sira_seek.esplugin.local.node import LocalNode
from sira_seek.ingest import ingest_corpus

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikimh"


def add_cluster_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="existing cluster (default: a local node)")
    parser.add_argument("--engine", choices=["opensearch", "elasticsearch"], default="opensearch")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="wikimh folder")
    parser.add_argument("--index", default="sira-bench-wikimh")


def wikimh_backend(
    args: argparse.Namespace, *, shards: int = 1, replicas: int = 0
) -> SearchBackend:
    url = args.url or LocalNode(NodeSettings(), args.engine).up().url
    backend = connect(ClusterSettings(url=url))
    if not backend.index_exists(args.index) or backend.count(args.index) < 9003:
        ingest_corpus(backend, args.index, args.data, shards=shards, replicas=replicas)
    return backend
