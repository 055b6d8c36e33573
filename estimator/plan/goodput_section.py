"""result.goodput of one plan (plan.goodput evaluates, this module writes the section): the named
fields with their units, where the time goes, the hot spares and the levers (what a faster hot
tier, asynchronous or in-memory checkpoints or hot spares would save, with their cost); the failure
figures it adds to result.assumptions; and its advice. Units: seconds, days, counts; money in the
scenario's currency."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from estimator.catalog.failures import failures
from estimator.cluster import reliability as rel
from estimator.cluster.storage import Storage
from estimator.contract.resolve import Resolved
from estimator.model.compute import SECONDS_PER_DAY
from estimator.money.pricing import equipment
from estimator.plan.goodput import (
    ADVICE_SHARE,
    FREE_LEVER_SHARE,
    LEVER_NAMES,
    Settings,
    evaluate,
    held_ratio,
    settings,
)
from estimator.plan.result import AdviceItem
from estimator.plan.result_goodput import FailureAssumption, GoodputSection, Lever, LostDays, Spares


def _lever_costs(r: Resolved, hot_drives: int, hot_nodes: int, spares: int) -> dict[str, float]:
    """What a lever buys, in the scenario's currency: `hot_drives` NVMe drives and `hot_nodes`
    storage nodes more for the faster hot tier, `spares` servers (cards included) for the spares."""
    eq, fx = equipment(r), r.usd_to_currency
    return {
        "faster-hot-tier": (hot_drives * eq.nvme_price_usd + hot_nodes * eq.hot_node_price_usd) * fx,
        "spare-nodes": spares * eq.server_price_usd * fx,
    }


def suggested_spares(nodes_down_mean: float) -> int:
    """Hot standbys that cover 95% of node failures: the smallest s with P(Poisson(m) < s) >= 0.95,
    m = nodes under repair on average (node failure rate x repair time).

    rel.spare_coverage(s, m) sums the Poisson terms k = 0..s-1 in order and clips the sum to [0, 1];
    the sums for s = 1, 2, ... are the running sums of those terms, formed here in one pass with the
    same floating-point operations (so the same s as calling spare_coverage for each s)."""
    m = float(nodes_down_mean)
    term, total = float(np.exp(-np.float64(m))), 0.0
    for s in range(1, 4097):
        total = total + term
        if min(max(total, 0.0), 1.0) >= 0.95:
            return s
        term = term * m / s
    return 4096


def section(
    r: Resolved,
    *,
    cards: int,
    nodes: int,
    switches: int,
    solve_s: float,
    storage: Storage,
    cost_per_day: float,
    faster: Storage | None = None,
) -> GoodputSection:
    """result.goodput: named fields with their units, where the time goes, and the levers (what a
    faster hot tier, asynchronous or in-memory checkpoints or hot spares would save, with their cost).
    `faster`: the storage design whose hot tier writes a checkpoint twice as fast (plan.sizing), the
    faster-hot-tier lever's bandwidths and drives; None: no such lever."""
    st = settings(r)
    kw: dict[str, Any] = {"cards": cards, "nodes": nodes, "switches": switches, "solve_s": solve_s}
    write, read = storage.hot.write_capability_bytes_per_s, storage.hot.read_capability_bytes_per_s
    g = evaluate(r, write_bytes_per_s=write, read_bytes_per_s=read, st=st, **kw)
    day = SECONDS_PER_DAY
    return GoodputSection(
        failures_counted=st.on,
        checkpoint_mode=st.mode,
        expected_interruptions_count=float(g["unexpected"] + g["planned"]),
        expected_unexpected_interruptions_count=float(g["unexpected"]),
        expected_planned_interruptions_count=float(g["planned"]),
        interruptions_by_cause={c: float(v * g["wall_s"]) if st.on else 0.0 for c, v in g["rates"].items()},
        mean_time_between_interruptions_h=float(g["mtbi_s"]) / rel.SECONDS_PER_HOUR,
        checkpoint_interval_s=float(g["interval_s"]),
        checkpoint_interval_rule="given" if st.interval_s is not None else "daly-2006",
        checkpoint_write_s=float(g["write_s"]),
        checkpoint_stall_s=float(g["stall_s"]),
        checkpoint_durable_after_s=float(g["lag_s"]),
        restart_s=float(g["restart_s"]),
        detection_s=st.detection_s,
        rescheduling_s=st.rescheduling_s,
        reload_s=float(g["reload_s"]),
        rework_s_per_interruption=float(g["rework_s"]),
        compute_days=solve_s / day,
        lost_days=LostDays(
            checkpoints_days=float(g["checkpoints_s"]) / day,
            rework_days=float(g["rework_total_s"]) / day,
            restarts_days=float(g["restarts_total_s"]) / day,
            planned_days=float(g["planned_total_s"]) / day,
        ),
        wall_clock_days=float(g["wall_s"]) / day,
        wall_clock_p10_days=float(g["wall_p10_s"]) / day,
        wall_clock_p50_days=float(g["wall_p50_s"]) / day,
        wall_clock_p90_days=float(g["wall_p90_s"]) / day,
        effective_training_time_share=float(g["ettr"]),
        spares=Spares(
            nodes=st.spare_nodes,
            coverage_probability=float(g["spare_coverage"]),
            mean_nodes_down_count=float(g["nodes_down"]),
            suggested=suggested_spares(float(g["nodes_down"])),
            capex_in_currency=_lever_costs(r, 0, 0, st.spare_nodes)["spare-nodes"],
        ),
        rate_scale_factor=st.scale,
        rates_per_unit_hour=dict(st.rates),
        rates_scale_with=dict(st.per),
        source=st.source,
        levers=_levers(r, st, kw, (storage, faster), g, cost_per_day) if st.on else None,
    )


