"""Offline batch enrichment: export-requests' file and the import of a batch job's output.

Runs against the in-memory ``SearchBackend`` double; the batch job's answers are written here
in the shape vLLM's ``run_batch`` writes (its ``BatchRequestOutput`` lines), and the live run
they are compared with asks a scripted LLM double (above the LLM client protocol).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import DOCS
from in_memory_backend import InMemoryBackend
from scripted_llm import ScriptedLLMDouble
from sync_doubles import layout_properties

from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.ledger import LLMUsageLedger, MeteredLLMClient
from sira_seek.llm.openai_http import openai_request_body
from sira_seek.sync.batch_output import BatchOutputError, BatchOutputPhraseSource
from sira_seek.sync.batch_requests import BatchRequestKey, export_requests
from sira_seek.sync.phrase_sources import LLMPhraseSource
from sira_seek.sync.runner import SyncRunner
from sira_seek.sync.settings import SyncSettings
from sira_seek.sync.slicing import SliceSpec
from sira_seek.sync.source_factory import build_phrase_source
from sira_seek.sync.source_text import source_hash

MODEL = "gemma3-270m"
LIVE_SPEC = f"openai:http://127.0.0.1:9/v1#{MODEL}"  # never called: only its fingerprint is read


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _export(index: InMemoryBackend, out: Path, settings: SyncSettings, **kw: Any) -> list[dict]:
    export_requests(index, "idx", out, settings, model=MODEL, **kw)
    return _lines(out)


def _answer_line(custom_id: str, content: str, *, model: str = MODEL) -> dict[str, Any]:
    """A line as vLLM's run_batch writes it for a 200 chat completion."""
    return {
        "id": f"vllm-{custom_id[:6]}",
        "custom_id": custom_id,
        "response": {
            "status_code": 200,
            "request_id": f"vllm-batch-{custom_id[:6]}",
            "body": {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
            },
        },
        "error": None,
    }


def _answers_for(requests: list[dict], out: Path, **by_doc: str) -> Path:
    """Answer every request: ``by_doc[doc_id]`` when given, else a good keyword list."""
    lines = []
    for request in requests:
        doc = BatchRequestKey.parse(request["custom_id"]).doc_id
        content = by_doc.get(doc, json.dumps({"keywords": [f"alias of {doc}", "river"]}))
        lines.append(_answer_line(request["custom_id"], content))
    out.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return out


def _import(index: InMemoryBackend, output: Path, settings: SyncSettings, **kw: Any):
    source = BatchOutputPhraseSource(output, **kw)
    try:
        return SyncRunner(index, "idx", source, settings).run(), source
    finally:
        source.close()


