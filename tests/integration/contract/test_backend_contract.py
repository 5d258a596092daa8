"""The ``SearchBackend`` contract: one suite, run as it is against every registered engine.

Every test here is parametrised over
``sira_seek.esplugin.engines.registry.available_engines()``: the built-in Elasticsearch and
OpenSearch backends and any engine registered under the ``sira_seek.engines`` entry-point group;
and over ``in-memory``, the unit tests' ``SearchBackend`` double (tests/unit/doubles), so the
double the unit tests trust cannot drift from the engines (``-k in-memory`` runs it alone, with
no node). A third engine's author runs THIS file unchanged:

1. register the backend class (``[project.entry-points."sira_seek.engines"]``);
2. start a node and export ``SIRA_SEEK_TEST_<ENGINE>_URL`` (plain HTTP: the suite counts
   round trips with a proxy on the wire);
3. add one ``EngineHooks`` entry in ``kit.py`` beside this file: how to delete one
   document and how to drop every open scan context with the engine's own client (the
   protocol has neither; the core never needs them);
4. ``pytest tests/integration/contract``. A registered engine without a node FAILS: nothing here
   skips.

Each test makes fresh uuid-named indexes with ``ensure_corpus_index`` (the layout in
``mappings/``) and a few in-test documents, and checks what the core relies on: the analysis
and DF calls are ONE round trip each and count live documents over every shard; scores do not
depend on the shard layout; ``explain`` agrees with ``search``; a lost point in time is the
typed ``ScanContextLostError``; write guards answer 409. Terms are taken from the engine's own
analysis (stemming differs between layouts), never hard-coded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from sira_seek.backend import (
    POSITION_GAP,
    AnalysisRefusedError,
    ArtificialDocument,
    EngineError,
    PartialUpdate,
    ScanContextLostError,
    SearchBackend,
)
from sira_seek.sira.df_bounds import analyze_with_doc_freq_bounds, term_doc_freq_bounds

from .kit import ContractTarget, CountingProxy, RoundTripLog

pytestmark = pytest.mark.integration

TEXTS = {
    "c00": "green river near the mill",
    "c01": "a green river at dawn",
    "c02": "green river and a boat",
    "c03": "river boat at night",
    "c04": "a long river",
    "c05": "zebra on the plain",
    "c06": "zebra herd",
    "c07": "moon rocket",
    "c08": "lamp table",
    "c09": "chair lamp",
}
DOCS = [{"_id": i, "title": f"Note {n}", "text": t} for n, (i, t) in enumerate(TEXTS.items())]
NewIndex = Callable[..., str]


def term(be: SearchBackend, index: str, word: str, field: str = "contents") -> str:
    """``word`` as the index's analyzer writes it (stemmed or not)."""
    (only,) = be.analyze_terms(index, [field], [word])[0][field]
    return only


def scores(result: Any) -> dict[str, float]:
    """Id -> score (ties may come back in either order, so not a list)."""
    return {h.id: round(h.score, 5) for h in result.hits}


# -- identity ------------------------------------------------------------------------------
def test_the_registered_class_answers_for_its_engine(target: ContractTarget) -> None:
    assert isinstance(target.backend, SearchBackend)
    assert target.backend.info.engine == target.engine == target.backend.name
    assert target.backend.wait_for_health("yellow", 30) in ("green", "yellow")


