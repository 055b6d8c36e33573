"""'The working' as labelled, unit-bearing tables, and the layout's story in plain sentences (why the
chosen layout beat the runners-up). Pure functions of the stored result (no database)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from estimator.contract.readings import given_mfu_step_s

from . import formatting as f
from . import goodput, labels, stack_labels
from .summary import dig

# section -> [(label, path in the result, formatting kind)]; money in the report's currency
TABLES = [
    (
        "compute",
        gettext_lazy("Compute"),
        [
            (gettext_lazy("Training compute"), "compute.training_flop", "flops"),
            (gettext_lazy("Compute per token"), "compute.flop_per_token", "flops"),
            (gettext_lazy("Training tokens"), "compute.tokens", "big"),
            (gettext_lazy("Peak per card"), "compute.peak_flops_per_card", "flop_per_s"),
            (gettext_lazy("Cards"), "compute.cards", "count"),
            (gettext_lazy("Servers"), "compute.nodes", "count"),
            (gettext_lazy("Cards per server"), "compute.cards_per_node", "count"),
            (gettext_lazy("MFU"), "compute.mfu", "percent"),
            (gettext_lazy("Throughput (tokens/s)"), "compute.tokens_per_s", "big"),
            (gettext_lazy("Card-hours"), "compute.accelerator_hours", "big"),
            (gettext_lazy("Wall-clock time"), "compute.wall_clock_days", "days"),
            (gettext_lazy("Deadline"), "compute.target_days", "days"),
            (
                gettext_lazy("Chance of meeting the deadline (sized for)"),
                "compute.deadline_confidence",
                "percent",
            ),
            (
                gettext_lazy("Probability of missing the deadline"),
                "compute.deadline_miss_probability",
                "percent",
            ),
        ],
    ),
    ("goodput", gettext_lazy("Failures, checkpoints and restarts"), goodput.TABLE),
    (
        "parallelism",
        gettext_lazy("Parallel layout"),
        [
            (gettext_lazy("Tensor parallel (TP)"), "parallelism.tp", "count"),
            (gettext_lazy("Pipeline parallel (PP)"), "parallelism.pp", "count"),
            (gettext_lazy("Data parallel (DP)"), "parallelism.dp", "count"),
            (gettext_lazy("Expert parallel (EP)"), "parallelism.ep", "count"),
            (gettext_lazy("Expert tensor parallel"), "parallelism.expert_tp", "count"),
            (gettext_lazy("Expert data parallel"), "parallelism.expert_dp", "count"),
            (gettext_lazy("Context parallel (CP)"), "parallelism.cp", "count"),
            (gettext_lazy("ZeRO stage"), "parallelism.zero_stage", "count"),
            (gettext_lazy("Activation recomputation"), "parallelism.recompute", "recompute"),
            (gettext_lazy("Micro-batch size"), "parallelism.micro_batch_size", "count"),
            (gettext_lazy("Micro-batches per step"), "parallelism.micro_batches", "count"),
            (gettext_lazy("Layers on the first pipeline device"), "parallelism.first_stage_layers", "count"),
            (gettext_lazy("Layers on the last pipeline device"), "parallelism.last_stage_layers", "count"),
            (gettext_lazy("Global batch (tokens)"), "parallelism.global_batch_tokens", "big"),
            (gettext_lazy("Pipeline bubble"), "parallelism.bubble_fraction", "percent"),
            (gettext_lazy("Step time"), "parallelism.step_time_s", "seconds"),
            (gettext_lazy("Predicted MFU"), "parallelism.predicted_mfu", "percent"),
        ],
    ),
    (
        "memory",
        gettext_lazy("Memory per card"),
        [
            (gettext_lazy("Weights"), "memory.per_card_bytes.weights", "bytes"),
            (gettext_lazy("Gradients"), "memory.per_card_bytes.gradients", "bytes"),
            (gettext_lazy("Optimizer states"), "memory.per_card_bytes.optimizer", "bytes"),
            (gettext_lazy("Activations"), "memory.per_card_bytes.activations", "bytes"),
            (gettext_lazy("Buffers and other"), "memory.per_card_bytes.other", "bytes"),
            (gettext_lazy("Total"), "memory.per_card_bytes.total", "bytes"),
            (gettext_lazy("HBM per card"), "memory.hbm_bytes", "bytes"),
            (gettext_lazy("Fits"), "memory.fits", "auto"),
        ],
    ),
    (
        "network",
        gettext_lazy("Network"),
        [
            (gettext_lazy("Tiers"), "network.tiers", "count"),
            (gettext_lazy("Endpoints (NIC ports)"), "network.endpoints", "count"),
            (gettext_lazy("Port speed (Gb/s)"), "network.port_gbps", "count"),
            (gettext_lazy("Switch ports"), "network.switch_ports", "count"),
            (gettext_lazy("Leaf switches"), "network.leaf_switches", "count"),
            (gettext_lazy("Spine switches"), "network.spine_switches", "count"),
            (gettext_lazy("Core switches"), "network.core_switches", "count"),
            (gettext_lazy("Switches in all"), "network.total_switches", "count"),
            (gettext_lazy("Transceivers"), "network.transceivers", "count"),
            (gettext_lazy("Oversubscription"), "network.oversubscription", "ratio"),
            (gettext_lazy("Bisection bandwidth"), "network.bisection_bandwidth_bps", "bits_per_s"),
        ],
    ),
    (
        "storage",
        gettext_lazy("Storage"),
        [
            (gettext_lazy("One checkpoint"), "storage.checkpoint_bytes", "bytes"),
            (gettext_lazy("Dataset"), "storage.dataset_bytes", "bytes"),
            (gettext_lazy("Hot tier capacity"), "storage.hot.capacity_bytes", "bytes"),
            (gettext_lazy("Hot tier write bandwidth"), "storage.hot.write_bytes_per_s", "bytes_per_s"),
            (gettext_lazy("Hot tier drives"), "storage.hot.drives", "count"),
            (gettext_lazy("Warm tier capacity"), "storage.warm.capacity_bytes", "bytes"),
            (gettext_lazy("Warm tier drives"), "storage.warm.drives", "count"),
        ],
    ),
    (
        "power",
        gettext_lazy("Power"),
        [
            (gettext_lazy("IT load"), "power.it_w", "watts"),
            (gettext_lazy("PUE"), "power.pue", "auto"),
            (gettext_lazy("Facility power"), "power.facility_w", "watts"),
            (gettext_lazy("Energy over the run"), "power.energy_wh", "watt_hours"),
        ],
    ),
    (
        "cost",
        gettext_lazy("Cost"),
        [
            (gettext_lazy("Compute (servers with cards)"), "cost.capex.compute", "money_full"),
            (gettext_lazy("Network"), "cost.capex.network", "money_full"),
            (gettext_lazy("Storage"), "cost.capex.storage", "money_full"),
            (gettext_lazy("Cluster cost (capex)"), "cost.capex.total", "money_full"),
            (gettext_lazy("One run, owned"), "cost.run.owned", "money_full"),
            (gettext_lazy("One run, cloud on demand"), "cost.run.cloud", "money_full"),
            (gettext_lazy("One run, cloud reserved"), "cost.run.cloud_reserved", "money_full"),
            (gettext_lazy("Owned cost per card-hour"), "cost.owned_per_card_hour", "money"),
            (gettext_lazy("Cloud price per card-hour"), "cost.cloud_per_card_hour", "money"),
            (gettext_lazy("Cloud break-even"), "cost.cloud_break_even_months", "months"),
        ],
    ),
]

RECOMPUTE = {
    "none": gettext_lazy("none"),
    "selective": gettext_lazy("selective"),
    "full": gettext_lazy("full"),
    "partial": gettext_lazy("partial (fewest layers that fit)"),
}
REJECTED = {
    "sequence-parallel-needs-tp": gettext_lazy("sequence parallelism needs TP > 1"),
    "pp-not-dividing-layers": gettext_lazy("pipeline stages do not divide the layers"),
    "virtual-stages-need-pp": gettext_lazy("interleaving needs pipeline stages"),
    "virtual-stages-not-dividing-layers": gettext_lazy("interleaved stages do not divide the layers"),
    "dp-not-integral": gettext_lazy("cards not divisible by TP x PP"),
    "batch-off-by-over-25pct": gettext_lazy("global batch off by more than 25%"),
    "zero-stage-incompatible-with-pp": gettext_lazy("ZeRO stage not usable with pipelines"),
    "moe-tp-without-sequence-parallel": gettext_lazy("MoE with TP needs sequence parallelism"),
    "zero-stage-not-run-by-stack": gettext_lazy("ZeRO stage not run by the software stack"),
    "partial-recompute-redundant": gettext_lazy("partial recomputation not needed"),
    "out-of-memory": gettext_lazy("does not fit in HBM"),
    "tp-not-dividing-heads": gettext_lazy("TP does not divide the attention heads"),
    "stage-layers-not-splitting": gettext_lazy(
        "the other pipeline devices cannot share the remaining layers evenly"
    ),
    "expert-tp-crosses-scaleup-domain": gettext_lazy("expert TP exceeds the scale-up domain"),
    "ep-not-folding-into-tp-cp-dp": gettext_lazy("EP x expert TP does not divide TP x CP x DP"),
}


def value(v, kind: str, currency: str) -> str:
    if kind == "money_full":
        return f.money_full(v, currency)
    if kind == "recompute":
        return str(RECOMPUTE.get(v, v)) if v is not None else f.DASH
    return f.by_kind(v, kind, currency)


def tables(result: dict, currency: str) -> list[dict]:
    """[{key, title, rows: [(label, text)]}] for every section the result has."""
    out = []
    for key, title, rows in TABLES:
        shown = [
            (str(label), value(dig(result, path), kind, currency))
            for label, path, kind in rows
            if dig(result, path) is not None
        ]
        if shown:
            out.append({"key": key, "title": str(title), "rows": shown})
    stack = stack_labels.stack_table(result)
    if stack is not None:
        out.append(stack)
    return out


def step_rows(result: dict) -> list[tuple[str, str, str]]:
    """The step time by term: (term, time, share of the step)."""
    breakdown = dig(result, "parallelism.breakdown_s") or {}
    total = dig(result, "parallelism.step_time_s")
    rows = []
    for key, v in breakdown.items() if isinstance(breakdown, dict) else []:
        if isinstance(v, int | float) and v > 0:
            share = v / total if isinstance(total, int | float) and total > 0 else None
            rows.append((labels.step_term(key), f.seconds(v), f.percent(share)))
    return rows


def layout_name(p: dict) -> str:
    parts = [f"{k.upper()} {p[k]}" for k in ("tp", "pp", "dp", "ep", "cp") if isinstance(p.get(k), int)]
    parts = [x for x in parts if not x.endswith(" 1") or x.startswith(("TP", "PP", "DP"))]
    text = " × ".join(parts)
    extra = []  # what tells two layouts of the same degrees apart, then ZeRO and recomputation
    stages = p.get("virtual_stages")
    if isinstance(stages, int) and stages > 1:
        extra.append(_("%(stages)s virtual stages") % {"stages": stages})
    if isinstance(p.get("micro_batch_size"), int):
        extra.append(_("micro-batch %(size)s") % {"size": p["micro_batch_size"]})
    if p.get("zero_stage") is not None:
        extra.append(_("ZeRO %(stage)s") % {"stage": p["zero_stage"]})
    if p.get("recompute"):
        extra.append(_("recompute %(mode)s") % {"mode": RECOMPUTE.get(p["recompute"], p["recompute"])})
    return text + (" (" + ", ".join(extra) + ")" if extra else "")


def _biggest_loss(best: dict, other: dict) -> str | None:
    a, b = best.get("breakdown_s") or {}, other.get("breakdown_s") or {}
    diffs = {k: (b.get(k) or 0) - (a.get(k) or 0) for k in set(a) | set(b)}
    diffs = {k: v for k, v in diffs.items() if isinstance(v, int | float) and v > 0}
    return max(diffs, key=lambda k: diffs[k]) if diffs else None


TIE_REASONS = {
    "lower-zero": gettext_lazy("the lower ZeRO stage"),
    "less-recompute": gettext_lazy("less recomputation"),
    "less-memory": gettext_lazy("less memory"),
}


def _given_step(result: dict) -> list[str]:
    """With an MFU given, the step the plan runs (readings.given_mfu_step_s, the one the days count)."""
    step = given_mfu_step_s(result)
    if step is None:
        return []
    return [
        _(
            "The plan runs at the %(mfu)s MFU you gave, a step of %(step)s: the layout model's "
            "prediction only ranks the layouts."
        )
        % {"mfu": f.percent(dig(result, "compute.mfu")), "step": f.seconds(step)}
    ]


def story(result: dict) -> list[str]:
    """The layout chosen and why it beat the runners-up, in the reader's language."""
    best = result.get("parallelism")
    layout = result.get("layout") or {}
    if not isinstance(best, dict):
        return [_("No parallel layout fits in card memory on this cluster.")]
    values = {
        "layout": layout_name(best),
        "step": f.seconds(best.get("step_time_s")),
        "mfu": f.percent(best.get("predicted_mfu")),
        "evaluated": f.count(layout.get("evaluated")),
        "feasible": f.count(layout.get("feasible")),
    }
    choice = layout.get("choice")
    if isinstance(choice, dict) and choice.get("code") == "tie":  # estimator.layout.choice: a tie
        params = choice.get("params") or {}
        reason = str(params.get("reason"))
        values |= {
            "faster_by": f.percent(params.get("faster_by")),
            "reason": str(TIE_REASONS.get(reason, reason)),
        }
        first = _(
            "Chosen: %(layout)s. One step takes %(step)s at %(mfu)s MFU; a runner-up is %(faster_by)s "
            "faster, within the 2%% the model cannot tell apart, so the layout with %(reason)s is "
            "preferred (%(evaluated)s layouts evaluated, %(feasible)s fit in memory)."
        )
    else:
        first = ngettext(
            "Chosen: %(layout)s. One step takes %(step)s at %(mfu)s MFU; it is the only layout "
            "evaluated (%(feasible)s fits in memory).",
            "Chosen: %(layout)s. One step takes %(step)s at %(mfu)s MFU; it is the fastest of the "
            "%(evaluated)s layouts evaluated (%(feasible)s fit in memory).",
            f.plural_n(values["evaluated"]),
        )
    out = [first % values, *_given_step(result)]
    r0 = best.get("tokens_per_s")
    for other in (layout.get("runners_up") or [])[:3]:
        if not isinstance(other, dict) or not isinstance(r0, int | float) or r0 <= 0:
            continue
        r1, t1 = other.get("tokens_per_s"), other.get("step_time_s")
        if not isinstance(r1, int | float) or r1 <= 0 or not isinstance(t1, int | float):
            continue
        term = _biggest_loss(best, other)
        # by throughput, as the search ranks (a step may hold a different number of tokens)
        template = (
            _("%(layout)s: %(gap)s slower (%(step)s per step)")
            if r1 <= r0
            else _("%(layout)s: %(gap)s faster, within the tie band (%(step)s per step)")
        )
        text = template % {
            "layout": layout_name(other),
            "gap": f.percent(abs(r0 / r1 - 1)),
            "step": f.seconds(t1),
        }
        if term:
            text += _(", mostly more %(term)s") % {"term": labels.in_sentence(labels.step_term(term))}
        out.append(_("%(sentence)s.") % {"sentence": text})  # a full stop of the reader's language
    return out


