#!/usr/bin/env python
"""Speed of the layout model where it decides the plan, new code path against the old one, in one run:

1. A predicted-MFU sweep (no `efficiency.mfu`): Llama 3.1 70B and Qwen3-30B-A3B x H100 SXM, Ascend
   910B2, H800 SXM x 200 card counts (64 to 12,800 in steps of 64): 1,200 scenarios through
   estimator.plan.batch.evaluate_columns in this process (one worker). Prints scenarios/s (wall clock and
   per CPU second of this process), the same for the old path (a full layout search per row,
   bench/legacy.py) and the ratio, then checks a random sample of rows against estimate() of the
   same scenario (cards, MFU and the chosen layout must be equal).
2. The Llama 3.1 405B deadline plan (15T tokens in 60 days on H100, layout searched): median
   latency of estimate() in process, new and old path, and the ratio.

    .venv/bin/python bench/plan_speed.py [--repeat 3] [--sample 60] [--old-every 1] [--part all|sweep|deadline]
        [--compare DIR] [--profile N]

The deadline plan is timed cold (the remembered best layouts cleared before each plan) and asked
again (remembered). --compare DIR first runs the same bench on another checkout (the code before
a change) in a child process: before and after in one run, under the same load.

--profile N prints the N functions of highest cumulative time of the cold 405B plans (cProfile,
after the timed runs: the profile's own overhead is not in the medians).

--old-every K times the old sweep path on every K-th card count only (it is slow) and scales its
rate from those rows. The machine's load average is printed: other processes share the cores.
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import machine  # bench/machine.py: the load-average lines

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from legacy import legacy_paths

from estimator.layout import batch_search as layout_batch
from estimator.plan.batch import LAYOUT_FIELDS, evaluate_columns
from estimator.plan.compose import estimate

SWEEP_BASE = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 1e12},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 64},
}
MODELS = ["llama-3.1-70b", "qwen3-30b-a3b"]
ACCELERATORS = ["h100-sxm", "ascend-910b2", "h800-sxm"]
CARDS = list(range(64, 12801, 64))

DEADLINE_405B = {
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 15e12, "seq_len": 8192, "global_batch_tokens": 16 * 1024 * 1024},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "cluster": {"target_days": 60},
}


def sweep_columns(cards: list[int]) -> dict[str, np.ndarray]:
    """The product models x accelerators x cards, the last varying fastest (a sweep's order)."""
    rows = [(m, a, c) for m in MODELS for a in ACCELERATORS for c in cards]
    return {
        "model.preset": np.array([r[0] for r in rows], dtype=object),
        "hardware.accelerator": np.array([r[1] for r in rows], dtype=object),
        "cluster.cards": np.array([r[2] for r in rows], dtype=float),
    }


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def scenario_of(cols: dict, i: int) -> dict:
    sc = copy.deepcopy(SWEEP_BASE)
    sc["model"] = {"preset": str(cols["model.preset"][i])}
    sc["hardware"] = {"accelerator": str(cols["hardware.accelerator"][i])}
    sc["cluster"] = {"cards": int(cols["cluster.cards"][i])}
    return sc


def check_rows(cols: dict, out: dict, rows: list[int]) -> list[str]:
    """Rows whose cards, MFU or chosen layout differ from estimate() of the same scenario."""
    bad = []
    for i in rows:
        result = estimate(scenario_of(cols, i))["result"]
        par = result["parallelism"] or {}
        expected = {"compute.cards": result["compute"]["cards"], "compute.mfu": result["compute"]["mfu"]}
        if result["memory"]["fits"]:  # a dense model's parallelism has no expert_tp (the column: NaN)
            expected.update({f: par.get(f.split(".", 1)[1], float("nan")) for f in LAYOUT_FIELDS})
        for field, value in expected.items():
            got = out[field][i]
            same = got == value if isinstance(value, str) else float(got) == float(value)
            same = same or (not isinstance(value, str) and np.isnan(float(got)) and np.isnan(float(value)))
            if not same:
                bad.append(f"row {i} {field}: sweep {got!r}, estimate {value!r}")
    return bad


def sweep_bench(args) -> None:
    cols = sweep_columns(CARDS)
    n = len(cols["cluster.cards"])
    runs = []
    for _ in range(args.repeat):
        layout_batch.clear_caches()  # nothing carried over from the previous run
        out, wall, cpu = timed(lambda: evaluate_columns(SWEEP_BASE, cols))
        runs.append((wall, cpu))
    wall, cpu = min(runs)
    assert out["ok"].all(), "every scenario of the mixed sweep plans"
    print(
        f"predicted-MFU sweep, {n:,} scenarios (2 models x 3 accelerators x {len(CARDS)} card counts), 1 worker"
    )
    print(
        f"  new: {wall:.2f} s wall, {cpu:.2f} s CPU (best of {args.repeat}) -> "
        f"{n / wall:,.0f} scenarios/s wall, {n / cpu:,.0f} per CPU second"
    )
    old_cols = sweep_columns(CARDS[:: args.old_every])
    n_old = len(old_cols["cluster.cards"])
    with legacy_paths():
        _, wall_old, cpu_old = timed(lambda: evaluate_columns(SWEEP_BASE, old_cols))
    print(
        f"  old: {n_old:,} scenarios in {wall_old:.2f} s wall, {cpu_old:.2f} s CPU -> "
        f"{n_old / wall_old:,.0f} scenarios/s wall, {n_old / cpu_old:,.0f} per CPU second"
    )
    print(
        f"  ratio new/old: {(n / wall) / (n_old / wall_old):.1f}x wall, {(n / cpu) / (n_old / cpu_old):.1f}x CPU"
    )
    rows = sorted(random.Random(args.seed).sample(range(n), min(args.sample, n)))
    bad = check_rows(cols, out, rows)
    print(f"  {len(rows) - len({b.split()[1] for b in bad})}/{len(rows)} sampled rows equal to estimate()")
    for line in bad[:10]:
        print("   ", line)


def deadline_bench(args) -> None:
    estimate(DEADLINE_405B)  # imports, catalog
    new, new_cpu = [], []
    for _ in range(args.plans):
        layout_batch.clear_caches()  # cold: no answer remembered from the previous plan
        _, wall, cpu = timed(lambda: estimate(DEADLINE_405B))
        new.append(wall)
        new_cpu.append(cpu)
    warm, warm_cpu = [], []
    for _ in range(args.plans):  # the same scenario asked again: best layouts remembered
        _, wall, cpu = timed(lambda: estimate(DEADLINE_405B))
        warm.append(wall)
        warm_cpu.append(cpu)
    with legacy_paths():
        layout_batch.clear_caches()
        old_result = estimate(DEADLINE_405B)["result"]
        old, old_cpu = [], []
        for _ in range(max(3, args.plans // 4)):
            layout_batch.clear_caches()
            _, wall, cpu = timed(lambda: estimate(DEADLINE_405B))
            old.append(wall)
            old_cpu.append(cpu)
    result = estimate(DEADLINE_405B)["result"]
    par = result["parallelism"]
    same = result["compute"] == old_result["compute"] and par == old_result["parallelism"]
    print(
        "Llama 3.1 405B, 15T tokens in 60 days on H100 (deadline sizing, layout searched), estimate() in process"
    )
    print(
        f"  plan: {result['compute']['cards']:,} cards, TP {par['tp']} PP {par['pp']} DP {par['dp']}, "
        f"MFU {result['compute']['mfu']:.3f}; same plan as the old path: {same}"
    )
    if not same:  # the old path sizes the cluster failure-free: it stops at a size interruptions make late
        print(
            f"  (old path: {old_result['compute']['cards']:,} cards, meets the deadline with interruptions: "
            f"{old_result['compute']['meets_target']}; it sizes without them)"
        )
    for name, wall, cpu in (
        ("new, cold", new, new_cpu),
        ("new, asked again", warm, warm_cpu),
        ("old", old, old_cpu),
    ):
        print(
            f"  {name}: median {statistics.median(wall) * 1e3:.1f} ms wall "
            f"({statistics.median(cpu) * 1e3:.1f} ms CPU), min {min(wall) * 1e3:.1f} ms ({len(wall)} plans)"
        )
    print(
        f"  ratio old/new cold (median): {statistics.median(old) / statistics.median(new):.1f}x wall, "
        f"{statistics.median(old_cpu) / statistics.median(new_cpu):.1f}x CPU"
    )


def profile_deadline(top: int, plans: int = 10) -> None:
    """cProfile of `plans` cold 405B deadline plans: the `top` functions by cumulative time."""
    import cProfile
    import pstats

    estimate(DEADLINE_405B)
    prof = cProfile.Profile()
    for _ in range(plans):
        layout_batch.clear_caches()
        prof.enable()
        estimate(DEADLINE_405B)
        prof.disable()
    print(
        f"profile of {plans} cold 405B deadline plans (cProfile, cumulative; its overhead inflates the times)"
    )
    pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(top)


def compare(args) -> None:
    """The same bench on another checkout (e.g. the code at the start of a change), in a child
    process, so before and after print in one run under the same load."""
    script = Path(args.compare).resolve() / "bench" / "plan_speed.py"
    argv = [sys.executable, str(script), "--part", args.part, "--plans", str(args.plans)]
    argv += ["--repeat", str(args.repeat), "--sample", str(args.sample), "--old-every", str(args.old_every)]
    print(f"--- baseline: {script.parent.parent}")
    sys.stdout.flush()
    subprocess.run(argv, check=True)
    print("--- this checkout")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of the new sweep path (best kept)")
    parser.add_argument("--sample", type=int, default=60, help="sweep rows checked against estimate()")
    parser.add_argument("--old-every", type=int, default=1, help="old sweep path on every K-th card count")
    parser.add_argument("--plans", type=int, default=20, help="timed 405B plans (new path)")
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument(
        "--part", choices=("all", "sweep", "deadline"), default="all", help="which half to run"
    )
    parser.add_argument("--compare", metavar="DIR", help="first run the same bench on the checkout DIR")
    parser.add_argument("--profile", type=int, metavar="N", help="then the top N functions of the cold plan")
    args = parser.parse_args()
    if args.compare:
        compare(args)
    if args.part in ("all", "sweep"):
        sweep_bench(args)
    if args.part in ("all", "deadline"):
        deadline_bench(args)
    if args.profile:
        profile_deadline(args.profile)


if __name__ == "__main__":
    sys.exit(machine.run(main))
