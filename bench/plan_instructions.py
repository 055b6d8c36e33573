#!/usr/bin/env python
"""Instructions per cold Llama 3.1 405B deadline plan (the plan of bench/plan_speed.py), counted by
valgrind's callgrind: a figure the machine's load does not move (the wall-clock medians of
plan_speed.py do, by several times on a shared machine), for this checkout and, with --compare DIR,
another one (the code before a change) in the same run.

    .venv/bin/python bench/plan_instructions.py [--plans 2] [--compare DIR]

Each checkout runs in its own valgrind process: imports and a warm-up plan first, then `--plans`
cold plans (the remembered layouts cleared before each) inside operator.call, the only code
callgrind counts (--toggle-collect). The stack section's and the search's wall-clock budgets are
lifted there: under valgrind they would run out and the count would depend on the clock.
Needs valgrind on the PATH; takes one to three minutes per checkout.
"""

from __future__ import annotations

import argparse
import operator
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def inner(root: Path, plans: int) -> None:
    """The counted run (inside valgrind): warm up, then `plans` cold plans within operator.call."""
    sys.path[:0] = [str(root), str(root / "bench")]
    os.chdir(root)
    from plan_speed import DEADLINE_405B

    import estimator.layout.search as layout_search
    import estimator.plan.stack_sensitivity as stack_sensitivity
    from estimator.layout import batch_search
    from estimator.plan.compose import estimate

    stack_sensitivity.SENSITIVITY_SECONDS = 1e9  # no clock-dependent work under valgrind
    layout_search.SEARCH_SECONDS = 1e9
    estimate(DEADLINE_405B)

    def cold_plans() -> None:
        for _ in range(plans):
            batch_search.clear_caches()
            estimate(DEADLINE_405B)

    operator.call(cold_plans)


def count(root: Path, plans: int) -> float:
    """Instructions per cold plan of the checkout `root` (callgrind's total / plans)."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [
            "valgrind",
            "--tool=callgrind",
            "--toggle-collect=_operator_call",
            f"--callgrind-out-file={tmp}/out",
            sys.executable,
            __file__,
            "--inner",
            str(root),
            "--plans",
            str(plans),
        ]
        done = subprocess.run(argv, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no callgrind total for {root}:\n{done.stderr[-2000:]}")
    return int(found.group(1)) / plans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plans", type=int, default=2, help="cold plans counted per checkout")
    parser.add_argument("--compare", metavar="DIR", help="also count the checkout DIR (printed first)")
    parser.add_argument("--inner", metavar="ROOT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(Path(args.inner), args.plans)
        return
    here = Path(__file__).resolve().parent.parent
    roots = ([Path(args.compare).resolve()] if args.compare else []) + [here]
    counts = {root: count(root, args.plans) for root in roots}
    for root, n in counts.items():
        print(f"{root}: {n / 1e6:,.1f} M instructions per cold 405B deadline plan ({args.plans} plans)")
    if args.compare:
        before, after = counts[roots[0]], counts[here]
        print(f"ratio before/after: {before / after:.2f}x ({(after / before - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
