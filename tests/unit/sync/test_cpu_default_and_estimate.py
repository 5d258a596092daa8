"""``--estimate`` extrapolates from the measured in-flight rate; ``--llm cpu`` resolves to the
backend measured faster (a running vLLM, one to start, or llama.cpp in-process).

The LLM is the scripted double (above the LLM client protocol) with a fixed latency per
request, so N requests in flight answer N times faster, as a batching server does.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DOCS
from in_memory_backend import InMemoryBackend
from scripted_llm import ScriptedLLMDouble
from sync_doubles import layout_properties

from sira_seek.llm import vllm_server
from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.ledger import LLMUsageLedger, MeteredLLMClient
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse
from sira_seek.llm.spec import OpenAIBackendSpec, parse_backend_spec
from sira_seek.sync.cpu_default import (
    LLAMACPP_SPEC,
    VLLM_CPU_CONCURRENCY,
    choose_cpu_llm,
)
from sira_seek.sync.estimate import RunEstimate, estimate_run, sample_for
from sira_seek.sync.phrase_sources import LLMPhraseSource
from sira_seek.sync.settings import SyncSettings
from sira_seek.sync.slicing import SliceSpec

LATENCY_S = 0.3


class InFlightDouble(ScriptedLLMDouble):
    """The scripted LLM, counting the requests it holds at once."""

    def __init__(self) -> None:
        super().__init__(default=json.dumps({"keywords": ["a b"]}), delay_s=LATENCY_S)
        self.in_flight = 0
        self.most_in_flight = 0

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return await super().generate(request)
        finally:
            self.in_flight -= 1


def _estimate(
    tmp_path: Path,
    *,
    concurrency: int,
    sample: int,
    double: ScriptedLLMDouble | None = None,
    clock: Callable[[], float] | None = None,
) -> RunEstimate:
    ledger = LLMUsageLedger()
    if double is None:
        double = ScriptedLLMDouble(default=json.dumps({"keywords": ["a b"]}), delay_s=LATENCY_S)
    source = LLMPhraseSource(
        BlockingLLMClient(MeteredLLMClient(double, ledger)),
        style="chat",
        prompt_id="sira-doc-v1-chat",
        ledger=ledger,
        concurrency=concurrency,
    )
    index = InMemoryBackend(DOCS, properties=layout_properties())
    settings = SyncSettings(state_dir=tmp_path, llm_concurrency=concurrency)
    extra = {"clock": clock} if clock is not None else {}
    try:
        return estimate_run(index, "idx", source, settings, SliceSpec(), sample=sample, **extra)
    finally:
        source.close()


def test_estimate_uses_the_in_flight_rate_not_the_per_request_latency(tmp_path: Path) -> None:
    # The sample's wall time is read from a clock the test sets: 4 documents in 2 s. Each
    # answer took LATENCY_S on its own; an estimate from per-request latency would say 3.3
    # docs/s, one from the sample's wall time 2 docs/s.
    readings = iter([100.0, 102.0])
    double = InFlightDouble()
    estimate = _estimate(
        tmp_path, concurrency=4, sample=4, double=double, clock=lambda: next(readings)
    )
    assert double.most_in_flight == 4  # the sample filled every in-flight slot
    assert estimate.sample_docs == 4 and estimate.sample_in_flight == 4
    assert estimate.sample_seconds == 2.0 and estimate.docs_per_s == 2.0
    assert estimate.docs_to_enrich == len(DOCS) and estimate.expected_seconds == len(DOCS) / 2.0
    assert "--sample" not in estimate.describe()


def test_a_sample_smaller_than_the_concurrency_says_so(tmp_path: Path) -> None:
    estimate = _estimate(tmp_path, concurrency=4, sample=2)
    assert estimate.sample_in_flight == 2 and estimate.concurrency == 4
    assert "filled 2 of 4 in-flight slots" in estimate.describe()
    assert "--sample 4" in estimate.describe()


def test_sample_default_fills_a_servers_batch_only() -> None:
    assert sample_for("openai:http://h:8000/v1#m", 16) == 16
    assert sample_for(" OpenAI:http://h:8000/v1", 8) == 8
    assert sample_for("openai:http://h:8000/v1#m", 2) == 5
    assert sample_for("llamacpp:gemma3-270m", 16) == 5
    assert sample_for(None, 16) == 5


@pytest.fixture
def no_vllm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SIRA_SEEK_VLLM_PYTHON", raising=False)
    monkeypatch.setenv("SIRA_SEEK_VLLM_HOME", str(tmp_path / "no-vllm-here"))
    monkeypatch.setattr(vllm_server, "deployments_dir", lambda: tmp_path / "llm")


@pytest.fixture
def vllm_installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("SIRA_SEEK_VLLM_PYTHON", sys.executable)
    monkeypatch.setattr(vllm_server, "deployments_dir", lambda: tmp_path / "llm")
    return tmp_path / "llm"


@pytest.mark.usefixtures("no_vllm")
def test_cpu_is_llamacpp_when_vllm_is_not_installed() -> None:
    choice = choose_cpu_llm("vllm")
    assert choice.spec == LLAMACPP_SPEC and choice.backend == "llamacpp"
    assert not choice.start_server and "not installed" in choice.reason


@pytest.mark.usefixtures("vllm_installed")
def test_cpu_is_llamacpp_when_llamacpp_measured_faster() -> None:
    choice = choose_cpu_llm("llamacpp")
    assert choice.spec == LLAMACPP_SPEC and not choice.start_server


def test_cpu_reuses_a_running_llm_up_server(vllm_installed: Path) -> None:
    spec = "openai:http://127.0.0.1:8123/v1#gemma3-270m"
    vllm_server.save_deployment(
        vllm_server.VllmDeployment(
            pid=os.getpid(),  # alive: the record counts as a running server
            port=8123,
            url="http://127.0.0.1:8123/v1",
            spec=spec,
            model="/models/gemma3-270m-f32",
            served_model_name="gemma3-270m",
            log="/dev/null",
            gpu=False,
        )
    )
    choice = choose_cpu_llm("vllm")
    assert choice.spec == spec and choice.backend == "vllm"
    assert not choice.start_server and choice.concurrency == VLLM_CPU_CONCURRENCY


def test_cpu_ignores_a_server_of_another_model(vllm_installed: Path) -> None:
    vllm_server.save_deployment(
        vllm_server.VllmDeployment(
            pid=os.getpid(),
            port=8124,
            url="http://127.0.0.1:8124/v1",
            spec="openai:http://127.0.0.1:8124/v1#Qwen/Qwen3-8B",
            model="Qwen/Qwen3-8B",
            served_model_name="Qwen/Qwen3-8B",
            log="/dev/null",
            gpu=False,
        )
    )
    choice = choose_cpu_llm("vllm")
    assert choice.backend == "vllm" and choice.start_server and choice.spec == ""


def test_a_dry_run_never_starts_vllm_yet_fingerprints_the_same_model(
    vllm_installed: Path,
) -> None:
    dry = choose_cpu_llm("vllm", generates=False)
    assert dry.backend == "vllm" and not dry.start_server
    # The model a dry run fingerprints is the one a started server would serve and record.
    dry_spec = parse_backend_spec(dry.spec)
    # (The server `cpu_vllm_server` starts serves the packaged model under this name; built
    # here without converting the model, which a fresh machine would do first.)
    started = vllm_server.VllmServerProcess(
        model="/models/gemma3-270m-f32", served_model_name=vllm_server.DEFAULT_SERVED_NAME
    )
    started_spec = parse_backend_spec(started.spec)
    assert isinstance(dry_spec, OpenAIBackendSpec) and isinstance(started_spec, OpenAIBackendSpec)
    assert dry_spec.model == started_spec.model == "gemma3-270m"
    assert choose_cpu_llm("vllm").start_server  # a real run still starts one
