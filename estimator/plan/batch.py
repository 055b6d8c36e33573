"""Evaluate many scenarios at once: the vectorized compute-and-cost path of sweeps.

`evaluate_columns(base, columns)` takes a base scenario and, per dotted field, an array of n
values; it returns arrays keyed by rollup.SUMMARY_FIELDS equal to `plan.estimate()` for each of
the n scenarios. Rows are grouped by their "structural" fields (model, accelerator, network,
storage... anything that changes the resolved catalog entries or the designs); within a group the
numeric fields below are plain numpy arrays through rollup(), network.fabric_counts() and
storage.storage_counts(), the same functions estimate() uses. Rows without an MFU take it from
the layout model like plan.choose_cluster, batched: the group's distinct card counts (or the sizes
its deadlines scan) go through one vectorized layout search (layout_batch.best_layouts), shared by
every row with the same cards, and the enumeration and accelerator-independent memory are reused
by the next group of the same model and batch. Those rows also get their chosen layout
(LAYOUT_FIELDS). A group with cluster.deadline_confidence is sized for that chance of meeting its
deadlines (plan.batch_confidence), and every deadline row gets its chance of missing it, as estimate()
states it; a group with cluster.budget takes the fastest cluster each row's budget buys
(plan.batch_budget). Each row carries its plan's exchange rate (RATE_FIELD); a row without a plan
its reason (plan.batch_reasons: code, cards and the English default).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.contract.price_book import PriceBook
from estimator.contract.resolve import Resolved, resolve
from estimator.contract.scenario import validate_shape
from estimator.dotted import pop_path, set_path
from estimator.errors import ScenarioError
from estimator.layout.search import LayoutEval
from estimator.model.compute import SECONDS_PER_DAY
from estimator.money.pricing import equipment, model_flops, prices, vectorized_counts
from estimator.money.pricing import facility as plan_facility
from estimator.money.rollup import SUMMARY_FIELDS, Counts, Facility, Sizing, cards_and_time, rollup
from estimator.plan import goodput
from estimator.plan.batch_budget import (
    BUDGET_FIELDS,
    MOST_CARDS_FIELD,
    SERVER_PRICE_FIELD,
    BudgetSizes,
    size_by_budget,
)
from estimator.plan.batch_confidence import CONFIDENCE_FIELDS, GroupConfidence, confidence_columns
from estimator.plan.batch_reasons import (
    BUYS_NOTHING,
    CODE_DTYPE,
    NEVER_FINISHES,
    NO_LAYOUT,
    NOT_BUILT,
    REASON_CARDS_FIELD,
    REASON_CODE_FIELD,
    REASON_ERRORS_FIELD,
    REASON_FIELDS,
    TOO_LARGE,
    RowReasons,
    defaults,
    group_code,
    group_errors,
)
from estimator.plan.batch_sizing import RowInputs, size_rows
from estimator.plan.compose import (
    problem_at,
    resolved_stack,
)
from estimator.plan.deadline_refusals import cards_without_failures
from estimator.plan.goodput import held_ratio
from estimator.plan.pilot import calibrated, fit_pilot

# Numeric fields evaluated as arrays inside a group; every other field makes a group of its own.
NUMERIC_FIELDS = (
    "training.tokens",
    "cluster.cards",
    "cluster.target_days",
    "efficiency.mfu",
    "cost.electricity_per_kwh",
    "cost.pue",
    "cost.cloud_price_per_card_hour",
    "cost.cloud_reserved_price_per_card_hour",
    "cost.server_price",
    "cost.depreciation_years",
    "cost.utilization",
)
STACK_FIELD = "stack.id"  # the software stack each row's step time assumes (a string column)
# result.cost.exchange_rate: units of the row's currency (cost.currency) per USD, the one rate its
# amounts are converted by (contract.resolve: cost.usd_to_cny or the catalog's); a sweep over the
# currency ranks its rows' amounts in USD by it (sweeps.digests)
RATE_FIELD = "cost.exchange_rate"
__all__ = [
    "BUDGET_FIELDS",
    "CONFIDENCE_FIELDS",
    "GOODPUT_FIELDS",
    "LAYOUT_FIELDS",
    "NUMERIC_FIELDS",
    "RATE_FIELD",
    "REASON_FIELDS",
    "STACK_FIELD",
    "SUMMARY_FIELDS",
    "evaluate_columns",
]

# result.goodput's headline fields (plan.goodput, vectorized over the group's rows)
GOODPUT_FIELDS = (
    "goodput.wall_clock_days",
    "goodput.wall_clock_days_p10",
    "goodput.wall_clock_days_p50",
    "goodput.wall_clock_days_p90",
    "goodput.effective_training_time_ratio",
    "goodput.expected_interruptions",
    "goodput.mean_time_between_interruptions_h",
    "goodput.checkpoint_interval_s",
    "goodput.checkpoint_write_s",
)
_GOODPUT_KEYS = {
    "goodput.wall_clock_days": "wall_s",
    "goodput.wall_clock_days_p10": "wall_p10_s",
    "goodput.wall_clock_days_p50": "wall_p50_s",
    "goodput.wall_clock_days_p90": "wall_p90_s",
    "goodput.effective_training_time_ratio": "ettr",
    "goodput.expected_interruptions": "interruptions",
    "goodput.mean_time_between_interruptions_h": "mtbi_s",
    "goodput.checkpoint_interval_s": "interval_s",
    "goodput.checkpoint_write_s": "write_s",
}
_GOODPUT_UNIT = {
    "wall_s": SECONDS_PER_DAY,
    "wall_p10_s": SECONDS_PER_DAY,
    "wall_p50_s": SECONDS_PER_DAY,
    "wall_p90_s": SECONDS_PER_DAY,
    "mtbi_s": 3600.0,
}


# the float columns of every row (NaN where not planned or not stated), besides the layout's
ROW_FIELDS = (*SUMMARY_FIELDS, *GOODPUT_FIELDS, *CONFIDENCE_FIELDS, *BUDGET_FIELDS, RATE_FIELD)


def _codes(values: Any) -> tuple[np.ndarray, list[Any]]:
    """Integer codes per row and the distinct values, for any column (numbers, strings, objects)."""
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if arr.dtype != object:
        uniq, inv = np.unique(arr, return_inverse=True)
        return inv.astype(np.int64), list(uniq.tolist())
    index: dict[str, int] = {}
    firsts: list[Any] = []
    codes = np.empty(len(arr), dtype=np.int64)
    for i, v in enumerate(arr):
        key = json.dumps(v, sort_keys=True, default=str)
        code = index.get(key)
        if code is None:
            code = index[key] = len(firsts)
            firsts.append(v)
        codes[i] = code
    return codes, firsts


def _facility(r: Resolved, cols: dict[str, Any]) -> Facility:
    """Per-row prices: the group's catalog values, replaced by the swept cost fields where given
    (NaN in a swept column means "not given": the catalog value)."""
    base = plan_facility(r, equipment(r), prices(r))
    run, fx = base.running, r.usd_to_currency

    def swept(field: str, default: Any, money: bool) -> Any:
        v = cols.get(field)
        if v is None:
            return default
        return np.where(np.isnan(v), default, v / fx if money else v)

    return dataclasses.replace(
        base,
        equipment=dataclasses.replace(
            base.equipment, server_price_usd=swept("cost.server_price", base.equipment.server_price_usd, True)
        ),
        pue=swept("cost.pue", base.pue, False),
        running=dataclasses.replace(
            run,
            electricity_usd_per_kwh=swept("cost.electricity_per_kwh", run.electricity_usd_per_kwh, True),
            cloud_usd_per_card_hour=swept(
                "cost.cloud_price_per_card_hour", run.cloud_usd_per_card_hour, True
            ),
            cloud_reserved_usd_per_card_hour=swept(
                "cost.cloud_reserved_price_per_card_hour", run.cloud_reserved_usd_per_card_hour, True
            ),
            depreciation_years=swept("cost.depreciation_years", run.depreciation_years, False),
            utilization=swept("cost.utilization", run.utilization, False),
        ),
    )


def _group_key_codes(columns: dict[str, Any], n: int) -> tuple[np.ndarray, list[str], list[list[Any]]]:
    """One integer per row naming its combination of structural values."""
    fields = [f for f in columns if f not in NUMERIC_FIELDS]
    key = np.zeros(n, dtype=np.int64)
    uniques: list[list[Any]] = []
    for f in fields:
        codes, values = _codes(columns[f])
        key = key * len(values) + codes
        uniques.append(values)
    return key, fields, uniques


def _nan_floats(col: Any, rows: np.ndarray) -> np.ndarray:
    arr = np.asarray(col, dtype=object)[rows] if not isinstance(col, np.ndarray) else col[rows]
    if arr.dtype == object:
        return np.array([np.nan if v is None else float(v) for v in arr], dtype=float)
    out: np.ndarray = arr.astype(float)
    return out


def evaluate_columns(
    base: dict[str, Any], columns: dict[str, Any], books: Mapping[str, PriceBook] | None = None
) -> dict[str, np.ndarray]:
    """Evaluate n scenarios: `base` with `columns[field][i]` set for row i. Returns SUMMARY_FIELDS
    arrays (NaN where a row cannot be planned), the chosen layout (LAYOUT_FIELDS), the stack id
    (STACK_FIELD) plus "ok" (bool), "error" (object: the English reason or None) and the reason's
    code and cards (REASON_FIELDS, plan.batch_reasons: "" and NaN where planned), and a refused
    group's FieldErrors as JSON text (REASON_ERRORS_FIELD: object, None where none).
    Columns must hold values already validated one by one (sweep.validate_sweep does that); `books`
    are the price books (by reference) that `cost.price_book` in the base or an axis names."""
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ScenarioError("every axis column must have the same length", "axes")
    n = lengths.pop() if lengths else 1
    out = {f: np.full(n, np.nan) for f in ROW_FIELDS}
    out.update(_empty_layout_columns(n))
    out[STACK_FIELD] = np.full(n, "", dtype="<U40")
    ok = np.zeros(n, dtype=bool)
    errors = np.full(n, None, dtype=object)  # a group's refusal: its own sentence
    reasons = RowReasons(np.full(n, "", dtype=CODE_DTYPE), np.full(n, np.nan))
    refusals = np.full(n, None, dtype=object)  # a group's refusal: its FieldErrors (group_errors)
    key, fields, _uniques = _group_key_codes(columns, n)
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    for rows in np.split(order, bounds):
        if not len(rows):
            continue
        doc = copy.deepcopy(base)
        for f in fields:
            first = columns[f][rows[0]]
            value = first.item() if isinstance(first, np.generic) else first
            if value is None:
                pop_path(doc, f)
            else:
                set_path(doc, f, value)
        cols = {f: _nan_floats(columns[f], rows) for f in NUMERIC_FIELDS if f in columns}
        for f, v in cols.items():
            if f.startswith("cost."):
                pop_path(doc, f)  # swept prices apply per row; NaN rows take the catalog value
            elif not np.isnan(v[0]):
                set_path(doc, f, float(v[0]))  # the group's scenario validates with its first row
        if "cluster.cards" in cols and not np.isnan(cols["cluster.cards"][0]):
            doc.setdefault("cluster", {}).pop("target_days", None)
        elif "cluster.target_days" in cols and not np.isnan(cols["cluster.target_days"][0]):
            doc.setdefault("cluster", {}).pop("cards", None)
        try:
            r = resolve(validate_shape(doc), books)
            if r.scenario.calibration is not None:  # the pilot's factors (estimator.plan.pilot)
                r = calibrated(r, fit_pilot(r, problem_at))
            values = _evaluate_group(r, cols, len(rows))
            out[STACK_FIELD][rows] = resolved_stack(r).id
        except ScenarioError as exc:
            errors[rows] = str(exc)
            reasons.codes[rows] = group_code(list(exc.errors))
            refusals[rows] = group_errors(list(exc.errors))
            continue
        good = values.pop("_ok")
        for f in (*ROW_FIELDS, *LAYOUT_FIELDS):
            out[f][rows] = np.broadcast_to(values[f], (len(rows),))
        ok[rows] = good
        for f in (*SUMMARY_FIELDS, *GOODPUT_FIELDS, RATE_FIELD):  # a row not planned: its reason, no figures
            out[f][rows[~good]] = np.nan
        group: RowReasons = values["_reason"]
        reasons.codes[rows[~good]], reasons.cards[rows[~good]] = group.codes[~good], group.cards[~good]
        errors[rows[~good]] = defaults(group.codes[~good])
    out["ok"] = ok
    out["error"] = errors
    out[REASON_CODE_FIELD], out[REASON_CARDS_FIELD] = reasons.codes, reasons.cards
    out[REASON_ERRORS_FIELD] = refusals
    return out


# The chosen layout of rows whose MFU the layout model predicts (NaN, or "" for recompute, for rows
# with an MFU given and rows where no layout fits): the contract's `parallelism` fields.
LAYOUT_FIELDS = (
    "parallelism.tp",
    "parallelism.pp",
    "parallelism.dp",
    "parallelism.ep",
    "parallelism.expert_tp",
    "parallelism.cp",
    "parallelism.zero_stage",
    "parallelism.recompute",
    "parallelism.micro_batch_size",
    "parallelism.predicted_mfu",
)


def _layout_columns(bests: list[LayoutEval | None]) -> dict[str, npt.NDArray[Any]]:
    out = {}
    for field in LAYOUT_FIELDS:
        key = field.split(".", 1)[1]
        if key == "recompute":
            out[field] = np.array(["" if b is None else b.recompute for b in bests], dtype="<U9")
        elif key == "expert_tp":  # a dense model has none (its parallelism section omits it)
            out[field] = np.array([np.nan if b is None or not b.moe else float(b.expert_tp) for b in bests])
        else:
            out[field] = np.array([np.nan if b is None else float(getattr(b, key)) for b in bests])
    return out


def _empty_layout_columns(n: int) -> dict[str, npt.NDArray[Any]]:
    out: dict[str, npt.NDArray[Any]] = {}
    for f in LAYOUT_FIELDS:
        out[f] = np.full(n, "", dtype="<U9") if f.endswith(".recompute") else np.full(n, np.nan)
    return out


def _evaluate_group(r: Resolved, cols: dict[str, np.ndarray], n: int) -> dict[str, Any]:
    s = r.scenario
    flops = model_flops(r)
    peak = r.accelerator.peak_flops(s.training.precision)
    tokens = cols.get("training.tokens", np.full(n, float(s.training.tokens)))
    flop = flops["flop_per_token"] * tokens
    mfu = np.array(
        cols.get("efficiency.mfu", np.full(n, np.nan if s.efficiency.mfu is None else s.efficiency.mfu))
    )
    given_cards, size, by_budget = _row_sizes(r, cols, tokens, mfu)
    slow = np.isnan(mfu)
    deadline = None if given_cards else GroupConfidence(r)  # each row's chance of missing its deadline
    confident = None if deadline is None or deadline.confidence is None else deadline
    z = size_rows(r, RowInputs(flop, tokens, size, mfu, given_cards), confident)
    cards, mfu, bests, past_mfu, unplanned = z.cards, z.mfu, z.bests, z.past_mfu, z.unplanned
    layout = _layout_columns(bests) if slow.any() else _empty_layout_columns(n)
    state: dict[str, Any] = {}
    sizing = Sizing(
        training_flop=flop,
        tokens=tokens,
        peak_flops=peak,
        mfu=mfu,
        cards_per_node=r.cards_per_node,
        cards=cards,
    )
    ct = cards_and_time(sizing)
    with np.errstate(invalid="ignore"):  # rows without a plan (NaN seconds) size nothing
        counts = vectorized_counts(r, tokens, state)(ct["cards"], ct["nodes"], tokens / ct["seconds"])
    counts = _none_where(counts, ~state["feasible"])
    g = _goodput(r, ct, state)
    # energy and cost for the time the cluster is held, failures counted (plan.sizing.size_plan)
    held = held_ratio(g["wall_s"], ct["seconds"])
    values: dict[str, Any] = dict(
        rollup(dataclasses.replace(sizing, held=held), lambda *_: counts, _facility(r, cols))
    )
    ok = (
        r.scenario.parallelism.fits_cards(cards)
        & state["feasible"]
        & np.isfinite(values["compute.wall_clock_days"])
    )
    ok &= ~unplanned
    if by_budget is not None:  # estimate()'s budget-buys-no-cluster
        ok &= ~by_budget.buys_nothing
    values.update(_goodput_columns(g, np.shape(cards)))
    never = ok & ~np.isfinite(values["goodput.wall_clock_days"])  # interruptions outrun the progress
    ok &= ~never
    values["_ok"] = ok
    values.update(layout)
    values.update(confidence_columns(deadline, ok, (tokens, size, cards, mfu), bests))
    reasons = RowReasons(np.full(np.shape(ok), "", dtype=CODE_DTYPE), np.full(np.shape(ok), np.nan))
    structural = ~(r.scenario.parallelism.fits_cards(cards) & state["feasible"])
    reasons.set(~ok & (structural | ~unplanned), NOT_BUILT, cards)
    reasons.set(~ok & ~structural & unplanned, NO_LAYOUT, cards)
    reasons.set(never, NEVER_FINISHES, cards)
    values.update(_budget_columns(by_budget, ok, reasons))
    if not given_cards:  # deadlines past what the network builds even without interruptions (estimate()'s
        # deadline-needs-too-many-cards); those out of reach only because of them plan the fastest cluster
        past = np.where(slow, np.isfinite(past_mfu), ~state["feasible"])
        need = np.full(np.shape(ok), np.nan)
        if past.any():  # the cards its refusal states (plan.deadline_refusals.too_many_cards)
            need[past] = cards_without_failures(r, flop[past], size[past] * SECONDS_PER_DAY, past_mfu[past])
        reasons.set(past, TOO_LARGE, need)
    values["_reason"] = reasons
    values[RATE_FIELD] = np.full(np.shape(ok), float(r.usd_to_currency))
    return values


def _row_sizes(
    r: Resolved, cols: dict[str, np.ndarray], tokens: np.ndarray, mfu: np.ndarray
) -> tuple[bool, np.ndarray, BudgetSizes | None]:
    """How the group's rows are sized: (cards given, each row's cards or deadline days, the budget's
    sizing). A budget-sized group's rows take the cards their budget buys (plan.batch_budget) and are
    then planned as those cards given, as plan.choose_cluster plans the cluster a budget buys."""
    s, n = r.scenario, len(tokens)
    if s.cluster.budget is not None:
        server = s.cost.server_price
        prices = cols.get(SERVER_PRICE_FIELD, np.full(n, np.nan if server is None else float(server)))
        by_budget = size_by_budget(r, tokens, mfu, prices)
        return True, by_budget.cards.astype(float), by_budget
    given_cards = s.cluster.cards is not None
    size = cols.get(
        "cluster.cards" if given_cards else "cluster.target_days",
        np.full(n, float((s.cluster.cards if given_cards else s.cluster.target_days) or 0.0)),
    )
    return given_cards, size, None


def _budget_columns(
    by_budget: BudgetSizes | None, ok: npt.NDArray[np.bool_], reasons: RowReasons
) -> dict[str, np.ndarray]:
    """BUDGET_FIELDS of the group's planned rows (NaN elsewhere and without a budget sizing); the
    rows whose budget buys no cluster get that reason, with the smallest cluster (in place)."""
    if by_budget is None:
        return {MOST_CARDS_FIELD: np.full(np.shape(ok), np.nan)}
    reasons.set(by_budget.buys_nothing, BUYS_NOTHING, by_budget.cards)
    return {MOST_CARDS_FIELD: np.where(ok, by_budget.most, np.nan)}


def _goodput(r: Resolved, ct: dict[str, np.ndarray], state: dict[str, Any]) -> dict[str, Any]:
    """plan.goodput.evaluate on the rows' cards, nodes, computing seconds, training fabric and
    hot-tier bandwidth (the counts just sized), as plan.estimate() does."""
    with np.errstate(invalid="ignore"):  # rows without a plan (NaN seconds) stay NaN
        g = goodput.evaluate(
            r,
            cards=ct["cards"],
            nodes=ct["nodes"],
            switches=state["fabric_switches"],
            solve_s=ct["seconds"],
            write_bytes_per_s=state["hot_write_bytes_per_s"],
            read_bytes_per_s=state["hot_read_bytes_per_s"],
        )
    g["interruptions"] = g["unexpected"] + g["planned"]
    return g


def _none_where(counts: Counts, past: npt.NDArray[np.bool_]) -> Counts:
    """The counts with those of rows past what the network builds (-1, money.pricing's mark) at 0:
    such a row is refused with its reason and carries no figure, and the roll-up refuses negative
    counts for the whole group."""
    if not past.any():
        return counts
    return Counts(**{f.name: np.where(past, 0, getattr(counts, f.name)) for f in dataclasses.fields(counts)})


def _goodput_columns(g: dict[str, Any], n: tuple[int, ...]) -> dict[str, np.ndarray]:
    """GOODPUT_FIELDS of the group's rows from their goodput (_goodput)."""
    with np.errstate(invalid="ignore"):  # rows without a plan (NaN days) stay NaN
        return {
            f: np.broadcast_to(np.asarray(g[k], dtype=float) / _GOODPUT_UNIT.get(k, 1.0), n).copy()
            for f, k in _GOODPUT_KEYS.items()
        }
