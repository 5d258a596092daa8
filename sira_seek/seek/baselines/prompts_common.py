"""Request building both baseline prompt families share: sampling from `SeekSettings`, and
the two request shapes (a chat turn for instruction models, a raw few-shot completion for
base models such as the CPU default)."""

from __future__ import annotations

from sira_seek.llm.request import ChatMessage, LLMRequest

from ..settings import SeekSettings


def flat(text: str) -> str:
    """One line: few-shot prompts show every field on one line, as their examples do."""
    return " ".join(text.split())


def sampling(settings: SeekSettings) -> dict[str, object]:
    """The sampling SEEK uses, so a baseline differs from it only in its loop."""
    return {
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "top_k": settings.top_k_sampling,
        "seed": settings.seed,
    }


def chat_request(
    settings: SeekSettings, system: str, user: str, *, max_tokens: int, stop: tuple[str, ...] = ()
) -> LLMRequest:
    return LLMRequest(
        messages=(
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=user),
        ),
        max_tokens=max_tokens,
        stop=stop,
        chat_template_kwargs=settings.template_kwargs(),
        **sampling(settings),  # type: ignore[arg-type]
    )


def completion_request(
    settings: SeekSettings, prompt: str, *, max_tokens: int, stop: tuple[str, ...]
) -> LLMRequest:
    return LLMRequest(
        prompt=prompt,
        max_tokens=max_tokens,
        stop=stop,
        **sampling(settings),  # type: ignore[arg-type]
    )
