"""Assemble the contract's result sections (docs/architecture.md#scenario-contract) from the pieces plan.py computed:
model, compute, parallelism, memory, layout, network, storage, power, cost, uncertainty, serving,
advice, starting configuration, warnings and the assumptions behind them."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from estimator.cluster.network import Fabric
from estimator.cluster.storage import Storage
from estimator.cluster.supernode import planes_section
from estimator.contract.price_book import assumption as price_book_assumption
from estimator.contract.price_book import electricity_usd, source_text
from estimator.contract.resolve import Resolved
from estimator.layout.choice import choice_reason
from estimator.layout.search import LayoutEval, LayoutProblem, LayoutSearch, evaluate_layout
from estimator.layout.stacks import StackProfile
from estimator.limits import SEARCH_SECONDS
from estimator.money import budget as budget_rules
from estimator.plan import evidence
from estimator.plan.advice import advise
from estimator.plan.goodput import advice as goodput_advice
from estimator.plan.goodput import assumptions as goodput_assumptions
from estimator.plan.inference import Deployment
from estimator.plan.inference import serving as size_serving
from estimator.plan.stack_sensitivity import stack_section
from estimator.plan.starting_config import starting_configuration
from estimator.plan.uncertainty import UncertainPrices, monte_carlo, triangle_from_quantiles


class Choice(Protocol):
    """What plan.ClusterChoice provides (structural: sections does not import plan, plan imports it)."""

    @property
    def cards(self) -> int: ...
    @property
    def mfu(self) -> float: ...
    @property
    def mfu_source(self) -> str: ...
    @property
    def fabric(self) -> Fabric: ...
    @property
    def layouts(self) -> LayoutSearch: ...


class Prices(Protocol):
    """What plan.Equipment provides: unit prices (USD) and where each came from."""

    @property
    def server_price_usd(self) -> float: ...
    @property
    def switch_price_usd(self) -> float: ...
    @property
    def transceiver_price_usd(self) -> float: ...
    @property
    def sources(self) -> dict[str, str]: ...


Roll = dict[str, Any]  # rollup.rollup's flat result (names -> arrays / objects)

SECONDS_PER_DAY = 86400.0


def _model_section(r: Resolved, flops: dict[str, float]) -> dict[str, Any]:
    return {
        "name": r.model_name,
        "total_params": r.counts.total,
        "active_params": r.counts.active,
        "embedding_params": r.counts.embedding + r.counts.lm_head,
        "exact_architecture": r.exact_architecture,
        "architecture": dataclasses.asdict(r.arch),
        "ignored_fields": list(r.scenario.ignored_model_fields),
        **({"assumed_shape": r.assumed_shape} if r.assumed_shape is not None else {}),
        "seq_len": r.seq_len,
        "hidden_size": r.arch.hidden_size,
        **{k: v for k, v in flops.items() if k != "training_flop"},
    }


def _compute_section(
    r: Resolved, flops: dict[str, float], peak: float, choice: Choice, roll: Roll
) -> dict[str, Any]:
    s = r.scenario
    days = float(roll["compute.wall_clock_days"])
    out = {
        "flop_per_token": flops["flop_per_token"],
        "flop_per_token_6n": flops["flop_per_token_6n"],
        "flop_per_token_attention": flops["flop_per_token_attention"],
        "training_flop": flops["training_flop"],
        # 6·N·D (Kaplan 2020) beside the count with attention, as the headline shows both
        "training_flop_6n": flops["flop_per_token_6n"] * s.training.tokens,
        "tokens": s.training.tokens,
        "peak_flops_per_card": peak,
        "cards": int(roll["compute.cards"]),
        "nodes": int(roll["compute.nodes"]),
        "cards_per_node": r.cards_per_node,
        "scaleup_domain_cards": r.scaleup_domain_cards,
        "vendor": r.accelerator.vendor,
        "chip_family": r.accelerator.chip_family,
        "accelerator": r.accelerator.name,
        "mfu": choice.mfu,
        "mfu_source": choice.mfu_source,
        "wall_clock_days": days,
        "accelerator_hours": float(roll["compute.accelerator_hours"]),
        "tokens_per_s": float(roll["compute.tokens_per_s"]),
    }
    if s.cluster.target_days is not None:
        out["target_days"] = s.cluster.target_days
        out["meets_target"] = days <= s.cluster.target_days * (1 + 1e-9)
    return out


def _layout_sections(
    r: Resolved, choice: Choice, problem: LayoutProblem
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, Any]]:
    found = choice.layouts
    best = found.best
    shown: LayoutEval | None = best if best is not None else getattr(found, "closest", None)
    parallelism = shown.to_dict() if shown is not None else None
    if parallelism is not None:  # the batch is rounded to whole micro-batches per DP rank
        parallelism["global_batch_tokens"] = (
            parallelism["micro_batches"] * parallelism["dp"] * parallelism["micro_batch_size"] * r.seq_len
        )
    memory = shown.memory_dict() if shown is not None else None
    if memory is not None and shown is not None:
        memory["fits"] = bool(best is not None and memory.get("fits", True))
        memory["fits_with_zero2"] = _fits_with_zero2(problem, shown)
    layout = {
        "feasible": found.feasible,
        "evaluated": found.evaluated,
        "rejected": dict(found.rejected),
        "runners_up": [
            {**c.to_dict(), "memory_total_bytes": c.memory_dict()["per_card_bytes"]["total"]}
            for c in found.runners_up
        ],
        "fixed": r.scenario.parallelism.fixed(),
    }
    if best is not None:  # fastest, or preferred within the 2 % tie band (and why)
        layout["choice"] = choice_reason(best, found.runners_up)
    return parallelism, memory, layout


def _fits_with_zero2(problem: LayoutProblem, shown: LayoutEval) -> bool | None:
    """For a ZeRO-3 layout: would the same layout fit with stage 2 (no weight sharding)?"""
    if shown.zero_stage != 3:
        return None
    alt = evaluate_layout(
        problem,
        tp=shown.tp,
        pp=shown.pp,
        ep=shown.ep,
        cp=shown.cp,
        micro_batch_size=shown.micro_batch_size,
        virtual_stages=shown.virtual_stages,
        sequence_parallel=shown.sequence_parallel,
        zero_stage=2,
        recompute=shown.recompute,
    )
    return bool(alt.fits)


def _planes(r: Resolved, choice: Choice, roll: Roll, problem: LayoutProblem) -> dict[str, Any]:
    """Both planes: the scale-up plane of each supernode and the scale-out fabric between them."""
    return planes_section(r, choice.fabric, choice.layouts, roll, problem)


def _mfu_band(
    r: Resolved, choice: Choice, peak: float, stack: StackProfile
) -> tuple[tuple[float, float, float], dict[str, Any]]:
    """The Monte Carlo's MFU triangle and where it comes from: the scenario's own range, +-25 % of a
    given MFU (an assumption), or for a predicted MFU the evidence band of the plan's class
    (estimator.plan.evidence), its P10-P90 matched by the triangle."""
    s, mfu = r.scenario, choice.mfu
    if s.efficiency.mfu_range is not None or choice.mfu_source != "predicted":
        lo, hi = s.efficiency.mfu_range or (mfu * 0.75, min(1.0, mfu * 1.25))
        source = "given-range" if s.efficiency.mfu_range is not None else "assumed"
        return (min(lo, mfu), mfu, max(hi, mfu)), {"source": source}
    key = evidence.class_key(
        r.accelerator.chip_family, evidence.workload_family(r.arch.num_experts, r.seq_len), stack.id
    )
    band = evidence.band_for(key)
    peak_source = r.accelerator.sources.get(_PEAK_FIELD.get(s.training.precision, "peak_flops_bf16"))
    peak_range = peak_source.range if peak_source is not None else None
    band = evidence.widen_for_peak_range(band, peak, peak_range)
    low, mode, high = triangle_from_quantiles(mfu * band.p10_ratio, mfu, mfu * band.p90_ratio)
    return (max(low, 1e-6), mode, min(high, 1.0)), {"source": "evidence", **band.to_dict()}


# the catalog field whose sources state the peak a precision runs at (Accelerator.peak_flops)
_PEAK_FIELD = {"fp8": "peak_flops_fp8", "fp32": "peak_flops_fp32"}


def _uncertainty(
    r: Resolved,
    flops: dict[str, float],
    peak: float,
    choice: Choice,
    roll: Roll,
    pr: dict[str, float],
    stack: StackProfile,
) -> dict[str, Any]:
    s, u = r.scenario, r.scenario.uncertainty
    mfu_triangle, band = _mfu_band(r, choice, peak, stack)
    spread = u.price_spread
    cloud = pr["cloud_usd_per_card_hour"]
    capex = float(roll["_cost"].capex_total_usd)
    elec = pr["electricity_usd_per_kwh"]
    result = monte_carlo(
        training_flop=flops["training_flop"],
        cards=int(roll["compute.cards"]),
        peak_flops=peak,
        mfu=mfu_triangle,
        prices=UncertainPrices(
            cloud_usd_per_card_hour=(cloud * (1 - spread), cloud, cloud * (1 + spread)),
            capex_total_usd=(capex * (1 - spread), capex, capex * (1 + spread)),
            facility_w=float(roll["power.facility_w"]),
            electricity_usd_per_kwh=(elec * (1 - spread), elec, elec * (1 + spread)),
            depreciation_years=pr["depreciation_years"],
            utilization=pr["utilization"],
            it_w=float(roll["power.it_w"]),
            currency=s.cost.currency,
            usd_to_cny=r.usd_to_currency if s.cost.currency == "CNY" else None,
        ),
        draws=u.samples,
        seed=u.seed,
    )
    return result.to_dict() | {"mfu_band": band}


def _serving(r: Resolved, peak: float) -> dict[str, Any] | None:
    sv = r.scenario.serving
    if sv is None:
        return None
    cards = sv.cards or r.cards_per_node
    return size_serving(
        r.arch,
        Deployment(cards, sv.context_len, sv.concurrency, sv.kv_dtype, sv.weights_dtype),
        params_total=r.counts.total,
        params_active=r.counts.active,
        hbm_bytes_per_card=r.accelerator.hbm_bytes,
        hbm_bandwidth_bytes_per_s=r.accelerator.hbm_bandwidth_bytes_per_s,
        peak_flops=peak,
    ).to_dict()


def _assumptions(
    r: Resolved, choice: Choice, eq: Prices, pr: dict[str, float], stack: StackProfile
) -> list[dict[str, Any]]:
    """The inputs behind the numbers, each with `code` (what it is, rendered in the reader's
    language with `params`), value, unit and source; `source_code` where the source is generic
    rather than a title. Prices are converted to the report's currency (cost.currency)."""
    acc, srcs = r.accelerator, r.accelerator.sources
    cur, fx = r.scenario.cost.currency, r.usd_to_currency

    def src(field: str) -> str:
        s = srcs.get(field)
        return f"{s.source} ({s.as_of})" if s else "scenario input"

    out = [
        {
            "name": f"{acc.name} dense {r.scenario.training.precision} peak",
            "value": acc.peak_flops(r.scenario.training.precision),
            "unit": "FLOP/s",
            "source": src("peak_flops_bf16"),
        },
        {"name": "HBM per card", "value": acc.hbm_bytes, "unit": "B", "source": src("hbm_bytes")},
        {
            "name": "achievable matmul efficiency",
            "value": acc.matmul_efficiency,
            "unit": "",
            "source": src("matmul_efficiency"),
        },
        {
            "name": "MFU",
            "value": choice.mfu,
            "unit": "",
            "source": {
                "given": "scenario efficiency.mfu",
                "predicted": "layout model prediction",
            }[choice.mfu_source],
        },
        _stack_assumption(r, stack),
        {"name": "card TDP", "value": acc.tdp_w, "unit": "W", "source": src("tdp_w")},
        {
            "name": "server price (cards included)",
            "value": eq.server_price_usd * fx,
            "unit": cur,
            "source": eq.sources["server"],
        },
        {
            "name": "switch price",
            "value": eq.switch_price_usd * fx,
            "unit": cur,
            "source": eq.sources["switch"],
        },
        {
            "name": "transceiver price",
            "value": eq.transceiver_price_usd * fx,
            "unit": cur,
            "source": eq.sources["transceiver"],
        },
        {
            "name": "cloud price per card-hour",
            "value": pr["cloud_usd_per_card_hour"] * fx,
            "unit": cur,
            "source": src("cloud_price_usd_per_card_hour"),
        },
        {
            "name": "electricity",
            "value": pr["electricity_usd_per_kwh"] * fx,
            "unit": f"{cur}/kWh",
            "source": _electricity_source(r),
        },
        {"name": "PUE", "value": pr["pue"], "unit": "", "source": "catalog defaults / scenario"},
        {
            "name": "depreciation",
            "value": pr["depreciation_years"],
            "unit": "years",
            "source": "catalog defaults / scenario",
        },
    ]
    codes = ["peak", "hbm", "matmul-efficiency", "mfu", "stack", "tdp", "server-price", "switch-price"]
    codes += ["transceiver-price", "cloud-price", "electricity", "pue", "depreciation"]
    if not r.scenario.training.stack:
        codes[4] = "stack-default"
    generic = {
        "scenario input": "scenario",
        "catalog defaults / scenario": "catalog-or-scenario",
        "scenario efficiency.mfu": "mfu-given",
        "layout model prediction": "mfu-predicted",
        "scenario cost.server_price": "scenario",
    }
    params = {"accelerator": acc.name, "precision": r.scenario.training.precision}
    for code, row in zip(codes, out, strict=True):
        row["code"], row["params"] = f"assumption.{code}", params
        if row["source"] in generic:
            row["source_code"] = f"source.{generic[row['source']]}"
    if r.price_book is not None:
        out.append(price_book_assumption(r.price_book))
    return out


