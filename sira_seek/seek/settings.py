"""SEEK run settings: typed, validated, side-effect free, overridable by ``SIRA_SEEK_SEEK_*``.

Defaults follow the SEEK paper (top-5 retrieval, 2..8 gists, the reference sampling) with the
small output caps the reference lacked: a sub-query is one line, a slot one paragraph.
"""

from __future__ import annotations

import os
from typing import Literal, get_args

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

SeekMethod = Literal[
    "seek", "vanilla-rag", "vanilla-llm", "iter-retgen", "rewoo", "rewoo-sequential"
]
"""SEEK itself, or a baseline it is compared with (`sira_seek.seek.baselines`, over the same
retriever and LLM): the one-shot ``vanilla-llm`` and ``vanilla-rag``, ReWOO as the SEEK paper
runs it (``rewoo``: every sub-query planned in one pass, all searched in parallel), the
iterative Iter-RetGen, and ``rewoo-sequential`` (ReWOO's steps run in order, each with earlier
evidence substituted: not the SEEK paper's baseline, kept to compare). The one list of method
names: `METHODS`, the CLI's ``--method`` and the HTTP API's ``method`` come from it."""

SeekVariant = Literal[
    "sequential", "parallel", "plan", "update", "no-iter-retrieval", "no-init", "rewrite-page"
]
"""``sequential`` is the method; the others are the paper's ablations, plus ``rewrite-page``
(the reference code's whole-page rewrite, kept only to measure what slot filling saves)."""

PromptStyle = Literal["auto", "chat", "fewshot"]
"""``chat`` for instruction models, ``fewshot`` for base models continuing solved examples;
``auto`` picks ``fewshot`` for in-process llama.cpp models and ``chat`` for servers."""

METHODS: tuple[str, ...] = get_args(SeekMethod)
VARIANTS: tuple[str, ...] = get_args(SeekVariant)

_RENAMED_ENV = {"SIRA_SEEK_SEEK_ITER_RETGEN_ITERATIONS": "SIRA_SEEK_SEEK_ITER_RETGEN_ROUNDS"}
"""Variables that were renamed: set, they would be ignored silently, so they fail instead."""


class SeekSettings(BaseSettings):
    """How one SEEK run retrieves, prompts and samples."""

    model_config = SettingsConfigDict(env_prefix="SIRA_SEEK_SEEK_", extra="ignore", frozen=True)

    method: SeekMethod = "seek"
    variant: SeekVariant = "sequential"
    prompt_style: PromptStyle = "auto"
    top_k: int = Field(default=5, ge=1, le=50, description="Documents retrieved per sub-query")
    min_gists: int = Field(default=2, ge=1)
    max_gists: int = Field(default=8, ge=1)
    max_steps: int = Field(
        default=5,
        ge=1,
        le=16,
        description="Cap on retrieval steps of the plan and no-init variants, which otherwise "
        "stop when the LLM says the evidence is enough",
    )
    doc_chars: int = Field(
        default=600, ge=50, description="Each retrieved document is cut to this many characters"
    )
    evidence_chars: int = Field(
        default=3000,
        ge=50,
        description="The documents one prompt shows share this many characters (each at most "
        "doc_chars): the default top-5 keeps 600 each, a larger top_k shortens them so the "
        "prompt still fits the model's context; raise it for a model with a long context",
    )
    slot_chars: int = Field(
        default=700, ge=50, description="A filled slot is cut to this many characters"
    )
    sketch_max_tokens: int = Field(default=256, ge=16)
    subquery_max_tokens: int = Field(default=64, ge=8)
    slot_max_tokens: int = Field(default=256, ge=16)
    answer_max_tokens: int = Field(default=256, ge=8)
    rewrite_max_tokens: int = Field(default=1024, ge=64)
    subquery_retries: int = Field(default=1, ge=0, le=3)
    max_subquery_words: int = Field(default=24, ge=3)
    temperature: float = Field(default=0.7, ge=0.0)
    top_p: float | None = Field(default=0.8, gt=0.0, le=1.0)
    top_k_sampling: int | None = Field(default=20, ge=0)
    seed: int | None = 66
    retrieval_timeout_s: float = Field(default=30.0, gt=0)
    iter_retgen_rounds: int = Field(
        default=4,
        ge=1,
        le=10,
        description="Iter-RetGen's T: retrieve-generate rounds (4, as the SEEK paper's analysis "
        "of Iter-RetGen over its rounds, A.7)",
    )
    iter_retgen_query_words: int = Field(
        default=128,
        ge=8,
        description="Iter-RetGen: words of the previous generation kept in the next search",
    )
    rewoo_max_steps: int = Field(
        default=5, ge=1, le=12, description="ReWOO: plan steps run at most (later ones dropped)"
    )
    thinking: bool = Field(
        default=False,
        description="Qwen3-style thinking mode; off sends enable_thinking=false to the chat "
        "template (vLLM, llama.cpp server), as the SEEK reference runs do",
    )
    chat_template_kwargs: dict[str, object] | None = Field(
        default=None,
        description="Extra chat-template variables; `thinking` sets enable_thinking over them",
    )

    def template_kwargs(self) -> dict[str, object]:
        """What chat requests send as ``chat_template_kwargs``.

        ``enable_thinking`` is always set, from ``thinking``: Qwen3's template thinks unless
        told not to, and a thinking preamble does not fit the small output caps (a sub-query
        has 64 tokens). Templates without the variable ignore it. Turn thinking on only with
        caps raised to match (the ``*_max_tokens`` settings).
        """
        return {**(self.chat_template_kwargs or {}), "enable_thinking": self.thinking}

    @model_validator(mode="after")
    def _renamed_variables(self) -> SeekSettings:
        names = {name.upper() for name in os.environ}
        for old, new in _RENAMED_ENV.items():
            if old in names:
                raise ValueError(f"{old} was renamed {new}: set that one instead")
        return self

    @model_validator(mode="after")
    def _gist_bounds(self) -> SeekSettings:
        if self.max_gists < self.min_gists:
            raise ValueError(f"max_gists ({self.max_gists}) < min_gists ({self.min_gists})")
        return self


def resolve_prompt_style(style: PromptStyle, llm_spec: str | None) -> Literal["chat", "fewshot"]:
    """``auto``: base models run in-process (``llamacpp:``) get few-shot prompts, servers chat."""
    if style != "auto":
        return style
    return "fewshot" if (llm_spec or "").strip().lower().startswith("llamacpp:") else "chat"
