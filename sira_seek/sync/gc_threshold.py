"""Fewer garbage-collector passes while a sync run works.

A run allocates millions of short-lived containers (every engine answer decoded to dicts and
lists, a pack's windows, pydantic records) while it holds long-lived ones (the DF filter's
verdict memo, the page in flight). CPython starts a young-generation pass every 700 net
allocations of containers and, every tenth of those, an older pass that visits the long-lived
objects again: 2,660 passes in one apply of 9,003 documents, and a quarter of the run's client
CPU (benchmarks/sync_apply.py on Elasticsearch: client CPU 3.5-3.7 s with the default against
2.3-2.5 s with a first threshold of 10,000; the apply's wall time 5.4 -> 4.1 s). Reference
cycles are still collected, only in larger batches.

The thresholds are the process's: they are raised when the first run starts and restored when
the last one ends (runs may overlap in threads), and never lowered below what the process had.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

RUN_THRESHOLD0 = 10_000
"""Young-generation threshold during a run (CPython's default is 700)."""

_lock = threading.Lock()
_active = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def fewer_gc_passes(threshold0: int = RUN_THRESHOLD0) -> Iterator[None]:
    """Raise the collector's first threshold to at least ``threshold0`` for the block."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = gc.get_threshold()
            first, *rest = _saved
            gc.set_threshold(max(first, threshold0), *rest)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