def _electricity_source(r: Resolved) -> str:
    """The price book when it set the electricity price (the scenario did not), else the generic source."""
    book = r.price_book
    if r.scenario.cost.electricity_per_kwh is None and electricity_usd(book, r.book_usd_to_cny) is not None:
        assert book is not None
        return source_text(book)
    return "catalog defaults / scenario"


def _stack_assumption(r: Resolved, stack: StackProfile) -> dict[str, Any]:
    """The software stack the step time assumes (its id as the value, its mechanisms in `detail`)."""
    chosen = r.scenario.training.stack
    return {
        "name": "software stack" + ("" if chosen else " (default for this accelerator)"),
        "value": stack.id,
        "unit": "",
        "source": f"{stack.name}; {stack.source} ({stack.as_of})",
        "detail": stack.mechanisms(),
    }


def _warnings(
    r: Resolved,
    choice: Choice,
    compute: dict[str, Any],
    cost: dict[str, Any],
    advice: list[dict[str, Any]],
    goodput_days: float | None = None,
) -> list[dict[str, Any]]:
    """Advice (as warnings) and the plan's own warnings: {code, severity, message, params};
    `goodput_days` the wall-clock days with failures (the deadline is judged on them)."""
    out = [
        {"code": a["code"], "severity": a["severity"], "message": a["message"], "params": a.get("params", {})}
        | ({"message_code": a["message_code"]} if "message_code" in a else {})
        for a in advice
    ]
    for note in r.notes:
        out.append({"code": "input-note", "severity": "info", "message": note, "params": {"note": note}})
    if r.assumed_shape is not None:  # a model known only by its size: say what was assumed
        shape = r.assumed_shape
        out.append(
            {
                "code": shape["code"],
                "severity": "info",
                "message": shape["message"],
                "params": shape["params"],
            }
        )
    ignored = r.scenario.ignored_model_fields
    if ignored:
        out.append(
            {
                "code": "config-fields-ignored",
                "severity": "info",
                "message": f"{len(ignored)} config.json field(s) the estimator does not read were ignored: "
                + ", ".join(ignored)
                + ".",
                "params": {"count": len(ignored), "fields": ", ".join(ignored)},
            }
        )
    found = choice.layouts
    if found is not None and found.timed_out:
        out.append(
            {
                "code": "layout-search-timed-out",
                "severity": "warning",
                "message": f"The layout search stopped at its {SEARCH_SECONDS:g}-second budget after timing "
                f"{found.timed:,} of {found.feasible:,} layouts that fit; the layout shown is the best of those.",
                "params": {"seconds": SEARCH_SECONDS, "timed": found.timed, "feasible": found.feasible},
            }
        )
    if compute.get("meets_target") is False:
        days = goodput_days if goodput_days is not None else compute["wall_clock_days"]
        out.append(
            {
                "code": "deadline-missed",
                "severity": "warning",
                "message": f"The plan takes {days:.1f} days, more than the {compute['target_days']:g}-day target.",
                "params": {"days": days, "target_days": compute["target_days"]},
            }
        )
    budget = _budget_of(r)
    if budget is not None and cost["capex"]["total"] > budget and (cost["run"]["cloud"] or 0) > budget:
        out.append(
            {
                "code": "over-budget",
                "severity": "warning",
                "message": f"Both buying ({cost['capex']['total']:,.0f}) and renting "
                f"({cost['run']['cloud']:,.0f}) exceed the budget of {budget:,.0f} {cost['currency']}.",
                "params": {
                    "capex": cost["capex"]["total"],
                    "cloud": cost["run"]["cloud"],
                    "budget": budget,
                    "currency": cost["currency"],
                },
            }
        )
    return out


