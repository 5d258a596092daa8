"""In-process llama.cpp backend: the CPU default for laptops, no server to run.

A ``llama_cpp.Llama`` is not thread-safe and uses every core it is given, so calls are
serialised behind a lock and run in a worker thread to keep the event loop free. Constrained
decoding uses llama.cpp's JSON-schema grammar, so answers to schema requests always parse
(greedy ones checked argmax first, ``llamacpp_greedy_grammar``).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sira_seek.llm.client import generate_many_bounded
from sira_seek.llm.errors import BackendUnavailableError, ContextTooLongError, MalformedOutputError
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse, TokenUsage
from sira_seek.llm.scoring import TokenLogprob
from sira_seek.llm.structured import parse_json_output

_LOAD_LOCK = threading.Lock()
"""One model load at a time in this process. llama-cpp-python loads with ``verbose=False``
inside ``suppress_stdout_stderr``, which points the process's file descriptors 1 and 2 at
/dev/null and back with ``dup2``: two loads in two threads (``eval qa --closed-book
--judge-llm``: three clients of one spec) can restore them in the wrong order and leave stdout
on /dev/null for good, so a run printed nothing and exited 0 (seen in CI)."""


def llama_cpp_available() -> bool:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return False
    return True


class LlamaCppClient:
    """``LLMClient`` running a GGUF model in this process with llama-cpp-python."""

    backend = "llamacpp"

    def __init__(
        self,
        *,
        model_path: Path | str,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        malformed_retries: int = 2,
    ) -> None:
        self.model_path = Path(model_path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, os.cpu_count() or 1)
        self.malformed_retries = malformed_retries
        self._lock = threading.Lock()
        self._llama: Any = None
        self._scorer: Any = None
        self._grammars: dict[str, Any] = {}

    async def model_name(self) -> str:
        return self.model_path.name

    async def context_window(self) -> int:
        """``WindowedLLM``: the ``n_ctx`` the model is loaded with (prompt and reply share it;
        llama.cpp refuses a longer prompt and cuts the reply at the window's end)."""
        return self.n_ctx

    def _model(self) -> Any:
        if self._llama is None:
            try:
                # greedy schema answers check the argmax against the grammar first: same
                # tokens, about 3x faster here (llamacpp_greedy_grammar.py)
                from sira_seek.llm.llamacpp_greedy_grammar import GreedyGrammarLlama
            except ImportError as exc:
                raise BackendUnavailableError(
                    "llama-cpp-python is not installed; run sira-seek llm install cpu"
                ) from exc
            with _LOAD_LOCK:
                if self._llama is None:
                    self._llama = GreedyGrammarLlama(
                        model_path=str(self.model_path),
                        n_ctx=self.n_ctx,
                        n_threads=self.n_threads,
                        verbose=False,
                    )
        return self._llama

    def _scoring_model(self) -> Any:
        """A second instance with ``logits_all``: it keeps every position's logits (n_ctx x
        vocabulary floats, about 2 GB for Gemma 3), which generation never needs, so it is only
        loaded when something is scored."""
        if self._scorer is None:
            from llama_cpp import Llama

            with _LOAD_LOCK:
                if self._scorer is None:
                    self._scorer = Llama(
                        model_path=str(self.model_path),
                        n_ctx=self.n_ctx,
                        n_threads=self.n_threads,
                        logits_all=True,
                        verbose=False,
                    )
        return self._scorer

    async def token_logprobs(self, text: str) -> list[TokenLogprob]:
        """``TextScorer``: one forward pass over ``text``, log-softmax at every position."""
        return await asyncio.to_thread(self._token_logprobs_blocking, text)

    async def token_pieces(self, text: str) -> list[str]:
        """``TextTokenizer``: the tokens ``token_logprobs(text)`` returns, without scoring."""
        return await asyncio.to_thread(self._token_pieces_blocking, text)

    def _tokens(self, llama: Any, text: str) -> list[int]:
        tokens: list[int] = llama.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        if len(tokens) > self.n_ctx:
            raise ContextTooLongError(
                f"{len(tokens)} tokens to score exceed n_ctx={self.n_ctx} of {self.model_path.name}"
            )
        return tokens

    @staticmethod
    def _pieces(llama: Any, tokens: list[int]) -> list[str]:
        return [llama.detokenize([t]).decode("utf-8", errors="replace") for t in tokens]

    def _token_pieces_blocking(self, text: str) -> list[str]:
        with self._lock:
            llama = self._scoring_model()
            return self._pieces(llama, self._tokens(llama, text))

    def _token_logprobs_blocking(self, text: str) -> list[TokenLogprob]:
        import numpy as np

        with self._lock:
            llama = self._scoring_model()
            tokens = self._tokens(llama, text)
            llama.reset()
            llama.eval(tokens)
            # Position i predicts token i + 1. log p = logit - logsumexp(logits), row by row, on
            # llama's own float32 buffer (no float64 copy of n x 262k logits): exp of the
            # max-shifted row in float32, summed in float64.
            logits = llama.scores[: len(tokens) - 1]
            rows = np.arange(len(tokens) - 1)
            top = logits.max(axis=1, keepdims=True)
            shifted = np.exp(logits - top)
            norm = top[:, 0].astype(np.float64) + np.log(shifted.sum(axis=1, dtype=np.float64))
            values = (logits[rows, tokens[1:]].astype(np.float64) - norm).tolist()
            pieces = self._pieces(llama, tokens)
        return [TokenLogprob(pieces[0], None)] + [
            TokenLogprob(piece, float(v)) for piece, v in zip(pieces[1:], values, strict=True)
        ]

    def _grammar(self, schema: dict[str, Any]) -> Any:
        from llama_cpp.llama_grammar import LlamaGrammar

        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]

    async def generate(self, request: LLMRequest) -> LLMResponse:
        return await asyncio.to_thread(self.generate_blocking, request)

    def generate_blocking(self, request: LLMRequest) -> LLMResponse:
        """The synchronous call behind ``generate``; safe from any thread."""
        started = time.perf_counter()
        text = ""
        usage = TokenUsage()
        with self._lock:
            llama = self._model()
            for attempt in range(self.malformed_retries + 1):
                seed = request.seed if request.seed is None else request.seed + attempt
                text, this_usage, finish = self._call(llama, request, seed)
                usage = usage + this_usage
                parsed = None
                if request.json_schema is not None:
                    try:
                        parsed = parse_json_output(text, request.json_schema)
                    except ValueError:
                        continue
                return LLMResponse(
                    text=text,
                    parsed=parsed,
                    usage=usage,
                    latency_s=time.perf_counter() - started,
                    backend=self.backend,
                    model=self.model_path.name,
                    finish_reason=finish,
                )
        raise MalformedOutputError(
            f"{self.model_path.name} did not produce the requested JSON after "
            f"{self.malformed_retries + 1} tries (raw text kept); raise max_tokens if cut off",
            raw_text=text,
            attempts=self.malformed_retries + 1,
        )

    def _call(
        self, llama: Any, request: LLMRequest, seed: int | None
    ) -> tuple[str, TokenUsage, str | None]:
        kwargs: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.top_p is not None:
            kwargs["top_p"] = request.top_p
        if request.top_k is not None:
            kwargs["top_k"] = request.top_k
        if seed is not None:
            kwargs["seed"] = seed
        if request.stop:
            kwargs["stop"] = list(request.stop)
        try:
            if request.messages is not None:
                # chat_template_kwargs has no equivalent in llama-cpp-python's chat handlers.
                if request.json_schema is not None:
                    kwargs["response_format"] = {
                        "type": "json_object",
                        "schema": request.json_schema,
                    }
                out = llama.create_chat_completion(
                    messages=[m.model_dump() for m in request.messages], **kwargs
                )
                choice = out["choices"][0]
                text = choice["message"]["content"] or ""
            else:
                if request.json_schema is not None:
                    kwargs["grammar"] = self._grammar(request.json_schema)
                out = llama.create_completion(prompt=request.prompt, **kwargs)
                choice = out["choices"][0]
                text = choice["text"]
        except ValueError as exc:
            if "context window" in str(exc):
                raise ContextTooLongError(
                    f"the prompt is too long for {self.model_path.name} (n_ctx={self.n_ctx}): {exc}"
                ) from exc
            raise
        usage = out.get("usage") or {}
        return (
            text,
            TokenUsage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
            ),
            choice.get("finish_reason"),
        )

    async def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        return await generate_many_bounded(
            self.generate,
            requests,
            concurrency or 4,
            backend=self.backend,
            model=self.model_path.name,
        )

    async def aclose(self) -> None:
        with self._lock:
            for model in (self._llama, self._scorer):
                close = getattr(model, "close", None)
                if close is not None:
                    close()
            self._llama = self._scorer = None
