"""Hypothesis without its clocks: no per-example deadline and no "input generation is slow"
health check.

Both are timing thresholds, which the suite does not use: `make test` runs the unit tests
niced beside the nodes, vLLM and the rest of the suite on two cores, where one example of
test_query_compiler took 284 ms against the 200 ms deadline (0.24 ms when replayed) and
test_valid_json_round_trips failed the too_slow check after 1.27 s, in a fresh-clone run
(2026-12-04). The properties are the same; only the stopwatch is gone."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "sira-seek-suite", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("sira-seek-suite")
