"""The documents one prompt shows share ``evidence_chars``, so a large ``top_k`` keeps the
prompt the size of the default top-5's.

What could break: the default top-5 prompts changing (recorded runs and pinned figures would
move), a large top_k outgrowing the model's context again (schemathesis found ``/ask`` with
``top_k`` 49 refused by the embedded model: 5,129 tokens against 2,048), a document cut to
nothing, the setting not read from the environment."""

from __future__ import annotations

import pytest

from sira_seek.seek.prompts import MIN_DOC_SHARE, SeekPrompts, make_prompts, render_docs
from sira_seek.seek.retrieval import RetrievedDoc
from sira_seek.seek.settings import SeekSettings


def _docs(n: int) -> list[RetrievedDoc]:
    words = " ".join(f"word{i}" for i in range(400))  # ~3,000 characters each
    return [RetrievedDoc(id=str(i), title=f"Title {i}", text=words) for i in range(n)]


def _lines(rendered: str) -> list[str]:
    return rendered.split("\n")


def test_the_default_top_5_shows_each_document_as_before() -> None:
    settings = SeekSettings()
    assert (settings.doc_chars, settings.evidence_chars) == (600, 3000)
    for n in (1, 3, 5):
        for line, doc in zip(_lines(render_docs(_docs(n), settings)), _docs(n), strict=True):
            assert line.split("] ", 1)[1] == doc.snippet(600)


@pytest.mark.parametrize("top_k", [6, 12, 30, 49, 50])
def test_more_documents_share_the_same_characters(top_k: int) -> None:
    settings = SeekSettings()
    five = render_docs(_docs(5), settings)
    rendered = render_docs(_docs(top_k), settings)
    lines = _lines(rendered)
    assert len(lines) == top_k  # every document still shown
    bodies = [line.split("] ", 1)[1] for line in lines]
    assert all(len(b) <= max(settings.evidence_chars // top_k, MIN_DOC_SHARE) + 4 for b in bodies)
    assert all(b.startswith(f"Title {i}: word0") for i, b in enumerate(bodies))
    # No longer than the default top-5's block, give or take the numbering and the " ..."
    assert len(rendered) <= len(five) + top_k * len(" [50] ...")


def test_the_chat_and_fewshot_evidence_prompts_of_top_k_49_fit_as_top_5_does() -> None:
    settings = SeekSettings()
    for style in ("chat", "fewshot"):
        prompts = make_prompts(style, settings)

        def size(n: int, p: SeekPrompts = prompts) -> int:
            request = p.evidence("q?", "sub", _docs(n), "sketch", "sketch", "Gist")
            return len(str(request.messages or request.prompt))

        assert size(49) <= size(5) + 49 * len(" [50] ..."), style


def test_a_long_context_model_gets_more_through_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SIRA_SEEK_SEEK_EVIDENCE_CHARS", "30000")
    docs = _docs(20)
    lines = _lines(render_docs(docs, SeekSettings()))
    assert [line.split("] ", 1)[1] for line in lines] == [d.snippet(600) for d in docs]
