"""The core's English defaults count correctly (estimator.words.counted): "1 card", "8 cards"."""

import pytest

from estimator.errors import ScenarioError
from estimator.plan.compose import estimate
from estimator.words import counted


def test_counted_is_singular_for_exactly_one():
    assert counted(1, "card") == "1 card"
    assert counted(1.0, "day") == "1 day"
    assert counted(0, "card") == "0 cards"
    assert counted(2048, "card") == "2,048 cards"
    assert counted(1.5, "day") == "1.5 days"
    assert counted(3, "config.json field") == "3 config.json fields"


@pytest.mark.parametrize(("cards", "words"), [(1, "on 1 card."), (8, "on 8 cards.")])
def test_a_refusal_on_one_card_says_one_card(cards, words):
    # Llama 3.1 70B (1,130 GB of mixed-precision Adam state) fits on neither one nor eight 80 GB cards
    doc = {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 1e9},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": cards},
    }
    with pytest.raises(ScenarioError) as err:
        estimate(doc)
    (e,) = err.value.errors
    assert e.code == "no-feasible-layout" and words in e.message
