"""OpenAPI component schemas of an estimate's `result` (the core's contract, docs/architecture.md
#scenario-contract): one named schema per section, so a generated client gets typed figures
(cards, days, capex) instead of an untyped dict. Units are in the field names where the core puts
them (`_s` seconds, `_bytes` bytes, `_w` watts, `_wh` watt-hours, `_days`, `_bps` bits per
second, `_gbps`) and in every description otherwise; amounts are in the section's `currency` (the
decimal strings are the estimate's `amounts`).

Sections are open (`additionalProperties`): the core may add fields within v1 (docs/api-versioning
.md), never rename or remove one. `document_result` (a drf-spectacular post-processing hook) adds
the components; `RESULT_REF` points at them."""

from __future__ import annotations

from typing import Any

RESULT_REF = {"$ref": "#/components/schemas/Result"}
Schema = dict[str, Any]


def _t(kind: str, description: str, nullable: bool = False) -> Schema:
    return {"type": [kind, "null"] if nullable else kind, "description": description}


def num(description: str, nullable: bool = False) -> Schema:
    return _t("number", description, nullable)


def count(description: str, nullable: bool = False) -> Schema:
    return _t("integer", description, nullable)


def flag(description: str, nullable: bool = False) -> Schema:
    return _t("boolean", description, nullable)


def text(description: str, nullable: bool = False) -> Schema:
    return _t("string", description, nullable)


def numbers(description: str) -> Schema:
    return {
        "type": "object",
        "additionalProperties": {"type": ["number", "null"]},
        "description": description,
    }


def ref(name: str, nullable: bool = False) -> Schema:
    target = {"$ref": f"#/components/schemas/{name}"}
    return {"oneOf": [target, {"type": "null"}]} if nullable else target


def section(description: str, properties: dict[str, Schema], required: tuple[str, ...] = ()) -> Schema:
    out: Schema = {
        "type": "object",
        "description": description,
        "properties": properties,
        "additionalProperties": True,
    }
    if required:
        out["required"] = list(required)
    return out


MONEY = "in the result's currency (cost.currency)"

QUANTILES = section(
    "A distribution from the Monte Carlo draws.",
    {q: num(f"{q} of the draws") for q in ("mean", "p10", "p50", "p90")},
)

