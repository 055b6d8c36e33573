"""A model known only by its size: the shape it is assumed to have, reported and counted like a preset."""

import pytest

from estimator.contract.assumed_shape import assumed_architecture, basis_for
from estimator.plan.compose import estimate

ARTICLE = {  # the source article's example: 70B dense, 500B tokens, 30 days, Ascend 910B2
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"target_days": 30},
    "cost": {"currency": "CNY"},
}


@pytest.mark.parametrize(
    ("n", "basis"),
    [  # nearest published member in ratio: 1.23B, 3.21B, 8.03B, 70.6B, 405B
        (1e9, "llama-3.2-1b"),
        (2e9, "llama-3.2-3b"),  # ln(2 / 1.23) = 0.486 > ln(3.21 / 2) = 0.473
        (7e9, "llama-3.1-8b"),
        (3e10, "llama-3.1-70b"),  # ln(30 / 8.03) = 1.318 > ln(70.6 / 30) = 0.856
        (7e10, "llama-3.1-70b"),
        (1e12, "llama-3.1-405b"),
    ],
)
def test_the_nearest_member_lends_its_width(n, basis):
    assert basis_for(n).id == basis


def test_70b_by_size_is_llama_70b_wide_with_gqa():
    arch, basis = assumed_architecture(7e10)
    assert basis.id == "llama-3.1-70b"
    assert (arch.num_hidden_layers, arch.hidden_size, arch.num_attention_heads, arch.num_key_value_heads) == (
        79,
        8192,
        64,
        8,
    )


def test_article_70b_by_size_reports_its_shape_and_counts_attention():
    """6·N·D = 6 x 7e10 x 5e11 = 2.1e23; with attention at the member's 8,192 tokens:
    12 x 79 layers x 8192 x (64 x 128) x 5e11 = 3.18e22 more, 2.418e23 (the preset, 80 layers: 2.44e23)."""
    result = estimate({**ARTICLE, "model": {"params": 7e10}})["result"]
    c, m = result["compute"], result["model"]
    assert c["training_flop_6n"] == pytest.approx(2.1e23, rel=1e-12)
    attention = 12 * 79 * 8192 * 64 * 128 * 5e11
    assert c["training_flop"] == pytest.approx(2.1e23 + attention, rel=1e-12)
    assert c["training_flop"] == pytest.approx(2.418e23, rel=1e-3)
    shape = m["assumed_shape"]
    assert shape["code"] == "assumed-shape" and shape["basis"] == "llama-3.1-70b"
    assert (shape["num_hidden_layers"], shape["num_key_value_heads"], shape["intermediate_size"]) == (
        79,
        8,
        28672,
    )
    assert m["seq_len"] == 8192
    note = next(w for w in result["warnings"] if w["code"] == "assumed-shape")
    assert "79 layers" in note["message"] and "8 KV heads" in note["message"]


def test_70b_by_size_costs_what_the_preset_costs():
    """Issue 20: the same 70B dense cost 87.3 M CNY as a preset and 102.3 M as {"params": 7e10}
    (a 70-head, no-GQA shape without attention FLOPs). Both now need the same cluster."""
    by_size = estimate({**ARTICLE, "model": {"params": 7e10}})["result"]
    preset = estimate({**ARTICLE, "model": {"preset": "llama-3.1-70b"}})["result"]
    assert by_size["compute"]["cards"] == preset["compute"]["cards"]
    assert by_size["cost"]["capex"]["total"] == preset["cost"]["capex"]["total"]
