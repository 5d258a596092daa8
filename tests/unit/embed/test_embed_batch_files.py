"""The offline batch embedding files (``embed.batch``): requests written, outputs read, and
every kind of bad output line recorded and skipped. Files only: no index, no model."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from sira_seek.embed import EmbedderSpecError, make_embedder, parse_embedder_spec
from sira_seek.embed.batch import (
    EMBEDDINGS_URL,
    MAX_FAILED_ROUNDS,
    BatchEmbedderNotLiveError,
    BatchEmbeddingsError,
    EmbeddingRounds,
    embedding_request,
    parse_custom_id,
    request_custom_id,
)
from sira_seek.input_errors import InputError
from sira_seek.llm.spec import BatchBackendSpec

MODEL = "intfloat/e5-small-v2"
H1, H2, H3 = (f"sha256:{c * 64}" for c in "abc")


def _ok(custom_id: str, vector: list[Any]) -> dict[str, Any]:
    body = {"object": "list", "model": MODEL, "data": [{"index": 0, "embedding": vector}]}
    return {"custom_id": custom_id, "response": {"status_code": 200, "body": body}, "error": None}


def _write(path: Path, lines: list[Any]) -> None:
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )


@pytest.fixture
def rounds(tmp_path: Path) -> EmbeddingRounds:
    """A folder whose round 1 asked for documents a, b, c."""
    rounds = EmbeddingRounds(tmp_path / "dir", MODEL)
    ids = [request_custom_id(d, h) for d, h in (("a", H1), ("b", H2), ("c", H3))]
    assert rounds.write_round([embedding_request(i, MODEL, f"passage: {i}") for i in ids]) == 1
    return rounds


def test_a_round_is_an_openai_batch_file_of_one_embeddings_request_per_document(
    rounds: EmbeddingRounds,
) -> None:
    lines = rounds.requests_path(1).read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 3
    assert first == {
        "custom_id": f"a::{H1}",
        "method": "POST",
        "url": "/v1/embeddings",
        "body": {"model": MODEL, "input": [f"passage: a::{H1}"]},
    }
    assert EMBEDDINGS_URL == "/v1/embeddings"
    assert rounds.waiting() == 1  # no output yet
    assert not list(rounds.directory.glob("*.partial"))


def test_ids_split_from_the_right_so_a_document_id_may_hold_the_separator() -> None:
    assert parse_custom_id(request_custom_id("x::y", H1)) == ("x::y", H1)
    assert parse_custom_id("no-hash") is None
    assert parse_custom_id(f"::{H1}") is None
    assert parse_custom_id("a::md5:00") is None


def test_good_lines_give_unit_vectors_and_every_bad_line_is_recorded_and_skipped(
    rounds: EmbeddingRounds,
) -> None:
    _write(
        rounds.output_path(1),
        [
            _ok(f"a::{H1}", [3.0, 4.0, 0.0]),  # the first vector: 3 dimensions
            "{not json",
            _ok(f"zzz::{H1}", [1.0, 0.0, 0.0]),  # an id no request of the folder has
            _ok(f"b::{H2}", [1.0, 2.0]),  # another length than the first vector
            {"custom_id": f"c::{H3}", "response": {"status_code": 200, "body": {"data": []}}},
            _ok(f"c::{H3}", [1.0, "x", 0.0]),
            _ok(f"c::{H3}", [1.0, math.inf, 0.0]),
            ["a list"],
        ],
    )
    found = rounds.read()
    assert rounds.waiting() is None
    assert found.dimensions == 3
    assert found.vector(f"a::{H1}") == pytest.approx([0.6, 0.8, 0.0])
    assert found.vector(f"b::{H2}") is None and found.vector(f"c::{H3}") is None
    assert [b.line for b in found.bad_lines] == [2, 3, 4, 5, 6, 7, 8]
    reasons = [b.reason for b in found.bad_lines]
    assert reasons[0] == "not JSON"
    assert "names no request" in reasons[1] and "names no request" in reasons[6]
    assert "2 dimensions, not the first vector's 3" in reasons[2]
    assert "exactly one embedding" in reasons[3]
    assert "'x'" in reasons[4] and "inf" in reasons[5]
    assert str(found.bad_lines[0]).startswith(f"{rounds.output_path(1)}:2: ")


def test_a_json_nan_in_a_vector_is_malformed(rounds: EmbeddingRounds) -> None:
    _write(rounds.output_path(1), [_ok(f"a::{H1}", [math.nan, 1.0])])  # json writes NaN
    assert "NaN" in rounds.output_path(1).read_text(encoding="utf-8")
    found = rounds.read()
    assert found.vector(f"a::{H1}") is None and "nan" in found.bad_lines[0].reason


def test_a_partial_output_holds_what_it_has_and_failed_lines_count_towards_giving_up(
    rounds: EmbeddingRounds,
) -> None:
    failed = {"custom_id": f"b::{H2}", "response": {"status_code": 500, "body": {}}}
    _write(rounds.output_path(1), [_ok(f"a::{H1}", [1.0, 0.0]), failed])  # c: missing
    found = rounds.read()
    assert found.vector(f"a::{H1}") == [1.0, 0.0]
    assert found.vector(f"c::{H3}") is None and not found.gave_up(f"c::{H3}")
    assert found.failures == {f"b::{H2}": 1} and not found.bad_lines  # a failure is not malformed
    # b asked again in rounds 2 and 3, failing each time (an error object, then a 400).
    for number, line in enumerate(
        [{"custom_id": f"b::{H2}", "error": {"message": "boom"}}, failed], start=2
    ):
        rounds.write_round([embedding_request(f"b::{H2}", MODEL, "passage: b")])
        _write(rounds.output_path(number), [line])
    found = rounds.read()
    assert found.failures[f"b::{H2}"] == MAX_FAILED_ROUNDS and found.gave_up(f"b::{H2}")


def test_a_duplicated_answer_keeps_the_first(rounds: EmbeddingRounds) -> None:
    _write(rounds.output_path(1), [_ok(f"a::{H1}", [1.0, 0.0]), _ok(f"a::{H1}", [0.0, 1.0])])
    assert rounds.read().vector(f"a::{H1}") == [1.0, 0.0]


def test_a_folder_of_another_models_rounds_is_refused(rounds: EmbeddingRounds) -> None:
    other = EmbeddingRounds(rounds.directory, "BAAI/bge-small-en-v1.5")
    with pytest.raises(BatchEmbeddingsError, match=f"asks model '{MODEL}'") as caught:
        other.read()
    assert isinstance(caught.value, InputError)


def test_slices_keep_their_own_rounds_in_one_folder(rounds: EmbeddingRounds) -> None:
    sliced = EmbeddingRounds(rounds.directory, MODEL, prefix="embed-slice1of2")
    assert sliced.numbers() == [] and sliced.waiting() is None
    assert sliced.write_round([]) == 1 and rounds.numbers() == [1]


def test_a_batch_spec_parses_but_embeds_nothing_live_and_names_the_live_spec() -> None:
    spec = parse_embedder_spec(f"batch:/tmp/rounds#{MODEL}")
    assert spec == BatchBackendSpec(directory=Path("/tmp/rounds"), model=MODEL)
    with pytest.raises(BatchEmbedderNotLiveError, match=f"--embedder openai:URL#{MODEL}") as c:
        make_embedder(spec)
    assert isinstance(c.value, EmbedderSpecError) and "sira-sync --index I --embed" in str(c.value)
    with pytest.raises(BatchEmbedderNotLiveError, match="--embedder cpu"):
        make_embedder("batch:/tmp/rounds#sentence-transformers/all-MiniLM-L6-v2")
    with pytest.raises(EmbedderSpecError, match="batch:DIR#MODEL"):
        parse_embedder_spec("batch:/tmp/rounds")
