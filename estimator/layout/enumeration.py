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
- cp: powers of two with at least MIN_CP_CHUNK tokens per rank (shorter chunks only add traffic).
- ep: 1 for dense models; powers of two dividing the experts and the data-parallel size (EP is
  carved out of DP, classic Megatron-LM).
- dp = cards / (tp·pp·cp) must be an integer; the global batch (sequences) is rounded to a whole
  number of micro-batches per DP rank and the candidate is rejected if that moves it by more than 25%.
- micro_batch_size: powers of two up to MAX_MICRO_BATCH; virtual_stages 1, 2, 4, 8;
  sequence_parallel only with tp > 1; zero_stage 0-3 (ZeRO-2/3 with pp > 1 only where the stack
  shards under pipeline parallelism, FSDP2; DeepSpeed refuses it); recompute none / selective /
  full / partial (selective is skipped when it would store no less than no recompute: flash
  attention and no recompute module beyond the attention core).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from estimator.model.transformer import Architecture


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
    def fixed_normalized(self) -> Mapping[str, Any]: ...


MIN_CP_CHUNK = 4096
MAX_MICRO_BATCH = 32
AXES = ("tp", "pp", "cp", "ep", "mbs", "v", "sp", "zero", "rc")

# reason codes, in the order they are checked: a candidate counts under its first failure
REASONS = (
    "tp-crosses-scaleup-domain",
    "tp-not-dividing-heads",
    "sequence-parallel-needs-tp",
    "cp-not-dividing-sequence",
    "pp-not-dividing-layers",
    "virtual-stages-need-pp",
    "virtual-stages-not-dividing-layers",
    "dp-not-integral",
    "dp-not-matching-cards",
    "ep-without-experts",
    "ep-not-dividing-experts",
    "ep-not-dividing-dp",
    "batch-off-by-over-25pct",
    "micro-batches-not-multiple-of-pp",
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
    """Values per axis: the fixed value where the user fixed one, else the free range."""
    arch = problem.arch
    fx = problem.fixed_normalized
    seq = problem.seq_len
    free: dict[str, list[Any]] = {
        "tp": _pow2_upto(min(problem.domain_cards, problem.cards)),
        "pp": _divisors(problem.cards, arch.num_hidden_layers),
        "cp": _pow2_upto(max(1, seq // MIN_CP_CHUNK)),
        "ep": _pow2_upto(min(arch.num_experts, problem.cards)) if arch.is_moe else [1],
        "mbs": _pow2_upto(min(MAX_MICRO_BATCH, problem.global_batch_seqs)),
        "v": [1, 2, 4, 8],
        "sp": [False, True],
        "zero": [0, 1, 2, 3],
        "rc": [0, 1, 2, 3] if problem.selective_saves_memory else [0, 2, 3],
    }
    keys = {
        "tp": "tp",
        "pp": "pp",
        "cp": "cp",
        "ep": "ep",
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
    return out


BATCH_TOLERANCE = 0.25  # largest relative change of the global batch accepted to fit the DP size


def enumerate_candidates(problem: LayoutProblem) -> dict[str, np.ndarray]:
    """Flattened Cartesian product of the axis values plus derived dp and m (micro-batches)."""
    vals = axis_values(problem)
    grids = np.meshgrid(*(vals[a] for a in AXES), indexing="ij")
    c = {a: g.ravel() for a, g in zip(AXES, grids, strict=True)}
    model = c["tp"] * c["pp"] * c["cp"]
    c["dp"] = np.maximum(problem.cards // model, 1)
    # The global batch is rounded to whole micro-batches per DP rank (a multiple of pp when
    # interleaved), as practitioners adjust it to the DP size; candidates that would move it by
    # more than BATCH_TOLERANCE are rejected ("batch-off-by-over-25pct").
    per_rank = problem.global_batch_seqs / (c["dp"] * c["mbs"])
    step = np.where(c["v"] > 1, c["pp"], 1)
    c["m"] = np.maximum(np.rint(per_rank / step), 1).astype(np.int64) * step
    return c


def structural_failures(problem: LayoutProblem, c: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
    """(reason, failing mask) in REASONS order, everything but out-of-memory."""
    arch = problem.arch
    L = arch.num_hidden_layers
    kv = arch.num_attention_heads if arch.is_mla else arch.num_key_value_heads
    tp, pp, cp, ep, v, dp = c["tp"], c["pp"], c["cp"], c["ep"], c["v"], c["dp"]
    model = tp * pp * cp
    fx = problem.fixed_normalized
    gbs = problem.global_batch_seqs
    experts = max(arch.num_experts, 1)
    return [
        ("tp-crosses-scaleup-domain", tp > problem.domain_cards),
        ("tp-not-dividing-heads", (arch.num_attention_heads % tp != 0) | (kv % tp != 0)),
        ("sequence-parallel-needs-tp", c["sp"] & (tp == 1)),
        ("cp-not-dividing-sequence", problem.seq_len % cp != 0),
        ("pp-not-dividing-layers", pp * v > L),
        ("virtual-stages-need-pp", (v > 1) & (pp == 1)),
        ("virtual-stages-not-dividing-layers", (v > 1) & (-(-L // (pp * v)) * pp * v - L > 2)),
        ("dp-not-integral", problem.cards % model != 0),
        ("dp-not-matching-cards", (dp != fx["dp"]) if "dp" in fx else np.zeros_like(tp, dtype=bool)),
        ("ep-without-experts", (ep > 1) & (not arch.is_moe)),
        ("ep-not-dividing-experts", experts % ep != 0),
        ("ep-not-dividing-dp", dp % ep != 0),
        ("batch-off-by-over-25pct", np.abs(c["m"] * dp * c["mbs"] - gbs) > BATCH_TOLERANCE * gbs),
        ("micro-batches-not-multiple-of-pp", (v > 1) & (c["m"] % pp != 0)),
        ("zero-stage-incompatible-with-pp", (c["zero"] >= 2) & (pp > 1) & (not problem.sharded_with_pp)),
    ]