# -- analyze_terms -------------------------------------------------------------------------
def test_analyze_terms_is_one_round_trip_for_many_texts_and_fields(
    new_index: NewIndex, counted: tuple[SearchBackend, CountingProxy | RoundTripLog]
) -> None:
    be, proxy = counted
    index = new_index()
    fields = ["contents", "contents.shingles", "sira_enrichment.phrases.shingles", "title"]
    texts = ["Green River", "zebra herd", "moon", "the of and"]
    proxy.reset()
    out = be.analyze_terms(index, fields, texts)
    assert len(proxy.requests) == 1, proxy.requests
    assert len(out) == 4 and all(set(entry) == set(fields) for entry in out)
    green, river = sorted(out[0]["contents"])  # lowercased (and stemmed where the layout does)
    assert green.startswith("green") and river.startswith("river")
    assert out[0]["contents.shingles"] == [f"{green} {river}"]  # bigrams only, no unigram
    assert out[0]["sira_enrichment.phrases.shingles"] == [f"{green} {river}"]  # from its parent
    assert out[0]["title"] == out[0]["contents"]
    herd, zebra = sorted(out[1]["contents"])
    assert out[1]["contents.shingles"] == [f"{zebra} {herd}"]  # in text order
    assert out[2]["contents.shingles"] == [] and len(out[2]["contents"]) == 1  # no bigram
    assert out[3]["contents"] == []  # stopwords only
    proxy.reset()
    assert be.analyze_terms(index, fields, []) == []
    assert proxy.requests == []


# -- live_doc_freqs ------------------------------------------------------------------------
def _probe(be: SearchBackend, index: str) -> list[tuple[str, str]]:
    river, zebra, moon = (term(be, index, w) for w in ("river", "zebra", "moon"))
    (green_river,) = be.analyze_terms(index, ["contents.shingles"], ["green river"])[0][
        "contents.shingles"
    ]
    return [
        ("contents", river),
        ("contents", zebra),
        ("contents", moon),
        ("contents", "qqxzzy"),
        ("contents.shingles", green_river),
        ("title", river),
    ]


EXPECTED_DF = [5, 2, 1, 0, 3, 0]


def test_live_doc_freqs_counts_exactly_in_one_round_trip(
    new_index: NewIndex, counted: tuple[SearchBackend, CountingProxy | RoundTripLog]
) -> None:
    be, proxy = counted
    index = new_index(docs=DOCS)
    probe = _probe(be, index)
    proxy.reset()
    live = be.live_doc_freqs(index, probe)
    assert len(proxy.requests) == 1, proxy.requests
    assert live.doc_count == len(DOCS)
    assert [live.get(f, t) for f, t in probe] == EXPECTED_DF
    assert [(c.field, c.term) for c in live.counts] == probe  # one count per pair, in order
    empty = be.live_doc_freqs(index, [])
    assert empty.doc_count == len(DOCS) and empty.counts == []


def test_an_update_leaves_a_deleted_copy_that_only_term_statistics_count(
    target: ContractTarget, new_index: NewIndex
) -> None:
    be = target.backend
    index = new_index(docs=DOCS)
    probe = _probe(be, index)
    river = probe[0][1]
    (before,) = be.term_statistics(index, "contents", [river])
    assert before.terms[0].doc_freq == 5 and be.deleted_docs(index) == 0

    result = be.bulk_upsert(index, [{"_id": "c00", "text": "green river near the new mill"}])
    assert result.succeeded == 1 and not result.errors
    be.refresh(index)
    assert be.deleted_docs(index) >= 1
    live = be.live_doc_freqs(index, probe)
    assert live.doc_count == len(DOCS)
    assert [live.get(f, t) for f, t in probe] == EXPECTED_DF
    (after,) = be.term_statistics(index, "contents", [river])
    assert after.terms[0].doc_freq == 6  # Lucene still counts the old copy: why the route exists

    target.hooks.delete_document(be, index, "c01")
    be.refresh(index)
    live = be.live_doc_freqs(index, probe)
    assert live.doc_count == len(DOCS) - 1
    assert [live.get(f, t) for f, t in probe] == [4, 2, 1, 0, 2, 0]
    assert be.count(index) == len(DOCS) - 1


