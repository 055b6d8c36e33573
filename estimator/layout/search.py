"""Parallel-layout search: enumerate every candidate layout, evaluate all of them in one numpy pass
(memory: estimator.layout.memory, step time: estimator.layout.steptime), keep those that fit in HBM and rank
them by throughput (ties within 2%: lower ZeRO stage, less recomputation, less memory).

    problem = LayoutProblem(arch, counts, seq_len=8192, global_batch_tokens=16 * 2**20, cards=16384,
                            accelerator=h100, fixed={"tp": 8})
    result = search(problem)
    result.best.to_dict()       # the contract's `parallelism` section
    result.best.memory_dict()   # the contract's `memory` section
    result.rejected             # {"out-of-memory": 1234, "tp-not-dividing-heads": 56, ...}

A user may fix any subset of tp, pp, dp, ep, cp, expert_tp, micro_batch_size, virtual_stages,
sequence_parallel, zero_stage, recompute, distributed_optimizer, first_stage_layers,
last_stage_layers (and top_n). A fixed layout that
is impossible yields an empty feasible set with the reasons; only nonsense values (tp = 0,
zero_stage = 7, recompute = "sometimes") raise ScenarioError.

The input is `estimator.layout.problem.LayoutProblem`; the diagnosis of a fixed layout that does not
fit is `estimator.layout.fit`; many sizes or scenarios at once are `estimator.layout.batch_search`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.enumeration import (
    REASONS,
    candidate_grid,
    first_position,
    gathered,
    searched_axes,
    structural_failures,
)
from estimator.layout.evaluation import (
    MEMORY_KEYS,
    evaluate,
    evaluate_memory,
    evaluate_time,
    take_memory,
)
from estimator.layout.memory import (
    RECOMPUTE_CODES,
    RECOMPUTE_NAMES,
    MemoryBreakdown,
    stage_layers,
)
from estimator.layout.problem import FIXABLE as FIXABLE
from estimator.layout.problem import LayoutProblem as LayoutProblem
from estimator.layout.steptime import (
    BREAKDOWN_KEYS,
    COMPUTE_TERMS,
)
from estimator.limits import SEARCH_SECONDS as SEARCH_SECONDS


@dataclass(frozen=True)
class LayoutEval:
    """One evaluated layout (plain Python numbers)."""

    tp: int
    pp: int
    dp: int
    ep: int
    cp: int
    zero_stage: int
    recompute: str
    micro_batch_size: int
    micro_batches: int
    virtual_stages: int
    sequence_parallel: bool
    distributed_optimizer: bool
    bubble_fraction: float
    step_time_s: float
    breakdown_s: dict[str, float]
    predicted_mfu: float
    predicted_hfu: float
    tokens_per_s: float
    per_card_bytes: dict[str, float]
    hbm_bytes: float
    fits: bool
    recompute_fraction: float = 0.0  # share of layers recomputed (1 full, k/L_stage partial)
    compute_detail_s: dict[str, float] = field(default_factory=dict)  # parts of breakdown_s["compute"]
    expert_tp: int = 1  # the routed experts' tensor-parallel size (MoE parallel folding)
    first_stage_layers: int = 0  # layers on the first pipeline device (all its virtual chunks)
    last_stage_layers: int = 0  # layers on the last pipeline device
    moe: bool = False  # the model has routed experts (the expert fields are shown only then)

    @property
    def expert_dp(self) -> int:
        """Expert-data-parallel size tp·cp·dp/(ep·expert_tp) (MoE parallel folding)."""
        return self.tp * self.cp * self.dp // max(self.ep * self.expert_tp, 1)

    def to_dict(self) -> dict[str, Any]:
        """The contract's `parallelism` section."""
        keys = (
            "tp",
            "pp",
            "dp",
            "ep",
            "cp",
            "zero_stage",
            "recompute",
            "recompute_fraction",
            "micro_batch_size",
            "micro_batches",
            "virtual_stages",
            "first_stage_layers",
            "last_stage_layers",
            "sequence_parallel",
            "distributed_optimizer",
            "bubble_fraction",
            "step_time_s",
        )
        out = {k: getattr(self, k) for k in keys}
        if self.moe:
            out.update(expert_tp=self.expert_tp, expert_dp=self.expert_dp)
        out["breakdown_s"] = dict(self.breakdown_s)
        out["compute_detail_s"] = dict(self.compute_detail_s)
        out.update(
            predicted_mfu=self.predicted_mfu, predicted_hfu=self.predicted_hfu, tokens_per_s=self.tokens_per_s
        )
        return out

    def memory_dict(self) -> dict[str, Any]:
        """The contract's `memory` section."""
        return {"per_card_bytes": dict(self.per_card_bytes), "hbm_bytes": self.hbm_bytes, "fits": self.fits}


