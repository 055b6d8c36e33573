"""DGX SuperPOD H100 check: NVIDIA's reference architecture (RA-11333-001, Table 4), leaf and spine
switches and cables for 1-4 scalable units, against the fabric sizing of estimator.cluster.network."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from estimator.cluster.network import design_fabric
from estimator.validation.rows import REFERENCE_DIR

REFERENCE_CSV = REFERENCE_DIR / "superpod_h100_fabric.csv"


def load_superpod_table(path: Path = REFERENCE_CSV) -> list[dict[str, int]]:
    """Rows of NVIDIA's DGX SuperPOD H100 compute-fabric table (RA-11333-001, Table 4), as ints."""
    with path.open(newline="") as fh:
        lines = [line for line in fh if line.strip() and not line.startswith("#")]
    return [{key: int(val) for key, val in row.items()} for row in csv.DictReader(lines)]


def superpod_validation_rows(path: Path = REFERENCE_CSV) -> list[dict[str, Any]]:
    """Published vs predicted leaf/spine switches and cables for the DGX SuperPOD H100 (1-4 SU).

    Inputs per row: E = GPUs, 64-port 400G switches (QM9700), 8 rails, 1:1, rail-optimized, plus the
    UFM appliance's 4 fabric ports (RA: node->leaf cables = GPUs + 4). error_pct = 100·(pred-pub)/pub.
    """
    rows = []
    for ref in load_superpod_table(path):
        fab = design_fabric(ref["gpus"], 64, 1.0, True, 8, 400, management_ports=4)
        predicted = {
            "leaf_switches": fab.leaf_switches,
            "spine_switches": fab.spine_switches,
            "node_leaf_cables": fab.server_links,
            "leaf_spine_cables": fab.switch_links,
        }
        for name, pred in predicted.items():
            pub = ref[name]
            rows.append(
                {
                    "case": f"DGX SuperPOD H100 {ref['scalable_units']} SU ({ref['gpus']} GPUs)",
                    "metric": name,
                    "published": pub,
                    "predicted": pred,
                    "error_pct": 100.0 * (pred - pub) / pub,
                }
            )
    return rows