def test_live_doc_freqs_do_not_depend_on_the_shard_layout(
    new_index: NewIndex, be: SearchBackend
) -> None:
    one = new_index(shards=1, docs=DOCS)
    five = new_index(shards=5, docs=DOCS)
    probe = _probe(be, one)
    assert _probe(be, five) == probe
    live_one, live_five = be.live_doc_freqs(one, probe), be.live_doc_freqs(five, probe)
    assert live_one == live_five
    assert live_five.doc_count == len(DOCS)
    assert [live_five.get(f, t) for f, t in probe] == EXPECTED_DF
    # Term statistics come from the one shard an artificial document lands on.
    (ts_one,) = be.term_statistics(one, "contents", [probe[0][1]])
    (ts_five,) = be.term_statistics(five, "contents", [probe[0][1]])
    assert ts_one.field_statistics is not None and ts_five.field_statistics is not None
    assert (ts_one.terms[0].doc_freq, ts_one.field_statistics.doc_count) == (5, len(DOCS))
    assert (ts_five.terms[0].doc_freq, ts_five.field_statistics.doc_count) != (5, len(DOCS))


# -- the DF primitives: shard_routings, term_vectors, analyze -------------------------------
def test_df_primitives_keep_their_contracts(
    target: ContractTarget,
    new_index: NewIndex,
    counted: tuple[SearchBackend, CountingProxy | RoundTripLog],
) -> None:
    """What ``sira.df_bounds`` builds on: one routing value per shard (their ``docFreq`` sum to
    the live count, so no shard is asked twice or missed; None over an alias of two indexes);
    ``term_vectors`` in ONE request, a value taken as given looked up exactly, positions of a
    multi-valued field ``POSITION_GAP`` apart (an empty value moves on by the gap too);
    ``analyze`` in ONE request, each token's offsets inside its own value (UTF-16 units, one
    between values), and over the token cap the typed refusal saying so."""
    be, proxy = counted
    five, other = new_index(shards=5, docs=DOCS), new_index(docs=DOCS[:2])
    routings = be.shard_routings(five)
    assert routings is not None and routings.index == five and len(routings.routings) == 5
    river, green, zebra = (term(be, five, w) for w in ("river", "green", "zebra"))
    docs = [
        ArtificialDocument(
            values={"contents": [river]}, fields=["contents"], routing=r, as_given=True
        )
        for r in routings.routings
    ]
    proxy.reset()
    answers = be.term_vectors(five, docs)
    assert len(proxy.requests) == 1, proxy.requests
    assert sum(a.doc_freqs["contents"][river] for a in answers) == 5
    assert sum(a.doc_freqs["contents"][river] > 0 for a in answers) > 1  # spread over shards
    assert all(a.positions == {} for a in answers)  # not asked for
    packed = ArtificialDocument(
        values={"contents": ["green river", "", "zebra"]},
        fields=["contents"],
        routing=routings.routings[0],
        positions=True,
    )
    (answer,) = be.term_vectors(five, [packed])
    assert answer.positions["contents"] == {
        green: (0,),
        river: (1,),
        zebra: (1 + 2 * POSITION_GAP + 1,),
    }
    assert list(answer.doc_freqs["contents"]) == sorted([green, river, zebra])
    alias = f"{five}-two"
    be.update_aliases(
        [{"add": {"index": five, "alias": alias}}, {"add": {"index": other, "alias": alias}}]
    )
    assert be.shard_routings(alias) is None

    values = ["green river", "𝔘 zebra", "river"]  # the astral character is two UTF-16 units
    proxy.reset()
    tokens = be.analyze(five, "contents", values)
    assert len(proxy.requests) == 1, proxy.requests
    spans = [(0, 11), (12, 20), (21, 26)]
    where = {
        (t.term, i)
        for t in tokens
        for i, (a, b) in enumerate(spans)
        if a <= t.start_offset and t.end_offset <= b
    }
    assert {(green, 0), (river, 0), (zebra, 1), (river, 2)} <= where
    assert len(where) == len(tokens)  # no token outside its value
    with pytest.raises(AnalysisRefusedError) as refused:
        be.analyze(five, "contents", ["zz " * 6000, "zz " * 6000])
    assert refused.value.too_many_tokens


