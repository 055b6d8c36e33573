"""Fabric sizing against published counts (NVIDIA DGX SuperPOD H100), fat-tree theory and the source
article's leaf example."""

from __future__ import annotations

import numpy as np
import pytest

from estimator.cluster.network import (
    Frontend,
    design_fabric,
    fabric_counts,
    leaf_ports,
    tier_limits,
)
from estimator.errors import ScenarioError
from estimator.validation.superpod import load_superpod_table, superpod_validation_rows

SUPERPOD = load_superpod_table()
CONTRACT_KEYS = {
    "tiers",
    "endpoints",
    "leaf_switches",
    "spine_switches",
    "core_switches",
    "total_switches",
    "oversubscription",
    "server_links",
    "switch_links",
    "transceivers",
    "bisection_bandwidth_bps",
    "max_endpoints",
    "nodes_per_leaf_group",
    "cross_leaf_bandwidth_factor",
    "cables",
}


def superpod(gpus: int, **kw):
    return design_fabric(gpus, 64, 1.0, True, 8, 400, management_ports=4, **kw)


@pytest.mark.parametrize("row", SUPERPOD, ids=lambda r: f"{r['scalable_units']}SU")
def test_superpod_h100_table_exact(row):
    fab = superpod(row["gpus"])
    assert fab.tiers == 2
    assert fab.leaf_switches == row["leaf_switches"]
    assert fab.spine_switches == row["spine_switches"]
    assert fab.server_links == row["node_leaf_cables"]
    assert fab.switch_links == row["leaf_spine_cables"]
    assert fab.nodes_per_leaf_group == min(32, row["nodes"])  # the SU: 32 node slots per rail leaf
    assert fab.cross_leaf_bandwidth_factor == 1.0


def test_superpod_table_is_the_four_published_rows():
    assert [r["scalable_units"] for r in SUPERPOD] == [1, 2, 3, 4]
    assert SUPERPOD[-1]["gpus"] == 1016


def test_superpod_three_su_spines_follow_even_uplink_spread():
    # 24 leaves x 32 uplinks = 768 links fit 12 spines by ports, but 12 does not divide 32;
    # the smallest divisor of 32 that is >= 12 is 16, as published.
    assert superpod(760).spine_switches == 16
    assert superpod(760, spine_rule="min").spine_switches == 12
    assert superpod(1016, spine_rule="min").spine_switches == 16


def test_superpod_validation_rows_all_zero_error():
    rows = superpod_validation_rows()
    assert len(rows) == 16
    assert all(set(r) == {"case", "metric", "published", "predicted", "error_pct"} for r in rows)
    assert all(r["error_pct"] == 0.0 for r in rows)


