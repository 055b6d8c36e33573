"""A software stack's profile: the mechanisms a training framework switches on (StackProfile), the
names each mechanism may take, and which mechanisms change memory. The profiles themselves, their
choice and their overrides are in estimator.layout.stacks (its docstring: a profile never carries a
speed factor)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

ATTENTION_KERNELS = ("unfused", "fa2", "fa3", "fa-triton", "ascend-fa")
# Megatron-Core's --recompute-modules (selective recompute granularity) that the model prices
RECOMPUTE_MODULES = ("core_attn", "layernorm", "moe_act", "mlp", "shared_experts")
SAC_MATMUL_HALF = "matmul-half"  # PyTorch per-op selective activation checkpointing (torchtitan)
FP8_RECIPES = ("delayed", "tensorwise", "rowwise", "blockwise", "mxfp8")
CHECKPOINT_MODES = ("sync", "async", "in-memory")  # estimator.cluster.reliability.checkpoint_times
# estimator.layout.steptime.context_parallel.CP_COMM_TYPES / CP_MERGES (kept here: no import cycle)
_CHOICES = {
    "cp_comm_type": ("p2p", "allgather", "a2a", "a2a+p2p"),
    "cp_merge": ("fused", "eager-fp32", "eager-npu"),
    "cross_entropy": ("fused", "mcore06"),
    "logits_dtype": ("fp32", "bf16"),
    "adam_moments": ("fp32", "bf16"),
}
# what a stack recomputes in every layout, whatever the layout's recompute setting (activations.layer_coefficients)
ALWAYS_RECOMPUTE = ("norms", "mla_up_proj", "moe_act")
# element-wise kernels a stack can run unfused (steptime.unfused.UNFUSED_BYTES prices each)
UNFUSED_KERNELS = ("rope", "rmsnorm", "swiglu")
# mechanisms given as a list of names, each from its set, each once
_NAME_LISTS = {"always_recompute": ALWAYS_RECOMPUTE, "unfused_kernels": UNFUSED_KERNELS}
# StackProfile.moe_expert_tp_combine_bytes: 16-bit, or the fp32 router's dtype (a switch, never a factor)
EXPERT_TP_COMBINE_BYTES = (2, 4)
RESHARD_POLICIES = ("always", "never", "default")  # torchtitan parallelism.fsdp_reshard_after_forward
# Megatron-Bridge releases 25.11-26.06 against 26.02 on the same published layouts (performance-summary-
# archive.md, docs/sources.md#megatron-bridge; read 2026-12-02), by chip family and workload family:
# blackwell/moe Qwen3-30B-A3B on 8 GB200 (MXFP8, micro-batch 4, EP8) 23,766 (25.11) .. 40,706 (26.06)
# against 26,084; DeepSeek-V3 on 256 GB200 (PP4 VP4 EP64) 3,955 .. 4,969; GPT-OSS-120B on 64 GB200
# 15,754 .. 16,640. blackwell/dense Llama 3.1 405B on 256 GB200 FP8 793 .. 864. hopper/moe GPT-OSS-120B
# on 64 H100 5,993 .. 5,810, Qwen3-235B-A22B on 256 H100 1,611 .. 1,712 against 1,633. hopper/dense
# Llama 3.1 405B on 1,024 H100 311 .. 328, Llama 3 70B on 64 H100 1,621 .. 1,664.
MEGATRON_BRIDGE_RELEASE_SPREAD = (
    ("blackwell/moe", 23766 / 26084, 40706 / 26084),
    ("blackwell/dense", 1.0, 864 / 793),
    ("hopper/moe", 5810 / 5993, 1712 / 1633),
    ("hopper/dense", 1.0, 328 / 311),
)


@dataclass(frozen=True)
class StackProfile:
    """Mechanisms of one training software stack (booleans and kernel names, no speed factors).

    attention_kernel: "unfused" (scores materialised, Megatron-LM 2021), "fa2" (FlashAttention-2
      or PyTorch SDPA), "fa3" (FlashAttention-3 / cuDNN fused attention through Transformer
      Engine), "fa-triton" (the Triton FlashAttention with ALiBi bias of MosaicML's MPT),
      "ascend-fa" (CANN FlashAttentionScore).
    overlap_grad_reduce: gradient reduce-scatter/all-reduce in buckets during the backward pass.
    overlap_param_gather: the distributed optimizer's weight all-gather during the next forward.
    tp_comm_overlap: tensor-parallel collectives pipelined with the GEMMs (TE userbuffers,
      Ascend MC2).
    sp_regather: with sequence parallelism, a column-parallel linear saves only its sequence shard
      of the input and all-gathers it again in the backward for its weight gradient (Megatron-Core
      core_r0.6.0 tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication.backward;
      Transformer Engine LayerNormLinear; MindSpeed's MC2 column linear, which sets
      all_gather_recomputation; docs/sources.md#megatron-core, #mindspeed;
      steptime.layer_comm.sp_regather_s), in the precision of that saved shard: "16-bit";
      "gemm-input", the linear's GEMM input, FP8 under an FP8 recipe (Transformer Engine 1.x: its
      LayerNormLinear writes ln_out as FP8 and saves that for the backward gather); "none" where
      autograd saves the forward's gathered input (PyTorch DTensor ColwiseParallel in torchtitan).
    ep_comm_overlap: MoE dispatch/combine all-to-all hidden behind another micro-batch's compute
      (Megatron-Core's 1F1B A2A overlap).
    overlap_p2p_comm: pipeline send/receive of the interleaved schedule runs asynchronously behind
      the next chunk's compute (Megatron-LM --overlap-p2p-communication, on by default; Megatron-
      Bridge and NeMo switch it on whenever virtual pipeline stages > 1, else batch the p2p
      blocking, docs/sources.md#megatron-core); DualPipe hides its p2p in its overlapped chunks.
    dualpipe: DeepSeek's DualPipe schedule (bidirectional pipeline; forward and backward chunks
      overlapped so that the all-to-all hides; smaller bubble).
    cuda_graphs: kernels replayed from captured graphs: no per-kernel launch gap, no host sync.
    moe_dispatch_dedup: hierarchical dispatch (DeepEP, HybridEP): a token crosses the scale-out
      network once per destination node, not once per chosen expert.
    moe_max_nodes: node-limited routing (DeepSeek-V3: each token to at most 4 nodes); None = none.
    moe_host_sync: the dropless token dispatcher copies token counts to the host every MoE layer.
    moe_core06: the MoE layers run Megatron-Core 0.6's MoE layer (allgather dispatcher, unfused
      permutation, GroupedMLP / SequentialMLP), as MindSpeed-LLM 1.0.RC3 does: its expert block takes
      steptime.moe_core06's calibrated factor of its priced time.
    moe_probs_in_activation: the routing probabilities multiply the routed experts' activation output
      (Megatron-Core 0.13+: TEGroupedMLP passes permuted_probs to the weighted activation and the
      token dispatcher unpermutes without probs, docs/sources.md#megatron-core), so the combine keeps
      no expert output for its backward (activations.layer_coefficients: 2h per routed copy less);
      False where the combine weights the expert outputs (Megatron-Core up to 0.12, MindSpeed-LLM's
      Megatron-Core 0.6 MoE layer).
    cross_entropy: the vocabulary cross-entropy's kernels (steptime.step.LOGIT_BYTES): "fused" (40
      bytes per logit: the row max taken in the upcast pass, exp, sum and normalise in place) or
      "mcore06" (52: Megatron-Core 0.6's vocab_parallel_cross_entropy on logits.float(), as
      MindSpeed-LLM 1.0.RC3 runs it, with a separate row max and an out-of-place subtraction of it).
    per_expert_gemms: the routed experts run as one GEMM per local expert (Transformer Engine's
      grouped linear: multi-stream cuBLAS, docs/sources.md#megatron-gb200-deepseek; DeepSpeed-MoE's
      expert loop), each paying a fixed overhead; False for one grouped kernel (DeepGEMM,
      torch._grouped_mm, Ascend GroupedMatmul, MegaBlocks).
    selective_recompute: what "selective" recomputation re-runs: Megatron-Core's recompute modules
      (core_attn: the attention core, Korthikanti et al. 2022, Megatron's default; layernorm: the
      norm Transformer Engine does not fuse into the next linear, MoE layers' pre-MLP norm;
      moe_act: the routed experts' activation function; mlp: dense layers' MLP; shared_experts),
      or ("matmul-half",): PyTorch per-op selective activation checkpointing in torchtitan, every
      other forward matmul. Overrides take a list of module names, "attention" (= core_attn) or
      "matmul-half".
    fp8_recipe: how FP8 tensors are scaled (delayed amax history, dynamic tensorwise/rowwise,
      1x128 blockwise, MXFP8 32-element blocks).
    sharded_with_pp: ZeRO-2/3 sharding (gradients, weights) combines with pipeline parallelism:
      PyTorch FSDP2 does (torchtitan trains Llama 3.1 405B with FSDP + TP + PP; weights gathered
      and gradients reduce-scattered per micro-batch, docs/sources.md#torchtitan); DeepSpeed refuses
      ZeRO-2/3 with its pipeline engine and the Megatron-Core stacks shard with the distributed
      optimizer (ZeRO-1) under PP.
    max_zero_stage: the highest ZeRO stage the stack runs (enumeration's rule
      zero-stage-not-run-by-stack): 3 where it shards the weights (FSDP, DeepSpeed ZeRO-3,
      Megatron-FSDP); 1 for MindSpeed-LLM 1.0.RC3 on Megatron-Core 0.6 (MindSpeed tag
      v1.0.RC3_core_r0.6.0), whose only sharding is the distributed optimizer (ZeRO-1: optimizer
      state split over DP; the gradients reduce-scattered out of a full-size grad buffer, so no
      ZeRO-2 saving): MindSpeed's release note lists data, tensor, pipeline, virtual-pipeline and
      sequence parallelism, recompute and the distributed optimizer ("将优化器状态拆分到所有DP组间");
      weights are sharded only by later features outside that release: Megatron FSDP (MindSpeed
      docs/en/features/custom_fsdp.md, core_r0.18.0: "not recommended to combine it with other
      features", its MoE test "requires Ascend accuracy and performance validation"), FSDP2
      (docs/en/features/fsdp2.md: the distributed optimizer and Megatron recompute must be off) and
      LayerZeRO for MindSpeed-MM's multimodal models (docs/en/features/LayerZeRO.md);
      docs/sources.md#mindspeed.
    moe_tp_needs_sp: the stack trains a MoE model with TP > 1 only under sequence parallelism
      (enumeration's rule moe-tp-without-sequence-parallel): Megatron-Core refuses it in every
      release the profiles name: core_v0.6.0 megatron/training/arguments.py:495-499 (MindSpeed-LLM
      1.0.RC3's base, whose validate_args MindSpeed wraps: "When using MoE and tensor parallelism,
      sequence parallelism must be used.", any EP) and model_parallel_config.py:286-290 (EP > 1);
      core_r0.8.0 megatron/core/transformer/moe/moe_layer.py:96-104 (MoELayer.forward raises
      ValueError in training with TP > 1 and no SP), core_v0.15.0 moe_layer.py:265 and main
      (2026-08, d98e8a6) moe_layer.py:636 still (model_parallel_config.py:560 only warns since
      0532e92, 2025-08). True for the Megatron-Core profiles and MindSpeed; DeepSpeed-MoE,
      torchtitan and DeepSeek's stack have no such check.
    moe_expert_tp_gather: the token dispatcher gathers the k routed copies each card receives over the
      expert-TP group after the all-to-all and reduce-scatters them before the combine (Megatron-Core's
      MoEAlltoAllTokenDispatcher: main megatron/core/transformer/moe/token_dispatcher.py:741-751
      dispatch_postprocess gather_from_sequence_parallel_region(global_input_tokens, group=tp_group,
      the expt_tp group of :86) and :826-834 combine_preprocess reduce_scatter; core_r0.8.0
      token_dispatcher.py:515-518 all_gather_last_dim_from_tensor_parallel_region after the
      all-to-all, etp = tp there): 2·(etp-1)·k·tokens/tp·h elements per card per forward
      (steptime.layer_comm.comm_terms). True for megatron-core-2025 (alltoall dispatcher) and
      megatron-core-2024 (not where moe_core06 runs Megatron-Core 0.6's allgather dispatcher); not for the flex dispatcher (megatron-core-moe-2025: DeepEP dispatches
      over the tp x ep ranks, no second gather), MindSpeed-LLM 1.0.RC3 (Megatron-Core 0.6's
      allgather dispatcher, moe_core06), DeepSeek's DeepEP (expert TP 1) and the others (their
      expert-TP collective stays priced as a dense MLP's). Priced in ep_comm, exposed
      (steptime.moe.expert_tp_gather_s).
    moe_expert_tp_combine_bytes: bytes per element of that gather's combine-side reduce-scatter
      (and its backward gather): 2 (16-bit, core_r0.8.0) or 4 where the dispatcher upcasts it to the
      routing probabilities' dtype (Megatron-LM 325e7c8, 2025-04, in core_v0.12.0+:
      `hidden_states.to(self.probs.dtype)`) and the recipes run the router in fp32
      (`moe_router_dtype fp32`: Megatron-LM's examples/post_training/modelopt/conf/qwen/Qwen3-30B-A3B.sh,
      Megatron-Bridge's DeepSeek-V3 recipe).
    vendors: the accelerator vendors the stack runs on (catalog `vendor`: NVIDIA, AMD, Huawei).
    needs_fp8_hardware: the stack's MoE kernels need Hopper or newer (DeepEP's NVSHMEM kernels, FP8
      GEMMs); the catalog marks such accelerators by their FP8 peak.
    summary: one line on what choosing the stack implies (English default; the web layer renders it
      in the reader's language).
    fp8_weight_cache: the FP8 copies of the weights are made on the first micro-batch of a step and
      reused by the others (Transformer Engine's is_first_microbatch, which Megatron-Core passes:
      "FP8 weight caching", TE performance guide, docs/sources.md#transformer-engine); without it
      (torchao float8, llm-foundry's TE layers) every micro-batch casts the weights again.
    checkpoint_mode: how checkpoints are written (estimator.cluster.reliability): "sync" (training
      waits for the hot tier), "async" (a host-memory snapshot, written in the background:
      Megatron-Core/Megatron-Bridge async_save, PyTorch DCP async_save) or "in-memory" (snapshots
      replicated to peer nodes' memory: NVIDIA resiliency-ext local checkpoints, Gemini). Every
      profile defaults to "sync", as their configurations do (Megatron-Bridge CheckpointConfig
      async_save = False, torchtitan async_mode "disabled", MindSpore CheckpointConfig async_save =
      False; docs/sources.md#checkpoint-modes).
    cp_comm_type: how context parallelism exchanges K/V (steptime.context_parallel): "p2p" (ring;
      Megatron-Core/TE cp_comm_type default, MindSpeed megatron_cp_algo), "allgather" (torch
      context_parallel's default rotate method, which torchtitan keeps), "a2a" (DeepSpeed-Ulysses,
      Megatron a2a) or "a2a+p2p" (Megatron's hierarchical CP). Scenarios override it where the
      stack offers several.
    cp_load_balance: the causal sequence is split into 2·cp chunks, rank r holding r and 2cp-1-r
      (Megatron-Core get_batch_on_this_cp_rank; torch _RoundRobinLoadBalancer, on by default).
    cp_merge: how the ring's per-step partial outputs are merged: "fused" (Transformer Engine's
      correction kernels; MindSpeed's npu_ring_attention_update under --use-fused-ring-attention-update),
      "eager-fp32" (torch's _SDPAMerger: eager fp32 ops, fp32 gradients) or "eager-npu" (MindSpeed's
      forward_update_without_fused, its default: eager ops on fp32 scales repeated to the head size).
    cp_repeat_kv: the model code expands grouped K/V heads to every query head before attention, so
      the ring moves query-sized K/V (torchtitan's Llama: repeat_kv before SDPA).
    cp_comm_types: the CP comm types the stack offers (an override must be one of them):
      Megatron-Core all four (--cp-comm-type); torch context_parallel "allgather" and "alltoall"
      (= p2p, set_rotate_method); MindSpeed megatron_cp_algo (p2p), ulysses_cp_algo (a2a),
      hybrid_cp_algo (a2a+p2p); Megatron-DeepSpeed DeepSpeed-Ulysses (a2a) only.
    reshard_after_forward: when ZeRO-3 (FSDP) frees the gathered weights of a layer: "always" after
      its forward (gathered again for the backward: two all-gathers per micro-batch; FSDP1
      FULL_SHARD, DeepSpeed ZeRO-3), "never" (kept until the step's last backward: one all-gather
      per step, the stage's 16-bit weights held), "default" = torchtitan's policy: "never" under
      pipeline parallelism, else "always" (torchtitan/distributed/fsdp.py
      get_fsdp_reshard_after_forward_policy: "For PP, by default do not reshard after forward to
      avoid per-microbatch all-gathers"; docs/sources.md#torchtitan).
    fsdp_fp32_shards: ZeRO-3's sharded parameter is the fp32 master weight itself (PyTorch FSDP with
      a mixed-precision policy: the 16-bit copy exists only gathered, layer by layer), so no sharded
      16-bit copy is kept; False for DeepSpeed ZeRO-3 (a 16-bit partition beside the fp32 master).
    cp_overlap: the CP exchange runs beside the ring's attention steps (each transfer hidden behind
      one step's compute, steptime.context_parallel). False where torch.compile traces the ring:
      torchtitan compiles every TransformerBlock with fullgraph=True, so torch's ring attention
      (context_parallel's SDPA handler) is traced into the block's graph, and a traced functional
      collective is followed by its wait_tensor at once (torch.distributed._functional_collectives
      _maybe_wrap_tensor: "if _are_we_tracing(): return wait_tensor(self)"); Inductor moves waits
      only with config.reorder_for_compute_comm_overlap, False by default and not set by torchtitan.
      Every K/V gather and dKV permute then waits in place (docs/sources.md#torch-context-parallel).
    logits_dtype: the logits the cross-entropy keeps for its backward: "fp32" (an fp32 softmax or
      log-softmax copy: Megatron-Core's vocab-parallel cross-entropy, torch's under autocast) or
      "bf16" (the 16-bit logits themselves and an fp32 log-sum-exp per token: flash-attn's fused
      CrossEntropyLoss, llm-foundry's default loss_fn "fused_crossentropy"; docs/sources.md#llm-foundry).
    always_recompute: what the stack recomputes in the backward of every layer whatever the layout's
      recompute setting (DeepSeek-V3 report section 3.2.3, docs/sources.md#deepseek-v3): "norms"
      (every RMSNorm: their outputs, the inputs of the following linears, are not stored),
      "mla_up_proj" (MLA's up-projections: Q, K, V are re-made from the stored latents), "moe_act"
      (the MoE SwiGLU output is re-made from its stored input, section 3.3.3, "Low-Precision Storage and Communication").
    low_precision_cache: DeepSeek-V3's low-precision activation cache (section 3.3.3): the
      MoE SwiGLU inputs (the experts' fc1 outputs) stored in FP8, the attention output (the input
      of the linear after attention, also used by the attention backward) in E5M6 (1.5 bytes), and
      the tokens dispatched to the experts in FP8 (quantised before the dispatch).
    unfused_kernels: the element-wise kernels the stack runs as eager PyTorch ops instead of one fused
      kernel (steptime.unfused): "rope" (MindSpeed-LLM without --use-fused-rotary-pos-emb: Megatron-Core
      0.6's t·cos + rotate_half(t)·sin), "rmsnorm" (without --use-fused-rmsnorm: Megatron's RMSNorm in
      fp32 ops), "swiglu" (without --use-fused-swiglu: silu(x0)·x1). () = all fused, every profile's
      default; a row sets it from its script. The attention kernel is `attention_kernel` and the ring
      update `cp_merge`.
    output_layer_sliced: the output layer runs as N GEMMs whose logits are concatenated (MindSpeed-LLM
      --output-layer-slice-num N > 1, modellink/core/tensor_parallel/layers.py): one more copy of the
      logits forward and backward (steptime.step.SLICED_LOGIT_BYTES).
    adam_moments: the dtype of Adam's first and second moments: "fp32" (8 bytes, K = 12 with the
      fp32 master weight) or "bf16" (DeepSeek-V3 section 3.3.3: 4 bytes, K = 8; the master weights
      and the gradients stay fp32).
    unfused_rope_types: the rotary scalings (Architecture.rope_type) the stack applies with the
      unfused element-wise chain instead of a fused RoPE kernel (steptime.unfused). Megatron-Core
      stacks: ("yarn",): Megatron-Bridge turns apply_rope_fusion off for any position_embedding_type
      but "rope" (utils/fusions.py validate_rope_fusion_compatibility, v0.3.0), which GPT-OSS's
      provider sets to "yarn", and Transformer Engine's fused RoPE refuses YaRN's mscale != 1
      (megatron/core/models/common/embeddings/rope_utils.py apply_rotary_pos_emb); MLA's YaRN runs
      under "rope" and keeps the fusion (docs/sources.md#megatron-bridge).
    release: the software release the profile stands for (its recipes' container or version); the
      published rows of that release are what its mechanisms were checked against.
    release_spread: ("chip family/workload", low, high) entries: throughput of the same published
      layout on the other releases of the stack relative to `release`, per chip family and workload
      family (evidence.workload_family). The evidence band widens by it where it reaches beyond the
      band (estimator.plan.evidence.widen_for_release_spread). release_spread_source: where from.
    """

    id: str
    name: str
    source: str
    as_of: str
    attention_kernel: str
    overlap_grad_reduce: bool = True
    overlap_param_gather: bool = True
    tp_comm_overlap: bool = False
    sp_regather: str = "16-bit"
    ep_comm_overlap: bool = False
    overlap_p2p_comm: bool = False
    dualpipe: bool = False
    cuda_graphs: bool = False
    moe_dispatch_dedup: bool = False
    moe_max_nodes: int | None = None
    moe_host_sync: bool = True
    per_expert_gemms: bool = True
    selective_recompute: tuple[str, ...] = ("core_attn",)
    fp8_recipe: str = "delayed"
    fp8_weight_cache: bool = False
    sharded_with_pp: bool = False
    max_zero_stage: int = 3
    moe_tp_needs_sp: bool = False
    moe_expert_tp_gather: bool = False
    moe_expert_tp_combine_bytes: int = 2
    vendors: tuple[str, ...] = ("NVIDIA",)
    needs_fp8_hardware: bool = False
    summary: str = ""
    checkpoint_mode: str = "sync"
    cp_comm_type: str = "p2p"
    cp_load_balance: bool = True
    cp_merge: str = "fused"
    cp_repeat_kv: bool = False
    cp_comm_types: tuple[str, ...] = ("p2p", "allgather", "a2a", "a2a+p2p")
    reshard_after_forward: str = "always"
    fsdp_fp32_shards: bool = False
    cp_overlap: bool = True
    release: str = ""
    release_spread: tuple[tuple[str, float, float], ...] = ()
    release_spread_source: str = ""
    moe_core06: bool = False
    moe_probs_in_activation: bool = False
    cross_entropy: str = "fused"
    logits_dtype: str = "fp32"
    always_recompute: tuple[str, ...] = ()
    low_precision_cache: bool = False
    adam_moments: str = "fp32"
    unfused_rope_types: tuple[str, ...] = ()
    unfused_kernels: tuple[str, ...] = ()
    output_layer_sliced: bool = False

    def memory_key(self) -> tuple[Any, ...]:
        """The profile's mechanisms that change per-card memory (a cache key of the layout search)."""
        return tuple(getattr(self, k) for k in MEMORY_MECHANISMS)

    def spread_for(self, family: str, workload: str) -> tuple[float, float]:
        """(low, high): throughput of the same published layout on the other releases the profile
        covers, relative to `release`, for a chip family and workload family ("blackwell", "moe";
        dimensionless; (1, 1) where they agree or none is known)."""
        spreads = {key: (low, high) for key, low, high in self.release_spread}
        return spreads.get(f"{family}/{workload}", spreads.get(f"*/{workload}", (1.0, 1.0)))

    @property
    def flash_attention(self) -> bool:
        """True when the attention scores are never materialised (any fused kernel)."""
        return self.attention_kernel != "unfused"

    def mechanisms(self) -> dict[str, Any]:
        """The switchable mechanisms (everything but the profile's identity and source)."""
        return {k: getattr(self, k) for k in MECHANISMS}

    def plans_alike_key(self, moe: bool) -> tuple[tuple[str, Any], ...]:
        """(field, value) of every field the step-time model, the layout search and its memory read
        (all but UNPRICED; for a dense model, `moe` False, all but MOE_ONLY too): two profiles with
        equal keys plan a model alike (estimator.plan.stack_sensitivity reuses one's answer)."""
        skip = UNPRICED if moe else UNPRICED + MOE_ONLY
        return tuple((f.name, getattr(self, f.name)) for f in fields(self) if f.name not in skip)

    def runs_on(self, vendor: str, fp8_hardware: bool) -> bool:
        """Whether the stack runs on an accelerator of `vendor` (with FP8 tensor cores or not)."""
        vendors = {v.lower() for v in self.vendors}
        return vendor.lower() in vendors and (fp8_hardware or not self.needs_fp8_hardware)


MECHANISMS = (
    "attention_kernel",
    "overlap_grad_reduce",
    "overlap_param_gather",
    "tp_comm_overlap",
    "ep_comm_overlap",
    "overlap_p2p_comm",
    "dualpipe",
    "cuda_graphs",
    "moe_dispatch_dedup",
    "moe_max_nodes",
    "moe_host_sync",
    "per_expert_gemms",
    "selective_recompute",
    "fp8_recipe",
    "fp8_weight_cache",
    "sharded_with_pp",
    "checkpoint_mode",
    "cp_comm_type",
    "cp_load_balance",
    "cp_merge",
    "cp_repeat_kv",
    "reshard_after_forward",
    "fsdp_fp32_shards",
    "cp_overlap",
    "moe_core06",
    "cross_entropy",
    "logits_dtype",
    "always_recompute",
    "low_precision_cache",
    "adam_moments",
    "moe_probs_in_activation",
    "unfused_kernels",
    "output_layer_sliced",
    "moe_expert_tp_gather",
    "moe_expert_tp_combine_bytes",
)
# the StackProfile fields that are not MECHANISMS (no training.stack_overrides entry), each with why;
# every field is one or the other (tests/estimator/test_stack_mechanisms.py)
NOT_MECHANISMS: dict[str, str] = {
    "id": "the profile's identity",
    "name": "the profile's description",
    "source": "the profile's description",
    "as_of": "the profile's description",
    "summary": "the profile's description",
    "release": "the profile's evidence: the release its mechanisms were checked against",
    "release_spread": "the profile's evidence: widens the MFU band, never the step time",
    "release_spread_source": "the profile's evidence",
    "vendors": "where the stack runs (profiles_for): a fact of its code, not a switch",
    "needs_fp8_hardware": "where the stack runs (profiles_for): a fact of its kernels, not a switch",
    "cp_comm_types": "what the stack offers: the set a cp_comm_type override is checked against",
    "max_zero_stage": "what the stack can run (enumeration rule); the layout's ZeRO stage is the switch",
    "moe_tp_needs_sp": "a check in the stack's code (Megatron-Core refuses MoE with TP and no SP); no flag lifts it",
    "sp_regather": "how the stack's column-parallel linear saves its input: fixed by its code, no flag switches it",
    "unfused_rope_types": "which rotary scalings the stack's fused kernel refuses: fixed by its code",
}
# fields the step-time model, the layout search and its memory never read (the profile's description,
# where it runs, its evidence, what it offers): plans_alike_key leaves them out
UNPRICED = (
    "id",
    "name",
    "source",
    "as_of",
    "summary",
    "release",
    "release_spread",
    "release_spread_source",
    "vendors",
    "needs_fp8_hardware",
    "cp_comm_types",
)
# fields only MoE layers read: profiles that differ only in these plan a dense model alike
# (tests/estimator/test_stack_mechanisms.py flips each on a dense model)
MOE_ONLY = (
    "ep_comm_overlap",
    "moe_dispatch_dedup",
    "moe_max_nodes",
    "moe_host_sync",
    "per_expert_gemms",
    "moe_expert_tp_gather",
    "moe_expert_tp_combine_bytes",
)
MEMORY_MECHANISMS = (
    "selective_recompute",
    "fsdp_fp32_shards",
    "reshard_after_forward",
    "dualpipe",
    "logits_dtype",
    "always_recompute",
    "low_precision_cache",
    "adam_moments",
    "moe_probs_in_activation",
)
