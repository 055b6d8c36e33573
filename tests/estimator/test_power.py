"""Power and energy (estimator/cluster/power.py)."""

import numpy as np
import pytest

from estimator.cluster.power import DEFAULT_PUE, ItLoad, breakdown_w, power
from estimator.errors import ScenarioError


def test_h100_node_budget_matches_reference_example():
    # NVIDIA DGX H100 power budget (docs/sources.md#prices): 8 x H100 (5.6 kW) + ~500 W host
    # + ~100 W network = 6.2 kW IT; x PUE 1.2 = 7.44 kW facility.
    p = power(
        ItLoad(cards=8, card_tdp_w=700, nodes=1, host_power_w=500, switches=1, switch_power_w=100),
        pue=1.2,
        hours=24,
    )
    d = p.to_dict()
    assert d["it_w"] == pytest.approx(6200)
    assert d["facility_w"] == pytest.approx(7440)
    assert d["energy_wh"] == pytest.approx(7440 * 24)
    assert d["breakdown_w"] == {
        "accelerators": 5600.0,
        "hosts": 500.0,
        "network": 100.0,
        "storage": 0.0,
        "scaleup": 0.0,
    }


def test_all_four_parts_add_up():
    p = power(
        ItLoad(
            cards=512,
            card_tdp_w=400,
            nodes=64,
            host_power_w=1500,
            switches=24,
            switch_power_w=900,
            transceivers=2048,
            transceiver_power_w=9,
            storage_nodes=6,
            storage_node_power_w=1200,
        ),
        pue=1.3,
        hours=720,
    )
    d = p.to_dict()
    b = d["breakdown_w"]
    assert b["accelerators"] == 512 * 400
    assert b["hosts"] == 64 * 1500
    assert b["network"] == 24 * 900 + 2048 * 9
    assert b["storage"] == 6 * 1200
    assert d["it_w"] == pytest.approx(sum(b.values()))
    assert d["facility_w"] == pytest.approx(1.3 * d["it_w"])
    assert d["energy_wh"] == pytest.approx(d["facility_w"] * 720)


def test_default_pue_and_json_types():
    d = power(ItLoad(cards=8, card_tdp_w=700)).to_dict()
    assert d["pue"] == DEFAULT_PUE
    assert isinstance(d["it_w"], float) and d["energy_wh"] == 0.0


def test_broadcasts_over_arrays():
    cards = np.array([8, 16, 32])
    hours = np.array([[10.0], [20.0]])
    p = power(ItLoad(cards=cards, card_tdp_w=700, nodes=cards / 8, host_power_w=1000), pue=1.25, hours=hours)
    assert p.energy_wh.shape == (2, 3)
    assert p.energy_wh[1, 2] == pytest.approx((32 * 700 + 4 * 1000) * 1.25 * 20)
    assert p.to_dict()["it_w"] == [6600.0, 13200.0, 26400.0]


def test_breakdown_vectorized_over_a_million_rows():
    """One numpy pass over a million rows (its speed is bench/core_vectorized.py's figure)."""
    n = 1_000_000
    rng = np.random.default_rng(1)
    cards = rng.integers(8, 100_000, n)
    p = power(
        ItLoad(
            cards=cards,
            card_tdp_w=700,
            nodes=cards // 8,
            host_power_w=1000,
            switches=cards // 32,
            switch_power_w=900,
            transceivers=cards * 2,
            transceiver_power_w=9,
        ),
        pue=1.3,
        hours=rng.uniform(1, 2000, n),
    )
    assert p.energy_wh.shape == (n,)
    i = 12_345
    it = cards[i] * 700 + cards[i] // 8 * 1000 + cards[i] // 32 * 900 + cards[i] * 2 * 9
    assert p.it_w[i] == pytest.approx(it)


def test_invalid_inputs_name_the_field():
    with pytest.raises(ScenarioError) as e:
        power(ItLoad(cards=8, card_tdp_w=700), pue=0.9)
    assert e.value.errors[0].field == "cost.pue"
    with pytest.raises(ScenarioError):
        power(ItLoad(cards=-1, card_tdp_w=700))


def test_breakdown_returns_arrays():
    b = breakdown_w(cards=[1, 2], card_tdp_w=100)
    assert b["accelerators"].tolist() == [100.0, 200.0]