@pytest.mark.parametrize("k", [16, 32, 64, 128])
@pytest.mark.parametrize("rail", [True, False])
def test_two_tier_non_blocking_holds_k_squared_over_two(k, rail):
    nics = 8
    fab = design_fabric(k * k // 2, k, 1.0, rail, nics)
    assert (fab.tiers, fab.leaf_switches, fab.spine_switches, fab.core_switches) == (2, k, k // 2, 0)
    assert fab.max_endpoints == k * k // 2
    assert fab.switch_links == k * k // 2
    assert design_fabric(k * k // 2 + nics, k, 1.0, rail, nics).tiers == 3


@pytest.mark.parametrize("k", [8, 16, 32, 64])
def test_three_tier_fat_tree_holds_k_cubed_over_four(k):
    fab = design_fabric(k**3 // 4, k, 1.0, False, 8)
    assert fab.tiers == 3
    assert fab.core_switches == (k // 2) ** 2
    assert fab.leaf_switches == fab.spine_switches == k * k // 2
    assert fab.total_switches == 5 * k * k // 4
    assert fab.pods == k
    assert fab.max_endpoints == k**3 // 4
    assert fab.switch_links == 2 * k**3 // 4
    with pytest.raises(ScenarioError) as err:
        design_fabric(k**3 // 4 + 1, k, 1.0, False, 8)
    assert err.value.errors[0].field == "network.switch_ports"


def test_article_leaf_example_two_to_one():
    # Article §3.2: 8x200G per server, 4 servers per leaf (32 down-links), uplinks half the down-links.
    fab = design_fabric(16 * 8, 48, 2.0, rail_optimized=False, nics_per_node=8, port_gbps=200)
    assert (fab.leaf_down_ports, fab.leaf_up_ports) == (32, 16)
    assert fab.nodes_per_leaf_group == 4
    assert fab.leaf_switches == 4
    assert fab.effective_oversubscription == 2.0
    assert fab.cross_leaf_bandwidth_factor == 2.0
    # Spines: 4 leaves x 16 uplinks = 64 links; 2 spines take 8 links from each leaf.
    assert fab.spine_switches == 2
    # Bisection: half the uplink capacity, 64 x 200 Gbit/s / 2.
    assert fab.bisection_bandwidth_bps == pytest.approx(64 * 200e9 / 2)
    # Not rail-optimized: server -> ToR leaf is copper in the rack, only leaf-spine links need optics.
    assert fab.to_dict()["cables"] == {"dac": 128, "aoc": 0, "fiber": 64}
    assert fab.transceivers == 128


def test_leaf_port_rounding_matches_reference_examples():
    assert leaf_ports(64, 1.0) == (32, 32)
    assert leaf_ports(64, 1.5) == (38, 26)
    assert leaf_ports(64, 2.0) == (42, 22)
    assert leaf_ports(64, 3.0) == (48, 16)
    assert tier_limits(64, 2.0, rail_optimized=False)[1] == 2688
    assert tier_limits(64, 1.5, rail_optimized=False)[1] == 2432
    fab = design_fabric(3072, 64, 3.0, rail_optimized=False)
    assert (fab.leaf_switches, fab.spine_switches) == (64, 16)
    assert fab.cross_leaf_bandwidth_factor == 3.0


def test_single_switch_up_to_radix():
    fab = design_fabric(64, 64)
    assert (fab.tiers, fab.total_switches, fab.switch_links) == (1, 1, 0)
    assert fab.cross_leaf_bandwidth_factor == 1.0
    assert fab.nodes_per_leaf_group == fab.nodes == 8
    assert design_fabric(72, 64).tiers == 2


def test_optics_two_per_fibre_link_and_cable_kinds():
    rail = design_fabric(1024, 64)  # rail leaves in network racks: fibre everywhere
    assert rail.to_dict()["cables"] == {"dac": 0, "aoc": 0, "fiber": 2048}
    assert rail.transceivers == 2 * 2048
    aoc = design_fabric(1024, 64, server_cable="aoc")  # optics built into the cable
    assert aoc.transceivers == 2 * aoc.switch_links
    assert aoc.aoc_cables == 1024


def test_rail_optimized_rounds_leaves_to_scalable_units():
    # 40 nodes: two SUs per rail (32 + 8 nodes), so 16 leaves; a ToR layout packs 320 ports on 10.
    assert design_fabric(320, 64, rail_optimized=True).leaf_switches == 16
    assert design_fabric(320, 64, rail_optimized=False).leaf_switches == 10


def test_bisection_and_oversubscription_fields():
    fab = design_fabric(2048, 64)
    assert fab.bisection_bandwidth_bps == pytest.approx(2048 * 400e9 / 2)
    assert fab.oversubscription == 1.0
    d = fab.to_dict()
    assert set(d) >= CONTRACT_KEYS
    assert d["frontend"] is None


def test_frontend_fabric_adds_two_ports_per_node():
    fab = design_fabric(1024, 64, frontend=Frontend(port_gbps=200))
    fe = fab.frontend
    assert fe is not None and fe.endpoints == 2 * 128
    assert fe.port_gbps == 200 and not fe.rail_optimized
    assert fab.to_dict()["frontend"]["endpoints"] == 256
    assert fab.total_switches == design_fabric(1024, 64).total_switches


@pytest.mark.parametrize(
    "bad",
    [
        {"endpoints": 0, "switch_ports": 64},
        {"endpoints": 8, "switch_ports": 1},
        {"endpoints": 8, "switch_ports": 64, "oversubscription": 0},
        {"endpoints": 8, "switch_ports": 64, "server_cable": "copper"},
        {"endpoints": 8, "switch_ports": 64, "spine_rule": "fancy"},
    ],
)
def test_bad_inputs_raise_scenario_error(bad):
    with pytest.raises(ScenarioError) as err:
        design_fabric(**bad)
    assert err.value.errors[0].field.startswith("network.")


@pytest.mark.parametrize(
    ("k", "r", "rail", "rule"),
    [
        (16, 1.0, True, "even"),
        (16, 1.0, False, "even"),
        (16, 2.0, False, "even"),
        (16, 3.0, True, "min"),
        (12, 1.0, False, "even"),
        (64, 1.0, True, "even"),
    ],
)
def test_fabric_counts_matches_design_fabric(k, r, rail, rule):
    top = tier_limits(k, r, 8, rail)[2]
    e = np.unique(np.linspace(1, top, 400).astype(int))
    e = np.concatenate([e, [top], np.arange(1, min(top, 300))])
    got = fabric_counts(e, k, r, 8, rail, spine_rule=rule)
    assert got["feasible"].all()
    for i, n in enumerate(e):
        fab = design_fabric(int(n), k, r, rail, 8, spine_rule=rule)
        assert got["tiers"][i] == fab.tiers
        assert got["leaves"][i] == fab.leaf_switches
        assert got["spines"][i] == fab.spine_switches
        assert got["cores"][i] == fab.core_switches
        assert got["switches"][i] == fab.total_switches
        assert got["switch_links"][i] == fab.switch_links
        assert got["server_links"][i] == fab.server_links
        assert got["transceivers"][i] == fab.transceivers


def test_fabric_counts_flags_infeasible_and_sweeps_a_million():
    got = fabric_counts(np.array([0, 1024, 1025]), 16, 1.0, 8, False)
    assert got["feasible"].tolist() == [False, True, False]
    assert got["switches"][[0, 2]].tolist() == [-1, -1]
    big = fabric_counts(np.arange(1, 1_000_001), 128, 1.0)
    assert big["switches"].shape == (1_000_000,)
    assert big["tiers"].max() == 3 and big["feasible"].sum() == tier_limits(128)[2]
