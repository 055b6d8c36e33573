"""What every bench prints about the machine it ran on: the cores and the load average.

The benches run on shared machines; a figure means little without the load it was measured under
(os.getloadavg: runnable processes averaged over 1, 5 and 15 minutes). Each bench prints this line
when it starts and again when it ends, so the load during the run can be read off."""

from __future__ import annotations

import os
from collections.abc import Callable


def load_line(when: str = "start") -> str:
    one, five, fifteen = os.getloadavg()
    return (
        f"[{when}] load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} cores"
    )


def print_load(when: str = "start") -> None:
    print(load_line(when), flush=True)


def run(main: Callable[[], int | None]) -> int:
    """Run a bench's main() between the two load-average lines; its exit status (0 for None)."""
    print_load("start")
    try:
        status = main()
    finally:
        print_load("end")
    return int(status or 0)