# -- DF bounds over the primitives (sira.df_bounds): sira-sync's two-request route ---------
def test_df_bounds_count_every_shard_once_and_never_fall_below_live_counts(
    target: ContractTarget, new_index: NewIndex
) -> None:
    """With no deleted copy the bounds ARE the live counts, on five shards as on one: every
    shard answered, none twice. After an update the old copy raises the bound, never the live
    count; a bound of 0 stays an exact 0."""
    be = target.backend
    one = new_index(shards=1, docs=DOCS)
    five = new_index(shards=5, docs=DOCS)
    probe = _probe(be, one)
    fields = ["contents", "contents.shingles", "title", "text"]  # title and text: one analyzer
    texts = ["green river", "zebra", "moon qqxzzy", "Note 3 river"]
    for index in (one, five):
        bounds = term_doc_freq_bounds(be, index, fields, texts)
        assert bounds is not None
        # the same terms as analyze_terms, each bounded by (here: equal to) its live DF
        terms = be.analyze_terms(index, fields, texts)
        assert [{f: sorted(b[f]) for f in fields} for b in bounds.texts] == [
            {f: sorted(t[f]) for f in fields} for t in terms
        ]
        live = be.live_doc_freqs(index, probe).as_dict()
        for per_field in bounds.texts:
            for field, per_term in per_field.items():
                for t, bound in per_term.items():
                    assert bound == be.live_doc_freqs(index, [(field, t)]).counts[0].doc_freq
        assert bounds.texts[0]["contents"][probe[0][1]] == live[probe[0]] == 5
        assert bounds.texts[2]["contents"][probe[3][1]] == 0  # qqxzzy: in no document

    result = be.bulk_upsert(five, [{"_id": "c00", "text": "green river near the new mill"}])
    assert result.succeeded == 1 and not result.errors
    be.refresh(five)
    assert be.deleted_docs(five) >= 1
    (after,) = term_doc_freq_bounds(be, five, ["contents"], ["river"]).texts  # type: ignore[union-attr]
    assert after["contents"][probe[0][1]] == 6  # the deleted copy counts: only an upper bound
    assert be.live_doc_freqs(five, [probe[0]]).counts[0].doc_freq == 5
    assert term_doc_freq_bounds(be, five, fields, []).texts == []  # type: ignore[union-attr]


def test_df_bounds_analyse_each_text_exactly_as_an_artificial_document_would(
    target: ContractTarget, new_index: NewIndex, caplog: pytest.LogCaptureFixture
) -> None:
    """The bounds analyse a pack of texts as one multi-valued input and map every term back to
    its text by offsets: texts that make no term (stopwords only, empty, punctuation), at the
    start of the pack as in the middle, astral characters (two UTF-16 units), a pack longer
    than one analysis request and one over the engine's token cap must still give each text
    exactly the terms an artificial document of its own gets (``analyze_terms``). The REST
    engines must get there through their one-input analysis, not its fallback (a slow path
    that would hide a mapping bug)."""
    caplog.set_level(logging.INFO)
    be = target.backend
    index = new_index(shards=2, docs=DOCS)
    fields = ["contents", "contents.shingles", "title", "text"]
    tricky = [
        "the",
        "of the",
        "",
        "   ",
        "!!!",
        "green river",
        "a",
        "zebra herd!",
        "the",
        "café Zürich",
        "𝔘nicode lamp",
        "end.",
        "river " * 40,
        "sirasentinel",
        "the moon",
    ]
    long_pack = [f"green river {n} boat" for n in range(1500)]  # ~31,000 characters
    # ~30,000 characters of two-letter words: 15,000 tokens, over the engines' token cap
    capped = [" ".join(f"{chr(97 + (i + j) % 26)}z" for j in range(20)) for i in range(1000)]
    for texts in (tricky, long_pack, capped):
        bounds = term_doc_freq_bounds(be, index, fields, texts)
        assert bounds is not None
        expected = be.analyze_terms(index, fields, texts)
        assert [{f: sorted(b[f]) for f in fields} for b in bounds.texts] == [
            {f: sorted(t[f]) for f in fields} for t in expected
        ]
    assert all(t["contents"] for t in expected)  # the last pack really made terms
    fallbacks = [r for r in caplog.records if "as artificial documents" in r.getMessage()]
    assert fallbacks == [], [r.getMessage() for r in fallbacks]


