"""The headline's chance of missing a deadline says what it counts: with failures counted, the MFU
range and the interruptions together (compute.deadline_miss_probability, engine 2.46.0); without
them, the MFU range alone, in the old words."""

from django.utils import translation

from reports.summary import _deadline_risk, headline


def test_the_chance_with_failures_names_both_uncertainties():
    with translation.override("en"):
        both = _deadline_risk(0.59, 60.0, True)
        alone = _deadline_risk(0.59, 60.0, False)
    assert "counting the MFU range and failures together: 59%." in both, both
    assert alone.startswith("Chance of missing the 60 days deadline: 59%"), alone
    assert "failures" not in alone
    with translation.override("zh-hans"):
        zh = _deadline_risk(0.59, 60.0, True)
    assert "同时计入 MFU 范围与故障" in zh and "59%" in zh, zh


def test_the_days_row_reads_what_the_result_says_it_counts():
    """A result stored before 2.46.0 has failures counted but no deadline_miss_counts_failures: its
    chance was the MFU range alone, and the row must not claim more."""
    scenario = {"cluster": {"target_days": 60.0}}
    base = {"compute": {"deadline_miss_probability": 0.59, "target_days": 60.0, "wall_clock_days": 53.1}}
    base["goodput"] = {"failures_counted": True}
    new = {**base, "compute": {**base["compute"], "deadline_miss_counts_failures": True}}

    def days_why(result: dict) -> str:
        return next(i["why"] for i in headline(scenario, result) if i["key"] == "days")

    with translation.override("en"):
        assert "counting the MFU range and failures together" in days_why(new)
        assert "counting the MFU range and failures together" not in days_why(base)
