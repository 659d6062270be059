"""Numbers from the environment: one reader behind the session, lifetime and embedded-model settings."""

from __future__ import annotations

import logging

import pytest

from orbench_play.runtime.env_numbers import env_number


def test_unset_or_blank_gives_the_default(monkeypatch):
    monkeypatch.delenv("ORBENCH_TEST_N", raising=False)
    assert env_number("ORBENCH_TEST_N", 7, int) == 7
    monkeypatch.setenv("ORBENCH_TEST_N", "  ")
    assert env_number("ORBENCH_TEST_N", 2.5, float) == 2.5


def test_a_number_is_read_as_its_kind(monkeypatch):
    monkeypatch.setenv("ORBENCH_TEST_N", " 12 ")
    assert env_number("ORBENCH_TEST_N", 7, int) == 12
    monkeypatch.setenv("ORBENCH_TEST_N", "0.25")
    assert env_number("ORBENCH_TEST_N", 1.0, float) == 0.25


def test_a_wrong_value_is_logged_and_the_default_used(monkeypatch, caplog):
    monkeypatch.setenv("ORBENCH_TEST_N", "1.5")
    with caplog.at_level(logging.WARNING):
        assert env_number("ORBENCH_TEST_N", 7, int) == 7
    assert "ORBENCH_TEST_N='1.5' is not an integer; using 7" in caplog.text


def test_strict_names_the_variable(monkeypatch):
    monkeypatch.setenv("ORBENCH_TEST_N", "many")
    with pytest.raises(ValueError, match="ORBENCH_TEST_N must be a number, got 'many'"):
        env_number("ORBENCH_TEST_N", 1.0, float, strict=True)


def test_the_settings_that_use_it(monkeypatch):
    from orbench_play.models import embedded
    from orbench_play.ui.state import history, lifetime

    monkeypatch.setenv("ORBENCH_SESSION_RUNS", "0")
    assert history.max_runs() == 1
    monkeypatch.setenv("ORBENCH_SESSION_TTL_S", "-3")
    assert lifetime.ttl_s() == lifetime.DEFAULT_TTL_S
    monkeypatch.setenv("ORBENCH_LOCAL_SLOTS", "lots")
    with pytest.raises(embedded.LocalModelError, match="ORBENCH_LOCAL_SLOTS must be an integer"):
        embedded.slots()
    monkeypatch.setenv("ORBENCH_LOCAL_SLOTS", "999")
    assert embedded.slots() == 64
