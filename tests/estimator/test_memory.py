"""estimator.layout.memory: ZeRO model states, Korthikanti activations, pipeline peaks, buffers."""

import numpy as np
import pytest

from estimator.errors import ScenarioError
from estimator.layout.activations import Storage
from estimator.layout.memory import (
    GIB,
    Buffers,
    CardLayout,
    MemoryPolicy,
    gpt_layer_coefficients,
    korthikanti_layer_bytes,
    layer_activation_bytes,
    layer_coefficients,
    model_state_bytes,
    per_card_memory,
    selective_saves_memory,
    stage_layers,
)
from estimator.model.transformer import Architecture, param_counts


def mem(arch, counts, seq_len, buffers=None, **layout):
    """per_card_memory of one layout given as keywords (CardLayout fields), default policy."""
    policy = MemoryPolicy() if buffers is None else MemoryPolicy(buffers=buffers)
    return per_card_memory(arch, counts, seq_len, CardLayout(**layout), policy)


def gpt(layers=8, hidden=1024, heads=16, vocab=1024):
    return Architecture(
        num_hidden_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        head_dim=hidden // heads,
        intermediate_size=4 * hidden,
        vocab_size=vocab,
        tie_word_embeddings=True,
        hidden_act="gelu",
        hidden_dropout=0.1,
        attention_dropout=0.1,
    )  # Korthikanti's GPT trains with dropout


