"""SEEK for one question: sketch, fill each gist's slot from retrieval, answer.

Only the sketch grows from step to step: a sub-query's reasoning and text never reach a later
prompt, and the evidence for gist t is written into slot t in code. The paper's ablations and
the two baselines share the same stages, so they differ only in how the stages are combined:
Parallel fills every slot in one call, Update lets the LLM revise the sketch after each fill
(gists added and dropped, filled slots edited or dropped; applied by heading), Plan and
w/o-Initialization retrieve until the LLM says the evidence is enough (at most ``max_steps``
times, and the result says when the cap stopped them).
Async throughout, so many questions can share one LLM server while their searches run in
worker threads.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Literal

from sira_seek.input_errors import InputError
from sira_seek.llm.client import LLMClient
from sira_seek.llm.context_window import context_window_of
from sira_seek.llm.errors import ContextTooLongError
from sira_seek.llm.pending import gather_settled
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse

from .baselines import BASELINE_METHODS, BaselineMethod, make_baseline
from .baselines.vanilla_prompts import VanillaPrompts
from .context_budget import PromptBudget, fit_budget
from .context_fit import (
    FIT_ROUNDS,
    PromptOverflow,
    generate_booked,
    refit_note,
    scaled_settings,
)
from .output_parsing import (
    clean_evidence,
    clean_subquery,
    extract_answer,
    says_enough,
    sketch_markdown,
    split_sections,
)
from .prompts import ContextKind, SectionSearch, SeekPrompts, make_prompts, render_docs
from .results import QuestionInput, SeekResult, SketchUpdate, Stage, SubQueryStep
from .retrieval import RETRIEVAL_FAILURES, RetrievedDoc, Retriever, note_failed_search
from .revision import parse_revised_sections, revise_sketch
from .settings import SeekSettings
from .sketch import Gist, SteeringSketch, fallback_sketch, parse_sketch, try_parse_sketch

logger = logging.getLogger(__name__)


class RetrieverRequiredError(InputError):
    """A retrieval method was asked for without a retriever."""


class _QuestionRun:
    """Mutable state of one question while it runs; becomes a `SeekResult` at the end."""

    def __init__(self, question: QuestionInput, settings: SeekSettings) -> None:
        self.q = question
        self.started = time.perf_counter()
        self.result = SeekResult(
            id=question.id,
            question=question.question,
            golden_answers=list(question.golden_answers),
            method=settings.method,
            variant=settings.variant if settings.method == "seek" else None,
        )

    def finish(self) -> SeekResult:
        self.result.timings.total_s = time.perf_counter() - self.started
        self.result.timings.llm_s = self.result.usage.total.llm_seconds
        return self.result


class SeekPipeline:
    """Answers questions with SEEK (or a baseline) over one retriever and one LLM client."""

    def __init__(
        self,
        llm: LLMClient,
        retriever: Retriever | None,
        *,
        settings: SeekSettings | None = None,
        prompt_style: Literal["chat", "fewshot"] = "chat",
        prompts: SeekPrompts | None = None,
        record_iterations: bool = False,
    ) -> None:
        self.llm = llm
        self.retriever = retriever
        # The knowledge after each iteration, kept on the result for the per-iteration
        # analysis (``SeekResult.iteration_contexts``); off by default, as it grows results.
        self.record_iterations = record_iterations
        self.settings = settings or SeekSettings()
        # Asking again with shorter evidence rebuilds the prompts (context_fit); prompts given
        # by the caller cannot be rebuilt, so their overflow is the model's error as it stands.
        self.refits = prompts is None
        self.prompts = prompts or make_prompts(prompt_style, self.settings)
        if self.settings.method != "vanilla-llm" and retriever is None:
            raise RetrieverRequiredError(
                f"method {self.settings.method!r} retrieves: give a retriever (e.g. BM25Retriever)"
            )
        # Iter-RetGen and ReWOO have loops of their own (sira_seek.seek.baselines).
        self.style: Literal["chat", "fewshot"] = (
            "fewshot" if self.prompts.style == "fewshot" else "chat"
        )
        self.baseline: BaselineMethod | None = None
        if self.settings.method in BASELINE_METHODS:
            assert retriever is not None
            self.baseline = make_baseline(
                self.settings.method, llm, retriever, self.settings, self.style
            )

    # -- public ----------------------------------------------------------------------------
    async def answer(self, question: QuestionInput | str) -> SeekResult:
        """Run the configured method on one question. LLM failures raise; a search the
        cluster (or an LLM) failed is recorded on its step, which continues without documents
        (`retrieval.RETRIEVAL_FAILURES`); any other retriever exception is a bug and raises.

        When the model's context window is known, the evidence is first sized to it
        (`context_budget`); a question that cannot fit raises `PromptBudgetError` before any
        search or LLM call."""
        if isinstance(question, str):
            question = QuestionInput(id="q0", question=question)
        if self.refits:
            window = await context_window_of(self.llm)
            if window is not None:
                budget = fit_budget(self.settings, self.style, question.question, window)
                if budget != (1.0, self.settings.top_k):
                    return await self._answer_sized(question, budget, window)
        return await self._answer_fitting(question)

    async def _answer_sized(
        self, question: QuestionInput, budget: PromptBudget, window: int
    ) -> SeekResult:
        """The question run from the start with the evidence `context_budget` sized to the
        model's window; a refusal still asks again with shorter evidence, from there."""
        note = budget.note(self.settings, window)
        logger.warning("question %s: %s", question.id, note)
        sized = SeekPipeline(
            self.llm,
            self.retriever,
            settings=budget.settings(self.settings),
            prompt_style=self.style,
            record_iterations=self.record_iterations,
        )
        result = await sized._answer_fitting(question)
        result.notes.insert(0, note)
        result.evidence_scale *= budget.scale
        return result

    async def _answer_fitting(self, question: QuestionInput) -> SeekResult:
        """The question with this pipeline's settings; a prompt the model refuses as too long
        asks it again with shorter evidence (`context_fit`)."""
        started = time.perf_counter()
        try:
            return await self._answer_once(question)
        except PromptOverflow as overflow:
            if not self.refits:
                raise
            return await self._answer_shorter(question, overflow, started)

    async def _answer_shorter(
        self, question: QuestionInput, overflow: PromptOverflow, started: float
    ) -> SeekResult:
        """The question asked again from the start with every evidence budget halved, until
        its prompts fit the model (`context_fit`); the last overflow raises."""
        first, spent = overflow, overflow.usage
        for round_ in range(1, FIT_ROUNDS + 1):
            scale = 0.5**round_
            settings = scaled_settings(self.settings, scale)
            logger.warning(
                "question %s: the %s prompt did not fit the model's context (%s); asking again "
                "with evidence at %g of its length",
                question.id,
                overflow.stage,
                overflow,
                scale,
            )
            shorter = SeekPipeline(
                self.llm,
                self.retriever,
                settings=settings,
                prompt_style=self.style,
                record_iterations=self.record_iterations,
            )
            try:
                result = await shorter._answer_once(question)
            except PromptOverflow as again:
                spent.merge(again.usage)
                overflow = again
                continue
            result.notes.insert(0, refit_note(first, settings, scale))
            result.evidence_scale = scale
            result.usage.merge(spent)
            result.timings.total_s = time.perf_counter() - started
            result.timings.llm_s = result.usage.total.llm_seconds
            return result
        raise ContextTooLongError(
            f"{overflow} (asked again with evidence down to {0.5**FIT_ROUNDS:g} of its length: "
            "still too long; use a model with a longer context window, or lower top_k)",
            raw_text=overflow.raw_text,
        ) from overflow

    async def _answer_once(self, question: QuestionInput) -> SeekResult:
        if self.baseline is not None:
            return await self.baseline.answer(question)
        run = _QuestionRun(question, self.settings)
        s = self.settings
        if s.method in ("vanilla-llm", "vanilla-rag"):
            await self._vanilla_answer(run)
        elif s.variant == "no-init":
            await self._without_initialisation(run)
        else:
            sketch = await self._draft_sketch(run)
            filler = {
                "sequential": self._fill_sequential,
                "update": self._fill_sequential,
                "parallel": self._fill_parallel,
                "plan": self._fill_plan,
                "no-iter-retrieval": self._fill_from_one_retrieval,
                "rewrite-page": self._fill_by_rewriting_page,
            }[s.variant]
            await filler(run, sketch)
        return run.finish()

    # -- stages ----------------------------------------------------------------------------
    async def _generate(self, run: _QuestionRun, stage: Stage, request: LLMRequest) -> LLMResponse:
        return await generate_booked(self.llm, request, stage=stage, usage=run.result.usage)

    async def _draft_sketch(self, run: _QuestionRun) -> SteeringSketch:
        s = self.settings
        response = await self._generate(run, "sketch", self.prompts.sketch(run.q.question))
        run.result.initial_sketch_raw = response.text
        text = sketch_markdown(
            response.text, run.q.question, one_line=self.prompts.style == "fewshot"
        )
        sketch = try_parse_sketch(
            text, max_gists=s.max_gists, min_gists=s.min_gists, question=run.q.question
        )
        if sketch is None:
            # Fewer gists than asked for still beats none; nothing at all gives one gist.
            sketch = parse_sketch(text, max_gists=s.max_gists, question=run.q.question)
            if sketch == fallback_sketch(run.q.question):
                run.result.notes.append("initial sketch did not parse: one-gist fallback")
            else:
                run.result.notes.append(f"initial sketch has fewer than {s.min_gists} gists")
        run.result.sketch = sketch
        return sketch

    async def _subquery(
        self, run: _QuestionRun, context: str, kind: ContextKind, target: str, gist: int | None
    ) -> SubQueryStep:
        step = await self._next_subquery(run, context, kind, target, gist, allow_stop=False)
        assert step is not None  # only a step that may stop returns None
        return step

    async def _next_subquery(
        self,
        run: _QuestionRun,
        context: str,
        kind: ContextKind,
        target: str,
        gist: int | None,
        *,
        allow_stop: bool,
    ) -> SubQueryStep | None:
        """A cleaned, retried sub-query; ``None`` when ``allow_stop`` and the LLM wrote
        `output_parsing.ENOUGH` instead (a stop word where no stop was offered is no query)."""
        s = self.settings
        # A retry of a deterministic few-shot completion would repeat itself.
        retry_useful = self.prompts.style == "chat" or s.temperature > 0
        tries = 1 + (s.subquery_retries if retry_useful else 0)
        raw, cleaned, attempts = "", None, 0
        for attempt in range(tries):
            attempts = attempt + 1
            request = self.prompts.subquery(
                run.q.question, context, kind, target, attempt=attempt, allow_stop=allow_stop
            )
            raw = (await self._generate(run, "subquery", request)).text
            cleaned = clean_subquery(raw, max_words=s.max_subquery_words)
            if says_enough(cleaned.text):
                if allow_stop:
                    return None
                cleaned = cleaned.model_copy(update={"text": "", "malformed": True})
            if not cleaned.malformed:
                break
        assert cleaned is not None
        text = cleaned.text
        if not text:
            text = " ".join(f"{target} {run.q.question}".split()[: s.max_subquery_words])
            run.result.notes.append(f"empty sub-query for {target!r}: searched heading + question")
        return SubQueryStep(
            gist_index=gist,
            sub_query=text,
            retrieved_ids=[],
            raw_output=raw,
            malformed=cleaned.malformed,
            attempts=attempts,
        )

    async def _search(self, run: _QuestionRun, step: SubQueryStep) -> list[RetrievedDoc]:
        """The step's documents. A cluster or LLM failure costs this step its evidence, not
        the question (recorded on the step, logged); anything else is a bug and raises."""
        assert self.retriever is not None
        started = time.perf_counter()
        try:
            docs = await asyncio.wait_for(
                asyncio.to_thread(self.retriever.retrieve, step.sub_query, self.settings.top_k),
                timeout=self.settings.retrieval_timeout_s,
            )
        except RETRIEVAL_FAILURES as exc:
            step.error = note_failed_search(exc, [step.sub_query], run.q.id)
            docs = []
        step.retrieval_ms = (time.perf_counter() - started) * 1000
        step.retrieved_ids = [doc.id for doc in docs]
        return docs

    async def _retrieve(
        self, run: _QuestionRun, query: str, gist: int | None
    ) -> list[RetrievedDoc]:
        step = SubQueryStep(gist_index=gist, sub_query=query, retrieved_ids=[])
        docs = await self._search(run, step)
        self._record_step(run, step)
        return docs

    def _record_step(self, run: _QuestionRun, step: SubQueryStep) -> None:
        run.result.steps.append(step)
        run.result.timings.retrieval_s += step.retrieval_ms / 1000

    def _after_iteration(self, run: _QuestionRun, context: str) -> None:
        """Keep the knowledge as it stands after an iteration, when asked to."""
        if self.record_iterations:
            if run.result.iteration_contexts is None:
                run.result.iteration_contexts = []
            run.result.iteration_contexts.append(context)

    async def _evidence(
        self,
        run: _QuestionRun,
        sub_query: str,
        docs: Sequence[RetrievedDoc],
        context: str,
        kind: ContextKind,
        target: str,
    ) -> str:
        request = self.prompts.evidence(run.q.question, sub_query, docs, context, kind, target)
        response = await self._generate(run, "evidence", request)
        return clean_evidence(response.text, max_chars=self.settings.slot_chars)

    async def _vanilla_answer(self, run: _QuestionRun) -> None:
        """Vanilla LLM (closed-book) or vanilla RAG (one search of the question), asked with
        their own prompts (`VanillaPrompts`), which say nothing of SEEK's method."""
        docs = None
        if self.settings.method == "vanilla-rag":
            docs = await self._retrieve(run, run.q.question, None)
        request = VanillaPrompts(self.settings, self.style).answer(run.q.question, docs)
        context = None if docs is None else render_docs(docs, self.settings)
        await self._final_answer(run, context, "documents", request)

    async def _final_answer(
        self,
        run: _QuestionRun,
        context: str | None,
        kind: ContextKind,
        request: LLMRequest | None = None,
    ) -> None:
        """The answer call: SEEK's answer prompt over ``context`` unless ``request`` (a
        baseline's own) is given; the context is kept on the result either way (DIG)."""
        if request is None:
            assert context is not None  # only vanilla LLM answers without knowledge
            request = self.prompts.answer(run.q.question, context, kind)
        response = await self._generate(run, "answer", request)
        raw = response.text
        if self.prompts.style == "fewshot":
            raw = "<answer>" + raw  # the prompt ended with the opening tag
        run.result.raw_answer = raw
        run.result.answer = extract_answer(raw)
        # Kept so an analysis can ask how much this knowledge moved the model (DIG).
        run.result.answer_context = context
        run.result.answer_context_kind = None if context is None else kind

    async def _gist_step(
        self, run: _QuestionRun, sketch: SteeringSketch, t: int
    ) -> tuple[SubQueryStep, list[RetrievedDoc], str]:
        """Sub-query for gist t from (question, current sketch), then its documents."""
        context = self.prompts.render_sketch(sketch)
        step = await self._subquery(run, context, "sketch", sketch.gists[t].heading, t)
        docs = await self._search(run, step)
        return step, docs, context

    # -- SEEK and its variants -------------------------------------------------------------
    async def _fill_sequential(self, run: _QuestionRun, sketch: SteeringSketch) -> None:
        """SEEK, and its Update variant: fill the first open gist until none is open.

        Update revises the sketch after every fill (`_update_sketch`); since a revision may add
        open gists and drop filled ones, the loop runs on the sketch as it now stands, and ends
        at ``max_gists`` fills in all (noted, ``step_cap_reached``): a revision that keeps
        dropping and adding gists could otherwise go on for ever. SEEK itself fills each gist
        once, so it never reaches the cap.
        """
        cap, fills = self.settings.max_gists, 0
        while (t := sketch.next_unfilled()) is not None:
            if fills >= cap:
                still_open = sum(1 for g in sketch.gists if not g.is_filled)
                run.result.step_cap_reached = True
                run.result.notes.append(
                    f"{self.settings.variant}: stopped at the cap of {cap} fills (max_gists) "
                    f"with {still_open} gist(s) still open"
                )
                break
            step, docs, context = await self._gist_step(run, sketch, t)
            self._record_step(run, step)
            heading = sketch.gists[t].heading
            evidence = await self._evidence(run, step.sub_query, docs, context, "sketch", heading)
            sketch = sketch.fill(t, evidence)
            fills += 1
            if self.settings.variant == "update":
                sketch = await self._update_sketch(run, sketch, fills=fills)
            run.result.sketch = sketch
            self._after_iteration(run, self.prompts.render_sketch(sketch))
        await self._final_answer(run, self.prompts.render_sketch(sketch), "sketch")

    async def _update_sketch(
        self, run: _QuestionRun, sketch: SteeringSketch, *, fills: int
    ) -> SteeringSketch:
        """Update variant (A.3): the LLM writes the sketch again in the light of the evidence
        (slots removed or inserted, filled slots' irrelevant content deleted and conflicts
        resolved), and `revision.revise_sketch` applies it by heading. Output it cannot apply
        (cut off at the token cap, no section, nothing left) keeps the sketch as it stood and
        is recorded (``SeekResult.updates``, with the raw output, and a note)."""
        s = self.settings
        request = self.prompts.update(run.q.question, self.prompts.render_sketch(sketch))
        response = await self._generate(run, "update", request)
        problem = None
        revision = None
        if response.finish_reason == "length":
            problem = (
                "cut off at the token cap (rewrite_max_tokens): a sketch cut short would "
                "drop its last sections"
            )
        else:
            sections = parse_revised_sections(response.text)
            revision = revise_sketch(
                sketch, sections, max_gists=s.max_gists, slot_chars=s.slot_chars
            )
            if revision is None:
                problem = "no section with a heading in the output"
        if revision is None:
            run.result.updates.append(
                SketchUpdate(after_fill=fills, malformed=problem, raw_output=response.text)
            )
            run.result.notes.append(f"update after fill {fills} not applied ({problem}): kept")
            return sketch
        run.result.updates.append(
            SketchUpdate(
                after_fill=fills,
                added=list(revision.added),
                dropped=list(revision.dropped),
                dropped_filled=list(revision.dropped_filled),
                edited=list(revision.edited),
                over_cap=list(revision.over_cap),
            )
        )
        if revision.changed:
            run.result.notes.append(
                f"update after fill {fills}: added {list(revision.added)}, dropped "
                f"{list(revision.dropped + revision.dropped_filled)}, edited "
                f"{list(revision.edited)}"
            )
        if revision.over_cap:
            run.result.notes.append(
                f"update after fill {fills}: not added (max_gists {s.max_gists}): "
                f"{list(revision.over_cap)}"
            )
        if revision.ignored_text:
            run.result.notes.append(
                f"update after fill {fills}: text under open gists not taken (evidence comes "
                f"from retrieval): {list(revision.ignored_text)}"
            )
        return revision.sketch

    async def _fill_parallel(self, run: _QuestionRun, sketch: SteeringSketch) -> None:
        """Parallel Filling: every sub-query from the initial sketch, one batched search, and
        ONE evidence call that fills all slots in one context.

        The sub-queries are written by concurrent calls that each see only the initial sketch
        (the same information as one call writing them all, with the sequential sub-query
        prompt and its cleaning kept). The fill reply is split by heading
        (`output_parsing.split_sections`); a slot the reply leaves out is filled empty, so it
        shows as "no evidence found" rather than borrowing a neighbour's text.
        """
        initial = sketch
        context = self.prompts.render_sketch(initial)
        steps = list(
            await gather_settled(
                *(
                    self._subquery(run, context, "sketch", gist.heading, t)
                    for t, gist in enumerate(initial.gists)
                )
            )
        )
        found = await self._search_many(run, steps)
        for step in steps:
            self._record_step(run, step)
        sections = [
            SectionSearch(gist.heading, step.sub_query, docs)
            for gist, step, docs in zip(initial.gists, steps, found, strict=True)
        ]
        request = self.prompts.evidence_all(run.q.question, context, sections)
        reply = self.prompts.evidence_all_reply_prefix(sections)
        reply += (await self._generate(run, "evidence", request)).text
        texts = split_sections(reply, initial.headings)
        if len(texts) == 1 and texts[0] is None:
            texts = [reply]  # one section: the whole reply is its evidence, heading or not
        missing = [initial.gists[t].heading for t, text in enumerate(texts) if text is None]
        if missing:
            run.result.notes.append(f"parallel fill wrote nothing under {missing}")
        for t, text in enumerate(texts):
            sketch = sketch.fill(t, clean_evidence(text, max_chars=self.settings.slot_chars))
        run.result.sketch = sketch
        await self._final_answer(run, self.prompts.render_sketch(sketch), "sketch")

    async def _search_many(
        self, run: _QuestionRun, steps: list[SubQueryStep]
    ) -> list[list[RetrievedDoc]]:
        """One batched request (``_msearch`` for BM25) for several steps' sub-queries; fails
        as ``_search`` does (every step without documents, or the question)."""
        assert self.retriever is not None
        started = time.perf_counter()
        queries = [step.sub_query for step in steps]
        try:
            found = await asyncio.wait_for(
                asyncio.to_thread(self.retriever.retrieve_many, queries, self.settings.top_k),
                timeout=self.settings.retrieval_timeout_s,
            )
        except RETRIEVAL_FAILURES as exc:
            error = note_failed_search(exc, queries, run.q.id)
            found = [[] for _ in steps]
            for step in steps:
                step.error = error
        elapsed_ms = (time.perf_counter() - started) * 1000
        for step, docs in zip(steps, found, strict=True):
            step.retrieval_ms = elapsed_ms / len(steps)
            step.retrieved_ids = [doc.id for doc in docs]
        return found

    def _plan_context(self, plan: SteeringSketch, log: SteeringSketch | None) -> str:
        """The sketch as a plan, with the evidence found so far concatenated after it."""
        found = [g.slot for g in log.gists if g.slot] if log is not None else []
        return self.prompts.render_plan(plan, found)

    async def _fill_plan(self, run: _QuestionRun, plan: SteeringSketch) -> None:
        """Plan: the sketch steers as a plan; evidence is concatenated, not put in slots, and
        the LLM decides when it is enough (capped at ``max_steps``).

        Step k aims at the plan's k-th heading (a base model needs a concrete target); past the
        end of the plan, at whatever the evidence does not cover yet. The result's sketch is
        the evidence log (one ``Step k`` entry per retrieval, under the plan's title); the plan
        itself stays in ``initial_sketch_raw``.
        """

        def target(k: int) -> str:
            if k < len(plan.gists):
                return plan.gists[k].heading
            return "the part of the plan that the evidence so far does not cover"

        log = await self._retrieve_until_enough(
            run, plan.title, "plan", target, lambda log: self._plan_context(plan, log)
        )
        await self._final_answer(run, self._plan_context(plan, log), "plan")

    async def _fill_from_one_retrieval(self, run: _QuestionRun, sketch: SteeringSketch) -> None:
        """w/o iterative retrieval: one search with the question feeds every slot."""
        docs = await self._retrieve(run, run.q.question, None)
        for t, gist in enumerate(sketch.gists):
            context = self.prompts.render_sketch(sketch)
            evidence = await self._evidence(
                run, run.q.question, docs, context, "sketch", gist.heading
            )
            sketch = sketch.fill(t, evidence)
            run.result.sketch = sketch
        await self._final_answer(run, self.prompts.render_sketch(sketch), "sketch")

    async def _without_initialisation(self, run: _QuestionRun) -> None:
        """w/o initialisation: retrieve-and-summarise steps with no sketch to steer, until the
        LLM says the notes are enough (capped at ``max_steps``)."""

        # Before the first step, one open "Notes" slot: a base model shown "(no evidence
        # found)" answered the evidence prompt with an empty line.
        nothing_yet = SteeringSketch.from_headings(run.q.question, ["Notes"])

        def notes_context(log: SteeringSketch | None) -> str:
            return self.prompts.render_sketch(log or nothing_yet)

        log = await self._retrieve_until_enough(
            run,
            run.q.question,
            "notes",
            lambda k: "what to look up next to answer the question",
            notes_context,
        )
        await self._final_answer(run, notes_context(log), "notes")

    async def _retrieve_until_enough(
        self,
        run: _QuestionRun,
        title: str,
        kind: ContextKind,
        target_of_step: Callable[[int], str],
        render: Callable[[SteeringSketch | None], str],
    ) -> SteeringSketch | None:
        """Sub-query, search and summary steps until the LLM answers `output_parsing.ENOUGH`
        or ``max_steps`` is reached; returns the log of ``Step k`` summaries.

        The first step is not offered the stop: with no evidence yet there is nothing to
        judge, and the variants compared with SEEK should retrieve at least once.
        """
        cap = self.settings.max_steps
        log: SteeringSketch | None = None
        for k in range(cap):
            context, target = render(log), target_of_step(k)
            step = await self._next_subquery(run, context, kind, target, None, allow_stop=k > 0)
            if step is None:
                run.result.notes.append(f"stopped after {k} steps: the LLM judged it enough")
                return log
            docs = await self._search(run, step)
            self._record_step(run, step)
            evidence = await self._evidence(run, step.sub_query, docs, context, kind, target)
            entry = Gist(heading=f"Step {k + 1}", slot=evidence.strip())
            log = SteeringSketch(
                title=title, gists=(*(log.gists if log is not None else ()), entry)
            )
            run.result.sketch = log
            self._after_iteration(run, render(log))
        run.result.step_cap_reached = True
        run.result.notes.append(
            f"{self.settings.variant}: stopped at the cap of {cap} steps (max_steps) before "
            "the LLM said the evidence was enough"
        )
        return log

    async def _fill_by_rewriting_page(self, run: _QuestionRun, sketch: SteeringSketch) -> None:
        """The reference code's approach, for comparison only: the LLM rewrites the whole
        page at each step and the page it wrote is carried forward as-is."""
        page = self.prompts.render_sketch(sketch)
        for t, gist in enumerate(sketch.gists):
            step = await self._subquery(run, page, "sketch", gist.heading, t)
            docs = await self._search(run, step)
            self._record_step(run, step)
            request = self.prompts.rewrite_page(
                run.q.question, step.sub_query, docs, page, gist.heading
            )
            response = await self._generate(run, "evidence", request)
            page = response.text.strip() or page
            sketch = sketch.fill(t, clean_evidence(_section_of(page, gist.heading)))
            run.result.sketch = sketch
            self._after_iteration(run, page)
        await self._final_answer(run, page, "sketch")


def _section_of(page: str, heading: str) -> str:
    """The text under ``heading`` in a rewritten page (``## heading`` or ``- heading:``)."""
    lines = page.splitlines()
    key = heading.casefold()
    for i, line in enumerate(lines):
        stripped = line.strip().lstrip("#-* ").strip()
        if stripped.casefold().startswith(key):
            rest = stripped[len(heading) :].lstrip(" :")
            body = [rest] if rest else []
            for following in lines[i + 1 :]:
                if following.lstrip().startswith(("#", "- ")):
                    break
                body.append(following)
            return "\n".join(body)
    return page