def _budget_of(r: Resolved) -> float | None:
    """The capital budget: cost.budget, else the cluster.budget the cluster was sized by."""
    c = r.scenario
    return c.cost.budget if c.cost.budget is not None else c.cluster.budget


def _budget_section(r: Resolved, cost: dict[str, Any]) -> dict[str, Any] | None:
    """Budget status (within / over by how much); what the budget buys (`affords`) is the
    budget-sized plan, added by plan.compose.budget_affords (the same search as a budget-sized plan)."""
    budget = _budget_of(r)
    if budget is None:
        return None
    out = budget_rules.status(float(cost["capex"]["total"]), float(budget))
    out["currency"] = cost["currency"]
    out["sized_by_budget"] = r.scenario.cluster.budget is not None
    return out


def _deadline_risk(
    compute: dict[str, Any], uncertainty: dict[str, Any], goodput: dict[str, Any] | None
) -> None:
    """compute.deadline_miss_probability: P(days > target) under the Monte Carlo's MFU range, the
    days with failures counted (goodput.wall_clock_days) when there are any."""
    mfu = (uncertainty.get("inputs") or {}).get("mfu")
    if compute.get("target_days") is None or not mfu or len(mfu) != 3:
        return
    days = goodput["wall_clock_days"] if goodput is not None else compute["wall_clock_days"]
    compute["deadline_miss_probability"] = budget_rules.deadline_miss_probability(
        days, compute["target_days"], *mfu
    )


