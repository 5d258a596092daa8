"""The one exit-code table of `sira-seek` and `sira-sync`, and the errors that carry its codes.

Scripts and schedulers branch on the exit status, so it means the same in every command:

====  ==================  ============================================================
code  name                when
====  ==================  ============================================================
0     OK                  everything asked for was done
1     ENGINE_ERROR        the cluster (or the LLM server) refused or cannot be reached;
                          an index that does not exist; nothing useful was produced
2     BAD_INPUT           bad flags (click's own usage errors are 2 too) or bad input
                          files: unreadable, malformed, empty, a mismatched checkpoint
3     PARTIAL_FAILURE     the command finished and printed its result, but some items
                          failed: bulk items the cluster refused, questions that failed,
                          writes refused during a sira-sync run
75    WAITING_FOR_BATCH   not finished, not failed: an offline batch round
                          (``--llm batch:DIR#MODEL``) waits for its answers; the
                          message (``{"waiting_for": PATH}`` with --json) names the
                          round's request file; run the same command again once
                          DIR/round-NNN.output.jsonl is there (75 is sysexits'
                          EX_TEMPFAIL: "try again later")
====  ==================  ============================================================

`options.friendly_errors` is the one place exceptions become these codes.
"""

from __future__ import annotations

from enum import IntEnum

import click


class ExitCode(IntEnum):
    """Exit status of every command (see the module docstring for when each applies)."""

    OK = 0
    ENGINE_ERROR = 1
    BAD_INPUT = 2
    PARTIAL_FAILURE = 3
    WAITING_FOR_BATCH = 75


class EngineFailure(click.ClickException):
    """The cluster or LLM server refused; one line on stderr, exit 1."""

    exit_code = ExitCode.ENGINE_ERROR


class BadInput(click.ClickException):
    """An input file or value the command cannot use; one line on stderr, exit 2.

    Not a ``click.UsageError``: the usage text would not help with a malformed file.
    """

    exit_code = ExitCode.BAD_INPUT


class PartialFailure(click.ClickException):
    """Raised after the result was printed, when some items failed; exit 3."""

    exit_code = ExitCode.PARTIAL_FAILURE
