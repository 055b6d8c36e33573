"""One checkpoint interval: storage.checkpoint_interval_s (the web form's "Checkpoint interval")
and reliability.checkpoint_interval_s are the same question. Given in either, it is the interval
the days count (goodput) and the one the warm tier archives at; given in both, they must agree;
given in neither, Daly's optimum sets the days' interval and the warm tier archives hourly
(cluster.storage.ARCHIVE_INTERVAL_S). No second stall figure: the storage notes no longer state a
stall share from an interval the days do not use (before 2.55.0 every plan said "Synchronous
checkpoints stall training 3.3% of the time", 120 s of 3,600, whatever its goodput counted)."""

from __future__ import annotations

import copy

import pytest

from estimator.errors import ScenarioError
from estimator.plan.compose import estimate

BASE = {
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 1e12},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 64},
}
# Llama 3.1 8B: 8.03e9 parameters x 12 bytes (fp32 master + Adam m, v) = 96.4 GB per checkpoint


def _plan(**sections) -> dict:
    doc = copy.deepcopy(BASE)
    doc.update(sections)
    return estimate(doc)["result"]


@pytest.mark.parametrize(
    "sections",
    [{"storage": {"checkpoint_interval_s": 1800}}, {"reliability": {"checkpoint_interval_s": 1800}}],
    ids=["storage", "reliability"],
)
def test_an_interval_given_in_either_place_is_the_one_the_days_and_the_warm_tier_use(sections):
    out = _plan(**sections)
    assert out["goodput"]["checkpoint_interval_s"] == 1800.0
    assert out["goodput"]["checkpoint_interval_rule"] == "given"
    ckpt = out["storage"]["checkpoint_bytes"]
    assert ckpt == pytest.approx(8.03e9 * 12, rel=0.01)  # by hand, module comment
    assert out["storage"]["warm"]["write_bytes_per_s"] == pytest.approx(ckpt / 1800)


def test_without_an_interval_the_days_take_dalys_and_the_warm_tier_archives_hourly():
    out = _plan()
    assert out["goodput"]["checkpoint_interval_rule"] == "daly-2006"
    assert out["goodput"]["checkpoint_interval_s"] != 3600.0
    assert out["storage"]["warm"]["write_bytes_per_s"] == pytest.approx(
        out["storage"]["checkpoint_bytes"] / 3600
    )
    assert not [n for n in out["storage"]["notes"] if "stall" in n]


def test_the_same_interval_in_both_places_plans_and_two_different_are_refused():
    same = _plan(storage={"checkpoint_interval_s": 1800}, reliability={"checkpoint_interval_s": 1800})
    assert same["goodput"]["checkpoint_interval_s"] == 1800.0
    with pytest.raises(ScenarioError) as err:
        _plan(storage={"checkpoint_interval_s": 1800}, reliability={"checkpoint_interval_s": 3600})
    e = err.value.errors[0]
    assert (e.field, e.code) == ("storage.checkpoint_interval_s", "two-checkpoint-intervals")
    assert e.params == {"storage": 1800.0, "reliability": 3600.0}
