"""Step-time model of a training layout: a sum of named physical terms (see `step`), vectorized over
arrays of candidate layouts (`Candidates`). Submodules, one concern each:

- constants: the physical parameters, their sources, and the two calibrated values;
- gemm: GEMM roofline by shape and dtype, FP8 casts;
- attention: attention-core FLOPs and fused-kernel efficiency;
- moe: grouped expert GEMMs, routing and permutation, the dispatch/combine all-to-all;
- context_parallel: the CP K/V exchange (ring, all-gather, a2a), its overlap, load balance, merges;
- collectives: ring and hierarchical collectives on the two-level fabric;
- pipeline: bubble (1F1B interleaved, DualPipe) and point-to-point;
- rates: the compute and HBM rates and the fabric one evaluation reads;
- layer_compute: a layer's compute terms (linears, attention core, element-wise, experts, host);
- layer_comm: a layer's communication terms (TP, CP, EP) split into exposed and hidden, host floor;
- step: the composition, with overlap and the slowdown overlapped communication inflicts.
- bounds: floors of the step time that cost less than the model (what the layout search prunes with);
- ceiling: the highest MFU any layout of a problem can be predicted at (where deadline sizing starts).
"""

from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.collectives import Fabric, hierarchical_allreduce_s, latency_s
from estimator.layout.steptime.constants import (
    ALPHA_NIC_S,
    ALPHA_SCALEUP_S,
    EXPERT_GEMM_OVERHEAD_S,
    EXPERT_HOST_S,
    LINK_EFFICIENCY,
    TRAINING_GEMM_FRACTION,
)
from estimator.layout.steptime.step import BREAKDOWN_KEYS, COMPUTE_TERMS, evaluate_step

__all__ = [
    "ALPHA_NIC_S",
    "ALPHA_SCALEUP_S",
    "BREAKDOWN_KEYS",
    "COMPUTE_TERMS",
    "EXPERT_GEMM_OVERHEAD_S",
    "EXPERT_HOST_S",
    "LINK_EFFICIENCY",
    "TRAINING_GEMM_FRACTION",
    "Candidates",
    "Fabric",
    "evaluate_step",
    "hierarchical_allreduce_s",
    "latency_s",
]
