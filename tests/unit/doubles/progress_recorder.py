"""A ``Progress`` double (above the protocol, ``sira_seek.workflows.progress``): it draws
nothing and keeps every call in order, so a test can assert what a workflow reported, when,
and how much (``advanced``: the sum of the steps)."""

from __future__ import annotations

from collections.abc import Mapping

from sira_seek.workflows.progress import Figure


class ProgressRecorder:
    """Every ``start``, ``advance`` and ``note`` a workflow made, as tuples in call order."""

    def __init__(self) -> None:
        self.events: list[tuple[object, ...]] = []

    def start(self, total: int | None, *, resumed: int = 0) -> None:
        self.events.append(("start", total, resumed))

    def advance(
        self,
        n: int = 1,
        *,
        failure: str | None = None,
        figures: Mapping[str, Figure] | None = None,
    ) -> None:
        self.events.append(("advance", n, failure, dict(figures or {})))

    def note(self, message: str) -> None:
        self.events.append(("note", message))

    @property
    def starts(self) -> list[tuple[int | None, int]]:
        return [(e[1], e[2]) for e in self.events if e[0] == "start"]  # type: ignore[misc]

    @property
    def steps(self) -> list[int]:
        return [e[1] for e in self.events if e[0] == "advance"]  # type: ignore[misc]

    @property
    def failures(self) -> list[str]:
        return [e[2] for e in self.events if e[0] == "advance" and e[2]]  # type: ignore[misc]

    @property
    def notes(self) -> list[str]:
        return [e[1] for e in self.events if e[0] == "note"]  # type: ignore[misc]