def assemble(
    r: Resolved,
    flops: dict[str, float],
    peak: float,
    choice: Choice,
    storage: Storage,
    eq: Prices,
    pr: dict[str, float],
    roll: Roll,
    problem: LayoutProblem,
    goodput: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The result sections for the plan's choices; `problem` is the layout search's input at the
    chosen cards and fabric (for the ZeRO-2 what-if, the stack and the planes), `goodput`
    plan.goodput's section (the deadline is met or missed with failures counted)."""
    compute = _compute_section(r, flops, peak, choice, roll)
    if goodput is not None and "target_days" in compute:
        compute["meets_target"] = goodput["wall_clock_days"] <= compute["target_days"] * (1 + 1e-9)
    parallelism, memory, layout = _layout_sections(r, choice, problem)
    cost = roll["_cost"].to_dict()
    if _budget_of(r) is not None:
        cost["budget"] = _budget_of(r)
    result: dict[str, Any] = {
        "model": _model_section(r, flops),
        "compute": compute,
        "parallelism": parallelism,
        "memory": memory,
        "layout": layout,
        "network": choice.fabric.to_dict(),
        "storage": storage.to_dict(),
        "power": roll["_power"].to_dict(),
        "cost": cost,
        "uncertainty": _uncertainty(r, flops, peak, choice, roll, pr, problem.stack),
        "scaleup": _planes(r, choice, roll, problem),
        "stack": stack_section(
            problem,
            choice.layouts.best,
            compute["wall_clock_days"],
            r.accelerator.vendor,
            problem.stack.id,
            not r.scenario.training.stack,
        ),
    }
    if goodput is not None:
        result["goodput"] = goodput
    _deadline_risk(compute, result["uncertainty"], goodput)
    budget = _budget_section(r, cost)
    if budget is not None:
        result["budget"] = budget
    serving = _serving(r, peak)
    if serving is not None:
        result["serving"] = serving
    scenario_dict = r.scenario.normalized()
    scenario_dict["hardware"]["cards_per_node"] = r.cards_per_node
    advice = [dict(a) for a in advise(scenario_dict, result)]
    advice += goodput_advice(goodput, r.scenario.cost.currency) if goodput is not None else []
    result["advice"] = advice
    result["starting_configuration"] = starting_configuration(scenario_dict, result)
    good_days = goodput["wall_clock_days"] if goodput is not None else None
    result["warnings"] = _warnings(r, choice, compute, cost, advice, good_days)
    result["assumptions"] = _assumptions(r, choice, eq, pr, problem.stack)
    result["assumptions"] += goodput_assumptions(r) if goodput is not None else []
    return result
