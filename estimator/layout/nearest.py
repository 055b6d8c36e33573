"""The layouts nearest to a refused fixed one: what a user could fix instead.

When the scenario's fixed parallelism fields leave no layout that passes the rules and fits in HBM,
the plan is refused (estimator.plan.refusal) with these suggestions. Each suggestion is what the
layout search itself (layout.search.search) chooses with the fixed fields set to other values, so
every rule, the memory check and the ranking are the search's own. Distance to the fixed layout,
over the fixed fields only: |log2(value / fixed)| for the degrees and sizes (tp, pp, dp, ep,
expert_tp, cp, micro_batch_size, virtual_stages: halving and doubling are one step), one step for a
different sequence_parallel; the memory-saving choices that leave the model's split as the user set
it cost less, as layout.fit.nearest_fit relaxes them first: a quarter step per ZeRO stage and for
the distributed optimizer (they move together), half a step for a different recompute.

Bounded work (the work budget of one request, estimator.limits): the values of the fixed fields are
tried nearest first (at most NEAREST_PROBES of them, of the NEAREST_KEYS nearest), each one a layout
search over its own candidates, and the search stops before the candidates it has counted would pass
limits.MAX_LAYOUT_CANDIDATES, the cap one plan's search has. Through engine 2.72.0 every fixed field was
dropped and the whole grid enumerated: 2,927,232 layouts, 3.6 s and 398 MB (tracemalloc peak) for
DeepSeek-V3 at 128K tokens on 768 Ascend 910C with CP 3 fixed.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from estimator import limits
from estimator.arrays import FloatArray
from estimator.layout.enumeration import _divisors, axis_values, candidate_count
from estimator.layout.memory import RECOMPUTE_CODES, RECOMPUTE_NAMES
from estimator.layout.search import LayoutEval, LayoutProblem, search

# fixed field -> candidate array (enumeration.AXES, plus the derived dp)
_LOG_FIELDS = {
    "tp": "tp",
    "pp": "pp",
    "dp": "dp",
    "ep": "ep",
    "expert_tp": "etp",
    "cp": "cp",
    "micro_batch_size": "mbs",
    "virtual_stages": "v",
}
_CHOICE_FIELDS = {"recompute": "rc", "sequence_parallel": "sp", "zero_stage": "zero"}
SUGGESTION_KEYS = (
    "tp",
    "pp",
    "dp",
    "ep",
    "cp",
    "virtual_stages",
    "micro_batch_size",
    "zero_stage",
    "recompute",
)
MAX_SUGGESTIONS = 3
NEAREST_PROBES = 256  # values of the fixed fields searched at most (each one layout search)
NEAREST_KEYS = 4096  # values of the fixed fields ranked by distance at most (the nearest of each field kept)


@dataclass(frozen=True)
class Nearest:
    """The nearest accepted layouts, nearest first, and the work spent finding them: `probes` layout
    searches over `evaluated` candidates in all (enumeration.candidate_count of each)."""

    layouts: list[LayoutEval]
    probes: int
    evaluated: int


def _column(c: Mapping[str, Any], key: str) -> np.ndarray:
    """The candidates' values of fixed field `key` (distributed_optimizer: ZeRO stage >= 1)."""
    if key == "distributed_optimizer":
        return np.asarray(c["zero"]) >= 1
    return np.asarray(c[{**_LOG_FIELDS, **_CHOICE_FIELDS}[key]])


def distance(c: Mapping[str, Any], fixed: Mapping[str, Any]) -> FloatArray:
    """Steps from each candidate to the fixed layout over the fixed fields (module docstring)."""
    d = np.zeros(np.shape(c["tp"]), dtype=float)
    for key, value in fixed.items():
        if key in _LOG_FIELDS:
            d += np.abs(np.log2(np.asarray(c[_LOG_FIELDS[key]], dtype=float) / float(value)))
        elif key == "zero_stage":
            d += 0.25 * np.abs(np.asarray(c["zero"], dtype=float) - float(value))
        elif key == "recompute":
            code = RECOMPUTE_CODES[value] if isinstance(value, str) else int(value)
            d += 0.5 * (np.asarray(c["rc"]) != code)
        elif key == "distributed_optimizer":
            d += 0.25 * (_column(c, key) != bool(value))
        elif key == "sequence_parallel":
            d += _column(c, key) != bool(value)
    return d


def _values(relaxed: LayoutProblem, key: str) -> list[Any]:
    """The values field `key` may take (the search's free range; dp: the divisors of the cards)."""
    if key == "dp":
        return _divisors(relaxed.cards, relaxed.cards)
    if key == "distributed_optimizer":
        return [False, True]
    vals = axis_values(relaxed)[{**_LOG_FIELDS, **_CHOICE_FIELDS}[key]].tolist()
    return [RECOMPUTE_NAMES[v] for v in vals] if key == "recompute" else vals


