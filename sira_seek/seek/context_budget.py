"""Sizing a question's evidence to the model's context window before its first call.

Why: the documents a prompt shows are fixed by the request before anything runs: ``top_k``,
the evidence budgets (``doc_chars``, ``evidence_chars``) and how many searches one prompt of
the method shows at once (ReWOO's Solver every step's, Parallel Filling every gist's). When
the window is known (`sira_seek.llm.context_window.context_window_of`: vLLM's
``max_model_len``, llama.cpp's ``n_ctx``, ``SIRA_SEEK_LLM_CONTEXT_WINDOW``), the largest prompt
of the method is estimated with every document at its full share, and a question whose
estimate does not fit is run from the start with the budgets halved (as `context_fit` does
after a refusal, at most ``FIT_ROUNDS`` times), then with fewer documents per search; one
that cannot fit even so (a question longer than the window, a window smaller than the prompt
itself) is refused before any search or LLM call, naming the field to lower. schemathesis
found ``/ask`` with rewoo-sequential and top_k 48 refused by the embedded 2,048-token model
after three halvings: 48 documents of at least 50 characters in five steps.

What the model writes itself (the sketch, filled slots, a plan) is bounded by its output caps,
not by the request, and is not estimated: counting eight full slots would shrink every
default SEEK question on a small model, whose prompts fit today. Those stay on the refusal
safety net (`context_fit`). A question whose estimate fits is never touched, so prompts that
fit are byte-identical.

The estimate counts characters, not tokens (no tokenizer call per question, the same for
every backend): ``CHARS_PER_TOKEN`` is conservative for English text (Gemma's and Qwen's
tokenizers average about 4), and each numbered document line adds ``DOC_LINE_TOKENS``.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

from sira_seek.input_errors import InputError
from sira_seek.llm.request import LLMRequest

from .baselines.iter_retgen_prompts import IterRetGenPrompts
from .baselines.rewoo_prompts import ReWOOPrompts, ReWOOSequentialPrompts, SolvedStep
from .baselines.vanilla_prompts import VanillaPrompts
from .context_fit import FIT_ROUNDS, scaled_settings
from .prompts import MIN_DOC_SHARE, SectionSearch, make_prompts
from .settings import SeekSettings
from .sketch import SteeringSketch

CHARS_PER_TOKEN = 3.0
"""Characters per token the estimate assumes: fewer than English text averages, so a prompt
estimated to fit does (names, numbers and punctuation tokenize denser than prose)."""

DOC_LINE_TOKENS = 8
"""Tokens a document line adds beyond its text: ``[12] ``, the `` ...`` of a cut, the newline."""

MESSAGE_TOKENS = 8
"""Tokens a chat template adds around each message (role markers, turn separators)."""


REPLY_SHARE = 4
"""The reply is given its cap (``answer_max_tokens``, ...) but at most a quarter of the window:
Parallel Filling's one reply for eight slots (2,048 tokens) would otherwise leave a 2,048-token
model no room at all, and llama.cpp cuts a reply at the window's end rather than refusing it."""


class PromptBudgetError(InputError):
    """A question whose prompts cannot fit the model's context window whatever the evidence;
    ``field`` names what to lower (``question``, or ``llm``: a model with a longer window).
    An `InputError`: HTTP 422, CLI exit 2, before any search or LLM call."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class PromptBudget(NamedTuple):
    """The evidence a question runs with: budgets at ``scale`` of the settings', ``top_k``
    documents per search."""

    scale: float
    top_k: int

    def settings(self, settings: SeekSettings) -> SeekSettings:
        scaled = scaled_settings(settings, self.scale) if self.scale < 1 else settings
        return scaled.model_copy(update={"top_k": self.top_k})

    def note(self, settings: SeekSettings, window: int) -> str:
        """What the record says about a question sized up front."""
        sized = self.settings(settings)
        fewer = (
            f", {self.top_k} documents per search instead of top_k {settings.top_k}"
            if self.top_k < settings.top_k
            else ""
        )
        return (
            f"sized up front to the model's context window of {window} tokens: evidence at "
            f"{self.scale:g} of its length (doc_chars {sized.doc_chars}, evidence_chars "
            f"{sized.evidence_chars}, slot_chars {sized.slot_chars}){fewer}"
        )


def estimate_tokens(text: str) -> int:
    """Tokens ``text`` takes at most, by ``CHARS_PER_TOKEN``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def request_tokens(request: LLMRequest) -> int:
    """The estimated prompt of ``request``: its text, or every message and its markers."""
    if request.prompt is not None:
        return estimate_tokens(request.prompt)
    messages = request.messages or ()
    return sum(estimate_tokens(m.content) + MESSAGE_TOKENS for m in messages)