def test_custom_ids_are_stable_and_name_document_text_and_prompt(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    first = _export(memory_index, tmp_path / "a.jsonl", settings)
    second = _export(memory_index, tmp_path / "b.jsonl", settings)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert len(first) == len(DOCS) and first == second
    ids = [line["custom_id"] for line in first]
    assert len(set(ids)) == len(ids)
    key = BatchRequestKey.parse(ids[0])
    source = memory_index.docs[key.doc_id].source
    assert key.source_hash == source_hash(source, settings.fields)
    assert key.prompt_id == "sira-doc-v1-chat-4000c"
    assert all(line["method"] == "POST" and line["url"] == "/v1/chat/completions" for line in first)
    # An id may hold the separator itself: parsing splits from the right.
    odd = BatchRequestKey(doc_id="a::b", source_hash="sha256:00", prompt_id="p")
    assert BatchRequestKey.parse(odd.custom_id) == odd
    with pytest.raises(ValueError, match="custom_id"):
        BatchRequestKey.parse("d01::notahash::p")


def test_slices_split_the_requests_without_overlap(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    parts = [
        _export(
            memory_index, tmp_path / f"s{i}.jsonl", settings, slice_spec=SliceSpec.parse(f"{i}/3")
        )
        for i in range(3)
    ]
    docs = [{BatchRequestKey.parse(line["custom_id"]).doc_id for line in part} for part in parts]
    assert all(docs), "each of 3 slices of 20 documents has some"
    assert set().union(*docs) == set(DOCS)
    assert sum(len(d) for d in docs) == len(DOCS)
    for i, owned in enumerate(docs):
        assert all(SliceSpec(index=i, count=3).owns(doc) for doc in owned)


def test_request_body_is_exactly_what_a_live_run_sends(
    memory_index: InMemoryBackend, tmp_path: Path
) -> None:
    settings = SyncSettings(state_dir=tmp_path / "state", task="claim", text_budget_chars=300)
    memory_index.edit("d03", text="a much longer text " * 40)  # cut by the text budget
    exported = _export(memory_index, tmp_path / "req.jsonl", settings, categories=True)
    double = ScriptedLLMDouble(default=json.dumps({"keywords": ["x"]}))
    live = LLMPhraseSource(
        BlockingLLMClient(MeteredLLMClient(double, LLMUsageLedger())),
        style="chat",
        prompt_id="unused",
        max_phrases=settings.max_phrases,
        max_categories=settings.max_categories,
        task="claim",
    )
    try:
        live_index = InMemoryBackend(DOCS, properties=layout_properties())
        live_index.edit("d03", text="a much longer text " * 40)
        SyncRunner(live_index, "idx", live, settings).run()
    finally:
        live.close()
    sent = {
        request.lookup_key: openai_request_body(request, model=MODEL, dialect="openai")
        for request in double.calls
    }
    assert len(sent) == len(exported) == len(DOCS)
    for line in exported:
        doc = BatchRequestKey.parse(line["custom_id"]).doc_id
        path, body = sent[doc]
        assert line["url"] == "/v1" + path and line["body"] == body
    d03 = next(line for line in exported if line["custom_id"].startswith("d03::"))
    assert len(d03["body"]["messages"][-1]["content"]) <= 300
    assert "claim" in d03["body"]["messages"][0]["content"]
    assert d03["body"]["response_format"]["json_schema"]["schema"]["properties"]["categories"]
    assert BatchRequestKey.parse(d03["custom_id"]).prompt_id == (
        "sira-doc-v1-claim-chat+categories-300c"
    )


def test_import_enriches_and_a_live_run_then_sees_every_document_current(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    requests = _export(memory_index, tmp_path / "req.jsonl", settings)
    output = _answers_for(requests, tmp_path / "out.jsonl")
    report, source = _import(memory_index, output, settings)
    assert source.model == f"openai:{MODEL}" and source.prompt_id == "sira-doc-v1-chat-4000c"
    assert report.counts.enriched == len(DOCS) and report.counts.failed == 0
    assert report.counts.prompt_tokens == 120 * len(DOCS)
    d07 = memory_index.docs["d07"].source
    assert d07["sira_enrichment"]["phrases"] == ["alias of d07"]  # "river" is too common
    assert d07["sira_sync"]["model"] == f"openai:{MODEL}"
    # A live run against an openai: server with the same model and prompt has nothing to do.
    live = build_phrase_source(settings, llm=LIVE_SPEC, use_cache=False)
    try:
        dry = SyncRunner(memory_index, "idx", live, settings, dry_run=True).run()
    finally:
        live.close()
    assert dry.counts.current == len(DOCS)
    assert _export(memory_index, tmp_path / "again.jsonl", settings) == []


def test_export_asks_only_for_documents_that_need_it(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    requests = _export(memory_index, tmp_path / "req.jsonl", settings)
    half = [r for r in requests if int(BatchRequestKey.parse(r["custom_id"]).doc_id[1:]) < 10]
    _import(memory_index, _answers_for(half, tmp_path / "out.jsonl"), settings)
    memory_index.edit("d02", text="rewritten by a user")  # enriched, then changed: stale
    again = _export(memory_index, tmp_path / "again.jsonl", settings)
    docs = {BatchRequestKey.parse(r["custom_id"]).doc_id for r in again}
    assert docs == {"d02"} | {f"d{i:02d}" for i in range(10, 20)}
    export_requests(memory_index, "idx", tmp_path / "m2.jsonl", settings, model="another-model")
    assert len(_lines(tmp_path / "m2.jsonl")) == len(DOCS)  # enriched under another model


def test_a_document_changed_since_export_is_not_written(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    requests = _export(memory_index, tmp_path / "req.jsonl", settings)
    output = _answers_for(requests, tmp_path / "out.jsonl")
    memory_index.edit("d04", text="edited after the export")
    before = memory_index.docs["d04"].source
    report, _ = _import(memory_index, output, settings)
    assert report.counts.changed_since_export == 1
    assert report.counts.enriched == len(DOCS) - 1 and report.counts.failed == 0
    assert memory_index.docs["d04"].source == before  # nothing written, not even "failed"
    # The next export asks again, for the new text.
    (again,) = _export(memory_index, tmp_path / "again.jsonl", settings)
    assert again["custom_id"].startswith("d04::")
    assert "edited after the export" in again["body"]["messages"][-1]["content"]


def test_malformed_and_failed_lines_are_recorded_never_written(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    requests = _export(memory_index, tmp_path / "req.jsonl", settings)
    output = _answers_for(
        requests,
        tmp_path / "out.jsonl",
        d01='{"keywords": ["cut off by max_tok',
        d02=json.dumps({"words": ["no keywords key"]}),
        d03="not json at all",
    )
    by_id = {BatchRequestKey.parse(r["custom_id"]).doc_id: r["custom_id"] for r in requests}
    lines = output.read_text("utf-8").splitlines()
    kept = [ln for ln in lines if json.loads(ln)["custom_id"] not in (by_id["d05"], by_id["d06"])]
    error = {"id": "x", "custom_id": by_id["d05"], "response": None, "error": "engine died"}
    refused = _answer_line(by_id["d06"], "")
    refused["response"]["status_code"] = 400
    refused["response"]["body"] = {"error": {"message": "prompt too long for max_model_len"}}
    kept += [json.dumps(error), json.dumps(refused), "{garbage", json.dumps({"custom_id": "q"})]
    output.write_text("\n".join(kept) + "\n", encoding="utf-8")

    report, source = _import(memory_index, output, settings)
    assert source.bad_lines == [len(kept) - 1, len(kept)]
    assert report.counts.failed == 5 and report.counts.enriched == len(DOCS) - 5
    failures = [json.loads(ln) for ln in Path(report.failures_file or "").read_text().splitlines()]
    kinds = {f["doc_id"]: f["kind"] for f in failures}
    assert kinds == {
        "d01": "malformed_output",
        "d02": "malformed_output",
        "d03": "malformed_output",
        "d05": "batch_error",
        "d06": "batch_error",
    }
    raw = {f["doc_id"]: f["raw_text"] for f in failures}
    assert "cut off by max_tok" in raw["d01"] and "engine died" in raw["d05"]
    assert all(f["model"] == f"openai:{MODEL}" for f in failures)
    for doc in kinds:
        source_now = memory_index.docs[doc].source
        assert "sira_enrichment" not in source_now
        assert source_now["sira_sync"]["status"] == "failed"
    # Failed documents are asked again by the next export.
    again = _export(memory_index, tmp_path / "again.jsonl", settings)
    assert {BatchRequestKey.parse(r["custom_id"]).doc_id for r in again} == set(kinds)


def test_completion_answers_import_like_chat_answers(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    fewshot = _export(memory_index, tmp_path / "fs.jsonl", settings, style="completion")
    assert fewshot[0]["url"] == "/v1/completions" and "prompt" in fewshot[0]["body"]
    assert fewshot[0]["body"]["prompt"].endswith("JSON: ")
    lines = []
    for request in fewshot:
        line = _answer_line(request["custom_id"], "")
        line["response"]["body"]["object"] = "text_completion"
        line["response"]["body"]["choices"] = [
            {
                "index": 0,
                "text": json.dumps({"keywords": ["base model word"]}),
                "finish_reason": "stop",
            }
        ]
        lines.append(json.dumps(line))
    output = tmp_path / "out.jsonl"
    output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report, source = _import(memory_index, output, settings)
    assert source.prompt_id == "sira-doc-v1-completion-4000c"
    assert report.counts.enriched == len(DOCS)
    assert memory_index.docs["d00"].source["sira_enrichment"]["phrases"] == ["base model word"]


def test_an_output_file_must_name_one_model_and_one_prompt(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    chat = _export(memory_index, tmp_path / "chat.jsonl", settings)
    fewshot = _export(memory_index, tmp_path / "fs.jsonl", settings, style="completion")
    good = json.dumps({"keywords": ["a"]})
    mixed = [_answer_line(chat[0]["custom_id"], good), _answer_line(fewshot[1]["custom_id"], good)]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in mixed), encoding="utf-8")
    with pytest.raises(BatchOutputError, match="several prompts"):
        BatchOutputPhraseSource(path)
    two_models = [
        _answer_line(chat[0]["custom_id"], good, model="m1"),
        _answer_line(chat[1]["custom_id"], good, model="m2"),
    ]
    path.write_text("".join(json.dumps(m) + "\n" for m in two_models), encoding="utf-8")
    with pytest.raises(BatchOutputError, match="--model-id"):
        BatchOutputPhraseSource(path)
    named = BatchOutputPhraseSource(path, model="openai:m1")
    named.close()
    assert named.model == "openai:m1"
    path.write_text("{}\n", encoding="utf-8")
    with pytest.raises(BatchOutputError, match="no line"):
        BatchOutputPhraseSource(path)
