"""A count agrees with its noun: "1 card", "8 cards", "1 day" in English (ngettext; zh_Hans has one
form), for the sentences the core sends as code + params (reports.messages.PLURALS) and the days
and months every page shows (reports.formatting)."""

import pytest
from django.utils import translation

from reports import formatting as f
from reports import messages


@pytest.mark.parametrize(
    ("cards", "english"),
    [
        (1, "No parallel layout fits in HBM on 1 card. Add cards"),
        (8, "No parallel layout fits in HBM on 8 cards."),
    ],
)
def test_a_refusal_counts_its_cards(cards, english):
    with translation.override("en"):
        assert messages.render("no-feasible-layout", {"cards": cards}).startswith(english)
    with translation.override("zh-hans"):
        assert messages.render("no-feasible-layout", {"cards": cards}).startswith(f"{cards} 张卡上没有")


def test_a_fixed_layout_refusal_and_ignored_fields_count_too():
    params = {"cards": 1, "fixed": {"tp": 2}, "reasons": ["dp-not-integral"], "suggestions": []}
    with translation.override("en"):
        assert "possible on 1 card with the fixed fields (TP 2)" in messages.render(
            "no-possible-layout", params
        )
        one = messages.render("config-fields-ignored", {"count": 1, "fields": "rope_scaling"})
        two = messages.render("config-fields-ignored", {"count": 2, "fields": "a, b"})
    assert one == "1 config.json field the estimator does not read was ignored: rope_scaling."
    assert two == "2 config.json fields the estimator does not read were ignored: a, b."


def test_days_and_months_agree_with_their_count():
    with translation.override("en"):
        assert (f.days(1), f.days(1.0004), f.days(2), f.days(0.5)) == ("1 day", "1 day", "2 days", "0.5 days")
        assert (f.months(1), f.months(3)) == ("1 month", "3 months")
    with translation.override("zh-hans"):
        assert (f.days(1), f.days(2), f.months(1)) == ("1 天", "2 天", "1 个月")


def test_a_deadline_past_the_largest_cluster_reads_in_both_languages():
    params = {"target_days": 1.0, "tokens": 1e15, "cards": 45_651_083_384, "mfu": 0.65, "max_cards": 65_536}
    with translation.override("en"):
        text = messages.render("deadline-needs-too-many-cards", params, "fallback")
    assert text.startswith("Training ") and " in 1 day needs " in text and "65,536 cards" in text
    with translation.override("zh-hans"):
        text = messages.render("deadline-needs-too-many-cards", params, "fallback")
    assert "1 天" in text and "65,536 张卡" in text and "Training" not in text


def test_every_counted_sentence_has_both_forms_in_chinese():
    import re

    params = {"count": 1, "fields": "x", "fixed": {"tp": 2}, "reasons": [], "suggestions": []}
    params |= {"budget": 6e5, "capex": 3.6e6}
    for code in messages.PLURALS:
        for n in (1, 3):
            with translation.override("zh-hans"):
                text = messages.render(code, {**params, "cards": n, "count": n}, "fallback")
            assert re.search(r"[\u4e00-\u9fff]", text) and str(n) in text, (code, n, text)
