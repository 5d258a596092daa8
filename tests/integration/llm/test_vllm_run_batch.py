"""Offline batch enrichment end to end, for real: `sira-sync export-requests` on a real node,
vLLM's own `python -m vllm.entrypoints.openai.run_batch` (the CPU build, the packaged Gemma 3
270M converted for it) on that file, then `sira-sync --from-batch-output`, and `sira-sync
status` showing every document current.

The same five wikimh paragraphs go into one OpenSearch and one Elasticsearch index: both
exports must be byte-identical (custom_ids are stable across engines), so ONE run_batch (the
model loads in process: 1-2 minutes on 2 cores) answers both. It runs in the background from
the first test on: the two tests that import its answers are sorted after every other test but
the vLLM stop (tests/conftest.py, by their ``run_batch_output`` fixture). The Elasticsearch
copy has one document edited after the export: its answer must be skipped, not written.

Needs vLLM's environment (`sira-seek llm install vllm`, or SIRA_SEEK_VLLM_PYTHON) and the converted
model (made once by prepare_default_model); a missing one fails the test, never skips it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.ingest import ingest_corpus
from sira_seek.llm.errors import BackendUnavailableError
from sira_seek.llm.vllm_server import (
    DEFAULT_SERVED_NAME,
    cpu_engine_env,
    has_gpu,
    prepare_default_model,
    run_batch_command,
    vllm_python,
)
from sira_seek.sira.keyword_parsing import clean_phrases
from sira_seek.sync.batch_requests import BatchRequestKey

pytestmark = pytest.mark.integration

N_DOCS = 5
PROMPT_ID = "sira-doc-v1-chat-4000c"
EDITED_TEXT = "Rewritten after the export: this paragraph now talks about something else."


def sira_sync(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "sira-sync"
    found = str(exe) if exe.exists() else shutil.which("sira-sync")
    if not found:
        pytest.fail("the sira-sync console script is not installed (pip install -e .)")
    done = subprocess.run(
        [found, *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"sira-sync {' '.join(args)}: {done.stderr[-2000:]}"
    return done


class BackgroundRunBatch:
    """vLLM's offline batch runner on this machine, the command ``sira-seek llm batch`` runs
    (``run_batch_command``: the server's structured-output grammar, float32 and eager on a
    CPU), begun in the background: ``output()`` waits for it."""

    def __init__(self, requests: Path, output: Path, log: Path) -> None:
        try:
            python = vllm_python()
            model = prepare_default_model(python)
        except BackendUnavailableError as exc:
            pytest.fail(f"vLLM is not ready: {exc}", pytrace=False)
        command = run_batch_command(
            python, model, DEFAULT_SERVED_NAME, requests, output, gpu=has_gpu(), max_model_len=2048
        )
        self.path, self.log = output, log
        self.started = time.perf_counter()
        with log.open("w", encoding="utf-8") as handle:
            self.proc = subprocess.Popen(
                command,
                stdout=handle,
                stderr=subprocess.STDOUT,
                # it runs beside the rest of the suite: one core, not every core of the machine
                env={**os.environ, **({} if has_gpu() else cpu_engine_env(1, cores=[0]))},
            )

    def output(self) -> Path:
        try:
            returncode = self.proc.wait(timeout=max(1.0, 1800 - self.elapsed()))
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail("run_batch did not finish in 1800 s", pytrace=False)
        if returncode != 0 or not self.path.exists():
            tail = "\n".join(self.log.read_text("utf-8", errors="replace").splitlines()[-30:])
            pytest.fail(f"run_batch exited {returncode} after {self.elapsed():.0f}s:\n{tail}")
        return self.path

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=60)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def cluster(backend: SearchBackend) -> list[str]:
    return ["--url", backend.info.url]


@pytest.fixture(scope="session")
def batch_world(
    backends: dict[str, SearchBackend], wikimh_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """Two indexes of the same documents, their exports, and one run_batch over them, begun in
    the background. Session-scoped: the tests that read its answers (``run_batch_output``) are
    sorted after the others (tests/conftest.py), so the run_batch loads the model and answers
    while the rest of the session runs instead of holding it up for a minute or two."""
    work = tmp_path_factory.mktemp("vllm-run-batch")
    corpus = work / "corpus.jsonl"
    docs = (wikimh_dir / "corpus.jsonl").read_text("utf-8").splitlines()[:N_DOCS]
    corpus.write_text("\n".join(docs) + "\n", encoding="utf-8")
    indexes = {engine: f"test-batch-{uuid.uuid4().hex[:10]}" for engine in backends}
    batch: BackgroundRunBatch | None = None
    try:
        for engine, backend in backends.items():
            ingest_corpus(backend, indexes[engine], corpus)
        exports = {}
        for engine, backend in backends.items():
            out = work / f"requests-{engine}.jsonl"
            done = sira_sync(
                "export-requests", "--index", indexes[engine], "--out", str(out),
                "--model", DEFAULT_SERVED_NAME, "--json", *cluster(backend),
            )  # fmt: skip
            exports[engine] = (out, json.loads(done.stdout))
            if batch is None:  # the engines' exports are equal (the first test checks)
                batch = BackgroundRunBatch(out, work / "output.jsonl", work / "run_batch.log")
        yield {
            "indexes": indexes,
            "exports": exports,
            "batch": batch,
            "doc_ids": [json.loads(d)["_id"] for d in docs],
            "state": work / "state",
        }
    finally:
        if batch is not None:
            batch.stop()
        for engine, backend in backends.items():
            backend.delete_index(indexes[engine])


@pytest.fixture(scope="session")
def run_batch_output(batch_world: dict[str, Any]) -> Path:
    """run_batch's answers to the export, once it has finished."""
    batch: BackgroundRunBatch = batch_world["batch"]
    output = batch.output()
    print(f"run_batch answered {N_DOCS} requests {batch.elapsed():.0f}s after it began")
    return output


