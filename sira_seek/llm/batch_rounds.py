"""Offline batch rounds (``--llm batch:DIR#MODEL``): SEEK, the baselines, SIRA's expansions and
rerank, and the agent, run against answers a batch job wrote, one round at a time.

No server is called. A run asks its LLM as it always does; ``batch_client.BatchRoundClient``
builds each request's body exactly as the live ``openai:`` client would
(``openai_request_body``) and looks it up, by a hash of the body
(``batch_files.body_custom_id``), among the answers of earlier rounds
(``DIR/round-NNN.output.jsonl``, OpenAI Batch output lines), which it reads exactly as the live
client reads a server's reply (``openai_http.complete_request``). A request with no
answer yet is written down and interrupts whoever asked (``pending.PendingRequest``); the
workflow runs every question (query) as far as it can, and at the end of the run all the
requests written down become the next round's input file, ``DIR/round-NNN.requests.jsonl``,
and the run stops with ``WaitingForBatch`` (the command line exits 75 naming the file).

Once the batch job wrote ``DIR/round-NNN.output.jsonl``, the same command runs again: every
unfinished question starts over, finds the answers to the requests it made before (the same
question and settings make the same bodies), and gets one step further, until nothing is
pending and the run ends as a live one would. A line that failed (an ``error``, a non-200
status) or is missing is asked again in the next round, at most ``LLMSettings.batch_retries``
times; then, or at once for a refusal a retry cannot change (HTTP 400 and the like, as a live
run), the call raises the error a live run would and its question fails with that reason.

``batch_round(spec)`` is the span of one run: clients built from a ``batch:`` spec inside it
share one set of rounds per folder (SEEK and its SIRA retriever, SIRA's expander and its
reranker), and at its end the round file is written. Outside it, a ``batch:`` spec is refused:
only the commands that run in rounds take one.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sira_seek.input_errors import InputError
from sira_seek.llm.batch_files import BatchOutputLine, BatchRequestLine, body_custom_id
from sira_seek.llm.errors import LLMCallError, ServerError
from sira_seek.llm.pending import PendingRequest
from sira_seek.llm.retry import is_retryable_status

logger = logging.getLogger(__name__)

ROUND_PREFIX = "round"
"""The LLM's rounds are ``round-NNN.*``; the embeddings' (``embed.batch``) take another
prefix, so both may share a folder."""


def requests_path(directory: Path, number: int, prefix: str = ROUND_PREFIX) -> Path:
    """``DIR/round-NNN.requests.jsonl``: the round's OpenAI Batch input file."""
    return Path(directory) / f"{prefix}-{number:03d}.requests.jsonl"


def output_path(directory: Path, number: int, prefix: str = ROUND_PREFIX) -> Path:
    """``DIR/round-NNN.output.jsonl``: where the batch job's output of the round goes."""
    return Path(directory) / f"{prefix}-{number:03d}.output.jsonl"


def round_numbers(directory: Path, prefix: str = ROUND_PREFIX) -> list[int]:
    """The numbers of the rounds whose request file is in ``directory``, in order."""
    if not Path(directory).is_dir():
        return []
    pattern = re.compile(rf"^{re.escape(prefix)}-(\d{{3,}})\.requests\.jsonl$")
    return sorted(
        int(found.group(1))
        for path in Path(directory).iterdir()
        if (found := pattern.match(path.name))
    )


def waiting_round(directory: Path, prefix: str = ROUND_PREFIX) -> int | None:
    """The last round, when its output is not there yet."""
    numbers = round_numbers(directory, prefix)
    if numbers and not output_path(directory, numbers[-1], prefix).exists():
        return numbers[-1]
    return None