def document_tokens(settings: SeekSettings, top_k: int) -> int:
    """One search's documents as `prompts.render_docs` shows them, each at its full share."""
    share = max(MIN_DOC_SHARE, min(settings.doc_chars, settings.evidence_chars // top_k))
    return top_k * (math.ceil(share / CHARS_PER_TOKEN) + DOC_LINE_TOKENS)


def largest_prompt(
    settings: SeekSettings, style: Literal["chat", "fewshot"], question: str
) -> tuple[LLMRequest, int]:
    """The method's prompt that shows the most documents, built without any (the question,
    the instructions and examples, its output cap), and how many searches' documents it
    shows. The model's own writing in it (headings, sub-queries) is left empty."""
    s = settings
    if s.method in ("rewoo", "rewoo-sequential"):
        rewoo = ReWOOSequentialPrompts if s.method == "rewoo-sequential" else ReWOOPrompts
        steps = [SolvedStep("", f"#E{i} = Search[]", "") for i in range(1, s.rewoo_max_steps + 1)]
        return rewoo(s, style).solve(question, steps), s.rewoo_max_steps
    if s.method == "iter-retgen":
        return IterRetGenPrompts(s, style).generate(question, []), 1
    if s.method == "vanilla-llm":
        return VanillaPrompts(s, style).answer(question, None), 0
    if s.method == "vanilla-rag":
        return VanillaPrompts(s, style).answer(question, []), 1
    prompts = make_prompts(style, s)
    context = prompts.render_sketch(SteeringSketch.from_headings(question, ["-"]))
    if s.variant == "parallel":
        sections = [SectionSearch("", "", [])] * s.max_gists
        return prompts.evidence_all(question, context, sections), s.max_gists
    if s.variant == "rewrite-page":
        return prompts.rewrite_page(question, question, [], context, "-"), 1
    kind: Literal["sketch", "plan", "notes"] = (
        "plan" if s.variant == "plan" else "notes" if s.variant == "no-init" else "sketch"
    )
    return prompts.evidence(question, question, [], context, kind, "-"), 1


def fit_budget(
    settings: SeekSettings, style: Literal["chat", "fewshot"], question: str, window: int
) -> PromptBudget:
    """The largest evidence with which the method's largest prompt fits ``window`` tokens:
    the settings' own when they fit, else the budgets halved (``FIT_ROUNDS`` times at most),
    then fewer documents per search at the smallest budgets. Raises `PromptBudgetError` when
    even one document per search does not fit."""
    request, blocks = largest_prompt(settings, style, question)
    reply = min(request.max_tokens, window // REPLY_SHARE)
    fixed = request_tokens(request) + reply
    scaled = settings
    for round_ in range(FIT_ROUNDS + 1):
        scale = 0.5**round_
        scaled = scaled_settings(settings, scale) if round_ else settings
        if fixed + blocks * document_tokens(scaled, settings.top_k) <= window:
            return PromptBudget(scale, settings.top_k)
    for top_k in range(settings.top_k - 1, 0, -1):
        if fixed + blocks * document_tokens(scaled, top_k) <= window:
            return PromptBudget(0.5**FIT_ROUNDS, top_k)
    least = fixed + blocks * document_tokens(scaled, 1)
    asked = estimate_tokens(question)
    if least - asked + estimate_tokens("a short question?") <= window:
        room = window - (least - asked)
        raise PromptBudgetError(
            f"about {asked:,} tokens ({len(question):,} characters) do not fit the model's "
            f"context window of {window:,} tokens with method {settings.method!r}: at most "
            f"about {int(room * CHARS_PER_TOKEN):,} characters do, with one document per search",
            field="question",
        )
    raise PromptBudgetError(
        f"the model's context window of {window:,} tokens is too small for method "
        f"{settings.method!r}: its largest prompt needs about {least:,} tokens with one "
        f"document per search ({reply:,} of them for the reply); use a model with "
        "a longer context window (or a method whose prompts are smaller, e.g. vanilla-rag)",
        field="llm",
    )
