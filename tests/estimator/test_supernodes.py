"""Supernodes (issue 13): the catalog reproduces the published compositions, the scale-up plane's
bill is counted by hand, plans size and price whole supernodes, and the step-time difference
between 8-card nodes and a supernode is split into chip and domain. Published figures and their
sources: docs/supernodes.md."""

import pytest

from estimator import catalog
from estimator.cluster.scaleup import rack_power_w, racks, supernodes_for, unit_bill
from estimator.plan.compose import estimate
from estimator.plan.supernode_rules import explain_step_time


def _plan(accelerator, cards=2304, preset="deepseek-v3", **hardware):
    return estimate(
        {
            "model": {"preset": preset},
            "hardware": {"accelerator": accelerator, **hardware},
            "training": {"tokens": 1e12},
            "cluster": {"cards": cards},
        }
    )["result"]


def test_cloudmatrix_384_published_composition():
    """arXiv 2506.12708 sec. 3 and SemiAnalysis (2025-04-16): 384 NPUs and 192 Kunpeng CPUs in 48
    nodes of 8, 16 racks (12 compute + 4 bus), 56 x 400G UB ports and 8 x 400G parameter-plane
    ports per node, 7 L1 UB switch chips per node and 112 L2 UB switches."""
    sn = catalog.supernode("cloudmatrix-384")
    node = catalog.server(sn.server)
    assert (sn.cards, sn.cpus, sn.nodes, node.cards_per_node) == (384, 192, 48, 8)
    assert (sn.compute_racks, sn.network_racks) == (12, 4)
    assert sn.compute_racks + sn.network_racks == 16
    assert (sn.scaleup_ports_per_node, sn.scaleup_port_gbps) == (56, 400)
    assert (node.nics_per_node, node.nic_gbps) == (8, 400)
    assert (sn.node_switch_chips_per_node, sn.rack_switches) == (7, 112)
    assert node.supernode == sn.id and sn.accelerator == node.accelerator == "ascend-910c"


def test_cloudmatrix_384_scaleup_bill_by_hand():
    """48 x 56 = 2,688 optical links, 2 modules each = 5,376 LPO modules (SemiAnalysis: 14 per
    chip x 384 = 5,376); 48 x 7 = 336 L1 + 112 L2 switch chips."""
    bill = unit_bill(catalog.supernode("cloudmatrix-384"))
    assert bill.links == 2688
    assert bill.transceivers == 5376 == 14 * 384
    assert bill.cables == 2688
    assert bill.tiers() == [
        {"tier": 1, "where": "node", "units": 48, "chips": 336},
        {"tier": 2, "where": "switch rack", "units": 112, "chips": 112},
    ]
    # 112 x 1,000 W + 5,376 x 5 W; 112 x $10,000 + 5,376 x $250 + 2,688 x $100
    assert bill.scaleup_power_w == pytest.approx(112_000 + 26_880)
    assert bill.scaleup_price_usd == pytest.approx(1_120_000 + 1_344_000 + 268_800)


def test_gb200_nvl72_published_composition():
    """NVIDIA DGX GB200 user guide: 18 compute trays of 4 GPUs and 9 NVLink switch trays per rack;
    SemiAnalysis: 5,184 copper cables in the NVLink spine (1,296 links x 4), no optics."""
    sn = catalog.supernode("gb200-nvl72")
    tray = catalog.server(sn.server)
    assert (sn.nodes, tray.cards_per_node, sn.cards, sn.rack_switches) == (18, 4, 72, 9)
    assert (sn.compute_racks, sn.network_racks, sn.cpus) == (1, 0, 36)
    bill = unit_bill(sn)
    assert bill.links == 18 * 4 * 18 == 1296
    assert bill.cables == 5184
    assert bill.transceivers == 0
    assert bill.tiers() == [{"tier": 1, "where": "compute rack", "units": 9, "chips": 18}]
    nvl36 = catalog.supernode("gb200-nvl36x2")  # NVIDIA tuning guide: 2 racks of 9 trays + 9 switch trays
    assert (nvl36.cards, nvl36.compute_racks, nvl36.rack_switches) == (72, 2, 18)


