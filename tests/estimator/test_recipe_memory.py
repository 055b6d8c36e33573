"""Memory and FSDP policy as published recipes run them (issue 21 items 4 and 5).

The layouts are the sources' own (estimator/reference_data/throughput_runs.toml, docs/sources.md):
llm-foundry's MPT-30B on one 8 x A100-80GB node (FSDP FULL_SHARD, mixed precision DEFAULT, full
activation checkpointing), Megatron-Bridge's Blackwell recipes without recompute, and torchtitan's
Llama 3.1 405B with FSDP 8 x TP 8 x PP 8 (1F1B and interleaved 1F1B). Expected values are computed
by hand in the comments, never read back from the code.
"""

import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.layout.memory import (
    Buffers,
    CardLayout,
    MemoryPolicy,
    layer_activation_bytes,
    layer_coefficients,
    per_card_memory,
)
from estimator.layout.model_state import model_state_bytes
from estimator.layout.stacks import STACKS, holds_gathered_weights, resolve_stack
from estimator.layout.steptime.pipeline import bubble_s
from estimator.model.transformer import Architecture, param_counts
from estimator.validation.published_runs import published_layout, published_runs, run_scenario

MODELS, RUNS = published_runs()
BY_ID = {r["id"]: r for r in RUNS}
GIB = 2.0**30


def evaluated(run_id: str, **training: object):
    return published_layout(resolve(validate_shape(run_scenario(BY_ID[run_id], MODELS, **training))))


def test_fsdp_shard_is_the_fp32_master_weight():
    """PyTorch FSDP with a mixed-precision policy shards the fp32 parameter itself: 4 B weights + 4 B
    fp32 gradients + 8 B Adam m, v = 16 B per parameter over the group, no 16-bit shard; DeepSpeed
    ZeRO-3 keeps a 2-byte partition beside it (ZeRO paper: (2 + 2 + 12) / N_d with 2-byte grads)."""
    w, g, o = model_state_bytes(1e9, 8, 3, "fp32", False, 12.0, fsdp_fp32_shards=True)
    assert float(w) == 0.0
    assert float(w + g + o) == pytest.approx(1e9 * 16 / 8)
    w, g, o = model_state_bytes(1e9, 8, 3, "bf16")
    assert float(w + g + o) == pytest.approx(1e9 * 16 / 8)


@pytest.mark.parametrize(
    ("run_id", "seq", "mbs"), [("mpt-30b-8xa100-8k-bf16", 8192, 1), ("mpt-30b-8xa100-2k-bf16", 2048, 3)]
)
def test_mpt_30b_fits_on_8_a100_80gb_as_llm_foundry_runs_it(run_id, seq, mbs):
    """MPT-30B (48 layers, h = 7168, MHA, ffn 4h GeLU, vocabulary 50,368 tied, no dropout):
    P = 48 x 12 h^2 + V h = 29.594e9 + 0.361e9 = 29.955e9 parameters (+ norms).
    FSDP FULL_SHARD over 8: (4 + 12) B / 8 = 2 B per parameter -> 59.9 GB.
    Full checkpointing: 48 layer inputs of T·h·2 B, T = seq·mbs; one layer re-materialised in its
    backward: T·32h B (8h norms/inputs + 8h Q, K, V, context + 16h fc1 and GeLU outputs); the
    bf16 logits T·V·2 that llm-foundry's default fused cross-entropy (flash-attn CrossEntropyLoss)
    keeps; two layers gathered ahead (limit_all_gathers): 2 x 12h^2 x 2 B = 2.47 GB;
    256 MB + 1 GiB buffers; 5% fragmentation on all of it. 8K: 59.9 + 5.64 + 1.88 + 0.83 + 2.47 +
    1.33 = 72.1 GB x 1.05 = 75.7 GB < 80 GB."""
    h, layers, vocab = 7168, 48, 50368
    params = layers * 12 * h * h + vocab * h + layers * 2 * 2 * h + 2 * h  # + LayerNorm weights/biases
    tokens = seq * mbs
    states = params * 16 / 8
    acts = layers * tokens * h * 2 + tokens * 32 * h + tokens * vocab * 2
    prefetch = 2 * 12 * h * h * 2
    expected = 1.05 * (states + acts + prefetch + 256e6 + GIB)
    e = evaluated(run_id)
    assert e.per_card_bytes["total"] == pytest.approx(expected, rel=0.01)
    assert e.fits and expected < 80e9


