"""An in-memory stand-in for a cluster, answering the few REST calls SIRA makes.

It analyses like the basic layout (lowercase, stopwords, bigram shingles) and serves document
frequencies from a table, so DF decisions can be tested exactly without a node.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sira_seek.backend import Capabilities, ClusterInfo, SearchHit, SearchResult, TermStatistic
from sira_seek.backend import TextTermStatistics as TTS
from sira_seek.llm.client import generate_many_bounded
from sira_seek.llm.errors import ServerUnreachableError
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse, TokenUsage

STOP = {"the", "a", "of", "and", "is", "in", "what"}


def analyze(text: str) -> list[str]:
    return [t for t in re.findall(r"\w+", text.lower()) if t not in STOP]


def shingles(text: str) -> list[str]:
    toks = analyze(text)
    return [f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False)]


class FakeBackend:
    """Enough of a ``SearchBackend`` (plus ``request``) for SIRA's unit tests."""

    name = "fake"

    def __init__(
        self,
        df: Mapping[str, int],
        *,
        doc_count: int = 1000,
        mapping: dict[str, Any] | None = None,
        populated: set[str] | None = None,
    ) -> None:
        self.df = dict(df)
        self.doc_count = doc_count
        self.info = ClusterInfo(engine="fake", version="1.0", url="http://fake")
        self.mapping = mapping or {
            "idx": {
                "mappings": {
                    "properties": {
                        "contents": {"type": "text", "fields": {"shingles": {"type": "text"}}}
                    }
                }
            }
        }
        self.populated = populated or set()
        self.named_scores = False
        self.search_params: list[Any] = []
        self.requests: list[tuple[str, str, Any]] = []
        self.searches: list[dict[str, Any]] = []
        self.hits: list[SearchHit] = [SearchHit(id="d1", score=2.0), SearchHit(id="d2", score=1.0)]

    # -- what SIRA calls -------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        return Capabilities(named_queries_score=self.named_scores)

    def index_exists(self, index: str) -> bool:
        return index == "idx"

    def get_mapping(self, index: str) -> dict[str, Any]:
        return self.mapping

    def count(self, index: str, query: Mapping[str, Any] | None = None) -> int:
        field = (query or {}).get("exists", {}).get("field")
        return 5 if field in self.populated else 0

    def _field_terms(self, field: str, text: str) -> dict[str, Any]:
        terms = shingles(text) if field.endswith("shingles") else analyze(text)
        out: dict[str, Any] = {}
        for term in terms:
            stats: dict[str, Any] = {"term_freq": 1}
            if self.df.get(term, 0) > 0:
                stats |= {"doc_freq": self.df[term], "ttf": self.df[term]}
            out[term] = stats
        return {"field_statistics": {"doc_count": self.doc_count}, "terms": out}

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Any = None,
        body: Any = None,
        ignore: tuple[int, ...] = (),
    ) -> Any:
        self.requests.append((method, path, body))
        assert path.endswith("/_mtermvectors"), path
        docs = []
        for doc in body["docs"]:
            text = doc["doc"]["contents"]
            docs.append({"term_vectors": {f: self._field_terms(f, text) for f in doc["fields"]}})
        return {"docs": docs}

    def term_statistics(
        self, index: str, field: str, texts: list[str], *, source_field: str | None = None
    ) -> list[TTS]:
        self.requests.append(("POST", f"/{index}/_mtermvectors", field))
        out = []
        for text in texts:
            raw = self._field_terms(field, text)["terms"]
            terms = [TermStatistic(term=t, doc_freq=s.get("doc_freq", 0)) for t, s in raw.items()]
            out.append(
                TTS(
                    text=text,
                    field=field,
                    terms=terms,
                    field_statistics={"doc_count": self.doc_count},
                )
            )
        return out

    def search(self, index: str, body: Mapping[str, Any], params: Any = None) -> SearchResult:
        self.searches.append(dict(body))
        self.search_params.append(params)
        return SearchResult(hits=self.hits, total=len(self.hits), took_ms=1)

    def msearch(
        self, index: str, bodies: Sequence[Mapping[str, Any]], params: Any = None
    ) -> list[SearchResult]:
        return [self.search(index, b) for b in bodies]


class NoRequestBackend(FakeBackend):
    """A backend without the generic ``request``: the DF check must fall back per field."""

    def __getattribute__(self, name: str) -> Any:
        if name == "request":
            raise AttributeError(name)
        return super().__getattribute__(name)


DF = {
    "nolan": 7,
    "christopher": 57,
    "film": 600,
    "director": 300,
    "malayalam": 8,
    "malayalam cinema": 8,
    "cinema": 40,
    "edward": 149,
    "christopher edward": 1,
    "edward nolan": 1,
}


class ScriptedClient:
    """An ``LLMClient`` answering from a script; 'FAIL' in the key or text is unreachable."""

    backend = "scripted"

    def __init__(
        self,
        answers: dict[str, str] | None = None,
        *,
        answer_fn: Callable[[LLMRequest], str] | None = None,
    ) -> None:
        self.answers = answers or {}
        self.answer_fn = answer_fn
        self.requests: list[LLMRequest] = []

    async def model_name(self) -> str:
        return "scripted-1"

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        text = "".join(m.content for m in request.messages or ()) + (request.prompt or "")
        if request.lookup_key == "FAIL" or "FAIL" in text:
            raise ServerUnreachableError("connection refused")
        return LLMResponse(
            text=self.answer_fn(request)
            if self.answer_fn
            else self.answers[request.lookup_key or ""],
            backend=self.backend,
            model="scripted-1",
            usage=TokenUsage(prompt_tokens=50, completion_tokens=9),
            latency_s=0.2,
        )

    async def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        return await generate_many_bounded(
            self.generate, requests, concurrency or 4, backend=self.backend
        )

    async def aclose(self) -> None:
        return None
