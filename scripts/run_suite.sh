#!/usr/bin/env bash
# What `make test` runs: the unit tests (no node, no server, about a minute on one core) beside
# the rest of the suite, niced, then both reports; fails if either part fails.
#
# Why beside: the rest of the suite leaves about a quarter of this 2-core machine idle (one CLI
# command at a time, waits on nodes; busy 72% on average over a full run here), which the unit
# tests fill instead of taking a minute of their own at the end. Niced, so a node start or a
# vLLM batch keeps the CPU when both want it.
#
# usage: scripts/run_suite.sh PYTHON [pytest args for the rest of the suite...]
set -uo pipefail
py=$1
shift
unit_log=$(mktemp "${TMPDIR:-/tmp}/sira-seek-unit.XXXXXX")

# no cache plugin on this side: both runs would write .pytest_cache at once
nice -n 10 "$py" -m pytest tests/unit -p no:cacheprovider >"$unit_log" 2>&1 &
unit_pid=$!
trap 'kill "$unit_pid" 2>/dev/null; rm -f "$unit_log"' EXIT INT TERM

"$py" -m pytest --ignore=tests/unit "$@"
rest=$?
wait "$unit_pid"
unit=$?
echo
echo "==================== tests/unit (ran beside the rest, niced) ===================="
cat "$unit_log"
echo "make test: tests/unit exit $unit, the rest exit $rest"
if [ "$rest" -ne 0 ]; then exit "$rest"; fi
exit "$unit"