def test_mpt_30b_on_h100_80gb_fits_now_that_fsdp_keeps_no_16_bit_shard():
    """The same 8K layout on 8 H100-80GB (llm-foundry's H100 table): it ran, so it must fit; the
    sharded 16-bit copy counted before (2 B x 29.96e9 / 8 = 7.5 GB) was what pushed it over."""
    assert evaluated("mpt-30b-8xh100-8k-bf16").fits


BLACKWELL_NO_RECOMPUTE = [
    r["id"] for r in RUNS if r["suite"] == "blackwell" and r["layout"]["recompute"] == "none"
]


@pytest.mark.parametrize("run_id", BLACKWELL_NO_RECOMPUTE)
def test_blackwell_recipes_without_recompute_fit(run_id):
    """Megatron-Bridge's GB200/B200 recipes run these layouts with recompute off: they fit."""
    assert BLACKWELL_NO_RECOMPUTE and evaluated(run_id).fits


def test_llama3_405b_on_256_gb200_model_states_by_hand():
    """TP4 PP16 VP4 DP4, distributed optimizer, bf16 gradients (the recipe's grad_reduce_in_fp32 =
    False): a middle device holds 2 x 4 = 8 layers of attention 2·h^2 + 2·h·1024 (570.4M) and MLP
    3·h·53,248 (2,617.2M) over TP 4 = 6.375e9 parameters: 2 B weights and 2 B gradients 12.75 GB each,
    12 B / DP 4 optimizer 19.1 GB."""
    h = 16384
    per_layer = 2 * h * h + 2 * h * 1024 + 3 * h * 53248
    params = 8 * per_layer / 4
    e = evaluated("llama3-405b-256xgb200-fp8")
    assert e.per_card_bytes["weights"] == pytest.approx(2 * params, rel=0.005)
    assert e.per_card_bytes["gradients"] == pytest.approx(2 * params, rel=0.005)
    assert e.per_card_bytes["optimizer"] == pytest.approx(12 * params / 4, rel=0.005)
    assert e.fits


def test_torchtitan_reshards_after_forward_except_under_pipeline_parallelism():
    """torchtitan's fsdp_reshard_after_forward "default" = not pp_enabled; "always"/"never" as named."""
    fsdp2 = STACKS["pytorch-fsdp2"]
    assert fsdp2.reshard_after_forward == "default"
    assert not bool(holds_gathered_weights(fsdp2, 1)) and bool(holds_gathered_weights(fsdp2, 8))
    always = resolve_stack("pytorch-fsdp2", "NVIDIA", {"reshard_after_forward": "always"})
    assert not bool(holds_gathered_weights(always, 8))
    never = resolve_stack("pytorch-fsdp2", "NVIDIA", {"reshard_after_forward": "never"})
    assert bool(holds_gathered_weights(never, 1))


