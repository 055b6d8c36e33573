"""Plain-text renderings for the CLI's --format table: a plan (with its calibration), a diagnosis,
the catalog, the validation table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from estimator.contract.readings import given_mfu_step_s
from estimator.money.pricing import causal_share
from estimator.plan.goodput_section import held_days
from estimator.words import counted

_SI = [(1e24, "Y"), (1e21, "Z"), (1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def si(value: float | None, unit: str = "", binary: bool = False) -> str:
    """Human number with an SI prefix: si(2.1e23, 'FLOP') -> '210 ZFLOP'."""
    if value is None:
        return "n/a"
    if binary and unit == "B":
        for power, prefix in ((4, "Ti"), (3, "Gi"), (2, "Mi"), (1, "Ki")):
            if abs(value) >= 1024**power:
                return f"{value / 1024**power:.3g} {prefix}B"
        return f"{value:.0f} B"
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}".strip()


def days(value: float) -> str:
    """A duration given in days, for the table: tenths from 10 days up ("30.2 days"), three
    significant figures down to a tenth of a day ("4.72 days", "1 day"), and below that in hours,
    minutes or seconds ("2.2 h", "35.2 min"), so a short run never reads "0.0 days"."""
    if abs(value) >= 10:
        return f"{value:,.1f} days"
    if abs(value) >= 0.1 or value == 0:
        text = f"{value:.3g}"
        return f"{text} {'day' if text == '1' else 'days'}"
    if abs(value) * 24 >= 1:
        return f"{value * 24:.3g} h"
    if abs(value) * 1440 >= 1:
        return f"{value * 1440:.3g} min"
    return f"{value * 86400:.3g} s"


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[str(c) for c in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def _deadline(c: Mapping[str, Any]) -> str:
    """The chance of missing the deadline, and that it counts the MFU range and the failures
    together where the result says so (compute.deadline_miss_counts_failures)."""
    p = c.get("deadline_miss_probability")
    if p is None:
        return ""
    both = " (MFU range and failures counted together)" if c.get("deadline_miss_counts_failures") else ""
    return f"; {p:.0%} chance of missing the {c['target_days']:g}-day deadline{both}"


def _confidence(c: Mapping[str, Any]) -> str:
    """What the cards were sized for where the scenario asked a chance of meeting the deadline."""
    q = c.get("deadline_confidence")
    if q is None:
        return ""
    return f"; sized for a {q:.0%} chance of meeting the {c['target_days']:g}-day deadline"


def _budget(b: Mapping[str, Any]) -> str:
    """One line: within the budget or over it by how much, and what the budget buys."""
    cur = b.get("currency", "")
    if b["within"]:
        text = f"Budget {b['budget']:,.0f} {cur}: within it, {b['headroom']:,.0f} {cur} left."
    else:
        text = f"Budget {b['budget']:,.0f} {cur}: OVER by {b['over_by']:,.0f} {cur}."
    a = b.get("affords")
    if a:  # the budget-sized plan (plan.sizing.budget_affords): the same figure in every report
        text += (
            f" It buys {a['cards']:,} cards ({a['nodes']:,} nodes, {a['capex']:,.0f} {cur}):"
            f" {a.get('days_p50', a['days']):.1f} days as a budget-sized plan"
            + (" (median with failures)." if "days_p50" in a else ".")
        )
        if a.get("most_cards"):  # the most it buys train slower (plan.budget_choice), as the web says
            text += f" It buys up to {a['most_cards']:,} cards, but those train slower."
    return text


def _stack_line(stack: Mapping[str, Any]) -> str:
    """The stack the plan assumed and the wall-clock days under each profile that runs on the card."""
    default = " (default)" if stack.get("default") else ""
    days = ", ".join(
        f"{sid} {'-' if d is None else f'{d:.1f}'}" + (" *" if sid == stack["id"] else "")
        for sid, d in stack.get("sensitivity", {}).items()
    )
    return f"Software stack: {stack['id']}{default}; days by stack (before failures): {days}"


def _goodput_rows(g: Mapping[str, Any] | None, c: Mapping[str, Any]) -> list[list[str]]:
    """The days with failures (the headline: the median), their P10-P90 (the failure spread at the
    planned MFU), the mean the sizing and the levers count, ETTR and the chance of missing the
    deadline (the MFU range and the failures together), interruptions and checkpoints."""
    if not g:
        return []
    lost = g["lost_days"]
    return [
        [
            "with failures",
            days(g["wall_clock_days_p50"]),
            f"median; P10-P90 {days(g['wall_clock_days_p10'])} - {days(g['wall_clock_days_p90'])}"
            f"{' at the planned MFU' if g.get('failures_counted') else ''}; "
            f"mean {days(g['wall_clock_days'])}; ETTR {g['effective_training_time_ratio']:.1%}"
            + _deadline(c),
        ],
        [
            "interruptions",
            f"{g['expected_interruptions']:.0f}",
            f"{g['expected_unexpected_interruptions']:.0f} unexpected, one every "
            f"{g['mean_time_between_interruptions_h']:.1f} h; {g['expected_planned_interruptions']:.0f} planned",
        ],
        [
            "checkpoints",
            f"every {g['checkpoint_interval_s'] / 60:.0f} min",
            f"{g['checkpoint_mode']}: write {g['checkpoint_write_s']:.0f} s, stall {g['checkpoint_stall_s']:.3g} s; "
            f"restart {g['restart_s'] / 60:.0f} min",
        ],
        [
            "time lost",
            days(sum(lost.values())),
            f"checkpoints {lost['checkpoints']:.1f}, rework {lost['rework']:.1f}, restarts {lost['restarts']:.1f}, "
            f"planned {lost['planned']:.1f}",
        ],
    ]


CAUSAL_NOTE_SHARE = 0.9  # below it (attention over a fifth of the FLOPs counted) the table says both


def _causal_note(c: Mapping[str, Any]) -> str:
    """Where PaLM's whole attention matrix is much of the FLOPs counted (long sequences), the MFU on
    what causal kernels compute (money.pricing.causal_share; the assumption row assumption.flop-count)."""
    share = causal_share(
        float(c.get("flop_per_token_6n") or 0.0), float(c.get("flop_per_token_attention") or 0.0)
    )
    return "" if share >= CAUSAL_NOTE_SHARE else f" ({c['mfu'] * share:.1%} on what causal kernels compute)"


def _headline_rows(s: Mapping[str, Any], r: Mapping[str, Any]) -> list[list[str]]:
    """The headline table: compute, cards, time (with failures), throughput, power and cost."""
    c = r["compute"]
    cur = r.get("cost", {}).get("currency", "USD")
    rows = [
        [
            "training compute",
            si(c["training_flop"], "FLOP"),
            f"{si(c['flop_per_token'], 'FLOP')}/token x tokens",
        ],
        [
            "cards",
            f"{c['cards']:,}",
            f"{counted(c['nodes'], 'node')} of {s['hardware'].get('cards_per_node') or ''}{_confidence(c)}",
        ],
        [
            "wall-clock",
            days(c["wall_clock_days"]),
            f"at MFU {c['mfu']:.1%}{_causal_note(c)}, before failures",
        ],
        *_goodput_rows(r.get("goodput"), c),
        [
            "accelerator-hours",
            f"{c['accelerator_hours']:,.0f}"
            if c["accelerator_hours"] >= 10
            else f"{c['accelerator_hours']:.3g}",
            "",
        ],
        ["throughput", f"{si(c['tokens_per_s'], 'tok/s')}", ""],
    ]
    held_for = held_days(r)
    held = "" if held_for is None else f" over the {days(held_for)} held (mean, failures counted)"
    if "power" in r:
        rows.append(
            [
                "facility power",
                si(r["power"]["facility_w"], "W"),
                f"energy {si(r['power']['energy_wh'], 'Wh')}{held}",
            ]
        )
    if "cost" in r:
        cost = r["cost"]
        rows.append(["capex", f"{cost['capex']['total']:,.0f} {cur}", ""])
        rows.append(
            [
                "run cost owned / cloud",
                f"{cost['run']['owned']:,.0f} / {cost['run']['cloud']:,.0f} {cur}",
                f"{cost['card_hours']:,.0f} card-hours paid{held}",
            ]
        )
    return rows


def _layout_lines(p: Mapping[str, Any], r: Mapping[str, Any] | None = None) -> list[str]:
    """The chosen layout, the step a given MFU runs (readings.given_mfu_step_s), its step time by
    term, MoE folding and the pipeline's end stages."""
    lines = [
        f"Layout: TP {p['tp']} x PP {p['pp']}{_cp(p)} x DP {p['dp']} x EP {p['ep']}, ZeRO {p['zero_stage']}, "
        f"recompute {p['recompute']}, micro-batch {p['micro_batch_size']} x {p['micro_batches']}, "
        f"bubble {p['bubble_fraction']:.1%}, step {p['step_time_s']:.2f} s, predicted MFU {p['predicted_mfu']:.1%}",
    ]
    given = given_mfu_step_s(r or {})
    if given is not None and r is not None:
        lines.append(
            f"Given MFU {r['compute']['mfu']:.1%}: the plan's step is {given:.2f} s (the layout model's "
            f"{p['step_time_s']:.2f} s above only ranks the layouts)"
        )
    lines.append("Step time (s): " + ", ".join(f"{k} {v:.3f}" for k, v in p["breakdown_s"].items()))
    if "expert_tp" in p:
        lines.append(
            f"MoE folding: EP {p['ep']} x expert TP {p['expert_tp']} x expert DP {p['expert_dp']} over "
            f"TP x CP x DP = {p['tp'] * p['cp'] * p['dp']} ranks per stage"
        )
    if p["pp"] > 1:
        lines.append(
            f"Pipeline devices: {p['first_stage_layers']} layers on the first, "
            f"{p['last_stage_layers']} on the last"
        )
    return lines