def count_shape(r: Resolved, by_cause: Mapping[str, float]) -> float:
    """The Gamma shape of the plan's interruption rate behind its P10-P90 (plan.goodput.evaluate:
    reliability.rate_shape of the rates by cause), from `by_cause`, the expected counts by cause
    (result.goodput's interruptions_by_cause): they are the rates times one wall time, and the shape
    depends only on the rates' ratios (dimensionless)."""
    st = settings(r)
    counts = {c: np.asarray(n, dtype=float) for c, n in by_cause.items()}
    return float(rel.rate_shape(counts, st.counts, st.scale_rel_sd))


def _levers(
    r: Resolved,
    st: Settings,
    kw: Mapping[str, Any],
    designs: tuple[Storage, Storage | None],
    g: Mapping[str, Any],
    cost_per_day: float,
) -> tuple[Lever, ...]:
    """Days each lever saves against this plan (and its cost, where it has one), most days first:
    a hot tier twice as fast (`designs`: the plan's storage and the one that writes twice as fast,
    its delivered bandwidths and its drives and nodes more), asynchronous or in-memory checkpoints,
    the suggested hot spares."""
    hot, fast = designs[0].hot, (designs[1].hot if designs[1] is not None else None)
    bw = (hot.write_capability_bytes_per_s, hot.read_capability_bytes_per_s)
    spares = suggested_spares(float(g["nodes_down"]))
    more = (fast.drives - hot.drives, fast.nodes - hot.nodes) if fast is not None else (0, 0)
    costs = _lever_costs(r, *more, spares)
    variants: list[tuple[str, Settings, tuple[float, float], dict[str, int]]] = []
    if fast is not None:
        fast_bw = (fast.write_capability_bytes_per_s, fast.read_capability_bytes_per_s)
        variants.append(("faster-hot-tier", st, fast_bw, {"factor": 2}))
    variants += [
        (f"{m}-checkpoints", _with(st, mode=m), bw, {}) for m in ("async", "in-memory") if m != st.mode
    ]
    if st.spare_nodes < spares:
        variants.append(("spare-nodes", _with(st, spare_nodes=spares), bw, {"nodes": spares}))
    wall_s = float(g["wall_s"])
    out = []
    for code, s2, (w, rd), extra in variants:
        alt = float(evaluate(r, write_bytes_per_s=w, read_bytes_per_s=rd, st=s2, **kw)["wall_s"])
        saved = (wall_s - alt) / SECONDS_PER_DAY
        cost = costs.get(code)
        out.append(
            Lever(
                lever=code,
                saved_days=saved,
                wall_clock_days=alt / SECONDS_PER_DAY,
                cost_in_currency=cost,
                value_of_saved_days_in_currency=saved * cost_per_day,
                pays=cost is None or saved * cost_per_day > cost,
                **extra,
            )
        )
    return tuple(sorted(out, key=lambda x: -x.saved_days))


def _with(st: Settings, **changes: Any) -> Settings:
    return dataclasses.replace(st, **changes)


HELD_TIME_CODE = "assumption.held-time"  # the row that says the run's cost covers the held time


