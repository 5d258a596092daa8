"""What the library raises when the caller's input cannot be used: a value, a file, a line.

Every front end reports these as bad input, with their message: the command line exits 2,
the HTTP API answers 422, the MCP server returns a tool error (``workflows.errors.classify``
makes each an ``InvalidInput``, the workflows' own kind). A module with input errors of its
own subclasses ``InputError`` (``BadInputLineError``, ``QAFileError``, ...), so the front
ends need no list of them.

Anything else a library function raises is not the caller's fault: a plain ``ValueError``
from deep inside is a bug, and surfaces as one (a traceback, a 500).

A leaf: it imports nothing, so every layer (the metrics included) may raise these.
"""

from __future__ import annotations


class InputError(ValueError):
    """A value or file the caller gave cannot be used; the message names it and says why.

    A ``ValueError``, so code that caught ``ValueError`` for bad input keeps working."""


class MissingInputFile(InputError, FileNotFoundError):
    """A file or folder the caller named does not exist (also a ``FileNotFoundError``)."""