@dataclass(frozen=True)
class LayoutSearch:
    best: LayoutEval | None
    runners_up: list[LayoutEval]
    rejected: dict[str, int]
    evaluated: int
    feasible: int
    closest: LayoutEval | None = None  # when nothing fits: the valid layout needing the least memory
    timed_out: bool = False  # the wall-clock budget ran out: the best of the layouts timed so far
    timed: int = 0  # fitting layouts whose step time was evaluated (all `feasible` unless timed out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "best": self.best.to_dict() if self.best else None,
            "runners_up": [r.to_dict() for r in self.runners_up],
            "rejected": dict(self.rejected),
            "evaluated": self.evaluated,
            "feasible": self.feasible,
        }


def _make_eval(
    problem: LayoutProblem,
    c: Mapping[str, Any],
    mem: MemoryBreakdown,
    t: Mapping[str, Any],
    i: int | tuple[()],
) -> LayoutEval:
    def g(d: Mapping[str, Any], k: str) -> Any:
        return np.asarray(d[k])[i]

    hbm = float(problem.accelerator.hbm_bytes)
    total = float(np.asarray(mem.total)[i])
    zero = int(g(c, "zero"))
    st = stage_layers(
        problem.arch.num_hidden_layers,
        problem.counts.n_dense_layers,
        g(c, "pp"),
        g(c, "v"),
        problem.stage_split,
    )
    return LayoutEval(
        tp=int(g(c, "tp")),
        pp=int(g(c, "pp")),
        dp=int(g(c, "dp")),
        ep=int(g(c, "ep")),
        cp=int(g(c, "cp")),
        zero_stage=zero,
        recompute=RECOMPUTE_NAMES[int(g(c, "rc"))],
        micro_batch_size=int(g(c, "mbs")),
        micro_batches=int(g(c, "m")),
        virtual_stages=int(g(c, "v")),
        sequence_parallel=bool(g(c, "sp")),
        distributed_optimizer=zero >= 1,
        bubble_fraction=float(g(t, "bubble_fraction")),
        step_time_s=float(g(t, "step_time_s")),
        breakdown_s={k: float(g(t, k)) for k in BREAKDOWN_KEYS},
        predicted_mfu=float(g(t, "predicted_mfu")),
        predicted_hfu=float(g(t, "predicted_hfu")),
        tokens_per_s=float(g(t, "tokens_per_s")),
        per_card_bytes=mem.at(i),
        hbm_bytes=hbm,
        fits=total <= hbm,
        recompute_fraction=float(g(t, "recompute_fraction")),
        compute_detail_s={k: float(g(t, k)) for k in COMPUTE_TERMS},
        expert_tp=int(g(c, "etp")),
        first_stage_layers=int(st.first),
        last_stage_layers=int(st.last),
        moe=problem.arch.is_moe,
    )


EVAL_TIME_KEYS = (
    "bubble_fraction",
    "step_time_s",
    "predicted_mfu",
    "predicted_hfu",
    "tokens_per_s",
    "recompute_fraction",
    *BREAKDOWN_KEYS,
    *COMPUTE_TERMS,
)  # what _make_eval reads of the times


