"""Local LLM servers (``sira-seek llm install|up|down|status``, ``llm batch``): dev/ops
machinery that installs and runs vLLM or llama.cpp beside the library.

Routed through this workflow module rather than listed as public: the server processes and
their records are ``sira_seek.llm`` internals the command line drives and renders (loaded on
first use, PEP 562; httpx only when a command talks to a server).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sira_seek.llm.installers import SCRIPTS, script
    from sira_seek.llm.vllm_server import (
        EMBED_MAX_MODEL_LEN,
        VllmDeployment,
        VllmServerProcess,
        recorded_deployments,
        resolve_model,
        run_batch_round,
        save_deployment,
        stop_deployment,
        vllm_home,
        vllm_python,
    )

__all__ = [
    "EMBED_MAX_MODEL_LEN",
    "SCRIPTS",
    "VllmDeployment",
    "VllmServerProcess",
    "recorded_deployments",
    "resolve_model",
    "run_batch_round",
    "save_deployment",
    "script",
    "stop_deployment",
    "vllm_home",
    "vllm_python",
]

_EXPORTS = {
    "sira_seek.llm.installers": (
        "SCRIPTS",
        "script",
    ),
    "sira_seek.llm.vllm_server": (
        "EMBED_MAX_MODEL_LEN",
        "VllmDeployment",
        "VllmServerProcess",
        "recorded_deployments",
        "resolve_model",
        "run_batch_round",
        "save_deployment",
        "stop_deployment",
        "vllm_home",
        "vllm_python",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