def write_requests(target: Path, lines: Sequence[BatchRequestLine]) -> None:
    """A round's input file, written under a temporary name and renamed: a batch job never
    reads half a file, and a killed run leaves no half-written round behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line.model_dump_json() + "\n")
    partial.replace(target)


class WaitingForBatch(Exception):  # noqa: N818 - a state the caller acts on, not an error
    """The run stopped until a batch job answers ``requests`` into ``output``; run the same
    command (call) again then. Not a failure: the command line exits 75 (``EX_TEMPFAIL``)."""

    def __init__(self, *, requests: Path, output: Path, round: int, count: int) -> None:
        self.requests = requests
        self.output = output
        self.round = round
        self.count = count
        super().__init__(
            f"round {round}: {count} LLM request(s) wait in {requests}; answer them into "
            f"{output} (an OpenAI Batch job, or `sira-seek llm batch {requests.parent}`), then "
            "run the same command again"
        )

    def to_json(self) -> dict[str, Any]:
        """``{"waiting_for": PATH, ...}``: what ``--json`` prints."""
        return {
            "waiting_for": str(self.requests),
            "output": str(self.output),
            "round": self.round,
            "requests": self.count,
        }


class BatchRoundsError(InputError):
    """The folder's rounds cannot go on as asked (a request file that cannot be read, an
    unanswered round that lacks requests this run needs)."""


@dataclass(frozen=True)
class _Failure:
    round: int
    make: Callable[[], LLMCallError]
    retryable: bool


class BatchRounds:
    """The rounds in one folder: the answers and failures of the rounds before, and the
    requests this run is waiting for. Thread-safe (SIRA's expander and reranker ask from
    their own event loops)."""

    def __init__(self, directory: Path | str, *, retries: int = 2) -> None:
        self.directory = Path(directory)
        self.retries = retries
        self._lock = threading.Lock()
        self._answers: dict[str, dict[str, Any]] = {}
        self._failures: dict[str, list[_Failure]] = {}
        self._pending: dict[str, BatchRequestLine] = {}
        self._open: tuple[int, frozenset[str]] | None = None
        self.last_round = 0
        self._load()

    # -- reading the folder ---------------------------------------------------------------

    def _load(self) -> None:
        numbers = round_numbers(self.directory)
        for number in numbers:
            asked = self._requested(number)
            out = output_path(self.directory, number)
            if not out.exists():
                if number == numbers[-1]:
                    self._open = (number, asked)
                else:
                    logger.warning("%s has no output; its requests are asked again", out.name)
                continue
            seen = self._read_output(number, out)
            for custom_id in sorted(asked - seen - self._answers.keys()):
                self._fail(custom_id, number, f"{out.name} has no line for the request", True)
        self.last_round = numbers[-1] if numbers else 0

    def _requested(self, number: int) -> frozenset[str]:
        path = requests_path(self.directory, number)
        found = set()
        with path.open(encoding="utf-8") as handle:
            for line_number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    found.add(str(json.loads(raw)["custom_id"]))
                except (ValueError, KeyError, TypeError):
                    raise BatchRoundsError(
                        f"{path}:{line_number} is not a batch request line with a custom_id"
                    ) from None
        return frozenset(found)

    def _read_output(self, number: int, path: Path) -> set[str]:
        """The ids ``path`` answers or fails; bad lines are skipped (their requests count as
        missing and are asked again)."""
        seen: set[str] = set()
        bad = 0
        with path.open(encoding="utf-8") as handle:
            for raw in handle:
                if not raw.strip():
                    continue
                try:
                    line = BatchOutputLine.model_validate_json(raw)
                except ValueError:
                    bad += 1
                    continue
                seen.add(line.custom_id)
                answer = line.answer
                if answer is not None:
                    self._answers.setdefault(line.custom_id, answer)
                else:
                    self._failed_line(number, path, line)
        if bad:
            logger.warning("%s: %d line(s) are not batch output lines; ignored", path, bad)
        return seen

    def _failed_line(self, number: int, path: Path, line: BatchOutputLine) -> None:
        from sira_seek.llm.openai_http import error_detail, status_error

        response = line.response
        if line.error is not None or response is None or response.body is None:
            what = line.error if line.error is not None else "no response"
            shown = what if isinstance(what, str) else json.dumps(what)
            self._fail(line.custom_id, number, f"{path.name}: {shown[:300]}", True)
            return
        status, detail = response.status_code, error_detail(response.body)
        if is_retryable_status(status):
            self._fail(line.custom_id, number, f"{path.name}: HTTP {status}: {detail}", True)
            return
        model = response.body.get("model") if isinstance(response.body, dict) else None
        where = f"the batch job ({path.name})"
        self._failures.setdefault(line.custom_id, []).append(
            _Failure(number, lambda: status_error(where, status, detail, model), False)
        )

    def _fail(self, custom_id: str, number: int, reason: str, retryable: bool) -> None:
        self._failures.setdefault(custom_id, []).append(
            _Failure(number, lambda: ServerError(reason), retryable)
        )

    # -- a run ----------------------------------------------------------------------------

    def answer(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        """The response body a batch job gave for this request; ``PendingRequest`` when it
        has none yet (the request goes into the next round), or the error a live run would
        raise once its retries are used up."""
        custom_id = body_custom_id(url, body)
        with self._lock:
            found = self._answers.get(custom_id)
            if found is not None:
                return found
            failures = self._failures.get(custom_id, [])
            if failures and not failures[-1].retryable:
                raise failures[-1].make()
            if len(failures) > self.retries:
                error = failures[-1].make()
                rounds = ", ".join(str(f.round) for f in failures)
                raise type(error)(
                    f"{error} (asked in rounds {rounds}; SIRA_SEEK_LLM_BATCH_RETRIES="
                    f"{self.retries})"
                )
            self._pending.setdefault(
                custom_id, BatchRequestLine(custom_id=custom_id, url=url, body=body)
            )
        raise PendingRequest([custom_id])

    @property
    def pending(self) -> int:
        """Requests this run is waiting for so far."""
        with self._lock:
            return len(self._pending)

    def finish(self) -> WaitingForBatch | None:
        """End the run: ``None`` when nothing is pending, else the round it waits for, whose
        input file is written now (or, when the last round is still unanswered and holds every
        pending request, that round again)."""
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending:
            return None
        if self._open is not None:
            number, asked = self._open
            missing = [cid for cid in pending if cid not in asked]
            if missing:
                raise BatchRoundsError(
                    f"{requests_path(self.directory, number)} is not answered yet "
                    f"({output_path(self.directory, number).name} is missing), and this run "
                    f"needs {len(missing)} request(s) it does not hold: answer that round "
                    "first, or run with another batch folder"
                )
            return self._waiting(number, len(asked))
        number = self.last_round + 1
        self._write(number, list(pending.values()))
        self._open, self.last_round = (number, frozenset(pending)), number
        return self._waiting(number, len(pending))

    def _waiting(self, number: int, count: int) -> WaitingForBatch:
        return WaitingForBatch(
            requests=requests_path(self.directory, number),
            output=output_path(self.directory, number),
            round=number,
            count=count,
        )

    def _write(self, number: int, lines: Sequence[BatchRequestLine]) -> None:
        target = requests_path(self.directory, number)
        write_requests(target, lines)
        logger.info("batch round %d: %d requests in %s", number, len(lines), target)


_ACTIVE: dict[Path, BatchRounds] = {}
_ACTIVE_LOCK = threading.Lock()


def _key(directory: Path) -> Path:
    return Path(directory).expanduser().resolve()


def active_rounds(directory: Path) -> BatchRounds | None:
    """The rounds of the run in progress over ``directory`` (``batch_round``), if any."""
    with _ACTIVE_LOCK:
        return _ACTIVE.get(_key(directory))


def batch_directory(spec: str | None) -> Path | None:
    """The folder of a ``batch:DIR#MODEL`` spec (``None``: the default backend's), else
    ``None``; other specs are not parsed here."""
    from sira_seek.llm.settings import LLMSettings
    from sira_seek.llm.spec import BatchBackendSpec, parse_backend_spec

    spec = spec or LLMSettings().backend
    if not spec.strip().lower().startswith("batch:"):
        return None
    parsed = parse_backend_spec(spec)
    assert isinstance(parsed, BatchBackendSpec)
    return parsed.directory


@contextmanager
def batch_round(spec: str | None) -> Iterator[BatchRounds | None]:
    """The span of one run over ``spec``: nothing for a spec that is not ``batch:``.

    For ``batch:DIR#MODEL``, the clients built inside share the folder's rounds; a
    ``PendingRequest`` that reaches here ends the run, and so does the block's end: when
    requests are pending, the round file is written and ``WaitingForBatch`` raised. Any other
    exception leaves as it is (nothing is written). A run inside a run over the same folder
    shares the outer run's rounds, which the outer run finishes.
    """
    directory = batch_directory(spec)
    if directory is None:
        yield None
        return
    from sira_seek.llm.settings import LLMSettings

    key = _key(directory)
    with _ACTIVE_LOCK:
        outer = _ACTIVE.get(key)
        rounds = outer or BatchRounds(directory, retries=LLMSettings().batch_retries)
        _ACTIVE[key] = rounds
    if outer is not None:
        yield outer
        return
    try:
        with suppress(PendingRequest):  # a run stopped by a request: the round ends here
            yield rounds
        waiting = rounds.finish()
    finally:
        with _ACTIVE_LOCK:
            _ACTIVE.pop(key, None)
    if waiting is not None:
        raise waiting
