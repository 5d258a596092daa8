"""Offline batch rounds end to end (issue #25's acceptance): ``sira-seek eval qa --method seek
--temperature 0 --no-cache --llm batch:DIR#MODEL`` on 2 wikimh questions, as a user runs it
(the installed command, the session's OpenSearch node), each round answered by a real vLLM
server (the session's: the packaged Gemma 3 270M on vLLM's CPU build) from the round's request
bodies, exactly as a batch job would; the rounds go on until exit 0, and the predictions equal
those of a live run ``--llm openai:URL#MODEL`` on the same server.

Requests go one at a time on both sides (``--concurrency 1`` live, one POST after another for
the rounds), so the server computes each the same way. One at a time, the server decodes about
7 tokens a second on 2 cores, and the base model fills every cap (it echoes its instructions), so
the caps set the time: 68 tokens per question and side (sketch 32, sub-query 12, evidence 16,
answer 8; with twice these the test took 84 s). What the equality catches (an answer given
to another request of its round, a round body that differs from the live one) changes these
short answers as it changed the longer ones.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_runner import run_cli
from engine_matrix import ONE_ENGINE
from vllm_kit import SLOW_SERVER_ENV, VllmEndpoint

from sira_seek.llm.batch_rounds import output_path, requests_path
from sira_seek.seek.results import SeekResult

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

CAPS = {
    "SIRA_SEEK_SEEK_DOC_CHARS": "150",
    "SIRA_SEEK_SEEK_SLOT_CHARS": "200",
    "SIRA_SEEK_SEEK_SKETCH_MAX_TOKENS": "32",
    "SIRA_SEEK_SEEK_SUBQUERY_MAX_TOKENS": "12",
    "SIRA_SEEK_SEEK_SLOT_MAX_TOKENS": "16",
    "SIRA_SEEK_SEEK_ANSWER_MAX_TOKENS": "8",
    **SLOW_SERVER_ENV,
}
MAX_ROUNDS = 40


def answer_round(server: VllmEndpoint, directory: Path, number: int) -> int:
    """POST every request body of the round to the live server, one after another, and write
    the OpenAI Batch output lines; the number of requests."""
    lines = []
    text = requests_path(directory, number).read_text("utf-8")
    for raw in text.splitlines():
        request = json.loads(raw)
        assert request["url"].startswith("/v1/")
        reply = httpx.post(
            server.base_url + request["url"].removeprefix("/v1"), json=request["body"], timeout=900
        )
        lines.append(
            json.dumps(
                {
                    "id": f"batch-{number}-{len(lines)}",
                    "custom_id": request["custom_id"],
                    "response": {"status_code": reply.status_code, "body": reply.json()},
                    "error": None,
                }
            )
        )
    partial = output_path(directory, number).with_suffix(".partial")
    partial.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    partial.replace(output_path(directory, number))
    return len(lines)


def comparable(path: Path) -> list[dict[str, Any]]:
    """The predictions file without clocks: answers, sketches, sub-queries, retrieved ids,
    tokens."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: strip(v)
                for k, v in value.items()
                if not (k.endswith(("_s", "_ms", "seconds")) or k == "timings")
            }
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    records = [SeekResult.model_validate_json(line) for line in path.read_text().splitlines()]
    return [strip(r.model_dump(mode="json")) for r in records]


@ONE_ENGINE
def test_seek_in_batch_rounds_answers_exactly_as_a_live_run(
    engine: str,
    node_urls: dict[str, str],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    vllm_server: VllmEndpoint,
    tmp_path: Path,
) -> None:
    started = time.perf_counter()
    rounds = tmp_path / "rounds"
    common = [
        "eval", "qa", "--index", wikimh_indexes[engine], "--url", node_urls[engine],
        "--qa", str(wikimh_dir / "qa-hotpotqa.jsonl"), "--limit", "2", "--method", "seek",
        "--max-gists", "2", "--temperature", "0", "--no-cache", "--concurrency", "1", "--json",
    ]  # fmt: skip
    env = {**CAPS, "SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "llm-cache")}
    batch_predictions = tmp_path / "batch.jsonl"
    batch_spec = f"batch:{rounds}#{vllm_server.model}"
    asked: list[int] = []
    for number in range(1, MAX_ROUNDS + 1):
        done = run_cli(
            [*common, "--llm", batch_spec, "--predictions", str(batch_predictions)], env=env
        )
        if done.returncode != 75:
            break
        waiting = json.loads(done.stdout)
        assert waiting["waiting_for"] == str(requests_path(rounds, number)), waiting
        assert waiting["round"] == number and "waiting" in done.stderr
        asked.append(answer_round(vllm_server, rounds, number))
    else:
        pytest.fail(f"still waiting after {MAX_ROUNDS} rounds")
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(asked) >= 3, asked  # several rounds: sketch, sub-queries and evidence, answer
    batch_scores = json.loads(done.stdout)
    batch_seconds = time.perf_counter() - started

    live_predictions = tmp_path / "live.jsonl"
    live = run_cli(
        [*common, "--llm", vllm_server.spec, "--predictions", str(live_predictions)],
        env=env,
        timeout=1800,
    )
    assert live.returncode == 0, live.stderr[-3000:]
    assert comparable(batch_predictions) == comparable(live_predictions)
    assert json.loads(live.stdout) == batch_scores
    print(
        f"batch rounds: {len(asked)} rounds ({sum(asked)} requests) in {batch_seconds:.0f}s; "
        f"whole test {time.perf_counter() - started:.0f}s"
    )
