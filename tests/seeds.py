"""One place for the random seeds of the suite, so every random test can be replayed.

A test that draws anything at random asks ``seeded_rng`` for its generator. The seed comes
from ``SIRA_SEEK_TEST_SEED`` when set (to replay a failure), otherwise it is drawn fresh, so
repeated runs explore different cases instead of re-checking one. Either way it is printed
(pytest shows captured output of a failing test), with the line that reproduces the run.
Hypothesis tests need none of this: hypothesis prints the falsifying example and how to
replay it itself.
"""

from __future__ import annotations

import os
import random
import secrets

SEED_ENV = "SIRA_SEEK_TEST_SEED"


def pick_seed(label: str = "") -> int:
    """The seed for this test: ``$SIRA_SEEK_TEST_SEED`` if set, else a fresh one; printed."""
    raw = os.environ.get(SEED_ENV, "").strip()
    seed = int(raw) if raw else secrets.randbits(32)
    where = f" ({label})" if label else ""
    print(f"random seed{where}: {seed}; reproduce with {SEED_ENV}={seed}")
    return seed


def seeded_rng(label: str = "") -> random.Random:
    """A ``random.Random`` seeded by ``pick_seed`` (the seed is printed)."""
    return random.Random(pick_seed(label))
