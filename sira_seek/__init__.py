"""sira-seek: SIRA corpus-grounded retrieval and SEEK sketch-guided RAG on Elasticsearch and
OpenSearch clusters.

Start with ``sira_seek.connect()``: it returns a ``SiraSeek`` facade over one cluster (your URL,
else ``SIRA_SEEK_URL``, else the local node of ``sira-seek node up``)::

    import sira_seek

    with sira_seek.connect("http://localhost:9200") as sk:
        sk.ingest("path/to/beir-folder", "my-corpus")
        bm25 = sk.search("Which magazine was started first?", index="my-corpus")
        sira = sk.search(
            "Which magazine was started first?",
            index="my-corpus",
            method="sira",
            expansions={"Which magazine was started first?": ["Arthur's Magazine", "1844"]},
        )
        print([hit.id for hit in sira.hits], sira.explain())  # the request, Dev Tools syntax
        metrics = sk.evaluate("my-corpus", queries="queries.jsonl", qrels="qrels.tsv")
        answer = sk.ask("Which magazine was started first?", index="my-corpus",
                        llm="openai:http://gpu:8000/v1#Qwen/Qwen3-8B")

``SiraSeek`` also runs sira-sync enrichment (``enrich``); ``SiraSeek.backend`` is the typed
``SearchBackend`` engine boundary. The library logs through ``logging`` (logger names under
``sira_seek``) and never configures handlers: that is the application's choice.

Importing this package is light and has no side effects: the facade and result types load on
first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sira_seek.client import AwsService, Engine, SiraSeek
    from sira_seek.ingest import IngestReport
    from sira_seek.seek.results import SeekResult
    from sira_seek.sira.results import SiraHit, SiraResult
    from sira_seek.sync.run_report import RunReport

__version__ = "0.1.0"

__all__ = [
    "IngestReport",
    "RunReport",
    "SeekResult",
    "SiraHit",
    "SiraResult",
    "SiraSeek",
    "__version__",
    "connect",
]

# Where each public name is defined; imported on first attribute access (PEP 562).
_EXPORTS = {
    "sira_seek.client": ("SiraSeek",),
    "sira_seek.ingest": ("IngestReport",),
    "sira_seek.seek.results": ("SeekResult",),
    "sira_seek.sira.results": ("SiraHit", "SiraResult"),
    "sira_seek.sync.run_report": ("RunReport",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


def connect(
    url: str | None = None,
    *,
    api_key: str | None = None,
    username: str | None = None,
    password: str | None = None,
    ca_certs: Path | str | None = None,
    ssl_fingerprint: str | None = None,
    verify_certs: bool = True,
    engine: Engine | None = None,
    aws_region: str | None = None,
    aws_service: AwsService | None = None,
    cloud_id: str | None = None,
    profile_max_age: float = 0.0,
) -> SiraSeek:
    """Connect to a cluster; returns a ``SiraSeek`` (use it as a context manager).

    Arguments left out come from ``SIRA_SEEK_*`` environment variables; with no URL at all the
    running local node (``sira-seek node up``) is used. Amazon OpenSearch Service: give
    ``aws_region`` (SigV4); Elastic Cloud: ``cloud_id``. See ``sira_seek.client.connect``.
    """
    from sira_seek.client import connect as _connect

    return _connect(
        url,
        api_key=api_key,
        username=username,
        password=password,
        ca_certs=ca_certs,
        ssl_fingerprint=ssl_fingerprint,
        verify_certs=verify_certs,
        engine=engine,
        aws_region=aws_region,
        aws_service=aws_service,
        cloud_id=cloud_id,
        profile_max_age=profile_max_age,
    )
