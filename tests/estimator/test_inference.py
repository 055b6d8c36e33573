"""Serving sizing (estimator/plan/inference.py): KV cache, concurrency, decode bound."""

import pytest

from estimator.errors import ScenarioError
from estimator.model.transformer import Architecture
from estimator.plan.inference import (
    Deployment,
    decode_tokens_per_s_bound,
    kv_cache_bytes_per_token,
    kv_replication,
    max_concurrent_sequences,
)
from estimator.plan.inference import serving as size

DEPLOYMENT_FIELDS = set(Deployment.__dataclass_fields__)


def serving(arch, **kw):
    """serving with the deployment's fields given flat, as the tests below read."""
    deployment = Deployment(**{k: v for k, v in kw.items() if k in DEPLOYMENT_FIELDS})
    return size(arch, deployment, **{k: v for k, v in kw.items() if k not in DEPLOYMENT_FIELDS})


# Qwen3-8B config.json: 36 layers, hidden 4096, 32 heads, 8 KV heads, head_dim 128, MLP 12288,
# vocab 151,936, untied embeddings.
QWEN3_8B = Architecture(
    num_hidden_layers=36,
    hidden_size=4096,
    num_attention_heads=32,
    num_key_value_heads=8,
    head_dim=128,
    intermediate_size=12288,
    vocab_size=151936,
)
# Parameters by hand: embedding + lm_head 2 x 151,936 x 4,096; per layer q 4096^2 + k,v 2 x 4096 x 1024
# + o 4096^2 + q/k norms 2 x 128 + MLP 3 x 4096 x 12288 + 2 x 4096 norms; final norm 4096.
PER_LAYER = 4096 * 4096 * 2 + 2 * 4096 * 1024 + 256 + 3 * 4096 * 12288 + 2 * 4096
QWEN3_8B_PARAMS = 2 * 151936 * 4096 + 36 * PER_LAYER + 4096
# DeepSeek-V3 config.json: 61 layers, MLA kv_lora_rank 512, qk_rope_head_dim 64.
DEEPSEEK_V3 = Architecture(
    num_hidden_layers=61,
    hidden_size=7168,
    num_attention_heads=128,
    num_key_value_heads=128,
    head_dim=192,
    intermediate_size=18432,
    vocab_size=129280,
    num_experts=256,
    num_experts_per_tok=8,
    n_shared_experts=1,
    moe_intermediate_size=2048,
    first_k_dense_replace=3,
    q_lora_rank=1536,
    kv_lora_rank=512,
    qk_nope_head_dim=128,
    qk_rope_head_dim=64,
    v_head_dim=128,
)
GIB = 2**30
A2_HBM = 64 * GIB  # Atlas 800T A2: 8 x Ascend 910B with 64 GB HBM each
A2_BW = 1.6e12  # [U] ~1.6 TB/s per card (reference section 3)


def test_qwen3_8b_kv_bytes_per_token():
    assert QWEN3_8B_PARAMS == 8_190_735_360
    assert kv_cache_bytes_per_token(QWEN3_8B, "bf16") == 2 * 36 * 8 * 128 * 2 == 147_456
    assert kv_cache_bytes_per_token(QWEN3_8B, "int8") == 73_728


def test_deepseek_v3_mla_kv_bytes_per_token():
    assert kv_cache_bytes_per_token(DEEPSEEK_V3, "bf16") == 61 * (512 + 64) * 2 == 70_272


def test_qwen3_8b_on_one_atlas_800t_a2_hand_computed():
    # usable = 8 cards x 64 GiB x (1 - 0.10 reserve) - 16.38 GB BF16 weights = 478.40 GB
    usable = 8 * A2_HBM * 0.9 - QWEN3_8B_PARAMS * 2
    assert usable == pytest.approx(478.3988e9, rel=1e-6)
    # 32K context: 147,456 B x 32,768 = 4.83 GB per sequence -> 99.01 -> 99 sequences
    s = serving(
        QWEN3_8B,
        params_total=QWEN3_8B_PARAMS,
        hbm_bytes_per_card=A2_HBM,
        hbm_bandwidth_bytes_per_s=A2_BW,
        cards=8,
        context_len=32768,
    )
    assert usable / (147_456 * 32768) == pytest.approx(99.01, abs=0.01)
    assert s.max_concurrent_sequences == 99
    # 4K context: 0.604 GB per sequence -> 792.08 -> 792
    s4k = serving(
        QWEN3_8B,
        params_total=QWEN3_8B_PARAMS,
        hbm_bytes_per_card=A2_HBM,
        hbm_bandwidth_bytes_per_s=A2_BW,
        cards=8,
        context_len=4096,
    )
    assert s4k.max_concurrent_sequences == 792
    # eight single-card replicas: (64 GiB x 0.9 - 16.38 GB) / 4.83 GB = 9.41 -> 9 each -> 72
    rep = serving(
        QWEN3_8B,
        params_total=QWEN3_8B_PARAMS,
        hbm_bytes_per_card=A2_HBM,
        hbm_bandwidth_bytes_per_s=A2_BW,
        cards=8,
        context_len=32768,
        tp=1,
    )
    assert rep.replicas == 8 and rep.max_concurrent_sequences == 72


