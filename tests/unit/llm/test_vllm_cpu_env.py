"""The CPU build's environment (``cpu_engine_env``): which cores vLLM computes on.

vLLM's own binding keeps a core for its scheduler; on a 2-core machine that halved decoding
(numbers in the function's docstring). The environment binds every usable core on a small
machine, leaves vLLM's NUMA-aware choice on a large one, and never overrides a user's own."""

from __future__ import annotations

import pytest

from sira_seek.llm.vllm_server import SMALL_MACHINE_CORES, VllmServerProcess, cpu_engine_env


@pytest.fixture(autouse=True)
def no_user_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_CPU_OMP_THREADS_BIND", raising=False)
    monkeypatch.delenv("VLLM_CPU_NUM_OF_RESERVED_CPU", raising=False)


def test_a_two_core_machine_computes_on_both_cores_with_none_reserved() -> None:
    env = cpu_engine_env(2, cores=[1, 0])
    assert env == {
        "VLLM_CPU_KVCACHE_SPACE": "2",
        "VLLM_CPU_OMP_THREADS_BIND": "0,1",
        "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
    }


def test_a_large_machine_keeps_vllms_own_binding() -> None:
    env = cpu_engine_env(4, cores=list(range(SMALL_MACHINE_CORES + 1)))
    assert env == {"VLLM_CPU_KVCACHE_SPACE": "4"}


@pytest.mark.parametrize("variable", ["VLLM_CPU_OMP_THREADS_BIND", "VLLM_CPU_NUM_OF_RESERVED_CPU"])
def test_a_users_own_binding_wins(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "0")
    assert cpu_engine_env(2, cores=[0, 1]) == {"VLLM_CPU_KVCACHE_SPACE": "2"}


def test_the_server_process_of_the_cpu_build_gets_that_environment() -> None:
    server = VllmServerProcess(
        model="m", served_model_name="m", port=8999, python="python", gpu=False, kv_cache_gib=3
    )
    expected = cpu_engine_env(3)
    assert {k: server.env[k] for k in expected} == expected
    gpu = VllmServerProcess(model="m", served_model_name="m", port=8999, python="python", gpu=True)
    assert "VLLM_CPU_KVCACHE_SPACE" not in gpu.env
