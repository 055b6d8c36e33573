"""A web worker's warm-up (config.warmup, called by config.wsgi before the worker serves): it does
the first-use work of every step, in every language, reads no database (a query would fail here:
these tests have no database access, and the step would be logged as skipped) and never raises."""

import logging
import sys

import pytest
from django.conf import settings

from config import warmup
from reports import charts


@pytest.fixture
def figure_builds(monkeypatch):
    calls = []
    real = charts.all_figures

    def counting(result):
        calls.append(result)
        return real(result)

    monkeypatch.setattr(charts, "all_figures", counting)
    return calls


def test_the_warm_up_does_each_step_without_the_database(figure_builds, caplog):
    with caplog.at_level(logging.INFO, logger="config.warmup"):
        seconds = warmup.warm_up()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert seconds > 0
    assert "config.urls" in sys.modules and "reports.pages" in sys.modules  # the URLconf loaded
    assert len(figure_builds) == len(settings.LANGUAGES)  # the sample plan's figures, per language
    assert figure_builds[0]["compute"]["cards"] == 64  # SAMPLE_SCENARIO: Llama 3.1 8B on 64 H100


def test_a_failing_step_is_logged_and_the_others_still_run(monkeypatch, figure_builds, caplog):
    def broken():
        raise RuntimeError("no templates today")

    monkeypatch.setattr(warmup, "_templates", broken)
    with caplog.at_level(logging.WARNING, logger="config.warmup"):
        warmup.warm_up()  # does not raise
    assert any("broken skipped" in r.getMessage() for r in caplog.records)
    assert len(figure_builds) == len(settings.LANGUAGES)  # the report step after it ran