def _one_field(key: str, vals: list[Any], fixed: Mapping[str, Any]) -> FloatArray:
    """distance() of each value of field `key` alone (the distance is a sum over the fields)."""
    col = _LOG_FIELDS.get(key) or _CHOICE_FIELDS.get(key, "zero")
    if key == "recompute":
        column: Any = [RECOMPUTE_CODES[v] for v in vals]
    elif key == "distributed_optimizer":
        column = [int(v) for v in vals]  # ZeRO stage 0 or 1: _column reads zero >= 1
    else:
        column = vals
    return distance({"tp": np.zeros(len(vals)), col: np.asarray(column)}, {key: fixed[key]})


def _hopeless(values: Mapping[str, Any], relaxed: LayoutProblem) -> bool:
    """Values no layout can take, known without a search: a ZeRO stage and a distributed-optimizer
    switch that disagree (ZeRO >= 1 is the distributed optimizer: LayoutEval.distributed_optimizer),
    or degrees that do not split the cards (enumeration's dp-not-integral, dp-not-matching-cards:
    tp·pp·cp·dp = cards, so the product of those given divides the cards)."""
    both = "zero_stage" in values and "distributed_optimizer" in values
    if both and (int(values["zero_stage"]) >= 1) != bool(values["distributed_optimizer"]):
        return True
    split = [int(values[k]) for k in ("tp", "pp", "cp", "dp") if k in values]
    product = int(np.prod(split)) if split else 1
    return relaxed.cards % product != 0 or (len(split) == 4 and product != relaxed.cards)


def probe_order(relaxed: LayoutProblem, fixed: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Values of the fixed fields other than their own, nearest first (ties: _sort_key):
    each field's values sorted by distance, the farthest dropped until at most NEAREST_KEYS
    combinations remain."""
    keys = sorted(fixed)
    per: dict[str, list[tuple[Any, float]]] = {}
    for key in keys:
        vals = _values(relaxed, key)
        if fixed[key] not in vals:
            vals.append(fixed[key])
        d = _one_field(key, vals, fixed)
        per[key] = [(vals[i], float(d[i])) for i in np.argsort(d, kind="stable")]
    while int(np.prod([len(v) for v in per.values()])) > NEAREST_KEYS:
        longest = max(keys, key=lambda k: len(per[k]))
        per[longest] = per[longest][:-1]
    combos, steps = [], []
    for combo in itertools.product(*(per[k] for k in keys)):
        values = {k: v for k, (v, _) in zip(keys, combo, strict=True)}
        if not _hopeless(values, relaxed):
            combos.append(values)
            steps.append(sum(d for _, d in combo))
    order = sorted(range(len(combos)), key=lambda i: (round(steps[i], 9), _sort_key(combos[i], keys)))
    return [combos[i] for i in order if steps[i] > 0]


def _sort_key(values: Mapping[str, Any], keys: list[str]) -> tuple[float, ...]:
    """Ties in distance go to the smaller values, field by field in name order (recompute by code)."""
    return tuple(float(RECOMPUTE_CODES[values[k]] if k == "recompute" else values[k]) for k in keys)


def nearest_search(problem: LayoutProblem, limit: int = MAX_SUGGESTIONS) -> Nearest:
    """Up to `limit` accepted layouts (rules passed, fitting in HBM) nearest to problem.fixed, nearest
    first, each the search's best at its values of the fixed fields (module docstring for the bound).
    No layouts when nothing fits within the bound."""
    fixed = {k: v for k, v in problem.fixed.items() if k in (*_LOG_FIELDS, *_CHOICE_FIELDS)}
    fixed |= {k: v for k, v in problem.fixed.items() if k == "distributed_optimizer"}
    if "recompute" in fixed and not isinstance(fixed["recompute"], str):
        fixed["recompute"] = RECOMPUTE_NAMES[int(fixed["recompute"])]
    keep = {k: v for k, v in problem.fixed.items() if k == "top_n"}
    relaxed = dataclasses.replace(problem, fixed=keep)
    probes = [{}] if not fixed else probe_order(relaxed, fixed)
    out: list[LayoutEval] = []
    evaluated = done = 0
    for values in probes[:NEAREST_PROBES]:
        sub = dataclasses.replace(problem, fixed={**keep, **values})
        count = candidate_count(sub)
        if evaluated + count > limits.MAX_LAYOUT_CANDIDATES:
            break
        evaluated, done = evaluated + count, done + 1
        best = search(sub).best
        if best is not None:
            out.append(best)
            if len(out) == limit:
                break
    return Nearest(out, done, evaluated)


def nearest_layouts(problem: LayoutProblem, limit: int = MAX_SUGGESTIONS) -> list[LayoutEval]:
    """nearest_search's layouts."""
    return nearest_search(problem, limit).layouts


def suggestion(e: LayoutEval) -> dict[str, Any]:
    """A suggested layout as the scenario's `parallelism` fields, with its predicted MFU (and the
    expert tensor-parallel size of a MoE layout)."""
    out = {k: getattr(e, k) for k in SUGGESTION_KEYS}
    if e.moe:
        out["expert_tp"] = e.expert_tp
    return {**out, "predicted_mfu": e.predicted_mfu}
