"""Ascend (MindSpeed / MindSpeed-LLM on CANN) mechanisms of one layer and micro-batch on one card.

Tensor-parallel communication with MC2 (MindSpeed --use-mc2 / --use-ascend-mc2, docs/sources.md#mindspeed):
MindSpeed replaces the sequence-parallel all-gather + column GEMM and row GEMM + reduce-scatter by
CANN's fused operators npu_all_gather_base_mm and npu_mm_reduce_scatter_base (forward, and the
row-parallel backward), and runs the column-parallel backward reduce-scatter asynchronously beside
its weight-gradient GEMM (mindspeed/core/tensor_parallel/ascend_turbo/mc2_linears_seq_parallel.py).
The fused operator splits the GEMM and the collective into sub-tasks and pipelines them
(docs/zh/features/mc2.md); it does not hide all of the collective: MindSpeed's own performance model
(mindspeed/auto_settings/module/communication/mc2_comm_perf_predictor.py) times MC2 as the fused
operator's time minus the plain matmul's and fits it linearly in the tokens communicated,
s / (tp·cp). We price that excess as a fixed share ASCEND_MC2_EXPOSED_FRACTION of the collective
time the GEMMs would otherwise hide (the pipeline fill and the slower GEMM sub-tasks), exposed on
the critical path; what does not fit under the GEMMs at all stays exposed in full.

MoE layers get no MC2 (MindSpeed docs/zh/features/mc2.md, 注意事项 1: "MoE模型暂不支持开启MC2"):
the dispatcher's all-gather and reduce-scatter of the tokens over the tensor-parallel group
(Megatron-Core 0.6 MoEAllGatherTokenDispatcher, gather_from_sequence_parallel_region_to_moe and
reduce_scatter_to_sequence_parallel_region_from_moe) run synchronously, exposed in full. The
attention's linears keep MC2.

MLA on CANN FlashAttention (MindSpeed-LLM 1.0.RC3 modellink/core/transformer/multi_head_latent_attention.py):
the fused kernel needs one head size for queries, keys and values, so with d_qk != d_v the value is
padded to d_qk in the BNSD layout (DeepSeek-V2 192 / 128: the scripts set --shape-order BNSD), and
all three are padded to 256 in the other layouts; the kernel computes the padding
(`ascend_score_dims`).

MLA's tensor layout work on the CANN FlashAttention path (`mla_layout_s`; MindSpeed-LLM 1.0.RC3
multi_head_latent_attention.py and MindSpeed's BNSD flash-attention adapter): per token, layer and
head, the forward copies, in 16-bit elements read + written, the rotary half's interleave (2·d_r)
and rope (2·d_r), the query concatenation (d_n + d_r read, d_q written), the shared rope key
repeated to every head (d_r), the key concatenation (as the query's), the value padded to d_q
(d_v + d_q), the three inputs transposed from SBND to BNSD (3 x 2·d_q), the output back to SBND
(2·d_q) and sliced to d_v (2·d_v); with d_n 128, d_r 64, d_q 192, d_v 128 that is 3,200 elements,
6,400 bytes per head. The backward moves the same bytes once (slices, pads and transposes of the
gradients). Memory-bound at the HBM streaming rate; no constant fitted.
Units: seconds.
"""

from __future__ import annotations

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.catalog.entries import ASCEND_FAMILIES
from estimator.model.transformer import Architecture

# Scale-up domains wired as a full mesh of point-to-point HCCS links: the 8 NPUs of an Atlas 800T A2
# / 900 A2 node (910B), each linked to the 7 others (npu-smi topo; MindSpeed auto_settings'
# comm_hardware_info: 8-NPU HCCS domain for 910B; catalog servers.toml). The 910C's UB plane is a
# switched Clos (CloudMatrix384 paper, arXiv 2506.12708) and is not a mesh.
FULL_MESH_FAMILIES = frozenset({"ascend-910b"})

# Calibrated together, once, on every dense Ascend row of throughput_runs.toml tagged for the fit
# (estimator.validation.ascend.calibrate_ascend; docs/steptime.md "Calibrated"; mean |error| 9.6%, 2.40.0):
# - ASCEND_MC2_EXPOSED_FRACTION: the share of the MC2-pipelined collectives left exposed;
# - ASCEND_TRAINING_GEMM_FRACTION: the part of the 910B's measured best-case GEMM rate (catalog
#   matmul_efficiency, a MAMF measurement) that the GEMMs of a MindSpeed-LLM training step reach on
#   CANN; the NVIDIA counterpart is TRAINING_GEMM_FRACTION (0.76, Megatron-LM 2021 rows). Its
#   scripts run eager PyTorch with --no-gradient-accumulation-fusion (the weight gradient is a GEMM
#   plus a separate add into the fp32 main gradient), and the training shapes are not MAMF's best.
ASCEND_MC2_EXPOSED_FRACTION = 0.65
ASCEND_TRAINING_GEMM_FRACTION = 0.71