def test_fsdp_under_pp_holds_the_stage_gathered_and_its_fp32_gradients_unsharded():
    """torch.distributed.pipelining skips gradient sync and resharding until the last backward: the
    stage's 16-bit weights (2 B) and its gradients upcast to fp32 (4 B) stay whole on the card.
    Llama 3.1 405B, TP 8, PP 8 (126 layers: 15 + 6 x 16 + 15): the fullest device is the first, 8
    micro-batches in flight of 15 layers (a middle one: 7 of 16), holding 15 layers of 3,187.7M / 8
    and the embedding 128,256 x 16,384 / 8 = 6.240e9 parameters: weights 12.48 GB, gradients
    24.96 GB; the optimizer 12 B / FSDP 8 = 9.36 GB."""
    h = 16384
    per_layer = 2 * h * h + 2 * h * 1024 + 3 * h * 53248
    params = (15 * per_layer + 128256 * h) / 8
    e = evaluated("llama31-405b-512xh100-torchtitan-pp8-1f1b-fp8")
    assert e.per_card_bytes["weights"] == pytest.approx(2 * params, rel=0.01)
    assert e.per_card_bytes["gradients"] == pytest.approx(4 * params, rel=0.01)
    assert e.per_card_bytes["optimizer"] == pytest.approx(12 * params / 8, rel=0.01)
    # published peak 82.5 GiB (1F1B) / 72.7 GiB (interleaved) on the 96 GB card: it fits
    assert e.fits


def test_per_micro_batch_gathers_return_with_reshard_after_forward_always():
    """With "always" each micro-batch's backward gathers the weights again (8 per step instead of 1):
    the data-parallel time (exposed and the SM share of the hidden) grows."""
    default = evaluated("llama31-405b-512xh100-torchtitan-pp8-1f1b-fp8")
    always = evaluated(
        "llama31-405b-512xh100-torchtitan-pp8-1f1b-fp8",
        stack_overrides={"tp_comm_overlap": True, "reshard_after_forward": "always"},
    )

    def dp_time(e):
        return e.breakdown_s["dp_comm"] + e.breakdown_s["overlap_slowdown"]

    assert dp_time(always) > dp_time(default)
    assert always.step_time_s > default.step_time_s


def test_interleaving_gain_of_torchtitan_405b_is_the_bubble_with_8_micro_batches():
    """torchtitan benchmarks table 5: 1F1B 100 -> interleaved 1F1B 128 tokens/s per GPU (1.28x), at
    PP 8 with 8 micro-batches (its default: the PP degree) and 2 chunks per rank. The bubble alone:
    (m + p - 1) / (m + (p - 1)/v) = 15 / 11.5 = 1.304; the model within 5% of the measured 1.28."""
    t = 1.0
    gain = (8 * t + float(bubble_s(8, 1, t, False))) / (8 * t + float(bubble_s(8, 2, t, False)))
    assert gain == pytest.approx(15 / 11.5)
    one = evaluated("llama31-405b-512xh100-torchtitan-pp8-1f1b-fp8")
    two = evaluated("llama31-405b-512xh100-torchtitan-pp8-interleaved-fp8")
    assert two.tokens_per_s / one.tokens_per_s == pytest.approx(1.28, rel=0.05)


def test_qwen3_30b_ep16_memory_against_the_published_peak():
    """Megatron-Bridge skills/nemo-mbridge-perf-expert-parallel-overlap/SKILL.md: Qwen3-30B-A3B,
    16 H100, EP16, HybridEP with EP overlap, MBS1, 4,096 tokens: rank-0 peak allocated memory
    62.166 GiB. PyTorch's allocated bytes hold the weights, gradients, optimizer states and
    activations (not NCCL's buffers, the CUDA context or the allocator's free blocks); with the
    expert outputs that Megatron-Core 0.13+ no longer keeps (48 layers x 4,096 tokens x 8 copies x
    2h = 2 x 2,048 bytes) they would be 6.0 GiB more."""
    e = evaluated("qwen3-30b-a3b-16xh100-ep16-bf16-hybridep-overlap")
    b = e.per_card_bytes
    allocated = b["weights"] + b["gradients"] + b["optimizer"] + b["activations"]
    assert allocated / GIB == pytest.approx(62.166, rel=0.03)


