"""Sweeps: the product of axes over a base scenario, as index ranges and column arrays.

Pure core (stdlib + numpy; `estimator.contract.scenario` for validation). A sweep request is

    {"name": str, "base": <scenario>, "axes": {"<dotted field>": [values] | {"start", "stop", "step"}}}

and its scenarios are the Cartesian product of the axes in the order given, the last axis varying
fastest (the order of `itertools.product`). Scenario `i` is decoded from `i` in a mixed radix whose
digits are the axis lengths, so any range `[start, stop)` of scenarios becomes one column array per
axis without enumerating the product: a chunk of a sweep is `decode(axes, start, stop)` followed by
one vectorized core call (`estimator.plan.batch.evaluate_columns`).

Every rejection raises `ScenarioError` with a field path: `axes`, `axes.<field>`,
`axes.<field>.step`, `base.<field>`, `name`.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from estimator.arrays import unique_sorted
from estimator.dotted import get_path, pop_path, set_path
from estimator.errors import FieldError, ScenarioError, not_an_object
from estimator.limits import MAX_SWEEP_BUDGET_SIZINGS as MAX_BUDGET_SIZINGS
from estimator.limits import MAX_SWEEP_CONFIDENT_SIZINGS as MAX_CONFIDENT_SIZINGS

MAX_SCENARIOS = 2_000_000  # per sweep request (the product of the axes)
MAX_AXES = 8
MAX_AXIS_VALUES = 100_000  # distinct values on one axis
MAX_NAME_CHARS = 200
VALIDATE_VALUES_PER_AXIS = 200  # axis values parsed with the base scenario (all when fewer)

# Fields that exclude one another in the scenario contract: an axis over one removes the other
# from the base, so a base with `cluster.target_days` can be swept over `cluster.cards` or
# `cluster.budget` (and its chance of meeting the deadline goes with the deadline: it needs one).
EXCLUSIVE_FIELDS = {
    "cluster.cards": ("cluster.target_days", "cluster.deadline_confidence", "cluster.budget"),
    "cluster.target_days": ("cluster.cards", "cluster.budget"),
    "cluster.budget": ("cluster.cards", "cluster.target_days", "cluster.deadline_confidence"),
    "model.preset": ("model.params",),
    "model.params": ("model.preset",),
}

# A deadline sized for a chance of meeting it (cluster.deadline_confidence) searches the chance of
# missing at many sizes per row (plan.batch_confidence): about 15 ms a row against 0.5 ms without
# (Llama 3.1 405B, 15T tokens, MFU 0.4 on H100 with failures, 200 deadlines), so the distinct
# sizings a sweep asks are capped (limits.MAX_SWEEP_CONFIDENT_SIZINGS). Price axes (cost.*) change
# no row's cards: the rows that differ only in them share a sizing.
CONFIDENCE_FIELD = "cluster.deadline_confidence"
PRICE_PREFIX = "cost."

# A budget-sized row (cluster.budget) searches the sizes its budget buys for the fastest
# (plan.batch_budget): 5 to 60 ms a row (Llama 3.1 405B, 15T tokens on H100, 0.1 to 2 G USD, failures
# counted, MFU predicted or 0.4), so its distinct searches are capped too
# (limits.MAX_SWEEP_BUDGET_SIZINGS). Only the prices of what a budget buys (the server price: capex)
# change a row's cards; the running prices and the budget flag do not, and the rows that differ only
# in them share a search.
BUDGET_FIELD = "cluster.budget"
CAPEX_NEUTRAL_FIELDS = (
    "cost.electricity_per_kwh",
    "cost.pue",
    "cost.cloud_price_per_card_hour",
    "cost.cloud_reserved_price_per_card_hour",
    "cost.depreciation_years",
    "cost.utilization",
    "cost.budget",
)

_FIELD_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


@dataclass(frozen=True)
class Axis:
    """One swept field and its values (numbers, strings or booleans; one kind per axis)."""

    field: str  # dotted scenario path, e.g. "cluster.cards"
    values: tuple[Any, ...]  # JSON scalars, in sweep order

    def __len__(self) -> int:
        return len(self.values)

    @property
    def kind(self) -> str:
        return _kind(self.values[0])

    def array(self) -> np.ndarray:
        """The values as a numpy array (int64, float64, bool or unicode)."""
        kind = self.kind
        if kind == "bool":
            return np.array(self.values, dtype=bool)
        if kind == "str":
            return np.array(self.values, dtype=str)
        if all(isinstance(v, int) for v in self.values):
            return np.array(self.values, dtype=np.int64)
        return np.array(self.values, dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "values": list(self.values)}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "str"
    return "other"


def _err(field: str, message: str, code: str = "", params: dict[str, Any] | None = None) -> ScenarioError:
    """One refusal: its English sentence and, for those a form can reach, a code for the web layer."""
    return ScenarioError([FieldError(field, message, code, params or {})])


def _range_values(spec: dict[str, Any], path: str) -> list[Any]:
    """Inclusive arithmetic range {"start", "stop", "step"}: start, start+step, ... <= stop."""
    extra = set(spec) - {"start", "stop", "step"}
    if extra:
        raise _err(f"{path}.{sorted(extra)[0]}", "unknown key; a range has only start, stop and step")
    numbers = {}
    for key in ("start", "stop", "step"):
        if key not in spec:
            raise _err(f"{path}.{key}", "is required in a range {start, stop, step}")
        value = spec[key]
        if _kind(value) != "number" or not math.isfinite(value):
            raise _err(f"{path}.{key}", "must be a finite number")
        numbers[key] = value
    start, stop, step = numbers["start"], numbers["stop"], numbers["step"]
    if step <= 0:
        raise _err(f"{path}.step", "must be positive", "range-step-not-positive")
    if stop < start:
        raise _err(f"{path}.stop", "must not be below start", "range-stop-below-start")
    count = math.floor((stop - start) / step + 1e-9) + 1
    if count > MAX_AXIS_VALUES:
        limit = {"values": count, "max_values": MAX_AXIS_VALUES}
        raise _err(
            path,
            f"the range has {count:,} values; the limit is {MAX_AXIS_VALUES:,} per axis",
            "axis-too-many-values",
            limit,
        )
    if all(isinstance(v, int) for v in (start, step)):
        return [start + i * step for i in range(count)]
    # round away binary noise such as 0.30000000000000004 (12 significant digits are plenty)
    return [float(f"{start + i * step:.12g}") for i in range(count)]


def parse_axes(axes: Any, max_scenarios: int = MAX_SCENARIOS) -> list[Axis]:
    """Shape checks of the `axes` object: fields, kinds and sizes. Does not consult the scenario
    schema (see `validate_sweep` for that). Raises ScenarioError with `axes...` paths."""
    if not isinstance(axes, dict):
        raise _err(
            "axes", "must be an object mapping dotted scenario fields to a list or {start, stop, step}"
        )
    if not axes:
        raise _err("axes", "needs at least one axis")
    if len(axes) > MAX_AXES:
        raise _err("axes", f"has {len(axes)} axes; the limit is {MAX_AXES}")
    errors: list[FieldError] = []
    parsed: list[Axis] = []
    for field, spec in axes.items():
        path = f"axes.{field}"
        try:
            if not isinstance(field, str) or not _FIELD_RE.match(field):
                raise _err(path, "must be a dotted scenario field such as cluster.cards")
            if isinstance(spec, dict):
                values = _range_values(spec, path)
            elif isinstance(spec, list):
                values = list(spec)
            else:
                raise _err(path, "must be a list of values or a range {start, stop, step}")
            if not values:
                raise _err(path, "is empty; give at least one value")
            if len(values) > MAX_AXIS_VALUES:
                limit = {"values": len(values), "max_values": MAX_AXIS_VALUES}
                message = f"has {len(values):,} values; the limit is {MAX_AXIS_VALUES:,} per axis"
                raise _err(path, message, "axis-too-many-values", limit)
            kinds = {_kind(v) for v in values}
            if "other" in kinds:
                raise _err(path, "values must be numbers, strings or booleans (not objects, lists or null)")
            if len(kinds) > 1:
                raise _err(path, "values must all be of one kind (all numbers, all strings or all booleans)")
            if kinds == {"number"} and not all(math.isfinite(v) for v in values):
                raise _err(path, "values must be finite numbers (no NaN or Infinity)")
            if len(set(values)) != len(values):
                raise _err(path, "has repeated values", "axis-repeated-values")
            parsed.append(Axis(field, tuple(values)))
        except ScenarioError as exc:
            errors.extend(exc.errors)
    fields = [a.field for a in parsed]
    for a in parsed:
        for other in EXCLUSIVE_FIELDS.get(a.field, ()):
            if other in fields:
                message = f"cannot be swept together with {other}"
                errors.append(FieldError(f"axes.{a.field}", message, "axes-exclusive", {"other_axis": other}))
                break
    if errors:
        raise ScenarioError(errors)
    total = scenario_count(parsed)
    if total > max_scenarios:
        message = f"the axes make {total:,} scenarios; the limit is {max_scenarios:,} per sweep"
        raise _err(
            "axes", message, "too-many-scenarios", {"scenarios": total, "max_scenarios": max_scenarios}
        )
    return parsed


def scenario_count(axes: list[Axis]) -> int:
    return math.prod(len(a) for a in axes)


def effective_base(base: dict[str, Any], axes: list[Axis]) -> dict[str, Any]:
    """The base with every field that an axis excludes removed (see EXCLUSIVE_FIELDS)."""
    doc = copy.deepcopy(base)
    for a in axes:
        for other in EXCLUSIVE_FIELDS.get(a.field, ()):
            pop_path(doc, other)
    return doc


def scenario_at(base: dict[str, Any], axes: list[Axis], index: int) -> dict[str, Any]:
    """The full scenario dict of scenario `index` (for links to a single estimate)."""
    total = scenario_count(axes)
    if not 0 <= index < total:
        raise _err("index", f"must be in [0, {total})")
    doc = effective_base(base, axes)
    for a, digit in zip(axes, digits(axes, index), strict=True):
        set_path(doc, a.field, a.values[digit])
    return doc


def digits(axes: list[Axis], index: int) -> list[int]:
    """Mixed-radix digits of one scenario index, first axis most significant."""
    out = []
    for a in reversed(axes):
        index, d = divmod(index, len(a))
        out.append(d)
    return out[::-1]


def decode_indices(axes: list[Axis], start: int, stop: int) -> dict[str, np.ndarray]:
    """Digit arrays (value positions) for scenarios [start, stop), keyed by field."""
    idx = np.arange(start, stop, dtype=np.int64)
    out: dict[str, np.ndarray] = {}
    for a in reversed(axes):
        n = len(a)
        out[a.field] = idx % n
        idx = idx // n
    return {a.field: out[a.field] for a in axes}


def decode(axes: list[Axis], start: int, stop: int) -> dict[str, np.ndarray]:
    """Column arrays of the axis values for scenarios [start, stop): the `columns` argument of
    `estimator.plan.batch.evaluate_columns`. Memory is O(stop - start) per axis."""
    pos = decode_indices(axes, start, stop)
    return {a.field: a.array()[pos[a.field]] for a in axes}


def chunk_ranges(total: int, chunk_size: int) -> list[tuple[int, int]]:
    """[start, stop) of each chunk; the last may be shorter."""
    if chunk_size <= 0:
        raise ValueError("chunk_size must be positive")
    return [(s, min(s + chunk_size, total)) for s in range(0, total, chunk_size)]


def _sample_values(values: tuple[Any, ...], limit: int) -> list[Any]:
    if len(values) <= limit:
        return list(values)
    if _kind(values[0]) == "number":
        ordered = sorted(values)
        picks = unique_sorted(np.linspace(0, len(ordered) - 1, limit).round().astype(int))
        return [ordered[i] for i in picks]
    return list(values)


def _request(request: Any, max_scenarios: int) -> tuple[str, dict[str, Any], list[Axis]]:
    """The request's own rules: its keys, the name, the base object, the axes (parse_axes) and
    the effective base; confidence and budget searches past the work budget are refused
    (_check_searches)."""
    if not isinstance(request, dict):
        raise not_an_object("the body must be a JSON object {name, base, axes}")
    unknown = set(request) - {"name", "base", "axes"}
    if unknown:
        raise _err(sorted(unknown)[0], "unknown key; a sweep has name, base and axes")
    name = request.get("name", "")
    if name is None:
        name = ""
    if not isinstance(name, str):
        raise _err("name", "must be a string")
    if len(name) > MAX_NAME_CHARS:
        raise _err("name", f"must be at most {MAX_NAME_CHARS} characters")
    base = request.get("base")
    if not isinstance(base, dict):
        raise _err("base", "is required: a scenario object")
    axes = parse_axes(request.get("axes"), max_scenarios=max_scenarios)
    doc = effective_base(base, axes)
    for a in axes:
        if isinstance(get_path(doc, a.field), dict):
            raise _err(f"axes.{a.field}", "names an object of the scenario; sweep one of its fields")
    _check_searches(doc, axes)
    return name, doc, axes


def confident_sizings(doc: dict[str, Any], axes: list[Axis]) -> int:
    """The confidence searches a sweep may run: the product of its axes' lengths other than prices
    (PRICE_PREFIX) where its rows are sized for a chance of meeting the deadline (in the effective
    base `doc` or on an axis), else 0."""
    if get_path(doc, CONFIDENCE_FIELD) is None and all(a.field != CONFIDENCE_FIELD for a in axes):
        return 0
    return math.prod(len(a) for a in axes if not a.field.startswith(PRICE_PREFIX))


def budget_sizings(doc: dict[str, Any], axes: list[Axis]) -> int:
    """The budget searches a sweep may run: the product of its axes' lengths other than the prices
    that change no capex (CAPEX_NEUTRAL_FIELDS) where its rows are sized by budget (in the
    effective base `doc` or on an axis), else 0."""
    if get_path(doc, BUDGET_FIELD) is None and all(a.field != BUDGET_FIELD for a in axes):
        return 0
    return math.prod(len(a) for a in axes if a.field not in CAPEX_NEUTRAL_FIELDS)


def searched_sizings(doc: dict[str, Any], axes: list[Axis]) -> int:
    """The sizings a sweep searches row by row (a chance of meeting the deadline or a budget: they
    exclude one another), 0 where every row is sized by arithmetic or one layout search."""
    return confident_sizings(doc, axes) + budget_sizings(doc, axes)


def _check_searches(doc: dict[str, Any], axes: list[Axis]) -> None:
    """The work budget of the confidence and budget searches (limits.MAX_SWEEP_CONFIDENT_SIZINGS,
    MAX_SWEEP_BUDGET_SIZINGS), on `axes`."""
    searches = (
        (budget_sizings, MAX_BUDGET_SIZINGS, "sizing by budget", "running prices", "too-many-budget-sizings"),
        (
            confident_sizings,
            MAX_CONFIDENT_SIZINGS,
            "sizing for a chance of meeting the deadline",
            "prices",
            "too-many-confident-sizings",
        ),
    )
    for sizings, limit, what, but, code in searches:
        count = sizings(doc, axes)
        if count > limit:
            message = (
                f"{what} searches each of the {count:,} combinations of the axes other than {but}; "
                f"the limit is {limit:,} per sweep: sweep fewer values"
            )
            raise ScenarioError([FieldError("axes", message, code, {"sizings": count, "max_sizings": limit})])


Check = Callable[[dict[str, Any], Axis | None], list[FieldError]]


def _trial_errors(doc: dict[str, Any], axes: list[Axis], check: Check) -> list[FieldError]:
    """Every axis at its first value, then one axis at a time at each sampled value: the errors an
    axis value causes (`axes.<field>`) and those no axis value removes (`base.<field>`)."""
    first = copy.deepcopy(doc)
    for a in axes:
        set_path(first, a.field, a.values[0])
    first_errors = check(first, None)
    persistent = {e.field for e in first_errors}
    errors: list[FieldError] = []
    for a in axes:
        for value in _sample_values(a.values, VALIDATE_VALUES_PER_AXIS):
            trial = copy.deepcopy(first)
            set_path(trial, a.field, value)
            try:
                found = check(trial, a)
            except ScenarioError as exc:
                errors.extend(_at_value(e.field, value, e) for e in exc.errors)
                break
            own = [e for e in found if _axis_for(e.field, [a]) is not None]
            if own:
                errors.append(_at_value(f"axes.{a.field}", value, own[0]))
                break
            persistent &= {e.field for e in found}
    for e in first_errors:
        if e.field in persistent and _axis_for(e.field, axes) is None:
            errors.append(_in_base(e))
    return errors


def _at_value(field: str, value: Any, error: FieldError) -> FieldError:
    """The refusal an axis value causes, on `field`: its sentence after the value ("0.5: ..."), its
    code and parameters kept with the value as `axis_value` (the web layer says the sentence in the
    reader's language and the value as its form asked it)."""
    return FieldError(field, f"{value!r}: {error.message}", error.code, {**error.params, "axis_value": value})


def validate_sweep(
    request: Any,
    max_scenarios: int = MAX_SCENARIOS,
    shape: Callable[[Any], Any] | None = None,
    resolve: Callable[[Any], Any] | None = None,
) -> tuple[str, dict[str, Any], list[Axis]]:
    """Validate a whole sweep request -> (name, effective base, axes).

    The base is checked with every axis at its first value, then again with one axis at a time
    changed to each of its values (all values of string and boolean axes; the extremes and an even
    sample of numeric ones):

    - shape errors (type, range, unknown field; `estimator.contract.scenario.validate_shape`) are refused:
      `axes.<field>` when an axis value causes them, `base.<field>` otherwise;
    - catalog errors on an axis field itself (an unknown accelerator or preset id) are refused;
    - cross-field errors (say a fixed layout that does not divide some card counts) are left to the
      rows they concern: the core flags those rows (`ok` false, with the message). A cross-field
      error that no axis value removes is a fault of the base and is refused as `base.<field>`.
    """
    from estimator.contract.resolve import resolve as resolve_scenario
    from estimator.contract.scenario import validate_shape

    shape_of: Callable[[Any], Any] = shape or validate_shape
    resolve_of: Callable[[Any], Any] = resolve or resolve_scenario
    name, doc, axes = _request(request, max_scenarios)

    def check(scenario: dict[str, Any], focus: Axis | None) -> list[FieldError]:
        """Shape errors raise (mapped); catalog and cross-field errors are returned."""
        try:
            parsed = shape_of(scenario)
        except ScenarioError as exc:
            raise _mapped(exc, axes, focus) from None
        try:
            resolve_of(parsed)
        except ScenarioError as exc:
            return exc.errors
        return []

    errors = _trial_errors(doc, axes, check)
    if errors:
        raise ScenarioError(errors)
    return name.strip(), doc, axes


def _mapped(exc: ScenarioError, axes: list[Axis], focus: Axis | None) -> ScenarioError:
    """Error paths onto `axes.<field>` (when they concern an axis, or when only the `focus` axis
    differs from a scenario that passed) or `base.<field>`."""
    mapped = []
    for e in exc.errors:
        axis = focus or _axis_for(e.field, axes)
        if axis is not None:
            if e.field in ("", axis.field):  # the axis's own fault: its code kept for the web layer
                mapped.append(FieldError(f"axes.{axis.field}", e.message, e.code, e.params))
            else:
                mapped.append(FieldError(f"axes.{axis.field}", f"{e.field}: {e.message}"))
        else:
            mapped.append(_in_base(e))
    return ScenarioError(mapped)


def _axis_for(field: str, axes: list[Axis]) -> Axis | None:
    for a in axes:
        if field == a.field or field.startswith(a.field + ".") or (field and a.field.startswith(field + ".")):
            return a
    return None


def pareto_front(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the points not dominated when minimizing both x and y, sorted by x.

    O(n log n): sort by x (then y), keep each point whose y is below every y seen before it.
    NaN points are ignored.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ok = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
    if ok.size == 0:
        return ok
    order = ok[np.lexsort((y[ok], x[ok]))]
    ys = y[order]
    prev_min = np.minimum.accumulate(np.concatenate(([np.inf], ys[:-1])))
    keep = ys < prev_min
    return order[keep]


def _in_base(e: FieldError) -> FieldError:
    """A base scenario's error at its path under "base", its code and params kept (the web layer
    says it in the reader's language by them)."""
    return dataclasses.replace(e, field=f"base.{e.field}" if e.field else "base")
