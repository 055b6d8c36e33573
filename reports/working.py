"""'The working' as labelled, unit-bearing tables, and the layout's story in plain sentences (why the
chosen layout beat the runners-up). Pure functions of the stored result (no database)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as L

from . import formatting as f
from .summary import dig

# section -> [(label, path in the result, formatting kind)]; money in the report's currency
TABLES = [
    (
        "compute",
        L("Compute"),
        [
            (L("Training compute"), "compute.training_flop", "flops"),
            (L("Compute per token"), "compute.flop_per_token", "flops"),
            (L("Training tokens"), "compute.tokens", "big"),
            (L("Peak per card"), "compute.peak_flops_per_card", "flop_per_s"),
            (L("Cards"), "compute.cards", "count"),
            (L("Servers"), "compute.nodes", "count"),
            (L("Cards per server"), "compute.cards_per_node", "count"),
            (L("MFU"), "compute.mfu", "percent"),
            (L("Throughput (tokens/s)"), "compute.tokens_per_s", "big"),
            (L("Card-hours"), "compute.accelerator_hours", "big"),
            (L("Wall-clock time"), "compute.wall_clock_days", "days"),
            (L("Deadline"), "compute.target_days", "days"),
            (L("Probability of missing the deadline"), "compute.deadline_miss_probability", "percent"),
        ],
    ),
    (
        "parallelism",
        L("Parallel layout"),
        [
            (L("Tensor parallel (TP)"), "parallelism.tp", "count"),
            (L("Pipeline parallel (PP)"), "parallelism.pp", "count"),
            (L("Data parallel (DP)"), "parallelism.dp", "count"),
            (L("Expert parallel (EP)"), "parallelism.ep", "count"),
            (L("Context parallel (CP)"), "parallelism.cp", "count"),
            (L("ZeRO stage"), "parallelism.zero_stage", "count"),
            (L("Activation recomputation"), "parallelism.recompute", "recompute"),
            (L("Micro-batch size"), "parallelism.micro_batch_size", "count"),
            (L("Micro-batches per step"), "parallelism.micro_batches", "count"),
            (L("Global batch (tokens)"), "parallelism.global_batch_tokens", "big"),
            (L("Pipeline bubble"), "parallelism.bubble_fraction", "percent"),
            (L("Step time"), "parallelism.step_time_s", "seconds"),
            (L("Predicted MFU"), "parallelism.predicted_mfu", "percent"),
        ],
    ),
    (
        "memory",
        L("Memory per card"),
        [
            (L("Weights"), "memory.per_card_bytes.weights", "bytes"),
            (L("Gradients"), "memory.per_card_bytes.gradients", "bytes"),
            (L("Optimizer states"), "memory.per_card_bytes.optimizer", "bytes"),
            (L("Activations"), "memory.per_card_bytes.activations", "bytes"),
            (L("Buffers and other"), "memory.per_card_bytes.other", "bytes"),
            (L("Total"), "memory.per_card_bytes.total", "bytes"),
            (L("HBM per card"), "memory.hbm_bytes", "bytes"),
            (L("Fits"), "memory.fits", "auto"),
        ],
    ),
    (
        "network",
        L("Network"),
        [
            (L("Tiers"), "network.tiers", "count"),
            (L("Endpoints (NIC ports)"), "network.endpoints", "count"),
            (L("Port speed (Gb/s)"), "network.port_gbps", "count"),
            (L("Switch ports"), "network.switch_ports", "count"),
            (L("Leaf switches"), "network.leaf_switches", "count"),
            (L("Spine switches"), "network.spine_switches", "count"),
            (L("Core switches"), "network.core_switches", "count"),
            (L("Switches in all"), "network.total_switches", "count"),
            (L("Transceivers"), "network.transceivers", "count"),
            (L("Oversubscription"), "network.oversubscription", "ratio"),
            (L("Bisection bandwidth"), "network.bisection_bandwidth_bps", "bits_per_s"),
        ],
    ),
    (
        "storage",
        L("Storage"),
        [
            (L("One checkpoint"), "storage.checkpoint_bytes", "bytes"),
            (L("Dataset"), "storage.dataset_bytes", "bytes"),
            (L("Hot tier capacity"), "storage.hot.capacity_bytes", "bytes"),
            (L("Hot tier write bandwidth"), "storage.hot.write_bytes_per_s", "bytes_per_s"),
            (L("Hot tier drives"), "storage.hot.drives", "count"),
            (L("Warm tier capacity"), "storage.warm.capacity_bytes", "bytes"),
            (L("Warm tier drives"), "storage.warm.drives", "count"),
        ],
    ),
    (
        "power",
        L("Power"),
        [
            (L("IT load"), "power.it_w", "watts"),
            (L("PUE"), "power.pue", "auto"),
            (L("Facility power"), "power.facility_w", "watts"),
            (L("Energy over the run"), "power.energy_wh", "watt_hours"),
        ],
    ),
    (
        "cost",
        L("Cost"),
        [
            (L("Compute (servers with cards)"), "cost.capex.compute", "money_full"),
            (L("Network"), "cost.capex.network", "money_full"),
            (L("Storage"), "cost.capex.storage", "money_full"),
            (L("Cluster cost (capex)"), "cost.capex.total", "money_full"),
            (L("One run, owned"), "cost.run.owned", "money_full"),
            (L("One run, cloud on demand"), "cost.run.cloud", "money_full"),
            (L("One run, cloud reserved"), "cost.run.cloud_reserved", "money_full"),
            (L("Owned cost per card-hour"), "cost.owned_per_card_hour", "money"),
            (L("Cloud price per card-hour"), "cost.cloud_per_card_hour", "money"),
            (L("Cloud break-even"), "cost.cloud_break_even_months", "months"),
        ],
    ),
]

RECOMPUTE = {
    "none": L("none"),
    "selective": L("selective"),
    "full": L("full"),
    "partial": L("partial (fewest layers that fit)"),
}
STEP_TERMS = {
    "compute": L("Compute"),
    "bubble": L("Pipeline bubble"),
    "tp_comm": L("TP communication"),
    "pp_comm": L("PP communication"),
    "dp_comm": L("DP communication"),
    "ep_comm": L("EP communication"),
    "cp_comm": L("CP communication"),
    "optimizer": L("Optimizer"),
    "recompute": L("Recompute"),
}
REJECTED = {
    "sequence-parallel-needs-tp": L("sequence parallelism needs TP > 1"),
    "pp-not-dividing-layers": L("pipeline stages do not divide the layers"),
    "virtual-stages-need-pp": L("interleaving needs pipeline stages"),
    "virtual-stages-not-dividing-layers": L("interleaved stages do not divide the layers"),
    "dp-not-integral": L("cards not divisible by TP x PP"),
    "batch-off-by-over-25pct": L("global batch off by more than 25%"),
    "zero-stage-incompatible-with-pp": L("ZeRO stage not usable with pipelines"),
    "partial-recompute-redundant": L("partial recomputation not needed"),
    "out-of-memory": L("does not fit in HBM"),
    "tp-not-dividing-heads": L("TP does not divide the attention heads"),
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
    return out


def step_rows(result: dict) -> list[tuple[str, str, str]]:
    """The step time by term: (term, time, share of the step)."""
    breakdown = dig(result, "parallelism.breakdown_s") or {}
    total = dig(result, "parallelism.step_time_s")
    rows = []
    for key, v in breakdown.items() if isinstance(breakdown, dict) else []:
        if isinstance(v, int | float) and v > 0:
            share = v / total if isinstance(total, int | float) and total > 0 else None
            rows.append((str(STEP_TERMS.get(key, key)), f.seconds(v), f.percent(share)))
    return rows


def layout_name(p: dict) -> str:
    parts = [f"{k.upper()} {p[k]}" for k in ("tp", "pp", "dp", "ep", "cp") if isinstance(p.get(k), int)]
    parts = [x for x in parts if not x.endswith(" 1") or x.startswith(("TP", "PP", "DP"))]
    text = " × ".join(parts)
    extra = []
    if p.get("zero_stage") is not None:
        extra.append(_("ZeRO %(stage)s") % {"stage": p["zero_stage"]})
    if p.get("recompute"):
        extra.append(_("recompute %(mode)s") % {"mode": RECOMPUTE.get(p["recompute"], p["recompute"])})
    return text + (" (" + ", ".join(extra) + ")" if extra else "")


def _biggest_loss(best: dict, other: dict) -> str | None:
    a, b = best.get("breakdown_s") or {}, other.get("breakdown_s") or {}
    diffs = {k: (b.get(k) or 0) - (a.get(k) or 0) for k in set(a) | set(b)}
    diffs = {k: v for k, v in diffs.items() if isinstance(v, int | float) and v > 0}
    return max(diffs, key=diffs.get) if diffs else None


def story(result: dict) -> list[str]:
    """The layout chosen and why it beat the runners-up, in the reader's language."""
    best = result.get("parallelism")
    layout = result.get("layout") or {}
    if not isinstance(best, dict):
        return [_("No parallel layout fits in card memory on this cluster.")]
    out = [
        _(
            "Chosen: %(layout)s. One step takes %(step)s at %(mfu)s MFU; it is the fastest of the "
            "%(evaluated)s layouts evaluated (%(feasible)s fit in memory)."
        )
        % {
            "layout": layout_name(best),
            "step": f.seconds(best.get("step_time_s")),
            "mfu": f.percent(best.get("predicted_mfu")),
            "evaluated": f.count(layout.get("evaluated")),
            "feasible": f.count(layout.get("feasible")),
        }
    ]
    t0 = best.get("step_time_s")
    for other in (layout.get("runners_up") or [])[:3]:
        if not isinstance(other, dict) or not isinstance(t0, int | float) or t0 <= 0:
            continue
        t1 = other.get("step_time_s")
        if not isinstance(t1, int | float):
            continue
        term = _biggest_loss(best, other)
        text = _("%(layout)s: %(slower)s slower per step (%(step)s)") % {
            "layout": layout_name(other),
            "slower": f.percent(t1 / t0 - 1),
            "step": f.seconds(t1),
        }
        if term:
            text += _(", mostly more %(term)s") % {"term": str(STEP_TERMS.get(term, term)).lower()}
        out.append(text + ".")
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
    "micro_batch_size": L("Micro-batch size"),
    "virtual_stages": L("Virtual stages"),
    "zero_stage": L("ZeRO stage"),
    "recompute": L("Recompute"),
    "step_time_s": L("Step time"),
    "predicted_mfu": L("Predicted MFU"),
    "bubble_fraction": L("Pipeline bubble"),
    "memory_bytes": L("Memory per card"),
    "memory_total_bytes": L("Memory per card"),
    "fits": L("Fits"),
    "micro_batches": L("Micro-batches per step"),
    "recompute_fraction": L("Layers recomputed"),
    "sequence_parallel": L("Sequence parallel"),
    "distributed_optimizer": L("Distributed optimizer"),
    "predicted_hfu": L("Predicted HFU"),
    "tokens_per_s": L("Throughput (tokens/s)"),
}


def column_label(key: str) -> str:
    return str(COLUMNS.get(key, key))


def cell(key: str, v, currency: str) -> str:
    if key == "recompute":
        return value(v, "recompute", currency)
    return f.for_key(key, v, currency)
