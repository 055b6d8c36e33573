"""Supernode warnings and advice name the supernode by its catalog name in every language, not by
its id (reports.messages PARAM_KINDS "supernode")."""

import pytest
from django.utils import translation

from estimator import catalog
from reports import messages

NAME = "Huawei CloudMatrix 384 (Atlas 900 A3 SuperPoD): 384 Ascend 910C"  # estimator/catalog/supernodes.toml


def test_the_catalog_name_is_the_one_the_messages_show():
    assert catalog.supernode("cloudmatrix-384").name == NAME


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_partly_used_supernode_is_named_in_both_languages(language):
    """supernode-partly-used for 800 cards on CloudMatrix 384: 3 supernodes (1,152 cards) bought,
    1,152 - 800 = 352 idle."""
    params = {"supernode": "cloudmatrix-384", "supernodes": 3, "cards_per_supernode": 384, "idle_cards": 352}
    with translation.override(language):
        text = messages.render("supernode-partly-used", params)
    assert NAME in text and "cloudmatrix-384" not in text
    assert "352" in text


def test_the_partial_supernode_warning_in_chinese_names_it():
    params = {
        "cards": 800,
        "whole": 1152,
        "supernodes": 3,
        "supernode": "cloudmatrix-384",
        "idle_cards": 352,
        "mfu": 0.3,
        "days": 40.0,
        "whole_mfu": 0.31,
        "whole_days": 29.0,
    }
    with translation.override("zh-hans"):
        text = messages.render("partial-supernode-slow", params)
    assert NAME in text and "cloudmatrix-384" not in text


def test_an_unknown_id_is_shown_as_given():
    assert messages.supernode_name("retired-supernode") == "retired-supernode"
