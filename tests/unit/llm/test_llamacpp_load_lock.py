"""Loading llama.cpp models from several threads must leave the process's stdout alone.

llama-cpp-python loads a model inside ``suppress_stdout_stderr`` (``verbose=False``), which
points ``sys.stdout`` and file descriptor 1 at /dev/null and back. Two loads at once restore
them in the wrong order and stdout stays on /dev/null: ``eval qa --closed-book --judge-llm``
(three clients of one spec) once printed nothing and exited 0 in CI. ``SlowLoadingLlama`` is a
stand-in for the model class below the client (no model file): it enters the library's own
``suppress_stdout_stderr`` and waits inside it, so unserialised loads overlap every time.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from llama_cpp._utils import suppress_stdout_stderr

from sira_seek.llm import llamacpp_greedy_grammar
from sira_seek.llm.llamacpp_inprocess import LlamaCppClient


class SlowLoadingLlama:
    inside = 0
    most = 0
    guard = threading.Lock()

    def __init__(self, **_: Any) -> None:
        with suppress_stdout_stderr(disable=False):
            with SlowLoadingLlama.guard:
                SlowLoadingLlama.inside += 1
                SlowLoadingLlama.most = max(SlowLoadingLlama.most, SlowLoadingLlama.inside)
            time.sleep(0.2)
            with SlowLoadingLlama.guard:
                SlowLoadingLlama.inside -= 1


def test_models_load_one_at_a_time_and_stdout_survives(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(llamacpp_greedy_grammar, "GreedyGrammarLlama", SlowLoadingLlama)
    stdout, fd1 = sys.stdout, os.dup(1)
    before = os.fstat(1)
    clients = [LlamaCppClient(model_path=tmp_path / "m.gguf") for _ in range(3)]
    threads = [threading.Thread(target=c._model) for c in clients]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        after, now = os.fstat(1), sys.stdout
    finally:  # a failure must not leave pytest itself writing to /dev/null
        sys.stdout = stdout
        os.dup2(fd1, 1)
        os.close(fd1)
    assert now is stdout and (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)
    assert all(isinstance(c._llama, SlowLoadingLlama) for c in clients)
    assert SlowLoadingLlama.most == 1
