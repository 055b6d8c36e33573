"""Storage tiers against the reference's worked numbers (Llama-3 405B, 15.6T tokens)."""

from __future__ import annotations

import numpy as np
import pytest

from estimator.cluster.storage import (
    StorageInputs,
    checkpoint_bytes,
    checkpoint_write_bytes_per_s,
    dataset_bytes,
    design_storage,
    drives_needed,
    tokenized_bytes_per_token,
)
from estimator.errors import ScenarioError

LLAMA3_405B = {
    "params_total": 405e9,
    "tokens": 15.6e12,
    "vocab_size": 128_256,
    "tokens_per_s": 2.5e6,
    "nodes": 2048,
}


def test_405b_checkpoint_is_about_4_9_tb():
    ckpt = checkpoint_bytes(405e9, 12)
    assert ckpt == pytest.approx(4.86e12)
    assert round(ckpt / 1e12, 1) == 4.9
    assert checkpoint_bytes(405e9, 14) == pytest.approx(5.67e12)  # with the bf16 weights too
    assert design_storage(**LLAMA3_405B).checkpoint_bytes == pytest.approx(4.86e12)


def test_hot_write_bandwidth_for_a_120_s_window():
    assert checkpoint_write_bytes_per_s(4.86e12, 120) == pytest.approx(40.5e9)
    st = design_storage(**LLAMA3_405B, inputs=StorageInputs(checkpoint_write_s=120))
    assert st.hot.write_bytes_per_s == pytest.approx(40.5e9)
    assert st.hot.write_capability_bytes_per_s >= st.hot.write_bytes_per_s


def test_tokenized_size_128k_vocab():
    assert tokenized_bytes_per_token(128_256) == 4
    assert dataset_bytes(15.6e12, 128_256) == pytest.approx(62.4e12)
    assert design_storage(**LLAMA3_405B).dataset_bytes == pytest.approx(62.4e12)


def test_tokenized_size_50k_vocab_is_two_bytes():
    assert tokenized_bytes_per_token(50_257) == 2
    assert dataset_bytes(15.6e12, 50_257) == pytest.approx(31.2e12)
    st = design_storage(**{**LLAMA3_405B, "vocab_size": 50_257})
    assert st.bytes_per_token == 2
    assert st.hot.read_bytes_per_s == pytest.approx(2.5e6 * 2)


def test_bytes_per_token_boundary_and_arrays():
    assert tokenized_bytes_per_token(65_536) == 2
    assert tokenized_bytes_per_token(65_537) == 4
    np.testing.assert_array_equal(tokenized_bytes_per_token(np.array([32_000, 151_936])), [2, 4])
    np.testing.assert_allclose(checkpoint_bytes(np.array([7e9, 70e9]), 12), [84e9, 840e9])
    np.testing.assert_array_equal(drives_needed(np.array([1.0, 10.0, 10.5]), 10.0), [1, 1, 2])


@pytest.mark.parametrize("overhead", [1.25, 3.0])  # 8+2 erasure coding, 3x replication
def test_warm_capacity_with_protection_overhead(overhead):
    st = design_storage(
        **LLAMA3_405B,
        inputs=StorageInputs(
            checkpoints_archived=10, warm_overhead=overhead, hdd_capacity_bytes=24e12, max_fill=0.8
        ),
    )
    usable = 15.6e12 * 4.0 + 62.4e12 + 10 * 4.86e12  # raw corpus + tokenized + archive
    assert st.warm.capacity_bytes == pytest.approx(usable)
    assert st.warm.raw_bytes == pytest.approx(usable * overhead)
    assert st.warm.drives_for_capacity == int(np.ceil(usable * overhead / (24e12 * 0.8)))
    assert st.warm.drives == max(st.warm.drives_for_capacity, st.warm.drives_for_write)
    assert st.warm.nodes == int(np.ceil(st.warm.drives / 60))


