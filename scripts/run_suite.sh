#!/usr/bin/env bash
# What `make test` runs: tests/unit (no node, no server), niced, beside the rest of the suite,
# then both reports; fails if either part fails.
#
# Why beside: alone, the rest leaves about a quarter of this 2-core machine idle (one CLI
# command at a time, waits on nodes: busy 72% on average over a full run here), which the unit
# tests fill instead of taking a minute of their own at the end.
#
# SIRA_SEEK_TEST_STREAMS=2 also splits the rest in two pytest processes over the same two
# nodes (tests/support/suite_nodes.py starts them first and stops them at the end): the tests
# of the session's vLLM server (SIRA_SEEK_TEST_STREAM=vllm, tests/conftest.py) and the others.
# It is not the default: it was not shown faster on this 2-core machine (docs/testing.md,
# "Test time": one try with vLLM niced was slower, one not niced inconclusive).
#
# usage: scripts/run_suite.sh PYTHON [pytest args for the rest of the suite...]
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

if [ "${SIRA_SEEK_TEST_STREAMS:-1}" != 2 ]; then
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
if [ "${SIRA_SEEK_TEST_STREAMS:-1}" != 2 ]; then
  echo "make test: tests/unit exit $unit, the rest exit $rest"
else
  echo "make test: tests/unit exit $unit, the vLLM tests exit $vllm, the rest exit $rest"
  # 5 is pytest's "no test selected": arguments that select only vLLM tests, or none of them
  if [ "$rest" -eq 5 ] && [ "$vllm" -eq 0 ]; then rest=0; fi
  if [ "$vllm" -eq 5 ] && [ "$rest" -eq 0 ]; then vllm=0; fi
fi
for status in "$rest" "$vllm" "$unit"; do
  if [ "$status" -ne 0 ]; then exit "$status"; fi
done
exit 0