def test_degenerate_8_card_nodes_have_no_plane():
    for sid in ("dgx-h100-8gpu", "atlas-800t-a2-8npu"):
        bill = unit_bill(catalog.supernode(sid))
        assert bill.degenerate and bill.price_usd == 0 and bill.power_w == 0 and bill.cards == 8


@pytest.mark.parametrize("sid", catalog.SUPERNODE_IDS)
def test_supernode_price_is_nodes_plus_plane(sid):
    """supernodes.toml's price rule: nodes x (chassis + cards x card price) + the plane = price."""
    sn = catalog.supernode(sid)
    srv, acc = catalog.server(sn.server), catalog.accelerator(sn.accelerator)
    nodes_usd = sn.nodes * (srv.chassis_price_usd + srv.cards_per_node * acc.price_usd)
    assert nodes_usd + unit_bill(sn).scaleup_price_usd == pytest.approx(sn.price_usd, rel=0.01)


def test_supernode_power_against_published():
    """One CloudMatrix 384: 384 x 700 W + 48 x 3,000 W hosts + the UB plane (138.88 kW) = 551.68 kW,
    within 2% of SemiAnalysis' 559 kW (the host figure is derived from it: a consistency check).
    One NVL72: 72 x 1,200 + 18 x 2,300 + 9 x 1,000 = 136.8 kW, inside NVIDIA's 1.2 MW per 8-rack
    SU (150 kW a rack, network included) and above SemiAnalysis' 132 kW by < 4%."""
    for sid, expected, rel in (("cloudmatrix-384", 551_680.0, 0.02), ("gb200-nvl72", 136_800.0, 0.04)):
        sn = catalog.supernode(sid)
        srv, acc = catalog.server(sn.server), catalog.accelerator(sn.accelerator)
        it = sn.cards * acc.tdp_w + sn.nodes * srv.host_power_w + unit_bill(sn).scaleup_power_w
        assert it == pytest.approx(expected)
        assert it == pytest.approx(sn.system_power_w, rel=rel)
    assert catalog.supernode("gb200-nvl72").system_power_w <= 150_000


def test_racks_and_unit_counts():
    assert supernodes_for([2304, 2000, 384, 1], 384).tolist() == [6, 6, 1, 1]
    assert supernodes_for(2304, 0) == 0
    r = racks(6, 12, 4, scaleout_switches=232, scaleout_switches_per_rack=16)
    assert {k: float(v) for k, v in r.items()} == {"compute": 72, "scaleup": 24, "scaleout": 15, "total": 111}
    assert float(racks(288, 0.25, 0)["compute"]) == 72  # four 8-card servers a rack


def test_2304_card_910c_plan_lists_6_supernodes():
    r = _plan("ascend-910c")
    sec = r["scaleup"]
    assert sec["supernodes"] == 6 and sec["idle_cards"] == 0
    assert sec["unit"]["supernode_id"] == "cloudmatrix-384"
    tiers = {t["tier"]: t for t in sec["unit"]["tiers"]}
    assert tiers[1]["chips"] * 6 == 2016 and tiers[2]["units"] * 6 == 672
    assert sec["totals"]["rack_switches"] == 672
    assert sec["totals"]["transceivers"] == 6 * 5376
    # scale-out (parameter plane) for 48 x 6 nodes of 8 x 400G, not for 2,304 loose cards
    assert sec["scaleout"]["nodes"] == 48 * 6 == r["network"]["nodes"]
    assert r["network"]["endpoints"] == 288 * 8 and r["network"]["port_gbps"] == 400
    assert r["network"]["nics_per_node"] == 8
    # VPC plane: 48 Qingtian ports a supernode on one 128-port leaf (64 down at 1:1)
    assert sec["unit"]["vpc"]["ports"] == 48 and sec["unit"]["vpc"]["leaves"] == 1
    # per supernode: 112 kW L2 + 26.88 kW LPO + VPC (2,500 W leaf + 144 x 9 W) = 142,676 W
    assert r["power"]["breakdown_w"]["scaleup"] == pytest.approx(6 * 142_676)
    # $2,732,800 UB plane + VPC ($100,000 leaf + 144 x $700 + 48 x $100) = $2,938,400 a supernode
    assert r["cost"]["capex"]["scaleup"] == pytest.approx(6 * 2_938_400)
    assert r["cost"]["capex"]["compute"] == pytest.approx(6 * 48 * 113_900)
    assert sec["racks"]["compute"] == 72 and sec["racks"]["scaleup"] == 24
    total = sum(r["cost"]["capex"][k] for k in ("compute", "network", "storage", "scaleup"))
    assert r["cost"]["capex"]["total"] == pytest.approx(total)


