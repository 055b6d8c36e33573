"""The routed experts under Megatron-Core 0.6's MoE layer (MindSpeed-LLM 1.0.RC3), one MoE layer.

MindSpeed-LLM 1.0.RC3 runs Megatron-Core 0.6's MoE layer (docs/sources.md#mindspeed): the allgather
token dispatcher (MoEAllGatherTokenDispatcher: every rank gathers the TP x EP group's tokens, selects
its experts' copies with masked_select / index_select, sorts them, and scatter-adds the outputs back
in the router's fp32 probabilities before the reduce-scatter), unfused permutation, and the experts
as GroupedMLP (grouped_gemm on CUDA, GroupedMatmul on CANN) or, without --moe-grouped-gemm,
SequentialMLP (a Python loop of one MLP per local expert). Pricing the dispatcher's bytes and the
GEMMs' FLOPs as they run adds under 10% to the expert block (docs/steptime.md "Known gaps"), yet
the MindSpeed-LLM 1.0.RC3 README's own GPU reference column, the same scripts on NVIDIA GPUs, runs
every MoE row of the table 1.4-1.7x slower than the model prices that path: the code path costs
more than its priced FLOPs and bytes on both vendors. We found no profile of that path to split
the cost, so it is one calibrated factor on the expert block's priced time:

    t_experts = MCORE06_EXPERT_TIME_FACTOR · t_experts(priced)        (stack flag moe_core06)

MCORE06_EXPERT_TIME_FACTOR is fitted once (estimator.validation.moe_core06.calibrate_core06_expert_factor)
on the README's GPU reference column (suite "ascend-gpu-reference": Mixtral 8x7B, DeepSeek-V2 60B,
MiniCPM-MoE 8x2B, Grok-1 40B on A100 with the Ascend scripts' layouts), where the rest of the step is
validated by the NVIDIA suites; the Ascend MoE rows of the same table are its hold-outs.
Units: seconds.
"""

from __future__ import annotations

from estimator.arrays import FloatArray, Num, arr

# Fitted (module docstring; docs/steptime.md "Calibrated"): 1.80 at mean |error| 11.6% over the 4 GPU reference rows (2.28.0)
MCORE06_EXPERT_TIME_FACTOR = 1.80


def core06_experts_s(priced: Num, core06: bool, factor: float) -> FloatArray:
    """The expert block's time (s): the priced grouped-GEMM time x `factor` under Megatron-Core 0.6's
    MoE layer (`core06`, stack flag moe_core06), else as priced."""
    return arr(arr(priced) * (factor if core06 else 1.0))
