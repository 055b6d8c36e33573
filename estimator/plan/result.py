"""The plan's typed result: frozen dataclasses, one per section of the contract's `result`
(docs/architecture.md#the-result), built by the plan (estimator.plan.sections) and turned into the
contract's JSON at the edge by estimator.plan.serialise.to_json_dict, which writes exactly the keys,
order and values the contract has always had.

Field names carry their unit (`_s`, `_days`, `_hours`, `_bytes`, `_flop`, `_flop_per_s`, `_tokens`,
`_params`, `_in_currency` for money in the report's currency, ...) or are dimensionless (mfu, share,
probability: DIMENSIONLESS lists them). Where the JSON key differs (the contract's names predate the
rule: `peak_flops_per_card`, `tokens`), the field's metadata names it (`json_key`); a field that
is left out of the JSON when None (as the contract leaves the key out) says so (`omit_none`). The
field order is the JSON order.

Sections the plan takes from lower stages hold those stages' own types (Fabric, Storage, Power,
Cost, Uncertainty, Serving, LayoutEval: "the bill passed as the existing types"); sections that are
open-ended (an echo of the input, a rendering's params, another module's section still built as a
dict) are typed Mapping, each saying why."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from estimator.cluster.network import Fabric
from estimator.cluster.planes import ScaleupSection
from estimator.cluster.power import Power
from estimator.cluster.storage import Storage
from estimator.layout.search import LayoutEval
from estimator.model.transformer import Architecture
from estimator.money.cost import Cost
from estimator.plan.evidence import Band
from estimator.plan.inference import Serving
from estimator.plan.result_calibration import CalibrationSection
from estimator.plan.result_goodput import FailureAssumption, GoodputSection
from estimator.plan.stack_sensitivity import StackSection
from estimator.plan.uncertainty import Uncertainty
from estimator.result_fields import OMIT, json_key, omitted

# float fields without a unit, and why they have none: the name, or its last word (`predicted_mfu`,
# `measured_comm_wait_share`)
DIMENSIONLESS = {
    "mfu": "model FLOPs utilization, a share of peak",
    "share": "a part of a whole (capex / budget, a term's share of the step)",
    "fraction": "a part of a whole (a band's half width relative to its centre)",
    "probability": "a probability",
    "count": "a count held as a float: an expected one (interruptions, nodes down), not whole, or a "
    "total summed as floats (racks, switch chips)",
    "factor": "a ratio of like quantities (a speed-up, capex with / without a plane, a rate scale, an "
    "oversubscription)",
    "value": "an assumption's value (its unit is the row's `unit`), a setting's, a factor's (a "
    "multiplier) or a change's (in the unit its code names)",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSection:
    """result.model: the model and its FLOPs per token (FLOP per token, without the run's total)."""

    name: str
    total_params: float
    active_params: float
    embedding_params: float
    exact_architecture: bool
    architecture: Architecture
    ignored_fields: tuple[str, ...]
    # a model known only by its size: {code, message, params} of what was assumed (a rendering's
    # code and params, open-ended as every message's params)
    assumed_shape: Mapping[str, Any] | None = omitted()
    seq_len_tokens: int = json_key("seq_len")
    hidden_size: int
    flop_per_token: float
    six_n_flop_per_token: float = json_key("flop_per_token_6n")
    attention_flop_per_token: float = json_key("flop_per_token_attention")


@dataclass(frozen=True, slots=True, kw_only=True)
class ComputeSection:
    """result.compute: FLOPs, cards, MFU and time; the deadline's fields only for a deadline."""

    flop_per_token: float
    six_n_flop_per_token: float = json_key("flop_per_token_6n")
    attention_flop_per_token: float = json_key("flop_per_token_attention")
    training_flop: float
    training_6n_flop: float = json_key("training_flop_6n")  # 6·N·D (Kaplan 2020)
    training_tokens: float = json_key("tokens")
    peak_flop_per_s_per_card: float = json_key("peak_flops_per_card")
    cards: int
    nodes: int
    cards_per_node: int
    scaleup_domain_cards: int
    vendor: str
    chip_family: str
    accelerator: str
    mfu: float
    mfu_source: str  # "given" or "predicted"
    wall_clock_days: float
    accelerator_hours: float
    tokens_per_s: float
    target_days: float | None = omitted()
    meets_target: bool | None = omitted()
    deadline_miss_probability: float | None = omitted()
    # what the probability counts: the interruption count's spread too (True), or the MFU range alone
    deadline_miss_counts_failures: bool | None = omitted()
    # cluster.deadline_confidence q: the deadline is met when the chance of missing is at most 1 - q
    deadline_confidence_probability: float | None = omitted("deadline_confidence")


@dataclass(frozen=True, slots=True, kw_only=True)
class ParallelismSection:
    """result.parallelism: the layout shown (LayoutEval.to_dict) with the batch rounded to whole
    micro-batches per DP rank."""

    layout: LayoutEval
    global_batch_tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MemorySection:
    """result.memory: the shown layout's memory per card (LayoutEval.memory_dict) and whether it fits."""

    layout: LayoutEval
    fits: bool
    fits_with_zero2: bool | None  # ZeRO-3 layouts only: would stage 2 fit
    # ZeRO-3 layouts only, where stage 2 fits: the same layout's tokens/s with stage 2 over its own
    zero2_speed_factor: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutSection:
    """result.layout: the search's counts, its runners-up and why the shown layout was chosen."""

    feasible: int
    evaluated: int
    rejected: Mapping[str, int]  # rule code -> layouts it rejected (open set of rule codes)
    runners_up: tuple[LayoutEval, ...]
    fixed: Mapping[str, Any]  # the scenario's fixed parallelism fields, echoed as given
    # layout.choice.choice_reason's {reason, ...} (built by the layout stage as a dict)
    choice: Mapping[str, Any] | None = omitted()


@dataclass(frozen=True, slots=True, kw_only=True)
class CostSection:
    """result.cost: money.cost.Cost (USD inside, the report's currency in the JSON) and the budget."""

    cost: Cost
    budget_in_currency: float | None = omitted("budget")

    @property
    def currency(self) -> str:
        return self.cost.currency

    @property
    def capex_total_in_currency(self) -> float:
        """Capex in the report's currency, as Cost.to_dict writes it."""
        return float(self.cost.to_dict()["capex"]["total"])

    @property
    def run_cloud_in_currency(self) -> float | None:
        """The cloud run in the report's currency (None when not priced), as Cost.to_dict writes it."""
        cloud = self.cost.to_dict()["run"]["cloud"]
        return None if cloud is None else float(cloud)


@dataclass(frozen=True, slots=True, kw_only=True)
class MfuBand:
    """result.uncertainty.mfu_band: where the Monte Carlo's MFU range comes from."""

    source: str  # "given-range", "assumed", "evidence" or "calibration"
    evidence: Band | None = None  # the evidence band (plan.evidence) when source is "evidence"
    release: str | None = None  # the stack release the evidence band stands for (StackProfile.release)
    # the pilot's band (result.calibration.band) when source is "calibration": P10-P90 = 1 -+ this
    half_width_fraction: float | None = omitted("relative_half_width")


@dataclass(frozen=True, slots=True, kw_only=True)
class UncertaintySection:
    """result.uncertainty: the Monte Carlo (plan.uncertainty.Uncertainty) and its MFU band."""

    monte_carlo: Uncertainty
    mfu_band: MfuBand

    @property
    def mfu_triangle(self) -> tuple[float, float, float] | None:
        """(low, mode, high) of the MFU the Monte Carlo drew, None when it drew none."""
        mfu = self.monte_carlo.inputs.get("mfu")
        if mfu is None or len(mfu) != 3:
            return None
        low, mode, high = mfu
        return (low, mode, high)


@dataclass(frozen=True, slots=True, kw_only=True)
class Affords:
    """result.budget.affords: the budget-sized plan of the same scenario (plan.sizing.budget_affords)."""

    cards: int
    nodes: int
    capex_in_currency: float = json_key("capex")
    wall_clock_days: float = json_key("days")  # with failures counted when there are any
    mfu: float
    mfu_source: str
    compute_days: float | None = omitted()  # without failures, when `days` counts them
    # with failures counted: the median days (goodput.wall_clock_days_p50 of that plan); `days` is its mean
    median_days: float | None = omitted("days_p50")
    # the most cards the budget buys, where they train slower than `cards` (plan.budget_choice)
    most_cards: int | None = omitted()


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetSection:
    """result.budget: within the budget or over it (money.budget.status), money in the report's currency."""

    budget_in_currency: float = json_key("budget")
    capex_in_currency: float = json_key("capex")
    within: bool
    over_by_in_currency: float = json_key("over_by")
    headroom_in_currency: float = json_key("headroom")
    share: float | None  # capex / budget; None for a zero budget
    currency: str
    sized_by_budget: bool
    affords: Affords | None = None  # None: the budget buys no cluster that plans


@dataclass(frozen=True, slots=True, kw_only=True)
class AdviceItem:
    """One row of result.advice (plan.advice, plan.supernode_rules, plan.goodput): a code and params
    (rendered in the reader's language), the English message and suggestion."""

    code: str
    severity: str  # "info", "warning" or "error"
    message: str
    suggestion: str
    params: Mapping[str, Any]  # a rendering's parameters, open-ended per code
    suggestion_code: str | None = omitted()  # the suggestion's variant (defaults to `code`)
    message_code: str | None = omitted()  # the message's variant, where it has several


@dataclass(frozen=True, slots=True, kw_only=True)
class Setting:
    """One row of result.starting_configuration (plan.starting_config): a setting to start from
    (a framework flag or environment variable), its value and why."""

    setting: str
    value: float | str | bool | None  # the flag's value, as the framework spells it
    reason: str
    code: str
    params: Mapping[str, Any]  # a rendering's parameters, open-ended per code
    value_code: str | None = omitted()  # a wording of the value for the reader's language


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanWarning:
    """One row of result.warnings: a code and params (rendered in the reader's language) and the
    English default message."""

    code: str
    severity: str  # "info" or "warning"
    message: str
    params: Mapping[str, Any]  # a rendering's parameters, open-ended per code
    message_code: str | None = omitted()


@dataclass(frozen=True, slots=True, kw_only=True)
class Assumption:
    """One row of result.assumptions: an input behind the numbers, with its unit and source."""

    name: str
    value: float | str
    unit: str
    source: str
    detail: Mapping[str, Any] | None = omitted()  # the stack's mechanisms (StackProfile.mechanisms)
    code: str
    params: Mapping[str, Any]  # a rendering's parameters
    source_code: str | None = omitted()


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """The contract's `result`: every section of one plan, in the contract's order."""

    model: ModelSection
    compute: ComputeSection
    parallelism: ParallelismSection | None
    memory: MemorySection | None
    layout: LayoutSection
    network: Fabric
    storage: Storage
    power: Power
    cost: CostSection
    uncertainty: UncertaintySection
    scaleup: ScaleupSection
    stack: StackSection
    goodput: GoodputSection | None = dataclasses.field(default=None, metadata=OMIT)
    budget: BudgetSection | None = dataclasses.field(default=None, metadata=OMIT)
    serving: Serving | None = dataclasses.field(default=None, metadata=OMIT)
    advice: tuple[AdviceItem, ...]
    starting_configuration: tuple[Setting, ...]
    warnings: tuple[PlanWarning, ...]
    # the plan's own rows, then plan.goodput's (their own key order, the contract's JSON)
    assumptions: tuple[Assumption | FailureAssumption, ...]
    calibration: CalibrationSection | None = dataclasses.field(default=None, metadata=OMIT)


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What estimate() answers: the normalized scenario, the result and the versions that made it."""

    scenario: Mapping[str, Any]  # the normalized input, echoed (the scenario contract's JSON)
    result: Result
    engine_version: str
    catalog_version: str
