"""Command-line misuse fails with a clear message before any cluster is contacted."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sira_seek.cli.main import cli


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "q.jsonl").write_text('{"_id": "1", "text": "x"}\n')
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n1\td\t1\n")
    (tmp_path / "exp.jsonl").write_text('{"_id": "1", "keywords": ["y"]}\n')
    return {
        k: str(tmp_path / v)
        for k, v in {"q": "q.jsonl", "qrels": "qrels.tsv", "exp": "exp.jsonl"}.items()
    }


def _run(*args: str) -> tuple[int, str]:
    # an unroutable URL: any attempt to reach a cluster would fail differently
    result = CliRunner().invoke(cli, [*args, "--url", "http://127.0.0.1:9"])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_eval_sira_needs_candidates(files: dict[str, str]) -> None:
    base = ["eval", "retrieval", "--index", "i", "--queries", files["q"], "--qrels", files["qrels"]]
    code, out = _run(*base, "--method", "sira")
    assert code == 2 and "method 'sira' needs candidate phrases" in out
    code, out = _run(*base, "--method", "bm25", "--expansions", files["exp"])
    assert code == 2 and "apply to method 'sira' only" in out


def test_search_flag_conflicts(files: dict[str, str]) -> None:
    code, out = _run("search", "x", "--index", "i", "--rerank", "3")
    assert code == 2 and "rerank: needs an LLM" in out
    code, out = _run("search", "x", "--index", "i", "--llm", "llamacpp:x", "--rerank", "101")
    assert code == 2 and "rerank: Input should be less than or equal to 100" in out
    code, out = _run(
        "search",
        "x",
        "--index",
        "i",
        "--llm",
        "jsonl:" + files["exp"],
        "--expansions",
        files["exp"],
        "--rerank",
        "0",  # without it the LLM reranks SIRA's top 10 (the default pipeline)
    )
    assert code == 2 and "either expansions or an LLM" in out
    code, out = _run("search", "x", "--index", "i", "--llm", "nonsense")
    assert code == 2 and "is not of the form KIND:TARGET" in out  # bad input
    code, out = _run("search", "x", "--index", "i", "--tau", "0")
    assert code == 2 and "tau" in out
