"""SEEK's variants as the paper runs them, with the scripted LLM double (`ScriptedSeekLLMDouble`,
a stand-in above the LLM client protocol) and an in-memory retriever.

Update revises the sketch by heading (a re-listed filled heading keeps its evidence) and can add
and drop open gists; Parallel fills every slot in ONE call; Plan and w/o-Initialization stop
when the LLM says the evidence is enough and never run past ``max_steps``.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Callable
from typing import Literal

import pytest
from seek_fakes import RecordingRetriever
from seek_llm_double import ScriptedSeekLLMDouble, StageScript, stage_of, target_in, target_of

from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse
from sira_seek.seek.output_parsing import ENOUGH
from sira_seek.seek.pipeline import SeekPipeline
from sira_seek.seek.results import QuestionInput, SeekResult
from sira_seek.seek.revision import RevisedSection, parse_revised_sections, revise_sketch
from sira_seek.seek.settings import SeekSettings
from sira_seek.seek.sketch import EMPTY_SLOT, NO_EVIDENCE, Gist, SteeringSketch

QUESTION = "Who directed the film shot in Leland in 1986?"
FILM, DIRECTOR, OTHER = (
    "Film shot in Leland in 1986",
    "Director of that film",
    "Other films of that director",
)
SKETCH = f"<OUTLINE>\n# The Leland film\n## {FILM}\n## {DIRECTOR}\n## {OTHER}\n</OUTLINE>"


def subquery_for(text: str) -> str:
    return f"<query>search {target_in(text)}</query>"


def evidence_for(text: str) -> str:
    return f"EVIDENCE[{target_in(text)}]"


def stages(**overrides: StageScript) -> dict[str, StageScript]:
    found: dict[str, StageScript] = {
        "sketch": SKETCH,
        "subquery": subquery_for,
        "evidence": evidence_for,
        "answer": "<answer>Stephen King</answer>",
    }
    found.update(overrides)
    return found


def run(
    llm: ScriptedSeekLLMDouble,
    retriever: RecordingRetriever | None = None,
    *,
    style: Literal["chat", "fewshot"] = "chat",
    **settings: object,
) -> SeekResult:
    pipeline = SeekPipeline(
        llm,
        retriever if retriever is not None else RecordingRetriever(),
        settings=SeekSettings(**settings),  # type: ignore[arg-type]
        prompt_style=style,
    )
    return asyncio.run(pipeline.answer(QuestionInput(id="q1", question=QUESTION)))


def headings(*names: str) -> str:
    return "\n".join(f"## {name}" for name in names)


# -- Update ----------------------------------------------------------------------------------


def test_update_matches_revised_gists_by_heading_not_position() -> None:
    # The model repeats the filled heading (reformatted, no text: its evidence stays) first:
    # by position it would land on the first open gist; by heading it is recognised.
    relisted = f"**1. {FILM.lower()}**\n## 2. Director of Maximum Overdrive\n## {OTHER}"
    revised = headings(FILM, "Director of Maximum Overdrive", OTHER)
    llm = ScriptedSeekLLMDouble(stages(update=[f"## {relisted}", revised, revised]))
    retriever = RecordingRetriever()
    result = run(llm, retriever, variant="update", max_gists=3)
    assert result.sketch is not None and result.sketch.is_complete
    assert result.sketch.headings == (FILM, "Director of Maximum Overdrive", OTHER)
    assert [g.slot for g in result.sketch.gists] == [
        f"EVIDENCE[{FILM}]",
        "EVIDENCE[Director of Maximum Overdrive]",
        f"EVIDENCE[{OTHER}]",
    ]
    assert retriever.queries == [
        f"search {FILM}",
        "search Director of Maximum Overdrive",
        f"search {OTHER}",
    ]
    assert target_of(llm.by_stage["subquery"][1]) == "Director of Maximum Overdrive"
    # A revision after every fill, the last included (it may still edit or drop slots).
    assert len(llm.by_stage["update"]) == 3
    assert [(u.after_fill, u.added, u.dropped) for u in result.updates] == [
        (1, ["Director of Maximum Overdrive"], [DIRECTOR]),
        (2, [], []),
        (3, [], []),
    ]


def test_update_adds_a_gist_the_evidence_shows_is_missing() -> None:
    added = "Birthplace of Stephen King"
    llm = ScriptedSeekLLMDouble(stages(update=lambda text: headings(FILM, DIRECTOR, OTHER, added)))
    retriever = RecordingRetriever()
    result = run(llm, retriever, variant="update")
    assert result.sketch is not None and result.sketch.is_complete
    assert result.sketch.headings == (FILM, DIRECTOR, OTHER, added)
    assert result.sketch.gists[3].slot == f"EVIDENCE[{added}]"
    assert retriever.queries[-1] == f"search {added}"
    assert len(result.steps) == 4
    # revised after each of the four fills
    assert len(llm.by_stage["update"]) == 4
    assert any(f"added ['{added}']" in note for note in result.notes)


def test_update_edits_and_drops_filled_slots_and_keeps_the_sketch_on_malformed_output() -> None:
    edited = "Maximum Overdrive was shot in Leland."
    llm = ScriptedSeekLLMDouble(
        stages(
            update=[
                # after fill 1: the filled slot's text edited (irrelevant content deleted)
                f"# The Leland film\n## {FILM}\n{edited}\n## {DIRECTOR}\n{EMPTY_SLOT}\n"
                f"## {OTHER}\n{EMPTY_SLOT}",
                # after fill 2: the first filled slot dropped as redundant; the second listed
                # without text keeps its evidence
                f"## {DIRECTOR}\n## {OTHER}\n{EMPTY_SLOT}",
                # after fill 3: nothing to apply
                "nothing that parses",
            ]
        )
    )
    retriever = RecordingRetriever()
    result = run(llm, retriever, variant="update")
    assert result.sketch is not None and result.sketch.is_complete
    assert result.sketch.headings == (DIRECTOR, OTHER)
    assert [g.slot for g in result.sketch.gists] == [f"EVIDENCE[{DIRECTOR}]", f"EVIDENCE[{OTHER}]"]
    assert retriever.queries == [f"search {h}" for h in (FILM, DIRECTOR, OTHER)]
    # The edit reached the sketch the next step read; the drop, the one after it.
    next_prompt = llm.texts("subquery")[1]
    assert edited in next_prompt and f"EVIDENCE[{FILM}]" not in next_prompt
    assert FILM not in llm.texts("subquery")[2].split("Current sketch:")[1]
    assert f"EVIDENCE[{FILM}]" not in llm.texts("answer")[0]
    first, second, third = result.updates
    assert (first.after_fill, first.edited, first.malformed) == (1, [FILM], None)
    assert (second.dropped_filled, second.edited, second.dropped) == ([FILM], [], [])
    assert third.after_fill == 3 and third.malformed is not None
    assert third.raw_output == "nothing that parses" and first.raw_output is None
    assert any("update after fill 3 not applied" in note for note in result.notes)


def test_update_output_cut_off_at_the_token_cap_keeps_the_sketch() -> None:
    class CutOff(ScriptedSeekLLMDouble):
        async def generate(self, request: LLMRequest) -> LLMResponse:
            response = await super().generate(request)
            if stage_of(request) == "update":
                return response.model_copy(update={"finish_reason": "length"})
            return response

    llm = CutOff(stages(update=headings(FILM)))  # would drop two gists if applied
    result = run(llm, variant="update")
    assert result.sketch is not None and result.sketch.headings == (FILM, DIRECTOR, OTHER)
    assert len(result.updates) == 3
    assert all(u.malformed and "token cap" in u.malformed for u in result.updates)


def test_update_that_keeps_adding_stops_at_max_gists() -> None:
    counter = itertools.count(1)

    def always_one_more(text: str) -> str:
        listed = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
        return headings(*listed, f"New aspect {next(counter)}")

    llm = ScriptedSeekLLMDouble(stages(update=always_one_more))
    retriever = RecordingRetriever()
    result = run(llm, retriever, variant="update", max_gists=5)
    assert result.sketch is not None and result.sketch.is_complete
    assert len(result.sketch.gists) == 5 and len(retriever.queries) == 5
    assert result.sketch.headings[:3] == (FILM, DIRECTOR, OTHER)
    assert any("not added (max_gists 5)" in note for note in result.notes)
    assert not result.step_cap_reached


def test_update_that_keeps_replacing_filled_gists_stops_at_the_fill_cap() -> None:
    counter = itertools.count(1)
    # Every revision drops what was filled and asks for something new: without a cap on fills
    # this would never end.
    llm = ScriptedSeekLLMDouble(stages(update=lambda text: f"## New aspect {next(counter)}"))
    retriever = RecordingRetriever()
    result = run(llm, retriever, variant="update", max_gists=3)
    assert len(retriever.queries) == 3 and result.step_cap_reached
    assert any("stopped at the cap of 3 fills" in note for note in result.notes)
    assert result.sketch is not None and result.sketch.headings == ("New aspect 3",)
    assert not result.sketch.is_complete
    assert EMPTY_SLOT in llm.texts("answer")[0]


def test_update_with_fewshot_prompts_reads_the_notes_lines_by_heading() -> None:
    llm = ScriptedSeekLLMDouble(
        {
            "sketch": f" {FILM} | {DIRECTOR}",
            "subquery": " Leland 1986 film",
            "evidence": " Maximum Overdrive was shot in Leland. It rained.",
            # re-lists the filled heading first with its slot edited, then rewords the open one
            "update": [
                f"- {FILM}: Maximum Overdrive was shot in Leland.\n"
                f"- Director of Maximum Overdrive: {EMPTY_SLOT}",
                f"- {FILM}: Maximum Overdrive was shot in Leland.\n"
                "- Director of Maximum Overdrive: Maximum Overdrive was shot in Leland.",
            ],
            "answer": "Stephen King</answer>",
        }
    )
    result = run(llm, style="fewshot", variant="update", max_gists=2)
    assert result.sketch is not None
    assert result.sketch.headings == (FILM, "Director of Maximum Overdrive")
    assert [g.slot for g in result.sketch.gists] == ["Maximum Overdrive was shot in Leland."] * 2
    prompt = llm.texts("update")[0]
    assert prompt.endswith("Revised notes:\n") and "Jaws was filmed" in prompt
    assert [u.edited for u in result.updates] == [[FILM], ["Director of Maximum Overdrive"]]


def test_revise_sketch_edits_drops_adds_and_caps_by_heading() -> None:
    sketch = SteeringSketch(
        title="t",
        gists=(Gist(heading="A", slot="found A"), Gist(heading="B"), Gist(heading="C", slot="C!")),
    )
    revision = revise_sketch(
        sketch,
        [
            RevisedSection("C", "C, trimmed"),  # edited
            RevisedSection("D", "invented"),  # a new open gist: its text is not taken
            RevisedSection("a", None),  # A again (another case), no text: keeps its evidence
        ],
        max_gists=4,
    )
    assert revision is not None
    assert revision.sketch.gists == (
        Gist(heading="C", slot="C, trimmed"),
        Gist(heading="D"),
        Gist(heading="A", slot="found A"),
    )
    assert (revision.added, revision.dropped, revision.dropped_filled) == (("D",), ("B",), ())
    assert (revision.edited, revision.ignored_text) == (("C",), ("D",))
    # Only the old gists listed keep their room: one new gist fits under max_gists 4.
    names = [RevisedSection(h, None) for h in ("A", "B", "C", "D", "E")]
    capped = revise_sketch(sketch, names, max_gists=4)
    assert capped is not None
    assert capped.sketch.headings == ("A", "B", "C", "D") and capped.over_cap == ("E",)
    # Filled gists left out are dropped with their evidence.
    only_b = revise_sketch(sketch, [RevisedSection("B", None)], max_gists=4)
    assert only_b is not None and only_b.dropped_filled == ("A", "C")
    # The open marker cannot empty a filled slot; the no-evidence marker empties it.
    kept = revise_sketch(sketch, [RevisedSection("A", EMPTY_SLOT)], max_gists=4)
    emptied = revise_sketch(sketch, [RevisedSection("A", NO_EVIDENCE)], max_gists=4)
    assert kept is not None and kept.sketch.gists[0].slot == "found A" and not kept.edited
    assert emptied is not None and emptied.sketch.gists[0].slot == ""
    # Nothing listed: nothing to apply.
    assert revise_sketch(sketch, [], max_gists=4) is None
    assert revise_sketch(sketch, [RevisedSection("**", None)], max_gists=4) is None


def test_revised_sections_are_read_from_markdown_notes_or_a_heading_list() -> None:
    markdown = "<think>hm</think>\n# Title\n## 1. A\nline one\nline two\n### detail\n## B\n"
    assert parse_revised_sections(markdown) == [
        RevisedSection("A", "line one line two ### detail"),
        RevisedSection("B", None),
    ]
    notes = f"- A: found A\n  more of A\n- B: {EMPTY_SLOT}\n- C"
    assert parse_revised_sections(notes) == [
        RevisedSection("A", "found A more of A"),
        RevisedSection("B", EMPTY_SLOT),
        RevisedSection("C", None),
    ]
    assert parse_revised_sections(" A | B ") == [
        RevisedSection("A", None),
        RevisedSection("B", None),
    ]
    assert parse_revised_sections("nothing that parses") == []
    assert parse_revised_sections(None) == []


# -- Parallel --------------------------------------------------------------------------------


def fill_every_section(text: str) -> str:
    sections = re.findall(r"### Section (\d+): (.+)", text)
    return "\n".join(f"## {n}. {heading}\nFILLED[{heading}]" for n, heading in sections)


def test_parallel_fills_every_slot_in_one_call() -> None:
    llm = ScriptedSeekLLMDouble(stages(fill=fill_every_section))
    retriever = RecordingRetriever()
    result = run(llm, retriever, variant="parallel")
    assert len(llm.by_stage["fill"]) == 1
    assert "evidence" not in llm.by_stage  # no per-slot evidence call
    assert result.usage.by_stage["evidence"].calls == 1
    assert result.usage.by_stage["subquery"].calls == 3
    fill_prompt = llm.texts("fill")[0]
    for heading in (FILM, DIRECTOR, OTHER):
        assert f"Search query: search {heading}" in fill_prompt
        assert f"Doc 4 for search {heading}" in fill_prompt  # every gist's top-5 is shown
    assert result.sketch is not None
    assert [g.slot for g in result.sketch.gists] == [
        f"FILLED[{h}]" for h in (FILM, DIRECTOR, OTHER)
    ]
    assert sorted(retriever.queries) == sorted(f"search {h}" for h in (FILM, DIRECTOR, OTHER))


def test_parallel_fill_is_split_by_heading_not_position() -> None:
    reply = f"Here you go.\n## {OTHER}\nOTHER FILMS.\n## {FILM}\nMaximum Overdrive.\n## Extra\nx"
    llm = ScriptedSeekLLMDouble(stages(fill=reply))
    result = run(llm, variant="parallel")
    assert result.sketch is not None and result.sketch.is_complete
    assert [g.slot for g in result.sketch.gists] == ["Maximum Overdrive.", "", "OTHER FILMS."]
    assert NO_EVIDENCE in llm.texts("answer")[0]  # the empty slot shows as such
    assert any("wrote nothing under" in note and DIRECTOR in note for note in result.notes)


def test_parallel_with_fewshot_prompts_makes_one_fill_call_too() -> None:
    llm = ScriptedSeekLLMDouble(
        {
            "sketch": f" {FILM} | {DIRECTOR}",
            "subquery": " Leland 1986 film",
            # the prompt opened the first section, "- {FILM}:"; the model goes on from there
            "fill": f" Maximum Overdrive.\n- {DIRECTOR}: Stephen King directed it.",
            "answer": "Stephen King</answer>",
        }
    )
    result = run(llm, style="fewshot", variant="parallel")
    assert len(llm.by_stage["fill"]) == 1 and "evidence" not in llm.by_stage
    assert llm.texts("fill")[0].endswith(f"Evidence for each section:\n- {FILM}:")
    assert result.sketch is not None
    assert [g.slot for g in result.sketch.gists] == [
        "Maximum Overdrive.",
        "Stephen King directed it.",
    ]
    assert result.answer == "Stephen King"


# -- Plan and w/o-Initialization: stop when enough, with a cap --------------------------------

LOOPING = pytest.mark.parametrize("variant", ["plan", "no-init"])


@LOOPING
def test_stops_when_the_llm_says_the_evidence_is_enough(variant: str) -> None:
    llm = ScriptedSeekLLMDouble(
        stages(
            subquery=[
                "<query>Leland 1986 film</query>",
                "<query>Maximum Overdrive director</query>",
                f"The notes name the director.\n<query>{ENOUGH}</query>",
            ],
            evidence=["Maximum Overdrive was shot in Leland.", "Stephen King directed it."],
        )
    )
    retriever = RecordingRetriever()
    result = run(llm, retriever, variant=variant, max_steps=5)
    assert retriever.queries == ["Leland 1986 film", "Maximum Overdrive director"]
    assert len(llm.by_stage["subquery"]) == 3 and len(llm.by_stage["evidence"]) == 2
    assert len(result.steps) == 2
    assert any("stopped after 2 steps" in note for note in result.notes)
    assert not result.step_cap_reached  # the LLM stopped it, not the cap
    answer_prompt = llm.texts("answer")[0]
    assert "Maximum Overdrive was shot in Leland." in answer_prompt
    assert "Stephen King directed it." in answer_prompt
    # the first step is not offered the stop (nothing to judge yet); later ones are
    prompts = llm.texts("subquery")
    assert ENOUGH not in prompts[0] and all(ENOUGH in p for p in prompts[1:])
    assert result.sketch is not None
    assert [g.slot for g in result.sketch.gists] == [
        "Maximum Overdrive was shot in Leland.",
        "Stephen King directed it.",
    ]


@LOOPING
@pytest.mark.parametrize("cap", [1, 4])
def test_never_exceeds_the_step_cap(variant: str, cap: int) -> None:
    counter = itertools.count(1)
    llm = ScriptedSeekLLMDouble(
        stages(
            subquery=lambda text: f"<query>lookup {next(counter)}</query>",
            evidence=lambda text: "not there yet",
        )
    )
    retriever = RecordingRetriever()
    result = run(llm, retriever, variant=variant, max_steps=cap)
    assert retriever.queries == [f"lookup {i}" for i in range(1, cap + 1)]
    assert len(llm.by_stage["subquery"]) == cap and len(llm.by_stage["evidence"]) == cap
    # The cap stopped it, not the LLM: said on the result and in its trace (diagnostics count it).
    assert any(
        f"{variant}: stopped at the cap of {cap} steps (max_steps) before the LLM said" in note
        for note in result.notes
    )
    assert result.step_cap_reached and result.trace().step_cap_reached
    assert result.answer == "Stephen King"
    targets = [target_of(request) for request in llm.by_stage["subquery"]]
    if variant == "plan":  # the plan's headings in order, then whatever is not covered
        assert targets[:3] == [FILM, DIRECTOR, OTHER][:cap]
        assert cap < 4 or "not cover" in targets[3]
    else:
        assert len(set(targets)) == 1


@LOOPING
def test_a_stop_word_where_no_stop_was_offered_is_retried_not_searched(variant: str) -> None:
    llm = ScriptedSeekLLMDouble(
        stages(
            subquery=[f"<query>{ENOUGH}</query>", "<query>real query</query>", ENOUGH],
            evidence=["found it"],
        )
    )
    retriever = RecordingRetriever()
    result = run(llm, retriever, variant=variant)
    assert retriever.queries == ["real query"]
    assert result.steps[0].attempts == 2


def test_the_plan_variant_shows_the_plan_in_every_step_and_the_fewshot_stop_example() -> None:
    llm = ScriptedSeekLLMDouble(
        {
            "sketch": f" {FILM} | {DIRECTOR}",
            "subquery": [" Leland 1986 film", f" {ENOUGH}"],
            "evidence": [" Maximum Overdrive was shot in Leland."],
            "answer": "Stephen King</answer>",
        }
    )
    retriever = RecordingRetriever()
    result = run(llm, retriever, style="fewshot", variant="plan", temperature=0.0)
    assert retriever.queries == ["Leland 1986 film"]
    prompts = llm.texts("subquery")
    assert [target_of(request) for request in llm.by_stage["subquery"]] == [FILM, DIRECTOR]
    # the plan in the notes' one-line shape; evidence concatenated on its own line, not slotted
    plan_lines = f"- {FILM}: {EMPTY_SLOT}\n- {DIRECTOR}: {EMPTY_SLOT}"
    assert all(plan_lines in p for p in prompts)
    assert "Found so far" not in prompts[0]
    assert "- Found so far: Maximum Overdrive was shot in Leland." in prompts[1]
    assert f"Query: {ENOUGH}" not in prompts[0] and f"Query: {ENOUGH}" in prompts[1]
    assert result.answer == "Stephen King"


def test_sequential_seek_is_unchanged_by_the_step_cap() -> None:
    llm = ScriptedSeekLLMDouble(stages())
    result = run(llm, max_steps=1)
    assert len(result.steps) == 3  # SEEK fills every gist; max_steps is for plan / no-init


# -- Thinking switch -------------------------------------------------------------------------


def _chat_kwargs(make: Callable[[], SeekSettings]) -> list[object]:
    llm = ScriptedSeekLLMDouble(stages(update=headings(FILM, DIRECTOR, OTHER)))
    pipeline = SeekPipeline(llm, RecordingRetriever(), settings=make(), prompt_style="chat")
    asyncio.run(pipeline.answer(QUESTION))
    return [r.chat_template_kwargs for requests in llm.by_stage.values() for r in requests]


def test_thinking_is_off_in_every_chat_request_by_default() -> None:
    sent = _chat_kwargs(lambda: SeekSettings(variant="update"))
    # sketch, 3 sub-queries, 3 evidence, an update after each fill, answer
    assert len(sent) == 1 + 3 + 3 + 3 + 1
    assert all(kwargs == {"enable_thinking": False} for kwargs in sent)


def test_thinking_switch_and_other_template_variables() -> None:
    on = _chat_kwargs(lambda: SeekSettings(thinking=True, chat_template_kwargs={"x": 1}))
    assert on and all(kwargs == {"x": 1, "enable_thinking": True} for kwargs in on)


def test_thinking_reads_its_settings_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIRA_SEEK_SEEK_THINKING", "true")
    assert SeekSettings().template_kwargs() == {"enable_thinking": True}
    monkeypatch.delenv("SIRA_SEEK_SEEK_THINKING")
    assert SeekSettings().template_kwargs() == {"enable_thinking": False}
