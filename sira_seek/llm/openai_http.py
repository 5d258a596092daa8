"""OpenAI-compatible HTTP backend: the production path (``vllm serve``, llama.cpp, SGLang, ...).

Throughput comes from many requests in flight spread over endpoints; robustness from retrying
429/5xx/connection failures with backoff and from turning every failure into an error a user
can act on.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from sira_seek.llm.client import generate_many_bounded
from sira_seek.llm.errors import (
    BadRequestError,
    ContextTooLongError,
    LLMCallError,
    LLMTimeoutError,
    MalformedOutputError,
    ModelNotFoundError,
    ServerError,
    ServerUnreachableError,
)
from sira_seek.llm.openai_body import OPENAI_BACKEND, openai_request_body
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse, TokenUsage
from sira_seek.llm.retry import RetryPolicy, is_retryable_status, parse_retry_after
from sira_seek.llm.scoring import ScoringUnsupportedError, TokenLogprob
from sira_seek.llm.settings import LLMSettings
from sira_seek.llm.structured import StructuredOutputDialect, parse_json_output

_CONTEXT_TOO_LONG = re.compile(
    r"maximum context length|context window|context length|too long|exceeds? .*context|"
    r"prompt is too long|max_model_len",
    re.IGNORECASE,
)
_MODEL_MISSING = re.compile(r"model.*(does not exist|not found|unknown)|no such model", re.I)


class HTTPClientSettings(BaseModel):
    """Knobs of the HTTP backend; defaults follow the SIRA reference (300 s total, 60 s read)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_in_flight: int = Field(default=64, ge=1)
    connect_timeout_s: float = Field(default=10.0, gt=0)
    read_timeout_s: float = Field(default=60.0, gt=0)
    total_timeout_s: float = Field(default=300.0, gt=0)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    malformed_retries: int = Field(default=2, ge=0)
    structured_output: Literal["auto"] | StructuredOutputDialect = "auto"
    check_model: bool = Field(default=True, description="Fail early if /v1/models lacks it")
    api_key: SecretStr | None = None
    context_window: int | None = Field(
        default=None,
        ge=1,
        description="The model's context window in tokens, for a server whose /models does not "
        "say it (vLLM lists max_model_len); given, it wins over what the server lists",
    )

    @classmethod
    def from_llm_settings(cls, settings: LLMSettings) -> HTTPClientSettings:
        """The HTTP knobs of the environment's LLM settings (``SIRA_SEEK_LLM_*``): the chat
        client and the ``openai:`` embedder talk to the same server the same way."""
        return cls(
            max_in_flight=settings.max_in_flight,
            connect_timeout_s=settings.connect_timeout_s,
            read_timeout_s=settings.read_timeout_s,
            total_timeout_s=settings.total_timeout_s,
            retry=RetryPolicy(max_retries=settings.max_retries),
            malformed_retries=settings.malformed_retries,
            structured_output=settings.structured_output,
            api_key=settings.api_key,
            context_window=settings.context_window,
        )


@dataclass
class _ServerInfo:
    model: str
    dialect: StructuredOutputDialect
    template_kwargs: bool = True
    context_window: int | None = None
    owners: frozenset[str] = frozenset()


def listed_context_window(entry: dict[str, Any]) -> int | None:
    """The context window a ``/models`` entry states: vLLM's ``max_model_len``, or an
    ``n_ctx`` under ``meta`` (llama.cpp-style servers); ``None`` when it states none."""
    meta = entry.get("meta")
    for value in (
        entry.get("max_model_len"),
        meta.get("n_ctx") if isinstance(meta, dict) else None,
    ):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


# OpenAI's own API refuses unknown body fields ("Unrecognized request argument"); it is the
# one server known to, so it alone never gets `chat_template_kwargs` (vLLM, SGLang and
# llama.cpp's servers read or ignore it).
_OPENAI_HOSTS = ("openai.com", "openai.azure.com")
_OPENAI_OWNERS = frozenset({"openai", "system", "openai-internal"})


