"""Fewer garbage-collector passes where sira-seek does bulk work or serves requests.

CPython starts a young-generation pass every 700 net allocations of containers and, every
tenth of those, an older pass that visits the long-lived objects again. sira-seek's hot paths
allocate many short-lived containers (every engine answer decoded to dicts and lists, a pack's
windows, pydantic records, an HTTP request's ASGI messages) while the process holds many
long-lived ones (the DF filter's verdict memo; in a server, every imported module, the FastAPI
app and its schemas), so the passes cost far more than the cycles they find:

- a sync apply of 9,003 documents ran 2,660 passes, a quarter of the client's CPU
  (benchmarks/sync_apply.py on Elasticsearch: client CPU 3.5-3.7 s by default, 2.3-2.5 s with a
  first threshold of 10,000; wall time 5.4 -> 4.1 s);
- ``sira-seek serve`` spent 15-25% less CPU a search at 8 clients with its startup heap frozen
  and the same threshold (docs/benchmarks/http.md).

Reference cycles are still collected, in larger batches. ``fewer_gc_passes`` scopes the change
to a block of library work; ``settle_server_heap`` is for a process that only serves (the
server's own entry points call it, never the library).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

RUN_THRESHOLD0 = 10_000
"""Young-generation threshold during bulk work and in a server (CPython's default is 700)."""

_lock = threading.Lock()
_active = 0
_saved: tuple[int, int, int] | None = None


def _raised(threshold0: int) -> tuple[int, int, int]:
    first, second, third = gc.get_threshold()
    return max(first, threshold0), second, third


@contextmanager
def fewer_gc_passes(threshold0: int = RUN_THRESHOLD0) -> Iterator[None]:
    """Raise the collector's first threshold to at least ``threshold0`` for the block.

    The thresholds are the process's: raised when the first block starts and restored when
    the last one ends (blocks may overlap in threads), never lowered below what the process
    had."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(*_raised(threshold0))
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None


def settle_server_heap(threshold0: int = RUN_THRESHOLD0) -> None:
    """For a process that serves requests from now on: collect once, move every object that
    exists now (modules, the app) out of the collector's sight (``gc.freeze``, as CPython's
    documentation suggests for long-running servers) and raise the first threshold for good."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*_raised(threshold0))
