"""The edge of the typed result (estimator.plan.result): `to_json_dict(plan)` writes the contract's
JSON, the same keys, order and values as ever, so stored results, golden files and the API schema
do not change with the types.

The walk is generic: a result dataclass becomes an object of its fields in declaration order, under
the field's `json` key where the metadata names one, a None left out where the field is `omit_none`;
tuples become lists, mappings are copied. The lower stages' own types are written by their own
`to_dict` (Fabric, Storage, Power, Serving, the scale-up UnitBill) or by the few encoders below where the plan adds to them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from estimator.cluster.network import Fabric
from estimator.cluster.power import Power
from estimator.cluster.scaleup import UnitBill
from estimator.cluster.storage import Storage
from estimator.jsonio import to_jsonable
from estimator.model.transformer import Architecture
from estimator.plan import result as types
from estimator.plan.inference import Serving


def to_json_dict(plan: types.Plan) -> dict[str, Any]:
    """The contract's answer of estimate(): {scenario, result, engine_version, catalog_version}."""
    return {
        "scenario": plan.scenario,
        "result": to_jsonable(result_dict(plan.result)),
        "engine_version": plan.engine_version,
        "catalog_version": plan.catalog_version,
    }


def result_dict(result: types.Result) -> dict[str, Any]:
    """The contract's `result` as plain dicts, before to_jsonable (numpy scalars kept as the stages
    left them): what plan.advice and plan.starting_config read."""
    out = encode(result)
    assert isinstance(out, dict)
    return out


def encode(value: Any) -> Any:
    """One value of the typed result as the contract's JSON (see the module docstring)."""
    if type(value) in _PLAIN:  # a leaf (most values): as it is, before the dataclass and ABC checks
        return value
    special = _ENCODERS.get(type(value))
    if special is not None:
        return special(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _fields(value)
    if isinstance(value, tuple):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return dict(value)
    return value


def _fields(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if value is None and f.metadata.get("omit_none", False):
            continue
        out[f.metadata.get("json", f.name)] = encode(value)
    return out


def _parallelism(p: types.ParallelismSection) -> dict[str, Any]:
    return p.layout.to_dict() | {"global_batch_tokens": p.global_batch_tokens}


def _memory(m: types.MemorySection) -> dict[str, Any]:
    return m.layout.memory_dict() | {
        "fits": m.fits,
        "fits_with_zero2": m.fits_with_zero2,
        "zero2_speed_factor": m.zero2_speed_factor,
    }


def _layout(s: types.LayoutSection) -> dict[str, Any]:
    out: dict[str, Any] = {
        "feasible": s.feasible,
        "evaluated": s.evaluated,
        "rejected": dict(s.rejected),
        "runners_up": [
            {**c.to_dict(), "memory_total_bytes": c.memory_dict()["per_card_bytes"]["total"]}
            for c in s.runners_up
        ],
        "fixed": dict(s.fixed),
    }
    if s.choice is not None:
        out["choice"] = dict(s.choice)
    return out


def _cost(c: types.CostSection) -> dict[str, Any]:
    out = c.cost.to_dict()
    if c.budget_in_currency is not None:
        out["budget"] = c.budget_in_currency
    return out


def _uncertainty(u: types.UncertaintySection) -> dict[str, Any]:
    return u.monte_carlo.to_dict() | {"mfu_band": _mfu_band(u.mfu_band)}


def _mfu_band(b: types.MfuBand) -> dict[str, Any]:
    release = {} if b.release is None else {"release": b.release}
    width = {} if b.half_width_fraction is None else {"relative_half_width": b.half_width_fraction}
    evidence = b.evidence.to_dict() if b.evidence is not None else {}
    return {"source": b.source, **evidence, **release, **width}


def _to_dict(obj: Fabric | Storage | Power | Serving | UnitBill) -> dict[str, Any]:
    return obj.to_dict()


_PLAIN = frozenset({str, int, float, bool, type(None)})  # encode returns these as they are
_ENCODERS: dict[type, Callable[[Any], Any]] = {
    types.ParallelismSection: _parallelism,
    types.MemorySection: _memory,
    types.LayoutSection: _layout,
    types.CostSection: _cost,
    types.UncertaintySection: _uncertainty,
    Architecture: dataclasses.asdict,
    Fabric: _to_dict,
    Storage: _to_dict,
    Power: _to_dict,
    Serving: _to_dict,
    UnitBill: _to_dict,
}
