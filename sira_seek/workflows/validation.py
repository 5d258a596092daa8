"""Input checks every workflow applies before a request leaves for the cluster or the LLM.

They live here once, so the command line, the facade, the HTTP API, the MCP server and the
framework adapters refuse the same input with the same reason. Each check raises
``InvalidInput`` naming the field; none of them talks to a server.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .errors import InvalidInput

MAX_INDEX_NAME_BYTES = 255
"""The engines' own limit on an index or alias name."""

FORBIDDEN_INDEX_CHARS = frozenset('/\\*?"<>|,# :')
"""Characters both engines refuse in an index name (``:`` selects a remote cluster), and the
path separators that would let a name reach another endpoint (``idx/_refresh``)."""

INDEX_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,254}$"
"""A subset of the names ``index_name`` accepts (ASCII only), for schemas such as the HTTP
API's OpenAPI document: every name it matches is accepted."""

MAX_K = 10_000
"""Most hits one search returns: the engines' default ``index.max_result_window``."""

MAX_QUERY_CHARS = 8192
"""Longest query text accepted: far above any real question, far below a memory problem."""

NOT_BLANK_PATTERN = (
    r"[^\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f"
    r"\u3000\ufeff]"
)
r"""One character that is not blank, as a regular expression every dialect reads alike (the
HTTP API's OpenAPI document carries it, clients check it in ECMA-262, pydantic in Rust).
Blank is the union of Python's ``str.isspace`` and ECMA-262's ``\s`` (which adds U+FEFF):
a bare ``\S`` disagreed with Python, so ``"\x1e\x1e\x1e"`` was schema-valid and refused."""

_NOT_BLANK = re.compile(NOT_BLANK_PATTERN)


def is_blank(text: str) -> bool:
    """True when ``text`` has nothing but blank characters (see ``NOT_BLANK_PATTERN``)."""
    return _NOT_BLANK.search(text) is None


MAX_EXPANSIONS = 200
"""Most candidate phrases one request may bring (grounding keeps at most a few dozen)."""

MAX_PHRASE_CHARS = 512
"""Longest candidate phrase accepted."""


def index_name(value: object, *, field: str = "index") -> str:
    """``value`` when it is one concrete index or alias name by the engines' own rules.

    Lowercase; none of ``/ \\ * ? " < > | , # :`` or spaces; not starting with ``_ - +``; not
    ``.`` or ``..``; at most 255 bytes. Wildcards and multi-index targets are refused: a
    workflow searches exactly the index it was given.
    """
    if not isinstance(value, str) or not value:
        raise InvalidInput("give an index name", field=field)
    bad = sorted({c for c in value if c in FORBIDDEN_INDEX_CHARS or c.isspace()})
    if bad:
        shown = " ".join(repr(c) for c in bad)
        raise InvalidInput(
            f"{value!r} is not an index name: it contains {shown} (wildcards, lists and "
            "paths are refused)",
            field=field,
        )
    if value != value.lower():
        raise InvalidInput(f"{value!r} is not an index name: names are lowercase", field=field)
    if value[0] in "_-+":
        raise InvalidInput(
            f"{value!r} is not an index name: it may not start with '_', '-' or '+'",
            field=field,
        )
    if value in (".", ".."):
        raise InvalidInput(f"{value!r} is not an index name", field=field)
    if len(value.encode("utf-8")) > MAX_INDEX_NAME_BYTES:
        raise InvalidInput(
            f"the index name is longer than {MAX_INDEX_NAME_BYTES} bytes", field=field
        )
    return value


def query_text(value: object, *, field: str = "query") -> str:
    """Query text that is not blank and at most ``MAX_QUERY_CHARS`` long (a longer query in
    words is cut by SIRA's ``max_query_words``, with a note, to stay under clause limits)."""
    if not isinstance(value, str):
        raise InvalidInput(f"must be text, not {type(value).__name__}", field=field)
    if is_blank(value):
        raise InvalidInput("is blank: give some words to search for", field=field)
    if len(value) > MAX_QUERY_CHARS:
        raise InvalidInput(
            f"is {len(value):,} characters long; at most {MAX_QUERY_CHARS:,} are accepted",
            field=field,
        )
    return value


def phrases(values: Sequence[object] | None, *, field: str = "expansions") -> list[str] | None:
    """Candidate phrases given with a request: text, bounded in number and length."""
    if values is None:
        return None
    if isinstance(values, str):
        raise InvalidInput("must be a list of phrases, not one string", field=field)
    if len(values) > MAX_EXPANSIONS:
        raise InvalidInput(
            f"has {len(values)} phrases; at most {MAX_EXPANSIONS} are accepted", field=field
        )
    out = []
    for i, phrase in enumerate(values):
        if not isinstance(phrase, str):
            raise InvalidInput(f"must be text, not {type(phrase).__name__}", field=f"{field}[{i}]")
        if len(phrase) > MAX_PHRASE_CHARS:
            raise InvalidInput(
                f"is longer than {MAX_PHRASE_CHARS} characters", field=f"{field}[{i}]"
            )
        out.append(phrase)
    return out


MAX_DOC_ID_BYTES = 512
"""The engines' own limit on a document ``_id`` (UTF-8 bytes): a longer one can name no
document, and sent anyway it is refused by the engine after an oversized request line."""


def doc_id(value: object, *, field: str = "doc_id") -> str:
    """A document id that can exist: text, not blank, at most ``MAX_DOC_ID_BYTES`` bytes."""
    if not isinstance(value, str):
        raise InvalidInput(f"must be text, not {type(value).__name__}", field=field)
    if is_blank(value):
        raise InvalidInput("the document id is empty", field=field)
    size = len(value.encode("utf-8", errors="replace"))
    if size > MAX_DOC_ID_BYTES:
        raise InvalidInput(
            f"is {size:,} bytes long; a document id has at most {MAX_DOC_ID_BYTES} bytes",
            field=field,
        )
    return value


def category_name(value: object, *, field: str = "name") -> str:
    """A category name without its surrounding blanks: not blank, at most
    ``MAX_PHRASE_CHARS`` characters (a category is grounded as one phrase)."""
    if not isinstance(value, str):
        raise InvalidInput(f"must be text, not {type(value).__name__}", field=field)
    name = value.strip()
    if not name:
        raise InvalidInput("the category name is empty", field=field)
    if len(name) > MAX_PHRASE_CHARS:
        raise InvalidInput(
            f"is {len(name):,} characters long; at most {MAX_PHRASE_CHARS} are accepted",
            field=field,
        )
    return name
