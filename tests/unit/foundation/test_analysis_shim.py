"""The test-only analysis shim's bookkeeping (the live build is covered by the secured-ES tests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import analysis_shim

from sira_seek.esplugin.engines.errors import NodeStartError


def test_shim_registers_exactly_what_the_security_index_needs() -> None:
    source = analysis_shim.SHIM_SOURCE.read_text()
    assert "TEST-ONLY" in source
    registered = re.findall(r'(?:Map\.of\(|,)\s*"([a-z_]+)",', source)  # Map.of keys
    assert sorted(registered) == ["pattern_capture", "uax_url_email", "unique"]
    assert f"package {analysis_shim.SHIM_CLASS.rsplit('.', 1)[0]};" in source


def test_a_jre_without_javac_is_a_clear_error(tmp_path: Path) -> None:
    jre = tmp_path / "jre"
    (jre / "bin").mkdir(parents=True)
    (jre / "bin" / "java").touch()
    with pytest.raises(NodeStartError, match="no javac: install a JDK"):
        analysis_shim.build_shim_plugin(tmp_path / "dist", "9.2.4", jre, tmp_path / "out")
    assert not (tmp_path / "out").exists()
