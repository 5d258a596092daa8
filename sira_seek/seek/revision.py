"""The Update variant's sketch revision, matched by heading.

After each fill the LLM lists the sketch's headings again. Its list is read by name, never by
position: a filled heading it repeats keeps its evidence (and its place), an open heading it
repeats stays, a new heading is a new open gist, and an open heading it leaves out is dropped.
Filled gists are never dropped or reworded, since their evidence was found for that heading.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from .output_parsing import heading_key
from .sketch import Gist, SteeringSketch


class SketchRevision(BaseModel):
    """The revised sketch and what changed, for the run's notes."""

    model_config = ConfigDict(frozen=True)

    sketch: SteeringSketch
    added: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    over_cap: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.added or self.dropped)


def revise_sketch(
    sketch: SteeringSketch, revised_headings: Sequence[str], *, max_gists: int
) -> SketchRevision:
    """Apply an LLM's revised heading list to ``sketch``.

    The filled gists come first in their order (SEEK fills in order, so they already do), then
    the open gists in the order the LLM listed them. New open gists beyond ``max_gists`` in all
    are not added (reported as ``over_cap``), which also bounds the number of fill steps.
    """
    filled = [gist for gist in sketch.gists if gist.is_filled]
    filled_keys = {heading_key(gist.heading) for gist in filled}
    open_by_key = {heading_key(g.heading): g for g in sketch.gists if not g.is_filled}
    listed: list[Gist] = []
    seen: set[str] = set()
    for heading in revised_headings:
        key = heading_key(heading)
        if not key or key in filled_keys or key in seen:
            continue  # a re-listed filled heading keeps its evidence where it is
        seen.add(key)
        listed.append(open_by_key.get(key, Gist(heading=heading)))
    if not filled and not listed:
        return SketchRevision(sketch=sketch)  # nothing to keep: an empty sketch is no sketch
    room = max(0, max_gists - len(filled))
    kept, over = listed[:room], listed[room:]
    kept_keys = {heading_key(gist.heading) for gist in kept}
    added = tuple(g.heading for g in kept if heading_key(g.heading) not in open_by_key)
    dropped = tuple(g.heading for k, g in open_by_key.items() if k not in kept_keys)
    return SketchRevision(
        sketch=SteeringSketch(title=sketch.title, gists=(*filled, *kept)),
        added=added,
        dropped=dropped,
        over_cap=tuple(g.heading for g in over),
    )
