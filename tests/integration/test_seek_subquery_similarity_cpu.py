"""The SEEK paper's §5.3 sub-query similarity with the real CPU embedder (no node, no
server): two wordings of one intent are near, a different intent is far, where the
token-overlap fallback sees the paraphrase as barely alike."""

from __future__ import annotations

import pytest

from sira_seek.metrics.seek_diagnostics import (
    QuestionTrace,
    StepTrace,
    seek_diagnostics,
)
from sira_seek.workflows.seek_analyses import subquery_similarity_measure

pytestmark = pytest.mark.integration

SAME = ("who directed the film Inception", "name the director of the movie Inception")
OTHER = "population of Lagos in 2020"


def test_cosine_of_the_cpu_embedder_tells_intents_apart_and_names_itself() -> None:
    trace = QuestionTrace(
        id="q",
        question="?",
        golden_answers=["Christopher Nolan"],
        prediction="Christopher Nolan",
        steps=[StepTrace(sub_query=q) for q in (*SAME, OTHER)],
    )
    measure = subquery_similarity_measure("cpu", [trace])
    assert measure.name == "embedding_cosine:sentence-transformers/all-MiniLM-L6-v2"
    paraphrase, unrelated = measure.similarity(*SAME), measure.similarity(SAME[0], OTHER)
    assert paraphrase > 0.7 > 0.3 > unrelated
    # Token overlap sees the paraphrase as far less alike than the embedder does.
    jaccard = subquery_similarity_measure(None, [trace])
    assert jaccard.similarity(*SAME) < 0.5 < paraphrase
    found = seek_diagnostics([trace], similarity=measure)
    assert (
        found.subquery_similarity_measure
        == "embedding_cosine:sentence-transformers/all-MiniLM-L6-v2"
    )
    assert found.subquery_similarity == pytest.approx(
        (paraphrase + unrelated + measure.similarity(SAME[1], OTHER)) / 3, abs=1e-4
    )  # the report rounds to four places