# Published layouts the memory model puts over HBM, each with its reason in docs/steptime.md
# ("Published layouts over HBM"): a row may leave this set, none may join it silently.
KNOWN_OVER_HBM = {
    "deepseek-v3-2048xh800-dualpipe-fp8",
    # Nemotron-4 340B on 128 H100 (DGXC recipe, DP 2): the distributed optimizer's fp32 master and
    # moments over two replicas are 5.33e9 x 12 B / 2 = 32.2 GiB; the recipe's yaml sets
    # optim.dtype bf16, whose effect on the optimizer state is not documented there (docs/steptime.md)
    "nemotron-4-340b-128xh100-dgxc-bf16",
    "nemotron-4-340b-128xh100-dgxc-fp8",
    # the three Megatron-Bridge B200 MoE rows of 25.11 / 26.04 left the set in engines 2.30.0-2.31.0: the
    # recipe's VP4 (Qwen3-235B-A22B) and Megatron-Core 0.13+'s probabilities in the experts'
    # activation (stacks.StackProfile.moe_probs_in_activation: no expert output kept for the combine)
}


def test_no_published_layout_is_over_hbm_without_a_documented_reason():
    over = {r["id"] for r in RUNS if not evaluated(r["id"]).fits}
    assert over <= KNOWN_OVER_HBM, sorted(over - KNOWN_OVER_HBM)


def test_reshard_policy_override_is_checked():
    from estimator.errors import ScenarioError

    with pytest.raises(ScenarioError) as info:
        resolve_stack("pytorch-fsdp2", "NVIDIA", {"reshard_after_forward": "sometimes"})
    assert info.value.errors[0].field == "training.stack_overrides.reshard_after_forward"
    with pytest.raises(ScenarioError):
        resolve_stack("pytorch-fsdp2", "NVIDIA", {"fsdp_fp32_shards": "yes"})
    for bad in ({"always_recompute": ["mlp"]}, {"logits_dtype": "fp16"}, {"adam_moments": "fp8"}):
        with pytest.raises(ScenarioError) as info:
            resolve_stack("deepseek-dualpipe", "NVIDIA", bad)
        assert info.value.errors[0].field == f"training.stack_overrides.{next(iter(bad))}"
    ok = resolve_stack("deepseek-dualpipe", "NVIDIA", {"always_recompute": ["norms"], "adam_moments": "fp32"})
    assert ok.always_recompute == ("norms",) and ok.adam_moments == "fp32"


DS_H, DS_FE, DS_K = 7168, 2048, 8  # DeepSeek-V3: hidden, expert width, routed experts per token


def test_deepseek_v3_moe_layer_stores_what_section_3_2_3_and_3_3_leave():
    """DeepSeek-V3's storage per token of a MoE layer (FP8 training), by hand:
    norms recomputed: only the two norm inputs, 4h = 28,672 B; MLA up-projections recomputed: the
    latents c_q 1,536, c_kv 512 and the rotary key 64 at 2 B = 4,224 B, the attention output
    128 x 128 in E5M6 (1.5 B) = 24,576 B; per routed copy (8): the FP8-dispatched token h, the
    expert output 2h kept for the combine, the SwiGLU input 2·f_e in FP8 (its output recomputed):
    8 x (7,168 + 14,336 + 4,096) = 204,800 B; the shared expert's SwiGLU input 4,096 B; fp32 router
    logits 4 x 256 = 1,024 B. Total 267,392 B against 513,024 B with Transformer Engine's FP8 rules."""
    from estimator.catalog import preset
    from estimator.layout.activations import Storage, layer_coefficients

    arch = preset("deepseek-v3").architecture
    deepseek = Storage(("norms", "mla_up_proj", "moe_act"), True, False)
    _, moe = layer_coefficients(arch, True, ("core_attn",), deepseek)
    attention = 2 * (1536 + 512 + 64) + 1.5 * 128 * 128
    routed = DS_K * (DS_H + 2 * DS_H + 2 * DS_FE)
    assert moe.replicated == 4 * DS_H
    assert moe.split == pytest.approx(attention + routed + 2 * DS_FE + 4 * 256)
    assert moe.replicated + moe.split == pytest.approx(267392)
    _, te = layer_coefficients(arch, True)
    te_attention = 2 * (128 * 192 * 2 + 128 * 128) + 128 * 128  # Q, K, V at 2 B, the context at 1 B (FP8)
    te_routed = DS_K * (4 * DS_H + 5 * DS_FE)  # token + output 2h each, fc1 out 2·2f_e, FP8 act out f_e
    assert te.replicated + te.split == pytest.approx(6 * DS_H + te_attention + te_routed + 5 * DS_FE + 1024)


