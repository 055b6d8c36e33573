"""Attention core (scores and context; the QKV and output projections are ordinary linears).

FLOPs: forward Q·K^T and P·V are 2·s_kv·a·(d_qk + d_v) per query token and layer (PaLM appendix B,
non-causal); a causal fused kernel skips the masked half (FlashAttention-2 paper, section 3.1), an
unfused one computes the full matrix and masks it. Backward: 2.5x the forward with a fused kernel
(it recomputes the scores; FlashAttention-2 benchmarks count 2.5x), 2x without. A sliding window
of w tokens attends to min(s, w) keys.

Efficiency of fused kernels (fraction of the chip's 16-bit peak over forward + backward, long
sequences, head dimension 128), by kernel and chip generation (docs/sources.md#flash-attention):
- fa2 on Ampere 0.60 (FlashAttention-2 paper: fwd+bwd up to ~70% of A100 peak at long sequences,
  50-60% typical); on Hopper 0.35 (FA2 does not use wgmma/TMA: ~35% of H100 peak).
- fa3 / cuDNN fused attention on Hopper 0.58 (FlashAttention-3 paper: forward up to 740 TFLOP/s,
  75%; backward 1.5-1.75x FA2's: ~0.55; combined 1:2.5).
- fa3 / cuDNN fused attention on Blackwell 0.44: the FlashAttention-4 paper (Zadouri, Dao et al.
  2026; Together AI blog) reaches 1,605-1,613 TFLOP/s forward on B200 in BF16 (71% of 2.25 PF) and
  is "up to 1.3x" cuDNN 9.13: cuDNN's forward about 1,235 TFLOP/s, 0.55 of peak. Its backward is
  bound by shared-memory traffic; taken at Hopper's backward/forward ratio (0.55/0.75): 0.40.
  Combined 1:2.5: 3.5/(1/0.55 + 2.5/0.40) = 0.44. (Derived, not a direct measurement.)
- CDNA3: no published kernel measurement we could verify; assumed as FA2 on Hopper (CK kernels).
- fa-triton, the experimental Triton FlashAttention with an additive bias (ALiBi) that MosaicML's
  MPT models ran (flash_attn_triton.py): FA2 / 1.9 on every chip (FlashAttention-2 paper,
  section 4.1: FA2 is 1.3-2.5x faster than FlashAttention in Triton; the middle of that range).
- Ascend (CANN FlashAttentionScore): no public kernel measurement; the kernel runs on the same Cube
  units as the GEMMs, so it is assumed to reach the chip's GEMM rate (matmul efficiency x training
  fraction): `kernel_efficiency` returns None and the caller uses the GEMM rate.
The efficiency falls at short sequences (fixed per-tile work and launch): s/(s + ATTENTION_SEQ_HALF)
for causal calls (FA2 paper's sequence sweeps: seq 512 runs at ~0.6 of seq 16K; the FA3 paper's
H100 forward sweeps at head dimension 128, 512-16K tokens, fit FA2 causal with a half-length of
390). Non-causal calls (the later steps of a context-parallel ring, whose key chunk lies wholly
before the queries) lose less: the same sweeps fit s/(s + h) with h = 108 for FA2 (309-370
TFLOP/s) and 170 / 178 for FA3 / cuDNN (497-648 / 467-595), mean |error| 1-3.5%
(`NONCAUSAL_SEQ_HALF`, by kernel generation). And with small heads, by kernel generation
(`head_factor`):
- FA2-era kernels (fa2, fa-triton): (d/(d+32))/(128/160), head dimension 64 at ~0.83 of 128 in
  the FA2 paper's sweeps;
- Hopper-generation kernels (fa3: FlashAttention-3 and cuDNN fused attention): the FA3 paper's
  16-bit forward sweeps on H100 SXM5 at 4K-16K tokens give head dimension 64 at 0.67-0.69 of 128
  for cuDNN (408-413 vs 595-609 TFLOP/s) and 0.75-0.77 for FA3 (476-497 vs 638-648): 0.72, their
  mean; head dimension 256 at 0.79-0.86 (cuDNN) and 0.96-0.99 (FA3): 0.90. Interpolated in
  log2(d) between 64, 128 and 256 and held beyond.
Kernels compiled for fixed head sizes pad the others and compute the padding (`padded_head_dim`):
the Triton FlashAttention to the next power of two (flash_attn_triton.py: BLOCK_HEADDIM =
max(next_power_of_2(d), 16)), FlashAttention-2 to a multiple of 32 up to 128 and of 64 above
(flash_api.cpp: round_multiple(head_size, head_size <= 128 ? 32 : 64)); MPT-30B's 112 runs as 128.
cuDNN takes any multiple of 8.
FlashAttention-2 and the Triton FlashAttention take one head size for queries, keys and values
(FlashAttention v2.6.3, 2024-07-25: csrc/flash_attn/flash_api.cpp mha_fwd line 416
`CHECK_SHAPE(v, batch_size, seqlen_k, num_heads_k, head_size_og)`, the query's head size;
flash_attn/flash_attn_triton.py `_flash_attn_forward` line 817 `assert v.shape == (batch, seqlen_k,
nheads, d)`), as CANN's FlashAttentionScore of MindSpeed-LLM 1.0.RC3 does (steptime.ascend): where
MLA's value is narrower than its query/key head (DeepSeek-V2/V3: 128 against 192) the value reaches
the kernel padded to the query's size and the kernel computes the padding (`kernel_score_dims`;
cuDNN fused attention and FlashAttention-3 take the two sizes as they are).
The Triton kernel's backward is slower still where the head dimension is not its block's power of two
(`EVEN_HEADDIM` False: MPT-30B's 112 in a 128 block): every step of its inner loop over the query
blocks then masks its loads and stores and adds four `tl.debug_barrier()` (block-wide syncs) that
the 128 and 64 paths skip ("race condition" comments in `_bwd_kernel_one_col_block`; the file's header: "only tested on
A100", "Make the backward for d=128 much faster"). No kernel timing of it is published, so the
backward's time is multiplied by `TRITON_UNEVEN_HEAD_BACKWARD_FACTOR`, fitted once on the rows it
applies to (`backward_slowdown`; estimator.validation.triton_head).
"""

