"""The catalog: contract ids, a source and date on every figure, ranges that hold their value,
cross references, and the handful of figures the design fixes by name."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from estimator import catalog
from estimator.catalog._load import CatalogDataError, build_entry, split_figure
from estimator.catalog.entries import Accelerator, Switch

# docs/architecture.md#scenario-contract: ids that are part of the public contract
CONTRACT_ACCELERATORS = [
    "a100-sxm-40gb",
    "a100-sxm-80gb",
    "h100-sxm",
    "h800-sxm",
    "h200-sxm",
    "b200",
    "gb200",
    "mi300x",
    "ascend-910b1",
    "ascend-910b2",
    "ascend-910b3",
    "ascend-910b4",
    "ascend-910c",
    "ascend-310p",
]
CONTRACT_SERVERS = [
    "atlas-800t-a2",
    "atlas-900-a3-node",
    "dgx-a100",
    "dgx-h100",
    "dgx-h200",
    "dgx-b200",
    "generic-8card",
    "hgx-h800",
    "mi300x-8",
]
CONTRACT_PRESETS = [
    "qwen3-8b",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "deepseek-v3",
    "gpt3-175b",
    "pangu-ultra-moe-718b",
    "mt-nlg-530b",
    "megatron-gpt-1.7b",
    "megatron-gpt-3.6b",
    "megatron-gpt-7.5b",
    "megatron-gpt-18.4b",
    "megatron-gpt-39.1b",
    "megatron-gpt-76.1b",
    "megatron-gpt-145.6b",
    "megatron-gpt-310.1b",
    "megatron-gpt-529.6b",
    "megatron-gpt-1t",
]
TABLES = {
    "accelerators": catalog.accelerators,
    "servers": catalog.servers,
    "switches": catalog.switches,
    "transceivers": catalog.transceivers,
    "drives": catalog.drives,
}


def all_entries():
    for table, getter in TABLES.items():
        for eid, entry in getter().items():
            yield table, eid, entry


def test_contract_ids_exist():
    assert set(CONTRACT_ACCELERATORS) <= set(catalog.ACCELERATOR_IDS)
    assert set(CONTRACT_SERVERS) <= set(catalog.SERVER_IDS)
    assert set(CONTRACT_PRESETS) <= set(catalog.PRESET_IDS)
    for aid in CONTRACT_ACCELERATORS:
        assert catalog.accelerator(aid).id == aid
    for sid in CONTRACT_SERVERS:
        assert catalog.server(sid).id == sid
    for pid in CONTRACT_PRESETS:
        assert catalog.preset(pid).id == pid
    assert {"qm9700", "sn5600"} <= set(catalog.SWITCH_IDS)
    assert {"nvme-15.36tb", "hdd-24tb", "local-nvme-3.84tb"} <= set(catalog.DRIVE_IDS)
    assert len(catalog.TRANSCEIVER_IDS) >= 3


@pytest.mark.parametrize(
    "getter",
    [catalog.accelerator, catalog.server, catalog.switch, catalog.transceiver, catalog.drive, catalog.preset],
)
def test_unknown_id_raises_key_error_with_the_id(getter):
    with pytest.raises(KeyError) as info:
        getter("no-such-thing")
    assert info.value.args == ("no-such-thing",)
    with pytest.raises(KeyError):
        getter(["unhashable"])


def test_every_numeric_figure_has_source_and_date():
    for table, eid, entry in all_entries():
        for f in dataclasses.fields(entry):
            if f.name in ("id", "sources") or f.type == "str":
                continue
            src = entry.sources.get(f.name)
            assert src is not None, f"{table}.{eid}.{f.name} has no source"
            assert src.source.strip() and re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", src.as_of), (
                table,
                eid,
                f.name,
            )
    for key in catalog.defaults():
        src = catalog.default_sources()[key]
        assert src.source.strip() and re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", src.as_of), key
    for pid, p in catalog.presets().items():
        for key in ("architecture", "published_total_params", "published_active_params", "default_seq_len"):
            src = p.sources[key]
            assert src.source.strip() and re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", src.as_of), (pid, key)


def test_ranges_contain_the_value_used():
    checked = 0
    for table, eid, entry in all_entries():
        for name, src in entry.sources.items():
            value = getattr(entry, name)
            if src.range is not None and value:
                lo, hi = src.range
                assert lo <= value <= hi, f"{table}.{eid}.{name} = {value} outside {src.range}"
                checked += 1
    for key, src in catalog.default_sources().items():
        if src.range is not None:
            assert src.range[0] <= catalog.defaults()[key] <= src.range[1], key
            checked += 1
    assert checked > 50


def test_ascend_910b_peaks_record_their_disagreement():
    for aid in ("ascend-910b1", "ascend-910b2", "ascend-910b3", "ascend-910b4"):
        src = catalog.accelerator(aid).sources["peak_flops_bf16"]
        assert src.range is not None and src.range[0] < src.range[1]
    # MindSpeed-LLM's 910B peak, and 24 AI cores x 16^3 MACs x 2 x 1.8 GHz
    assert catalog.accelerator("ascend-910b2").peak_flops_bf16 == pytest.approx(354e12)
    derived = 24 * 16**3 * 2 * 1.8e9
    assert derived == pytest.approx(354e12, rel=0.001)


def test_named_figures():
    h100, h800 = catalog.accelerator("h100-sxm"), catalog.accelerator("h800-sxm")
    assert h800.peak_flops_bf16 == h100.peak_flops_bf16 == pytest.approx(989.4e12)
    assert h800.scaleup_bandwidth_bytes_per_s * 2 == pytest.approx(400e9)  # NVLink 400 GB/s bidirectional
    assert h100.scaleup_bandwidth_bytes_per_s * 2 == pytest.approx(900e9)
    assert catalog.accelerator("gb200").scaleup_domain_cards == 72
    c = catalog.accelerator("ascend-910c")
    assert (c.peak_flops_bf16, c.hbm_bytes, c.hbm_bandwidth_bytes_per_s, c.scaleup_domain_cards) == (
        752e12,
        128e9,
        3.2e12,
        384,
    )
    assert catalog.accelerator("a100-sxm-80gb").peak_flops_fp8 is None  # no FP8 on Ampere
    assert catalog.accelerator("a100-sxm-80gb").peak_flops("fp8") == 312e12
    assert catalog.server("atlas-900-a3-node").scaleup_domain_cards == 384
    assert catalog.server("mi300x-8").accelerator == "mi300x"
    assert catalog.server("hgx-h800").accelerator == "h800-sxm"


def test_matmul_efficiency_is_physical():
    # at most 0.95: the 910B's measured MAMF is 322.5 of its 354 TFLOP/s (0.91; mamf-finder on a
    # 910B2C), the highest measured fraction in the catalog
    for aid, acc in catalog.accelerators().items():
        assert 0.4 < acc.matmul_efficiency <= 0.95, aid
    for aid in ("a100-sxm-80gb", "h100-sxm", "h200-sxm"):
        assert 0.75 <= catalog.accelerator(aid).matmul_efficiency <= 0.85


def test_defaults():
    d = catalog.defaults()
    assert d["electricity_usd_per_kwh"] == 0.08
    assert d["pue"] == 1.3
    assert d["usd_to_cny"] == 7.2
    assert d["depreciation_years"] == 4
    for key in (
        "utilization",
        "storage_node_nvme_usd",
        "storage_node_hdd_usd",
        "dac_cable_usd",
        "fiber_cable_usd",
    ):
        assert d[key] > 0, key


def test_every_default_is_read_by_the_engine():
    """A setting nobody reads is a trap: each defaults.toml key must be used by the code."""
    import pathlib

    root = pathlib.Path(catalog.__file__).resolve().parents[1]
    code = "\n".join(p.read_text(encoding="utf-8") for p in root.rglob("*.py"))
    unread = [key for key in catalog.defaults() if f'"{key}"' not in code]
    assert unread == []


def test_cross_references_and_prices():
    for aid, acc in catalog.accelerators().items():
        assert acc.default_server in catalog.SERVER_IDS, aid
        assert acc.cloud_reserved_usd_per_card_hour <= acc.cloud_price_usd_per_card_hour, aid
    for sid, srv in catalog.servers().items():
        acc = catalog.accelerator(srv.accelerator)
        # a server's price is its chassis plus its cards
        assert srv.price_usd == pytest.approx(
            srv.chassis_price_usd + srv.cards_per_node * acc.price_usd, rel=0.01
        ), sid


def test_preset_architecture_fields():
    p = catalog.preset("deepseek-v3")
    a = p.architecture
    assert (a.num_experts, a.num_experts_per_tok, a.n_shared_experts, a.first_k_dense_replace) == (
        256,
        8,
        1,
        3,
    )
    assert (a.kv_lora_rank, a.q_lora_rank, a.vocab_size) == (512, 1536, 129280)
    assert p.default_seq_len == 4096
    assert catalog.preset("gpt3-175b").architecture.hidden_act == "gelu"
    assert catalog.preset("llama-3.1-405b").published_total_params == 405e9


def test_listing_is_json_with_sources():
    listing = catalog.catalog_listing()
    text = json.dumps(listing)
    assert re.fullmatch(r"2026\.11-[0-9a-f]{8}", catalog.CATALOG_VERSION)
    assert listing["version"] == catalog.CATALOG_VERSION
    for table in [*list(TABLES), "presets", "defaults"]:
        assert listing[table], table
    h100 = listing["accelerators"]["h100-sxm"]
    assert h100["peak_flops_bf16"] == 989.4e12 and h100["sources"]["peak_flops_bf16"]["as_of"]
    assert listing["defaults"]["pue"]["value"] == 1.3 and listing["defaults"]["pue"]["source"]
    assert listing["presets"]["qwen3-8b"]["architecture"]["num_key_value_heads"] == 8
    assert "Infinity" in text


def test_lookups_are_cached_objects():
    assert catalog.accelerator("h100-sxm") is catalog.accelerator("h100-sxm")
    mutated = catalog.accelerators()
    mutated.clear()
    assert "h100-sxm" in catalog.accelerators()


# --- the loader rejects malformed data -------------------------------------------------------


def test_figure_without_source_or_outside_range_is_rejected():
    with pytest.raises(CatalogDataError, match="source"):
        split_figure("x", {"value": 1.0, "as_of": "2024-01"})
    with pytest.raises(CatalogDataError, match="outside"):
        split_figure("x", {"value": 5.0, "source": "s", "as_of": "2024-01", "range": [1, 2]})
    value, src = split_figure("x", {"value": 1.5, "source": "s", "as_of": "2024-01", "range": [1, 2]})
    assert value == 1.5 and src.range == (1.0, 2.0)


def test_entry_with_bare_number_or_unknown_field_is_rejected():
    fig = {"value": 1, "source": "s", "as_of": "2024-01"}
    good = {
        "name": "n",
        "vendor": "v",
        "fabric": "ethernet",
        "ports": fig,
        "port_gbps": fig,
        "power_w": fig,
        "price_usd": fig,
    }
    assert build_entry(Switch, "x", good, "switches").ports == 1
    with pytest.raises(CatalogDataError, match="source"):
        build_entry(Switch, "x", {**good, "ports": 64}, "switches")
    with pytest.raises(CatalogDataError, match="unknown"):
        build_entry(Switch, "x", {**good, "colour": "red"}, "switches")
    with pytest.raises(CatalogDataError, match="missing"):
        build_entry(Accelerator, "x", {"name": "n"}, "accelerators")
