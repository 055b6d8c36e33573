"""fewer-cards-faster (estimator.plan.fewer_cards): a plan on given cards that a round size below
finishes sooner names that size and its days, each equal to a plan of the scenario at that count."""

from __future__ import annotations

import copy

import pytest

from estimator.plan.compose import estimate
from estimator.plan.fewer_cards import CODE, batch_bound

# /work/tools/s1.json: Llama 3.1 405B, 15T tokens at 8,192, the default 4M-token batch, 16,384 H100
BATCH_BOUND = {
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 15e12, "seq_len": 8192},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 16384},
}


def _at(doc: dict, cards: int) -> dict:
    out = copy.deepcopy(doc)
    out["cluster"] = {"cards": cards}
    return out


def _headline(plan: dict) -> float:
    return plan["result"]["goodput"]["wall_clock_days_p50"]


def test_a_batch_bound_plan_names_fewer_cards_and_their_planned_days():
    plan = estimate(BATCH_BOUND)
    r = plan["result"]
    assert batch_bound(r)  # PP 64 with 32 micro-batches: < 4 x 64, bubble 64 %
    found = [a for a in r["advice"] if a["code"] == CODE]
    assert len(found) == 1
    p = found[0]["params"]
    assert p["cards"] == 16384 and p["faster_cards"] < 16384
    assert p["days"] == pytest.approx(_headline(plan), rel=1e-12)
    there = estimate(_at(BATCH_BOUND, p["faster_cards"]))  # planned here, not read back
    assert p["faster_days"] == pytest.approx(_headline(there), rel=1e-9)
    assert p["faster_days"] < p["days"]
    shown = there["result"]["parallelism"]
    assert (p["faster_pp"], p["faster_dp"], p["faster_micro_batches"]) == (
        shown["pp"],
        shown["dp"],
        shown["micro_batches"],
    )
    # the budget's search (plan.budget_choice) of the sizes 500 M USD buys finds the same count
    budget = estimate({**BATCH_BOUND, "cluster": {"budget": 500e6}})
    assert budget["result"]["compute"]["cards"] == p["faster_cards"]


def test_a_plan_that_is_not_batch_bound_gets_no_search():
    """Llama 3.1 8B on 512 H100 at the 4M-token batch: no deep pipeline, a bubble under 20 %."""
    doc = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12, "seq_len": 8192},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 512},
    }
    r = estimate(doc)["result"]
    assert not batch_bound(r)
    assert CODE not in [a["code"] for a in r["advice"]]


def test_a_deadline_plan_is_not_second_guessed():
    """The cards come from the deadline sizing, which already keeps the fastest where none meets."""
    doc = {**BATCH_BOUND, "cluster": {"target_days": 60}}
    r = estimate(doc)["result"]
    assert CODE not in [a["code"] for a in r["advice"]]


def test_the_bubble_advice_carries_the_days_of_a_re_plan_at_the_batch_it_names():
    """PP 64 x DP 16 at micro-batch 1: 256 micro-batches need 256 x 16 x 8,192 = 33,554,432 tokens a
    step (by hand); the days are a plan of the same cards at that batch, planned here."""
    r = estimate(BATCH_BOUND)["result"]
    bubble = next(a for a in r["advice"] if a["code"] == "bubble-over-20pct")
    assert bubble["suggestion_code"] == "bubble-over-20pct.global-batch-planned"
    assert bubble["params"]["batch_low_tokens"] == 33_554_432
    doc = copy.deepcopy(BATCH_BOUND)
    doc["training"]["global_batch_tokens"] = 33_554_432
    assert bubble["params"]["batch_days"] == pytest.approx(_headline(estimate(doc)), rel=1e-9)
    assert bubble["params"]["batch_days"] < _headline({"result": r})


def test_the_cli_table_shows_the_advice_and_its_lever():
    from estimator.report_text import format_plan

    plan = estimate(BATCH_BOUND)
    p = next(a for a in plan["result"]["advice"] if a["code"] == CODE)["params"]
    lines = format_plan(plan).splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith(f"warning [{CODE}]: "))
    assert lines[i].startswith(f"warning [{CODE}]: {p['faster_cards']:,} cards would finish sooner")
    assert lines[i + 1].startswith(f"  -> Plan on {p['faster_cards']:,} cards")
    j = next(i for i, line in enumerate(lines) if line.startswith("warning [bubble-over-20pct]: "))
    assert "training.global_batch_tokens" in lines[j + 1]
