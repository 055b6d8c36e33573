#!/usr/bin/env python
"""Throughput of the core's vectorized paths (figures, not tests: unit tests assert no timings).

    .venv/bin/python bench/core_vectorized.py

Prints rows per second of power() over 1,000,000 rows and cost() over 500,000 rows, the time of a
10,000-draw Monte Carlo, and the time of one 70B layout search on 16,384 H100s. Each figure is the
best of 3 runs on this machine.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import machine  # bench/machine.py: the load-average lines
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from estimator import catalog
from estimator.cluster.power import ItLoad, power
from estimator.layout.search import LayoutProblem, search
from estimator.model.transformer import param_counts
from estimator.money.cost import CapexBill, RunningPrices, cost
from estimator.plan.uncertainty import UncertainPrices, monte_carlo


def best_of(fn: Callable[[], object], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(1)
    n = 1_000_000
    cards = rng.integers(8, 100_000, n)
    hours = rng.uniform(1, 2000, n)
    t = best_of(
        lambda: power(
            ItLoad(cards=cards, card_tdp_w=700, nodes=cards // 8, host_power_w=1000), pue=1.3, hours=hours
        )
    )
    print(f"power():       {n / t:12,.0f} rows/s ({n:,} rows in {t * 1e3:.0f} ms)")

    m = 500_000
    c = rng.integers(1, 2000, m) * 8
    t = best_of(
        lambda: cost(
            CapexBill(cards=c, nodes=c / 8, server_price_usd=250_000),
            hours=rng.uniform(10, 2000, m),
            it_w=c * 800.0,
            facility_w=c * 1040.0,
            running=RunningPrices(
                electricity_usd_per_kwh=rng.uniform(0.05, 0.2, m),
                cloud_usd_per_card_hour=rng.uniform(1.5, 4.0, m),
            ),
        )
    )
    print(f"cost():        {m / t:12,.0f} rows/s ({m:,} rows in {t * 1e3:.0f} ms)")

    t = best_of(
        lambda: monte_carlo(
            training_flop=2.1e23,
            cards=507,
            peak_flops=320e12,
            mfu=(0.35, 0.45, 0.55),
            prices=UncertainPrices(
                cloud_usd_per_card_hour=(1.5, 2.5, 4.0),
                capex_total_usd=(2e7, 2.5e7, 3e7),
                facility_w=4e5,
                electricity_usd_per_kwh=(0.06, 0.08, 0.14),
            ),
            draws=10_000,
        )
    )
    print(f"monte_carlo(): {t * 1e3:12.1f} ms for 10,000 draws")

    preset = catalog.preset("llama-3.1-70b")
    problem = LayoutProblem(
        arch=preset.architecture,
        counts=param_counts(preset.architecture),
        seq_len=8192,
        global_batch_tokens=16 * 2**20,
        cards=16384,
        accelerator=catalog.accelerator("h100-sxm"),
        nic_bytes_per_s_per_card=50e9,
    )
    t = best_of(lambda: search(problem))
    print(f"layout search: {t * 1e3:12.1f} ms (70B, 16,384 H100s)")


if __name__ == "__main__":
    sys.exit(machine.run(main))