@pytest.mark.parametrize(("stage", "published"), [(0, 120), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_paper_figure_1(stage, published):
    # Rajbhandari et al. 2019: 7.5B parameters, 64-way DP, 16-bit gradients, K = 12
    w, g, o = model_state_bytes(7.5e9, 64, stage, grad_dtype="bf16")
    assert round(float(w + g + o) / 1e9, 1) == published


def test_zero_exact_values():
    totals = [float(sum(model_state_bytes(7.5e9, 64, z, grad_dtype="bf16"))) for z in range(4)]
    assert totals == pytest.approx([120e9, 31.40625e9, 16.640625e9, 1.875e9])


def test_megatron_fp32_main_grads():
    w, g, o = model_state_bytes(1.0, 8, 0, grad_dtype="fp32")
    assert (float(w), float(g), float(o)) == (2.0, 4.0, 12.0)  # 18 bytes per parameter
    w, g, o = model_state_bytes(1.0, 8, 0, grad_dtype="fp32", distributed_optimizer=True)
    assert float(w + g + o) == pytest.approx(6 + 12 / 8)


def test_model_state_vectorized():
    dp = np.array([1, 2, 4, 8])
    zero = np.array([0, 1, 2, 3])
    w, g, o = model_state_bytes(100.0, dp, zero, grad_dtype="bf16")
    assert list(w) == [200, 200, 200, 25]
    assert list(g) == [200, 200, 50, 25]
    assert list(o) == [1200, 600, 300, 150]


def test_unknown_grad_dtype_is_a_field_error():
    with pytest.raises(ScenarioError) as exc:
        model_state_bytes(1.0, 1, 0, grad_dtype="fp64")
    assert exc.value.errors[0].field == "training.grad_dtype"


def test_korthikanti_gpt3_worked_example():
    # GPT-3 175B, s = 2048, b = 1 (Korthikanti et al. 2022)
    args = {"seq_len": 2048, "micro_batch_size": 1, "hidden": 12288, "heads": 96}
    assert korthikanti_layer_bytes(**args) / GIB == pytest.approx(2.672, abs=5e-4)
    tsp = korthikanti_layer_bytes(**args, tp=8, sequence_parallel=True)
    assert tsp / GIB == pytest.approx(0.334, abs=5e-4)
    sel = korthikanti_layer_bytes(**args, tp=8, sequence_parallel=True, recompute="selective")
    assert sel / GIB == pytest.approx(0.100, abs=5e-4)


def test_korthikanti_other_cases():
    s, b, h, a, t = 2048, 2, 4096, 32, 4
    sbh = s * b * h
    assert korthikanti_layer_bytes(s, b, h, a, tp=t) == pytest.approx(
        sbh * (10 + 24 / t + 5 * a * s / (h * t))
    )
    assert korthikanti_layer_bytes(s, b, h, a, tp=t, recompute="selective") == pytest.approx(
        sbh * (10 + 24 / t)
    )
    assert korthikanti_layer_bytes(s, b, h, a, tp=t, recompute="full") == pytest.approx(2 * sbh)
    assert korthikanti_layer_bytes(
        s, b, h, a, tp=t, sequence_parallel=True, recompute="full"
    ) == pytest.approx(2 * sbh / t)
    # flash attention removes the 5·a·s/h term
    assert korthikanti_layer_bytes(s, b, h, a, flash_attention=True) == pytest.approx(34 * sbh)


def test_generalised_coefficients_reduce_to_korthikanti_for_gpt():
    assert layer_coefficients(gpt(hidden=12288, heads=96))[0] == gpt_layer_coefficients(12288, 96)


def test_gqa_and_gated_mlp_coefficients():
    arch = Architecture(
        num_hidden_layers=2,
        hidden_size=4096,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        intermediate_size=14336,
        vocab_size=1000,
    )
    dense, _ = layer_coefficients(arch)
    # no dropout (Llama-style): LayerNorm inputs 4h + attention and MLP inputs 4h, no 1-byte masks
    assert dense.replicated == 8 * 4096
    assert dense.split == 2 * (4096 + 1024 + 1024 + 4096) + 6 * 14336


def test_moe_activations_scale_with_top_k():
    base = {
        "num_hidden_layers": 2,
        "hidden_size": 1024,
        "num_attention_heads": 8,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 4096,
        "vocab_size": 1000,
        "num_experts": 16,
        "moe_intermediate_size": 512,
    }
    _, k2 = layer_coefficients(Architecture(**base, num_experts_per_tok=2))
    _, k4 = layer_coefficients(Architecture(**base, num_experts_per_tok=4))
    assert k4.split - k2.split == pytest.approx(2 * (4 * 1024 + 6 * 512))


def test_moe_combine_keeps_no_expert_output_when_the_activation_applies_the_probabilities():
    """Megatron-Core 0.13+ multiplies the routing probabilities into the experts' activation
    (experts.py: permuted_probs into the weighted GeGLU/SwiGLU) and unpermutes without them
    (token_dispatcher.py), so a routed copy keeps its fc1 input (2h), fc1 output (4·f_e) and
    activation output (2·f_e) but not its expert output (2h). GPT-OSS-120B (h = f_e = 2,880, top-4,
    64 query heads and 8 KV heads of 64, 128 experts, no dropout) with the recipes' recompute modules
    layernorm and moe_act, per token and MoE layer in bytes, by hand:
    replicated 8h = 23,040 less the recomputed pre-MLP norm 2h = 5,760 -> 17,280;
    split: Q, K, V, context 2·(4,096 + 512 + 512 + 4,096) = 18,432, routed 4·(2·2,880 + 6·2,880)
    = 92,160, fp32 router logits 4·128 = 512, less the recomputed activation 2·4·2,880 = 23,040
    -> 88,064; without the mechanism 4·2h = 23,040 more."""
    from estimator.layout.activations import layer_activation_bytes
    from estimator.layout.stacks import STACKS

    arch = Architecture(
        num_hidden_layers=36,
        hidden_size=2880,
        num_attention_heads=64,
        num_key_value_heads=8,
        head_dim=64,
        intermediate_size=2880,
        moe_intermediate_size=2880,
        num_experts=128,
        num_experts_per_tok=4,
        vocab_size=201088,
    )
    mods = ("layernorm", "moe_act")
    _, weighted_combine = layer_coefficients(arch, False, mods)
    _, weighted_act = layer_coefficients(arch, False, mods, Storage(probs_in_activation=True))
    per_token = layer_activation_bytes(weighted_act, 4096, 1, recompute="selective") / 4096
    assert float(per_token) == pytest.approx(17280 + 88064)
    assert weighted_combine.split - weighted_act.split == pytest.approx(4 * 2 * 2880)
    assert STACKS["megatron-core-2025"].moe_probs_in_activation
    assert STACKS["megatron-core-moe-2025"].moe_probs_in_activation
    assert not STACKS["megatron-core-2024"].moe_probs_in_activation  # Megatron-Core 0.5-0.9


def test_uneven_pipeline_split_like_llama3():
    st = stage_layers(126, 0, 16)
    assert (int(st.full), int(st.first), int(st.last)) == (8, 7, 7)
    st = stage_layers(126, 0, 1)
    assert bool(st.single) and int(st.first) == 126


def test_first_stage_holds_about_all_layers_of_activations():
    # 1F1B: p micro-batches in flight on the first stage of L/p layers -> L layers' worth
    arch = gpt(layers=8, vocab=8)
    counts = param_counts(arch)
    zero_buffers = Buffers(0.0, 0.0, 0.0)
    one = mem(arch, counts, 1024, tp=1, pp=1, dp=1, micro_batches=8, buffers=zero_buffers)
    four = mem(arch, counts, 1024, tp=1, pp=4, dp=1, micro_batches=8, buffers=zero_buffers)
    per_layer = float(layer_activation_bytes(layer_coefficients(arch)[0], 1024, 1))
    logits = 1024 * 8 * 4
    assert float(one.activations) == pytest.approx(8 * per_layer + logits)
    assert float(four.activations) == pytest.approx(2 * per_layer * 4)
    # interleaving multiplies the first stage by 1 + (p-1)/(p·v)
    inter = mem(arch, counts, 1024, tp=1, pp=4, dp=1, virtual_stages=2, micro_batches=8, buffers=zero_buffers)
    assert float(inter.activations) == pytest.approx(2 * per_layer * 4 * (1 + 3 / 8))


def test_interleaved_first_stage_holds_at_most_all_its_micro_batches():
    """With m = p = 4 and v = 2 the interleaved warm-up ((v-1)·p + 2·(p-1) = 10 chunks, capped at
    v·m = 8) runs every forward chunk first: 4 micro-batches of the device's 2 layers, not
    Korthikanti's 4 x (1 + 3/8) = 5.5."""
    arch = gpt(layers=8, vocab=8)
    counts = param_counts(arch)
    zero_buffers = Buffers(0.0, 0.0, 0.0)
    per_layer = float(layer_activation_bytes(layer_coefficients(arch)[0], 1024, 1))
    inter = mem(arch, counts, 1024, tp=1, pp=4, dp=1, virtual_stages=2, micro_batches=4, buffers=zero_buffers)
    assert float(inter.activations) == pytest.approx(2 * per_layer * 4)


def test_buffers_and_total():
    arch = gpt()
    counts = param_counts(arch)
    buf = Buffers(comm_buffer_bytes=256e6, workspace_bytes=GIB, fragmentation_fraction=0.05)
    m = mem(arch, counts, 1024, tp=1, pp=1, dp=1, buffers=buf)
    core = float(m.weights + m.gradients + m.optimizer + m.activations)
    assert float(m.other) == pytest.approx(256e6 + GIB + 0.05 * (core + 256e6 + GIB))
    assert float(m.total) == pytest.approx(core + float(m.other))


def test_per_card_memory_vectorized_equals_scalar():
    arch = gpt(layers=8)
    counts = param_counts(arch)
    tp = np.array([1, 2, 4, 2])
    pp = np.array([1, 2, 4, 8])
    zero = np.array([0, 1, 2, 3])
    rc = np.array([0, 1, 2, 0])
    sp = np.array([False, True, True, False])
    vec = per_card_memory(arch, counts, 2048, CardLayout(tp, pp, 4, 1, 1, zero, 2, rc, sp, 1, False, 16))
    for i in range(4):
        one = per_card_memory(
            arch,
            counts,
            2048,
            CardLayout(
                int(tp[i]),
                int(pp[i]),
                4,
                1,
                1,
                int(zero[i]),
                2,
                int(rc[i]),
                bool(sp[i]),
                1,
                False,
                16,
            ),
        )
        assert float(one.total) == pytest.approx(float(vec.total[i]))
        assert float(one.activations) == pytest.approx(float(vec.activations[i]))


def test_weights_per_card_single_and_split_stages():
    arch = gpt(layers=8)
    c = param_counts(arch)
    layer = c.attention_per_layer + c.dense_mlp_per_layer
    one = mem(arch, c, 1024, tp=2, pp=1, dp=1)
    # tied embeddings on a single stage: one matrix, divided by TP; norms replicated
    assert float(one.weights) == pytest.approx(2 * ((8 * layer + c.embedding) / 2 + 8 * c.norms_per_layer))
    two = mem(arch, c, 1024, tp=2, pp=2, dp=1)
    # two stages: each holds 4 layers and one copy of the (tied) embedding matrix
    assert float(two.weights) == pytest.approx(
        2 * ((4 * layer + c.embedding) / 2 + 4 * c.norms_per_layer), rel=1e-3
    )


def test_dropout_masks_cost_one_byte_per_element():
    """Korthikanti 2022: each of the two dropout masks is s·b·h bytes; attention dropout a·s² more."""
    plain = Architecture(
        num_hidden_layers=2,
        hidden_size=4096,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        intermediate_size=14336,
        vocab_size=1000,
    )
    with_dropout = Architecture(**{**plain.__dict__, "hidden_dropout": 0.1, "attention_dropout": 0.1})
    a, b = layer_coefficients(plain)[0], layer_coefficients(with_dropout)[0]
    assert b.replicated - a.replicated == 2 * 4096
    assert b.score_per_key - a.score_per_key == 32


def test_context_parallel_ranks_share_the_optimizer_shards():
    """CP ranks hold the same weights and sum their gradients with the DP ranks (Megatron-Core's
    data-parallel group with context parallel), so the distributed optimizer shards over dp·cp:
    8 layers of 12.6M parameters plus the 1M embedding, 12 bytes each, over 2·4 ranks."""
    arch = gpt(layers=8)
    c = param_counts(arch)
    params = 8 * (c.attention_per_layer + c.dense_mlp_per_layer + c.norms_per_layer) + c.embedding
    kw = {"tp": 1, "pp": 1, "dp": 2, "distributed_optimizer": True}
    no_cp = mem(arch, c, 4096, cp=1, **kw)
    cp4 = mem(arch, c, 4096, cp=4, **kw)
    assert float(no_cp.optimizer) == pytest.approx(params * 12 / 2)
    assert float(cp4.optimizer) == pytest.approx(params * 12 / 8)
    assert float(cp4.weights) == float(no_cp.weights)  # ZeRO-1 keeps whole 16-bit weights


def test_recompute_modules_leave_the_norm_and_activation_outputs_unstored():
    """layernorm: the MoE layer's pre-MLP norm output, 2h bytes per token; moe_act: the routed
    experts' activation output, k·f_e 16-bit values (1 byte each when linears save FP8 inputs)."""
    arch = Architecture(
        num_hidden_layers=4,
        hidden_size=1024,
        num_attention_heads=8,
        num_key_value_heads=8,
        head_dim=128,
        intermediate_size=4096,
        moe_intermediate_size=512,
        num_experts=16,
        num_experts_per_tok=4,
        vocab_size=1000,
        hidden_act="silu",
    )
    _, moe = layer_coefficients(arch, False, ("layernorm", "moe_act"))
    assert moe.selective_replicated == 2 * 1024
    assert moe.selective_split == 2 * 4 * 512
    _, moe_fp8 = layer_coefficients(arch, True, ("moe_act",))
    assert moe_fp8.selective_replicated == 0 and moe_fp8.selective_split == 4 * 512
    full = layer_activation_bytes(moe, 4096, 1, recompute="none")
    selective = layer_activation_bytes(moe, 4096, 1, recompute="selective")
    assert float(full - selective) == 4096 * (2 * 1024 + 2 * 4 * 512)
    assert selective_saves_memory(arch, ("moe_act",), flash_attention=True)
    assert not selective_saves_memory(arch, ("core_attn",), flash_attention=True)
    assert selective_saves_memory(arch, ("core_attn",), flash_attention=False)
