"""A web worker's warm-up (config.warmup, called by config.wsgi before the worker serves): it does
the first-use work of every step, in every language, reads no database (a query would fail here:
these tests have no database access, and the step would be logged as skipped) and never raises."""

import gc
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from config import warmup
from reports import charts

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def figure_builds(monkeypatch):
    calls = []
    real = charts.all_figures

    def counting(result, counts=None):
        calls.append(result)
        return real(result, counts)

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


def test_freeze_heap_takes_the_objects_made_so_far_out_of_every_collection():
    made_before = ["a long-lived object"]  # a list: tracked by the collector
    try:
        frozen = warmup.freeze_heap()
        # frozen objects can be freed (a live-server thread of an earlier test letting go of one),
        # never added without another freeze: the count only falls from what freeze_heap froze
        assert 0 < gc.get_freeze_count() <= frozen
        assert not any(o is made_before for o in gc.get_objects())  # frozen: no generation holds it
        made_after = ["a request's object"]
        assert any(o is made_after for o in gc.get_objects())  # later objects are collected as usual
    finally:
        gc.unfreeze()  # back into the oldest generation, for the tests after this one


def test_the_web_entry_point_freezes_the_heap_after_its_warm_up(tmp_path):
    """config.wsgi (what gunicorn imports in each worker): warm-up, then freeze_heap, so the
    warmed-up modules and caches (~200,000 objects) are frozen before the first request."""
    env = {**os.environ, "CLUSTERPLAN_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "config.settings"}
    code = "import gc, config.wsgi; print(gc.get_freeze_count())"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) > 50_000  # Django, DRF, Plotly, the catalog: far more than this
