#!/usr/bin/env python
"""Cold start of the CLI: `python -m estimator plan FILE` as new processes, one after another.

Prints the median and min wall time of N runs for a small plan (Llama 3.1 8B on 64 Ascend 910B2)
and the Llama 3.1 405B 60-day deadline plan, then the import time of the plan command's modules
(`python -X importtime`, cumulative microseconds) and the modules that cost the most themselves.
Uses hyperfine when installed (--hyperfine), else a loop of subprocess runs.

    .venv/bin/python bench/cli_plan.py [-n 10]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine  # bench/machine.py: the load-average lines

ROOT = Path(__file__).resolve().parent.parent

PLANS = {
    "8B on 64 910B2": {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 2e11},
        "hardware": {"accelerator": "ascend-910b2"},
        "cluster": {"cards": 64},
    },
    "405B, 60 days on H100": {
        "model": {"preset": "llama-3.1-405b"},
        "training": {"tokens": 15e12, "seq_len": 8192, "global_batch_tokens": 16 * 1024 * 1024},
        "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
        "cluster": {"target_days": 60},
    },
}


def run_times(cmd: list[str], n: int) -> list[float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return times


def import_profile(cmd: list[str], top: int) -> None:
    """The plan command's own imports: total and the modules costing most by themselves."""
    err = subprocess.run(
        [cmd[0], "-X", "importtime", *cmd[1:]], cwd=ROOT, check=True, capture_output=True, text=True
    ).stderr
    rows = [m.groups() for m in re.finditer(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", err)]
    total = sum(int(cum) for _, cum, indent, _ in rows if len(indent) == 1)
    print(f"  imports: {total / 1e3:.0f} ms in all (top level, cumulative); costliest by themselves:")
    for self_us, cum, _, name in sorted(rows, key=lambda r: -int(r[0]))[:top]:
        print(f"    {int(self_us) / 1e3:6.1f} ms self {int(cum) / 1e3:7.1f} ms cumulative  {name}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10, help="runs per plan")
    ap.add_argument("--top", type=int, default=12, help="modules listed by their own import time")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="clusterplan-bench-"))
    for label, scenario in PLANS.items():
        path = tmp / (re.sub(r"\W+", "-", label) + ".json")
        path.write_text(json.dumps(scenario))
        cmd = [sys.executable, "-m", "estimator", "plan", str(path)]
        times = run_times(cmd, args.n)
        print(
            f"python -m estimator plan ({label}): median {statistics.median(times) * 1e3:.0f} ms, "
            f"min {min(times) * 1e3:.0f} ms ({args.n} cold runs)"
        )
    import_profile(cmd, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(machine.run(main))