def rejected(result: dict) -> list[tuple[str, str]]:
    items = (dig(result, "layout.rejected") or {}).items()
    ranked = sorted(items, key=lambda kv: -kv[1] if isinstance(kv[1], int | float) else 0)
    return [(str(REJECTED.get(k, k)), f.count(n)) for k, n in ranked]


COLUMNS = {
    "tp": "TP",
    "pp": "PP",
    "dp": "DP",
    "ep": "EP",
    "cp": "CP",
    "micro_batch_size": gettext_lazy("Micro-batch size"),
    "virtual_stages": gettext_lazy("Virtual stages"),
    "zero_stage": gettext_lazy("ZeRO stage"),
    "recompute": gettext_lazy("Recompute"),
    "step_time_s": gettext_lazy("Step time"),
    "predicted_mfu": gettext_lazy("Predicted MFU"),
    "bubble_fraction": gettext_lazy("Pipeline bubble"),
    "memory_bytes": gettext_lazy("Memory per card"),
    "memory_total_bytes": gettext_lazy("Memory per card"),
    "fits": gettext_lazy("Fits"),
    "micro_batches": gettext_lazy("Micro-batches per step"),
    "recompute_fraction": gettext_lazy("Layers recomputed"),
    "sequence_parallel": gettext_lazy("Sequence parallel"),
    "distributed_optimizer": gettext_lazy("Distributed optimizer"),
    "predicted_hfu": gettext_lazy("Predicted HFU"),
    "tokens_per_s": gettext_lazy("Throughput (tokens/s)"),
    # a MoE layout's expert grouping and a pipeline's uneven ends (the labels of reports.labels)
    "expert_tp": gettext_lazy("Expert tensor parallel"),
    "expert_dp": gettext_lazy("Expert data parallel"),
    "first_stage_layers": gettext_lazy("Layers on the first pipeline device"),
    "last_stage_layers": gettext_lazy("Layers on the last pipeline device"),
}


def column_label(key: str) -> str:
    return str(COLUMNS.get(key, key))


def cell(key: str, v, currency: str) -> str:
    if key == "recompute":
        return value(v, "recompute", currency)
    return f.for_key(key, v, currency)