def test_partial_supernode_is_bought_whole_and_flagged():
    r = _plan("ascend-910c", cards=2000)
    assert r["scaleup"]["supernodes"] == 6 and r["scaleup"]["idle_cards"] == 304
    assert r["cost"]["capex"]["compute"] == pytest.approx(6 * 48 * 113_900)  # 288 nodes, not 250
    assert "supernode-partly-used" in [a["code"] for a in r["advice"]]


def test_deadline_sizing_rounds_to_whole_supernodes():
    base = {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 2e12},
        "cluster": {"target_days": 30},
        "efficiency": {"mfu": 0.4},
    }
    sn = estimate({**base, "hardware": {"accelerator": "ascend-910c"}})["result"]
    nodes = estimate({**base, "hardware": {"accelerator": "ascend-910b2"}})["result"]
    cards, days = sn["compute"]["cards"], sn["compute"]["wall_clock_days"]
    assert cards % 384 == 0 and sn["scaleup"]["idle_cards"] == 0 and days <= 30
    assert days * cards / (cards - 384) > 30  # one supernode fewer would miss the deadline (MFU given)
    assert nodes["compute"]["cards"] % 8 == 0 and nodes["compute"]["cards"] % 384  # nodes: 8-card steps


def test_910b_nodes_against_910c_supernodes_explained_by_domain():
    """Same model, 2,304 cards: 910B in 8-card nodes against 910C in 6 CloudMatrix 384. The ratio
    of speeds is chip x domain; the 'same chip as nodes' leg equals an independent plan of the 910C
    with its domain cut to 8 cards (hardware.overrides), and the supernode's layout keeps a TP x EP
    group of more than 8 cards on scale-up links (inside its 384). On 8-card nodes such a group
    crosses RoCE; whether the node plan takes one depends on what its all-to-all costs there."""
    b = _plan("ascend-910b2")
    c = _plan("ascend-910c")
    c8 = _plan("ascend-910c", overrides={"scaleup_domain_cards": 8})
    e = explain_step_time(b, c)
    assert e is not None and e["code"] == "step-time-by-domain"
    p = e["params"]
    assert p["ratio"] == pytest.approx(p["chip_factor"] * p["domain_factor"])
    assert p["same_chip_as_nodes_step_time_s"] == pytest.approx(c8["parallelism"]["step_time_s"])
    assert p["same_chip_as_nodes_tokens_per_s"] == pytest.approx(c8["parallelism"]["tokens_per_s"])
    assert p["domain_cards"] == 384 and p["node_cards"] == 8
    assert 8 < p["tp"] * p["ep"] <= 384
    assert p["domain_factor"] > 1 and p["chip_factor"] > 1
    assert explain_step_time(c, b)["params"] == p  # order does not matter
    assert explain_step_time(b, c8) is None  # no supernode on either side
    assert c8["scaleup"]["versus_nodes"] is None and c8["cost"]["capex"]["scaleup"] == 0


def test_power_per_rack_by_hand():
    """CloudMatrix 384: compute rack (32 x 700 + 4 x 3,000 + 224 node-side modules x 5 W) = 35.52 kW;
    bus rack (28 L2 x 1,000 + 672 switch-side modules x 5 W) = 31.36 kW. NVL72: everything in one
    rack, 136.8 kW. Four DGX H100 a rack: 4 x (8 x 700 + 4,600) = 40.8 kW."""
    cases = (
        ("cloudmatrix-384", 35_520, 31_360),
        ("gb200-nvl72", 136_800, None),
        ("dgx-h100-8gpu", 40_800, None),
    )
    for sid, compute, switch in cases:
        sn = catalog.supernode(sid)
        srv, acc = catalog.server(sn.server), catalog.accelerator(sn.accelerator)
        got = rack_power_w(unit_bill(sn), acc.tdp_w, srv.host_power_w)
        assert got["compute"] == pytest.approx(compute)
        assert got["switch"] == (None if switch is None else pytest.approx(switch))


