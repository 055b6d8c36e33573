"""Context parallelism (CP): the K/V exchange of ring and all-gather attention priced as communication
with its own overlap limit, the causal load balance of the sequence chunks, the fused kernel's
efficiency at the chunk lengths it runs on, and the merge of the per-chunk partial results.

Comm types (a stack profile's `cp_comm_type`; docs/sources.md#context-parallel):
- "p2p": ring attention (Megatron-Core / Transformer Engine `cp_comm_type="p2p"`, the default;
  torch's `context_parallel` rotate method "alltoall"; MindSpeed's megatron_cp_algo). Each of the
  cp ranks holds s/cp tokens; the forward takes cp steps, in step i attending to the K/V chunk it
  received in step i-1 while it sends that chunk on: cp-1 transfers of one chunk, each hidden behind
  one step's attention compute (the first step computes the local chunk while the first transfer
  runs). Per step exposed = max(0, transfer - step compute). The backward rotates K/V again and the
  K/V gradients (dKV) with it: cp-1 steps of both, and the last dKV transfer waits for the last
  step's compute, so it is exposed whole (TE AttnFuncWithCPAndKVP2P; torch
  _templated_ring_attention_backward).
- "allgather": one all-gather of K/V per forward (torch's default rotate method "allgather",
  _AllGatherRotater: launched before the first step, waited for at the second, so it hides behind
  the first step only; Megatron/TE `all_gather`); the backward gathers K/V again the same way and
  rotates dKV on the ring as p2p does (torch uses its all-to-all rotater for dKV).
- "a2a": DeepSpeed-Ulysses / Megatron `a2a`: all-to-alls of Q, K, V before and of the output after
  the attention (and their gradients in the backward) switch the split from sequence to heads; the
  kernel then runs on the whole sequence with heads/cp heads, balanced by construction. Not
  overlapped (the attention needs its inputs): exposed whole.
- "a2a+p2p": Megatron's hierarchical CP: a2a inside the scale-up domain (min(cp, domain/tp) ranks,
  over the scale-up link), p2p ring over the remaining cp/g groups (over the NIC once tp·cp leaves
  the domain).
Overlap (a stack's `cp_overlap`): the limits above assume each transfer runs beside a ring step,
as eager torch (AsyncCollectiveTensor, waited at first use) and Transformer Engine (side streams)
run it. Under torch.compile the traced ring waits for each collective where it is issued
(_functional_collectives._maybe_wrap_tensor; Inductor's reorder_for_compute_comm_overlap is off by
default), so torchtitan's compiled blocks expose the whole exchange: exposed = raw.

Load balance: with a causal mask the chunk of late tokens attends to more keys. Megatron-Core
(get_batch_on_this_cp_rank) and torch (_RoundRobinLoadBalancer, enable_load_balance = True) split
the sequence into 2·cp chunks and give rank r chunks r and 2cp-1-r ("zig-zag" / head-tail): every
step then costs the same on every rank. Without it (sequential chunks) the ring is synchronous and
the last rank sets each step: the critical path computes (cp - 1/2) chunk blocks against a mean of
cp/2, a factor (2cp-1)/cp (torch's note "Context parallelism load balance algorithm for causal
masking"). Kernel lengths: the balanced ring's first step runs causal over the rank's two chunks
(s/cp keys), each later step a non-causal call on half chunks (s/(2cp) keys for the ranks whose
key chunk is the earlier one; the step waits for them); the efficiency per length is
`attention.kernel_efficiency`'s s/(s + h) curve from the FlashAttention-3 paper's sweeps, with the
half-length of causal calls for the first step and of non-causal calls for the others.

Merge of partial outputs and packing of the exchanged buffers (bytes of HBM traffic per element and
ring step, counted op by op). torch (_templated_ring_attention, eager ops): forward, per output
element: cast to fp32 (read 2, write 4), out - block_out (read 8, write 4), x sigmoid(lse diff)
(read 4, write 4), out - that (read 8, write 4): 38 B; per K/V element the torch.cat that packs
K and V for the next step (read 2, write 2): 4 B. Backward, per query element: dQ += step dQ in
fp32 (read 4 + 2, write 4) and the chunk-wise _partial_update (a torch.cat: read 4, write 4): 18 B;
per K/V element: the K/V packing (4), dK/dV += (10), _partial_update (8) and packing dKV for the
send (8): 30 B. Transformer Engine corrects the output in one fused kernel per step (read the
step's bf16 output and the fp32 accumulator, write it: 10 B) and accumulates dQ / dKV in the
gradients' dtype (6 B each; from the AttnFuncWithCPAndKVP2P code as we read it, not measured).
MindSpeed's ring (megatron_cp_algo, mindspeed/core/context_parallel/ring_context_parallel.py and
utils.py at v1.0.RC3_core_r0.6.0) without --use-fused-ring-attention-update ("eager-npu") merges each
step in forward_update_without_fused: the fp32 max / sum statistics (8 per head and token, about
10 eager ops of 12 B each: 7 B per output element of a 128-wide head), both output scales repeated
to the head size and made contiguous (write 4, then read 4 + write 4: 24 B for the two), the two
16-bit outputs times their fp32 scales (read 2 + 4, write 4: 20 B), their sum (read 8, write 4) and
the cast back (read 4, write 2): 69 B per output element; K and V are packed once per forward, not per
step, and the backward adds each step's dQ / dK / dV in place in 16 bit (6 B, as "fused"). With the
flag, npu_ring_attention_update is one kernel: priced as "fused".
Units: seconds, bytes, elements; per card, per layer and micro-batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.steptime.collectives import Fabric, clip_from_one, group_bandwidth
from estimator.layout.steptime.constants import ALPHA_NIC_S, ALPHA_SCALEUP_S

CP_COMM_TYPES = ("p2p", "allgather", "a2a", "a2a+p2p")
# The documented gap (docs/steptime.md "Context parallelism", known gap): torch's ring traced by
# torch.compile inside one scale-up domain from KNOWN_GAP_MIN_CP ranks on. Not a correction: plans
# in it carry the ratios of the validation rows in it in their band (plan.evidence.widen_for_known_gap).
KNOWN_GAP_ID = "compiled-ring-in-domain"
KNOWN_GAP_MIN_CP = 4  # torchtitan 8B on one node: CP2 +5.1%, CP4 +41.0%, CP8 +47.4% (engine 2.26.0)
CP_MERGES = ("fused", "eager-fp32", "eager-npu")
# bytes per attention-output element and ring step (forward), per query / key element (backward)
_MERGE_FWD_Q_BYTES = {"eager-fp32": 38.0, "fused": 10.0, "eager-npu": 69.0}
_MERGE_FWD_KV_BYTES = {"eager-fp32": 4.0, "fused": 0.0, "eager-npu": 0.0}
_MERGE_BWD_Q_BYTES = {"eager-fp32": 18.0, "fused": 6.0, "eager-npu": 6.0}
_MERGE_BWD_KV_BYTES = {"eager-fp32": 30.0, "fused": 6.0, "eager-npu": 6.0}
_DKV_BYTES = {
    "eager-fp32": 4.0,
    "fused": 2.0,
    "eager-npu": 2.0,
}  # dKV in fp32 (torch convert_to_f32) or 16 bit


@dataclass(frozen=True)
class CpShape:
    """One layer's context-parallel exchange on one card and micro-batch.

    cp, tp: context- and tensor-parallel degrees; tokens: the card's s/cp·mbs tokens; kv_elems: K and
    V elements per token exchanged (after TP); q_elems: query/output elements per token (after TP);
    t_fwd, t_bwd: the attention core's compute of one forward and of the backward pass (s);
    ring: ranks on the K/V ring (`ring_size`)."""

    cp: FloatArray
    tp: FloatArray
    tokens: FloatArray
    kv_elems: float
    q_elems: float
    t_fwd: FloatArray
    t_bwd: FloatArray
    ring: FloatArray


def load_balance_factor(cp: Num, balanced: bool) -> FloatArray:
    """Critical-path attention work over the mean work per rank (dimensionless): 1 with the 2·cp
    zig-zag / head-tail split, (2cp-1)/cp with sequential chunks on a synchronous ring."""
    cp_a = arr(cp)
    return arr(np.ones_like(cp_a) if balanced else (2.0 * cp_a - 1.0) / cp_a)


def kernel_lengths(s: float, ring: Num, balanced: bool) -> tuple[tuple[FloatArray, FloatArray, bool], ...]:
    """(share of the rank's attention work, keys per kernel call, causal call) of the calls a CP
    rank makes on a K/V ring of `ring` ranks (1: no ring, a2a or no CP: one causal call over the
    whole sequence).

    The first step runs causal over the local s/n keys (1/n of the work when balanced); the later
    steps non-causal over half chunks s/(2n) when balanced, whole chunks s/n otherwise."""
    n = arr(ring)
    local = s / n
    first = 1.0 / n
    later = np.where(n > 1, local / 2.0 if balanced else local, local)
    return ((arr(first), arr(local), True), (arr(1.0 - first), arr(later), False))


def known_gap(overlap: bool, comm_type: str, cp: int, tp: int, domain: float) -> str:
    """The id of the documented gap a layout falls in, "" for none: the ring or all-gather CP
    exchange waited where issued (a stack's `cp_overlap` false: torch's ring traced by torch.compile)
    with cp >= KNOWN_GAP_MIN_CP ranks whose tp·cp cards fit one scale-up domain of `domain` cards.
    torchtitan's Llama 3.1 8B rows on one H100 node are 41-47% slower than the model there, the same
    stack's 405B rows with the ring over the NIC within 10% (docs/steptime.md "Context parallelism")."""
    ring = comm_type in ("p2p", "allgather")
    if not overlap and ring and cp >= KNOWN_GAP_MIN_CP and tp * cp <= domain:
        return KNOWN_GAP_ID
    return ""


def ring_size(cp: Num, comm_type: str, domain: float, tp: Num) -> FloatArray:
    """Ranks on the K/V ring: cp (p2p, all-gather), 1 (a2a), cp / g for a2a+p2p with the a2a over
    g = min(cp, domain/tp) ranks of the scale-up domain."""
    cp_a = arr(cp)
    if comm_type == "a2a":
        return arr(np.ones_like(cp_a))
    if comm_type == "a2a+p2p":
        g = clip_from_one(np.floor(domain / arr(tp)), cp_a)
        return arr(np.maximum(cp_a / g, 1.0))
    return cp_a


def _link(shape: CpShape, fab: Fabric, peers: Num = 2.0) -> tuple[FloatArray, FloatArray]:
    """(bytes/s, latency s) of one CP transfer: the scale-up link while the tp·cp ranks fit one
    domain, else the NIC (the ring's cross-domain hops set each step). In a full-mesh domain (910B
    HCCS) a transfer to `peers` - 1 ranks uses that many links (collectives.group_bandwidth): one
    for a ring step."""
    inside = shape.tp * shape.cp <= fab.domain
    return arr(np.where(inside, group_bandwidth(fab, peers), fab.nic) * fab.eta), arr(
        np.where(inside, ALPHA_SCALEUP_S, ALPHA_NIC_S)
    )


def exchange_s(
    shape: CpShape, fab: Fabric, comm_type: str, merge: str, forward_passes: Num, overlap: bool = True
) -> tuple[FloatArray, FloatArray]:
    """(raw, exposed) seconds of one layer's CP communication per micro-batch on one card: the
    forward exchange once per forward pass (recomputed forwards repeat it) and the backward's.

    Ring (p2p): forward (n-1)·max(0, x - t_f/n); backward (n-1)·max(0, x + x_d - t_b/n) + x_d,
    x = one K/V chunk's transfer, x_d = one dKV chunk's. All-gather: forward max(0, (n-1)·x - t_f/n),
    backward the same gather plus the dKV ring. a2a: 4 all-to-alls each way, exposed whole.
    overlap False (the stack's `cp_overlap`: the ring traced by torch.compile, each collective
    waited where it is issued): every transfer exposed, exposed = raw."""
    raw, exposed = _exchange_overlapped_s(shape, fab, comm_type, merge, forward_passes)
    return raw, (exposed if overlap else raw)


def _exchange_overlapped_s(
    shape: CpShape, fab: Fabric, comm_type: str, merge: str, forward_passes: Num
) -> tuple[FloatArray, FloatArray]:
    """(raw, exposed) of `exchange_s` with each transfer hidden behind its ring step (s)."""
    bw, alpha = _link(shape, fab, shape.cp if comm_type == "a2a" else 2.0)
    n_f = arr(forward_passes)
    if comm_type == "a2a":
        raw = n_f * _a2a_s(shape, bw, alpha) + _a2a_s(shape, bw, alpha)
        return arr(np.where(shape.cp > 1, raw, 0.0)), arr(np.where(shape.cp > 1, raw, 0.0))
    n = shape.ring
    group = shape.cp / n  # ranks of the a2a stage (1 without one)
    # after the a2a stage each ring rank holds group·s/cp tokens of heads/group: the same K/V bytes
    chunk = shape.tokens * shape.kv_elems
    x = chunk * 2.0 / bw + alpha
    x_d = chunk * _DKV_BYTES[merge] / bw + alpha
    step_f, step_b = shape.t_fwd / n, shape.t_bwd / n
    if comm_type == "allgather":
        gather = (n - 1.0) * x
        fwd_exp = np.maximum(gather - step_f, 0.0)
        bwd_exp = np.maximum(gather - step_b, 0.0) + (n - 1.0) * np.maximum(x_d - step_b, 0.0) + x_d
        fwd_raw, bwd_raw = gather, gather + n * x_d  # n dKV sends: one per step, the last waited
    else:
        fwd_exp = (n - 1.0) * np.maximum(x - step_f, 0.0)
        bwd_exp = (n - 1.0) * np.maximum(x + x_d - step_b, 0.0) + x_d
        fwd_raw, bwd_raw = (n - 1.0) * x, (n - 1.0) * (x + x_d) + x_d
    staged = group > 1
    if staged.any():
        # the hierarchical a2a stage stays inside the scale-up domain (g = domain/tp ranks)
        up = arr(group_bandwidth(fab, group) * fab.eta + 0.0 * bw)
        a2a = np.where(staged, _a2a_s(shape, up, arr(ALPHA_SCALEUP_S + 0.0 * bw), group), 0.0)
        raw = n_f * (fwd_raw + a2a) + bwd_raw + a2a
        exposed = n_f * (fwd_exp + a2a) + bwd_exp + a2a
    else:  # no a2a stage (p2p, all-gather): its +0.0 left out of the non-negative sums (same floats)
        raw = n_f * fwd_raw + bwd_raw
        exposed = n_f * fwd_exp + bwd_exp
    on = (n > 1) | staged
    return arr(np.where(on, raw, 0.0)), arr(np.where(on, exposed, 0.0))


def _a2a_s(shape: CpShape, bw: FloatArray, alpha: FloatArray, group: Num | None = None) -> FloatArray:
    """Four all-to-alls of one pass (Q, K, V in; output out, or their gradients) over `group` ranks
    (default cp): each card keeps 1/g of its tokens' elements and sends the rest (s)."""
    g = arr(shape.cp if group is None else group)
    elems = shape.tokens * (2.0 * shape.q_elems + shape.kv_elems)
    return arr((g - 1.0) / g * elems * 2.0 / bw + 4.0 * (g - 1.0) * alpha)


def merge_s(shape: CpShape, merge: str, forward_passes: Num, hbm: float) -> FloatArray:
    """HBM seconds of merging the ring's per-step partial results on one card and layer, per
    micro-batch: (n-1) steps of the forward merge per forward pass and of the backward accumulation
    (bytes per element in the module docstring); none without a ring (a2a: one kernel call)."""
    n = shape.ring
    q, kv = shape.tokens * shape.q_elems, shape.tokens * shape.kv_elems
    fwd = q * _MERGE_FWD_Q_BYTES[merge] + kv * _MERGE_FWD_KV_BYTES[merge]
    bwd = q * _MERGE_BWD_Q_BYTES[merge] + kv * _MERGE_BWD_KV_BYTES[merge]
    return arr((n - 1.0) * (arr(forward_passes) * fwd + bwd) / hbm)
