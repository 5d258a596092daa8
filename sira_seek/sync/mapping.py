"""Make the live mapping hold the enrichment fields, without touching any source field.

Mappings can only grow: a missing field is added with ``PUT _mapping``; a field that exists with
another type, analyzer or gap cannot be changed in place, and the analyzers the enrichment
fields use cannot be added to an open index. Both cases stop the run with an error that says
what to do, before a single document is read.

Which enrichment layout (mappings/enrichment_layouts.json) an index gets: one that already holds
``sira_enrichment.phrases`` keeps the layout its mapping shows (an index enriched with the old
separate-field layout keeps working as it is; ``sira-sync migrate`` copies it into an index of
the default layout, where the copy re-indexes every document so its phrases land in
``contents``). An index without the phrases field gets the default layout when it has
``contents``, else the separate field.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from sira_seek.backend import SearchBackend
from sira_seek.fields import CONTENTS, CONTENTS_SHINGLES, PHRASES
from sira_seek.index_layout import enrichment_field_properties, enrichment_layouts

logger = logging.getLogger(__name__)

# Parameters that cannot change on an existing field; a mismatch is a conflict.
_FIXED_PARAMS = ("type", "analyzer", "search_analyzer", "position_increment_gap")
# Engines leave parameters at their default out of GET _mapping.
_DEFAULTS = {("text", "position_increment_gap"): 100, ("text", "analyzer"): "standard"}


class MappingConflictError(ValueError):
    """The index cannot take the enrichment fields as they are; the message says why and how."""


class EnrichmentLayout(BaseModel):
    """Which fields of this index the run writes and which raw fields give corpus DF."""

    index: str
    added_fields: list[str] = Field(default_factory=list)
    df_unigram_fields: list[str]
    df_shingle_fields: list[str] = Field(default_factory=list)
    enrichment_layout: str = "separate_field"


def enrichment_properties(layout: str | None = None) -> dict[str, Any]:
    """The ``sira_enrichment`` and ``sira_sync`` properties of ``layout`` (default: the one
    mappings/enrichment_layouts.json names)."""
    return enrichment_field_properties(layout)


def _targets(spec: Mapping[str, Any]) -> set[str]:
    targets = spec.get("copy_to") or []
    return {targets} if isinstance(targets, str) else set(targets)


def _live_layout(live: Mapping[str, dict[str, Any]]) -> str:
    """The layout whose ``copy_to`` targets the live enrichment fields show (the first listed
    when several share them: they differ only in how queries score, read from ``_meta``)."""
    have = {
        field: _targets(live.get(f"sira_enrichment.{field}", {}))
        for field in ("phrases", "categories")
    }
    for name, spec in enrichment_layouts()["layouts"].items():
        want = {field: set(spec["copy_to"].get(field, [])) for field in have}
        if want == have:
            return name
    raise MappingConflictError(
        f"the enrichment fields copy to {have}, which no layout in "
        "mappings/enrichment_layouts.json does"
    )


def _leaf_fields(props: Mapping[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    """Dotted path -> field spec, including multi-fields (``a.b.shingles``)."""
    out: dict[str, dict[str, Any]] = {}
    for name, spec in props.items():
        path = f"{prefix}{name}"
        if "properties" in spec:
            out[path] = {"type": spec.get("type", "object")}
            out |= _leaf_fields(spec["properties"], f"{path}.")
        else:
            out[path] = dict(spec)
        for sub, sub_spec in spec.get("fields", {}).items():
            out[f"{path}.{sub}"] = dict(sub_spec)
    return out


def _analyzers_used(props: Mapping[str, Any]) -> set[str]:
    return {
        spec[key]
        for spec in _leaf_fields(props).values()
        for key in ("analyzer", "search_analyzer")
        if key in spec
    }


def _conflicts(live: dict[str, dict[str, Any]], wanted: dict[str, dict[str, Any]]) -> list[str]:
    problems = []
    for path, spec in wanted.items():
        have = live.get(path)
        if have is None:
            continue
        for param in _FIXED_PARAMS:
            want = spec.get(param)
            got = have.get(param, _DEFAULTS.get((str(have.get("type")), param)))
            if want is not None and got != want:
                problems.append(f"{path}: {param} is {got!r}, enrichment needs {want!r}")
    return problems


def _index_analyzers(backend: SearchBackend, index: str) -> dict[str, set[str]] | None:
    """Custom analyzers of each concrete index behind ``index`` (an alias may hold several)."""
    return {
        name: set((settings.get("analysis", {}) or {}).get("analyzer", {}).keys())
        for name, settings in backend.index_settings(index).items()
    }


def ensure_enrichment_mapping(
    backend: SearchBackend, index: str, source_fields: Sequence[str], *, dry_run: bool = False
) -> EnrichmentLayout:
    """Add the missing enrichment fields to ``index``'s mapping; raise on any conflict."""
    if not backend.index_exists(index):
        raise MappingConflictError(f"index {index!r} does not exist")
    mappings = backend.get_mapping(index)
    layout = _choose_layout(index, mappings)
    wanted_props = enrichment_properties(layout)
    wanted = _leaf_fields(wanted_props)
    analyzers = _index_analyzers(backend, index)
    needed_analyzers = _analyzers_used(wanted_props)
    missing: set[str] = set()
    problems: list[str] = []
    live_any: dict[str, dict[str, Any]] = {}
    for concrete, body in mappings.items():
        live = _leaf_fields(body.get("mappings", {}).get("properties", {}))
        live_any |= live
        problems += [f"{concrete}: {p}" for p in _conflicts(live, wanted)]
        missing |= {p for p in wanted if p not in live}
        defined = needed_analyzers if analyzers is None else analyzers.get(concrete, set())
        lacking = needed_analyzers - defined
        if lacking and any(p not in live for p in wanted):
            problems.append(
                f"{concrete}: the enrichment fields use analyzer(s) {sorted(lacking)}, which this "
                "index does not define (analyzers cannot be added to an open index)"
            )
    if problems:
        raise MappingConflictError(
            f"index {index!r} cannot take the sira-sync enrichment fields:\n  - "
            + "\n  - ".join(problems)
            + "\nNo source field was changed. Copy the index into one that can take them, and "
            "move your alias to the copy once it is complete: `sira-sync migrate --index "
            f"{index} --into NEW_INDEX --alias ALIAS`; then run sira-sync on the alias."
        )
    for field in source_fields:
        if field not in live_any:
            raise MappingConflictError(
                f"source field {field!r} is not in the mapping of {index!r}; check --fields"
            )
    if missing and not dry_run:
        backend.put_mapping(index, wanted_props)
    copied_into_contents = CONTENTS in _targets(wanted.get(PHRASES, {}))
    if CONTENTS in live_any and not copied_into_contents:
        unigrams = [CONTENTS]
        shingles = [CONTENTS_SHINGLES] if CONTENTS_SHINGLES in live_any else []
    else:
        # contents also holds enrichment here: raw DF comes from the source fields themselves
        # (a term in both title and text counts twice: an upper bound, so never too lenient).
        unigrams = [f for f in source_fields if live_any.get(f, {}).get("type") == "text"]
        shingles = [f"{f}.shingles" for f in unigrams if f"{f}.shingles" in live_any]
    if not unigrams:
        raise MappingConflictError(
            f"none of {list(source_fields)} is a text field of {index!r}: corpus DF cannot be "
            "measured"
        )
    return EnrichmentLayout(
        index=index,
        added_fields=sorted(missing),
        df_unigram_fields=unigrams,
        df_shingle_fields=shingles,
        enrichment_layout=layout,
    )


def _choose_layout(index: str, mappings: Mapping[str, Any]) -> str:
    """The live layout when the phrases field exists (same in every index behind an alias),
    else the default one, or the separate field for an index without ``contents``."""
    found: set[str] = set()
    has_contents = True
    for body in mappings.values():
        live = _leaf_fields(body.get("mappings", {}).get("properties", {}))
        has_contents &= CONTENTS in live
        if PHRASES in live:
            found.add(_live_layout(live))
    if len(found) > 1:
        raise MappingConflictError(
            f"the indexes behind {index!r} hold enrichment in different layouts "
            f"({sorted(found)}): migrate them into one (`sira-sync migrate`)"
        )
    default = str(enrichment_layouts()["default"])
    if found:
        (layout,) = found
        if layout != default:
            logger.info(
                "%s keeps its %s enrichment layout (the default is %s; `sira-sync migrate` "
                "copies it into a new index of the default layout)",
                index,
                layout,
                default,
            )
        return layout
    props = enrichment_properties(default)["sira_enrichment"]["properties"]
    if not has_contents and any("copy_to" in spec for spec in props.values()):
        return "separate_field"
    return default