def make_evals(
    problem: LayoutProblem, c: Mapping[str, Any], mem: MemoryBreakdown, t: Mapping[str, Any]
) -> list[LayoutEval]:
    """[_make_eval(problem, c, mem, t, i) for every i] of 1-d candidate arrays (one per layout, a
    batch's best layouts), the fields read from Python lists (the same numbers) and the stage
    layers computed once for all: what differs per size (cards, fabric) is not read."""
    n = int(np.asarray(c["tp"]).size)
    if n == 0:
        return []
    hbm = float(problem.accelerator.hbm_bytes)
    col = {k: np.asarray(c[k]).tolist() for k in ("tp", "pp", "dp", "ep", "cp", "zero", "rc", "mbs", "m")}
    col.update({k: np.asarray(c[k]).tolist() for k in ("v", "sp", "etp")})
    tim = {k: np.asarray(t[k], dtype=float).tolist() for k in EVAL_TIME_KEYS}
    memory = {k: np.asarray(getattr(mem, k), dtype=float).tolist() for k in MEMORY_KEYS}
    st = stage_layers(
        problem.arch.num_hidden_layers,
        problem.counts.n_dense_layers,
        np.asarray(c["pp"]),
        np.asarray(c["v"]),
        problem.stage_split,
    )
    first, last = np.asarray(st.first).tolist(), np.asarray(st.last).tolist()
    return [
        LayoutEval(
            tp=int(col["tp"][i]),
            pp=int(col["pp"][i]),
            dp=int(col["dp"][i]),
            ep=int(col["ep"][i]),
            cp=int(col["cp"][i]),
            zero_stage=int(col["zero"][i]),
            recompute=RECOMPUTE_NAMES[int(col["rc"][i])],
            micro_batch_size=int(col["mbs"][i]),
            micro_batches=int(col["m"][i]),
            virtual_stages=int(col["v"][i]),
            sequence_parallel=bool(col["sp"][i]),
            distributed_optimizer=int(col["zero"][i]) >= 1,
            bubble_fraction=tim["bubble_fraction"][i],
            step_time_s=tim["step_time_s"][i],
            breakdown_s={k: tim[k][i] for k in BREAKDOWN_KEYS},
            predicted_mfu=tim["predicted_mfu"][i],
            predicted_hfu=tim["predicted_hfu"][i],
            tokens_per_s=tim["tokens_per_s"][i],
            per_card_bytes={k: memory[k][i] for k in MEMORY_KEYS},
            hbm_bytes=hbm,
            fits=memory["total"][i] <= hbm,
            recompute_fraction=tim["recompute_fraction"][i],
            compute_detail_s={k: tim[k][i] for k in COMPUTE_TERMS},
            expert_tp=int(col["etp"][i]),
            first_stage_layers=int(first[i]),
            last_stage_layers=int(last[i]),
            moe=problem.arch.is_moe,
        )
        for i in range(n)
    ]


