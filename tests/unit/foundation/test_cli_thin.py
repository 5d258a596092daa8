"""The front ends stay thin, checked on the source's syntax trees.

- No function in ``cli/*.py`` is longer than 60 lines, from its ``def`` line to its last line
  (decorators excluded): a command parses its flags, builds a typed request, calls a workflow
  and hands the result to a small renderer.
- The front ends (``cli/``, the ``SiraSeek`` facade, the HTTP service, the MCP server, the
  framework adapters) never make what the workflows make once for all of them: SIRA's settings
  (``SiraSettings(...)``, ``SiraSettings.model_validate``; the workflows' ``sira_settings``),
  SEEK's settings (``SeekSettings(...)``, ``SeekSettings.model_validate``: a front end passes
  the values, and the workflow request validates them, naming a bad field),
  its expander (``LLMExpander.from_spec``, ``PrecomputedExpander(...)``,
  ``PrecomputedExpander.from_file``; ``choose_expander``), its reranking model
  (``LLMReranker``; ``choose_reranker``), a ``SiraRetriever(...)``, and the
  evaluation outputs (``write_trec_run``, ``answer_coverage``, ``score_predictions``,
  ``seek_diagnostics``). Calls are matched through import aliases and attribute chains
  (``expansions.LLMExpander.from_spec``); naming a type in an annotation or an ``isinstance``
  is fine, only calls count.

The agent tools build a ``SiraRetriever`` per tool call with the index profile they read once:
that is a workflow (``sira_seek/workflows/agent_tools.py``), which the MCP server and the
agentic evaluation both call.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MAX_LINES = 60

FRONT_ENDS = (
    "cli",
    "sira_seek/client.py",
    "sira_seek/service",
    "sira_seek/mcp",
    "sira_seek/integrations",
)

FORBIDDEN_CALLS = {
    "SiraSettings": "workflows.sira_setup.sira_settings",
    "SiraSettings.model_validate": "workflows.sira_setup.sira_settings",
    "SeekSettings": "the values, validated by the workflow request (AskRequest, ...)",
    "SeekSettings.model_validate": "the values, validated by the workflow request",
    "LLMExpander.from_spec": 'workflows.sira_setup.choose_expander("sira", llm=...)',
    "PrecomputedExpander": 'workflows.sira_setup.choose_expander("sira", expansions=...)',
    "PrecomputedExpander.from_file": 'workflows.sira_setup.choose_expander("sira", expansions=...)',
    "SiraRetriever": "the search / evaluate / ask workflows",
    "LLMReranker": "workflows.sira_setup.choose_reranker(llm, depth)",
    "LLMReranker.from_spec": "workflows.sira_setup.choose_reranker(llm, depth)",
    "write_trec_run": "workflows.evaluate.evaluate_retrieval (run_file)",
    "answer_coverage": "workflows.evaluate.evaluate_retrieval (answers)",
    "score_predictions": "workflows.evaluate_qa (evaluate_qa, score_prediction_file)",
    "seek_diagnostics": "workflows.evaluate_qa.evaluate_qa (diagnostics)",
}


def cli_files() -> list[Path]:
    files = sorted((ROOT / "cli").glob("*.py"))
    assert len(files) >= 20, "cli/ has too few modules: the walk looks in the wrong place"
    return files


def front_end_files() -> list[Path]:
    files: list[Path] = []
    for entry in FRONT_ENDS:
        path = ROOT / entry
        assert path.exists(), f"{entry} moved: update FRONT_ENDS"
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def long_functions(source: str) -> list[tuple[str, int, int]]:
    """(name, def line, length) of every function longer than ``MAX_LINES``, nested included."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            length = node.end_lineno - node.lineno + 1
            if length > MAX_LINES:
                found.append((node.name, node.lineno, length))
    return found


def _dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; ``None`` for a call on anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def forbidden_calls(source: str) -> list[tuple[int, str]]:
    """(line, forbidden name) of every call that makes what a workflow makes."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}  # local name -> imported name
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                aliases[alias.asname or alias.name] = alias.name
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        parts = _dotted(node.func)
        if parts is None:
            continue
        parts[0] = aliases.get(parts[0], parts[0])
        for name in FORBIDDEN_CALLS:
            wanted = name.split(".")
            if parts[-len(wanted) :] == wanted:
                found.append((node.lineno, name))
    return found


def test_no_cli_function_is_longer_than_60_lines() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} {name} has {length} lines"
        for path in cli_files()
        for name, line, length in long_functions(path.read_text(encoding="utf-8"))
    ]
    assert found == [], (
        f"split these (at most {MAX_LINES} lines, def to end; the work belongs in "
        "sira_seek/workflows, the printing in a small _render):\n" + "\n".join(found)
    )


def test_front_ends_leave_settings_expanders_retrievers_and_outputs_to_the_workflows() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} calls {name}: use {FORBIDDEN_CALLS[name]}"
        for path in front_end_files()
        for line, name in forbidden_calls(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("SiraSettings(tau=0.1)", ["SiraSettings"]),
        ("SiraSettings.model_validate({})", ["SiraSettings.model_validate"]),
        ("from x import LLMExpander as E\nE.from_spec('s')", ["LLMExpander.from_spec"]),
        ("expansions.PrecomputedExpander.from_file(p)", ["PrecomputedExpander.from_file"]),
        ("m.write_trec_run(run, path)", ["write_trec_run"]),
        ("seek_diagnostics([], None)", ["seek_diagnostics"]),
        ("SeekSettings(method='rewoo')", ["SeekSettings"]),
        ("x: SiraSettings = make()\nisinstance(x, SiraRetriever)", []),
        ("sira_settings(tau=0.1)\nchoose_expander('sira', llm='s')", []),
        ("record.answer_coverage\nout['answer_coverage']", []),
    ],
)
def test_the_check_sees_calls_through_aliases_and_attributes(
    source: str, expected: list[str]
) -> None:
    assert [name for _, name in forbidden_calls(source)] == expected


def test_the_length_check_counts_from_def_and_skips_decorators() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES - 1))
    fits = "@decorator\n@other\ndef f():\n" + body
    assert long_functions(fits) == []
    assert long_functions(fits + "    y = 0\n") == [("f", 3, MAX_LINES + 1)]
