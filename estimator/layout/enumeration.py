"""Enumerate candidate parallel layouts as numpy arrays and flag the impossible ones.

The candidate set is the Cartesian product of the free axes (a fixed field contributes its one
value), built with numpy, never a Python loop over candidates:

- tp: powers of two up to the scale-up domain (TP traffic needs scale-up links); must divide the
  attention heads and the KV heads (MLA: the heads).
- pp: divisors of the card count, at most the number of layers. Uneven splits are allowed: with
  c = pp·v chunks of ceil(L/c) layers, the first and the last device give up one layer each (as
  Llama 3 did: 126 layers on 16 stages); for v = 1 any further deficit comes off middle devices,
  for v > 1 (interleaving) the deficit may be at most 2 layers. Interleaving also needs the
  micro-batches divisible by pp (Megatron-LM's rule).
- cp: powers of two with at least MIN_CP_CHUNK tokens per rank (shorter chunks only add traffic);
  the sequence must split into 2·cp equal chunks where the stack balances the causal work
  (`cp_not_dividing_sequence`).
- ep, etp: 1 for dense models. MoE parallel folding (Megatron-Core, docs/sources.md#megatron-core-moe):
  the MoE layers regroup the tp·cp·dp ranks of a pipeline stage into expert-TP x EP x expert-DP, so
  ep (powers of two dividing the experts) times the expert tensor-parallel size etp must divide
  tp·cp·dp (`ep_not_folding`). Free etp is 1 (Megatron-Bridge's MoE recipes) or tp (the classic
  layout, experts split like the dense layers), and tp when ep = 1 (`etp_not_searched`); a fixed
  etp may be any power of two inside the scale-up domain.
- first_stage_layers / last_stage_layers (fixed only): layers on the first / last pipeline device
  (Megatron's --decoder-first/last-pipeline-num-layers, or a pipeline layout whose middle devices
  are even); the other devices share the rest evenly (`stage_split_fails`).
- dp = cards / (tp·pp·cp) must be an integer; the global batch (sequences) is rounded to a whole
  number of micro-batches per DP rank and the candidate is rejected if that moves it by more than 25%.
- micro_batch_size: powers of two up to MAX_MICRO_BATCH; virtual_stages 1, 2, 4, 8;
  sequence_parallel only with tp > 1, and on with tp > 1 for a MoE model where the stack refuses
  it off (`moe_tp_without_sp`: Megatron-Core, MindSpeed); zero_stage 0-3, at most the stack's highest
  (`zero_not_run_by_stack`: MindSpeed runs ZeRO-1) (ZeRO-2/3 with pp > 1 only where the stack
  shards under pipeline parallelism, FSDP2; DeepSpeed refuses it); recompute none / selective /
  full / partial (selective is skipped when it would store no less than no recompute: flash
  attention and no recompute module beyond the attention core).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from estimator.model.transformer import Architecture

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class LayoutProblem(Protocol):
    """What the enumeration reads of estimator.layout.search.LayoutProblem (typed here without importing
    estimator.layout.search, which imports this module)."""

    @property
    def arch(self) -> Architecture: ...
    @property
    def cards(self) -> int: ...
    @property
    def seq_len(self) -> int: ...
    @property
    def domain_cards(self) -> int: ...
    @property
    def global_batch_seqs(self) -> int: ...
    @property
    def selective_saves_memory(self) -> bool: ...
    @property
    def sharded_with_pp(self) -> bool: ...
    @property
    def max_zero_stage(self) -> int: ...
    @property
    def moe_tp_needs_sp(self) -> bool: ...
    @property
    def fixed_normalized(self) -> Mapping[str, Any]: ...
    @property
    def stage_split(self) -> tuple[int | None, int | None]: ...
    @property
    def sequence_parallel_with_tp(self) -> bool: ...
    @property
    def cp_load_balance(self) -> bool: ...


MIN_CP_CHUNK = 4096
MAX_MICRO_BATCH = 32
AXES = ("tp", "pp", "cp", "ep", "etp", "mbs", "v", "sp", "zero", "rc")

# reason codes, in the order they are checked: a candidate counts under its first failure
REASONS = (
    "tp-crosses-scaleup-domain",
    "tp-not-dividing-heads",
    "sequence-parallel-needs-tp",
    "cp-not-dividing-sequence",
    "sequence-parallel-not-dividing-sequence",
    "moe-tp-without-sequence-parallel",
    "pp-not-dividing-layers",
    "stage-layers-not-splitting",
    "virtual-stages-need-pp",
    "virtual-stages-not-dividing-layers",
    "dp-not-integral",
    "dp-not-matching-cards",
    "ep-without-experts",
    "ep-not-dividing-experts",
    "expert-tp-crosses-scaleup-domain",
    "ep-not-folding-into-tp-cp-dp",
    "batch-off-by-over-25pct",
    "micro-batches-not-multiple-of-pp",
    "zero-stage-not-run-by-stack",
    "zero-stage-incompatible-with-pp",
    "partial-recompute-redundant",
    "out-of-memory",
)


def _pow2_upto(n: int) -> list[int]:
    out, x = [], 1
    while x <= n:
        out.append(x)
        x *= 2
    return out


def _divisors(n: int, limit: int) -> list[int]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(d for d in set(small + [n // d for d in small]) if d <= limit)


def axis_values(problem: LayoutProblem) -> dict[str, np.ndarray]:
    """Values per axis: the fixed value where the user fixed one, else the free range.

    A pure function of a few fields of the problem, remembered (_axis_values): a plan asks it some
    eighty times, a sweep thousands, and each computation costs tens of microseconds (divisors,
    list-to-array conversions). The arrays are read-only: callers share them."""
    fx = problem.fixed_normalized
    return dict(
        _axis_values(
            problem.arch,
            problem.cards,
            problem.domain_cards,
            problem.seq_len,
            problem.global_batch_seqs,
            tuple(sorted(fx.items())),
            problem.selective_saves_memory,
        )
    )


@functools.lru_cache(maxsize=4096)
def _axis_values(
    arch: Architecture,
    cards: int,
    domain_cards: int,
    seq: int,
    global_batch_seqs: int,
    fixed: tuple[tuple[str, Any], ...],
    selective_saves_memory: bool,
) -> dict[str, np.ndarray]:
    """axis_values of a problem with these fields (fixed: its fixed_normalized items, sorted)."""
    fx = dict(fixed)
    free: dict[str, list[Any]] = {
        "tp": _pow2_upto(min(domain_cards, cards)),
        "pp": _divisors(cards, arch.num_hidden_layers),
        "cp": _pow2_upto(max(1, seq // MIN_CP_CHUNK)),
        "ep": _pow2_upto(min(arch.num_experts, cards)) if arch.is_moe else [1],
        "etp": _pow2_upto(min(domain_cards, cards)) if arch.is_moe else [1],
        "mbs": _pow2_upto(min(MAX_MICRO_BATCH, global_batch_seqs)),
        "v": [1, 2, 4, 8],
        "sp": [False, True],
        "zero": [0, 1, 2, 3],
        "rc": [0, 1, 2, 3] if selective_saves_memory else [0, 2, 3],
    }
    keys = {
        "tp": "tp",
        "pp": "pp",
        "cp": "cp",
        "ep": "ep",
        "etp": "expert_tp",
        "mbs": "micro_batch_size",
        "v": "virtual_stages",
        "sp": "sequence_parallel",
        "zero": "zero_stage",
        "rc": "recompute",
    }
    out = {}
    for axis, key in keys.items():
        vals = [fx[key]] if key in fx else free[axis]
        if axis == "zero" and "zero_stage" not in fx and "distributed_optimizer" in fx:
            vals = [z for z in vals if (z >= 1) == bool(fx["distributed_optimizer"])]
        out[axis] = np.asarray(vals, dtype=bool if axis == "sp" else np.int64)
        out[axis].flags.writeable = False  # shared by every caller (remembered)
    return out


BATCH_TOLERANCE = 0.25  # largest relative change of the global batch accepted to fit the DP size


def candidate_count(problem: LayoutProblem) -> int:
    """How many candidates enumerate_candidates builds: the product of the axis sizes, with the
    (tp, cp, ep, etp, sp) tuples a free expert-TP size or a free sequence-parallel switch leaves
    out (etp_not_searched, sp_off_not_searched) not counted."""
    vals = axis_values(problem)
    rest = 1
    for axis in AXES:
        if axis not in ("tp", "cp", "ep", "etp", "sp"):
            rest *= len(vals[axis])
    tp, cp, ep, etp, sp = np.meshgrid(
        vals["tp"], vals["cp"], vals["ep"], vals["etp"], vals["sp"], indexing="ij"
    )
    fixed = problem.fixed_normalized
    left_out = etp_not_searched(tp, ep, etp, "expert_tp" in fixed, problem.arch.is_moe) | sp_off_not_searched(
        sp, tp, cp, problem.seq_len, "sequence_parallel" not in fixed, problem.sequence_parallel_with_tp
    )
    return rest * int(np.count_nonzero(~left_out))


def candidate_grid(problem: LayoutProblem) -> dict[str, np.ndarray]:
    """The Cartesian product of the axis values unexpanded: axis i of AXES along dimension i (the
    others of length 1, numpy broadcasting them), dp and m derived on the axes they read (dp:
    tp, pp, cp; m: those and mbs, v). Expanded in C order it is enumerate_candidates' product;
    structural_failures reads it as it reads the flat columns (each rule on the axes it involves)."""
    vals = axis_values(problem)
    dims = len(AXES)
    c = {a: vals[a].reshape([-1 if j == i else 1 for j in range(dims)]) for i, a in enumerate(AXES)}
    model = c["tp"] * c["pp"] * c["cp"]
    c["dp"] = np.maximum(problem.cards // model, 1)
    # The global batch is rounded to whole micro-batches per DP rank (a multiple of pp when
    # interleaved), as practitioners adjust it to the DP size; candidates that would move it by
    # more than BATCH_TOLERANCE are rejected ("batch-off-by-over-25pct").
    per_rank = problem.global_batch_seqs / (c["dp"] * c["mbs"])
    step = np.where(c["v"] > 1, c["pp"], 1)
    c["m"] = np.maximum(np.rint(per_rank / step), 1).astype(np.int64) * step
    return c


def searched_grid(problem: LayoutProblem, c: dict[str, np.ndarray]) -> BoolArray:
    """Per entry of candidate_grid's product (its broadcast shape): the search considers it (a free
    expert-TP size takes only the values the search considers: not a refusal, not counted)."""
    shape = np.broadcast_shapes(*(v.shape for v in c.values()))
    return np.broadcast_to(searched_axes(problem, c), shape)


def searched_axes(problem: LayoutProblem, c: dict[str, np.ndarray]) -> BoolArray:
    """searched_grid on the few axes it involves (tp, cp, ep, etp, sp), unbroadcast."""
    fixed = problem.fixed_normalized
    etp = etp_not_searched(c["tp"], c["ep"], c["etp"], "expert_tp" in fixed, problem.arch.is_moe)
    sp = sp_off_not_searched(
        c["sp"],
        c["tp"],
        c["cp"],
        problem.seq_len,
        "sequence_parallel" not in fixed,
        problem.sequence_parallel_with_tp,
    )
    out: BoolArray = np.asarray(~(etp | sp))
    return out


def enumerate_candidates(problem: LayoutProblem) -> dict[str, np.ndarray]:
    """Flattened Cartesian product of the axis values plus derived dp and m (micro-batches)."""
    grid = candidate_grid(problem)
    keep = searched_grid(problem, grid)
    return {a: np.broadcast_to(v, keep.shape)[keep] for a, v in grid.items()}


def structural_failures(problem: LayoutProblem, c: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
    """(reason, failing mask) in REASONS order, everything but out-of-memory."""
    arch = problem.arch
    L = arch.num_hidden_layers
    kv = arch.num_attention_heads if arch.is_mla else arch.num_key_value_heads
    tp, pp, cp, ep, v, dp, etp = c["tp"], c["pp"], c["cp"], c["ep"], c["v"], c["dp"], c["etp"]
    model = tp * pp * cp
    fx = problem.fixed_normalized
    gbs = problem.global_batch_seqs
    experts = max(arch.num_experts, 1)
    return [
        ("tp-crosses-scaleup-domain", tp > problem.domain_cards),
        ("tp-not-dividing-heads", (arch.num_attention_heads % tp != 0) | (kv % tp != 0)),
        ("sequence-parallel-needs-tp", c["sp"] & (tp == 1)),
        ("cp-not-dividing-sequence", cp_not_dividing_sequence(problem.seq_len, cp, problem.cp_load_balance)),
        (
            "sequence-parallel-not-dividing-sequence",
            sp_not_dividing_sequence(problem.seq_len, tp, cp, c["sp"]),
        ),
        (
            "moe-tp-without-sequence-parallel",
            moe_tp_without_sp(tp, c["sp"], arch.is_moe and problem.moe_tp_needs_sp),
        ),
        ("pp-not-dividing-layers", pp * v > L),
        ("stage-layers-not-splitting", stage_split_fails(L, pp, problem.stage_split)),
        ("virtual-stages-need-pp", (v > 1) & (pp == 1)),
        ("virtual-stages-not-dividing-layers", auto_split_fails(L, pp, v, problem.stage_split)),
        ("dp-not-integral", problem.cards % model != 0),
        ("dp-not-matching-cards", (dp != fx["dp"]) if "dp" in fx else np.zeros_like(tp, dtype=bool)),
        ("ep-without-experts", (ep > 1) & (not arch.is_moe)),
        ("ep-not-dividing-experts", experts % ep != 0),
        ("expert-tp-crosses-scaleup-domain", etp > problem.domain_cards),
        ("ep-not-folding-into-tp-cp-dp", ep_not_folding(tp, cp, dp, ep, etp)),
        ("batch-off-by-over-25pct", np.abs(c["m"] * dp * c["mbs"] - gbs) > BATCH_TOLERANCE * gbs),
        ("micro-batches-not-multiple-of-pp", (v > 1) & (c["m"] % pp != 0)),
        ("zero-stage-not-run-by-stack", zero_not_run_by_stack(c["zero"], problem.max_zero_stage)),
        ("zero-stage-incompatible-with-pp", (c["zero"] >= 2) & (pp > 1) & (not problem.sharded_with_pp)),
    ]


def moe_tp_without_sp(tp: IntArray, sp: BoolArray, refused: bool) -> BoolArray:
    """A MoE model with TP > 1 and sequence parallelism off, on a stack that refuses to train it
    (refused: the model is MoE and StackProfile.moe_tp_needs_sp, Megatron-Core's check: core_v0.6.0
    megatron/training/arguments.py:495-499, core_r0.8.0 megatron/core/transformer/moe/
    moe_layer.py:96-104, main moe_layer.py:636). Where sequence parallelism cannot split the
    sequence (sp_splits_sequence) such a stack has no layout with that TP."""
    if not refused:
        return np.zeros(np.broadcast_shapes(np.shape(tp), np.shape(sp)), dtype=bool)
    out: BoolArray = np.asarray((np.asarray(tp) > 1) & ~np.asarray(sp))
    return out


def zero_not_run_by_stack(zero: IntArray, max_zero_stage: int) -> BoolArray:
    """A ZeRO stage beyond the highest the stack runs (StackProfile.max_zero_stage: MindSpeed-LLM
    1.0.RC3 shards with the distributed optimizer only, ZeRO-1)."""
    out: BoolArray = np.asarray(np.asarray(zero) > max_zero_stage)
    return out


def cp_not_dividing_sequence(seq_len: int, cp: IntArray, load_balance: bool) -> BoolArray:
    """The sequence (tokens) does not split into context parallelism's equal chunks: 2·cp of them
    where the stack balances the causal work (rank r holds chunks r and 2cp-1-r:
    StackProfile.cp_load_balance), cp otherwise; cp = 1 needs no split. Sources: MindSpeed
    ContextParallelFeature.validate_args (Ascend/MindSpeed, mindspeed/features_manager/
    context_parallel/context_parallel_feature.py: megatron_cp_algo and hybrid_cp_algo assert
    seq_length % (2·cp) == 0); Megatron-LM's get_batch_on_this_cp_rank views the sequence as 2·cp
    chunks (docs/sources.md#context-parallel)."""
    cp = np.asarray(cp)
    chunks = np.where((cp > 1) & bool(load_balance), 2 * cp, cp)
    out: BoolArray = np.asarray(seq_len % chunks != 0)
    return out


def ep_not_folding(tp: IntArray, cp: IntArray, dp: IntArray, ep: IntArray, etp: IntArray) -> BoolArray:
    """MoE parallel folding (Megatron-Core's expert rank generator): the expert-TP x EP x expert-DP
    grid of the MoE layers must tile the tp·cp·dp ranks of a pipeline stage, so ep·etp divides
    tp·cp·dp; expert-DP = tp·cp·dp / (ep·etp). The classic layout (etp = tp, EP out of DP) is the
    special case dp % ep == 0."""
    out: BoolArray = np.asarray((tp * cp * dp) % (ep * etp) != 0)
    return out


def sp_splits_sequence(seq_len: int, tp: IntArray, cp: IntArray) -> BoolArray:
    """Sequence parallelism splits each CP rank's seq_len/cp tokens over its TP ranks: they must
    divide, seq_len % (cp·tp) == 0 (Megatron-Core tensor_parallel.mappings: _split_along_first_dim
    and _reduce_scatter_along_first_dim assert "First dimension of the tensor should be divisible
    by tensor parallel size"; MindSpeed runs the same mappings). Counts of tokens and ranks."""
    out: BoolArray = np.asarray(seq_len % (np.asarray(cp) * np.asarray(tp)) == 0)
    return out


def sp_not_dividing_sequence(seq_len: int, tp: IntArray, cp: IntArray, sp: BoolArray) -> BoolArray:
    """Sequence parallelism on (tp > 1) where it cannot split a CP rank's tokens (sp_splits_sequence)."""
    out: BoolArray = np.asarray(np.asarray(sp) & (np.asarray(tp) > 1) & ~sp_splits_sequence(seq_len, tp, cp))
    return out


def sp_off_not_searched(
    sp: BoolArray, tp: IntArray, cp: IntArray, seq_len: int, free: bool, with_tp: bool
) -> BoolArray:
    """SEQUENCE_PARALLEL_WITH_TP: candidates a free sequence-parallel switch leaves out, its off
    position wherever tp > 1 (LayoutProblem.sequence_parallel_with_tp: fused attention). Every
    published recipe the validation reads runs sequence parallelism with TP (Megatron-LM, NeMo,
    Megatron-Bridge, MindSpeed-LLM), and without the backward re-gather (steptime.layer_comm
    .sp_regather_s) the off twin is never faster: it moves the same bytes and replicates the
    activations and their element-wise kernels tp times (Korthikanti et al. 2022). With the
    re-gather the model can price the off twin faster by at most the re-gather's exposed part; the
    search does not offer it, a scenario that fixes parallelism.sequence_parallel = false is planned
    as given (docs/steptime.md "Sequence-parallel backward re-gather"). Where sequence parallelism
    cannot split a CP rank's tokens (sp_splits_sequence: seq_len % (cp·tp) != 0), the off twin is
    the layout and is searched."""
    if not free or not with_tp:
        return np.zeros(np.broadcast_shapes(np.shape(sp), np.shape(tp), np.shape(cp)), dtype=bool)
    out: BoolArray = np.asarray(~sp & (tp > 1) & sp_splits_sequence(seq_len, tp, cp))
    return out


def etp_not_searched(tp: IntArray, ep: IntArray, etp: IntArray, fixed: bool, moe: bool = True) -> BoolArray:
    """Candidates a free expert-TP size leaves out: it is searched over 1 (what Megatron-Bridge's MoE
    recipes set with EP > 1) and tp (the classic layout; the only choice with ep = 1, where experts
    are split like the dense layers); a fixed one is taken as given; a dense model has none (1)."""
    if fixed or not moe:
        return np.zeros(np.shape(etp), dtype=bool)
    out: BoolArray = np.asarray(~(((etp == 1) & (ep > 1)) | (etp == tp)))
    return out


def stage_split_fails(layers: int, pp: IntArray, split: tuple[int | None, int | None]) -> BoolArray:
    """Fixed first/last pipeline-device layers that leave the other devices an uneven (or no, or a
    negative) share: the devices without a fixed count split the rest evenly, at least one layer
    each (Megatron-Core get_num_layers_to_build). One device cannot have a first and a last count
    that differ from the whole model."""
    first, last = split
    pp = np.asarray(pp, dtype=np.int64)
    if first is None and last is None:
        return np.zeros(pp.shape, dtype=bool)
    fixed_n = (first is not None) + (last is not None)
    rest = layers - (first or 0) - (last or 0)
    others = pp - fixed_n
    single = pp == 1
    single_bad = ((first is not None) and first != layers) or ((last is not None) and last != layers)
    even = np.where(others > 0, (rest >= others) & (rest % np.maximum(others, 1) == 0), rest == 0)
    out: BoolArray = np.asarray(np.where(single, bool(single_bad), ~even))
    return out


def auto_split_fails(
    layers: int, pp: IntArray, v: IntArray, split: tuple[int | None, int | None]
) -> BoolArray:
    """The automatic uneven split of interleaved chunks (first and last device give up one layer
    each, at most two in all) does not reach the layer count; not checked when first/last layers
    are fixed (then stage_split_fails decides)."""
    if split != (None, None):
        return np.zeros(np.shape(pp), dtype=bool)
    out: BoolArray = np.asarray((v > 1) & (-(-layers // (pp * v)) * pp * v - layers > 2))
    return out


def gathered(axis: Any, at: tuple[npt.NDArray[np.intp], ...]) -> npt.NDArray[Any]:
    """np.broadcast_to(axis, shape)[at] of a product's column: indexed on the axes it varies along
    only (a column of the grid varies along one or a few of its axes)."""
    v = np.asarray(axis)
    v = v.reshape((1,) * (len(at) - v.ndim) + v.shape)
    out = v[tuple(a if n > 1 else 0 for a, n in zip(at, v.shape, strict=True))]
    return out if out.ndim else np.full(at[0].shape, out)  # a column constant over the product


def blocking_reasons(problem: LayoutProblem) -> list[str]:
    """The structural rules that stand between the candidates and a layout, in REASONS order: those
    failed by the candidates the search considers that fail the fewest rules (one, where a single
    rule is all that refuses them). A refusal names these, not every rule some candidate failed
    first (a free TP of 256 fails 'TP must divide the heads' whatever else is fixed). [] where some
    candidate passes every rule."""
    grid = candidate_grid(problem)
    keep = searched_grid(problem, grid)
    masks = [(name, np.asarray(failing, dtype=bool)) for name, failing in structural_failures(problem, grid)]
    count = np.zeros((), dtype=np.int8)
    for _name, failing in masks:
        count = count + failing.astype(np.int8)
    count = np.broadcast_to(count, keep.shape)
    fewest = int(count[keep].min()) if keep.any() else 0
    if fewest == 0:
        return []
    closest = keep & (count == fewest)
    return [name for name, failing in masks if np.any(closest & failing)]


# A REASONS index, -1 (passes) or -2 (not searched) per entry of the product: one byte each (the
# product of the free axes reaches tens of millions of entries; int64 made it 8 bytes).
REASON_DTYPE = np.int8
assert len(REASONS) < np.iinfo(REASON_DTYPE).max


def first_failure(failures: Sequence[tuple[str, Any]], shape: tuple[int, ...]) -> npt.NDArray[np.int8]:
    """Per entry of a product of `shape`, the REASONS index of the first rule of `failures` (in
    their order) it fails, -1 where it fails none (first_position, mapped to REASONS)."""
    first = first_position(failures, len(failures))
    codes = np.array([REASONS.index(name) for name, _ in failures] + [-1], dtype=REASON_DTYPE)
    out: npt.NDArray[np.int8] = np.broadcast_to(codes[first], shape)  # a view: no full-size copy
    return out


def first_position(failures: Sequence[tuple[str, Any]], limit: int) -> npt.NDArray[Any]:
    """Per entry of the rules' broadcast product, the position in `failures` of the first rule it
    fails, len(failures) where it fails none, in the narrowest unsigned integer that holds `limit`
    (>= len(failures)). The first failing rule is the one of lowest position, and a minimum does not
    depend on the order it is taken in: the rules' masks, each on the few axes it involves, are
    combined smallest first, so only the last few combinations span the whole product (one masked
    assignment per rule over all of it cost several times more)."""
    none = len(failures)
    small = np.min_scalar_type(max(limit, none))  # the narrowest integer that holds every position
    ranked = sorted(
        (np.where(np.asarray(failing), i, none).astype(small) for i, (_, failing) in enumerate(failures)),
        key=np.size,
    )
    first: npt.NDArray[Any] = np.full((), none, dtype=small)
    for failing in ranked:
        first = np.minimum(first, failing)
    return first