def test_dualpipe_rank_holds_two_stages_and_pp_plus_one_micro_batches():
    """deepseek-ai/DualPipe: 2x parameters, PP + 1 chunks of activations. GPT toy, 8 layers on
    pp 4 (2 per stage), 8 micro-batches: a middle rank holds two middle stages' weights (4 layers)
    and 5 micro-batches of one stage's 2 layers; 1F1B's middle device 2 layers and 3 micro-batches."""

    arch = Architecture(
        num_hidden_layers=8,
        hidden_size=256,
        num_attention_heads=4,
        num_key_value_heads=4,
        head_dim=64,
        intermediate_size=1024,
        vocab_size=8,
        hidden_act="gelu",
        tie_word_embeddings=False,
    )
    counts = param_counts(arch)
    per_layer = float(layer_activation_bytes(layer_coefficients(arch)[0], 1024, 1))
    layer_params = counts.attention_per_layer + counts.dense_mlp_per_layer + counts.norms_per_layer
    lay = CardLayout(tp=1, pp=4, dp=1, micro_batches=8)
    zero = Buffers(0.0, 0.0, 0.0)
    base = MemoryPolicy(buffers=zero)
    dual = per_card_memory(arch, counts, 1024, lay, MemoryPolicy(buffers=zero, dualpipe=True))
    plain = per_card_memory(arch, counts, 1024, lay, base)
    # the fullest DualPipe rank: an end (4 layers of the first stage x 4 micro-batches + the last
    # stage's 2 layers x 1 + its logits) or a middle rank (2 layers x 5): the end, 10 layers' worth
    logits = 1024 * 8 * 4
    assert float(dual.activations) == pytest.approx(2 * per_layer * 4 + 2 * per_layer + logits)
    assert float(dual.weights) == pytest.approx(2 * (4 * layer_params + 2 * 256 * 8 + 256), rel=1e-9)
    assert float(plain.activations) == pytest.approx(2 * per_layer * 4)


def test_mtp_adds_its_block_projection_logits_and_an_embedding_copy_on_the_last_stage():
    """One MTP depth on the last of 2 stages (no DualPipe): parameters of one block (12h^2 + 4h
    norms... of the toy GPT), the 2h x h projection, the two MTP norms 2h and a copy of the
    embedding V·h (Megatron-Core's MTP stage); activations: one more block and its own logits."""

    h, v = 256, 1000
    kw = {
        "num_key_value_heads": 4,
        "head_dim": 64,
        "num_hidden_layers": 4,
        "hidden_size": h,
        "num_attention_heads": 4,
        "intermediate_size": 4 * h,
        "vocab_size": v,
        "hidden_act": "gelu",
        "tie_word_embeddings": False,
    }
    plain_arch, mtp_arch = Architecture(**kw), Architecture(**kw, num_nextn_predict_layers=1)
    lay = CardLayout(tp=1, pp=2, dp=1, micro_batches=8, zero_stage=0)
    policy = MemoryPolicy(buffers=Buffers(0.0, 0.0, 0.0))
    counts = param_counts(plain_arch)
    from estimator.layout.memory import _stage_params, stage_layers
    from estimator.layout.memory_activations import stage_activations

    st = stage_layers(4, 0, 2)
    before = _stage_params(plain_arch, counts, st, lay, policy)[2]
    after = _stage_params(mtp_arch, counts, st, lay, policy)[2]
    block = counts.attention_per_layer + counts.dense_mlp_per_layer + counts.norms_per_layer
    assert float(after[0] - before[0]) == pytest.approx(block + 2 * h * h + 2 * h + v * h)
    acts = (
        stage_activations(mtp_arch, 512, st, lay, policy)[2]
        - stage_activations(plain_arch, 512, st, lay, policy)[2]
    )
    per_layer = float(layer_activation_bytes(layer_coefficients(plain_arch)[0], 512, 1))
    assert float(acts) == pytest.approx(per_layer + 512 * (4 * h + 2 * 2 * h) + 512 * v * 4)
    assert (
        per_card_memory(mtp_arch, counts, 512, lay, policy).total
        > per_card_memory(plain_arch, counts, 512, lay, policy).total
    )


