"""The headline's chance of missing a deadline says what it counts: with failures counted, the MFU
range and the interruptions together (compute.deadline_miss_probability, engine 2.46.0); without
them, the MFU range alone, in the old words."""

from django.utils import translation

from reports.summary import _deadline_risk, headline


def test_the_chance_with_failures_names_both_uncertainties():
    with translation.override("en"):
        both = _deadline_risk(0.59, 60.0, True)
        alone = _deadline_risk(0.59, 60.0, False)
    assert "counting the MFU range and failures together: 59.0%." in both, both
    assert alone.startswith("Chance of missing the 60 days deadline: 59.0%"), alone
    assert "failures" not in alone
    with translation.override("zh-hans"):
        zh = _deadline_risk(0.59, 60.0, True)
    assert "同时计入 MFU 范围与故障" in zh and "59.0%" in zh, zh


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


def test_the_days_card_and_the_cards_card_give_one_chance_of_missing():
    # the same compute.deadline_miss_probability (0.068) read twice on the page: the cards card
    # ("sized for a 90% chance ...; 6.8% chance of missing it") and the days card must agree
    from reports.summary import confidence_text

    compute = {"deadline_confidence": 0.9, "deadline_miss_probability": 0.068, "target_days": 30.0}
    with translation.override("en"):
        assert confidence_text(compute).endswith("; 6.8% chance of missing it.")
        assert _deadline_risk(0.068, 30.0, True).endswith(
            "counting the MFU range and failures together: 6.8%."
        )
    with translation.override("zh-hans"):
        assert "6.8%" in _deadline_risk(0.068, 30.0, True) and "6.8%" in confidence_text(compute)