def test_exports_are_stable_across_engines_and_name_every_document(
    batch_world: dict[str, Any],
) -> None:
    (os_file, os_report), (es_file, es_report) = (
        batch_world["exports"]["opensearch"],
        batch_world["exports"]["elasticsearch"],
    )
    assert os_file.read_bytes() == es_file.read_bytes()
    assert os_report["requests"] == es_report["requests"] == os_report["new"] == N_DOCS
    assert os_report["fingerprint_model"] == f"openai:{DEFAULT_SERVED_NAME}"
    requests = lines(os_file)
    keys = [BatchRequestKey.parse(r["custom_id"]) for r in requests]
    assert [k.doc_id for k in keys] == batch_world["doc_ids"]
    assert {k.prompt_id for k in keys} == {PROMPT_ID}
    assert all(r["url"] == "/v1/chat/completions" for r in requests)
    assert all(r["body"]["response_format"]["type"] == "json_schema" for r in requests)


def test_run_batch_output_imports_and_status_shows_every_document_current(
    batch_world: dict[str, Any], run_batch_output: Path, backends: dict[str, SearchBackend]
) -> None:
    backend, index = backends["opensearch"], batch_world["indexes"]["opensearch"]
    output = run_batch_output
    answers = lines(output)
    assert sorted(a["custom_id"] for a in answers) == sorted(
        r["custom_id"] for r in lines(batch_world["exports"]["opensearch"][0])
    )
    assert all(a["error"] is None and a["response"]["status_code"] == 200 for a in answers)
    assert {a["response"]["body"]["model"] for a in answers} == {DEFAULT_SERVED_NAME}

    done = sira_sync(
        "--index", index, "--from-batch-output", str(output), "--json", "--no-progress",
        "--state-dir", str(batch_world["state"]), *cluster(backend),
    )  # fmt: skip
    report = json.loads(done.stdout)
    counts = report["counts"]
    print("import counts:", {k: v for k, v in counts.items() if v})
    assert counts["failed"] == 0, f"malformed answers: {report['failures_file']}"
    assert counts["enriched"] == N_DOCS and counts["changed_since_export"] == 0
    assert report["fingerprint"]["model"] == f"openai:{DEFAULT_SERVED_NAME}"
    assert report["fingerprint"]["prompt_id"] == PROMPT_ID

    # What was written came from the batch's answers: a subset of each answer's keywords.
    by_doc = {
        BatchRequestKey.parse(a["custom_id"]).doc_id: json.loads(
            a["response"]["body"]["choices"][0]["message"]["content"]
        )["keywords"]
        for a in answers
    }
    backend.refresh(index)
    for doc_id, keywords in by_doc.items():
        hit = backend.get(index, doc_id)
        assert hit is not None and hit.source is not None
        written = hit.source["sira_enrichment"]["phrases"]
        assert set(written) <= set(clean_phrases(keywords, 10)), (doc_id, written, keywords)
        assert hit.source["sira_sync"]["status"] == "enriched"

    status = json.loads(sira_sync("status", "--index", index, "--json", *cluster(backend)).stdout)
    assert (status["total"], status["enriched"]) == (N_DOCS, N_DOCS)
    assert status["stale"] == status["failed"] == status["never_enriched"] == 0
    (group,) = status["by_fingerprint"]
    assert (group["model"], group["prompt_id"]) == (f"openai:{DEFAULT_SERVED_NAME}", PROMPT_ID)

    # A live run against a vLLM server with the same model and prompt has nothing to do (dry
    # run: the server named here is never called), and a new export asks for nothing.
    live = sira_sync(
        "--index", index, "--llm", f"openai:http://127.0.0.1:9/v1#{DEFAULT_SERVED_NAME}",
        "--dry-run", "--json", "--no-progress", "--state-dir", str(batch_world["state"]),
        *cluster(backend),
    )  # fmt: skip
    assert json.loads(live.stdout)["counts"]["current"] == N_DOCS
    again = batch_world["state"].parent / "again.jsonl"
    sira_sync("export-requests", "--index", index, "--out", str(again), "--model",
              DEFAULT_SERVED_NAME, *cluster(backend))  # fmt: skip
    assert again.read_text("utf-8") == ""