COMPONENTS: dict[str, Schema] = {
    "ResultModel": section(
        "The model as planned: parameter counts and FLOPs per token.",
        {
            "name": text("Model name (the preset's, or the scenario's)"),
            "total_params": num("Parameters, all of them (count)"),
            "active_params": num("Parameters active per token (count; less than total for MoE)"),
            "embedding_params": num("Embedding and LM-head parameters (count)"),
            "exact_architecture": flag(
                "true: the architecture was given or known; false: assumed from the size"
            ),
            "architecture": {"type": "object", "description": "Hugging Face config.json names"},
            "seq_len": count("Sequence length, tokens"),
            "hidden_size": count("Hidden size"),
            "flop_per_token": num("Training FLOP per token (forward + backward)"),
            "flop_per_token_6n": num("6 x active parameters, FLOP per token"),
            "flop_per_token_attention": num("Attention FLOP per token"),
        },
    ),
    "ResultCompute": section(
        "How many cards and how long.",
        {
            "cards": count("Accelerator cards"),
            "nodes": count("Servers (nodes)"),
            "cards_per_node": count("Cards per server"),
            "wall_clock_days": num("Training time, days"),
            "target_days": num("The deadline asked for, days (null: the cards were given)", True),
            "meets_target": flag(
                "The deadline is met at the planned MFU: the mean wall-clock days with failures counted (or the "
                "days without them) are within it; deadline_miss_probability says how likely it is missed over "
                "the MFU range. With deadline_confidence q: met when that probability is at most 1 - q (null "
                "without a deadline)",
                True,
            ),
            "deadline_confidence": num(
                "cluster.deadline_confidence: the chance of meeting the deadline the cluster was sized for "
                "(0.5-0.99; absent: sized at the planned MFU)",
                True,
            ),
            "deadline_miss_probability": num(
                "Probability of missing the deadline (0-1): over the MFU range and, when failures are "
                "counted, the spread of the interruption count (docs/goodput.md)",
                True,
            ),
            "deadline_miss_counts_failures": flag(
                "The probability counts the interruption count's spread with the MFU range (true), or the "
                "MFU range alone (false: failures not counted); null without a deadline",
                True,
            ),
            "mfu": num("Model FLOPs utilization used (0-1)"),
            "mfu_source": text("given, or predicted by the layout model"),
            "tokens": num("Training tokens"),
            "tokens_per_s": num("Cluster throughput, tokens per second"),
            "training_flop": num("Total training FLOP"),
            "flop_per_token": num("FLOP per token"),
            "peak_flops_per_card": num("Peak FLOP/s per card at the training precision"),
            "accelerator_hours": num("Card-hours of the run"),
            "scaleup_domain_cards": count("Cards in one scale-up domain (node or supernode)"),
            "vendor": text("Accelerator vendor"),
        },
        ("cards", "nodes", "wall_clock_days", "mfu"),
    ),
    "ResultParallelism": section(
        "The layout chosen and its step time.",
        {
            **{k: count(f"{k.upper()} degree") for k in ("tp", "pp", "dp", "ep", "cp")},
            "micro_batch_size": count("Sequences per micro-batch"),
            "micro_batches": count("Micro-batches per step"),
            "virtual_stages": count("Virtual pipeline stages per rank"),
            "sequence_parallel": flag("Megatron sequence parallelism"),
            "zero_stage": count("ZeRO stage (0-3)"),
            "recompute": text("none, selective, full or partial"),
            "distributed_optimizer": flag("Optimizer state sharded across data-parallel ranks"),
            "global_batch_tokens": count("Tokens per optimizer step"),
            "step_time_s": num("Step time, seconds"),
            "tokens_per_s": num("Throughput, tokens per second"),
            "predicted_mfu": num("MFU the layout model predicts (0-1)", True),
            "predicted_hfu": num("Hardware FLOPs utilization predicted (0-1)", True),
            "bubble_fraction": num("Pipeline bubble, fraction of the step"),
            "recompute_fraction": num("Recomputation, fraction of the forward pass"),
            "breakdown_s": numbers("Step time by term, seconds (the terms sum to step_time_s)"),
            "compute_detail_s": numbers("The compute term by kind, seconds"),
        },
        ("tp", "pp", "dp", "step_time_s"),
    ),
    "ResultMemory": section(
        "Memory per card.",
        {
            "fits": flag("The layout fits the card's memory"),
            "fits_with_zero2": flag("It would fit with ZeRO-2 (null: not asked)", True),
            "zero2_speed_factor": num(
                "ZeRO-3 layouts where ZeRO-2 fits: the same layout's tokens/s with ZeRO-2 over its own (null: not asked)",
                True,
            ),
            "hbm_bytes": num("Memory of one card, bytes"),
            "per_card_bytes": numbers(
                "Per card, bytes: weights, gradients, optimizer, activations, other, total"
            ),
        },
    ),
    "ResultLayout": section(
        "The layout search: how many candidates, why the others lost.",
        {
            "evaluated": count("Candidate layouts evaluated"),
            "feasible": count("Candidates that fit"),
            "fixed": {"type": "object", "description": "The settings the scenario fixed"},
            "rejected": {
                "type": "object",
                "additionalProperties": {"type": "integer"},
                "description": "Candidates refused, by reason code",
            },
            "runners_up": {
                "type": "array",
                "items": {"type": "object"},
                "description": "The next best layouts",
            },
        },
    ),
    "ResultNetwork": section(
        "The scale-out fabric (leaf/spine/core).",
        {
            "tiers": count("Switch tiers"),
            "leaf_switches": count("Leaf switches"),
            "spine_switches": count("Spine switches"),
            "core_switches": count("Core switches"),
            "total_switches": count("Switches in all"),
            "transceivers": count("Optical transceivers"),
            "switch_ports": count("Ports per switch"),
            "port_gbps": num("Port speed, Gbit/s"),
            "oversubscription": num("Oversubscription asked for (down:up)"),
            "effective_oversubscription": num("Oversubscription built"),
            "bisection_bandwidth_bps": num("Bisection bandwidth, bits per second"),
            "rail_optimized": flag("Rail-optimized wiring"),
            "nodes": count("Servers attached"),
            "endpoints": count("NIC ports attached"),
            "cables": numbers("Cables by kind (dac, aoc, fiber), count"),
            "frontend": {
                "type": ["object", "null"],
                "description": "The front-end (storage/management) plane",
            },
        },
    ),
    "ResultStorage": section(
        "Checkpoint and dataset storage tiers.",
        {
            "checkpoint_bytes": num("One checkpoint, bytes"),
            "dataset_bytes": num("Tokenized dataset, bytes"),
            "raw_dataset_bytes": num("Raw dataset, bytes"),
            "hot": {
                "type": "object",
                "description": "Hot tier (drives, capacity_bytes, bandwidths in bytes/s)",
            },
            "warm": {"type": "object", "description": "Warm tier (drives, capacity_bytes)"},
            "cache": {"type": "object", "description": "Node-local cache (per_node_bytes)"},
        },
    ),
    "ResultPower": section(
        "Power and energy.",
        {
            "it_w": num("IT power, watts"),
            "facility_w": num("Facility power (IT x PUE), watts"),
            "energy_wh": num("Energy of the run, watt-hours, over the hours the cluster is held"),
            "hours": num(
                "Hours the cluster is held: computing, plus with failures counted the time lost to them (mean)"
            ),
            "pue": num("Power usage effectiveness"),
            "breakdown_w": numbers("IT power by part, watts"),
        },
        ("facility_w",),
    ),
    "ResultCapex": section(
        f"What the cluster costs to buy, {MONEY}.",
        {k: num(f"{k} capex, {MONEY}") for k in ("compute", "network", "scaleup", "storage", "total")},
        ("total",),
    ),
    "ResultRunCost": section(
        f"What the run costs, {MONEY}.",
        {
            "owned": num(f"On the owned cluster (depreciation + energy + facility), {MONEY}"),
            "cloud": num(f"Rented on demand, {MONEY}"),
            "cloud_reserved": num(f"Rented reserved, {MONEY}", True),
            "owned_breakdown": numbers(f"The owned cost by part, {MONEY}"),
        },
    ),
    "ResultCost": section(
        "Money, owned against rented.",
        {
            "currency": text("ISO 4217 code of every amount of the result"),
            "capex": ref("ResultCapex"),
            "run": ref("ResultRunCost"),
            "card_hours": num("Card-hours billed: cards x the hours the cluster is held (failures counted)"),
            "owned_per_card_hour": num(f"Owned cost per card-hour, {MONEY}"),
            "cloud_per_card_hour": num(f"Cloud price per card-hour, {MONEY}"),
            "cloud_reserved_per_card_hour": num(f"Reserved cloud price per card-hour, {MONEY}", True),
            "electricity_per_kwh": num(f"Electricity per kWh, {MONEY}"),
            "monthly_owned_opex": num(f"Owned running cost per month, {MONEY}"),
            "cloud_break_even_months": num("Months of use after which owning beats renting", True),
            "depreciation_years": num("Depreciation period, years"),
            "exchange_rate": num("Currency units per US dollar used"),
            "utilization": num("Share of the cluster's time in use (0-1)"),
            "budget": num(f"The budget given, {MONEY}", True),
        },
        ("currency", "capex", "run"),
    ),
    "ResultQuantiles": QUANTILES,
    "ResultUncertainty": section(
        "Monte Carlo over MFU, prices and power.",
        {
            "currency": text("ISO 4217 code of the cost distributions"),
            "draws": count("Monte Carlo draws"),
            "seed": count("Random seed (the figures are reproducible)"),
            "days": ref("ResultQuantiles"),
            "cost_owned": ref("ResultQuantiles"),
            "cost_cloud": ref("ResultQuantiles"),
            "cost_cloud_reserved": ref("ResultQuantiles", True),
        },
    ),
    "ResultBudget": section(
        f"Budget against the plan, {MONEY}.",
        {
            "budget": num(f"The budget, {MONEY}"),
            "capex": num(f"The plan's capex, {MONEY}"),
            "within": flag("The plan is within the budget"),
            "over_by": num(f"By how much it is over, {MONEY}"),
            "headroom": num(f"What is left, {MONEY}"),
            "share": num("Capex / budget"),
            "sized_by_budget": flag("The cluster was sized to the budget"),
            "affords": {
                "type": ["object", "null"],
                "description": "What the budget buys: cards, nodes, days (mean), days_p50 (median, when "
                "failures are counted), capex",
            },
        },
    ),
    "ResultGoodputLever": section(
        "What one lever against failures would save (estimator.plan.goodput).",
        {
            "lever": text("faster-hot-tier, async-checkpoints, in-memory-checkpoints or spare-nodes"),
            "days_saved": num("Wall-clock days it saves, failures counted"),
            "wall_clock_days": num("Wall-clock days with it, failures counted"),
            "cost": num(f"What it costs to buy, {MONEY}; null for a setting (no hardware)", True),
            "value_of_days_saved": num(f"The days saved at the plan's owned cost per day, {MONEY}"),
            "pays": flag("The days saved are worth more than the cost"),
        },
    ),
    "ResultGoodput": section(
        "Failures, checkpoints and restarts, and the wall-clock days with them (docs/goodput.md).",
        {
            "failures_counted": flag("false when the scenario says reliability.failures = false"),
            "checkpoint_mode": text("sync, async or in-memory (the stack's checkpoint_mode)"),
            "expected_interruptions": num(
                "Interruptions expected over the run, unexpected + planned (count)"
            ),
            "expected_unexpected_interruptions": num("Unexpected interruptions expected (count)"),
            "expected_planned_interruptions": num("Planned interruptions (maintenance) expected (count)"),
            "interruptions_by_cause": numbers("Unexpected interruptions by cause (count)"),
            "mean_time_between_interruptions_h": num("Mean time between unexpected interruptions, hours"),
            "checkpoint_interval_s": num("Compute seconds between checkpoints"),
            "checkpoint_interval_rule": text("daly-2006 (the optimum) or given"),
            "checkpoint_write_s": num("Seconds to write one checkpoint to the hot tier"),
            "checkpoint_stall_s": num("Seconds training waits per checkpoint"),
            "checkpoint_durable_after_s": num("Seconds after the snapshot until a checkpoint is durable"),
            "restart_s": num("Mean seconds of one restart: detection + rescheduling + reload"),
            "detection_s": num("Seconds to detect an interruption"),
            "rescheduling_s": num("Seconds to replace the node and restart the job"),
            "reload_s": num("Seconds to read the checkpoint back"),
            "rework_per_interruption_s": num("Mean seconds of work re-done per interruption"),
            "compute_days": num("Days of computing (no failures)"),
            "lost_days": numbers("Days lost to checkpoints, rework, restarts and planned maintenance"),
            "wall_clock_days": num(
                "Mean wall-clock days with failures (what the deadline risk, the levers and the sizing count)"
            ),
            "wall_clock_days_p10": num("P10 of the wall-clock days from the failure statistics"),
            "wall_clock_days_p50": num(
                "Median (P50) wall-clock days from the failure statistics: the headline's days with failures"
            ),
            "wall_clock_days_p90": num("P90 of the wall-clock days from the failure statistics"),
            "effective_training_time_ratio": num("ETTR: compute days / wall-clock days (0-1)"),
            "spares": {
                "type": "object",
                "description": "Hot standby nodes: nodes, coverage, suggested, capex",
            },
            "rate_scale": num("Multiplier on the catalog's interruption rates"),
            "rates_per_unit_hour": numbers(
                "Interruptions per unit-hour by cause (the unit in rates_scale_with)"
            ),
            "rates_scale_with": {"type": "object", "description": "Cause -> card, node or switch"},
            "source": text("The published census behind the rates"),
            "levers": {"type": "array", "items": ref("ResultGoodputLever"), "description": "Best first"},
        },
        (
            "expected_interruptions",
            "mean_time_between_interruptions_h",
            "checkpoint_interval_s",
            "checkpoint_write_s",
            "effective_training_time_ratio",
            "wall_clock_days",
        ),
    ),
    "ResultCoded": section(
        "A warning, advice, assumption or setting: a code, its parameters and an English default "
        "(the pages render it in the reader's language).",
        {
            "code": text("Stable code"),
            "severity": text("info, warning or error (warnings and advice)"),
            "params": {"type": "object", "description": "The parameters of the message"},
        },
    ),
}


