"""Upper bounds of live document frequencies from Lucene's per-shard ``docFreq``: SIRA's
one-request DF check (``analyze_with_doc_freq_bounds``) and sira-sync's pack filter
(``term_doc_freq_bounds``), written over the engine primitives of ``SearchBackend``
(``shard_routings``, ``term_vectors``, ``analyze``, ``get_mapping``), so that an engine
carries no SIRA logic.

A bound is a term's ``docFreq`` summed over one copy of every shard (each asked through an
artificial document routed there): it still counts deleted copies until a merge, so it can
exceed the live count but never fall below it (see ``TermDocFreqBounds``).

What is kept per backend (``_State``, weakly keyed by the backend, like ``DocCountsCache``):
the routing values per index uuid (an index keeps its shards for its lifetime, so the
once-per-index ``_search_shards`` look-up is not paid again), the uuids whose positions do
not map a packed document back to its texts, and each field's analyzer key.
"""

from __future__ import annotations

import bisect
import logging
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sira_seek.backend import (
    POSITION_GAP,
    AnalysisRefusedError,
    AnalyzedToken,
    ArtificialDocument,
    EngineError,
    SearchBackend,
    TermDocFreqBounds,
    TermVectors,
)
from sira_seek.fields import SUBFIELD_PARENT

logger = logging.getLogger(__name__)

ANALYZE_CHARS_PER_REQUEST = 30_000
"""Characters of text per ``analyze`` request of ``term_doc_freq_bounds``: a pack of 1,000
phrases is about 18,000 characters, so one request per analyzer, about 2,000 tokens (3,000
more with 2-3-word shingles) against the engines' 10,000-token cap
(``index.analyze.max_token_count``); a chunk over the cap is split in two and asked again."""

ANALYZE_SENTINEL = "sirasentinel sirasentinel sirasentinel"
"""The last value of every ``analyze`` request and both ends of a packed document: a token of
it must start exactly where the values' lengths (or positions) say, which proves that each
token maps back to its text (three words, so that a shingles-only analyzer makes a token of
it too)."""

Bounds = list[dict[str, dict[str, int]]]
"""One entry per text: field -> {term: DF upper bound}."""


