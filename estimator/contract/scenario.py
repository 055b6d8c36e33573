"""The scenario contract v1 (docs/architecture.md#scenario-contract): typed, frozen input models with defaults.

`validate_shape(data)` validates a JSON-like dict and returns a `Scenario`; every rejection is a
`ScenarioError` whose entries name the dotted field path and say what is wrong in one sentence.
Cross-field checks that need the catalog (unknown preset, TP not dividing heads...) live in
`estimator.contract.resolve`; `estimator.contract.resolve.parse_scenario` runs both, so one call rejects everything
rejectable. The sections live in `fields` (strict numbers, the section base, error paths), `model_spec`,
`machine` and `run`; this module composes them and re-exports their public names.

Units: tokens are counts, seconds are seconds, bandwidths Gb/s where the name says `gbps`,
prices are in `cost.currency` (USD default) per the unit in the name.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field, PrivateAttr, ValidationError

from estimator import limits
from estimator.contract.fields import PRICE_BOOK_REFERENCE, Int, Num, _code, _message, _path, _Section
from estimator.contract.machine import Cluster, Hardware, InlineAccelerator, Network, Parallelism, Storage
from estimator.contract.model_spec import (
    CONFIG_EXTRA_KEYS,
    READ_MODEL_KEYS,
    ModelSpec,
    _model_extras,
    _pilot_model_extras,
    split_model,
)
from estimator.contract.run import (
    Calibration,
    Cost,
    Efficiency,
    Pilot,
    Reliability,
    Serving,
    Training,
    Uncertainty,
)
from estimator.errors import FieldError, ScenarioError, not_an_object
from estimator.jsonio import check_tree

__all__ = [
    "CONFIG_EXTRA_KEYS",
    "PRICE_BOOK_REFERENCE",
    "READ_MODEL_KEYS",
    "SCENARIO_VERSION",
    "Calibration",
    "Cluster",
    "Cost",
    "Efficiency",
    "Hardware",
    "InlineAccelerator",
    "Int",
    "ModelSpec",
    "Network",
    "Num",
    "Parallelism",
    "Pilot",
    "Reliability",
    "Scenario",
    "Serving",
    "Storage",
    "Training",
    "Uncertainty",
    "scenario_json_schema",
    "split_model",
    "validate_shape",
]

SCENARIO_VERSION: Final = 1


class Scenario(_Section):
    version: Literal[1] = SCENARIO_VERSION
    name: str = Field("", max_length=200)
    model: ModelSpec
    training: Training
    hardware: Hardware = Field(default_factory=Hardware)
    cluster: Cluster
    efficiency: Efficiency = Field(default_factory=Efficiency)
    parallelism: Parallelism = Field(default_factory=Parallelism)
    network: Network = Field(default_factory=Network)
    storage: Storage = Field(default_factory=Storage)
    cost: Cost = Field(default_factory=Cost)
    serving: Serving | None = None
    uncertainty: Uncertainty = Field(default_factory=Uncertainty)
    reliability: Reliability = Field(default_factory=Reliability)
    calibration: Calibration | None = None

    # config.json names of `model` the estimator does not read (split_model): listed in the result's
    # model.ignored_fields, never part of the scenario (nor of normalized())
    _ignored_model_fields: tuple[str, ...] = PrivateAttr(default=())

    @property
    def ignored_model_fields(self) -> tuple[str, ...]:
        return self._ignored_model_fields

    def normalized(self) -> dict[str, Any]:
        """The scenario with every default filled, as plain JSON; resolve.parse_scenario(normalized) is a fixpoint."""
        data = self.model_dump(mode="json")
        data["model"] = {k: v for k, v in data["model"].items() if v is not None}
        for optional in ("serving", "calibration"):
            if data.get(optional) is None:
                data.pop(optional, None)
        pilot = (data.get("calibration") or {}).get("pilot")
        if pilot is not None:
            pilot = {k: v for k, v in pilot.items() if v is not None}
            if "model" in pilot:
                pilot["model"] = {k: v for k, v in pilot["model"].items() if v is not None}
            data["calibration"]["pilot"] = pilot
        return data


def validate_shape(data: Any) -> Scenario:
    """Type and range checks only (no catalog); raises ScenarioError with every field at fault."""
    if not isinstance(data, dict):
        raise not_an_object("the scenario must be a JSON object")
    check_tree(data)  # NUL, lone surrogates, depth, duplicate keys: before anything is stored
    model, ignored = split_model(data.get("model"))
    if ignored:
        data = {**data, "model": model}
    extra_errors = _model_extras(data.get("model"))
    extra_errors += _pilot_model_extras(data.get("calibration"))
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        errors: list[FieldError] = []
        seen: set[str] = set()
        for err in exc.errors():
            loc = err["loc"]
            if "str" in loc and isinstance(err.get("input"), dict):
                continue  # the inline-object branch of a str|object union reports the real fault
            field = _path(loc)
            if field in seen:
                continue
            seen.add(field)
            message = _message(err)
            errors.append(FieldError(field, message, *_code(err, message)))
        raise ScenarioError(errors + [e for e in extra_errors if e.field not in seen]) from None
    if extra_errors:
        raise ScenarioError(extra_errors)
    scenario._ignored_model_fields = tuple(ignored)
    return scenario


def scenario_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the v1 scenario input."""
    schema: dict[str, Any] = _standard_bounds(Scenario.model_json_schema())
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "ClusterPlan scenario v1"
    schema["description"] = (
        "Work budget per request (estimator.limits): at most "
        f"{limits.MAX_LAYERS:,} layers, {limits.MAX_EXPERTS:,} experts, {limits.MAX_CARDS:,} cards, "
        f"{limits.MAX_MC_SAMPLES:,} Monte Carlo samples, {limits.MAX_LAYOUT_CANDIDATES:,} layout "
        f"candidates (else 400 on cluster.cards), a {limits.SEARCH_SECONDS:g} s layout search, JSON nested "
        f"at most {limits.MAX_JSON_DEPTH} levels, bodies of at most {limits.MAX_BODY_BYTES:,} bytes (413). "
        "No duplicate keys; no NUL or lone surrogates in any string."
    )
    return schema


_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _standard_bounds(node: Any) -> Any:
    """Pydantic writes the bounds of optional constrained numbers as `ge`/`le` (not JSON Schema
    keywords, so validators and API tools ignore them); rename them to minimum/maximum."""
    if isinstance(node, dict):
        typed = node.get("type") in ("integer", "number")
        return {(_BOUNDS[k] if typed and k in _BOUNDS else k): _standard_bounds(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_standard_bounds(v) for v in node]
    return node
