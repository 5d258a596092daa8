"""The framework retrievers' old shared name still imports, with a DeprecationWarning.

25d4b22 gave each framework's retriever a name of its own (no class name twice in
sira_seek); applications written against ``SiraSeekRetriever`` keep working for now."""

from __future__ import annotations

import importlib

import pytest

RENAMED = {
    "langchain": "SiraSeekLangChainRetriever",
    "llamaindex": "SiraSeekLlamaIndexRetriever",
    "haystack": "SiraSeekHaystackRetriever",
}


@pytest.mark.parametrize("framework", sorted(RENAMED))
def test_the_old_name_is_the_new_class_with_a_warning(framework: str) -> None:
    module = importlib.import_module(f"sira_seek.integrations.{framework}")
    with pytest.warns(DeprecationWarning, match=RENAMED[framework]):
        old = module.SiraSeekRetriever
    assert old is getattr(module, RENAMED[framework])
    with pytest.raises(AttributeError):
        module.NoSuchRetriever  # noqa: B018
