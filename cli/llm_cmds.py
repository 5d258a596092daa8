"""`sira-seek llm install|up|batch|status|down`: the local LLMs, a real vLLM OpenAI server, and
vLLM's offline batch runner for the rounds of ``--llm batch:DIR#MODEL``.

``install cpu`` installs the embedded CPU model (the ``cpu`` extra) into this Python and
``install vllm`` builds vLLM's own environment, with the installer scripts shipped in the package.
``up`` starts a vLLM server detached (it keeps serving after the command returns), waits until it
answers and prints the ``openai:`` spec to pass to ``--llm``; ``down`` stops it and its engine
processes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.resources import as_file
from pathlib import Path

import click

from sira_seek.workflows.llm_servers import (
    EMBED_MAX_MODEL_LEN,
    SCRIPTS,
    VllmDeployment,
    VllmServerProcess,
    recorded_deployments,
    resolve_model,
    run_batch_round,
    save_deployment,
    script,
    stop_deployment,
    vllm_home,
    vllm_python,
)

from .options import friendly_errors, json_option, no_progress_option, show_progress
from .progress import StatusLine


@click.group()
def llm() -> None:
    """Install the local LLMs; serve one with vLLM (the CPU build here, CUDA where a GPU is
    present)."""


@llm.command("install")
@click.argument("what", type=click.Choice(sorted(SCRIPTS)))
def llm_install(what: str) -> None:
    """Install the embedded CPU model or build vLLM's own environment.

    `cpu`: llama-cpp-python (compiled once, about 6 minutes on 2 cores, then a cached wheel in
    ~/.cache/sira-seek/wheels) and the Gemma 3 270M package, i.e. the `cpu` extra, into the
    Python that runs this command. `vllm`: vLLM in a venv of its own under
    ~/.cache/sira-seek/vllm (about 8 minutes and 6 GB the first time; then seconds), for
    `sira-seek llm up`. The installer's output is shown as it runs; its exit code is this
    command's.
    """
    # No friendly_errors (no output masking): the installer writes straight to the terminal
    # (its own process), and neither it nor this command reads a credential, an LLM spec or
    # a cluster URL: there is no secret here to print.
    bash = shutil.which("bash")
    if bash is None:
        raise click.ClickException(f"sira-seek llm install {what} needs bash, which is not on PATH")
    with as_file(script(what)) as path:
        argv = [bash, str(path)] + ([sys.executable] if what == "cpu" else [])
        code = subprocess.run(argv, check=False).returncode
    click.get_current_context().exit(code)


@llm.command("up")
@click.option(
    "--model",
    default=None,
    help="A model folder, a model id vLLM can load, or gemma3-270m (the packaged CPU model, "
    "converted once from its GGUF; the default); with --embed, all-minilm-l6-v2 (packaged on "
    "PyPI; the default there) or an embedding model.",
)
@click.option(
    "--embed",
    is_flag=True,
    help="Serve an embedding model (vLLM's pooling runner, /v1/embeddings) for "
    "--embedder openai:URL#MODEL instead of an LLM.",
)
@click.option("--port", type=int, default=8000, show_default=True)
@click.option(
    "--max-model-len",
    type=int,
    default=None,
    help="Context length in tokens [default: 2048; with --embed: 256, all-MiniLM-L6-v2's].",
)
@click.option("--max-num-seqs", type=int, default=None, help="Sequences batched at once.")
@click.option(
    "--prefix-caching/--no-prefix-caching",
    default=True,
    show_default=True,
    help="Reuse the KV cache of a shared prompt prefix (every enrichment prompt shares one).",
)
@click.option(
    "--kv-cache-gib", type=int, default=2, show_default=True, help="CPU build: KV cache size."
)
@click.option("--startup-timeout", type=float, default=900.0, show_default=True, help="Seconds.")
@json_option("Print the server record (pid, url, spec, model, log) as JSON.")
@no_progress_option
@friendly_errors
def llm_up(
    model: str | None,
    embed: bool,
    port: int,
    max_model_len: int | None,
    max_num_seqs: int | None,
    prefix_caching: bool,
    kv_cache_gib: int,
    startup_timeout: float,
    as_json: bool,
    no_progress: bool,
) -> None:
    """Start vLLM's OpenAI server and print the --llm spec (with --embed: the --embedder
    spec) that reaches it."""
    model = model or ("all-minilm-l6-v2" if embed else "gemma3-270m")
    max_model_len = max_model_len or (EMBED_MAX_MODEL_LEN if embed else 2048)
    for running in recorded_deployments():
        if running.port == port:
            _print(running, as_json, note="already running")
            return
    python = vllm_python()
    with StatusLine(enabled=show_progress(no_progress=no_progress, as_json=as_json)) as status:
        status(f"vLLM: preparing {model}")
        target, served = resolve_model(model, python)
        server = _server(
            target,
            served,
            port,
            python,
            max_model_len,
            max_num_seqs,
            prefix_caching,
            kv_cache_gib,
            startup_timeout,
            embed,
        )
        status(f"vLLM: starting on port {port} (about 2 minutes on a CPU)")
        server.start()
    deployment = VllmDeployment(
        pid=server.detach(),
        port=port,
        url=server.base_url,
        spec=server.spec,
        model=str(target),
        served_model_name=served,
        log=str(server.log_path),
        gpu=server.gpu,
    )
    save_deployment(deployment)
    _print(deployment, as_json, note="started")


def _server(
    target: Path | str,
    served: str,
    port: int,
    python: str,
    max_model_len: int,
    max_num_seqs: int | None,
    prefix_caching: bool,
    kv_cache_gib: int,
    startup_timeout: float,
    embed: bool = False,
) -> VllmServerProcess:
    log = vllm_home() / "logs" / f"vllm-{port}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    return VllmServerProcess(
        model=target,
        served_model_name=served,
        port=port,
        python=python,
        max_model_len=max_model_len,
        max_num_seqs=max_num_seqs,
        prefix_caching=prefix_caching,
        kv_cache_gib=kv_cache_gib,
        startup_timeout_s=startup_timeout,
        log_path=log,
        embed=embed,
    )


@llm.command("batch")
@click.argument(
    "directory", type=click.Path(exists=True, file_okay=False, path_type=Path), metavar="DIR"
)
@click.option(
    "--model",
    default="gemma3-270m",
    show_default=True,
    help="The weights: a model folder, a model id vLLM can load, or gemma3-270m; served under "
    "the model name the requests give (the MODEL of batch:DIR#MODEL).",
)
@click.option("--max-model-len", type=int, default=2048, show_default=True)
@click.option(
    "--kv-cache-gib", type=int, default=2, show_default=True, help="CPU build: KV cache size."
)
@json_option("Print the round, its files, answered/failed counts and seconds as JSON.")
@friendly_errors
def llm_batch(
    directory: Path, model: str, max_model_len: int, kv_cache_gib: int, as_json: bool
) -> None:
    """Answer the waiting offline batch round of DIR with vLLM's run_batch on this machine.

    A command run with --llm batch:DIR#MODEL exits 75 with DIR/round-NNN.requests.jsonl
    written; this runs `python -m vllm.entrypoints.openai.run_batch` on it (vLLM's own
    environment, `sira-seek llm install vllm`) and writes DIR/round-NNN.output.jsonl; then run
    the same command again. run_batch serves chat prompts only (/v1/chat/completions).
    """
    done = run_batch_round(
        directory, model=model, max_model_len=max_model_len, kv_cache_gib=kv_cache_gib
    )
    if as_json:
        click.echo(json.dumps(done.model_dump()))
        return
    click.echo(
        f"round {done.round}: {done.answered} answered, {done.failed} failed, in "
        f"{done.seconds:.0f}s (log {done.log})",
        err=True,
    )
    click.echo(done.output)


@llm.command("status")
@json_option("Print the running servers as a JSON list.")
@friendly_errors
def llm_status(as_json: bool) -> None:
    """The vLLM servers `llm up` started that are still running."""
    found = recorded_deployments()
    if as_json:
        click.echo(json.dumps([d.model_dump() for d in found], indent=2))
        return
    if not found:
        click.echo("no vLLM server running (sira-seek llm up starts one)")
    for d in found:
        click.echo(f"{d.spec}  pid {d.pid}  model {d.model}  log {d.log}")


@llm.command("down")
@click.option("--port", type=int, default=None, help="Only the server on this port.")
@json_option("Print the stopped servers as a JSON list.")
@friendly_errors
def llm_down(port: int | None, as_json: bool) -> None:
    """Stop vLLM servers started by `llm up` (and their engine processes)."""
    stopped = [d for d in recorded_deployments() if port is None or d.port == port]
    for d in stopped:
        stop_deployment(d)
    if as_json:
        click.echo(json.dumps([d.model_dump() for d in stopped], indent=2))
        return
    if not stopped:
        click.echo("no vLLM server was running")
    for d in stopped:
        click.echo(f"stopped vLLM on port {d.port} (pid {d.pid})")


def _print(deployment: VllmDeployment, as_json: bool, *, note: str) -> None:
    if as_json:
        click.echo(json.dumps({**deployment.model_dump(), "status": note}, indent=2))
        return
    click.echo(f"vLLM {note}: {deployment.url} (model {Path(deployment.model).name})", err=True)
    click.echo(deployment.spec)