def _cp(p: Mapping[str, Any]) -> str:
    """The layout line's CP part where context parallelism is used (TP x PP x CP x DP is the cards)."""
    return f" x CP {p['cp']}" if (p.get("cp") or 1) > 1 else ""


def _machine_lines(r: Mapping[str, Any]) -> list[str]:
    """Memory per card, the network and the storage, one line each where the result has them."""
    lines = []
    mem = r.get("memory")
    if mem:
        pc = mem["per_card_bytes"]
        lines.append(
            "Memory per card: "
            + ", ".join(f"{k} {si(v, 'B', binary=True)}" for k, v in pc.items())
            + f" of {si(mem['hbm_bytes'], 'B', binary=True)} HBM -> {'fits' if mem['fits'] else 'DOES NOT FIT'}"
        )
    net = r.get("network")
    if net:
        lines.append(
            f"Network: {net['tiers']} tier(s), {net['endpoints']:,} endpoints, {net['leaf_switches']} leaf / "
            f"{net['spine_switches']} spine / {net['core_switches']} core switches, {net['transceivers']:,} transceivers"
        )
    st = r.get("storage")
    if st:
        lines.append(
            f"Storage: checkpoint {si(st['checkpoint_bytes'], 'B')}, hot {si(st['hot']['capacity_bytes'], 'B')} "
            f"writing {si(st['hot']['write_bytes_per_s'], 'B/s')}, warm {si(st['warm']['capacity_bytes'], 'B')}"
        )
    return lines