# -- index_doc_counts and SIRA's one-request DF check (sira.df_bounds) ----------------------
def test_index_doc_counts_name_the_concrete_index_and_its_deleted_copies(
    target: ContractTarget, new_index: NewIndex
) -> None:
    """|C| as a search counts it, the deleted copies over every copy, the concrete index and
    its uuid (another index, another uuid), through an alias of one index; None for an alias
    over two."""
    be = target.backend
    five, other = new_index(shards=5, docs=DOCS), new_index(docs=DOCS[:3])
    counts = be.index_doc_counts(five)
    assert counts is not None
    assert (counts.index, counts.doc_count, counts.deleted_docs) == (five, len(DOCS), 0)
    assert counts.uuid and counts.uuid != be.index_doc_counts(other).uuid  # type: ignore[union-attr]
    alias = f"{five}-one"
    be.update_aliases([{"add": {"index": five, "alias": alias}}])
    assert be.index_doc_counts(alias) == counts
    be.update_aliases([{"add": {"index": other, "alias": alias}}])
    assert be.index_doc_counts(alias) is None

    result = be.bulk_upsert(five, [{"_id": "c00", "text": "green river near the new mill"}])
    assert result.succeeded == 1 and not result.errors
    be.refresh(five)
    after = be.index_doc_counts(five)
    assert after is not None and after.doc_count == len(DOCS) and after.deleted_docs >= 1


