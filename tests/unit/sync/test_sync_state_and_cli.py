"""Checkpoint files, the failures file, the DF filter's shortcut and the command line's parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DOCS
from in_memory_backend import InMemoryBackend
from sync_doubles import layout_properties

from sira_seek.cli.sync import main
from sira_seek.sync.checkpoint import Checkpoint, RunStateStore
from sira_seek.sync.corpus_df_filter import CorpusDFFilter
from sira_seek.sync.mapping import EnrichmentLayout
from sira_seek.sync.records import EnrichmentFingerprint, FailureRecord
from sira_seek.sync.slicing import SliceSpec

FP = EnrichmentFingerprint(model="m", prompt_id="p", enrichment_version=1)


def test_checkpoint_round_trip_and_atomic_replace(tmp_path: Path) -> None:
    store = RunStateStore(tmp_path, "my/index", SliceSpec.parse("1/4"))
    assert store.load() is None
    cp = Checkpoint(index="my/index", slice=SliceSpec.parse("1/4"), fields=["t"], fingerprint=FP)
    cp.counts = {"enriched": 3}
    store.save(cp)
    store.save(cp)
    assert store.load() == cp.model_copy(update={"updated_at": store.load().updated_at})
    assert store.checkpoint_path.name == "my_index.slice1of4.checkpoint.json"
    assert [p.name for p in tmp_path.iterdir()] == [store.checkpoint_path.name]  # no temp files


def test_failures_file_survives_a_torn_last_line(tmp_path: Path) -> None:
    store = RunStateStore(tmp_path, "idx", SliceSpec())
    record = FailureRecord(
        doc_id="d1", kind="malformed_output", message="m", raw_text="{oops",
        index="idx", source_hash="h", model="m", prompt_id="p",
    )  # fmt: skip
    store.record_failures([record])
    with store.failures_path.open("a") as handle:
        handle.write('{"doc_id": "d2", "kind": "malfo')  # killed mid-write
    assert [f.doc_id for f in store.read_failures()] == ["d1"]
    assert store.read_failures()[0].raw_text == "{oops"


def test_df_filter_counts_live_documents_only_where_bounds_leave_it_open() -> None:
    """Deleted copies left by edits must not make a phrase look common: term statistics would
    (Lucene counts them until a merge); the filter only takes them as upper bounds and counts
    live documents for the phrases those bounds cannot settle."""
    index = InMemoryBackend(DOCS, properties=layout_properties())
    for doc_id in ("d00", "d01", "d02", "d03"):
        index.edit(doc_id, text=f"ocean story {doc_id}")
        index.edit(doc_id, text=f"ocean tale {doc_id}")  # leaves a deleted copy with "ocean"
    (ocean,) = index.term_statistics("idx", "contents", ["ocean"])
    assert ocean.terms[0].doc_freq == 8  # 4 live + 4 deleted copies: > tau * |C| = 4
    index.calls.clear()
    layout = EnrichmentLayout(
        index="idx", df_unigram_fields=["contents"], df_shingle_fields=["contents.shingles"]
    )
    df = CorpusDFFilter(index, layout, tau=0.2, doc_count=20)
    verdicts = df.verdicts(["place7", "brand new", "river", "the", "ocean", "one two three four"])
    assert verdicts["place7"].kept and verdicts["place7"].doc_freq_at_most == 1
    assert verdicts["brand new"].kept and verdicts["brand new"].doc_freq_at_most == 0
    assert not verdicts["river"].kept and verdicts["river"].reason == "too_common"
    assert verdicts["river"].doc_freq == 16  # live docs d04..d19 only
    assert verdicts["ocean"].kept and verdicts["ocean"].doc_freq == 4
    assert verdicts["the"].reason == "no_terms"
    # the routing values, one analysis per analyzer, the bounds' one request, one live count
    names = [name for name, _ in index.calls]
    assert names == ["shard_routings", "analyze", "analyze", "term_vectors", "live_doc_freqs"]
    assert df.round_trips == 5
    df.verdicts(["place7", "river"])  # memoised: no new round trip
    assert len(index.calls) == 5 and df.round_trips == 5
    long = CorpusDFFilter(index, layout, tau=0.2, doc_count=20, max_phrase_words=3)
    assert long.verdicts(["one two three four"])["one two three four"].reason == "too_long"


def test_cli_runs_by_default_and_needs_one_input() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--index", "x", "--url", "http://127.0.0.1:9"])
    assert result.exit_code == 2
    assert "exactly one of --from-jsonl FILE and --llm SPEC" in result.output
    both = runner.invoke(
        main, ["run", "--index", "x", "--from-jsonl", "a", "--llm", "openai:http://h:1/v1"]
    )
    assert both.exit_code == 2 and "exactly one" in both.output
    helped = runner.invoke(main, ["--help"])
    assert "status" in helped.output and "run" in helped.output
    bad_slice = runner.invoke(main, ["--index", "x", "--from-jsonl", "a", "--slice", "3/2"])
    assert bad_slice.exit_code != 0 and "slice" in bad_slice.output


@pytest.mark.parametrize("line", ['{"_id": 7, "keywords": ["a"]}', '{"id": "7", "keywords": []}'])
def test_jsonl_ids_may_be_numbers_or_id(tmp_path: Path, line: str) -> None:
    from sira_seek.sync.phrase_sources import JsonlPhraseSource
    from sira_seek.sync.work_items import WorkItem

    path = tmp_path / "e.jsonl"
    path.write_text(line + "\n\nnot json\n")
    source = JsonlPhraseSource(path)
    try:
        (outcome,) = source.propose([WorkItem(doc_id="7", text="", source_hash="h", state="new")])
    finally:
        source.close()
    assert source.bad_lines == [3]
    assert outcome is not None and json.loads(line).get("keywords") == outcome.phrases