@dataclass
class _State:
    """What one backend keeps between calls (see the module docstring)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    routings_by_uuid: dict[str, list[str]] = field(default_factory=dict)
    unpacked_uuids: set[str] = field(default_factory=set)
    analyzer_keys: dict[str, dict[str, Any]] = field(default_factory=dict)


_STATES: weakref.WeakKeyDictionary[SearchBackend, _State] = weakref.WeakKeyDictionary()
_STATES_LOCK = threading.Lock()


def _state(backend: SearchBackend) -> _State:
    """The backend's kept state; a fresh one each call for a backend that cannot be weakly
    referenced (nothing kept: the routing values are then looked up every time)."""
    with _STATES_LOCK:
        try:
            state = _STATES.get(backend)
            if state is None:
                state = _STATES[backend] = _State()
        except TypeError:
            state = _State()
    return state


def _empty(fields: Sequence[str], texts: Sequence[str]) -> TermDocFreqBounds:
    return TermDocFreqBounds(texts=[{f: {} for f in fields} for _ in texts], round_trips=0)


def _by_source(fields: Sequence[str]) -> dict[str, list[str]]:
    """Source field (a field's parent for a subfield) -> the fields made from it."""
    out: dict[str, list[str]] = {}
    for name in fields:
        out.setdefault(SUBFIELD_PARENT.get(name, name), []).append(name)
    return out


# -- SIRA: analysis and bounds in one request -------------------------------------------------
def analyze_with_doc_freq_bounds(
    backend: SearchBackend,
    index: str,
    fields: Sequence[str],
    texts: Sequence[str],
    *,
    index_uuid: str | None = None,
) -> TermDocFreqBounds | None:
    """Each text analysed by each field's own analyzer AND every term's ``docFreq`` summed over
    one copy of every shard of the concrete ``index``, in ONE ``term_vectors`` request (plus,
    once per index, ``shard_routings``). None when one routing value per shard cannot be found.

    All the texts go as ONE artificial document per source field (a field and its subfields)
    routed to the first shard, a multi-valued field ``[SENTINEL, *texts, SENTINEL]`` with
    positions (the positions say which text each term came from: ``_map_positions``); every
    other shard gets one document holding the texts as a multi-valued field. A multi-valued
    field is analysed value by value, so its terms are exactly the union of the texts' terms,
    and each shard answers one ``docFreq`` per term.

    ``sources + shards - 1`` documents (2 for SIRA's usual contents and shingles on two
    shards), where one per text and shard would take ``texts x shards``; one document per text
    on the first shard was 0.7-0.9 ms slower a query on wikimh. A field the positions cannot
    map (another position gap) makes the first answer's texts go again as one document each,
    and the index (by uuid) keeps that layout. ``index_uuid`` (from ``index_doc_counts``) lets
    the routing values be reused without asking the cluster again."""
    if not texts or not fields:
        return _empty(fields, texts)
    state = _state(backend)
    trips = 0
    routings = state.routings_by_uuid.get(index_uuid) if index_uuid else None
    if routings is None:
        found = backend.shard_routings(index)
        if found is None:
            return None
        routings, trips = found.routings, found.round_trips
        if index_uuid:
            state.routings_by_uuid[index_uuid] = routings

    def one_per_text() -> list[ArtificialDocument]:
        return [_document(fields, text, routings[0]) for text in texts]

    # One packed document per source field (a field and its subfields): a field copied into
    # another (copy_to) would add its values to the other's and shift the positions.
    by_source = _by_source(fields)
    packed = index_uuid is None or index_uuid not in state.unpacked_uuids
    values = [ANALYZE_SENTINEL, *texts, ANALYZE_SENTINEL]
    first = (
        [_document(group, values, routings[0], positions=True) for group in by_source.values()]
        if packed
        else one_per_text()
    )
    others = [_document(fields, list(texts), routing) for routing in routings[1:]]
    answers = backend.term_vectors(index, [*first, *others])
    trips += 1
    out = _packed_bounds(len(texts), fields, by_source, answers) if packed else None
    if packed and out is None:
        logger.info(
            "DF check on %s: the positions of one document do not map back to the texts "
            "(a position gap other than %d?); one document per text from now on",
            index,
            POSITION_GAP,
        )
        if index_uuid:
            state.unpacked_uuids.add(index_uuid)
        answers = [*backend.term_vectors(index, one_per_text()), *answers[len(first) :]]
        trips += 1
    if out is None:
        out = [{f: _doc_freqs(answer, f) for f in fields} for answer in answers[: len(texts)]]
    _add_other_shards(out, fields, answers[len(answers) - len(others) :])
    return TermDocFreqBounds(texts=out, round_trips=trips)


def _document(
    fields: Sequence[str], value: str | list[str], routing: str, *, positions: bool = False
) -> ArtificialDocument:
    """An artificial document holding ``value`` in the source of each of ``fields``."""
    return ArtificialDocument(
        values={SUBFIELD_PARENT.get(f, f): value for f in fields},
        fields=list(fields),
        routing=routing,
        positions=positions,
        as_given=False,
    )


def _add_other_shards(out: Bounds, fields: Sequence[str], answers: Sequence[TermVectors]) -> None:
    """Add every other shard's ``docFreq`` of each text's terms (each of those documents holds
    the union of the texts' terms, so every term must be there)."""
    for answer in answers:
        for name in fields:
            found = answer.doc_freqs.get(name, {})
            for per_field in out:
                counts = per_field[name]
                for term in counts:
                    doc_freq = found.get(term)
                    if doc_freq is None:
                        raise EngineError(f"term statistics of {name} on one shard lack {term!r}")
                    counts[term] += doc_freq


def _doc_freqs(answer: TermVectors, name: str) -> dict[str, int]:
    """One artificial document's terms of field ``name`` with their ``docFreq`` (a copy: the
    other shards' counts are added to it)."""
    return dict(answer.doc_freqs.get(name, {}))


def _packed_bounds(
    n_texts: int,
    fields: Sequence[str],
    by_source: Mapping[str, Sequence[str]],
    answers: Sequence[TermVectors],
) -> Bounds | None:
    """The packed documents' answers (one per source field, in ``by_source``'s order) as one
    {field: {term: docFreq}} per text, or None when a field's positions do not map back."""
    per_field: dict[str, list[dict[str, int]]] = {}
    for answer, group in zip(answers, by_source.values(), strict=False):
        for name in group:
            mapped = _map_positions(
                n_texts, answer.doc_freqs.get(name, {}), answer.positions.get(name, {})
            )
            if mapped is None:
                return None
            per_field[name] = mapped
    return [{f: per_field[f][i] for f in fields} for i in range(n_texts)]


def _map_positions(
    n_texts: int, doc_freqs: Mapping[str, int], positions: Mapping[str, Sequence[int]]
) -> list[dict[str, int]] | None:
    """One field's term vector of ``[SENTINEL, *texts, SENTINEL]`` (with positions) back to
    each text: {term: docFreq} per text, terms in the engine's order.

    Lucene's in-memory index puts each value's first token ``POSITION_GAP`` + its position
    increment after the previous value's last token, and moves on by the gap for a value
    without tokens too (once an earlier value had some, hence the leading sentinel): a jump of
    ``J`` positions crosses ``(J - 1) // POSITION_GAP`` value boundaries. None unless the last
    value decodes to the same terms at the same relative positions as the first (another gap,
    or a stopword run as long as the gap, shifts it)."""
    tokens = sorted((p, term) for term, where_in in positions.items() for p in where_in)
    if not tokens or tokens[0][0] < 0:  # no token, or one without its position
        return None
    value = 0
    last = tokens[0][0]
    where: dict[int, int] = {}
    edges: list[list[tuple[int, str]]] = [[], []]
    for position, term in tokens:
        jump = position - last
        if jump > POSITION_GAP:
            value += (jump - 1) // POSITION_GAP
        last = position
        where[position] = value
        if value == 0:
            edges[0].append((position, term))
        elif value == n_texts + 1:
            edges[1].append((position, term))
        elif value > n_texts + 1:
            return None
    first, closing = edges
    if not closing or [(p - first[0][0], t) for p, t in first] != [
        (p - closing[0][0], t) for p, t in closing
    ]:
        return None
    out: list[dict[str, int]] = [{} for _ in range(n_texts)]
    for term, doc_freq in doc_freqs.items():  # the engine's order, as one document per text
        for position in positions.get(term, ()):
            value = where[position]
            if 0 < value <= n_texts:
                out[value - 1][term] = doc_freq
    return out


# -- sira-sync: analysis, then every distinct term looked up once per shard -------------------
def term_doc_freq_bounds(
    backend: SearchBackend, index: str, fields: Sequence[str], texts: Sequence[str]
) -> TermDocFreqBounds | None:
    """Two requests beside ``shard_routings``, whatever the number of texts or shards:

    1. analysis (``_analyze_texts``): the texts through each distinct analyzer once (fields
       sharing one, such as title and text, make the same terms);
    2. statistics: one artificial document per shard holding every distinct term once, taken
       as given (``as_given``), its ``docFreq`` on that shard, summed over the shards.

    None when one routing value per shard cannot be found (several indexes, partitioned
    routing): then count with ``live_doc_freqs``."""
    if not texts or not fields:
        return _empty(fields, texts)
    found = backend.shard_routings(index)
    if found is None:
        return None
    twin = _analysis_twins(backend, index, fields)
    analysed, analysis_trips = _analyze_texts(
        backend, index, list(dict.fromkeys(twin.values())), texts
    )
    terms_of = [{f: per_text[twin[f]] for f in fields} for per_text in analysed]
    wanted: dict[str, dict[str, None]] = {f: {} for f in fields}
    for per_text in terms_of:
        for name, analysed_terms in per_text.items():
            wanted[name].update(dict.fromkeys(analysed_terms))
    values: dict[str, dict[str, None]] = {}
    for name, field_terms in wanted.items():
        values.setdefault(SUBFIELD_PARENT.get(name, name), {}).update(field_terms)
    source = {parent: list(parent_terms) for parent, parent_terms in values.items()}
    docs = [
        ArtificialDocument(values=source, fields=list(fields), routing=routing, as_given=True)
        for routing in found.routings
    ]
    df: dict[str, dict[str, int]] = {f: dict.fromkeys(terms, 0) for f, terms in wanted.items()}
    for answer in backend.term_vectors(index, docs):
        for name, field_df in df.items():
            got = answer.doc_freqs.get(name, {})
            for term in field_df:
                doc_freq = got.get(term)
                if doc_freq is None:  # every term must have been looked up as given
                    raise EngineError(
                        f"term statistics of {name} did not look up {term!r} as given"
                    )
                field_df[term] += doc_freq
    # dict(zip(...)) with the field's lookup bound once: the inner loop runs in C.
    lookups = {f: field_df.__getitem__ for f, field_df in df.items()}
    out = [
        {f: dict(zip(terms, map(lookups[f], terms), strict=True)) for f, terms in per.items()}
        for per in terms_of
    ]
    # Built from ints already: validating a pack's thousand nested dicts again took as long as
    # its statistics request (py-spy, sira-sync apply).
    return TermDocFreqBounds.model_construct(
        texts=out, round_trips=found.round_trips + 1 + analysis_trips
    )


def _field_spec(props: Mapping[str, Any], path: str) -> Mapping[str, Any] | None:
    """The mapping of a dotted field path: object properties or multi-fields."""
    node: Mapping[str, Any] = props
    spec: Mapping[str, Any] | None = None
    for part in path.split("."):
        if spec is not None:
            node = spec.get("properties") or spec.get("fields") or {}
        spec = node.get(part)
        if spec is None:
            return None
    return spec


def _analysis_twins(backend: SearchBackend, index: str, fields: Sequence[str]) -> dict[str, str]:
    """Field -> the first of ``fields`` with the same index analyzer (text fields whose mapping
    names the same ``analyzer``, or none: the index default): they make the same terms of any
    text, so one of them is analysed for all. A field not found in the mapping (or mapped
    differently behind an alias) is its own twin. Kept per backend and index name."""
    cache = _state(backend).analyzer_keys.setdefault(index, {})
    if any(f not in cache for f in fields):
        specs: dict[str, set[Any]] = {f: set() for f in fields}
        for body in backend.get_mapping(index).values():
            props = body.get("mappings", {}).get("properties", {})
            for name in fields:
                spec = _field_spec(props, name)
                if spec is not None and spec.get("type") == "text":
                    specs[name].add(spec.get("analyzer"))
                else:
                    specs[name].add(object())
        for name, keys in specs.items():
            cache[name] = next(iter(keys)) if len(keys) == 1 else object()
    first: dict[Any, str] = {}
    return {f: first.setdefault(cache[f], f) for f in fields}


def _analyze_texts(
    backend: SearchBackend, index: str, fields: Sequence[str], texts: Sequence[str]
) -> tuple[list[dict[str, list[str]]], int]:
    """Every text's terms per field (fields of distinct analyzers), and the round trips.

    ``analyze`` with the texts as one multi-valued input per field: its offsets run on from
    value to value, so every token maps back to its text. One analysis instead of one
    artificial document per text, which costs the engine 3x (OpenSearch) to 6x
    (Elasticsearch) more for a pack of 500 phrases (docs/benchmarks/enrichment.md). A field
    whose answer does not map back exactly (an analyzer with another offset gap, one text
    alone over the token cap) is analysed as artificial documents (``analyze_terms``)."""
    out: list[dict[str, list[str]]] = [{} for _ in texts]
    trips = 0
    fallback: list[str] = []
    for name in fields:
        terms, requests = _analyze_values(backend, index, name, texts)
        trips += requests
        if terms is None:
            fallback.append(name)
            continue
        for per_text, text_terms in zip(out, terms, strict=True):
            per_text[name] = text_terms
    if fallback:
        logger.info("analysing %s of %s as artificial documents", fallback, index)
        for per_text, other in zip(out, backend.analyze_terms(index, fallback, texts), strict=True):
            per_text.update(other)
        trips += 1
    return out, trips


def _chunks(texts: Sequence[str]) -> list[list[str]]:
    """``texts`` in runs of at most ``ANALYZE_CHARS_PER_REQUEST`` characters (one text alone
    may exceed it)."""
    chunks: list[list[str]] = []
    start = 0
    while start < len(texts):
        end, chars = start, 0
        while end < len(texts) and (
            end == start or chars + len(texts[end]) <= ANALYZE_CHARS_PER_REQUEST
        ):
            chars += len(texts[end]) + 1
            end += 1
        chunks.append(list(texts[start:end]))
        start = end
    return chunks


def _analyze_values(
    backend: SearchBackend, index: str, name: str, texts: Sequence[str]
) -> tuple[list[list[str]] | None, int]:
    """Field ``name``'s index analyzer over ``texts``, in chunks (``_chunks``); each text's
    distinct terms in Lucene's order, or None when a chunk's offsets do not map back exactly
    (``_map_tokens``) or the engine refuses the analysis."""
    out: list[list[str]] = []
    requests = 0
    chunks = _chunks(texts)
    while chunks:
        chunk = chunks.pop(0)
        requests += 1
        try:
            tokens = backend.analyze(index, name, [*chunk, ANALYZE_SENTINEL])
        except AnalysisRefusedError as exc:
            if exc.too_many_tokens and len(chunk) > 1:  # ask for each half
                half = len(chunk) // 2
                chunks[:0] = [chunk[:half], chunk[half:]]
                continue
            return None, requests  # the analysis's own refusal: artificial documents then
        mapped = _map_tokens(chunk, tokens)
        if mapped is None:
            return None, requests
        out += mapped
    return out, requests


def _utf16_len(text: str) -> int:
    """The engines count offsets in UTF-16 code units (Java strings)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _map_tokens(texts: list[str], tokens: Sequence[AnalyzedToken]) -> list[list[str]] | None:
    """``analyze``'s tokens of ``[*texts, ANALYZE_SENTINEL]`` back to each text: value ``i``
    starts at the sum of the earlier values' lengths plus one each (the offset gap). None
    unless every token lies inside one value and the sentinel starts exactly where predicted
    (an analyzer with another offset gap shifts it)."""
    starts: list[int] = []
    ends: list[int] = []
    at = 0
    for text in texts:
        starts.append(at)
        ends.append(at + _utf16_len(text))
        at = ends[-1] + 1
    sentinel_seen = False
    found: list[dict[str, None]] = [{} for _ in texts]
    for term, begin, stop in tokens:
        if begin >= at:  # the sentinel's
            if stop > at + len(ANALYZE_SENTINEL):
                return None
            sentinel_seen = sentinel_seen or begin == at
            continue
        i = bisect.bisect_right(starts, begin) - 1
        if i < 0 or stop > ends[i]:
            return None
        found[i][term] = None
    if not sentinel_seen:
        return None
    return [sorted(terms) for terms in found]