def format_plan(out: Mapping[str, Any]) -> str:
    """A readable summary of estimate() output for a person at a terminal."""
    s, r = out["scenario"], out["result"]
    m = r.get("model", {})
    lines = [f"ClusterPlan {out.get('engine_version', '')} (catalog {out.get('catalog_version', '')})"]
    if s.get("name"):
        lines.append(f"Scenario: {s['name']}")
    lines.append(
        f"Model: {m.get('name', '?')}: {si(m.get('total_params'))} params, {si(m.get('active_params'))} active"
    )
    lines.append("")
    lines.append(_table(["headline", "value", "why"], _headline_rows(s, r)))
    if r.get("budget"):
        lines.append(_budget(r["budget"]))
    if r.get("parallelism"):
        lines.extend(_layout_lines(r["parallelism"], r))
    stack = r.get("stack")
    if stack:
        lines.append(_stack_line(stack))
    lines.extend(_machine_lines(r))
    if r.get("calibration"):
        lines.append(format_calibration(r["calibration"]))
    fixes = {a["code"]: a.get("suggestion") for a in r.get("advice", []) if isinstance(a, dict)}
    for w in r.get("warnings", []):  # each with its own severity: info, warning or error
        lines.append(f"{w.get('severity') or 'warning'} [{w['code']}]: {w['message']}")
        if fixes.get(w["code"]):  # an advice row's suggestion (the lever), under its warning
            lines.append(f"  -> {fixes[w['code']]}")
    return "\n".join(lines) + "\n"