def test_deepseek_v3_on_2048_h800_middle_rank_by_hand_and_why_it_stays_over():
    """61 layers on 16 DualPipe ranks (3 + 14 x 4 + 2, the first 3 dense): a middle rank holds two
    stages of 4 MoE layers, 8 layers of MLA attention, shared expert, router and 256/64 routed
    experts; 17 micro-batches of 4 layers in flight at 4,096 tokens x 267,392 B = 69.4 GiB; bf16
    weights 2 B and fp32 gradients 4 B per parameter, optimizer 4 + 4 B (bf16 moments) over DP 128
    (dense) and 2 (experts). Over 80 GB; the expert outputs kept for the combine (2h x 8 per token,
    32 GiB here) are what keeps it over: with the router weights applied inside the experts, as
    Megatron-Core does, it fits (docs/steptime.md "Published layouts over HBM")."""
    h = DS_H
    attention = h * 1536 + 1536 * 128 * 192 + h * 576 + 512 * 128 * 256 + 128 * 128 * h
    dense = attention + 3 * h * DS_FE + 256 * h
    experts = 256 * 3 * h * DS_FE / 64
    e = evaluated("deepseek-v3-2048xh800-dualpipe-fp8")
    assert e.per_card_bytes["activations"] == pytest.approx(17 * 4 * 4096 * 267392, rel=1e-6)
    assert e.per_card_bytes["weights"] == pytest.approx(2 * 8 * (dense + experts), rel=0.01)
    assert e.per_card_bytes["gradients"] == pytest.approx(4 * 8 * (dense + experts), rel=0.01)
    assert e.per_card_bytes["optimizer"] == pytest.approx(8 * 8 * (dense / 128 + experts / 2), rel=0.01)
    assert not e.fits
    assert evaluated(
        "deepseek-v3-2048xh800-dualpipe-fp8", stack_overrides={"moe_probs_in_activation": True}
    ).fits


@pytest.mark.parametrize(
    "run_id",
    [
        "nemo-gpt3-20b-64xh100-fp8",
        "nemo-gpt3-175b-512xh100-fp8",
        "nemo-llama-3-8b-8xh100-fp8",
        "llama2-7b-4xh100-4k-fp8",
    ],
)
def test_nemo_rows_keep_bf16_gradients_as_the_launcher_scripts_set(run_id):
    """NeMo-Framework-Launcher's H100 FP8 example scripts (tags 24.03.01 and 24.07) pass
    +training.model.optim.grad_sync_dtype=bf16; NeMo maps it to Megatron-Core's
    grad_reduce_in_fp32 = False: 2-byte gradients, as many bytes as the weights."""
    e = evaluated(run_id)
    assert BY_ID[run_id]["grad_dtype"] == "bf16"
    assert e.per_card_bytes["gradients"] == pytest.approx(e.per_card_bytes["weights"])
    assert e.fits