def takes_template_kwargs(endpoint: str, owners: set[str]) -> bool:
    """Whether the server at ``endpoint`` (whose /models reported ``owners``) may be sent
    ``chat_template_kwargs`` (Qwen3's ``enable_thinking`` switch lives there)."""
    host = (httpx.URL(endpoint).host or "").lower()
    if host.endswith(_OPENAI_HOSTS):
        return False
    return not (owners and owners <= _OPENAI_OWNERS)


@dataclass
class _LoopState:
    """Objects bound to one event loop (httpx pools and asyncio primitives cannot move)."""

    loop: asyncio.AbstractEventLoop
    http: httpx.AsyncClient
    in_flight: asyncio.Semaphore
    info_lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class OpenAICompatibleClient:
    """``LLMClient`` over one or more OpenAI-compatible endpoints, round-robin."""

    backend = OPENAI_BACKEND

    def __init__(
        self,
        *,
        endpoints: Sequence[str],
        model: str | None = None,
        settings: HTTPClientSettings | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not endpoints:
            raise ValueError("at least one endpoint is needed")
        self._endpoints = tuple(url.rstrip("/") for url in endpoints)
        self._model = model
        self._settings = settings or HTTPClientSettings()
        self._transport = transport
        self._next_endpoint = itertools.cycle(self._endpoints)
        self._state: _LoopState | None = None
        self._info: _ServerInfo | None = None

    @property
    def endpoints(self) -> tuple[str, ...]:
        return self._endpoints

    @property
    def settings(self) -> HTTPClientSettings:
        return self._settings

    # -- loop-bound resources -------------------------------------------------------------

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            s = self._settings
            headers = {}
            if s.api_key is not None:
                headers["Authorization"] = f"Bearer {s.api_key.get_secret_value()}"
            http = httpx.AsyncClient(
                timeout=httpx.Timeout(
                    connect=s.connect_timeout_s,
                    read=s.read_timeout_s,
                    write=s.read_timeout_s,
                    pool=s.total_timeout_s,
                ),
                limits=httpx.Limits(
                    max_connections=s.max_in_flight, max_keepalive_connections=s.max_in_flight
                ),
                headers=headers,
                transport=self._transport,
            )
            self._state = _LoopState(loop, http, asyncio.Semaphore(s.max_in_flight))
        return self._state

    async def aclose(self) -> None:
        if self._state is not None:
            state, self._state = self._state, None
            if state.loop is asyncio.get_running_loop():
                await state.http.aclose()

    # -- server discovery -----------------------------------------------------------------

    async def model_name(self) -> str:
        """The spec's model without a network call (so cached answers need no server), else
        the first model the server lists."""
        if self._model is not None:
            return self._model
        return (await self._server_info()).model

    async def _server_info(self) -> _ServerInfo:
        if self._info is not None:
            return self._info
        state = self._loop_state()
        async with state.info_lock:
            if self._info is None:
                self._info = await self._discover(state)
        return self._info

    async def _discover(self, state: _LoopState) -> _ServerInfo:
        """Read ``/models`` once: learns the model when the spec omits it, checks it otherwise,
        and picks the structured-output dialect for ``auto``."""
        listed: list[dict[str, Any]] = []
        for position, endpoint in enumerate(self._endpoints):
            try:
                data, _ = await self._call_with_retries(
                    state, "GET", "/models", None, endpoint=endpoint
                )
            except BadRequestError:
                break  # some servers have no /models; then the spec must name the model
            except (ServerUnreachableError, LLMTimeoutError):
                if position == len(self._endpoints) - 1:
                    raise
                continue  # all endpoints serve the same model: ask the next one
            listed = [m for m in data.get("data", []) if isinstance(m, dict) and "id" in m]
            break
        ids = [str(m["id"]) for m in listed]
        model = self._model
        if model is None:
            if not ids:
                raise ModelNotFoundError(
                    f"{endpoint} lists no models; name one in the spec: openai:{endpoint}#MODEL"
                )
            model = ids[0]
        elif self._settings.check_model and ids and model not in ids:
            raise ModelNotFoundError(
                f"model {model!r} is not served at {endpoint}; it serves: {', '.join(ids)}"
            )
        dialect = self._settings.structured_output
        if dialect == "auto":
            owners = {str(m.get("owned_by", "")) for m in listed if str(m["id"]) == model}
            # llama-cpp-python's server reports owned_by="me" and lacks json_schema formats.
            dialect = "llama-cpp-python" if owners & {"me", "llama-cpp-python"} else "openai"
        owners = {str(m.get("owned_by", "")) for m in listed if str(m["id"]) == model}
        windows = [listed_context_window(m) for m in listed if str(m["id"]) == model]
        return _ServerInfo(
            model=model,
            dialect=dialect,
            template_kwargs=takes_template_kwargs(self._endpoints[0], owners),
            context_window=next((w for w in windows if w is not None), None),
            owners=frozenset(owners),
        )

    async def model_owners(self) -> frozenset[str]:
        """The ``owned_by`` values ``/models`` lists for the model (``vllm`` for vLLM; empty
        when the server lists none): what a caller adds server-specific fields on."""
        return (await self._server_info()).owners

    async def context_window(self) -> int | None:
        """``WindowedLLM``: the configured window, else the one ``/models`` lists (read once,
        with the model), else ``None``. A server that cannot be asked now is ``None`` too:
        answers from the response cache need no server, and a call that does need it fails
        with its own error."""
        if self._settings.context_window is not None:
            return self._settings.context_window
        try:
            return (await self._server_info()).context_window
        except LLMCallError:
            return None

    # -- generation -----------------------------------------------------------------------

    async def generate(self, request: LLMRequest) -> LLMResponse:
        info = await self._server_info()
        state = self._loop_state()
        started = time.perf_counter()

        async def post(path: str, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
            return await self._call_with_retries(state, "POST", path, body)

        async with state.in_flight:
            return await complete_request(
                request,
                post,
                build=lambda attempt: self._build_body(attempt, info),
                malformed_retries=self._settings.malformed_retries,
                backend=self.backend,
                model=info.model,
                started=started,
            )

    async def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        model = self._info.model if self._info else (self._model or "")
        return await generate_many_bounded(
            self.generate,
            requests,
            concurrency or self._settings.max_in_flight,
            backend=self.backend,
            model=model,
        )

    async def token_logprobs(self, text: str) -> list[TokenLogprob]:
        """``TextScorer``: ``/completions`` with ``echo`` and ``logprobs``.

        vLLM and llama.cpp's server answer this; an API without prompt log-probabilities (a
        chat-only hosted model) raises ``ScoringUnsupportedError``.
        """
        info = await self._server_info()
        state = self._loop_state()
        body = {
            "model": info.model,
            "prompt": text,
            # Not 0: llama-cpp-python reads 0 as "until the context is full". The one token
            # generated is dropped below (usage.completion_tokens says how many to drop).
            "max_tokens": 1,
            "echo": True,
            "logprobs": 0,
            "temperature": 0.0,
        }
        async with state.in_flight:
            try:
                data, _ = await self._call_with_retries(state, "POST", "/completions", body)
            except BadRequestError as exc:
                raise ScoringUnsupportedError(
                    f"{info.model} gives no prompt log-probabilities here ({exc})"
                ) from exc
        try:
            logprobs = data["choices"][0]["logprobs"]
            tokens = [str(t) for t in logprobs["tokens"]]
            values = logprobs["token_logprobs"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ScoringUnsupportedError(
                f"{info.model} answered an echo request without token log-probabilities"
            ) from exc
        if len(values) != len(tokens):
            raise ScoringUnsupportedError(f"{info.model}: tokens and log-probabilities differ")
        generated = int((data.get("usage") or {}).get("completion_tokens", 0) or 0)
        if generated:
            tokens, values = tokens[:-generated], values[:-generated]
        return [
            TokenLogprob(token, None if value is None else float(value))
            for token, value in zip(tokens, values, strict=True)
        ]

    async def post_json(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``path`` (e.g. ``/embeddings``) on the next endpoint, with this
        client's key, timeouts, retries and in-flight cap: the one HTTP stack for every
        OpenAI-compatible call, so ``sira_seek.embed.openai`` needs no second one."""
        state = self._loop_state()
        async with state.in_flight:
            data, _ = await self._call_with_retries(state, "POST", path, body)
        return data

    def _build_body(self, request: LLMRequest, info: _ServerInfo) -> tuple[str, dict[str, Any]]:
        return openai_request_body(
            request, model=info.model, dialect=info.dialect, template_kwargs=info.template_kwargs
        )

    async def _call_with_retries(
        self,
        state: _LoopState,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        *,
        endpoint: str | None = None,
    ) -> tuple[dict[str, Any], int]:
        """Call ``path`` on the next endpoint (round-robin, so a retry may land on another
        one), retrying retryable failures with backoff; returns (json, attempts)."""
        policy = self._settings.retry
        attempt = 0
        while True:
            url = (endpoint or next(self._next_endpoint)) + path
            retry_after: float | None = None
            try:
                return await self._request_json(state, method, url, body), attempt + 1
            except _RetryableHTTPError as exc:
                error: LLMCallError = exc.error
                retry_after = exc.retry_after_s
            except (ServerUnreachableError, ServerError) as exc:
                error = exc
            except LLMTimeoutError as exc:
                if not policy.retry_on_timeout:
                    exc.attempts = attempt + 1
                    raise
                error = exc
            if attempt >= policy.max_retries:
                error.attempts = attempt + 1
                raise error
            await asyncio.sleep(policy.delay_s(attempt, retry_after_s=retry_after))
            attempt += 1

    async def _request_json(
        self, state: _LoopState, method: str, url: str, body: dict[str, Any] | None
    ) -> dict[str, Any]:
        """One HTTP exchange, with every failure mapped to an ``LLMCallError``."""
        try:
            async with asyncio.timeout(self._settings.total_timeout_s):
                response = await state.http.request(method, url, json=body)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ServerUnreachableError(
                f"cannot reach the LLM server at {url} ({type(exc).__name__}: {exc}); is it "
                "running? (e.g. `vllm serve MODEL --port 8000`)"
            ) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise ServerUnreachableError(
                f"the LLM server at {url} dropped the connection ({type(exc).__name__})"
            ) from exc
        except (httpx.TimeoutException, TimeoutError) as exc:
            raise LLMTimeoutError(
                f"the LLM server at {url} did not answer within the timeout (read "
                f"{self._settings.read_timeout_s:g} s, total {self._settings.total_timeout_s:g} s)"
            ) from exc
        if response.status_code == 200:
            try:
                data = response.json()
            except ValueError as exc:
                raise ServerError(f"{url} answered 200 with a body that is not JSON") from exc
            if not isinstance(data, dict):
                raise ServerError(f"{url} answered 200 with unexpected JSON: {data!r:.200}")
            return data
        raise _classify_http_error(url, response, self._model)


class _RetryableHTTPError(Exception):
    """Internal: a 429/5xx answer, carrying the user-facing error and any Retry-After."""

    def __init__(self, error: LLMCallError, retry_after_s: float | None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after_s = retry_after_s


def _error_detail(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:500]
    return error_detail(data)


def _classify_http_error(
    url: str, response: httpx.Response, model: str | None
) -> LLMCallError | _RetryableHTTPError:
    status = response.status_code
    detail = _error_detail(response)
    if is_retryable_status(status):
        return _RetryableHTTPError(
            ServerError(f"the LLM server at {url} kept failing: HTTP {status}: {detail}"),
            parse_retry_after(response.headers.get("retry-after")),
        )
    return status_error(url, status, detail, model)


def error_detail(body: object) -> str:
    """The message of an error body (``{"error": {"message": ...}}`` and its variants)."""
    if isinstance(body, dict):
        err = body.get("error", body.get("detail", body))
        if isinstance(err, dict):
            return str(err.get("message", err))
        return str(err)
    return str(body)[:500]


def status_error(url: str, status: int, detail: str, model: str | None) -> LLMCallError:
    """The error a live run raises for a non-retryable HTTP ``status`` (an offline batch
    line with that status fails the same way)."""
    if status == 404 and (_MODEL_MISSING.search(detail) or "model" in detail.lower()):
        return ModelNotFoundError(f"model {model!r} not found at {url}: {detail}")
    if status in (400, 413, 422) and _CONTEXT_TOO_LONG.search(detail):
        return ContextTooLongError(
            f"the prompt is too long for the model's context window (shorten the input or "
            f"lower max_tokens): {detail}"
        )
    if status == 404:
        return BadRequestError(f"{url} does not exist (HTTP 404): is the base URL right? {detail}")
    if status in (401, 403):
        return BadRequestError(f"the LLM server at {url} refused the credentials: {detail}")
    return BadRequestError(f"the LLM server at {url} rejected the request: HTTP {status}: {detail}")


async def complete_request(
    request: LLMRequest,
    post: Callable[[str, dict[str, Any]], Awaitable[tuple[dict[str, Any], int]]],
    *,
    build: Callable[[LLMRequest], tuple[str, dict[str, Any]]],
    malformed_retries: int,
    backend: str,
    model: str,
    started: float | None = None,
) -> LLMResponse:
    """One request answered through ``post(path, body) -> (response JSON, attempts)``: the
    body from ``build`` (``openai_request_body``), the answer read by ``extract_completion``,
    and an answer that is not the requested JSON asked again with the next seed, up to
    ``malformed_retries`` times. The live client posts over HTTP; an offline batch round
    (``batch_rounds``) looks the body up among its answers, so both read answers alike."""
    started = time.perf_counter() if started is None else started
    attempt_request = request
    raw_text = ""
    attempts = 0
    usage = TokenUsage()
    for malformed_attempt in range(malformed_retries + 1):
        path, body = build(attempt_request)
        data, used = await post(path, body)
        attempts += used
        raw_text, this_usage, finish = extract_completion(data, chat=request.is_chat)
        usage = usage + this_usage  # retries after malformed output cost tokens too
        parsed = None
        if request.json_schema is not None:
            try:
                parsed = parse_json_output(raw_text, request.json_schema)
            except ValueError:
                seed = request.seed
                attempt_request = request.with_seed(
                    None if seed is None else seed + malformed_attempt + 1
                )
                continue
        return LLMResponse(
            text=raw_text,
            parsed=parsed,
            usage=usage,
            latency_s=time.perf_counter() - started,
            backend=backend,
            model=model,
            finish_reason=finish,
        )
    raise MalformedOutputError(
        f"the answer of {model} did not parse as the requested JSON after "
        f"{malformed_retries + 1} tries (raw text kept); raise max_tokens "
        "if it was cut off",
        raw_text=raw_text,
        attempts=attempts,
    )


def extract_completion(data: dict[str, Any], *, chat: bool) -> tuple[str, TokenUsage, str | None]:
    """(text, usage, finish reason) of a completion or chat-completion response body."""
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"] if chat else choice["text"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ServerError(f"unexpected completion payload: {str(data)[:300]}") from exc
    usage = data.get("usage") or {}
    return (
        text or "",
        TokenUsage(
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        ),
        choice.get("finish_reason"),
    )