def test_catalog_rejects_inconsistent_supernodes():
    import dataclasses

    from estimator.catalog._load import CatalogDataError, _check_supernodes

    sns, srvs, accs = catalog.supernodes(), catalog.servers(), catalog.accelerators()
    _check_supernodes(sns, srvs, accs)  # the shipped data passes
    bad = [
        {"cloudmatrix-384": dataclasses.replace(sns["cloudmatrix-384"], nodes=47)},  # 47 x 8 != 384
        {"cloudmatrix-384": dataclasses.replace(sns["cloudmatrix-384"], server="no-such-server")},
        {"cloudmatrix-384": dataclasses.replace(sns["cloudmatrix-384"], scaleup_medium="radio")},
    ]
    for table in bad:
        with pytest.raises(CatalogDataError):
            _check_supernodes({**sns, **table}, srvs, accs)
    dangling = {**srvs, "dgx-h100": dataclasses.replace(srvs["dgx-h100"], supernode="nope")}
    with pytest.raises(CatalogDataError):
        _check_supernodes(sns, dangling, accs)


def test_nvl36x2_is_chosen_by_its_tray():
    """hardware.server = gb200-nvl36x2-tray builds the cluster of NVL36x2 pairs: 2,304 GPUs = 32
    units of 2 racks and 18 switch trays (NVIDIA multi-node NVLink tuning guide)."""
    r = _plan("gb200", preset="llama-3.1-405b", server="gb200-nvl36x2-tray")
    sec = r["scaleup"]
    assert sec["unit"]["supernode_id"] == "gb200-nvl36x2" and sec["supernodes"] == 32
    assert sec["racks"]["compute"] == 64 and sec["totals"]["rack_switches"] == 32 * 18
    assert _plan("gb200", preset="llama-3.1-405b")["scaleup"]["unit"]["supernode_id"] == "gb200-nvl72"


def test_cards_that_leave_supernodes_part_idle_are_compared_with_all_their_cards():
    """400 Ascend 910C are bought as ceil(400 / 384) = 2 CloudMatrix 384, 768 cards, 368 of them idle;
    the warning gives the plan of all 768 (its MFU and days), whose nodes and UB plane the 400-card
    plan prices already. Days are FLOPs / (cards · peak · MFU), so the 768-card days are the 400-card
    days x (400 · MFU_400) / (768 · MFU_768). A multiple of 384, or an MFU given, gets no warning."""
    doc = {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 1e12},
        "hardware": {"accelerator": "ascend-910c"},
        "cluster": {"cards": 400},
    }
    result = estimate(doc)["result"]
    (w,) = [w for w in result["warnings"] if w["code"] == "partial-supernode-slow"]
    p = w["params"]
    assert (p["whole"], p["supernodes"], p["idle_cards"], p["supernode"]) == (768, 2, 368, "cloudmatrix-384")
    whole = estimate({**doc, "cluster": {"cards": 768}})["result"]
    assert p["whole_mfu"] == pytest.approx(whole["compute"]["mfu"], rel=1e-12)
    assert p["whole_days"] == pytest.approx(whole["compute"]["wall_clock_days"], rel=1e-9)
    assert p["whole_days"] == pytest.approx(p["days"] * 400 * p["mfu"] / (768 * p["whole_mfu"]), rel=1e-9)
    for part in ("compute", "scaleup"):  # the supernodes' nodes and plane: priced whole either way
        assert whole["cost"]["capex"][part] == result["cost"]["capex"][part]
    assert "368 of the 768 cards of 2 x" in w["message"]
    assert not [w for w in whole["warnings"] if w["code"] == "partial-supernode-slow"]
    given = estimate({**doc, "efficiency": {"mfu": 0.4}})["result"]
    assert not [w for w in given["warnings"] if w["code"].startswith("partial-")]