from __future__ import annotations

import math

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.catalog.entries import ASCEND_FAMILIES
from estimator.model.transformer import Architecture, attended_keys, causal_window_keys

ATTENTION_SEQ_HALF = 384.0  # tokens, causal calls
# tokens, non-causal calls: FA3 paper H100 hd128 forward sweeps (FA2 108; FA3 170 and cuDNN 178: 174)
NONCAUSAL_SEQ_HALF = {"fa3": 174.0}
NONCAUSAL_SEQ_HALF_DEFAULT = 108.0
BACKWARD_TO_FORWARD_FUSED = 2.5
BACKWARD_TO_FORWARD_UNFUSED = 2.0

FA2_OVER_TRITON = 1.9  # FlashAttention-2 paper, section 4.1: 1.3-2.5x
# fa-triton backward at a head dimension below its power-of-two block, over the priced backward:
# fitted on the rows tagged fit = "triton-uneven-head" (estimator.validation.triton_head)
TRITON_UNEVEN_HEAD_BACKWARD_FACTOR = 1.7
# Hopper-generation kernels by head dimension 64, 128, 256 (FA3 paper's H100 sweeps; module docstring)
_HOPPER_LOG2_DIMS = (6.0, 7.0, 8.0)
_HOPPER_HEAD_FACTORS = (0.72, 1.0, 0.90)

_FA2 = {"ampere": 0.60, "hopper": 0.35, "blackwell": 0.35, "cdna3": 0.35}
_KERNEL_EFFICIENCY = {
    **{("fa2", family): eff for family, eff in _FA2.items()},
    ("fa3", "ampere"): 0.60,
    ("fa3", "hopper"): 0.58,
    ("fa3", "blackwell"): 0.44,  # FA4 paper's cuDNN 9.13 forward 0.55 x Hopper's bwd/fwd ratio
    ("fa3", "cdna3"): 0.35,
    **{("fa-triton", family): eff / FA2_OVER_TRITON for family, eff in _FA2.items()},
}


def kernel_efficiency(
    kernel: str, family: str, seq_kv: Num, head_dim: float, gemm_efficiency: float, causal: bool = True
) -> FloatArray:
    """Fraction of 16-bit peak a fused attention kernel reaches (forward + backward combined).

    family: the accelerator's catalog `chip_family` (catalog.entries.CHIP_FAMILIES).
    gemm_efficiency: the chip's achievable GEMM fraction of peak, used where the kernel has no
    measurement of its own (the Ascend generations). causal: the call applies the causal mask
    (False for a ring step over an earlier key chunk: a shorter half-length)."""
    ascend = family in ASCEND_FAMILIES
    if kernel == "ascend-fa" and not ascend:
        kernel = "fa2"
    base = gemm_efficiency if ascend else _KERNEL_EFFICIENCY[kernel, family]
    half = ATTENTION_SEQ_HALF if causal else NONCAUSAL_SEQ_HALF.get(kernel, NONCAUSAL_SEQ_HALF_DEFAULT)
    seq_factor = arr(seq_kv) / (arr(seq_kv) + half)
    padding = head_dim / padded_head_dim(kernel, head_dim)
    return arr(base * seq_factor * head_factor(kernel, family, head_dim) * padding)


