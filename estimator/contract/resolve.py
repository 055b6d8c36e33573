"""Scenario -> domain objects: the catalog lookups and the cross-field rules of the contract.

Everything here that can be wrong in the input raises ScenarioError naming the field, so a
scenario that resolves can be planned.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from estimator import catalog
from estimator.catalog.entries import Accelerator, Server
from estimator.contract import book_pricing
from estimator.contract.assumed_shape import assumed_architecture, assumed_shape, basis_for
from estimator.contract.scenario import InlineAccelerator, Parallelism, Scenario, validate_shape
from estimator.errors import FieldError, ScenarioError
from estimator.model.config_json import MissingFieldsError, architecture_from_config
from estimator.model.transformer import (
    Architecture,
    ParamCounts,
    param_counts,
    scale_counts,
)

if TYPE_CHECKING:  # annotations only: the book's pydantic models load where a book is parsed
    from estimator.contract.price_book import PriceBook

_NUMERIC_ACCEL_FIELDS = {
    f.name for f in dataclasses.fields(Accelerator) if f.type in ("float", "int", "float | None")
}


@dataclass(frozen=True)
class Resolved:
    """A scenario with its catalog entries looked up and its model resolved."""

    scenario: Scenario
    model_name: str
    arch: Architecture
    counts: ParamCounts
    exact_architecture: bool  # False for a dense model known only by `params`
    accelerator: Accelerator
    server: Server
    cards_per_node: int
    nics_per_node: int
    nic_gbps: float
    seq_len: int
    usd_to_currency: float  # 1 for USD
    defaults: dict[str, float]
    notes: tuple[str, ...] = ()
    price_book: PriceBook | None = None  # the book cost.price_book named, already applied to the entries
    book_usd_to_cny: float = (
        1.0  # the rate converting a CNY book (estimator.contract.book_pricing.usd_per_unit)
    )
    # a pilot run's fitted factors (estimator.plan.calibration): every compute rate and the links'
    # achieved bandwidth of the step-time model are scaled by them; 1.0 without calibration.pilot
    compute_factor: float = 1.0
    comm_factor: float = 1.0
    # the fitted pilot those factors came from (estimator.plan.pilot.PilotFit; typed loosely: the
    # contract does not import the plan): its band is the plan's MFU range (plan.mfu_range)
    pilot_fit: Any = None
    # a model known only by its size: the shape assumed for it (estimator.contract.assumed_shape)
    assumed_shape: dict[str, Any] | None = None

    @property
    def scaleup_domain_cards(self) -> int:
        """Cards on one HCCS/NVLink domain: the server's (8 for a node, 384 for a CloudMatrix
        supernode), never more than the accelerator supports."""
        server = self.server
        supernode = server.scaleup_domain_cards > server.cards_per_node
        # a node's own domain follows hardware.cards_per_node; a supernode's spans its nodes
        server_domain = server.scaleup_domain_cards if supernode else self.cards_per_node
        return min(self.accelerator.scaleup_domain_cards, server_domain)


def _model(scenario: Scenario) -> tuple[str, Architecture, ParamCounts, bool, list[str]]:
    spec = scenario.model
    given = {k: v for k, v in spec.model_dump().items() if v is not None}
    notes: list[str] = []
    preset_id = given.pop("preset", None)
    params = given.pop("params", None)
    if params is not None:
        if preset_id is not None or given:
            raise ScenarioError(
                "give either model.params alone or a preset/architecture, not both", "model.params"
            )
        arch, _basis = assumed_architecture(params)  # the rule: estimator.contract.assumed_shape
        counts = scale_counts(param_counts(arch), params)
        return f"dense {params / 1e9:g}B", arch, counts, False, notes
    if preset_id is not None:
        try:
            preset = catalog.preset(preset_id)
        except KeyError:
            known = ", ".join(sorted(catalog.presets()))
            message = f"unknown preset '{preset_id}'; known presets: {known}"
            params = {"id": preset_id, "known": known}
            raise ScenarioError(
                FieldError("model.preset", message, "unknown-catalog-entry", params)
            ) from None
        base_arch: Architecture | None = preset.architecture
        name = preset.name
    else:
        if not given:
            raise ScenarioError("give model.preset, model.params or the architecture fields", "model")
        base_arch = None
        name = scenario.name or "custom model"
    try:
        arch = architecture_from_config({**given, **(spec.model_extra or {})}, base=base_arch)
    except MissingFieldsError as exc:
        params = {"count": len(exc.fields), "fields": ", ".join(exc.fields)}
        raise ScenarioError([FieldError("model", str(exc), "config-missing-fields", params)]) from None
    except (ValueError, TypeError, KeyError) as exc:
        raise ScenarioError(str(exc).strip("'\""), "model") from None
    _check_architecture(arch)
    return name, arch, param_counts(arch), True, notes


def _check_confidence(scenario: Scenario) -> None:
    """cluster.deadline_confidence is the chance of meeting a deadline: it needs cluster.target_days."""
    if scenario.cluster.deadline_confidence is not None and scenario.cluster.target_days is None:
        message = "needs cluster.target_days: it is the chance of finishing by a deadline"
        raise ScenarioError(FieldError("cluster.deadline_confidence", message, "confidence-needs-deadline"))


def nics_for(server: Server, cards_per_node: int) -> int:
    """Scale-out NICs of a node of `cards_per_node` cards (hardware.cards_per_node may override the
    server's): the server's NICs per card, rounded up to whole NICs (8 per 8 cards: 4 per 4)."""
    return max(1, -(-server.nics_per_node * cards_per_node // server.cards_per_node))


def checkpoint_interval(scenario: Scenario) -> float | None:
    """The checkpoint interval the scenario gives (compute seconds between checkpoints):
    reliability.checkpoint_interval_s or storage.checkpoint_interval_s (one question, two places a
    reader may look for it: _check_intervals refuses two different answers); None: the plan takes
    Daly's optimum (plan.goodput)."""
    given = scenario.reliability.checkpoint_interval_s
    if given is None:
        given = scenario.storage.checkpoint_interval_s
    return None if given is None else float(given)


def _check_intervals(scenario: Scenario) -> None:
    """storage.checkpoint_interval_s and reliability.checkpoint_interval_s are one interval: both
    given, they must agree."""
    a, b = scenario.storage.checkpoint_interval_s, scenario.reliability.checkpoint_interval_s
    if a is not None and b is not None and float(a) != float(b):
        message = (
            f"is {a:g} s but reliability.checkpoint_interval_s is {b:g} s: they are the same interval, "
            "give one of them"
        )
        params = {"storage": float(a), "reliability": float(b)}
        raise ScenarioError(
            FieldError("storage.checkpoint_interval_s", message, "two-checkpoint-intervals", params)
        )


def _check_architecture(arch: Architecture) -> None:
    errors = []
    if arch.num_attention_heads % arch.num_key_value_heads:
        errors.append(FieldError("model.num_key_value_heads", "must divide num_attention_heads"))
    if arch.is_moe and not (1 <= arch.num_experts_per_tok <= arch.num_experts):
        errors.append(FieldError("model.num_experts_per_tok", "must be between 1 and the number of experts"))
    if arch.first_k_dense_replace > arch.num_hidden_layers:
        errors.append(FieldError("model.first_k_dense_replace", "cannot exceed num_hidden_layers"))
    if errors:
        raise ScenarioError(errors)


def _accelerator(scenario: Scenario, book: PriceBook | None = None, usd_to_cny: float = 1.0) -> Accelerator:
    hw = scenario.hardware
    if isinstance(hw.accelerator, InlineAccelerator):
        acc = Accelerator(**hw.accelerator.model_dump())
    else:
        try:
            acc = catalog.accelerator(hw.accelerator)
        except KeyError:
            known = ", ".join(sorted(catalog.accelerators()))
            message = f"unknown accelerator '{hw.accelerator}'; known: {known}"
            params = {"id": hw.accelerator, "known": known}
            raise ScenarioError(
                FieldError("hardware.accelerator", message, "unknown-catalog-entry", params)
            ) from None
        # the book replaces the catalog's prices; the scenario's overrides below still win
        acc = book_pricing.priced_cloud(
            book_pricing.priced(acc, "accelerators", book, usd_to_cny), book, usd_to_cny
        )
    if hw.overrides:
        bad = sorted(set(hw.overrides) - _NUMERIC_ACCEL_FIELDS)
        if bad:
            raise ScenarioError(
                f"'{bad[0]}' is not a numeric accelerator field; allowed: {', '.join(sorted(_NUMERIC_ACCEL_FIELDS))}",
                f"hardware.overrides.{bad[0]}",
            )
        for key, value in hw.overrides.items():
            if value < 0 or (
                value == 0
                and key
                not in {"price_usd", "cloud_price_usd_per_card_hour", "cloud_reserved_usd_per_card_hour"}
            ):
                raise ScenarioError("must be positive", f"hardware.overrides.{key}")
        if "matmul_efficiency" in hw.overrides and hw.overrides["matmul_efficiency"] > 1:
            raise ScenarioError("must be at most 1", "hardware.overrides.matmul_efficiency")
        ints = {"scaleup_domain_cards"}
        numbers: dict[str, Any] = {k: (int(v) if k in ints else float(v)) for k, v in hw.overrides.items()}
        acc = dataclasses.replace(acc, **numbers)
    return acc


GENERIC_SERVER = "generic-8card"  # "any accelerator": the chassis of a chip without a server of its own


def _server(scenario: Scenario, acc: Accelerator) -> Server:
    server_id = scenario.hardware.server or acc.default_server
    try:
        server = catalog.server(server_id)
    except KeyError:
        if scenario.hardware.server is None:
            return catalog.server(GENERIC_SERVER)
        known = ", ".join(sorted(catalog.servers()))
        message, params = f"unknown server '{server_id}'; known: {known}", {"id": server_id, "known": known}
        raise ScenarioError(FieldError("hardware.server", message, "unknown-catalog-entry", params)) from None
    _check_server_holds(server, acc)
    return server


def _check_server_holds(server: Server, acc: Accelerator) -> None:
    """A server is built for one chip family (its catalog accelerator's): an H100 in an Atlas 800T A2
    or an Ascend 910C in a DGX would be priced and networked as a machine nobody sells, so it is
    refused on hardware.server, naming the servers of the card's family. The generic server, and a
    card without a catalog family (inline), take any."""
    if server.id == GENERIC_SERVER or not acc.chip_family:
        return
    held = catalog.accelerators().get(server.accelerator)
    if held is None or held.chip_family == acc.chip_family:
        return
    fits = sorted(
        s_id
        for s_id, s in catalog.servers().items()
        if s_id == GENERIC_SERVER
        or getattr(catalog.accelerators().get(s.accelerator), "chip_family", None) == acc.chip_family
    )
    message = (
        f"a {server.name} holds {held.name} cards, not {acc.name}; choose a server for it: {', '.join(fits)}"
    )
    params = {"server": server.name, "holds": held.name, "accelerator": acc.name, "servers": ", ".join(fits)}
    raise ScenarioError(FieldError("hardware.server", message, "server-not-for-accelerator", params))


def _check_parallelism(scenario: Scenario, arch: Architecture, cards: int | None) -> None:
    p = scenario.parallelism
    errors: list[FieldError] = []
    if p.tp is not None:
        if arch.num_attention_heads % p.tp:
            errors.append(
                FieldError(
                    "parallelism.tp",
                    f"must divide the {arch.num_attention_heads} attention heads",
                    "fixed-tp-heads",
                    {"heads": arch.num_attention_heads},
                )
            )
        elif not arch.is_mla and arch.num_key_value_heads % p.tp:
            # Megatron-LM splits the KV heads (query groups) over TP ranks: TP must divide them too
            errors.append(
                FieldError(
                    "parallelism.tp",
                    f"must divide the {arch.num_key_value_heads} KV heads",
                    "fixed-tp-kv-heads",
                    {"heads": arch.num_key_value_heads},
                )
            )
    if p.pp is not None and p.pp > arch.num_hidden_layers:
        errors.append(
            FieldError(
                "parallelism.pp",
                f"cannot exceed the {arch.num_hidden_layers} layers",
                "fixed-pp-layers",
                {"layers": arch.num_hidden_layers},
            )
        )
    if p.ep is not None and p.ep > 1:
        if not arch.is_moe:
            errors.append(
                FieldError(
                    "parallelism.ep", "expert parallelism needs a mixture-of-experts model", "fixed-ep-dense"
                )
            )
        elif arch.num_experts % p.ep:
            errors.append(
                FieldError(
                    "parallelism.ep",
                    f"must divide the {arch.num_experts} experts",
                    "fixed-ep-experts",
                    {"experts": arch.num_experts},
                )
            )
    errors.extend(_check_folding_and_stages(p, arch))
    if p.virtual_stages is not None and p.virtual_stages > 1 and (p.pp or 1) == 1 and p.pp is not None:
        errors.append(
            FieldError(
                "parallelism.virtual_stages",
                "interleaving needs parallelism.pp > 1",
                "fixed-virtual-stages-pp",
            )
        )
    errors.extend(_check_layout_cards(p, cards))
    if errors:
        raise ScenarioError(errors)


def _check_layout_cards(p: Parallelism, cards: int | None) -> list[FieldError]:
    """The fixed degrees against the given cards: equal to them when DP is fixed too, else dividing them."""
    if cards is None:
        return []
    errors: list[FieldError] = []
    names = "·".join(n for n in ("tp", "pp", "cp", "dp") if getattr(p, n) is not None)
    prod = p.layout_cards
    if not p.fits_cards(cards):
        if p.dp_fixed:
            errors.append(
                FieldError(
                    "parallelism.dp",
                    f"{names} = {prod} must equal cluster.cards = {cards}",
                    "fixed-dp-cards",
                    {"names": names, "product": prod, "cards": cards},
                )
            )
        else:
            errors.append(
                FieldError(
                    "parallelism",
                    f"{names} = {prod} must divide cluster.cards = {cards}",
                    "fixed-layout-cards",
                    {"names": names, "product": prod, "cards": cards},
                )
            )
    return errors


def _check_folding_and_stages(p: Parallelism, arch: Architecture) -> list[FieldError]:
    """Expert tensor parallelism only for MoE models; fixed first/last pipeline-device layers no more
    than the model has. Whether the rest divides evenly depends on pp and is a layout rule
    (enumeration.stage_split_fails)."""
    errors = []
    if p.expert_tp is not None and p.expert_tp > 1 and not arch.is_moe:
        errors.append(
            FieldError(
                "parallelism.expert_tp",
                "expert tensor parallelism needs a mixture-of-experts model",
                "fixed-expert-tp-dense",
            )
        )
    if (p.first_stage_layers or 0) + (p.last_stage_layers or 0) > arch.num_hidden_layers:
        field = (
            "parallelism.last_stage_layers"
            if p.last_stage_layers is not None
            else "parallelism.first_stage_layers"
        )
        errors.append(
            FieldError(
                field,
                f"the first and last pipeline stages hold more than the {arch.num_hidden_layers} layers",
                "fixed-stage-layers",
                {"layers": arch.num_hidden_layers},
            )
        )
    return errors


def resolve(scenario: Scenario, books: Mapping[str, PriceBook] | None = None) -> Resolved:
    """Look up the catalog and apply the contract's cross-field rules; with `books` (price books
    by reference), the one `cost.price_book` names replaces the catalog's prices."""
    name, arch, counts, exact, notes = _model(scenario)
    defaults = catalog.defaults()
    book = book_pricing.pick(scenario.cost.price_book, books)
    book_fx = scenario.cost.usd_to_cny or defaults["usd_to_cny"]
    acc = _accelerator(scenario, book, book_fx)
    server = book_pricing.priced(_server(scenario, acc), "servers", book, book_fx, "chassis_price_usd")
    hw, net = scenario.hardware, scenario.network
    cards_per_node = hw.cards_per_node or server.cards_per_node
    seq_len = scenario.training.seq_len or getattr(_preset_or_none(scenario), "default_seq_len", None) or 4096
    shape = None
    if scenario.model.params is not None:  # a size only: the assumed shape's family member decides
        basis = basis_for(scenario.model.params)
        seq_len = scenario.training.seq_len or basis.default_seq_len
        shape = assumed_shape(arch, basis, scenario.model.params)
    if scenario.training.global_batch_tokens < seq_len:
        message = f"must be at least one sequence ({seq_len} tokens)"
        raise ScenarioError(
            FieldError(
                "training.global_batch_tokens", message, "batch-below-one-sequence", {"tokens": seq_len}
            )
        )
    cards = scenario.cluster.cards
    if cards is not None and cards > cards_per_node and cards % cards_per_node:
        notes.append(
            f"cluster.cards = {cards} is not a whole number of {cards_per_node}-card nodes; the last node is partly used"
        )
    _check_parallelism(scenario, arch, cards)
    _check_confidence(scenario)
    _check_intervals(scenario)
    if scenario.training.precision == "fp8" and not acc.peak_flops_fp8:
        notes.append(f"{acc.name} has no FP8 tensor cores; BF16 peak used")
    fx = 1.0
    if scenario.cost.currency == "CNY":
        fx = scenario.cost.usd_to_cny or defaults["usd_to_cny"]
    return Resolved(
        scenario=scenario,
        model_name=name,
        arch=arch,
        counts=counts,
        exact_architecture=exact,
        accelerator=acc,
        server=server,
        cards_per_node=cards_per_node,
        nics_per_node=net.nics_per_node or nics_for(server, cards_per_node),
        nic_gbps=net.nic_gbps or server.nic_gbps,
        seq_len=int(seq_len),
        usd_to_currency=fx,
        defaults=defaults,
        notes=tuple(notes),
        price_book=book,
        book_usd_to_cny=book_fx,
        assumed_shape=shape,
    )


def normalized(r: Resolved) -> dict[str, Any]:
    """The scenario as JSON with every default filled, including those the catalog supplies
    (sequence length, server, cards per node, NICs, prices); parsing it again resolves the same."""
    data = r.scenario.normalized()
    d, fx, acc = r.defaults, r.usd_to_currency, r.accelerator
    data["training"]["seq_len"] = r.seq_len
    if isinstance(data["hardware"]["accelerator"], str):
        data["hardware"]["server"] = r.server.id
    data["hardware"]["cards_per_node"] = r.cards_per_node
    net = data["network"]
    net["nics_per_node"] = r.nics_per_node
    net["nic_gbps"] = r.nic_gbps
    net["port_gbps"] = net.get("port_gbps") or r.nic_gbps
    cost = data["cost"]
    filled = {
        "usd_to_cny": d["usd_to_cny"],
        "electricity_per_kwh": electricity_usd_per_kwh(r) * fx,
        "pue": d["pue"],
        "cloud_price_per_card_hour": acc.cloud_price_usd_per_card_hour * fx,
        "cloud_reserved_price_per_card_hour": acc.cloud_reserved_usd_per_card_hour * fx,
        "depreciation_years": d["depreciation_years"],
        "utilization": d["utilization"],
    }
    for key, value in filled.items():
        if cost.get(key) is None:
            cost[key] = value
    return data


def electricity_usd_per_kwh(r: Resolved) -> float:
    """The electricity price when the scenario gives none: the price book's, else the catalog's."""
    from_book = book_pricing.electricity_usd(r.price_book, r.book_usd_to_cny)
    return r.defaults["electricity_usd_per_kwh"] if from_book is None else from_book


def _preset_or_none(scenario: Scenario) -> Any:
    if scenario.model.preset is None:
        return None
    try:
        return catalog.preset(scenario.model.preset)
    except KeyError:
        return None


def parse_scenario(data: Any, books: Mapping[str, PriceBook] | None = None) -> Scenario:
    """Validate a scenario dict completely (shape, ranges, catalog ids, cross-field rules)."""
    scenario = validate_shape(data)
    resolve(scenario, books)
    return scenario
