"""Cost of the supernode comparison (supernode.versus_nodes re-runs the layout search with the
domain cut to one node) inside plan.estimate, for 2,304-card DeepSeek-V3 plans.

    .venv/bin/python bench/supernode_compare.py [--repeat 3]

Prints the median wall-clock time of estimate() per accelerator with the comparison and with it
switched off (monkeypatched to None), and the difference.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import machine  # bench/machine.py: the load-average lines

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import estimator.cluster.supernode as supernode
from estimator.plan.compose import estimate


def _median_s(doc: dict, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        estimate(doc)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    original = supernode.versus_nodes
    for acc in ("ascend-910c", "gb200", "ascend-910b2"):
        doc = {
            "model": {"preset": "deepseek-v3"},
            "hardware": {"accelerator": acc},
            "training": {"tokens": 1e12},
            "cluster": {"cards": 2304},
        }
        with_cmp = _median_s(doc, args.repeat)
        supernode.versus_nodes = lambda *a, **k: None
        try:
            without = _median_s(doc, args.repeat)
        finally:
            supernode.versus_nodes = original
        print(
            f"{acc:14s} with comparison {with_cmp:6.2f} s   without {without:6.2f} s   +{with_cmp - without:5.2f} s"
        )


if __name__ == "__main__":
    sys.exit(machine.run(main))