def _coded_list(description: str) -> Schema:
    return {"type": "array", "items": ref("ResultCoded"), "description": description}


COMPONENTS["Result"] = section(
    "The plan: one section per stage (docs/architecture.md#scenario-contract).",
    {
        "model": ref("ResultModel"),
        "compute": ref("ResultCompute"),
        "parallelism": ref("ResultParallelism"),
        "memory": ref("ResultMemory"),
        "layout": ref("ResultLayout"),
        "network": ref("ResultNetwork"),
        "storage": ref("ResultStorage"),
        "power": ref("ResultPower"),
        "cost": ref("ResultCost"),
        "uncertainty": ref("ResultUncertainty"),
        "goodput": ref("ResultGoodput"),
        "budget": ref("ResultBudget", True),
        "scaleup": {"type": ["object", "null"], "description": "The scale-up plane of a supernode server"},
        "serving": {"type": ["object", "null"], "description": "Serving, when the scenario asks for it"},
        "warnings": _coded_list("What to check"),
        "advice": _coded_list("What to change"),
        "assumptions": _coded_list("Every figure assumed, with its source"),
        "starting_configuration": _coded_list("Framework settings to start from"),
    },
    ("compute", "parallelism", "memory", "network", "storage", "power", "cost"),
)


def document_result(result: dict[str, Any], **_hook_kwargs: Any) -> dict:
    """drf-spectacular post-processing hook: the result's components."""
    result.setdefault("components", {}).setdefault("schemas", {}).update(COMPONENTS)
    return result