def test_checkpoints_dominate_note_for_text_llm():
    st = design_storage(**LLAMA3_405B)
    note = st.notes[0]
    assert note.startswith("Text data needs little read bandwidth: 0.01 GB/s")
    assert "checkpoint writes dominate at 40.5 GB/s" in note


def test_no_dominate_note_when_reads_outweigh_checkpoints():
    # A 100M-parameter model fed 1e9 tokens/s: 2 GB/s of reads against 10 MB/s of checkpoint writes.
    heavy = design_storage(1e8, 1e12, 32_000, 1e9, 16)
    assert heavy.hot.read_bytes_per_s > heavy.hot.write_bytes_per_s
    assert not any(n.startswith("Text data") for n in heavy.notes)


def test_hot_drives_are_max_of_capacity_and_bandwidth_bounds():
    st = design_storage(
        **LLAMA3_405B,
        inputs=StorageInputs(
            nvme_capacity_bytes=15.36e12,
            nvme_write_bytes_per_s=4e9,
            nvme_derating=0.5,
            hot_overhead=1.25,
            max_fill=0.8,
        ),
    )
    hot_cap = 62.4e12 + 5 * 4.86e12
    assert st.hot.capacity_bytes == pytest.approx(hot_cap)
    assert st.hot.drives_for_capacity == int(np.ceil(hot_cap * 1.25 / (15.36e12 * 0.8)))
    # per-drive effective write: 4 GB/s x 0.5 derating / 1.25 parity overhead = 1.6 GB/s
    assert st.hot.drives_for_write == int(np.ceil(40.5e9 / 1.6e9))
    assert st.hot.drives == max(st.hot.drives_for_capacity, st.hot.drives_for_write, st.hot.drives_for_read)
    assert "set by write bandwidth" in st.notes[1]
    big_data = design_storage(**{**LLAMA3_405B, "tokens": 300e12})
    assert big_data.hot.drives == big_data.hot.drives_for_capacity > big_data.hot.drives_for_write


def test_restart_time_and_restart_target():
    st = design_storage(**LLAMA3_405B)
    assert st.hot.restart_read_s == pytest.approx(4.86e12 / st.hot.read_capability_bytes_per_s)
    fast = design_storage(**LLAMA3_405B, inputs=StorageInputs(restart_target_s=10))
    assert fast.hot.read_bytes_per_s == pytest.approx(486e9)
    assert fast.hot.restart_read_s <= 10


def test_hot_node_network_bound():
    st = design_storage(**LLAMA3_405B, inputs=StorageInputs(hot_node_bytes_per_s=10e9))
    assert st.hot.nodes >= 5  # 40.5 GB/s over 10 GB/s per storage node
    assert st.hot.write_capability_bytes_per_s >= 40.5e9


def test_cache_per_node_prefetch_plus_checkpoint_staging():
    st = design_storage(**LLAMA3_405B, inputs=StorageInputs(local_nvme_bytes=30.72e12))
    assert st.cache.prefetch_bytes == pytest.approx(62.4e12 / 2048)
    assert st.cache.checkpoint_staging_bytes == pytest.approx(4.86e12 / 2048)
    assert st.cache.per_node_bytes == pytest.approx((62.4e12 + 4.86e12) / 2048)
    assert st.cache.fits is True
    small = design_storage(**{**LLAMA3_405B, "nodes": 2}, inputs=StorageInputs(local_nvme_bytes=3.84e12))
    assert small.cache.fits is False
    assert any("lower cache_dataset_fraction" in n for n in small.notes)


def test_write_window_longer_than_interval_is_noted():
    st = design_storage(
        **LLAMA3_405B, inputs=StorageInputs(checkpoint_interval_s=100, checkpoint_write_s=120)
    )
    assert any("never finish" in n for n in st.notes)


