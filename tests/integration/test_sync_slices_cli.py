"""The installed `sira-sync` as a user runs it: two workers split one index, dry runs change
nothing, reports and status tell the truth, a mapping that cannot take the fields is refused."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_matrix import ENGINE, ONE_ENGINE

from sira_seek.backend import SearchBackend
from sira_seek.ingest import ingest_corpus

pytestmark = pytest.mark.integration

N_DOCS = 300


def sira_sync(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "sira-sync"
    found = str(exe) if exe.exists() else shutil.which("sira-sync")
    if not found:
        pytest.fail("the sira-sync console script is not installed (pip install -e .)")
    return subprocess.run(
        [found, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def make_small_index(
    backend: SearchBackend, index: str, wikimh_dir: Path, folder: Path
) -> tuple[str, Path]:
    """The first N_DOCS wikimh documents in ``index``, and their enrichment file."""
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:N_DOCS]
    corpus = folder / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ingest_corpus(backend, index, corpus)
    records = [
        {"_id": json.loads(line)["_id"], "keywords": ["zq" + json.loads(line)["_id"], "film"]}
        for line in lines
    ]
    jsonl = folder / "enrich.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return index, jsonl


@pytest.fixture
def small_index(
    backend: SearchBackend, index_name: str, wikimh_dir: Path, tmp_path: Path
) -> tuple[str, Path]:
    return make_small_index(backend, index_name, wikimh_dir, tmp_path)


@pytest.fixture(scope="module", autouse=True)
def expunge_index(
    engine: str,
    backends: dict[str, SearchBackend],
    wikimh_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, Path] | None]:
    """The expunge test's index (OpenSearch), made when this module's tests on that engine
    start; the test itself runs last. The engines move a shard's retention leases, which keep
    deleted copies from being merged away, every 30 s counted from the index's creation, so
    the merge at the end of that test waits out only what the module's other tests (16 s of
    them here) left of those 30 s instead of all of them."""
    if engine != ENGINE:
        yield None
        return
    backend = backends[engine]
    index = f"test-{uuid.uuid4().hex[:12]}"
    try:
        yield make_small_index(backend, index, wikimh_dir, tmp_path_factory.mktemp("expunge"))
    finally:
        backend.delete_index(index)


def versions(backend: SearchBackend, index: str) -> dict[str, int]:
    backend.refresh(index)
    body = {"size": 10000, "version": True, "_source": False, "query": {"match_all": {}}}
    raw = backend.request("POST", f"/{index}/_search", body=body)  # type: ignore[attr-defined]
    return {h["_id"]: int(h["_version"]) for h in raw["hits"]["hits"]}


def common(backend: SearchBackend, index: str, jsonl: Path, state: Path) -> list[str]:
    return [
        "--index", index, "--from-jsonl", str(jsonl), "--url", backend.info.url,
        "--state-dir", str(state), "--no-progress", "--page-size", "50",
    ]  # fmt: skip


def test_two_workers_enrich_every_doc_exactly_once(
    backend: SearchBackend, small_index: tuple[str, Path], tmp_path: Path
) -> None:
    index, jsonl = small_index
    exe = Path(sys.executable).parent / "sira-sync"
    workers = [
        subprocess.Popen(
            [
                str(exe),
                *common(backend, index, jsonl, tmp_path / "state"),
                "--slice",
                f"{i}/2",
                "--report",
                str(tmp_path / f"report{i}.json"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for i in range(2)
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
    reports: list[dict[str, Any]] = [
        json.loads((tmp_path / f"report{i}.json").read_text()) for i in range(2)
    ]
    enriched = [r["counts"]["enriched"] for r in reports]
    assert sum(enriched) == N_DOCS and min(enriched) > 0.3 * N_DOCS
    assert all(r["counts"]["conflicts"] == 0 for r in reports)
    assert set(versions(backend, index).values()) == {2}  # each doc written exactly once
    status = sira_sync("status", "--index", index, "--url", backend.info.url, "--json")
    assert status.returncode == 0, status.stderr
    counts = json.loads(status.stdout)
    assert (counts["enriched"], counts["never_enriched"], counts["total"]) == (N_DOCS, 0, N_DOCS)
    assert counts["by_fingerprint"][0]["model"] == "jsonl:enrich.jsonl"


def test_dry_run_report_rerun_and_status(
    backend: SearchBackend, small_index: tuple[str, Path], tmp_path: Path
) -> None:
    index, jsonl = small_index
    args = common(backend, index, jsonl, tmp_path / "state")
    dry = sira_sync(*args, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    dry_report = json.loads(dry.stdout)
    assert dry_report["dry_run"] and dry_report["counts"]["new"] == N_DOCS
    assert set(versions(backend, index).values()) == {1}  # nothing written

    report_path = tmp_path / "run.json"
    run = sira_sync(*args, "--report", str(report_path))
    assert run.returncode == 0, run.stderr
    assert f"{N_DOCS} enriched" in run.stdout
    report = json.loads(report_path.read_text())
    assert report["counts"]["enriched"] == N_DOCS and report["docs_per_s"] > 0
    assert report["fingerprint"]["prompt_id"] == "jsonl"

    again = sira_sync(*args, "--json")
    assert json.loads(again.stdout)["counts"]["current"] == N_DOCS
    assert set(versions(backend, index).values()) == {2}

    bumped = sira_sync(*args, "--prompt-id", "batch-v2", "--dry-run", "--json")
    assert json.loads(bumped.stdout)["counts"]["outdated"] == N_DOCS

    human = sira_sync("status", "--index", index, "--url", backend.info.url)
    assert f"enriched {N_DOCS}" in human.stdout and "never enriched 0" in human.stdout


def test_index_without_the_layout_is_refused_untouched(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    backend.create_index(
        index_name,
        {"mappings": {"properties": {"title": {"type": "text"}, "text": {"type": "text"}}}},
    )
    backend.bulk_upsert(index_name, [{"_id": "a", "title": "T", "text": "x"}])
    backend.refresh(index_name)
    before = backend.get_mapping(index_name)
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text(json.dumps({"_id": "a", "keywords": ["k"]}) + "\n")
    result = sira_sync(*common(backend, index_name, jsonl, tmp_path / "state"))
    assert result.returncode == 1
    assert "analyzer" in result.stderr and "No source field was changed" in result.stderr
    assert backend.get_mapping(index_name) == before


def test_migrate_copies_and_swaps_the_alias_then_sync_works(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    target, alias = f"{index_name}-v2", f"{index_name}-live"
    try:
        backend.create_index(
            index_name,
            {
                "mappings": {"properties": {"title": {"type": "text"}, "text": {"type": "text"}}},
                "aliases": {alias: {}},
            },
        )
        docs = [{"_id": f"u{i}", "title": f"Item {i}", "text": f"body {i} film"} for i in range(25)]
        backend.bulk_upsert(index_name, docs)
        backend.refresh(index_name)
        jsonl = tmp_path / "e.jsonl"
        jsonl.write_text("".join(json.dumps({"_id": d["_id"], "keywords": ["nick"]}) + "\n"
                                 for d in docs))  # fmt: skip
        refused = sira_sync(*common(backend, alias, jsonl, tmp_path / "state"))
        assert refused.returncode == 1 and "sira-sync migrate" in refused.stderr

        moved = sira_sync(
            "migrate", "--index", alias, "--into", target, "--alias", alias,
            "--url", backend.info.url, "--no-progress",
        )  # fmt: skip
        assert moved.returncode == 0, moved.stderr
        assert f"alias {alias} now points at {target}" in moved.stdout
        holders = backend.request("GET", f"/_alias/{alias}")  # type: ignore[attr-defined]
        assert list(holders) == [target]
        assert backend.count(index_name) == backend.count(target) == 25
        assert (
            "sira_enrichment"
            not in backend.get_mapping(index_name)[index_name]["mappings"]["properties"]
        )  # the old index is untouched

        run = sira_sync(*common(backend, alias, jsonl, tmp_path / "state"), "--json")
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["counts"]["enriched"] == 25
        doc = backend.get(target, "u3")
        assert doc is not None and doc.source is not None
        assert doc.source["title"] == "Item 3" and doc.source["sira_enrichment"]["phrases"] == [
            "nick"
        ]
    finally:
        backend.delete_index(target)


def first_half(jsonl: Path, tmp_path: Path) -> Path:
    """The records of the first half of the documents: one batch job's first output file."""
    half = tmp_path / "half.jsonl"
    half.write_text("".join(jsonl.read_text().splitlines(keepends=True)[: N_DOCS // 2]))
    return half


def test_a_resumed_run_shows_progress_from_where_the_killed_run_stopped(
    backend: SearchBackend, small_index: tuple[str, Path], tmp_path: Path
) -> None:
    index, jsonl = small_index
    half = first_half(jsonl, tmp_path)
    state = tmp_path / "state"
    same_model = ("--model-id", "gpu-batch-1")
    first = sira_sync(*common(backend, index, half, state), *same_model)
    assert first.returncode == 0, first.stderr
    # What a run killed after its pages for the first half leaves behind: an open checkpoint.
    checkpoint = state / f"{index}.slice0of1.checkpoint.json"
    saved = json.loads(checkpoint.read_text())
    checkpoint.write_text(json.dumps({**saved, "finished": False}))

    args = [*common(backend, index, jsonl, state), *same_model]
    args.remove("--no-progress")
    resumed = sira_sync(*args, "--resume", "--report", str(tmp_path / "r.json"))
    assert resumed.returncode == 0, resumed.stderr
    # Piped, the progress is plain lines (cli/progress.py): the resumed run starts at the
    # killed run's end and ends with every document.
    assert f"started of {N_DOCS} doc, {N_DOCS // 2} done before" in resumed.stderr
    assert f"done, {N_DOCS} doc" in resumed.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["resumed"] and report["counts"]["enriched"] == N_DOCS
    assert set(versions(backend, index).values()) == {2}  # nothing written twice


@ONE_ENGINE
def test_expunge_deletes_makes_term_statistics_exact_again(
    backend: SearchBackend, expunge_index: tuple[str, Path] | None, tmp_path: Path, engine: str
) -> None:
    """One engine: the merge is the same two calls on both (``_forcemerge`` as a task, then
    ``_tasks``; `esplugin.engines.base`), and each run waits out the engine's 30-second
    retention-lease sync before deletes can be merged away. Last in this module, on an index
    made when the module started (``expunge_index``)."""
    assert expunge_index is not None
    index, jsonl = expunge_index
    half = first_half(jsonl, tmp_path)

    def film_df() -> tuple[int, int]:
        stats = backend.term_statistics(index, "contents", ["film"])
        live = backend.count(index, {"term": {"contents": "film"}})
        return stats[0].terms[0].doc_freq, live

    same_model = ("--model-id", "gpu-batch-1")  # two files, one batch job
    first = sira_sync(*common(backend, index, half, tmp_path / "state"), *same_model, "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["expunge"] is None  # opt-in
    backend.refresh(index)
    # Every update left a deleted copy that DF still counts (half of the original segment).
    assert backend.deleted_docs(index) >= N_DOCS // 2
    df, live = film_df()
    assert df > live

    args = [*common(backend, index, jsonl, tmp_path / "state"), *same_model]
    second = sira_sync(*args, "--expunge-deletes", "--json")
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout)
    assert report["counts"]["enriched"] == N_DOCS - N_DOCS // 2
    assert report["expunge"]["deleted_before"] >= N_DOCS // 2
    assert report["expunge"]["deleted_after"] == 0 == backend.deleted_docs(index)
    df, live = film_df()
    assert df == live

    human = sira_sync(*args, "--expunge-deletes")  # nothing to write, nothing to merge
    assert human.returncode == 0, human.stderr
    assert "merged away 0 of 0 deleted copies" in human.stdout