def held_days(result: Mapping[str, Any]) -> float | None:
    """The wall-clock days a result's energy and run cost cover (goodput.wall_clock_days, the mean
    with failures) when its assumption row HELD_TIME_CODE says so; None when they cover the
    computing alone (failures not counted, or a result stored before engine 2.45.0). The one
    reading of that for every surface (the CLI table, the report)."""
    rows = result.get("assumptions") or []
    days = (result.get("goodput") or {}).get("wall_clock_days")
    if days is None or not any(a.get("code") == HELD_TIME_CODE for a in rows):
        return None
    return float(days)


def assumptions(r: Resolved, g: GoodputSection | None = None) -> list[FailureAssumption]:
    """The failure rates (per card-, node- and switch-hour, the vendor's scale applied) and the restart
    figures behind result.goodput, and with failures counted the time the run is paid for (`g`'s
    wall clock over its computing, money.rollup.Sizing.held), as rows of result.assumptions (code,
    value, unit, source)."""
    st, cat = settings(r), failures()
    vendor = cat.for_vendor(r.accelerator.vendor)
    scale_src = (
        "scenario reliability.rate_scale" if r.scenario.reliability.rate_scale else vendor.source.source
    )
    out = []
    for unit in ("card", "node", "switch"):
        rate = sum(v for c, v in st.rates.items() if st.per[c] == unit) * st.scale
        causes = ", ".join(c for c in st.rates if st.per[c] == unit)
        out.append(
            FailureAssumption(
                name=f"interruptions per {unit}-hour ({causes})",
                code=f"assumption.failure-rate-{unit}",
                params={"causes": causes},
                value=rate,
                unit=f"per {unit}-hour",
                source=f"{st.source}; x{st.scale:g}: {scale_src}",
            )
        )
    rec = cat.recovery_sources
    rs = r.scenario.reliability
    for key, value, given in (
        ("detection", st.detection_s, rs.detection_s),
        ("rescheduling", st.rescheduling_s, rs.rescheduling_s),
    ):
        src = rec[f"{key}_s"]
        out.append(
            FailureAssumption(
                name=f"{key} time of an interruption",
                code=f"assumption.{key}",
                params={},
                value=value,
                unit="s",
                source=f"scenario reliability.{key}_s"
                if given is not None
                else f"{src.source} ({src.as_of})",
            )
        )
    if g is not None and g.failures_counted:
        out.append(
            FailureAssumption(
                name="time the run is paid for, over its computing time (energy at the training draw throughout)",
                code=HELD_TIME_CODE,
                params={},
                value=float(held_ratio(g.wall_clock_days, g.compute_days)),
                unit="",
                source="docs/goodput.md#what-the-run-costs: the cards are held for the wall clock with failures",
            )
        )
    return out


def advice(g: GoodputSection, currency: str) -> list[AdviceItem]:
    """Advice when checkpoints or restarts (with the work they re-do) cost more than ADVICE_SHARE of
    the wall time, or when a lever without hardware (a checkpoint mode) would save more than
    FREE_LEVER_SHARE of it: the lever that saves the most and pays, with its days and cost
    ({code, severity, message, params}; message_code `<code>.free` when it needs no hardware)."""
    if not g.failures_counted or not g.levers:
        return []
    wall = g.wall_clock_days
    lost = g.lost_days
    shares = {
        "checkpoints": lost.checkpoints_days / wall,
        "restarts": (lost.restarts_days + lost.rework_days) / wall,
    }
    kind, share = max(shares.items(), key=lambda kv: kv[1])
    paying = [lv for lv in g.levers if lv.pays and lv.saved_days > 0]
    free = [lv for lv in paying if lv.cost_in_currency is None and lv.saved_days > FREE_LEVER_SHARE * wall]
    if not paying or (share <= ADVICE_SHARE and not free):
        return []
    best = paying[0] if share > ADVICE_SHARE else free[0]
    cost, lever = best.cost_in_currency, LEVER_NAMES[best.lever]
    what = "Checkpoints take" if kind == "checkpoints" else "Restarts and re-done work take"
    tail = f" (cost: {cost:,.0f} {currency})" if cost is not None else " with no new hardware"
    return [
        AdviceItem(
            code=f"goodput-{kind}",
            severity="info",
            # the mean days (what the shares and the days saved are of), named so under the median headline
            message=f"{what} {share:.0%} of the {wall:.1f} days on average; {lever} would save "
            f"{best.saved_days:.1f} days{tail}.",
            suggestion=f"Switch on {lever}.",
            params={
                "share": share,
                "days": wall,
                "lever": best.lever,
                "days_saved": best.saved_days,
                "cost": cost,
                "currency": currency,
            },
            message_code=f"goodput-{kind}.free" if cost is None else None,
        )
    ]