def padded_head_dim(kernel: str, head_dim: float) -> float:
    """The head dimension a kernel computes with (elements): Triton FlashAttention the next power of
    two (at least 16), FlashAttention-2 the next multiple of 32 (64 above 128), others as given."""
    if kernel == "fa-triton":
        return float(max(2 ** math.ceil(math.log2(max(head_dim, 1.0))), 16))
    if kernel == "fa2":
        step = 32 if head_dim <= 128 else 64
        return float(math.ceil(head_dim / step) * step)
    return float(head_dim)


def backward_slowdown(
    kernel: str, head_dim: float, factor: float = TRITON_UNEVEN_HEAD_BACKWARD_FACTOR
) -> float:
    """The fused backward's time over its priced rate (dimensionless): `factor` for the Triton
    FlashAttention when the head dimension is not its block's power of two (the masked, barrier-laden
    backward loop of the module docstring), 1 for every other kernel and head size."""
    uneven = kernel == "fa-triton" and padded_head_dim(kernel, head_dim) != float(head_dim)
    return float(factor) if uneven else 1.0


HEAD_FACTOR_MAX = 1.1  # the FA2 paper's curve capped above head size 128 (no kernel's factor exceeds it)


def head_factor(kernel: str, family: str, head_dim: float) -> float:
    """Efficiency at head dimension `head_dim` relative to 128 (dimensionless), by kernel generation
    (Hopper-generation kernels on Hopper and Blackwell; the FA2 paper's curve elsewhere)."""
    if kernel == "fa3" and family in ("hopper", "blackwell"):
        return float(np.interp(np.log2(max(head_dim, 1.0)), _HOPPER_LOG2_DIMS, _HOPPER_HEAD_FACTORS))
    return min((head_dim / (head_dim + 32.0)) / (128.0 / 160.0), HEAD_FACTOR_MAX)


def score_dims(arch: Architecture) -> tuple[float, float]:
    """(d_qk, d_v) per head; MLA uses its no-rope + rope query/key width and its value width."""
    if arch.is_mla:
        return float((arch.qk_nope_head_dim or 0) + (arch.qk_rope_head_dim or 0)), float(
            arch.v_head_dim or arch.head_dim
        )
    return float(arch.head_dim), float(arch.head_dim)


# Fused kernels that take one head size for Q, K and V (module docstring)
ONE_HEAD_SIZE_KERNELS = ("fa2", "fa-triton", "ascend-fa")


def kernel_score_dims(kernel: str, d_qk: float, d_v: float) -> tuple[float, float]:
    """(d_qk, d_v) a fused kernel computes with (elements): the value padded to the query/key head
    size on the kernels of ONE_HEAD_SIZE_KERNELS (FlashAttention-2, Triton FlashAttention, CANN's;
    a CANN call from MindSpeed-LLM's other layouts is steptime.ascend.ascend_score_dims'), else as given."""
    if kernel in ONE_HEAD_SIZE_KERNELS:
        return d_qk, max(d_qk, d_v)
    return d_qk, d_v


def layer_kinds(arch: Architecture, seq_len: float) -> tuple[tuple[float, float, float], ...]:
    """(share of the layers, keys a fused kernel's tiles span, mean keys per causal query) per
    attention kind: full attention over the sequence, and sliding-window layers over min(s, w)."""
    w, n = arch.sliding_window, arch.sliding_window_layers
    if not w or not n or w >= seq_len:
        return ((1.0, seq_len, 0.5 * seq_len),)
    share = n / arch.num_hidden_layers
    return ((1.0 - share, seq_len, 0.5 * seq_len), (share, float(w), float(causal_window_keys(seq_len, w))))


def forward_flop_per_token(arch: Architecture, seq_len: float, fused: bool) -> float:
    """Forward attention-core FLOPs per query token, averaged over the layers: a causal fused kernel
    computes the keys `models.attended_keys` counts (the masked half and what lies outside a sliding
    window skipped); an unfused one the whole s x s matrix, masked afterwards."""
    d_qk, d_v = score_dims(arch)
    keys = float(attended_keys(arch, seq_len, causal=True)) if fused else seq_len
    return 2.0 * keys * float(arch.num_attention_heads) * (d_qk + d_v)


def backward_ratio(fused: bool) -> float:
    """Backward / forward FLOPs of the attention core."""
    return BACKWARD_TO_FORWARD_FUSED if fused else BACKWARD_TO_FORWARD_UNFUSED