def is_ascend(chip_family: str) -> bool:
    """True for the Ascend chip families (catalog `chip_family`)."""
    return chip_family in ASCEND_FAMILIES


def mc2_tp_exposed_s(
    raw_attention: Num, raw_mlp: Num, gemm_window: Num, moe_layer: bool, mc2_fraction: float
) -> tuple[FloatArray, FloatArray]:
    """(exposed, hidden) tensor-parallel communication of one layer under MC2 (s).

    raw_attention, raw_mlp: the collectives of the attention's and of the MLP's linears (s);
    gemm_window: the layer's linear GEMM time the fused operators pipeline with (s);
    moe_layer: the MLP is a MoE layer (its dispatcher collectives are not fused: exposed in full);
    mc2_fraction: share of the pipelined collective time that stays exposed (ASCEND_MC2_EXPOSED_FRACTION).
    """
    fused = arr(raw_attention) + (0.0 if moe_layer else arr(raw_mlp))
    unfused = arr(raw_mlp) if moe_layer else arr(0.0 * arr(raw_mlp))
    under = arr(np.minimum(fused, gemm_window))
    hidden = arr(under * (1.0 - mc2_fraction))
    return arr(fused - hidden + unfused), hidden


def ascend_score_dims(d_qk: float, d_v: float, shape_order: str = "BNSD") -> tuple[float, float]:
    """(d_qk, d_v) the CANN FlashAttention kernel computes with for MindSpeed-LLM's MLA (elements):
    equal sizes as given; else v padded to d_qk (BNSD), or both padded to 256 (SBH, BSH)."""
    if d_qk == d_v:
        return d_qk, d_v
    if shape_order == "BNSD":
        return d_qk, max(d_qk, d_v)
    return max(d_qk, 256.0), max(d_v, 256.0)


def mla_layout_bytes_per_head(d_nope: float, d_rope: float, d_v: float) -> float:
    """Bytes the forward's MLA layout copies move per token, layer and head on the CANN FlashAttention
    path (module docstring): 2 bytes x (4·d_r + 2·(d_n + d_r + d_q) + d_r + d_v + d_q + 8·d_q + 2·d_v)."""
    d_q = d_nope + d_rope
    elements = 4.0 * d_rope + 2.0 * (d_nope + d_rope + d_q) + d_rope + d_v + d_q + 8.0 * d_q + 2.0 * d_v
    return 2.0 * elements


def mla_layout_s(
    arch: Architecture, on: bool, tokens: Num, tp: Num, passes: Num, hbm_rate: float
) -> FloatArray:
    """MLA's layout copies of one layer and micro-batch on one card (s): the forward's bytes per
    head x heads per TP rank x tokens, once per forward pass and once for the backward (passes counts
    the backward as 2), at the HBM streaming rate; 0 unless `on` (Ascend FlashAttention) and MLA."""
    if not (on and arch.is_mla):
        return arr(0.0 * arr(tp))
    per_head = mla_layout_bytes_per_head(
        float(arch.qk_nope_head_dim or 0), float(arch.qk_rope_head_dim or 0), float(arch.v_head_dim or 0)
    )
    heads = float(arch.num_attention_heads) / arr(tp)
    return arr(arr(tokens) * heads * per_head * (arr(passes) - 1.0) / hbm_rate)


def mesh_links(chip_family: str, domain_cards: float) -> float:
    """Links per card of a full-mesh scale-up domain (domain - 1), 0 where the domain is switched."""
    return max(domain_cards - 1.0, 1.0) if chip_family in FULL_MESH_FAMILIES else 0.0


def training_gemm_fraction(chip_family: str, nvidia_fraction: float, ascend_fraction: float) -> float:
    """The part of the catalog's best-case GEMM rate a training step's GEMMs reach: the Ascend
    fraction on the 910B/910C families, the calibrated NVIDIA/AMD one elsewhere (dimensionless)."""
    return ascend_fraction if chip_family in ASCEND_FAMILIES else nvidia_fraction
