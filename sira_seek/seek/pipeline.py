"""SEEK for one question: sketch, fill each gist's slot from retrieval, answer.

Only the sketch grows from step to step: a sub-query's reasoning and text never reach a later
prompt, and the evidence for gist t is written into slot t in code. The paper's ablations and
the two baselines share the same stages, so they differ only in how the stages are combined.
Async throughout, so many questions can share one LLM server while their searches run in
worker threads.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Literal

from sira_seek.llm.client import LLMClient
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse

from .baselines import BASELINE_METHODS, BaselineMethod, make_baseline
from .output_parsing import (
    clean_evidence,
    clean_subquery,
    extract_answer,
    sketch_markdown,
)
from .prompts import ContextKind, SeekPrompts, make_prompts, render_docs
from .results import QuestionInput, SeekResult, Stage, SubQueryStep
from .retrieval import RetrievedDoc, Retriever
from .settings import SeekSettings
from .sketch import Gist, SteeringSketch, fallback_sketch, parse_sketch, try_parse_sketch


class RetrieverRequiredError(ValueError):
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
    ) -> None:
        self.llm = llm
        self.retriever = retriever
        self.settings = settings or SeekSettings()
        self.prompts = prompts or make_prompts(prompt_style, self.settings)
        if self.settings.method != "vanilla-llm" and retriever is None:
            raise RetrieverRequiredError(
                f"method {self.settings.method!r} retrieves: give a retriever (e.g. BM25Retriever)"
            )
        # Iter-RetGen and ReWOO have loops of their own (sira_seek.seek.baselines).
        self.baseline: BaselineMethod | None = None
        if self.settings.method in BASELINE_METHODS:
            assert retriever is not None
            style: Literal["chat", "fewshot"] = (
                "fewshot" if self.prompts.style == "fewshot" else "chat"
            )
            self.baseline = make_baseline(
                self.settings.method, llm, retriever, self.settings, style
            )

    # -- public ----------------------------------------------------------------------------
    async def answer(self, question: QuestionInput | str) -> SeekResult:
        """Run the configured method on one question. LLM failures raise; retrieval failures
        are recorded on the step and the step continues without documents."""
        if isinstance(question, str):
            question = QuestionInput(id="q0", question=question)
        if self.baseline is not None:
            return await self.baseline.answer(question)
        run = _QuestionRun(question, self.settings)
        s = self.settings
        if s.method == "vanilla-llm":
            await self._final_answer(run, None, "documents")
        elif s.method == "vanilla-rag":
            docs = await self._retrieve(run, question.question, None)
            await self._final_answer(run, render_docs(docs, s.doc_chars), "documents")
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
        response = await self.llm.generate(request)
        run.result.usage.add(stage, response)
        return response

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
        s = self.settings
        # A retry of a deterministic few-shot completion would repeat itself.
        retry_useful = self.prompts.style == "chat" or s.temperature > 0
        tries = 1 + (s.subquery_retries if retry_useful else 0)
        raw, cleaned, attempts = "", None, 0
        for attempt in range(tries):
            attempts = attempt + 1
            request = self.prompts.subquery(run.q.question, context, kind, target, attempt=attempt)
            raw = (await self._generate(run, "subquery", request)).text
            cleaned = clean_subquery(raw, max_words=s.max_subquery_words)
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

    async def _search(self, step: SubQueryStep) -> list[RetrievedDoc]:
        assert self.retriever is not None
        started = time.perf_counter()
        try:
            docs = await asyncio.wait_for(
                asyncio.to_thread(self.retriever.retrieve, step.sub_query, self.settings.top_k),
                timeout=self.settings.retrieval_timeout_s,
            )
        except Exception as exc:  # one failed search costs one step's evidence, not the run
            step.error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            docs = []
        step.retrieval_ms = (time.perf_counter() - started) * 1000
        step.retrieved_ids = [doc.id for doc in docs]
        return docs

    async def _retrieve(
        self, run: _QuestionRun, query: str, gist: int | None
    ) -> list[RetrievedDoc]:
        step = SubQueryStep(gist_index=gist, sub_query=query, retrieved_ids=[])
        docs = await self._search(step)
        self._record_step(run, step)
        return docs

    def _record_step(self, run: _QuestionRun, step: SubQueryStep) -> None:
        run.result.steps.append(step)
        run.result.timings.retrieval_s += step.retrieval_ms / 1000

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

    async def _final_answer(
        self, run: _QuestionRun, context: str | None, kind: ContextKind
    ) -> None:
        response = await self._generate(
            run, "answer", self.prompts.answer(run.q.question, context, kind)
        )
        raw = response.text
        if self.prompts.style == "fewshot":
            raw = "<answer>" + raw  # the prompt ended with the opening tag
        run.result.raw_answer = raw
        run.result.answer = extract_answer(raw)

    async def _gist_step(
        self, run: _QuestionRun, sketch: SteeringSketch, t: int
    ) -> tuple[SubQueryStep, list[RetrievedDoc], str]:
        """Sub-query for gist t from (question, current sketch), then its documents."""
        context = self.prompts.render_sketch(sketch)
        step = await self._subquery(run, context, "sketch", sketch.gists[t].heading, t)
        docs = await self._search(step)
        return step, docs, context

    # -- SEEK and its variants -------------------------------------------------------------
    async def _fill_sequential(self, run: _QuestionRun, sketch: SteeringSketch) -> None:
        for t in range(len(sketch.gists)):
            step, docs, context = await self._gist_step(run, sketch, t)
            self._record_step(run, step)
            heading = sketch.gists[t].heading
            evidence = await self._evidence(run, step.sub_query, docs, context, "sketch", heading)
            sketch = sketch.fill(t, evidence)
            if self.settings.variant == "update" and t + 1 < len(sketch.gists):
                sketch = await self._update_headings(run, sketch, t + 1)
            run.result.sketch = sketch
        await self._final_answer(run, self.prompts.render_sketch(sketch), "sketch")

    async def _fill_parallel(self, run: _QuestionRun, sketch: SteeringSketch) -> None:
        """Every sub-query and slot from the initial sketch at once (no step sees another);
        the sub-queries go to the cluster as one batch."""
        initial = sketch
        context = self.prompts.render_sketch(initial)
        steps = list(
            await asyncio.gather(
                *(
                    self._subquery(run, context, "sketch", gist.heading, t)
                    for t, gist in enumerate(initial.gists)
                )
            )
        )
        found = await self._search_many(steps)
        evidences = await asyncio.gather(
            *(
                self._evidence(run, step.sub_query, docs, context, "sketch", gist.heading)
                for step, docs, gist in zip(steps, found, initial.gists, strict=True)
            )
        )
        for t, (step, evidence) in enumerate(zip(steps, evidences, strict=True)):
            self._record_step(run, step)
            sketch = sketch.fill(t, evidence)
        run.result.sketch = sketch
        await self._final_answer(run, self.prompts.render_sketch(sketch), "sketch")

    async def _search_many(self, steps: list[SubQueryStep]) -> list[list[RetrievedDoc]]:
        """One batched request (``_msearch`` for BM25) for several steps' sub-queries."""
        assert self.retriever is not None
        started = time.perf_counter()
        queries = [step.sub_query for step in steps]
        try:
            found = await asyncio.wait_for(
                asyncio.to_thread(self.retriever.retrieve_many, queries, self.settings.top_k),
                timeout=self.settings.retrieval_timeout_s,
            )
        except Exception as exc:  # as in _search: the steps go on without documents
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            found = [[] for _ in steps]
            for step in steps:
                step.error = error
        elapsed_ms = (time.perf_counter() - started) * 1000
        for step, docs in zip(steps, found, strict=True):
            step.retrieval_ms = elapsed_ms / len(steps)
            step.retrieved_ids = [doc.id for doc in docs]
        return found

    @staticmethod
    def _plan_context(sketch: SteeringSketch) -> str:
        """The sketch as a plan, with the evidence found so far concatenated after it."""
        plan = "\n".join(f"{i}. {g.heading}" for i, g in enumerate(sketch.gists, start=1))
        found = " ".join(g.slot for g in sketch.gists if g.slot)
        return f"Plan:\n{plan}\nEvidence so far: {found or '(none yet)'}"

    async def _fill_plan(self, run: _QuestionRun, sketch: SteeringSketch) -> None:
        for t, gist in enumerate(sketch.gists):
            context = self._plan_context(sketch)
            step = await self._subquery(run, context, "plan", gist.heading, t)
            docs = await self._search(step)
            self._record_step(run, step)
            evidence = await self._evidence(
                run, step.sub_query, docs, context, "plan", gist.heading
            )
            sketch = sketch.fill(t, evidence)
            run.result.sketch = sketch
        await self._final_answer(run, self._plan_context(sketch), "plan")

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
        """w/o initialisation: iterative retrieve-and-summarise steps with no sketch to steer."""
        notes = SteeringSketch.from_headings(
            run.q.question,
            [f"Step {i}" for i in range(1, self.settings.no_init_steps + 1)],
        )
        for t in range(len(notes.gists)):
            filled = SteeringSketch(
                title=notes.title,
                gists=tuple(g for g in notes.gists if g.is_filled)
                or (Gist(heading="Nothing found yet", slot=""),),
            )
            context = self.prompts.render_sketch(filled)
            target = "what to look up next to answer the question"
            step = await self._subquery(run, context, "notes", target, t)
            docs = await self._search(step)
            self._record_step(run, step)
            evidence = await self._evidence(run, step.sub_query, docs, context, "notes", target)
            notes = notes.fill(t, evidence)
            run.result.sketch = notes
        await self._final_answer(run, self.prompts.render_sketch(notes), "notes")

    async def _update_headings(
        self, run: _QuestionRun, sketch: SteeringSketch, first_open: int
    ) -> SteeringSketch:
        """Update variant: let the LLM re-aim the still-empty gists at what is now missing."""
        request = self.prompts.update(run.q.question, self.prompts.render_sketch(sketch))
        response = await self._generate(run, "update", request)
        text = sketch_markdown(
            response.text, sketch.title, one_line=self.prompts.style == "fewshot"
        )
        if not text.lstrip().startswith("# "):
            text = f"# {sketch.title}\n{text}"
        revised = try_parse_sketch(text, max_gists=self.settings.max_gists)
        if revised is None:
            run.result.notes.append(f"update after gist {first_open} did not parse: kept")
            return sketch
        open_count = len(sketch.gists) - first_open
        headings = list(revised.headings[:open_count])
        headings += [g.heading for g in sketch.gists[first_open + len(headings) :]]
        gists = (*sketch.gists[:first_open], *(Gist(heading=h) for h in headings))
        return SteeringSketch(title=sketch.title, gists=gists)

    async def _fill_by_rewriting_page(self, run: _QuestionRun, sketch: SteeringSketch) -> None:
        """The reference code's approach, for comparison only: the LLM rewrites the whole
        page at each step and the page it wrote is carried forward as-is."""
        page = self.prompts.render_sketch(sketch)
        for t, gist in enumerate(sketch.gists):
            step = await self._subquery(run, page, "sketch", gist.heading, t)
            docs = await self._search(step)
            self._record_step(run, step)
            request = self.prompts.rewrite_page(
                run.q.question, step.sub_query, docs, page, gist.heading
            )
            response = await self._generate(run, "evidence", request)
            page = response.text.strip() or page
            sketch = sketch.fill(t, clean_evidence(_section_of(page, gist.heading)))
            run.result.sketch = sketch
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
