"""hardware.cards_per_node overrides the server's card count: the node keeps the server's NICs per
card and, where the server's scale-up domain is the node itself, the domain is the node's cards;
a supernode's domain spans its nodes and stays. Before 2.56.0 a 4-card node of a DGX H100 kept 8
NICs (twice the scale-out endpoints per card) and an NVLink domain of 8 cards across two nodes."""

from __future__ import annotations

import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.plan.compose import estimate


def _doc(**hardware) -> dict:
    return {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12},
        "hardware": hardware,
        "cluster": {"cards": 64},
    }


@pytest.mark.parametrize(
    ("hardware", "nics", "domain"),
    [
        # DGX H100: 8 GPUs, 8 ConnectX-7 compute ports, NVLink among its 8 GPUs
        ({"accelerator": "h100-sxm"}, 8, 8),
        ({"accelerator": "h100-sxm", "cards_per_node": 4}, 4, 4),
        # Atlas 800T A2: 8 NPUs, one RoCE port each, HCCS among the 8; 3 cards -> 3 ports
        ({"accelerator": "ascend-910b2", "cards_per_node": 3}, 3, 3),
        # CloudMatrix 384 node: 8 NPUs, 8 RoCE ports, the supernode's 384-NPU domain across nodes
        ({"accelerator": "ascend-910c", "cards_per_node": 4}, 4, 384),
    ],
)
def test_an_overridden_node_keeps_its_servers_nics_per_card_and_its_own_domain(hardware, nics, domain):
    r = resolve(validate_shape(_doc(**hardware)))
    assert (r.nics_per_node, r.scaleup_domain_cards) == (nics, domain)


def test_the_network_of_4_card_nodes_has_one_endpoint_per_card():
    out = estimate(_doc(accelerator="h100-sxm", cards_per_node=4))["result"]
    assert out["compute"]["nodes"] == 16 and out["network"]["nics_per_node"] == 4
    assert out["network"]["endpoints"] == 64  # 16 nodes x 4 NICs, as 8 nodes x 8 on the server itself
    assert out["compute"]["scaleup_domain_cards"] == 4


def test_a_nics_per_node_given_is_kept():
    r = resolve(
        validate_shape({**_doc(accelerator="h100-sxm", cards_per_node=4), "network": {"nics_per_node": 2}})
    )
    assert r.nics_per_node == 2