def format_calibration(cal: Mapping[str, Any]) -> str:
    """The result's calibration section: the pilot, the factors, before and after, the band."""
    p, before, after, band = cal["pilot"], cal["before"], cal["after"], cal["band"]
    lines = [
        f"Calibrated on a pilot: {p['model']} on {p['cards']} x {p['accelerator']}, measured "
        f"{p['measured_tokens_per_s_per_card']:,.0f} tok/s per card (model: {p['predicted_tokens_per_s_per_card']:,.0f})"
        + (" - factor carried across chips" if cal["carried_across_chips"] else ""),
        "Factors: " + ", ".join(f"{f['name']} {f['value']:.3f} ({f['scales']})" for f in cal["factors"]),
    ]
    rows = [
        [name, f"{plan['cards']:,}", si(plan["tokens_per_s"], "tok/s"), f"{plan['training_days']:.1f} days"]
        for name, plan in (("before", before), ("after", after))
        if plan
    ]
    lines.append(_table(["plan", "cards", "throughput", "training"], rows).rstrip())
    grows = cal["extrapolation"]["growing_terms"]
    if grows:
        lines.append(
            "Extrapolation grows: "
            + ", ".join(f"{t['term']} {t['pilot_share']:.1%} -> {t['target_share']:.1%}" for t in grows)
        )
    lines.append(
        f"Band: +/-{band['relative_half_width']:.0%}: {si(band['tokens_per_s_low'], 'tok/s')} to "
        f"{si(band['tokens_per_s_high'], 'tok/s')} ({band['rule']})"
    )
    return "\n".join(lines)


def format_diagnosis(out: Mapping[str, Any]) -> str:
    """A diagnosis (estimator.plan.diagnose) for a person at a terminal."""
    run, model = out["run"], out["model"]
    lines = [
        f"Run: {run['model']} on {run['cards']:,} x {run['accelerator']}: step {run['measured']['step_time_s']:.3g} s, "
        f"model {model['step_time_s']:.3g} s ({model['step_ratio']:.2f}x)",
    ]
    rows = [
        [
            t["term"],
            "n/a" if t["measured_s"] is None else f"{t['measured_s']:.3g} s ({t['measured_share']:.0%})",
            f"{t['model_s']:.3g} s ({t['model_share']:.0%})",
            "" if t["ratio"] is None else f"{t['ratio']:.2f}x",
        ]
        for t in out["terms"]
    ]
    lines.append(_table(["term", "measured", "model", "ratio"], rows).rstrip())
    for f in out["findings"]:
        lines.append(f"{f['severity']} [{f['code']}]: {f['message']}")
    return "\n".join(lines) + "\n"


def format_catalog(listing: Mapping[str, Any]) -> str:
    out = []
    for kind, entries in listing.items():
        out.append(f"== {kind} ==")
        if isinstance(entries, dict) and all(isinstance(v, dict) for v in entries.values()):
            for key, entry in entries.items():
                name = entry.get("name", "") if isinstance(entry, dict) else ""
                value = entry.get("value", "") if isinstance(entry, dict) else entry
                out.append(f"  {key:<28} {name or value}")
        elif isinstance(entries, list):
            for entry in entries:
                out.append(f"  {entry.get('id', ''):<28} {entry.get('name', '')}")
        else:
            out.append(f"  {entries}")
    return "\n".join(out) + "\n"


def format_validation(rows: Sequence[Mapping[str, Any]]) -> str:
    body = [
        [
            r["suite"],
            r["case"],
            r.get("metric", ""),
            f"{r['published']:.4g}",
            f"{r['predicted']:.4g}",
            f"{r['error_pct']:+.1f}%",
        ]
        for r in rows
    ]
    text = _table(["suite", "case", "metric", "published", "predicted", "error"], body)
    suites: dict[str, list[float]] = {}
    for r in rows:
        suites.setdefault(r["suite"], []).append(abs(r["error_pct"]))
    for name, errs in suites.items():
        text += (
            f"{name}: mean |error| {sum(errs) / len(errs):.2f}%, max {max(errs):.2f}% over {len(errs)} rows\n"
        )
    return text


def format_holdout(rows: Sequence[Mapping[str, Any]]) -> str:
    """The held-out check of calibration.pilot (estimator.validation.pilot_holdout) as a table."""
    body = [
        [
            r["case"],
            r["pilot"],
            f"{r['published']:,.0f}",
            f"{r['uncalibrated']:,.0f} ({r['error_uncalibrated_pct']:+.1f}%)",
            f"{r['calibrated']:,.0f} ({r['error_calibrated_pct']:+.1f}%)",
            f"+/-{r['band_half_width']:.0%}",
            "yes" if r["in_band"] else "NO",
        ]
        for r in rows
    ]
    headers = ["target run", "pilot run", "published", "uncalibrated", "calibrated", "band", "in band"]
    mean = [
        sum(abs(r[k]) for r in rows) / len(rows) for k in ("error_uncalibrated_pct", "error_calibrated_pct")
    ]
    footer = f"mean |error|: uncalibrated {mean[0]:.1f}%, calibrated {mean[1]:.1f}% (tokens/s per GPU)\n"
    return _table(headers, body) + footer
