"""Physical parameters of the step-time model (units in the names; sources in docs/sources.md).

A priori (set from a published measurement, never fitted to a training-throughput row):
- LINK_EFFICIENCY: achieved bus bandwidth / nominal per-direction link bandwidth of NCCL/HCCL ring
  collectives and of the MoE all-to-all. nccl-tests ~0.8 on NVLink and InfiniBand; DeepEP's
  all-to-all on H800 reaches 153-158 GB/s of the ~200 GB/s NVLink per direction (0.77-0.79)
  (docs/sources.md#nccl-tests, #deepep).
- HBM_EFFICIENCY: STREAM-like achieved / nominal HBM bandwidth of streaming kernels (~0.85).
- ALPHA_*: per-step latency of ring collectives (NCCL LL protocol ~1-2 us per NVLink hop; RDMA hop
  + proxy ~5 us), nccl-tests small-message figures.
- FP8_TO_BF16_EFFICIENCY: FP8 GEMMs reach a smaller fraction of their (2x) peak than BF16 GEMMs of
  theirs. DeepGEMM's best FP8 GEMM on H800 is 1,358 of 1,979 TFLOP/s (0.686); the best BF16 GEMM
  (MAMF) on the same die is 0.80 of peak: ratio 0.86 (docs/sources.md#deepgemm, #mamf).
- CAST_BYTES_PER_ELEMENT: FP8 quantisation of a GEMM operand reads 2 bytes and writes 1, in the
  row-major and the column-major layout the backward needs (6 B); a dynamic (just-in-time) scale
  adds one more 2-byte read for the amax reduction (8 B). Delayed scaling (TE's amax history),
  blockwise and MXFP8 scales are computed inside the cast kernel.
- GROUPED_GEMM_TILE_ROWS: grouped (per-expert) GEMM kernels tile the token dimension by 128 rows
  (CUTLASS/TE grouped GEMM, DeepGEMM's BLOCK_M 128); a local expert's token count is padded up to
  a whole tile.
- COMM_SM_FRACTION: streaming multiprocessors that an overlapped collective takes from compute.
  DeepSeek-V3 reserves 20 of the H800's 132 SMs for communication (0.15); compute that runs beside
  a collective runs that much slower for as long as they overlap (Echo, arXiv 2412.12487, models
  this slowdown).
- KERNEL_GAP_S: the idle gap between two dependent kernels launched from the host (~2 us on
  Hopper; CUDA graphs replay without it). HOST_OP_S: host time of one eager PyTorch operator
  (~10 us) that becomes exposed when the dropless MoE dispatcher synchronises token counts with
  the host (the GPU then waits for the operators issued after the sync).

Calibrated once on all rows of the calibration set together (estimator.validation), never per row:
- TRAINING_GEMM_FRACTION: the part of the catalog's best-case GEMM efficiency (MAMF) that the GEMMs
  of a training step reach (launch gaps, tile and wave quantisation at training shapes). Fitted on
  the ten rows of Narayanan et al. 2021 (`calibrate_gemm_fraction`).
- EXPERT_GEMM_OVERHEAD_S: the fixed time of one per-expert GEMM where the stack runs the routed
  experts as one GEMM per local expert (Transformer Engine's grouped linear on Hopper: cuBLAS
  GEMMs on several streams, one per expert; DeepSpeed-MoE's loop over experts): launch, stream
  synchronisation and the partly filled last wave of each small GEMM. Fitted together with
  EXPERT_HOST_S on every per-expert-GEMM MoE run of the moe and blackwell suites
  (`estimator.validation.expert_costs.calibrate_expert_costs`); stacks with a single grouped
  kernel (CUTLASS/DeepGEMM, torch._grouped_mm, Ascend GMM) do not pay it.
- EXPERT_HOST_S: host (CPU) time to issue one per-expert GEMM in eager PyTorch (Transformer Engine's
  grouped linear: split, quantize and GEMM set-up per expert from Python). It is not GPU time: it
  only shows where the host cannot run ahead of the GPU, i.e. a MoE layer behind the dropless
  dispatcher's host sync whose GPU work is shorter than its issue time (moe.host_issue_s). Fitted
  together with EXPERT_GEMM_OVERHEAD_S (`estimator.validation.expert_costs.calibrate_expert_costs`).
"""

from __future__ import annotations

LINK_EFFICIENCY = 0.8
HBM_EFFICIENCY = 0.85
ALPHA_SCALEUP_S = 2e-6
ALPHA_NIC_S = 5e-6
DP_BUCKET_PARAMS = 40e6  # Megatron-LM DDP default gradient bucket (parameters)
WEIGHT_BYTES = 2.0  # 16-bit weights and activations
FP8_TO_BF16_EFFICIENCY = 0.686 / 0.80
CAST_BYTES_PER_ELEMENT = {"delayed": 6.0, "blockwise": 6.0, "mxfp8": 6.0, "tensorwise": 8.0, "rowwise": 8.0}
GROUPED_GEMM_TILE_ROWS = 128.0
COMM_SM_FRACTION = 20.0 / 132.0
KERNEL_GAP_S = 2e-6
HOST_OP_S = 10e-6
TRAINING_GEMM_FRACTION = 0.76
EXPERT_GEMM_OVERHEAD_S = 40e-6  # fitted with EXPERT_HOST_S (expert_costs.calibrate_expert_costs)
EXPERT_HOST_S = 85e-6  # fitted together: mean |error| 13.1% over the 17 per-expert-GEMM MoE runs

# Kernels launched per transformer layer and pass (forward; a backward pass launches twice as many):
# norm, QKV, rotary, attention, out-projection, residual add, norm, fc1, activation, fc2, residual add,
# dropout/bias fusions (Megatron-Core with TE: about 12 kernels forward). A MoE layer adds router GEMM,
# softmax/top-k, permutation, two all-to-alls, three grouped GEMMs, activation and unpermutation (~12).
KERNELS_PER_LAYER_PASS = 12.0
KERNELS_PER_MOE_PASS = 12.0
# Eager operators issued between the dispatcher's token-count synchronisation and the expert GEMMs
# (Megatron-Core MoEAlltoAllTokenDispatcher: counts, splits, permute, all-to-all, sort, grouped-GEMM
# set-up): the GPU idles while the host issues them.
MOE_OPS_AFTER_SYNC = 20.0

# Memory-bound element-wise traffic (bytes per token per layer, forward):
# 2 norms (read 2 + write 2) + 2 bias-dropout-adds (read 2x2, write 2, mask 1): 22 bytes x h
ELEMENTWISE_H_BYTES = 22.0
SOFTMAX_SCORE_BYTES = 9.0  # unfused scale-mask-softmax (read 2, write 2) + dropout (read 2, write 2, mask 1)
ADAM_BYTES = 26.0  # read 12 B state, write 12 B state + 2 B weights; the gradient read is added
# MoE routing: router logits, softmax and top-k in fp32 (write 4, read 4, write 4 bytes per expert)
ROUTER_BYTES_PER_EXPERT = 12.0
# permutation: gather k copies (read + write k·h) and unpermute (read k·h, write h): ~4·k·h elements
PERMUTE_ELEMENTS_PER_COPY = 4.0