def test_analysis_with_df_bounds_is_one_round_trip_on_any_layout(
    target: ContractTarget,
    new_index: NewIndex,
    counted: tuple[SearchBackend, CountingProxy | RoundTripLog],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The terms ``analyze_terms`` makes (in its order), each with every shard's docFreq
    summed: the live count when nothing is deleted, on five shards as on one; ONE request once
    the routing values of the index (by uuid) are known. An update's deleted copy raises the
    bound only; a bound of 0 stays an exact 0."""
    be, proxy = counted
    one = new_index(shards=1, docs=DOCS)
    five = new_index(shards=5, docs=DOCS)
    fields = ["contents", "contents.shingles", "title", "text"]
    # Texts without terms first, in the middle and last, a repeated one, a stopword run, an
    # astral character and the sentinel's own word: every term must still come back to the
    # text it came from (all the texts go as one document, mapped back by positions).
    texts = [
        "the",
        "",
        "green river",
        "zebra",
        "moon qqxzzy",
        "the of the and of a an",
        "Note 3 river",
        "green river",
        "The 𝔘 river of the sirasentinel",
        "the of",
    ]
    caplog.set_level("INFO")
    for index in (one, five):
        counts = be.index_doc_counts(index)
        assert counts is not None
        analyze_with_doc_freq_bounds(be, index, fields, texts, index_uuid=counts.uuid)
        proxy.reset()
        bounds = analyze_with_doc_freq_bounds(be, index, fields, texts, index_uuid=counts.uuid)
        assert len(proxy.requests) == 1, proxy.requests
        assert bounds is not None and bounds.round_trips == 1
        terms = be.analyze_terms(index, fields, texts)
        assert [{f: list(b[f]) for f in fields} for b in bounds.texts] == terms
        pairs = [(f, t) for b in bounds.texts for f, per in b.items() for t in per]
        live = be.live_doc_freqs(index, pairs).as_dict()
        assert all(b[f][t] == live[(f, t)] for b in bounds.texts for f in b for t in b[f])
        river = term(be, index, "river")
        assert bounds.texts[2]["contents"][river] == 5 and bounds.texts[9]["contents"] == {}
        assert bounds.texts[4]["contents"][term(be, index, "qqxzzy")] == 0
        assert bounds.texts[0] == bounds.texts[1] == {f: {} for f in fields}
    unpacked = [r for r in caplog.records if "one document per text" in r.getMessage()]
    assert unpacked == [], [r.getMessage() for r in unpacked]  # the texts went as one document

    result = be.bulk_upsert(five, [{"_id": "c00", "text": "green river near the new mill"}])
    assert result.succeeded == 1 and not result.errors
    be.refresh(five)
    counts = be.index_doc_counts(five)
    assert counts is not None and counts.deleted_docs >= 1
    found = analyze_with_doc_freq_bounds(
        be, five, ["contents"], ["river qqxzzy"], index_uuid=counts.uuid
    )
    assert found is not None
    (after,) = found.texts
    river, absent = term(be, five, "river"), term(be, five, "qqxzzy")
    assert after["contents"] == {river: 6, absent: 0}  # the deleted copy counts: a bound
    assert be.live_doc_freqs(five, [("contents", river)]).counts[0].doc_freq == 5
    empty = analyze_with_doc_freq_bounds(be, five, fields, [], index_uuid=counts.uuid)
    assert empty is not None and empty.texts == []


# -- search / msearch / explain ------------------------------------------------------------
QUERY = {"match": {"contents": "green river zebra boat"}}


def test_scores_are_the_same_on_one_and_five_shards(new_index: NewIndex, be: SearchBackend) -> None:
    one = new_index(shards=1, docs=DOCS)
    five = new_index(shards=5, docs=DOCS)
    body = {"query": QUERY, "size": 10}
    s_one, s_five = be.search(one, body), be.search(five, body)
    assert s_one.total == s_five.total == 7
    assert scores(s_one) == scores(s_five)
    assert s_one.hits[0].score > s_one.hits[-1].score > 0
    # Per-shard statistics would rank differently: the default is what makes them agree.
    local = be.search(five, body, params={"search_type": "query_then_fetch"})
    assert scores(local) != scores(s_five)

    bodies = [body, {"query": {"match": {"contents": "moon"}}, "size": 3}]
    m_one, m_five = be.msearch(one, bodies), be.msearch(five, bodies)
    assert len(m_one) == len(m_five) == 2
    assert scores(m_one[0]) == scores(m_five[0]) == scores(s_one)
    assert [h.id for h in m_five[1].hits] == ["c07"]
    assert scores(m_one[1]) == scores(m_five[1])


def test_search_returns_source_and_respects_size(new_index: NewIndex, be: SearchBackend) -> None:
    index = new_index(docs=DOCS)
    result = be.search(index, {"query": QUERY, "size": 2, "_source": ["text"]})
    assert result.total == 7 and len(result.hits) == 2
    assert result.hits[0].source == {"text": TEXTS[result.hits[0].id]}


def test_explain_agrees_with_the_search_score(new_index: NewIndex, be: SearchBackend) -> None:
    five = new_index(shards=5, docs=DOCS)
    hits = be.search(five, {"query": QUERY, "size": 10}).hits
    for hit in (hits[0], hits[-1]):
        explanation = be.explain(five, hit.id, QUERY)
        assert explanation is not None
        assert explanation["value"] == pytest.approx(hit.score, rel=1e-5)
        assert explanation.get("details")
    assert be.explain(five, "c08", QUERY) is None  # does not match
    assert be.explain(five, "no-such-doc", QUERY) is None


# -- settings, aliases, names --------------------------------------------------------------
def test_index_settings_name_each_concrete_index(new_index: NewIndex, be: SearchBackend) -> None:
    a, b = new_index(shards=2), new_index(shards=1)
    settings = be.index_settings(a)
    assert list(settings) == [a]
    assert str(settings[a]["number_of_shards"]) == "2"
    assert {"sira_text", "sira_shingles"} <= set(settings[a]["analysis"]["analyzer"])
    alias = f"{a}-both"
    be.update_aliases(
        [{"add": {"index": a, "alias": alias}}, {"add": {"index": b, "alias": alias}}]
    )
    both = be.index_settings(alias)
    assert set(both) == {a, b} and str(both[b]["number_of_shards"]) == "1"


def test_aliases_add_remove_and_move_atomically(new_index: NewIndex, be: SearchBackend) -> None:
    a, b = new_index(docs=DOCS[:3]), new_index(docs=DOCS[:5])
    alias = f"{a}-live"
    assert be.aliases(a) == {a: []}
    assert be.aliases(alias) == {}
    be.update_aliases([{"add": {"index": a, "alias": alias}}])
    assert be.aliases(alias) == {a: [alias]} and be.aliases(a) == {a: [alias]}
    assert be.count(alias) == 3
    be.update_aliases(
        [{"remove": {"index": a, "alias": alias}}, {"add": {"index": b, "alias": alias}}]
    )
    assert be.aliases(alias) == {b: [alias]} and be.aliases(a) == {a: []}
    assert be.count(alias) == 5
    # All or nothing: one bad action and the good one is not applied either.
    other = f"{a}-other"
    with pytest.raises(EngineError):  # the protocol's failure type
        be.update_aliases(
            [
                {"add": {"index": a, "alias": other}},
                {"add": {"index": f"{a}-never-existed", "alias": other}},
            ]
        )
    assert be.aliases(other) == {} and be.aliases(a) == {a: []}
    be.update_aliases([{"remove": {"index": b, "alias": alias}}])
    assert be.aliases(alias) == {}


def test_resolve_name(new_index: NewIndex, be: SearchBackend) -> None:
    a, b = new_index(), new_index()
    assert be.resolve_name(a) == ([a], a)
    assert be.resolve_name(f"{a}-missing") == ([], None)
    alias = f"{a}-r"
    be.update_aliases(
        [{"add": {"index": a, "alias": alias}}, {"add": {"index": b, "alias": alias}}]
    )
    assert be.resolve_name(alias) == (sorted([a, b]), None)  # no write index among two
    be.update_aliases([{"add": {"index": b, "alias": alias, "is_write_index": True}}])
    assert be.resolve_name(alias) == (sorted([a, b]), b)


# -- scan ------------------------------------------------------------------------------------
def _many(n: int) -> list[dict[str, Any]]:
    return [{"_id": f"s{i:03d}", "title": f"t{i}", "text": f"scan body {i}"} for i in range(n)]


def test_scan_pages_and_slices_cover_every_document_once(
    new_index: NewIndex, be: SearchBackend
) -> None:
    docs = _many(45)
    index = new_index(shards=2, docs=docs)
    pages = list(be.scan(index, page_size=7, source=["title"]))
    assert all(0 < len(p) <= 7 for p in pages) and len(pages) == 7
    seen = [h.id for p in pages for h in p]
    assert sorted(seen) == sorted(d["_id"] for d in docs)  # each once
    first = pages[0][0]
    assert set(first.source or {}) == {"title"}
    assert first.seq_no is not None and first.primary_term is not None
    by_slice = [
        [h.id for p in be.scan(index, page_size=5, slice_id=s, max_slices=3) for h in p]
        for s in range(3)
    ]
    assert all(by_slice)  # every slice has work
    assert sorted(i for part in by_slice for i in part) == sorted(d["_id"] for d in docs)
    filtered = [
        h.id for p in be.scan(index, query={"ids": {"values": ["s001", "s044"]}}) for h in p
    ]
    assert sorted(filtered) == ["s001", "s044"]


def test_scan_raises_the_typed_error_when_the_point_in_time_is_gone(
    target: ContractTarget, new_index: NewIndex
) -> None:
    be = target.backend
    index = new_index(docs=_many(12))
    pages = be.scan(index, page_size=3)
    got = [next(pages), next(pages)]
    assert [len(p) for p in got] == [3, 3]
    target.hooks.drop_scan_contexts(be, index)
    with pytest.raises(ScanContextLostError):
        next(pages)
    # A new scan afterwards is fine (that is what the runner does).
    assert sum(len(p) for p in be.scan(index, page_size=5)) == 12


# -- writes, reads ---------------------------------------------------------------------------
def test_bulk_upsert_creates_then_merges_and_reports_noops(
    new_index: NewIndex, be: SearchBackend
) -> None:
    index = new_index()
    first = be.bulk_upsert(index, DOCS[:4])
    assert first.succeeded == 4 and first.noop == 0 and not first.errors
    merged = be.bulk_upsert(index, [{"_id": "c00", "sira_enrichment": {"phrases": ["x y"]}}])
    assert merged.succeeded == 1
    doc = be.get(index, "c00")
    assert doc is not None and doc.source is not None
    assert doc.source["text"] == TEXTS["c00"]  # not given, so kept
    assert doc.source["sira_enrichment"] == {"phrases": ["x y"]}
    same = be.bulk_upsert(index, [{"_id": "c01", "text": TEXTS["c01"]}])
    assert same.noop == 1 and same.succeeded == 0
    be.refresh(index)
    assert be.count(index) == 4


def test_bulk_index_appends_with_generated_ids(new_index: NewIndex, be: SearchBackend) -> None:
    index = new_index()
    result = be.bulk_index(index, [{"title": "log", "text": f"entry {i}"} for i in range(3)])
    assert result.succeeded == 3 and not result.errors
    be.refresh(index)
    assert be.count(index) == 3
    ids = {h.id for p in be.scan(index) for h in p}
    assert len(ids) == 3


def test_partial_updates_are_guarded_by_seq_no(new_index: NewIndex, be: SearchBackend) -> None:
    index = new_index(docs=DOCS[:2])
    doc = be.get(index, "c00")
    assert doc is not None and doc.seq_no is not None and doc.primary_term is not None
    ok = be.bulk_partial_update(
        index,
        [
            PartialUpdate(
                id="c00",
                doc={"sira_sync": {"status": "enriched"}},
                if_seq_no=doc.seq_no,
                if_primary_term=doc.primary_term,
            )
        ],
    )
    assert ok.succeeded == 1 and not ok.errors
    stale = be.bulk_partial_update(
        index,
        [
            PartialUpdate(
                id="c00",
                doc={"sira_sync": {"status": "failed"}},
                if_seq_no=doc.seq_no,  # the write above moved it on
                if_primary_term=doc.primary_term,
            ),
            PartialUpdate(id="nope", doc={"title": "x"}),
        ],
    )
    assert stale.succeeded == 0
    assert sorted((e.id, e.status) for e in stale.errors) == [("c00", 409), ("nope", 404)]
    now = be.get(index, "c00")
    assert now is not None and now.source is not None
    assert now.source["sira_sync"] == {"status": "enriched"}
    assert now.seq_no is not None and now.seq_no > doc.seq_no


def test_count_get_refresh_and_deleted_docs(new_index: NewIndex, be: SearchBackend) -> None:
    index = new_index()
    assert be.count(index) == 0 and be.deleted_docs(index) == 0
    assert be.index_exists(index) and not be.index_exists(f"{index}-missing")
    be.bulk_upsert(index, DOCS)
    be.refresh(index)
    assert be.count(index) == len(DOCS)
    river = term(be, index, "river")
    assert be.count(index, {"term": {"contents": river}}) == 5
    hit = be.get(index, "c05")
    assert hit is not None and hit.source == {k: v for k, v in DOCS[5].items() if k != "_id"}
    assert be.get(index, "missing") is None
    be.bulk_upsert(index, [{"_id": "c05", "text": "zebra herd at noon"}])
    be.refresh(index)
    assert be.deleted_docs(index) >= 1
    assert be.count(index) == len(DOCS)
