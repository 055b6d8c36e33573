"""Advice and explanations on supernodes, read from the contract dicts only (the result's
`scaleup` section that supernode.planes_section builds), so advice.py registers these rules like
its own and a comparison of two plans can call `explain_step_time`.

Codes (public API; params are numbers and ids the web layer formats in the reader's language):

    supernode-pays          info     TP/EP inside the supernode's domain make a step enough faster
                                     than the same cards as 8-card nodes to outweigh the scale-up
                                     plane's capex (speedup >= capex ratio)
    supernode-does-not-pay  warning  the scale-up plane costs more (capex ratio) than it speeds the
                                     step up: the same cards as one-node domains give more tokens
                                     per capex dollar
    supernode-partly-used   warning  the card count leaves a supernode partly idle (bought whole)
    step-time-by-domain     info     (explain_step_time, for comparisons) a node plan against a
                                     supernode plan: chip factor x domain factor

The speed-up is a ratio of tokens/s (each layout rounds the global batch to its own DP, so step
times alone do not compare); tokens per capex dollar compare as speedup / capex ratio and energy
per token as power ratio / speedup (supernode.versus_nodes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from estimator.plan.result import AdviceItem

Advice = AdviceItem  # one row of result.advice
Explanation = dict[str, Any]  # explain_step_time's {code, severity, message, params} (reports' compare)
Doc = Mapping[str, Any]  # the contract's JSON (the normalized scenario, the result so far), read only


def _section(r: Doc) -> Doc | None:
    sec = r.get("scaleup")
    return sec if isinstance(sec, dict) else None


def supernode_pays(s: Doc, r: Doc) -> Advice | None:
    """supernode-pays (module docstring)."""
    item = _value(r)
    return item if item is not None and item.code == "supernode-pays" else None


def supernode_does_not_pay(s: Doc, r: Doc) -> Advice | None:
    """supernode-does-not-pay (module docstring)."""
    item = _value(r)
    return item if item is not None and item.code == "supernode-does-not-pay" else None


def _value(r: Doc) -> Advice | None:
    """supernode-pays or supernode-does-not-pay, from `scaleup.versus_nodes` (module docstring)."""
    sec = _section(r)
    vs = sec.get("versus_nodes") if sec else None
    if sec is None or not isinstance(vs, dict) or vs.get("speedup") is None:
        return None
    sn, nd, unit = vs["supernode"], vs["nodes"], sec["unit"]
    params = {
        "supernode": unit["supernode_id"],
        "supernodes": sec["supernodes"],
        "domain_cards": sn["domain_cards"],
        "node_cards": nd["domain_cards"],
        "tp": sn["tp"],
        "ep": sn["ep"],
        "node_tp": nd["tp"],
        "node_ep": nd["ep"],
        "node_pp": nd["pp"],
        "step_time_s": sn["step_time_s"],
        "node_step_time_s": nd["step_time_s"],
        "sequences": sn["sequences_per_step"],
        "node_sequences": nd["sequences_per_step"],
        "speedup": vs["speedup"],
        "capex_ratio": vs["capex_ratio"],
        "power_ratio": vs["power_ratio"],
        "energy_per_token_ratio": vs["energy_per_token_ratio"],
    }
    facts = (
        f"On {sec['supernodes']} x {unit['name']}, TP={sn['tp']} and EP={sn['ep']} run inside the "
        f"{sn['domain_cards']}-card domain: the plan trains {vs['speedup']:.2f}x as fast as the same "
        f"cards as {nd['domain_cards']}-card nodes (TP={nd['tp']}, EP={nd['ep']}, PP={nd['pp']}; a step of "
        f"{sn['sequences_per_step']} sequences in {sn['step_time_s']:.2f} s against {nd['sequences_per_step']} "
        f"in {nd['step_time_s']:.2f} s), for {vs['capex_ratio'] - 1:+.0%} "
        f"capex and {vs['power_ratio'] - 1:+.0%} IT power."
    )
    if vs["pays"]:
        return AdviceItem(
            code="supernode-pays",
            severity="info",
            message=facts,
            suggestion="The scale-up plane pays for itself in tokens per capex dollar; keep TP and EP "
            "inside the supernode.",
            params=params,
        )
    return AdviceItem(
        code="supernode-does-not-pay",
        severity="warning",
        message=facts,
        suggestion=f"For this model the same cards as {nd['domain_cards']}-card nodes give more tokens "
        "per capex dollar; the supernode pays only for models whose TP/EP traffic needs the larger domain.",
        params=params,
    )


def supernode_partly_used(s: Doc, r: Doc) -> Advice | None:
    """supernode-partly-used: cards that are not a whole number of supernodes."""
    sec = _section(r)
    if sec is None or not sec.get("idle_cards") or sec["unit"].get("degenerate", True):
        return None
    unit, idle = sec["unit"], int(sec["idle_cards"])
    return AdviceItem(
        code="supernode-partly-used",
        severity="warning",
        message=f"{sec['supernodes']} x {unit['name']} are bought whole; {idle} of their "
        f"{sec['supernodes'] * unit['cards']} cards stay idle in this plan.",
        suggestion=f"Plan a multiple of {unit['cards']} cards.",
        params={
            "supernode": unit["supernode_id"],
            "supernodes": sec["supernodes"],
            "cards_per_supernode": unit["cards"],
            "idle_cards": idle,
        },
    )


def _num(d: Any, key: str) -> float | None:
    v = d.get(key) if isinstance(d, dict) else None
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and v > 0 else None


def explain_step_time(a: Doc, b: Doc) -> Explanation | None:
    """Why two plans of the same model and cards differ in speed when one of them is on supernodes:
    code `step-time-by-domain` with params.

    Speeds are tokens/s of each plan's layout (a step's tokens differ when the layouts round the
    global batch to different DP sizes, so step times alone do not compare). The supernode plan's
    `scaleup.versus_nodes.nodes` is the same chip as one-node domains, so

        ratio         = tokens/s on supernodes / tokens/s of the node plan = chip x domain
        chip_factor   = tokens/s of the supernode chip as nodes / tokens/s of the node plan
        domain_factor = tokens/s on the supernode / tokens/s of its chip as nodes

    (dimensionless; a and b in either order). None when neither plan is on a supernode or a figure
    is missing.
    """
    sn, nd = (b, a) if _versus(b) else (a, b)
    vs = _versus(sn)
    if vs is None or not isinstance(vs.get("nodes"), dict) or not isinstance(vs.get("supernode"), dict):
        return None
    brief, node_brief = vs["supernode"], vs["nodes"]
    tps_sn, tps_as_nodes = _num(brief, "tokens_per_s"), _num(node_brief, "tokens_per_s")
    tps_nd = _num(nd.get("parallelism"), "tokens_per_s") or _num(nd.get("compute"), "tokens_per_s")
    step_sn, step_nd = _num(brief, "step_time_s"), _num(nd.get("parallelism"), "step_time_s")
    if tps_sn is None or tps_as_nodes is None or tps_nd is None or step_sn is None or step_nd is None:
        return None
    params = {
        "nodes_step_time_s": step_nd,
        "supernode_step_time_s": step_sn,
        "same_chip_as_nodes_step_time_s": node_brief["step_time_s"],
        "nodes_tokens_per_s": tps_nd,
        "supernode_tokens_per_s": tps_sn,
        "same_chip_as_nodes_tokens_per_s": tps_as_nodes,
        "ratio": tps_sn / tps_nd,
        "chip_factor": tps_as_nodes / tps_nd,
        "domain_factor": tps_sn / tps_as_nodes,
        "domain_cards": brief["domain_cards"],
        "node_cards": node_brief["domain_cards"],
        "tp": brief["tp"],
        "ep": brief["ep"],
        "pp": brief["pp"],
        "node_tp": node_brief["tp"],
        "node_ep": node_brief["ep"],
        "node_pp": node_brief["pp"],
    }
    message = (
        f"The supernodes train {params['ratio']:.2f}x as fast as the nodes (step {step_sn:.2f} s against "
        f"{step_nd:.2f} s). The chip alone, as {params['node_cards']}-card domains, gives "
        f"{params['chip_factor']:.2f}x (TP={node_brief['tp']}, EP={node_brief['ep']}, PP={node_brief['pp']}); "
        f"the {params['domain_cards']}-card domain gives the other {params['domain_factor']:.2f}x by keeping "
        f"TP={brief['tp']} and EP={brief['ep']} (PP={brief['pp']}) on the scale-up links."
    )
    return {"code": "step-time-by-domain", "severity": "info", "message": message, "params": params}


def _versus(r: Doc) -> Doc | None:
    sec = _section(r)
    vs = sec.get("versus_nodes") if sec else None
    return vs if isinstance(vs, dict) else None