def test_to_dict_has_contract_fields():
    d = design_storage(**LLAMA3_405B).to_dict()
    assert {"checkpoint_bytes", "dataset_bytes", "hot", "warm", "cache", "notes"} <= set(d)
    assert {
        "capacity_bytes",
        "read_bytes_per_s",
        "write_bytes_per_s",
        "drives",
        "nodes",
        "restart_read_s",
    } <= set(d["hot"])
    assert {"capacity_bytes", "drives", "nodes"} <= set(d["warm"])
    assert "per_node_bytes" in d["cache"]
    assert isinstance(d["notes"], list)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("nodes", 0),
        ("checkpoint_write_s", -1),
        ("warm_overhead", 0),
        ("checkpoints_kept", -1),
        ("nvme_capacity_bytes", float("nan")),
    ],
)
def test_bad_inputs_raise_scenario_error(field, value):
    if field in LLAMA3_405B:
        args = {**LLAMA3_405B, field: value}
    else:
        args = {**LLAMA3_405B, "inputs": StorageInputs(**{field: value})}
    with pytest.raises(ScenarioError) as err:
        design_storage(**args)
    assert err.value.errors[0].field == f"storage.{field}"


def test_a_storage_node_reads_at_its_read_rate_not_its_write_rate():
    """The catalog's storage node writes 40 GB/s, half the 80 GB/s it reads (parity/replication):
    the restart read is bounded by the nodes' read rate. By hand, Llama 3 405B's 4.86 TB checkpoint
    in 120 s: 40.5 GB/s over 1.6 GB/s a drive -> 26 drives, which read 26 x 7 GB/s x 0.5 = 91 GB/s;
    nodes max(26 / 24, 40.5 / 40) -> 2, reading 2 x 80 = 160 GB/s: 91 GB/s delivered, a restart
    read of 4.86e12 / 91e9 = 53.4 s (before: capped at 2 x 40 = 80 GB/s, 60.8 s)."""
    inputs = StorageInputs(hot_node_bytes_per_s=40e9, hot_node_read_bytes_per_s=80e9)
    st = design_storage(**LLAMA3_405B, inputs=inputs)
    assert st.hot.drives == 26 and st.hot.nodes == 2
    assert st.hot.read_capability_bytes_per_s == pytest.approx(91e9)
    assert st.hot.write_capability_bytes_per_s == pytest.approx(26 * 1.6e9)
    assert st.hot.restart_read_s == pytest.approx(4.86e12 / 91e9, rel=1e-3)


def test_a_restart_target_buys_nodes_by_their_read_rate():
    """restart_target_s 10 on the same checkpoint: 486 GB/s to read -> 139 drives (3.5 GB/s each)
    and nodes max(139 / 24, 40.5 / 40, 486 / 80) -> 7 (before: 486 / 40 -> 13)."""
    inputs = StorageInputs(hot_node_bytes_per_s=40e9, hot_node_read_bytes_per_s=80e9, restart_target_s=10)
    st = design_storage(**LLAMA3_405B, inputs=inputs)
    assert st.hot.drives == 139 and st.hot.nodes == 7


def test_the_plans_restart_reload_reads_at_the_catalogs_node_read_rate():
    """A plan takes both node rates from the catalog (40 GB/s write, 80 GB/s read): Llama 3.1 405B
    (405.85 G parameters x 12 B = 4.870 TB) on 16,384 H100 has 26 drives in 2 nodes, so the reload
    of a restart reads at min(26 x 3.5, 2 x 80) = 91 GB/s: 53.5 s (before: 80 GB/s, 60.9 s)."""
    from estimator.plan.compose import estimate

    doc = {
        "model": {"preset": "llama-3.1-405b"},
        "training": {"tokens": 15e12, "seq_len": 8192},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 16384},
        "efficiency": {"mfu": 0.4},
    }
    result = estimate(doc)["result"]
    assert result["storage"]["hot"]["nodes"] == 2
    assert result["goodput"]["reload_s"] == pytest.approx(405.853e9 * 12 / 91e9, rel=1e-4)