def test_a_document_edited_after_the_export_is_not_written(
    batch_world: dict[str, Any], run_batch_output: Path, backends: dict[str, SearchBackend]
) -> None:
    backend, index = backends["elasticsearch"], batch_world["indexes"]["elasticsearch"]
    edited = batch_world["doc_ids"][2]
    backend.bulk_upsert(index, [{"_id": edited, "text": EDITED_TEXT}])  # a user's own edit
    backend.refresh(index)

    done = sira_sync(
        "--index", index, "--from-batch-output", str(run_batch_output), "--json",
        "--no-progress", "--state-dir", str(batch_world["state"]), *cluster(backend),
    )  # fmt: skip
    counts = json.loads(done.stdout)["counts"]
    assert counts["changed_since_export"] == 1
    assert counts["enriched"] + counts["failed"] == N_DOCS - 1
    after = backend.get(index, edited)
    assert after is not None and after.source is not None
    assert "sira_sync" not in after.source and "sira_enrichment" not in after.source
    assert after.source["text"] == EDITED_TEXT

    status = json.loads(sira_sync("status", "--index", index, "--json", *cluster(backend)).stdout)
    assert status["never_enriched"] == 1 and status["total"] == N_DOCS
    again = batch_world["state"].parent / "again-es.jsonl"
    sira_sync("export-requests", "--index", index, "--out", str(again), "--model",
              DEFAULT_SERVED_NAME, *cluster(backend))  # fmt: skip
    (request,) = lines(again)
    assert BatchRequestKey.parse(request["custom_id"]).doc_id == edited
    assert EDITED_TEXT in request["body"]["messages"][-1]["content"]
