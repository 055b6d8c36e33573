#!/usr/bin/env python
"""Cold start of the CLI: `python -m estimator plan FILE` as new processes, one after another.

Prints the median and min wall time of N runs for a small plan (Llama 3.1 8B on 64 Ascend 910B2)
and the Llama 3.1 405B 60-day deadline plan, then the import time of the plan command's modules
(`python -X importtime`, cumulative microseconds) and the modules that cost the most themselves.
Each process is new (cold); by default with the bytecode caches an installed package has (one
untimed run writes them, and what is kept beside them: the data files' parses, dataclasses' code,
estimator.cold_start), --no-bytecode without (every module compiled, PYTHONDONTWRITEBYTECODE).
Prints wall and CPU time (user + system of the child, less sensitive to a shared machine's load).
--against DIR also times the same commands in another checkout (the old path, e.g. /work/main),
its runs interleaved with this one's so both see the same load, and prints the ratio of CPU medians.
--instructions also counts the instructions of one run of each plan in each checkout under
`valgrind --tool=callgrind` (the same count whatever the machine's load; slow: about 30 s a run).
The count leaves out what the load does to a process (another thread's spinning, cache misses),
so it complements the CPU times rather than replacing them.

    .venv/bin/python bench/cli_plan.py [-n 10] [--no-bytecode] [--against DIR] [--instructions]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
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


def child_env(bytecode: bool) -> dict[str, str]:
    """The environment of the timed runs: with bytecode caches (as an installed package runs: pip
    compiles on install) unless --no-bytecode, which sets PYTHONDONTWRITEBYTECODE and removes the
    project's caches so every run compiles the sources again."""
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for cache in (ROOT / "estimator").rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)
    return env


def run_times(
    cmd: list[str], n: int, env: dict[str, str], roots: list[Path]
) -> list[tuple[list[float], list[float]]]:
    """(wall seconds, CPU seconds of the child: user + system) of n runs in each checkout of
    `roots`, interleaved run by run."""
    for root in roots:
        subprocess.run(cmd, cwd=root, check=True, stdout=subprocess.DEVNULL, env=env)  # caches written
    out: list[tuple[list[float], list[float]]] = [([], []) for _ in roots]
    for _ in range(n):
        for (walls, cpus), root in zip(out, roots, strict=True):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=root, check=True, stdout=subprocess.DEVNULL, env=env)
            walls.append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return out


def instructions(cmd: list[str], env: dict[str, str], root: Path) -> int:
    """Instructions of one run of `cmd` in `root` (callgrind's total, every thread)."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
        cwd=root,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from callgrind: {done.stderr[-300:]}")
    return int(found.group(1))


def print_instructions(cmd: list[str], env: dict[str, str], roots: list[Path]) -> None:
    counts = [instructions(cmd, env, root) for root in roots]
    for root, count in zip(roots, counts, strict=True):
        where = "" if root == ROOT else f" in {root}"
        print(f"  instructions{where}: {count / 1e6:,.0f} M (callgrind, one run)")
    if len(counts) == 2:
        print(f"  ratio of instructions, this checkout / {roots[1]}: {counts[0] / counts[1]:.3f}")


def import_profile(cmd: list[str], top: int, env: dict[str, str]) -> None:
    """The plan command's own imports: total and the modules costing most by themselves."""
    err = subprocess.run(
        [cmd[0], "-X", "importtime", *cmd[1:]], cwd=ROOT, check=True, capture_output=True, text=True, env=env
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
    ap.add_argument("--no-bytecode", action="store_true", help="time runs that compile every module")
    ap.add_argument("--against", type=Path, help="another checkout to time too (the old path)")
    ap.add_argument(
        "--instructions", action="store_true", help="also count instructions under callgrind (load-free)"
    )
    args = ap.parse_args()
    if args.against and args.no_bytecode:
        ap.error("--no-bytecode removes this checkout's caches only; it cannot be compared --against another")
    if args.instructions and shutil.which("valgrind") is None:
        ap.error("--instructions needs valgrind on PATH")
    roots = [ROOT] + ([args.against.resolve()] if args.against else [])
    tmp = Path(tempfile.mkdtemp(prefix="clusterplan-bench-"))
    env = child_env(not args.no_bytecode)
    mode = "no bytecode caches" if args.no_bytecode else "bytecode cached, as installed"
    for label, scenario in PLANS.items():
        path = tmp / (re.sub(r"\W+", "-", label) + ".json")
        path.write_text(json.dumps(scenario))
        cmd = [sys.executable, "-m", "estimator", "plan", str(path)]
        results = run_times(cmd, args.n, env, roots)
        for root, (times, cpus) in zip(roots, results, strict=True):
            where = "" if root == ROOT else f" in {root}"
            print(
                f"python -m estimator plan ({label}){where}: median {statistics.median(times) * 1e3:.0f} ms wall "
                f"({statistics.median(cpus) * 1e3:.0f} ms CPU), min {min(times) * 1e3:.0f} ms "
                f"({args.n} cold processes, {mode})"
            )
        if len(results) == 2:
            ratio = statistics.median(results[0][1]) / statistics.median(results[1][1])
            print(f"  ratio of CPU medians, this checkout / {roots[1]}: {ratio:.2f}")
        if args.instructions:
            print_instructions(cmd, env, roots)
    import_profile(cmd, args.top, env)
    return 0


if __name__ == "__main__":
    sys.exit(machine.run(main))
