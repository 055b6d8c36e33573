"""Advice on supernodes, read from the contract dicts only (the result's `scaleup` section that
supernode.planes_section builds), so advice.py can register these rules like its own.

Codes (public API; params are numbers and ids the web layer formats in the reader's language):

    supernode-pays          info     TP/EP inside the supernode's domain make a step enough faster
                                     than the same cards as 8-card nodes to outweigh the scale-up
                                     plane's capex (speedup >= capex ratio)
    supernode-does-not-pay  warning  the scale-up plane costs more (capex ratio) than it speeds the
                                     step up: the same cards as one-node domains give more tokens
                                     per capex dollar
    supernode-partly-used   warning  the card count leaves a supernode partly idle (bought whole)

A step's tokens are the same in both layouts (same cards, same global batch), so the step-time
ratio is the throughput ratio; tokens per capex dollar compare as speedup / capex ratio and energy
per token as power ratio / speedup (supernode.versus_nodes).
"""

from __future__ import annotations

from typing import Any

Advice = dict[str, Any]


def _section(r: dict) -> dict | None:
    sec = r.get("scaleup")
    return sec if isinstance(sec, dict) else None


def supernode_pays(s: dict, r: dict) -> Advice | None:
    """supernode-pays (module docstring)."""
    item = _value(r)
    return item if item is not None and item["code"] == "supernode-pays" else None


def supernode_does_not_pay(s: dict, r: dict) -> Advice | None:
    """supernode-does-not-pay (module docstring)."""
    item = _value(r)
    return item if item is not None and item["code"] == "supernode-does-not-pay" else None


def _value(r: dict) -> Advice | None:
    """supernode-pays or supernode-does-not-pay, from `scaleup.versus_nodes` (module docstring)."""
    sec = _section(r)
    vs = sec.get("versus_nodes") if sec else None
    if not isinstance(vs, dict) or vs.get("speedup") is None:
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
        "speedup": vs["speedup"],
        "capex_ratio": vs["capex_ratio"],
        "power_ratio": vs["power_ratio"],
        "energy_per_token_ratio": vs["energy_per_token_ratio"],
    }
    facts = (
        f"On {sec['supernodes']} x {unit['name']}, TP={sn['tp']} and EP={sn['ep']} run inside the "
        f"{sn['domain_cards']}-card domain: a step takes {sn['step_time_s']:.2f} s against "
        f"{nd['step_time_s']:.2f} s for the same cards as {nd['domain_cards']}-card nodes "
        f"(TP={nd['tp']}, EP={nd['ep']}, PP={nd['pp']}), {vs['speedup']:.2f}x, for "
        f"{vs['capex_ratio'] - 1:+.0%} capex and {vs['power_ratio'] - 1:+.0%} IT power."
    )
    if vs["pays"]:
        return {
            "code": "supernode-pays",
            "severity": "info",
            "message": facts,
            "suggestion": "The scale-up plane pays for itself in tokens per capex dollar; keep TP and EP "
            "inside the supernode.",
            "params": params,
        }
    return {
        "code": "supernode-does-not-pay",
        "severity": "warning",
        "message": facts,
        "suggestion": f"For this model the same cards as {nd['domain_cards']}-card nodes give more tokens "
        "per capex dollar; the supernode pays only for models whose TP/EP traffic needs the larger domain.",
        "params": params,
    }


def supernode_partly_used(s: dict, r: dict) -> Advice | None:
    """supernode-partly-used: cards that are not a whole number of supernodes."""
    sec = _section(r)
    if not sec or not sec.get("idle_cards") or sec["unit"].get("degenerate", True):
        return None
    unit, idle = sec["unit"], int(sec["idle_cards"])
    return {
        "code": "supernode-partly-used",
        "severity": "warning",
        "message": f"{sec['supernodes']} x {unit['name']} are bought whole; {idle} of their "
        f"{sec['supernodes'] * unit['cards']} cards stay idle in this plan.",
        "suggestion": f"Plan a multiple of {unit['cards']} cards.",
        "params": {
            "supernode": unit["supernode_id"],
            "supernodes": sec["supernodes"],
            "cards_per_supernode": unit["cards"],
            "idle_cards": idle,
        },
    }
