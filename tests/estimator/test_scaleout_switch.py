"""The scale-out switch a plan prices when the scenario names none (money.pricing.default_switch):
one of the server's compute-fabric link layer (InfiniBand or Ethernet/RoCE), at its NIC speed,
of the accelerator's vendor where the catalog has one. Expected prices are the catalog's unit
prices times the capacity ratio (ports x Gb/s asked over the switch's), worked by hand."""

import pytest

from estimator import catalog
from estimator.plan.compose import estimate


def _switch_row(scenario):
    result = estimate(scenario, {})["result"]
    row = next(a for a in result["assumptions"] if a["code"] == "assumption.switch-price")
    return row["value"], row["source"]


def _scenario(accelerator, server, cards=64):
    return {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e11},
        "hardware": {"accelerator": accelerator, "server": server},
        "cluster": {"cards": cards},
    }


def test_dgx_a100_hdr_infiniband_is_priced_with_an_infiniband_switch():
    """DGX A100: 8 x HDR 200G InfiniBand. The catalog's one InfiniBand switch is the 64 x 400G
    QM9700 ($36,000); 64 ports at 200G are half its capacity: 36,000 x (64 x 200)/(64 x 400) = $18,000.
    (It was the Huawei CE8851 Ethernet switch, the only 200G entry.)"""
    value, source = _switch_row(_scenario("a100-sxm-80gb", "dgx-a100"))
    assert source.startswith("NVIDIA Quantum-2 QM9700")
    assert value == pytest.approx(18_000)


def test_cloudmatrix_roce_plane_is_priced_with_a_huawei_roce_switch():
    """Atlas 900 A3 node: 8 x 400G RoCE. Of the 400G Ethernet entries the Huawei CE9860 ($100,000,
    128 x 400GE) is the accelerator vendor's; 64 ports are half of it: $50,000. (It was the
    InfiniBand QM9700.)"""
    value, source = _switch_row(_scenario("ascend-910c", "atlas-900-a3-node", cards=384))
    assert source.startswith("Huawei CloudEngine CE9860")
    assert value == pytest.approx(50_000)


def test_dgx_h100_keeps_the_ndr_switch():
    value, source = _switch_row(_scenario("h100-sxm", "dgx-h100"))
    assert source == "NVIDIA Quantum-2 QM9700 (InfiniBand NDR, 64 x 400G)"
    assert value == pytest.approx(36_000)


def test_every_server_fabric_has_a_switch():
    """Each server's compute-fabric link layer is one the switches carry ("" = either)."""
    fabrics = {sw.fabric for sw in catalog.switches().values()}
    assert fabrics == {"infiniband", "ethernet"}
    for server in catalog.servers().values():
        assert server.scaleout_fabric in fabrics | {""}, server.id
