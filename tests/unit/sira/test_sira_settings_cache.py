"""``sira_settings`` builds each knob set once per environment (reading the environment into
the model cost ~0.8 ms, twice per search), and still follows the environment: a variable
set, changed or removed between two calls is seen by the second, in any case, and a bad
value is refused each time it is asked for."""

from __future__ import annotations

import pytest

from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.sira_setup import sira_settings


def test_the_environment_is_followed_between_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIRA_SEEK_SIRA_TAU", raising=False)
    assert sira_settings(size=7).tau == 0.1
    monkeypatch.setenv("SIRA_SEEK_SIRA_TAU", "0.25")
    assert sira_settings(size=7).tau == 0.25
    monkeypatch.delenv("SIRA_SEEK_SIRA_TAU")
    monkeypatch.setenv("sira_seek_sira_tau", "0.3")  # pydantic-settings ignores the case
    assert sira_settings(size=7).tau == 0.3
    assert sira_settings(size=7, tau=0.05).tau == 0.05  # a knob given wins
    monkeypatch.delenv("sira_seek_sira_tau")
    assert sira_settings(size=7).tau == 0.1


def test_a_bad_value_is_refused_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    for _ in range(2):
        with pytest.raises(InvalidInput, match="weight"):
            sira_settings(weight=-1.0)
    monkeypatch.setenv("SIRA_SEEK_SIRA_TAU", "7")
    for _ in range(2):
        with pytest.raises(InvalidInput, match="tau"):
            sira_settings(size=3)


def test_each_caller_gets_its_own_copy() -> None:
    first, second = sira_settings(size=4), sira_settings(size=4)
    assert first == second and first is not second