def test_kv_quantization_raises_concurrency_at_least_the_articles_50_percent():
    kw = {
        "params_total": QWEN3_8B_PARAMS,
        "hbm_bytes_per_card": A2_HBM,
        "hbm_bandwidth_bytes_per_s": A2_BW,
        "cards": 8,
        "context_len": 32768,
    }
    bf16 = serving(QWEN3_8B, kv_dtype="bf16", **kw).max_concurrent_sequences
    int8 = serving(QWEN3_8B, kv_dtype="int8", **kw).max_concurrent_sequences
    assert int8 == 198  # the KV cache halves; the article measured ~50 % more (scales, other overheads)
    assert int8 >= 1.5 * bf16


def test_decode_bound_hand_computed():
    # batch 1, 4K context: bytes per step = 16.38 GB weights + 4096 x 147,456 B = 16.985 GB;
    # bandwidth 8 x 1.6 TB/s x 0.8 = 10.24 TB/s -> 602.9 tokens/s
    s = serving(
        QWEN3_8B,
        params_total=QWEN3_8B_PARAMS,
        hbm_bytes_per_card=A2_HBM,
        hbm_bandwidth_bytes_per_s=A2_BW,
        cards=8,
        context_len=4096,
        concurrency=1,
    )
    expected = 10.24e12 / (QWEN3_8B_PARAMS * 2 + 4096 * 147_456)
    assert s.decode_tokens_per_s_bound == pytest.approx(expected)
    assert s.decode_tokens_per_s_bound == pytest.approx(602.9, abs=0.1)
    assert s.concurrency_fits is True


def test_decode_bound_grows_with_batch_but_per_sequence_falls():
    args = {
        "weights_streamed_bytes": 16e9,
        "kv_bytes_per_token": 147_456,
        "context_len": 4096,
        "hbm_bandwidth_bytes_per_s": 1.6e12,
        "cards": 8,
    }
    t = [float(decode_tokens_per_s_bound(b, **args)) for b in (1, 16, 256)]
    assert t[0] < t[1] < t[2]
    assert t[0] / 1 > t[1] / 16 > t[2] / 256


def test_moe_streams_active_weights_only():
    kw = {
        "hbm_bytes_per_card": 128e9,
        "hbm_bandwidth_bytes_per_s": 3.2e12,
        "cards": 16,
        "context_len": 4096,
        "concurrency": 1,
        "weights_dtype": "int8",
    }
    dense = serving(DEEPSEEK_V3, params_total=671e9, **kw)
    moe = serving(DEEPSEEK_V3, params_total=671e9, params_active=37e9, **kw)
    assert moe.weights_bytes == dense.weights_bytes == 671e9
    assert moe.decode_tokens_per_s_bound > 10 * dense.decode_tokens_per_s_bound


def test_replication_of_kv_across_tensor_parallel_ranks():
    assert kv_replication(QWEN3_8B, 8) == 1.0
    assert kv_replication(QWEN3_8B, 16) == 2.0  # 8 KV heads on 16 ranks: each head twice
    assert kv_replication(DEEPSEEK_V3, 8) == 8.0  # the MLA latent cannot be sharded by head
    s = serving(
        DEEPSEEK_V3,
        params_total=671e9,
        params_active=37e9,
        hbm_bytes_per_card=128e9,
        hbm_bandwidth_bytes_per_s=3.2e12,
        cards=16,
        context_len=8192,
        weights_dtype="int8",
    )
    free = 16 * 128e9 * 0.9 - 671e9
    assert s.max_concurrent_sequences == int(free // (70_272 * 16 * 8192))


def test_weights_that_do_not_fit_give_zero():
    s = serving(
        DEEPSEEK_V3,
        params_total=671e9,
        hbm_bytes_per_card=A2_HBM,
        hbm_bandwidth_bytes_per_s=A2_BW,
        cards=8,
        context_len=4096,
    )
    assert not s.weights_fit and s.max_concurrent_sequences == 0 and s.decode_tokens_per_s_bound == 0.0
    assert max_concurrent_sequences(64e9, 1, 100e9, 1e5, 4096) == 0


def test_contract_fields_and_compute_bound():
    d = serving(
        QWEN3_8B,
        params_total=QWEN3_8B_PARAMS,
        hbm_bytes_per_card=A2_HBM,
        hbm_bandwidth_bytes_per_s=A2_BW,
        cards=8,
        context_len=4096,
        concurrency=2000,
        peak_flops=320e12,
    ).to_dict()
    for key in (
        "kv_cache_bytes_per_token",
        "weights_bytes",
        "max_concurrent_sequences",
        "decode_tokens_per_s_bound",
    ):
        assert key in d
    assert d["concurrency_fits"] is False
    assert d["decode_tokens_per_s_compute_bound"] == pytest.approx(8 * 320e12 / (2 * QWEN3_8B_PARAMS))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"kv_dtype": "int3"}, "serving.kv_dtype"),
        ({"tp": 3}, "serving.tp"),
        ({"context_len": 0}, "serving.context_len"),
        ({"concurrency": 0}, "serving.concurrency"),
        ({"reserve_fraction": 1.0}, "serving.reserve_fraction"),
    ],
)
def test_invalid_inputs_name_the_field(kwargs, field):
    base = {
        "params_total": QWEN3_8B_PARAMS,
        "hbm_bytes_per_card": A2_HBM,
        "hbm_bandwidth_bytes_per_s": A2_BW,
        "cards": 8,
        "context_len": 4096,
    }
    with pytest.raises(ScenarioError) as e:
        serving(QWEN3_8B, **{**base, **kwargs})
    assert e.value.errors[0].field == field
