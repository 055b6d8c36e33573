"""docs/goodput.md's worked examples are what the engine plans now: each figure the page quotes is
rebuilt from a plan of the same scenario and looked for in the page (a change of results that moves
one fails here until the page is re-run). The q = 0.9 sizing of DeepSeek-V3 is left to
tests/estimator/test_deadline_confidence.py (a search ~30 times a plan)."""

from pathlib import Path

import pytest

from estimator.plan import compose as plan

DOC = (Path(__file__).resolve().parents[2] / "docs" / "goodput.md").read_text()
TEXT = " ".join(DOC.split())  # the page's sentences wrap: compare on single spaces

DSV3 = {
    "model": {"preset": "deepseek-v3"},
    "training": {"tokens": 14.8e12},
    "hardware": {"accelerator": "ascend-910c"},
}


def _result(doc: dict) -> dict:
    return plan.estimate(doc)["result"]


def test_the_70b_example_on_910b2():
    r = _result(
        {
            "model": {"preset": "llama-3.1-70b"},
            "training": {"tokens": 5e11},
            "hardware": {"accelerator": "ascend-910b2"},
            "cluster": {"target_days": 30},
        }
    )
    g = r["goodput"]
    expected = (
        f"30 days; engine 2.84.0): {r['compute']['cards']:,} cards, "
        f"{r['compute']['wall_clock_days']:.1f} days of computing, {g['wall_clock_days']:.1f} days with failures "
        f"on average (median {g['wall_clock_days_p50']:.1f}, P10-P90 {g['wall_clock_days_p10']:.1f}-"
        f"{g['wall_clock_days_p90']:.1f}, ETTR {100 * g['effective_training_time_ratio']:.1f} %: "
        f"{g['expected_interruptions']:.0f} interruptions, {g['expected_unexpected_interruptions']:.0f} of them "
        f"unexpected, one every {g['mean_time_between_interruptions_h']:.0f} h; a "
        f"{g['checkpoint_stall_s']:.0f} s checkpoint every {g['checkpoint_interval_s'] / 60:.0f} minutes)"
    )
    assert expected in TEXT
    (advice,) = [a for a in r["advice"] if a["code"] == "goodput-restarts"]
    assert advice["message"].replace("2%", "2 %").rstrip(".") in TEXT


@pytest.mark.parametrize(("days", "sentence"), [(60, "median"), (90, "planned")])
def test_the_deepseek_v3_examples_on_910c(days, sentence):
    r = _result({**DSV3, "cluster": {"target_days": days}})
    miss = round(100 * r["compute"]["deadline_miss_probability"])
    if sentence == "median":
        expected = f"median {r['goodput']['wall_clock_days_p50']:.1f} days, {miss} % chance of missing"
    else:
        expected = f"{r['compute']['cards']:,} cards at the planned MFU ({miss} % chance of missing)"
    assert expected in TEXT
