#!/usr/bin/env bash
# What `make test` runs: the whole suite as three pytest processes at once, then their reports;
# fails if any part fails.
#
#   rest   every test that needs a node, a CLI command or the CPU model, but not vLLM;
#   vllm   the tests of the session's vLLM server (SIRA_SEEK_TEST_STREAM, tests/conftest.py),
#          over the same two nodes (tests/support/suite_nodes.py starts them first and stops
#          them at the end); NOT niced: vLLM's worker spins on a core while its server has
#          work, so stretching its tests over the whole run (niced, one try: the rest had done
#          34% of its tests after 20 minutes) costs more than it fills;
#   unit   tests/unit (no node, no server), niced.
#
# Why at once: alone, the rest leaves about a third of this 2-core machine idle (one CLI
# command at a time, waits on nodes: busy 72% on average over a full run here), and vLLM's
# tests, CPU-bound on both cores, ran after it for about six minutes; now they share the first
# minutes with it, and the unit tests (niced) take what is idle. SIRA_SEEK_TEST_ONE_STREAM=1
# runs the rest and vllm in one process (the order the suite had before), e.g. to tell a
# contention failure from a bug.
#
# usage: scripts/run_suite.sh PYTHON [pytest args for the rest and vllm streams...]
set -uo pipefail
py=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sira-seek-suite.XXXXXX")
unit_pid=
vllm_pid=
cleanup() {
  [ -n "$unit_pid" ] && kill "$unit_pid" 2>/dev/null
  [ -n "$vllm_pid" ] && kill "$vllm_pid" 2>/dev/null
  "$py" tests/support/suite_nodes.py down "$tmp/nodes.json"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# no cache plugin beside the main run: they would write .pytest_cache at once
nice -n 10 "$py" -m pytest tests/unit -p no:cacheprovider >"$tmp/unit.log" 2>&1 &
unit_pid=$!

if [ "${SIRA_SEEK_TEST_ONE_STREAM:-0}" = 1 ]; then
  "$py" -m pytest --ignore=tests/unit "$@"
  rest=$?
  vllm=0
else
  if ! exports=$("$py" tests/support/suite_nodes.py up "$tmp/nodes.json"); then
    echo "make test: the suite's nodes did not start (above); no test ran" >&2
    exit 1
  fi
  eval "$exports"
  SIRA_SEEK_TEST_STREAM=vllm "$py" -m pytest --ignore=tests/unit \
    -p no:cacheprovider --basetemp="$tmp/vllm-basetemp" "$@" >"$tmp/vllm.log" 2>&1 &
  vllm_pid=$!
  SIRA_SEEK_TEST_STREAM=rest "$py" -m pytest --ignore=tests/unit "$@"
  rest=$?
  wait "$vllm_pid"
  vllm=$?
  vllm_pid=
  echo
  echo "==================== the vLLM tests (ran beside the rest) ===================="
  cat "$tmp/vllm.log"
fi
wait "$unit_pid"
unit=$?
unit_pid=
echo
echo "==================== tests/unit (ran beside the rest, niced) ===================="
cat "$tmp/unit.log"
echo "make test: tests/unit exit $unit, the vLLM tests exit $vllm, the rest exit $rest"
# 5 is pytest's "no test selected": arguments that select only vLLM tests, or none of them
if [ "$rest" -eq 5 ] && [ "$vllm" -eq 0 ]; then rest=0; fi
if [ "$vllm" -eq 5 ] && [ "$rest" -eq 0 ]; then vllm=0; fi
for status in "$rest" "$vllm" "$unit"; do
  if [ "$status" -ne 0 ]; then exit "$status"; fi
done
exit 0
