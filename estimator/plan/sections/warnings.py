"""result.warnings and result.budget: advice shown as warnings, the plan's own warnings (input notes,
an assumed shape, ignored config.json fields, a global batch rounded far from the one asked, a
timed-out search, a missed deadline, over budget),
and the budget's status (money.budget.status)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from estimator.cluster.supernode import cards_quantum, supernode_entry
from estimator.contract.resolve import Resolved
from estimator.errors import ScenarioError
from estimator.limits import SEARCH_SECONDS
from estimator.money import budget as budget_rules
from estimator.plan.chosen import ClusterChoice
from estimator.plan.problem import evaluate_at
from estimator.plan.result import AdviceItem, BudgetSection, ComputeSection, CostSection, PlanWarning
from estimator.plan.sections.layout import planned_batch_tokens
from estimator.words import counted


def warnings(
    r: Resolved,
    choice: ClusterChoice,
    compute: ComputeSection,
    cost: CostSection,
    advice: Sequence[AdviceItem],
    goodput_days: float | None = None,
) -> list[PlanWarning]:
    """Advice (as warnings) and the plan's own warnings: {code, severity, message, params};
    `goodput_days` the wall-clock days with failures (the deadline is judged on them)."""
    out = [
        PlanWarning(
            code=a.code, severity=a.severity, message=a.message, params=a.params, message_code=a.message_code
        )
        for a in advice
    ]
    out += _input_warnings(r)
    whole = whole_servers_warning(r, choice, compute.wall_clock_days)
    out += [whole] if whole is not None else []
    batch = batch_warning(r, choice)
    out += [batch] if batch is not None else []
    found = choice.layouts
    if found.timed_out:
        out.append(
            PlanWarning(
                code="layout-search-timed-out",
                severity="warning",
                message=f"The layout search stopped at its {SEARCH_SECONDS:g}-second budget after timing "
                f"{found.timed:,} of {found.feasible:,} layouts that fit; the layout shown is the best of those.",
                params={"seconds": SEARCH_SECONDS, "timed": found.timed, "feasible": found.feasible},
            )
        )
    out += _deadline_warnings(compute, goodput_days) + _budget_warnings(r, cost) + _fewer_than_bought(choice)
    return out


# [U] judgement: a global batch moved by more than this share from the one asked changes the run's
# optimisation (tokens per step, so the learning-rate schedule), not just its rounding to the DP size
BATCH_NOTE_SHARE = 0.10


def batch_warning(r: Resolved, choice: ClusterChoice) -> PlanWarning | None:
    """global-batch-rounded: the chosen layout trains with a global batch (whole micro-batches per DP
    rank, sections.layout.planned_batch_tokens) more than BATCH_NOTE_SHARE away from
    training.global_batch_tokens; params in sequences and tokens, batch_ratio = planned / asked
    (dimensionless). None without a layout or within the share."""
    best = choice.layouts.best
    if best is None:
        return None
    asked = float(r.scenario.training.global_batch_tokens)
    planned = planned_batch_tokens(r, best)
    ratio = planned / asked
    if abs(ratio - 1.0) <= BATCH_NOTE_SHARE:
        return None
    seqs, asked_seqs = planned // r.seq_len, max(1, round(asked / r.seq_len))
    params = {
        "sequences": seqs,
        "asked_sequences": asked_seqs,
        "tokens": planned,
        "asked_tokens": int(asked),
        "batch_ratio": ratio,
        "dp": best.dp,
        "micro_batches": best.micro_batches,
        "micro_batch_size": best.micro_batch_size,
    }
    message = (
        f"The chosen layout trains with a global batch of {seqs:,} sequences ({planned:,} tokens), not the "
        f"{asked_seqs:,} asked ({int(asked):,} tokens, {ratio - 1:+.0%}): DP {best.dp:,} x "
        f"{best.micro_batches:,} micro-batches of {best.micro_batch_size:,}. To keep the batch, ask for a "
        "multiple of DP x micro-batch x seq_len or fix parallelism.dp."
    )
    return PlanWarning(code="global-batch-rounded", severity="warning", message=message, params=params)


def _fewer_than_bought(choice: ClusterChoice) -> list[PlanWarning]:
    """A budget-sized plan on fewer cards than the budget buys (plan.budget_choice: they train
    faster)."""
    most = choice.budget_most_cards
    if most is None:
        return []
    return [
        PlanWarning(
            code="budget-fastest-not-most",
            severity="info",
            message=f"The budget buys up to {counted(most, 'card')}, but fewer train faster: the plan takes "
            f"the {counted(choice.cards, 'card')} that train fastest of the sizes it buys.",
            params={"most_cards": most, "cards": choice.cards},
        )
    ]


PARTIAL_NODE_GAIN = 1.1  # the whole units' cards train at least this much faster: worth a warning


def whole_servers_warning(r: Resolved, choice: ClusterChoice, days: float) -> PlanWarning | None:
    """Given cards that leave the last unit bought part-used (a server, or a supernode where the
    accelerator lives in one: cluster.supernode.cards_quantum; contract.resolve's input note) are
    compared with the cards of the whole units the plan pays for (plan.problem.evaluate_at): where
    those train at least PARTIAL_NODE_GAIN times as fast, the warning gives their MFU and days
    (`days`, before failures, times the tokens/s ratio). Whole servers keep the same servers,
    network and storage, so the same capex (`partial-node-slow`); whole supernodes keep their nodes
    and scale-up plane, priced whole either way (`partial-supernode-slow`). None with an MFU given
    (both would train at it) or no layout."""
    cards, per = r.scenario.cluster.cards, cards_quantum(r)
    best = choice.layouts.best
    if cards is None or cards % per == 0 or best is None or choice.mfu_source != "predicted":
        return None
    whole = -(-cards // per) * per
    try:
        whole_best = evaluate_at(r, whole)[1].best
    except ScenarioError:  # the network cannot build the whole units' fabric
        return None
    if whole_best is None or whole_best.tokens_per_s < PARTIAL_NODE_GAIN * best.tokens_per_s:
        return None
    params = {
        "cards": cards,
        "whole": whole,
        "mfu": choice.mfu,
        "whole_mfu": float(whole_best.predicted_mfu),
        "days": days,
        "whole_days": days * best.tokens_per_s / whole_best.tokens_per_s,
    }
    if per != r.cards_per_node:
        return _whole_supernodes_warning(r, per, params)
    params["nodes"] = whole // per
    message = (
        f"{cards:,} cards leave the last of {whole // per:,} servers part-used and split poorly (MFU "
        f"{choice.mfu:.1%}, {days:.1f} days before failures); the {whole:,} cards of those servers would "
        f"train at MFU {params['whole_mfu']:.1%} in {params['whole_days']:.1f} days, for the same capex."
    )
    return PlanWarning(code="partial-node-slow", severity="warning", message=message, params=params)


def _whole_supernodes_warning(r: Resolved, per: int, params: dict[str, Any]) -> PlanWarning:
    """partial-supernode-slow (whole_servers_warning): the idle cards of the supernodes bought whole
    would train the run this much sooner."""
    sn = supernode_entry(r)
    name = sn.name if sn is not None else ""
    cards, whole = int(params["cards"]), int(params["whole"])
    params |= {
        "supernodes": whole // per,
        "supernode": sn.id if sn is not None else "",
        "idle_cards": whole - cards,
    }
    message = (
        f"{cards:,} cards leave {whole - cards:,} of the {whole:,} cards of {whole // per} x {name} idle "
        f"(MFU {params['mfu']:.1%}, {params['days']:.1f} days before failures); the supernodes are bought "
        f"whole, and all {whole:,} of their cards would train at MFU {params['whole_mfu']:.1%} in "
        f"{params['whole_days']:.1f} days."
    )
    return PlanWarning(code="partial-supernode-slow", severity="warning", message=message, params=params)


def _input_warnings(r: Resolved) -> list[PlanWarning]:
    """Notes on the input, the shape assumed for a model known only by its size, ignored fields."""
    out = [
        PlanWarning(code="input-note", severity="info", message=note, params={"note": note})
        for note in r.notes
    ]
    if r.assumed_shape is not None:  # a model known only by its size: say what was assumed
        shape = r.assumed_shape
        out.append(
            PlanWarning(code=shape["code"], severity="info", message=shape["message"], params=shape["params"])
        )
    ignored = r.scenario.ignored_model_fields
    if ignored:
        out.append(
            PlanWarning(
                code="config-fields-ignored",
                severity="info",
                message=f"{counted(len(ignored), 'config.json field')} the estimator does not read "
                + ("was" if len(ignored) == 1 else "were")
                + " ignored: "
                + ", ".join(ignored)
                + ".",
                params={"count": len(ignored), "fields": ", ".join(ignored)},
            )
        )
    return out


def _deadline_warnings(compute: ComputeSection, goodput_days: float | None) -> list[PlanWarning]:
    """The deadline missed (days with failures when there are any): a scenario sized by its deadline
    misses it only where no size the scan visited meets it (plan.deadline._scan keeps the fastest);
    with cluster.deadline_confidence, no size reached that chance; met at the planned MFU but more
    likely missed than not over the MFU range, the lever (_likely_missed)."""
    if compute.target_days is None:
        return []
    if compute.meets_target is not False:
        return _likely_missed(compute)
    days = goodput_days if goodput_days is not None else compute.wall_clock_days
    if compute.deadline_confidence_probability is not None:
        return [_confidence_missed(compute, days)]
    given = compute.mfu_source == "given"  # the MFU does not fall with the cards: the batch is no lever
    batch = (
        ""
        if given
        else "raise the global batch (training.global_batch_tokens: more cards help only while each "
        "replica keeps enough micro-batches) or "
    )
    return [
        PlanWarning(
            code="deadline-missed",
            severity="warning",
            message=f"No cluster size meets the {compute.target_days:g}-day target: the plan keeps the fastest "
            f"the sizing found, {compute.cards:,} cards in {days:.1f} days. Allow more days, train fewer "
            f"tokens, {batch}lose less time to interruptions (reliability: faster restarts, in-memory "
            "checkpoints).",
            params={"days": days, "target_days": compute.target_days, "cards": compute.cards},
            message_code="deadline-missed.mfu-given" if given else None,
        )
    ]


LIKELY_MISSED = 0.5  # a plan sized at the planned MFU that misses more often than this says so


def _likely_missed(compute: ComputeSection) -> list[PlanWarning]:
    """A plan sized at the planned MFU that meets its deadline there but, over the MFU range and the
    interruption spread (compute.deadline_miss_probability), misses it more often than LIKELY_MISSED:
    the lever is cluster.deadline_confidence (plan.deadline_risk)."""
    miss = compute.deadline_miss_probability
    if compute.deadline_confidence_probability is not None or miss is None or miss <= LIKELY_MISSED:
        return []
    return [
        PlanWarning(
            code="deadline-likely-missed",
            severity="info",
            message=f"Sized at the planned MFU the plan meets the {compute.target_days:g}-day target, but over "
            f"the MFU range{' and the interruptions' if compute.deadline_miss_counts_failures else ''} it "
            f"misses it with a {miss:.0%} chance. To size for the chance of meeting it, set "
            "cluster.deadline_confidence (for example 0.9).",
            params={"probability": miss, "target_days": compute.target_days},
        )
    ]


def _confidence_missed(compute: ComputeSection, days: float) -> PlanWarning:
    """No size the scan visited reaches cluster.deadline_confidence (plan.deadline_risk.ConfidenceRule)."""
    q, miss = (
        float(compute.deadline_confidence_probability or 0.0),
        float(compute.deadline_miss_probability or 0.0),
    )
    return PlanWarning(
        code="deadline-confidence-missed",
        severity="warning",
        message=f"No cluster size reaches a {q:.0%} chance of meeting the {compute.target_days:g}-day target: "
        f"the plan keeps {compute.cards:,} cards, {days:.1f} days with a {miss:.0%} chance of missing it "
        "(the fastest the sizing found). Ask for less confidence (cluster.deadline_confidence), allow more "
        "days, train fewer tokens or lose less time to interruptions (reliability: faster restarts, "
        "in-memory checkpoints).",
        params={
            "confidence": q,
            "probability": miss,
            "days": days,
            "target_days": compute.target_days,
            "cards": compute.cards,
        },
    )


def _budget_warnings(r: Resolved, cost: CostSection) -> list[PlanWarning]:
    """Both buying and renting over the capital budget (money in the report's currency)."""
    budget = budget_of(r)
    capex, cloud = cost.capex_total_in_currency, cost.run_cloud_in_currency
    if budget is None or not (capex > budget and (cloud or 0) > budget):
        return []
    return [
        PlanWarning(
            code="over-budget",
            severity="warning",
            message=f"Both buying ({capex:,.0f}) and renting "
            f"({cloud:,.0f}) exceed the budget of {budget:,.0f} {cost.currency}.",
            params={"capex": capex, "cloud": cloud, "budget": budget, "currency": cost.currency},
        )
    ]


def budget_of(r: Resolved) -> float | None:
    """The capital budget: cost.budget, else the cluster.budget the cluster was sized by."""
    c = r.scenario
    return c.cost.budget if c.cost.budget is not None else c.cluster.budget


def budget_section(r: Resolved, cost: CostSection) -> BudgetSection | None:
    """Budget status (within / over by how much); what the budget buys (`affords`) is the
    budget-sized plan, added by plan.sizing.budget_affords (the same search as a budget-sized plan)."""
    budget = budget_of(r)
    if budget is None:
        return None
    status = budget_rules.status(cost.capex_total_in_currency, float(budget))
    return BudgetSection(
        budget_in_currency=status["budget"],
        capex_in_currency=status["capex"],
        within=status["within"],
        over_by_in_currency=status["over_by"],
        headroom_in_currency=status["headroom"],
        share=status["share"],
        currency=cost.currency,
        sized_by_budget=r.scenario.cluster.budget is not None,
    )