def evaluate_layout(
    problem: LayoutProblem,
    tp: int = 1,
    pp: int = 1,
    ep: int = 1,
    cp: int = 1,
    micro_batch_size: int = 1,
    virtual_stages: int = 1,
    sequence_parallel: bool = False,
    zero_stage: int = 0,
    recompute: str | int = "none",
    expert_tp: int | None = None,
) -> LayoutEval:
    """Evaluate one layout with scalars (no feasibility checks: see search for those).
    expert_tp: None = tp (the classic layout)."""
    model = tp * pp * cp
    dp = max(problem.cards // model, 1)
    rc = RECOMPUTE_CODES[recompute] if isinstance(recompute, str) else int(recompute)
    c = {
        "tp": np.asarray(tp),
        "pp": np.asarray(pp),
        "cp": np.asarray(cp),
        "ep": np.asarray(ep),
        "etp": np.asarray(tp if expert_tp is None else expert_tp),
        "mbs": np.asarray(micro_batch_size),
        "v": np.asarray(virtual_stages),
        "sp": np.asarray(bool(sequence_parallel)),
        "zero": np.asarray(zero_stage),
        "rc": np.asarray(rc),
        "dp": np.asarray(dp),
        "m": np.asarray(max(problem.global_batch_seqs // (dp * micro_batch_size), 1)),
    }
    mem, t = evaluate(problem, c)
    return _make_eval(problem, c, mem, t, ())


def search(problem: LayoutProblem) -> LayoutSearch:
    """Enumerate, drop what cannot fit in HBM (memory is cheap), time the rest (one vectorized
    pass), rank by throughput. The step times are evaluated in chunks under a wall-clock budget
    (limits.SEARCH_SECONDS): when it runs out the search ranks what it timed and says so
    (`timed_out`)."""
    started = time.monotonic()
    sub, counts, n = _structurally_valid(problem)
    mem, rf = evaluate_memory(problem, sub)
    fits = np.asarray(mem.total <= problem.accelerator.hbm_bytes)
    counts[REASONS.index("out-of-memory")] += np.count_nonzero(~fits)
    if "recompute" not in problem.fixed:
        redundant = fits & partial_redundant(sub["rc"], rf)
        counts[REASONS.index("partial-recompute-redundant")] += np.count_nonzero(redundant)
        fits = fits & ~redundant
    rejected = {name: int(k) for name, k in zip(REASONS, counts, strict=True) if k}
    good = np.flatnonzero(fits)
    top_n = int(problem.fixed.get("top_n", problem.top_n))
    if good.size == 0:
        if not fits.size:  # no candidate passes the structural rules
            return LayoutSearch(None, [], rejected, n, 0, None)
        i = int(np.argmin(mem.total))
        one = {k: v[i : i + 1] for k, v in sub.items()}
        t = evaluate_time(problem, one, rf[i : i + 1])
        closest = _make_eval(problem, one, take_memory(mem, [i]), t, 0)
        return LayoutSearch(None, [], rejected, n, 0, closest)
    t, timed = _timed_evaluation(problem, {k: v[good] for k, v in sub.items()}, rf[good], started)
    good = good[:timed]  # everything, unless the wall-clock budget ran out
    sub = {k: v[good] for k, v in sub.items()}
    mem, rf = take_memory(mem, good), rf[good]
    order = rank_order(t["tokens_per_s"], mem.total, rf, sub["zero"])[: top_n + 1]
    evals = [_make_eval(problem, sub, mem, t, int(i)) for i in order]
    feasible = int(fits.sum())
    return LayoutSearch(evals[0], evals[1:], rejected, n, feasible, None, timed < feasible, timed)


def _structurally_valid(problem: LayoutProblem) -> tuple[dict[str, Any], npt.NDArray[np.int64], int]:
    """(the columns of the candidates that pass structural_failures, in enumerate_candidates'
    order; per reason of REASONS how many entries of the product the search considers fail it
    first; how many it considers). The rules run on the unexpanded product
    (enumeration.candidate_grid: each on the axes it involves); the first failure's position is
    combined with the searched mask (not searched: a position past every rule) into one byte per
    entry, counted per rule, and the columns are gathered for the passing entries only."""
    grid = candidate_grid(problem)
    shape = np.broadcast_shapes(*(v.shape for v in grid.values()))
    failures = structural_failures(problem, grid)
    none = len(failures)
    searched = searched_axes(problem, grid)
    first = first_position(failures, none + 1)
    pos = np.maximum(first, np.where(searched, 0, none + 1).astype(first.dtype))
    size = int(np.prod(shape))
    counts = np.zeros(len(REASONS), dtype=np.int64)
    for i, (name, failing) in enumerate(failures):
        if np.any(failing):  # a rule no entry fails is no entry's first failure
            counts[REASONS.index(name)] = np.count_nonzero(pos == i) * (size // pos.size)
    skipped = np.count_nonzero(~searched) * (size // searched.size)
    sub = _passing(grid, pos == none, shape)
    return sub, counts, size - int(skipped)


def _passing(grid: Mapping[str, Any], ok: npt.NDArray[np.bool_], shape: tuple[int, ...]) -> dict[str, Any]:
    """The columns of the grid (enumeration.candidate_grid) at the entries, in C order over the
    product of `shape`, where `ok` (a mask broadcasting to it) holds. Where `ok` spans the leading
    axes and is constant along the trailing rest, each passing entry of `ok` stands for a run of
    consecutive entries of the product: a column constant along the trailing axes repeats its
    value over the run, one constant along the leading axes tiles its trailing block."""
    k = ok.ndim
    while k and ok.shape[k - 1] == 1:
        k -= 1
    if not k or ok.ndim != len(shape) or ok.shape[:k] != shape[:k]:
        at = np.unravel_index(np.flatnonzero(np.broadcast_to(ok, shape)), shape)
        return {name: gathered(v, at) for name, v in grid.items()}
    run = int(np.prod(shape[k:]))
    heads = np.flatnonzero(ok)
    lead = np.unravel_index(heads, shape[:k])
    full: tuple[npt.NDArray[np.intp], ...] | None = None
    out = {}
    for name, v in grid.items():
        v = np.asarray(v).reshape((1,) * (len(shape) - np.ndim(v)) + np.shape(v))
        if all(n == 1 for n in v.shape[k:]):
            out[name] = np.repeat(gathered(v.reshape(v.shape[:k]), lead), run)
        elif all(n == 1 for n in v.shape[:k]):
            out[name] = np.tile(np.broadcast_to(v.reshape(v.shape[k:]), shape[k:]).ravel(), heads.size)
        else:
            if full is None:
                full = np.unravel_index((heads[:, None] * run + np.arange(run)).ravel(), shape)
            out[name] = gathered(v, full)
    return out


def _timed_evaluation(
    problem: LayoutProblem, sub: Mapping[str, Any], rf: FloatArray, started: float
) -> tuple[dict[str, FloatArray], int]:
    """Step times of the fitting candidates in chunks of SEARCH_CHUNK, stopping once the search has
    run for limits.SEARCH_SECONDS (wall clock): (times of the first `timed` candidates, timed).
    Candidates are independent, so the times are those of one pass over the same candidates."""
    n = int(rf.size)
    parts: list[dict[str, FloatArray]] = []
    done = 0
    while done < n:
        stop = min(n, done + SEARCH_CHUNK)
        parts.append(evaluate_time(problem, {k: v[done:stop] for k, v in sub.items()}, rf[done:stop]))
        done = stop
        if time.monotonic() - started > SEARCH_SECONDS:
            break
    if len(parts) == 1:
        return parts[0], done
    return {
        k: np.concatenate([np.broadcast_to(p[k], (p["step_time_s"].size,)) for p in parts]) for k in parts[0]
    }, done


# candidates timed per chunk between two looks at the wall clock (about 20 ms of step-time work)
SEARCH_CHUNK = 65_536


def partial_redundant(rc: Num, rf: FloatArray) -> npt.NDArray[np.bool_]:
    """Partial recompute that recomputes no layer or every layer: the same as none or full."""
    out: npt.NDArray[np.bool_] = (np.asarray(rc) == RECOMPUTE_CODES["partial"]) & ((rf <= 0.0) | (rf >= 1.0))
    return out


# Throughput within TIE_BAND (below the model's own error) counts as a tie.
TIE_BAND = 0.02


def speed_bin(tokens_per_s: Num) -> FloatArray:
    """Throughput on a logarithmic grid of TIE_BAND steps: layouts in one bin tie."""
    return arr(np.round(np.log(tokens_per_s) / np.log1p(TIE_BAND)))


def rank_order(tokens_per_s: Num, total_bytes: Num, rf: Num, zero: Num, *outer: Num) -> npt.NDArray[np.intp]:
    """Candidates best first: throughput within 2% is a tie; ties go to the lower ZeRO stage (less
    traffic, and the source article's starting configuration: ZeRO-3 only when the model does not
    fit otherwise), then to less recomputation, then to less memory, then to enumeration order.
    `outer`: keys more significant than all of these (a batch's size index), most significant last."""
    keys = (total_bytes, rf, zero, -speed_bin(tokens_per_s), *outer)
    return np.lexsort(tuple(np.asarray(k) for k in keys))
